"""All pairs of runs on real data: the significance matrix's tests, timed against their per-pair
peers in the same process.

    PYTHONPATH=. .venv/bin/python benchmarks/significance_bench.py [--repeat 3]

Per-query AP (honest mode) of the 17 TREC 2003 Robust runs (100 topics: 136 pairs) and the 127
TREC 2011 Medical runs (34 topics: 8001 pairs) of ../shared/data; then, the median of
``--repeat`` runs each:

- paired t-test of every pair + Holm + d_z: ``paired_t_matrix``, ``adjust``,
  ``effect_size_matrix`` (what the matrix does) against ``compare_runs(test="t")`` (scipy's
  ``ttest_rel`` per pair, what the page did before);
- Tukey's HSD: ``tukey_hsd`` (vectorised studentized range) against
  ``scipy.stats.studentized_range.sf`` on the same q values (timed on 40 pairs, scaled to all);
- the resampling tests at the cap (the best 40 runs by AP: 780 pairs, 10,000 resamples a pair;
  all 17 runs of Robust): ``paired_resampling_matrix`` (what the matrix runs: the same
  resamples for every pair, applied at once) against ``compare_runs(test=...)`` (one
  ``paired_test`` per pair; run once).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import scipy.stats
from _runs import read_runs

from metrics import evaluate, read_qrels
from metrics.stats.matrices import effect_size_matrix, paired_resampling_matrix, paired_t_matrix
from metrics.stats.multiple import adjust
from metrics.stats.paired import compare_runs
from metrics.stats.tukey import tukey_hsd

DATA = Path(
    os.environ.get("POOLJUDGE_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)


def per_query_ap(name: str) -> dict[str, dict[str, float]]:
    root = DATA / name
    qrels = read_qrels(root / "qrels.txt")
    out = {}
    for tag, run in read_runs(root).items():
        result = evaluate(qrels, run, ["AP"], ci=None)
        out[tag] = dict(result.per_query["AP"])
    queries = sorted(set.intersection(*(set(v) for v in out.values())))
    return {t: {q: v[q] for q in queries} for t, v in out.items()}


def timed(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def matrix_t(values: dict[str, dict[str, float]]) -> None:
    queries = sorted(next(iter(values.values())))
    x = np.array([[v[q] for q in queries] for v in values.values()])
    _, p = paired_t_matrix(x)
    iu, ju = np.triu_indices(len(x), k=1)
    adjust([float(v) for v in p[iu, ju]], "holm")
    effect_size_matrix(x)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for name in ("robust03", "trec2011-medical"):
        values = per_query_ap(name)
        m = len(values)
        n = len(next(iter(values.values())))
        pairs = m * (m - 1) // 2
        print(f"\n{name}: {m} runs, {n} topics, {pairs} pairs")
        ours = timed(lambda v=values: matrix_t(v), args.repeat)  # type: ignore[misc]
        peer = timed(lambda v=values: compare_runs(v, test="t"), args.repeat)  # type: ignore[misc]
        print(f"  t-test, Holm, d_z, all pairs: {ours:.3f} s (per-pair scipy: {peer:.3f} s)")
        rows = tukey_hsd(values)
        tukey = timed(lambda v=values: tukey_hsd(v), args.repeat)  # type: ignore[misc]
        sample = [r.q for r in rows[:40]]
        start = time.perf_counter()
        scipy.stats.studentized_range.sf(sample, m, rows[0].df)
        scipy_all = (time.perf_counter() - start) / len(sample) * pairs
        print(f"  Tukey HSD, all pairs: {tukey:.3f} s (scipy's sf per pair: ~{scipy_all:.1f} s)")
        best = sorted(values, key=lambda t: -float(np.mean(list(values[t].values()))))[:40]
        capped = {t: values[t] for t in best}
        x = np.array([[v[q] for q in sorted(v)] for v in capped.values()])
        k = len(capped)
        for test in ("randomization", "bootstrap"):
            ours = timed(
                lambda t=test, x=x: paired_resampling_matrix(x, test=t),  # type: ignore[misc]
                args.repeat,
            )
            peer = timed(lambda t=test, c=capped: compare_runs(c, test=t), 1)  # type: ignore[misc]
            print(
                f"  {test}, {k} runs ({k * (k - 1) // 2} pairs, 10,000 resamples): "
                f"{ours:.2f} s (per pair: {peer:.2f} s)"
            )


if __name__ == "__main__":
    main()
