"""Statistics over per-query scores: confidence intervals, paired tests, Holm, rank correlations.

Every function takes plain sequences or numpy arrays of per-query values and returns plain Python
floats, so results serialise to JSON without conversion. NaN input values are rejected: a missing
per-query value is a decision for the caller (drop the query or score it 0), not for a statistic.

References
----------
- Efron & Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 13 (percentile interval) and
  sec. 16.4 (bootstrap test of a mean).
- Smucker, Allan & Carterette (2007), "A comparison of statistical significance tests for
  information retrieval evaluation", CIKM (paired t, randomization and bootstrap tests).
- Sakai (2006), "Evaluating evaluation metrics based on the bootstrap", SIGIR.
- Phipson & Smyth (2010), "Permutation p-values should never be zero", Stat. Appl. Genet. Mol.
  Biol. 9(1).
- Holm (1979), "A simple sequentially rejective multiple test procedure", Scand. J. Statist.
- Benjamini & Hochberg (1995), "Controlling the false discovery rate", J. R. Statist. Soc. B.
- Yilmaz, Aslam & Robertson (2008), "A new rank correlation coefficient for information
  retrieval", SIGIR (tau_AP).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

import numpy as np
import numpy.typing as npt

# scipy (about 0.6 s of imports) is imported by the functions that call it (t_ci, the paired t
# test, kendall_tau_b), not here: the bootstrap intervals that ``python -m metrics evaluate``
# computes by default, and the randomization and bootstrap tests, are numpy only.

__all__ = [
    "CORRECTIONS",
    "TUKEY_DESIGNS",
    "BaselineComparison",
    "Comparison",
    "PairedTest",
    "TukeyComparison",
    "adjust",
    "bootstrap_ci",
    "compare_runs",
    "compare_to_baseline",
    "effect_size",
    "effect_size_matrix",
    "holm",
    "kendall_tau_b",
    "paired_resampling_matrix",
    "paired_t_matrix",
    "paired_test",
    "query_set",
    "studentized_range_sf",
    "t_ci",
    "tau_ap",
    "tau_ap_symmetric",
    "tukey_hsd",
]

TestName = Literal["t", "randomization", "bootstrap"]
_TESTS: tuple[str, ...] = ("t", "randomization", "bootstrap")

# Upper bound on the elements of one resample matrix (a chunk of bootstrap resamples): keeps memory
# near 16 MB of float64 however many queries or resamples are asked for.
_CHUNK_ELEMENTS = 1 << 21


def _as_values(values: npt.ArrayLike, name: str = "values") -> npt.NDArray[np.float64]:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def _check_level(level: float) -> None:
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be strictly between 0 and 1, got {level}")


def _resample_indices(rng: np.random.Generator, rows: int, n: int) -> npt.NDArray[np.integer[Any]]:
    # uint16 indices are generated noticeably faster than int64 ones and suffice for n <= 65536.
    if n <= 1 << 16:
        return rng.integers(0, n, size=(rows, n), dtype=np.uint16)
    return rng.integers(0, n, size=(rows, n), dtype=np.intp)


@functools.lru_cache(maxsize=2)
def _one_chunk_of_resamples(n: int, n_resamples: int, seed: int) -> npt.NDArray[np.integer[Any]]:
    """The resample indices when they fit one chunk, drawn once: an evaluation bootstraps
    every aggregate of a run over the same n queries with the same seed, so the draws repeat."""
    idx = _resample_indices(np.random.default_rng(seed), n_resamples, n)
    idx.flags.writeable = False
    return idx


def _bootstrap_means(
    values: npt.NDArray[np.float64], n_resamples: int, seed: int
) -> npt.NDArray[np.float64]:
    """Means of ``n_resamples`` resamples (with replacement, size n) of ``values``."""
    n = values.size
    rows = max(1, _CHUNK_ELEMENTS // n)
    if n_resamples <= rows:
        out: npt.NDArray[np.float64] = values[_one_chunk_of_resamples(n, n_resamples, seed)].mean(
            axis=1
        )
        return out
    out = np.empty(n_resamples, dtype=np.float64)
    rng = np.random.default_rng(seed)
    for start in range(0, n_resamples, rows):
        stop = min(n_resamples, start + rows)
        idx = _resample_indices(rng, stop - start, n)
        out[start:stop] = values[idx].mean(axis=1)
    return out


def bootstrap_ci(
    values: npt.ArrayLike,
    *,
    level: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of the mean over queries.

    Draws ``n_resamples`` resamples of the n per-query values with replacement, takes each
    resample's mean m*_b, and returns the (alpha/2, 1 - alpha/2) quantiles of {m*_b},
    alpha = 1 - level (Efron & Tibshirani 1993, ch. 13; quantiles by numpy's default linear
    interpolation). This is the *percentile* interval, not BCa: BCa needs a jackknife per call and
    this function runs for every aggregate of every run. Deterministic for a given ``seed``
    (numpy PCG64).

    Degenerate inputs: no values -> ``(nan, nan)``; one value, or all values equal, ->
    ``(v, v)``. NaN or infinite values raise ``ValueError``.
    """
    _check_level(level)
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    arr = _as_values(values)
    if arr.size == 0:
        return (math.nan, math.nan)
    if np.all(arr == arr[0]):
        v = float(arr[0])
        return (v, v)
    means = _bootstrap_means(arr, n_resamples, seed)
    alpha = 1.0 - level
    lo, hi = np.quantile(means, [alpha / 2.0, 1.0 - alpha / 2.0])
    return (float(lo), float(hi))


def t_ci(values: npt.ArrayLike, *, level: float = 0.95) -> tuple[float, float]:
    """Student-t confidence interval of the mean over queries.

    mean +/- t_{1-alpha/2, n-1} * s / sqrtn, with s the sample standard deviation (ddof = 1) and
    t the Student-t quantile (``scipy.stats.t.ppf``), alpha = 1 - level.

    Degenerate inputs: no values -> ``(nan, nan)``; one value -> ``(nan, nan)`` (with n - 1 = 0
    degrees of freedom the interval is undefined); all values equal (n >= 2) -> ``(v, v)``.
    NaN or infinite values raise ``ValueError``.
    """
    _check_level(level)
    arr = _as_values(values)
    if arr.size < 2:
        return (math.nan, math.nan)
    if np.all(arr == arr[0]):
        v = float(arr[0])
        return (v, v)
    import scipy.stats

    mean = float(arr.mean())
    sem = float(scipy.stats.sem(arr))
    # Quantile times sem rather than t.interval(scale=sem): scipy returns NaN when sem underflows.
    half = float(scipy.stats.t.ppf(0.5 + level / 2.0, df=arr.size - 1)) * sem
    return (mean - half, mean + half)


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


# --- All pairs at once: the vectorised paired t-test and Tukey's HSD --------------------------
#
# References for this section:
# - Tukey (1949/1953), the honestly significant difference; Kramer (1956).
# - Carterette (2012), "Multiple testing in statistical analysis of systems-based information
#   retrieval experiments", ACM TOIS 30(1): two-way ANOVA (system x topic) and Tukey's HSD.
# - Sakai (2018), *Laboratory Experiments in Information Retrieval*, Springer, ch. 4 (the
#   randomised Tukey HSD and the two-way ANOVA form used here).
# - Copenhaver & Holland (1988), "Computation of the distribution of the maximum studentized
#   range statistic", J. Statist. Comput. Simul. 30 (the double integral evaluated below).


def _query_matrix(
    per_query: Mapping[str, Mapping[str, float]], queries: Sequence[str] | None
) -> tuple[list[str], list[str], npt.NDArray[np.float64]]:
    """(runs, qids, values[run, query]) with :func:`compare_runs`' rule for the query set."""
    runs = list(per_query)
    qids = query_set(per_query, queries)
    values = np.array(
        [[float(per_query[r].get(q, 0.0)) for q in qids] for r in runs], dtype=np.float64
    ).reshape(len(runs), len(qids))
    if not np.all(np.isfinite(values)):
        raise ValueError("per-query values contain NaN or infinite values")
    return runs, qids, values


def paired_t_matrix(
    values: npt.ArrayLike,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """The two-sided paired t-test of every ordered pair of rows of ``values`` (runs x queries),
    at once: ``(t, p)``, both m x m, t[i, j] the statistic of row i minus row j.

    d = x_i - x_j over the n queries, t = mean(d) / (sd(d) / sqrt(n)) (ddof 1), n - 1 d.f.,
    p = 2 * ``scipy.stats.t.sf(|t|, n - 1)``: the same test as :func:`paired_test` with
    ``test="t"`` (``scipy.stats.ttest_rel``; equal on every pair in the tests), including its
    rule for differences that are all equal (all 0: t = 0, p = 1; otherwise t = +/-inf, p = 0),
    but one numpy expression for all m(m-1)/2 pairs instead of one scipy call each. The
    diagonal is t = 0, p = 1. Needs n >= 2 queries (``ValueError`` otherwise).
    """
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"values must be two-dimensional (runs x queries), got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("values contain NaN or infinite values")
    n = x.shape[1]
    if n < 2:
        raise ValueError("the paired t test needs at least two queries")
    import scipy.stats

    m = x.shape[0]
    t = np.zeros((m, m), dtype=np.float64)
    p = np.ones((m, m), dtype=np.float64)
    # d[i, j, :] = x[i] - x[j], a block of rows at a time (bounded memory); mean and variance as
    # ttest_rel computes them, so that nearly constant differences agree too
    rows = max(1, _CHUNK_ELEMENTS // max(1, m * n))
    for start in range(0, m, rows):
        d = x[start : start + rows, None, :] - x[None, :, :]
        mean = d.mean(axis=2)
        var = d.var(axis=2, ddof=1)
        constant = np.ptp(d, axis=2) == 0.0
        first = d[:, :, 0]
        with np.errstate(divide="ignore", invalid="ignore"):
            tb = mean / np.sqrt(var / n)
        tb = np.where(constant, np.where(first == 0.0, 0.0, np.copysign(np.inf, first)), tb)
        pb = np.where(
            constant,
            np.where(first == 0.0, 1.0, 0.0),
            np.minimum(1.0, 2.0 * scipy.stats.t.sf(np.abs(tb), n - 1)),
        )
        t[start : start + rows] = tb
        p[start : start + rows] = pb
    return t, p


def effect_size_matrix(values: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Cohen's d_z (:func:`effect_size`) of every ordered pair of rows of ``values`` (runs x
    queries): e[i, j] = mean(x_i - x_j) / sd(x_i - x_j), with the same rules (0 when every
    difference is 0, +/-inf when they are all equal and not 0, NaN with fewer than two
    queries). The diagonal is 0."""
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"values must be two-dimensional (runs x queries), got shape {x.shape}")
    m, n = x.shape
    if n < 2:
        return np.full((m, m), math.nan)
    e = np.zeros((m, m), dtype=np.float64)
    rows = max(1, _CHUNK_ELEMENTS // max(1, m * n))
    for start in range(0, m, rows):
        d = x[start : start + rows, None, :] - x[None, :, :]
        mean = d.mean(axis=2)
        sd = d.std(axis=2, ddof=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            eb = mean / sd
        e[start : start + rows] = np.where(
            sd == 0.0, np.where(mean == 0.0, 0.0, np.copysign(np.inf, mean)), eb
        )
    return e


def _gauss_legendre(
    lo: float, hi: float, panels: int, nodes: int
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Nodes and weights of composite Gauss-Legendre quadrature on [lo, hi]."""
    x, w = np.polynomial.legendre.leggauss(nodes)
    edges = np.linspace(lo, hi, panels + 1)
    half = (edges[1:] - edges[:-1]) / 2.0
    mid = (edges[1:] + edges[:-1]) / 2.0
    xs = (mid[:, None] + half[:, None] * x[None, :]).ravel()
    ws = (half[:, None] * w[None, :]).ravel()
    return xs.astype(np.float64), ws.astype(np.float64)


@functools.lru_cache(maxsize=8)
def _range_tail(k: int) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """W_k(w) = P(range of k standard normals >= w) on a grid of w in [0, 20] (beyond 20 it is
    below k^2 * P(Z > 10), negligible), by composite Gauss-Legendre quadrature over z; cached
    per k (a page asks for the same k again and again)."""
    import scipy.special

    z, wz = _gauss_legendre(-8.5, 8.5, 34, 12)
    phi_z = np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
    big_phi = scipy.special.ndtr(z)
    grid = np.linspace(0.0, 20.0, 8001)
    inner = big_phi[None, :] - scipy.special.ndtr(z[None, :] - grid[:, None])
    tail = k * ((np.power(big_phi, k - 1)[None, :] - np.power(inner, k - 1)) * phi_z) @ wz
    tail = np.clip(tail, 0.0, 1.0)
    tail[0] = 1.0
    grid.flags.writeable = False
    tail.flags.writeable = False
    return grid, tail


def studentized_range_sf(q: npt.ArrayLike, k: int, df: float) -> npt.NDArray[np.float64]:
    """Upper tail P(Q >= q) of the studentized range of ``k`` means with ``df`` degrees of
    freedom, for an array of q at once.

    P(Q >= q) = integral_0^inf g_df(s) * W_k(q s) ds, where s = sqrt(chi2_df / df) has density
    g_df and W_k(w) = P(range of k standard normals >= w)
    = k * integral phi(z) [Phi(z)^(k-1) - (Phi(z) - Phi(z - w))^(k-1)] dz (Copenhaver & Holland
    1988). Both integrals use composite Gauss-Legendre quadrature on fixed grids; W_k is
    tabulated once on a fine grid of w and interpolated, so the cost hardly grows with the
    number of q. ``scipy.stats.studentized_range.sf`` computes the same quantity with adaptive
    quadrature per value (about 20 ms each: 3 minutes for the 8001 pairs of 127 runs); this one
    agrees with it within 1e-6 (checked in the tests) and takes milliseconds. q <= 0 gives 1.
    """
    qs = np.asarray(q, dtype=np.float64)
    if k < 2:
        raise ValueError(f"the studentized range needs k >= 2 means, got {k}")
    if not df > 0:
        raise ValueError(f"df must be positive, got {df}")

    import scipy.stats

    grid, tail = _range_tail(k)
    # s = sqrt(chi2_df / df): integrate over its central 1 - 2e-12 mass (the rest weighs less)
    chi = scipy.stats.chi(df, scale=1.0 / math.sqrt(df))
    lo, hi = float(chi.ppf(1e-12)), float(chi.ppf(1.0 - 1e-12))
    s, ws = _gauss_legendre(lo, hi, 16, 16)
    weights = chi.pdf(s) * ws
    weights = weights / weights.sum()  # the mass outside [lo, hi] is ~2e-12
    flat = np.maximum(qs.ravel(), 0.0)
    out = np.empty(flat.shape, dtype=np.float64)
    for start in range(0, flat.size, 4096):  # bounded memory: 4096 q x 256 s at a time
        chunk = flat[start : start + 4096]
        w = chunk[:, None] * s[None, :]
        out[start : start + 4096] = np.interp(w, grid, tail, right=0.0) @ weights
    out = np.where(flat <= 0.0, 1.0, np.clip(out, 0.0, 1.0))
    return out.reshape(qs.shape)


@dataclass(frozen=True)
class TukeyComparison:
    """One pair of runs under Tukey's HSD (see :func:`tukey_hsd`): ``diff`` = mean_a - mean_b,
    ``q`` the studentized range statistic, ``p_value`` already the family-wise (multiple
    comparison) p-value, ``df`` and ``mse`` the ANOVA's residual degrees of freedom and mean
    square."""

    run_a: str
    run_b: str
    mean_a: float
    mean_b: float
    diff: float
    q: float
    p_value: float
    n: int
    df: int
    mse: float
    design: str
    significant: bool


TUKEY_DESIGNS: tuple[str, ...] = ("two-way", "one-way")


def tukey_hsd(
    per_query: Mapping[str, Mapping[str, float]],
    *,
    queries: Sequence[str] | None = None,
    alpha: float = 0.05,
    design: str = "two-way",
) -> list[TukeyComparison]:
    """Tukey's honestly significant difference for every pair of runs over the same topics.

    With m runs (systems) scored on the same n topics, x_ij the score of run i on topic j:

    - ``design="two-way"`` (the form IR uses: Carterette 2012; Sakai 2018 ch. 4): two-way ANOVA
      without replication, system x topic. Residuals e_ij = x_ij - xbar_i. - xbar_.j + xbar_..,
      MSE = sum e_ij^2 / ((m - 1)(n - 1)), with (m - 1)(n - 1) degrees of freedom. The topic
      effect (some topics are hard for every system) is taken out of the error, which is what
      makes the test paired.
    - ``design="one-way"``: one-way ANOVA, the topics ignored: MSE = sum (x_ij - xbar_i.)^2 /
      (m (n - 1)), m (n - 1) degrees of freedom. This is what ranx offers (its
      ``tukey_hsd_test`` calls statsmodels' ``pairwise_tukeyhsd`` on the runs' concatenated
      scores, in later versions ``scipy.stats.tukey_hsd(*scores)``: both one-way); it is
      unpaired and usually much less powerful on IR data, where topic variance dominates.

    For each pair q = |xbar_a - xbar_b| / sqrt(MSE / n) and p = P(Q >= q) for the studentized
    range Q of m means with those degrees of freedom (:func:`studentized_range_sf`). The p-value
    already controls the family-wise error rate over all m(m-1)/2 pairs: Tukey's HSD *is* the
    multiple comparison procedure, so no further correction applies. ``significant`` is
    p <= ``alpha``.

    Pairs are (runs[i], runs[j]) for i < j in the mapping's order, as :func:`compare_runs`;
    the query set follows the same rule (``queries``: those, missing values scoring 0;
    else every run must cover the same queries). MSE = 0 (no residual variation) gives p = 0
    for a non-zero difference and 1 for none. Returns ``[]`` for fewer than two runs; raises
    ``ValueError`` with fewer than two topics, an unknown design or ``alpha`` outside (0, 1).
    """
    if design not in TUKEY_DESIGNS:
        raise ValueError(f"unknown design {design!r}; expected one of {', '.join(TUKEY_DESIGNS)}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be strictly between 0 and 1, got {alpha}")
    runs, _, x = _query_matrix(per_query, queries)
    m, n = x.shape
    if m < 2:
        return []
    if n < 2:
        raise ValueError("Tukey's HSD needs at least two topics")
    means = x.mean(axis=1)
    if design == "two-way":
        resid = x - means[:, None] - x.mean(axis=0)[None, :] + x.mean()
        df = (m - 1) * (n - 1)
    else:
        resid = x - means[:, None]
        df = m * (n - 1)
    mse = float(np.sum(resid * resid)) / df
    iu, ju = np.triu_indices(m, k=1)
    diff = means[iu] - means[ju]
    if mse > 0.0:
        q = np.abs(diff) / math.sqrt(mse / n)
        p = studentized_range_sf(q, m, df)
    else:
        q = np.where(diff == 0.0, 0.0, np.inf)
        p = np.where(diff == 0.0, 1.0, 0.0)
    return [
        TukeyComparison(
            run_a=runs[i],
            run_b=runs[j],
            mean_a=float(means[i]),
            mean_b=float(means[j]),
            diff=float(dv),
            q=float(qv),
            p_value=float(pv),
            n=n,
            df=df,
            mse=mse,
            design=design,
            significant=bool(pv <= alpha),
        )
        for i, j, dv, qv, pv in zip(iu, ju, diff, q, p, strict=True)
    ]


def paired_resampling_matrix(
    values: npt.ArrayLike,
    *,
    test: str,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> npt.NDArray[np.float64]:
    """The two-sided p-value of :func:`paired_test` (``"randomization"`` or ``"bootstrap"``)
    for every pair i < j of rows of ``values`` (runs x queries), in ``np.triu_indices(m, 1)``
    order, in a few matrix products instead of one test per pair.

    With the same ``seed`` every pair of :func:`paired_test` draws the same resamples (the same
    sign flips, the same bootstrap indices): here they are drawn once and applied to all the
    pairs' differences at once (flips @ D, resample counts @ D), so each p equals the per-pair
    test's (checked on every pair in the tests) at a fraction of the cost: 780 pairs of 100
    topics in about a second instead of fifteen.
    """
    if test not in ("randomization", "bootstrap"):
        raise ValueError(f"test must be randomization or bootstrap, got {test!r}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"values must be two-dimensional (runs x queries), got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("values contain NaN or infinite values")
    m, n = x.shape
    if n == 0:
        raise ValueError("paired tests need at least one query")
    if n < 2 and test == "bootstrap":
        raise ValueError("the paired bootstrap test needs at least two pairs")
    iu, ju = np.triu_indices(m, k=1)
    d = x[iu] - x[ju]  # (pairs, n)
    pairs = d.shape[0]
    if pairs == 0:
        return np.empty(0, dtype=np.float64)
    observed = d.mean(axis=1)
    threshold = np.abs(observed) - 1e-10 * np.max(np.abs(d), axis=1)
    # pairs a block at a time: a block of resamples x pairs stays near 32 MB
    block = max(1, (1 << 22) // min(n_resamples, 1 << n if n < 63 else n_resamples))
    if test == "randomization" and n < 63 and 1 << n <= n_resamples:
        patterns = (np.arange(1 << n, dtype=np.int64)[:, None] >> np.arange(n)) & 1
        signs = (1 - 2 * patterns).astype(np.float64)
        hits = np.empty(pairs)
        for s in range(0, pairs, block):
            means = (signs @ d[s : s + block].T) / n
            hits[s : s + block] = np.count_nonzero(np.abs(means) >= threshold[s : s + block], 0)
        exact: npt.NDArray[np.float64] = np.minimum(1.0, hits / (1 << n))
        return exact
    counts = np.zeros(pairs)
    rows = max(1, _CHUNK_ELEMENTS // n)
    if test == "randomization":
        rng = np.random.default_rng(seed)
        total = d.sum(axis=1)
        for start in range(0, n_resamples, rows):
            stop = min(n_resamples, start + rows)
            raw = rng.integers(0, 256, size=(stop - start, (n + 7) // 8), dtype=np.uint8)
            flip = np.unpackbits(raw, axis=1, count=n).astype(np.float64)
            for s in range(0, pairs, block):
                means = (total[s : s + block] - 2.0 * (flip @ d[s : s + block].T)) / n
                counts[s : s + block] += np.count_nonzero(
                    np.abs(means) >= threshold[s : s + block], axis=0
                )
        sampled: npt.NDArray[np.float64] = np.minimum(1.0, (counts + 1) / (n_resamples + 1))
        return sampled
    centred = d - observed[:, None]
    if n_resamples <= rows:
        chunks = [_one_chunk_of_resamples(n, n_resamples, seed)]
    else:
        rng = np.random.default_rng(seed)
        chunks = [
            _resample_indices(rng, min(n_resamples, start + rows) - start, n)
            for start in range(0, n_resamples, rows)
        ]
    for idx in chunks:
        r = idx.shape[0]
        # how often each query is drawn in each resample: a resample's mean is counts @ d / n
        drawn = np.bincount(
            (np.arange(r, dtype=np.int64)[:, None] * n + idx.astype(np.int64)).ravel(),
            minlength=r * n,
        ).reshape(r, n)
        drawn_f = drawn.astype(np.float64)
        for s in range(0, pairs, block):
            means = (drawn_f @ centred[s : s + block].T) / n
            counts[s : s + block] += np.count_nonzero(
                np.abs(means) >= threshold[s : s + block], axis=0
            )
    boot: npt.NDArray[np.float64] = np.minimum(1.0, counts / n_resamples)
    return boot
