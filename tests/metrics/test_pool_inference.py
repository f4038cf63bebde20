"""Which runs were pooled, and how deep, recovered from the qrels (``metrics.pooling.inference``):
hand-made pools whose answer is known, then the two shared TREC collections (data README:
Robust 2003 pooled at depth >= 125 on topics 601-650; TREC 2011 Medical, 41 runs at depth 10)."""

from __future__ import annotations

from pathlib import Path

import pytest

from metrics import read_qrels
from metrics.pooling.inference import infer_pooling
from tests._shared_data import needs_shared_data, trec_runs


def _pool(runs: dict[str, dict[str, list[str]]], depth: int) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for ranked in runs.values():
        for qid, docs in ranked.items():
            for d in docs[:depth]:
                qrels.setdefault(qid, {})[d] = 0
    return qrels


def _ranking(prefix: str, n: int = 20) -> list[str]:
    return [f"{prefix}{i}" for i in range(n)]


def test_a_depth_3_pool_of_two_runs_is_found_and_the_third_run_is_not_pooled() -> None:
    topics = ("1", "2", "3", "4")
    pooled = {
        "a": {q: _ranking(f"a{q}-") for q in topics},
        "b": {q: _ranking(f"b{q}-") for q in topics},
    }
    qrels = _pool(pooled, 3)
    # c shares a's top 5 on topics 1 and 2 (so its top 3 is judged there), nothing elsewhere
    c = {q: (pooled["a"][q][:5] if q in ("1", "2") else _ranking(f"c{q}-")) for q in topics}
    found = infer_pooling({**pooled, "c": c}, qrels)
    assert found.depth == 3
    assert found.pooled == ["a", "b"]
    guess = {g.tag: g for g in found.runs}
    assert guess["a"].least_depth == 3 and guess["a"].fraction_at_depth == 1.0
    assert guess["c"].fraction_at_depth == 0.5 and not guess["c"].pooled
    assert guess["c"].least_depth == 0
    # majority depth: judged to 3 on 2 of 4 topics is not more than half
    assert guess["c"].k == 0


def test_majority_depth_fraction_and_judged_at_k() -> None:
    run = {"r": {q: _ranking(f"r{q}-", 10) for q in ("1", "2", "3")}}
    qrels = {
        "1": {f"r1-{i}": 1 for i in range(6)},  # top 6 judged
        "2": {f"r2-{i}": 0 for i in range(4)} | {"r2-5": 1},  # top 4, then a hole, then one
        "3": {f"r3-{i}": 0 for i in range(8)},  # top 8
    }
    g = infer_pooling(run, qrels).runs[0]
    assert g.k == 6  # judged to 6 on topics 1 and 3: two of three
    assert g.fraction_at_k == pytest.approx(2 / 3)
    assert g.judged_at_k == pytest.approx((6 / 6 + 5 / 6 + 6 / 6) / 3)
    assert g.least_depth == 4


def test_a_deep_pool_tolerates_one_unjudged_document_in_twenty() -> None:
    runs = {t: {"1": _ranking(f"{t}-", 60), "2": _ranking(f"{t}2-", 60)} for t in "abc"}
    qrels = _pool(runs, 40)
    del qrels["1"]["a-7"]  # a judging slip in a pooled run's top 40
    found = infer_pooling(runs, qrels)
    assert found.depth == 40 and found.tolerance == 2
    assert found.pooled == ["a", "b", "c"]


def test_negative_grades_count_as_pooled_and_rankings_judged_to_their_end_bound_nothing() -> None:
    runs = {
        "deep": {"1": _ranking("d", 30), "2": _ranking("e", 30)},
        "deep2": {"1": _ranking("f", 30), "2": _ranking("g", 30)},
        "short": {"1": ["d0", "d1"], "2": ["e0"]},  # shorter than the pool, all judged
    }
    qrels = _pool({k: v for k, v in runs.items() if k != "short"}, 10)
    qrels["2"]["e3"] = -1  # pooled, not judged: still in the pool
    found = infer_pooling(runs, qrels)
    assert found.depth == 10
    assert set(found.pooled) == {"deep", "deep2", "short"}


def test_topics_restrict_the_analysis_and_a_run_without_them_is_not_pooled() -> None:
    runs = {"a": {"1": _ranking("a", 10)}, "b": {"2": _ranking("b", 10)}}
    qrels = _pool(runs, 5)
    found = infer_pooling(runs, qrels, topics={"1"})
    assert found.topics == ("1",)
    assert found.pooled == ["a"]
    assert found.runs[1].topics == 0


def test_no_judged_prefix_anywhere_means_no_pool_depth() -> None:
    found = infer_pooling({"a": {"1": ["x", "y"]}}, {"1": {"z": 1}})
    assert found.depth == 0 and found.pooled == []
    with pytest.raises(ValueError):
        infer_pooling({}, {}, quorum=0)


def _rankings(root: Path) -> dict[str, dict[str, list[str]]]:
    return {tag: {q: run.ranking(q) for q in run.qids} for tag, run in trec_runs(root).items()}


@pytest.mark.data
@needs_shared_data("robust03")
def test_robust_2003_new_topics_were_pooled_at_depth_125_by_all_17_runs(shared_data: Path) -> None:
    root = shared_data / "robust03"
    qrels = read_qrels(root / "qrels.txt").to_dict()
    new = {str(q) for q in range(601, 651)}
    found = infer_pooling(_rankings(root), qrels, topics=new)
    assert found.depth == 125 and len(found.topics) == 50
    assert len(found.pooled) == 17
    # the old topics were judged from earlier pools: analysed with them, most runs fail
    everything = infer_pooling(_rankings(root), qrels)
    assert everything.depth < 125 and len(everything.pooled) < 17


@pytest.mark.data
@needs_shared_data("trec2011-medical")
def test_trec_2011_medical_41_runs_were_pooled_at_depth_10(shared_data: Path) -> None:
    root = shared_data / "trec2011-medical"
    qrels = read_qrels(root / "qrels.txt").to_dict()
    rankings = _rankings(root)
    found = infer_pooling(rankings, qrels)
    assert found.depth == 10
    assert len(found.pooled) == 41
    for tag in found.pooled:  # every topic's top 10 judged (merckkgaamer has shorter lists)
        judged = [
            d in qrels[q] for q, docs in rankings[tag].items() if q in qrels for d in docs[:10]
        ]
        assert all(judged), tag
    # judged to depth 10 on most topics is not enough: runs sharing a pooled sibling's top
    # documents reach it without having been pooled
    majority = [g for g in found.runs if g.k >= 10]
    assert len(majority) > 41
    assert min(g.judged_at_depth for g in found.runs) < 0.1
