"""PPI's variance: the design's variance estimate of the linearised error, its model-based floor,
the power-tuning blend (PPI++), the degrees of freedom, and :class:`ArrayEstimate`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from scipy.stats import norm
from scipy.stats import t as student_t

from metrics.sampling.designs import _TAKE_ALL

if TYPE_CHECKING:
    from metrics.sampling.forms import F64, I64, Bool


__all__ = [
    "ArrayEstimate",
]


def _power(var1: F64, var0: F64, var_diff: F64, extra: F64 | None = None) -> F64:
    """(M,) the weight lam in [0, 1] of the judge-assisted estimate in lam e1 + (1 - lam) e0
    (e0 the judge-free one on the same sample) that minimises the estimated variance summed over
    runs, from the variances of e1, e0 and e1 - e0 (PPI++ power tuning, Angelopoulos, Duchi and
    Zrnic 2023): var(lam) = var0 + 2 lam (c - var0) + lam^2 var_diff, c = cov(e1, e0), plus
    lam ``extra`` (the blend's share of a variance term linear in lam: u1 - u0)."""
    cov10 = (var1 + var0 - var_diff) / 2.0
    lin = 0.0 if extra is None else extra / 2.0
    ok = var_diff > 1e-15 * np.maximum(var1 + var0, 1e-300)
    best = np.where(np.asarray(lin) > 0.0, 0.0, 1.0)  # e1 - e0 without variance: an end
    lam = np.where(ok, (var0 - cov10 - lin) / np.where(ok, var_diff, 1.0), best)
    return np.asarray(np.clip(lam, 0.0, 1.0), dtype=np.float64)


def _floored(design: F64, model: F64, full: bool) -> F64:
    """Each run's variance is the mean of the design and the model estimate; with ``full``
    the covariances keep the model's correlations (a PSD matrix, and differences between
    runs that share sampled items still cancel their common error). Both estimate the same
    variance about without bias, but they are noisy and weakly related: their larger
    overstated it (P@10 on TREC 2011 Medical under the Neyman and active designs: half-width
    2.50-2.65 spreads over 40 repetitions, where each alone averaged 0.93-1.05 of the squared
    spread), and the design estimate alone is near 0 when a thin stratum's rare relevant items
    were missed (covered 87.5% for Neyman at 20%). Their mean keeps half the model's variance
    there (96-97% at 2.17-2.27 spreads). A run the model gives no variance keeps the design's."""
    if not full:
        return np.asarray(np.where(model > 0, (design + model) / 2.0, design), dtype=np.float64)
    var = (np.diagonal(design, axis1=1, axis2=2) + np.diagonal(model, axis1=1, axis2=2)) / 2.0
    sd_model = np.sqrt(np.diagonal(model, axis1=1, axis2=2))
    ok = sd_model > 0
    scale = np.where(ok, np.sqrt(var) / np.where(ok, sd_model, 1.0), 0.0)
    out = model * scale[:, :, None] * scale[:, None, :]
    # runs the model gives no variance (nothing they rank is uncertain) keep the design's
    idx = np.arange(var.shape[1])
    out[:, idx, idx] = np.where(ok, out[:, idx, idx], np.diagonal(design, axis1=1, axis2=2))
    return np.asarray(out, dtype=np.float64)


def _design_terms(v: F64, p: F64, cols: I64, s: Bool, design: str, strata: I64 | None) -> F64:
    """(M, R, n) terms e of the estimated design variance of the HT totals of v, one per sampled
    item: var = sum_i e_i^2 and cov(a, b) = sum_i e_a,i e_b,i (0 for items with pi = 1).
    Uniform and stratified: e_i = sqrt(c_h) (v_i - mean of v in i's stratum), c_h = N_h^2 (1 -
    n_h/N_h) / (n_h (n_h - 1)); Poisson (active): e_i = v_i sqrt(1 - pi_i) / pi_i."""
    out = np.zeros_like(v)
    certain = p >= 1.0
    if design == "active":
        live = ~certain[cols]
        out[:, :, live] = v[:, :, live] * (np.sqrt(1.0 - p[cols][live]) / p[cols][live])
        return out
    if design == "uniform":
        label = np.where(certain, _TAKE_ALL, 0)
    else:
        if strata is None:
            raise ValueError("the stratified design needs the stratum of every item")
        if strata.shape != p.shape:
            raise ValueError("strata need one value per pool item")
        label = np.where(certain, _TAKE_ALL, strata)
    for h in np.unique(label):
        if h == _TAKE_ALL:
            continue
        in_h = label == h
        big_n = int(in_h.sum())
        sel = in_h[cols]
        n_h = int(sel.sum())
        pis = p[in_h]
        if not np.allclose(pis, n_h / big_n, rtol=1e-6, atol=1e-12):
            raise ValueError(
                f"stratum {int(h)}: pi must be n_h/N_h = {n_h}/{big_n} for every item "
                f"(sampling without replacement), got {float(pis.min()):.4g}.."
                f"{float(pis.max()):.4g}"
            )
        if n_h == big_n:
            continue
        if n_h < 2:
            raise ValueError(f"stratum {int(h)} has {n_h} sampled item: the variance needs two")
        c = big_n**2 * (1.0 - n_h / big_n) / (n_h * (n_h - 1))
        d = v[:, :, sel] - v[:, :, sel].mean(axis=2, keepdims=True)
        out[:, :, sel] = math.sqrt(c) * d
    return out


def _design_covariance(
    v: F64, p: F64, cols: I64, s: Bool, design: str, strata: I64 | None, full: bool
) -> F64:
    """(M, R, R) when ``full``, else (M, R): the estimated design (co)variance of the HT totals
    of v (:func:`_design_terms`). Items with pi = 1 add nothing."""
    e = _design_terms(v, p, cols, s, design, strata)
    if full:
        return np.stack([x @ x.T for x in e])
    return np.asarray((e**2).sum(axis=2), dtype=np.float64)


def _dof(e: F64) -> F64:
    """Degrees of freedom of a variance estimated as sum_i e_i^2 (last axis): 2 (sum e^2)^2 /
    (sum e^4 - (sum e^2)^2 / n), Satterthwaite's 2 E[var]^2 / Var[var] with the terms' own
    fourth moment. Normal terms give about n; one dominant term (a rare relevant item found
    once) about 2, and the interval takes Student's t at that many instead of z. At most
    n - 1 (simple random sampling's own count), at least 1; infinite where the variance is 0."""
    n = np.maximum((e != 0.0).sum(axis=-1), 1)
    s2 = (e**2).sum(axis=-1)
    s4 = (e**4).sum(axis=-1)
    spread = s4 - s2**2 / n
    even = spread <= 1e-12 * s2**2  # terms of one size: the count itself bounds it
    raw = 2.0 * s2**2 / np.where(even, 1.0, spread)
    df = np.where(s2 > 0, np.where(even, n - 1.0, np.minimum(raw, n - 1.0)), np.inf)
    return np.asarray(np.maximum(df, 1.0), dtype=np.float64)


@dataclass(frozen=True)
class ArrayEstimate:
    """Estimates as arrays: ``value`` and ``auto_value`` (runs, measures); ``cov`` (measures,
    runs, runs) when built with ``covariance=True``, else the variances (measures, runs)."""

    value: F64
    cov: F64
    auto_value: F64
    full: bool
    judge_weight: F64 | None = None  # (measures,) lam of the power-tuned blend (1: judge only)
    # thin topics: their ratio measures are the model-assisted form (too few relevant items
    # expected in their sample beyond the pilot, or predicted), resting on the calibration
    thin_topics: int = 0
    # (measures, runs) degrees of freedom of each variance (:func:`_dof`; inf: the normal)
    dof: F64 | None = None
    # (measures, runs, sampled items) the design variance's terms, for differences' dof
    terms: F64 | None = field(default=None, repr=False)

    @property
    def se(self) -> F64:
        var = np.diagonal(self.cov, axis1=1, axis2=2) if self.full else self.cov
        return np.asarray(np.sqrt(np.maximum(var, 0.0)).T, dtype=np.float64)  # (R, M)

    def quantile(self, level: float = 0.95) -> F64:
        """(R, M) the interval's multiplier of the se: Student's t at each variance's degrees of
        freedom (z where there are none to count)."""
        _z(level)
        if self.dof is None:
            return np.full(self.value.shape, _z(level))
        return np.asarray(student_t.ppf(0.5 + level / 2.0, self.dof.T), dtype=np.float64)

    def interval(self, level: float = 0.95) -> tuple[F64, F64]:
        q = self.quantile(level)
        se = self.se
        return np.clip(self.value - q * se, 0.0, 1.0), np.clip(self.value + q * se, 0.0, 1.0)

    def difference(self, a: int, b: int, m: int) -> tuple[float, float]:
        """(value, se) of run a minus run b on measure m."""
        value, se, _ = self.differences(np.array([a]), np.array([b]))
        return float(value[0, m]), float(se[0, m])

    def differences(self, ia: I64, ib: I64, level: float = 0.95) -> tuple[F64, F64, F64]:
        """Runs ia[j] minus ib[j] on every measure at once: (value, se, quantile), each
        (pairs, M); the quantile is Student's t at the difference's degrees of freedom (z where
        the model's floor set either run's variance)."""
        if not self.full:
            raise ValueError("differences need the estimate built with covariance=True")
        value = self.value[ia] - self.value[ib]
        var = np.stack(
            [c[ia, ia] + c[ib, ib] - 2.0 * c[ia, ib] for c in self.cov], axis=1
        )  # (pairs, M)
        z = _z(level)
        q = np.full(value.shape, z)
        if self.terms is not None and self.dof is not None:
            finite = np.isfinite(self.dof[:, ia]) & np.isfinite(self.dof[:, ib])  # (M, pairs)
            dof = np.where(finite, _dof(self.terms[:, ia] - self.terms[:, ib]), np.inf).T
            t = np.asarray(student_t.ppf(0.5 + level / 2.0, dof), dtype=np.float64)
            q = np.where(np.isinf(dof), z, t)
        return value, np.sqrt(np.maximum(var, 0.0)), q


def _z(level: float) -> float:
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    return float(norm.ppf(0.5 + level / 2.0))
