"""What the client raises: :class:`PooljudgeError` and one subclass per kind of refusal.

Every 4xx and 5xx answer of the service has one shape (``judging/api/errors.py``)::

    {"error": "invalid_input", "detail": "the run file has 2 problem(s); nothing was stored",
     "problems": [{"message": "score 'abc' is not a number", "line": 2}, ...],
     "problem_count": 2, "problems_shown": 2, "source": "bad.run"}

:func:`error_from_response` reads it into the exception for its status, so a caller catches
``PooljudgeError`` for everything or ``InvalidInput``, ``NotFound``, ... for one case.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import requests

__all__ = [
    "AuthenticationError",
    "Conflict",
    "EvaluationFailed",
    "IntegrityError",
    "InvalidInput",
    "NotFound",
    "PermissionDenied",
    "PooljudgeError",
    "PooljudgeTimeout",
    "Problem",
    "RateLimited",
    "error_from_response",
]

_PROBLEMS_IN_MESSAGE = 10


@dataclass(frozen=True)
class Problem:
    """One problem of a refused input: its message and where (a line of the file, or a field
    path such as ``results.q1``)."""

    message: str
    line: int | None = None
    location: str | None = None

    def __str__(self) -> str:
        where = f"line {self.line}" if self.line else self.location
        return f"{where}: {self.message}" if where else self.message


class PooljudgeError(Exception):
    """A request the service refused (any non-2xx answer), or one that never got an answer
    (``status`` None). ``code`` and ``detail`` are the answer's ``error`` and ``detail``;
    ``problems`` lists what was wrong with the input, each with its line or field;
    ``body`` is the whole decoded answer (a 409 of the regression check carries each run's
    evaluation state there)."""

    def __init__(
        self,
        detail: str,
        *,
        status: int | None = None,
        code: str = "error",
        method: str = "",
        url: str = "",
        problems: tuple[Problem, ...] = (),
        problem_count: int | None = None,
        body: Mapping[str, Any] | None = None,
    ) -> None:
        self.detail = detail
        self.status = status
        self.code = code
        self.method = method
        self.url = url
        self.problems = problems
        self.problem_count = len(problems) if problem_count is None else problem_count
        self.body: Mapping[str, Any] = body or {}
        super().__init__(self._message())

    def _message(self) -> str:
        head = f"{self.status} {self.code}" if self.status is not None else self.code
        where = f" ({self.method} {self.url})" if self.url else ""
        lines = [f"{head}: {self.detail}{where}"]
        lines += [f"  {p}" for p in self.problems[:_PROBLEMS_IN_MESSAGE]]
        hidden = self.problem_count - min(len(self.problems), _PROBLEMS_IN_MESSAGE)
        if hidden > 0:
            lines.append(f"  ... and {hidden} more problem(s)")
        return "\n".join(lines)


class InvalidInput(PooljudgeError):
    """400: the input was refused; ``problems`` names every problem, nothing was stored."""


class AuthenticationError(PooljudgeError):
    """401: no token, a bad or expired one, or (at login) a wrong username or password."""


class PermissionDenied(PooljudgeError):
    """403: your role may not do this."""


class NotFound(PooljudgeError):
    """404: no such object among those you may see (or a computation never asked for)."""


class Conflict(PooljudgeError):
    """409: refused by the stored state (a tag already used, an evaluation missing, ...)."""


class RateLimited(PooljudgeError):
    """429: too many requests; ``retry_after`` is the seconds the service asks you to wait."""

    retry_after: float | None = None


class EvaluationFailed(PooljudgeError):
    """The service stored a failed evaluation; ``detail`` is its error."""


class IntegrityError(PooljudgeError):
    """A download does not hash to the sha256 the service names for it."""


class PooljudgeTimeout(PooljudgeError, TimeoutError):
    """A wait (an evaluation, a regression check) that did not finish in time."""


_BY_STATUS: dict[int, type[PooljudgeError]] = {
    400: InvalidInput,
    401: AuthenticationError,
    403: PermissionDenied,
    404: NotFound,
    409: Conflict,
    429: RateLimited,
}


def _problems(raw: Any) -> tuple[Problem, ...]:
    if not isinstance(raw, list):
        return ()
    out = []
    for item in raw:
        if isinstance(item, Mapping):
            line = item.get("line")
            location = item.get("location")
            out.append(
                Problem(
                    message=str(item.get("message", "")),
                    line=line if isinstance(line, int) and line > 0 else None,
                    location=str(location) if location else None,
                )
            )
    return tuple(out)


def error_from_response(response: requests.Response) -> PooljudgeError:
    """The exception for a non-2xx ``response``, read from the service's one error shape (or,
    from something else answering, from its status and the start of its text)."""
    try:
        body = response.json()
    except ValueError:
        body = None
    status = response.status_code
    cls = _BY_STATUS.get(status, PooljudgeError)
    method = (response.request.method or "") if response.request is not None else ""
    if isinstance(body, Mapping) and "error" in body:
        count = body.get("problem_count")
        error = cls(
            str(body.get("detail") or body.get("error")),
            status=status,
            code=str(body["error"]),
            method=method,
            url=response.url,
            problems=_problems(body.get("problems")),
            problem_count=count if isinstance(count, int) else None,
            body=body,
        )
    else:
        text = response.text.strip()[:300] or response.reason or "no answer body"
        error = cls(text, status=status, code="http_error", method=method, url=response.url)
    if isinstance(error, RateLimited):
        try:
            error.retry_after = float(response.headers.get("Retry-After", ""))
        except ValueError:
            error.retry_after = None
    return error
