"""The calibrated predictor of PPI: p_i = E[f(y) | a_i] estimated from the items judged with
certainty (per automatic grade and group, shrunk to coarser rates), or a ridge-penalised
logistic fit on the judge's raw score."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from metrics.sampling.forms import PoolView, functionals

if TYPE_CHECKING:
    from metrics.sampling.forms import F64, I64


def _calibrated(a: I64, Fa: F64, Fy: F64, certain: I64, groups: I64 | None = None) -> F64:
    """(G, N) predictions E[f_h(y) | a] estimated on the items judged with certainty:
    (sum of f_h(y) over those with the same automatic grade + m * f_h(a)) / (their count + m),
    m = 1: the automatic label counts as one pseudo-observation, so a grade the pilot did not see
    keeps the judge's own label, and a judge that agrees with every pilot label keeps exactly
    its labels (a perfect judge then gives the full-judgment value with width 0). With
    ``groups``, the same again per (grade, group), shrunk (m = 1) to the grade's rate."""
    levels, first, where = np.unique(a, return_index=True, return_inverse=True)
    pred = np.empty((Fa.shape[0], levels.size))
    for j, g in enumerate(levels):
        here = certain[a[certain] == g]
        pred[:, j] = (Fy[:, here].sum(axis=1) + Fa[:, first[j]]) / (here.size + 1.0)
    out = pred[:, where]
    if groups is not None:
        if groups.shape != a.shape:
            raise ValueError("groups need one value per pool item")
        for g in levels:
            for c in np.unique(groups[a == g]):
                cell = (a == g) & (groups == c)
                here = certain[cell[certain]]
                base = out[:, np.flatnonzero(cell)[0]]
                out[:, cell] = ((Fy[:, here].sum(axis=1) + base) / (here.size + 1.0))[:, None]
    return np.asarray(out, dtype=np.float64)


def _mean_influence(g: F64) -> F64:
    """(N,) from gradients (M, R, N): per measure the sum over runs of |g|, scaled to mean 1,
    then the mean over measures."""
    v = np.abs(g).sum(axis=1)
    scale = v.mean(axis=1, keepdims=True)
    v = v / np.where(scale > 0, scale, 1.0)
    return np.asarray(v.mean(axis=0), dtype=np.float64)


def _predictor(
    a: I64,
    Fa: F64,
    Fy: F64,
    certain: I64,
    groups: I64 | None,
    score: Sequence[float] | F64 | None,
) -> F64:
    """The calibrated predictor: on the judge's raw scores when given
    (:func:`_calibrated_scores`), else per grade and group (:func:`_calibrated`). The estimate
    and the active design's weights both take it from here, so they never disagree."""
    if score is not None:
        return _calibrated_scores(a, np.asarray(score, dtype=np.float64), Fy, certain, groups)
    return _calibrated(a, Fa, Fy, certain, groups)


_SCORE_RIDGE = 1.0  # the penalty on every coefficient but the intercept (standardised features)


_SCORE_STEPS = 25  # Newton steps of the penalised logistic fit (it converges in under 10)


def _calibrated_scores(a: I64, score: F64, Fy: F64, certain: I64, groups: I64 | None = None) -> F64:
    """(G, N) predictions E[f_h(y) | score, a, group] from the judge's raw score, fitted on
    the items judged with certainty: for each grade level h, a ridge-penalised logistic
    regression of f_h(y) on the standardised score, one indicator per automatic grade and one
    per group (the first of each left out), the intercept unpenalised. A grade turns a score
    into a few levels and throws away where in its band the score fell; on Cranfield the
    embedding judge's score ranks relevant items above others better than its grade does
    (AUC 0.71 against 0.60), and a cell per (grade, group) would spread the pilot thin. The
    predictions are monotone in h (f_h(y) <= f_{h-1}(y)); given the pilot they are fixed, so
    the correction stays unbiased as with :func:`_calibrated`."""
    if score.shape != a.shape or not np.all(np.isfinite(score)):
        raise ValueError("scores need one finite value per pool item")
    mu, sd = float(score[certain].mean()), float(score[certain].std())
    cols = [(score - mu) / (sd if sd > 0 else 1.0)]
    for codes in (a, groups):
        if codes is None:
            continue
        for c in np.unique(codes)[1:]:
            ind = (codes == c).astype(np.float64)
            cols.append((ind - ind[certain].mean()) / max(float(ind[certain].std()), 0.5))
    X = np.column_stack([np.ones(a.size), *cols])
    Xc = X[certain]
    pen = np.full(X.shape[1], _SCORE_RIDGE)
    pen[0] = 0.0
    out = np.empty((Fy.shape[0], a.size))
    for h in range(Fy.shape[0]):
        t = Fy[h, certain]
        rate = (t.sum() + 0.5) / (t.size + 1.0)  # start at the (smoothed) base rate
        beta = np.zeros(X.shape[1])
        beta[0] = math.log(rate / (1.0 - rate))
        for _ in range(_SCORE_STEPS):
            mu_i = 1.0 / (1.0 + np.exp(-(Xc @ beta)))
            grad = Xc.T @ (t - mu_i) - pen * beta
            hess = (Xc * (mu_i * (1.0 - mu_i))[:, None]).T @ Xc + np.diag(pen + 1e-9)
            step = np.linalg.solve(hess, grad)
            beta += step
            if np.max(np.abs(step)) < 1e-10:
                break
        out[h] = 1.0 / (1.0 + np.exp(-(X @ beta)))
    return np.asarray(np.minimum.accumulate(out, axis=0), dtype=np.float64)


def pilot_predictions(
    ps: PoolView,
    auto: Sequence[int] | I64,
    pilot: Sequence[int] | I64 | None,
    pilot_grades: Sequence[int] | I64 | None,
    groups: Sequence[int] | I64 | None,
    score: Sequence[float] | F64 | None,
) -> tuple[F64, int]:
    """(G, N) the automatic labels' functionals, or with a ``pilot`` the predictions the
    estimate will calibrate from its human grades; and the grade depth G."""
    a = np.asarray(auto, dtype=np.int64)
    ps._check_grades(a, "auto")
    depth = max(ps.threshold, int(a.max(initial=0)))
    F = functionals(a, depth)
    if pilot is None:
        return F, depth
    idx = np.asarray(pilot, dtype=np.int64)
    if pilot_grades is None or len(pilot_grades) != idx.size:
        raise ValueError("the pilot's items need their human grades (pilot_grades)")
    y = np.zeros(ps.n_items, dtype=np.int64)
    y[idx] = np.asarray(pilot_grades, dtype=np.int64)
    ps._check_grades(y, "pilot_grades")
    depth = max(depth, int(y.max(initial=0)))
    F = functionals(a, depth)
    Fy = functionals(y, depth)
    if idx.size:
        g_arr = None if groups is None else np.asarray(groups, dtype=np.int64)
        F = _predictor(a, F, Fy, idx, g_arr, score)
    return F, depth
