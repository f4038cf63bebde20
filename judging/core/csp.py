"""The Content-Security-Policy header on every answer (``POOLJUDGE_CONTENT_SECURITY_POLICY``).

The pages carry no inline script, no inline event handler and no inline style: their scripts and
styles are static files of our own origin (``judging/static/pooljudge``), so the policy needs no
``'unsafe-inline'`` and no nonces. The Swagger UI page is drf-spectacular's split view (its
initialiser is a script of ours too) and Django's admin has no inline script.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        policy: str = settings.POOLJUDGE_SECURITY.content_security_policy
        if policy and "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = policy
        return response
