"""Paired tests of two runs over the same queries (t, randomization, bootstrap), effect size,
and the comparisons built on them: every pair of runs, and each run against a baseline.

scipy (about 0.6 s of imports) is imported by the functions that call it (the paired t test), not
at the top: the randomization and bootstrap tests are numpy only.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, cast

import numpy as np
import numpy.typing as npt

from metrics.stats.intervals import _CHUNK_ELEMENTS, _as_values, _bootstrap_means, bootstrap_ci
from metrics.stats.multiple import CORRECTIONS, adjust, holm

__all__ = [
    "BaselineComparison",
    "Comparison",
    "PairedTest",
    "compare_runs",
    "compare_to_baseline",
    "effect_size",
    "paired_test",
    "query_set",
]

TestName = Literal["t", "randomization", "bootstrap"]


_TESTS: tuple[str, ...] = ("t", "randomization", "bootstrap")


@dataclass(frozen=True)
class PairedTest:
    """Outcome of a two-sided paired test of mean(a - b) = 0.

    ``statistic`` is the t statistic for ``test="t"`` and the observed mean difference for the
    ``"randomization"`` and ``"bootstrap"`` tests.
    """

    test: str
    statistic: float
    p_value: float
    mean_diff: float
    n: int


def _paired_t(
    a: npt.NDArray[np.float64], b: npt.NDArray[np.float64], d: npt.NDArray[np.float64]
) -> tuple[float, float]:
    if np.all(d == d[0]):
        # Zero variance: ttest_rel gives nan; the limit is exact (no variation to doubt).
        if d[0] == 0.0:
            return (0.0, 1.0)
        return (math.copysign(math.inf, float(d[0])), 0.0)
    import scipy.stats

    res = scipy.stats.ttest_rel(a, b)
    return (float(res.statistic), float(res.pvalue))


def _tie_slack(x: npt.NDArray[np.float64]) -> float:
    # A resampled mean equal to the observed one up to rounding must count as "at least as
    # extreme"; the rounding error of a mean of terms bounded by max|x| is ~1e-15 * max|x|.
    return 1e-10 * float(np.max(np.abs(x)))


def _paired_randomization(
    d: npt.NDArray[np.float64], n_resamples: int, seed: int
) -> tuple[float, float]:
    n = d.size
    observed = float(d.mean())
    threshold = abs(observed) - _tie_slack(d)
    if n < 63 and 1 << n <= n_resamples:
        # Exact: every one of the 2^n sign patterns once (the observed one included).
        patterns = (np.arange(1 << n, dtype=np.int64)[:, None] >> np.arange(n)) & 1
        means = ((1 - 2 * patterns) @ d) / n
        return (observed, float(np.count_nonzero(np.abs(means) >= threshold)) / (1 << n))
    rng = np.random.default_rng(seed)
    total = float(d.sum())
    hits = 0
    rows = max(1, _CHUNK_ELEMENTS // n)
    for start in range(0, n_resamples, rows):
        stop = min(n_resamples, start + rows)
        # One random bit per query says "flip": sum(s * d) = sum(d) - 2 * sum(d[flipped]).
        # Unpacking random bytes is ~10x faster than drawing small integers.
        raw = rng.integers(0, 256, size=(stop - start, (n + 7) // 8), dtype=np.uint8)
        flip = np.unpackbits(raw, axis=1, count=n)
        means = (total - 2.0 * (flip @ d)) / n
        hits += int(np.count_nonzero(np.abs(means) >= threshold))
    return (observed, (hits + 1) / (n_resamples + 1))


def _paired_bootstrap(
    d: npt.NDArray[np.float64], n_resamples: int, seed: int
) -> tuple[float, float]:
    observed = float(d.mean())
    centred = d - observed
    means = _bootstrap_means(centred, n_resamples, seed)
    threshold = abs(observed) - _tie_slack(d)
    p = float(np.count_nonzero(np.abs(means) >= threshold)) / n_resamples
    return (observed, p)


def paired_test(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    *,
    test: TestName,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> PairedTest:
    """Two-sided paired significance test of H0: mean(a - b) = 0 over queries.

    ``a[i]`` and ``b[i]`` are two systems' scores on the same query i; d_i = a_i - b_i.

    - ``"t"``: paired Student t test, t = mean(d) / (s_d / sqrt(n)), n - 1 d.f.
      (``scipy.stats.ttest_rel``). If all d_i are equal the t statistic is undefined; we return
      t = 0, p = 1 when they are all 0 and t = +/-inf, p = 0 otherwise.
    - ``"randomization"``: paired randomization (sign-flip permutation) test of mean(d)
      (Fisher; Smucker et al. 2007): under H0 each d_i is as likely to be -d_i, so
      p = P(|mean(s * d)| >= |mean(d)|) over sign vectors s. Exact (all 2^n sign patterns,
      p = count / 2^n) when 2^n <= ``n_resamples``; otherwise Monte Carlo with
      p = (#{|T*| >= |T|} + 1) / (``n_resamples`` + 1) (Phipson & Smyth 2010), never 0. The same
      null distribution as ``scipy.stats.permutation_test(permutation_type="samples")`` on d
      (checked in the tests), vectorised here because scipy's is ~20x slower and every pair of
      runs needs one.
    - ``"bootstrap"``: paired bootstrap test (Efron & Tibshirani 1993 sec. 16.4; Sakai 2006) on the
      unstudentised mean: resample the centred differences d_i - mean(d) ``n_resamples`` times,
      p = #{|mean*| >= |mean(d)|} / ``n_resamples``. This p can be 0 (read it as < 1/B).

    ``statistic`` is t for the t test and mean(d) for the other two. Random tests are deterministic
    for a ``seed``. Raises ``ValueError`` on length mismatch, empty input, NaN values, or n < 2 for
    the t and bootstrap tests (the randomization test of one pair gives p = 1).
    """
    if test not in _TESTS:
        raise ValueError(f"unknown test {test!r}; expected one of {', '.join(_TESTS)}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    xa = _as_values(a, "a")
    xb = _as_values(b, "b")
    if xa.shape != xb.shape:
        raise ValueError(f"a and b must have the same length, got {xa.size} and {xb.size}")
    n = xa.size
    if n == 0:
        raise ValueError("paired_test needs at least one pair of values")
    d = xa - xb
    mean_diff = float(d.mean())
    if n < 2 and test != "randomization":
        # One pair has no variance to test against (the bootstrap would always say p = 0).
        raise ValueError(f"the paired {test} test needs at least two pairs")
    if test == "t":
        statistic, p = _paired_t(xa, xb, d)
    elif test == "randomization":
        statistic, p = _paired_randomization(d, n_resamples, seed)
    else:
        statistic, p = _paired_bootstrap(d, n_resamples, seed)
    return PairedTest(test=test, statistic=statistic, p_value=min(1.0, p), mean_diff=mean_diff, n=n)


def query_set(
    per_query: Mapping[str, Mapping[str, float]], queries: Sequence[str] | None
) -> list[str]:
    """The queries runs are paired on: ``queries`` as given (a run without a value for one
    scores 0 there), or, when None, the queries of the runs, which must then all cover the same
    ones (a run missing a query another run has raises ``ValueError`` naming both)."""
    if queries is not None:
        return list(dict.fromkeys(queries))
    union: set[str] = set().union(*(set(v) for v in per_query.values()))
    for r, values in per_query.items():
        missing = union - set(values)
        if missing:
            shown = ", ".join(sorted(missing)[:10])
            raise ValueError(
                f"run {r!r} has no value for {len(missing)} queries other runs have "
                f"({shown}); pass queries= to score them 0"
            )
    return sorted(union)


def effect_size(a: npt.ArrayLike, b: npt.ArrayLike) -> float:
    """Standardised paired effect: mean(a - b) / sd(a - b) (ddof 1; Cohen's d_z).

    0 when every difference is 0; +/-inf when the differences are all equal and not 0; NaN with
    fewer than two pairs."""
    d = _as_values(a) - _as_values(b)
    if d.size < 2:
        return math.nan
    sd = float(d.std(ddof=1))
    mean = float(d.mean())
    if sd == 0.0:
        return 0.0 if mean == 0.0 else math.copysign(math.inf, mean)
    return mean / sd


@dataclass(frozen=True)
class BaselineComparison:
    """One run against the baseline over the same queries (see :func:`compare_to_baseline`).

    ``diff`` = mean_run - mean_baseline; ``ci_low``/``ci_high`` its paired bootstrap percentile
    interval; ``effect`` Cohen's d_z; ``p_adjusted`` under ``correction`` over the runs compared;
    wins/ties/losses count the queries where the run scores above / equal to / below the
    baseline."""

    run: str
    baseline: str
    mean_run: float
    mean_baseline: float
    diff: float
    ci_low: float
    ci_high: float
    effect: float
    p_value: float
    p_adjusted: float
    test: str
    correction: str
    n: int
    wins: int
    ties: int
    losses: int
    significant: bool


def compare_to_baseline(
    per_query: Mapping[str, Mapping[str, float]],
    baseline: str,
    *,
    test: str = "t",
    correction: str = "holm",
    alpha: float = 0.05,
    level: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
    queries: Sequence[str] | None = None,
) -> list[BaselineComparison]:
    """Every other run of ``per_query`` against ``baseline`` (the common case in papers): a paired
    test each, adjusted with ``correction`` (:func:`adjust`) over those m - 1 comparisons only,
    not over all pairs.

    The query set follows :func:`compare_runs`: ``queries`` given, a run without a value for one
    of them scores 0 there; not given, every run must cover the same queries. Runs are returned
    in the mapping's order, the baseline left out. Raises ``ValueError`` for a baseline not in
    ``per_query``, an unknown test or correction, or ``alpha`` outside (0, 1).
    """
    if baseline not in per_query:
        raise ValueError(f"baseline {baseline!r} is not one of the runs compared")
    if test not in _TESTS:
        raise ValueError(f"unknown test {test!r}; expected one of {', '.join(_TESTS)}")
    if correction not in CORRECTIONS:
        raise ValueError(
            f"unknown correction {correction!r}; expected one of {', '.join(CORRECTIONS)}"
        )
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be strictly between 0 and 1, got {alpha}")
    runs = [r for r in per_query if r != baseline]
    qids = query_set(per_query, queries)
    if runs and not qids:
        raise ValueError("no queries to compare")

    def vector(r: str) -> npt.NDArray[np.float64]:
        return np.array([float(per_query[r].get(q, 0.0)) for q in qids], dtype=np.float64)

    base = vector(baseline)
    vectors = {r: vector(r) for r in runs}
    tests = [
        paired_test(vectors[r], base, test=cast(TestName, test), n_resamples=n_resamples, seed=seed)
        for r in runs
    ]
    adjusted = adjust([t.p_value for t in tests], correction)
    out = []
    for r, t, pa in zip(runs, tests, adjusted, strict=True):
        d = vectors[r] - base
        low, high = bootstrap_ci(d, level=level, n_resamples=n_resamples, seed=seed)
        out.append(
            BaselineComparison(
                run=r,
                baseline=baseline,
                mean_run=float(vectors[r].mean()),
                mean_baseline=float(base.mean()),
                diff=t.mean_diff,
                ci_low=low,
                ci_high=high,
                effect=effect_size(vectors[r], base),
                p_value=t.p_value,
                p_adjusted=pa,
                test=test,
                correction=correction,
                n=t.n,
                wins=int(np.sum(d > 0)),
                ties=int(np.sum(d == 0)),
                losses=int(np.sum(d < 0)),
                significant=bool(pa <= alpha),
            )
        )
    return out


@dataclass(frozen=True)
class Comparison:
    """One pairwise comparison of two runs over the same queries (see :func:`compare_runs`)."""

    run_a: str
    run_b: str
    mean_a: float
    mean_b: float
    diff: float
    p_value: float
    p_holm: float
    test: str
    n: int
    significant: bool


def compare_runs(
    per_query: Mapping[str, Mapping[str, float]],
    *,
    test: str = "t",
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    seed: int = 0,
    queries: Sequence[str] | None = None,
) -> list[Comparison]:
    """All pairwise paired tests between runs, Holm-corrected across the pairs.

    ``per_query`` maps run tag -> {qid: value}. Pairs are (runs[i], runs[j]) for i < j in the
    mapping's iteration order; ``diff`` = mean_a - mean_b over the compared queries. Each pair is
    tested with :func:`paired_test` (same ``test``, ``n_resamples`` and ``seed`` for every pair),
    then the family of all pairs is adjusted with :func:`holm`; ``significant`` is
    ``p_holm <= alpha``.

    Query set:

    - ``queries=None``: every run must cover the same queries (their intersection then equals
      their union). A run missing a query another run has raises ``ValueError`` naming the run and
      the queries, rather than silently comparing on fewer queries.
    - ``queries`` given: exactly those queries are compared, and a run with no value for one of
      them scores 0 on it (a system is not rewarded for silence, DESIGN sec. 5). Values for other
      queries are ignored.

    Returns ``[]`` for fewer than two runs. Raises ``ValueError`` on an unknown test, an empty
    query set, or ``alpha`` outside (0, 1).
    """
    if test not in _TESTS:
        raise ValueError(f"unknown test {test!r}; expected one of {', '.join(_TESTS)}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be strictly between 0 and 1, got {alpha}")
    runs = list(per_query)
    qids = query_set(per_query, queries)
    if len(runs) >= 2 and not qids:
        raise ValueError("no queries to compare")
    vectors = {
        r: np.array([float(per_query[r].get(q, 0.0)) for q in qids], dtype=np.float64) for r in runs
    }
    pairs = list(itertools.combinations(runs, 2))
    tests = [
        paired_test(
            vectors[ra],
            vectors[rb],
            test=cast(TestName, test),
            n_resamples=n_resamples,
            seed=seed,
        )
        for ra, rb in pairs
    ]
    adjusted = holm([t.p_value for t in tests])
    return [
        Comparison(
            run_a=ra,
            run_b=rb,
            mean_a=float(vectors[ra].mean()),
            mean_b=float(vectors[rb].mean()),
            diff=t.mean_diff,
            p_value=t.p_value,
            p_holm=ph,
            test=test,
            n=t.n,
            significant=bool(ph <= alpha),
        )
        for (ra, rb), t, ph in zip(pairs, tests, adjusted, strict=True)
    ]
