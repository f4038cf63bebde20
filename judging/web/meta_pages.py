"""The judges' meta-evaluation page (issue 35, point 2): every judge of the campaign against
people's qrels over a pool version, sortable by each figure, with its exports; researchers and
admins read it (another participant's judge anonymised) and ask for it. Views translate HTTP
only: ``autojudge.meta_board`` reads, ``autojudge.meta_eval`` computes."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from judging.assessments.models import QrelsVersion
from judging.autojudge import meta_board
from judging.autojudge.meta_eval import DEFAULT_MEASURE, meta_request
from judging.autojudge.selectors import built_pools, human_qrels
from judging.core.errors import DomainError
from judging.core.roles import account, is_admin
from judging.pools.models import PoolVersion
from judging.web.autojudge_pages import _int
from judging.web.flash import flash, flash_error
from judging.web.judge_pages import campaign_of


@login_required
def meta_page(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = campaign_of(request, campaign_id)
    sort = request.GET.get("sort") or meta_board.DEFAULT_SORT
    if sort not in meta_board.SORTS:
        sort = meta_board.DEFAULT_SORT
    meta = meta_board.meta_for(
        campaign,
        qrels=_int(request.GET.get("qrels")),
        pool=_int(request.GET.get("pool")),
        measure=(request.GET.get("measure") or "")[:50] or None,
    )
    view = meta_board.meta_view(meta, request.user, sort=sort) if meta is not None else None
    rows = []
    if view is not None and view["result"] is not None:
        rows = [
            {"row": r, "cells": [meta_board.figure(r, key) for _, key in meta_board.COLUMNS]}
            for r in view["result"]["judges"]
        ]
    context = {
        "rows": rows,
        "campaign": campaign,
        "meta": view,
        "sort": sort,
        "columns": meta_board.COLUMNS,
        "formats": meta_board.FORMATS,
        "humans": human_qrels(campaign),
        "pools": built_pools(campaign),
        "default_measure": DEFAULT_MEASURE,
        "is_admin": is_admin(request.user),
        "is_researcher": True,
    }
    return render(request, "autojudge/meta.html", context)


@login_required
@require_POST
def meta_compute(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = campaign_of(request, campaign_id)
    human = get_object_or_404(
        QrelsVersion.objects.filter(campaign=campaign).human(),
        number=_int(request.POST.get("qrels"), -1),
    )
    pool = get_object_or_404(
        PoolVersion, campaign=campaign, number=_int(request.POST.get("pool"), -1)
    )
    measure = (request.POST.get("measure") or DEFAULT_MEASURE).strip()[:50]
    try:
        meta_request(
            campaign=campaign,
            human=human,
            pool=pool,
            measure=measure,
            requested_by=account(request.user),
            again=request.POST.get("again") == "1",
        )
        flash(request, messages.SUCCESS, "The meta-evaluation is being computed.")
    except DomainError as exc:
        flash_error(request, exc)
    url = reverse("meta-evaluation", args=[campaign.pk])
    return redirect(f"{url}?qrels={human.number}&pool={pool.number}&measure={measure}")
