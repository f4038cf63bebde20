"""Sign-in pages that refuse attempts once an address or a username has failed too often.

The count is kept by ``judging.core.login_throttle`` (every failed ``authenticate()`` counts); these
forms ask it before they authenticate, so that even the right password is refused while the lock
lasts, and the page answers 429 with ``Retry-After`` and says why.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponseBase

from judging.core import login_throttle

_WAIT = "_pooljudge_login_retry_after"


class ThrottledLoginMixin:
    request: HttpRequest | None
    cleaned_data: dict[str, Any]

    def clean(self) -> dict[str, Any]:
        if self.request is not None:
            username = str(self.cleaned_data.get("username") or "")
            wait = login_throttle.retry_after(self.request, username)
            if wait:
                setattr(self.request, _WAIT, wait)
                raise ValidationError(login_throttle.message(wait), code="throttled")
        return super().clean()  # type: ignore[misc, no-any-return]


class LoginForm(ThrottledLoginMixin, AuthenticationForm):
    pass


class AdminLoginForm(ThrottledLoginMixin, AdminAuthenticationForm):
    pass


def answer_429_when_locked(
    view: Callable[..., HttpResponseBase],
) -> Callable[..., HttpResponseBase]:
    """The login view's page, as 429 with ``Retry-After`` when its form refused a locked attempt."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        response = view(request, *args, **kwargs)
        wait = getattr(request, _WAIT, None)
        if wait:
            response.status_code = 429
            response["Retry-After"] = str(wait)
        return response

    return wrapped
