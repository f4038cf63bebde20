"""The quality-control page (admins): per-assessor report, gold items, exclusions."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST, require_safe

from judging.assessments import gold, quality
from judging.assessments.models import QrelsVersion
from judging.campaigns.models import Campaign
from judging.core import uploads
from judging.core.errors import DomainError, InvalidInput
from judging.core.params import parse_int
from judging.core.roles import account
from judging.web.access import admin_required
from judging.web.flash import flash
from judging.web.text_pages import _refusal


@admin_required
@require_safe
def quality_page(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    report = quality.quality_report(campaign)
    return render(
        request,
        "manage/quality.html",
        {
            "campaign": campaign,
            "report": report,
            "scale": campaign.grade_values(),
            "gold_items": quality.gold_items(campaign)[:200],
            "exclusions": quality.exclusion_history(campaign),
            "qrels": QrelsVersion.objects.filter(campaign=campaign).latest_first()[:20],
        },
    )


def _int(value: str | None, field: str, default: int) -> int:
    if value is None or value.strip() == "":
        return default
    try:
        return parse_int(value, field)
    except InvalidInput:  # said in the page's words, without the problem list
        raise InvalidInput(f"{field} must be a whole number, not {value[:20]!r}", []) from None


@admin_required
@require_POST
def gold_add(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """Import a gold file, or sample gold items from a qrels version."""
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    back = redirect("manage-quality", campaign_id=campaign.pk)
    try:
        uploads.check_request_size(
            request.META.get("CONTENT_LENGTH"),
            limit=settings.POOLJUDGE_UPLOADS.max_upload_bytes,
            what="the gold file",
        )
        upload = request.FILES.get("file")
        who = account(request.user)
        if upload is not None:
            result = gold.gold_import_file(
                campaign=campaign, data=upload, source=upload.name or "gold", created_by=who
            )
        elif request.POST.get("from_qrels"):
            result = gold.gold_from_qrels(
                campaign=campaign,
                number=_int(request.POST.get("from_qrels"), "the qrels version", 0),
                per_topic=_int(request.POST.get("per_topic"), "items per topic", 5),
                seed=_int(request.POST.get("seed"), "the seed", 0),
                created_by=who,
            )
        else:
            raise InvalidInput("choose a gold file or a qrels version first", [])
    except DomainError as exc:
        flash(request, messages.ERROR, f"Nothing was stored: {_refusal(exc)}")
        return back
    except ValueError as exc:  # a malformed multipart body
        flash(request, messages.ERROR, str(exc))
        return back
    text = f"Gold items: {result.created} added, {result.updated} updated."
    if result.queued_as_pooled:
        text += (
            f" {result.queued_as_pooled} wait in the queue as pooled items and are served as "
            "gold only once judged there."
        )
    flash(request, messages.SUCCESS, text)
    return back


@admin_required
@require_POST
def exclude(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    username = request.POST.get("annotator", "")
    try:
        gold.annotator_exclude(
            campaign=campaign,
            username=username,
            reason=request.POST.get("reason", ""),
            excluded_by=account(request.user),
        )
    except DomainError as exc:
        flash(request, messages.ERROR, _refusal(exc))
    else:
        flash(
            request,
            messages.SUCCESS,
            f"{username}'s judgments are left out of the next qrels versions (still stored).",
        )
    return redirect("manage-quality", campaign_id=campaign.pk)


@admin_required
@require_POST
def lift(request: HttpRequest, campaign_id: int, exclusion_id: int) -> HttpResponse:
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    try:
        exclusion = gold.exclusion_lift(
            campaign=campaign,
            exclusion_id=exclusion_id,
            reason=request.POST.get("reason", ""),
            lifted_by=account(request.user),
        )
    except DomainError as exc:
        flash(request, messages.ERROR, _refusal(exc))
    else:
        flash(
            request,
            messages.SUCCESS,
            f"{exclusion.annotator.get_username()} is included again from the next qrels version.",
        )
    return redirect("manage-quality", campaign_id=campaign.pk)


@admin_required
@require_POST
def qc_settings(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    data = {k: request.POST[k] for k in gold.QC_SETTINGS if k in request.POST}
    try:
        gold.qc_settings_update(campaign=campaign, data=data)
    except DomainError as exc:
        flash(request, messages.ERROR, f"Nothing was changed: {_refusal(exc)}")
    else:
        flash(request, messages.SUCCESS, "Quality settings saved.")
    return redirect("manage-quality", campaign_id=campaign.pk)
