from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from judging.assessments.selectors import qrels_version
from judging.assessments.services import qrels_export_lines
from judging.cli.management.commands._common import (
    add_campaign_argument,
    as_command_error,
    get_campaign,
)
from judging.core.errors import DomainError


class Command(BaseCommand):
    help = (
        "Export a qrels version of a campaign in TREC format (qid 0 docid grade), sorted by "
        "topic and document: the exact bytes its content hash is taken over."
    )

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        # --version names the qrels version here: let it replace Django's built-in --version.
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    def add_arguments(self, parser: CommandParser) -> None:
        add_campaign_argument(parser)
        parser.add_argument(
            "--version", type=int, default=None, help="Version number (default: the latest)."
        )
        parser.add_argument("-o", "--output", default="-", help="File to write (default: stdout).")
        parser.add_argument(
            "--format",
            default=None,
            help="A sampled version: sample_eval (default), trec (trec_eval's -1 form, one "
            "stratum only) or prels (each document's inclusion probability).",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        campaign = get_campaign(opts["campaign"])
        version = qrels_version(campaign, opts["version"])
        if version is None and opts["version"] is None:
            raise CommandError(f"campaign {campaign.name!r} has no qrels version yet")
        if version is None:
            raise CommandError(f"campaign {campaign.name!r} has no qrels version {opts['version']}")
        try:
            lines = qrels_export_lines(version, opts["format"])
        except DomainError as exc:  # the rows no longer hash to the stored hash; a bad format
            raise as_command_error(exc) from None
        if opts["output"] == "-":
            for line in lines:
                self.stdout.write(line, ending="")
            return
        with Path(opts["output"]).open("w", encoding="utf-8", newline="\n") as out:
            out.writelines(lines)
        self.stderr.write(
            f"qrels version {version.number}: {version.num_judgments} judgments written to "
            f"{opts['output']} (sha256 {version.content_hash[:12]})"
        )
