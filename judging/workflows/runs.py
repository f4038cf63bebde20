"""A run arrives."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from judging.campaigns.models import Run
from judging.campaigns.services import run_submit
from judging.evaluation.services import evaluations_after_run
from judging.pools.selectors import new_runs_pooled
from judging.workflows._signature import takes_arguments_of


@takes_arguments_of(run_submit)
def run_submitted(**submission: Any) -> Run:
    """Validate and store a run (``campaigns.services.run_submit``, same arguments and errors),
    then evaluate it against the campaign's latest qrels version (a task, after commit).

    A run whose submission does not say whether it is pooled follows the campaign's
    ``run_pooling`` (``pools.selectors.new_runs_pooled``: auto closes with the first pool)."""
    with transaction.atomic():
        if submission.get("pooled") is None:
            submission["pooled"], _ = new_runs_pooled(submission["campaign"])
        run = run_submit(**submission)
        evaluations_after_run(run)
    return run
