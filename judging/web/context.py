from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from judging.core.roles import is_admin, is_annotator, is_researcher


def roles(request: HttpRequest) -> dict[str, Any]:
    user = request.user
    return {
        "is_admin": is_admin(user),
        "is_researcher": is_researcher(user),
        "is_annotator": is_annotator(user),
    }
