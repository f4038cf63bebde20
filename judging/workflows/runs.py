"""A run arrives."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.core.files.uploadedfile import UploadedFile
from django.db import transaction

from judging.campaigns.models import Campaign, Run
from judging.campaigns.services import json_results_from_body, run_pooled_check, run_submit
from judging.core import uploads
from judging.core.roles import Account, UserLike
from judging.evaluation.services import evaluations_after_run
from judging.pools.selectors import new_runs_pooled


def run_submitted(
    *,
    campaign: Campaign,
    owner: Account,
    data: uploads.Source | None = None,
    results: Any = None,
    tag: str | None = None,
    group: str = "",
    description: str = "",
    model_names: Sequence[str] = (),
    pooled: bool | None = None,
    priority: int = 1,
    source: str | None = None,
    by: UserLike | None = None,
) -> Run:
    """Validate and store a run (``campaigns.services.run_submit``, same errors), then evaluate
    it against the campaign's latest qrels version (a task, after commit).

    ``by`` is who asks, when a person does (the API, the page): only an admin may say whether
    the run is pooled (``NotAllowed`` otherwise, ``campaigns.services.run_pooled_check``).
    Commands and the demo act as the operator and leave it None. ``results`` is a JSON run, as
    an object or as a JSON string of one (a multipart field). ``source`` names the file in
    problem reports: by default an upload's name, else "run".

    A run whose submission does not say whether it is pooled follows the campaign's
    ``run_pooling`` (``pools.selectors.new_runs_pooled``: auto closes with the first pool)."""
    if by is not None:
        run_pooled_check(user=by, pooled=pooled)
    if results is not None:
        results = json_results_from_body(results)
    if source is None:
        source = (data.name if isinstance(data, UploadedFile) else None) or "run"
    with transaction.atomic():
        if pooled is None:
            pooled, _ = new_runs_pooled(campaign)
        run = run_submit(
            campaign=campaign,
            owner=owner,
            data=data,
            results=results,
            tag=tag,
            group=group,
            description=description,
            model_names=model_names,
            pooled=pooled,
            priority=priority,
            source=source,
        )
        evaluations_after_run(run)
    return run
