"""The Celery app. Without ``CELERY_BROKER_URL`` tasks run inline (eager) in the web process.

Every worker also sweeps the outbox on a timer (``POOLJUDGE_SWEEP_SECONDS``), in a thread of its
main process: tasks whose send failed (Redis was down), whose message was lost, or whose worker
died are sent again, and dead pool builds are taken over, with no admin and no extra process.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any

from celery import Celery, signals

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "judging.settings")

log = logging.getLogger(__name__)

app = Celery("pooljudge")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


_stop = threading.Event()


def sweep_forever(every: float, stop: threading.Event) -> None:
    """Run the sweep every ``every`` seconds until ``stop`` is set; errors are logged, and the
    database connection is closed after each round (the worker forks children from this
    process)."""
    from django.db import connection

    from judging.workflows.sweep import sweep

    while not stop.wait(every):
        try:
            result = sweep()
            if result.sent or result.failed or result.taken_over:
                log.info("outbox sweep: %s", result)
        except Exception:
            log.exception("outbox sweep failed")
        finally:
            connection.close()


@signals.worker_ready.connect
def _start_sweeping(**_: Any) -> None:
    from django.conf import settings

    if not settings.POOLJUDGE_TASKS.sweep_in_worker:
        return
    _stop.clear()
    threading.Thread(
        target=sweep_forever,
        args=(settings.POOLJUDGE_TASKS.sweep_seconds, _stop),
        name="pooljudge-sweep",
        daemon=True,
    ).start()


@signals.worker_shutdown.connect
def _stop_sweeping(**_: Any) -> None:
    _stop.set()
