"""Reads of campaigns and runs that the API and the pages share, scoped to who is asking."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from judging.campaigns.models import Campaign, Run
from judging.core.roles import UserLike, is_admin, is_researcher


def campaign_list(*, user: UserLike) -> QuerySet[Campaign]:
    """The campaigns the user may see, with their topic, document and run counts; annotators
    are blind to systems, so their run count is None (not even how many runs exist)."""
    return Campaign.objects.visible_to(user).with_counts(runs=is_researcher(user))


def run_label(run: Run, user: UserLike) -> str:
    """Researchers see their own runs by tag and other people's runs anonymised."""
    if is_admin(user) or run.owner_id == getattr(user, "pk", None):
        return run.tag
    return f"anonymous run #{run.pk}"


def run_labels(campaign: Campaign, user: UserLike) -> dict[str, str]:
    """Run tag -> what the user may see of it, for every run of the campaign."""
    return {run.tag: run_label(run, user) for run in campaign.runs.all()}


def anonymise(value: Any, labels: dict[str, str]) -> Any:
    """``value`` with run tags replaced by their labels wherever they are keys or strings."""
    if isinstance(value, dict):
        return {
            labels.get(k, k) if isinstance(k, str) else k: anonymise(v, labels)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [anonymise(v, labels) for v in value]
    if isinstance(value, str):
        return labels.get(value, value)
    return value
