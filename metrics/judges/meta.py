"""The meta-evaluation of automatic judges against people (issue 35): how a judge's qrels rank the
systems, compared with people's, with a percentile bootstrap over topics; figures that never read
a degenerate input as 0.0. Label agreement is :mod:`metrics.judges.meta_labels`.

trec-auto-judge's own notes warn that its meta-evaluation gives a correlation of 0.0 when every
system ties or too few are left; a 0.0 reads as "no agreement", which it is not. Here such a
figure is :class:`Undefined` with its reason, and a bootstrap over topics counts the resamples
where it was undefined instead of averaging a made-up value into the interval.

A correlation needs at least two systems (tau-b, Spearman, tau_AP) and some spread on both sides:
with every system tied under one of the two rankings, tau-b and Spearman divide by zero, and
tau_AP has no order to follow. Ties short of that are handled as each coefficient defines them
(tau-b's and Spearman's tie corrections; tau_AP breaks the reference's ties by system name).

:func:`ranking_meta` adds tau-b among people's top k runs (Clarke & Dietz 2024: judges rank the
best systems worse) and the share of the run pairs people's scores separate significantly (paired
t-test over topics) that the judge keeps in the same order, a significance-aware reading of
Voorhees' (2000) question of whether other assessors change the conclusions.

The bootstrap (Efron & Tibshirani 1993, ch. 13) resamples topics with replacement: resample b
is a vector of topic counts w_b, a system's mean is w_b . scores / n_topics, so every figure of
every resample is computed on matrices at once. Its interval is the percentile one, and it is
None when the point value is undefined or fewer than ``min_defined`` of the resamples are defined:
an interval from the few resamples where a figure exists would describe another population.

References
----------
- Yilmaz, Aslam & Robertson (2008), "A new rank correlation coefficient for information
  retrieval", SIGIR (tau_AP).
- Voorhees (2000), "Variations in relevance judgments and the measurement of retrieval
  effectiveness", Inf. Process. Manag. 36(5).
- Clarke & Dietz (2024), "LLM-based relevance assessment still can't replace human relevance
  assessment", arXiv:2412.17156.
- Efron & Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 13.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from metrics.stats.rank import kendall_tau_b, tau_ap

__all__ = [
    "CORRELATIONS",
    "Correlation",
    "Estimate",
    "RankingMeta",
    "Undefined",
    "correlation",
    "correlation_interval",
    "ranking_meta",
    "value_dict",
]

Correlation = Literal["kendall_tau_b", "spearman", "tau_ap"]
CORRELATIONS: tuple[Correlation, ...] = ("kendall_tau_b", "spearman", "tau_ap")
Scores = Mapping[str, Mapping[str, float]]  # run -> topic -> score
FloatArray = npt.NDArray[np.float64]

# Elements of one block of resamples x (pairs or systems^2): keeps memory near 16 MB a matrix.
_BLOCK_ELEMENTS = 1 << 21


@dataclass(frozen=True)
class Undefined:
    """A figure that cannot be computed, and why ("2 systems scored by both: a correlation
    needs at least 2", "every system has the same score under the judge")."""

    reason: str

    def __str__(self) -> str:
        return f"undefined: {self.reason}"


def value_dict(value: float | Undefined) -> dict[str, Any]:
    """``{"value": float | None, "undefined": reason | None}``, JSON-safe."""
    if isinstance(value, Undefined):
        return {"value": None, "undefined": value.reason}
    return {"value": float(value), "undefined": None}


@dataclass(frozen=True)
class Estimate:
    """A figure on the full data (``value``) and its percentile bootstrap interval over topics at
    ``level``: ``low``, ``high`` from the ``defined`` resamples of ``resamples``; undefined ones
    are counted, never averaged in. No interval (None) when ``value`` is undefined or fewer than
    the asked share of resamples is defined."""

    value: float | Undefined
    low: float | None
    high: float | None
    resamples: int
    defined: int
    level: float
    no_interval: str | None = None  # why a defined value has no interval

    def to_dict(self) -> dict[str, Any]:
        """``{"value", "undefined", "low", "high", "resamples", "defined", "level",
        "no_interval"}``, JSON-safe."""
        return value_dict(self.value) | {
            "low": self.low,
            "high": self.high,
            "resamples": self.resamples,
            "defined": self.defined,
            "level": self.level,
            "no_interval": self.no_interval,
        }


def check_bootstrap(level: float, resamples: int, min_defined: float) -> None:
    """``ValueError`` unless 0 < level < 1, resamples >= 0 and 0 <= min_defined <= 1."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be strictly between 0 and 1, got {level}")
    if resamples < 0:
        raise ValueError(f"resamples must be 0 or more, got {resamples}")
    if not 0.0 <= min_defined <= 1.0:
        raise ValueError(f"min_defined must be between 0 and 1, got {min_defined}")


def topic_weights(n_topics: int, resamples: int, seed: int) -> npt.NDArray[np.int64]:
    """resamples x n_topics: how often each topic is drawn in each resample (with replacement,
    ``numpy.random.default_rng(seed)``, one row after the other)."""
    drawn = np.random.default_rng(seed).integers(0, n_topics, size=(resamples, n_topics))
    offsets = np.arange(resamples)[:, None] * n_topics
    counts = np.bincount((drawn + offsets).ravel(), minlength=resamples * n_topics)
    return counts.reshape(resamples, n_topics).astype(np.int64)


def blocks(resamples: int, width: int) -> list[slice]:
    """Slices of the resamples such that a block x ``width`` matrix stays near 16 MB."""
    size = max(1, _BLOCK_ELEMENTS // max(1, width))
    return [slice(i, min(i + size, resamples)) for i in range(0, resamples, size)]


def estimate(
    value: float | Undefined,
    draws: FloatArray,
    *,
    level: float,
    min_defined: float,
) -> Estimate:
    """The :class:`Estimate` of ``value`` from its resampled ``draws`` (NaN: undefined there);
    no interval, saying why, when fewer than ``min_defined`` of the resamples are defined."""
    found = draws[np.isfinite(draws)]
    if isinstance(value, Undefined):
        return Estimate(value, None, None, draws.size, found.size, level)
    if not found.size or found.size < min_defined * draws.size:
        why = (
            f"defined in {found.size} of {draws.size} resamples: an interval needs "
            f"{min_defined:.0%}"
        )
        return Estimate(value, None, None, draws.size, found.size, level, why)
    tail = (1.0 - level) / 2
    low, high = np.quantile(found, [tail, 1.0 - tail])
    return Estimate(value, float(low), float(high), draws.size, found.size, level)


def estimates(
    values: Mapping[str, float | Undefined],
    draws: Mapping[str, FloatArray],
    *,
    level: float,
    min_defined: float,
) -> dict[str, Estimate]:
    """Each named value's :class:`Estimate` from its draws (:func:`estimate`)."""
    return {
        name: estimate(value, draws[name], level=level, min_defined=min_defined)
        for name, value in values.items()
    }


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


def correlation_rows(kind: Correlation, x: FloatArray, y: FloatArray) -> FloatArray:
    """``kind`` of each row of ``x`` (the reference) with the same row of ``y``: resamples x
    systems, systems in name order; NaN where :func:`correlation` is undefined. The same
    definitions as :func:`correlation` (scipy's tau-b and Spearman, :func:`tau_ap` breaking ties
    by name), over every resample at once."""
    rows, n = x.shape
    with np.errstate(invalid="ignore", divide="ignore"):
        spread = np.ptp(x, axis=1) * np.ptp(y, axis=1)
        ok = np.isfinite(x).all(axis=1) & np.isfinite(y).all(axis=1) & (spread > 0)
        if n < 2 or not ok.any():
            return np.full(rows, np.nan)
        if kind == "kendall_tau_b":
            i, j = np.triu_indices(n, 1)
            sx, sy = np.sign(x[:, i] - x[:, j]), np.sign(y[:, i] - y[:, j])
            untied = np.abs(sx).sum(axis=1) * np.abs(sy).sum(axis=1)
            value = (sx * sy).sum(axis=1) / np.sqrt(untied)
        elif kind == "spearman":
            from scipy.stats import rankdata

            rx, ry = (rankdata(v, axis=1) for v in (x, y))
            rx, ry = rx - rx.mean(axis=1, keepdims=True), ry - ry.mean(axis=1, keepdims=True)
            value = (rx * ry).sum(axis=1) / np.sqrt((rx * rx).sum(axis=1) * (ry * ry).sum(axis=1))
        else:  # tau_ap: a stable sort of -score orders ties by name, as tau_ap does
            order = np.argsort(-x, axis=1, kind="stable")
            rank_x = np.empty_like(order)
            np.put_along_axis(rank_x, order, np.broadcast_to(np.arange(n), (rows, n)), axis=1)
            rx = np.take_along_axis(rank_x, np.argsort(-y, axis=1, kind="stable"), axis=1)
            above = np.tril(np.ones((n, n), dtype=bool), k=-1)
            correct = ((rx[:, None, :] < rx[:, :, None]) & above).sum(axis=2)[:, 1:]
            value = 2.0 / (n - 1) * (correct / np.arange(1, n)).sum(axis=1) - 1.0
    return np.where(ok, value, np.nan)


def score_matrices(
    reference: Scores, other: Scores
) -> tuple[list[str], list[str], FloatArray, FloatArray]:
    """Runs scored under both (sorted), the topics some run has under each side (sorted), and
    runs x topics matrices of both; a run without a score on one of those topics scores 0.0
    there, as ``trec_eval -c`` counts a topic the run did not retrieve for."""
    runs = sorted(set(reference) & set(other))
    topics = sorted({t for r in runs for t in reference[r]} & {t for r in runs for t in other[r]})

    def matrix(table: Scores) -> FloatArray:
        return np.array(
            [[float(table[r].get(t, 0.0)) for t in topics] for r in runs], dtype=np.float64
        ).reshape(len(runs), len(topics))

    return runs, topics, matrix(reference), matrix(other)


def _nothing_shared(runs: Sequence[str]) -> str:
    return "no topic is scored under both" if runs else "no run is scored under both"


def correlation_interval(
    kind: Correlation,
    reference: Scores,
    other: Scores,
    *,
    level: float = 0.95,
    resamples: int = 1000,
    seed: int = 0,
    min_defined: float = 0.9,
) -> Estimate:
    """``kind`` between the systems' mean scores over topics (``reference`` and ``other``:
    system -> topic -> score, over the topics of :func:`score_matrices`), and its percentile
    bootstrap interval over topics (resampled with replacement, ``seed``)."""
    if kind not in CORRELATIONS:
        raise ValueError(f"unknown correlation {kind!r}; one of {CORRELATIONS}")
    check_bootstrap(level, resamples, min_defined)
    runs, topics, x, y = score_matrices(reference, other)
    if not topics:
        return Estimate(Undefined(_nothing_shared(runs)), None, None, 0, 0, level)
    value = correlation(
        kind,
        dict(zip(runs, x.mean(axis=1), strict=True)),
        dict(zip(runs, y.mean(axis=1), strict=True)),
    )
    weights = topic_weights(len(topics), resamples, seed).astype(np.float64)
    draws = np.full(resamples, np.nan)
    for part in blocks(resamples, len(runs) ** 2):
        draws[part] = correlation_rows(kind, weights[part] @ x.T, weights[part] @ y.T)
    return estimate(value, draws, level=level, min_defined=min_defined)


@dataclass(frozen=True)
class RankingMeta:
    """How a judge's qrels rank the ``n_runs`` runs scored under both, against people's, over
    ``n_topics`` topics; each figure an :class:`Estimate` with its bootstrap over topics.

    ``top_runs`` are people's best ``top_k`` runs by mean (ties by name), chosen once on the full
    data and kept across resamples, so ``tau_top_k``'s interval is about those runs.
    ``significant_kept`` is ``kept / significant_pairs``: of the ``significant_pairs`` run pairs
    (of ``pairs``) whose paired two-sided t-test over topics under people gives p < ``alpha``,
    the share whose mean difference under the judge has the same strict sign;
    ``kept_significant`` of those kept are also significant under the judge's own t-test.
    ``human_only_runs``, ``judge_only_runs`` count runs scored under one side only (left out).
    """

    n_runs: int
    n_topics: int
    human_only_runs: int
    judge_only_runs: int
    top_k: int
    top_runs: list[str]
    alpha: float
    kendall_tau_b: Estimate
    tau_ap: Estimate
    spearman: Estimate
    tau_top_k: Estimate
    significant_kept: Estimate
    pairs: int
    significant_pairs: int
    kept: int
    kept_significant: int

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict: the counts, and each figure as :meth:`Estimate.to_dict`."""
        return {
            "n_runs": self.n_runs,
            "n_topics": self.n_topics,
            "human_only_runs": self.human_only_runs,
            "judge_only_runs": self.judge_only_runs,
            "top_k": self.top_k,
            "top_runs": list(self.top_runs),
            "alpha": self.alpha,
            "kendall_tau_b": self.kendall_tau_b.to_dict(),
            "tau_ap": self.tau_ap.to_dict(),
            "spearman": self.spearman.to_dict(),
            "tau_top_k": self.tau_top_k.to_dict(),
            "significant_kept": self.significant_kept.to_dict(),
            "pairs": self.pairs,
            "significant_pairs": self.significant_pairs,
            "kept": self.kept,
            "kept_significant": self.kept_significant,
        }


_Differences = tuple[FloatArray, FloatArray]  # pairs x topics, centred on its mean; the means


def _differences(scores: FloatArray) -> _Differences:
    """Per topic, run i minus run j for every pair i < j (``numpy.triu_indices`` order), centred
    on each pair's mean: the sums of squares below then lose no precision to a large mean."""
    i, j = np.triu_indices(scores.shape[0], 1)
    diffs = scores[i] - scores[j]
    centre = diffs.mean(axis=1)
    return diffs - centre[:, None], centre


def _paired_t(weights: FloatArray, differences: _Differences) -> tuple[FloatArray, FloatArray]:
    """Per resample (rows of topic ``weights``) and run pair: the mean difference over the drawn
    topics and its paired t statistic, t = mean / (s / sqrt(n)), s the sample standard
    deviation of the n drawn differences (``scipy.stats.ttest_rel``'s; +-inf when s = 0)."""
    centred, centre = differences
    n = weights.shape[1]
    shift = weights @ centred.T / n
    variance = np.maximum(weights @ (centred * centred).T - n * shift * shift, 0.0) / (n - 1)
    mean = shift + centre
    with np.errstate(invalid="ignore", divide="ignore"):
        return mean, mean / np.sqrt(variance / n)


def _pair_tests(
    weights: FloatArray, people: _Differences, judge: _Differences, critical: float
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """Significant under people (|t| above the two-sided critical value, i.e. p < alpha), kept
    (the judge's mean difference has the same strict sign) and significant under the judge."""
    mean_h, t_h = _paired_t(weights, people)
    mean_j, t_j = _paired_t(weights, judge)
    significant = np.abs(t_h) > critical  # NaN (0 / 0: no difference at all) is not
    kept = significant & (np.sign(mean_j) == np.sign(mean_h)) & (mean_j != 0)
    return significant, kept, np.abs(t_j) > critical


def ranking_meta(
    human: Scores,
    judge: Scores,
    *,
    top_k: int = 10,
    alpha: float = 0.05,
    resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    min_defined: float = 0.9,
) -> RankingMeta:
    """Kendall's tau-b, tau_AP (people = reference), Spearman and tau-b among people's top
    ``top_k`` runs between the runs' mean scores under people (``human``) and the judge
    (``judge``), both run -> topic -> score; and the share of people's significant run pairs
    the judge keeps in order (see :class:`RankingMeta`). Topics and missing scores as
    :func:`score_matrices` (a run missing a topic scores 0.0 there, as ``trec_eval -c``).

    Each figure has a percentile bootstrap interval over topics (``resamples``, ``seed``,
    ``level``, ``min_defined`` as :func:`estimate`); the significant-pair share
    recomputes the t-tests on every resample, with the critical value of t at n_topics - 1
    degrees of freedom.
    ``ValueError`` for a non-finite score, ``top_k`` < 2 or ``alpha`` outside (0, 1).
    """
    if top_k < 2:
        raise ValueError(f"top_k must be at least 2 (a correlation needs two runs), got {top_k}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be strictly between 0 and 1, got {alpha}")
    check_bootstrap(level, resamples, min_defined)
    runs, topics, x, y = score_matrices(human, judge)
    for side, matrix in (("people", x), ("the judge", y)):
        if not np.isfinite(matrix).all():
            raise ValueError(f"a per-topic score under {side} is not finite")
    n, t = len(runs), len(topics)
    top: list[int] = []
    values: dict[str, float | Undefined] = dict.fromkeys(
        [*CORRELATIONS, "top"], Undefined(_nothing_shared(runs))
    )
    if t:
        mean_x, mean_y = x.mean(axis=1), y.mean(axis=1)
        top = sorted(range(n), key=lambda r: (-mean_x[r], runs[r]))[:top_k]

        def means(chosen: Sequence[int]) -> tuple[dict[str, float], dict[str, float]]:
            return (
                {runs[r]: float(mean_x[r]) for r in chosen},
                {runs[r]: float(mean_y[r]) for r in chosen},
            )

        for kind in CORRELATIONS:
            values[kind] = correlation(kind, *means(range(n)))
        values["top"] = correlation("kendall_tau_b", *means(top))
    values["share"], critical, (significant, kept, kept_significant) = _share(x, y, alpha)

    weights = topic_weights(t, resamples, seed).astype(np.float64) if t else np.zeros((0, 0))
    draws = {name: np.full(len(weights), np.nan) for name in values}
    tests = (_differences(x), _differences(y)) if math.isfinite(critical) else None
    for part in blocks(len(weights), n * n):
        wx, wy = weights[part] @ x.T, weights[part] @ y.T
        for kind in CORRELATIONS:
            draws[kind][part] = correlation_rows(kind, wx, wy)
        draws["top"][part] = correlation_rows("kendall_tau_b", wx[:, top], wy[:, top])
        if tests:
            sig, keep, _ = _pair_tests(weights[part], *tests, critical)
            with np.errstate(invalid="ignore", divide="ignore"):
                draws["share"][part] = keep.sum(axis=1) / sig.sum(axis=1)

    found = estimates(values, draws, level=level, min_defined=min_defined)
    return RankingMeta(
        n_runs=n,
        n_topics=t,
        human_only_runs=len(set(human) - set(judge)),
        judge_only_runs=len(set(judge) - set(human)),
        top_k=len(top),
        top_runs=[runs[r] for r in top],
        alpha=alpha,
        kendall_tau_b=found["kendall_tau_b"],
        tau_ap=found["tau_ap"],
        spearman=found["spearman"],
        tau_top_k=found["top"],
        significant_kept=found["share"],
        pairs=n * (n - 1) // 2,
        significant_pairs=significant,
        kept=kept,
        kept_significant=kept_significant,
    )


def _share(
    x: FloatArray, y: FloatArray, alpha: float
) -> tuple[float | Undefined, float, tuple[int, int, int]]:
    """The share of people's significant run pairs the judge keeps, on the full data; the
    critical value of |t| (NaN when no test can be made); significant, kept, kept and
    significant under the judge."""
    n, t = x.shape
    if t < 2:
        reason = f"{t} topic(s) scored under both: a paired t-test needs at least 2"
        return Undefined(reason), math.nan, (0, 0, 0)
    if n < 2:
        return Undefined(f"{n} run(s) scored under both: no pair to compare"), math.nan, (0, 0, 0)
    from scipy.stats import t as student

    critical = float(student.isf(alpha / 2, t - 1))
    sig, keep, judge_sig = _pair_tests(np.ones((1, t)), _differences(x), _differences(y), critical)
    counts = (int(sig.sum()), int(keep.sum()), int((keep & judge_sig).sum()))
    if not counts[0]:
        reason = f"no pair of runs differs significantly under people (p < {alpha})"
        return Undefined(reason), critical, counts
    return counts[1] / counts[0], critical, counts
