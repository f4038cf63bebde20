"""PPI's own forms of the measures it estimates (P@k, R@k, nDCG@k, AP): per (run, topic) cell
values computed from item-level label functionals f_h(y) = [y >= h], and the pieces their
gradients need.

These are not the registry's measures (:mod:`metrics.measures.registry`): the estimator needs
each measure as a function of every pool item's (corrected, possibly fractional) labels, with
its derivative per item, which the registry's vectorised values over one qrels do not give.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from metrics.measures.grammar import split_name

__all__ = [
    "DEFAULT_MEASURES",
]

F64 = npt.NDArray[np.float64]


I64 = npt.NDArray[np.int64]


Bool = npt.NDArray[np.bool_]


DEFAULT_MEASURES = ("P@10", "R@10", "nDCG@10", "AP")


# the measure kinds linear in the item labels: P@k, and ``L``, a linear measure of arbitrary
# items with known coefficients (:class:`~metrics.sampling.linear.LinearStructure`); the
# others (R@k, nDCG@k, AP) are ratios with an estimated denominator
LINEAR_KINDS = ("P", "L")


_CUTOFF = re.compile(r"[1-9][0-9]*")


def _parse_measure(name: str) -> tuple[str, int]:
    """``P@k``, ``R@k``, ``nDCG@k`` (k >= 1, no leading zero) or ``AP``, written exactly so (no
    blank, no parameter), in the measure-name grammar (:mod:`metrics.measures.grammar`)."""
    m = split_name(name)
    if m is not None and m.params is None and not re.search(r"\s", name):
        if m.base in ("P", "R", "nDCG") and m.cutoff and _CUTOFF.fullmatch(m.cutoff):
            return m.base, int(m.cutoff)
        if m.base == "AP" and m.cutoff is None:
            return "AP", 0
    raise ValueError(f"unknown measure {name!r}: expected P@k, R@k, nDCG@k or AP")


def _discount_sum(m: F64, k: int) -> F64:
    """D(min(m, k)): sum_{j <= m} 1/log2(j+1), linear between integers, m clipped to [0, k]."""
    table = np.concatenate(([0.0], np.cumsum(1.0 / np.log2(np.arange(2, k + 2)))))
    x = np.clip(m, 0.0, float(k))
    return np.asarray(np.interp(x, np.arange(k + 1, dtype=np.float64), table), dtype=np.float64)


def _discount_slope(m: F64, k: int) -> F64:
    """dD(min(m, k))/dm: 1/log2(j+1) on (j-1, j], 0 beyond k (the ideal list is full)."""
    j = np.ceil(np.clip(m, 1e-12, None))
    return np.where(m < k, 1.0 / np.log2(j + 1.0), 0.0)


def _f64(x: Any) -> F64:
    return np.asarray(x, dtype=np.float64)


def _ratio(num: F64, den: F64, *, at_point: bool = False) -> tuple[F64, F64]:
    """Per-topic ratio num / den of a measure and the denominator its gradient uses.

    Plug-in form (``at_point`` False, the denominator estimated from the sample): a topic's true
    denominator (R, or IDCG) is 0 or at least 1 (one relevant item of grade 1), so an estimate
    below 1/2 is read as 0 (the topic scores 0, gradient 0, as trec_eval scores a topic without
    relevant items) and one in [1/2, 1) as 1; the ratio is clipped to [0, 1]. Without this, a
    small per-topic sample can give a denominator near 0 and a ratio of 50.

    At a fixed linearisation point (``at_point``: the pilot's labels and the predictions, no
    sampling noise): num / max(den, 1), unclipped, 0 where den is 0. max(den, 1) equals den at
    every possible true value (0 or >= 1), so it is the same measure, with a bounded gradient."""
    if at_point:
        ok = den > 1e-12
        eff = np.where(ok, np.maximum(den, 1.0), 0.0)
        cell = np.where(ok, num / np.where(ok, eff, 1.0), 0.0)
        return np.asarray(cell, dtype=np.float64), np.asarray(eff, dtype=np.float64)
    ok = den >= 0.5
    eff = np.where(ok, np.maximum(den, 1.0), 0.0)
    cell = np.where(ok, np.clip(num / np.where(ok, eff, 1.0), 0.0, 1.0), 0.0)
    return np.asarray(cell, dtype=np.float64), np.asarray(eff, dtype=np.float64)


@dataclass
class _Point:
    """Per (run, topic) cell values of one measure and what its gradient needs."""

    cell: F64  # (R, Q) measure per run and topic
    denom: F64  # (Q,) or (R, Q) the ratio's denominator (1 for P@k)


def functionals(grades: F64 | I64, depth: int) -> F64:
    """(G, N): f_h = [grade >= h], h = 1..G."""
    g = np.asarray(grades, dtype=np.float64)
    return (g[None, :] >= np.arange(1, depth + 1, dtype=np.float64)[:, None]).astype(np.float64)


class PoolView(Protocol):
    """What the estimator's functions (:mod:`metrics.sampling.gradients`,
    :mod:`metrics.sampling.calibration`, :mod:`metrics.sampling.estimator`) read of a
    :class:`~metrics.sampling.structure.PoolStructure`, which calls them: named by its members
    here so that they do not import it back."""

    measures: tuple[str, ...]
    threshold: int
    topics: tuple[str, ...]
    run_names: tuple[str, ...]
    topic_of: I64
    rank: I64
    _parsed: list[tuple[str, int]]
    _e_run: I64
    _e_item: I64
    _e_rank: F64
    _e_cell: I64
    _e_start: I64
    # (measures of kind L, G, R, N) the coefficients of the linear measures; None: there are none
    _linear: F64 | None

    @property
    def n_items(self) -> int: ...

    def _part(self, topics: Bool) -> tuple[PoolView, I64]: ...

    def _top(self, k: int) -> tuple[I64, I64, F64]: ...

    def _check_grades(self, g: I64, what: str) -> None: ...
