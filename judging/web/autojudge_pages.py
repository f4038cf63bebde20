"""Pages of a judge's audit and of human samples with the hybrid leaderboard (estimates
corrected by people's grades, with intervals). Researchers and admins read; admins ask for
audits and draw samples. Views translate HTTP only."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from judging.assessments.models import QrelsVersion
from judging.autojudge.audit import audit_request
from judging.autojudge.estimates import sample_advance, sample_create
from judging.autojudge.models import HumanSample, Judge, JudgeAudit, SampleDesign
from judging.autojudge.reports import audit_view, sample_view, samples_of
from judging.autojudge.selectors import built_pools, human_qrels, latest_audit
from judging.campaigns.models import Campaign
from judging.core.errors import DomainError, InvalidInput
from judging.core.params import MAX_ID, parse_int
from judging.core.roles import account, is_admin
from judging.pools.models import PoolVersion
from judging.web.flash import flash, flash_error
from judging.web.judge_pages import campaign_of as _campaign
from judging.web.judge_pages import judge_of


def _admin(request: HttpRequest) -> None:
    if not is_admin(request.user):
        raise PermissionDenied("only admins ask for audits and draw samples")


def _int(value: Any, default: int | None = None) -> int | None:
    """A version number or id from the form or query, or ``default`` when there is none or it
    is not a whole number (then the version asked for is not found)."""
    try:
        return parse_int(value, "number", minimum=-MAX_ID, maximum=MAX_ID)
    except InvalidInput:
        return default


def _choices(campaign: Campaign) -> dict[str, Any]:
    return {"humans": human_qrels(campaign), "pools": built_pools(campaign)}


@login_required
def audit_page(request: HttpRequest, campaign_id: int, judge_id: int) -> HttpResponse:
    """One audit of the judge version: the qrels and pool versions asked for (the newest for
    one not asked for); asked for neither, its latest computed audit (``latest_audit``), else
    the newest versions, where the page says that no audit is computed and who can ask."""
    campaign = _campaign(request, campaign_id)
    judge = judge_of(request, campaign, judge_id)
    choices = _choices(campaign)
    humans, pools = choices["humans"], choices["pools"]
    asked_qrels, asked_pool = _int(request.GET.get("qrels")), _int(request.GET.get("pool"))
    opened = latest_audit(judge) if asked_qrels is None and asked_pool is None else None
    if opened is not None:
        human, pool = opened.human, opened.pool
    else:
        human = humans.filter(number=asked_qrels or -1).first() or humans.first()
        pool = pools.filter(number=asked_pool or -1).first() or pools.first()
    audit = None
    if human is not None and pool is not None:
        stored = opened or JudgeAudit.objects.filter(judge=judge, human=human, pool=pool).first()
        audit = audit_view(stored, request.user) if stored is not None else None
    newest = (humans.first(), pools.first())
    context = {
        "campaign": campaign,
        "judge": judge,
        "human": human,
        "pool": pool,
        "audit": audit,
        # opened on an audit older than the newest versions: the page says they have none
        "newer": newest if opened is not None and newest != (human, pool) else None,
        "is_admin": is_admin(request.user),
        **choices,
    }
    return render(request, "autojudge/audit.html", context)


@login_required
@require_POST
def audit_compute(request: HttpRequest, campaign_id: int, judge_id: int) -> HttpResponse:
    campaign = _campaign(request, campaign_id)
    _admin(request)
    judge = judge_of(request, campaign, judge_id)
    human = get_object_or_404(
        QrelsVersion.objects.filter(campaign=campaign).human(),
        number=_int(request.POST.get("qrels"), -1),
    )
    pool = get_object_or_404(
        PoolVersion, campaign=campaign, number=_int(request.POST.get("pool"), -1)
    )
    try:
        audit_request(
            judge=judge,
            human=human,
            pool=pool,
            requested_by=account(request.user),
            again=request.POST.get("again") == "1",
        )
        flash(request, messages.SUCCESS, f"The audit of {judge} is being computed.")
    except DomainError as exc:
        flash_error(request, exc)
    url = reverse("autojudge-audit", args=[campaign.pk, judge.pk])
    return redirect(f"{url}?qrels={human.number}&pool={pool.number}")


@login_required
def samples_page(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = _campaign(request, campaign_id)
    context = {
        "campaign": campaign,
        "samples": samples_of(campaign),
        "judges": Judge.objects.visible_to(request.user).filter(campaign=campaign),
        "designs": SampleDesign.choices,
        "is_admin": is_admin(request.user),
        **_choices(campaign),
    }
    return render(request, "autojudge/samples.html", context)


@login_required
@require_POST
def samples_create(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = _campaign(request, campaign_id)
    _admin(request)
    judge = judge_of(request, campaign, _int(request.POST.get("judge"), -1) or -1)
    pool = get_object_or_404(
        PoolVersion, campaign=campaign, number=_int(request.POST.get("pool"), -1)
    )
    try:
        hs = sample_create(
            judge=judge,
            pool=pool,
            design=request.POST.get("design", ""),
            budget=_int(request.POST.get("budget"), 0) or 0,
            seed=_int(request.POST.get("seed"), 0) or 0,
            allocation=request.POST.get("allocation") or "neyman",
            created_by=account(request.user),
        )
    except DomainError as exc:
        flash_error(request, exc)
        return redirect(reverse("autojudge-samples", args=[campaign.pk]))
    flash(request, messages.SUCCESS, f"Sample {hs.pk} is queued to the assessors.")
    return redirect(reverse("autojudge-sample", args=[campaign.pk, hs.pk]))


@login_required
def sample_page(request: HttpRequest, campaign_id: int, sample_id: int) -> HttpResponse:
    campaign = _campaign(request, campaign_id)
    hs = get_object_or_404(HumanSample, pk=sample_id, judge__campaign=campaign)
    context = {
        "campaign": campaign,
        "sample": hs,
        "report": sample_view(hs, request.user),
        "is_admin": is_admin(request.user),
    }
    return render(request, "autojudge/sample.html", context)


@login_required
@require_POST
def sample_advance_view(request: HttpRequest, campaign_id: int, sample_id: int) -> HttpResponse:
    campaign = _campaign(request, campaign_id)
    _admin(request)
    hs = get_object_or_404(HumanSample, pk=sample_id, judge__campaign=campaign)
    try:
        sample_advance(hs)
        flash(request, messages.SUCCESS, "The rest of the sample is drawn and queued.")
    except DomainError as exc:
        flash_error(request, exc)
    return redirect(reverse("autojudge-sample", args=[campaign.pk, hs.pk]))
