from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError


@shared_task(
    acks_late=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    max_retries=5,
)
def evaluate_run(run_id: int, qrels_id: int, mode: str = "honest") -> None:
    """Evaluate one run against one qrels version (skipped when already stored)."""
    from judging.assessments.models import QrelsVersion
    from judging.campaigns.models import Run
    from judging.evaluation.services import evaluate_runs

    run = Run.objects.filter(pk=run_id).first()
    version = QrelsVersion.objects.filter(pk=qrels_id).first()
    if run is None or version is None:
        return  # deleted since: nothing to do
    evaluate_runs(version=version, runs=[run], mode=mode)


@shared_task(
    acks_late=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    max_retries=5,
)
def evaluate_qrels_version(qrels_id: int, mode: str = "honest") -> None:
    """Evaluate every run of the campaign against a new qrels version in ``mode`` (honest, or
    trec_eval): here when they fit in one part (POOLJUDGE_EVAL_RUNS_PER_TASK), else one task
    per part of the runs."""
    from judging.evaluation.services import evaluations_split

    evaluations_split(qrels_id=qrels_id, mode=mode)


@shared_task(
    acks_late=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    max_retries=5,
)
def evaluate_runs_part(qrels_id: int, run_ids: list[int], mode: str = "honest") -> None:
    """Evaluate some runs against one qrels version (qrels prepared once for them); runs
    already evaluated are skipped."""
    from judging.evaluation.services import evaluations_part

    evaluations_part(qrels_id=qrels_id, run_ids=run_ids, mode=mode)


@shared_task(
    acks_late=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    max_retries=5,
)
def compute_bias_report(report_id: int) -> None:
    """Compute a bias report: record a task per analysis (or compute it here, unsplit)."""
    from judging.evaluation.bias import bias_report_start

    bias_report_start(report_id=report_id)


@shared_task(
    acks_late=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    max_retries=5,
)
def compute_bias_part(report_id: int, name: str) -> None:
    """Compute one analysis of a bias report; the last one stored records the assembly."""
    from judging.evaluation.bias import bias_part_compute

    bias_part_compute(report_id=report_id, name=name)


@shared_task(
    acks_late=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    max_retries=5,
)
def assemble_bias_report(report_id: int) -> None:
    """Store a bias report from its stored parts."""
    from judging.evaluation.bias import bias_report_assemble

    bias_report_assemble(report_id=report_id)


@shared_task(
    acks_late=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    max_retries=5,
)
def compute_reusability(report_id: int) -> None:
    from judging.evaluation.reusability import reusability_compute

    reusability_compute(report_id=report_id)
