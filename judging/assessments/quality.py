"""Quality control of assessors: gold accuracy, agreement, grade distribution, pace, drift."""

from __future__ import annotations

from typing import Any

from judging.campaigns.models import Campaign


def alerts(campaign: Campaign) -> list[dict[str, Any]]:
    """Assessors below the campaign's quality threshold (filled in by the quality-control work)."""
    return []
