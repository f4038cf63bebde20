from __future__ import annotations

from django.contrib import admin

from judging.assessments.models import QrelsVersion


@admin.register(QrelsVersion)
class QrelsVersionAdmin(admin.ModelAdmin[QrelsVersion]):
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
        "num_judgments",
        "num_relevant",
        "created_by",
        "created_at",
    )

    def has_add_permission(self, request):  # type: ignore[no-untyped-def]
        return False  # versions are imported or published, never typed in

    def has_change_permission(self, request, obj=None):  # type: ignore[no-untyped-def]
        return False if obj is not None else super().has_change_permission(request, obj)
