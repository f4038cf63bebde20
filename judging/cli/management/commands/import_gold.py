from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from judging.assessments.gold import gold_from_qrels, gold_import_file
from judging.cli.management.commands._common import (
    add_campaign_argument,
    as_command_error,
    get_campaign,
    read_path,
)
from judging.core.errors import DomainError


class Command(BaseCommand):
    help = (
        "Add gold items (documents of known grade, for quality control) to a campaign: from a "
        "TREC qrels-format file (qid iteration docid grade), or sampled from a published qrels "
        "version with --from-qrels N (--per-topic K items per topic, stratified by grade)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        add_campaign_argument(parser)
        parser.add_argument("path", nargs="?", help="the gold file (plain or gzip)")
        parser.add_argument("--from-qrels", type=int, metavar="N", help="a qrels version number")
        parser.add_argument("--per-topic", type=int, default=5, metavar="K")
        parser.add_argument("--seed", type=int, default=0)

    def handle(self, *args: Any, **opts: Any) -> None:
        campaign = get_campaign(opts["campaign"])
        if (opts["path"] is None) == (opts["from_qrels"] is None):
            raise CommandError("give either a gold file or --from-qrels N")
        try:
            if opts["path"] is not None:
                result = gold_import_file(
                    campaign=campaign, data=read_path(opts["path"]), source=opts["path"]
                )
            else:
                result = gold_from_qrels(
                    campaign=campaign,
                    number=opts["from_qrels"],
                    per_topic=opts["per_topic"],
                    seed=opts["seed"],
                )
        except DomainError as exc:
            raise as_command_error(exc) from None
        line = f"gold items: {result.created} added, {result.updated} updated"
        if result.queued_as_pooled:
            line += f" ({result.queued_as_pooled} wait in the queue as pooled items)"
        self.stdout.write(line)
