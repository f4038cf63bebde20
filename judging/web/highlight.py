"""Query-term highlighting that cannot inject markup: match on the raw text, escape every piece.

What is marked: the content words of the topic's title (``<mark class="t">``, the strong mark)
and of its description and narrative (``<mark class="d">``), stop words and TREC's narrative
boilerplate ("a relevant document must discuss ...") left out, plus the campaign's extra terms
(``Campaign.highlight_terms``: words or phrases an admin chose, strong marks too). Words match
by their English Snowball stem (Porter2, the ``snowballstemmer`` package), so "cost" marks
"costs" and "costing"; phrases match word by word, by stems, across spaces or hyphens.

Speed: pure-Python stemming costs about 40 us a word, too slow to stem every word of a 50 KB
document on the judging path. So one regular expression (built once per set of terms) finds
only the *candidate* words, those that start with a term's stem prefix, and only these are
stemmed (cached) and kept when their stem is a term's stem. A word with a given stem starts
with that stem, or with the stem less its final "i" ("happy" -> "happi"), which is the prefix
used; the few irregular forms Snowball special-cases ("dying" -> "die") may be missed.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import Any

import snowballstemmer
from django.utils.safestring import SafeString

from metrics.judges.probes import STOPWORDS  # one English stop list, shared with the stuffing probe


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# TREC topic boilerplate: words of the description and narrative that say what to look for,
# not what the topic is about. Matched by stem ("discusses", "mentioning", "identified").
BOILERPLATE = _words(
    """
    relevant relevance irrelevant document documents article articles discuss discussion
    mention information identify describe description narrative find include including
    contain provide specific example instance considered regarding concerning related
    pertaining pertinent interested looking cite indicate reference references must also
    non various particular given detail details topic merely
    """
)

STRONG = "t"  # the title's words and the admin's extra terms
WEAK = "d"  # the description's and narrative's words

_TOKEN = re.compile(r"[^\W_]+")  # the pieces words are matched by (a hyphen splits)
_STEMMER = snowballstemmer.stemmer("english")


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """The English Snowball stem of ``word`` (lower-cased first)."""
    return str(_STEMMER.stemWord(word.lower()))


_BOILERPLATE_STEMS = frozenset(stem(w) for w in BOILERPLATE)


def _prefix(word: str) -> str:
    """What every word with ``word``'s stem starts with (see the module docstring)."""
    s = stem(word)
    n = 0
    for a, b in zip(word, s, strict=False):
        if a != b:
            break
        n += 1
    common = s[:n]
    prefix = common[: len(s) - 1] if s.endswith("i") else common
    return prefix or word[:1]  # never empty: that would make every word a candidate


class Terms:
    """The terms to mark: single words by stem, phrases as stem sequences, each with its mark
    class (``STRONG`` or ``WEAK``; a word both in the title and the narrative is strong).
    Iterating gives the words and phrases as given (lower-cased), strongest first.

    ``topic_terms`` answers a shared, cached instance: build one with ``add`` and then only read
    it (its patterns are compiled once, on first use)."""

    def __init__(self) -> None:
        self.words: dict[str, str] = {}  # stem -> class
        self.phrases: dict[tuple[str, ...], str] = {}  # stems -> class
        self._shown: dict[str, str] = {}  # the term as given -> class
        self._prefixes: set[str] = set()  # of the single words and of each phrase's first word
        self._phrase_tokens: dict[tuple[str, ...], list[str]] = {}
        self._word_re: re.Pattern[str] | None = None
        self._by_first: dict[str, list[tuple[re.Pattern[str], tuple[str, ...]]]] | None = None

    def add(self, term: str, cls: str) -> None:
        """Add a word or phrase (its words split on anything not a letter or digit)."""
        tokens = [t.lower() for t in _TOKEN.findall(term)]
        if not tokens:
            return
        key = " ".join(tokens)
        if self._shown.get(key) == STRONG:
            return
        self._shown[key] = cls
        self._prefixes.add(_prefix(tokens[0]))
        if len(tokens) == 1:
            s = stem(tokens[0])
            if self.words.get(s) != STRONG:
                self.words[s] = cls
        else:
            stems = tuple(stem(t) for t in tokens)
            if self.phrases.get(stems) != STRONG:
                self.phrases[stems] = cls
                self._phrase_tokens[stems] = tokens
        self._word_re = None
        self._by_first = None

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._shown, key=lambda k: self._shown[k] != STRONG))

    def __len__(self) -> int:
        return len(self._shown)

    def __repr__(self) -> str:
        return f"Terms({list(self)!r})"

    def word_pattern(self) -> re.Pattern[str] | None:
        """Candidates in lower-cased text: runs of word characters starting with one of the
        stem prefixes (the caller drops those that start inside a word: a lookbehind here
        would make the scan several times slower)."""
        if self._word_re is None and self._prefixes:
            self._word_re = re.compile(r"(?:" + _alternation(self._prefixes) + r")[^\W_]*")
        return self._word_re

    def phrases_from(self, first: str) -> list[tuple[re.Pattern[str], tuple[str, ...]]]:
        """The phrases whose first word has stem ``first``, longest first, each with the
        pattern that matches it (in lower-cased text, from its first word's start: its words,
        each starting with its prefix, separated by spaces or hyphens)."""
        if self._by_first is None:
            by_first: dict[str, list[tuple[re.Pattern[str], tuple[str, ...]]]] = {}
            for stems in sorted(self.phrases, key=len, reverse=True):
                pattern = r"[\s\-]+".join(
                    re.escape(_prefix(t)) + r"[^\W_]*" for t in self._phrase_tokens[stems]
                )
                by_first.setdefault(stems[0], []).append(
                    (re.compile(pattern + r"(?![^\W_])"), stems)
                )
            self._by_first = by_first
        return self._by_first.get(first, [])


def _alternation(prefixes: Iterable[str]) -> str:
    """A regex matching any of ``prefixes``, as a trie (one branch per first letter, and so on:
    the scan tries one branch per position instead of every prefix), dropping the prefixes a
    shorter one covers (the candidate pattern extends each prefix to the whole word anyway)."""
    kept: list[str] = []
    for p in sorted(prefixes, key=len):
        if not any(p.startswith(k) for k in kept):
            kept.append(p)
    trie: dict[str, Any] = {}
    for p in kept:
        node = trie
        for ch in p:
            node = node.setdefault(ch, {})
        node[""] = {}  # a prefix ends here (never with children: covered ones were dropped)

    def regex(node: dict[str, Any]) -> str:
        branches = [re.escape(ch) + regex(child) for ch, child in sorted(node.items()) if ch]
        if not branches:
            return ""
        return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"

    return regex(trie)


def is_content_word(word: str) -> bool:
    """A topic word worth marking: three characters or more, not a stop word, not boilerplate."""
    w = word.lower()
    return len(w) >= 3 and w not in STOPWORDS and stem(w) not in _BOILERPLATE_STEMS


def query_terms(*texts: str) -> list[str]:
    """Distinct content words of the texts given (a topic's title, ...), lower-cased."""
    seen: dict[str, None] = {}
    for text in texts:
        for word in _TOKEN.findall(text.lower()):
            if is_content_word(word):
                seen.setdefault(word, None)
    return list(seen)


@lru_cache(maxsize=512)
def _terms_of(title: str, description: str, narrative: str, extra: tuple[str, ...]) -> Terms:
    terms = Terms()
    for word in query_terms(title):
        terms.add(word, STRONG)
    for term in extra:
        terms.add(term, STRONG)
    for word in query_terms(description, narrative):
        terms.add(word, WEAK)
    return terms


def topic_terms(campaign: object, topic: object) -> Terms:
    """The terms highlighted in the documents of ``topic`` in ``campaign``: the topic's title,
    description and narrative words and the campaign's extra terms (cached by their text)."""
    extra = getattr(campaign, "highlight_terms", None) or []
    return _terms_of(
        getattr(topic, "title", "") or "",
        getattr(topic, "description", "") or "",
        getattr(topic, "narrative", "") or "",
        tuple(t for t in extra if isinstance(t, str)),
    )


def _as_terms(terms: Terms | Iterable[str]) -> Terms:
    if isinstance(terms, Terms):
        return terms
    out = Terms()
    for t in terms:
        if t:
            out.add(t, STRONG)
    return out


def spans(text: str, terms: Terms | Iterable[str]) -> list[tuple[int, int, str]]:
    """(start, end, class) of the marked pieces of ``text``, in order, never overlapping.
    A phrase wins over the words inside it (and over a shorter phrase at the same place)."""
    terms = _as_terms(terms)
    word_re = terms.word_pattern()
    if word_re is None:
        return []
    low = text.lower()
    if len(low) != len(text):  # a few characters lower-case to two ("İ"): keep the offsets
        low = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    words = terms.words
    found: list[tuple[int, int, str]] = []
    covered = 0  # the end of the last phrase marked: its words are not marked again
    for m in word_re.finditer(low):
        start = m.start()
        if start < covered or (start and low[start - 1].isalnum()):
            continue  # inside a phrase already marked, or not the start of a word
        s = stem(m.group(0))
        if terms.phrases:
            phrase = _phrase_at(low, start, s, terms)
            if phrase is not None:
                found.append(phrase)
                covered = phrase[1]
                continue
        cls = words.get(s)
        if cls is not None:
            found.append((start, m.end(), cls))
    return found


def _phrase_at(low: str, start: int, first: str, terms: Terms) -> tuple[int, int, str] | None:
    for pattern, stems in terms.phrases_from(first):
        m = pattern.match(low, start)
        if m and tuple(stem(t) for t in _TOKEN.findall(m.group(0))) == stems:
            return (start, m.end(), terms.phrases[stems])
    return None


def highlight(text: str, terms: Terms | Iterable[str]) -> SafeString:
    """``text`` HTML-escaped, with the matches of ``terms`` in ``<mark class="t|d">``.

    ``terms``: a ``Terms`` (from ``topic_terms``) or plain words and phrases (marked strong).
    Matching runs on the raw text and each piece is escaped separately, so neither the document
    nor the terms can introduce markup, and entities (``&amp;``) are never split.
    """
    # html.escape is what django.utils.html.escape calls (same output), without the lazy
    # wrapper and a SafeString per piece: a third of the time on a long document
    escape = html.escape
    out: list[str] = []
    last = 0
    for start, end, cls in spans(text, terms):
        out.append(escape(text[last:start]))
        out.append(f'<mark class="{cls}">{escape(text[start:end])}</mark>')
        last = end
    out.append(escape(text[last:]))
    return SafeString("".join(out))  # mark_safe() without its lazy-argument check


def paragraphs(text: str, terms: Terms | Iterable[str]) -> list[SafeString]:
    """The text split into paragraphs (blank lines or single newlines), each highlighted."""
    terms = _as_terms(terms)
    parts = [p.strip() for p in re.split(r"\n\s*\n|\n", text) if p.strip()]
    return [highlight(p, terms) for p in parts]
