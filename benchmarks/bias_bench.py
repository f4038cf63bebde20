"""Leave-one-run-out at depth 10 over the 127 TREC 2011 Medical runs: metrics vs a pytrec_eval loop.

    .venv/bin/python benchmarks/bias_bench.py [--repeat 3] [--depth 10]

Both sides start from the same runs already read into memory (scores rounded to float32, as
pytrec_eval stores them; the files unmodified: the three NaN scores of one run ranked last, and
given to pytrec_eval as a value below every other score, its sort leaving NaN's place undefined) and
compute, for AP, P@10 and nDCG@10, every run's score on the depth-10 pool of all runs and its score
with the pool rebuilt without it.

- "ours": :class:`metrics.bias.leaveout.LeaveOneOut` prepared once on fresh run objects (nothing
  cached), then ``result(measure)`` for the three measures.
- "pytrec_eval loop": the straightforward method. Untimed preparation, in its favour: every run's
  top-10 lists and ``{qid: {docid: score}}`` dicts. Timed: the full pool, its restricted qrels and
  one ``RelevanceEvaluator`` (all three measures at once) scoring every run; then for each run,
  the pool of the other runs, the qrels restricted to it, a ``RelevanceEvaluator`` on them, and
  the evaluation of that run.

The script checks that both give the same scores and deltas (max abs difference printed) and
prints the median wall and CPU (process) time of ``--repeat`` repetitions and the ratios; the CPU
figures are the steadier ones on a shared machine.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pytrec_eval

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _runs import pytrec_dict, read_runs  # noqa: E402

from metrics import Qrels, Run, read_qrels  # noqa: E402
from metrics.bias.leaveout import LeaveOneOut, LeaveOut  # noqa: E402

DATA = Path(os.environ.get("POOLJUDGE_SHARED_DATA", ROOT.parent / "shared" / "data"))
MEASURES = {"AP": "map", "P@10": "P_10", "nDCG@10": "ndcg_cut_10"}
Scores = dict[str, dict[str, tuple[float, float]]]  # measure -> run -> (score, score_without)


def load(root: Path) -> tuple[Qrels, dict[str, Run]]:
    qrels = read_qrels(root / "qrels.txt")
    runs = read_runs(root)  # unmodified (NaN scores ranked last)
    return qrels, runs


def fresh(runs: dict[str, Run]) -> dict[str, Run]:
    """Copies without cached orderings or hashes, so ours pays for them."""
    return {t: Run(r.qids, r.offsets, r.docids, r.scores, r.tag) for t, r in runs.items()}


def ours(qrels: Qrels, runs: dict[str, Run], depth: int) -> Scores:
    loo = LeaveOneOut(qrels, runs, LeaveOut(depth=depth))
    out: Scores = {}
    for m in MEASURES:
        res = loo.result(m)
        out[m] = {t: (r.score, r.score_without) for t, r in res.runs.items()}
    return out


def pytrec_loop(
    qrels: dict[str, dict[str, int]],
    top: dict[str, dict[str, list[str]]],
    run_dicts: dict[str, dict[str, dict[str, float]]],
    depth: int,
) -> Scores:
    topics = list(qrels)

    def restricted(tags: list[str]) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for qid in topics:
            pool: set[str] = set()
            for t in tags:
                pool.update(top[t].get(qid, ()))
            kept = {d: g for d, g in qrels[qid].items() if d in pool}
            if kept:
                out[qid] = kept
        return out

    def mean(res: dict[str, dict[str, float]], name: str) -> float:
        return float(np.mean([v[name] for v in res.values()])) if res else float("nan")

    names = set(MEASURES.values())
    tags = list(run_dicts)
    full_ev = pytrec_eval.RelevanceEvaluator(restricted(tags), names)
    out: Scores = {m: {} for m in MEASURES}
    for tag in tags:
        full = full_ev.evaluate(run_dicts[tag])
        ev = pytrec_eval.RelevanceEvaluator(restricted([t for t in tags if t != tag]), names)
        without = ev.evaluate(run_dicts[tag])
        for m, name in MEASURES.items():
            out[m][tag] = (mean(full, name), mean(without, name))
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--depth", type=int, default=10)
    args = p.parse_args()
    root = DATA / "trec2011-medical"
    if not (root / "qrels.txt").is_file():
        print(f"skipped: {root} not found (set POOLJUDGE_SHARED_DATA)", file=sys.stderr)
        return 0
    qrels, runs = load(root)
    qd = qrels.to_dict()
    top = {t: {q: r.ranking(q)[: args.depth] for q in r.qids} for t, r in runs.items()}
    dicts = {t: pytrec_dict(r) for t, r in runs.items()}

    t_ours: list[float] = []
    t_loop: list[float] = []
    c_ours: list[float] = []
    c_loop: list[float] = []
    a: Scores = {}
    b: Scores = {}
    for _ in range(args.repeat):
        cold = fresh(runs)
        t0, c0 = time.perf_counter(), time.process_time()
        a = ours(qrels, cold, args.depth)
        t_ours.append(time.perf_counter() - t0)
        c_ours.append(time.process_time() - c0)
        t0, c0 = time.perf_counter(), time.process_time()
        b = pytrec_loop(qd, top, dicts, args.depth)
        t_loop.append(time.perf_counter() - t0)
        c_loop.append(time.process_time() - c0)

    worst = 0.0
    for m in MEASURES:
        for tag, (s, w) in a[m].items():
            s2, w2 = b[m][tag]
            worst = max(worst, abs(s - s2), abs(w - w2), abs((s - w) - (s2 - w2)))
    same = worst <= 1e-9
    mo, ml = statistics.median(t_ours), statistics.median(t_loop)
    co, cl = statistics.median(c_ours), statistics.median(c_loop)
    print(f"python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}")
    print(
        f"leave-one-run-out, depth {args.depth}, {len(runs)} runs, "
        f"{len(qrels.qids)} topics, measures {', '.join(MEASURES)}, median of {args.repeat}"
    )
    print("                                   wall s    cpu s")
    print(f"ours (metrics.bias.leaveout.LeaveOneOut)   {mo:8.2f} {co:8.2f}")
    print(f"pytrec_eval loop (per-run qrels)  {ml:8.2f} {cl:8.2f}")
    print(f"ratio loop / ours                 {ml / mo:7.1f}x {cl / co:7.1f}x")
    print(f"same scores and deltas: {same} (max abs difference {worst:.2e})")
    for m in MEASURES:
        top_run = max(a[m], key=lambda t: a[m][t][0] - a[m][t][1])
        d = a[m][top_run][0] - a[m][top_run][1]
        print(f"  {m:8} largest delta {d:+.4f} ({top_run})")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
