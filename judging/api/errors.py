"""The one place where domain errors become HTTP answers."""

from __future__ import annotations

from typing import Any

from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from judging.core.errors import DomainError


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, DomainError):
        return Response(exc.as_dict(), status=exc.status)
    response = drf_exception_handler(exc, context)
    if response is not None and response.status_code == status.HTTP_413_REQUEST_ENTITY_TOO_LARGE:
        response.data = {"error": "too_large", "detail": str(exc)}
    return response
