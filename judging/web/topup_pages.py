"""A run's top-up from its page (issue 31, point 4): an admin queues a sample of the run's
unjudged top-k documents for the assessors (``workflows.topups``); the run page shows where
each top-up stands (``workflows.topups.run_topups_corrected``)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from judging.autojudge.selectors import judge_for
from judging.campaigns.models import Run
from judging.core.errors import DomainError, NotAllowed
from judging.core.params import parse_int
from judging.core.roles import account
from judging.evaluation.penalty import run_penalty_estimate
from judging.web.flash import flash, flash_error
from judging.web.results import _visible_run
from judging.workflows.topups import topup_allowed, topup_published, topup_requested


def _admin_run(request: HttpRequest, run_id: int) -> Run:
    """The run, if the user sees it and may queue and publish top-ups (admins), else 403."""
    run = _visible_run(request, run_id)
    try:
        topup_allowed(account(request.user))
    except NotAllowed as exc:
        raise PermissionDenied(exc.message) from None
    return run


@login_required
@require_POST
def run_topup(request: HttpRequest, run_id: int) -> HttpResponse:
    """Queue a top-up of the run (admins): ``budget`` documents drawn by ``design``, and with
    ``judge`` that automatic judge version grading the whole hole, corrected by the sample."""
    run = _admin_run(request, run_id)
    try:
        budget = parse_int(request.POST.get("budget", ""), "budget", minimum=1)
        judge_id = request.POST.get("judge") or ""
        judge = judge_for(request.user, parse_int(judge_id, "judge")) if judge_id else None
        topup = topup_requested(
            run=run,
            budget=budget,
            design=request.POST.get("design") or "uniform",
            requested_by=account(request.user),
            judge=judge,
        )
    except DomainError as exc:
        flash_error(request, exc)
        return redirect("run-page", run_id=run.pk)
    flash(
        request,
        messages.SUCCESS,
        f"Top-up queued: {topup.items.filter(sampled=True).count()} of the run's unjudged "
        f"documents in its top {topup.k} come first in their topics' queues.",
    )
    return redirect("run-page", run_id=run.pk)


@login_required
@require_POST
def run_topup_publish(request: HttpRequest, run_id: int) -> HttpResponse:
    """Publish the run's latest top-up as the next qrels version (admins)."""
    run = _admin_run(request, run_id)
    try:
        version = topup_published(run=run, created_by=account(request.user))
    except DomainError as exc:
        flash_error(request, exc)
        return redirect("run-page", run_id=run.pk)
    flash(request, messages.SUCCESS, f"Qrels version {version.number} published: {version.note}.")
    return redirect("run-page", run_id=run.pk)


@login_required
@require_POST
def run_penalty_ask(request: HttpRequest, run_id: int) -> HttpResponse:
    """Ask for the penalty estimate of a run the bias report was computed without."""
    run = _visible_run(request, run_id)
    try:
        run_penalty_estimate(run, account(request.user))
    except DomainError as exc:
        flash_error(request, exc)
    return redirect("run-page", run_id=run.pk)
