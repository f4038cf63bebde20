"""The periodic sweep: send again every task that has no live worker, take over dead builds.

Workers run it on a timer (``judging.celery``); ``manage.py sweep`` runs it as its own process.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction

from judging.core import jobs, outbox
from judging.pools.models import PENDING, PoolVersion
from judging.pools.services import pool_build_key
from judging.workflows.pools import send_build


@dataclass
class SweepResult(outbox.SweepResult):
    taken_over: int = 0
    forgotten: int = 0


def sweep() -> SweepResult:
    """``core.outbox.sweep`` (pending, lost and stale tasks), then a backstop for pool builds:
    a queued or building version with no live task at all (its tasks gave up, or it predates
    the outbox) gets a new one, which takes the build over if its worker is gone. Finished jobs
    whose result row was deleted are forgotten (``core.jobs.forget_orphans``)."""
    done = outbox.sweep()
    result = SweepResult(sent=done.sent, failed=done.failed, deleted=done.deleted)
    result.forgotten = jobs.forget_orphans()
    if done.failed:
        return result  # the broker is down: nothing else can be sent either
    for pool_id in PoolVersion.objects.filter(state__in=PENDING).values_list("pk", flat=True):
        if outbox.is_live(pool_build_key(pool_id)):
            continue
        with transaction.atomic():
            send_build(pool_id)
        result.taken_over += 1
    return result
