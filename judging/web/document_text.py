"""A document's text as the judging screen shows it: paragraphs that know their offsets, and a
passage in its document's context.

Every paragraph shown carries the character range of ``Document.text`` it shows
(``data-start``, ``data-end``: Python code points, the scale of passages' offsets and of the
answer spans in ``assessments.spans``), so that the page computes the offsets of a selection
from the paragraph it is in, never from positions in the page: highlighting, folding and the
marks the page adds change the markup, not the text of a paragraph. Paragraphs are what
``highlight.paragraphs`` shows (the text split at newlines, each piece stripped), so a whole
document looks as it always did; for a passage the text is cut at the passage's ends too,
into the text before (folded), the passage, and the text after (folded).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from django.utils.safestring import SafeString

from judging.web.highlight import Terms, highlight

_LINE = re.compile(r"[^\n]+")


@dataclass(frozen=True)
class Piece:
    """A paragraph (or the part of one on one side of a passage's end): ``text[start:end]``,
    escaped and highlighted."""

    start: int
    end: int
    html: SafeString


@dataclass(frozen=True)
class DocumentText:
    """The pieces of a document's text; with a passage, those before it, in it and after it,
    and how many characters the folded text before and after has."""

    passage: tuple[int, int] | None
    before: list[Piece] = field(default_factory=list)
    shown: list[Piece] = field(default_factory=list)  # the passage's, or the whole document's
    after: list[Piece] = field(default_factory=list)
    before_chars: int = 0
    after_chars: int = 0

    @property
    def pieces(self) -> list[Piece]:
        return [*self.before, *self.shown, *self.after]

    def before_label(self) -> str:
        return f"… {self.before_chars:,} characters before"

    def after_label(self) -> str:
        return f"… {self.after_chars:,} characters after"


def pieces(text: str, terms: Terms, start: int = 0, end: int | None = None) -> list[Piece]:
    """The paragraphs of ``text[start:end]`` with their offsets in ``text``: split at newlines,
    each stripped of white space at both ends, empty ones left out."""
    end = len(text) if end is None else end
    out: list[Piece] = []
    for m in _LINE.finditer(text, start, end):
        line = m.group(0)
        kept = line.strip()
        if not kept:
            continue
        at = m.start() + (len(line) - len(line.lstrip()))
        out.append(Piece(at, at + len(kept), highlight(kept, terms)))
    return out


def document_text(text: str, terms: Terms, passage: tuple[int, int] | None = None) -> DocumentText:
    """The text to show: the whole document's paragraphs, or, for a passage ``(start, end)``,
    the paragraphs before, inside and after it (offsets clamped to the text)."""
    if passage is None:
        return DocumentText(None, shown=pieces(text, terms))
    start = max(0, min(passage[0], len(text)))
    end = max(start, min(passage[1], len(text)))
    return DocumentText(
        (start, end),
        before=pieces(text, terms, 0, start),
        shown=pieces(text, terms, start, end),
        after=pieces(text, terms, end),
        before_chars=start,
        after_chars=len(text) - end,
    )
