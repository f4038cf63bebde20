"""The suggestions page: which judge's grades the campaign's assessors are shown, the share kept
hidden until they commit (admins set it), and the anchoring report (researchers and admins)."""

from __future__ import annotations

import math

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from judging.autojudge import suggestions
from judging.autojudge.models import Judge
from judging.campaigns.models import Campaign
from judging.core.errors import DomainError, InvalidInput
from judging.core.params import parse_int
from judging.core.roles import is_admin, is_researcher
from judging.web.flash import flash, flash_error
from metrics.problems import Problem

JUDGE_ID_MAX = 10**18 - 1  # 18 digits


def _judge_id(raw: str) -> int:
    """A judge's id as the form or the query gives it (at most 18 digits)."""
    return parse_int(raw, "judge", minimum=0, maximum=JUDGE_ID_MAX, what="a judge's id")


def _posted_judge(request: HttpRequest) -> int:
    raw = request.POST.get("judge", "").strip()
    try:
        return _judge_id(raw)
    except InvalidInput:
        raise InvalidInput(
            "choose the judge whose grades are suggested",
            [Problem.at("judge", f"must be a judge's id, not {raw[:20]!r}")],
        ) from None


def _posted_share(request: HttpRequest) -> float:
    raw = request.POST.get("hidden_share", "").strip()
    try:
        share = float(raw)
    except ValueError:
        share = math.nan
    if not math.isfinite(share):
        raise InvalidInput(
            f"the hidden share must be a number from 0 to 1, not {raw[:20]!r}",
            [Problem.at("hidden_share", "must be a number from 0 to 1")],
        )
    return share


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def suggestions_page(request: HttpRequest, campaign_id: int) -> HttpResponse:
    if not is_researcher(request.user):  # admins too
        raise PermissionDenied("only researchers and admins read the suggestions' report")
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    if request.method == "POST":
        if not is_admin(request.user):
            raise PermissionDenied("only admins set up suggestions")
        try:
            if request.POST.get("off"):
                was_on = suggestions.suggestions_off(campaign)
                flash(
                    request,
                    messages.SUCCESS,
                    "Suggestions are off." if was_on else "Suggestions were already off.",
                )
            else:
                setting = suggestions.suggestions_configure(
                    campaign=campaign,
                    judge=_posted_judge(request),
                    hidden_share=_posted_share(request),
                    enabled=bool(request.POST.get("enabled")),
                    by=request.user,
                )
                flash(
                    request,
                    messages.SUCCESS,
                    f"Saved: {setting.judge}'s grades, {setting.hidden_share:.0%} hidden until "
                    f"committed; suggestions {'on' if setting.enabled else 'off'}.",
                )
        except DomainError as exc:
            flash_error(request, exc)
        return redirect("suggestions", campaign_id=campaign.pk)
    judges = list(Judge.objects.filter(campaign=campaign))
    raw = request.GET.get("judge", "").strip()
    problem, judge = "", None
    try:
        try:
            judge_id = _judge_id(raw) if raw else None
        except InvalidInput:
            raise InvalidInput(
                f"judge must be a judge's id, not {raw[:20]!r}",
                [Problem.at("judge", "must be a judge's id")],
            ) from None
        judge = suggestions.report_judge(campaign, judge_id)
    except InvalidInput as exc:
        problem = exc.message
    context = {
        "campaign": campaign,
        "setting": suggestions.suggestion_setting(campaign),
        "report": None if problem else suggestions.anchoring_report(campaign, judge),
        "problem": problem,
        "judges": judges,
        "compared": judge,
    }
    return render(request, "autojudge/suggestions.html", context, status=400 if problem else 200)
