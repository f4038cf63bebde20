"""Recall@k curve against the worked examples of shared/seeds/000 and its reference functions."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics.measures.curve import kneedle, recall_curve

# The essay's query: four relevant documents, three retrieved at ranks 2, 5 and 9.
ESSAY_QRELS = {"q1": {"r1": 1, "r2": 1, "r3": 1, "r4": 1, "n0": 0}}
ESSAY_RANKING = {
    "q1": ["n0", "r1", "x3", "x4", "r2", "x6", "x7", "x8", "r3"] + [f"y{i}" for i in range(10, 201)]
}


def _essay_recall_at_k(retrieved_ids: list[str], relevant_ids: list[str], k: int) -> float | None:
    """The reference function printed in the essay."""
    relevant = set(relevant_ids)
    if not relevant:
        return None
    return len(relevant & set(retrieved_ids[:k])) / len(relevant)


def _essay_achievable_recall_at_k(runs: list[tuple[object, list[str]]], k: int) -> float:
    caps = [min(k, len(rel)) / len(rel) for _, rel in runs if rel]
    return sum(caps) / len(caps) if caps else 0.0


def test_essay_query_has_the_recall_values_the_essay_states() -> None:
    curve = recall_curve(ESSAY_QRELS, ESSAY_RANKING, max_k=100)
    recall = dict(zip(curve.k.tolist(), curve.recall.tolist(), strict=True))
    assert (recall[3], recall[5], recall[10], recall[100]) == (0.25, 0.50, 0.75, 0.75)


def test_essay_query_plateaus_from_rank_nine_and_never_retrieves_the_fourth_document() -> None:
    curve = recall_curve(ESSAY_QRELS, ESSAY_RANKING, max_k=100)
    assert curve.plateau == 9
    assert curve.never_retrieved == {"q1": ["r4"]}


def test_essay_query_has_its_elbow_at_the_last_relevant_document() -> None:
    # Height above the chord from (0, 0) to (100, 0.75), normalised: 1 - 0.09 at k = 9, the most
    # of any step (0.6667 - 0.05 at k = 5, 0.3333 - 0.02 at k = 2).
    assert recall_curve(ESSAY_QRELS, ESSAY_RANKING, max_k=100).elbow == 9


def test_query_with_twenty_relevant_documents_has_ceiling_one_half_at_ten() -> None:
    qrels = {"q": {f"d{i}": 1 for i in range(20)}}
    curve = recall_curve(qrels, {"q": [f"d{i}" for i in range(20)]}, max_k=20)
    assert curve.ceiling[9] == 0.5
    assert curve.recall[9] == 0.5  # a flawless ranking scores exactly the ceiling
    assert curve.ceiling[19] == 1.0


def test_queries_without_relevant_documents_are_excluded_and_listed() -> None:
    qrels = {**ESSAY_QRELS, "q0": {"a": 0, "b": 0}, "qe": {}}
    curve = recall_curve(qrels, {**ESSAY_RANKING, "q0": ["a"]}, max_k=10)
    assert curve.excluded == ["q0", "qe"]
    assert curve.queries == ["q1"]
    assert curve.recall[9] == 0.75  # not dragged down to 0.25 by two zero scores


def test_a_query_the_run_did_not_answer_scores_zero_at_every_depth() -> None:
    qrels = {**ESSAY_QRELS, "q2": {"z": 1}}
    curve = recall_curve(qrels, ESSAY_RANKING, max_k=10)
    assert curve.recall[9] == pytest.approx(0.75 / 2)
    assert curve.per_query_recall["q2"].tolist() == [0.0] * 10
    assert curve.never_retrieved["q2"] == ["z"]


def test_relevance_level_decides_which_grades_count() -> None:
    qrels = {"q": {"a": 2, "b": 1, "c": 2}}
    curve = recall_curve(qrels, {"q": ["b", "a"]}, max_k=2, relevance_level=2)
    assert curve.recall.tolist() == [0.0, 0.5]
    assert curve.never_retrieved == {"q": ["c"]}


def test_documents_beyond_max_k_are_retrieved_but_not_counted_in_the_curve() -> None:
    qrels = {"q": {"a": 1, "b": 1}}
    curve = recall_curve(qrels, {"q": ["a", "x", "y", "b"]}, max_k=3)
    assert curve.recall.tolist() == [0.5, 0.5, 0.5]
    assert curve.never_retrieved == {"q": []}


def test_a_curve_still_rising_at_max_k_has_no_plateau() -> None:
    qrels = {"q": {"a": 1, "b": 1}}
    assert recall_curve(qrels, {"q": ["a", "x", "b"]}, max_k=3).plateau is None


def test_a_plateau_tolerance_ignores_a_late_trickle_of_recall() -> None:
    qrels = {"q": {f"r{i}": 1 for i in range(100)}}
    ranking = [f"r{i}" for i in range(9)] + [f"x{i}" for i in range(40)] + ["r9"]
    # R@9 = 0.09, R@50 = 0.10 = R@60.
    assert recall_curve(qrels, {"q": ranking}, max_k=60).plateau == 50
    assert recall_curve(qrels, {"q": ranking}, max_k=60, plateau_tol=0.02).plateau == 9


def test_a_linear_recall_curve_has_no_elbow() -> None:
    qrels = {"q": {f"r{i}": 1 for i in range(50)}}
    curve = recall_curve(qrels, {"q": [f"r{i}" for i in range(50)]}, max_k=50)
    assert curve.recall[-1] == 1.0
    assert curve.elbow is None


def test_kneedle_finds_the_knee_of_the_square_root_at_one_quarter() -> None:
    # d(x) = sqrt(x) - x on [0, 1] is largest at x = 1/4.
    x = np.linspace(0.0, 1.0, 101)
    assert kneedle(x, np.sqrt(x)) == 25


def test_kneedle_with_a_high_sensitivity_finds_no_knee() -> None:
    # The difference curve peaks at 0.25 and falls by at most 0.25; S = 100 asks for a fall of
    # 100 * 0.01 = 1.
    x = np.linspace(0.0, 1.0, 101)
    assert kneedle(x, np.sqrt(x), sensitivity=100.0) is None


def test_kneedle_finds_no_knee_on_a_flat_or_tiny_curve() -> None:
    assert kneedle([0, 1, 2, 3], [0.5, 0.5, 0.5, 0.5]) is None
    assert kneedle([0, 1], [0.0, 1.0]) is None


def test_duplicate_docids_in_a_ranking_are_an_error() -> None:
    with pytest.raises(ValueError, match="duplicate"):
        recall_curve(ESSAY_QRELS, {"q1": ["r1", "r1"]}, max_k=5)


def test_a_curve_with_no_query_to_average_is_nan_and_serialises_as_null() -> None:
    curve = recall_curve({"q0": {"a": 0}}, {"q0": ["a"]}, max_k=3)
    assert all(math.isnan(v) for v in curve.recall)
    assert (curve.elbow, curve.plateau, curve.excluded) == (None, None, ["q0"])
    data = json.loads(json.dumps(curve.to_dict(), allow_nan=False))
    assert data["recall"] == [None, None, None]


def test_to_dict_is_strict_json_with_the_curve_and_its_diagnostics() -> None:
    data = json.loads(
        json.dumps(recall_curve(ESSAY_QRELS, ESSAY_RANKING, max_k=10).to_dict(), allow_nan=False)
    )
    assert data["k"] == list(range(1, 11))
    assert data["recall"][2] == 0.25
    assert data["ceiling"][2] == 0.75
    assert (data["plateau"], data["never_retrieved"], data["averaging"]) == (
        9,
        {"q1": ["r4"]},
        "macro",
    )
    assert data["per_query_recall"]["q1"][8] == 0.75


@st.composite
def collections(draw: st.DrawFn) -> tuple[dict[str, dict[str, int]], dict[str, list[str]], int]:
    docs = [f"d{i}" for i in range(15)]
    qrels: dict[str, dict[str, int]] = {}
    rankings: dict[str, list[str]] = {}
    for q in range(draw(st.integers(1, 6))):
        judged = draw(st.lists(st.sampled_from(docs), unique=True, max_size=10))
        qrels[f"q{q}"] = {d: draw(st.integers(0, 3)) for d in judged}
        if draw(st.booleans()):
            rankings[f"q{q}"] = draw(st.permutations(docs))[: draw(st.integers(0, 15))]
    return qrels, rankings, draw(st.integers(1, 20))


@settings(max_examples=80, deadline=None)
@given(collection=collections())
def test_curve_equals_the_essay_reference_functions_and_never_exceeds_its_ceiling(
    collection: tuple[dict[str, dict[str, int]], dict[str, list[str]], int],
) -> None:
    qrels, rankings, max_k = collection
    curve = recall_curve(qrels, rankings, max_k=max_k)
    rel = {q: [d for d, g in j.items() if g >= 1] for q, j in qrels.items()}
    for i, k in enumerate(range(1, max_k + 1)):
        per_query = [_essay_recall_at_k(rankings.get(q, []), rel[q], k) for q in sorted(qrels)]
        scored = [v for v in per_query if v is not None]
        if not scored:
            assert math.isnan(curve.recall[i])
            continue
        assert curve.recall[i] == pytest.approx(sum(scored) / len(scored))
        assert curve.ceiling[i] == pytest.approx(
            _essay_achievable_recall_at_k([(q, rel[q]) for q in qrels], k)
        )
        assert curve.recall[i] <= curve.ceiling[i] + 1e-12
    assert curve.excluded == sorted(q for q in qrels if not rel[q])
    if curve.queries:
        assert np.all(np.diff(curve.recall) >= 0)
        for q in curve.queries:
            assert curve.never_retrieved[q] == sorted(set(rel[q]) - set(rankings.get(q, [])))
