"""Messages shown once on the next page (Django's messages framework), in one voice."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest

from judging.core.errors import DomainError


def flash(request: HttpRequest, level: int, text: str) -> None:
    messages.add_message(request, level, text)


def flash_error(request: HttpRequest, exc: Exception, level: int = messages.ERROR) -> None:
    """What went wrong, in the domain error's own words (a bad number: its message)."""
    flash(request, level, exc.message if isinstance(exc, DomainError) else str(exc))
