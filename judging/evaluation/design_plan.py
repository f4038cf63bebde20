"""The budget planner's design forecast (issue 32, point 6): given a budget of judgments, depth-k
vs a stratified sample vs statAP's sample vs the hybrid estimate, simulated on the campaign's own
pooled runs and pilot topics (``metrics.evaluation.design_forecast``), and how many topics a
target interval width takes (Sakai's topic set size design, from the pilot).

The pilot topics are those whose pool (the pooled runs' top ``pool_depth``) is judged in full in
the qrels version read (the latest human one by default): their judgments are the truth the
designs are scored against. The budget is judgments over every campaign topic; its share of the
campaign's whole pool is the share each design spends on the pilot. Admins only (the plan's
audience); computed on request, bounded by ``POOLJUDGE_EVALUATION.design_plan_max_work``.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from django.conf import settings

from judging.assessments.models import QrelsVersion
from judging.assessments.selectors import qrels_version
from judging.campaigns.models import Campaign
from judging.core.errors import InvalidInput
from judging.evaluation.services import metrics_run, qrels_dict
from metrics.evaluation.design_forecast import forecast
from metrics.io import Qrels
from metrics.problems import Problem

__all__ = ["design_forecast"]

WIDTHS = (0.05, 0.1)


def _bad(name: str, message: str) -> InvalidInput:
    return InvalidInput(message, [Problem.at(name, message)])


def design_forecast(
    *,
    campaign: Campaign,
    budget: int,
    reps: int | None = None,
    version: QrelsVersion | None = None,
) -> dict[str, Any]:
    """The forecast of each design at ``budget`` judgments (see the module docstring)."""
    most = settings.POOLJUDGE_EVALUATION.design_plan_reps
    reps = most if reps is None else reps
    if not 1 <= reps <= most:
        raise _bad("reps", f"reps must be 1 to {most} (POOLJUDGE_DESIGN_PLAN_REPS)")
    if budget < 1:
        raise _bad("budget", "budget must be at least 1 judgment")
    version = version or qrels_version(campaign)
    if version is None:
        raise _bad("qrels", "no qrels version yet: judge a few topics' pools in full first")
    if version.design:
        raise _bad(
            "qrels", f"qrels version {version.number} is sampled: the pilot needs full pools"
        )
    depth = campaign.pool_depth
    runs = {r.tag: metrics_run(r, campaign) for r in campaign.runs.filter(pooled=True)}
    if len(runs) < 2:
        raise _bad("runs", "the forecast needs at least two pooled runs")
    grades = qrels_dict(version)
    qids = list(campaign.topics.order_by("qid").values_list("qid", flat=True))
    pools = {q: _pool(runs, q, depth) for q in qids}
    pilot = [
        q for q in qids if pools[q] and all(grades.get(q, {}).get(d, -1) >= 0 for d in pools[q])
    ]
    total = sum(map(len, pools.values()))
    if len(pilot) < 2:
        raise _bad(
            "qrels",
            f"{len(pilot)} topic(s) have their depth-{depth} pool judged in full in qrels "
            f"version {version.number}; the forecast needs at least two (pilot topics)",
        )
    work = reps * sum(len(r.ranking(q)[:1000]) for r in runs.values() for q in pilot if q in r)
    limit = settings.POOLJUDGE_EVALUATION.design_plan_max_work
    if work > limit:
        raise _bad(
            "reps",
            f"{reps} draws over {len(pilot)} pilot topics and {len(runs)} runs is more than "
            f"POOLJUDGE_DESIGN_PLAN_MAX_WORK ({limit:,}): ask for fewer draws",
        )
    share = min(1.0, budget / total)
    f = forecast(
        Qrels.from_dict({q: grades[q] for q in pilot}),
        runs,
        topics=pilot,
        depth=depth,
        share=share,
        reps=reps,
        widths=WIDTHS,
    )
    sentence = (
        f"At {budget:,} judgments ({share:.0%} of the campaign's {total:,} pooled documents), "
        f"{f.recommended} is recommended: {f.basis}."
    )
    return {
        "campaign": campaign.pk,
        "qrels_version": version.number,
        "budget": budget,
        "pool": total,
        "share": share,
        "pilot_topics": pilot,
        "runs": len(runs),
        "reps": reps,
        "designs": [asdict(d) for d in f.designs],
        "recommended": f.recommended,
        "basis": f.basis,
        "sentence": sentence,
        "topics_for_width": f.topics_for_width,
    }


def _pool(runs: dict[str, Any], qid: str, depth: int) -> set[str]:
    return {d for r in runs.values() if qid in r for d in r.ranking(qid)[:depth]}
