"""A run arrives."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from judging.campaigns.models import Run
from judging.campaigns.services import run_submit
from judging.evaluation.services import evaluations_after_run
from judging.workflows._signature import takes_arguments_of


@takes_arguments_of(run_submit)
def run_submitted(**submission: Any) -> Run:
    """Validate and store a run (``campaigns.services.run_submit``, same arguments and errors),
    then evaluate it against the campaign's latest qrels version (a task, after commit)."""
    with transaction.atomic():
        run = run_submit(**submission)
        evaluations_after_run(run)
    return run
