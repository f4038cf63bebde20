"""A system check for stored campaigns whose relevance scale is not valid.

The API, the admin and the services refuse such a scale, but a row can still hold one (edited in
the database, restored from an old backup). Reading stays safe (the campaign list shows the scale
as stored, ``Campaign.grade_values()`` is empty), yet no judgment can be recorded in that
campaign, so ``manage.py check --database default`` (and ``migrate``) name it to the operator.
"""

from __future__ import annotations

from typing import Any

from django.core.checks import CheckMessage, Tags, Warning, register
from django.db import DatabaseError

from judging.campaigns.models import Campaign, scale_problems


@register(Tags.database)
def check_campaign_scales(databases: Any = None, **kwargs: Any) -> list[CheckMessage]:
    if not databases:
        return []
    out: list[CheckMessage] = []
    try:
        rows = list(Campaign.objects.values_list("pk", "name", "scale", "relevance_threshold"))
    except DatabaseError:  # before the first migrate: no table yet
        return []
    for pk, name, scale, threshold in rows:
        problems = scale_problems(scale, threshold)
        if problems:
            shown = "; ".join(f"{where}: {message}" for where, message in problems[:3])
            out.append(
                Warning(
                    f"campaign {pk} ({name!r}) has an invalid relevance scale: {shown}",
                    hint="Fix the scale in the admin (Campaigns) or with PATCH "
                    f"/api/v1/campaigns/{pk}/; until then no judgment can be recorded.",
                    obj=f"campaign {pk}",
                    id="campaigns.W001",
                )
            )
    return out
