"""Reads of pool builds that the API and the admin share."""

from __future__ import annotations

from typing import Any

from judging.campaigns.models import Campaign, RunPooling
from judging.core import outbox
from judging.pools.models import PoolState, PoolVersion
from judging.pools.services import pool_build_key, pool_stale_since


def pool_status(version: PoolVersion) -> dict[str, Any]:
    """What a build is doing, honestly: ``status`` is pending (its task not yet sent to a
    worker, e.g. Redis is down), queued, building, stale (its worker stopped beating: lost
    since ``since``; the sweep takes it over), built or failed; ``detail`` says it in words."""
    since = None
    if version.state == PoolState.BUILT:
        state, detail = "built", "built"
    elif version.state == PoolState.FAILED:
        state, detail = "failed", f"failed: {version.error}" if version.error else "failed"
    elif version.state == PoolState.BUILDING:
        since = pool_stale_since(version)
        if since is not None:
            state, detail = "stale", outbox.describe("stale", since)
        else:
            state, detail = "building", f"building ({version.percent:.0f}%)"
    else:
        task = outbox.task_view(pool_build_key(version.pk))
        if task is not None and task["status"] in ("pending", "stale"):
            state, detail, since = task["status"], task["detail"], task["since"]
        else:
            state, detail = "queued", "queued"
    return {"status": state, "detail": detail, "since": since}


def new_runs_pooled(campaign: Campaign) -> tuple[bool, str]:
    """Whether a run submitted now is pooled when nobody says (``Campaign.run_pooling``), and
    why, in words for the run's page: auto is open until the campaign's first pool version and
    closed from then on."""
    if campaign.run_pooling == RunPooling.OPEN:
        return True, "the campaign's pooling is open"
    if campaign.run_pooling == RunPooling.CLOSED:
        return False, "the campaign's pooling is closed"
    first = PoolVersion.objects.filter(campaign=campaign).order_by("pk").first()
    if first is None:
        return True, "no pool version exists yet, so the campaign's pooling is still open"
    name = f"version {first.number}" if first.number else f"build #{first.pk}"
    return False, f"the campaign's pooling closed with its first pool ({name})"
