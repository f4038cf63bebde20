from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from judging.assessments.topups import DEFAULT_BUDGET, topup_status
from judging.autojudge.models import Judge
from judging.cli.management.commands._common import add_campaign_argument, get_campaign
from judging.core.errors import DomainError
from judging.workflows.topups import run_topups_corrected, topup_published, topup_requested


class Command(BaseCommand):
    help = (
        "Queue a top-up of a run: a random sample of its unjudged top-k documents, first in "
        "their topics' queues, to measure its penalty (--status: where its top-ups stand)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        add_campaign_argument(parser)
        parser.add_argument("run", help="the run's tag")
        parser.add_argument(
            "--budget", type=int, default=DEFAULT_BUDGET, help="documents to judge (default 20)"
        )
        parser.add_argument(
            "--design",
            choices=("uniform", "rank", "per_topic"),
            default="uniform",
            help="uniform over its unjudged documents (default), spread over rank bands, or "
            "--budget per topic",
        )
        parser.add_argument(
            "--judge",
            type=int,
            help="an automatic judge version's id: it grades every unjudged document, "
            "corrected by the judged sample (uniform only)",
        )
        parser.add_argument("--status", action="store_true", help="only show its top-ups")
        parser.add_argument(
            "--publish",
            action="store_true",
            help="publish its latest top-up as the next qrels version (its version and the "
            "top-up's judgments, nothing else)",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        campaign = get_campaign(opts["campaign"])
        run = campaign.runs.filter(tag=opts["run"]).first()
        if run is None:
            raise CommandError(f"campaign {campaign.pk} has no run {opts['run']!r}")
        if opts["publish"]:
            try:
                version = topup_published(run=run, created_by=None)
            except DomainError as exc:
                raise CommandError(exc.message) from None
            self.stdout.write(f"qrels version {version.number}: {version.note}")
            return
        if not opts["status"]:
            try:
                judge = None
                if opts["judge"] is not None:
                    judge = Judge.objects.filter(pk=opts["judge"], campaign=campaign).first()
                    if judge is None:
                        raise CommandError(f"campaign {campaign.pk} has no judge {opts['judge']}")
                topup = topup_requested(
                    run=run,
                    budget=opts["budget"],
                    design=opts["design"],
                    requested_by=None,
                    judge=judge,
                )
            except DomainError as exc:
                problems = getattr(exc, "problems", [])
                raise CommandError(exc.message + "".join(f"; {p}" for p in problems)) from None
            status = topup_status(topup, estimates=False)
            self.stdout.write(
                f"queued {status['sampled']} of the {status['hole']} unjudged documents in the "
                f"top {status['k']} of {run.tag}: {status['time_left'] or 'nothing left'}"
            )
            return
        for t in run_topups_corrected(run)["topups"]:
            line = f"top-up {t['id']}: {t['judged']} of {t['sampled']} judged"
            for name, e in t["estimates"].items():
                line += f"; {name} {e['estimate']:.4f} [{e['low']:.4f}, {e['high']:.4f}]"
            self.stdout.write(line)
            c = t.get("correction")
            if c:
                line = f"  with {c['judge_label']} ({c['graded']} of {c['hole']} graded)"
                for name, e in c["estimates"].items():
                    line += f"; {name} {e['estimate']:.4f} [{e['low']:.4f}, {e['high']:.4f}]"
                self.stdout.write(line)
