"""The pages' one answer for a stored computation that a page or chart needs finished
(``core.jobs.answer``, as the API's ``api.stored``): a 404 unless it is stored and done."""

from __future__ import annotations

from typing import Any

from django.http import Http404

from judging.core.jobs import answer
from judging.core.models import JobState


def stored_or_404(body: dict[str, Any] | None, missing: str) -> dict[str, Any]:
    """``body`` when its computation is done; else a 404 saying ``missing``."""
    if body is None or answer(body) != 200 or body.get("state") != JobState.DONE:
        raise Http404(missing)
    return body
