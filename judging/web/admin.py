"""Admin actions that start cross-app work: they sit above the workflows, like the pages."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from rest_framework.authtoken.models import Token

from judging.campaigns.admin import CampaignAdmin, CampaignAdminForm
from judging.campaigns.models import Campaign
from judging.core.errors import DomainError, InvalidInput
from judging.core.roles import account
from judging.evaluation.bias import topic_filter
from judging.pools.models import PoolSegments, PoolVersion
from judging.pools.selectors import pool_status
from judging.web.login import AdminLoginForm
from judging.workflows.pools import pool_requested


class CampaignPoolingForm(CampaignAdminForm):
    def clean_pooled_topics(self) -> str:
        """A topic spec of the campaign's topics, normalised as bias reports store it (``all``
        or empty: every topic); a spec that names no topic of the campaign is refused here, not
        on every bias page that would default to it."""
        spec = str(self.cleaned_data.get("pooled_topics") or "").strip()
        if not spec:
            return ""
        if self.instance.pk is None:
            raise forms.ValidationError("the pooled topics are set once the campaign has topics")
        try:
            normalised, _ = topic_filter(self.instance, spec)
        except InvalidInput as exc:
            raise forms.ValidationError([p.message for p in exc.problems] or exc.message) from None
        return normalised


class CampaignPoolingAdmin(CampaignAdmin):
    form = CampaignPoolingForm
    actions = ["build_next_pool"]

    def get_list_display(self, request: HttpRequest) -> Any:
        return (*super().get_list_display(request), "pages")

    @admin.display(description="Pages")
    def pages(self, campaign: Campaign) -> str:
        """Links from the admin to the campaign's own pages."""
        links = [
            (reverse("manage-progress", args=[campaign.pk]), "Progress"),
            (reverse("manage-agreement", args=[campaign.pk]), "Agreement"),
            (reverse("leaderboard", args=[campaign.pk]), "Leaderboard"),
            (reverse("bias", args=[campaign.pk]), "Pooling bias"),
        ]
        return format_html_join(" · ", '<a href="{}">{}</a>', links)

    @admin.action(
        description="Re-pool: build the next pool version (the campaign's strategy "
        "and depth, its pooled runs)"
    )
    def build_next_pool(self, request: HttpRequest, queryset: QuerySet[Campaign]) -> None:
        for campaign in queryset:
            try:
                version, created = pool_requested(
                    campaign=campaign, requested_by=account(request.user)
                )
            except DomainError as exc:
                self.message_user(request, f"{campaign}: {exc.message}", messages.ERROR)
                continue
            version.refresh_from_db()  # a build run inline (eager tasks) is done by now
            level, text = pool_message(version, created=created)
            self.message_user(request, text, level)


def pool_message(version: PoolVersion, *, created: bool) -> tuple[int, str]:
    """What the re-pool action says: the new version's state as it is now (built, with its
    figures; else what the build is doing) and a link to its page."""
    status = pool_status(version)
    url = reverse("admin:pools_poolversion_change", args=[version.pk])
    what = f"{version.strategy}, depth {version.depth}"
    if version.segments != PoolSegments.RANKED:
        what += f", answer runs' {version.segments} segments"
    if status["status"] == "built":
        return messages.SUCCESS, format_html(
            "{}: pool version {} built ({}): {} documents, {} new, {} to judge. "
            '<a href="{}">Open pool version {}</a>.',
            version.campaign,
            version.number,
            what,
            version.num_documents,
            version.num_added,
            version.num_to_judge,
            url,
            version.number,
        )
    asked = "requested" if created else "already requested"
    return (messages.ERROR if status["status"] == "failed" else messages.INFO), format_html(
        '{}: pool build #{} {} ({}), now {}. <a href="{}">Open it</a> to follow the build.',
        version.campaign,
        version.pk,
        asked,
        what,
        status["detail"],
        url,
    )


admin.site.unregister(Campaign)
admin.site.register(Campaign, CampaignPoolingAdmin)


class PooljudgeUserAdmin(UserAdmin):  # type: ignore[type-arg]
    actions = ["revoke_api_tokens"]

    @admin.action(description="Revoke the API tokens of the selected users")
    def revoke_api_tokens(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        revoked, _ = Token.objects.filter(user__in=queryset).delete()
        self.message_user(request, f"{revoked} API token(s) revoked.")


admin.site.unregister(get_user_model())
admin.site.register(get_user_model(), PooljudgeUserAdmin)
# the admin's login form counts and refuses like the login page (judging.web.login)
admin.site.login_form = AdminLoginForm
# branded as the service, its "View site" link back to the pages
admin.site.site_header = "Pooljudge administration"
admin.site.site_title = "Pooljudge admin"
admin.site.index_title = "Campaigns, runs, judgments and users"
admin.site.site_url = "/"
