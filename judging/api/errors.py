"""The one place where errors become HTTP answers, all of one shape.

Every 4xx answer of the API is ``{"error": code, "detail": message}``, plus, when there are
problems, ``"problems": [{"message", "line"?, "location"?}, ...]``, ``"problem_count"`` and
``"problems_shown"`` (``judging.core.errors.InvalidInput.as_dict``). Domain errors carry their
own code and status; DRF's and Django's errors (serializer validation, authentication,
permissions, 404, 405, 429, parse errors, an oversized body) are put in the same shape here,
and so is a reader error that reached a view unconverted, so it answers 400, never 500.
Django's own answers under ``/api/`` (a URL that matches no view, a server error) have it too
(``not_found``, ``server_error``: the URL conf's handlers); the pages keep Django's.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.db.models import ProtectedError, RestrictedError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views import defaults
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import exception_handler as drf_exception_handler

from judging.assessments.immutability import is_immutability_error, message_of
from judging.core import uploads
from judging.core.errors import Conflict, DomainError, InvalidInput, RateLimited, TooLarge
from metrics.problems import InvalidInput as ReaderError
from metrics.problems import Problem


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, ReaderError):
        exc = uploads.invalid_input(exc, "the input")
    elif isinstance(exc, RequestDataTooBig):
        exc = TooLarge(f"the request body is too large ({exc})")
    elif isinstance(exc, exceptions.ValidationError):
        exc = _invalid_input(exc.detail)
    elif isinstance(exc, ProtectedError | RestrictedError):
        exc = Conflict(f"refused: {_protected(exc)}")
    elif is_immutability_error(exc):
        exc = Conflict(f"refused by the database: {message_of(exc)}")
    if isinstance(exc, DomainError):
        headers = {"Retry-After": str(exc.retry_after)} if isinstance(exc, RateLimited) else None
        return Response(exc.as_dict(), status=exc.status, headers=headers)
    # DRF turns Http404 and Django's PermissionDenied into its own and sets the headers
    # (WWW-Authenticate, Retry-After); only the body is ours.
    response = drf_exception_handler(exc, context)
    if response is not None:
        response.data = {"error": _code(exc), "detail": _message(response.data)}
    return response


def _protected(exc: ProtectedError | RestrictedError) -> str:
    """'it would delete 98 qrels entries, 98 judgments': what the deletion would take with it."""
    counts: dict[str, int] = {}
    objects = exc.protected_objects if isinstance(exc, ProtectedError) else exc.restricted_objects
    for obj in objects:
        name = str(obj._meta.verbose_name_plural)
        counts[name] = counts.get(name, 0) + 1
    kept = ", ".join(f"{n} {name}" for name, n in sorted(counts.items()))
    return f"it would delete {kept}, which are kept (stored qrels and the judgments under them)"


def _code(exc: Exception) -> str:
    if isinstance(exc, Http404):
        return "not_found"
    if isinstance(exc, DjangoPermissionDenied):
        return "permission_denied"
    if isinstance(exc, exceptions.AuthenticationFailed):  # one code for both 401s
        return "not_authenticated"
    if isinstance(exc, exceptions.APIException):  # DRF's codes are ours: not_found, parse_error...
        return str(exc.default_code)
    return "error"


def _message(data: Any) -> str:
    if isinstance(data, dict) and "detail" in data:
        return str(data["detail"])
    return str(data)


def _invalid_input(detail: Any) -> InvalidInput:
    """A serializer's errors as one problem per message, located by field path."""
    problems = [
        Problem.at(location, message) if location else Problem(0, message)
        for location, message in _flatten(detail, "")
    ]
    if len(problems) == 1:
        message = str(problems[0])  # "grade: A valid integer is required."
    else:
        message = f"the request has {len(problems)} problem(s)"
    return InvalidInput(
        message, problems[: settings.POOLJUDGE_UPLOADS.max_problems], total=len(problems)
    )


def _flatten(detail: Any, path: str) -> list[tuple[str, str]]:
    """``(path, message)`` pairs: ``results[3].docid``; errors not tied to a field have no path."""
    if isinstance(detail, dict):
        out: list[tuple[str, str]] = []
        for key, value in detail.items():
            if key == api_settings.NON_FIELD_ERRORS_KEY:
                out += _flatten(value, path)
            elif isinstance(key, int):  # a ListField's errors, by index
                out += _flatten(value, f"{path}[{key}]")
            else:
                out += _flatten(value, f"{path}.{key}" if path else str(key))
        return out
    if isinstance(detail, list):
        if all(isinstance(item, str) for item in detail):
            return [(path, str(item)) for item in detail]
        out = []
        for index, item in enumerate(detail):
            if item:  # a list serializer answers {} for the items that are valid
                out += _flatten(item, f"{path}[{index}]")
        return out
    return [(path, str(detail))]


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """A URL that matches no view (``handler404``): under /api/, an Error body."""
    if not _is_api(request):
        return defaults.page_not_found(request, exception)
    return JsonResponse(
        {"error": "not_found", "detail": f"no such URL: {request.path}"}, status=404
    )


def server_error(request: HttpRequest) -> HttpResponse:
    """An unexpected failure (``handler500``): under /api/, an Error body that says no more."""
    if not _is_api(request):
        return defaults.server_error(request)
    return JsonResponse(
        {"error": "server_error", "detail": "the server failed; the failure is logged"},
        status=500,
    )


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """A request Django refused before any view (``handler400``: too many form fields or
    files, a malformed body or Host): under /api/, an Error body; elsewhere the site's page."""
    if not _is_api(request):
        return defaults.bad_request(request, exception)
    return JsonResponse(
        {"error": "bad_request", "detail": f"the request was refused: {exception}"[:500]},
        status=400,
    )


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    """A refusal outside the API's views (``handler403``): under /api/, an Error body."""
    if not _is_api(request):
        return defaults.permission_denied(request, exception)
    return JsonResponse({"error": "permission_denied", "detail": str(exception)}, status=403)


def _is_api(request: HttpRequest) -> bool:
    return request.path_info.startswith("/api/")
