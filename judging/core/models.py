from __future__ import annotations

from django.db import models


class WorkerHeartbeat(models.Model):
    """Written by the ``core.heartbeat`` task: proves broker, worker and database work together."""

    token = models.CharField(max_length=64, unique=True)
    hostname = models.CharField(max_length=255)
    seen_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.hostname} at {self.seen_at:%Y-%m-%d %H:%M:%S}"
