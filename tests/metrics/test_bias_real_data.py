"""Pool-bias reference figures on real TREC data (../shared/data; skipped when absent).

Robust 2003, topics 601-650, pool rebuilt from the 17 runs, qrels restricted to it, AP
(data README, DESIGN section 8): at depth 10 the largest leave-one-run-out gain is uic0301's,
about +0.025, and Kendall's tau between the two rankings about 0.91; at depth 100 the largest
gain is about +0.006. One leave-out score is cross-checked against pytrec_eval on qrels
restricted explicitly (pool built from ``Run.ranking``, judgments filtered by hand).

Not reproduced: the README's "+8.6%" for uic0301. With the delta it quotes (+0.0253, which we
match) and the definition delta% = 100 * delta / score_without, uic0301 scores 0.4091 with and
0.3837 without its pool documents (both confirmed by pytrec_eval below), i.e. +6.6%; +8.6% would
need a base of about 0.295. The test therefore checks delta% against pytrec_eval's scores.

TREC 2011 Medical: 41 runs have every top 10 judged (pooled at depth 10, mean Judged@10 about
1.0); the other 86 average about 0.81.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval

from metrics import Qrels, Run, read_qrels
from metrics.bias.judged import judged_at_k
from metrics.bias.leaveout import LeaveOneOut, LeaveOut
from metrics.bias.topics import restrict_qrels
from metrics.pooling.runs import parse_topic_spec
from tests._shared_data import trec_runs
from tests.conftest import TrecData

pytestmark = pytest.mark.data

ROBUST_TOPICS = parse_topic_spec("601-650")


@pytest.fixture(scope="module")
def robust_loo10(robust: TrecData) -> LeaveOneOut:
    qrels, runs, _ = robust
    return LeaveOneOut(qrels, runs, LeaveOut(depth=10, topics=ROBUST_TOPICS))


def _explicit_pool(runs: dict[str, Run], tags: list[str], depth: int) -> dict[str, set[str]]:
    return {q: {d for t in tags for d in runs[t].ranking(q)[:depth]} for q in ROBUST_TOPICS}


def _pytrec_map(qrels: Qrels, run: Run) -> float:
    res = pytrec_eval.RelevanceEvaluator(qrels.to_dict(), {"map"}).evaluate(run.to_dict())
    return float(np.mean([v["map"] for v in res.values()]))


def test_robust03_depth10_largest_gain_is_uic0301(robust_loo10: LeaveOneOut) -> None:
    res = robust_loo10.result("AP")
    assert len(res.runs) == 17 and len(res.topics) == 50
    assert res.max_delta_run == "uic0301"
    assert res.max_delta == pytest.approx(0.0253, abs=0.002)
    assert res.kendall_tau == pytest.approx(0.91, abs=0.03)


def test_robust03_depth10_uic0301_scores_match_pytrec_eval_on_explicit_qrels(
    robust: TrecData, robust_loo10: LeaveOneOut
) -> None:
    qrels, runs, _ = robust
    tags = list(runs)
    full = restrict_qrels(qrels, _explicit_pool(runs, tags, 10))
    without = restrict_qrels(qrels, _explicit_pool(runs, [t for t in tags if t != "uic0301"], 10))
    expect_full = _pytrec_map(full, runs["uic0301"])
    expect_without = _pytrec_map(without, runs["uic0301"])
    r = robust_loo10.result("AP").runs["uic0301"]
    assert r.score == pytest.approx(expect_full, abs=1e-12)
    assert r.score_without == pytest.approx(expect_without, abs=1e-12)
    assert r.delta_pct == pytest.approx(100 * (expect_full - expect_without) / expect_without)


def test_robust03_leave_one_group_out_matches_pytrec_eval_for_the_two_run_group(
    shared_data: Path, robust: TrecData
) -> None:
    qrels, runs, _ = robust
    with (shared_data / "robust03" / "runs.tsv").open() as f:
        groups = {row["run"]: row["group"] for row in csv.DictReader(f, delimiter="\t")}
    res = LeaveOneOut(
        qrels, runs, LeaveOut(depth=10, topics=ROBUST_TOPICS, leave_out="group", groups=groups)
    ).result("AP")
    members = [t for t in runs if groups[t] == "uglasgow.ounis"]
    assert len(members) == 2
    without = restrict_qrels(qrels, _explicit_pool(runs, [t for t in runs if t not in members], 10))
    for tag in members:
        assert res.runs[tag].score_without == pytest.approx(
            _pytrec_map(without, runs[tag]), abs=1e-12
        )


def test_robust03_depth100_largest_gain_is_small(robust: TrecData) -> None:
    qrels, runs, _ = robust
    res = LeaveOneOut(qrels, runs, LeaveOut(depth=100, topics=ROBUST_TOPICS)).result("AP")
    assert res.max_delta == pytest.approx(0.006, abs=0.002)


def test_medical_judged_at_10_pooled_about_1_others_about_081(shared_data: Path) -> None:
    root = shared_data / "trec2011-medical"
    qrels, runs = read_qrels(root / "qrels.txt"), trec_runs(root)
    assert len(runs) == 127
    first = judged_at_k(qrels, runs, k=10)
    pooled = [t for t, per_q in first.per_query.items() if min(per_q.values()) == 1.0]
    assert len(pooled) == 41
    rep = judged_at_k(qrels, runs, k=10, pooled=pooled)
    assert rep.mean_pooled == pytest.approx(1.0, abs=0.005)
    assert rep.mean_not_pooled == pytest.approx(0.81, abs=0.01)
    assert min(rep.means.values()) == pytest.approx(0.079, abs=0.005)
