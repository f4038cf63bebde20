"""The tables: :class:`Run` and :class:`Qrels` grouped per query, :class:`RunTable` in file order.

Columnar and numpy-backed: rows of one query are contiguous (``offsets[i]:offsets[i+1]`` are the
rows of ``qids[i]``), docids are UTF-8 bytes in numpy ``S`` arrays (compact, and byte order is
the order trec_eval's ``strcmp`` uses for tie-breaking). :attr:`Run.order` is trec_eval's
ranking: score descending, ties by docid descending, the rank column ignored. Scores may be
infinite (ordered as numbers) or NaN: NaN-scored documents come after every other document of
their query (after ``-inf`` too), among themselves by docid descending, as ties. (trec_eval's
comparison treats NaN as equal to everything, which leaves its order to its sort; last is the
deterministic choice, and the one that reproduces the official TREC figures of the runs that
have NaN scores.)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from metrics._docindex import docid_hashes
from metrics.problems import ReadWarning

__all__ = ["Qrels", "Run", "RunTable", "empty_bytes", "segments"]

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]
Bytes = npt.NDArray[np.bytes_]
Bool = npt.NDArray[np.bool_]


def empty_bytes() -> Bytes:
    return np.empty(0, dtype="S1")


def segments(offsets: I64) -> I64:
    """Query index of every row, from segment offsets."""
    return np.repeat(np.arange(offsets.size - 1, dtype=np.int64), np.diff(offsets))


def _by_docid(docids: Bytes, values: Any, a: int, b: int) -> dict[str, Any]:
    """``{docid: value}`` of rows ``a:b`` (one query's rows)."""
    return dict(zip((d.decode() for d in docids[a:b].tolist()), values[a:b].tolist(), strict=True))


@dataclass(frozen=True)
class RunTable:
    """A run's columns in file order, for ingestion (see :func:`metrics.io.parse_run`)."""

    qids: list[str]
    docids: list[str]
    ranks: I64
    scores: F64
    tags: list[str]
    lines: int
    warnings: tuple[ReadWarning, ...] = ()  # what the reader accepted although unusual


@dataclass(frozen=True, eq=False)
class Run:
    """A run grouped per query: columnar, numpy-backed.

    Rows of one query are contiguous, in file order; ``offsets[i]:offsets[i+1]`` are the rows of
    ``qids[i]``. ``docids`` holds UTF-8 bytes. Build one with :func:`metrics.io.read_run` or
    :meth:`Run.from_dict`.
    """

    qids: tuple[str, ...]
    offsets: I64
    docids: Bytes
    scores: F64
    tag: str = ""
    tags: tuple[str, ...] = field(default=(), repr=False)  # every distinct tag, first-seen order
    # what the reader accepted although unusual (NaN or infinite scores, extra fields), by line
    warnings: tuple[ReadWarning, ...] = field(default=(), repr=False)

    @classmethod
    def from_dict(cls, run: Mapping[str, Mapping[str, float]], *, tag: str = "") -> Run:
        """Build a run from ``{qid: {docid: score}}``."""
        qids = tuple(str(q) for q in run)
        sizes = [len(run[q]) for q in run]
        offsets = np.zeros(len(qids) + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        docs = [str(d).encode() for q in run for d in run[q]]
        scores = np.fromiter(
            (float(s) for q in run for s in run[q].values()), np.float64, count=int(offsets[-1])
        )
        docids = np.array(docs, dtype=np.bytes_) if docs else empty_bytes()
        return cls(qids, offsets, docids, scores, tag, tags=(tag,) if tag else ())

    def __len__(self) -> int:
        return int(self.offsets[-1])

    def with_float32_scores(self) -> Run:
        """This run with scores rounded to single precision.

        trec_eval 9.x (and so pytrec_eval, and many published figures) stored scores as C
        ``float``; rounding reproduces its ties and order. trec_eval 10 keeps doubles. NaN stays
        NaN; a double beyond float's range becomes an infinity of its sign, as a C cast does.
        """
        with np.errstate(over="ignore"):
            scores = self.scores.astype(np.float32).astype(np.float64)
        return Run(self.qids, self.offsets, self.docids, scores, self.tag, self.tags, self.warnings)

    @cached_property
    def _index(self) -> dict[str, int]:
        return {q: i for i, q in enumerate(self.qids)}

    def __contains__(self, qid: object) -> bool:
        return qid in self._index

    @cached_property
    def hashes(self) -> npt.NDArray[np.uint64]:
        """64-bit hash of every docid (see :func:`docid_hashes`)."""
        return docid_hashes(self.docids)

    @cached_property
    def order(self) -> I64:
        """Row permutation into trec_eval order.

        Within each query: score descending (as double), ties broken by docid in *descending* byte
        order (trec_eval ``form_res_rels.c``); queries keep their place. NaN scores rank after
        every other score (after ``-inf``), tied among themselves.
        """
        return _trec_order(self.offsets, self.scores, self.docids)

    def ranking(self, qid: str) -> list[str]:
        """Docids of ``qid`` in trec_eval order (score desc, docid desc); ``[]`` if absent."""
        i = self._index.get(qid)
        if i is None:
            return []
        rows = self.order[self.offsets[i] : self.offsets[i + 1]]
        return [d.decode() for d in self.docids[rows].tolist()]

    def scores_of(self, qid: str) -> dict[str, float]:
        """``{docid: score}`` of one query (empty if absent)."""
        i = self._index.get(qid)
        if i is None:
            return {}
        return _by_docid(self.docids, self.scores, int(self.offsets[i]), int(self.offsets[i + 1]))

    def to_dict(self) -> dict[str, dict[str, float]]:
        """``{qid: {docid: score}}``."""
        return {q: self.scores_of(q) for q in self.qids}


@dataclass(frozen=True, eq=False)
class Qrels:
    """Relevance judgments grouped per query: columnar, numpy-backed.

    ``docids`` (UTF-8 bytes) are sorted within each query so lookups are binary searches.
    Negative grades mean "pooled but not judged" (trec_eval's convention).
    """

    qids: tuple[str, ...]
    offsets: I64
    docids: Bytes
    grades: I64

    @classmethod
    def from_dict(cls, qrels: Mapping[str, Mapping[str, int]]) -> Qrels:
        """Build qrels from ``{qid: {docid: grade}}``."""
        qids = tuple(str(q) for q in qrels)
        sizes = [len(qrels[q]) for q in qrels]
        offsets = np.zeros(len(qids) + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        docs = [str(d).encode() for q in qrels for d in qrels[q]]
        grades = np.fromiter(
            (int(g) for q in qrels for g in qrels[q].values()), np.int64, count=int(offsets[-1])
        )
        docids = np.array(docs, dtype=np.bytes_) if docs else empty_bytes()
        return cls._sorted(qids, offsets, docids, grades)

    @classmethod
    def _sorted(cls, qids: tuple[str, ...], offsets: I64, docids: Bytes, grades: I64) -> Qrels:
        if docids.size:
            # sort by (query, docid bytes): rank the docids once, then one integer sort
            keys = _byte_keys(docids)
            by_doc = np.argsort(keys[0]) if len(keys) == 1 else np.lexsort(keys[::-1])
            rank = np.empty(docids.size, dtype=np.int64)
            rank[by_doc] = np.arange(docids.size, dtype=np.int64)
            order = np.argsort(segments(offsets) * docids.size + rank, kind="stable")
            docids, grades = docids[order], grades[order]
        return cls(qids, offsets, docids, grades)

    def __len__(self) -> int:
        return int(self.offsets[-1])

    @cached_property
    def _index(self) -> dict[str, int]:
        return {q: i for i, q in enumerate(self.qids)}

    def __contains__(self, qid: object) -> bool:
        return qid in self._index

    def judgments(self, qid: str) -> dict[str, int]:
        """``{docid: grade}`` of one query (empty if the query has no judgments)."""
        i = self._index.get(qid)
        if i is None:
            return {}
        return _by_docid(self.docids, self.grades, int(self.offsets[i]), int(self.offsets[i + 1]))

    def to_dict(self) -> dict[str, dict[str, int]]:
        """``{qid: {docid: grade}}``."""
        return {q: self.judgments(q) for q in self.qids}

    def num_rel(self, qid: str, relevance_level: int = 1) -> int:
        """Number of documents of ``qid`` with grade >= ``relevance_level``."""
        i = self._index.get(qid)
        if i is None:
            return 0
        g = self.grades[self.offsets[i] : self.offsets[i + 1]]
        return int(np.count_nonzero(g >= relevance_level))


def _byte_keys(col: Bytes) -> list[npt.NDArray[np.uint64]]:
    """Each value's bytes as big-endian uint64 words: comparing the words in turn compares the
    bytes (NUL padded) in order, and numeric sort keys sort much faster than ``S`` values."""
    n = col.size
    w = col.dtype.itemsize
    k = max(1, (w + 7) // 8)
    buf = np.zeros((n, 8 * k), dtype=np.uint8)
    buf[:, :w] = np.ascontiguousarray(col).view(np.uint8).reshape(n, w)
    words = buf.view(">u8").astype(np.uint64)
    return [words[:, j] for j in range(k)]


def _tie_groups(tie: Bool) -> tuple[I64, I64]:
    """Rows in runs of ties (``tie[i]``: rows i and i+1 tie) and each one's group number."""
    n = tie.size + 1
    member = np.zeros(n, dtype=bool)
    member[:-1] |= tie
    member[1:] |= tie
    rows = np.flatnonzero(member)
    starts = np.ones(rows.size, dtype=bool)
    starts[1:] = ~tie[rows[1:] - 1] | (rows[1:] - 1 != rows[:-1])
    return rows, np.cumsum(starts) - 1


def _reverse_groups(tie: Bool) -> I64:
    """The identity permutation with every run of tied rows reversed."""
    rows, group = _tie_groups(tie)
    first = np.flatnonzero(np.diff(group, prepend=-1))  # each group's first place in rows
    last = np.append(first[1:], rows.size) - 1
    order = np.arange(tie.size + 1, dtype=np.int64)
    order[rows] = rows[(first + last)[group] - np.arange(rows.size)]
    return order


def _trec_order(offsets: I64, scores: F64, docids: Bytes) -> I64:
    """Permutation: per segment, score descending, ties by docid descending (byte order); NaN
    after every other score, NaNs tied among themselves."""
    n = scores.size
    ident = np.arange(n, dtype=np.int64)
    if n < 2:
        return ident
    seg = segments(offsets)
    same_q = seg[1:] == seg[:-1]
    finite = bool(np.all(np.isfinite(scores)))
    d = scores[1:] - scores[:-1]
    if finite and not np.any(same_q & (d > 0)):
        # Already score-descending within each query (the usual case): only ties may need fixing.
        tie = same_q & (d == 0)
        if not np.any(tie):
            return ident
        rising = docids[1:][tie] > docids[:-1][tie]
        if not np.any(rising):
            return ident
        if np.all(rising):  # ties listed in ascending docid order (common): reverse each group
            return _reverse_groups(tie)
        order = ident
    else:
        order = np.lexsort((-scores, seg))  # (numpy sorts NaN last)
    s = scores[order]
    q = seg[order]
    same_s = s[1:] == s[:-1]
    if not finite:
        nan = np.isnan(s)
        same_s |= nan[1:] & nan[:-1]
    tie = (q[1:] == q[:-1]) & same_s
    if not np.any(tie):
        return order
    # Rows that belong to a group of equal (query, score): re-sort those by docid, descending.
    rows, group = _tie_groups(tie)
    sub = np.lexsort((*_byte_keys(docids[order[rows]])[::-1], -group))[::-1]
    order = order.copy()
    order[rows] = order[rows[sub]]
    return order
