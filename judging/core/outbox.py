"""The transactional outbox: a task that must follow a state change is a row written with it.

``enqueue`` writes the row in the caller's transaction and tries to send the task after commit;
if the broker cannot be reached the failure is logged, not raised, and the row stays pending, so
the request that made the change still succeeds. ``sweep`` (every worker runs it on a timer, see
``judging.celery``; or ``manage.py sweep``) sends again:

- rows never sent (the broker was down at commit, or the web process died before sending);
- rows sent but not started after ``POOLJUDGE_RESEND_SECONDS`` (the broker lost the message,
  e.g. Redis restarted without persistence), waiting twice as long after each send;
- rows started whose worker stopped beating for ``POOLJUDGE_STALE_SECONDS`` (it was killed).

A worker marks its row started, beating and done through Celery's task signals (``connect``),
matching the Celery task id, which is the row's uuid. Every task sent this way is idempotent, so
a second delivery of finished work does nothing. With tasks inline (no broker), the task runs in
the committing process as before and its row is done when it returns.
"""

from __future__ import annotations

import importlib
import logging
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from judging.core.models import Job, JobState, OutboxTask, task_status

log = logging.getLogger(__name__)

MAX_RESEND_WAIT = timedelta(hours=1)
SWEEP_BATCH = 500


def enqueue(task: str, *args: Any, key: str, job: Job | None = None) -> OutboxTask:
    """Record ``task(*args)`` in the current transaction; send it after commit (never raises
    for an unreachable broker). ``key`` names what the task is about, for status reads; ``job``
    the job it runs (``core.jobs``), which is queued when the row is sent."""
    row = OutboxTask.objects.create(task=task, args=list(args), key=key, job=job)
    row_id = row.pk
    transaction.on_commit(lambda: send(row_id))
    return row


def _task(name: str) -> Any:
    from celery import current_app

    importlib.import_module(name.rsplit(".", 1)[0])  # registers the task (web processes)
    return current_app.tasks[name]


def _resend_wait(sends: int) -> timedelta:
    seconds = settings.POOLJUDGE_TASKS.resend_seconds * 2 ** min(max(sends - 1, 0), 20)
    return min(timedelta(seconds=seconds), MAX_RESEND_WAIT)


# When the last send of this process failed, sends are skipped until this (monotonic) time: a
# publish that records two tasks waits for an unreachable broker once, not twice.
_broker_down_until = [0.0]


def send(row_id: int) -> bool:
    """Hand one row's task to the broker; False (logged) when the broker cannot be reached.

    With tasks inline the task runs here and its own errors propagate, as any inline call would.
    """
    row = OutboxTask.objects.filter(pk=row_id, done_at__isnull=True).first()
    if row is None:
        return True
    task = _task(row.task)
    from celery import current_app

    if current_app.conf.task_always_eager:
        OutboxTask.objects.filter(pk=row_id).update(sent_at=timezone.now(), sends=row.sends + 1)
        _job_queued(row)
        task.apply_async(args=row.args, task_id=str(row.uuid))
        return True
    if time.monotonic() < _broker_down_until[0]:
        return False  # it just failed: do not make this request wait for it again
    try:
        task.apply_async(args=row.args, task_id=str(row.uuid))
    except Exception as exc:  # any failure to publish: the row stays pending for the sweep
        log.warning("could not send %s (%s), the sweep will: %s", row.task, row.key, exc)
        _broker_down_until[0] = time.monotonic() + settings.POOLJUDGE_TASKS.send_timeout_seconds
        OutboxTask.objects.filter(pk=row_id, sent_at=row.sent_at).update(
            send_error=f"{type(exc).__name__}: {exc}"[:2000]
        )
        return False
    _broker_down_until[0] = 0.0
    _job_queued(row)
    now = timezone.now()
    OutboxTask.objects.filter(pk=row_id).update(
        sent_at=now,
        sends=row.sends + 1,
        next_attempt_at=now + _resend_wait(row.sends + 1),
        send_error="",
    )
    return True


def _job_queued(row: OutboxTask) -> None:
    """The row's job (if any) is in the broker's hands: queued, unless a worker has it."""
    if row.job_id is not None:
        Job.objects.filter(pk=row.job_id, state=JobState.PENDING).update(
            state=JobState.QUEUED, since=timezone.now()
        )


@dataclass
class SweepResult:
    sent: int = 0
    failed: int = 0
    deleted: int = 0


def due(now: Any = None) -> Iterable[OutboxTask]:
    """Rows to send again now: never sent, sent and not started in time, or started on a worker
    that stopped beating."""
    now = now or timezone.now()
    stale = now - timedelta(seconds=settings.POOLJUDGE_TASKS.stale_seconds)
    return (
        OutboxTask.objects.filter(done_at__isnull=True)
        .filter(
            Q(started_at__isnull=True, next_attempt_at__lte=now)
            | Q(started_at__isnull=False, heartbeat_at__lt=stale)
        )
        .order_by("next_attempt_at")[:SWEEP_BATCH]
    )


def sweep() -> SweepResult:
    """Send again what has no live task; stop at the first broker failure (the next sweep tries
    again). Several sweepers at once are fine: each row is claimed by a conditional update."""
    result = SweepResult()
    now = timezone.now()
    for row in list(due(now)):
        claimed = OutboxTask.objects.filter(
            pk=row.pk, next_attempt_at=row.next_attempt_at, heartbeat_at=row.heartbeat_at
        ).update(
            next_attempt_at=now,  # a change the other sweepers' conditions no longer match
            # a lost worker's row goes back to "queued" until the new delivery starts
            started_at=None,
            heartbeat_at=None,
        )
        if not claimed:
            continue  # another sweeper has it
        if row.started_at is not None:
            log.warning("task %s (%s) lost its worker; sending it again", row.task, row.key)
            if row.job_id is not None:  # its job too goes back to queued
                Job.objects.filter(pk=row.job_id, state=JobState.RUNNING).update(
                    state=JobState.QUEUED, since=now, heartbeat_at=None
                )
        if send(row.pk):
            result.sent += 1
        else:
            result.failed += 1
            break
    keep = timedelta(days=settings.POOLJUDGE_TASKS.outbox_keep_days)
    result.deleted, _ = OutboxTask.objects.filter(done_at__lt=now - keep).delete()
    return result


def status(*keys: str) -> tuple[str, OutboxTask] | None:
    """The state of the latest task recorded for any of ``keys`` (see ``OutboxTask.status``)."""
    row = OutboxTask.objects.filter(key__in=keys).order_by("-pk").first()
    return (task_status(row), row) if row is not None else None


DETAILS = {
    "pending": "pending (not yet sent to a worker)",
    "queued": "queued",
    "running": "running",
    "done": "done",
    "failed": "failed",
}


def describe(state: str, since: datetime | None = None) -> str:
    """The words the API and the admin show for a task state."""
    if state == "stale":
        when = f" since {since:%Y-%m-%d %H:%M:%S} UTC" if since else ""
        return f"stale (worker lost{when})"
    return DETAILS.get(state, state)


def task_view(*keys: str) -> dict[str, Any] | None:
    """``{"status", "detail", "since"}`` of the latest task for any of ``keys`` (None: none)."""
    found = status(*keys)
    if found is None:
        return None
    state, row = found
    since = (row.heartbeat_at or row.started_at) if state == "stale" else None
    detail = describe(state, since)
    if state == "failed" and row.error:
        detail = f"failed: {row.error}"
    elif state == "pending" and row.send_error:
        detail = f"{detail}: {row.send_error}"
    return {"status": state, "detail": detail, "since": since}


def is_live(key: str) -> bool:
    """A task for ``key`` is waiting or running on a live worker."""
    found = status(key)
    return found is not None and found[0] in ("pending", "queued", "running")


# --- the worker's side: started, beating, done -------------------------------------------


@contextmanager
def beating(beat: Any, *, every: float | None = None) -> Iterator[None]:
    """Call ``beat()`` every ``every`` seconds (POOLJUDGE_HEARTBEAT_SECONDS) in a thread while
    the block runs: a sign of life that stops when the process dies. A no-op on SQLite, whose
    single writer the thread would block (the embedded default has no workers to lose)."""
    if connection.vendor == "sqlite":
        yield
        return
    interval = every or settings.POOLJUDGE_TASKS.heartbeat_seconds
    stop = threading.Event()

    def run() -> None:
        from django.db import connection as own

        try:
            while not stop.wait(interval):
                try:
                    beat()
                except Exception:  # a missed beat is logged; the next one may succeed
                    log.exception("heartbeat failed")
        finally:
            own.close()

    thread = threading.Thread(target=run, name="pooljudge-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=interval + 5)


_beats: dict[str, Any] = {}


def _started(task_id: str | None, task: Any = None, **_: Any) -> None:
    if not task_id or getattr(getattr(task, "request", None), "is_eager", False):
        return
    now = timezone.now()
    if not OutboxTask.objects.filter(uuid=task_id, done_at__isnull=True).update(
        started_at=now, heartbeat_at=now
    ):
        return

    def beat() -> None:
        OutboxTask.objects.filter(uuid=task_id, done_at__isnull=True).update(
            heartbeat_at=timezone.now()
        )

    cm = beating(beat)
    cm.__enter__()
    _beats[task_id] = cm


def _finished(task_id: str | None, state: str | None = None, retval: Any = None, **_: Any) -> None:
    if not task_id:
        return
    cm = _beats.pop(task_id, None)
    if cm is not None:
        cm.__exit__(None, None, None)
    now = timezone.now()
    rows = OutboxTask.objects.filter(uuid=task_id, done_at__isnull=True)
    if state == "RETRY":  # back in the queue (with a countdown): queued again
        rows.update(started_at=None, heartbeat_at=None, sent_at=now)
    elif state == "FAILURE":
        error = f"{type(retval).__name__}: {retval}"[:2000] or "failed"
        job_ids = [j for j in rows.values_list("job_id", flat=True) if j is not None]
        rows.update(done_at=now, error=error)
        # the task itself failed (its retries exhausted): so did its job, if not finished
        Job.objects.filter(pk__in=job_ids).exclude(
            state__in=(JobState.DONE, JobState.FAILED)
        ).update(state=JobState.FAILED, since=now, error=error, computed_at=now)
    elif state == "SUCCESS":
        rows.update(done_at=now)


def connect() -> None:
    """Track outbox rows through Celery's task signals (called once, by the Celery app)."""
    from celery import signals

    signals.task_prerun.connect(_started, weak=False, dispatch_uid="outbox-started")
    signals.task_postrun.connect(_finished, weak=False, dispatch_uid="outbox-finished")
