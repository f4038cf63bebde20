"""The budget plan of a campaign's judging: per topic, what was found and what is left."""

from __future__ import annotations

from typing import Any

from judging.campaigns.models import Campaign


def budget_plan(campaign: Campaign) -> dict[str, Any]:
    """Per topic plan (filled in by the budget-plan work)."""
    return {}
