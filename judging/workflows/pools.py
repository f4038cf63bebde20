"""A pool version is requested, then built by a worker."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from judging.assessments.queue import slots_enqueue
from judging.assessments.selectors import judged_documents
from judging.pools.models import PoolVersion
from judging.pools.services import pool_build, pool_is_stale, pool_request
from judging.workflows._signature import takes_arguments_of


def _send(pool_id: int) -> None:
    from judging.workflows.tasks import build_pool

    build_pool.delay(pool_id)


@takes_arguments_of(pool_request)
def pool_requested(**request: Any) -> tuple[PoolVersion, bool]:
    """Ask for the next pool version (``pools.services.pool_request``, same arguments and
    errors) and send the build to a worker after commit. A request while a build is pending
    returns that build; if it looks abandoned, it is sent again (building is idempotent)."""
    with transaction.atomic():
        version, created = pool_request(**request)
        if created or pool_is_stale(version):
            pool_id = version.pk
            transaction.on_commit(lambda: _send(pool_id))
    return version, created


def pool_built(*, pool_id: int) -> PoolVersion | None:
    """The worker's side: build the version and queue its never-judged documents for judging.

    Pools sit below the judging queue, so the build is handed what it needs from it: which
    documents were ever judged, and the step that opens slots for the new version's documents,
    which runs in the build's final transaction (a built version always has its slots).
    """
    return pool_build(pool_id=pool_id, judged=judged_documents, on_built=slots_enqueue)
