from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from judging.cli.management.commands._common import (
    add_campaign_argument,
    as_command_error,
    get_campaign,
    read_path,
)
from judging.core.errors import DomainError
from judging.workflows.qrels import qrels_imported


class Command(BaseCommand):
    help = "Import a TREC qrels file (qid iter docid grade) as the campaign's next qrels version."

    def add_arguments(self, parser: CommandParser) -> None:
        add_campaign_argument(parser)
        parser.add_argument("path")
        parser.add_argument("--note", default="")

    def handle(self, *args: Any, **opts: Any) -> None:
        campaign = get_campaign(opts["campaign"])
        try:
            v = qrels_imported(
                campaign=campaign,
                data=read_path(opts["path"]),
                source=opts["path"],
                note=opts["note"],
            )
        except DomainError as exc:
            raise as_command_error(exc) from None
        self.stdout.write(
            f"qrels version {v.number}: {v.num_judgments} judgments, "
            f"{v.num_relevant} relevant, sha256 {v.content_hash[:12]}"
        )
