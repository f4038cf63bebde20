"""The measures of a :class:`~metrics.sampling.structure.PoolStructure` as functions of the
item labels: the per-topic cells from label functionals, and their gradients per item (what
the linearised variance, the model-assisted correction and the ``active`` design read)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from metrics.sampling.calibration import _mean_influence, pilot_predictions
from metrics.sampling.forms import PoolView, _discount_slope, _discount_sum, _f64, _Point, _ratio

if TYPE_CHECKING:
    from metrics.sampling.forms import F64, I64


def measure_cells(
    ps: PoolView, F: F64, at_point: bool = False
) -> tuple[list[_Point], dict[str, Any]]:
    """Per-topic cell values of every measure from (corrected) functionals F (G, N);
    ``at_point``: F is a fixed linearisation point (:func:`_ratio`)."""
    n_q = len(ps.topics)
    n_r = len(ps.run_names)
    rel = F[ps.threshold - 1]
    C = _f64(np.stack([np.bincount(ps.topic_of, F[h], minlength=n_q) for h in range(F.shape[0])]))
    R = C[ps.threshold - 1]
    gain = F.sum(axis=0)
    aux: dict[str, Any] = {"R": R, "C": C}
    points: list[_Point] = []
    for kind, k in ps._parsed:
        if kind in ("P", "R"):
            items, cell, _ = ps._top(k)
            hits = _f64(np.bincount(cell, rel[items], minlength=n_r * n_q).reshape(n_r, n_q))
            if kind == "P":
                points.append(_Point(hits / k, np.ones(n_q)))
            else:
                points.append(_Point(*_ratio(hits, R, at_point=at_point)))
        elif kind == "nDCG":
            items, cell, disc = ps._top(k)
            dcg = _f64(np.bincount(cell, gain[items] * disc, minlength=n_r * n_q))
            dcg = dcg.reshape(n_r, n_q)
            ideal = _discount_sum(C, k).sum(axis=0)
            points.append(_Point(*_ratio(dcg, ideal, at_point=at_point)))
        elif kind == "L":
            points.append(_Point(_linear_cells(ps, k, F), np.ones(n_q)))
        else:
            g = rel[ps._e_item]
            cs = np.cumsum(g)
            before = cs - g - (cs - g)[ps._e_start]
            num_e = g / ps._e_rank * (1.0 + before)
            num = _f64(np.bincount(ps._e_cell, num_e, minlength=n_r * n_q))
            num = num.reshape(n_r, n_q)
            points.append(_Point(*_ratio(num, R, at_point=at_point)))
            aux["ap_before"] = before
            aux["ap_g"] = g
    return points, aux


def _linear_cells(ps: PoolView, k: int, F: F64) -> F64:
    """(R, Q) the ``k``-th linear measure's cells: per topic, sum over its items and the
    functionals h of W_h,r,i F_h,i (:class:`~metrics.sampling.linear.LinearStructure`)."""
    assert ps._linear is not None, "a measure of kind L needs the structure's coefficients"
    w = ps._linear[k]
    g = min(w.shape[0], F.shape[0])  # functionals beyond the coefficients' are 0 there
    per_item = np.einsum("hrn,hn->rn", w[:g], F[:g])
    n_q = len(ps.topics)
    return _f64(np.stack([np.bincount(ps.topic_of, row, minlength=n_q) for row in per_item]))


def item_influence(
    ps: PoolView,
    points: list[_Point],
    aux: dict[str, Any],
    cols: I64,
    resid: F64,
    only: Sequence[str] | None = None,
) -> F64:
    """(M, R, n): v = sum_h d theta_m,r / d f_h,i * resid_h,i for items ``cols``;
    ``resid`` is (G, n). ``only``: the measure kinds to compute (the others stay 0)."""
    n_q = len(ps.topics)
    q = ps.topic_of[cols]
    rk = ps.rank[:, cols]
    r_rel = resid[ps.threshold - 1][None, :]
    out = np.zeros((len(points), len(ps.run_names), cols.size))
    for m, ((kind, k), p) in enumerate(zip(ps._parsed, points, strict=True)):
        if only is not None and kind not in only:
            continue
        top = ((rk >= 1) & (rk <= k)).astype(np.float64)
        if kind == "P":
            u = top / k * r_rel
        elif kind == "R":
            den = p.denom[q]
            ok = den > 1e-9
            u = np.where(ok, (top - p.cell[:, q]) / np.where(ok, den, 1.0), 0.0) * r_rel
        elif kind == "L":
            assert ps._linear is not None
            w = ps._linear[k][:, :, cols]
            g = min(w.shape[0], resid.shape[0])
            u = np.einsum("hrn,hn->rn", w[:g], resid[:g])
        elif kind == "nDCG":
            C = aux["C"]
            disc = np.where(top > 0, 1.0 / np.log2(np.maximum(rk, 1) + 1.0), 0.0)
            slope = _discount_slope(C[:, q], k)  # (G, n)
            den = p.denom[q]
            ok = den > 1e-9
            g_res = resid.sum(axis=0)[None, :]
            i_res = (slope * resid).sum(axis=0)[None, :]
            u = np.where(ok, (disc * g_res - p.cell[:, q] * i_res) / np.where(ok, den, 1.0), 0.0)
        else:
            dnum = ap_numerator_gradient(ps, aux, cols)
            den = p.denom[q]
            ok = den > 1e-9
            u = np.where(ok, (dnum - p.cell[:, q]) / np.where(ok, den, 1.0), 0.0) * r_rel
        out[m] = u / n_q
    return out


def ap_numerator_gradient(ps: PoolView, aux: dict[str, Any], cols: I64) -> F64:
    """(R, n): d numerator / d rel_i for items ``cols`` (0 where the run did not retrieve
    them): (1 + rel above i) / rank_i + sum over items below i of rel / rank."""
    g, before = aux["ap_g"], aux["ap_before"]
    w = g / ps._e_rank
    cw = np.cumsum(w)
    n_r, n_q = len(ps.run_names), len(ps.topics)
    seg_total = np.bincount(ps._e_cell, w, minlength=n_r * n_q)
    after = seg_total[ps._e_cell] - (cw - (cw - w)[ps._e_start])
    grad_e = (1.0 + before) / ps._e_rank + after
    pos = np.full(ps.n_items, -1, dtype=np.int64)
    pos[cols] = np.arange(cols.size)
    keep = pos[ps._e_item] >= 0
    out = np.zeros((n_r, cols.size))
    out[ps._e_run[keep], pos[ps._e_item[keep]]] = grad_e[keep]
    return out


def pool_influence(
    ps: PoolView,
    auto: Sequence[int] | I64,
    *,
    pilot: Sequence[int] | I64 | None = None,
    pilot_grades: Sequence[int] | I64 | None = None,
    groups: Sequence[int] | I64 | None = None,
    score: Sequence[float] | F64 | None = None,
) -> F64:
    """What :meth:`metrics.sampling.structure.PoolStructure.influence` returns."""
    F, depth = pilot_predictions(ps, auto, pilot, pilot_grades, groups, score)
    return _mean_influence(item_gradients(ps, F, depth))


def active_weights(
    ps: PoolView,
    auto: Sequence[int] | I64,
    *,
    pilot: Sequence[int] | I64,
    pilot_grades: Sequence[int] | I64,
    groups: Sequence[int] | I64 | None = None,
    score: Sequence[float] | F64 | None = None,
) -> tuple[F64, F64]:
    """What :meth:`metrics.sampling.structure.PoolStructure.active_weights` returns."""
    F, depth = pilot_predictions(ps, auto, pilot, pilot_grades, groups, score)
    g = item_gradients(ps, F, depth)
    rel = F[ps.threshold - 1]
    weights = (g**2).sum(axis=1) * (rel * (1.0 - rel))[None, :]
    return _mean_influence(g), np.asarray(weights, dtype=np.float64)


def item_gradients(ps: PoolView, F: F64, depth: int) -> F64:
    """(M, R, N) d theta / d rel_i of every item, at the labels or predictions ``F``."""
    points, aux = measure_cells(ps, F)
    cols = np.arange(ps.n_items)
    return item_influence(ps, points, aux, cols, np.ones((depth, ps.n_items)))


def point_gradients(
    ps: PoolView, points: list[_Point], aux: dict[str, Any], cols: I64, depth: int
) -> F64:
    """(G, M, R, n): d theta / d f_h,i for items ``cols``, one functional h at a time, so
    that v = sum_h grad_h resid_h (:meth:`_influence` is linear in each resid_h). Only
    nDCG's gain and the linear measures (kind L) read the functionals above the threshold; the
    other measures are 0 there."""
    out = np.zeros((depth, len(ps.measures), len(ps.run_names), cols.size))
    for h in range(depth):
        e = np.zeros((depth, cols.size))
        e[h] = 1.0
        only = None if h == ps.threshold - 1 else ("nDCG", "L")
        out[h] = item_influence(ps, points, aux, cols, e, only=only)
    return out
