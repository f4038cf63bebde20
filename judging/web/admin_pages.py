"""Admin pages for a campaign's judging: progress, agreement, adjudication, publishing."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from judging.assessments import planning, quality, selectors, units
from judging.assessments.models import QrelsVersion
from judging.campaigns.models import Campaign
from judging.core.errors import InvalidInput
from judging.core.params import parse_int
from judging.core.roles import account
from judging.evaluation.design_plan import design_forecast
from judging.pools import selectors as pool_selectors
from judging.web.access import admin_required
from judging.web.flash import flash
from judging.workflows.qrels import qrels_published


@admin_required
def progress(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    forecast, error, budget = None, "", None
    if request.GET.get("budget"):  # the design forecast at a budget (a read; nothing stored)
        try:
            budget = parse_int(request.GET["budget"], "budget", minimum=1)
            forecast = design_forecast(campaign=campaign, budget=budget)
        except InvalidInput as exc:
            error = exc.message
    return render(
        request,
        "manage/progress.html",
        {
            "campaign": campaign,
            "p": selectors.judging_progress(campaign),
            "missing_text": pool_selectors.missing_text_counts(campaign),
            "qrels": QrelsVersion.objects.filter(campaign=campaign)
            .select_related("derivation__base", "derivation__chunking")
            .latest_first()[:10],
            "quality_alerts": quality.alerts(campaign),
            "plan": planning.budget_plan(campaign),
            "forecast": forecast,
            "forecast_error": error,
            "forecast_budget": budget,
        },
    )


@admin_required
def agreement_page(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    only_relevance = request.GET.get("relevance") == "1"
    report = selectors.agreement_report(campaign)
    return render(
        request,
        "manage/agreement.html",
        {
            "campaign": campaign,
            "overall": report["overall"],
            "by_topic": list(report["topics"].items()),
            "disagreements": [
                {**d, "grades": sorted(d["grades"].items())}
                for d in selectors.disagreement_list(campaign, relevance_only=only_relevance)
            ],
            "only_relevance": only_relevance,
            "labels": sorted(campaign.grade_labels().items()),
            "kinds": [
                (kind, {**k, "labels": sorted(units.grade_labels(campaign, kind).items())})
                for kind, k in report["kinds"].items()
            ],
        },
    )


@admin_required
@require_POST
def publish(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    # Open items do not stop a publish (the admin decides; the form asked them to confirm):
    # the message says how many the version leaves out.
    open_ = planning.open_items(campaign, limit=0)
    version, created = qrels_published(
        campaign=campaign, note=request.POST.get("note", ""), created_by=account(request.user)
    )
    with_open = f" with {planning.open_items_summary(open_)}" if open_["count"] else ""
    if created:
        flash(
            request,
            messages.WARNING if open_["count"] else messages.SUCCESS,
            f"Published qrels version {version.number} ({version.num_judgments} judgments)"
            f"{with_open}.",
        )
    else:
        flash(
            request,
            messages.INFO,
            f"Nothing changed since qrels version {version.number}{with_open}.",
        )
    return redirect("manage-progress", campaign_id=campaign.pk)
