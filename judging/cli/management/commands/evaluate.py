from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from judging.assessments.selectors import qrels_version
from judging.cli.management.commands._common import add_campaign_argument, get_campaign
from judging.evaluation.models import EvalMode
from judging.evaluation.results import upgraded_evaluation
from judging.evaluation.services import evaluate_runs


class Command(BaseCommand):
    help = "Evaluate every run of a campaign against a qrels version (stored; skipped if done)."

    def add_arguments(self, parser: CommandParser) -> None:
        add_campaign_argument(parser)
        parser.add_argument("--qrels", type=int, help="version number (default: latest)")
        parser.add_argument("--mode", choices=EvalMode.values, default=EvalMode.HONEST)
        parser.add_argument("--force", action="store_true", help="recompute stored results")

    def handle(self, *args: Any, **opts: Any) -> None:
        campaign = get_campaign(opts["campaign"])
        version = qrels_version(campaign, opts["qrels"])
        if version is None:
            raise CommandError("no such qrels version (import or publish qrels first)")
        rows = evaluate_runs(
            version=version,
            runs=campaign.runs.order_by("tag"),
            mode=opts["mode"],
            force=opts["force"],
        )
        measures = list(campaign.measures)
        self.stdout.write(f"qrels version {version.number} ({opts['mode']} mode)")
        self.stdout.write("run\t" + "\t".join(measures))
        for ev in rows:
            if ev.state != "done":
                self.stdout.write(f"{ev.run.tag}\t{ev.state}: {ev.error}")
                continue
            stored = upgraded_evaluation(ev.result)
            values = [stored["measures"][m]["value"] for m in measures]
            self.stdout.write(
                ev.run.tag + "\t" + "\t".join("nan" if v is None else f"{v:.4f}" for v in values)
            )
