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
