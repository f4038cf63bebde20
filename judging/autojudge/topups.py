"""An automatic judge correcting a top-up (issue 31, point 4): the judge grades every unjudged
document of the run's top k, the people grade the top-up's sample, and the run's score with its
hole judged is estimated from both.

The estimate (``metrics.bias.topup.estimate`` with ``auto``) takes the judge's grade as the
stratum of each hole document ("judge: relevant", "judge: not relevant", "judge: no label"):
within each, the people's grades of the sampled documents say how often the judge's word holds,
and every unsampled document is relevant at that rate. This is the calibrated-predictor form of
prediction-powered inference (``metrics.sampling.ppi``: the predictor is the human rate per
automatic grade, not the raw grade), so a judge that is often wrong costs width, not bias, and
a judge that grades nothing leaves the plain top-up's estimate. It needs a uniform sample (within
each of the judge's grades the sample is then a simple random sample). Measured with a
simulated judge (no real judge's labels of the replayed runs are here): ``benchmarks/README.md``,
"The top-up".

A runnable judge labels the hole by its own job (``JudgeRun`` over the top-up); an imported
judge's labels come from its file (``labels_import``), and whatever of the hole it has graded
is used.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from judging.assessments.models import TopUp
from judging.assessments.topups import topup_status
from judging.autojudge.models import Judge, JudgeKind, TopUpCorrection
from judging.autojudge.services import invalid, judge_run_request, labels, topup_pairs
from judging.core.models import LIVE_STATES
from judging.core.roles import Account


def correction_request(
    *, topup: TopUp, judge: Judge, requested_by: Account | None = None
) -> TopUpCorrection:
    """Have ``judge`` correct ``topup``: its labelling of the hole queued (a runnable judge) or
    its imported labels used."""
    if judge.campaign_id != topup.campaign_id:
        raise invalid("judge", "belongs to another campaign")
    if topup.design != "uniform":
        raise invalid("judge", "a judge corrects a uniform top-up only (design 'uniform')")
    with transaction.atomic():
        run = None
        if judge.kind != JudgeKind.IMPORTED:
            run = judge_run_request(judge=judge, topup=topup, requested_by=requested_by)
        correction, _ = TopUpCorrection.objects.update_or_create(
            topup=topup, defaults={"judge": judge, "run": run}
        )
    return correction


def corrections_of(run_id: int) -> dict[int, TopUpCorrection]:
    """Top-up id -> its correction, for the run's top-ups an automatic judge corrects."""
    found = TopUpCorrection.objects.filter(topup__run_id=run_id).select_related(
        "judge", "run__job", "topup__qrels", "topup__campaign", "topup__run"
    )
    return {c.topup_id: c for c in found}


def correction_status(
    correction: TopUpCorrection, grades: dict[tuple[str, str], int] | None = None
) -> dict[str, Any]:
    """Where a top-up's correction by its judge stands: the judge, how many of the hole's
    documents it has graded, its labelling's state, and the run's score with its hole judged,
    estimated from the judge's grades corrected by the judged sample."""
    topup = correction.topup
    hole = topup_pairs(topup)
    auto = labels(correction.judge, only=hole)
    run = correction.run
    labelling = "imported" if run is None else run.state
    status = topup_status(topup, grades=grades, auto=auto)
    return {
        "judge": correction.judge_id,
        "judge_label": str(correction.judge),
        "labelling": labelling,
        "live": run is not None and run.job.state in LIVE_STATES,
        "graded": len(auto),
        "hole": len(hole),
        "judged": status["judged"],
        "sampled": status["sampled"],
        "estimates": status["estimates"],
    }
