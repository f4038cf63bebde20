from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from judging.assessments.gold import gold_from_agreement, gold_from_qrels, gold_import_file
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
        "version with --from-qrels N (--per-topic K items per topic, stratified by grade), or "
        "for answer items with --agreed KIND: nugget_assignment or citation_support items two "
        "assessors judged alike (or an admin adjudicated), K per topic, stratified by label."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        add_campaign_argument(parser)
        parser.add_argument("path", nargs="?", help="the gold file (plain or gzip)")
        parser.add_argument("--from-qrels", type=int, metavar="N", help="a qrels version number")
        parser.add_argument(
            "--agreed", choices=["nugget_assignment", "citation_support"], metavar="KIND"
        )
        parser.add_argument("--per-topic", type=int, default=5, metavar="K")
        parser.add_argument("--seed", type=int, default=0)

    def handle(self, *args: Any, **opts: Any) -> None:
        campaign = get_campaign(opts["campaign"])
        ways = [opts["path"], opts["from_qrels"], opts["agreed"]]
        if sum(w is not None for w in ways) != 1:
            raise CommandError("give one of a gold file, --from-qrels N or --agreed KIND")
        try:
            if opts["agreed"] is not None:
                result = gold_from_agreement(
                    campaign=campaign,
                    kind=opts["agreed"],
                    per_topic=opts["per_topic"],
                    seed=opts["seed"],
                )
            elif opts["path"] is not None:
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
