"""A run's top-up asked for (issue 31, point 4): the campaign's headline measure fixes the top k
sampled from (its cut-off, else the pool depth), an admin's request is checked, and
``assessments.topups`` draws and queues the sample. The page, the API and ``manage.py topup``
call this."""

from __future__ import annotations

from django.db import transaction

from judging.assessments.models import QrelsVersion, TopUp
from judging.assessments.topups import topup_publish, topup_request
from judging.campaigns.models import Run
from judging.core.errors import InvalidInput, NotAllowed
from judging.core.roles import Account, is_admin
from judging.evaluation.penalty import topup_k
from judging.workflows.qrels import after_qrels
from metrics.problems import Problem


def topup_allowed(requested_by: Account | None) -> None:
    """NotAllowed unless ``requested_by`` may queue top-ups (admins; None: the operator)."""
    if requested_by is not None and not is_admin(requested_by):
        raise NotAllowed("only an admin may queue a top-up (it spends the assessors' time)")


def topup_requested(
    *, run: Run, budget: int, design: str = "uniform", requested_by: Account | None
) -> TopUp:
    """Queue a top-up of ``run`` for the campaign's assessors (admins only: it spends their
    time; ``requested_by`` None: a command run by the operator)."""
    topup_allowed(requested_by)
    measure, k = topup_k(run.campaign)
    return topup_request(
        run=run, measure=measure, k=k, budget=budget, design=design, requested_by=requested_by
    )


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
