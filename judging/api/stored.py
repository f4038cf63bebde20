"""The API's one answer for a stored computation (``core.jobs``): 404 when it was never asked
for, 202 while it is being computed, 200 when it is stored (done, or failed with its error)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rest_framework import status
from rest_framework.exceptions import NotFound
from rest_framework.response import Response

from judging.core.jobs import answer

Shape = Callable[[dict[str, Any]], dict[str, Any]]


def stored_response(
    body: dict[str, Any] | None,
    *,
    missing: str,
    pending: Shape | None = None,
    ready: Shape | None = None,
) -> Response:
    """``body`` (a selector's view of the stored computation, with its ``state``) answered with
    its status (``core.jobs.answer``); ``missing`` is the 404's detail, ``pending`` and
    ``ready`` shape the 202's and the 200's bodies when they differ from ``body``."""
    code = answer(body)
    if body is None:
        raise NotFound(missing)
    if code == status.HTTP_202_ACCEPTED:
        return Response(pending(body) if pending else body, status=code)
    return Response(ready(body) if ready else body, status=code)
