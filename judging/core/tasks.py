from __future__ import annotations

import socket

from celery import shared_task


@shared_task(acks_late=True)
def heartbeat(token: str) -> None:
    """Record that a worker ran a task; safe to run twice (upsert on the token)."""
    from judging.core.models import WorkerHeartbeat

    WorkerHeartbeat.objects.update_or_create(
        token=token, defaults={"hostname": socket.gethostname()}
    )
