"""Pooling strategies on small hand-worked runs (orders derived by hand in the comments)."""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics.pooling.adaptive import (
    HedgeStrategy,
    MaxMeanStrategy,
    MoveToFrontStrategy,
    ThompsonStrategy,
)
from metrics.pooling.runs import cut_runs, priority_runs
from metrics.pooling.simulation import simulate
from metrics.pooling.static import (
    BordaStrategy,
    DepthStrategy,
    DocidStrategy,
    RankStrategy,
    RRFStrategy,
    StratifiedStrategy,
)
from metrics.pooling.strategies import STRATEGIES, make_strategy

ADAPTIVE = ("mtf", "maxmean", "thompson", "hedge")


def judge_all(strategy, topic_runs, qrels, topic="1"):
    """Drive next_document with the oracle until the pool is exhausted (the queue's loop)."""
    state = strategy.start(topic_runs, topic=topic)
    order: list[str] = []
    feedback: dict[str, int] = {}
    while (doc := strategy.next_document(state, feedback)) is not None:
        order.append(doc)
        feedback = {doc: qrels.get(doc, 0)}
    return order


def test_registry_offers_every_named_strategy():
    assert set(STRATEGIES) == {
        "docid",
        "depth",
        "rank",
        "rrf",
        "borda",
        "mtf",
        "maxmean",
        "thompson",
        "hedge",
        "stratified",
    }
    for name in STRATEGIES:
        assert make_strategy(name).name == name


def test_unknown_strategy_or_parameter_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown pooling strategy 'nope'"):
        make_strategy("nope")
    with pytest.raises(ValueError, match="bad parameters for strategy 'hedge'"):
        make_strategy("hedge", k=3)
    with pytest.raises(ValueError, match="beta"):
        make_strategy("hedge", beta=1.5)


def test_docid_order_is_the_sorted_union():
    runs = {"A": ["d3", "d1"], "B": ["d2", "d1"]}
    assert DocidStrategy().order(runs) == ["d1", "d2", "d3"]


def test_order_skips_judged_documents_and_stops_at_the_budget():
    runs = {"A": ["d3", "d1"], "B": ["d2", "d1"]}
    assert DocidStrategy().order(runs, {"d1": 0}, budget=1) == ["d2"]


def test_rank_order_takes_best_rank_then_smaller_docid():
    # best ranks: w 1, x 1 (A), y 2, v 3, z 3
    runs = {"A": ["x", "y", "z"], "B": ["w", "x", "v"]}
    assert RankStrategy().order(runs) == ["w", "x", "y", "v", "z"]


def test_rrf_rewards_agreement_where_borda_rewards_top_ranks():
    runs = {"A": ["a", "b", "c"], "B": ["d", "e", "c"]}
    # RRF: c = 2/63 = 0.0317 > a = d = 1/61 > b = e = 1/62
    assert RRFStrategy().order(runs) == ["c", "a", "d", "b", "e"]
    # Borda (n = 3): a 3, d 3, b 2, c 1 + 1 = 2, e 2
    assert BordaStrategy().order(runs) == ["a", "d", "b", "c", "e"]


def test_rrf_constant_changes_the_fused_order():
    runs = {"A": ["a", "b", "c"], "B": ["d", "e", "c"]}
    # k = 0: a = d = 1 > b = e = 1/2 > c = 2/3? no: c = 1/3 + 1/3 = 2/3 > 1/2
    assert RRFStrategy(k=0).order(runs) == ["a", "d", "c", "b", "e"]
    assert RRFStrategy(k=0).params() == {"k": 0}


def test_group_priority_pools_only_each_groups_top_runs():
    groups = {"a1": "ga", "a2": "ga", "b1": "gb"}
    priority = {"a1": 2, "a2": 1, "b1": 1}
    assert priority_runs(groups, groups, priority, per_group=1) == ["a2", "b1"]
    assert priority_runs(groups, groups, priority, per_group=2) == ["a1", "a2", "b1"]
    runs = {
        "a1": {"1": ["x", "only_a1"]},
        "a2": {"1": ["x", "only_a2"]},
        "b1": {"1": ["y"]},
    }
    strategy = DepthStrategy(groups=groups, priority=priority, per_group=1)
    pool = strategy.pool(runs, depth=10)
    assert pool.runs == ("a2", "b1")
    assert pool.topics == {"1": ("only_a2", "x", "y")}
    assert pool.params["per_group"] == 1


def test_depth_pool_keeps_only_ranks_up_to_k_of_every_run():
    runs = {"A": {"1": ["a", "b", "c"], "2": ["p"]}, "B": {"1": ["c", "d", "e"]}}
    pool = make_strategy("depth").pool(runs, depth=2)
    assert pool.documents("1") == {"a", "b", "c", "d"}
    assert pool.documents("2") == {"p"}
    assert pool.size() == 5
    assert not pool.adaptive


def test_duplicate_docid_in_a_ranking_is_an_error():
    with pytest.raises(ValueError, match="duplicate docid"):
        cut_runs({"A": {"1": ["a", "a"]}}, "1", 10)


def test_pool_is_written_as_qid_q0_docid_lines_in_topic_order():
    runs = {"A": {"10": ["b"], "9": ["a", "c"]}}
    pool = make_strategy("docid").pool(runs, depth=5)
    out = io.StringIO()
    pool.write_trec(out)
    assert out.getvalue() == "9 Q0 a\n9 Q0 c\n10 Q0 b\n"
    described = json.loads(json.dumps(pool.to_json()))
    assert described["strategy"] == "docid"
    assert described["topics"] == {"9": ["a", "c"], "10": ["b"]}


def test_static_pool_is_cut_to_the_budget_but_adaptive_pool_keeps_all_candidates():
    runs = {"A": {"1": ["a", "b", "c"]}, "B": {"1": ["d", "e"]}}
    assert make_strategy("rank").pool(runs, depth=3, budget=2).topics["1"] == ("a", "d")
    adaptive = make_strategy("maxmean").pool(runs, depth=3, budget=2)
    assert adaptive.adaptive
    assert set(adaptive.topics["1"]) == {"a", "b", "c", "d", "e"}
    assert adaptive.budget == 2


def test_move_to_front_stays_on_a_run_until_it_misses():
    runs = {"A": ["a1", "a2", "a3"], "B": ["b1", "b2", "b3"]}
    qrels = {"a1": 1, "b1": 1, "b2": 2, "b3": 1}
    # A (tag first): a1 rel, stay; a2 non-rel, A -> -1; B (0): b1, b2, b3 rel; B exhausted; a3
    assert judge_all(MoveToFrontStrategy(), runs, qrels) == ["a1", "a2", "b1", "b2", "b3", "a3"]


def test_move_to_front_and_maxmean_part_ways_on_a_hand_worked_example():
    runs = {"A": ["a1", "a2", "a3", "a4"], "B": ["b1", "b2", "b3", "b4"]}
    qrels = {"a1": 1, "b2": 1}
    # MTF: a1 rel; a2 miss (A -1); b1 miss (B -1, tie -> A); a3 miss (A -2); b2 rel; b3 miss
    # (B -2, tie -> A); a4 miss; b4.
    mtf = ["a1", "a2", "b1", "a3", "b2", "b3", "a4", "b4"]
    assert judge_all(MoveToFrontStrategy(), runs, qrels) == mtf
    # MaxMean, mean = (1 + rel) / (2 + n): A 1/2 -> a1 rel 2/3 -> a2 miss 2/4 (ties B 1/2, A
    # first) -> a3 miss 2/5; B 1/2 -> b1 miss 1/3 < 2/5 -> a4 miss 2/6; A exhausted -> b2 b3 b4.
    maxmean = ["a1", "a2", "a3", "b1", "a4", "b2", "b3", "b4"]
    assert judge_all(MaxMeanStrategy(), runs, qrels) == maxmean


def test_a_document_already_judged_through_another_run_is_skipped():
    runs = {"A": ["x", "y"], "B": ["y", "z"]}
    # MTF: x miss (A -1); B: y rel, z; A's y is already judged, A exhausted.
    assert judge_all(MoveToFrontStrategy(), runs, {"y": 1}) == ["x", "y", "z"]


def test_hedge_follows_the_run_whose_weight_survives():
    runs = {"A": ["a", "b", "c"], "B": ["d", "e", "f"]}
    qrels = {"d": 1}
    # n = 3: g = 1, 5/11, 2/11. Start p = (1/2, 1/2): a and d tie at 1/2, a (smaller docid).
    # a non-rel: losses A 1, B 1/2 -> p = (0.240, 0.760): d wins. d rel: losses A 1/2, B 0 ->
    # p = (0.091, 0.909): e (0.413) beats b (0.041). e non-rel: losses A 1/2, B 8/11 ->
    # p = (0.144, 0.856): f (0.156) beats b (0.066) and c (0.026); then b, c.
    assert judge_all(HedgeStrategy(beta=0.1), runs, qrels) == ["a", "d", "e", "f", "b", "c"]
    assert RankStrategy().order(runs) == ["a", "d", "b", "e", "c", "f"]


def test_adaptive_order_without_judgments_assumes_misses_and_starts_with_next_document():
    runs = {"A": ["a1", "a2"], "B": ["b1", "b2"]}
    strategy = MoveToFrontStrategy()
    provisional = strategy.order(runs)
    assert provisional == ["a1", "b1", "a2", "b2"]
    state = strategy.start(runs)
    assert strategy.next_document(state, {}) == provisional[0]
    # with a1 judged relevant, A stays current
    assert strategy.order(runs, {"a1": 1}, budget=2) == ["a2", "b1"]


def test_asking_twice_without_a_judgment_gives_the_same_document():
    runs = {"A": ["a1", "a2"], "B": ["b1", "b2"]}
    strategy = ThompsonStrategy(seed=3)
    state = strategy.start(runs, topic="7")
    first = strategy.next_document(state, {})
    assert strategy.next_document(state, {}) == first
    assert first is not None
    assert strategy.next_document(state, {first: 0}) != first


def test_thompson_is_deterministic_for_a_seed():
    runs = {t: [f"{t}{i}" for i in range(20)] for t in "ABCDE"}
    qrels = {d: 1 for d in ("A1", "A2", "C3", "C4", "C5", "E0")}
    one = judge_all(ThompsonStrategy(seed=5), runs, qrels)
    two = judge_all(ThompsonStrategy(seed=5), runs, qrels)
    assert one == two
    assert sorted(one) == sorted(d for r in runs.values() for d in r)
    seeds = {tuple(judge_all(ThompsonStrategy(seed=s), runs, qrels)) for s in range(5)}
    assert len(seeds) > 1


def test_stratified_sample_reports_inclusion_probabilities_per_stratum():
    runs = {"A": ["a", "b", "c"], "B": ["d", "e", "f"]}
    strategy = StratifiedStrategy(strata=((1, 1.0), (3, 0.5)), seed=1)
    probs = strategy.inclusion(runs, topic="1")
    # stratum 1 = {a, d}: all sampled; stratum 2 = {b, c, e, f}: 2 of 4 sampled
    assert {d: p for d, p in probs.items() if p == 1.0} == {"a": 1.0, "d": 1.0}
    assert sorted(p for p in probs.values() if p != 1.0) == [0.5, 0.5]
    order = strategy.order(runs, topic="1")
    assert order[:2] == ["a", "d"]
    assert set(order) == set(probs)
    assert strategy.order(runs, topic="1") == order


def test_stratified_inclusion_probability_matches_the_sampling_frequency():
    runs = {"A": ["a", "b", "c"], "B": ["d", "e", "f"]}
    counts = dict.fromkeys("bcef", 0)
    trials = 2000
    for seed in range(trials):
        for doc in StratifiedStrategy(strata=((1, 1.0), (3, 0.5)), seed=seed).order(runs):
            if doc in counts:
                counts[doc] += 1
    for doc, count in counts.items():
        assert count / trials == pytest.approx(0.5, abs=0.05), doc


def test_stratified_pool_refuses_a_budget_that_would_cut_the_sample():
    runs = {"A": {"1": ["a", "b", "c"]}, "B": {"1": ["d", "e", "f"]}}
    strategy = StratifiedStrategy(strata=((3, 1.0),))
    with pytest.raises(ValueError, match="inclusion probabilities"):
        strategy.pool(runs, depth=3, budget=2)
    pool = strategy.pool(runs, depth=3)
    out = io.StringIO()
    pool.write_trec(out)
    assert out.getvalue().splitlines()[0] == "1 Q0 a 1"
    assert pool.inclusion["1"] == dict.fromkeys("abcdef", 1.0)


def test_simulation_counts_relevant_found_after_each_budget():
    runs = {"A": {"1": ["a1", "a2", "a3"], "2": ["z"]}, "B": {"1": ["b1", "b2", "b3"]}}
    qrels = {"1": {"a1": 1, "b1": 2, "b2": 1, "b3": 0}, "2": {"z": 0}}
    # rank order of topic 1: a1 b1 a2 b2 a3 b3 -> relevant 1, 2, 2, 3, 3, 3; unjudged a2 = miss
    result = simulate(runs, qrels, RankStrategy(), depth=3, budgets=[1, 2, 4, 100])
    assert result.found == {"1": (1, 2, 3, 3), "2": (0, 0, 0, 0)}
    assert result.mean_found == (0.5, 1.0, 1.5, 1.5)
    assert result.pool_size == {"1": 6, "2": 1}
    # relevance level 2: only b1 counts
    strict = simulate(runs, qrels, RankStrategy(), depth=3, budgets=[2], relevance_level=2)
    assert strict.found["1"] == (1,)


def test_simulation_drives_the_same_code_as_the_judging_queue():
    runs = {"A": {"1": ["a1", "a2", "a3", "a4"]}, "B": {"1": ["b1", "b2", "b3", "b4"]}}
    qrels = {"1": {"a1": 1, "b2": 1}}
    result = simulate(runs, qrels, MaxMeanStrategy(), depth=4, budgets=[3, 6])
    # the hand-worked MaxMean order a1 a2 a3 b1 a4 b2 finds a1 in 3 and b2 by 6
    assert result.found["1"] == (1, 2)


small_runs = st.dictionaries(
    st.sampled_from(["A", "B", "C", "D"]),
    st.lists(st.sampled_from([f"d{i}" for i in range(12)]), min_size=1, max_size=8, unique=True),
    min_size=1,
)


@settings(max_examples=60, deadline=None)
@given(
    runs=small_runs,
    relevant=st.sets(st.sampled_from([f"d{i}" for i in range(12)])),
    name=st.sampled_from(sorted(STRATEGIES)),
)
def test_a_state_rebuilt_from_the_judgment_history_asks_for_the_same_document(runs, relevant, name):
    strategy = make_strategy(name)
    qrels = dict.fromkeys(relevant, 1)
    order = judge_all(strategy, runs, qrels, topic="3")
    pooled = sorted({d for r in runs.values() for d in r})
    if name != "stratified":
        assert sorted(order) == pooled
    history: dict[str, int] = {}
    for doc in order:
        fresh = strategy.start(runs, topic="3")
        assert strategy.next_document(fresh, history) == doc
        history[doc] = qrels.get(doc, 0)
    assert strategy.next_document(strategy.start(runs, topic="3"), history) is None


@pytest.mark.parametrize("name", ADAPTIVE)
def test_adaptive_strategies_find_a_relevant_run_before_exhausting_a_bad_one(name):
    runs = {"A": [f"a{i}" for i in range(30)], "B": [f"b{i}" for i in range(30)]}
    qrels = {f"b{i}": 1 for i in range(30)}
    first_half = judge_all(make_strategy(name), runs, qrels)[:30]
    assert sum(qrels.get(d, 0) for d in first_half) >= 25
