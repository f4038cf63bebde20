from __future__ import annotations

from django.contrib import admin

from judging.campaigns.models import Campaign, Document, Run, Topic
from judging.core.admin import KeepsProtectedAdmin


@admin.register(Campaign)
class CampaignAdmin(KeepsProtectedAdmin):
    list_display = (
        "name",
        "relevance_threshold",
        "unknown_topic_policy",
        "run_pooling",
        "created_at",
    )
    search_fields = ("name", "description", "guidelines")
    readonly_fields = ("created_by", "created_at")

    def save_model(self, request, obj, form, change):  # type: ignore[no-untyped-def]
        if not change and obj.created_by_id is None:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)


@admin.register(Topic)
class TopicAdmin(KeepsProtectedAdmin):
    list_display = ("qid", "title", "campaign")
    list_filter = ("campaign",)
    search_fields = ("qid", "title", "description")


@admin.register(Document)
class DocumentAdmin(KeepsProtectedAdmin):
    list_display = ("docid", "title", "campaign")
    list_filter = ("campaign",)
    search_fields = ("docid", "title")
    show_full_result_count = False


@admin.register(Run)
class RunAdmin(admin.ModelAdmin[Run]):
    list_display = (
        "tag",
        "campaign",
        "owner",
        "group",
        "pooled",
        "priority",
        "num_entries",
        "submitted_at",
    )
    list_filter = ("campaign", "pooled", "group")
    list_editable = ("pooled", "priority")
    search_fields = ("tag", "group", "description", "owner__username")
    readonly_fields = (
        "campaign",
        "tag",
        "owner",
        "submitted_at",
        "checksum",
        "num_entries",
        "topic_counts",
        "dropped_lines",
    )

    def has_add_permission(self, request):  # type: ignore[no-untyped-def]
        return False  # runs arrive through the API or `manage.py import_run`
