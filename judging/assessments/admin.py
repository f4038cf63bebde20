from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.http import HttpRequest

from judging.assessments.models import Judgment, JudgmentChange, QrelsVersion

IMMUTABLE = (
    "Stored qrels versions, their rows and the judgment history never change and are never "
    "deleted (the database refuses it too): publish or import a new version instead."
)


class ReadOnlyAdmin(admin.ModelAdmin[Any]):
    """Shown, never added, changed or deleted here, with the reason on the page."""

    reason = IMMUTABLE

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def changeform_view(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        messages.info(request, self.reason)
        return super().changeform_view(request, *args, **kwargs)

    def changelist_view(self, request: HttpRequest, extra_context: Any = None) -> Any:
        messages.info(request, self.reason)
        return super().changelist_view(request, extra_context)


@admin.register(QrelsVersion)
class QrelsVersionAdmin(ReadOnlyAdmin):
    list_display = (
        "campaign",
        "number",
        "source",
        "num_judgments",
        "num_relevant",
        "content_hash",
        "created_at",
    )
    list_filter = ("campaign", "source")
    readonly_fields = (
        "campaign",
        "number",
        "source",
        "content_hash",
        "note",
        "num_judgments",
        "num_relevant",
        "created_by",
        "created_at",
    )


@admin.register(Judgment)
class JudgmentAdmin(ReadOnlyAdmin):
    reason = (
        "Judgments change only by their annotators (a new grade or an undo, each kept in the "
        "history), never here; published qrels versions keep the grades they were made from."
    )
    list_display = ("topic", "docid", "annotator", "grade", "updated_at")
    list_filter = ("campaign",)
    search_fields = ("docid", "annotator__username")
    show_full_result_count = False


@admin.register(JudgmentChange)
class JudgmentChangeAdmin(ReadOnlyAdmin):
    list_display = ("topic", "docid", "annotator", "old_grade", "new_grade", "changed_at")
    list_filter = ("topic__campaign",)
    search_fields = ("docid", "annotator__username")
    show_full_result_count = False
