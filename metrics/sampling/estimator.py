"""Estimating run measures from a sample: the corrected cells of every topic (plug-in or
model-assisted), the variance passes, and the power-tuned blend (:func:`estimate`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from metrics.sampling.calibration import _calibrated, _predictor
from metrics.sampling.designs import DESIGNS
from metrics.sampling.forms import LINEAR_KINDS, PoolView, _f64, functionals
from metrics.sampling.gradients import measure_cells, point_gradients
from metrics.sampling.second_order import second_order
from metrics.sampling.topic_point import topic_point
from metrics.sampling.variance import (
    ArrayEstimate,
    _design_covariance,
    _design_terms,
    _dof,
    _floored,
    _power,
)

if TYPE_CHECKING:
    from metrics.sampling.forms import F64, I64, Bool


# a topic is thin when its sample outside the pilot is expected to hold fewer relevant items
# than this: every topic is linearised at its point, but a thin topic's measure there is its
# mean over the model's draws (its items not sampled drawn from their rates), not the measure
# at the fractional rates, and its ratio measures count the draws' spread as variance
_RICH = 1.0


# ... and so is a topic whose point holds fewer relevant items than this: the Jensen gap of a
# per-topic ratio (E[h / R] against E[h] / E[R], and the topic that holds none and scores 0)
# grows as 1/R, which the expansion's terms do not reach; on Cranfield (about 3 relevant items
# a topic) R@10 was 0.04-0.08 low without the draws at 30-50% budgets
_SMALL_TOPIC = 8.0


# the draws of the calibrated model a linearised topic's expected measure is averaged over
_DRAWS = 32


_DRAWS_SEED = 20240517


def model_covariance(
    ps: PoolView,
    grads: F64,
    live: Bool,
    Fy: F64,
    Fp: F64,
    cols: I64,
    p: F64,
    cells: I64,
    full: bool,
    shift: F64 | None = None,
    point: F64 | None = None,
) -> F64:
    """The model-based (co)variance of the estimate: the design's variance of the HT total
    of v_i = g_i . (f(y_i) - p_i) with the realised squared residuals replaced by their
    expectation in the item's calibration cell c. That is the Horvitz-Thompson estimate
    sum over the sampled items not judged with certainty (``live``) of (1 - pi_i) / pi_i^2
    g_i' Sigma_c(i) g_i (for SRSWOR within a stratum, N_h^2 (1 - f_h) / n_h times the
    stratum's mean), with g_i = ``grads`` (G, M, R, n over ``cols``) the gradient of each
    run's measure in item i's label functionals and Sigma_c the residual covariance in cell
    c (``cells``: an integer per pool item): the sampled residuals' second moments plus 2
    pseudo-observations of the predictions' own Bernoulli covariance, the rates floored at
    1/(n_c + 2) away from 0 and 1. Same shape as :func:`_design_covariance`. It stays
    positive when no sampled item of a thin stratum was relevant, which is when the design
    estimate is smallest. ``shift`` (M, R, n): a part of v_i fixed in the item's cell (a
    power-tuned estimate's judge-free share, :meth:`estimate`), whose square adds to the
    expectation. ``point`` (G, N): the point the residuals are taken from (each topic's,
    :func:`~metrics.sampling.topic_point.topic_point`), ``Fp`` when not given."""
    n_g, n_m, n_r = grads.shape[:3]
    out = np.zeros((n_m, n_r, n_r)) if full else np.zeros((n_m, n_r))
    items = cols[live]
    if items.size == 0:
        return out
    uc, inv = np.unique(cells, return_inverse=True)
    n_c = np.bincount(inv[items], minlength=uc.size).astype(np.float64)
    r = Fy[:, items] - (Fp if point is None else point)[:, items]
    first = np.zeros(uc.size, dtype=np.int64)
    first[inv[::-1]] = np.arange(inv.size)[::-1]
    lo = (1.0 / (n_c + 2.0))[:, None]
    rate = np.clip(Fp[:, first].T, lo, 1.0 - lo)  # (cells, G)
    sigma = np.empty((uc.size, n_g, n_g))
    for h in range(n_g):
        for k in range(n_g):
            moment = np.bincount(inv[items], r[h] * r[k], minlength=uc.size)
            prior = rate[:, max(h, k)] - rate[:, h] * rate[:, k]  # nested [y >= h]
            sigma[:, h, k] = (moment + 2.0 * prior) / (n_c + 2.0)
    # Sigma = L L': sum_h,k g_h Sigma_hk g_k = sum_j (sum_h g_h L_hj)^2
    # over every sampled item: those judged with certainty have weight (1 - 1) / 1 = 0
    li = np.linalg.cholesky(sigma + 1e-12 * np.eye(n_g)[None])[inv[cols]]  # (n, G, G)
    root = np.sqrt((1.0 - p[cols]) / p[cols] ** 2)

    def add(u: F64) -> None:  # out += sum over items of u u' (per measure)
        if full:
            for m in range(n_m):
                out[m] += u[m] @ u[m].T
        else:
            out[...] += (u**2).sum(axis=2)

    for j in range(n_g):
        u = grads[j] * (li[:, j, j] * root)
        for h in range(j + 1, n_g):  # L is lower triangular: L_hj = 0 for h < j
            u += grads[h] * (li[:, h, j] * root)
        add(u)
    if shift is not None:
        add(shift * root)
    return out


def expected_cells(ps: PoolView, Fp: F64, Fy: F64, cols: I64, topics: Bool) -> tuple[F64, F64]:
    """What :meth:`metrics.sampling.structure.PoolStructure._expected_cells` returns."""
    sub, keep = ps._part(topics)
    labelled = np.zeros(ps.n_items, dtype=bool)
    labelled[cols] = True
    fixed = labelled[keep]
    base = np.where(fixed[None, :], Fy[:, keep], 0.0)
    rate = Fp[:, keep][:, ~fixed]
    rng = np.random.default_rng(_DRAWS_SEED)
    n_m, n_r = len(ps.measures), len(ps.run_names)
    # predictions of exactly 0 or 1 (an uncalibrated judge, or one the pilot never faulted)
    # draw the same labels every time: one draw is the expectation, exactly
    draws = 1 if np.all((rate == 0.0) | (rate == 1.0)) else _DRAWS
    cells = np.zeros((draws, n_m, n_r, len(sub.topics)))
    for k in range(draws):
        u = rng.random(size=(rate.shape[1],))
        draw = base.copy()
        draw[:, ~fixed] = (u[None, :] < rate).astype(np.float64)
        cells[k] = np.stack([pt.cell for pt in measure_cells(sub, draw, at_point=True)[0]])
    out = np.zeros((n_m, n_r, len(ps.topics)))
    out[:, :, np.flatnonzero(topics)] = cells.mean(axis=0)
    # the spread of the topics' measures over the draws: what their items not judged leave
    # unknown under the model, summed over topics (the macro mean's 1/Q^2), (M, R, R)
    spread = np.zeros((n_m, n_r, n_r))
    if draws > 1:
        dev = cells - cells.mean(axis=0, keepdims=True)
        scale = (draws - 1) * len(ps.topics) ** 2
        for m in range(n_m):  # one matrix product per measure (BLAS), over draws x topics
            d = dev[:, m].transpose(1, 0, 2).reshape(n_r, -1)
            spread[m] = d @ d.T / scale
    return out, spread


def estimate_pass(
    ps: PoolView, Fp: F64, Fy: F64, p: F64, cols: I64, certain: I64, depth: int
) -> tuple[F64, F64, F64, int, F64, F64]:
    """One estimate with predictions ``Fp`` (G, N): the values (R, M), the per-item
    linearised errors v (M, R, n) over the sampled items ``cols``, their gradients
    (G, M, R, n), v = sum_h grads_h (f_h(y) - point_h), how many topics were thin (their
    measure the mean over the model's draws, with items not judged with certainty), and the
    model's covariance (M, R, R) of the thin topics' ratio measures over their items not
    judged, and the point (G, N) it was linearised at: the pilot's labels, elsewhere ``Fp``
    moved per topic towards the sample (:func:`~metrics.sampling.topic_point.topic_point`)."""
    n_q = len(ps.topics)
    live = p[cols] < 1.0
    # every topic is linearised at its point (the pilot's labels, the predictions elsewhere,
    # moved by the topic's shrunk shift towards its sample); its measure there with the
    # sampled labels in (the thin topics: its mean over the model's draws), plus the sampled
    # residuals' first- and second-order terms
    point = Fp.copy()
    point[:, certain] = Fy[:, certain]
    r0 = np.where(live, Fy[:, cols] - point[:, cols], 0.0)[ps.threshold - 1]
    moved = topic_point(ps, point, Fy, p, cols)
    point = Fp = moved.point
    pts0, aux0 = measure_cells(ps, point, at_point=True)
    grads = point_gradients(ps, pts0, aux0, cols, depth)
    resid = np.where(live, Fy[:, cols] - point[:, cols], 0.0)
    w = 1.0 / p[cols]
    rel_p = Fp[ps.threshold - 1]
    expected = np.bincount(ps.topic_of, np.where(p < 1.0, p * rel_p, 0.0), minlength=n_q)
    predicted = np.bincount(ps.topic_of, rel_p, minlength=n_q)
    poor = (expected < _RICH) | (predicted < _SMALL_TOPIC)
    labelled = point.copy()
    labelled[:, cols] = Fy[:, cols]
    cells = np.stack([pt.cell for pt in measure_cells(ps, labelled, at_point=True)[0]])
    spread = np.zeros((len(ps.measures), len(ps.run_names), len(ps.run_names)))
    # a linear measure of arbitrary items (kind L) is its own expectation at the point: the
    # model's draws would only add their Monte Carlo noise
    drawn = np.array([kind != "L" for kind, _ in ps._parsed])
    if poor.any() and drawn.any():
        exp_cells, spread = expected_cells(ps, Fp, Fy, cols, poor)
        cells = np.where(poor[None, None, :] & drawn[:, None, None], exp_cells, cells)
    unknown_p = np.where((point > 0.0) & (point < 1.0), point * (1.0 - point), 0.0)
    count_var = _f64(np.stack([np.bincount(ps.topic_of, u, minlength=n_q) for u in unknown_p]))
    quad, shift = second_order(ps, pts0, aux0, cols, resid, w, count_var, ~poor)
    v = grads[0] * resid[0]  # (M, R, n), holding the 1/n_q of the macro average
    for h in range(1, depth):
        v += grads[h] * resid[h]
    q_cols = ps.topic_of[cols]
    first = np.stack(
        [
            np.stack(
                [np.bincount(q_cols, v[m, r] * (w - 1.0), minlength=n_q) for r in range(v.shape[1])]
            )
            for m in range(v.shape[0])
        ]
    )  # (M, R, Q)
    # the point moved with the sample: each sampled item pulled its topic's point towards its
    # own label, so its residual from the point is too small (a regression estimator's O(1/n)
    # bias), by about (1 - B_q) times the covariance of the topic's shift D_q (residuals r0
    # from the calibrated predictions) with the HT total of g_i slope_i: its HT estimate
    gu = (grads * moved.slope[:, None, None, cols]).sum(axis=0)  # (M, R, n)
    own = gu * (r0 * (1.0 - p[cols]) * w**2)
    pulled = np.stack(
        [
            np.stack([np.bincount(q_cols, own[m, r], minlength=n_q) for r in range(own.shape[1])])
            for m in range(own.shape[0])
        ]
    )
    cells = cells + (first + pulled * (1.0 - moved.keep)) * n_q + quad
    value = cells.mean(axis=2).T  # (R, M)
    ratio = np.array([kind not in LINEAR_KINDS for kind, _ in ps._parsed])
    value[:, ratio] = np.clip(value[:, ratio], 0.0, 1.0)
    # the variance reads the gradient moved to the estimated point (the second-order term's
    # own first-order part), and v along it
    grads = grads + shift / n_q
    v = grads[0] * resid[0]
    for h in range(1, depth):
        v += grads[h] * resid[h]
    # ... and the pulled term's own sampling error: an HT total like the first-order term
    v = v + own * ((1.0 - moved.keep[q_cols]) * p[cols])
    # the ratio measures' thin topics: what the model leaves unknown about their items not
    # judged, which the linear correction cannot see (a ratio is constant along every ray
    # to 0, so a topic with no relevant item at all moves no gradient). P@k is linear: the
    # design variance has all of it
    unknown = np.zeros((len(ps.measures), len(ps.run_names), len(ps.run_names)))
    unknown[ratio] = spread[ratio]
    # a topic judged with certainty throughout is its own point: nothing is left out there
    uncertain = np.bincount(ps.topic_of, p < 1.0, minlength=n_q) > 0
    thin = int((poor & uncertain).sum()) if drawn.any() else 0
    return value, v, grads, thin, unknown, Fp


def estimate(
    ps: PoolView,
    auto: Sequence[int] | I64,
    human: Sequence[int] | I64,
    sampled: Sequence[bool] | Bool,
    pi: Sequence[float] | F64,
    *,
    design: str,
    strata: Sequence[int] | I64 | None = None,
    covariance: bool = False,
    calibrate: bool = True,
    groups: Sequence[int] | I64 | None = None,
    auto_value: bool = True,
    variance_floor: bool = True,
    power: bool = True,
    score: Sequence[float] | F64 | None = None,
) -> ArrayEstimate:
    """What :meth:`metrics.sampling.structure.PoolStructure.estimate` returns."""
    if design not in DESIGNS:
        raise ValueError(f"unknown design {design!r}: expected one of {', '.join(DESIGNS)}")
    a = np.asarray(auto, dtype=np.int64)
    s = np.asarray(sampled, dtype=bool)
    y = np.where(s, np.asarray(human, dtype=np.int64), 0)
    p = np.asarray(pi, dtype=np.float64)
    ps._check_grades(a, "auto")
    ps._check_grades(y, "human")
    if s.shape != (ps.n_items,) or p.shape != (ps.n_items,):
        raise ValueError(f"sampled and pi need one value per pool item ({ps.n_items})")
    if not np.all((p > 0) & (p <= 1)):
        raise ValueError("every inclusion probability must be in (0, 1]")
    if not s.any():
        raise ValueError("the human sample is empty")
    depth = max(ps.threshold, int(a.max(initial=0)), int(y.max(initial=0)))
    Fa = functionals(a, depth)
    Fy = functionals(y, depth)
    cols = np.flatnonzero(s)
    certain = cols[p[cols] >= 1.0]
    live = p[cols] < 1.0
    g_arr = None if groups is None else np.asarray(groups, dtype=np.int64)
    calibrated = calibrate and certain.size > 0
    Fp = _predictor(a, Fa, Fy, certain, g_arr, score) if calibrated else Fa
    value, v, grads, thin, unknown, Fp1 = estimate_pass(ps, Fp, Fy, p, cols, certain, depth)
    # power tuning: the same estimate with the judge-free predictor (the pilot's rate per
    # group, what the human sample alone gives), and the weighted average of the two whose
    # estimated variance is least, per measure
    lam = np.ones(len(ps.measures))
    shift = None
    st = None if strata is None else np.asarray(strata, dtype=np.int64)
    if power and calibrated:
        F0 = _calibrated(np.zeros_like(a), np.zeros_like(Fa), Fy, certain, g_arr)
        if not np.array_equal(F0, Fp):
            value0, v0, grads0, thin0, unknown0, F01 = estimate_pass(
                ps, F0, Fy, p, cols, certain, depth
            )
            thin = max(thin, thin0)
            var1 = _design_covariance(v, p, cols, s, design, st, False).sum(axis=1)
            var0 = _design_covariance(v0, p, cols, s, design, st, False).sum(axis=1)
            vard = _design_covariance(v - v0, p, cols, s, design, st, False).sum(axis=1)
            extra = (
                np.diagonal(unknown, axis1=1, axis2=2) - np.diagonal(unknown0, axis1=1, axis2=2)
            ).sum(axis=1)
            lam = _power(var1, var0, vard, extra)
            w = lam[:, None, None]
            value = value * lam[None, :] + value0 * (1.0 - lam[None, :])
            v = v * w + v0 * (1.0 - w)
            grads = grads * w[None] + grads0 * (1.0 - w[None])
            # v = grads . (y - p) + (1 - lam) grads0 . (p - p0): the judge-free predictor's
            # offset from the calibrated one, constant in each calibration cell
            off = Fp1[:, cols] - F01[:, cols]
            shift = (1.0 - w) * np.einsum("gmrn,gn->mrn", grads0, off)
            # the blend's share of what the model leaves unknown: at most the weighted
            # average of the two (the variance of a blend is convex in its weight)
            unknown = unknown * w + unknown0 * (1.0 - w)
    terms = _design_terms(v, p, cols, s, design, st)
    design_var = (terms**2).sum(axis=2)  # (M, R)
    cov = np.stack([x @ x.T for x in terms]) if covariance else design_var
    # the design estimate of the variance rests on the sampled residuals only: where a
    # stratum's rare relevant items were missed it is near 0 exactly when the estimate is
    # most wrong. Average it with the model-based variance (_model_covariance, _floored).
    if variance_floor:
        if g_arr is None or not calibrate:
            cell_of = a
        else:  # the calibration's cells: (automatic grade, group), as one integer
            span = int(g_arr.max()) - int(g_arr.min()) + 1
            cell_of = a * span + (g_arr - int(g_arr.min()))
        cm = model_covariance(
            ps, grads, live, Fy, Fp, cols, p, cell_of, covariance, shift, point=Fp1
        )
        # P@k and the linear measures only: the ratio measures' model variance, independent
        # items at the calibrated (or moved) rates, was 1.3-1.5 times their estimates' variance
        # under the uniform design and 2-3 times under the active one on Robust 2003 (P@10:
        # 0.99-1.05), where their design variance was 0.8-1.3 times it; their thin topics have
        # the model's spread below
        linear = np.array([kind in LINEAR_KINDS for kind, _ in ps._parsed])
        floored = _floored(cov, cm, covariance)
        cov = np.where(linear[:, None, None] if covariance else linear[:, None], floored, cov)
    # Student's t at the design variance's degrees of freedom; z where the model's estimate
    # raised the variance instead (it does not rest on the few sampled residuals)
    var = np.diagonal(cov, axis1=1, axis2=2) if covariance else cov
    dof = np.where(design_var >= var * (1.0 - 1e-12), _dof(terms), np.inf)
    # the thin topics' ratio measures: what the model leaves unknown, beside the sampling
    # error (R@10 on Cranfield, uniform at 10%: covered 92.0% without, 94.2% with it)
    cov = cov + (unknown if covariance else np.diagonal(unknown, axis1=1, axis2=2))
    auto_only = np.full_like(value, np.nan)
    if auto_value:  # the measures under the automatic labels alone
        auto_only = _f64(
            np.stack([pt.cell.mean(axis=1) for pt in measure_cells(ps, Fa)[0]], axis=1)
        )
    return ArrayEstimate(
        value, cov, auto_only, covariance, lam, thin, dof, terms if covariance else None
    )
