from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone


class WorkerHeartbeat(models.Model):
    """Written by the ``core.heartbeat`` task: proves broker, worker and database work together."""

    token = models.CharField(max_length=64, unique=True)
    hostname = models.CharField(max_length=255)
    seen_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.hostname} at {self.seen_at:%Y-%m-%d %H:%M:%S}"


class JobState(models.TextChoices):
    """The one lifecycle of every stored computation (``core.jobs``). ``stale`` is never
    stored: a running job whose worker stopped beating for POOLJUDGE_STALE_SECONDS reads so."""

    PENDING = "pending", "pending"  # recorded, not yet handed to a worker
    QUEUED = "queued", "queued"  # handed to the broker, or waiting for its parts
    RUNNING = "running", "running"
    STALE = "stale", "stale"
    DONE = "done", "done"
    FAILED = "failed", "failed"


# The states of a job that is not finished: a result reads "pending" in them.
LIVE_STATES = (JobState.PENDING, JobState.QUEUED, JobState.RUNNING)
FINISHED_STATES = (JobState.DONE, JobState.FAILED)


class Job(models.Model):
    """One stored computation (an evaluation, a bias report or one of its parts, a reusability
    report...): its kind (an entry of ``core.jobs.REGISTRY``), the key naming its inputs and
    their versions, and where it stands. The result lives where its readers look for it (the
    kind's result table, linked to its job); the job holds the lifecycle, the same for all.

    A job may be split into parts (``parent``): the parts are jobs of their own, sent to as many
    workers as there are, and the parent is assembled from them when the last one is stored."""

    kind = models.CharField(max_length=40, help_text="Its entry in core.jobs.REGISTRY.")
    key = models.CharField(max_length=600, db_index=True, help_text="Its inputs and versions.")
    args = models.JSONField(default=dict, blank=True, help_text="Inputs not held by a result row.")
    state = models.CharField(max_length=10, choices=JobState.choices, default=JobState.PENDING)
    since = models.DateTimeField(default=timezone.now, help_text="When it entered its state.")
    progress = models.FloatField(null=True, blank=True, help_text="Share done (0-1), if known.")
    error = models.TextField(blank=True, help_text="Why it failed.")
    attempts = models.PositiveIntegerField(default=0, help_text="Times a worker started it.")
    heartbeat_at = models.DateTimeField(null=True, blank=True, help_text="Last sign of life.")
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="parts"
    )
    part = models.CharField(max_length=60, blank=True, help_text="Its name among its parent's.")
    created_at = models.DateTimeField(default=timezone.now)
    computed_at = models.DateTimeField(null=True, blank=True, help_text="When it finished.")
    seconds = models.FloatField(null=True, blank=True, help_text="Computing time.")

    class Meta:
        indexes = [models.Index(fields=["kind", "state"], name="job_kind_state")]

    def __str__(self) -> str:
        return f"{self.kind} {self.key} ({self.status})"

    @property
    def status(self) -> str:
        """Its state, ``stale`` for a running job whose worker stopped beating."""
        if self.state == JobState.RUNNING and self.heartbeat_at is not None:
            limit = timedelta(seconds=settings.POOLJUDGE_TASKS.stale_seconds)
            if timezone.now() - self.heartbeat_at > limit:
                return JobState.STALE
        return self.state

    @property
    def outcome(self) -> str:
        """What a stored result says of it: done, failed, or pending (any live state)."""
        return self.state if self.state in FINISHED_STATES else JobState.PENDING


class OutboxTask(models.Model):
    """A task that must follow a state change, recorded in the change's transaction.

    The row is the truth, the broker only a messenger: the web process tries to send the task
    after commit, and the sweep (``core.outbox.sweep``, run by every worker on a timer) sends
    again what was never sent, what was sent but never started, and what started on a worker
    that stopped beating. A delivery of a finished row is harmless: tasks are idempotent.
    """

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    task = models.CharField(max_length=200, help_text="Celery task name.")
    args = models.JSONField(default=list, blank=True)
    key = models.CharField(max_length=200, db_index=True, help_text="What the task is about.")
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True, help_text="Last handed to the broker.")
    sends = models.PositiveIntegerField(default=0, help_text="Times handed to the broker.")
    next_attempt_at = models.DateTimeField(
        default=timezone.now, help_text="When the sweep may send it (again)."
    )
    send_error = models.TextField(blank=True, help_text="Why the last send failed.")
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True, help_text="Last sign of life.")
    done_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True, help_text="The task's own failure, if it failed.")
    job = models.ForeignKey(
        Job,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The job the task runs (core.jobs), whose state follows the row's.",
    )

    class Meta:
        indexes = [models.Index(fields=["done_at", "next_attempt_at"], name="outbox_due")]

    def __str__(self) -> str:
        return f"{self.key} ({self.status})"

    @property
    def status(self) -> str:
        """pending (not yet sent), queued, running, stale (worker lost), done or failed."""
        return task_status(self)


def task_status(row: OutboxTask, now: datetime | None = None) -> str:
    if row.done_at is not None:
        return "failed" if row.error else "done"
    if row.started_at is not None:
        seen = row.heartbeat_at or row.started_at
        limit = timedelta(seconds=settings.POOLJUDGE_TASKS.stale_seconds)
        return "stale" if (now or timezone.now()) - seen > limit else "running"
    return "queued" if row.sent_at is not None else "pending"
