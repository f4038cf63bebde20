"""A run's top-up asked for (issue 31, point 4): the campaign's headline measure fixes the top k
sampled from (its cut-off, else the pool depth), an admin's request is checked, and
``assessments.topups`` draws and queues the sample. The page, the API and ``manage.py topup``
call this."""

from __future__ import annotations

from judging.assessments.models import TopUp
from judging.assessments.topups import topup_request
from judging.campaigns.models import Run
from judging.core.errors import NotAllowed
from judging.core.roles import Account, is_admin
from judging.evaluation.penalty import topup_k


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
