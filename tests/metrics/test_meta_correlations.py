"""Correlations and system-ranking agreement for the meta-evaluation of judges (issue 35):
hand-worked values, significance checked with scipy, and degenerate inputs reported as undefined
with their reason, never 0.0."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
import scipy.stats

from metrics.judges.meta import (
    Correlation,
    Undefined,
    correlation,
    correlation_interval,
    correlation_rows,
    ranking_meta,
)

PEOPLE = {"a": 0.9, "b": 0.7, "c": 0.5, "d": 0.3}


def test_hand_worked_values() -> None:
    # the judge swaps c and d: of the 6 pairs, 5 concordant and 1 discordant
    judge = {"a": 0.8, "b": 0.6, "c": 0.2, "d": 0.4}
    assert correlation("kendall_tau_b", PEOPLE, judge) == pytest.approx((5 - 1) / 6)
    # Spearman: rank differences 0, 0, 1, 1: 1 - 6 * 2 / (4 * 15) = 0.8
    assert correlation("spearman", PEOPLE, judge) == pytest.approx(0.8)
    # tau_AP, the judge's ranking a, b, d, c against people's: below the top, b has 1 of 1
    # above it right, d 2 of 2 (a, b), c 2 of 3 (d is above it, wrongly):
    # 2 / 3 * (1 + 1 + 2/3) - 1
    assert correlation("tau_ap", PEOPLE, judge) == pytest.approx(2 * (1 + 1 + 2 / 3) / 3 - 1)
    assert correlation("kendall_tau_b", PEOPLE, PEOPLE) == pytest.approx(1.0)


@pytest.mark.parametrize("kind", ["kendall_tau_b", "spearman", "tau_ap"])
def test_degenerate_inputs_are_undefined_with_their_reason(kind: str) -> None:
    tied = dict.fromkeys(PEOPLE, 0.5)
    found = correlation(kind, PEOPLE, tied)  # type: ignore[arg-type]
    assert found == Undefined("every system has the same score under the judge")
    assert str(found) == "undefined: every system has the same score under the judge"
    found = correlation(kind, {"a": 0.1}, {"a": 0.2, "b": 0.3})  # type: ignore[arg-type]
    assert found == Undefined("1 system(s) scored under both: a correlation needs at least 2")
    found = correlation(kind, tied, PEOPLE)  # type: ignore[arg-type]
    assert isinstance(found, Undefined) and "under people" in found.reason
    assert not isinstance(found, float)  # never a number standing for "no agreement"


def test_the_interval_over_topics_counts_undefined_resamples() -> None:
    topics = [f"t{i}" for i in range(12)]
    people = {s: {t: v + 0.01 * i for i, t in enumerate(topics)} for s, v in PEOPLE.items()}
    judge = {s: {t: v for t in topics} for s, v in PEOPLE.items()}
    found = correlation_interval("kendall_tau_b", people, judge, resamples=200)
    assert found.value == pytest.approx(1.0) and found.defined == 200
    assert found.low == pytest.approx(1.0) and found.high == pytest.approx(1.0)
    # the judge scores every system alike on every topic: undefined, no interval
    flat = {s: dict.fromkeys(topics, 0.4) for s in PEOPLE}
    found = correlation_interval("spearman", people, flat, resamples=50)
    assert isinstance(found.value, Undefined) and found.low is None and found.defined == 0


def test_an_estimate_is_json_safe_and_says_why_it_is_undefined() -> None:
    flat = {s: {"t1": 0.4, "t2": 0.4} for s in PEOPLE}
    people = {s: {"t1": v, "t2": v} for s, v in PEOPLE.items()}
    found = correlation_interval("kendall_tau_b", people, flat, resamples=20).to_dict()
    assert found == {
        "value": None,
        "undefined": "every system has the same score under the judge",
        "low": None,
        "high": None,
        "resamples": 20,
        "defined": 0,
        "level": 0.95,
        "no_interval": None,  # the value is undefined: its reason says why
    }
    json.dumps(found, allow_nan=False)
    found = correlation_interval("kendall_tau_b", people, people, resamples=20).to_dict()
    assert (found["value"], found["undefined"], found["low"], found["high"]) == (1.0, None, 1, 1)


def test_no_interval_when_too_few_resamples_are_defined() -> None:
    # two systems, a ahead of b under people on every topic; the judge ties them on every topic
    # but t0, where a is ahead: tau-b = 1 on the full data, undefined (the judge ties every
    # system) on a resample that misses t0, which happens with probability 0.9^10 = 0.35
    topics = [f"t{i}" for i in range(10)]
    people = {"a": dict.fromkeys(topics, 0.6), "b": dict.fromkeys(topics, 0.3)}
    judge = {"a": dict.fromkeys(topics, 0.5) | {"t0": 0.9}, "b": dict.fromkeys(topics, 0.5)}
    found = correlation_interval("kendall_tau_b", people, judge, resamples=400)
    assert found.value == pytest.approx(1.0)
    assert found.low is None and found.high is None
    assert 0.55 * 400 < found.defined < 0.75 * 400
    assert (
        found.no_interval == f"defined in {found.defined} of 400 resamples: an interval needs 90%"
    )
    # asking for only half of them defined gives the interval of the defined ones
    found = correlation_interval("kendall_tau_b", people, judge, resamples=400, min_defined=0.5)
    assert found.low == pytest.approx(1.0) and found.high == pytest.approx(1.0)


@pytest.mark.parametrize("kind", ["kendall_tau_b", "spearman", "tau_ap"])
def test_every_resample_at_once_agrees_with_scipy_one_at_a_time(kind: Correlation) -> None:
    # rows of means with ties (rounded), one row with every system tied (undefined)
    rng = np.random.default_rng(5)
    x = np.round(rng.uniform(0, 1, (30, 7)), 1)
    y = np.round(x + rng.normal(0, 0.2, (30, 7)), 1)
    y[3] = 0.5
    rows = correlation_rows(kind, x, y)
    names = [f"s{i}" for i in range(7)]
    for row, found in enumerate(rows):
        one = correlation(
            kind, dict(zip(names, x[row], strict=True)), dict(zip(names, y[row], strict=True))
        )
        if isinstance(one, Undefined):
            assert np.isnan(found)
        else:
            assert found == pytest.approx(one, abs=1e-12)
    assert np.isnan(rows[3])


# Four runs on eight topics (people's scores). B is A - 0.20 give or take 0.02, C is B with a
# zero-mean-ish wobble of +-0.05 (mean +0.00125), D is C - 0.30 give or take 0.02. People's
# means: A 0.69, C 0.49125, B 0.49, D 0.19125.
_A = 0.69 + np.array([0.01, -0.04, 0.03, -0.01, -0.03, 0.02, 0.00, 0.02])
_B = _A - 0.20 + np.array([0.01, -0.01, 0.02, -0.02, 0.01, -0.01, 0.00, 0.00])
_C = _B + np.array([0.05, -0.05, 0.04, -0.04, 0.03, -0.03, 0.02, -0.01])
_D = _C - 0.30 + np.array([0.02, 0.00, -0.02, 0.01, -0.01, 0.00, 0.01, -0.01])
TOPICS = [f"t{i}" for i in range(8)]
HUMAN = {
    run: dict(zip(TOPICS, s, strict=True)) for run, s in zip("ABCD", (_A, _B, _C, _D), strict=True)
}
# the judge agrees on every topic, except that it lifts B by 0.25, above A
JUDGE = HUMAN | {"B": {t: v + 0.25 for t, v in HUMAN["B"].items()}}


def test_significant_pairs_the_judge_keeps() -> None:
    # which pairs people separate, checked with scipy: all but B-C
    significant = {
        (a, b)
        for a, b in itertools.combinations("ABCD", 2)
        if scipy.stats.ttest_rel(list(HUMAN[a].values()), list(HUMAN[b].values())).pvalue < 0.05
    }
    assert significant == {("A", "B"), ("A", "C"), ("A", "D"), ("B", "D"), ("C", "D")}
    found = ranking_meta(HUMAN, JUDGE, top_k=3, resamples=300)
    # of the 5, the judge reverses A-B only: 4 kept, all significant under the judge too (its
    # B-D difference is people's shifted by 0.25, the others are people's)
    assert (found.pairs, found.significant_pairs, found.kept, found.kept_significant) == (
        6,
        5,
        4,
        4,
    )
    assert found.significant_kept.value == pytest.approx(4 / 5)
    assert found.significant_kept.low is not None and found.significant_kept.high is not None
    assert found.significant_kept.low <= 0.8 <= found.significant_kept.high
    assert (found.n_runs, found.n_topics) == (4, 8)


def test_rank_correlations_and_the_top_k() -> None:
    found = ranking_meta(HUMAN, JUDGE, top_k=3, resamples=200)
    # people rank A, C, B, D; the judge B, A, C, D. Pairs: A-C +, A-B -, A-D +, C-B -, C-D +,
    # B-D +: tau-b = (4 - 2) / 6
    assert found.kendall_tau_b.value == pytest.approx(1 / 3)
    # rank differences 1 (A), 1 (C), 2 (B), 0 (D): 1 - 6 * 6 / (4 * 15)
    assert found.spearman.value == pytest.approx(0.4)
    # tau_AP down the judge's list: A has 0 of 1 above it right, C 1 of 2 (A), D 3 of 3:
    # 2 / 3 * (0 + 1/2 + 1) - 1
    assert found.tau_ap.value == pytest.approx(0.0)
    # people's top 3 are A, C, B: pairs A-C +, A-B -, C-B -: tau-b = -1/3
    assert found.top_runs == ["A", "C", "B"] and found.top_k == 3
    assert found.tau_top_k.value == pytest.approx(-1 / 3)
    # the top 2 (A, C) keep their order under the judge
    assert ranking_meta(HUMAN, JUDGE, top_k=2, resamples=0).tau_top_k.value == pytest.approx(1.0)
    for figure in (found.kendall_tau_b, found.spearman, found.tau_ap, found.tau_top_k):
        assert figure.low is not None and figure.high is not None
        # scipy's point value and the resamples' may differ in the last bit
        assert figure.low - 1e-12 <= figure.value <= figure.high + 1e-12  # type: ignore[operator]
    json.dumps(found.to_dict(), allow_nan=False)


def test_a_resample_recomputes_the_t_tests() -> None:
    # one resample: its interval is that resample's share; recomputed here with scipy on the
    # topics the same generator draws
    found = ranking_meta(HUMAN, JUDGE, resamples=1, seed=3, min_defined=0.0)
    drawn = np.random.default_rng(3).integers(0, 8, size=(1, 8))[0]

    def scores(table: dict[str, dict[str, float]], run: str) -> np.ndarray:
        return np.array([table[run][TOPICS[i]] for i in drawn])

    significant = kept = 0
    for a, b in itertools.combinations("ABCD", 2):
        people = scores(HUMAN, a) - scores(HUMAN, b)
        judge = scores(JUDGE, a) - scores(JUDGE, b)
        if scipy.stats.ttest_rel(scores(HUMAN, a), scores(HUMAN, b)).pvalue < 0.05:
            significant += 1
            kept += np.sign(judge.mean()) == np.sign(people.mean())
    assert found.significant_kept.low == pytest.approx(kept / significant)


def test_no_significant_pair_is_undefined_not_zero() -> None:
    topics = ["t1", "t2", "t3"]
    same = {"a": {"t1": 0.2, "t2": 0.4, "t3": 0.3}, "b": {"t1": 0.2, "t2": 0.4, "t3": 0.3}}
    found = ranking_meta(same, same, resamples=50)
    reason = "no pair of runs differs significantly under people (p < 0.05)"
    assert found.significant_kept.value == Undefined(reason)
    assert found.significant_kept.to_dict()["value"] is None
    assert found.kendall_tau_b.value == Undefined("every system has the same score under people")
    assert found.significant_pairs == 0 and found.kept == 0
    one_topic = {r: {"t1": s[topics[0]] + i} for i, (r, s) in enumerate(same.items())}
    found = ranking_meta(one_topic, one_topic, resamples=10)
    reason = "1 topic(s) scored under both: a paired t-test needs at least 2"
    assert found.significant_kept.value == Undefined(reason)
    found = ranking_meta({"a": {"t1": 0.1}}, {"b": {"t1": 0.1}}, resamples=10)
    assert found.n_runs == 0 and found.human_only_runs == 1 and found.judge_only_runs == 1
    assert isinstance(found.kendall_tau_b.value, Undefined)


def test_a_run_missing_a_topic_scores_zero_there() -> None:
    # under the judge, a has no score on t2: 0.0 there, as trec_eval -c, so its mean (0.3)
    # falls below b's (0.4) and the order is reversed: tau-b = -1
    people = {"a": {"t1": 0.6, "t2": 0.6}, "b": {"t1": 0.4, "t2": 0.4}}
    judge = {"a": {"t1": 0.6}, "b": {"t1": 0.4, "t2": 0.4}}
    found = ranking_meta(people, judge, resamples=0)
    assert found.n_topics == 2
    assert found.kendall_tau_b.value == pytest.approx(-1.0)


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="top_k"):
        ranking_meta(HUMAN, JUDGE, top_k=1)
    with pytest.raises(ValueError, match="alpha"):
        ranking_meta(HUMAN, JUDGE, alpha=1.0)
    with pytest.raises(ValueError, match="not finite"):
        ranking_meta(HUMAN, JUDGE | {"A": {"t0": math.nan}})
