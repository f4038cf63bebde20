"""One lifecycle for every stored computation: the job.

A stored computation (an evaluation, a bias report and its parts, a reusability report...) is
one entry of ``REGISTRY`` (a ``Computation``), registered by its app (a ``jobs.py`` module its
``AppConfig.ready`` imports: core never imports upward). The entry says what the computation
reads (the inputs and their versions that make its key), how it computes (a pure function in
``metrics`` or a service), how its result is stored, and what makes a stored result out of date.

A ``Job`` row (``core.models``) is one computation asked for, in one state vocabulary::

    pending -> queued -> running -> done | failed        (stale: running, its worker lost)

``enqueue`` records the job's task in the caller's transaction through the outbox
(``core.outbox``): ONE Celery task, ``judging.core.tasks.run_job``, runs any job by its id. The
outbox sends it after commit; the sweep sends again what was never sent, what the broker lost
and what started on a worker that stopped beating. A job is safe to run twice: a finished job is
left alone.

Fan-out and fan-in: a computation may answer ``Parts`` instead of a result. Each part is a job
of its own (``Job.parent``), sent in the same transaction; the part that is stored last (or a
part sent again, finding everything stored) records the parent's task again, which assembles
the parent from its stored parts (the entry's ``assemble``), or fails it with the error of the
first part that failed. No Celery chord: a chord needs a result backend and its counter dies
with a worker or the broker's memory; here every step is an outbox row, so the sweep re-sends a
lost part or a lost assembly, and every step is safe to run twice. Asking again for a failed
job computes only its failed parts.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any, TypeVar

from django.apps import apps
from django.db import InterfaceError, OperationalError, transaction
from django.db.models import Case, F, Value, When
from django.db.models.expressions import Expression
from django.utils import timezone

from judging.core import outbox
from judging.core.models import FINISHED_STATES, Job, JobState, OutboxTask

# The one task that runs every job (``judging.core.tasks.run_job``).
RUN_TASK = "judging.core.tasks.run_job"


@dataclass(frozen=True)
class Parts:
    """What a computation answers to be split: one part job of ``kind`` per name (in this
    order: a failed parent names the first failed part), each recorded by ``record(part job,
    name)`` (e.g. its result row) in the transaction that sends them."""

    kind: str
    names: Sequence[str]
    record: Callable[[Job, str], None] = lambda job, name: None


@dataclass(frozen=True)
class Computation:
    """A registry entry: one kind of stored computation.

    - ``reads``: the inputs and their versions, which make its key (documentation: the key
      itself is built by the service that asks for the job);
    - ``compute(job)``: the result (or ``Parts`` to fan out), from a pure function in
      ``metrics`` or a service; raising fails the job with the error;
    - ``store(job, result)``: where the result is kept for its readers;
    - ``stale``: what makes a stored result out of date (documentation);
    - ``assemble(job, parts)``: for a split computation, the result from its stored parts (by
      name); ``store`` keeps it;
    - ``row``: the model whose row holds the result and links the job (``"app.Model"``; empty
      for a job that is its own record): when the row is deleted (a run or a report deleted,
      cascading), the sweep forgets its finished job (``forget_orphans``).
    """

    kind: str
    reads: str
    compute: Callable[[Job], Any]
    store: Callable[[Job, Any], None]
    stale: str
    assemble: Callable[[Job, dict[str, Job]], Any] | None = None
    row: str = ""


REGISTRY: dict[str, Computation] = {}


def register(entry: Computation) -> Computation:
    """Add (or replace, for a module loaded twice) an entry of the registry."""
    REGISTRY[entry.kind] = entry
    return entry


class StageFailed(Exception):
    """One part of a computation failed; the message names the part and the cause."""


def failure_text(exc: BaseException) -> str:
    """What a failed job stores as its error."""
    text = str(exc) if isinstance(exc, StageFailed) else f"{type(exc).__name__}: {exc}"
    return text[:2000]


# --- asking ---------------------------------------------------------------------------------


def new(kind: str, key: str, *, args: dict[str, Any] | None = None) -> Job:
    """A pending job (not sent: ``enqueue`` it, or compute it with ``computing``)."""
    if kind not in REGISTRY:
        raise LookupError(f"no stored computation {kind!r} is registered")
    return Job.objects.create(kind=kind, key=key, args=args or {})


def enqueue(job: Job, *, key: str | None = None) -> OutboxTask:
    """Record the job's task in the current transaction (sent after commit, or by the sweep);
    the job is pending again (its error forgotten) until a worker takes it."""
    Job.objects.filter(pk=job.pk).exclude(state=JobState.DONE).update(
        state=JobState.PENDING, since=timezone.now(), error="", heartbeat_at=None
    )
    return outbox.enqueue(RUN_TASK, job.pk, key=key or job.key, job=job)


def ask(kind: str, key: str, *, args: dict[str, Any] | None = None) -> Job:
    """A new job of ``kind``, sent after commit."""
    job = new(kind, key, args=args)
    enqueue(job)
    return job


def again(job: Job) -> bool:
    """Send a failed job again (a split one computes only its failed parts); True if sent."""
    if job.state != JobState.FAILED:
        return False
    job.parts.filter(state=JobState.FAILED).update(
        state=JobState.PENDING, since=timezone.now(), error=""
    )
    enqueue(job)
    return True


M = TypeVar("M")


def row_requested(
    model: type[M],
    asked: dict[str, Any],
    kind: str,
    key: Callable[[int], str],
    *,
    again_done: bool = False,
    **extra: Any,
) -> M:
    """The stored row of ``model`` that ``asked`` (its unique fields) names, with its job: made
    and computed (after commit) when there is none, computed again when its last attempt failed,
    or when ``again_done`` even if done (its result kept until then). ``key(row.pk)`` is the
    job's key; ``extra`` fields are set on a new row only. Two requests at once make one row."""
    from django.db import IntegrityError

    row = model.objects.filter(**asked).select_related("job").first()  # type: ignore[attr-defined]
    created = False
    if row is None:
        try:
            with transaction.atomic():
                job = new(kind, "")
                row = model.objects.create(**asked, **extra, job=job)  # type: ignore[attr-defined]
                job.key = key(row.pk)
                job.save(update_fields=["key"])
                created = True
        except IntegrityError:
            row = model.objects.select_related("job").get(**asked)  # type: ignore[attr-defined]
    with transaction.atomic():
        if created or again_done:
            Job.objects.filter(pk=row.job_id, state=JobState.DONE).update(state=JobState.PENDING)
            enqueue(row.job)
        else:
            again(row.job)
    found: M = model.objects.select_related("job").get(pk=row.pk)  # type: ignore[attr-defined]
    return found


# --- running ----------------------------------------------------------------------------------


def _mark(job_id: int, state: str, **fields: Any) -> None:
    Job.objects.filter(pk=job_id).update(state=state, since=timezone.now(), **fields)


class _Computing:
    waiting = False  # set when the job fanned out: it waits for its parts, not finished


# Errors of the database connection (it restarted, a lock timed out): not the computation's
# fault, so the job goes back to queued and the error is raised for ``run_job`` to retry (with
# backoff; when its retries are spent, the outbox fails the job with the error).
RETRIED = (OperationalError, InterfaceError)


@contextmanager
def computing(job: Job) -> Iterator[_Computing]:
    """Run the block as ``job``'s computation: running (beating while it runs), then done, or
    failed with the error the block raised (stored, not raised), with when and how long. A
    database connection error (``RETRIED``) puts the job back in the queue and is raised."""
    now = timezone.now()
    Job.objects.filter(pk=job.pk).update(
        state=JobState.RUNNING, since=now, heartbeat_at=now, attempts=F("attempts") + 1
    )
    start = time.perf_counter()
    state, error = JobState.DONE, ""
    mark = _Computing()

    def beat() -> None:
        Job.objects.filter(pk=job.pk, state=JobState.RUNNING).update(heartbeat_at=timezone.now())

    try:
        with outbox.beating(beat):
            yield mark
    except RETRIED:
        _requeue(job)
        raise
    except Exception as exc:  # stored for the page and the API to show
        state, error = JobState.FAILED, failure_text(exc)
    if mark.waiting and state == JobState.DONE:
        job.refresh_from_db()
        return
    seconds = time.perf_counter() - start
    finished = timezone.now()
    Job.objects.filter(pk=job.pk).update(
        state=state, since=finished, error=error, computed_at=finished, seconds=seconds
    )
    job.state, job.error, job.computed_at, job.seconds = state, error, finished, seconds


def _requeue(job: Job) -> None:
    """Put a job that met a database connection error back in the queue, if the database lets
    us (it may be the one that is down: then the sweep finds it stale)."""
    with suppress(*RETRIED):
        _mark(job.pk, JobState.QUEUED, heartbeat_at=None)


def _compute(job: Job, entry: Computation, *, here: bool = False) -> None:
    """The entry's computation of a job with no parts: stored, or split into parts (sent, or
    recorded only when ``here``)."""
    with computing(job) as mark:
        result = entry.compute(job)
        if isinstance(result, Parts):
            if here:
                _record_parts(job, result)
            else:
                _fan_out(job, result)
            mark.waiting = True
        else:
            entry.store(job, result)


def run(job_id: int) -> Job | None:
    """The body of ``run_job``: compute the job (or, split, send its unfinished parts, or
    assemble it once every part is stored). Safe to run twice: a finished job is left alone,
    and a finished part records its parent's assembly again if the parent waits for it."""
    job = Job.objects.filter(pk=job_id).first()
    if job is None:
        return None
    if job.state not in FINISHED_STATES:
        entry = REGISTRY[job.kind]
        if job.parts.exists():
            if _gather(job):
                _assemble(job, entry)
        else:
            _compute(job, entry)
    if job.parent_id is not None:
        part_stored(job)
    job.refresh_from_db()
    return job


def compute_here(job: Job) -> Job:
    """Compute a job in this process, its parts one after another (a command's way, and the
    tests'): the same steps the workers take, with no broker."""
    job.refresh_from_db()
    if job.state == JobState.DONE:
        return job
    entry = REGISTRY[job.kind]
    if not job.parts.exists():
        _compute(job, entry, here=True)
        job.refresh_from_db()
        if not job.parts.exists():
            return job
    for part in job.parts.exclude(state=JobState.DONE).order_by("pk"):
        Job.objects.filter(pk=part.pk).update(state=JobState.PENDING, error="")
        compute_here(part)
    _assemble(job, entry)
    job.refresh_from_db()
    return job


def _record_parts(job: Job, parts: Parts) -> list[Job]:
    made = []
    for name in parts.names:
        part = Job.objects.create(
            kind=parts.kind, key=part_key(job, name), parent=job, part=name, args={}
        )
        parts.record(part, name)
        made.append(part)
    # waiting for its parts: queued, no worker of its own (never stale), not finished
    _mark(job.pk, JobState.QUEUED, computed_at=None, seconds=None, heartbeat_at=None, progress=0.0)
    return made


def _fan_out(job: Job, parts: Parts) -> None:
    with transaction.atomic():
        locked = Job.objects.select_for_update().filter(pk=job.pk).first()
        if locked is None or locked.parts.exists():
            return  # another delivery recorded them
        for part in _record_parts(locked, parts):
            outbox.enqueue(RUN_TASK, part.pk, key=part.key, job=part)
        _assemble_when_stored(locked)


def part_key(job: Job, name: str) -> str:
    return f"{job.key}:part:{name}"


def assemble_key(job: Job) -> str:
    return f"{job.key}:assemble"


def _gather(job: Job) -> bool:
    """A split job delivered: send every part neither stored nor on its way (``again`` made a
    failed one pending); True when none is left, to assemble."""
    with transaction.atomic():
        locked = Job.objects.select_for_update().filter(pk=job.pk).first()
        if locked is None or locked.state in FINISHED_STATES:
            return False
        waiting = False
        for part in locked.parts.exclude(state__in=FINISHED_STATES).order_by("pk"):
            if not outbox.is_live(part.key):
                enqueue(part)
            waiting = True
        if waiting:
            _mark(locked.pk, JobState.QUEUED, heartbeat_at=None)
        return not waiting


def _assemble_when_stored(parent: Job) -> None:
    """Record the parent's assembly if none of its parts is left to compute (in the caller's
    transaction, which holds the parent's row)."""
    if not parent.parts.exclude(state__in=FINISHED_STATES).exists():
        outbox.enqueue(RUN_TASK, parent.pk, key=assemble_key(parent), job=parent)


def part_stored(part: Job) -> None:
    """A part is stored: the last one records its parent's assembly."""
    if part.parent_id is None:
        return
    with transaction.atomic():
        parent = Job.objects.select_for_update().filter(pk=part.parent_id).first()
        if parent is not None and parent.state not in FINISHED_STATES:
            total = parent.parts.count()
            stored = parent.parts.filter(state__in=FINISHED_STATES).count()
            Job.objects.filter(pk=parent.pk).update(progress=stored / total if total else None)
            _assemble_when_stored(parent)


def _assemble(job: Job, entry: Computation) -> None:
    """Store the job from its parts: done, or failed with the error of the first part that
    failed. Its ``seconds`` are the assembly's and its parts' computing time together."""
    parts = {p.part: p for p in job.parts.order_by("pk")}
    if any(p.state not in FINISHED_STATES for p in parts.values()):
        return  # the last part to be stored records the assembly again
    with computing(job):
        for part in parts.values():
            if part.state == JobState.FAILED:
                raise StageFailed(part.error)
        assert entry.assemble is not None, f"{job.kind} has parts but no assembly"
        entry.store(job, entry.assemble(job, parts))
    total = (job.seconds or 0.0) + sum(p.seconds or 0.0 for p in parts.values())
    Job.objects.filter(pk=job.pk).update(seconds=total)
    job.seconds = total


# --- reading ----------------------------------------------------------------------------------


DETAILS = {
    "pending": "pending (not yet sent to a worker)",
    "queued": "queued",
    "running": "running",
    "done": "done",
    "failed": "failed",
}


def outcome_of(prefix: str = "job") -> Expression:
    """A database expression of ``Job.outcome`` through the relation ``prefix``: done, failed or
    pending (for ``values()`` and ``filter()`` of result tables)."""
    state = F(f"{prefix}__state")
    return Case(
        When(**{f"{prefix}__state__in": list(FINISHED_STATES)}, then=state),
        default=Value(JobState.PENDING.value),
    )


def view(job: Job) -> dict[str, Any]:
    """``{"status", "detail", "since"}``: where the job stands, in the words the API and the
    pages show (``since``: when the worker of a stale job was last seen)."""
    state = job.status
    since = job.heartbeat_at if state == JobState.STALE else None
    detail = outbox.describe(state, since)
    if state == JobState.FAILED and job.error:
        detail = f"failed: {job.error}"
    elif state == JobState.PENDING:
        row = OutboxTask.objects.filter(job=job).order_by("-pk").first()
        if row is not None and row.send_error:
            detail = f"{detail}: {row.send_error}"
    return {"status": str(state), "detail": detail, "since": since}


def latest(*keys: str) -> Job | None:
    """The latest job asked for any of ``keys``."""
    return Job.objects.filter(key__in=keys).order_by("-pk").first()


def answer(body: dict[str, Any] | None) -> int:
    """The HTTP status of a stored computation's answer (``api``'s and ``web``'s one helper
    reads it): 404 when never asked, 202 while pending, 200 when done or failed."""
    if body is None:
        return 404
    return 202 if body.get("state") == JobState.PENDING else 200


def forget_orphans() -> int:
    """Delete the finished jobs whose result row is gone (deleted since, by a cascade that does
    not see jobs: a run, a campaign or a report deleted), with their parts; how many. A job and
    its row are made in one transaction, so a finished job without one is an orphan; a job not
    finished is left to finish (its computation finds no row and stores nothing)."""
    forgotten = 0
    for entry in REGISTRY.values():
        if not entry.row:
            continue
        model = apps.get_model(entry.row)
        orphans = Job.objects.filter(kind=entry.kind, state__in=FINISHED_STATES).exclude(
            pk__in=model.objects.values("job_id")
        )
        forgotten += orphans.delete()[1].get(Job._meta.label, 0)
    return forgotten
