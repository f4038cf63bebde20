"""The estimators' validation on TREC 2011 Medical: metrics vs a straightforward pytrec_eval loop.

    .venv/bin/python benchmarks/bias_estimators_bench.py [--repeat 3] [--peer-repeat 1]
                                                         [--sizes 32,64,127] [--depth 10]

Both sides start from the same runs already read into memory (scores rounded to float32, as
pytrec_eval stores them; the files unmodified: the three NaN scores of one run ranked last, and
given to pytrec_eval as a value below every other score, its sort leaving NaN's place undefined) and
compute, for AP and P@10, leave one group out (groups from runs.tsv) over the first N runs (by tag)
with every run pooled at depth 10: every run's score on the pool without its group, on the full
pool, and every estimator (pool, webber_park, lipani2015 and lipani2016 for P@10, condensed, upper
for P@10), then MAE, SRE, SRE* and Kendall tau-b of each.

- "ours": :class:`metrics.bias.nested.EstimatorAnalysis` prepared once on fresh run objects
  (nothing cached), then ``report(measure)`` for both measures.
- "pytrec_eval loop": the straightforward method. Untimed preparation, in its favour: every run's
  ranking, top-10 lists and ``{qid: {docid: score}}`` dicts. Timed: the full pool and its
  restricted qrels (one ``RelevanceEvaluator`` scoring every run); then per left-out group g: the
  pool of the other groups, its qrels and evaluator (scores of every run on it), and for every
  other group h the pool without g and h, its qrels and evaluator scoring h's runs (Webber &
  Park's nested deltas); g's runs condensed (judged documents only) and evaluated; for the upper
  bound, per run of g, qrels with its unjudged top-10 documents made relevant and an evaluator;
  for Lipani's estimators, per run r of g and every run p of another group, p∘r built per topic
  (numpy per topic: r's rank of each of p's documents, the key x, a stable sort of p's documents
  taken in docid-descending order) and evaluated with P_10 on the reduced qrels and on their
  inverse (anti-precision); its top 10 only is handed to pytrec_eval (P@10 reads nothing else: a
  favour to the peer). The error measures with scipy (ttest_rel, kendalltau).

The script checks that both give the same estimates and errors (max abs difference printed,
asserted < 1e-9) and prints the median wall and CPU (process) time of the repetitions and the
ratios; the CPU figures are the steadier ones on a shared machine.
"""

from __future__ import annotations

import argparse
import csv
import functools
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytrec_eval
import scipy.stats

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _runs import pytrec_dict, read_runs  # noqa: E402

from metrics import Qrels, Run, read_qrels  # noqa: E402
from metrics.bias.leaveout import LeaveOut  # noqa: E402
from metrics.bias.nested import EstimatorAnalysis  # noqa: E402

DATA = Path(os.environ.get("POOLJUDGE_SHARED_DATA", ROOT.parent / "shared" / "data"))
MEASURES = {"AP": "map", "P@10": "P_10"}
N = 10  # P@10
Estimates = dict[str, dict[str, dict[str, float]]]  # measure -> run -> key -> value
Errors = dict[str, dict[str, dict[str, float]]]  # measure -> estimator -> figure -> value


def load(root: Path) -> tuple[Qrels, dict[str, Run], dict[str, str]]:
    qrels = read_qrels(root / "qrels.txt")
    runs = read_runs(root)  # unmodified (NaN scores ranked last)
    with (root / "runs.tsv").open() as f:
        groups = {row["run"]: row["group"] for row in csv.DictReader(f, delimiter="\t")}
    return qrels, runs, groups


def fresh(runs: dict[str, Run]) -> dict[str, Run]:
    """Copies without cached orderings or hashes, so ours pays for them."""
    return {t: Run(r.qids, r.offsets, r.docids, r.scores, r.tag) for t, r in runs.items()}


# --------------------------------------------------------------------------------------------
# ours


def ours(
    qrels: Qrels, runs: dict[str, Run], groups: dict[str, str], depth: int
) -> tuple[Estimates, Errors]:
    an = EstimatorAnalysis(qrels, runs, LeaveOut(depth=depth, leave_out="group", groups=groups))
    est: Estimates = {}
    err: Errors = {}
    for m in MEASURES:
        rep = an.report(m)
        est[m] = rep.runs
        err[m] = rep.errors
    return est, err


# --------------------------------------------------------------------------------------------
# the pytrec_eval loop


class Peer:
    """The straightforward computation (see the module docstring)."""

    def __init__(
        self,
        qrels: dict[str, dict[str, int]],
        rankings: dict[str, dict[str, list[str]]],
        dicts: dict[str, dict[str, dict[str, float]]],
        groups: dict[str, str],
        depth: int,
    ) -> None:
        self.qrels = qrels
        self.rankings = rankings
        self.dicts = dicts
        self.groups = groups
        self.depth = depth
        self.tags = list(dicts)
        self.units = list(dict.fromkeys(groups[t] for t in self.tags))

    def restricted(self, gone: set[str]) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        tags = [t for t in self.tags if self.groups[t] not in gone]
        for qid, judged in self.qrels.items():
            pool: set[str] = set()
            for t in tags:
                pool.update(self.rankings[t].get(qid, [])[: self.depth])
            kept = {d: g for d, g in judged.items() if d in pool}
            if kept:
                out[qid] = kept
        return out

    @staticmethod
    def mean(res: dict[str, dict[str, float]], name: str) -> float:
        return float(np.mean([v[name] for v in res.values()])) if res else math.nan

    def run(self) -> tuple[Estimates, Errors]:
        names = set(MEASURES.values())
        full_q = self.restricted(set())
        full_ev = pytrec_eval.RelevanceEvaluator(full_q, names)
        full = {t: full_ev.evaluate(self.dicts[t]) for t in self.tags}
        est: Estimates = {m: {} for m in MEASURES}
        # for building p∘r: each run's documents in docid-descending order with their ranks,
        # and each run's rank of every document it retrieved
        arrays: dict[str, dict[str, Any]] = {}
        for t, ranked in self.rankings.items():
            arrays[t] = {}
            for q, docs in ranked.items():
                a = np.array(docs, dtype=object)
                desc = np.argsort(a.astype(str))[::-1]
                arrays[t][q] = (a[desc], desc + 1.0)
        self.rank_of = {
            t: {q: {d: i + 1 for i, d in enumerate(docs)} for q, docs in ranked.items()}
            for t, ranked in self.rankings.items()
        }
        for g in self.units:
            members = [t for t in self.tags if self.groups[t] == g]
            others = [t for t in self.tags if self.groups[t] != g]
            qg = self.restricted({g})
            ev = pytrec_eval.RelevanceEvaluator(qg, names)
            red = {t: ev.evaluate(self.dicts[t]) for t in self.tags}
            nested: dict[str, dict[str, dict[str, float]]] = {}
            for h in self.units:
                if h == g:
                    continue
                evh = pytrec_eval.RelevanceEvaluator(self.restricted({g, h}), names)
                for p in (t for t in others if self.groups[t] == h):
                    nested[p] = evh.evaluate(self.dicts[p])
            inverse = {q: {d: 1 if x == 0 else 0 for d, x in j.items()} for q, j in qg.items()}
            ev_inv = pytrec_eval.RelevanceEvaluator(inverse, {"P_10"})
            anti = {t: ev_inv.evaluate(self.dicts[t]) for t in self.tags}  # anti-P@10
            for m, name in MEASURES.items():
                deltas = [self.mean(red[p], name) - self.mean(nested[p], name) for p in others]
                deltas = [d for d in deltas if math.isfinite(d)]
                for r in members:
                    score = self.mean(red[r], name)
                    row = {
                        "score": score,
                        "score_full_pool": self.mean(full[r], name),
                        "pool": score,
                        "webber_park": score + float(np.mean(deltas)),
                        "condensed": self.condensed(qg, r, name),
                    }
                    if m == "P@10":
                        row["upper"] = self.upper(qg, r, red[r])
                        row["lipani2015"], row["lipani2016"] = self.lipani(
                            ev, ev_inv, r, others, red, anti, arrays
                        )
                    est[m][r] = row
        return est, self.errors(est, full)

    def condensed(self, qg: dict[str, dict[str, int]], r: str, name: str) -> float:
        cond = {
            q: {d: s for d, s in docs.items() if d in qg.get(q, {})}
            for q, docs in self.dicts[r].items()
        }
        cond = {q: docs for q, docs in cond.items() if docs}
        res = pytrec_eval.RelevanceEvaluator(qg, {name}).evaluate(cond)
        base = pytrec_eval.RelevanceEvaluator(qg, {name}).evaluate(self.dicts[r])
        # a topic whose retrieved documents are all unjudged scores 0 condensed
        return float(np.mean([res[q][name] if q in res else 0.0 for q in base]))

    def upper(self, qg: dict[str, dict[str, int]], r: str, plain: dict[str, Any]) -> float:
        flipped = {
            q: {**j, **{d: 1 for d in self.rankings[r].get(q, [])[:N] if d not in j}}
            for q, j in qg.items()
        }
        res = pytrec_eval.RelevanceEvaluator(flipped, {"P_10"}).evaluate(self.dicts[r])
        return float(np.mean([max(res[q]["P_10"], v["P_10"]) for q, v in plain.items()]))

    def compose_top(self, arrays: dict[str, dict[str, Any]], p: str, r: str, q: str) -> list[str]:
        """The top 10 of p∘r on topic q (the key x of every document of p, stably sorted)."""
        entry = arrays[p].get(q)
        if entry is None or entry[0].size == 0:
            return []
        docs, rp = entry  # p's documents, docid descending, and their ranks in p
        rank_r = self.rank_of[r].get(q, {})
        rr = np.array([rank_r.get(d, 0) for d in docs], dtype=np.float64)
        step = rr - rp
        fix = np.where(step == 0, 1e-4, np.where(step > 0, (rp + 1.0) / 10000.0, rp / 1e8))
        x = np.where(rr > 0, rr + fix, rp + 1e-4)
        order = np.argsort(x, kind="stable")
        return list(docs[order[:N]])

    def lipani(
        self,
        ev: Any,
        ev_inv: Any,
        r: str,
        pool_runs: list[str],
        red: dict[str, dict[str, dict[str, float]]],
        anti: dict[str, dict[str, dict[str, float]]],
        arrays: dict[str, dict[str, Any]],
    ) -> tuple[float, float]:
        topics = list(red[r])  # r's topics in the reduced qrels
        s = {q: red[r][q]["P_10"] for q in topics}
        a = {q: anti[r][q]["P_10"] if q in anti[r] else 0.0 for q in topics}
        ds: dict[str, dict[str, float]] = {}
        da: dict[str, dict[str, float]] = {}
        for p in pool_runs:
            composed = {}
            for q in topics:
                top = self.compose_top(arrays, p, r, q)
                if top:
                    composed[q] = {d: float(N - i) for i, d in enumerate(top)}
            pc = ev.evaluate(composed)
            pa = ev_inv.evaluate(composed)
            p_anti = anti[p]
            ds[p] = {}
            da[p] = {}
            for q in topics:
                plain_s = red[p][q]["P_10"] if q in red[p] else 0.0
                plain_a = p_anti[q]["P_10"] if q in p_anti else 0.0
                ds[p][q] = (pc[q]["P_10"] if q in pc else 0.0) - plain_s
                da[p][q] = (pa[q]["P_10"] if q in pa else 0.0) - plain_a

        def corr(s_: float, a_: float, mds: float, mda: float) -> float:
            lam = mds * a_ - mda * s_
            return (1 - s_ - a_) * max(-mds - mda, 0.0) if lam > 0 else 0.0

        sm = float(np.mean(list(s.values())))
        am = float(np.mean(list(a.values())))
        dsp = [float(np.mean([ds[p][q] for q in topics])) for p in pool_runs]
        dap = [float(np.mean([da[p][q] for q in topics])) for p in pool_runs]
        l15 = sm + corr(sm, am, float(np.mean(dsp)), float(np.mean(dap)))
        per = []
        for q in topics:
            mds = float(np.mean([ds[p][q] for p in pool_runs]))
            mda = float(np.mean([da[p][q] for p in pool_runs]))
            per.append(s[q] + corr(s[q], a[q], mds, mda))
        return l15, float(np.mean(per))

    def errors(self, est: Estimates, full: dict[str, dict[str, dict[str, float]]]) -> Errors:
        out: Errors = {}
        tags = self.tags
        for m, name in MEASURES.items():
            true = {t: est[m][t]["score_full_pool"] for t in tags}
            per_topic = {t: full[t] for t in tags}
            ranked = sorted(sorted(tags, reverse=True), key=lambda t: -true[t])
            position = {t: i + 1 for i, t in enumerate(ranked)}
            pvals: dict[tuple[str, str], float] = {}

            def p_value(
                x: str,
                y: str,
                pvals: dict[tuple[str, str], float] = pvals,
                per_topic: dict[str, dict[str, dict[str, float]]] = per_topic,
                name: str = name,
            ) -> float:
                key = (x, y) if x < y else (y, x)
                if key not in pvals:
                    qs = sorted(set(per_topic[x]) & set(per_topic[y]))
                    a = np.array([per_topic[x][q][name] for q in qs])
                    b = np.array([per_topic[y][q][name] for q in qs])
                    d = a - b
                    if len(qs) < 2:
                        pv = math.nan
                    elif np.all(d == d[0]):
                        pv = 1.0 if d[0] == 0 else 0.0
                    else:
                        pv = float(scipy.stats.ttest_rel(a, b).pvalue)
                    pvals[key] = pv
                return pvals[key]

            out[m] = {}
            for e in next(iter(est[m].values())):
                if e in ("score", "score_full_pool"):
                    continue
                v = {t: est[m][t][e] for t in tags}
                mae = float(np.mean([abs(v[t] - true[t]) for t in tags]))
                sre = sre_star = 0
                for t in tags:
                    o = 1 + sum(1 for u in tags if true[u] > true[t])
                    n = 1 + sum(1 for u in tags if u != t and true[u] > v[t])
                    sre += abs(o - n)
                    lo, hi = (n, o) if n < o else (o, n)
                    for u in tags:
                        pos = position[u]
                        passed = (lo <= pos < hi) if n < o else (lo < pos <= hi)
                        if u != t and passed and p_value(t, u) < 0.05:
                            sre_star += 1
                tau = float(
                    scipy.stats.kendalltau([true[t] for t in tags], [v[t] for t in tags]).statistic
                )
                out[m][e] = {"mae": mae, "sre": sre, "sre_star": sre_star, "kendall_tau": tau}
        return out


# --------------------------------------------------------------------------------------------


def _ours_fresh(
    qrels: Qrels, runs: dict[str, Run], groups: dict[str, str], depth: int
) -> tuple[Estimates, Errors]:
    return ours(qrels, fresh(runs), groups, depth)


def timed(fn: Callable[[], Any], repeat: int) -> tuple[Any, float, float]:
    walls, cpus = [], []
    result = None
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        result = fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return result, statistics.median(walls), statistics.median(cpus)


def compare(a: tuple[Estimates, Errors], b: tuple[Estimates, Errors]) -> float:
    worst = 0.0
    for m in MEASURES:
        for tag, row in b[0][m].items():
            for key, value in row.items():
                worst = max(worst, abs(a[0][m][tag][key] - value))
        for e, figs in b[1][m].items():
            for key, value in figs.items():
                worst = max(worst, abs(a[1][m][e][key] - value))
    return worst


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--peer-repeat", type=int, default=1)
    p.add_argument("--sizes", default="32,64,127")
    p.add_argument("--depth", type=int, default=10)
    args = p.parse_args()
    root = DATA / "trec2011-medical"
    if not (root / "qrels.txt").is_file():
        print(f"skipped: {root} not found (set POOLJUDGE_SHARED_DATA)", file=sys.stderr)
        return 0
    qrels, all_runs, groups = load(root)
    qd = qrels.to_dict()
    print(
        f"TREC 2011 Medical, leave one group out, depth {args.depth}, AP and P@10, every "
        f"estimator; python {platform.python_version()}, numpy {np.__version__}, "
        f"{os.cpu_count()} cpus (shared machine)"
    )
    print(
        f"{'runs':>5} {'groups':>6} {'ours wall':>10} {'ours cpu':>9} {'peer wall':>10} "
        f"{'peer cpu':>9} {'x wall':>7} {'x cpu':>6} {'max diff':>9}"
    )
    for size in (int(s) for s in args.sizes.split(",")):
        tags = sorted(all_runs)[:size]
        runs = {t: all_runs[t] for t in tags}
        rankings = {t: {q: r.ranking(q) for q in r.qids} for t, r in runs.items()}
        dicts = {t: pytrec_dict(r) for t, r in runs.items()}
        grp = {t: groups[t] for t in tags}
        mine, ow, oc = timed(
            functools.partial(_ours_fresh, qrels, runs, grp, args.depth), args.repeat
        )
        peer = Peer(qd, rankings, dicts, grp, args.depth)
        theirs, pw, pc = timed(peer.run, args.peer_repeat)
        diff = compare(mine, theirs)
        print(
            f"{size:>5} {len(set(grp.values())):>6} {ow:>9.2f}s {oc:>8.2f}s {pw:>9.1f}s "
            f"{pc:>8.1f}s {pw / ow:>6.1f}x {pc / oc:>5.1f}x {diff:>9.1e}"
        )
        assert diff < 1e-9, f"ours and the pytrec_eval loop disagree by {diff}"
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
