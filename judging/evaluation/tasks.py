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
    """Evaluate every run of the campaign against a new qrels version (qrels prepared once),
    in ``mode`` (honest, or trec_eval)."""
    from judging.assessments.models import QrelsVersion
    from judging.evaluation.services import evaluate_runs

    version = QrelsVersion.objects.filter(pk=qrels_id).select_related("campaign").first()
    if version is None:
        return
    evaluate_runs(version=version, runs=version.campaign.runs.all(), mode=mode)


@shared_task(
    acks_late=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    max_retries=5,
)
def compute_bias_report(report_id: int) -> None:
    from judging.evaluation.bias import bias_report_compute

    bias_report_compute(report_id=report_id)


@shared_task(
    acks_late=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    max_retries=5,
)
def compute_reusability(report_id: int) -> None:
    from judging.evaluation.reusability import reusability_compute

    reusability_compute(report_id=report_id)
