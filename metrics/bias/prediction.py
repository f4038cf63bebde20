r"""Prediction intervals for one run's full-pool score, and estimator errors by novelty.

An estimator of the pooling penalty (:mod:`metrics.bias.estimators`) corrects a run's score on a
pool it did not help build. Its validation leaves each pooled unit out in turn and compares the
estimates with the full-pool scores; the interval the harness reports beside a not-pooled run
(the 95% t interval of the mean delta) is an interval on a *mean correction*: it does not hold
for the run (on Robust 2003 and TREC 2011 Medical it contains the left-out runs' full-pool scores
for 0-47% of them). This module gives an interval on the run's score itself.

The run's hole
--------------
A run's *hole* is the share of its top k the pool did not judge, ``1 - Judged@k`` (k: the
measure's cutoff, else the pool depth; :func:`metrics.bias.validation.novelty_k`). A run with no
hole has nothing to correct; the error of every estimator grows with the hole (the true penalty
grows with what only the run's group found, and the estimators under-correct in proportion).

The interval: a residual model in the hole
------------------------------------------
For every calibration run j (a pooled run left out with its unit), the estimator's residual is
scaled by its hole: ``z_j = (full-pool score_j - estimate_j) / max(hole_j, HOLE_FLOOR)``. For P@k
``z`` is the error in the share of the unjudged documents that are relevant, the quantity the
estimator guesses. The ``z`` are modelled as normal (mean and standard deviation from the
calibration runs), and the 95% prediction interval for a new run i is::

    estimate_i + max(hole_i, HOLE_FLOOR) * (mean(z) +- t_{n-1, 0.975} * sd(z) * sqrt(1 + 1/n))

clipped to the run's bounds (for P@k: its score with the unjudged documents non-relevant, and
relevant; for measures with no such bounds from the judgments alone, [0, 1]). The interval thus
includes the estimator's own error on runs like this one, widens with the run's hole, and is
empty of guesswork where the hole is 0 (P@k: the score is known).

It is not an interval where the calibration says nothing: when the run's hole is larger than
every calibration run's (``extrapolating``) or fewer than ``min_runs`` runs calibrate it, the
interval is the run's bounds, and says why. A split conformal interval (the calibration
residuals' order statistics) was measured too (``benchmarks/penalty_intervals.py``): with the
16 groups of Robust 2003 its 95% interval is the bounds for every run (a rank of 17 among 16);
the t interval on scaled residuals met the coverage targets there and on Medical, at a quarter
of the width.

Validation: ``benchmarks/penalty_intervals.py`` computes each left-out run's interval from the
*other* units' residuals (its own unit's runs never calibrate it) and reports coverage and width
overall and by novelty, for every estimator.

Errors by novelty
-----------------
:func:`errors_by_novelty` bins the validation's runs by Judged@k (:data:`NOVELTY_BINS`) and gives
each estimator's mean absolute and signed error per bin, so an estimator is recommended for a
run by its error on runs like it (:func:`recommend_for`), not by its error on average.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "HOLE_FLOOR",
    "NOVELTY_BINS",
    "BinErrors",
    "Calibration",
    "PredictionInterval",
    "calibration_of",
    "errors_by_novelty",
    "novelty_bin",
    "prediction_interval",
    "recommend_for",
]

# The smallest hole a residual is scaled by: a run with (almost) everything judged keeps an
# error of its own for measures that read beyond its top k (AP: relevant documents only its unit
# found deeper change R), which a smaller scale would blow up.
HOLE_FLOOR = 0.02

# Judged@k edges of the novelty bins (upper edges exclusive; the last bin holds Judged@k = 1).
NOVELTY_BINS: tuple[float, ...] = (0.6, 0.8, 0.9)

# The fewest calibration runs behind an interval narrower than the bounds.
MIN_RUNS = 5


@dataclass(frozen=True)
class Calibration:
    """An estimator's residuals on the validation's left-out runs: per run its unit, estimate,
    full-pool score and hole (``1 - Judged@k`` on the pool without its unit)."""

    estimator: str
    units: tuple[str, ...]
    estimates: tuple[float, ...]
    truths: tuple[float, ...]
    holes: tuple[float, ...]

    def without(self, unit: str | None) -> Calibration:
        """The calibration without ``unit``'s runs (a left-out run is never its own calibration)."""
        if unit is None:
            return self
        keep = [i for i, u in enumerate(self.units) if u != unit]
        return Calibration(
            self.estimator,
            tuple(self.units[i] for i in keep),
            tuple(self.estimates[i] for i in keep),
            tuple(self.truths[i] for i in keep),
            tuple(self.holes[i] for i in keep),
        )

    def scaled_residuals(self) -> np.ndarray:
        """``(truth - estimate) / max(hole, HOLE_FLOOR)`` of the runs with finite values."""
        e, t, h = (np.array(x, dtype=np.float64) for x in (self.estimates, self.truths, self.holes))
        ok = np.isfinite(e) & np.isfinite(t) & np.isfinite(h)
        out: np.ndarray = (t[ok] - e[ok]) / np.maximum(h[ok], HOLE_FLOOR)
        return out

    @property
    def max_hole(self) -> float:
        finite = [h for h in self.holes if math.isfinite(h)]
        return max(finite) if finite else 0.0


def calibration_of(report: Mapping[str, Any], estimator: str) -> Calibration:
    """The calibration of ``estimator`` from an estimator report's dict
    (:meth:`metrics.bias.estimator_report.EstimatorReport.to_dict`: its ``runs`` rows)."""
    rows = [r for r in report["runs"].values() if r.get(estimator) is not None]
    return Calibration(
        estimator,
        tuple(str(r["unit"]) for r in rows),
        tuple(float(r[estimator]) for r in rows),
        tuple(_float(r.get("score_full_pool")) for r in rows),
        tuple(1.0 - _float(r.get("judged")) for r in rows),
    )


def _float(x: Any) -> float:
    return math.nan if x is None else float(x)


@dataclass(frozen=True)
class PredictionInterval:
    """A 95% (``level``) interval for one run's full-pool score, and what it rests on.

    ``method``: "t on hole-scaled residuals" (the model above), or "bounds" with ``why`` (too
    few calibration runs, or ``extrapolating``: the run's hole is larger than any the calibration
    saw, ``max_hole``)."""

    low: float
    high: float
    level: float
    method: str
    n_runs: int
    hole: float
    max_hole: float
    extrapolating: bool
    why: str | None = None

    def contains(self, value: float) -> bool:
        return self.low - 1e-12 <= value <= self.high + 1e-12

    @property
    def width(self) -> float:
        return self.high - self.low

    def to_dict(self) -> dict[str, Any]:
        return {
            "low": self.low,
            "high": self.high,
            "level": self.level,
            "method": self.method,
            "n_runs": self.n_runs,
            "hole": self.hole,
            "max_hole": self.max_hole,
            "extrapolating": self.extrapolating,
            "why": self.why,
        }


def prediction_interval(
    estimate: float,
    hole: float,
    bounds: tuple[float, float],
    calibration: Calibration,
    *,
    level: float = 0.95,
    min_runs: int = MIN_RUNS,
) -> PredictionInterval:
    """The interval for a run's full-pool score given an estimator's ``estimate``, the run's
    ``hole`` (``1 - Judged@k``) and ``bounds`` (lowest and highest score its unjudged documents
    allow), from the estimator's ``calibration`` (the module docstring)."""
    from scipy import stats  # only the intervals need scipy

    low, high = bounds
    z = calibration.scaled_residuals()
    n = int(z.size)
    max_hole = calibration.max_hole

    def at_bounds(why: str, extrapolating: bool = False) -> PredictionInterval:
        return PredictionInterval(low, high, level, "bounds", n, hole, max_hole, extrapolating, why)

    if not math.isfinite(estimate) or not math.isfinite(hole):
        return at_bounds("no estimate")
    if hole <= 0.0 and high - low <= 0.0:
        return PredictionInterval(low, high, level, "exact", n, hole, max_hole, False)
    if n < min_runs:
        return at_bounds(f"{n} calibration run{'s' if n != 1 else ''} (at least {min_runs})")
    if hole > max_hole + 1e-9:
        return at_bounds(
            f"extrapolating: the calibration runs had at most {100 * max_hole:.0f}% of their "
            f"top k unjudged; this run has {100 * hole:.0f}%",
            extrapolating=True,
        )
    mean, sd = float(z.mean()), float(z.std(ddof=1))
    half = float(stats.t.ppf(0.5 + level / 2.0, n - 1)) * sd * math.sqrt(1.0 + 1.0 / n)
    scale = max(hole, HOLE_FLOOR)
    lo = max(low, estimate + scale * (mean - half))
    hi = min(high, estimate + scale * (mean + half))
    if lo > hi:  # the estimate lies outside the bounds: the nearer bound
        lo = hi = low if estimate < low else high
    return PredictionInterval(lo, hi, level, "t on hole-scaled residuals", n, hole, max_hole, False)


# --- errors by novelty ----------------------------------------------------------------------


def novelty_bin(judged: float, edges: Sequence[float] = NOVELTY_BINS) -> str:
    """The label of the Judged@k bin of ``judged`` ("< 0.6", "0.6-0.8", ..., ">= 0.9")."""
    if not edges or not math.isfinite(judged):
        return "all"
    if judged < edges[0]:
        return f"< {edges[0]:g}"
    for a, b in itertools.pairwise(edges):
        if judged < b:
            return f"{a:g}-{b:g}"
    return f">= {edges[-1]:g}"


@dataclass(frozen=True)
class BinErrors:
    """One estimator's error on the validation runs of one novelty bin."""

    bin: str
    n_runs: int
    mae: float
    mean_error: float  # estimate - full-pool score, averaged: < 0 is under-correction


def errors_by_novelty(
    report: Mapping[str, Any], estimators: Sequence[str], edges: Sequence[float] = NOVELTY_BINS
) -> dict[str, list[BinErrors]]:
    """Per estimator, its error per Judged@k bin over the report's validation runs (bins in
    order of novelty, most novel first; a bin without runs is left out)."""
    labels = (
        [novelty_bin(edges[0] - 1.0, edges)] + [novelty_bin(e, edges) for e in edges]
        if edges
        else ["all"]
    )
    rows = list(report["runs"].values())
    out: dict[str, list[BinErrors]] = {}
    for name in estimators:
        per: dict[str, list[float]] = {}
        for r in rows:
            e, t = r.get(name), r.get("score_full_pool")
            if e is None or t is None or r.get("judged") is None:
                continue
            if not (math.isfinite(float(e)) and math.isfinite(float(t))):
                continue
            per.setdefault(novelty_bin(float(r["judged"]), edges), []).append(float(e) - float(t))
        out[name] = [
            BinErrors(b, len(per[b]), float(np.mean(np.abs(per[b]))), float(np.mean(per[b])))
            for b in labels
            if b in per
        ]
    return out


def recommend_for(
    judged: float,
    by_novelty: Mapping[str, Sequence[BinErrors]],
    *,
    min_runs: int = 3,
    edges: Sequence[float] = NOVELTY_BINS,
) -> tuple[str | None, str]:
    """The estimator with the lowest error on validation runs in the novelty bin of a run with
    this Judged@k, and what that rests on; None (and why) when the bin has fewer than
    ``min_runs`` runs."""
    label = novelty_bin(judged, edges)
    scored = []
    for name, bins in by_novelty.items():
        for b in bins:
            if b.bin == label and b.n_runs >= min_runs and math.isfinite(b.mae):
                scored.append((b.mae, name, b.n_runs))
    words = f"a Judged@k {label}" if label[0] in "<>" else f"a Judged@k of {label}"
    if not scored:
        return None, (
            f"no estimator is recommended for this run: fewer than {min_runs} validation runs "
            f"had {words}, as its {judged:.2f}"
        )
    mae, name, n = min(scored)
    return name, (
        f"lowest mean absolute error ({mae:.4f}) on the {n} validation runs with {words}, as "
        f"this run's {judged:.2f}"
    )
