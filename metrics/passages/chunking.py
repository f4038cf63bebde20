"""The chunker registry, :class:`Chunking` (a chunker named with its parameters) and passage ids.

A chunking is written as its canonical string, the chunker's name and every parameter in the
registry's order, no spaces: ``fixed(size=500,overlap=100)``, ``paragraph(min_chars=0)``,
``sentence_window(window=3,stride=3)``. :meth:`Chunking.parse` reads that form and also a looser
one (spaces, any order, parameters left out take their defaults, a bare name), so a stored
chunking reads back as the same value: ``Chunking.parse(str(c)) == c``.

Passage ids are local to a document, ``p0``, ``p1``, ... in order of start; across a
collection a passage is ``docid#pid`` (:func:`passage_id`), and since a pid never holds ``#`` the
docid is everything before the *last* ``#`` (:func:`split_passage_id`), ``#`` in docids included.

Bad names and parameters raise :class:`~metrics.problems.InvalidInput` (a ``ValueError``) with
every problem at once, each naming the parameter and its allowed range, e.g.
``chunking fixed.overlap: must be an integer with 0 <= overlap < size (500), got 600``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from metrics.passages.chunkers import Chunk, Span, fixed_spans, line_spans, paragraph_spans
from metrics.passages.sentences import sentence_window_spans
from metrics.problems import InvalidInput, Problem

__all__ = [
    "CHUNKERS",
    "Chunker",
    "Chunking",
    "Param",
    "make_chunking",
    "passage_id",
    "split_passage_id",
]


@dataclass(frozen=True)
class Param:
    """One integer parameter of a chunker: its default (a number, or the name of an earlier
    parameter whose value it takes) and its range, ``minimum <= value``, and ``value < below``
    or ``value <= at_most`` where those name an earlier parameter."""

    name: str
    default: int | str
    minimum: int
    below: str | None = None
    at_most: str | None = None
    doc: str = ""

    def allowed(self, values: Mapping[str, int]) -> str:
        """The range in words, with the other parameter's value: ``0 <= overlap < size (500)``."""
        text = f"{self.minimum} <= {self.name}"
        if self.below is not None:
            text += f" < {self.below} ({values[self.below]})"
        if self.at_most is not None:
            text += f" <= {self.at_most} ({values[self.at_most]})"
        return text

    def accepts(self, value: int, values: Mapping[str, int]) -> bool:
        if value < self.minimum:
            return False
        if self.below is not None and value >= values[self.below]:
            return False
        return self.at_most is None or value <= values[self.at_most]


@dataclass(frozen=True)
class Chunker:
    """A registry entry: the name, the function from text to spans (called with the parameters
    as keyword arguments) and the parameters in canonical order."""

    name: str
    spans: Callable[..., list[Span]]
    params: tuple[Param, ...]
    doc: str


CHUNKERS: dict[str, Chunker] = {
    c.name: c
    for c in (
        Chunker(
            "fixed",
            fixed_spans,
            (
                Param("size", 500, 1, doc="characters a chunk holds at most"),
                Param("overlap", 100, 0, below="size", doc="characters shared with the previous"),
            ),
            "windows of characters, cut at word boundaries nearby",
        ),
        Chunker(
            "paragraph",
            paragraph_spans,
            (Param("min_chars", 0, 0, doc="a shorter paragraph is merged with the next"),),
            "paragraphs between blank lines",
        ),
        Chunker(
            "line",
            line_spans,
            (Param("min_chars", 0, 0, doc="a shorter line is merged with the next"),),
            "lines: a paragraph a line, as SMART and TREC documents are stored",
        ),
        Chunker(
            "sentence_window",
            sentence_window_spans,
            (
                Param("window", 3, 1, doc="sentences per chunk"),
                Param("stride", "window", 1, at_most="window", doc="sentences between starts"),
            ),
            "windows of consecutive sentences",
        ),
    )
}
"""Chunker name -> entry. Adding a chunker is one entry here plus its tests."""

_SPEC = re.compile(r"\s*(\w+)\s*(?:\((.*)\))?\s*", re.DOTALL)
_INTEGER = re.compile(r"[+-]?\d+")


def _integer(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
        return int(value)
    return None


def _resolve(name: str, given: Mapping[str, object]) -> tuple[tuple[str, int], ...]:
    """Every parameter of chunker ``name`` in canonical order, checked; or InvalidInput."""
    chunker = CHUNKERS.get(name)
    if chunker is None:
        known = ", ".join(CHUNKERS)
        raise InvalidInput("chunking", [Problem(0, f"unknown chunker {name!r}; known: {known}")])
    problems: list[Problem] = []
    names = [p.name for p in chunker.params]
    for key in given:
        if key not in names:
            message = f"{name} has no parameter {key!r}; its parameters: {', '.join(names)}"
            problems.append(Problem(0, message))
    values: dict[str, int] = {}
    for param in chunker.params:
        if param.name in given:
            raw = given[param.name]
        elif isinstance(param.default, str):
            raw = values.get(param.default)  # None when that parameter is bad (reported)
        else:
            raw = param.default
        value = _integer(raw)
        where = f"{name}.{param.name}"
        if any(d is not None and d not in values for d in (param.below, param.at_most)):
            # the parameter this one's range depends on is bad, and reported: no range to give
            if value is None and param.name in given:
                problems.append(Problem.at(where, f"must be an integer, got {raw!r}"))
            continue
        if value is None or not param.accepts(value, values):
            shown = repr(raw) if value is None else str(value)
            message = f"must be an integer with {param.allowed(values)}, got {shown}"
            problems.append(Problem.at(where, message))
            continue
        values[param.name] = value
    if problems:
        raise InvalidInput("chunking", problems)
    return tuple(values.items())


@dataclass(frozen=True)
class Chunking:
    """A chunker with its parameters, every one of them resolved and checked on construction:
    ``Chunking("fixed", (("size", 300),))`` holds ``size=300, overlap=100``. ``str()`` is the
    canonical form, :meth:`parse` reads it back, :meth:`chunk` cuts a text."""

    name: str
    params: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", _resolve(self.name, dict(self.params)))

    def __str__(self) -> str:
        return f"{self.name}({','.join(f'{k}={v}' for k, v in self.params)})"

    @classmethod
    def parse(cls, spec: str) -> Chunking:
        """Read ``name(param=value,...)`` (spaces allowed, parameters optional, any order)."""
        m = _SPEC.fullmatch(spec)
        if m is None:
            message = f"expected name(param=value,...), got {spec!r}"
            raise InvalidInput("chunking", [Problem(0, message)])
        given: dict[str, object] = {}
        problems: list[Problem] = []
        for item in (m.group(2) or "").split(","):
            if not item.strip():
                continue
            key, sep, value = (part.strip() for part in item.partition("="))
            if not sep or not key:
                problems.append(Problem(0, f"expected param=value, got {item.strip()!r}"))
            elif key in given:
                problems.append(Problem(0, f"{key} is given twice"))
            else:
                given[key] = value
        if problems:
            raise InvalidInput("chunking", problems)
        return cls(m.group(1), _resolve(m.group(1), given))

    def param(self, name: str) -> int:
        """The value of one parameter (``KeyError`` if the chunker has none of that name)."""
        return dict(self.params)[name]

    def chunk(self, text: str) -> list[Chunk]:
        """The chunks of ``text``: ``p0``, ``p1``, ... in order of start (none for blank text)."""
        spans = CHUNKERS[self.name].spans(text, **dict(self.params))
        return [Chunk(f"p{i}", start, end) for i, (start, end) in enumerate(spans)]


def make_chunking(name: str, **params: int) -> Chunking:
    """``Chunking(name, params)`` from keyword arguments: ``make_chunking("fixed", size=300)``."""
    return Chunking(name, tuple(params.items()))


def passage_id(docid: str, pid: str) -> str:
    """The collection-wide id of passage ``pid`` of document ``docid``: ``docid#pid``."""
    return f"{docid}#{pid}"


def split_passage_id(full: str) -> tuple[str, str]:
    """``(docid, pid)`` from ``docid#pid``, split at the last ``#`` (docids may contain ``#``).

    >>> split_passage_id("web#2024#p3")
    ('web#2024', 'p3')
    """
    docid, sep, pid = full.rpartition("#")
    if not sep or not docid or not pid:
        raise ValueError(f"a passage id is docid#pid, got {full!r}")
    return docid, pid
