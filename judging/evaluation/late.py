"""A late run's penalty (issue 31, point 5): a run submitted after a qrels version's bias report
was computed is in none of its analyses, and a stored report is never computed again for the
same inputs. Asking for the run's penalty records a job (``run_penalty``) that validates the
campaign's estimators on that version, as the report's estimators part does, with the run among
those not pooled, and keeps the estimators' figures (``RunPenalty``): its novelty, bounds, the
estimator recommended for runs as novel, and each estimate with its 95% interval for its score.
"""

from __future__ import annotations

from typing import Any

from judging.assessments.models import QrelsVersion
from judging.campaigns.models import Run
from judging.core import jobs
from judging.core.models import Job
from judging.core.roles import Account
from judging.evaluation.bias import (
    _estimators,
    _Inputs,
    bias_params,
    check_rate,
    claim_report,
    run_names,
)
from judging.evaluation.models import BiasReport, RunPenalty
from judging.evaluation.results import RUN_PENALTY_VERSION, RunPenaltyResult, stored_report
from judging.evaluation.reusability import pooled_at


def run_penalty_request(
    *, run: Run, version: QrelsVersion, measure: str, requested_by: Account | None = None
) -> RunPenalty:
    """Ask for the run's penalty against ``version`` on ``measure``: the stored row, or a pending
    one computed by its job (a failed one is tried again). New requests count towards the
    user's reports per hour."""
    params = bias_params(run.campaign, measure=measure, depth=None, kind="loo_run")
    existing = RunPenalty.objects.filter(run=run, qrels=version, measure=params.measure).first()
    if existing is None and requested_by is not None:
        check_rate(requested_by)
    row, created = claim_report(
        RunPenalty,
        {"run": run, "qrels": version, "measure": params.measure},
        "run_penalty",
        "run-penalty",
        requested_by=requested_by,
    )
    if created:
        jobs.enqueue(row.job)
    else:
        jobs.again(row.job)
    return row


def run_penalty_compute(job: Job) -> dict[str, Any] | None:
    """The computation of a ``run_penalty`` job: the estimators on the version's default
    report inputs (the campaign's pool depth and pooled topics), every run of the campaign now,
    the runs pooled for that version as the pool."""
    row = RunPenalty.objects.select_related("run__campaign", "qrels").filter(job=job).first()
    if row is None:
        return None
    campaign = row.run.campaign
    params = bias_params(campaign, measure=row.measure, depth=None, kind="loo_run")
    report = BiasReport(
        campaign=campaign,
        qrels=row.qrels,
        measure=params.measure,
        depth=params.depth,
        kind=params.kind,
        topics=params.topics,
    )  # not stored: the inputs of the version's default report
    inputs = _Inputs(report)
    pooled = pooled_at(campaign, row.qrels, inputs.runs_models)
    blob = {
        "pooled": pooled,
        **_estimators(
            inputs.qrels,
            inputs.runs,
            inputs.runs_models,
            pooled,
            report,
            inputs.topics,
            inputs.level,
        ),
    }
    return stored_report(RunPenaltyResult, blob, RUN_PENALTY_VERSION, run_names(inputs.runs_models))


def run_penalty_store(job: Job, result: dict[str, Any] | None) -> None:
    if result is not None:
        RunPenalty.objects.filter(job=job).update(result=result)
