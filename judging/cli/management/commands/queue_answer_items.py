from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from judging.assessments import units
from judging.assessments.models import UnitKind
from judging.cli.management.commands._common import (
    add_campaign_argument,
    as_command_error,
    get_campaign,
)
from judging.core.errors import DomainError


class Command(BaseCommand):
    help = (
        "Queue the items a campaign's answer runs need judged, in the one judging queue: "
        "nugget_assignment (each answer x nugget of a published bank), citation_support (each "
        "cited sentence x segment) or nugget_creation (each topic of a draft bank). Items "
        "already queued keep their slots."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        add_campaign_argument(parser)
        parser.add_argument(
            "--kind",
            required=True,
            choices=[k for k in UnitKind.values if k != UnitKind.DOCUMENT],
        )
        parser.add_argument("--bank", type=int, help="The nugget bank version (its number).")
        parser.add_argument(
            "--runs", help="Only these runs' answers: run ids, comma-separated (default all)."
        )
        parser.add_argument(
            "--citations",
            choices=["first", "all"],
            default="first",
            help="Citation support: each sentence's first citation (TREC 2024 RAG) or all.",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        campaign = get_campaign(opts["campaign"])
        runs = None
        if opts["runs"]:
            try:
                runs = [int(r) for r in opts["runs"].split(",") if r.strip()]
            except ValueError:
                shown = opts["runs"][:40]
                raise CommandError(f"--runs: run ids, comma-separated, not {shown!r}") from None
        try:
            queued = units.answer_items_queue(
                campaign=campaign,
                kind=opts["kind"],
                bank=opts["bank"],
                runs=runs,
                citations=opts["citations"],
            )
        except DomainError as exc:
            raise as_command_error(exc) from None
        bank = f" (nugget bank v{queued.bank})" if queued.bank else ""
        self.stdout.write(
            f"{queued.kind}{bank}: {queued.items:,} item{'s' if queued.items != 1 else ''}, "
            f"{queued.slots:,} slot{'s' if queued.slots != 1 else ''} queued now"
        )
