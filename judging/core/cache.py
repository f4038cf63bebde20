"""The shared cache, or this process's memory while the shared one cannot be reached.

What the service keeps in Django's default cache (in production Redis, by default the broker's;
see ``CACHES`` in the settings) saves work, and none of it may stop a request: judging went on
without Redis before anything was cached there, and must still. ``cache_get``, ``cache_set`` and
``cache_delete`` go to the shared cache; when it raises (Redis stopped, unreachable, timing out
after ``POOLJUDGE_CACHE_TIMEOUT_SECONDS``), the error is logged and the call goes to a cache in
this process's memory instead, so that a value is computed again (a miss) rather than the request
failing. After an error the process leaves the shared cache alone for
``POOLJUDGE_CACHE_RETRY_SECONDS`` (one failed attempt per process per period, not one per call),
then tries it again.

A value set or deleted while the shared cache was unreachable reached this process only: what the
other processes see may be as old as the entry's own timeout, which is how long a caller must be
ready to read a stale value anyway. (The sign-in counters, ``login_throttle``, fail open instead:
counting per process would let each worker count on its own.)
"""

from __future__ import annotations

import logging
import time
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.core.cache.backends.locmem import LocMemCache

log = logging.getLogger(__name__)

_local = LocMemCache("pooljudge-local-fallback", {"OPTIONS": {"MAX_ENTRIES": 1000}})
# until when (time.monotonic()) each shared cache, by its location, is left alone
_down_until: dict[str, float] = {}


def _location() -> str:
    return str(settings.CACHES["default"].get("LOCATION", ""))


def _shared_usable() -> bool:
    return time.monotonic() >= _down_until.get(_location(), 0.0)


def _shared_failed(doing: str, key: str) -> None:
    retry: int = settings.POOLJUDGE_CACHE.cache_retry_seconds
    if _shared_usable():  # logged once per period, not once per call
        log.warning(
            "the shared cache is unreachable (%s %s): this process uses its own memory for the "
            "next %d s",
            doing,
            key,
            retry,
            exc_info=True,
        )
    _down_until[_location()] = time.monotonic() + retry


def cache_get(key: str) -> Any:
    """The cached value, or None (not cached, or the cache could not be read)."""
    if _shared_usable():
        try:
            return cache.get(key)
        except Exception:
            _shared_failed("reading", key)
    return _local.get(key)


def cache_set(key: str, value: Any, timeout: int) -> None:
    """Keep ``value`` for ``timeout`` seconds, in the shared cache or, while it cannot be
    reached, in this process's memory."""
    if _shared_usable():
        try:
            cache.set(key, value, timeout)
            return
        except Exception:
            _shared_failed("writing", key)
    _local.set(key, value, timeout)


def cache_delete(key: str) -> None:
    """Forget ``key`` here and, if it can be reached, in the shared cache (tried even while it
    is thought down: a forgotten value is what makes a change visible)."""
    _local.delete(key)
    try:
        cache.delete(key)
    except Exception:
        _shared_failed("deleting", key)
