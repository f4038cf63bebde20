"""Domain errors. Services raise these; ``judging.api.errors`` maps them to HTTP answers."""

from __future__ import annotations

from typing import Any

from metrics.problems import Problem


class DomainError(Exception):
    """Base of the errors a service raises on purpose."""

    status = 400
    code = "invalid"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def as_dict(self) -> dict[str, Any]:
        return {"error": self.code, "detail": self.message}


class InvalidInput(DomainError):
    """Input that fails validation; lists every problem (capped) and the total count.

    The service-level error (400). Readers raise ``metrics.problems.InvalidInput`` instead;
    ``judging.core.uploads.reading`` turns that into this.
    """

    code = "invalid_input"

    def __init__(
        self,
        message: str,
        problems: list[Problem],
        *,
        total: int | None = None,
        source: str | None = None,
    ) -> None:
        super().__init__(message)
        self.problems = problems
        self.total = len(problems) if total is None else total
        self.source = source

    def as_dict(self) -> dict[str, Any]:
        out = super().as_dict()
        out["problems"] = [p.as_dict() for p in self.problems]
        out["problem_count"] = self.total
        out["problems_shown"] = len(self.problems)
        if self.source:
            out["source"] = self.source
        return out


class TooLarge(DomainError):
    status = 413
    code = "too_large"


class Conflict(DomainError):
    status = 409
    code = "conflict"


class IntegrityFailure(Conflict):
    """Stored data that fails its own check (a qrels version whose rows no longer hash to its
    stored hash): refused rather than served, and logged."""

    code = "integrity_check_failed"


class NotFound(DomainError):
    status = 404
    code = "not_found"


class NotAllowed(DomainError):
    status = 403
    code = "permission_denied"


class RateLimited(DomainError):
    """Too many requests of one kind by one user; ``retry_after`` seconds until the next may go."""

    status = 429
    code = "throttled"

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = max(1, int(retry_after))
