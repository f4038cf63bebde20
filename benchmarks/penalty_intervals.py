"""A novel run's penalty, honestly (issue 31): do the intervals shown beside an estimated
full-pool score hold for the runs that matter, and how wide are they?

    .venv/bin/python benchmarks/penalty_intervals.py [--data ../shared/data] [--json FILE]
        [--reps 200] [--designs uniform,rank,per_topic] [--page-measures]

Leave one group out of the depth-K pool in turn (``metrics.bias.nested.EstimatorAnalysis``, the
harness behind ``python -m metrics bias estimators``) on Robust 2003 (topics 601-650, 17 runs,
16 groups; depth 10 and 20) and TREC 2011 Medical (the 41 runs pooled at depth 10, 21 groups;
depth 10), for P@10 and AP. For every left-out run and every estimator:

- **prediction interval** (``metrics.bias.prediction``): from the *other* groups' residuals only
  (a run's own group never calibrates it), the 95% t interval on hole-scaled residuals, clipped
  to the run's bounds, or the bounds when extrapolating;
- **split conformal** on the same hole-scaled residuals (for comparison): order statistics
  ceil((n+1)(1 - a/2)) and floor((n+1) a/2), the bounds when a rank falls outside the n runs.

It prints, per setting, measure and estimator: how many of the left-out runs' full-pool scores
the interval contains, overall and among those with Judged@10 < 0.8 on the pool without their
group (Judged@10 as in the P@10 report), and the mean width; the mean absolute and signed error
per Judged@10 bin (under-correction grows with novelty); and the targets of issue 31, point 2, for
the estimator the report recommends: >= 90% overall and >= 85% with Judged@10 < 0.8, over every
setting and measure together.

Bounds: for P@10 the score with the unjudged documents in the top 10 non-relevant and relevant
(exact); for AP none follow from the judgments alone (an unjudged relevant document deep in a
run can lower its AP by raising R), so AP's intervals are clipped to [0, 1].

**The top-up** (issue 31, point 7; ``metrics.bias.topup``), replayed on the same left-out runs
with the qrels as the oracle: m = 5, 10, 20 of a run's unjudged top-k documents judged (k = 10
for P@10, R@10 and nDCG@10, the pool depth for AP; graded qrels for nDCG), drawn uniformly or
stratified by rank, ``--reps``
times each. Per setting, measure, design and m: the bias and mean absolute error against what
the top-up estimates (the run's score with its unjudged top k judged: for P@10 its full-pool
score), the MAE against the full-pool score (what the estimators are measured against), the
share of 95% intervals that hold the target, and their mean width; then by Judged@10 bin, the
top-up at m = 20 (uniform) beside the recommended estimator. The per-topic design judges 1 or 2
documents of each topic's hole ("m" per topic); "judge" is the uniform sample correcting a
simulated automatic judge's grade of every hole document (JUDGE_TRUE, JUDGE_FALSE: no real
judge's labels of these runs are here). Target: >= 93% covered overall, over every design.

It also prints, per left-out run, the error of the estimator recommended by its novelty bin and
of the one recommended over all runs, each chosen from the other groups' runs only: does
recommending by novelty (what the pages do) beat recommending over all runs?
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import multiprocessing
import sys
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from metrics import Qrels, Run, read_qrels, read_run  # noqa: E402
from metrics.bias.judged import judged_at_k  # noqa: E402
from metrics.bias.leaveout import LeaveOut  # noqa: E402
from metrics.bias.nested import EstimatorAnalysis  # noqa: E402
from metrics.bias.prediction import (  # noqa: E402
    HOLE_FLOOR,
    Calibration,
    calibration_of,
    errors_by_novelty,
    novelty_bin,
    prediction_interval,
    recommend_for,
)
from metrics.bias.topup import Hole, draw, estimate, hole_of  # noqa: E402

# the targets are over P@10 and AP; the bias page also offers R@100, nDCG@10 and Bpref
# (their intervals are clipped to [0, 1]: no bounds follow from the judgments alone)
MEASURES = ["P@10", "AP"]
PAGE_MEASURES = ("R@100", "nDCG@10", "Bpref")
NOVEL = 0.8  # Judged@10 below this: a novel run (issue 31's second target)
ESTIMATORS = ("pool", "webber_park", "lipani2015", "lipani2016")  # the correcting ones


def load(root: Path) -> tuple[Qrels, dict[str, Run], dict[str, str]]:
    runs = {}
    for path in sorted((root / "runs").glob("input.*.gz")):
        run = read_run(path)
        runs[run.tag] = run.with_float32_scores()
    with (root / "runs.tsv").open() as f:
        groups = {row["run"]: row["group"] for row in csv.DictReader(f, delimiter="\t")}
    return read_qrels(root / "qrels.txt"), runs, groups


@dataclass
class Setting:
    name: str
    qrels: Qrels
    runs: dict[str, Run]  # the pooled runs
    groups: dict[str, str]
    depth: int
    topics: list[str]

    def analysis(self) -> EstimatorAnalysis:
        leave = LeaveOut(
            depth=self.depth, leave_out="group", groups=self.groups, topics=self.topics
        )
        return EstimatorAnalysis(self.qrels, self.runs, leave)


def settings(data: Path) -> list[Setting]:
    out = []
    qrels, runs, groups = load(data / "robust03")
    topics = [str(t) for t in range(601, 651)]
    for depth in (10, 20):
        out.append(Setting(f"Robust 2003 d{depth}", qrels, runs, groups, depth, topics))
    qrels, runs, groups = load(data / "trec2011-medical")
    first = judged_at_k(qrels, runs, k=10)
    pooled = sorted(t for t, per_q in first.per_query.items() if min(per_q.values()) == 1.0)
    sub = {t: runs[t] for t in pooled}
    out.append(Setting("Medical d10 (41 pooled)", qrels, sub, groups, 10, list(qrels.qids)))
    return out


def conformal(
    estimate: float, hole: float, bounds: tuple[float, float], cal: Calibration
) -> tuple[float, float]:
    z = np.sort(cal.scaled_residuals())
    n = z.size
    lo_rank = math.floor((n + 1) * 0.025)
    hi_rank = math.ceil((n + 1) * 0.975)
    scale = max(hole, HOLE_FLOOR)
    lo = estimate + scale * z[lo_rank - 1] if lo_rank >= 1 else -math.inf
    hi = estimate + scale * z[hi_rank - 1] if hi_rank <= n else math.inf
    return max(bounds[0], lo), min(bounds[1], hi)


def evaluate_setting(name: str, analysis: EstimatorAnalysis) -> dict[str, Any]:
    reports = {m: analysis.report(m).to_dict() for m in MEASURES}
    judged10 = {tag: row["judged"] for tag, row in reports["P@10"]["runs"].items()}
    out: dict[str, Any] = {"setting": name, "measures": {}}
    for m, rep in reports.items():
        rows = rep["runs"]
        names = [e for e in ESTIMATORS if rep["estimators"].get(e, {}).get("applicable")]
        per_est: dict[str, Any] = {}
        for e in names:
            cal = calibration_of(rep, e)
            cells: list[dict[str, Any]] = []
            for tag, row in rows.items():
                hole = 1.0 - row["judged"]
                score, truth = row["score"], row["score_full_pool"]
                bounds = (score, score + hole) if m.startswith("P@") else (0.0, 1.0)
                own = cal.without(row["unit"])
                pi = prediction_interval(row[e], hole, bounds, own)
                c_lo, c_hi = conformal(row[e], hole, bounds, own)
                cells.append(
                    {
                        "run": tag,
                        "judged10": judged10[tag],
                        "estimate": row[e],
                        "truth": truth,
                        "pi": [pi.low, pi.high],
                        "pi_method": pi.method,
                        "pi_in": bool(pi.contains(truth)),
                        "conformal": [c_lo, c_hi],
                        "conformal_in": bool(c_lo - 1e-12 <= truth <= c_hi + 1e-12),
                    }
                )
            per_est[e] = cells
        by_bin = errors_by_novelty(
            {"runs": {t: {**r, "judged": judged10[t]} for t, r in rows.items()}}, names
        )
        out["measures"][m] = {
            "recommended": rep["recommended"],
            "n_runs": len(rows),
            "cells": per_est,
            "by_novelty": {e: [b.__dict__ for b in bins] for e, bins in by_bin.items()},
            "choices": choices(rows, judged10, names),
        }
    return out


def choices(
    rows: dict[str, dict[str, Any]], judged10: dict[str, float], names: list[str]
) -> list[dict[str, Any]]:
    """Per left-out run, the estimator recommended by its novelty bin and the one recommended
    over all runs, each from the *other* groups' runs only, and each one's error on this run:
    does recommending by novelty (what the pages do) beat recommending over all runs?"""
    out = []
    for tag, row in rows.items():
        others = {
            t: {**r, "judged": judged10[t]} for t, r in rows.items() if r["unit"] != row["unit"]
        }
        overall = min(
            names,
            key=lambda e: float(
                np.mean([abs(r[e] - r["score_full_pool"]) for r in others.values()])
            ),
        )
        by_bin, _ = recommend_for(judged10[tag], errors_by_novelty({"runs": others}, names))
        pick = by_bin or overall
        truth = row["score_full_pool"]
        out.append(
            {
                "run": tag,
                "judged10": judged10[tag],
                "by_bin": pick,
                "binned": by_bin is not None,
                "overall": overall,
                "error_by_bin": abs(row[pick] - truth),
                "error_overall": abs(row[overall] - truth),
            }
        )
    return out


def share(cells: list[dict[str, Any]], key: str, novel: bool | None = None) -> tuple[int, int]:
    chosen = [c for c in cells if novel is None or (c["judged10"] < NOVEL) == novel]
    return sum(bool(c[key]) for c in chosen), len(chosen)


def pct(k: int, n: int) -> str:
    return f"{k}/{n} ({100 * k / n:.0f}%)" if n else "-"


def width(cells: list[dict[str, Any]], key: str) -> float:
    return float(np.mean([c[key][1] - c[key][0] for c in cells])) if cells else math.nan


def print_tables(results: list[dict[str, Any]]) -> dict[str, Any]:
    print("\n## Intervals for a left-out run's full-pool score (95%)\n")
    print(
        "| setting | measure | estimator | prediction interval: covered, all | Judged@10 < 0.8 "
        "| mean width | split conformal: covered | Judged@10 < 0.8 | mean width |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    totals: dict[str, list[int]] = {"all": [0, 0], "novel": [0, 0]}
    per_measure: dict[str, list[int]] = {}
    for res in results:
        for m, mres in res["measures"].items():
            for e, cells in mres["cells"].items():
                rec = " (recommended)" if e == mres["recommended"] else ""
                print(
                    f"| {res['setting']} | {m} | {e}{rec} "
                    f"| {pct(*share(cells, 'pi_in'))} | {pct(*share(cells, 'pi_in', True))} "
                    f"| {width(cells, 'pi'):.3f} "
                    f"| {pct(*share(cells, 'conformal_in'))} "
                    f"| {pct(*share(cells, 'conformal_in', True))} "
                    f"| {width(cells, 'conformal'):.3f} |"
                )
                if rec:
                    for key, novel in (("all", None), ("novel", True)):
                        k, n = share(cells, "pi_in", novel)
                        if m in ("P@10", "AP"):  # the targets
                            totals[key][0] += k
                            totals[key][1] += n
                        mine = per_measure.setdefault(f"{m} {key}", [0, 0])
                        mine[0] += k
                        mine[1] += n
    print("\n## Error by novelty (Judged@10 on the pool without the run's group)\n")
    print("| setting | measure | estimator | bin | runs | MAE | mean error (est - true) |")
    print("|---|---|---|---|---|---|---|")
    for res in results:
        for m, mres in res["measures"].items():
            for e, bins in mres["by_novelty"].items():
                for b in bins:
                    print(
                        f"| {res['setting']} | {m} | {e} | {b['bin']} | {b['n_runs']} "
                        f"| {b['mae']:.4f} | {b['mean_error']:+.4f} |"
                    )
    print("\n## Recommending by novelty bin or over all runs (each from the other groups' runs)\n")
    print(
        "| setting | measure | runs | MAE, by bin | MAE, over all | novel runs | by bin | over all "
        "| picks differ |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for res in results:
        for m, mres in res["measures"].items():
            ch = mres["choices"]
            nov = [c for c in ch if c["judged10"] < NOVEL]
            print(
                f"| {res['setting']} | {m} | {len(ch)} | {_mean(ch, 'error_by_bin'):.4f} "
                f"| {_mean(ch, 'error_overall'):.4f} | {len(nov)} "
                f"| {_mean(nov, 'error_by_bin'):.4f} | {_mean(nov, 'error_overall'):.4f} "
                f"| {sum(c['by_bin'] != c['overall'] for c in ch)} |"
            )
    every = [c for res in results for mres in res["measures"].values() for c in mres["choices"]]
    novel_runs = [c for c in every if c["judged10"] < NOVEL]
    print(
        f"- every setting and measure: MAE {_mean(every, 'error_by_bin'):.4f} by bin, "
        f"{_mean(every, 'error_overall'):.4f} over all; novel runs "
        f"{_mean(novel_runs, 'error_by_bin'):.4f} and {_mean(novel_runs, 'error_overall'):.4f}"
    )
    print("\n## The recommended estimator's intervals, per measure, every setting together\n")
    for key, (k, n) in per_measure.items():
        print(f"- {key}: {pct(k, n)}")
    k_all, n_all = totals["all"]
    k_nov, n_nov = totals["novel"]
    print("\n## Targets (issue 31, point 2), the recommended estimator of each report\n")
    ok_all = n_all > 0 and k_all / n_all >= 0.90
    ok_nov = n_nov > 0 and k_nov / n_nov >= 0.85
    print(
        f"- covered overall: {pct(k_all, n_all)} (target >= 90%): {'met' if ok_all else 'MISSED'}"
    )
    print(
        f"- covered with Judged@10 < {NOVEL}: {pct(k_nov, n_nov)} (target >= 85%): "
        f"{'met' if ok_nov else 'MISSED'}"
    )
    return {"all": [k_all, n_all], "novel": [k_nov, n_nov], "met": ok_all and ok_nov}


# --- the top-up --------------------------------------------------------------------------------

TOPUP_M = (5, 10, 20)
TOPUP_DESIGNS = ("uniform", "rank", "per_topic", "judge")
# the budgets replayed per design: documents per run, or per topic for per_topic
TOPUP_BUDGETS = {"uniform": TOPUP_M, "rank": TOPUP_M, "per_topic": (1, 2), "judge": TOPUP_M}
# "judge": a uniform sample correcting a simulated automatic judge's grade of every hole document
# (it says relevant for a relevant document with this chance, and for a non-relevant one with
# JUDGE_FALSE): no real judge's labels of these runs are here, so its figures are a simulation
JUDGE_TRUE, JUDGE_FALSE = 0.8, 0.1
TOPUP_DRAWS = 400
_DESIGNS: list[str] = list(TOPUP_DESIGNS)
_WORK: list[Setting] = []


def _pool(st: Setting, without: str | None) -> dict[str, set[str]]:
    pool: dict[str, set[str]] = {q: set() for q in st.topics}
    for tag, run in st.runs.items():
        if without is not None and st.groups[tag] == without:
            continue
        for q in st.topics:
            if q in run:
                pool[q].update(run.ranking(q)[: st.depth])
    return pool


def _restricted(st: Setting, pool: dict[str, set[str]]) -> dict[str, dict[str, int]]:
    out = {}
    for q in st.topics:
        judged = st.qrels.judgments(q) if q in st.qrels else {}
        out[q] = {d: g for d, g in judged.items() if d in pool[q]}
    return out


def _exact(hole: Hole, oracle: dict[tuple[str, str], int], measures: list[str]) -> dict[str, float]:
    """The hole judged whole: the top-up's target (no draw is random)."""
    whole = draw(hole, "uniform", max(1, len(hole.unjudged)), np.random.default_rng(0))
    done = estimate(hole, whole, oracle, measures, draws=2)
    return {m: e.estimate for m, e in done.items()}


def _topup_group(job: tuple[int, str, int]) -> list[dict[str, Any]]:
    setting, group, reps = job
    st = _WORK[setting]
    full = _restricted(st, _pool(st, None))
    reduced = _restricted(st, _pool(st, group))
    rng = np.random.default_rng(zlib.crc32(f"{st.name}\0{group}".encode()))  # reproducible
    cells = []
    for tag, run in st.runs.items():
        if st.groups[tag] != group:
            continue
        ranked = {q: run.ranking(q) for q in st.topics if q in run}
        topics = [q for q in st.topics if q in ranked]
        judged10 = hole_of(reduced, ranked, 10, topics=topics)
        shown = sum(min(10, len(ranked[q])) for q in topics)
        j10 = 1.0 - len(judged10.unjudged) / shown if shown else math.nan
        for k, measures in (
            (10, ["P@10", "R@10", "ceiling@10", "nDCG@10", "Unique@10"]),
            (st.depth, ["AP"]),
        ):
            hole = hole_of(reduced, ranked, k, topics=topics)
            oracle = {}
            for q, _, d in hole.unjudged:
                oracle[(q, d)] = st.qrels.judgments(q).get(d, 0) if q in st.qrels else 0
            target = _exact(hole, oracle, measures)
            auto = {
                key: int(rng.random() < (JUDGE_TRUE if grade > 0 else JUDGE_FALSE))
                for key, grade in oracle.items()
            }
            truth = _exact(hole_of(full, ranked, k, topics=topics), {}, measures)
            for design in _DESIGNS:
                for m in TOPUP_BUDGETS[design]:
                    ests: dict[str, list[tuple[float, float, float]]] = {x: [] for x in measures}
                    whole = len(hole.unjudged) <= m and design != "per_topic"
                    for _ in range(1 if whole else reps):
                        plan = "uniform" if design == "judge" else design
                        sample = draw(hole, plan, m, rng) if hole.unjudged else None
                        if sample is None:
                            for x in measures:
                                ests[x].append((target[x], target[x], target[x]))
                            continue
                        labels = {(q, d): oracle[(q, d)] for q, _, d in sample.documents}
                        got = estimate(
                            hole,
                            sample,
                            labels,
                            measures,
                            draws=TOPUP_DRAWS,
                            rng=rng,
                            auto=auto if design == "judge" else None,
                        )
                        for x in measures:
                            ests[x].append((got[x].estimate, got[x].low, got[x].high))
                    for x in measures:
                        e = np.array(ests[x])
                        cells.append(
                            {
                                "setting": st.name,
                                "run": tag,
                                "measure": x,
                                "design": design,
                                "m": m,
                                "judged10": j10,
                                "unjudged": len(hole.unjudged),
                                "target": target[x],
                                "truth": truth[x],
                                "n": len(e),
                                "bias": float(np.mean(e[:, 0] - target[x])),
                                "mae": float(np.mean(np.abs(e[:, 0] - target[x]))),
                                "mae_truth": float(np.mean(np.abs(e[:, 0] - truth[x]))),
                                "covered": float(
                                    np.mean(
                                        (e[:, 1] - 1e-12 <= target[x])
                                        & (target[x] <= e[:, 2] + 1e-12)
                                    )
                                ),
                                "width": float(np.mean(e[:, 2] - e[:, 1])),
                            }
                        )
    return cells


def topup_validation(
    chosen: list[Setting], reps: int, results: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    _WORK[:] = chosen
    jobs = [
        (i, g, reps) for i, st in enumerate(chosen) for g in sorted({st.groups[t] for t in st.runs})
    ]
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(2) as pool:
        parts = pool.map(_topup_group, jobs, chunksize=1)
    return [c for part in parts for c in part]


def _mean(cells: list[dict[str, Any]], key: str) -> float:
    return float(np.mean([c[key] for c in cells])) if cells else math.nan


def print_topup(cells: list[dict[str, Any]], results: list[dict[str, Any]]) -> dict[str, Any]:
    print("\n## The top-up: a sample of a left-out run's unjudged top-k judged (95% intervals)\n")
    print(
        "| setting | measure | design | m | bias | MAE (target) | MAE (full pool) | covered | "
        "Judged@10 < 0.8 covered | mean width |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    keys = sorted({(c["setting"], c["measure"], c["design"], c["m"]) for c in cells}, key=str)
    for key in keys:
        chosen = [c for c in cells if (c["setting"], c["measure"], c["design"], c["m"]) == key]
        novel = [c for c in chosen if c["judged10"] < NOVEL]
        print(
            f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {_mean(chosen, 'bias'):+.4f} "
            f"| {_mean(chosen, 'mae'):.4f} | {_mean(chosen, 'mae_truth'):.4f} "
            f"| {100 * _mean(chosen, 'covered'):.1f}% "
            f"| {100 * _mean(novel, 'covered'):.1f}% | {_mean(chosen, 'width'):.3f} |"
        )
    print("\n## By novelty: the top-up at m = 20 (uniform) and the recommended estimator\n")
    print("| setting | measure | Judged@10 | runs | top-up MAE (full pool) | estimator | its MAE |")
    print("|---|---|---|---|---|---|---|")
    for res in results:
        for m, mres in res["measures"].items():
            rec = mres["recommended"]
            rows = {b["bin"]: b for b in mres["by_novelty"].get(rec, [])}
            for label, b in rows.items():
                chosen = [
                    c
                    for c in cells
                    if c["setting"] == res["setting"]
                    and c["measure"] == m
                    and c["design"] == "uniform"
                    and c["m"] == 20
                    and novelty_bin(c["judged10"]) == label
                ]
                print(
                    f"| {res['setting']} | {m} | {label} | {b['n_runs']} "
                    f"| {_mean(chosen, 'mae_truth'):.4f} | {rec} | {b['mae']:.4f} |"
                )
    by_design = {}
    for design in _DESIGNS:
        part = [c for c in cells if c["design"] == design]
        by_design[design] = _mean(part, "covered")
        print(
            f"- {design}: {100 * by_design[design]:.1f}% covered over every cell, mean width "
            f"{_mean(part, 'width'):.3f}, MAE {_mean(part, 'mae'):.4f}"
        )
    overall = _mean(cells, "covered")  # every design is offered
    ok = overall >= 0.93
    print(
        f"- target (every design replayed): {100 * overall:.1f}% (>= 93%): "
        f"{'met' if ok else 'MISSED'}"
    )
    part = [c for c in cells if c["design"] == "uniform"]
    worst = min(
        (
            (_mean([c for c in part if (c["setting"], c["measure"], c["m"]) == k], "covered"), k)
            for k in {(c["setting"], c["measure"], c["m"]) for c in part}
        ),
        default=(math.nan, None),
    )
    print(f"- the uniform design's lowest cell: {100 * worst[0]:.1f}% {worst[1]}")
    return {"covered": overall, "met": ok}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--json", type=Path, help="write every cell here")
    parser.add_argument(
        "--reps", type=int, default=200, help="top-up repetitions per cell (0: no top-up)"
    )
    parser.add_argument(
        "--designs",
        default=",".join(TOPUP_DESIGNS),
        help="the top-up designs to replay (comma-separated; default: all)",
    )
    parser.add_argument(
        "--page-measures",
        action="store_true",
        help="also the bias page's other measures (R@100, nDCG@10, Bpref)",
    )
    args = parser.parse_args()
    if not (args.data / "robust03").is_dir() or not (args.data / "trec2011-medical").is_dir():
        sys.exit(f"the shared data is not at {args.data} (robust03, trec2011-medical)")
    start = time.perf_counter()
    if args.page_measures:
        MEASURES.extend(PAGE_MEASURES)
    designs = tuple(d for d in args.designs.split(",") if d)
    if not designs or set(designs) - set(TOPUP_DESIGNS):
        sys.exit(f"--designs: choose from {', '.join(TOPUP_DESIGNS)}")
    _DESIGNS[:] = designs
    chosen = settings(args.data)
    results = [evaluate_setting(st.name, st.analysis()) for st in chosen]
    summary = print_tables(results)
    if args.reps > 0:
        topup = topup_validation(chosen, args.reps, results)
        summary["topup"] = print_topup(topup, results)
    print(f"\n{time.perf_counter() - start:.1f} s")
    if args.json:
        args.json.write_text(json.dumps({"results": results, "summary": summary}, indent=1))


if __name__ == "__main__":
    main()
