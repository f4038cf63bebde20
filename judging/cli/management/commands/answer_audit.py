from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from judging.autojudge.answer_audit import answer_audit
from judging.autojudge.models import Judge
from judging.cli.management.commands._common import as_command_error
from judging.core.errors import DomainError


def _num(x: Any) -> str:
    return "undefined" if x is None else f"{x:.3f}"


class Command(BaseCommand):
    help = (
        "Audit an automatic judge's labels of answer items against people's: agreement (exact, "
        "weighted kappa, confusion) overall and per topic, and the answer runs' rankings under "
        "its labels and people's (Kendall's tau-b, tau_AP, top-10 tau) per measure."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--judge", type=int, required=True, help="The judge version's id.")
        parser.add_argument(
            "--kind", required=True, choices=["nugget_assignment", "citation_support"]
        )
        parser.add_argument("--bank", type=int, help="The published nugget bank version.")
        parser.add_argument("--json", action="store_true", help="Print the whole audit as JSON.")

    def handle(self, *args: Any, **opts: Any) -> None:
        judge = Judge.objects.filter(pk=opts["judge"]).select_related("campaign").first()
        if judge is None:
            raise CommandError(f"no judge {opts['judge']}")
        try:
            audit = answer_audit(judge=judge, kind=opts["kind"], bank=opts["bank"])
        except DomainError as exc:
            raise as_command_error(exc) from None
        if opts["json"]:
            self.stdout.write(json.dumps(audit, indent=2))
            return
        labels = audit["labels"]
        self.stdout.write(
            f"{audit['judge']} on {audit['kind']}: {labels['n']} of {audit['items']} items "
            f"labelled by both; exact {_num(labels['exact'])}, kappa (linear) "
            f"{_num(labels['kappa_linear'])}, binary kappa {_num(labels['binary_kappa'])}"
        )
        self.stdout.write("confusion (rows: people 0/1/2, columns: judge 0/1/2):")
        for row in labels["confusion"]:
            self.stdout.write("  " + " ".join(f"{n:5d}" for n in row))
        self.stdout.write("per topic: n, exact, kappa (linear)")
        for qid, t in audit["topics"].items():
            self.stdout.write(f"  {qid}\t{t['n']}\t{_num(t['exact'])}\t{_num(t['kappa_linear'])}")
        if not audit["rankings"]:
            self.stdout.write(f"rankings: {audit['rankings_note']}")
        for measure, r in audit["rankings"].items():
            self.stdout.write(
                f"{measure}: tau-b {_num(r['kendall_tau_b'])}, tau_AP {_num(r['tau_ap'])}, "
                f"top-{r['top_k']} tau {_num(r['tau_top_k'])} over {r['n_runs']} runs"
            )
