"""Where the qrels are incomplete, per question (``evaluation.incompleteness``), and the way to
judge more: pool every run's top k."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

from judging.campaigns.models import Campaign
from judging.core.errors import DomainError, InvalidInput
from judging.core.params import query_int
from judging.core.roles import account, is_admin, is_researcher
from judging.evaluation.incompleteness import MAX_K, incompleteness, visible_groups
from judging.web.flash import flash, flash_error
from judging.web.results import qrels_version_or_404
from judging.workflows.pools import pool_requested


def _campaign(request: HttpRequest, campaign_id: int) -> Campaign:
    if not is_researcher(request.user):
        raise PermissionDenied("results are for researchers and admins")
    return get_object_or_404(Campaign.objects.visible_to(request.user), pk=campaign_id)


@login_required
@require_safe
def incompleteness_page(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = _campaign(request, campaign_id)
    version = qrels_version_or_404(campaign, request.GET.get("qrels"))
    problems: list[str] = []
    try:
        k = query_int(request.GET, "k", minimum=1, maximum=MAX_K, what="a cut-off") or 10
    except DomainError as exc:
        problems.append(exc.message)
        k = 10
    group = request.GET.get("group", "")[:200]
    answer = None
    if version is not None:
        try:
            answer = incompleteness(
                campaign=campaign, version=version, k=k, user=request.user, group=group
            )
        except InvalidInput as exc:
            problems += [p.message for p in exc.problems]
    return render(
        request,
        "results/incompleteness.html",
        {
            "campaign": campaign,
            "version": version,
            "k": k,
            "group": group,
            "groups": visible_groups(campaign, request.user),
            "answer": answer,
            "problems": problems,
            "may_pool": is_admin(request.user),
        },
    )


@login_required
@require_POST
def judge_more(request: HttpRequest, campaign_id: int) -> HttpResponseBase:
    """Pool every run's top k (depth-k over all the campaign's runs): the never-judged items of
    it are queued for the assessors."""
    campaign = _campaign(request, campaign_id)
    if not is_admin(request.user):
        raise PermissionDenied("only admins pool")
    back = reverse("incompleteness", args=[campaign.pk])
    group = request.POST.get("group", "")[:200]
    runs = campaign.runs.filter(group=group) if group else campaign.runs.all()
    try:
        k = query_int(request.POST, "k", minimum=1, maximum=MAX_K, what="a cut-off") or 10
        version, created = pool_requested(
            campaign=campaign,
            strategy="depth",
            depth=k,
            runs=list(runs),
            requested_by=account(request.user),
        )
    except DomainError as exc:
        flash_error(request, exc)
        return redirect(back)
    flash(
        request,
        messages.SUCCESS,
        f"Pool version {version.number or '(building)'} asked for: the top {k} of every run"
        f"{f' of group {group}' if group else ''}; "
        "its unjudged items are queued for the assessors once it is built."
        if created
        else "A pool is being built already; its unjudged items are queued when it is done.",
    )
    return redirect(f"{back}?k={k}" + (f"&group={group}" if group else ""))
