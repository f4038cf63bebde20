"""Browser pages. Every view requires login and shows only what the user's roles allow (but the
site's icon, which browsers ask for before anyone logs in)."""

from __future__ import annotations

import functools
from pathlib import Path

from django.contrib.auth.decorators import login_required
from django.contrib.staticfiles import finders
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_safe

from judging.campaigns.models import Run
from judging.campaigns.selectors import campaign_list, run_label
from judging.core.roles import is_annotator, is_researcher
from judging.web.my_work import pace_display


@login_required
def home(request: HttpRequest) -> HttpResponse:
    campaigns = campaign_list(user=request.user)
    runs = (
        Run.objects.visible_to(request.user)
        .select_related("campaign", "owner")
        .order_by("-submitted_at")[:50]
        if is_researcher(request.user)
        else Run.objects.none()
    )
    rows = list(runs)
    for run in rows:
        run.label = run_label(run, request.user)  # type: ignore[attr-defined]
    # an annotator reads the guidelines, never the description (the template picks by role)
    pace = pace_display(request.user) if is_annotator(request.user) else None
    return render(request, "web/home.html", {"campaigns": campaigns, "runs": rows, "pace": pace})


ICON = "pooljudge/favicon.svg"


@functools.cache
def _icon() -> bytes:
    found = finders.find(ICON)
    if not found:
        raise ImproperlyConfigured(f"the static file {ICON} is missing")
    return Path(str(found)).read_bytes()


@require_safe
@cache_control(max_age=86_400, public=True)
def favicon(request: HttpRequest) -> HttpResponse:
    """``/favicon.ico``, which browsers ask every site for: the icon the pages name (a static
    file, answered to everybody, as the stylesheet is). SVG, which browsers take as an icon."""
    return HttpResponse(_icon(), content_type="image/svg+xml")
