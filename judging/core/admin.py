from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from judging.core import outbox
from judging.core.models import OutboxTask, WorkerHeartbeat


@admin.register(WorkerHeartbeat)
class WorkerHeartbeatAdmin(admin.ModelAdmin[WorkerHeartbeat]):
    list_display = ("hostname", "token", "seen_at")
    readonly_fields = ("hostname", "token", "seen_at")


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
