"""A run's standing against a pool it did not help build, for its own page and the API (issue 31,
points 1-3 and 5): what is known for sure (its score against the pool, its unjudged documents,
its bounds) and the estimate of its score had it been pooled, with a 95% interval for that
score, read from the campaign's default bias report on its latest human qrels version (the
headline measure, the pool depth, the pooled topics). Nothing here computes: a run the report
does not cover (it was pooled, or it arrived after the report was computed) says so, and how to
get an estimate.
"""

from __future__ import annotations

from typing import Any

from judging.assessments.services import current_human_grades
from judging.assessments.topups import topup_offer, topup_status
from judging.campaigns.models import Campaign, Run
from judging.campaigns.selectors import run_label
from judging.core.roles import Account, UserLike
from judging.evaluation.bias import headline_measure
from judging.evaluation.late import run_penalty_request
from judging.evaluation.models import RunPenalty
from judging.evaluation.results import read_run_penalty
from judging.evaluation.selectors import bias_report, latest_qrels_version, report_viewer
from metrics.bias.validation import novelty_k
from metrics.measures.names import parse_measure
from metrics.results import render


def interval_words(estimate: dict[str, Any], bounds: list[float | None] | None) -> str:
    """What an estimate's 95% interval is, in words (its ``interval_method``)."""
    method = estimate.get("interval_method")
    if method is None:
        return (
            "the interval of the mean correction the estimate rests on, not of this run's "
            "score: this report predates intervals for a run's own score (the next qrels "
            "version's report has them)"
        )
    if method == "exact":
        return "nothing in its top k is unjudged: its score is known"
    if method == "bounds":
        return f"its bounds: {estimate.get('interval_why') or 'no calibrated interval'}"
    if bounds and estimate.get("interval") == bounds:
        return (
            "as wide as its bounds: the left-out runs' errors, scaled to this run's unjudged "
            "share, do not narrow it"
        )
    return (
        "for its full-pool score, including this estimator's own error: calibrated on the "
        "left-out runs' errors, scaled by their unjudged share"
    )


def run_penalty(run: Run, user: UserLike) -> dict[str, Any]:
    """The run's penalty as ``user`` may see it: ``status`` says what there is ("estimated",
    "pooled", "no_qrels", "no_report", "pending", "failed", "not_in_report") with ``detail``;
    when estimated, its score, novelty, bounds and the estimate with its interval."""
    campaign = run.campaign
    version = latest_qrels_version(campaign.pk)
    measure = headline_measure(campaign)
    out: dict[str, Any] = {"measure": measure, "qrels_version": None, "pooled": run.pooled}
    if version is None:
        return {**out, "status": "no_qrels", "detail": "no qrels version yet"}
    out["qrels_version"] = version.number
    report = bias_report(campaign=campaign, version=version, user=user, measure=measure)
    if report is None:
        return {
            **out,
            "status": "no_report",
            "detail": f"no bias report on qrels version {version.number} for {measure} yet",
        }
    if report["state"] != "done":
        state = report["state"]
        detail = f"the bias report is {state}" + (
            f": {report['error']}" if report.get("error") else ""
        )
        return {**out, "status": state if state == "failed" else "pending", "detail": detail}
    est = (report.get("result") or {}).get("estimators") or {}
    entry = (est.get("not_pooled") or {}).get(run_label(run, user))
    source = "estimated from the bias report"
    if entry is None and run.pooled:
        detail = "it helped build the pool: there is no penalty to estimate"
        return {**out, "status": "pooled", "detail": detail}
    if entry is None:
        late = _late(run, version, measure, user)
        if late is None or late.get("state") != "done":
            return {**out, **_late_status(late, version.number)}
        est = late["estimators"]
        entry = (est.get("not_pooled") or {}).get(run_label(run, user))
        source = "estimated for this run, which arrived after the bias report"
        if entry is None:
            why = late.get("estimators_unavailable") or "the run has no estimate"
            return {**out, "status": "unavailable", "detail": str(why)}
    info = est.get("estimators") or {}
    estimates = entry.get("estimates") or {}
    chosen = entry.get("recommended") or est.get("recommended")
    headline = estimates.get(chosen) if chosen else None
    return {
        **out,
        "status": "estimated",
        "detail": source,
        "score": entry.get("score"),
        "judged": entry.get("judged"),
        "unjudged": entry.get("unjudged"),
        "top_k": entry.get("top_k"),
        "k": est.get("novelty_k"),
        "bounds": entry.get("bounds"),
        "bounds_exact": entry.get("bounds_exact"),
        "estimator": chosen,
        "estimator_label": (info.get(chosen) or {}).get("label", chosen) if chosen else None,
        "for_this_run": bool(entry.get("recommended")),
        "recommended_why": entry.get("recommended_why") or est.get("recommended_why"),
        "estimate": (headline or {}).get("estimate"),
        "penalty": (headline or {}).get("penalty"),
        "interval": (headline or {}).get("interval"),
        "interval_words": interval_words(headline or {}, entry.get("bounds")),
        "extrapolating": bool((headline or {}).get("extrapolating")),
    }


def topup_k(campaign: Campaign) -> tuple[str, int]:
    """The measure a campaign's top-ups are read for (its headline measure) and the top k they
    sample from (its cut-off, else the pool depth)."""
    measure = headline_measure(campaign)
    return measure, novelty_k(parse_measure(measure), campaign.pool_depth)


def run_penalty_estimate(run: Run, user: Account) -> dict[str, Any]:
    """Ask for a late run's penalty (``evaluation.late``) when the bias report has none for it,
    then answer as ``run_penalty``."""
    now = run_penalty(run, user)
    if now["status"] in ("not_in_report", "failed"):
        version = latest_qrels_version(run.campaign_id)
        if version is not None:
            run_penalty_request(run=run, version=version, measure=now["measure"], requested_by=user)
            now = run_penalty(run, user)
    return now


def _late(run: Run, version: Any, measure: str, user: UserLike) -> dict[str, Any] | None:
    """A late run's stored penalty (``evaluation.late``) as ``user`` may see it, with its
    state; None when never asked for."""
    row = (
        RunPenalty.objects.filter(run=run, qrels=version, measure=measure)
        .select_related("job")
        .first()
    )
    if row is None:
        return None
    out: dict[str, Any] = {"state": row.state, "error": row.error}
    if row.state == "done" and row.result:
        out.update(render(read_run_penalty(row.result), report_viewer(run.campaign, user)))
    return out


def _late_status(late: dict[str, Any] | None, number: int) -> dict[str, str]:
    if late is None:
        return {
            "status": "not_in_report",
            "detail": f"the bias report on qrels version {number} was computed before this run "
            "arrived and has no estimate for it: ask for its estimate (a POST to "
            "/api/v1/runs/ID/penalty/, or Estimate its penalty on its page), or measure it with "
            "a top-up",
        }
    if late["state"] == "failed":
        return {"status": "failed", "detail": f"its estimate failed: {late['error']}"}
    return {"status": "pending", "detail": "its estimate is being computed"}


def run_topups(run: Run, grades: dict[tuple[str, str], int] | None = None) -> dict[str, Any]:
    """What a top-up of the run would judge, and its top-ups with where each stands
    (``grades``: ``current_human_grades``, when the caller has them)."""
    measure, k = topup_k(run.campaign)
    if grades is None:  # read once for the offer and every top-up
        grades = current_human_grades(run.campaign)
    return {
        "measure": measure,
        "offer": topup_offer(run, k, grades),
        "topups": [
            topup_status(t, grades=grades)
            for t in run.topups.select_related("qrels", "campaign", "run")
        ],
    }
