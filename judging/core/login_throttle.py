"""Failed sign-ins, counted so that wrong passwords sent by anybody cannot lock a person out.

Every failed ``authenticate()`` (the login page, the admin's login, the API's token endpoint) is
counted three times, in the shared cache:

- per **username and address**: ``POOLJUDGE_LOGIN_MAX_FAILURES_PER_USER_AND_IP`` failures within
  ``POOLJUDGE_LOGIN_WINDOW_SECONDS`` (the window starts with the first of them) lock that username
  from that address until the window ends. Guessing from one place; it holds for everybody.
- per **address**: ``POOLJUDGE_LOGIN_MAX_FAILURES_PER_IP`` failures from one address, whatever
  the usernames, within the window lock the address until the window ends (password spraying).
- per **username**: ``POOLJUDGE_LOGIN_MAX_FAILURES_PER_USER`` failures for one username, from any
  addresses, lock it for ``POOLJUDGE_LOGIN_LOCK_SECONDS``, twice as long at each further lock, at
  most ``POOLJUDGE_LOGIN_MAX_LOCK_SECONDS``: guessing from many addresses slows to that many
  guesses per longest lock. The doubling starts over once the username has gone a window without
  a failure after its last lock ended. Failures while the username is locked do not lengthen it.

A **known address** is one that signed in to the account successfully within
``POOLJUDGE_LOGIN_KNOWN_ADDRESS_SECONDS`` (the pair is recorded; the address, as for every count,
is ``client_address``). It is held by its own count for the pair only: failures from other
addresses, and other usernames' failures from the same address, never lock the account out of
the addresses it signs in from. Anybody can send wrong passwords for the admin's username, which
locks it for unknown addresses (with a growing lock), not for the admin's own.

While a lock holds, the right password is refused too (429 with ``Retry-After``), or a lock would
tell a guesser which of their guesses was right. A successful sign-in clears its pair's count and
records the pair as known; the username's and the address's counts stay (an attacker elsewhere
keeps their lock). Successful sign-ins are not counted: a class behind one address logs in at nine.

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
from typing import Any, NamedTuple

from django.conf import settings
from django.core.cache import cache

log = logging.getLogger(__name__)

_PREFIX = "pooljudge:login-failures"


class _Keys(NamedTuple):
    pair: str  # (failures, end of the window)
    address: str  # (failures, end of the window)
    username: str  # (failures, end of the window, locks so far, end of the lock, forget at)
    known: str  # until when the address is known for the username


def now() -> float:
    return time.time()


def client_address(request: Any) -> str:
    """The client's address: ``REMOTE_ADDR``, or, behind ``POOLJUDGE_TRUSTED_PROXY_HOPS``
    reverse proxies, the address the outermost trusted one saw (from ``X-Forwarded-For``)."""
    meta = request.META
    hops: int = settings.POOLJUDGE_SECURITY.trusted_proxy_hops
    if hops:
        forwarded = [a.strip() for a in meta.get("HTTP_X_FORWARDED_FOR", "").split(",")]
        forwarded = [a for a in forwarded if a]
        if len(forwarded) >= hops:
            return str(forwarded[-hops])
    return str(meta.get("REMOTE_ADDR") or "unknown")


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def _keys(request: Any, username: str) -> _Keys:
    name = username.strip().casefold()
    address = client_address(request)
    return _Keys(
        pair=f"{_PREFIX}:pair:{_digest(name, address)}",
        address=f"{_PREFIX}:ip:{_digest(address)}",
        username=f"{_PREFIX}:user:{_digest(name)}",
        known=f"{_PREFIX}:known:{_digest(name, address)}",
    )


def lock_seconds(locks: int) -> int:
    """How long the username's ``locks``-th lock lasts: the first ``POOLJUDGE_LOGIN_LOCK_SECONDS``,
    each next one twice the last, at most ``POOLJUDGE_LOGIN_MAX_LOCK_SECONDS``."""
    base: int = settings.POOLJUDGE_SECURITY.login_lock_seconds
    cap: int = settings.POOLJUDGE_SECURITY.login_max_lock_seconds
    return int(min(cap, base * 2 ** min(max(locks, 1) - 1, 40)))


def _window_wait(entry: Any, limit: int, t: float) -> float:
    if entry is None:
        return 0.0
    failures, window_ends = entry
    return float(window_ends - t) if failures >= limit and window_ends > t else 0.0


def retry_after(request: Any, username: str) -> int | None:
    """Seconds until this username may try again from this address, or None if it may now."""
    keys = _keys(request, username)
    try:
        entries = cache.get_many(list(keys))
    except Exception:
        log.exception("the cache is unreachable: sign-in attempts are not throttled")
        return None
    t = now()
    waits = [
        _window_wait(
            entries.get(keys.pair),
            settings.POOLJUDGE_SECURITY.login_max_failures_per_user_and_ip,
            t,
        )
    ]
    if entries.get(keys.known, 0.0) <= t:
        waits.append(
            _window_wait(
                entries.get(keys.address), settings.POOLJUDGE_SECURITY.login_max_failures_per_ip, t
            )
        )
        locked = entries.get(keys.username)
        if locked is not None:
            waits.append(locked[3] - t)
    wait = max(waits)
    return max(1, math.ceil(wait)) if wait > 0 else None


def _count_in_window(key: str) -> None:
    # (failures, end of the window that the first failure started); get-then-set: two failures
    # at the very same moment may count once, which a brute force cannot use.
    window: int = settings.POOLJUDGE_SECURITY.login_window_seconds
    entry = cache.get(key)
    if entry is None or entry[1] <= now():
        entry = (0, now() + window)
    failures, window_ends = entry
    cache.set(key, (failures + 1, window_ends), max(1, math.ceil(window_ends - now())))


def _count_towards_lock(key: str) -> None:
    window: int = settings.POOLJUDGE_SECURITY.login_window_seconds
    limit: int = settings.POOLJUDGE_SECURITY.login_max_failures_per_user
    t = now()
    entry = cache.get(key)
    if entry is None or entry[4] <= t:
        entry = (0, 0.0, 0, 0.0, 0.0)
    failures, window_ends, locks, locked_until, _ = entry
    if locked_until > t:
        return  # only a known address got this far: it does not lengthen the lock
    if window_ends <= t:
        failures, window_ends = 0, t + window
    failures += 1
    if failures >= limit:
        locks += 1
        locked_until = t + lock_seconds(locks)
        failures, window_ends = 0, t
    # kept (and so the number of locks) until a window passes without a failure after the lock
    forget_at = max(window_ends, locked_until + window)
    entry = (failures, window_ends, locks, locked_until, forget_at)
    cache.set(key, entry, max(1, math.ceil(forget_at - t)))


def record_failure(request: Any, username: str) -> None:
    """Count one failed sign-in for the pair, the address and the username."""
    keys = _keys(request, username)
    try:
        _count_in_window(keys.pair)
        _count_in_window(keys.address)
        _count_towards_lock(keys.username)
    except Exception:
        log.exception("the cache is unreachable: a failed sign-in was not counted")


def record_success(request: Any, username: str) -> None:
    """A successful sign-in forgets its pair's failures and makes the address known."""
    keys = _keys(request, username)
    try:
        cache.delete(keys.pair)
        known: int = settings.POOLJUDGE_SECURITY.login_known_address_seconds
        cache.set(keys.known, now() + known, known)
    except Exception:
        log.exception("the cache is unreachable: a sign-in's address was not recorded")


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
    """``user_logged_in`` receiver: a session sign-in clears its pair and makes it known."""
    if request is not None and user is not None:
        record_success(request, user.get_username())
