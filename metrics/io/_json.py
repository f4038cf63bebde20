"""Checks shared by the JSON-lines readers (answer runs, nugget banks): what a JSON value is, for
a message; whether a string can be stored; and a hook that names every key given twice."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["kind_of", "no_twice", "text_problem"]


def kind_of(value: Any) -> str:
    """What a JSON value is, for a message (None: the field is missing or null)."""
    if value is None:
        return "missing (or null)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"the number {value!r}"
    return {int: "an integer", str: "a string", list: "a list"}.get(type(value), "an object")


def text_problem(value: str) -> str | None:
    """Why ``value`` cannot be stored as text (a NUL, a lone surrogate), or None."""
    if "\x00" in value:
        return "holds a NUL character"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "holds a lone surrogate (not a character)"
    return None


def no_twice(report: Callable[[str], None]) -> Callable[[list[tuple[str, Any]]], dict[str, Any]]:
    """A ``json.loads`` ``object_pairs_hook`` that calls ``report(key)`` for every key given
    twice in one object (the first value is kept)."""

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                report(key)
            else:
                out[key] = value
        return out

    return hook
