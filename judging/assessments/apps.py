from typing import Any

from django.apps import AppConfig
from django.db import connections
from django.db.backends.signals import connection_created
from django.db.models.signals import post_migrate


def _reinstall_triggers(using: str = "default", **_: Any) -> None:
    """After every ``migrate``: a later migration may have rebuilt a guarded table (SQLite
    rebuilds a table to alter it, dropping its triggers)."""
    from judging.assessments import immutability

    immutability.install(connections[using])


class AssessmentsConfig(AppConfig):
    name = "judging.assessments"
    label = "assessments"
    verbose_name = "Judgments and qrels versions"

    def ready(self) -> None:
        from judging.assessments import immutability

        connection_created.connect(immutability.register_sqlite_function)
        for connection in connections.all(initialized_only=True):
            immutability.register_sqlite_function(connection)
        post_migrate.connect(_reinstall_triggers, sender=self)
