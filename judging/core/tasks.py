from __future__ import annotations

import socket

from celery import shared_task
from django.db import InterfaceError, OperationalError


@shared_task(acks_late=True)
def heartbeat(token: str) -> None:
    """Record that a worker ran a task; safe to run twice (upsert on the token)."""
    from judging.core.models import WorkerHeartbeat

    WorkerHeartbeat.objects.update_or_create(
        token=token, defaults={"hostname": socket.gethostname()}
    )


@shared_task(
    acks_late=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    max_retries=5,
)
def run_job(job_id: int) -> None:
    """Run any stored computation (``core.jobs``: its kind's registry entry) by its job's id;
    safe to run twice (a finished job is left alone)."""
    from judging.core.jobs import run

    run(job_id)
