"""The Celery app. Without ``CELERY_BROKER_URL`` tasks run inline (eager) in the web process."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "judging.settings")

app = Celery("pooljudge")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
