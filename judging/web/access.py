"""Who may open the judging's management pages (``/manage/...``): admins (staff).

Anyone signed out is sent to the site's sign-in page; a signed-in user without the role gets the
site's 403 page, saying who they are signed in as, as on every other page. (Django's
``staff_member_required`` sent them to the admin's login form instead, which told a signed-in
researcher they were "not authorized" and offered to sign in as someone else.)"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponseBase

from judging.core.roles import is_admin

View = Callable[..., HttpResponseBase]


def admin_required(view: View) -> View:
    """``view`` for admins: signed out, to the sign-in page; otherwise without the role, 403."""

    @login_required
    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not is_admin(request.user):
            raise PermissionDenied("the judging's management pages are for admins")
        return view(request, *args, **kwargs)

    return wrapped
