"""Correlations of system rankings for the meta-evaluation of judges (issue 35, point 2), that
never read a degenerate input as 0.0.

trec-auto-judge's own notes warn that its meta-evaluation gives a correlation of 0.0 when every
system ties or too few are left; a 0.0 reads as "no agreement", which it is not. Here such a
correlation is :class:`Undefined` with its reason, and a bootstrap over topics counts the
resamples where it was undefined instead of averaging a made-up value into the interval.

A correlation needs at least two systems (tau-b, Spearman, tau_AP) and some spread on both sides:
with every system tied under one of the two rankings, tau-b and Spearman divide by zero, and
tau_AP has no order to follow. Ties short of that are handled as each coefficient defines them
(tau-b's and Spearman's tie corrections; tau_AP breaks the reference's ties by system name).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from metrics.stats.rank import kendall_tau_b, tau_ap

__all__ = ["CORRELATIONS", "Correlation", "Undefined", "correlation", "correlation_interval"]

Correlation = Literal["kendall_tau_b", "spearman", "tau_ap"]
CORRELATIONS: tuple[Correlation, ...] = ("kendall_tau_b", "spearman", "tau_ap")


@dataclass(frozen=True)
class Undefined:
    """A correlation that cannot be computed, and why ("2 systems scored by both: a correlation
    needs at least 2", "every system has the same score under the judge")."""

    reason: str

    def __str__(self) -> str:
        return f"undefined: {self.reason}"


def _spearman(x: Sequence[float], y: Sequence[float]) -> float:
    from scipy.stats import spearmanr

    return float(spearmanr(x, y).statistic)


def correlation(
    kind: Correlation,
    reference: Mapping[str, float],
    other: Mapping[str, float],
    *,
    names: tuple[str, str] = ("people", "the judge"),
) -> float | Undefined:
    """``kind`` between the systems' scores under ``reference`` (people's qrels, for tau_AP the
    reference ranking) and ``other``, over the systems both score; :class:`Undefined` with its
    reason when it cannot be computed (``names`` name the two sides in the reason)."""
    if kind not in CORRELATIONS:
        raise ValueError(f"unknown correlation {kind!r}; one of {CORRELATIONS}")
    shared = sorted(set(reference) & set(other))
    if len(shared) < 2:
        return Undefined(
            f"{len(shared)} system(s) scored under both: a correlation needs at least 2"
        )
    for side, scores in zip(names, (reference, other), strict=True):
        values = [scores[s] for s in shared]
        if any(not math.isfinite(v) for v in values):
            return Undefined(f"a system has no finite score under {side}")
        if max(values) == min(values):
            return Undefined(f"every system has the same score under {side}")
    x = {s: float(reference[s]) for s in shared}
    y = {s: float(other[s]) for s in shared}
    if kind == "kendall_tau_b":
        value = kendall_tau_b(x, y)
    elif kind == "tau_ap":
        value = tau_ap(x, y)
    else:
        value = _spearman([x[s] for s in shared], [y[s] for s in shared])
    if not math.isfinite(value):
        return Undefined(f"{kind} is not finite over these {len(shared)} systems")
    return value


@dataclass(frozen=True)
class Interval:
    """A percentile bootstrap interval over topics of a correlation: ``low``, ``high`` from the
    ``defined`` resamples (of ``resamples``); undefined ones are counted, never averaged in."""

    value: float | Undefined
    low: float | None
    high: float | None
    resamples: int
    defined: int
    level: float


def correlation_interval(
    kind: Correlation,
    reference: Mapping[str, Mapping[str, float]],
    other: Mapping[str, Mapping[str, float]],
    *,
    level: float = 0.95,
    resamples: int = 1000,
    seed: int = 0,
    min_defined: float = 0.9,
) -> Interval:
    """``kind`` between the systems' mean scores over topics (``reference`` and ``other``:
    system -> topic -> score, over the same topics), and its percentile bootstrap interval over
    topics (resampled with replacement, ``seed``). When fewer than ``min_defined`` of the
    resamples give a defined value, the interval is None: an interval from the few resamples
    where the correlation exists would describe another population."""
    systems = sorted(set(reference) & set(other))
    topics = sorted(
        {t for s in systems for t in reference[s]} & {t for s in systems for t in other[s]}
    )

    def means(table: Mapping[str, Mapping[str, float]], chosen: Sequence[str]) -> dict[str, float]:
        return {s: float(np.mean([table[s].get(t, 0.0) for t in chosen])) for s in systems}

    if not topics:
        return Interval(Undefined("no topic is scored under both"), None, None, 0, 0, level)
    value = correlation(kind, means(reference, topics), means(other, topics))
    rng = np.random.default_rng(seed)
    draws: list[float] = []
    for _ in range(resamples):
        chosen = [topics[i] for i in rng.integers(0, len(topics), len(topics))]
        found = correlation(kind, means(reference, chosen), means(other, chosen))
        if not isinstance(found, Undefined):
            draws.append(found)
    if not draws or len(draws) < min_defined * resamples:
        return Interval(value, None, None, resamples, len(draws), level)
    alpha = (1 - level) / 2
    low, high = np.quantile(draws, [alpha, 1 - alpha])
    return Interval(value, float(low), float(high), resamples, len(draws), level)
