"""Typed readers for settings from the environment.

Every knob of the service comes from an environment variable read through one of these helpers.
A malformed value raises ``ImproperlyConfigured`` naming the variable and what was expected, so a
bad deployment fails at start-up instead of misbehaving later.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default).strip()


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use 1/0, true/false, yes/no)")


def env_int(
    name: str, default: int, *, minimum: int | None = None, maximum: int | None = None
) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={value} must be at least {minimum}")
    if maximum is not None and value > maximum:
        raise ImproperlyConfigured(f"{name}={value} must be at most {maximum}")
    return value


_SIZE_UNITS = {
    "": 1,
    "b": 1,
    "k": 1024,
    "kb": 1024,
    "m": 1024**2,
    "mb": 1024**2,
    "g": 1024**3,
    "gb": 1024**3,
}


def env_bytes(name: str, default: int) -> int:
    """A size in bytes; accepts plain integers or a unit suffix (``200MB``, ``1g``)."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    text = raw.strip().lower().replace(" ", "")
    digits = text.rstrip("kmgb")
    unit = text[len(digits) :]
    if not digits.isdigit() or unit not in _SIZE_UNITS:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a size (examples: 1048576, 200MB, 1GB)")
    return int(digits) * _SIZE_UNITS[unit]


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return list(default)
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_url(name: str, default: str) -> str:
    """A site's address, ``http(s)://host[:port][/path]``, without a trailing slash."""
    raw = os.environ.get(name)
    value = default if raw is None or raw.strip() == "" else raw.strip()
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        raise ImproperlyConfigured(
            f"{name}={value!r} is not a site address (example: https://pooljudge.example.org)"
        )
    return value.rstrip("/")


def database_config(url: str, *, base_dir: Path) -> dict[str, Any]:
    """Translate a ``DATABASE_URL`` into a Django ``DATABASES['default']`` entry.

    Supported: ``sqlite:///relative/path.sqlite3``, ``sqlite:////absolute/path``,
    ``postgres://user:pass@host:port/name?sslmode=require`` (also ``postgresql://``).
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme == "sqlite":
        raw_path = unquote(parts.path)
        if raw_path in ("", "/"):
            raise ImproperlyConfigured(f"DATABASE_URL={url!r} names no SQLite file")
        path = Path(raw_path[1:]) if raw_path.startswith("/") else Path(raw_path)
        if not path.is_absolute():
            path = base_dir / path
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(path),
            "OPTIONS": {
                "timeout": 30,
                "transaction_mode": "IMMEDIATE",
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
        }
    if scheme in ("postgres", "postgresql", "pgsql"):
        name = unquote(parts.path.lstrip("/"))
        if not name:
            raise ImproperlyConfigured(f"DATABASE_URL={url!r} names no database")
        options: dict[str, Any] = dict(parse_qsl(parts.query))
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": name,
            "USER": unquote(parts.username or ""),
            "PASSWORD": unquote(parts.password or ""),
            "HOST": parts.hostname or "",
            "PORT": str(parts.port or ""),
            "CONN_MAX_AGE": 60,
            "CONN_HEALTH_CHECKS": True,
            "OPTIONS": options,
        }
    raise ImproperlyConfigured(
        f"DATABASE_URL={url!r}: unsupported scheme {scheme!r} (use sqlite:/// or postgres://)"
    )


def cache_config(url: str, *, timeout: float = 1.0) -> dict[str, Any]:
    """Translate ``POOLJUDGE_CACHE_URL`` into a Django ``CACHES['default']`` entry.

    ``redis://host:6379/1`` (or ``rediss://``): Redis, shared by every worker, given up on after
    ``timeout`` seconds of connecting or waiting for an answer (``judging.core.cache`` then uses
    the process's memory); ``db``: the database cache (table ``pooljudge_cache``, made by
    ``manage.py createcachetable``), shared too; ``locmem``: memory of one process (the embedded
    default and the tests).
    """
    if url.startswith(("redis://", "rediss://")):
        return {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": url,
            "KEY_PREFIX": "pooljudge",
            "OPTIONS": {"socket_connect_timeout": timeout, "socket_timeout": timeout},
        }
    if url == "db":
        return {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": "pooljudge_cache",
        }
    if url == "locmem":
        return {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    raise ImproperlyConfigured(
        f"POOLJUDGE_CACHE_URL={url!r}: expected redis://host:port/db, rediss://..., db or locmem"
    )
