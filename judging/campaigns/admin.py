from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin

from judging.campaigns.models import Campaign, Document, Run, Topic
from judging.core.admin import KeepsProtectedAdmin


class CampaignAdminForm(forms.ModelForm):  # type: ignore[type-arg]
    """The extra highlight terms as one word or phrase a line (stored as a list; the limits are
    checked by ``Campaign.clean()``). No Meta: the admin builds it with every field."""

    highlight_terms = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="Extra words or phrases highlighted in every document, one a line (at most "
        "200, each at most 100 characters).",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        terms = self.initial.get("highlight_terms")
        if isinstance(terms, list):
            self.initial["highlight_terms"] = "\n".join(str(t) for t in terms)

    def clean_highlight_terms(self) -> list[str]:
        text = self.cleaned_data.get("highlight_terms") or ""
        return [line.strip() for line in text.splitlines() if line.strip()]


@admin.register(Campaign)
class CampaignAdmin(KeepsProtectedAdmin):
    form = CampaignAdminForm
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
