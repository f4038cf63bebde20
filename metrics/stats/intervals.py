"""Confidence intervals of a mean over queries: the bootstrap percentile interval and the
t interval.

scipy (about 0.6 s of imports) is imported by :func:`t_ci` when it is called, not here: the
bootstrap interval that ``python -m metrics evaluate`` computes by default is numpy only.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["bootstrap_ci", "t_ci"]

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
