"""The estimators' validation harness (PoolBiasEstimators' ``ScoresError`` / ``Analysis``): every
pooled unit left out in turn, its runs estimated from the reduced pool, the errors (MAE, SRE,
SRE*, Kendall's tau-b) against their full-pool scores; and the estimates of the runs that were
not pooled."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from metrics.bias.estimator_report import (
    _SIG,
    EstimatorReport,
    _num,
    _paired_p,
    _t_half,
    _why_not,
    cell_means,
)
from metrics.bias.lipani import Prepared, lipani2015, lipani2016
from metrics.bias.prediction import (
    BinErrors,
    calibration_of,
    errors_by_novelty,
    prediction_interval,
    recommend_for,
)
from metrics.measures.names import Measure

if TYPE_CHECKING:
    from metrics.bias.estimator_report import F64, I64, Bool, _Scenario


__all__ = [
    "estimator_errors",
    "novelty_k",
]


def novelty_k(m: Measure, depth: int) -> int:
    """The k of a run's novelty for measure ``m`` (its Judged@k and unjudged documents in its
    top k): the measure's cutoff, else the pool depth."""
    return int(m.cutoff) if m.cutoff is not None else int(depth)


def _pairwise_p(tags: list[str], per_topic: Mapping[str, Mapping[str, float]]) -> F64:
    topics = sorted({q for v in per_topic.values() for q in v})
    col = {q: j for j, q in enumerate(topics)}
    values = np.zeros((len(tags), len(topics)))
    valid = np.zeros((len(tags), len(topics)), dtype=bool)
    for i, tag in enumerate(tags):
        for q, v in per_topic.get(tag, {}).items():
            if math.isfinite(v):
                values[i, col[q]] = v
                valid[i, col[q]] = True
    return _paired_p(values, valid)


def _errors_of(true: Mapping[str, float], estimate: Mapping[str, float], p: F64) -> dict[str, Any]:
    from metrics.stats.rank import kendall_tau_b

    tags = list(true)
    t = np.array([true[x] for x in tags], dtype=np.float64)
    v = np.array([estimate.get(x, math.nan) for x in tags], dtype=np.float64)
    # positions by full-pool score descending, ties by tag descending (the reference's withRank)
    order = sorted(range(len(tags)), key=lambda i: tags[i], reverse=True)
    order = sorted(order, key=lambda i: -t[i])
    position = np.empty(len(tags), dtype=np.int64)
    position[np.array(order, dtype=np.int64)] = np.arange(1, len(tags) + 1)
    idx = np.flatnonzero(np.isfinite(v) & np.isfinite(t))
    if idx.size == 0:
        return {
            "mae": math.nan,
            "sre": None,
            "sre_star": None,
            "kendall_tau": math.nan,
            "n_runs": 0,
        }
    mae = math.fsum(np.abs(v[idx] - t[idx]).tolist()) / idx.size
    sre = sre_star = 0
    for i in idx.tolist():
        others = np.arange(t.size) != i
        o_rank = 1 + int(np.count_nonzero(t > t[i]))
        n_rank = 1 + int(np.count_nonzero(t[others] > v[i]))
        sre += abs(o_rank - n_rank)
        if n_rank < o_rank:
            passed = (position >= n_rank) & (position < o_rank) & others
        else:
            passed = (position > o_rank) & (position <= n_rank) & others
        sre_star += int(np.count_nonzero(p[i, passed] < _SIG))
    tau = (
        kendall_tau_b(
            {tags[i]: float(t[i]) for i in idx.tolist()},
            {tags[i]: float(v[i]) for i in idx.tolist()},
        )
        if idx.size >= 2
        else math.nan
    )
    return {
        "mae": mae,
        "sre": sre,
        "sre_star": sre_star,
        "kendall_tau": tau,
        "n_runs": int(idx.size),
    }


def estimator_errors(
    true: Mapping[str, float],
    estimate: Mapping[str, float],
    per_topic: Mapping[str, Mapping[str, float]],
) -> dict[str, Any]:
    """MAE, SRE, SRE* and Kendall tau-b of ``estimate`` against ``true`` (see the module
    docstring); ``per_topic[tag][qid]`` are the true per-topic scores the paired t-test of SRE*
    compares. Runs without a finite estimate are left out (``n_runs`` counts the others)."""
    tags = list(true)
    return _errors_of(true, estimate, _pairwise_p(tags, per_topic))


class Analysis(Prepared, Protocol):
    """What the harness reads of a prepared analysis
    (:class:`metrics.bias.nested.EstimatorAnalysis`): its scenarios and their cell values,
    besides what Lipani's corrections read."""

    def _scenario(self, g: int, nested: bool, ideal: bool = True) -> _Scenario: ...

    def _counted(self, sc: _Scenario) -> Bool: ...

    def _cell_values(
        self, m: Measure, sc: _Scenario, treatment: str = "lower", only: Bool | None = None
    ) -> F64: ...


class _Harness:
    """One measure's estimates: the leave-one-unit-out validation and the non-pooled runs."""

    def __init__(self, a: Analysis, m: Measure, names: tuple[str, ...], *, top75: bool) -> None:
        self.a = a
        self.m = m
        self.names = names
        self.top75 = top75
        self.why = {e: w for e in names if (w := _why_not(e, m)) is not None}
        self.active = [e for e in names if e not in self.why]

    def run(self) -> EstimatorReport:
        a, m = self.a, self.m
        nr = len(a.loo.runs)
        ideal = m.spec.reads_ideal
        full = a._scenario(-1, False, ideal)
        full_counted = a._counted(full)
        full_vals = a._cell_values(m, full)
        full_score = cell_means(full_vals, full_counted)
        pooled = np.flatnonzero(a.loo.unit >= 0)
        est = {e: np.full(nr, np.nan) for e in self.active}
        score = np.full(nr, np.nan)
        # each run's own scenario (its unit left out; the full pool when it is not pooled)
        counted_r = full_counted.copy()
        rel_r = full.rel.copy()
        judged, unjudged, shown = self._novelty(full, full_counted, None)
        for g in range(len(a.loo.unit_names)):
            members = np.flatnonzero(a.loo.unit == g)
            sc = a._scenario(g, False, ideal)
            counted = a._counted(sc)
            counted_r[members] = counted[members]
            rel_r[members] = sc.rel[members]
            j, u, n = self._novelty(sc, counted, a.loo.unit == g)
            judged[members], unjudged[members], shown[members] = j[members], u[members], n[members]
            red = cell_means(a._cell_values(m, sc), counted)
            score[members] = red[members]
            if "pool" in est:
                est["pool"][members] = red[members]
            if "webber_park" in est:
                nsc = a._scenario(g, True, ideal)
                nest = cell_means(a._cell_values(m, nsc), a._counted(nsc))
                others = pooled[a.loo.unit[pooled] != g]
                d = red[others] - nest[others]
                d = d[np.isfinite(d)]
                est["webber_park"][members] = red[members] + (d.mean() if d.size else np.nan)
            for t in ("condensed", "upper"):
                if t in est:
                    v = cell_means(a._cell_values(m, sc, t, only=a.loo.unit == g), counted)
                    est[t][members] = v[members]
        lip: dict[str, tuple[F64, F64, F64]] = {}
        if "lipani2015" in est:
            assert m.cutoff is not None
            lip["lipani2015"] = lipani2015(a, int(m.cutoff), counted_r)
        if "lipani2016" in est:
            lip["lipani2016"] = lipani2016(a, m, counted_r, rel_r)
        for e, (values, _, _) in lip.items():
            est[e][pooled] = values[pooled]
        errors = self._errors(full_score, full_vals, full_counted, est, pooled)
        runs_out: dict[str, dict[str, Any]] = {}
        for i in pooled.tolist():
            row: dict[str, Any] = {
                "unit": a.loo.unit_names[a.loo.unit[i]],
                "score": float(score[i]),
                "score_full_pool": float(full_score[i]),
                "judged": float(judged[i]),
                "unjudged": int(unjudged[i]),
            }
            for e in self.active:
                row[e] = float(est[e][i])
            runs_out[a.loo.tags[i]] = row
        deltas, not_pooled = self._not_pooled(full, full_score, full_counted, lip)
        for tag, entry in not_pooled.items():
            i = a.loo.tags.index(tag)
            entry["judged"], entry["unjudged"] = _num(float(judged[i])), int(unjudged[i])
            entry["top_k"] = int(shown[i])
        by_novelty = errors_by_novelty({"runs": runs_out}, self.active)
        if not_pooled:
            self._predict(not_pooled, runs_out, by_novelty, full, full_counted)
        rec, rec_why = self._recommend(errors)
        return EstimatorReport(
            measure=m.name,
            depth=a.loo.depth,
            leave_out=a.loo.leave_out,
            compat="trec_eval" if a.loo.compat == "trec_eval" else "honest",
            top75=self.top75,
            topics=a.loo.topics,
            n_units=len(a.loo.unit_names),
            estimators=self.names,
            errors=errors,
            why_not=self.why,
            runs=runs_out,
            not_pooled=not_pooled,
            deltas=deltas,
            recommended=rec,
            recommended_why=rec_why,
            by_novelty={e: [b.__dict__ for b in bins] for e, bins in by_novelty.items()},
            novelty_k=novelty_k(m, a.loo.depth),
        )

    def _predict(
        self,
        not_pooled: dict[str, dict[str, Any]],
        runs_out: dict[str, dict[str, Any]],
        by_novelty: dict[str, list[BinErrors]],
        full: _Scenario,
        full_counted: Bool,
    ) -> None:
        """Each not-pooled run's bounds, the estimator recommended for runs as novel as it, and
        every estimate's prediction interval for its full-pool score
        (:mod:`metrics.bias.prediction`, calibrated on the validation's left-out runs)."""
        a, m = self.a, self.m
        exact = m.family == "P" and m.cutoff is not None  # P@k: unjudged in the top k only
        upper = cell_means(a._cell_values(m, full, "upper"), full_counted) if exact else None
        calibrations = {e: calibration_of({"runs": runs_out}, e) for e in self.active}
        for tag, entry in not_pooled.items():
            score, judged = entry["score"], entry["judged"]
            hole = 1.0 - judged if judged is not None else math.nan
            if upper is not None and score is not None:
                bounds = (float(score), float(upper[a.loo.tags.index(tag)]))
            else:
                bounds = (0.0, 1.0)
            entry["bounds"] = [_num(bounds[0]), _num(bounds[1])]
            entry["bounds_exact"] = exact
            rec, why = recommend_for(judged if judged is not None else math.nan, by_novelty)
            entry["recommended"], entry["recommended_why"] = rec, why
            for e, est in entry["estimates"].items():
                v = est["estimate"]
                pi = prediction_interval(
                    math.nan if v is None else float(v), hole, bounds, calibrations[e]
                )
                est["interval"] = [_num(pi.low), _num(pi.high)]
                est["interval_method"] = pi.method
                est["interval_why"] = pi.why
                est["extrapolating"] = pi.extrapolating

    def _novelty(self, sc: _Scenario, counted: Bool, only: Bool | None) -> tuple[F64, I64, I64]:
        """Per run, how much of its top k the scenario's pool judged: Judged@k averaged over
        the counted topics, the unjudged documents in those top k, and the documents in them
        (k: :func:`novelty_k`)."""
        a = self.a
        k = novelty_k(self.m, a.loo.depth)
        values = a._cell_values(Measure("Judged", k), sc, only=only)
        shown = np.minimum(a.loo.num_ret, k)
        missing = np.where(counted, np.rint((1.0 - values) * shown), 0).astype(np.int64)
        top = np.where(counted, shown, 0).astype(np.int64)
        return cell_means(values, counted), missing.sum(axis=1), top.sum(axis=1)

    def _errors(
        self,
        true: F64,
        true_vals: F64,
        true_counted: Bool,
        est: dict[str, F64],
        pooled: I64,
    ) -> dict[str, dict[str, Any]]:
        a = self.a
        tags = [a.loo.tags[i] for i in pooled.tolist()]
        per_topic = {
            tag: {
                a.loo.topics[t]: float(true_vals[i, t])
                for t in np.flatnonzero(true_counted[i]).tolist()
            }
            for tag, i in zip(tags, pooled.tolist(), strict=True)
        }
        t = {tag: float(true[i]) for tag, i in zip(tags, pooled.tolist(), strict=True)}
        p = _pairwise_p(tags, per_topic)
        return {
            e: _errors_of(
                t, {tag: float(v[i]) for tag, i in zip(tags, pooled.tolist(), strict=True)}, p
            )
            for e, v in est.items()
        }

    def _not_pooled(
        self,
        full: _Scenario,
        full_score: F64,
        full_counted: Bool,
        lip: dict[str, tuple[F64, F64, F64]],
    ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        a, m = self.a, self.m
        pooled = np.flatnonzero(a.loo.unit >= 0)
        nsc = a._scenario(-1, True, m.spec.reads_ideal)
        nest = cell_means(a._cell_values(m, nsc), a._counted(nsc))
        d = (full_score - nest)[pooled]
        d = d[np.isfinite(d)]
        mean = float(d.mean()) if d.size else math.nan
        half = (
            float(_t_half(np.array([d.std(ddof=1) if d.size > 1 else 0.0]), np.array([d.size]))[0])
            if d.size
            else math.nan
        )
        ci = None if not math.isfinite(half) else [mean - half, mean + half]
        deltas = {"n": int(d.size), "mean": _num(mean), "ci": ci}
        notp = np.flatnonzero(a.loo.unit < 0)
        if notp.size == 0:
            return deltas, {}
        extra: dict[str, F64] = {}
        for t in ("condensed", "upper"):
            if t in self.active:
                extra[t] = cell_means(a._cell_values(m, full, t), full_counted)
        out: dict[str, dict[str, Any]] = {}
        for i in notp.tolist():
            s = float(full_score[i])
            ests: dict[str, Any] = {}
            for e in self.active:
                interval: list[float] | None = None
                if e == "pool":
                    v = s
                elif e == "webber_park":
                    v = s + mean
                    interval = None if ci is None else [s + ci[0], s + ci[1]]
                elif e in lip:
                    v = float(lip[e][0][i])
                    lo, hi = float(lip[e][1][i]), float(lip[e][2][i])
                    interval = [lo, hi] if math.isfinite(lo) and math.isfinite(hi) else None
                else:
                    v = float(extra[e][i])
                pen = v - s
                ests[e] = {
                    "estimate": _num(v),
                    "penalty": _num(pen),
                    "penalty_pct": _num(100.0 * pen / s) if s != 0 and math.isfinite(s) else None,
                    "interval": interval,
                }
            out[a.loo.tags[i]] = {"score": _num(s), "estimates": ests}
        return deltas, out

    def _recommend(self, errors: dict[str, dict[str, Any]]) -> tuple[str | None, str | None]:
        scored = [(e, errors[e]["mae"]) for e in self.active if math.isfinite(errors[e]["mae"])]
        if not scored:
            return None, None
        best, mae = min(scored, key=lambda x: x[1])  # first of equals, in ALL order
        a = self.a
        unit = "groups" if a.loo.leave_out == "group" else "pooled runs"
        n = len(a.loo.unit_names)
        why = (
            f"lowest mean absolute error ({mae:.4f}) of the {len(scored)} estimators that apply "
            f"to {self.m.name}, measured by leaving out each of the {n} {unit} in turn"
        )
        return best, why
