"""Whole numbers (and short texts, yes/no) from query strings, forms, URL paths and paging,
checked the same way everywhere: the API and the pages both read them here.

A value that is not a plain decimal integer in range is a 400 naming the parameter (never a
``ValueError`` or an ``OverflowError`` that becomes a 500). Database ids are at most
``MAX_ID`` (a signed 64-bit integer, what the primary keys hold).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from judging.core.errors import InvalidInput
from metrics.problems import Problem

MAX_ID = 2**63 - 1


def parse_int(
    raw: Any,
    name: str,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    what: str = "a whole number",
) -> int:
    """``raw`` (a string of ASCII digits, or an int) as an int in ``[minimum, maximum]``."""
    if isinstance(raw, bool):
        raise _bad(name, f"must be {what}, not {raw!r}")
    if isinstance(raw, int):
        value = raw
    else:
        text = str(raw).strip()
        digits = text[1:] if text[:1] in "+-" else text
        # at most 20 digits: any longer is out of every range we accept, and int() of a very long
        # string is slow
        if not (digits.isascii() and digits.isdigit()) or len(digits) > 20:
            raise _bad(name, f"must be {what}, not {_shown(text)}")
        value = int(text)
    if minimum is not None and value < minimum:
        raise _bad(name, f"must be at least {minimum}, not {value}")
    if maximum is not None and value > maximum:
        raise _bad(name, f"must be at most {maximum}, not {value}")
    return value


def query_int(
    params: Mapping[str, Any],
    name: str,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    what: str = "a whole number",
) -> int | None:
    """The query parameter as an int; None when it is absent or empty."""
    raw = params.get(name)
    if raw is None or str(raw).strip() == "":
        return None
    return parse_int(raw, name, minimum=minimum, maximum=maximum, what=what)


def query_text(params: Mapping[str, Any], name: str, *, max_length: int = 255) -> str | None:
    """A short text query parameter (a topic id, ...); None when absent or empty. A NUL byte
    (which PostgreSQL refuses in any query) or an over-long value is a 400."""
    raw = params.get(name)
    if raw is None or raw == "":
        return None
    text = str(raw)
    if "\x00" in text:
        raise _bad(name, "must not contain a NUL character")
    if len(text) > max_length:
        raise _bad(name, f"must be at most {max_length} characters, not {len(text)}")
    return text


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def query_bool(params: Mapping[str, Any], name: str, *, default: bool = False) -> bool:
    """A yes/no query parameter (``1/0``, ``true/false``, ``yes/no``, ``on/off``); absent or
    empty: ``default``. ``?relevance=false`` means false, not "a non-empty string"."""
    raw = params.get(name)
    if raw is None or str(raw).strip() == "":
        return default
    text = str(raw).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise _bad(name, f"must be true or false (1/0, yes/no), not {_shown(str(raw))}")


def path_id(raw: Any, name: str = "id") -> int:
    """An object id from the URL (``/leases/{id}/``): a positive 64-bit integer."""
    return parse_int(raw, name, minimum=1, maximum=MAX_ID, what="an id (a positive whole number)")


def _shown(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:40] + "...")


def _bad(name: str, message: str) -> InvalidInput:
    return InvalidInput(f"{name}: {message}", [Problem.at(name, message)])
