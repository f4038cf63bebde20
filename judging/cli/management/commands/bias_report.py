from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from judging.assessments.selectors import qrels_version
from judging.cli.management.commands._common import add_campaign_argument, get_campaign
from judging.core.errors import InvalidInput
from judging.evaluation.bias import bias_report_compute, bias_report_request
from judging.evaluation.models import BiasKind


class Command(BaseCommand):
    help = "Compute (or show) the pool-bias report of a campaign: leave-one-out and friends."

    def add_arguments(self, parser: CommandParser) -> None:
        add_campaign_argument(parser)
        parser.add_argument("--qrels", type=int, help="version number (default: latest)")
        parser.add_argument("--measure", default="AP")
        parser.add_argument("--depth", type=int, help="default: the campaign's pool depth")
        parser.add_argument("--kind", choices=BiasKind.values, default=BiasKind.LOO_RUN)
        parser.add_argument(
            "--topics",
            default="",
            help="topics to analyse (default: the campaign's pooled topics; all: every "
            "topic): ids, ranges and tag:NAME, as in 601-650,tag:hard",
        )
        parser.add_argument("--json", action="store_true", help="print the whole report")

    def handle(self, *args: Any, **opts: Any) -> None:
        campaign = get_campaign(opts["campaign"])
        version = qrels_version(campaign, opts["qrels"])
        if version is None:
            raise CommandError("no such qrels version (import or publish qrels first)")
        try:
            report = bias_report_request(
                campaign=campaign,
                qrels=version,
                measure=opts["measure"],
                depth=opts["depth"],
                kind=opts["kind"],
                topics=opts["topics"],
            )
        except InvalidInput as exc:  # a bad or out-of-bounds parameter: named, no traceback
            raise CommandError("; ".join(map(str, exc.problems)) or exc.message) from None
        assert report is not None
        report = bias_report_compute(report_id=report.pk) or report
        if report.state != "done":
            raise CommandError(f"the report is {report.state}: {report.error}")
        if opts["json"]:
            self.stdout.write(json.dumps(report.result, indent=2))
            return
        loo = report.result.get("loo")
        topics = report.result.get("topics") or {}
        on = f", topics {report.topics}" if report.topics else ""
        self.stdout.write(
            f"qrels v{version.number}, {report.measure} at depth {report.depth}{on} "
            f"({len(topics.get('analysed', []))} topics analysed)"
        )
        if loo:
            self.stdout.write(
                f"Kendall tau-b {loo['kendall_tau']:.3f}, tau_AP {loo['tau_ap']:.3f}"
                f", max delta {loo['max_delta']:+.4f} ({loo['max_delta_run']})"
            )
            for tag, r in sorted(loo["runs"].items(), key=lambda kv: kv[1]["rank"]):
                self.stdout.write(
                    f"  {tag}\t{r['score']:.4f}\t{r['score_without']:.4f}\t{r['delta']:+.4f}"
                )
        for tag, p in (report.result.get("penalty") or {}).get("runs", {}).items():
            self.stdout.write(
                f"  {tag} (not pooled): estimated penalty "
                f"+{p['estimated_penalty']:.4f} (an estimate)"
            )
        estimators = report.result.get("estimators")
        if estimators:
            for name, e in (estimators.get("estimators") or {}).items():
                if e.get("applicable"):
                    self.stdout.write(
                        f"  estimator {name}: MAE {_num(e.get('mae'))}, SRE {e.get('sre')}, "
                        f"SRE* {e.get('sre_star')}, tau-b {_num(e.get('kendall_tau'))}"
                    )
            if estimators.get("recommended_why"):
                self.stdout.write(
                    f"  recommended: {estimators.get('recommended')} "
                    f"({estimators['recommended_why']})"
                )
        elif report.result.get("estimators_unavailable"):
            self.stdout.write(f"  estimators: {report.result['estimators_unavailable']}")
        before_after = report.result.get("before_after")
        if before_after and before_after.get("topics_note"):
            self.stdout.write(
                f"  before/after v{before_after['from']} -> v{before_after['to']}: "
                f"{before_after['topics_note']}"
            )


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"
