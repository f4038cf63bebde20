from __future__ import annotations

import threading
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from judging.workflows.sweep import sweep


class Command(BaseCommand):
    help = (
        "Send again the tasks that have no live worker: never sent (the broker was down), lost, "
        "or on a worker that died (its pool build is taken over). Workers already do this every "
        "POOLJUDGE_SWEEP_SECONDS; run this with --forever as its own process when they do not "
        "(POOLJUDGE_SWEEP_IN_WORKER=0)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--forever", action="store_true", help="sweep every POOLJUDGE_SWEEP_SECONDS"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if not options["forever"]:
            self.stdout.write(str(sweep()))
            return
        from judging.celery import sweep_forever

        sweep_forever(settings.POOLJUDGE_TASKS.sweep_seconds, threading.Event())
