"""Rank correlations between two systems' orderings: Kendall's tau-b and tau_AP (Yilmaz, Aslam &
Robertson 2008), plain and symmetric."""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

from metrics.stats.intervals import _as_values

__all__ = ["kendall_tau_b", "tau_ap", "tau_ap_symmetric"]


def _aligned(
    x: Mapping[str, float], y: Mapping[str, float]
) -> tuple[list[str], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    if set(x) != set(y):
        only_x = sorted(set(x) - set(y))[:5]
        only_y = sorted(set(y) - set(x))[:5]
        raise ValueError(
            f"both rankings must score the same systems (only in x: {only_x}, only in y: {only_y})"
        )
    systems = sorted(x)
    xs = _as_values([x[s] for s in systems], "x")
    ys = _as_values([y[s] for s in systems], "y")
    return systems, xs, ys


def kendall_tau_b(x: Mapping[str, float], y: Mapping[str, float]) -> float:
    """Kendall's tau-b between two system rankings given as scores per system.

    tau_b = (P - Q) / sqrt((P + Q + T_x)(P + Q + T_y)), P concordant and Q discordant pairs, T_x and
    T_y pairs tied only in x or only in y (Kendall 1945; ``scipy.stats.kendalltau(variant="b")``).
    Symmetric in x and y. Both mappings must score the same systems (``ValueError`` otherwise);
    fewer than two systems, or a ranking with every score tied, gives NaN.
    """
    _, xs, ys = _aligned(x, y)
    if xs.size < 2:
        return math.nan
    import scipy.stats

    res = scipy.stats.kendalltau(xs, ys, variant="b")
    return float(res.statistic)


def _order_desc(systems: list[str], scores: npt.NDArray[np.float64]) -> list[int]:
    # Descending score; ties broken by system name ascending so the result is deterministic.
    return sorted(range(len(systems)), key=lambda i: (-scores[i], systems[i]))


def tau_ap(x: Mapping[str, float], y: Mapping[str, float]) -> float:
    """AP rank correlation tau_AP of ranking y against the reference ranking x.

    Yilmaz, Aslam & Robertson (2008): with the N systems in the order of y (higher score = better,
    rank 1 first),

        tau_AP = 2/(N - 1) * sum_{i=2..N} C(i)/(i - 1) - 1,

    where C(i) is the number of systems above rank i in y that x also ranks above the system at
    rank i. Disagreements near the top of y cost more than ones near the bottom, which is why it
    suits system rankings where the best systems matter most.

    Asymmetric: x is the reference ("true") ranking and y the one being judged, so
    ``tau_ap(x, y) != tau_ap(y, x)`` in general; :func:`tau_ap_symmetric` averages both. tau_AP has
    no tie correction: tied scores are ordered by system name (ascending) in both rankings, so a
    tie counts as agreement exactly when the names happen to agree. Same systems required in both
    (``ValueError`` otherwise); fewer than two systems gives NaN.
    """
    systems, xs, ys = _aligned(x, y)
    n = len(systems)
    if n < 2:
        return math.nan
    rank_x = np.empty(n, dtype=np.int64)
    rank_x[_order_desc(systems, xs)] = np.arange(n)
    # Reference ranks of the systems listed in y's order.
    rx = rank_x[_order_desc(systems, ys)]
    # correct[i, j]: system at y-position j (j < i) is also above the one at position i in x.
    correct = np.tril(rx[None, :] < rx[:, None], k=-1)
    c = correct.sum(axis=1)[1:].astype(np.float64)
    above = np.arange(1, n, dtype=np.float64)
    return float(2.0 / (n - 1) * np.sum(c / above) - 1.0)


def tau_ap_symmetric(x: Mapping[str, float], y: Mapping[str, float]) -> float:
    """Symmetrised AP correlation: (tau_AP(x, y) + tau_AP(y, x)) / 2 (Yilmaz et al. 2008, sec. 4).

    Use it when neither ranking is the reference.
    """
    return 0.5 * (tau_ap(x, y) + tau_ap(y, x))
