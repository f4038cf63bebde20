"""Charts as SVG rendered on the server: no JavaScript, no network, downloadable as files.

Every function returns a complete ``<svg>`` document (a ``SafeString``: every label is escaped).
Missing and non-finite values are left out (never drawn at 0, never written as ``NaN``), and a
legend lists only what is drawn: every drawn series carries ``data-series="LABEL"`` and every
legend entry ``class="legend"`` with the same label (tests/test_page_wording.py checks both).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypeGuard

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

PALETTE = ("#2456a6", "#c0392b", "#2e7d32", "#8e44ad", "#d35400", "#16a085", "#7f8c8d", "#b7950b")
FONT = 'font-family="system-ui, sans-serif" font-size="12"'


@dataclass
class Series:
    label: str
    xs: Sequence[float]
    ys: Sequence[float | None]
    color: str = ""
    dashed: bool = False
    width: float = 2.0


@dataclass
class Point:
    x: float
    y: float
    label: str
    highlight: bool = False


@dataclass
class Frame:
    """Plot area and data ranges; maps data coordinates to pixels."""

    width: int = 640
    height: int = 380
    left: int = 60
    right: int = 20
    top: int = 30
    bottom: int = 50
    x0: float = 0.0
    x1: float = 1.0
    y0: float = 0.0
    y1: float = 1.0
    parts: list[str] = field(default_factory=list)

    def px(self, x: float) -> float:
        span = (self.x1 - self.x0) or 1.0
        return self.left + (x - self.x0) / span * (self.width - self.left - self.right)

    def py(self, y: float) -> float:
        span = (self.y1 - self.y0) or 1.0
        return (
            self.height
            - self.bottom
            - (y - self.y0) / span * (self.height - self.top - self.bottom)
        )


def finite(v: float | None) -> TypeGuard[float]:
    """A value that can be drawn (not None, NaN or infinite)."""
    return v is not None and not isinstance(v, bool) and math.isfinite(v)


def _ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step) * step
    out, v = [], first
    while v <= hi + 1e-12:
        out.append(round(v, 10))
        v += step
    return out


def _fmt(v: float) -> str:
    return f"{v:g}" if abs(v) >= 1 or v == 0 else f"{v:.3g}"


def _axes(f: Frame, title: str, x_label: str, y_label: str) -> None:
    f.parts.append(f'<rect x="0" y="0" width="{f.width}" height="{f.height}" fill="#fff"/>')
    f.parts.append(f'<text x="{f.left}" y="18" {FONT} font-weight="600">{escape(title)}</text>')
    for t in _ticks(f.y0, f.y1):
        y = f.py(t)
        f.parts.append(
            f'<line x1="{f.left}" x2="{f.width - f.right}" y1="{y:.1f}" '
            f'y2="{y:.1f}" stroke="#e5e8ee"/>'
        )
        f.parts.append(
            f'<text x="{f.left - 6}" y="{y + 4:.1f}" text-anchor="end" {FONT} '
            f'fill="#5b6472">{_fmt(t)}</text>'
        )
    for t in _ticks(f.x0, f.x1, 6):
        x = f.px(t)
        f.parts.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{f.height - f.bottom}" '
            f'y2="{f.height - f.bottom + 4}" stroke="#5b6472"/>'
        )
        f.parts.append(
            f'<text x="{x:.1f}" y="{f.height - f.bottom + 17}" text-anchor="middle" '
            f'{FONT} fill="#5b6472">{_fmt(t)}</text>'
        )
    f.parts.append(
        f'<line x1="{f.left}" x2="{f.width - f.right}" y1="{f.height - f.bottom}" '
        f'y2="{f.height - f.bottom}" stroke="#5b6472"/>'
    )
    f.parts.append(
        f'<line x1="{f.left}" x2="{f.left}" y1="{f.top}" '
        f'y2="{f.height - f.bottom}" stroke="#5b6472"/>'
    )
    f.parts.append(
        f'<text x="{(f.left + f.width - f.right) / 2:.0f}" y="{f.height - 12}" '
        f'text-anchor="middle" {FONT}>{escape(x_label)}</text>'
    )
    f.parts.append(
        f'<text transform="translate(14 {(f.top + f.height - f.bottom) / 2:.0f}) '
        f'rotate(-90)" text-anchor="middle" {FONT}>{escape(y_label)}</text>'
    )


def _svg(f: Frame, desc: str) -> SafeString:
    body = "".join(f.parts)
    return mark_safe(
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {f.width} {f.height}" '
        f'width="{f.width}" height="{f.height}" role="img" aria-label="{escape(desc)}">'
        f"<title>{escape(desc)}</title>{body}</svg>"
    )


def _legend(f: Frame, items: Sequence[tuple[str, str, str]], *, right: bool = False) -> None:
    """One entry per drawn series: (label, colour, how it is drawn: line, dashed, dot, diamond);
    at the plot's top left, or top right (``right``: for lines that start high)."""
    longest = max((len(label) for label, _, _ in items), default=0)
    x = f.width - f.right - 40 - int(6.5 * longest) if right else f.left + 10
    y = f.top + 8
    for label, color, kind in items:
        if kind == "dot":
            f.parts.append(
                f'<circle cx="{x + 11}" cy="{y}" r="4" fill="{color}" fill-opacity=".75"/>'
            )
        elif kind == "diamond":
            f.parts.append(
                f'<path d="M{x + 11} {y - 6} L{x + 17} {y} L{x + 11} {y + 6} L{x + 5} {y} Z" '
                f'fill="none" stroke="{color}" stroke-width="2"/>'
            )
        else:
            dash = ' stroke-dasharray="5 4"' if kind == "dashed" else ""
            f.parts.append(
                f'<line x1="{x}" x2="{x + 22}" y1="{y}" y2="{y}" stroke="{color}" '
                f'stroke-width="2.5"{dash}/>'
            )
        f.parts.append(
            f'<text class="legend" x="{x + 28}" y="{y + 4}" {FONT}>{escape(label)}</text>'
        )
        y += 17


def line_chart(
    series: Sequence[Series],
    *,
    title: str,
    x_label: str,
    y_label: str,
    y_range: tuple[float, float] | None = None,
    markers: Sequence[tuple[float, str]] = (),
    size: tuple[int, int] = (640, 380),
    legend_right: bool = False,
) -> SafeString:
    """Lines over a shared x axis; ``markers`` draw labelled vertical lines (e.g. the elbow);
    ``size`` is (width, height) in pixels.

    Points with a missing or non-finite x or y are left out; a series with no point left is not
    drawn and not in the legend; a series with one point is drawn as a dot."""
    drawn = [
        (s, [(x, y) for x, y in zip(s.xs, s.ys, strict=True) if finite(x) and finite(y)])
        for s in series
    ]
    drawn = [(s, pts) for s, pts in drawn if pts]
    xs = [x for _, pts in drawn for x, _ in pts]
    ys = [y for _, pts in drawn for _, y in pts]
    f = Frame(x0=min(xs, default=0.0), x1=max(xs, default=1.0), width=size[0], height=size[1])
    f.y0, f.y1 = y_range if y_range else (min(0.0, min(ys, default=0.0)), max(ys, default=1.0))
    _axes(f, title, x_label, y_label)
    legend = []
    for i, (s, data) in enumerate(drawn):
        color = s.color or PALETTE[i % len(PALETTE)]
        label = escape(s.label)
        if len(data) == 1:
            ((x, y),) = data
            f.parts.append(
                f'<circle data-series="{label}" cx="{f.px(x):.1f}" cy="{f.py(y):.1f}" r="4" '
                f'fill="{color}"/>'
            )
            legend.append((s.label, color, "dot"))
            continue
        pts = " ".join(f"{f.px(x):.1f},{f.py(y):.1f}" for x, y in data)
        dash = ' stroke-dasharray="5 4"' if s.dashed else ""
        f.parts.append(
            f'<polyline data-series="{label}" fill="none" stroke="{color}" '
            f'stroke-width="{s.width}"{dash} points="{pts}"/>'
        )
        legend.append((s.label, color, "dashed" if s.dashed else "line"))
    for x, mark in markers:
        if not finite(x):
            continue
        px = f.px(x)
        f.parts.append(
            f'<line x1="{px:.1f}" x2="{px:.1f}" y1="{f.top}" '
            f'y2="{f.height - f.bottom}" stroke="#d35400" stroke-dasharray="3 3"/>'
        )
        f.parts.append(
            f'<text x="{px + 4:.1f}" y="{f.height - f.bottom - 8}" {FONT} '
            f'fill="#d35400">{escape(mark)}</text>'
        )
    if not drawn:
        f.parts.append(_nothing(f))
    _legend(f, legend, right=legend_right)
    return _svg(f, title)


def _nothing(f: Frame) -> str:
    return (
        f'<text x="{(f.left + f.width - f.right) / 2:.0f}" y="{(f.top + f.height) / 2:.0f}" '
        f'text-anchor="middle" {FONT} fill="#5b6472">no data to draw</text>'
    )


def scatter(
    points: Sequence[Point],
    *,
    title: str,
    x_label: str,
    y_label: str,
    diagonal: bool = True,
    point_label: str = "",
    highlight_label: str = "",
) -> SafeString:
    """Points with an optional y = x line; highlighted points drawn as open red diamonds.

    Points with a missing or non-finite coordinate are left out. The legend names the plain
    points (``point_label``) and the highlighted ones (``highlight_label``) only when some are
    drawn."""
    points = [p for p in points if finite(p.x) and finite(p.y)]
    vals = [p.x for p in points] + [p.y for p in points]
    lo, hi = min(vals, default=0.0), max(vals, default=1.0)
    pad = (hi - lo) * 0.05 or 0.05
    f = Frame(
        x0=max(0.0, lo - pad),
        x1=hi + pad,
        y0=max(0.0, lo - pad),
        y1=hi + pad,
        width=560,
        height=460,
    )
    _axes(f, title, x_label, y_label)
    if diagonal:
        f.parts.append(
            f'<line x1="{f.px(f.x0):.1f}" y1="{f.py(f.x0):.1f}" x2="{f.px(f.x1):.1f}" '
            f'y2="{f.py(f.x1):.1f}" stroke="#7f8c8d" stroke-dasharray="4 4"/>'
        )
        f.parts.append(
            f'<text x="{f.px(f.x1) - 4:.1f}" y="{f.py(f.x1) + 14:.1f}" '
            f'text-anchor="end" {FONT} fill="#7f8c8d">y = x</text>'
        )
    plain_series = escape(point_label or "points")
    high_series = escape(highlight_label or "highlighted")
    for p in points:
        x, y = f.px(p.x), f.py(p.y)
        tip = f"<title>{escape(p.label)}: {p.x:.4f} vs {p.y:.4f}</title>"
        if p.highlight:
            f.parts.append(
                f'<path data-series="{high_series}" d="M{x:.1f} {y - 6:.1f} L{x + 6:.1f} '
                f'{y:.1f} L{x:.1f} {y + 6:.1f} L{x - 6:.1f} {y:.1f} Z" fill="none" '
                f'stroke="#c0392b" stroke-width="2">{tip}</path>'
            )
            near_right = x > f.left + 0.6 * (f.width - f.left - f.right)
            tx, anchor = (x - 8, "end") if near_right else (x + 8, "start")
            f.parts.append(
                f'<text x="{tx:.1f}" y="{y - 8:.1f}" text-anchor="{anchor}" {FONT} '
                f'fill="#c0392b">{escape(p.label)}</text>'
            )
        else:
            f.parts.append(
                f'<circle data-series="{plain_series}" cx="{x:.1f}" cy="{y:.1f}" r="4" '
                f'fill="#2456a6" fill-opacity=".75">{tip}</circle>'
            )
    legend = []
    if point_label and any(not p.highlight for p in points):
        legend.append((point_label, "#2456a6", "dot"))
    if highlight_label and any(p.highlight for p in points):
        legend.append((highlight_label, "#c0392b", "diamond"))
    if not points:
        f.parts.append(_nothing(f))
    _legend(f, legend)
    return _svg(f, title)


def bars(
    items: Sequence[tuple[str, float | None, bool]], *, title: str, value_label: str
) -> SafeString:
    """Horizontal bars for signed values (e.g. leave-one-out deltas); flagged bars in red.

    An item without a finite value gets its label and "no value", not a bar at 0."""
    height = 40 + 22 * max(1, len(items)) + 40
    vals = [v for _, v, _ in items if finite(v)]
    lo, hi = min(0.0, min(vals, default=0.0)), max(0.0, max(vals, default=1.0))
    f = Frame(x0=lo, x1=hi if hi > lo else lo + 1.0, y0=0, y1=1, height=height, left=170, right=80)
    f.parts.append(f'<rect x="0" y="0" width="{f.width}" height="{f.height}" fill="#fff"/>')
    f.parts.append(f'<text x="10" y="18" {FONT} font-weight="600">{escape(title)}</text>')
    zero = f.px(0.0)
    for i, (label, v, flagged) in enumerate(items):
        y = 34 + 22 * i
        f.parts.append(
            f'<text x="{f.left - 6}" y="{y + 13}" text-anchor="end" {FONT}>{escape(label)}</text>'
        )
        if v is None or not finite(v):
            f.parts.append(
                f'<text x="{zero + 4:.1f}" y="{y + 14}" {FONT} fill="#5b6472">no value</text>'
            )
            continue
        x0, x1 = sorted((zero, f.px(v)))
        color = "#c0392b" if flagged else "#2456a6"
        f.parts.append(
            f'<rect x="{x0:.1f}" y="{y + 2}" width="{max(x1 - x0, 1):.1f}" '
            f'height="16" fill="{color}" fill-opacity=".8"><title>{escape(label)}: '
            f"{v:+.4f}</title></rect>"
        )
        f.parts.append(f'<text x="{x1 + 4:.1f}" y="{y + 14}" {FONT} fill="#5b6472">{v:+.4f}</text>')
    f.parts.append(
        f'<line x1="{zero:.1f}" x2="{zero:.1f}" y1="30" y2="{height - 36}" stroke="#5b6472"/>'
    )
    f.parts.append(
        f'<text x="{(f.left + f.width - f.right) / 2:.0f}" y="{height - 12}" '
        f'text-anchor="middle" {FONT}>{escape(value_label)}</text>'
    )
    return _svg(f, title)


def ci_bar(
    value: float | None,
    low: float | None,
    high: float | None,
    *,
    scale: float = 1.0,
    width: int = 120,
) -> SafeString:
    """A small inline bar: the confidence interval as a line, the value as a dot (no bar for a
    missing value; a missing bound draws the interval as the value alone)."""
    if value is None or not finite(value):
        return mark_safe("")
    lo_v = low if low is not None and finite(low) else value
    hi_v = high if high is not None and finite(high) else value

    def x(v: float) -> float:
        return 4 + max(0.0, min(1.0, v / (scale or 1.0))) * (width - 8)

    tip = (
        f"{value:.4f} [{lo_v:.4f}, {hi_v:.4f}]"
        if lo_v != value or hi_v != value or (low is not None and high is not None)
        else f"{value:.4f} (no interval)"
    )
    return mark_safe(
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="14" '
        f'viewBox="0 0 {width} 14" class="ci"><line x1="4" x2="{width - 4}" y1="7" y2="7" '
        f'stroke="#e5e8ee" stroke-width="6" stroke-linecap="round"/>'
        f'<line x1="{x(lo_v):.1f}" x2="{x(hi_v):.1f}" y1="7" y2="7" stroke="#9db4dc" '
        f'stroke-width="6" stroke-linecap="round"/><circle cx="{x(value):.1f}" cy="7" r="3.5" '
        f'fill="#2456a6"/><title>{tip}</title></svg>'
    )
