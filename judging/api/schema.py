"""drf-spectacular hooks."""

from __future__ import annotations

from typing import Any


def drop_alias_paths(endpoints: list[tuple[Any, ...]], **kwargs: Any) -> list[tuple[Any, ...]]:
    """Leave out aliases that exist for scripts (``/export`` beside ``/export/``)."""
    return [e for e in endpoints if not e[0].endswith("/export")]
