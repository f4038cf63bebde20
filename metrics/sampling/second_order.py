"""The second-order term of PPI's ratio measures: the interaction of the sampled residuals that
the first-order (linear) correction of :mod:`metrics.sampling.estimator` leaves out.

A ratio measure of a topic, theta = A / B (R@k = hits / R, AP = numerator / R, nDCG@k =
DCG / IDCG), is expanded about the point fixed by the pilot (its labels, the predictions p
elsewhere), Delta_i = f(y_i) - p_i:

    theta(y) = theta(p) + sum_i g_i Delta_i + 1/2 sum_{i != j} H_ij Delta_i Delta_j + ...,

    1/2 sum_{i != j} H_ij D_i D_j = sum_{i<j} A_ij D_i D_j / B - sum_{i != j} a_i b_j / B^2
                                   + A sum_{i != j} b_i b_j / B^3,

with a_i = dA/df_i Delta_i, b_i = dB/df_i Delta_i and A_ij the numerator's own pair
coefficient (AP: 1 / rank of the lower of two retrieved items; 0 for hits and DCG; IDCG is
piecewise linear in the counts). The diagonal (i = j) belongs to the model's expectation
(the estimate's m_q averages theta over the model's draws). The cross terms do not: a topic's
relevant items depart from the calibrated rates together (a topic richer than its predictions
has more relevant items both in a run's top k and in R), so the products Delta_i Delta_j do not
average to 0 as the model's independent draws assume, and the first-order estimate is low by
about their sum (-0.035 for AP on Robust 2003, uniform 10%, 0.9 of the estimate's spread).

The model-assisted estimate already holds the sampled items at their labels, hence the cross
terms among them; the rest of the sum over pairs of items not judged with certainty is
estimated by Horvitz-Thompson over pairs, 1/2 sum_{i != j in S} H_ij r_i r_j (1/pi_ij - 1),
with pi_ij = pi_i pi_j (Poisson sampling; for sampling without replacement the exact
pi_ij differs by a factor (n - 1) N / (n (N - 1)), within 1/n of it). Every sum factorises per
topic: sum_{i != j} x_i y_j (W_i W_j - 1) = (S[xW] S[yW] - S[xyW^2]) - (S[x] S[y] - S[xy]),
W = 1/pi, S the topic's sum; AP's ordered pairs are a cumulative sum down each ranking.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from metrics.sampling.forms import LINEAR_KINDS, _discount_slope, _f64
from metrics.sampling.gradients import ap_numerator_gradient

if TYPE_CHECKING:
    from metrics.sampling.forms import F64, I64, Bool, PoolView, _Point


def _cross(x: F64, y: F64, w: F64, q: I64, n_q: int, diag: Bool) -> F64:
    """(R, Q) sum over ordered pairs i != j of a topic of x_i y_j (w_i w_j - 1), plus on the
    topics ``diag`` the terms i = j, x_i y_i (w_i - 1); x and y are (R, n) or (n,) over the
    sampled items, ``q`` their topics."""
    xr, yr = np.atleast_2d(x), np.atleast_2d(y)
    n_r = max(xr.shape[0], yr.shape[0])
    xr = np.broadcast_to(xr, (n_r, q.size))
    yr = np.broadcast_to(yr, (n_r, q.size))

    def s(z: F64) -> F64:
        return np.stack([np.bincount(q, row, minlength=n_q) for row in z])

    weighted = s(xr * w) * s(yr * w) - s(xr * yr * w**2)
    plain = s(xr) * s(yr) - s(xr * yr)
    own = s(xr * yr * (w - 1.0)) * diag[None, :]
    return np.asarray(weighted - plain + own, dtype=np.float64)


def _ap_pairs(ps: PoolView, cols: I64, r: F64, w: F64) -> tuple[F64, F64]:
    """AP's pair coefficients over the sampled items ``cols`` (1 / rank of the lower of two
    retrieved items): (R, Q) the sum over pairs, j ranked above i, of r_i r_j (w_i w_j - 1) /
    rank_i, and (R, n) for each item i the sum over the others of its pair coefficient times
    r_j w_j (0 where the run did not retrieve i)."""
    pos = np.full(ps.n_items, -1, dtype=np.int64)
    pos[cols] = np.arange(cols.size)
    at = pos[ps._e_item]
    hit = at >= 0
    re = np.where(hit, r[np.maximum(at, 0)], 0.0)
    we = np.where(hit, w[np.maximum(at, 0)], 0.0)
    cell = ps._e_cell
    n_r, n_q = len(ps.run_names), len(ps.topics)

    def before(z: F64) -> F64:  # the sum of z over the entries above, within the cell
        c = np.cumsum(z)
        return np.asarray(c - z - (c - z)[ps._e_start], dtype=np.float64)

    term = re / ps._e_rank * (we * before(re * we) - before(re))
    total = _f64(np.bincount(cell, term, minlength=n_r * n_q).reshape(n_r, n_q))
    below_w = re * we / ps._e_rank
    after = np.bincount(cell, below_w, minlength=n_r * n_q)[cell] - before(below_w) - below_w
    per_item = np.zeros((n_r, cols.size))
    per_item[ps._e_run[hit], at[hit]] = (before(re * we) / ps._e_rank + after)[hit]
    return total, per_item


def ideal_curvature(count: F64, spread: F64, k: int) -> F64:
    """The expected second derivative of D(min(C, k)) (:func:`~metrics.sampling.forms.
    _discount_sum`, the ideal DCG of one grade level) for a count C ~ normal(``count``,
    ``spread``^2): D is piecewise linear, its slope falling by 1/log2(j+1) - 1/log2(j+2) at
    each integer j < k and by 1/log2(k+1) at k, so its curvature is the sum of those falls
    weighted by the density of C there. Same shape as ``count``."""
    j = np.arange(1, k + 1, dtype=np.float64)
    slope = 1.0 / np.log2(j + 1.0)
    fall = slope - np.append(slope[1:], 0.0)  # (k,) the slope's fall at j = 1..k
    z = (j[None, :] - count.reshape(-1, 1)) / spread.reshape(-1, 1)
    dens = np.exp(-0.5 * z**2) / (np.sqrt(2.0 * np.pi) * spread.reshape(-1, 1))
    return np.asarray(-(dens * fall[None, :]).sum(axis=1).reshape(count.shape), dtype=np.float64)


def second_order(
    ps: PoolView,
    points: list[_Point],
    aux: dict[str, Any],
    cols: I64,
    resid: F64,
    w: F64,
    count_var: F64,
    diag: Bool,
) -> tuple[F64, F64]:
    """Each topic's second-order correction (module docstring) and the gradients' shift.

    At the fixed point (``points``, ``aux``: :func:`~metrics.sampling.gradients.measure_cells`
    there with ``at_point=True``), from the sampled items ``cols``, their residuals ``resid``
    (G, n) from the point (0 for those judged with certainty) and weights ``w`` = 1/pi:
    (M, R, Q) the correction per topic, and (G, M, R, n) per item and functional h the
    shift sum_{j != i in S} H_(i,h),j r_j w_j of its gradient (the quadratic term's own
    first-order part, for the variance: the gradient moved to the estimated point, without
    dividing by an estimated denominator). Both in per-topic units. P@k and the linear measures
    (kind L) are linear: 0."""
    n_g = resid.shape[0]
    n_q = len(ps.topics)
    q = ps.topic_of[cols]
    rk = ps.rank[:, cols]
    thr = ps.threshold - 1
    rel = resid[thr]
    n_r = len(ps.run_names)
    out = np.zeros((len(points), n_r, n_q))
    shift = np.zeros((n_g, len(points), n_r, cols.size))
    for m, ((kind, k), pt) in enumerate(zip(ps._parsed, points, strict=True)):
        if kind in LINEAR_KINDS:
            continue
        den = np.broadcast_to(pt.denom, pt.cell.shape)
        ok = den > 1e-9
        big_b = np.where(ok, den, 1.0)
        big_a = pt.cell * big_b
        pairs = np.zeros_like(big_b)
        pair_item = np.zeros((n_r, cols.size))
        pair_h = np.zeros((n_g, n_r, cols.size))
        da = np.zeros((n_g, n_r, cols.size))
        db = np.zeros((n_g, n_r, cols.size))
        if kind == "R":
            da[thr] = (rk >= 1) & (rk <= k)
            db[thr] = 1.0
        elif kind == "AP":
            da[thr] = ap_numerator_gradient(ps, aux, cols)
            db[thr] = 1.0
            pairs, pair_item = _ap_pairs(ps, cols, rel, w)
        else:  # nDCG@k: gain = sum of the functionals, IDCG's slope per functional
            da[:] = np.where((rk >= 1) & (rk <= k), 1.0 / np.log2(np.maximum(rk, 1) + 1.0), 0.0)
            db[:] = _discount_slope(aux["C"][:, q], k)[:, None, :]
            # IDCG's own curvature in each count: kappa_h sum_{i != j} r_h,i r_h,j
            kappa = ideal_curvature(aux["C"], np.sqrt(count_var + 0.25), k)  # (G, Q)
            curv = sum(
                kappa[h] * _cross(resid[h], resid[h], w, q, n_q, diag)[0] for h in range(n_g)
            )
            pairs = -big_a / big_b * curv / 2.0
            r_w = np.stack([np.bincount(q, resid[h] * w, minlength=n_q) for h in range(n_g)])
            others = r_w[:, q] - resid * w  # (G, n)
            pair_h = -(big_a[:, q][None] / big_b[:, q][None]) * (kappa[:, q] * others)[:, None, :]
        a = (da * resid[:, None, :]).sum(axis=0)  # (R, n)
        b = (db * resid[:, None, :]).sum(axis=0)
        corr = (
            pairs / big_b
            - _cross(a, b, w, q, n_q, diag) / big_b**2
            + big_a * _cross(b, b, w, q, n_q, diag) / big_b**3
        )
        out[m] = np.where(ok, corr, 0.0)
        # the others' weighted residuals in the item's topic
        sa = np.stack([np.bincount(q, row * w, minlength=n_q) for row in a])[:, q] - a * w
        sb = np.stack([np.bincount(q, row * w, minlength=n_q) for row in b])[:, q] - b * w
        bi, ai, oki = big_b[:, q], big_a[:, q], ok[:, q]
        for h in range(n_g):
            g = (
                (pair_h[h] if kind == "nDCG" else pair_item if h == thr else 0.0) / bi
                - (da[h] * sb + db[h] * sa) / bi**2
                + 2.0 * ai * db[h] * sb / bi**3
            )
            shift[h, m] = np.where(oki, g, 0.0)
    return out, shift
