from __future__ import annotations

from celery import Task, shared_task
from django.conf import settings
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

    A message redelivered while another worker still builds the version comes back later: if that
    worker has died by then, this delivery takes the build over.
    """
    from judging.pools.services import BuildBusy
    from judging.workflows.pools import pool_built

    try:
        pool_built(pool_id=pool_id)
    except BuildBusy as busy:
        raise self.retry(countdown=settings.POOLJUDGE_POOL_STALE_SECONDS, max_retries=20) from busy
