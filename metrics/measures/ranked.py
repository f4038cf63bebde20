"""What every measure reads: :class:`Ranked`, the retrieved documents of every evaluated query
flattened in trec_eval order with their qrels grades and the per-query facts from the qrels,
:class:`Ideal` (the ideal gains), and :data:`Result`, the per-query ``(value, numerator,
denominator)`` a measure returns. The conventions are :mod:`metrics.measures.basic`'s."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = [
    "Ideal",
    "Ranked",
    "Result",
]

I64 = npt.NDArray[np.int64]


F64 = npt.NDArray[np.float64]


Bool = npt.NDArray[np.bool_]


def _seg_of(offsets: I64) -> I64:
    return np.repeat(np.arange(offsets.size - 1, dtype=np.int64), np.diff(offsets))


@dataclass(frozen=True)
class Ideal:
    """Per-query ideal gains (qrels grades >= 1, descending), flattened with ``offsets``."""

    gains: F64
    offsets: I64

    @classmethod
    def from_grades(cls, grades: I64, offsets: I64) -> Ideal:
        """Ideal gains from per-query qrels grades (any order)."""
        seg = _seg_of(offsets)
        keep = grades >= 1
        g = grades[keep].astype(np.float64)
        s = seg[keep]
        order = np.lexsort((-g, s))
        counts = np.bincount(s, minlength=offsets.size - 1)
        off = np.zeros(offsets.size, dtype=np.int64)
        np.cumsum(counts, out=off[1:])
        return cls(g[order], off)

    @cached_property
    def _cum(self) -> F64:
        """Per-query cumulative ideal DCG, flattened like ``gains``."""
        n = self.gains.size
        if n == 0:
            return np.zeros(0)
        seg = _seg_of(self.offsets)
        pos = np.arange(n, dtype=np.int64) - self.offsets[seg] + 1
        return _seg_cumsum(self.gains / np.log2(pos + 1.0), self.offsets, seg)

    def idcg(self, k: int | None) -> F64:
        """Ideal DCG at cutoff k (None: all ideal documents), per query."""
        counts = np.diff(self.offsets)
        take = counts if k is None else np.minimum(counts, k)
        out = np.zeros(counts.size)
        has = take > 0
        out[has] = self._cum[self.offsets[:-1][has] + take[has] - 1]
        return out


def _seg_cumsum(x: npt.NDArray[Any], offsets: I64, seg: I64) -> F64:
    """Cumulative sum restarting at every segment (inclusive)."""
    c = np.cumsum(x, dtype=np.float64)
    base = np.concatenate(([0.0], c))[offsets[:-1]]
    out: F64 = c - base[seg]
    return out


@dataclass(frozen=True)
class Ranked:
    """Retrieved rows of ``nq`` queries in trec_eval order, with their judgments.

    ``offsets[i]:offsets[i+1]`` are the rows of query i, best first. ``grade`` is the qrels grade
    of each row (anything for rows not in the qrels), ``pooled`` marks rows present in the qrels
    and ``judged`` rows present with grade >= 0. ``num_rel`` (R) and ``num_nonrel`` (judged with
    0 <= grade < level) come from the qrels, as does ``ideal``.
    """

    offsets: I64
    grade: I64
    pooled: Bool
    judged: Bool
    num_rel: I64
    num_nonrel: I64
    ideal: Ideal
    level: int
    num_docs: int = 0  # documents in the collection (trec_eval -N; its default is 0), for utility

    @property
    def nq(self) -> int:
        """Number of queries."""
        return int(self.offsets.size - 1)

    @cached_property
    def seg(self) -> I64:
        """Query index of every row."""
        return _seg_of(self.offsets)

    @cached_property
    def pos(self) -> I64:
        """1-based rank of every row within its query."""
        return np.arange(self.grade.size, dtype=np.int64) - self.offsets[self.seg] + 1

    @cached_property
    def num_ret(self) -> I64:
        """Retrieved documents per query."""
        out: I64 = np.diff(self.offsets)
        return out

    # Most measures read only the relevant rows (a few percent of a run): they work on those.
    @cached_property
    def rel_rows(self) -> I64:
        """Indices of the relevant rows (judged, grade >= level), in order."""
        return np.flatnonzero(self.judged & (self.grade >= self.level))

    @cached_property
    def rel_seg(self) -> I64:
        """Query index of each relevant row."""
        return self.seg[self.rel_rows]

    @cached_property
    def rel_pos(self) -> I64:
        """1-based rank of each relevant row within its query."""
        return self.pos[self.rel_rows]

    @cached_property
    def rel_rank(self) -> F64:
        """1-based rank of each relevant row among its query's relevant rows."""
        first = np.zeros(self.nq + 1, dtype=np.int64)
        np.cumsum(np.bincount(self.rel_seg, minlength=self.nq), out=first[1:])
        rank = np.arange(self.rel_rows.size, dtype=np.int64) - first[self.rel_seg] + 1
        return rank.astype(np.float64)

    def rel_sum(self, keep: Bool | None = None, weights: F64 | None = None) -> F64:
        """Sum over the relevant rows (those where ``keep``, default all) of ``weights``
        (default 1), per query; ``keep`` and ``weights`` are given per relevant row."""
        seg = self.rel_seg
        if keep is not None:
            seg = seg[keep]
            weights = None if weights is None else weights[keep]
        out: F64 = np.bincount(seg, weights=weights, minlength=self.nq).astype(np.float64)
        return out

    def rel_top(self, k: int | None) -> Bool | None:
        """Which relevant rows are within the first k (None: all of them)."""
        return None if k is None else self.rel_pos <= k

    def above_rel(self, mask: Bool) -> F64:
        """Rows of ``mask`` ranked above each relevant row, within its query."""
        rows = np.flatnonzero(mask)
        above = np.searchsorted(rows, self.rel_rows) - np.searchsorted(
            rows, self.offsets[self.rel_seg]
        )
        return above.astype(np.float64)

    @cached_property
    def gain_rows(self) -> I64:
        """Indices of the rows with an nDCG gain (judged, grade > 0), in order."""
        return np.flatnonzero(self.judged & (self.grade > 0))

    def per_query(self, mask: Bool, weights: F64 | None = None) -> F64:
        """Sum over rows selected by ``mask`` (of ``weights``, default 1) per query."""
        sel = np.flatnonzero(mask)  # usually few rows (top k, relevant): sum only those
        w = None if weights is None else weights[sel]
        out: F64 = np.bincount(self.seg[sel], weights=w, minlength=self.nq).astype(np.float64)
        return out

    def top(self, k: int | None) -> Bool:
        """Rows ranked within the first k (all rows when k is None)."""
        if k is None:
            return np.ones(self.grade.size, dtype=bool)
        return self.pos <= k


def _ratio(num: F64, den: F64) -> F64:
    out = np.zeros(num.size)
    np.divide(num, den, out=out, where=den > 0)
    return out


Result = tuple[F64, F64, F64]


def _frac(num: F64, den: F64) -> Result:
    return _ratio(num, den), num, den


def _value(v: F64) -> Result:
    return v, v, np.ones(v.size)


def _cut(k: int | None) -> int:
    # the registry passes a cutoff to every family that requires one (``cutoff="required"``)
    assert k is not None
    return k
