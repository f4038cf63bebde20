"""A run's top-up asked for (issue 31, point 4): the campaign's headline measure fixes the top k
sampled from (its cut-off, else the pool depth), an admin's request is checked, and
``assessments.topups`` draws and queues the sample. The page, the API and ``manage.py topup``
call this."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from judging.assessments.models import QrelsVersion, TopUp
from judging.assessments.services import current_human_grades
from judging.assessments.topups import topup_publish, topup_request, topup_status
from judging.autojudge.models import Judge
from judging.autojudge.topups import correction_request, correction_status, corrections_of
from judging.campaigns.models import Run
from judging.core.errors import InvalidInput, NotAllowed
from judging.core.roles import Account, is_admin
from judging.evaluation.penalty import run_topups, topup_k
from judging.workflows.qrels import after_qrels
from metrics.problems import Problem


def topup_allowed(requested_by: Account | None) -> None:
    """NotAllowed unless ``requested_by`` may queue top-ups (admins; None: the operator)."""
    if requested_by is not None and not is_admin(requested_by):
        raise NotAllowed("only an admin may queue a top-up (it spends the assessors' time)")


def topup_requested(
    *,
    run: Run,
    budget: int,
    design: str = "uniform",
    requested_by: Account | None,
    judge: Judge | None = None,
) -> TopUp:
    """Queue a top-up of ``run`` for the campaign's assessors (admins only: it spends their
    time; ``requested_by`` None: a command run by the operator), and with ``judge`` have that
    automatic judge grade the run's whole hole, corrected by the sample
    (``autojudge.topups``)."""
    topup_allowed(requested_by)
    measure, k = topup_k(run.campaign)
    with transaction.atomic():  # a judge refused leaves no top-up behind
        topup = topup_request(
            run=run, measure=measure, k=k, budget=budget, design=design, requested_by=requested_by
        )
        if judge is not None:
            correction_request(topup=topup, judge=judge, requested_by=requested_by)
    return topup


def topup_corrected(topup: TopUp) -> dict[str, Any]:
    """``assessments.topups.topup_status`` of one top-up with its ``correction`` (None
    without a judge)."""
    found = corrections_of(topup.run_id).get(topup.pk)
    return {**topup_status(topup), "correction": correction_status(found) if found else None}


def run_topups_corrected(run: Run) -> dict[str, Any]:
    """``evaluation.penalty.run_topups`` with, per top-up an automatic judge corrects, its
    ``correction`` (``autojudge.topups.correction_status``; None for the others)."""
    grades = current_human_grades(run.campaign)  # read once for all
    out = run_topups(run, grades)
    corrections = corrections_of(run.pk)
    for status in out["topups"]:
        found = corrections.get(status["id"])
        status["correction"] = correction_status(found, grades) if found else None
    return out


def topup_published(*, run: Run, created_by: Account | None) -> QrelsVersion:
    """Publish the run's latest top-up as the campaign's next qrels version (its version and
    the top-up's judgments: ``assessments.topups.topup_publish``; admins only), evaluated and
    analysed like any new version, so that its bias page's before/after shows the measured
    penalty."""
    topup_allowed(created_by)
    topup = run.topups.select_related("campaign", "run", "qrels").order_by("-pk").first()
    if topup is None:
        raise InvalidInput("no top-up", [Problem.at("run", f"run {run.pk} has no top-up")])
    with transaction.atomic():
        version = topup_publish(topup=topup, created_by=created_by)
        after_qrels(version)
    return version
