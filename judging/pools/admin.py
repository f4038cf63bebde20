from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from judging.core.errors import DomainError
from judging.pools.models import PoolDocument, PoolState, PoolVersion
from judging.pools.selectors import pool_status
from judging.pools.services import pool_cancel


@admin.register(PoolVersion)
class PoolVersionAdmin(admin.ModelAdmin[PoolVersion]):
    list_display = (
        "__str__",
        "campaign",
        "number",
        "state",
        "build",
        "progress",
        "strategy",
        "segments",
        "depth",
        "budget",
        "num_documents",
        "num_added",
        "num_to_judge",
        "num_missing_text",
        "created_at",
    )
    list_filter = ("campaign", "state", "strategy", "segments")
    readonly_fields = [f.name for f in PoolVersion._meta.fields] + ["build", "progress", "runs"]
    actions = ["cancel_builds"]

    @admin.display(description="build")
    def build(self, obj: PoolVersion) -> str:
        """pending (not yet sent), queued, building, stale (worker lost since ...), ..."""
        return str(pool_status(obj)["detail"])

    @admin.display(description="progress")
    def progress(self, obj: PoolVersion) -> str:
        if obj.state == PoolState.BUILT:
            return "done"
        return (
            f"{obj.percent:.0f}% ({obj.processed_topics}/{obj.total_topics} topics, "
            f"{obj.processed_documents} documents)"
        )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # request builds with the campaign action, the API or build_pool

    @admin.action(description="Cancel the selected pending builds")
    def cancel_builds(self, request: HttpRequest, queryset: QuerySet[PoolVersion]) -> None:
        for version in queryset:
            try:
                pool_cancel(version=version)
            except DomainError as exc:
                self.message_user(request, exc.message, messages.WARNING)


@admin.register(PoolDocument)
class PoolDocumentAdmin(admin.ModelAdmin[PoolDocument]):
    list_display = ("docid", "topic", "version", "position", "added", "to_judge", "has_text")
    list_filter = ("version__campaign", "has_text", "to_judge", "added")
    search_fields = ("docid",)
    show_full_result_count = False

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False  # a built pool is immutable
