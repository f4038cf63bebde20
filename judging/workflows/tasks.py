from __future__ import annotations

from celery import Task, shared_task
from django.db import InterfaceError, OperationalError


@shared_task(
    bind=True,
    acks_late=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    retry_backoff_max=120,
    max_retries=20,
)
def build_pool(self: Task, pool_id: int) -> None:  # type: ignore[type-arg]
    """Thin: the workflow does the work and is safe to run twice (see ``pool_build``).

    A message delivered while another worker still builds the version comes back later: if that
    worker has died by then (no heartbeat for POOLJUDGE_STALE_SECONDS), this one takes over.
    """
    from judging.pools.services import BuildBusy
    from judging.workflows.pools import pool_built

    try:
        pool_built(pool_id=pool_id)
    except BuildBusy as busy:
        # Looks again when the build would be stale if its worker died now; this ends when
        # the build ends or is taken over (a long build beats for hours: a high limit).
        raise self.retry(countdown=busy.retry_in, max_retries=10_000) from busy
