"""How every page writes a number (``{% load pj_format %}``), so that the wording rule holds in
one place: no ``nan``, ``None``, blank or ``0.0000`` p-value on any page, and every percentage
says of what.

- ``{{ v|num:4 }}``: the value with 4 decimals; a missing or non-finite value is an explained
  dash (``<span class="na" title="not enough data">—</span>``), never blank.
- ``{{ v|signed:4 }}``: the same with its sign (``+0.0513``, ``-0.0195``).
- ``{{ p|pvalue }}``: ``< 0.0001`` below it, ``not enough data`` when there is none.
- ``{{ v|pct:"the run's own score" }}``: ``7.0%`` in a ``<span title="% of the run's own
  score">``; ``{{ v|pct_of:"the run's own score" }}`` writes the words out: ``7.0% of the run's
  own score``. Checked by tests/test_page_wording.py: a percentage on a page is followed by
  "of ..." or sits in an element whose title says "% of ...".
- ``{{ pair|interval:4 }}``: ``[lo, hi]``, or an explained dash when there is none.
- ``{{ n|rank_move }}``: ``up 2``, ``down 1``, ``same rank`` (positive = rose).
- ``{{ d|change_word }}``: ``drop`` / ``gain`` / ``no change`` for a signed difference.
"""

from __future__ import annotations

import math
from typing import Any

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

register = template.Library()

NOT_ENOUGH = "not enough data"
P_FLOOR = 1e-4


def number(value: Any) -> float | None:
    """The value as a finite float, or None (missing, NaN, infinite, not a number)."""
    if value is None or isinstance(value, bool) or value == "":
        return None
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _digits(arg: Any, default: int) -> int:
    try:
        return max(0, min(8, int(arg)))
    except (TypeError, ValueError):
        return default


def _missing(why: str = NOT_ENOUGH) -> SafeString:
    return format_html('<span class="na" title="{}">—</span>', why)


@register.filter
def num(value: Any, digits: Any = 4) -> SafeString | str:
    v = number(value)
    if v is None:
        return _missing()
    return f"{v:.{_digits(digits, 4)}f}"


@register.filter
def signed(value: Any, digits: Any = 4) -> SafeString | str:
    v = number(value)
    if v is None:
        return _missing()
    d = _digits(digits, 4)
    text = f"{v:+.{d}f}"
    # a value that rounds to zero has no sign worth showing
    return f"{0:.{d}f}" if float(text) == 0 else text


@register.filter
def pvalue(value: Any) -> str:
    v = number(value)
    if v is None:
        return NOT_ENOUGH
    if v < P_FLOOR:
        return "< 0.0001"
    return f"{min(v, 1.0):.4f}"


@register.filter
def pct(value: Any, of: str) -> SafeString:
    """A percentage ``value`` (already times 100) of ``of``, the words in its title."""
    v = number(value)
    if v is None:
        return _missing(f"{NOT_ENOUGH}: no % of {of}")
    return format_html('<span class="pct" title="% of {}">{}%</span>', of, f"{v:.1f}")


@register.filter
def pct_of(value: Any, of: str) -> SafeString:
    """``7.0% of {of}`` in words."""
    v = number(value)
    if v is None:
        return _missing(f"{NOT_ENOUGH}: no % of {of}")
    return format_html("{}% of {}", f"{v:.1f}", of)


@register.filter
def share(value: Any, of: str) -> SafeString:
    """A fraction (0..1) shown as a percentage of ``of``, in words."""
    v = number(value)
    return pct_of(None if v is None else 100.0 * v, of)


@register.filter
def share_pct(value: Any, of: str) -> SafeString:
    """A fraction (0..1) shown as a percentage, ``of`` in its title (``pct``)."""
    v = number(value)
    return pct(None if v is None else 100.0 * v, of)


@register.filter
def interval(pair: Any, digits: Any = 4) -> SafeString | str:
    if not isinstance(pair, (list, tuple)) or len(pair) != 2:
        return _missing("no interval: not enough data, or the figure is not an average")
    lo, hi = number(pair[0]), number(pair[1])
    if lo is None or hi is None:
        return _missing("no interval: not enough data")
    d = _digits(digits, 4)
    return f"[{lo:.{d}f}, {hi:.{d}f}]"


@register.filter
def signed_interval(pair: Any, digits: Any = 4) -> SafeString | str:
    if not isinstance(pair, (list, tuple)) or len(pair) != 2:
        return _missing("no interval: not enough data")
    lo, hi = number(pair[0]), number(pair[1])
    if lo is None or hi is None:
        return _missing("no interval: not enough data")
    return format_html("[{}, {}]", signed(lo, digits), signed(hi, digits))


@register.filter
def rank_move(value: Any) -> SafeString | str:
    v = number(value)
    if v is None:
        return _missing()
    n = int(v)
    if n > 0:
        return f"up {n}"
    if n < 0:
        return f"down {-n}"
    return "same rank"


@register.filter
def change_word(value: Any) -> str:
    """``drop`` / ``gain`` / ``no change`` for a signed difference (what recall did)."""
    v = number(value)
    if v is None:
        return NOT_ENOUGH
    if v < 0:
        return "drop"
    if v > 0:
        return "gain"
    return "no change"


@register.filter
def get(mapping: Any, key: Any) -> Any:
    """``mapping[key]`` for keys a template cannot write (``judged|get:"10"``)."""
    if isinstance(mapping, dict):
        return mapping.get(key, mapping.get(str(key)))
    return None


@register.filter
def kind_label(value: Any) -> str:
    """A judging item's kind as people read it ("nugget assignment"); an unknown one as is."""
    from judging.assessments.models import UnitKind

    try:
        return str(UnitKind(value).label)
    except ValueError:
        return str(value)
