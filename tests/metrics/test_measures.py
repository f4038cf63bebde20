"""Measure definitions, checked against hand-worked examples (the seed documents) and trec_eval."""

from __future__ import annotations

import math

import pytest

from metrics import evaluate
from metrics.measures.names import Measure, UnknownMeasureError, parse_measure, parse_measures


def _ranked(docs: list[str]) -> dict[str, float]:
    """Scores that put ``docs`` in the given order (first = best)."""
    return {d: float(len(docs) - i) for i, d in enumerate(docs)}


def _one(qrels: dict[str, int], docs: list[str], measures: list[str]) -> dict[str, float]:
    res = evaluate({"q": qrels}, {"q": _ranked(docs)}, measures, ci=None)
    return {m: res.per_query[parse_measure(m).name]["q"] for m in measures}


# -- the seed documents' worked examples ----------------------------------------------------


def test_recall_of_a_query_with_four_relevant_found_at_ranks_2_5_9() -> None:
    # seeds/000: "Recall@3 is 0.25, Recall@5 is 0.50, Recall@10 is 0.75 ... still 0.75" at 100
    docs = [f"n{i}" for i in range(1, 101)]
    docs[1], docs[4], docs[8] = "r1", "r2", "r3"
    qrels = {"r1": 1, "r2": 1, "r3": 1, "r4": 1}
    got = _one(qrels, docs, ["R@3", "R@5", "R@10", "R@100"])
    assert got == {"R@3": 0.25, "R@5": 0.5, "R@10": 0.75, "R@100": 0.75}


def test_ceiling_of_a_query_with_twenty_relevant_at_ten_is_one_half() -> None:
    # seeds/000: "A query with 20 relevant documents, measured at k=10, has a maximum of 0.50"
    qrels = {f"r{i}": 1 for i in range(20)}
    perfect = [f"r{i}" for i in range(20)]
    got = _one(qrels, perfect, ["ceiling@10", "R@10"])
    assert got == {"ceiling@10": 0.5, "R@10": 0.5}


def test_graded_recall_counts_every_grade_at_least_one_as_relevant() -> None:
    # seeds/002: predicted A,B,C,D; grades A=3,B=2,C=1,D=0,E=3 -> Recall@3 = 3/4
    qrels = {"A": 3, "B": 2, "C": 1, "D": 0, "E": 3}
    assert _one(qrels, ["A", "B", "C", "D"], ["R@3"]) == {"R@3": 0.75}


def test_three_query_lesson_example_is_a_macro_average_in_both_modes() -> None:
    # seeds/004: Recall@3 0.50, Recall@5 0.67, MRR 0.28, nDCG@5 0.39 (binary gains): each is
    # the plain mean over the three queries; query 3 (its relevant d9 never retrieved) counts 0.
    qrels = {"1": {"d1": 1, "d2": 1}, "2": {"d5": 1}, "3": {"d9": 1}}
    run = {
        "1": _ranked(["d3", "d7", "d1", "d9", "d2"]),
        "2": _ranked(["d4", "d5", "d6", "d8", "d0"]),
        "3": _ranked(["d2", "d1", "d3", "d4", "d5"]),
    }
    for compat in (None, "trec_eval"):
        res = evaluate(qrels, run, ["R@3", "R@5", "RR", "nDCG@5"], compat=compat, ci=None)
        assert res.average == "macro"
        assert res.excluded == []
        assert round(res.value("R@3"), 2) == 0.50
        assert round(res.value("R@5"), 2) == 0.67
        assert round(res.value("RR"), 2) == 0.28
        assert round(res.value("nDCG@5"), 2) == 0.39
        assert res.per_query["R@3"] == {"1": 0.5, "2": 1.0, "3": 0.0}
        assert res.per_query["RR"] == pytest.approx({"1": 1 / 3, "2": 1 / 2, "3": 0.0})


# -- definitions by hand ---------------------------------------------------------------------


def test_precision_divides_by_k_even_when_fewer_documents_are_retrieved() -> None:
    assert _one({"a": 1}, ["a", "b"], ["P@10"]) == {"P@10": 0.1}


def test_average_precision_divides_by_all_relevant_documents() -> None:
    # relevant at ranks 1 and 3, a third relevant never retrieved: (1/1 + 2/3) / 3
    got = _one({"a": 1, "c": 1, "z": 1}, ["a", "b", "c"], ["AP", "AP@2", "Rprec"])
    assert got["AP"] == pytest.approx((1 + 2 / 3) / 3)
    assert got["AP@2"] == pytest.approx(1 / 3)
    assert got["Rprec"] == pytest.approx(2 / 3)


def test_reciprocal_rank_with_and_without_cutoff() -> None:
    got = _one({"c": 1}, ["a", "b", "c"], ["RR", "RR@2", "RR@3", "Success@2", "Success@3"])
    assert got == {"RR": 1 / 3, "RR@2": 0.0, "RR@3": 1 / 3, "Success@2": 0.0, "Success@3": 1.0}


def test_ndcg_uses_raw_grades_and_an_ideal_from_all_grades_at_least_one() -> None:
    qrels = {"a": 1, "b": 3, "c": 0, "d": 2}
    got = _one(qrels, ["a", "c", "b"], ["nDCG@2", "nDCG"])
    ideal2 = 3 + 2 / math.log2(3)
    ideal = ideal2 + 1 / math.log2(4)
    assert got["nDCG@2"] == pytest.approx(1 / ideal2)
    assert got["nDCG"] == pytest.approx((1 + 3 / math.log2(4)) / ideal)


def test_ndcg_ignores_the_relevance_level_but_recall_does_not() -> None:
    qrels = {"q": {"a": 1, "b": 2}}
    run = {"q": _ranked(["a", "b"])}
    expected = (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3))  # gains 1, 2; ideal order b, a
    for level, recall in ((1, 0.5), (2, 0.0)):
        res = evaluate(qrels, run, ["nDCG@2", "R@1"], relevance_level=level, ci=None)
        assert res.per_query["nDCG@2"]["q"] == pytest.approx(expected)
        assert res.per_query["R@1"]["q"] == recall


def test_bpref_counts_judged_nonrelevant_documents_above_each_relevant_one() -> None:
    # R = 2, N = 2: a (rel, 0 nonrel above) -> 1; c (rel, 1 nonrel above) -> 1 - 1/2
    qrels = {"a": 1, "c": 1, "n1": 0, "n2": 0}
    got = _one(qrels, ["a", "n1", "x", "c"], ["Bpref"])
    assert got["Bpref"] == pytest.approx((1 + 0.5) / 2)


def test_judged_at_k_counts_documents_with_a_non_negative_grade() -> None:
    qrels = {"a": 0, "b": -1, "c": 2}
    got = _one(qrels, ["a", "b", "x", "c"], ["Judged@4", "Unjudged@4", "Judged@10", "NumRet"])
    assert got == {"Judged@4": 0.5, "Unjudged@4": 0.5, "Judged@10": 0.5, "NumRet": 4.0}


def test_counts_of_relevant_retrieved_and_relevant_retrieved() -> None:
    got = _one({"a": 1, "b": 2, "c": 0}, ["b", "x", "c"], ["NumRel", "NumRet", "NumRelRet"])
    assert got == {"NumRel": 2.0, "NumRet": 3.0, "NumRelRet": 1.0}


# -- treatments of unjudged documents ----------------------------------------------------


def test_three_treatments_bound_precision_of_a_partly_judged_ranking() -> None:
    # ranking: r (rel), u1 (unjudged), n (judged nonrel), u2 (unjudged), r2 (rel)
    qrels = {"q": {"r": 1, "n": 0, "r2": 1, "z": 1}}
    run = {"q": _ranked(["r", "u1", "n", "u2", "r2"])}
    res = evaluate(qrels, run, ["P@4", "R@4"], ci=None)
    p = res.per_query_treatments["P@4"]
    assert p["lower"]["q"] == 0.25
    assert p["condensed"]["q"] == 0.5  # r, n, r2 once the unjudged are removed
    assert p["upper"]["q"] == 0.75  # r, u1, u2 relevant
    r = res.per_query_treatments["R@4"]
    assert r["lower"]["q"] == pytest.approx(1 / 3)
    assert r["condensed"]["q"] == pytest.approx(2 / 3)
    assert r["upper"]["q"] == pytest.approx(3 / 5)  # (1 + 2 unjudged) / (3 + 2)
    assert res.per_query["Judged@4"]["q"] == 0.5
    assert res.companions["P@4"] == {"judged": "Judged@4"}
    assert res.companions["R@4"] == {"judged": "Judged@4", "ceiling": "ceiling@4"}


def test_upper_treatment_never_falls_below_the_lower_bound() -> None:
    # AP@10: one relevant doc at rank 1, unjudged at rank 10 -> all-relevant AP@10 is 0.6 < 1
    docs = ["r"] + [f"n{i}" for i in range(8)] + ["u"]
    qrels = {"q": {"r": 1, **{f"n{i}": 0 for i in range(8)}}}
    res = evaluate(qrels, {"q": _ranked(docs)}, ["AP@10", "nDCG@10"], ci=None)
    for m in ("AP@10", "nDCG@10"):
        t = res.per_query_treatments[m]
        assert t["lower"]["q"] == pytest.approx(1.0)
        assert t["upper"]["q"] >= t["lower"]["q"]


# -- names -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("nDCG@10", "nDCG@10"),
        ("ndcg_cut_10", "nDCG@10"),
        ("ndcg_cut.10", "nDCG@10"),
        ("R@100", "R@100"),
        ("recall_100", "R@100"),
        ("P@10", "P@10"),
        ("P_10", "P@10"),
        ("p.10", "P@10"),
        ("RR", "RR"),
        ("recip_rank", "RR"),
        ("RR@10", "RR@10"),
        ("AP", "AP"),
        ("map", "AP"),
        ("MAP", "AP"),
        ("AP@100", "AP@100"),
        ("map_cut_100", "AP@100"),
        ("Rprec", "Rprec"),
        ("Bpref", "Bpref"),
        ("bpref", "Bpref"),
        ("ndcg", "nDCG"),
        ("Judged@10", "Judged@10"),
        ("Success@10", "Success@10"),
        ("success_10", "Success@10"),
        ("infAP", "infAP"),
        ("NumRel", "NumRel"),
        ("num_rel", "NumRel"),
        ("NumRet", "NumRet"),
        ("num_ret", "NumRet"),
        ("NumRelRet", "NumRelRet"),
        ("num_rel_ret", "NumRelRet"),
        ("ceiling@10", "ceiling@10"),
    ],
)
def test_measure_names_parse_in_both_styles(text: str, name: str) -> None:
    assert parse_measure(text).name == name


def test_trec_eval_names_round_trip_where_trec_eval_has_the_measure() -> None:
    assert parse_measure("nDCG@10").trec_name == "ndcg_cut_10"
    assert parse_measure("AP").trec_name == "map"
    assert parse_measure("R@100").trec_name == "recall_100"
    assert parse_measure("ceiling@10").trec_name is None


def test_trec_eval_comma_lists_expand_and_duplicates_collapse() -> None:
    assert parse_measures(["P.5,10", "P@10"]) == [Measure("P", 5), Measure("P", 10)]


def test_unknown_measure_lists_close_matches() -> None:
    with pytest.raises(UnknownMeasureError, match=r"unknown measure 'ndgc@10'.*nDCG@10"):
        parse_measure("ndgc@10")


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("ceiling", "needs a cutoff"),
        ("P", "names several"),
        ("Rprec@5", "takes no cutoff"),
        ("P@0", "positive integer"),
    ],
)
def test_invalid_cutoffs_are_explained(text: str, why: str) -> None:
    with pytest.raises(UnknownMeasureError, match=why):
        parse_measure(text)
