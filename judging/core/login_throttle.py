"""Failed sign-ins, counted per client address and per username, in the shared cache.

Every failed ``authenticate()`` (the login page, the admin's login, the API's token endpoint) is
counted twice: for the address it came from and for the username it tried. Once either count
reaches its limit within the window (``POOLJUDGE_LOGIN_MAX_FAILURES_PER_IP``,
``POOLJUDGE_LOGIN_MAX_FAILURES_PER_USER``, ``POOLJUDGE_LOGIN_WINDOW_SECONDS``), every sign-in for
that address or username is refused, the right password too, until the window that started with
the first failure ends (429 with ``Retry-After``). A successful sign-in clears its username's
count (not its address's). Successful sign-ins are not counted: a class of annotators behind one
address all log in at nine.

The counters live in Django's default cache, which must be shared by every web worker in
production (Redis, or the database cache; see ``CACHES`` in the settings): with a per-process
cache each gunicorn worker would count on its own. An unreachable cache does not stop sign-ins:
the failure is logged and the attempt goes on unthrottled.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from typing import Any

from django.conf import settings
from django.core.cache import cache

log = logging.getLogger(__name__)

_PREFIX = "pooljudge:login-failures"


def now() -> float:
    return time.time()


def client_address(request: Any) -> str:
    """The client's address: ``REMOTE_ADDR``, or, behind ``POOLJUDGE_TRUSTED_PROXY_HOPS``
    reverse proxies, the address the outermost trusted one saw (from ``X-Forwarded-For``)."""
    meta = request.META
    hops: int = settings.POOLJUDGE_TRUSTED_PROXY_HOPS
    if hops:
        forwarded = [a.strip() for a in meta.get("HTTP_X_FORWARDED_FOR", "").split(",")]
        forwarded = [a for a in forwarded if a]
        if len(forwarded) >= hops:
            return str(forwarded[-hops])
    return str(meta.get("REMOTE_ADDR") or "unknown")


def _keys(request: Any, username: str) -> list[tuple[str, int]]:
    name = hashlib.sha256(username.strip().casefold().encode()).hexdigest()
    address = hashlib.sha256(client_address(request).encode()).hexdigest()
    return [
        (f"{_PREFIX}:user:{name}", settings.POOLJUDGE_LOGIN_MAX_FAILURES_PER_USER),
        (f"{_PREFIX}:ip:{address}", settings.POOLJUDGE_LOGIN_MAX_FAILURES_PER_IP),
    ]


def retry_after(request: Any, username: str) -> int | None:
    """Seconds until the address or username may try again, or None if it may now."""
    try:
        counts = cache.get_many([key for key, _ in _keys(request, username)])
    except Exception:
        log.exception("the cache is unreachable: sign-in attempts are not throttled")
        return None
    wait = 0.0
    for key, limit in _keys(request, username):
        entry = counts.get(key)
        if entry is None:
            continue
        failures, window_ends = entry
        if failures >= limit and window_ends > now():
            wait = max(wait, window_ends - now())
    return max(1, math.ceil(wait)) if wait > 0 else None


def record_failure(request: Any, username: str) -> None:
    """Count one failed sign-in for the address and the username."""
    window: int = settings.POOLJUDGE_LOGIN_WINDOW_SECONDS
    try:
        for key, _ in _keys(request, username):
            # (failures, end of the window that the first failure started); get-then-set: two
            # failures at the very same moment may count once, which a brute force cannot use.
            entry = cache.get(key)
            if entry is None or entry[1] <= now():
                entry = (0, now() + window)
            failures, window_ends = entry
            cache.set(key, (failures + 1, window_ends), max(1, math.ceil(window_ends - now())))
    except Exception:
        log.exception("the cache is unreachable: a failed sign-in was not counted")


def record_success(request: Any, username: str) -> None:
    """A successful sign-in forgets its username's failures."""
    try:
        cache.delete(_keys(request, username)[0][0])
    except Exception:
        log.exception("the cache is unreachable: a sign-in's failures were not cleared")


def message(wait: int) -> str:
    when = f"{math.ceil(wait / 60)} minutes" if wait >= 120 else f"{wait} seconds"
    return (
        "Too many failed sign-in attempts for this account or from this address; "
        f"try again in {when}."
    )


def on_login_failed(
    sender: Any, credentials: dict[str, Any], request: Any = None, **_: Any
) -> None:
    """``user_login_failed`` receiver: every failed ``authenticate()`` with a request counts."""
    if request is not None:
        record_failure(request, str(credentials.get("username", "")))


def on_logged_in(sender: Any, request: Any = None, user: Any = None, **_: Any) -> None:
    """``user_logged_in`` receiver: a session sign-in clears its username's failures."""
    if request is not None and user is not None:
        record_success(request, user.get_username())
