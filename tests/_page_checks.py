"""The wording rule of the pages, as a check a test can run on any HTML page or SVG chart.

``wording_problems(html)`` lists what breaks the rule (empty: none):

- no ``nan``, ``NaN``, ``inf`` or ``None`` in the text or in a ``title`` (tooltips), nor ``NaN``
  anywhere in an SVG (coordinates included);
- no p-value cell (``<td class="... p">``) that is blank, reads ``0.0000`` or is not one of
  ``0.dddd``, ``< 0.0001``, ``not enough data``;
- no blank number cell (``<td class="num">`` with neither text nor a drawing);
- every percentage (a number followed by ``%``) says of what: it is followed by "of ..." in the
  text, or sits in an element whose ``title`` says "% of ..." (the ``pct`` filter); a confidence
  level ("95% CI", "95% interval", "95% bootstrap confidence intervals") is not a percentage of
  anything and is allowed;
- an SVG legend names only series that are drawn: every ``class="legend"`` label is the
  ``data-series`` of some drawn element of the same chart.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

BAD_WORD = re.compile(r"(?<![\w-])(nan|NaN|NAN|None|inf|Infinity)(?![\w-])")
PERCENT = re.compile(r"\d(?:[\d.,]*\d)?\s?%")
SAYS_OF_WHAT = re.compile(r"^\s*(</?\w+[^>]*>\s*)*(of\b|CI\b|interval|confidence|bootstrap)")
P_CELL = re.compile(r"^(0\.\d{4}|1\.0000|< 0\.0001|not enough data)$")
BLOCK = {
    "td",
    "th",
    "tr",
    "li",
    "p",
    "div",
    "br",
    "h1",
    "h2",
    "h3",
    "h4",
    "table",
    "section",
    "ul",
    "ol",
    "figure",
    "figcaption",
    "summary",
    "option",
    "label",
}
VOID = {
    "area",
    "base",
    "br",
    "col",
    "embed",
    "hr",
    "img",
    "input",
    "link",
    "meta",
    "source",
    "track",
    "wbr",
}


class _Walker(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, dict[str, str]]] = []
        self.texts: list[tuple[int, str, bool]] = []  # offset, text, "% of" title above it
        self.stream = ""
        self.problems: list[str] = []
        self.cells: list[dict[str, object]] = []  # open <td> being read
        self.svgs: list[dict[str, set[str]]] = []

    # --- structure
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in BLOCK:
            self.stream += " "
        a = {k: v or "" for k, v in attrs}
        title = a.get("title", "")
        if title and BAD_WORD.search(title):
            self.problems.append(f"title {title!r} says nan/None")
        if self.svgs or tag == "svg":
            for k, v in a.items():
                if "nan" in v.lower().split() or "NaN" in v:
                    self.problems.append(f"<{tag} {k}={v!r}> in an SVG has NaN")
        if tag == "svg":
            self.svgs.append({"series": set(), "legend": set()})
        if self.svgs and "data-series" in a:
            self.svgs[-1]["series"].add(a["data-series"])
        if tag == "td":
            self.cells.append({"classes": a.get("class", "").split(), "text": "", "drawn": False})
        elif self.cells and tag in ("svg", "input", "select", "button", "progress", "form"):
            self.cells[-1]["drawn"] = True
        if tag not in VOID:
            self.stack.append((tag, a))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in BLOCK:
            self.stream += " "
        if tag in VOID:
            return
        while self.stack:
            top, _ = self.stack.pop()
            if top == "td" and self.cells:
                self._close_cell(self.cells.pop())
            if top == "svg" and self.svgs:
                chart = self.svgs.pop()
                extra = chart["legend"] - chart["series"]
                if extra:
                    self.problems.append(f"legend names series not drawn: {sorted(extra)}")
            if top == tag:
                break

    def _close_cell(self, cell: dict[str, object]) -> None:
        text = " ".join(str(cell["text"]).split())
        classes = cell["classes"]
        assert isinstance(classes, list)
        if "p" in classes and (not P_CELL.match(text) or text == "0.0000"):
            self.problems.append(f"p-value cell reads {text!r}")
        if "num" in classes and not text and not cell["drawn"]:
            self.problems.append("a blank number cell")

    # --- text
    def handle_data(self, data: str) -> None:
        if any(tag in ("script", "style") for tag, _ in self.stack):
            return
        in_svg_title = bool(self.svgs) and self.stack and self.stack[-1][0] == "title"
        if self.svgs and self.stack and self.stack[-1][0] == "text":
            attrs = self.stack[-1][1]
            if "legend" in attrs.get("class", "").split():
                self.svgs[-1]["legend"].add(data.strip())
        if BAD_WORD.search(data):
            self.problems.append(f"text says nan/None: {data.strip()[:80]!r}")
        if "NaN" in data and (self.svgs or in_svg_title):
            self.problems.append(f"SVG text has NaN: {data.strip()[:80]!r}")
        titled = any("% of" in attrs.get("title", "") for _, attrs in self.stack)
        self.texts.append((len(self.stream), data, titled))
        self.stream += data
        for cell in self.cells:
            cell["text"] = str(cell["text"]) + data

    def percent_problems(self) -> list[str]:
        out = []
        for offset, text, titled in self.texts:
            for m in PERCENT.finditer(text):
                if titled:
                    continue
                after = self.stream[offset + m.end() : offset + m.end() + 60]
                if SAYS_OF_WHAT.match(after):
                    continue
                context = self.stream[max(0, offset + m.start() - 40) : offset + m.end() + 40]
                out.append(f"a percentage that does not say of what: {' '.join(context.split())!r}")
        return out


def wording_problems(html: str) -> list[str]:
    walker = _Walker()
    walker.feed(html)
    walker.close()
    return walker.problems + walker.percent_problems()


def page_text(html: str) -> str:
    """The page's visible text, whitespace collapsed (for assertions on what a reader sees)."""
    walker = _Walker()
    walker.feed(html)
    walker.close()
    return " ".join(walker.stream.split())


def body_text(response: object) -> str:
    """A response's body as text, whether it was streamed (downloads, CSV) or not."""
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content).decode()  # type: ignore[attr-defined]
    return response.content.decode()  # type: ignore[attr-defined]
