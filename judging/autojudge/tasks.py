from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError


@shared_task(
    acks_late=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    max_retries=5,
)
def run_judge(run_id: int) -> None:
    """Label a pool version's documents with a judge version (``JudgeRun`` ``run_id``); a run
    already finished is left alone, and labels stored by an interrupted attempt are kept (they
    are the judge's cache)."""
    from judging.autojudge.models import JudgeRun
    from judging.autojudge.services import judge_run_execute

    if JudgeRun.objects.filter(pk=run_id).exists():
        judge_run_execute(run_id)
