"""``manage.py nuggets --campaign C ACTION``: a campaign's nugget banks from the command line.

- ``import FILE``: a new draft of the nuggets in FILE (nuggetizer's JSON lines or
  ``qid<TAB>importance<TAB>text``), validated whole;
- ``extract``: a new draft of the relevant segments' sentences most similar to each topic
  (the embedding judge's model);
- ``draft --judge ID``: a new draft written by an openai-compatible judge version;
- ``publish``: freeze a draft (default: the latest version) and print its hash;
- ``export``: a version as JSON lines, the format ``import`` reads (keys and sources kept), so an
  exported bank imports again as it was.

Each calls the service the API's create and publish call (``autojudge.nugget_drafts``,
``assessments.nuggets``); a draft is recorded with no account (the command line).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from judging.assessments.models import NuggetBank
from judging.assessments.nugget_selectors import bank_export
from judging.assessments.nuggets import bank_publish
from judging.autojudge.nugget_drafts import DraftReport, draft_requested
from judging.campaigns.models import Campaign
from judging.cli.management.commands._common import (
    add_campaign_argument,
    as_command_error,
    get_campaign,
    read_path,
)
from judging.core.errors import DomainError
from metrics.io.nuggets import write_nuggets


class Command(BaseCommand):
    help = (
        "Nugget banks: import a file, extract from the relevant segments, draft with an "
        "automatic judge, publish, export (JSON lines that import again)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

        def action(name: str, help: str) -> CommandParser:
            sub: CommandParser = actions.add_parser(name, help=help)
            add_campaign_argument(sub)
            return sub

        def drafting(sub: CommandParser, most: str) -> None:
            sub.add_argument(
                "--qrels", type=int, help="the qrels version to draft from (default: the latest)"
            )
            sub.add_argument("--note", default="", help="what the draft is")
            if most:
                sub.add_argument("--most", type=int, help=f"nuggets a topic (default {most})")

        sub = action("import", "a new draft of a nugget file's nuggets")
        sub.add_argument("file", help="JSON lines (nuggetizer's) or qid<TAB>importance<TAB>text")
        drafting(sub, "")
        sub = action("extract", "a new draft of the relevant segments' sentences")
        drafting(sub, "10")
        sub.add_argument("--vital", type=int, help="how many of a topic's are vital (default 3)")
        sub = action("draft", "a new draft written by an openai-compatible judge")
        sub.add_argument("--judge", type=int, required=True, help="the judge version's id")
        drafting(sub, "15")
        sub = action("publish", "freeze a draft")
        sub.add_argument("--bank", type=int, help="its version number (default: the latest)")
        sub = action("export", "a version as JSON lines")
        sub.add_argument("--bank", type=int, help="its version number (default: the latest)")
        sub.add_argument("-o", "--output", default="-", help="file to write (default: stdout)")

    def handle(self, *args: Any, **opts: Any) -> None:
        campaign = get_campaign(opts["campaign"])
        action = opts["action"]
        try:
            if action in ("import", "extract", "draft"):
                self._report(self._draft(campaign, action, opts))
            elif action == "publish":
                done = bank_publish(bank=_bank(campaign, opts["bank"]), by=None)
                self.stdout.write(
                    f"nugget bank v{done.bank.number} published: {done.nuggets} nuggets, sha256 "
                    f"{done.bank.content_hash}"
                )
                if done.empty_topics:
                    self.stderr.write(f"topics without a nugget: {', '.join(done.empty_topics)}")
            else:
                self._export(_bank(campaign, opts["bank"]), opts["output"])
        except DomainError as exc:
            raise as_command_error(exc) from None

    def _draft(self, campaign: Campaign, action: str, opts: dict[str, Any]) -> DraftReport:
        path = read_path(opts["file"]) if action == "import" else None
        return draft_requested(
            campaign=campaign,
            by=None,
            source={"import": "imported", "extract": "extracted", "draft": "judge"}[action],
            qrels=opts.get("qrels"),
            judge=opts.get("judge"),
            data=path,
            file_name=path.name if path else None,
            note=opts.get("note", ""),
            most=opts.get("most"),
            vital=opts.get("vital"),
        )

    def _report(self, report: DraftReport) -> None:
        bank = report.bank
        self.stdout.write(
            f"nugget bank v{bank.number} drafted ({bank.source}): "
            f"{sum(report.drafted.values())} nuggets over {len(report.drafted)} topic(s)"
        )
        for qid, why in sorted(report.skipped.items()):
            self.stderr.write(f"topic {qid}: no nugget ({why})")

    def _export(self, bank: NuggetBank, output: str) -> None:
        topics = bank_export(bank)
        if output == "-":
            write_nuggets(topics, _Text(self))
            return
        write_nuggets(topics, Path(output))
        self.stderr.write(f"nugget bank v{bank.number}: {len(topics)} topic(s) written to {output}")


class _Text:
    """A binary sink over the command's text stdout (``call_command`` gives a StringIO)."""

    def __init__(self, command: BaseCommand) -> None:
        self.command = command

    def write(self, data: bytes) -> int:
        self.command.stdout.write(data.decode("utf-8"), ending="")
        return len(data)


def _bank(campaign: Campaign, number: int | None) -> NuggetBank:
    banks = NuggetBank.objects.filter(campaign=campaign).order_by("-number")
    bank = banks.first() if number is None else banks.filter(number=number).first()
    if bank is None:
        which = "no nugget bank" if number is None else f"no nugget bank v{number}"
        raise CommandError(f"campaign {campaign.name!r} has {which}")
    return bank
