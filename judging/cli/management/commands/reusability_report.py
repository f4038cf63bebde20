from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from judging.assessments.selectors import qrels_version
from judging.cli.management.commands._common import add_campaign_argument, get_campaign
from judging.core.errors import InvalidInput
from judging.evaluation.reusability import reusability_compute, reusability_request


class Command(BaseCommand):
    help = (
        "Compute (or show) the reusability report of a qrels version: relevant documents found "
        "by one group or run only, leave-one-group-out drops, Judged@k, a verdict."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        add_campaign_argument(parser)
        parser.add_argument("--qrels", type=int, help="version number (default: latest)")
        parser.add_argument("--json", action="store_true", help="print the whole report")

    def handle(self, *args: Any, **opts: Any) -> None:
        campaign = get_campaign(opts["campaign"])
        version = qrels_version(campaign, opts["qrels"])
        if version is None:
            raise CommandError("no such qrels version (import or publish qrels first)")
        try:
            report = reusability_request(version=version)
        except InvalidInput as exc:  # a sampled version: the analysis does not apply
            raise CommandError(exc.message) from None
        report = reusability_compute(report_id=report.pk) or report
        if report.state != "done":
            raise CommandError(f"the report is {report.state}: {report.error}")
        result = report.result
        if opts["json"]:
            self.stdout.write(json.dumps(result, indent=2))
            return
        self.stdout.write(
            f"qrels v{version.number}: {result.get('n_pooled')} of {result.get('n_runs')} runs "
            f"pooled at depth {result.get('depth')}, {result.get('n_units')} "
            f"{'groups' if result.get('leave_out') == 'group' else 'runs'} left out in turn"
        )
        relevant = result.get("relevant") or {}
        if relevant:
            self.stdout.write(
                f"  relevant documents: {relevant.get('total')}; found by one "
                f"{result.get('leave_out')} only: {relevant.get('by_one_unit')} "
                f"({_pct(relevant.get('by_one_unit_share'))} of the relevant documents)"
            )
        if result.get("verdict"):
            self.stdout.write(f"  {result['verdict']}")
        for line in result.get("basis") or []:
            self.stdout.write(f"    - {line}")


def _pct(share: float | None) -> str:
    return "n/a" if share is None else f"{100 * share:.1f}%"
