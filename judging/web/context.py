from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from judging.core.roles import is_admin, is_annotator, is_researcher


def roles(request: HttpRequest) -> dict[str, Any]:
    # an error page may be drawn for a request refused before the authentication middleware
    # ran (a 400 for a bad Host header): no user then, so no role
    user = getattr(request, "user", None)
    if user is None:
        return {"is_admin": False, "is_researcher": False, "is_annotator": False}
    return {
        "is_admin": is_admin(user),
        "is_researcher": is_researcher(user),
        "is_annotator": is_annotator(user),
    }
