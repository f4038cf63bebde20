"""Judging a sample of the pool instead of all of it: which design, at which budget (issue 32,
point 4).

    .venv/bin/python benchmarks/sampled_validation.py [--reps 200] [--quick]
        [--collections robust03,medical] [--boot 30] [--boot-reps N] [--ppi-reps N]

The frame is the depth-100 pool of every run (Robust 2003 topics 601-650, 17 runs; TREC 2011
Medical, 34 topics, 127 runs); the truth is each run's AP and nDCG (trec_eval's, ``-c``) on the
*full official qrels*, whatever the frame holds (a relevant document outside the frame counts in
the truth and is invisible to every design; pool documents the qrels lack are non-relevant, as
trec_eval reads them). A budget is a share of the frame's (topic, document) pairs. Designs:

- ``depth-k``: the largest k whose depth-k pool fits the budget, judged in full; MAP and nDCG by
  the normal evaluator with unjudged documents non-relevant (deterministic: one repetition);
- ``strat A``: strata by best rank over the runs 1-10 at 100%, 11-30 at 25%, 31-100 at rate x;
  ``strat B``: 1-5 at 100%, 6-20 at x, 21-100 at x/4; x is fitted by bisection so that the
  sample (max(1, round(rate N)) of each topic's stratum of N documents, as the ``stratified``
  pooling strategy draws) is the largest not above the budget. When even x -> 0 is over budget
  every rate is scaled down by one factor instead (the table names the rates used).
  Scores: xinfAP and infNDCG as ``sample_eval.pl`` computes them (vectorised here; checked
  against :func:`metrics.measures.sample_eval.sample_eval` by the smoke test), and statAP with
  pi = m/N (a Horvitz-Thompson weight; the design is without replacement, which statAP's
  Poisson variance does not model);
- ``statAP``: AP-prior Poisson sampling (:mod:`metrics.pooling.statap_design`), an expected share
  of each topic's frame; statAP (:mod:`metrics.measures.statap`) and its interval;
- ``PPI``: the prediction-powered estimators of :mod:`metrics.sampling` as
  ``benchmarks/ppi_coverage.py`` runs them, at the same budget on the same frame: no automatic
  judge (a uniform sample, calibrated per pool-popularity group: "human+pool") and the simulated
  judge of the coverage benchmark (``CONFUSION``; stratified Neyman design with a 20% pilot).
  Their measures are PPI's own: AP over the frame with each ranking cut at depth 100, and
  nDCG@10; RMSE and the first coverage column compare them with the same full-qrels truth, the
  "frame truth" column with their own full-judgment value on the frame.

Intervals (95%): statAP's is statMAP +- 1.96 sqrt(sum of the per-topic variances) / T (the
sampling error for these topics); xinfAP's is xinfAP +- 1.96 bootstrap standard errors, the
bootstrap within strata (Rao & Wu's rescaling bootstrap of each topic's stratum sample, which
keeps the finite-population correction: see ``_boot``; ``--boot`` replicates, on the first
``--boot-reps`` repetitions of each collection: each replicate is a full xinfAP pass), chosen
over a topic bootstrap because the target is the full-judgment MAP of *these* topics:
resampling topics would measure how topics differ, not the judging error. A topic without a
sampled relevant document scores 0 (statAP is undefined there). statAP is reported as the
script computes it and with its estimated ratio bias subtracted (``correct_bias``). Besides the
full qrels, coverage is also measured against the *frame truth*: AP with the qrels cut to the
frame, the best a sample of the frame can estimate. ``SE / SD``: the intervals' standard error
over the estimates' spread across repetitions (below 1: intervals too short). Kendall tau-b and
tau_AP of the run ranking by MAP against the full-qrels ranking come from
:mod:`metrics.stats.rank`.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _runs import read_runs  # noqa: E402
from ppi_coverage import CONFUSION, simulated_judge  # noqa: E402

from metrics import Evaluator, Qrels, read_qrels  # noqa: E402
from metrics.measures.ebap import eb_counts, ebap_from_statap  # noqa: E402
from metrics.measures.sample_eval import EPS_REL, EPS_SAMPLED, _ideal_dcg  # noqa: E402
from metrics.measures.statap import Z95, statap_ragged  # noqa: E402
from metrics.pooling.statap_design import ap_prior, inclusion_probabilities  # noqa: E402
from metrics.stats.rank import kendall_tau_b, tau_ap  # noqa: E402

DATA = Path(os.environ.get("POOLJUDGE_SHARED_DATA") or ROOT.parent / "shared" / "data")
DEPTH, CUT = 100, 1000
CHUNK = 20  # repetitions drawn at once (memory: CHUNK x pool items)
BUDGETS = (0.10, 0.20, 0.30)
COLLECTIONS = {
    "robust03": ("robust03", "Robust 2003", [str(q) for q in range(601, 651)]),
    "medical": ("trec2011-medical", "TREC 2011 Medical", None),
}
# repetitions given the costly parts (an xinfAP bootstrap interval, the PPI estimators): an
# xinfAP pass takes 0.03 s on Robust 2003 and 0.25 s on TREC 2011 Medical, a PPI estimate 0.1 s
# and 3 s
SLOW_PARTS = {"robust03": (50, 100), "medical": (12, 25)}
STRAT = {  # (depth, rate or None: fitted x, or a multiple of it)
    "strat A": ((10, 1.0), (30, 0.25), (100, None)),
    "strat B": ((5, 1.0), (20, None), (100, 0.25)),
}


@dataclass
class Data:
    label: str
    tags: list[str]
    topics: list[str]
    item_topic: np.ndarray  # pool items, topic by topic
    item_grade: np.ndarray  # official grade, 0 where the qrels lack it
    item_best: np.ndarray  # best rank over the runs (<= DEPTH)
    docids: list[str]
    e_item: np.ndarray  # per (run, topic) segment: pooled documents in the run's top CUT
    e_rank: np.ndarray
    e_starts: np.ndarray
    a_pos: np.ndarray  # per segment: relevant pooled documents retrieved (index into e_*)
    a_starts: np.ndarray
    e_seg: np.ndarray  # each entry's segment
    a_seg: np.ndarray  # each relevant entry's segment
    truth: dict[str, np.ndarray]  # "AP", "nDCG": (runs, topics)
    runs: dict[str, Any]
    qrels: Qrels
    ranked: dict[str, dict[str, list[str]]]
    seen_cache: dict[tuple[int, int], list[np.ndarray]] = field(default_factory=dict)


def load(key: str) -> Data:
    name, label, topics = COLLECTIONS[key]
    root = DATA / name
    runs = read_runs(root)
    qrels = read_qrels(root / "qrels.txt")
    if topics is None:
        topics = sorted(qrels.qids, key=lambda q: (len(q), q))
    qset = set(topics)
    qrels = Qrels.from_dict({q: g for q, g in qrels.to_dict().items() if q in qset})
    tags = sorted(runs)
    ranked = {t: {q: runs[t].ranking(q) for q in topics} for t in tags}
    item_topic: list[int] = []
    item_grade: list[int] = []
    item_best: list[int] = []
    docids: list[str] = []
    index: dict[tuple[int, str], int] = {}
    for ti, q in enumerate(topics):
        judged = qrels.judgments(q)
        best: dict[str, int] = {}
        for t in tags:
            for r, d in enumerate(ranked[t][q][:DEPTH], 1):
                best[d] = min(best.get(d, r), r)
        for d in sorted(best, key=lambda d: (best[d], d)):
            index[(ti, d)] = len(docids)
            docids.append(d)
            item_topic.append(ti)
            item_grade.append(max(0, judged.get(d, 0)))
            item_best.append(best[d])
    grade = np.array(item_grade)
    e_item: list[int] = []
    e_rank: list[int] = []
    e_starts, a_pos, a_starts = [0], [], [0]
    for t in tags:
        for ti, q in enumerate(topics):
            for r, d in enumerate(ranked[t][q][:CUT], 1):
                i = index.get((ti, d))
                if i is not None:
                    if grade[i] > 0:
                        a_pos.append(len(e_item))
                    e_item.append(i)
                    e_rank.append(r)
            e_starts.append(len(e_item))
            a_starts.append(len(a_pos))
    ev = Evaluator(qrels, ["AP", "nDCG", "nDCG@10"], compat="trec_eval", complete=True, ci=None)
    frame: dict[str, dict[str, int]] = {}
    for i, d in enumerate(docids):
        frame.setdefault(topics[item_topic[i]], {})[d] = item_grade[i]
    ev_frame = Evaluator(Qrels.from_dict(frame), ["AP"], compat="trec_eval", complete=True, ci=None)
    truth = {m: np.zeros((len(tags), len(topics))) for m in ("AP", "nDCG", "nDCG@10", "AP frame")}
    for ri, t in enumerate(tags):
        res = ev.evaluate(runs[t])
        for m in ("AP", "nDCG", "nDCG@10"):
            truth[m][ri] = [res.per_query[m].get(q, 0.0) for q in topics]
        res = ev_frame.evaluate(runs[t])
        truth["AP frame"][ri] = [res.per_query["AP"].get(q, 0.0) for q in topics]
    return Data(
        label,
        tags,
        topics,
        np.array(item_topic),
        grade,
        np.array(item_best),
        docids,
        np.array(e_item),
        np.array(e_rank, dtype=np.float64),
        np.array(e_starts),
        np.array(a_pos, dtype=np.int64),
        np.array(a_starts),
        np.repeat(np.arange(len(e_starts) - 1), np.diff(e_starts)),
        np.repeat(np.arange(len(a_starts) - 1), np.diff(a_starts)),
        truth,
        runs,
        qrels,
        ranked,
    )


# -- designs ---------------------------------------------------------------------------------------


def strata_sizes(d: Data, depths: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Each item's stratum (0..C-1) and each (topic, stratum) group's size."""
    stratum = np.searchsorted(np.array(depths), d.item_best)
    group = d.item_topic * len(depths) + stratum
    return stratum, np.bincount(group, minlength=len(d.topics) * len(depths))


def fit_rates(d: Data, spec: tuple[tuple[int, float | None], ...], budget: int) -> list[float]:
    depths = tuple(x for x, _ in spec)
    _, sizes = strata_sizes(d, depths)
    sizes = sizes.reshape(len(d.topics), len(depths))

    def used(rates: list[float]) -> int:
        m = np.where(sizes > 0, np.maximum(1, np.round(np.array(rates) * sizes)), 0)
        return int(np.minimum(m, sizes).sum())

    free = next(i for i, (_, r) in enumerate(spec) if r is None)

    def rates_at(x: float) -> list[float]:  # the free rate x; a fixed rate below it is x's share
        out = []
        for i, (_, r) in enumerate(spec):
            out.append(x if i == free else (r if i < free else r * x) if r is not None else x)
        return out

    def bisect(f: Any, lo: float, hi: float) -> float:
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if used(f(mid)) <= budget else (lo, mid)
        return lo

    if used(rates_at(1e-9)) <= budget:
        return rates_at(bisect(rates_at, 1e-9, 1.0))
    base = rates_at(0.02)  # over budget with x -> 0: scale every rate by one factor
    lam = bisect(lambda s: [min(1.0, s * r) for r in base], 1e-6, 1.0)
    return [min(1.0, lam * r) for r in base]


def depth_k(d: Data, budget: int) -> int:
    k = 0
    for k_try in range(1, DEPTH + 1):
        if int((d.item_best <= k_try).sum()) > budget:
            break
        k = k_try
    return k


def depth_k_scores(d: Data, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Each run's MAP and mean nDCG by the normal evaluator (trec_eval's, ``-c``) on the qrels of
    the depth-k pool, documents outside it unjudged (non-relevant)."""
    judged: dict[str, dict[str, int]] = {}
    for i in np.flatnonzero(d.item_best <= k):
        judged.setdefault(d.topics[d.item_topic[i]], {})[d.docids[i]] = int(d.item_grade[i])
    ev = Evaluator(
        Qrels.from_dict(judged), ["AP", "nDCG"], compat="trec_eval", complete=True, ci=None
    )
    out = np.zeros((2, len(d.tags)))
    for r, t in enumerate(d.tags):
        res = ev.evaluate(d.runs[t])
        for m, name in enumerate(("AP", "nDCG")):
            out[m, r] = np.mean([res.per_query[name].get(q, 0.0) for q in d.topics])
    return out[0], out[1]


def stratified_draw(rng: np.random.Generator, group: np.ndarray, m: np.ndarray, reps: int):
    """``reps`` samples of m[g] items without replacement from each group g (items in group
    order): (reps, items) booleans."""
    starts = np.concatenate([[0], np.cumsum(np.bincount(group, minlength=m.size))])
    pos = np.arange(group.size) - starts[group]
    keys = group[None, :] + rng.random((reps, group.size))
    order = np.argsort(keys, axis=1)
    out = np.zeros((reps, group.size), dtype=bool)
    rows = np.arange(reps)[:, None]
    out[rows, order] = pos[None, :] < m[group][None, :]
    return out


# -- estimators ------------------------------------------------------------------------------------


def _seg_cumsum(x: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    c = np.concatenate([np.zeros((*x.shape[:-1], 1)), np.cumsum(x, axis=-1)], axis=-1)
    return c[..., :-1] - np.repeat(c[..., starts[:-1]], np.diff(starts), axis=-1), (
        c[..., starts[1:]] - c[..., starts[:-1]]
    )


def xinf(d: Data, mult: np.ndarray, stratum: np.ndarray, n_strata: int):
    """xinfAP and infNDCG of every (run, topic) as ``sample_eval.pl`` computes them; ``mult``:
    each item's multiplicity in the sample (0 unsampled, 1 sampled; more in a bootstrap)."""
    T, S = len(d.topics), d.e_starts.size - 1
    g_item = d.item_topic * n_strata + stratum
    pooled = np.bincount(g_item, minlength=T * n_strata).astype(float)
    sampled = np.bincount(g_item, weights=mult, minlength=T * n_strata)
    rel_w = mult * (d.item_grade > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(sampled > 0, pooled / sampled, 0.0)
    r_est = np.bincount(d.item_topic, weights=rel_w * scale[g_item], minlength=T)
    # the ideal DCG from the estimated count per grade, summed stratum by stratum as
    # c * pooled / sampled (the script's order: a count of x.5 must round as it does)
    per_grade = {
        g: np.bincount(g_item, weights=mult * (d.item_grade == g), minlength=T * n_strata)
        for g in range(1, int(d.item_grade.max()) + 1)
    }
    gains = np.zeros(T)
    for t in range(T):
        by_grade: dict[int, float] = {}
        for g, cnt in per_grade.items():
            total = 0.0
            for k in range(t * n_strata, (t + 1) * n_strata):
                if cnt[k] > 0:
                    total += cnt[k] * pooled[k] / sampled[k]
            if total > 0:
                by_grade[g] = total
        gains[t] = _ideal_dcg(by_grade, CUT)
    # the counts above each relevant entry, per stratum: one cumulative sum over all entries,
    # read at the relevant entries only (8% of them) and at their segment's start
    e_st = stratum[d.e_item]
    e_m = mult[d.e_item]
    a_items = d.e_item[d.a_pos]
    a_st = e_st[d.a_pos]
    a_m = mult[a_items]
    a_first = d.e_starts[d.a_seg]

    def above_each(x: np.ndarray, pos: np.ndarray, first: np.ndarray) -> np.ndarray:
        c = np.concatenate([[0.0], np.cumsum(x)])
        return c[pos] - c[first]

    key = (n_strata, hash(stratum.tobytes()))
    if key not in d.seen_cache:  # pooled documents above, per stratum: fixed by the design
        d.seen_cache[key] = [
            above_each((e_st == c).astype(float), d.a_pos, a_first) for c in range(n_strata)
        ]
    seen_all = d.seen_cache[key]
    a_pos_in_a = np.arange(d.a_pos.size)
    a_first_in_a = d.a_starts[d.a_seg]
    above = np.zeros(d.a_pos.size)
    for c in range(n_strata):
        ss = above_each(np.where(e_st == c, e_m, 0.0), d.a_pos, a_first)
        # relevant sampled above: only relevant entries count, so sum over those alone
        sr = above_each(np.where(a_st == c, a_m, 0.0), a_pos_in_a, a_first_in_a)
        above += seen_all[c] * (sr + EPS_REL) / (ss + EPS_SAMPLED)
    a_rank = d.e_rank[d.a_pos]
    prec = (1.0 + above) / a_rank
    a_scale = scale[d.item_topic[a_items] * n_strata + a_st]
    num = np.bincount(d.a_seg, weights=a_m * prec * a_scale, minlength=S)
    r_seg = r_est[np.arange(S) % T]
    with np.errstate(divide="ignore", invalid="ignore"):
        ap = np.where(r_seg > 0, num / r_seg, 0.0)
        gsc = d.e_seg * n_strata + e_st
        seen_f = np.bincount(gsc, minlength=S * n_strata)
        ss_f = np.bincount(gsc, weights=e_m, minlength=S * n_strata)
        a_gain = a_m * d.item_grade[a_items] / np.log2(a_rank + 1)
        gain = np.bincount(d.a_seg * n_strata + a_st, weights=a_gain, minlength=S * n_strata)
        dcg = np.where(ss_f > 0, seen_f * gain / ss_f, 0.0).reshape(S, n_strata).sum(axis=1)
        ideal = gains[np.arange(S) % T]
        ndcg = np.where(ideal > 0, dcg / ideal, 0.0)
    R = len(d.tags)
    return ap.reshape(R, T), ndcg.reshape(R, T)


def statap_batch(d: Data, sampled: np.ndarray, pi: np.ndarray):
    """statAP and its variance for every (rep, run, topic): ``sampled`` (reps, items)."""
    T, R = len(d.topics), len(d.tags)
    rel = d.item_grade > 0
    w_item = np.where(sampled & rel, 1.0 / pi, 0.0)
    r_hat = np.stack([np.bincount(d.item_topic, weights=w, minlength=T) for w in w_item])
    q = np.stack([np.bincount(d.item_topic, weights=w * w - w, minlength=T) for w in w_item])
    items = d.e_item[d.a_pos]
    ap, var, bias = statap_ragged(
        d.e_rank[d.a_pos], d.a_starts, w_item[:, items], np.tile(r_hat, R), np.tile(q, R)
    )
    bad = ~np.isfinite(ap)
    ap[bad], var[bad], bias[bad] = 0.0, 0.0, 0.0
    return ap.reshape(-1, R, T), var.reshape(-1, R, T), bias.reshape(-1, R, T)


# -- the experiment --------------------------------------------------------------------------------


class Acc:
    """Per estimator: MAP and nDCG per repetition and run, intervals, taus."""

    def __init__(self, ndcg_key: str = "nDCG") -> None:
        self.ndcg_key = ndcg_key  # the truth the nDCG estimates are compared with
        self.map: list[np.ndarray] = []
        self.ndcg: list[np.ndarray] = []
        self.cov: list[np.ndarray] = []
        self.cov_frame: list[np.ndarray] = []
        self.width: list[np.ndarray] = []
        self.tau: list[float] = []
        self.tau_ap: list[float] = []
        self.size: list[float] = []

    def add(self, d: Data, map_: np.ndarray, ndcg: np.ndarray | None, size: float) -> None:
        self.map.append(map_)
        if ndcg is not None:
            self.ndcg.append(ndcg)
        truth = dict(zip(d.tags, d.truth["AP"].mean(axis=1).tolist(), strict=True))
        est = dict(zip(d.tags, map_.tolist(), strict=True))
        self.tau.append(kendall_tau_b(truth, est))
        self.tau_ap.append(tau_ap(truth, est))
        self.size.append(size)

    def interval(
        self, d: Data, lo: np.ndarray, hi: np.ndarray, own: np.ndarray | None = None
    ) -> None:
        """Coverage of the full-qrels MAP, and of the frame's (or the estimator's ``own``
        full-judgment target: PPI's AP is over the frame, each ranking cut at depth 100)."""
        frame = d.truth["AP frame"].mean(axis=1) if own is None else own
        for acc, truth in ((self.cov, d.truth["AP"].mean(axis=1)), (self.cov_frame, frame)):
            acc.append((lo <= truth + 1e-12) & (truth - 1e-12 <= hi))
        self.width.append(hi - lo)


def run_collection(d: Data, reps: int, boot: int, boot_reps: int, ppi_reps: int, out: Any):
    true_map = d.truth["AP"].mean(axis=1)
    n_items = d.item_topic.size
    rows = []
    for share in BUDGETS:
        budget = int(share * n_items)
        t0 = time.time()
        accs: dict[str, Acc] = {}
        k = depth_k(d, budget)
        maps, ndcgs = depth_k_scores(d, k)
        name = f"depth-{k}"
        accs[name] = Acc()
        accs[name].add(d, maps, ndcgs, float((d.item_best <= k).sum()))
        # stratified designs: xinfAP/infNDCG (bootstrap within strata) and statAP (pi = m/N)
        rng = np.random.default_rng([int(share * 100), 1])
        for sname, spec in STRAT.items():
            rates = fit_rates(d, spec, budget)
            depths = tuple(x for x, _ in spec)
            stratum, sizes = strata_sizes(d, depths)
            group = d.item_topic * len(depths) + stratum
            rate_g = np.tile(rates, len(d.topics))
            m = np.where(sizes > 0, np.minimum(sizes, np.maximum(1, np.round(rate_g * sizes))), 0)
            pi = (m / np.maximum(sizes, 1))[group]
            label = f"{sname} (" + ", ".join(f"{r:.1%}" for r in rates) + ")"
            xa = accs.setdefault(f"{label} xinfAP", Acc())
            sa = _statap_accs(accs, label)
            ea = accs.setdefault(f"{label} ebAP", Acc())
            for first in range(0, reps, CHUNK):
                n = min(CHUNK, reps - first)
                draws = stratified_draw(rng, group, m.astype(np.int64), n)
                s_ap, s_var, s_bias = statap_batch(d, draws, pi)
                e_ap, e_var = ebap_batch(d, draws, pi, group, m, sizes, s_ap, s_var)
                for j in range(n):
                    mult = draws[j].astype(float)
                    ap, nd = xinf(d, mult, stratum, len(depths))
                    xa.add(d, ap.mean(axis=1), nd.mean(axis=1), float(mult.sum()))
                    if first + j < boot_reps:
                        lo, hi = _boot(
                            d,
                            rng,
                            draws[j],
                            group,
                            sizes,
                            stratum,
                            len(depths),
                            boot,
                            ap.mean(axis=1),
                        )
                        xa.interval(d, lo, hi)
                    _statap_rep(d, sa, s_ap[j], s_var[j], s_bias[j], float(mult.sum()))
                    _mean_interval(d, ea, e_ap[j], e_var[j], float(mult.sum()))
        # statAP's own design: AP-prior Poisson sampling
        pi = statap_pi(d, share)
        sa = _statap_accs(accs, "statAP design (AP prior)")
        for first in range(0, reps, CHUNK):
            draws = rng.random((min(CHUNK, reps - first), n_items)) < pi[None, :]
            s_ap, s_var, s_bias = statap_batch(d, draws, pi)
            for j in range(draws.shape[0]):
                _statap_rep(d, sa, s_ap[j], s_var[j], s_bias[j], float(draws[j].sum()))
        t_ppi = time.time()
        if ppi_reps > 0:
            ppi_rows(d, budget, ppi_reps, accs, true_map)
        t_ppi = time.time() - t_ppi
        el = time.time() - t0
        print(
            f"  {d.label}, budget {share:.0%} ({budget} pairs): {el:.1f} s (PPI {t_ppi:.1f} s)",
            file=out,
        )
        for name, a in accs.items():
            rows.append(_row(d, share, budget, name, a))
    return rows


def _boot(d, rng, drawn, group, sizes, stratum, n_strata, boot, centre):
    """A normal interval for each run's MAP, xinfAP +- 1.96 bootstrap SE, by Rao & Wu's (1988)
    rescaling bootstrap within strata: from a stratum's n sampled documents of N, n - 1 drawn
    with replacement, each document weighted 1 - l + l n/(n - 1) r (r: times drawn,
    l = sqrt(1 - n/N)), so that the replicates' spread carries the finite-population correction
    (a stratum judged in full gets l = 0: no sampling error) and the sample size is kept; xinfAP
    recomputed with the weights. A standard error needs far fewer replicates than percentiles."""
    bs = np.empty((boot, len(d.tags)))
    idx = np.flatnonzero(drawn)
    g = group[idx]
    order = np.argsort(g, kind="stable")
    idx, g = idx[order], g[order]
    n_g = np.bincount(g, minlength=sizes.size)
    n = n_g[g]
    lam = np.where(n >= 2, np.sqrt(np.maximum(0.0, 1.0 - n / np.maximum(sizes[g], 1))), 0.0)
    draws_of = np.repeat(np.arange(sizes.size), np.maximum(n_g - 1, 0))  # n - 1 draws a stratum
    starts = np.concatenate([[0], np.cumsum(n_g)])[draws_of]
    for b in range(boot):
        picks = starts + (rng.random(draws_of.size) * n_g[draws_of]).astype(np.int64)
        r = np.bincount(picks, minlength=idx.size)
        w = 1.0 - lam + lam * n / np.maximum(n - 1, 1) * r
        mult = np.zeros(drawn.size)
        mult[idx] = w
        bs[b] = xinf(d, mult, stratum, n_strata)[0].mean(axis=1)
    half = Z95 * bs.std(axis=0, ddof=1)
    return centre - half, centre + half


def ebap_batch(d: Data, sampled, pi, group, m, sizes, s_ap, s_var):
    """ebAP and its variance for every (rep, run, topic) of a stratified draw
    (:mod:`metrics.measures.ebap`), from statAP's."""
    T = len(d.topics)
    rel = d.item_grade > 0
    n_groups = sizes.size
    k = (
        np.stack([np.bincount(group, weights=s & rel, minlength=n_groups) for s in sampled])
        .reshape(len(sampled), T, -1)
        .astype(float)
    )
    shape = k.shape
    r_tilde, var_u = eb_counts(
        k,
        np.broadcast_to(m.reshape(T, -1), shape).astype(float),
        np.broadcast_to(sizes.reshape(T, -1), shape).astype(float),
    )
    w = np.where(sampled & rel, 1.0 / pi, 0.0)
    r_hat = np.stack([np.bincount(d.item_topic, weights=x, minlength=T) for x in w])
    ap = np.where(r_hat[:, None, :] > 0, s_ap, np.nan)  # statap_batch wrote 0 there
    return ebap_from_statap(
        ap, s_var, r_hat[:, None, :].astype(float), r_tilde[:, None, :], var_u[:, None, :]
    )


def _mean_interval(d: Data, acc: Acc, ap, var, size: float) -> None:
    """MAP over the topics and its 95% interval, clipped to [0, 1], from per-topic variances."""
    T = len(d.topics)
    m = ap.mean(axis=1)
    half = Z95 * np.sqrt(np.maximum(var.sum(axis=1), 0.0)) / T
    acc.add(d, m, None, size)
    acc.interval(d, np.maximum(m - half, 0.0), np.minimum(m + half, 1.0))


def _statap_accs(accs: dict[str, Acc], label: str) -> tuple[Acc, Acc]:
    return (
        accs.setdefault(f"{label} statAP", Acc()),
        accs.setdefault(f"{label} statAP, bias-corrected", Acc()),
    )


def _statap_rep(d: Data, pair: tuple[Acc, Acc], ap, var, bias, size: float) -> None:
    T = len(d.topics)
    half = Z95 * np.sqrt(np.maximum(var.sum(axis=1), 0.0)) / T
    for acc, est in zip(pair, (ap, ap - bias), strict=True):
        m = est.mean(axis=1)
        acc.add(d, m, None, size)
        acc.interval(d, m - half, m + half)


def statap_pi(d: Data, share: float) -> np.ndarray:
    pi = np.zeros(d.item_topic.size)
    for ti, q in enumerate(d.topics):
        sel = np.flatnonzero(d.item_topic == ti)
        prior = ap_prior({t: d.ranked[t][q] for t in d.tags}, depth=DEPTH)
        w = [prior[d.docids[i]] for i in sel]
        pi[sel] = inclusion_probabilities(w, share * sel.size)
    return pi


def ppi_rows(d: Data, budget: int, reps: int, accs: dict[str, Acc], true_map: np.ndarray) -> None:
    from metrics.sampling.designs import Design, pilot, sample
    from metrics.sampling.structure import PoolStructure

    pool = {
        q: [d.docids[i] for i in np.flatnonzero(d.item_topic == ti)]
        for ti, q in enumerate(d.topics)
    }
    ranked = {t: {q: d.ranked[t][q][:DEPTH] for q in d.topics} for t in d.tags}
    st = PoolStructure(ranked, pool, measures=("AP", "nDCG@10"))
    where = {(d.topics[d.item_topic[i]], d.docids[i]): i for i in range(d.item_topic.size)}
    grades = d.item_grade[[where[it] for it in st.items]].astype(np.int64)
    pop = st.popularity()
    zero = np.zeros(st.n_items, dtype=np.int64)
    order = [st.run_names.index(t) for t in d.tags]
    own = st.values(grades)[order, 0]  # PPI's AP with every frame document judged
    rng = np.random.default_rng(4321)
    for name in ("PPI, no judge (human+pool)", "PPI, simulated judge (stratified Neyman)"):
        acc = accs.setdefault(name, Acc("nDCG@10"))
        for rep in range(reps):
            if name.startswith("PPI, no"):
                s = sample(zero, Design("uniform", budget, seed=100000 + rep), pilot_share=0.2)
                a, kind = zero, "uniform"
            else:
                design = Design("stratified", budget, seed=rep, allocation="neyman")
                p_idx = pilot(zero, design, pilot_share=0.2)
                a = simulated_judge(grades, np.random.default_rng(rng.integers(1 << 31)))
                s = sample(a, design, pilot_grades=grades[p_idx])
                kind = "stratified"
            est = st.estimate(
                a,
                grades,
                s.sampled,
                s.pi,
                design=kind,
                strata=s.strata,
                covariance=True,
                groups=pop,
                auto_value=False,
            )
            lo, hi = est.interval()
            acc.add(d, est.value[order, 0], est.value[order, 1], float(budget))
            acc.interval(d, lo[order, 0], hi[order, 0], own)


def _row(d: Data, share: float, budget: int, name: str, a: Acc) -> dict[str, Any]:
    true_map = d.truth["AP"].mean(axis=1)
    maps = np.array(a.map)
    rmse_map = float(np.sqrt(np.mean((maps - true_map[None, :]) ** 2)))
    rmse_ndcg = math.nan
    if a.ndcg:
        nd = np.array(a.ndcg)
        truth_nd = d.truth[a.ndcg_key].mean(axis=1)
        rmse_ndcg = float(np.sqrt(np.mean((nd - truth_nd[None, :]) ** 2)))
    cov = np.array(a.cov) if a.cov else None
    return {
        "collection": d.label,
        "budget": f"{share:.0%} ({budget})",
        "estimator": name,
        "reps": len(a.map),
        "judged": float(np.mean(a.size)),
        "tau": float(np.mean(a.tau)),
        "tau_ap": float(np.mean(a.tau_ap)),
        "rmse_map": rmse_map,
        "rmse_ndcg": rmse_ndcg,
        "coverage": float(cov.mean()) if cov is not None else math.nan,
        "cov_frame": float(np.mean(a.cov_frame)) if a.cov_frame else math.nan,
        "worst": float(cov.mean(axis=0).min()) if cov is not None else math.nan,
        "width": float(np.mean(a.width)) if a.width else math.nan,
        # the intervals' standard error (half-width / 1.96) over the estimates' spread across
        # repetitions, per run, averaged: below 1, the intervals are too short
        "se_sd": float(np.mean(np.mean(a.width, axis=0) / (2 * Z95) / maps.std(axis=0)))
        if a.width and len(a.map) > 2
        else math.nan,
        "n_cov": int(cov.shape[0]) if cov is not None else 0,
    }


def table(rows: list[dict[str, Any]], out: Any) -> None:
    print(
        "\n| collection | budget (pairs) | design, estimator | reps | judged (mean) | tau-b "
        "| tau_AP | RMSE MAP | RMSE nDCG | MAP coverage (worst run) | MAP width "
        "| SE / SD | coverage, frame truth |",
        file=out,
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|", file=out)
    for r in rows:

        def f(x: float, p: int = 4) -> str:
            return "-" if x != x else f"{x:.{p}f}"

        cov = "-"
        if r["n_cov"]:
            flag = "" if r["coverage"] >= 0.93 else " **below 93%**"
            cov = f"{r['coverage']:.3f} ({r['worst']:.2f}, {r['n_cov']} reps){flag}"
        print(
            f"| {r['collection']} | {r['budget']} | {r['estimator']} | {r['reps']} | "
            f"{r['judged']:.0f} | {f(r['tau'], 3)} | {f(r['tau_ap'], 3)} | {f(r['rmse_map'])} | "
            f"{f(r['rmse_ndcg'])} | {cov} | {f(r['width'])} | {f(r['se_sd'], 2)} | "
            f"{f(r['cov_frame'], 3)} |",
            file=out,
        )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--reps", type=int, help="repetitions (default 200; 5 with --quick)")
    p.add_argument(
        "--quick", action="store_true", help="a smoke run: 5 repetitions, 1 bootstrap, 1 PPI"
    )
    p.add_argument("--collections", default="robust03,medical")
    p.add_argument("--boot", type=int, default=30, help="bootstrap replicates per interval")
    p.add_argument(
        "--boot-reps",
        type=int,
        help="repetitions given an xinfAP interval (default: per collection)",
    )
    p.add_argument("--ppi-reps", type=int, help="PPI repetitions (default: per collection)")
    args = p.parse_args(argv)
    reps = args.reps if args.reps is not None else 5 if args.quick else 200
    boot = 5 if args.quick else args.boot
    out = sys.stdout
    t_all = time.time()
    print(
        f"repetitions {reps}; xinfAP bootstrap {boot} replicates; nominal level 95%; simulated "
        "judge P(auto | human) rows "
        + "; ".join(" ".join(f"{x:.2f}" for x in r) for r in CONFUSION),
        file=out,
    )
    rows = []
    for key in args.collections.split(","):
        t0 = time.time()
        d = load(key)
        print(
            f"\n{d.label}: {len(d.tags)} runs, {len(d.topics)} topics, {d.item_topic.size} frame "
            f"pairs, {int((d.item_grade > 0).sum())} relevant in the frame of "
            f"{sum(d.qrels.num_rel(q) for q in d.topics)} in the qrels; loaded in "
            f"{time.time() - t0:.1f} s",
            file=out,
        )
        boot_reps, ppi_reps = (1, 1) if args.quick else SLOW_PARTS[key]
        boot_reps = min(reps, boot_reps if args.boot_reps is None else args.boot_reps)
        ppi_reps = min(reps, ppi_reps if args.ppi_reps is None else args.ppi_reps)
        print(f"  xinfAP intervals on {boot_reps} repetitions, PPI {ppi_reps}", file=out)
        rows += run_collection(d, reps, boot, boot_reps, ppi_reps, out)
    table(rows, out)
    print(f"\ntotal {time.time() - t_all:.1f} s wall, one process", file=out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
