"""Query-term highlighting that cannot inject markup: split first, escape every piece."""

from __future__ import annotations

import re
from collections.abc import Iterable

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "do",
        "does",
        "for",
        "from",
        "how",
        "in",
        "is",
        "it",
        "of",
        "on",
        "or",
        "the",
        "to",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "with",
        "about",
        "into",
        "than",
        "that",
        "this",
        "those",
        "these",
        "there",
        "their",
        "them",
        "they",
        "was",
        "were",
        "will",
        "would",
        "can",
        "could",
        "should",
        "documents",
        "document",
        "relevant",
        "describe",
        "discuss",
    ]
)
_WORD = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*", re.UNICODE)


def query_terms(*texts: str) -> list[str]:
    """Distinct content words of the topic's title (and any other texts given), lower-cased."""
    seen: dict[str, None] = {}
    for text in texts:
        for word in _WORD.findall(text.lower()):
            if len(word) >= 3 and word not in STOPWORDS:
                seen.setdefault(word, None)
    return list(seen)


def topic_terms(campaign: object, topic: object) -> list[str]:
    """The terms highlighted in the documents of ``topic`` in ``campaign``."""
    return query_terms(getattr(topic, "title", ""))


def highlight(text: str, terms: Iterable[str]) -> SafeString:
    """``text`` HTML-escaped, with whole-word, case-insensitive matches of ``terms`` in <mark>.

    Matching runs on the raw text and each piece is escaped separately, so neither the document
    nor the terms can introduce markup, and entities (``&amp;``) are never split.
    """
    words = sorted({t for t in terms if t}, key=len, reverse=True)
    if not words:
        return escape(text)
    pattern = re.compile(
        r"(?<![\w])(" + "|".join(map(re.escape, words)) + r")(?![\w])", re.IGNORECASE
    )
    out: list[str] = []
    last = 0
    for m in pattern.finditer(text):
        out.append(escape(text[last : m.start()]))
        out.append(f"<mark>{escape(m.group(0))}</mark>")
        last = m.end()
    out.append(escape(text[last:]))
    return mark_safe("".join(out))


def paragraphs(text: str, terms: Iterable[str]) -> list[SafeString]:
    """The text split into paragraphs (blank lines or single newlines), each highlighted."""
    terms = list(terms)
    parts = [p.strip() for p in re.split(r"\n\s*\n|\n", text) if p.strip()]
    return [highlight(p, terms) for p in parts]
