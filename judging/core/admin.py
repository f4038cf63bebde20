from __future__ import annotations

from collections import Counter
from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from judging.core import outbox
from judging.core.models import OutboxTask, WorkerHeartbeat


@admin.register(WorkerHeartbeat)
class WorkerHeartbeatAdmin(admin.ModelAdmin[WorkerHeartbeat]):
    list_display = ("hostname", "token", "seen_at")
    readonly_fields = ("hostname", "token", "seen_at")


class KeepsProtectedAdmin(admin.ModelAdmin[Any]):
    """Deleting an object that stored qrels or judgments rest on (a PROTECT foreign key) is
    refused by the admin's delete page; it says what is kept and why, in counts (a topic has
    thousands of rows), not as a list of every row."""

    def get_deleted_objects(self, objs: Any, request: HttpRequest) -> Any:
        deleted, model_count, perms_needed, protected = super().get_deleted_objects(objs, request)
        if protected:
            # The refusal is the protection, whatever else the user may or may not delete.
            perms_needed = set()
            counts = Counter(str(p._meta.verbose_name_plural) for p in _protected_objects(objs))
            protected = [
                f"{n} {name}: stored qrels versions, their rows and the judgments they rest on "
                "are never deleted"
                for name, n in sorted(counts.items())
            ]
        return deleted, model_count, perms_needed, protected


def _protected_objects(objs: Any) -> list[Any]:
    from django.db import router
    from django.db.models.deletion import Collector, ProtectedError

    objs = list(objs)
    if not objs:
        return []
    collector = Collector(using=router.db_for_write(objs[0].__class__))
    try:
        collector.collect(objs)
    except ProtectedError as exc:
        return list(exc.protected_objects)
    return []


@admin.register(OutboxTask)
class OutboxTaskAdmin(admin.ModelAdmin[OutboxTask]):
    """Tasks that follow state changes. Read-only: the sweep sends what is pending or lost; the
    action only saves waiting for the next sweep."""

    list_display = ("key", "task", "state", "created_at", "sent_at", "sends", "heartbeat_at")
    list_filter = ("task",)
    search_fields = ("key",)
    readonly_fields = [f.name for f in OutboxTask._meta.fields] + ["state"]
    actions = ["send_now"]

    @admin.display(description="state")
    def state(self, obj: OutboxTask) -> str:
        since = obj.heartbeat_at or obj.started_at
        text = outbox.describe(obj.status, since)
        return f"{text}: {obj.send_error}" if obj.status == "pending" and obj.send_error else text

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False  # a pending row is the only record of its task; the sweep forgets done ones

    @admin.action(description="Send the selected unfinished tasks now")
    def send_now(self, request: HttpRequest, queryset: QuerySet[OutboxTask]) -> None:
        sent = sum(outbox.send(row.pk) for row in queryset.filter(done_at__isnull=True))
        self.message_user(request, f"{sent} sent")
