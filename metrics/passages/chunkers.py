"""The chunkers: a document's text cut into passages, each kept as its character offsets.

A chunk is :class:`Chunk` ``(pid, start, end)``: ``text[start:end]`` is the passage, the offsets
being Python string indices (code points) into the document text as stored. Every chunker here
returns its spans in order of ``start`` (strictly increasing), none empty, each trimmed of
surrounding whitespace (``text[start]`` and ``text[end - 1]`` are not whitespace, as
``str.isspace`` has it); text that is empty or only whitespace has no chunk. The same text and
parameters always give the same spans.

* :func:`fixed_spans`: windows of ``size`` characters, ``overlap`` of them shared with the
  previous window, the cuts moved to word boundaries (the rule is in its docstring).
* :func:`paragraph_spans`: paragraphs, separated by blank lines; short ones merged forwards.
* :func:`sentence_window_spans` (:mod:`metrics.passages.sentences`): windows of sentences.

Parameters are checked where a chunking is named (:mod:`metrics.passages.chunking`), not here.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = [
    "Chunk",
    "Span",
    "fixed_spans",
    "paragraph_spans",
    "snap_window",
    "stripped",
]

Span = tuple[int, int]
"""``(start, end)``: ``text[start:end]``."""


class Chunk(NamedTuple):
    """One passage of a document: its id local to the document (``p0``, ``p1``, ...) and the
    offsets of its text, ``text[start:end]``."""

    pid: str
    start: int
    end: int


def stripped(text: str, start: int, end: int) -> Span:
    """``(start, end)`` moved inwards past whitespace (``start == end`` if only whitespace)."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


# --- fixed ----------------------------------------------------------------------------------


def snap_window(size: int, overlap: int) -> int:
    """How far back :func:`fixed_spans` may move a cut to reach a word boundary:
    ``min(size // 10, (size - overlap - 1) // 2)`` characters. A tenth of the size keeps chunks
    near their nominal length; the second bound makes every chunk start after the previous one
    (a window moves at least ``size - overlap - 2 * w >= 1`` characters)."""
    return min(size // 10, (size - overlap - 1) // 2)


def _word_boundary(text: str, p: int, lowest: int) -> int:
    """The largest ``q`` in ``[lowest, p]`` next to whitespace (``text[q - 1]`` or ``text[q]``),
    where a cut splits no word; ``p`` itself when there is none (the word is cut)."""
    for q in range(p, lowest - 1, -1):
        if text[q - 1].isspace() or text[q].isspace():
            return q
    return p


def fixed_spans(text: str, size: int = 500, overlap: int = 100) -> list[Span]:
    """Windows of at most ``size`` characters, each sharing about ``overlap`` with the previous.

    With ``lo, hi`` the text's first and past-the-last non-whitespace positions and ``w`` the
    :func:`snap_window`, starting at ``s = lo``:

    1. the nominal end is ``t = s + size``; if ``t >= hi`` the chunk is ``[s, hi)``, the last;
    2. otherwise the cut ``e`` is the largest word boundary (a position next to whitespace) in
       ``[t - w, t]``, or ``t`` if there is none there (a word longer than the window is cut);
       the chunk is ``[s, e)``, trimmed of trailing whitespace;
    3. the next chunk starts at ``e - overlap``, moved back the same way to the largest word
       boundary in ``[e - overlap - w, e - overlap]``, then forwards past whitespace.

    Cuts only move back, so a chunk is at most ``size`` characters long and shares at least
    ``overlap`` characters with the previous one, less only what trimming whitespace removes
    (with ``overlap=0`` consecutive chunks do not overlap). Every non-whitespace character is in
    some chunk. Example (``w = 2``): the first cut, 20, is next to a space, so the chunk is
    ``[0, 20)`` trimmed to ``[0, 19)``; the next start, 20 - 5 = 15, is a boundary too (a space),
    skipped forwards to 16, so ``fox`` is shared::

        >>> t = "the quick brown fox jumps over the lazy dog again"
        >>> [t[s:e] for s, e in fixed_spans(t, size=20, overlap=5)]
        ['the quick brown fox', 'fox jumps over the', 'the lazy dog again']
    """
    lo, hi = stripped(text, 0, len(text))
    if lo == hi:
        return []
    w = snap_window(size, overlap)
    spans: list[Span] = []
    start = lo
    while True:
        target = start + size
        if target >= hi:
            spans.append((start, hi))
            return spans
        end = _word_boundary(text, target, target - w)
        spans.append(stripped(text, start, end))
        # progress: end - overlap - w >= start + size - overlap - 2w >= start + 1
        nominal = end - overlap
        start, _ = stripped(text, _word_boundary(text, nominal, nominal - w), hi)


# --- paragraph ------------------------------------------------------------------------------

_BLANK_LINES = re.compile(r"\n(?:[^\S\n]*\n)+")
"""A line break followed by one or more empty or whitespace-only lines (``\\r\\n`` too)."""


def paragraph_spans(text: str, min_chars: int = 0) -> list[Span]:
    """Paragraphs: the text between blank lines (one or more lines that are empty or only
    whitespace), each trimmed of surrounding whitespace, empty ones dropped.

    A chunk shorter than ``min_chars`` characters (``end - start``) takes in the next paragraph,
    and so on until it is long enough or no paragraph is left; the last one may stay short. Its
    span then includes the blank lines between the merged paragraphs.
    """
    return _merged(_split(text, _BLANK_LINES), min_chars)


_LINE_BREAKS = re.compile(r"\n")


def line_spans(text: str, min_chars: int = 0) -> list[Span]:
    """Lines: each non-blank line a chunk, trimmed of surrounding whitespace; texts stored a
    paragraph a line (the SMART and TREC document readers keep their paragraphs so) cut by
    paragraph. ``min_chars`` merges a short line with the next, as :func:`paragraph_spans`
    does."""
    return _merged(_split(text, _LINE_BREAKS), min_chars)


def _split(text: str, breaks: re.Pattern[str]) -> list[Span]:
    """The stripped, non-empty pieces of ``text`` between the matches of ``breaks``."""
    pieces: list[Span] = []
    pos = 0
    for m in breaks.finditer(text):
        pieces.append(stripped(text, pos, m.start()))
        pos = m.end()
    pieces.append(stripped(text, pos, len(text)))
    return [(s, e) for s, e in pieces if s < e]


def _merged(paragraphs: list[Span], min_chars: int) -> list[Span]:
    """Each piece shorter than ``min_chars`` joined with the next until long enough."""
    merged: list[Span] = []
    i = 0
    while i < len(paragraphs):
        start, end = paragraphs[i]
        while end - start < min_chars and i + 1 < len(paragraphs):
            i += 1
            end = paragraphs[i][1]
        merged.append((start, end))
        i += 1
    return merged
