from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from judging.assessments.selectors import qrels_version
from judging.campaigns.models import Chunking
from judging.cli.management.commands._common import (
    add_campaign_argument,
    as_command_error,
    get_campaign,
)
from judging.core.errors import DomainError
from judging.workflows.passages import qrels_carried, qrels_documented, qrels_published_onto


class Command(BaseCommand):
    help = (
        "Carry a qrels version's judgments, by their text spans, to the passages of another "
        "chunking (--chunking), or take its passages' grades to their documents (--documents); "
        "the result is the campaign's next qrels version, with the rule and its coverage. "
        "--publish-onto publishes the judgments made since on a carried version's passages."
    )

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> Any:
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    def add_arguments(self, parser: CommandParser) -> None:
        add_campaign_argument(parser)
        parser.add_argument("--version", type=int, default=None, help="Default: the latest.")
        to = parser.add_mutually_exclusive_group(required=True)
        to.add_argument("--chunking", help="The chunking's name to carry the judgments to.")
        to.add_argument("--documents", action="store_true", help="To document level.")
        to.add_argument(
            "--publish-onto",
            action="store_true",
            help="Publish the judgments made since of --version's chunking (a carried version) "
            "onto it, as its minor version.",
        )
        parser.add_argument(
            "--min-share",
            type=float,
            default=0.5,
            help="A new passage is relevant at grade g when it holds at least this share of a "
            "span judged g (default 0.5).",
        )
        parser.add_argument("--json", action="store_true", help="Print the coverage as JSON.")

    def handle(self, *args: Any, **opts: Any) -> None:
        campaign = get_campaign(opts["campaign"])
        version = qrels_version(campaign, opts["version"])
        if version is None:
            raise CommandError(f"campaign {campaign.name!r} has no such qrels version")
        try:
            if opts["publish_onto"]:
                derived = qrels_published_onto(base=version)
                self.stdout.write(
                    f"qrels version {derived.number} ({derived.label}): {derived.note}"
                )
                return
            if opts["documents"]:
                derived = qrels_documented(version=version)
            else:
                chunking = Chunking.objects.filter(campaign=campaign, name=opts["chunking"]).first()
                if chunking is None:
                    names = ", ".join(campaign.chunkings.values_list("name", flat=True)) or "none"
                    raise CommandError(
                        f"no chunking {opts['chunking']!r} (the campaign's: {names})"
                    )
                derived = qrels_carried(
                    version=version, chunking=chunking, min_share=opts["min_share"]
                )
        except DomainError as exc:
            raise as_command_error(exc) from None
        derivation = derived.derivation
        if opts["json"]:
            self.stdout.write(
                json.dumps(
                    {
                        "version": derived.number,
                        "rule": derivation.rule,
                        "report": derivation.report,
                    },
                    indent=2,
                )
            )
            return
        self.stdout.write(f"qrels version {derived.number}: {derived.note}")
        self.stdout.write(f"rule: {derivation.rule}")
        for line in coverage_lines(derivation.report):
            self.stdout.write(line)


def coverage_lines(report: dict[str, Any]) -> list[str]:
    """The coverage of a carry-over in a few lines (a document-level one: its counts)."""
    overall = report.get("overall")
    if overall is None:
        return [", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in report.items())]
    lines = [
        f"passages considered: {overall['chunks']:,} of {overall['documents']:,} judged "
        f"documents; carried relevant {overall['relevant']:,}, non-relevant "
        f"{overall['non_relevant']:,}, unknown {overall['unknown']:,}",
        f"relevant spans with no relevant passage: {overall['lost_spans']:,} of "
        f"{overall['relevant_spans']:,}",
    ]
    lost = report.get("lost_topics") or []
    lines.append(
        f"topics that lost every relevant judgment: {len(lost)}"
        + (f" ({', '.join(lost[:20])}{' ...' if len(lost) > 20 else ''})" if lost else "")
    )
    if report.get("rows_without_text"):
        lines.append(f"rows not carried (no text known): {report['rows_without_text']:,}")
    return lines
