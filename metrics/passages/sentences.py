"""Sentences found by a simple rule, and the ``sentence_window`` chunker built on them.

The rule (no language model, no tokenizer; deterministic):

* a paragraph break (a blank line, as :func:`~metrics.passages.chunkers.paragraph_spans` has it)
  always ends a sentence;
* inside a paragraph a sentence ends after a run of ``.``, ``!`` or ``?`` (and any closing quotes
  or brackets right after it) that is followed by whitespace and then an uppercase letter or a
  digit (``str.isupper``, ``str.isdigit``);
* except after an abbreviation: when the run is a single ``.`` and the word it ends (back to the
  previous whitespace, opening brackets and quotes removed) is a single capital initial
  (``J.``), two or more letters each followed by a dot (``e.g.``, ``i.e.``, ``U.S.``), or one of
  :data:`ABBREVIATIONS` (case-insensitive: ``Dr.``, ``Fig.``, ``No.``, ``et al.``, ...).

Each sentence is trimmed of surrounding whitespace. A sentence ending in ``U.S.`` before a
capital is therefore not split there; text written without capitals (Cranfield's abstracts are
all lower case) splits only at paragraph breaks.
"""

from __future__ import annotations

import re

from metrics.passages.chunkers import Span, paragraph_spans

__all__ = ["ABBREVIATIONS", "sentence_spans", "sentence_window_spans"]

# fmt: off
ABBREVIATIONS = frozenset({
    "al.", "approx.", "ca.", "cf.", "ch.", "co.", "corp.", "dr.", "eq.", "eqs.", "fig.", "figs.",
    "inc.", "jr.", "ltd.", "mr.", "mrs.", "ms.", "no.", "nos.", "p.", "pp.", "prof.", "ref.",
    "refs.", "resp.", "sec.", "sr.", "st.", "tab.", "vol.", "vols.", "vs.",
})
# fmt: on
"""Words ending in a dot after which a capital does not start a sentence (lower case)."""

_END = re.compile(r"[.!?]+[\"')\]\u2019\u201d]*(?=\s)")
_DOTTED = re.compile(r"(?:[^\W\d_]\.){2,}")  # e.g. i.e. U.S.
_OPENERS = "([{\"'\u2018\u201c"


def _abbreviation(text: str, para_start: int, dot: int) -> bool:
    """Whether the word ending with the dot at ``dot`` is an abbreviation (see the module)."""
    begin = dot
    while begin > para_start and not text[begin - 1].isspace():
        begin -= 1
    word = text[begin : dot + 1].lstrip(_OPENERS)
    if len(word) == 2 and word[0].isupper():
        return True
    return _DOTTED.fullmatch(word) is not None or word.lower() in ABBREVIATIONS


def _sentences_in(text: str, start: int, end: int, out: list[Span]) -> None:
    """Append the sentences of the paragraph ``text[start:end]`` (trimmed) to ``out``."""
    for m in _END.finditer(text, start, end):
        nxt = m.end()
        while nxt < end and text[nxt].isspace():
            nxt += 1
        if nxt >= end or not (text[nxt].isupper() or text[nxt].isdigit()):
            continue
        if m.group().rstrip("\"')]\u2019\u201d") == "." and _abbreviation(text, start, m.start()):
            continue
        out.append((start, m.end()))
        start = nxt
    out.append((start, end))


def sentence_spans(text: str) -> list[Span]:
    """The sentences of ``text``, in order (the rule is the module docstring's)."""
    sentences: list[Span] = []
    for start, end in paragraph_spans(text):
        _sentences_in(text, start, end, sentences)
    return sentences


def sentence_window_spans(text: str, window: int = 3, stride: int | None = None) -> list[Span]:
    """Windows of ``window`` consecutive sentences, each starting ``stride`` sentences after the
    previous (default ``stride = window``: no overlap); a window runs from its first sentence's
    start to its last one's end, across paragraph breaks. The windows start at sentence 0,
    stride, 2 * stride, ... up to the first that reaches the last sentence, which may hold fewer
    than ``window`` sentences. Five sentences, ``window=3, stride=1``: sentences 0-2, 1-3, 2-4."""
    step = window if stride is None else stride
    sentences = sentence_spans(text)
    spans: list[Span] = []
    first = 0
    while sentences:
        last = min(first + window, len(sentences)) - 1
        spans.append((sentences[first][0], sentences[last][1]))
        if last == len(sentences) - 1:
            break
        first += step
    return spans
