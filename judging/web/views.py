"""Browser pages. Every view requires login and shows only what the user's roles allow."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

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
