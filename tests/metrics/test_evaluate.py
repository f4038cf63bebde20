"""evaluate(): modes, query sets, averaging, intervals, and the edge cases trec_eval defines."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import pytrec_eval
import scipy.stats

from metrics import Evaluator, Qrels, Run, evaluate, read_run

TREC_MEASURES = {
    "P_5": "P@5",
    "recall_5": "R@5",
    "ndcg_cut_5": "nDCG@5",
    "ndcg": "nDCG",
    "map": "AP",
    "map_cut_3": "AP@3",
    "recip_rank": "RR",
    "Rprec": "Rprec",
    "bpref": "Bpref",
    "infAP": "infAP",
    "success_1": "Success@1",
    "num_rel": "NumRel",
    "num_ret": "NumRet",
    "num_rel_ret": "NumRelRet",
}


def _pytrec(
    qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]], level: int = 1
) -> dict[str, dict[str, float]]:
    ev = pytrec_eval.RelevanceEvaluator(qrels, set(TREC_MEASURES), relevance_level=level)
    out: dict[str, dict[str, float]] = ev.evaluate(run)
    return out


def _assert_matches_trec_eval(
    qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]], level: int = 1
) -> None:
    ref = _pytrec(qrels, run, level)
    res = evaluate(
        qrels,
        run,
        list(TREC_MEASURES.values()),
        compat="trec_eval",
        relevance_level=level,
        ci=None,
    )
    assert sorted(res.queries) == sorted(ref)
    for qid, values in ref.items():
        for trec, ours in TREC_MEASURES.items():
            assert res.per_query[ours][qid] == pytest.approx(values[trec], abs=1e-12), (qid, trec)


# -- the cases trec_eval defines ----------------------------------------------------------


def test_ties_are_broken_by_docid_in_descending_byte_order_like_trec_eval() -> None:
    qrels = {"q": {"10": 1, "A": 0, "Z": 1, "b": 2}}
    run = {"q": {"9": 1.0, "10": 1.0, "A": 1.0, "Z": 1.0, "b": 0.5, "a": 1.0}}
    _assert_matches_trec_eval(qrels, run)
    res = evaluate(qrels, run, ["RR"], compat="trec_eval", ci=None)
    # order: a, Z, A, 9, 10, b -> first relevant is Z at rank 2
    assert res.per_query["RR"]["q"] == 0.5


def test_negative_grades_count_as_pooled_but_unjudged_like_trec_eval() -> None:
    qrels = {"q": {"a": -1, "b": 1, "c": 0, "d": -2, "e": 2}}
    run = {"q": {"a": 5.0, "c": 4.0, "d": 3.5, "b": 3.0, "x": 2.0, "e": 1.0}}
    _assert_matches_trec_eval(qrels, run)
    _assert_matches_trec_eval(qrels, run, level=2)


def test_query_without_relevant_documents_scores_zero_and_counts_in_trec_eval_mode() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 0}}
    run = {"q1": {"a": 1.0}, "q2": {"b": 1.0}}
    _assert_matches_trec_eval(qrels, run)
    res = evaluate(qrels, run, ["AP"], compat="trec_eval", ci=None)
    assert res.value("AP") == 0.5
    assert res.excluded == []


def test_missing_query_is_left_out_in_trec_eval_mode_and_scores_zero_with_complete() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": {"a": 1.0}, "q3": {"z": 1.0}}
    _assert_matches_trec_eval(qrels, run)
    plain = evaluate(qrels, run, ["P@1", "NumRel"], compat="trec_eval", ci=None)
    assert plain.value("P@1") == 1.0
    assert plain.value("NumRel") == 1.0
    assert {(e.qid, e.reason) for e in plain.excluded} == {
        ("q2", "not in run"),
        ("q3", "no judgments (not in qrels)"),
    }
    complete = evaluate(qrels, run, ["P@1", "NumRel"], compat="trec_eval", complete=True, ci=None)
    assert complete.value("P@1") == 0.5
    assert complete.per_query["P@1"] == {"q1": 1.0, "q2": 0.0}
    assert complete.value("NumRel") == 2.0


def test_empty_run_evaluates_no_query_in_trec_eval_mode_and_zero_everywhere_honestly() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 2}}
    empty: dict[str, dict[str, float]] = {}
    assert _pytrec(qrels, empty) == {}
    res = evaluate(qrels, empty, ["AP", "P@5"], compat="trec_eval", ci=None)
    assert res.queries == []
    assert math.isnan(res.value("AP"))
    honest = evaluate(qrels, empty, ["AP", "P@5"])
    assert honest.queries == ["q1", "q2"]
    assert honest.value("AP") == 0.0
    assert honest.aggregates["AP"].ci_low == 0.0


def test_honest_mode_excludes_zero_relevant_queries_and_scores_unanswered_ones_zero() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 0}, "q3": {"c": 1}, "q4": {"d": -1}}
    run = {"q1": {"a": 1.0}, "q2": {"b": 1.0}, "q9": {"x": 1.0}}
    res = evaluate(qrels, run, ["AP"], ci=None)
    assert res.mode == "honest"
    assert res.per_query["AP"] == {"q1": 1.0, "q3": 0.0}
    assert res.value("AP") == 0.5
    assert [(e.qid, e.reason) for e in res.excluded] == [
        ("q2", "no relevant documents"),
        ("q4", "no relevant documents"),
        ("q9", "no judgments (not in qrels)"),
    ]
    assert res.excluded_summary == [
        "2 of 5 queries excluded: no relevant documents",
        "1 of 5 queries excluded: no judgments (not in qrels)",
        "1 of 2 averaged queries is not in the run (scored 0)",
    ]
    assert res.unanswered == ["q3"]
    assert res.to_dict()["unanswered"] == ["q3"]


def test_recall_comes_with_its_ceiling_in_honest_mode() -> None:
    qrels = {"q1": {f"r{i}": 1 for i in range(20)}, "q2": {"a": 1, "b": 1}}
    run = {"q1": {f"r{i}": float(-i) for i in range(10)}, "q2": {"a": 1.0}}
    res = evaluate(qrels, run, ["R@10"], ci=None)
    assert res.value("R@10") == pytest.approx((0.5 + 0.5) / 2)
    assert res.value("ceiling@10") == pytest.approx((0.5 + 1.0) / 2)
    assert res.to_dict()["measures"]["R@10"]["ceiling"]["value"] == pytest.approx(0.75)


# -- averaging -----------------------------------------------------------------------------


def test_micro_recall_divides_total_found_by_total_relevant() -> None:
    qrels = {"q1": {f"r{i}": 1 for i in range(30)}, "q2": {"a": 1, "b": 1}}
    run = {"q1": {f"r{i}": float(-i) for i in range(3)}, "q2": {"a": 1.0, "b": 0.5}}
    macro = evaluate(qrels, run, ["R@10"], ci=None)
    micro = evaluate(qrels, run, ["R@10"], average="micro", ci=None)
    assert macro.value("R@10") == pytest.approx((3 / 30 + 1.0) / 2)
    assert micro.value("R@10") == pytest.approx(5 / 32)
    assert micro.average == "micro"
    assert micro.aggregates["R@10"].average == "micro"


def test_micro_averaging_is_refused_for_means_of_ratios() -> None:
    with pytest.raises(ValueError, match="micro-averaging is not defined for AP"):
        evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["AP", "R@5"], average="micro")


def test_micro_interval_brackets_the_micro_value() -> None:
    rng = np.random.default_rng(3)
    qrels = {f"q{i}": {f"d{j}": 1 for j in range(int(rng.integers(1, 40)))} for i in range(40)}
    run = {q: {f"d{j}": float(-j) for j in range(0, 60, 2)} for q in qrels}
    res = evaluate(qrels, run, ["R@10"], average="micro", ci="t")
    agg = res.aggregates["R@10"]
    assert agg.ci_low is not None and agg.ci_high is not None
    assert agg.ci_low < agg.value < agg.ci_high


# -- intervals -----------------------------------------------------------------------------


def test_every_aggregate_carries_a_bootstrap_interval_by_default() -> None:
    qrels = {f"q{i}": {"a": 1, "b": 1} for i in range(30)}
    run = {f"q{i}": {"a": float(i % 3), "x": 1.0, "b": 0.5} for i in range(30)}
    res = evaluate(qrels, run, ["nDCG@10", "P@2"])
    for name in ("nDCG@10", "P@2", "Judged@10", "Judged@2"):
        agg = res.aggregates[name]
        assert agg.ci_method == "bootstrap"
        assert agg.n_queries == 30
        assert agg.ci_low is not None and agg.ci_high is not None
        assert agg.ci_low - 1e-12 <= agg.value <= agg.ci_high + 1e-12


def test_t_interval_matches_the_textbook_formula() -> None:
    ranks = [10, 2, 3, 1, 5]  # first relevant document's rank per query -> RR = 1/rank
    qrels = {f"q{i}": {"r": 1} for i in range(5)}
    run = {
        f"q{i}": {**{f"x{j}": float(100 - j) for j in range(rank - 1)}, "r": 0.0}
        for i, rank in enumerate(ranks)
    }
    res = evaluate(qrels, run, ["RR"], ci="t", ci_level=0.9)
    rr = 1 / np.array(ranks, dtype=float)
    half = scipy.stats.t.ppf(0.95, 4) * rr.std(ddof=1) / math.sqrt(5)
    agg = res.aggregates["RR"]
    assert agg.value == pytest.approx(rr.mean())
    assert agg.ci_low == pytest.approx(rr.mean() - half)
    assert agg.ci_high == pytest.approx(rr.mean() + half)


def test_counts_are_summed_without_an_interval() -> None:
    res = evaluate({"q1": {"a": 1}, "q2": {"b": 1, "c": 2}}, {"q1": {"a": 1.0}}, ["NumRel"])
    agg = res.aggregates["NumRel"]
    assert (agg.value, agg.average, agg.ci_method) == (3.0, "sum", None)


# -- result object -----------------------------------------------------------------------


def test_result_serialises_to_json_with_mode_averaging_and_exclusions() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 0}}
    res = evaluate(qrels, {"q1": {"a": 1.0, "u": 0.5}}, ["P@2", "R@2"])
    doc = json.loads(json.dumps(res.to_dict()))
    assert doc["mode"] == "honest"
    assert doc["average"] == "macro"
    assert doc["ci"] == {"method": "bootstrap", "level": 0.95}
    assert doc["excluded"] == [{"qid": "q2", "reason": "no relevant documents"}]
    p2 = doc["measures"]["P@2"]
    assert p2["value"] == 0.5
    assert p2["judged"]["measure"] == "Judged@2"
    assert set(p2["treatments"]) == {"lower", "condensed", "upper"}
    assert p2["treatments"]["upper"]["value"] == 1.0
    assert doc["per_query"]["P@2"] == {"q1": 0.5}


def test_evaluator_prepared_once_gives_the_same_results_as_evaluate() -> None:
    qrels = Qrels.from_dict({"q1": {"a": 1, "b": 2}, "q2": {"c": 1}})
    runs = [
        Run.from_dict({"q1": {"a": 1.0, "b": 2.0}, "q2": {"c": 0.1}}, tag="one"),
        read_run(b"q1 Q0 b 1 1 two\nq2 Q0 x 1 1 two\nq2 Q0 c 2 0.5 two\n"),
    ]
    ev = Evaluator(qrels, ["AP", "nDCG@2"], compat="trec_eval", ci=None)
    for run in runs:
        once = ev.evaluate(run)
        fresh = evaluate(qrels, run, ["AP", "nDCG@2"], compat="trec_eval", ci=None)
        assert once.per_query == fresh.per_query
        assert once.run == run.tag
    assert ev.evaluate(runs[1]).per_query["AP"] == {"q1": 0.5, "q2": 0.5}


def test_bad_settings_are_rejected_with_clear_messages() -> None:
    q = {"q": {"a": 1}}
    with pytest.raises(ValueError, match="compat"):
        Evaluator(q, ["AP"], compat="trec")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="average"):
        Evaluator(q, ["AP"], average="weighted")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="relevance_level"):
        Evaluator(q, ["AP"], relevance_level=0)
    with pytest.raises(ValueError, match="no measures"):
        Evaluator(q, [])
