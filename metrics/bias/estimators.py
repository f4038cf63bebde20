"""Estimators of the pooling penalty, and their error measured on the collection itself.

A run that did not contribute to a pool is scored against judgments other systems chose, so its
score is biased low. :func:`estimator_report` computes, for one measure, six *estimators* of the
score the run would get had it been pooled, and measures how well each works on this collection
with the validation harness of PoolBiasEstimators (Lipani's reference implementation,
``ScoresError`` / ``Analysis``): every pooled unit (a group, or a run when groups are unknown) is
left out in turn, its runs are estimated from the reduced pool, and the estimates are compared
with their scores on the full pool.

Estimators (the names are API keys)
-----------------------------------
``pool``
    No correction: the run's score on the pool as it is (the baseline every estimator must beat).
``webber_park``
    Webber & Park (2009), "Score adjustment for correction of pooling bias", SIGIR: the score plus
    the mean, over the runs of the pool, of what being in the pool is worth to them,
    ``score(p, pool) - score(p, pool without p's unit)`` (the reference's WebberOnRunsEstimator,
    its L1OO variant when units are groups). In the harness "the pool" is the reduced pool, so
    each delta is a nested leave-out: a judgment leaves ``pool \\ {g, h}`` exactly when its
    contributor set is a subset of ``{g, h}``; per-judgment owners (one contributor) and pairs
    (two) score every nested scenario at once. A delta that is not a number (the nested pool
    left the run no topic to average) is skipped; the reference would return NaN.
``lipani2015``
    Lipani, Lupu & Hanbury (2015), "Splitting water: precision and anti-precision to reduce pool
    bias", SIGIR (the reference's LipaniEstimator). P@n only. For the run r: s = P@n(r), a =
    anti-P@n(r) (judged non-relevant in the top n / n) and k = 1 - s - a (the unjudged share).
    Each pooled run p is re-ranked as ``p∘r`` (below); dS_p, dA_p = the change of P@n and anti-P@n
    from p to p∘r on the same qrels, dK_p = -dS_p - dA_p. With means DS, DA, DK over the pool's
    runs and lambda = DS * a - DA * s, the estimate is s + k * max(DK, 0) when lambda > 0, else s.
    Everything is at the aggregate level: s, a and each dS_p are means over the run's topics.
``lipani2016``
    Lipani, Lupu & Hanbury (2016), "The curious incidence of bias corrections in the pool", ECIR,
    as the reference's query-based LipaniEstimatorQB: the same correction computed per topic
    (P@n) and averaged; for R@n, per topic ``(n P@n + n c_n) / (R + n c_n + max(d - n, 0) c_d)``
    with c_n, c_d the topic's P corrections at n and at the pool depth d and R its relevant count
    (0 when R = 0).
``condensed``
    Sakai (2007): the measure on the condensed list, unjudged documents removed
    (:func:`metrics.measures.basic.condensed`).
``upper``
    The unjudged documents in the top k counted relevant (:func:`metrics.measures.basic.optimistic`,
    per topic the larger of that value and the plain one, as :mod:`metrics.evaluation.evaluator`'s
    upper treatment). Top-k measures only.

``p∘r`` exactly (the reference's ``getNewRunBySelectedRuns`` / ``getNewScore``): p's documents,
each given the key x = r's rank of it plus a small "fix" when r retrieved it (fix = 1e-4 when both
ranks are equal, (p's rank + 1) / 1e4 when r ranks it lower than p, p's rank / 1e8 when higher),
and p's rank + 1e-4 otherwise; ranked by x ascending, ties by docid descending. x is computed in
float64 (the reference casts the score it derives from x to float32, where fixes below the float's
resolution become ties broken by docid; those rare orders differ). Documents r retrieved but p
did not are not added. On a topic p did not answer, p∘r is empty (both P@n are 0: no change).

The harness (``runs`` of the report)
------------------------------------
For each unit g among the pooled runs: the depth-d pool is rebuilt without g (the qrels lose the
judgments only g contributed); each run of g gets ``score`` (the reduced pool's score),
``score_full_pool``, and each estimator's estimate, computed with the other pooled runs as the
pool. Per estimator: MAE = mean |estimate - score_full_pool|; SRE = sum over runs of |rank of
score_full_pool among all full-pool scores - rank of the estimate among the other runs' full-pool
scores| (ranks = 1 + number strictly higher: the reference's ``findRank``); SRE* = the same, each
run counting only the runs it passed over (positions, by full-pool score descending and tag
descending, between the two ranks) whose per-topic full-pool scores differ from its own by a
two-sided paired t-test at p < 0.05; kendall_tau = tau-b between full-pool scores and estimates.
The full-pool score is the reference's ``TrueEstimator`` for leave-one-run-out; for groups the
reference scores each run on the pool without its group's other runs, here it is the full pool.

``top75``: as the reference's ``get75TopLRuns``, only the best round(0.75 n) pooled runs by
full-pool score (Java's Math.round; ties in the order given) make the pool; the others are left
out of the analysis altogether (neither pooled nor estimated).

Runs that were not pooled (``not_pooled``) get every estimate from the full pool, as a penalty
(estimate - score) and as a percentage of the run's own score, with an interval where the
estimate averages something: webber_park = score + the 95% t interval of the mean delta;
lipani2015 = the correction at the ends of the 95% t interval of DK; lipani2016 = the per-topic
corrections at the ends of each topic's interval of its DK, averaged.

Scores are exact, computed in float64 without the reference's 4-decimal rounding; topics are
averaged as in :mod:`metrics.bias` (trec_eval mode: topics in the reduced qrels and the run).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from metrics.bias.leaveout import LeaveOneOut, LeaveOut, _SparseRanked
from metrics.io import Qrels, Run
from metrics.measures.basic import Ideal, Ranked, optimistic
from metrics.measures.names import Measure, parse_measure
from metrics.measures.registry import compute

__all__ = [
    "ALL",
    "LABELS",
    "EstimatorAnalysis",
    "EstimatorReport",
    "estimator_errors",
    "estimator_report",
    "top75_pooled",
]

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]
Bool = npt.NDArray[np.bool_]

ALL: tuple[str, ...] = ("pool", "webber_park", "lipani2015", "lipani2016", "condensed", "upper")
LABELS: dict[str, str] = {
    "pool": "Pool (no correction)",
    "webber_park": "Webber & Park 2009",
    "lipani2015": "Lipani, Lupu & Hanbury 2015 (anti-precision)",
    "lipani2016": "Lipani, Lupu & Hanbury 2016 (per topic)",
    "condensed": "Condensed list (Sakai 2007)",
    "upper": "Upper bound (unjudged in the top k relevant)",
}
# measure families the estimators are defined for (all read judged rows through ranks only)
FAMILIES = ("P", "R", "AP", "nDCG", "RR", "Bpref", "Success", "Rprec")
_TOP_K = ("P", "R", "AP", "nDCG", "RR", "Success")  # the upper treatment's families (with a k)
_SIG = 0.05  # SRE*: the paired t-test's level


def _num(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def _why_not(name: str, m: Measure) -> str | None:
    """Why estimator ``name`` does not apply to ``m`` (None when it does)."""
    if name == "lipani2015" and m.family != "P":
        return "P@k only"
    if name == "lipani2016" and m.family not in ("P", "R"):
        return "P@k and R@k only"
    if name == "upper" and (m.family not in _TOP_K or m.cutoff is None):
        return "top-k measures only (P@k, R@k, RR@k, AP@k, nDCG@k, Success@k)"
    return None


def _java_round(x: float) -> int:
    return math.floor(x + 0.5)


# --------------------------------------------------------------------------------------------
# Report


@dataclass(frozen=True)
class EstimatorReport:
    """Estimates and their measured error for one measure; see the module docstring.

    ``errors[name]`` holds "mae", "sre", "sre_star", "kendall_tau", "n_runs" of an applicable
    estimator, ``why_not[name]`` the reason one does not apply. ``runs[tag]`` are the harness
    rows (pooled runs), ``not_pooled[tag]`` the estimates of the runs outside the pool.
    """

    measure: str
    depth: int
    leave_out: str
    compat: str
    top75: bool
    topics: tuple[str, ...]
    n_units: int
    estimators: tuple[str, ...]
    errors: dict[str, dict[str, Any]]
    why_not: dict[str, str]
    runs: dict[str, dict[str, Any]]
    not_pooled: dict[str, dict[str, Any]]
    deltas: dict[str, Any]
    recommended: str | None
    recommended_why: str | None
    dropped: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of SPEC.md (floats may be None, never NaN)."""
        est: dict[str, Any] = {}
        for name in self.estimators:
            if name in self.why_not:
                est[name] = {"label": LABELS[name], "applicable": False, "why": self.why_not[name]}
            else:
                e = self.errors[name]
                est[name] = {
                    "label": LABELS[name],
                    "applicable": True,
                    "mae": _num(e["mae"]),
                    "sre": e["sre"],
                    "sre_star": e["sre_star"],
                    "kendall_tau": _num(e["kendall_tau"]),
                    "n_runs": e["n_runs"],
                }
        runs = {
            tag: {k: (_num(v) if isinstance(v, float) else v) for k, v in row.items()}
            for tag, row in self.runs.items()
        }
        out: dict[str, Any] = {
            "measure": self.measure,
            "depth": self.depth,
            "leave_out": self.leave_out,
            "mode": self.compat,
            "top75": self.top75,
            "topics": list(self.topics),
            "n_units": self.n_units,
            "estimators": est,
            "recommended": self.recommended,
            "recommended_why": self.recommended_why,
            "runs": runs,
            "not_pooled": self.not_pooled,
            "deltas": self.deltas,
        }
        if self.top75:
            out["top75_dropped"] = list(self.dropped)
        return out


# --------------------------------------------------------------------------------------------
# Vectorised helpers


def _t_half(sd: F64, n: I64, level: float = 0.95) -> F64:
    """Half-width of the Student-t interval of a mean (NaN for n < 2)."""
    import scipy.special  # only the interval and test code needs scipy

    out = np.full(sd.shape, np.nan)
    ok = n >= 2
    q = scipy.special.stdtrit(np.maximum(n[ok] - 1, 1).astype(np.float64), 0.5 + level / 2.0)
    out[ok] = q * sd[ok] / np.sqrt(n[ok])
    return out


def _paired_p(values: F64, valid: Bool) -> F64:
    """Two-sided paired t-test p-values between every two rows of ``values`` (runs x topics),
    on the topics valid in both; zero variance: p = 0 if the mean difference is not 0, else 1
    (as :func:`metrics.stats.paired.paired_test`); fewer than 2 topics: NaN (not significant)."""
    import scipy.special

    v = np.where(valid, values, 0.0)
    w = valid.astype(np.float64)
    both = w @ w.T
    # sums over common topics of d = v_i - v_j and d^2
    s1 = (v * w) @ w.T - w @ (v * w).T
    s2 = (v * v * w) @ w.T - 2.0 * (v * w) @ (v * w).T + w @ (v * v * w).T
    n = both
    mean = np.divide(s1, n, out=np.zeros_like(s1), where=n > 0)
    var = np.divide(s2 - n * mean * mean, n - 1, out=np.zeros_like(s1), where=n > 1)
    var = np.maximum(var, 0.0)
    p = np.full(s1.shape, np.nan)
    ok = n >= 2
    scale = np.abs(mean) * 1e-12 + 1e-300
    flat = ok & (var <= scale * scale)
    p[flat] = np.where(np.abs(mean[flat]) > 1e-15, 0.0, 1.0)
    vary = ok & ~flat
    t = np.abs(mean[vary]) / np.sqrt(var[vary] / n[vary])
    p[vary] = 2.0 * scipy.special.stdtr(n[vary] - 1.0, -t)
    return p


class _Topic:
    """One topic's rankings as integer document ids, for building ``p∘r`` of many pairs.

    ``ids[i, j]``: the document at rank j + 1 of run i (-1 past its end); ``rank[i, u]``: the rank
    of document u in run i (0: not retrieved); ``entry[u]``: its judgment in the analysed qrels
    when that is in the full pool, else -1; ``tie[u]``: larger for a docid later in byte order
    (only when some run is long enough for two keys x to tie); ``kind[g, u]``: bit 0 when u is
    relevant and bit 1 when it is judged non-relevant in the pool without unit g (row ``nu``:
    the full pool).
    """

    def __init__(
        self, ids: I64, ndocs: int, entry: I64, tie: I64 | None, kind: npt.NDArray[np.uint8]
    ) -> None:
        self.ids = ids
        nr = ids.shape[0]
        self.length = (ids >= 0).sum(axis=1)
        rank = np.zeros((nr, ndocs + 1), dtype=np.int32)  # column ndocs: padding (-1 ids)
        r_i, j = np.nonzero(ids >= 0)
        rank[r_i, ids[r_i, j]] = j + 1
        self.rank = rank
        self.entry = np.append(entry, -1)
        self.tie = tie if tie is None else np.append(tie, -1)
        self.kind = np.pad(kind, ((0, 0), (0, 1)))
        self.pad = ndocs

    def counts(self, pp: I64, rr: I64, n: int, kinds: I64) -> tuple[I64, I64]:
        """For each pair (pp[i], rr[i]): how many documents of each kind are in the top n of
        p∘r, for ``kinds`` (per pair) 0 and 1 of :attr:`kind` ((pairs, 2) counts: the caller's
        two kinds, e.g. relevant and judged non-relevant in that pair's qrels), as two arrays.

        A pair whose p has at most n documents keeps them all. The others are resolved with
        candidate windows (:meth:`_window`) w = n, 2n, 4n, ... until at least n candidates
        provably precede every other document, or w covers both runs (then every document of p
        is a candidate): exact at every step. P@n needs the set of the top n, not its order.
        """
        out = np.zeros((pp.size, 2), dtype=np.int64)
        small = self.length[pp] <= n
        if small.any():
            docs = self.ids[pp[small], :n]
            docs = np.where(docs >= 0, docs, self.pad)
            out[small] = self._kinds(docs, np.ones(docs.shape, dtype=bool), kinds[small])
        todo = np.flatnonzero(~small)
        w = n
        width = self.ids.shape[1]
        while todo.size:
            done, docs, sel = self._window(pp[todo], rr[todo], n, w)
            out[todo[done]] = self._kinds(docs, sel, kinds[todo[done]])
            todo = todo[~done]
            w = min(2 * w, width) if w < width else w
        return out[:, 0], out[:, 1]

    def _kinds(self, docs: I64, sel: Bool, kinds: I64) -> I64:
        """Per row: selected documents of kind 0 and of kind 1 (``self.kind[kinds[row], doc]``
        is a code: bit 0 kind 0, bit 1 kind 1)."""
        code = self.kind[kinds[:, None], docs] * sel
        return np.stack(((code & 1).sum(axis=1), (code >> 1).sum(axis=1)), axis=1)

    def _window(self, pp: I64, rr: I64, n: int, w: int) -> tuple[Bool, I64, Bool]:
        """Pairs resolved with window ``w``; their candidate documents and which are in p∘r's
        top n.

        Candidates: r's top w documents that p retrieved (x = r's rank + fix < w + 1 whenever
        the fix is below 1, i.e. p's rank is below 9999) and p's top w documents that r did not
        retrieve (x = p's rank + 1e-4 <= w + 1e-4). Every other document of p has x >= w + 1,
        so when at least n candidates have x < w + 1 the top n of p∘r are among them; once w
        covers both runs entirely every document of p is a candidate.
        """
        pad = self.pad
        ida = self.ids[rr, :w]
        ida = np.where(ida >= 0, ida, pad)
        idb = self.ids[pp, :w]
        idb = np.where(idb >= 0, idb, pad)
        rp = self.rank[pp[:, None], ida]  # p's rank of r's documents (0: not retrieved, pad)
        ina = rp > 0
        inb = self.rank[rr[:, None], idb] == 0
        inb &= idb != pad
        exhausted = w >= np.maximum(self.length[pp], self.length[rr])
        if self.tie is None:  # every fix is below 1: the candidates are all within the window
            count = ina.sum(axis=1) + inb.sum(axis=1)
            done = exhausted | (count >= n)
            ida, idb, rp, ina, inb, count = (
                ida[done],
                idb[done],
                rp[done],
                ina[done],
                inb[done],
                count[done],
            )
            docs = np.concatenate((ida, idb), axis=1)
            sel = np.concatenate((ina, inb), axis=1)
            over = np.flatnonzero(count > n)  # more candidates than n: keep the n smallest x
            if over.size:
                x = self._keys(rp[over], inb[over])
                kth = np.partition(x, n - 1, axis=1)[:, n - 1]
                sel[over] = x <= kth[:, None]  # keys are distinct (ranks below 9999)
            return done, docs, sel
        x = self._keys(rp, inb)
        limit = np.where(exhausted, np.inf, w + 1.0)
        count = (x < limit[:, None]).sum(axis=1)
        done = exhausted | (count >= n)
        x = np.where(x < limit[:, None], x, np.inf)[done]
        docs = np.concatenate((ida[done], idb[done]), axis=1)
        # ties in x are possible only with ranks >= 9999: docid descending breaks them
        order = np.lexsort((-self.tie[docs], x), axis=1)[:, :n]
        sel = np.zeros(x.shape, dtype=bool)
        rows = np.arange(x.shape[0])[:, None]
        sel[rows, order] = np.isfinite(x[rows, order])
        return done, docs, sel

    @staticmethod
    def _keys(rp: npt.NDArray[np.int32], inb: Bool) -> F64:
        """The keys x of the candidates: r's top documents (p's ranks ``rp``, 0 = absent) then
        p's top documents (``inb``: absent from r); inf for the non-candidates."""
        k = rp.shape[1]
        j = np.arange(1, k + 1, dtype=np.float64)
        rpf = rp.astype(np.float64)
        step = j - rpf
        fix = np.where(step == 0, 1e-4, np.where(step > 0, (rpf + 1.0) / 10000.0, rpf / 1e8))
        xa = np.where(rp > 0, j + fix, np.inf)
        xb = np.where(inb, j + 1e-4, np.inf)
        out: F64 = np.concatenate((xa, xb), axis=1)
        return out


# --------------------------------------------------------------------------------------------
# The analysis


@dataclass
class _Scenario:
    """Which judgments a run is scored without: rows removed, counts and ideal gains per cell."""

    removed: Bool  # per sparse row
    rel: I64  # (runs, topics)
    nonrel: I64
    found: I64
    ideal_removed: Bool | None  # (runs, ideal docs)


class EstimatorAnalysis:
    """Nested leave-outs and ``p∘r`` runs over a prepared leave-out analysis.

    Prepared once for a set of runs (pool, units, sparse judged rows: :attr:`loo`, built from the
    same arguments as :class:`~metrics.bias.leaveout.LeaveOneOut`); :meth:`report` per measure.
    The estimators read the leave-out analysis through its public state and add their own
    (contributor pairs, per-topic documents, the Lipani corrections).
    """

    def __init__(
        self, qrels: Qrels, runs: Mapping[str, Run], leave: LeaveOut | None = None
    ) -> None:
        self.loo = LeaveOneOut(qrels, runs, leave)
        self._cells_by_topic: tuple[I64, I64] | None = None
        self._contributor_pairs()
        self._topic_cache: dict[int, _Topic] = {}
        self._lipani_cache: dict[int, tuple[F64, F64, Bool]] = {}

    # -- contributor pairs -------------------------------------------------------------------
    def _contributor_pairs(self) -> None:
        """The two units of every judgment contributed by exactly two, and per-topic counts."""
        nt, ne = len(self.loo.topics), int(self.loo.e_row.size)
        nu = max(len(self.loo.unit_names), 1)
        self.nu = nu
        unit_row = self.loo.unit[self.loo.cell // nt]
        top = (self.loo.pos <= self.loo.depth) & (unit_row >= 0)
        code = np.unique(self.loo.entry[top] * nu + unit_row[top])
        ent, un = code // nu, code % nu
        ncontrib = np.bincount(ent, minlength=ne)
        two = ncontrib[ent] == 2
        e2, u2 = ent[two], un[two]  # sorted by (entry, unit): lower unit first
        lo = np.full(ne, -1, dtype=np.int64)
        hi = np.full(ne, -1, dtype=np.int64)
        lo[e2[0::2]] = u2[0::2]
        hi[e2[1::2]] = u2[1::2]
        self.e_lo, self.e_hi = lo, hi
        self.row_lo, self.row_hi = lo[self.loo.entry], hi[self.loo.entry]
        g = self.loo.e_grade
        pooled = self.loo.e_pooled
        has = lo >= 0
        cell = (lo[has] * nu + hi[has]) * nt + self.loo.e_topic[has]

        def by_pair(mask: Bool) -> I64:
            c = np.bincount(cell[mask[has]], minlength=nu * nu * nt).reshape(nu, nu, nt)
            out: I64 = c + c.transpose(1, 0, 2)
            return out

        self.pair_rel = by_pair(pooled & (g >= self.loo.level))
        self.pair_nonrel = by_pair(pooled & (g >= 0) & (g < self.loo.level))
        self.pair_found = by_pair(pooled)
        gi = np.flatnonzero(pooled & (g >= 1))
        gi = gi[np.lexsort((-g[gi], self.loo.e_topic[gi]))]  # the order of LeaveOneOut's ideal docs
        self._ideal_lo, self._ideal_hi = lo[gi], hi[gi]

    # -- scenarios -----------------------------------------------------------------------------
    def _scenario(self, g: int, nested: bool, ideal: bool = True) -> _Scenario:
        """Every run scored on the pool without unit ``g`` (-1: none) and, when ``nested``,
        also without its own unit: judgments whose contributors all lie in {g, unit(run)}.
        ``ideal=False`` skips the ideal gains (only nDCG reads them)."""
        nr = len(self.loo.runs)
        nt = len(self.loo.topics)
        runit_row = self.loo.unit[self.loo.cell // nt]
        ro = self.loo.e_owner[self.loo.entry]
        removed = (ro >= 0) & (ro == g)
        if nested:
            removed |= (ro >= 0) & (ro == runit_row)
            if g >= 0:
                lo, hi = self.row_lo, self.row_hi
                removed |= (lo >= 0) & (
                    ((lo == g) & (hi == runit_row)) | ((hi == g) & (lo == runit_row))
                )
        rel = np.tile(self.loo.rel_t, (nr, 1))
        nonrel = np.tile(self.loo.nonrel_t, (nr, 1))
        found = np.tile(self.loo.found_t, (nr, 1))
        if g >= 0:
            rel -= self.loo.removed_rel[g]
            nonrel -= self.loo.removed_nonrel[g]
            found -= self.loo.removed_found[g]
        _, _, owner = self.loo.ideal_docs
        ideal_removed: Bool | None = None
        if g >= 0 and ideal:
            ideal_removed = np.broadcast_to(owner[None, :] == g, (nr, owner.size)).copy()
        if nested:
            h = self.loo.unit
            own = (h >= 0) & (h != g)
            rel[own] -= self.loo.removed_rel[h[own]]
            nonrel[own] -= self.loo.removed_nonrel[h[own]]
            found[own] -= self.loo.removed_found[h[own]]
            if g >= 0:
                rel[own] -= self.pair_rel[g, h[own]]
                nonrel[own] -= self.pair_nonrel[g, h[own]]
                found[own] -= self.pair_found[g, h[own]]
            if ideal:
                mine = (owner[None, :] >= 0) & (owner[None, :] == h[:, None])
                if g >= 0:
                    ilo, ihi = self._ideal_lo[None, :], self._ideal_hi[None, :]
                    hh = h[:, None]
                    mine |= (ilo >= 0) & (((ilo == g) & (ihi == hh)) | ((ihi == g) & (ilo == hh)))
                ideal_removed = mine if ideal_removed is None else ideal_removed | mine
        return _Scenario(removed, rel, nonrel, found, ideal_removed)

    def _ideal_for(self, removed: Bool | None) -> Ideal:
        nt, nr = len(self.loo.topics), len(self.loo.runs)
        topic, gain, _ = self.loo.ideal_docs
        keep = np.ones((nr, topic.size), dtype=bool) if removed is None else ~removed
        cells = (np.arange(nr, dtype=np.int64)[:, None] * nt + topic[None, :])[keep]
        gains = np.broadcast_to(gain, keep.shape)[keep]
        off = np.zeros(nr * nt + 1, dtype=np.int64)
        np.cumsum(np.bincount(cells, minlength=nr * nt), out=off[1:])
        return Ideal(np.ascontiguousarray(gains, dtype=np.float64), off)

    def _counted(self, sc: _Scenario) -> Bool:
        """The (run, topic) cells averaged in a scenario."""
        if self.loo.compat == "trec_eval":
            out: Bool = self.loo.answered & (sc.found > 0)
            return out
        out = sc.rel > 0
        return out

    def _cell_values(
        self, m: Measure, sc: _Scenario, treatment: str = "lower", only: Bool | None = None
    ) -> F64:
        """Per-cell values of ``m`` in scenario ``sc``: "lower" (the measure), "condensed" or
        "upper"; shape (runs, topics). With ``only`` (per run), the other runs' cells are
        computed as if they retrieved nothing (cheaper when few runs are needed)."""
        nt, nr = len(self.loo.topics), len(self.loo.runs)
        ncell = nr * nt
        keep = ~sc.removed
        if only is not None:
            keep &= only[self.loo.cell // nt]
        ideal = (
            self._ideal_for(sc.ideal_removed) if m.spec.reads_ideal else self.loo.no_ideal(ncell)
        )
        rel, nonrel = sc.rel.reshape(-1), sc.nonrel.reshape(-1)
        if treatment == "condensed":
            keep &= self.loo.row_grade >= 0  # unjudged (negative grade) rows go too
            cell = self.loo.cell[keep]
            offsets = np.zeros(ncell + 1, dtype=np.int64)
            np.cumsum(np.bincount(cell, minlength=ncell), out=offsets[1:])
            grade = self.loo.row_grade[keep]
            ones = np.ones(grade.size, dtype=bool)
            r = Ranked(offsets, grade, ones, ones, rel, nonrel, ideal, self.loo.level)
            return compute(m, r)[0].reshape(nr, -1)
        if treatment == "upper":
            assert m.cutoff is not None
            k = int(m.cutoff)
            num_ret = (
                self.loo.num_ret if only is None else np.where(only[:, None], self.loo.num_ret, 0)
            )
            take = np.minimum(num_ret.reshape(-1), k)
            offsets = np.zeros(ncell + 1, dtype=np.int64)
            np.cumsum(take, out=offsets[1:])
            n = int(offsets[-1])
            grade = np.zeros(n, dtype=np.int64)
            found = np.zeros(n, dtype=bool)
            sel = keep & (self.loo.pos <= k)
            at = offsets[self.loo.cell[sel]] + self.loo.pos[sel] - 1
            grade[at] = self.loo.row_grade[sel]
            found[at] = True
            r = Ranked(
                offsets, grade, found, found & (grade >= 0), rel, nonrel, ideal, self.loo.level
            )
            plain = compute(m, r)[0]
            up: F64 = np.maximum(compute(m, optimistic(r, k))[0], plain)
            return up.reshape(nr, -1)
        if m.spec.cuttable and m.cutoff is not None:
            keep &= self.loo.pos <= m.cutoff
        cell = self.loo.cell[keep]
        offsets = np.zeros(ncell + 1, dtype=np.int64)
        np.cumsum(np.bincount(cell, minlength=ncell), out=offsets[1:])
        grade = self.loo.row_grade[keep]
        sparse = _SparseRanked(
            true_pos=self.loo.pos[keep],
            true_num_ret=self.loo.num_ret.reshape(-1),
            offsets=offsets,
            grade=grade,
            pooled=np.ones(grade.size, dtype=bool),
            judged=grade >= 0,
            num_rel=rel,
            num_nonrel=nonrel,
            ideal=ideal,
            level=self.loo.level,
        )
        return compute(m, sparse)[0].reshape(nr, -1)

    @staticmethod
    def _means(values: F64, counted: Bool) -> F64:
        n = counted.sum(axis=1)
        total = np.where(counted, values, 0.0).sum(axis=1)
        out = np.full(values.shape[0], np.nan)
        np.divide(total, n, out=out, where=n > 0)
        return out

    # -- Lipani: p∘r ---------------------------------------------------------------------------
    def _topic(self, t: int) -> _Topic:
        """Document ids of topic ``t`` over every run (hash-keyed, confirmed on the bytes)."""
        if t in self._topic_cache:
            return self._topic_cache[t]
        qid = self.loo.topics[t]
        hashes: list[npt.NDArray[np.uint64]] = []
        docids: list[npt.NDArray[np.bytes_]] = []
        lengths = np.zeros(len(self.loo.runs), dtype=np.int64)
        for i, run in enumerate(self.loo.runs):
            qi = run._index.get(qid)
            if qi is None:
                continue
            rows = run.order[run.offsets[qi] : run.offsets[qi + 1]]
            hashes.append(run.hashes[rows])
            docids.append(run.docids[rows])
            lengths[i] = rows.size
        width = int(lengths.max()) if lengths.size else 0
        ids = np.full((len(self.loo.runs), width), -1, dtype=np.int64)
        if not hashes:
            empty = np.zeros((self.nu + 1, 0), dtype=np.uint8)
            topic = _Topic(ids, 0, np.zeros(0, dtype=np.int64), None, empty)
            self._topic_cache[t] = topic
            return topic
        h = np.concatenate(hashes)
        d = np.concatenate(docids)
        _, first, inv = np.unique(h, return_index=True, return_inverse=True)
        if not np.array_equal(d, d[first][inv]):  # two docids share a hash: key on the bytes
            _, first, inv = np.unique(d, return_index=True, return_inverse=True)
        inv = inv.reshape(-1)
        ndocs = first.size
        r_i = np.repeat(np.arange(len(self.loo.runs)), lengths)
        start = np.zeros(len(self.loo.runs) + 1, dtype=np.int64)
        np.cumsum(lengths, out=start[1:])
        j = np.arange(h.size) - start[r_i]
        ids[r_i, j] = inv
        entry = np.full(ndocs, -1, dtype=np.int64)
        mine = self._cells_of(t)
        run_of = self.loo.cell[mine] // len(self.loo.topics)
        entry[ids[run_of, self.loo.pos[mine] - 1]] = self.loo.entry[mine]
        tie: I64 | None = None
        if width >= 9999:  # x can tie only then: rank the docids in byte order
            order = np.argsort(d[first], kind="stable")
            tie = np.empty(ndocs, dtype=np.int64)
            tie[order] = np.arange(ndocs)
        topic = _Topic(ids, ndocs, entry, tie, self._kinds_of(entry))
        self._topic_cache[t] = topic
        return topic

    def _cells_of(self, t: int) -> I64:
        """Indices of topic ``t``'s retrieved-and-judged cells, in their stored order. Grouped
        once for every topic: selecting them with a mask over all cells per topic made the
        estimators' cost grow with the square of the topics."""
        if self._cells_by_topic is None:
            topic_of = self.loo.cell % len(self.loo.topics)
            order = np.argsort(topic_of, kind="stable")
            bounds = np.searchsorted(topic_of[order], np.arange(len(self.loo.topics) + 1))
            self._cells_by_topic = (order, bounds)
        order, bounds = self._cells_by_topic
        return order[bounds[t] : bounds[t + 1]]

    def _kinds_of(self, entry: I64) -> npt.NDArray[np.uint8]:
        """``_Topic.kind`` for documents with judgments ``entry`` (-1: none)."""
        e = np.where(entry >= 0, entry, 0)
        judged = entry >= 0
        g = self.loo.e_grade[e]
        code = (judged & (g >= self.loo.level)) | ((judged & (g >= 0) & (g < self.loo.level)) << 1)
        owner = np.where(judged, self.loo.e_owner[e], -1)
        kind = np.repeat(code.astype(np.uint8)[None, :], self.nu + 1, axis=0)
        mine = owner >= 0
        kind[owner[mine], np.flatnonzero(mine)] = 0  # gone from the pool without its owner
        return kind

    def _top_counts(self, n: int) -> tuple[I64, I64]:
        """Relevant and judged non-relevant judgments in each run's top n, per (run, topic,
        owner unit) with one more owner slot for judgments no single unit owns."""
        nt, nr, nu = len(self.loo.topics), len(self.loo.runs), self.nu
        sel = self.loo.pos <= n
        own = self.loo.e_owner[self.loo.entry[sel]]
        own = np.where(own >= 0, own, nu)
        code = self.loo.cell[sel] * (nu + 1) + own
        g = self.loo.row_grade[sel]
        size = nr * nt * (nu + 1)
        rel = np.bincount(code[g >= self.loo.level], minlength=size).reshape(nr, nt, nu + 1)
        non = np.bincount(code[(g >= 0) & (g < self.loo.level)], minlength=size)
        return rel, non.reshape(nr, nt, nu + 1)

    def _lipani_deltas(self, n: int) -> tuple[F64, F64, Bool]:
        """dS and dA per (pooled run p, run r, topic) for P@n, each r scored on the pool without
        its unit; and which pairs are in r's pool (p pooled, not of r's unit)."""
        if n in self._lipani_cache:
            return self._lipani_cache[n]
        nt, nr = len(self.loo.topics), len(self.loo.runs)
        pooled_idx = np.flatnonzero(self.loo.unit >= 0)
        npool = pooled_idx.size
        ru = self.loo.unit
        in_pool = ru[pooled_idx][:, None] != ru[None, :]  # (pooled p, r)
        pp_all = np.repeat(pooled_idx, nr)
        rr_all = np.tile(np.arange(nr), npool)
        mask = in_pool.reshape(-1)
        pp, rr = pp_all[mask], rr_all[mask]
        gr = ru[rr]  # the unit left out for r (-1: r not pooled, nothing left out)
        rel_c, non_c = self._top_counts(n)
        ds = np.zeros((npool, nr, nt))
        da = np.zeros((npool, nr, nt))
        pi_of = np.full(nr, -1, dtype=np.int64)
        pi_of[pooled_idx] = np.arange(npool)
        gslot = np.where(gr >= 0, gr, self.nu)
        own_rel = np.where(gr >= 0, rel_c[pp, :, gslot].T, 0)  # (topics, pairs)
        own_non = np.where(gr >= 0, non_c[pp, :, gslot].T, 0)
        tot_rel = rel_c.sum(axis=2)
        tot_non = non_c.sum(axis=2)
        for t in range(nt):
            rel_pr, non_pr = self._topic(t).counts(pp, rr, n, gslot)
            # p's own top n on the same qrels (r's unit removed)
            rel_p = tot_rel[pp, t] - own_rel[t]
            non_p = tot_non[pp, t] - own_non[t]
            ds[pi_of[pp], rr, t] = (rel_pr - rel_p) / n
            da[pi_of[pp], rr, t] = (non_pr - non_p) / n
        out = (ds, da, in_pool)
        self._lipani_cache[n] = out
        return out

    def _own_precision(self, n: int) -> tuple[F64, F64]:
        """P@n and anti-P@n per (run, topic), each run on the pool without its own unit (the
        full pool for runs not pooled)."""
        rel_c, non_c = self._top_counts(n)
        nr = len(self.loo.runs)
        u = self.loo.unit
        rel = rel_c.sum(axis=2).astype(np.float64)
        non = non_c.sum(axis=2).astype(np.float64)
        has = u >= 0
        idx = np.flatnonzero(has)
        rel[idx] -= rel_c[idx, :, u[idx]]
        non[idx] -= non_c[idx, :, u[idx]]
        assert rel.shape[0] == nr
        return rel / n, non / n

    def _lipani_topic(self, n: int) -> tuple[F64, F64, F64, F64]:
        """Per (run, topic): P@n s, the correction, and the interval ends of the correction.

        correction = k * max(DK, 0) if DS a - DA s > 0 else 0, DS, DA, DK the means over r's
        pool of the per-topic changes (lipani2016's per-topic form)."""
        ds, da, in_pool = self._lipani_deltas(n)
        s, a = self._own_precision(n)
        w = in_pool[:, :, None].astype(np.float64)
        cnt = in_pool.sum(axis=0).astype(np.float64)[:, None]  # (r, 1)
        with np.errstate(invalid="ignore", divide="ignore"):
            mds = (ds * w).sum(axis=0) / cnt
            mda = (da * w).sum(axis=0) / cnt
            dk = -ds - da
            mdk = -mds - mda
            var = (((dk - mdk[None]) ** 2) * w).sum(axis=0) / (cnt - 1.0)
        k = 1.0 - s - a
        lam = mds * a - mda * s
        corr = np.where(lam > 0, k * np.maximum(mdk, 0.0), 0.0)
        half = _t_half(
            np.sqrt(np.maximum(np.nan_to_num(var), 0.0)),
            np.repeat(cnt, ds.shape[2], 1).astype(np.int64),
        )
        lo = np.where(lam > 0, k * np.maximum(mdk - half, 0.0), 0.0)
        hi = np.where(lam > 0, k * np.maximum(mdk + half, 0.0), 0.0)
        corr = np.where(cnt > 0, corr, np.nan)
        return s, corr, lo, hi

    def _lipani2015(self, n: int, counted: Bool) -> tuple[F64, F64, F64]:
        """Aggregate estimate per run (lipani2015), with its interval ends."""
        ds, da, in_pool = self._lipani_deltas(n)
        s_t, a_t = self._own_precision(n)
        c = counted.astype(np.float64)
        nt_r = c.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            s = (s_t * c).sum(axis=1) / nt_r
            a = (a_t * c).sum(axis=1) / nt_r
            dsp = (ds * c[None]).sum(axis=2) / nt_r[None]  # (p, r): over r's topics
            dap = (da * c[None]).sum(axis=2) / nt_r[None]
            w = in_pool.astype(np.float64)
            cnt = w.sum(axis=0)
            mds = np.nansum(dsp * w, axis=0) / cnt
            mda = np.nansum(dap * w, axis=0) / cnt
            mdk = -mds - mda
            dk = -dsp - dap
            var = np.nansum(((dk - mdk[None]) ** 2) * w, axis=0) / (cnt - 1.0)
        k = 1.0 - s - a
        lam = mds * a - mda * s
        pos = lam > 0
        est = s + np.where(pos, k * np.maximum(mdk, 0.0), 0.0)
        half = _t_half(np.sqrt(np.maximum(np.nan_to_num(var), 0.0)), cnt.astype(np.int64))
        lo = s + np.where(pos, k * np.maximum(mdk - half, 0.0), 0.0)
        hi = s + np.where(pos, k * np.maximum(mdk + half, 0.0), 0.0)
        bad = (cnt == 0) | (nt_r == 0)
        est[bad] = np.nan
        return est, lo, hi

    def _lipani2016(self, m: Measure, counted: Bool, rel_count: I64) -> tuple[F64, F64, F64]:
        """Per-topic estimate averaged (lipani2016), with interval ends."""
        assert m.cutoff is not None
        n = int(m.cutoff)
        s, corr, lo, hi = self._lipani_topic(n)
        if m.family == "P":
            per, plo, phi = s + corr, s + lo, s + hi
        else:
            d = self.loo.depth
            _, cd, lod, hid = self._lipani_topic(d)
            big_r = rel_count.astype(np.float64)
            extra = max(d - n, 0)

            def rec(c_n: F64, c_d: F64) -> F64:
                num = n * s + n * c_n
                den = big_r + n * c_n + extra * c_d
                out = np.zeros(num.shape)
                np.divide(num, den, out=out, where=(big_r > 0) & (den > 0))
                return np.where(np.isnan(c_n), np.nan, out)

            per, plo, phi = rec(corr, cd), rec(lo, lod), rec(hi, hid)
        return self._means(per, counted), self._means(plo, counted), self._means(phi, counted)

    # -- the report ----------------------------------------------------------------------------
    def report(
        self, measure: str | Measure, *, estimators: Sequence[str] = ALL, top75: bool = False
    ) -> EstimatorReport:
        """The estimators and their validation for one measure (see the module docstring)."""
        m = measure if isinstance(measure, Measure) else parse_measure(measure)
        if m.family not in FAMILIES:
            raise ValueError(
                f"{m.name}: the estimators are defined for {', '.join(FAMILIES)} (with their "
                "cutoffs where they take one)"
            )
        unknown = [e for e in estimators if e not in ALL]
        if unknown:
            raise ValueError(f"unknown estimator(s) {', '.join(unknown)}; known: {', '.join(ALL)}")
        names = tuple(e for e in ALL if e in estimators)
        if len(self.loo.unit_names) < 2:
            raise ValueError(
                "the estimators' validation needs at least 2 pooled units (leaving the only "
                "one out empties the pool)"
            )
        return _Harness(self, m, names, top75=top75).run()


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


class _Harness:
    """One measure's estimates: the leave-one-unit-out validation and the non-pooled runs."""

    def __init__(
        self, a: EstimatorAnalysis, m: Measure, names: tuple[str, ...], *, top75: bool
    ) -> None:
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
        full_score = a._means(full_vals, full_counted)
        pooled = np.flatnonzero(a.loo.unit >= 0)
        est = {e: np.full(nr, np.nan) for e in self.active}
        score = np.full(nr, np.nan)
        # each run's own scenario (its unit left out; the full pool when it is not pooled)
        counted_r = full_counted.copy()
        rel_r = full.rel.copy()
        for g in range(len(a.loo.unit_names)):
            members = np.flatnonzero(a.loo.unit == g)
            sc = a._scenario(g, False, ideal)
            counted = a._counted(sc)
            counted_r[members] = counted[members]
            rel_r[members] = sc.rel[members]
            red = a._means(a._cell_values(m, sc), counted)
            score[members] = red[members]
            if "pool" in est:
                est["pool"][members] = red[members]
            if "webber_park" in est:
                nsc = a._scenario(g, True, ideal)
                nest = a._means(a._cell_values(m, nsc), a._counted(nsc))
                others = pooled[a.loo.unit[pooled] != g]
                d = red[others] - nest[others]
                d = d[np.isfinite(d)]
                est["webber_park"][members] = red[members] + (d.mean() if d.size else np.nan)
            for t in ("condensed", "upper"):
                if t in est:
                    v = a._means(a._cell_values(m, sc, t, only=a.loo.unit == g), counted)
                    est[t][members] = v[members]
        lip: dict[str, tuple[F64, F64, F64]] = {}
        if "lipani2015" in est:
            assert m.cutoff is not None
            lip["lipani2015"] = a._lipani2015(int(m.cutoff), counted_r)
        if "lipani2016" in est:
            lip["lipani2016"] = a._lipani2016(m, counted_r, rel_r)
        for e, (values, _, _) in lip.items():
            est[e][pooled] = values[pooled]
        errors = self._errors(full_score, full_vals, full_counted, est, pooled)
        runs_out: dict[str, dict[str, Any]] = {}
        for i in pooled.tolist():
            row: dict[str, Any] = {
                "unit": a.loo.unit_names[a.loo.unit[i]],
                "score": float(score[i]),
                "score_full_pool": float(full_score[i]),
            }
            for e in self.active:
                row[e] = float(est[e][i])
            runs_out[a.loo.tags[i]] = row
        deltas, not_pooled = self._not_pooled(full, full_score, full_counted, lip)
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
        )

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
        nest = a._means(a._cell_values(m, nsc), a._counted(nsc))
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
                extra[t] = a._means(a._cell_values(m, full, t), full_counted)
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


def estimator_report(
    qrels: Qrels,
    runs: Mapping[str, Run],
    measure: str | Measure,
    leave: LeaveOut | None = None,
    *,
    top75: bool = False,
    estimators: Sequence[str] = ALL,
) -> EstimatorReport:
    """Every estimator of the pooling penalty for ``measure``, validated on the pooled runs.

    ``leave`` defaults to leaving out groups (``LeaveOut(leave_out="group")``), which falls back
    to runs when ``groups`` is None. See the module docstring for the definitions. For several
    measures over the same runs prepare an :class:`EstimatorAnalysis` once and call
    :meth:`EstimatorAnalysis.report`.
    """
    leave = LeaveOut(leave_out="group") if leave is None else leave
    if leave.leave_out == "group" and leave.groups is None:
        leave = replace(leave, leave_out="run")
    analysis = EstimatorAnalysis(qrels, runs, leave)
    if not top75:
        return analysis.report(measure, estimators=estimators)
    keep, dropped = top75_pooled(analysis.loo, measure)
    runs2 = {t: r for t, r in runs.items() if t not in set(dropped)}
    sub = EstimatorAnalysis(qrels, runs2, replace(leave, pooled=keep))
    rep = sub.report(measure, estimators=estimators, top75=True)
    return EstimatorReport(**{**rep.__dict__, "dropped": tuple(dropped)})


def top75_pooled(analysis: LeaveOneOut, measure: str | Measure) -> tuple[list[str], list[str]]:
    """The best round(0.75 n) pooled runs by full-pool score (ties in the order given), and the
    others (the reference's get75TopLRuns)."""
    scores = analysis.scores(measure)
    pooled = list(analysis.pooled)
    ranked = sorted(pooled, key=lambda t: -scores[t] if math.isfinite(scores[t]) else math.inf)
    n = _java_round(0.75 * len(pooled))
    keep = set(ranked[:n])
    return [t for t in pooled if t in keep], [t for t in pooled if t not in keep]
