"""Pooljudge's own system checks (``manage.py check``; ``--deploy`` for the production ones)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core import checks

from judging.core.secret_key import HOW_TO_GENERATE, secret_key_problem


def secret_key_check(app_configs: Any = None, **_: Any) -> list[checks.CheckMessage]:
    """E001: the secret key is a placeholder or weak (start-up refuses it with DEBUG off; this
    names it for a deployment still being prepared with DEBUG on)."""
    problem = secret_key_problem(settings.SECRET_KEY)
    if problem is None:
        return []
    return [
        checks.Error(
            f"DJANGO_SECRET_KEY is unfit for production: {problem}.",
            hint=f"Set DJANGO_SECRET_KEY to a new random value, e.g. from: {HOW_TO_GENERATE}",
            id="pooljudge.E001",
        )
    ]


def shared_cache_check(app_configs: Any = None, **_: Any) -> list[checks.CheckMessage]:
    """W001: sign-in throttling counts in the cache; a per-process cache does not share them."""
    backend = settings.CACHES["default"]["BACKEND"]
    if backend.endswith(("locmem.LocMemCache", "dummy.DummyCache")):
        return [
            checks.Warning(
                "The default cache is per process: each web worker counts failed sign-ins on its "
                "own (and a dummy cache counts nothing).",
                hint="Set POOLJUDGE_CACHE_URL to redis://... or db (the database cache, after "
                "manage.py createcachetable).",
                id="pooljudge.W001",
            )
        ]
    return []


def register() -> None:
    checks.register(secret_key_check, checks.Tags.security, deploy=True)
    checks.register(shared_cache_check, checks.Tags.security, checks.Tags.caches, deploy=True)
