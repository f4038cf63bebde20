"""A pool version is requested, then built by a worker."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from judging.assessments.queue import slots_enqueue
from judging.assessments.selectors import judged_documents
from judging.core import outbox
from judging.pools.models import PoolVersion
from judging.pools.services import pool_build, pool_build_key, pool_request
from judging.workflows._signature import takes_arguments_of

BUILD_TASK = "judging.workflows.tasks.build_pool"


def send_build(pool_id: int) -> None:
    """Record the build's task in the current transaction (the outbox sends it after commit)."""
    outbox.enqueue(BUILD_TASK, pool_id, key=pool_build_key(pool_id))


@takes_arguments_of(pool_request)
def pool_requested(**request: Any) -> tuple[PoolVersion, bool]:
    """Ask for the next pool version (``pools.services.pool_request``, same arguments and
    errors) and record its build task with it (sent after commit; with the broker down it stays
    pending and the sweep sends it). A request while a build is pending returns that build; if
    it has no live task (its worker died, or its tasks gave up) a new task takes it over
    (building is idempotent)."""
    with transaction.atomic():
        version, created = pool_request(**request)
        if created or not outbox.is_live(pool_build_key(version.pk)):
            send_build(version.pk)
    return version, created


def pool_built(*, pool_id: int) -> PoolVersion | None:
    """The worker's side: build the version and queue its never-judged documents for judging.

    Pools sit below the judging queue, so the build is handed what it needs from it: which
    documents were ever judged, and the step that opens slots for the new version's documents,
    which runs in the build's final transaction (a built version always has its slots).
    """
    return pool_build(pool_id=pool_id, judged=judged_documents, on_built=slots_enqueue)
