"""Charts as SVG rendered on the server: no JavaScript, no network, downloadable as files.

Every function returns a complete ``<svg>`` document (a ``SafeString``: every label is escaped).
Missing and non-finite values are left out (never drawn at 0, never written as ``NaN``), and a
legend lists only what is drawn: every drawn series carries ``data-series="LABEL"`` and every
legend entry ``class="legend"`` with the same label (tests/test_page_wording.py checks both; a
label too long for one line is wrapped into ``<tspan>`` lines, its full text in ``data-label``).

Layout rules (issue 16, "charts that read well"):

- text is at least 13 px at the chart's natural size (ticks and labels 13-14 px, titles 15 px);
  the page's CSS scales the SVG to its container's width (``class="pj-chart"``, the viewBox
  keeps the proportions), a download keeps the natural ``width`` and ``height``;
- the legend is never on the plot: it sits below the x axis label, in its own box; the plot area
  and the legend box are written on the chart as ``data-box="x y width height"`` (on
  ``rect.plot-area`` and ``g.legend-box``) so that tests and scripts can check the geometry;
- vertical markers (elbow, plateau) have their labels in a band above the plot, on as many rows
  as it takes for no two labels to overlap;
- every scatter point is labelled: directly (placed where it overlaps no other label or point)
  when there are at most ``DIRECT_LABELS`` points, by number otherwise, the numbers mapped to
  labels and values by :func:`scatter_key` (a table on the page, and in the SVG with ``key``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypeGuard

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

PALETTE = ("#2456a6", "#c0392b", "#2e7d32", "#8e44ad", "#d35400", "#16a085", "#7f8c8d", "#b7950b")
TICK_SIZE = 13
LABEL_SIZE = 14
TITLE_SIZE = 15
CHAR_WIDTH = 0.58  # average glyph width of a sans-serif font, as a fraction of its size
LINE = 20  # legend and key row height
DIRECT_LABELS = 20  # at most this many scatter points are labelled directly, more by number
LABEL_CHARS = 28  # a direct scatter label longer than this is cut (its full text in a title)
MARKER_COLOR = "#d35400"
GREY = "#5b6472"


def font(size: int = TICK_SIZE) -> str:
    return f'font-family="system-ui, sans-serif" font-size="{size}"'


def text_width(text: str, size: int = TICK_SIZE) -> float:
    """An estimate of the drawn width of ``text`` (the server does not measure fonts)."""
    return len(text) * size * CHAR_WIDTH


def _px(v: float) -> str:
    """A pixel value as written on the chart: one decimal, none for a whole number."""
    text = f"{v:.1f}"
    return text[:-2] if text.endswith(".0") else text


@dataclass(frozen=True)
class Box:
    x: float
    y: float
    w: float
    h: float

    def intersects(self, other: Box) -> bool:
        return (
            self.x < other.x + other.w
            and other.x < self.x + self.w
            and self.y < other.y + other.h
            and other.y < self.y + self.h
        )

    def overlap(self, other: Box) -> float:
        dx = min(self.x + self.w, other.x + other.w) - max(self.x, other.x)
        dy = min(self.y + self.h, other.y + other.h) - max(self.y, other.y)
        return dx * dy if dx > 0 and dy > 0 else 0.0

    def inside(self, other: Box) -> bool:
        return (
            self.x >= other.x
            and self.y >= other.y
            and self.x + self.w <= other.x + other.w
            and self.y + self.h <= other.y + other.h
        )

    def attr(self) -> str:
        return f'data-box="{" ".join(_px(v) for v in (self.x, self.y, self.w, self.h))}"'

    @classmethod
    def parse(cls, value: str) -> Box:
        x, y, w, h = (float(v) for v in value.split())
        return cls(x, y, w, h)


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
    """Plot area and data ranges; maps data coordinates to pixels (``xlog``: a log10 x axis)."""

    width: int = 760
    height: int = 420
    left: int = 70
    right: int = 24
    top: int = 40
    bottom: int = 60
    x0: float = 0.0
    x1: float = 1.0
    y0: float = 0.0
    y1: float = 1.0
    xlog: bool = False
    parts: list[str] = field(default_factory=list)

    @property
    def plot_bottom(self) -> float:
        return self.height - self.bottom

    @property
    def plot(self) -> Box:
        return Box(
            self.left, self.top, self.width - self.left - self.right, self.plot_bottom - self.top
        )

    def px(self, x: float) -> float:
        if self.xlog:
            lo, hi = math.log10(self.x0), math.log10(self.x1)
            span = (hi - lo) or 1.0
            return self.left + (math.log10(x) - lo) / span * (self.width - self.left - self.right)
        span = (self.x1 - self.x0) or 1.0
        return self.left + (x - self.x0) / span * (self.width - self.left - self.right)

    def py(self, y: float) -> float:
        span = (self.y1 - self.y0) or 1.0
        return self.plot_bottom - (y - self.y0) / span * (self.plot_bottom - self.top)


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


def log_ticks(lo: float, hi: float) -> tuple[list[float], list[float]]:
    """Labelled ticks (the powers of ten from ``lo`` to ``hi``: 1, 10, 100, 1000) and the minor
    ones between them (2..9 times a power of ten), for a log axis over [lo, hi], lo > 0."""
    if lo <= 0 or hi < lo:
        return [], []
    major: list[float] = []
    minor: list[float] = []
    e = math.floor(math.log10(lo))
    while 10**e <= hi * (1 + 1e-12):
        for m in range(1, 10):
            v = float(m * 10**e)
            if lo * (1 - 1e-12) <= v <= hi * (1 + 1e-12):
                (major if m == 1 else minor).append(v)
        e += 1
    return major, minor


def _fmt(v: float) -> str:
    return f"{v:g}" if abs(v) >= 1 or v == 0 else f"{v:.3g}"


def wrap(text: str, chars: int) -> list[str]:
    """``text`` in lines of at most ``chars`` characters, cut at spaces (a longer word alone)."""
    lines: list[str] = []
    line = ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > chars:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line or not lines:
        lines.append(line)
    return lines


def cut(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: max(1, chars - 1)].rstrip() + "…"


def _text_lines(lines: list[str], x: float, y: float, size: int, extra: str = "") -> str:
    """A ``<text>`` of one or more lines (``<tspan>`` rows ``size + 4`` apart)."""
    if len(lines) == 1:
        return f'<text x="{x:.1f}" y="{y:.1f}" {font(size)}{extra}>{escape(lines[0])}</text>'
    spans = "".join(
        f'<tspan x="{x:.1f}" dy="{0 if i == 0 else size + 4}">{escape(line)}</tspan>'
        for i, line in enumerate(lines)
    )
    return f'<text x="{x:.1f}" y="{y:.1f}" {font(size)}{extra}>{spans}</text>'


# --- title, axes, legend ----------------------------------------------------------------------


def _title_lines(title: str, width: int) -> list[str]:
    return wrap(title, max(20, int((width - 20) / (TITLE_SIZE * CHAR_WIDTH))))


def _title(f: Frame, lines: list[str]) -> None:
    f.parts.append(f'<rect x="0" y="0" width="{f.width}" height="{f.height}" fill="#fff"/>')
    f.parts.append(_text_lines(lines, 12, 22, TITLE_SIZE, ' font-weight="600" class="chart-title"'))


def _axes(f: Frame, x_label: str, y_label: str) -> None:
    for t in _ticks(f.y0, f.y1):
        y = f.py(t)
        f.parts.append(
            f'<line x1="{f.left}" x2="{f.width - f.right}" y1="{y:.1f}" '
            f'y2="{y:.1f}" stroke="#e5e8ee"/>'
        )
        f.parts.append(
            f'<text class="tick" x="{f.left - 8}" y="{y + 4.5:.1f}" text-anchor="end" {font()} '
            f'fill="{GREY}">{_fmt(t)}</text>'
        )
    if f.xlog:
        major, minor = log_ticks(f.x0, f.x1)
        for t in minor:
            x = f.px(t)
            f.parts.append(
                f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{f.plot_bottom}" '
                f'y2="{f.plot_bottom + 3}" stroke="{GREY}"/>'
            )
    else:
        major = _ticks(f.x0, f.x1, 6)
    for t in major:
        x = f.px(t)
        f.parts.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{f.plot_bottom}" '
            f'y2="{f.plot_bottom + 6}" stroke="{GREY}"/>'
        )
        f.parts.append(
            f'<text class="tick" data-value="{_fmt(t)}" x="{x:.1f}" y="{f.plot_bottom + 20}" '
            f'text-anchor="middle" {font()} fill="{GREY}">{_fmt(t)}</text>'
        )
    f.parts.append(
        f'<line x1="{f.left}" x2="{f.width - f.right}" y1="{f.plot_bottom}" '
        f'y2="{f.plot_bottom}" stroke="{GREY}"/>'
    )
    f.parts.append(
        f'<line x1="{f.left}" x2="{f.left}" y1="{f.top}" y2="{f.plot_bottom}" stroke="{GREY}"/>'
    )
    f.parts.append(
        f'<text class="axis-label" x="{(f.left + f.width - f.right) / 2:.0f}" '
        f'y="{f.plot_bottom + 42}" text-anchor="middle" {font(LABEL_SIZE)}>'
        f"{escape(x_label)}{', log scale' if f.xlog else ''}</text>"
    )
    f.parts.append(
        f'<text class="axis-label" transform="translate(18 {(f.top + f.plot_bottom) / 2:.0f}) '
        f'rotate(-90)" text-anchor="middle" {font(LABEL_SIZE)}>{escape(y_label)}</text>'
    )
    f.parts.append(
        f'<rect class="plot-area" {f.plot.attr()} x="{f.left}" y="{f.top}" '
        f'width="{f.plot.w:.1f}" height="{f.plot.h:.1f}" fill="none"/>'
    )


AXIS_BAND = 56  # below the plot: tick labels and the x axis label


def _legend_lines(items: Sequence[tuple[str, str, str]], width: int, left: int) -> list[list[str]]:
    chars = max(16, int((width - left - 24 - 40) / (TICK_SIZE * CHAR_WIDTH)))
    return [wrap(label, chars) for label, _, _ in items]


def _legend_height(lines: list[list[str]]) -> int:
    return 0 if not lines else 12 + sum(len(entry) for entry in lines) * LINE


def _legend(
    f: Frame, items: Sequence[tuple[str, str, str]], lines: list[list[str]], y0: float
) -> Box | None:
    """One entry per drawn series: (label, colour, how it is drawn: line, dashed, dot, diamond),
    in a box below the plot starting at ``y0``; returns the box (None without entries)."""
    if not items:
        return None
    box = Box(f.left, y0, f.width - f.left - f.right, _legend_height(lines))
    out = [f'<g class="legend-box" {box.attr()}>']
    x, y = box.x + 8, box.y + 6 + LINE / 2
    for (label, color, kind), entry in zip(items, lines, strict=True):
        if kind == "dot":
            out.append(
                f'<circle cx="{x + 12}" cy="{y:.1f}" r="5" fill="{color}" fill-opacity=".8"/>'
            )
        elif kind == "diamond":
            out.append(
                f'<path d="M{x + 12} {y - 7:.1f} L{x + 19} {y:.1f} L{x + 12} {y + 7:.1f} '
                f'L{x + 5} {y:.1f} Z" fill="none" stroke="{color}" stroke-width="2"/>'
            )
        else:
            dash = ' stroke-dasharray="6 4"' if kind == "dashed" else ""
            out.append(
                f'<line x1="{x}" x2="{x + 26}" y1="{y:.1f}" y2="{y:.1f}" stroke="{color}" '
                f'stroke-width="3"{dash}/>'
            )
        extra = ' class="legend"'
        if len(entry) > 1:
            extra += f' data-label="{escape(label)}"'
        out.append(_text_lines(entry, x + 34, y + 4.5, TICK_SIZE, extra))
        y += LINE * len(entry)
    out.append("</g>")
    f.parts.extend(out)
    return box


def _svg(f: Frame, desc: str, kind: str) -> SafeString:
    body = "".join(f.parts)
    return mark_safe(
        f'<svg xmlns="http://www.w3.org/2000/svg" class="pj-chart" data-chart="{kind}" '
        f'viewBox="0 0 {f.width} {f.height}" width="{f.width}" height="{f.height}" role="img" '
        f'aria-label="{escape(desc)}"><title>{escape(desc)}</title>{body}</svg>'
    )


def _nothing(f: Frame) -> str:
    return (
        f'<text x="{(f.left + f.width - f.right) / 2:.0f}" y="{(f.top + f.plot_bottom) / 2:.0f}" '
        f'text-anchor="middle" {font(LABEL_SIZE)} fill="{GREY}">no data to draw</text>'
    )


# --- line chart ---------------------------------------------------------------------------------


def marker_rows(
    markers: Sequence[tuple[float, str]], *, right_edge: float, gap: float = 10.0
) -> list[tuple[float, str, int, str, Box]]:
    """Where the labels of vertical markers go: (x in pixels, label, row, text-anchor, box),
    greedily on the first row where the label overlaps no other (rows 18 px apart, row 0 the
    lowest); a label that would cross ``right_edge`` is anchored at its end instead."""
    placed: list[tuple[float, str, int, str, Box]] = []
    for px, label in sorted(markers):
        w = text_width(label)
        anchor, x = ("end", px - 4 - w) if px + 4 + w > right_edge else ("start", px + 4)
        row = 0
        while True:
            box = Box(x - gap / 2, -18.0 * row - 14, w + gap, 16)
            if not any(r == row and b.intersects(box) for _, _, r, _, b in placed):
                break
            row += 1
        placed.append((px, label, row, anchor, Box(x, box.y, w, 16)))
    return placed


def line_chart(
    series: Sequence[Series],
    *,
    title: str,
    x_label: str,
    y_label: str,
    y_range: tuple[float, float] | None = None,
    markers: Sequence[tuple[float, str]] = (),
    size: tuple[int, int] = (760, 420),
    x_log: bool = False,
    note: str = "",
) -> SafeString:
    """Lines over a shared x axis; ``markers`` draw labelled vertical lines (e.g. the elbow);
    ``size`` is (width, plot height + margins) in pixels, the legend adds to the height;
    ``x_log`` draws the x axis in log10 (points at x <= 0 left out); ``note`` is a line of text
    under the title (e.g. how deep the curve goes).

    Points with a missing or non-finite x or y are left out; a series with no point left is not
    drawn and not in the legend; a series with one point is drawn as a dot."""
    drawn = [
        (
            s,
            [
                (x, y)
                for x, y in zip(s.xs, s.ys, strict=True)
                if finite(x) and finite(y) and (x > 0 or not x_log)
            ],
        )
        for s in series
    ]
    drawn = [(s, pts) for s, pts in drawn if pts]
    xs = [x for _, pts in drawn for x, _ in pts]
    ys = [y for _, pts in drawn for _, y in pts]
    width, height = size
    title_lines = _title_lines(title, width)
    legend = [
        (
            s.label,
            s.color or PALETTE[i % len(PALETTE)],
            "dot" if len(pts) == 1 else "dashed" if s.dashed else "line",
        )
        for i, (s, pts) in enumerate(drawn)
    ]
    lines = _legend_lines(legend, width, 70)
    f = Frame(
        width=width, x0=min(xs, default=1.0), x1=max(xs, default=10.0 if x_log else 1.0), xlog=x_log
    )
    if f.x1 <= f.x0:
        f.x1 = f.x0 * 10 if x_log else f.x0 + 1
    f.y0, f.y1 = y_range if y_range else (min(0.0, min(ys, default=0.0)), max(ys, default=1.0))
    plot_height = height - 100
    header = 22 + (TITLE_SIZE + 4) * (len(title_lines) - 1) + (20 if note else 0) + 26
    placed = [(x, label) for x, label in markers if finite(x) and f.x0 <= x <= f.x1]
    # the marker labels' rows sit between the header and the plot (px is relative; rows fixed)
    f.left = 70
    rows = (
        marker_rows([(f.px(x), label) for x, label in placed], right_edge=width - 4)
        if placed
        else []
    )
    n_rows = 1 + max((r for _, _, r, _, _ in rows), default=-1)
    f.top = header + 18 * n_rows + (8 if n_rows else 0)
    f.height = f.top + plot_height + AXIS_BAND + _legend_height(lines) + 8
    f.bottom = f.height - f.top - plot_height
    _title(f, title_lines)
    if note:
        note_y = 22 + (TITLE_SIZE + 4) * (len(title_lines) - 1) + 20
        f.parts.append(
            f'<text class="chart-note" x="12" y="{note_y}" {font()} fill="{GREY}">'
            f"{escape(note)}</text>"
        )
    _axes(f, x_label, y_label)
    for (s, data), (_, color, kind) in zip(drawn, legend, strict=True):
        label = escape(s.label)
        if kind == "dot":
            ((x, y),) = data
            f.parts.append(
                f'<circle data-series="{label}" cx="{f.px(x):.1f}" cy="{f.py(y):.1f}" r="4" '
                f'fill="{color}"/>'
            )
            continue
        pts = " ".join(f"{f.px(x):.1f},{f.py(y):.1f}" for x, y in data)
        dash = ' stroke-dasharray="6 4"' if s.dashed else ""
        f.parts.append(
            f'<polyline data-series="{label}" fill="none" stroke="{color}" '
            f'stroke-width="{s.width}"{dash} points="{pts}"/>'
        )
    band_bottom = f.top - 8
    for px, mark, row, _anchor, box in rows:
        y = band_bottom - 18 * row
        shifted = Box(box.x, y - 12, box.w, 16)
        f.parts.append(
            f'<line class="marker" x1="{px:.1f}" x2="{px:.1f}" y1="{y + 4:.1f}" '
            f'y2="{f.plot_bottom}" stroke="{MARKER_COLOR}" stroke-dasharray="3 3"/>'
        )
        f.parts.append(
            f'<text class="marker-label" {shifted.attr()} x="{box.x:.1f}" y="{y:.1f}" '
            f'{font()} fill="{MARKER_COLOR}">{escape(mark)}</text>'
        )
    if not drawn:
        f.parts.append(_nothing(f))
    _legend(f, legend, lines, f.plot_bottom + AXIS_BAND)
    return _svg(f, title, "line")


# --- scatter ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class KeyRow:
    number: int
    label: str
    x: float
    y: float
    highlight: bool


def _drawable(points: Sequence[Point]) -> list[Point]:
    """The points a scatter draws, in the order it numbers them: by x, largest first."""
    kept = [p for p in points if finite(p.x) and finite(p.y)]
    return sorted(kept, key=lambda p: (-p.x, -p.y, p.label))


def numbered(points: Sequence[Point]) -> bool:
    """Whether the scatter labels its points by number (more than ``DIRECT_LABELS``)."""
    return len(_drawable(points)) > DIRECT_LABELS


def scatter_key(points: Sequence[Point]) -> list[KeyRow]:
    """The numbers of a numbered scatter and what they stand for (empty when the points are
    labelled directly): number, label, x and y."""
    if not numbered(points):
        return []
    return [
        KeyRow(i, p.label, p.x, p.y, p.highlight) for i, p in enumerate(_drawable(points), start=1)
    ]


CANDIDATES = (  # label offsets from a point: (dx, dy of the baseline, text-anchor)
    (9, 5, "start"),
    (-9, 5, "end"),
    (7, -9, "start"),
    (-7, -9, "end"),
    (7, 19, "start"),
    (-7, 19, "end"),
    (0, -12, "middle"),
    (0, 22, "middle"),
    (14, -20, "start"),
    (-14, -20, "end"),
    (14, 30, "start"),
    (-14, 30, "end"),
)


def _label_box(x: float, y: float, dx: float, dy: float, anchor: str, w: float) -> Box:
    left = x + dx - (w if anchor == "end" else w / 2 if anchor == "middle" else 0)
    return Box(left, y + dy - 12, w, 15)


def place_labels(
    anchors: Sequence[tuple[float, float, str]], bounds: Box, obstacles: Sequence[Box] = ()
) -> list[tuple[float, float, str, Box]]:
    """Where each point's label goes: (text x, text y, text-anchor, box), in the order given.

    Each label takes the first candidate position around its point (right, left, above, below,
    then further out) that stays within ``bounds`` and overlaps no label placed before, no point
    and no obstacle; when none does, the one with the least overlap."""
    points = [Box(x - 6, y - 6, 12, 12) for x, y, _ in anchors]
    placed: list[Box] = []
    out = []
    for i, (x, y, text) in enumerate(anchors):
        w = text_width(text)
        best: tuple[float, float, float, str, Box] | None = None
        for dx, dy, anchor in CANDIDATES:
            box = _label_box(x, y, dx, dy, anchor, w)
            clash = (
                sum(box.overlap(b) for b in placed)
                + sum(box.overlap(b) for j, b in enumerate(points) if j != i)
                + sum(box.overlap(b) for b in obstacles)
            )
            if not box.inside(bounds):
                clash += 1e6 + box.w * box.h - box.overlap(bounds)
            if best is None or clash < best[0]:
                best = (clash, x + dx, y + dy, anchor, box)
            if clash == 0:
                break
        assert best is not None
        _, tx, ty, anchor, box = best
        placed.append(box)
        out.append((tx, ty, anchor, box))
    return out


def scatter(
    points: Sequence[Point],
    *,
    title: str,
    x_label: str,
    y_label: str,
    diagonal: bool = True,
    point_label: str = "",
    highlight_label: str = "",
    key: bool = False,
) -> SafeString:
    """Points with an optional y = x line; highlighted points drawn as open red diamonds (a
    shape, not only a colour), the others as blue dots.

    Every point is labelled: by its label (cut to ``LABEL_CHARS``, the full text in a title)
    placed clear of the other labels and points, or with more than ``DIRECT_LABELS`` points by
    its number in :func:`scatter_key`, which ``key`` also writes into the SVG below the legend
    (for a download, which has no page around it). Points with a missing or non-finite
    coordinate are left out. The legend names the plain points (``point_label``) and the
    highlighted ones (``highlight_label``) only when some are drawn."""
    drawn = _drawable(points)
    by_number = len(drawn) > DIRECT_LABELS
    vals = [p.x for p in drawn] + [p.y for p in drawn]
    lo, hi = min(vals, default=0.0), max(vals, default=1.0)
    pad = (hi - lo) * 0.06 or 0.05
    width = 720
    title_lines = _title_lines(title, width)
    legend = []
    if point_label and any(not p.highlight for p in drawn):
        legend.append((point_label, PALETTE[0], "dot"))
    if highlight_label and any(p.highlight for p in drawn):
        legend.append((highlight_label, PALETTE[1], "diamond"))
    lines = _legend_lines(legend, width, 70)
    plot_size = 520
    top = 22 + (TITLE_SIZE + 4) * (len(title_lines) - 1) + 22
    rows = scatter_key(points) if key else []
    key_columns = 2
    key_rows = math.ceil(len(rows) / key_columns)
    key_height = (30 + key_rows * LINE) if rows else 0
    height = top + plot_size + AXIS_BAND + _legend_height(lines) + 8 + key_height
    f = Frame(
        width=width,
        height=height,
        left=70,
        right=width - 70 - plot_size,
        top=top,
        bottom=height - top - plot_size,
        x0=max(0.0, lo - pad),
        x1=hi + pad,
        y0=max(0.0, lo - pad),
        y1=hi + pad,
    )
    _title(f, title_lines)
    _axes(f, x_label, y_label)
    obstacles = []
    if diagonal:
        f.parts.append(
            f'<line x1="{f.px(f.x0):.1f}" y1="{f.py(f.x0):.1f}" x2="{f.px(f.x1):.1f}" '
            f'y2="{f.py(f.x1):.1f}" stroke="#7f8c8d" stroke-dasharray="4 4"/>'
        )
        tx, ty = f.px(f.x1) + 6, f.py(f.x1) + 5
        f.parts.append(f'<text x="{tx:.1f}" y="{ty:.1f}" {font()} fill="#7f8c8d">y = x</text>')
        obstacles.append(Box(tx, ty - 12, text_width("y = x"), 15))
    plain_series = escape(point_label or "points")
    high_series = escape(highlight_label or "highlighted")
    texts = [str(i) if by_number else cut(p.label, LABEL_CHARS) for i, p in enumerate(drawn, 1)]
    bounds = Box(f.left + 2, f.top - 14, f.width - f.left - 4, f.plot.h + 14)
    spots = place_labels(
        [(f.px(p.x), f.py(p.y), t) for p, t in zip(drawn, texts, strict=True)], bounds, obstacles
    )
    for i, (p, text, (tx, ty, anchor, box)) in enumerate(zip(drawn, texts, spots, strict=True), 1):
        x, y = f.px(p.x), f.py(p.y)
        name = f"#{i} {p.label}" if by_number else p.label
        tip = f"<title>{escape(name)}: {p.x:.4f} vs {p.y:.4f}</title>"
        color = PALETTE[1] if p.highlight else PALETTE[0]
        if p.highlight:
            f.parts.append(
                f'<path data-series="{high_series}" data-point="{i}" d="M{x:.1f} {y - 7:.1f} '
                f'L{x + 7:.1f} {y:.1f} L{x:.1f} {y + 7:.1f} L{x - 7:.1f} {y:.1f} Z" '
                f'fill="none" stroke="{color}" stroke-width="2">{tip}</path>'
            )
        else:
            f.parts.append(
                f'<circle data-series="{plain_series}" data-point="{i}" cx="{x:.1f}" '
                f'cy="{y:.1f}" r="5" fill="{color}" fill-opacity=".75">{tip}</circle>'
            )
        kind = "point-number" if by_number else "point-label"
        f.parts.append(
            f'<text class="{kind}" data-point="{i}" {box.attr()} x="{tx:.1f}" y="{ty:.1f}" '
            f'text-anchor="{anchor}" {font()} fill="{color}">{escape(text)}{tip}</text>'
        )
    if not drawn:
        f.parts.append(_nothing(f))
    legend_box = _legend(f, legend, lines, f.plot_bottom + AXIS_BAND)
    if rows:
        y = (legend_box.y + legend_box.h if legend_box else f.plot_bottom + AXIS_BAND) + 24
        f.parts.append(
            f'<g class="scatter-key"><text x="{f.left}" y="{y:.1f}" {font(LABEL_SIZE)} '
            f'font-weight="600">Points by number: {escape(x_label)} → {escape(y_label)}</text>'
        )
        col_w = (f.width - f.left - 12) / key_columns
        for j, r in enumerate(rows):
            col, row = divmod(j, key_rows)
            kx, ky = f.left + col * col_w, y + LINE * (row + 1)
            color = PALETTE[1] if r.highlight else "#1f2430"
            mark = "◇ " if r.highlight else ""
            values = f"{r.x:.4f} → {r.y:.4f}"
            room = col_w - 44 - text_width(values) - 12
            label = cut(mark + r.label, max(8, int(room / (TICK_SIZE * CHAR_WIDTH))))
            f.parts.append(
                f'<text class="key-row" data-point="{r.number}" x="{kx + 30:.1f}" y="{ky:.1f}" '
                f'text-anchor="end" {font()} fill="{color}">{r.number}</text>'
                f'<text class="key-row-label" x="{kx + 38:.1f}" y="{ky:.1f}" {font()} '
                f'fill="{color}"><title>{escape(r.label)}</title>{escape(label)}</text>'
                f'<text x="{kx + col_w - 12:.1f}" y="{ky:.1f}" text-anchor="end" {font()} '
                f'fill="{color}">{values}</text>'
            )
        f.parts.append("</g>")
    return _svg(f, title, "scatter")


# --- bars ---------------------------------------------------------------------------------------


def bars(
    items: Sequence[tuple[str, float | None, bool]], *, title: str, value_label: str
) -> SafeString:
    """Horizontal bars for signed values (e.g. leave-one-out deltas); flagged bars in red.

    An item without a finite value gets its label and "no value", not a bar at 0. A label longer
    than the margin is cut, its full text in a title."""
    width = 760
    title_lines = _title_lines(title, width)
    top = 22 + (TITLE_SIZE + 4) * (len(title_lines) - 1) + 22
    row = 24
    height = top + row * max(1, len(items)) + 56
    vals = [v for _, v, _ in items if finite(v)]
    lo, hi = min(0.0, min(vals, default=0.0)), max(0.0, max(vals, default=1.0))
    f = Frame(
        x0=lo,
        x1=hi if hi > lo else lo + 1.0,
        y0=0,
        y1=1,
        width=width,
        height=height,
        left=210,
        right=90,
        top=top,
        bottom=56,
    )
    _title(f, title_lines)
    zero = f.px(0.0)
    chars = int((f.left - 16) / (TICK_SIZE * CHAR_WIDTH))
    for i, (label, v, flagged) in enumerate(items):
        y = top + row * i
        shown = cut(label, chars)
        tip = f"<title>{escape(label)}</title>" if shown != label else ""
        f.parts.append(
            f'<text x="{f.left - 8}" y="{y + 15}" text-anchor="end" {font()}>{tip}'
            f"{escape(shown)}</text>"
        )
        if v is None or not finite(v):
            f.parts.append(
                f'<text x="{zero + 4:.1f}" y="{y + 15}" {font()} fill="{GREY}">no value</text>'
            )
            continue
        x0, x1 = sorted((zero, f.px(v)))
        color = PALETTE[1] if flagged else PALETTE[0]
        f.parts.append(
            f'<rect x="{x0:.1f}" y="{y + 3}" width="{max(x1 - x0, 1):.1f}" '
            f'height="18" fill="{color}" fill-opacity=".8"><title>{escape(label)}: '
            f"{v:+.4f}</title></rect>"
        )
        value = f"{v:+.4f}"
        if v < 0 and x0 - 6 - text_width(value) > f.left:
            tx, anchor = x0 - 4, "end"  # a bar to the left of 0: its value on its left
        else:
            tx, anchor = max(x1, zero + 1) + 4, "start"
        f.parts.append(
            f'<text x="{tx:.1f}" y="{y + 16}" text-anchor="{anchor}" {font()} fill="{GREY}">'
            f"{value}</text>"
        )
    f.parts.append(
        f'<line x1="{zero:.1f}" x2="{zero:.1f}" y1="{top - 4}" y2="{height - 50}" stroke="{GREY}"/>'
    )
    f.parts.append(
        f'<text class="axis-label" x="{(f.left + f.width - f.right) / 2:.0f}" y="{height - 18}" '
        f'text-anchor="middle" {font(LABEL_SIZE)}>{escape(value_label)}</text>'
    )
    return _svg(f, title, "bars")
