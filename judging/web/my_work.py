"""The annotator's home: their work per campaign and topic, their pace, the guidelines.

Blind as the judging screen: only the annotator's own judgments and the campaigns' guidelines
(never the researcher-facing description, runs, ranks, scores or other annotators).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from judging.assessments.selectors import SESSION_GAP, annotator_pace, annotator_work
from judging.core.roles import UserLike, is_annotator


def duration_text(seconds: float) -> str:
    """``seconds`` for people: "45 s", "12 min", "2 h 05 min"."""
    if round(seconds) < 60:
        return f"{round(seconds)} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60:02d} min"


def _rate_text(rate: float | None) -> str:
    return "not measured yet" if rate is None else f"{rate:.0f}"


def pace_display(user: UserLike) -> dict[str, Any]:
    """The annotator's pace (``annotator_pace``) with its figures written out for the page."""
    pace = annotator_pace(user)
    return {
        **pace,
        "per_active_hour_text": _rate_text(pace["per_active_hour"]),
        "per_wall_hour_text": _rate_text(pace["per_wall_hour"]),
        "active_text": duration_text(pace["active_seconds"]),
        "wall_text": duration_text(pace["wall_seconds"]),
        "gap_minutes": round(SESSION_GAP.total_seconds() / 60),
    }


@login_required
def my_work(request: HttpRequest) -> HttpResponse:
    if not is_annotator(request.user):
        raise PermissionDenied("only annotators judge")
    return render(
        request,
        "annotate/my_work.html",
        {"campaigns": annotator_work(request.user), "pace": pace_display(request.user)},
    )
