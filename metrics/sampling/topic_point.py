"""The expansion point of each topic, moved towards its sample: an empirical-Bayes shift of
the calibrated predictions per topic.

The calibration cells (automatic grade x pool-popularity group) do not see topics, and TREC topics
differ several-fold in how many of their pooled items are relevant. A ratio measure expanded about
predictions whose relevant count R0_q is far from the topic's R_q is then biased by the terms the
second-order expansion (:mod:`metrics.sampling.second_order`) leaves out, (R_q - R0_q) / R0_q being
of order 1. Each topic's point is therefore moved towards its design-based count (Morris 1983,
parametric empirical Bayes; Fay and Herriot 1979 for small areas): with D_q = sum over the topic's
sampled items not judged with certainty of (f(y_i) - p_i) / pi_i, the HT estimate of R_q - R0_q, and
V_q its design variance, sum (1 - pi_i) / pi_i^2 (f(y_i) - p_i)^2 over the n_q sampled items,
smoothed towards its value at the point's own rates, sum (1 - pi_i) / pi_i^2 p_i (1 - p_i), as if
``VAR_PSEUDO`` = 10 more items had been sampled (n_q V_direct + 10 V_model) / (n_q + 10): from a
handful of items a topic, as on Cranfield at 2-4, the direct variance is near 0 exactly when they
found nothing relevant and large when they found something, so unsmoothed the shrinkage moved the
first kind of topic all the way down and the second hardly up, and every measure ran 0.4-1.6 spreads
low (R@10 covered 52-58% at 20%); the model's alone moved Medical's and Robust's well-sampled topics
too far (their AP on the sampled-validation frame covered 86-93% instead of 91-95%). 10 was chosen
among 0, 10 and the model alone on these benchmarks. Then a topic effect of relative variance tau^2
(R_q = R0_q (1 + u_q), Var u_q = tau^2 over topics, from the moments sum_q (D_q^2 - V_q) / sum_q
R0_q^2, floored at 0) shrinks the shift to (1 - B_q) D_q, B_q = V_q / (V_q + tau^2 R0_q^2). The
topic's rates not judged with certainty move by one logit offset c_q, solved so their sum rises by
that much (every grade level alike, which keeps f_h monotone in h).

The estimate stays design-consistent: the point is a regression fit on the sample (one
intercept per topic, shrunk), and the correction of :mod:`metrics.sampling.estimator` is the
HT error of the residuals from it, as in a GREG estimator (Sarndal, Swensson and Wretman 1992,
6.5). To second order the moved point adds no bias to a ratio: moved all the way (B_q = 0) the
estimate is the plug-in ratio of the topic's estimated totals plus the second-order pair term
from the residuals, which is then the ratio estimator's classical bias correction (Cochran
1977, 6.8). What it does add is a regression estimator's O(1/n) bias in the first-order term:
an item pulls the point towards its own label, so its residual from the point is too small, by
about (1 - B_q) times the covariance of D_q with the HT total of g_i ``slope``_i
(:class:`TopicPoint`). The estimator adds that covariance's HT estimate back, and its terms to
the linearised errors whose design variance is the estimate's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from metrics.sampling.forms import F64, I64, PoolView


@dataclass(frozen=True)
class TopicPoint:
    """The moved point (G, N); per topic (Q,) the share ``keep`` = B_q of the design-based
    shift left out; and (G, N) ``slope``: d point_h,i / d c_q over the topic's d R / d c_q,
    how a unit rise of the topic's relevant count spreads over its items (0 where a rate
    cannot move)."""

    point: F64
    keep: F64
    slope: F64


# the items' weight of the model's variance beside the sampled residuals' (module docstring)
VAR_PSEUDO = 10.0
_STEPS = 60  # bisection steps of the logit offset: its bracket [-30, 30] to 1e-16


def topic_point(ps: PoolView, point: F64, Fy: F64, p: F64, cols: I64) -> TopicPoint:
    """(G, N): ``point`` (the pilot's labels, the calibrated predictions elsewhere) with each
    topic's rates not judged with certainty (pi < 1) shifted by one logit offset, so that the
    topic's relevant count moves by the shrunk shift (1 - B_q) D_q (module docstring). Rates
    at exactly 0 or 1 stay (:class:`TopicPoint`)."""
    n_q = len(ps.topics)
    thr = ps.threshold - 1
    live = cols[p[cols] < 1.0]
    q_live = ps.topic_of[live]
    r = Fy[thr, live] - point[thr, live]
    w = 1.0 / p[live]
    shift = np.bincount(q_live, r * w, minlength=n_q)
    # the shift's design variance from the sampled residuals, smoothed towards its value at the
    # point's own rates by VAR_PSEUDO items: from a handful of items it is near 0 exactly when
    # they found nothing relevant (module docstring)
    rate = point[thr, live]
    direct = np.bincount(q_live, r**2 * (1.0 - p[live]) * w**2, minlength=n_q)
    model = np.bincount(q_live, rate * (1.0 - rate) * (1.0 - p[live]) * w**2, minlength=n_q)
    n_live = np.bincount(q_live, minlength=n_q).astype(np.float64)
    var = (n_live * direct + VAR_PSEUDO * model) / np.maximum(n_live + VAR_PSEUDO, 1e-12)
    free = (p < 1.0) & (point[thr] > 0.0) & (point[thr] < 1.0)
    base = np.bincount(ps.topic_of, np.where(p < 1.0, point[thr], 0.0), minlength=n_q)
    tau2 = max(float((shift**2 - var).sum()) / max(float((base**2).sum()), 1e-12), 0.0)
    prior = tau2 * base**2
    keep = np.where(var + prior > 0.0, var / np.where(var + prior > 0.0, var + prior, 1.0), 1.0)
    target = base + (1.0 - keep) * shift
    if not np.any(np.abs(target - base) > 1e-12):
        return TopicPoint(point, np.ones(n_q), np.zeros_like(point))
    # the offset c_q: sum over the topic's free items of sigmoid(logit p_i + c_q) = target - the
    # fixed ones (rates 0 or 1); bisection, vectorised over topics
    fixed = np.bincount(ps.topic_of, np.where((p < 1.0) & ~free, point[thr], 0.0), minlength=n_q)
    n_free = np.bincount(ps.topic_of, free, minlength=n_q)
    goal = np.clip(target - fixed, 1e-9 * n_free, (1.0 - 1e-9) * n_free)
    idx = np.flatnonzero(free)
    q = ps.topic_of[idx]
    logit = np.log(point[thr, idx]) - np.log1p(-point[thr, idx])
    lo, hi = np.full(n_q, -30.0), np.full(n_q, 30.0)
    for _ in range(_STEPS):
        mid = (lo + hi) / 2.0
        got = np.bincount(q, 1.0 / (1.0 + np.exp(-(logit + mid[q]))), minlength=n_q)
        above = got > goal
        hi = np.where(above, mid, hi)
        lo = np.where(above, lo, mid)
    c = np.where(n_free > 0, (lo + hi) / 2.0, 0.0)
    out = point.copy()
    for h in range(point.shape[0]):
        f = point[h, idx]
        inner = (f > 0.0) & (f < 1.0)
        lg = np.log(np.where(inner, f, 0.5)) - np.log1p(-np.where(inner, f, 0.5))
        out[h, idx] = np.where(inner, 1.0 / (1.0 + np.exp(-(lg + c[q]))), f)
    d = np.where(free[None, :] & (out > 0.0) & (out < 1.0), out * (1.0 - out), 0.0)
    total = np.bincount(ps.topic_of, d[thr], minlength=n_q)[ps.topic_of]
    slope = np.where(total > 0.0, d / np.where(total > 0.0, total, 1.0), 0.0)
    return TopicPoint(out, keep, np.asarray(slope, dtype=np.float64))
