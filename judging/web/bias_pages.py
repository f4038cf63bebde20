"""The pooling-bias page (filled in with the bias analyses)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse


def bias_page(request: HttpRequest, campaign_id: int) -> HttpResponse:
    raise NotImplementedError


def bias_chart(request: HttpRequest, campaign_id: int, chart: str) -> HttpResponse:
    raise NotImplementedError
