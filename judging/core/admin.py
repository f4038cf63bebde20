from django.contrib import admin

from judging.core.models import WorkerHeartbeat


@admin.register(WorkerHeartbeat)
class WorkerHeartbeatAdmin(admin.ModelAdmin[WorkerHeartbeat]):
    list_display = ("hostname", "token", "seen_at")
    readonly_fields = ("hostname", "token", "seen_at")
