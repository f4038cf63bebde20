"""Multiple comparisons: adjusting a family of p-values (Holm, Bonferroni, Benjamini-Hochberg)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["CORRECTIONS", "adjust", "holm"]


def _p_family(p_values: Sequence[float]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The checked family of a p-value correction: (an all-NaN output array, the mask of finite
    entries, the finite p-values). Raises ``ValueError`` unless the input is one-dimensional with
    every finite value in [0, 1]."""
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError("p_values must be one-dimensional")
    finite = ~np.isnan(p)
    if np.any((p[finite] < 0.0) | (p[finite] > 1.0)):
        raise ValueError("p-values must lie in [0, 1]")
    return np.full(p.shape, math.nan), finite, p[finite]


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values, in input order (Holm 1979).

    With the m p-values sorted ascending p_(1) <= ... <= p_(m):
    p_adj_(i) = min(1, max_{j <= i} (m - j + 1) * p_(j)).
    Rejecting H_i when p_adj_i <= alpha controls the family-wise error rate at alpha.

    Equal to ``statsmodels.stats.multitest.multipletests(method="holm")[1]`` (checked in the
    tests) but computed here: statsmodels runs ``gc.collect()`` on every Holm call, which costs
    tens of milliseconds in a process with a large heap.

    NaN entries (an undefined test) stay NaN and are left out of the family: m counts only the
    finite p-values. Values outside [0, 1] raise ``ValueError``.
    """
    out, finite, family = _p_family(p_values)
    m = family.size
    if m:
        order = np.argsort(family, kind="stable")
        stepped = np.maximum.accumulate(family[order] * np.arange(m, 0, -1))
        adjusted = np.empty(m)
        adjusted[order] = np.minimum(stepped, 1.0)
        out[finite] = adjusted
    return [float(v) for v in out]


CORRECTIONS: tuple[str, ...] = ("holm", "bonferroni", "bh", "none")


def adjust(p_values: Sequence[float], method: str = "holm") -> list[float]:
    """Multiple-comparison adjusted p-values, in input order.

    - ``"holm"``: :func:`holm` (family-wise error rate, uniformly more powerful than Bonferroni).
    - ``"bonferroni"``: min(1, m * p) (family-wise error rate).
    - ``"bh"``: Benjamini-Hochberg step-up (false discovery rate): with p sorted ascending,
      p_adj_(i) = min(1, min_{j >= i} m * p_(j) / j).
    - ``"none"``: the p-values unchanged.

    Equal to ``statsmodels.stats.multitest.multipletests(method=...)[1]`` with ``holm``,
    ``bonferroni`` and ``fdr_bh`` (checked in the tests). NaN entries stay NaN and are left out
    of the family (m counts the finite p-values); values outside [0, 1] raise ``ValueError``, as
    does an unknown method.
    """
    if method not in CORRECTIONS:
        raise ValueError(f"unknown correction {method!r}; expected one of {', '.join(CORRECTIONS)}")
    if method == "holm":
        return holm(p_values)
    out, finite, family = _p_family(p_values)
    m = family.size
    if m and method == "none":
        out[finite] = family
    elif m and method == "bonferroni":
        out[finite] = np.minimum(family * m, 1.0)
    elif m:  # bh
        order = np.argsort(family, kind="stable")
        scaled = family[order] * m / np.arange(1, m + 1)
        stepped = np.minimum.accumulate(scaled[::-1])[::-1]
        adjusted = np.empty(m)
        adjusted[order] = np.minimum(stepped, 1.0)
        out[finite] = adjusted
    return [float(v) for v in out]
