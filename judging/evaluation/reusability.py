"""Reusability reports: how far the pool behind a qrels version can be trusted to score a
system that did not build it (``metrics.bias.reusability``: relevant documents found by one group or
run only, leave-one-unit-out drops, Judged@k of pooled and other runs, pooling efficiency by
depth and a verdict with its basis).

One report per qrels version, on the campaign's pooled topics at its pool depth (as they are
when it is computed), computed by a job when the version is imported or published
(``judging.workflows.qrels``), or on request (the API's POST, ``manage.py reusability_report``)
for a version stored before reports existed. Reading it is a selector
(``judging.evaluation.selectors.reusability_report``).
"""

from __future__ import annotations

from typing import Any

from judging.assessments.models import QrelsVersion
from judging.campaigns.models import Campaign, Run
from judging.core import jobs
from judging.core.models import Job
from judging.core.roles import Account
from judging.evaluation.bias import (
    campaign_runs,
    check_rate,
    claim_report,
    refuse_sampled,
    run_names,
    stage,
    topic_filter,
    units,
)
from judging.evaluation.models import Reusability
from judging.evaluation.results import (
    REUSABILITY_RESULT_VERSION,
    ReusabilityResult,
    stored_report,
)
from judging.evaluation.services import qrels_dict
from judging.pools.models import PoolState, PoolVersion
from metrics.bias.leaveout import LeaveOut
from metrics.bias.reusability import reusability as compute_reusability
from metrics.io import Qrels

# The measure whose expected underestimate the verdict states.
REUSABILITY_MEASURE = "AP"


def reusability_task_key(report_id: int) -> str:
    return f"reusability:{report_id}"


def reusability_request(
    *, version: QrelsVersion, requested_by: Account | None = None
) -> Reusability:
    """The stored report of ``version``, computing it (its job, after commit) when there is none
    or the last attempt failed.

    A report asked for by a user (``requested_by``: the API) that is not stored yet counts
    against the user's hourly allowance of new reports (POOLJUDGE_BIAS_REPORTS_PER_HOUR, shared
    with bias reports; ``RateLimited`` beyond it)."""
    refuse_sampled(version)
    if requested_by is not None and not Reusability.objects.filter(qrels=version).exists():
        check_rate(requested_by)
    report, created = claim_report(
        Reusability,
        {"qrels": version},
        "reusability",
        "reusability",
        campaign_id=version.campaign_id,
        requested_by=requested_by,
    )
    if created:
        jobs.enqueue(report.job)
    else:
        jobs.again(report.job)
    return report


def report_compute(job: Job) -> dict[str, Any] | None:
    """The computation of a ``reusability`` job."""
    report = Reusability.objects.select_related("campaign", "qrels").filter(job=job).first()
    if report is None:
        return None
    with stage("reusability"):
        return _compute(report.campaign, report.qrels)


def report_store(job: Job, result: dict[str, Any] | None) -> None:
    if result is not None:
        Reusability.objects.filter(job=job).update(result=result)


def reusability_compute(*, report_id: int) -> Reusability | None:
    """Compute a stored report here, in this process (``manage.py reusability_report``); safe
    to run twice. A failure is stored with its job (failed, the error), never raised."""
    report = Reusability.objects.select_related("job").filter(pk=report_id).first()
    if report is None:
        return None
    jobs.compute_here(report.job)
    report.refresh_from_db()
    return report


def pooled_at(campaign: Campaign, version: QrelsVersion, runs_models: list[Run]) -> list[str]:
    """The runs whose documents were pooled for ``version``: those of the pool versions built
    before it was made; without any (qrels imported, not judged here), the runs marked pooled."""
    contributed: set[str] = set()
    for tags in PoolVersion.objects.filter(
        campaign=campaign, state=PoolState.BUILT, finished_at__lte=version.created_at
    ).values_list("run_tags", flat=True):
        contributed.update(tags)
    tags = [r.tag for r in runs_models if r.tag in contributed]
    return tags or [r.tag for r in runs_models if r.pooled]


def _compute(campaign: Campaign, version: QrelsVersion) -> dict[str, Any]:
    """The report on the campaign's pooled topics (``Campaign.pooled_topics``: every topic
    unless an import inferred its pooling on a subset) at its pool depth, as the bias reports'
    defaults: topics judged in other pools would be counted shallow or unique to no run."""
    runs_models, runs = campaign_runs(campaign)
    if not runs:
        raise ValueError("the campaign has no runs to analyse")
    pooled = pooled_at(campaign, version, runs_models)
    _, groups = units(runs_models, pooled)
    spec, topics = topic_filter(campaign, campaign.pooled_topics)
    report = compute_reusability(
        Qrels.from_dict(qrels_dict(version)),
        runs,
        LeaveOut(
            depth=campaign.pool_depth,
            pooled=pooled,
            groups=groups,
            topics=topics if spec else None,
            relevance_level=campaign.relevance_threshold,
        ),
        measure=REUSABILITY_MEASURE,
    )
    out: dict[str, Any] = {
        **report.to_dict(),
        "pooled": pooled,
        "topics_spec": spec,
    }
    # stored typed: the names in its sentences are found among the runs it was computed over
    return stored_report(ReusabilityResult, out, REUSABILITY_RESULT_VERSION, run_names(runs_models))
