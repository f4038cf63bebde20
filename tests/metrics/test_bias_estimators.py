"""The pooling-penalty estimators and their validation (metrics.bias.estimators).

Three kinds of checks: tiny collections worked by hand (the arithmetic is in the comments);
a slow, literal reference written here from the definitions (pools rebuilt per scenario, qrels
restricted by explicit pools, p∘r runs built document by document and scored with pytrec_eval)
checked against the vectorised code on seeded random collections; and the error measures (MAE,
SRE, SRE*, tau-b) on a case worked by hand.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping

import numpy as np
import pytest
import pytrec_eval

from metrics import Qrels, Run, UnknownMeasureError
from metrics.bias.estimators import estimator_report
from metrics.bias.leaveout import LeaveOut
from metrics.bias.nested import EstimatorAnalysis
from metrics.bias.validation import estimator_errors
from metrics.evaluation.evaluator import Evaluator

QrelsDict = dict[str, dict[str, int]]
RunDict = dict[str, dict[str, float]]


def _run(ranking: Mapping[str, list[str]], tag: str) -> Run:
    """A run whose trec_eval order is the given ranking (scores n, n-1, ...)."""
    return Run.from_dict(
        {q: {d: float(len(docs) - i) for i, d in enumerate(docs)} for q, docs in ranking.items()},
        tag=tag,
    )


# --------------------------------------------------------------------------------------------
# Worked by hand: pool and Webber & Park (nested leave-outs)

# One topic, depth 2, leave one run out, P@2. Pools: A {d1 d2}, B {d1 d3}, C {d4 d5}; the
# contributors are d1 {A, B}, d2 {A}, d3 {B}, d4 {C}, d5 {C}; d6 is judged but never pooled.
WP_QRELS = Qrels.from_dict({"1": {"d1": 1, "d2": 0, "d3": 1, "d4": 1, "d5": 0, "d6": 1}})
WP_RUNS = {
    "A": _run({"1": ["d1", "d2", "d3"]}, "A"),
    "B": _run({"1": ["d1", "d3", "d4"]}, "B"),
    "C": _run({"1": ["d4", "d5", "d1"]}, "C"),
    "N": _run({"1": ["d6", "d3", "d1"]}, "N"),
}


def test_each_run_says_how_much_of_its_top_k_the_pool_without_its_unit_judged() -> None:
    """The depth-2 pool of A, B, C is d1-d5. Without A: d1, d3, d4, d5, so A's top 2 (d1, d2)
    has d2 unjudged; without B: d1, d2, d4, d5 (B's d3 unjudged); without C: d1, d2, d3 (both of
    C's d4, d5 unjudged). N, not pooled, on the full pool: d6 unjudged, d3 judged."""
    rep = estimator_report(
        WP_QRELS, WP_RUNS, "P@2", LeaveOut(depth=2, leave_out="group", pooled=["A", "B", "C"])
    ).to_dict()
    novelty = {tag: (row["judged"], row["unjudged"]) for tag, row in rep["runs"].items()}
    assert novelty == {"A": (0.5, 1), "B": (0.5, 1), "C": (0.0, 2)}
    assert (rep["not_pooled"]["N"]["judged"], rep["not_pooled"]["N"]["unjudged"]) == (0.5, 1)
    # for AP (no cutoff) k is the pool depth
    ap = estimator_report(
        WP_QRELS, WP_RUNS, "AP", LeaveOut(depth=2, leave_out="group", pooled=["A", "B", "C"])
    ).to_dict()
    assert ap["runs"]["C"]["judged"] == 0.0 and ap["runs"]["C"]["unjudged"] == 2


def test_webber_park_and_pool_by_hand() -> None:
    rep = estimator_report(
        WP_QRELS, WP_RUNS, "P@2", LeaveOut(depth=2, leave_out="group", pooled=["A", "B", "C"])
    )
    assert rep.leave_out == "run"  # no groups: each run is a unit
    runs = rep.runs
    # full pool {d1..d5}: A d1 rel d2 non -> 0.5; B d1 d3 -> 1.0; C d4 d5 -> 0.5
    assert [runs[t]["score_full_pool"] for t in "ABC"] == [0.5, 1.0, 0.5]
    # A left out: pool {d1 d3 d4 d5}; A = d1 rel, d2 unjudged -> 0.5 (pool estimate 0.5).
    #   deltas in that pool: B 1.0 - 0 (without B only C's {d4 d5}: d1 {A,B} leaves too) = 1.0;
    #   C 0.5 - 0 (without C only B's {d1 d3}) = 0.5; webber = 0.5 + 0.75 = 1.25.
    # B left out: pool {d1 d2 d4 d5}; B = d1 rel, d3 unjudged -> 0.5.
    #   A 0.5 - 0 (only C's {d4 d5}) = 0.5; C 0.5 - 0 (only A's {d1 d2}) = 0.5 -> 0.5 + 0.5 = 1.0.
    # C left out: pool {d1 d2 d3}; C = 0.
    #   A 0.5 - 0.5 (B's {d1 d3}: d1 still rel) = 0; B 1.0 - 0.5 (A's {d1 d2}) = 0.5 -> 0.25.
    assert [runs[t]["score"] for t in "ABC"] == [0.5, 0.5, 0.0]
    assert [runs[t]["pool"] for t in "ABC"] == [0.5, 0.5, 0.0]
    assert [runs[t]["webber_park"] for t in "ABC"] == [1.25, 1.0, 0.25]
    # MAE pool = (0 + 0.5 + 0.5) / 3; webber = (0.75 + 0 + 0.25) / 3
    assert rep.errors["pool"]["mae"] == pytest.approx(1 / 3)
    assert rep.errors["webber_park"]["mae"] == pytest.approx(1 / 3)
    # N, not pooled: full pool P@2 = d6 unjudged, d3 rel -> 0.5. Leave-one-run-out deltas on the
    # full pool: A 0.5 - 0.5 (B, C keep d1) = 0; B 1.0 - 0.5 (d3 only B's) = 0.5; C 0.5 - 0 = 0.5;
    # mean 1/3, so webber = 0.8333, penalty 0.3333 = 66.7% of N's own score.
    n = rep.to_dict()["not_pooled"]["N"]
    assert n["score"] == 0.5
    wp = n["estimates"]["webber_park"]
    assert wp["estimate"] == pytest.approx(0.5 + 1 / 3)
    assert wp["penalty"] == pytest.approx(1 / 3)
    assert wp["penalty_pct"] == pytest.approx(100 * (1 / 3) / 0.5)
    assert rep.deltas["n"] == 3 and rep.deltas["mean"] == pytest.approx(1 / 3)
    # the mean delta's interval: mean of (0, .5, .5) +/- t(0.975, 2) * sd / sqrt(3)
    half = 4.302652729911275 * np.std([0, 0.5, 0.5], ddof=1) / math.sqrt(3)
    assert rep.deltas["ci"] == pytest.approx([1 / 3 - half, 1 / 3 + half])
    # N's own interval: three left-out runs cannot calibrate one (at least 5), so it is N's
    # bounds: P@2 with d6 non-relevant and relevant
    assert (n["judged"], n["unjudged"], n["bounds"], n["bounds_exact"]) == (
        0.5,
        1,
        [0.5, 1.0],
        True,
    )
    for name in ("webber_park", "pool"):
        e = n["estimates"][name]
        assert (e["interval"], e["interval_method"]) == ([0.5, 1.0], "bounds")
        assert e["interval_why"] == "3 calibration runs (at least 5)"
    # recommended for N by the error on the three left-out runs, all as novel as N
    assert n["recommended"] in rep.errors
    assert (
        "on the 3 validation runs with a Judged@k < 0.6, as this run's 0.50"
        in (n["recommended_why"])
    )


def test_leave_one_group_out_uses_pairs_of_groups() -> None:
    # Groups: A and B together (g1), C alone (g2). Leave g1 out: pool = C's {d4 d5}: A = 0,
    # B = 0. The only other run is C, and its delta needs C's score on the pool without g1 and
    # g2: empty, so no topic is left to average (trec_eval mode): the delta is not a number
    # and is skipped, and with no delta left webber_park has no estimate.
    rep = estimator_report(
        WP_QRELS,
        WP_RUNS,
        "P@2",
        LeaveOut(
            depth=2,
            leave_out="group",
            pooled=["A", "B", "C"],
            groups={"A": "g1", "B": "g1", "C": "g2"},
        ),
    )
    assert rep.leave_out == "group" and rep.n_units == 2
    assert rep.runs["A"]["unit"] == "g1" and rep.runs["C"]["unit"] == "g2"
    assert rep.runs["A"]["score"] == 0.0 and rep.runs["B"]["score"] == 0.0
    assert math.isnan(rep.runs["A"]["webber_park"])
    # g2 left out: pool {d1 d2 d3}; C = 0; deltas of A and B need the pool without g1 as well:
    # empty again, so none is finite either.
    assert rep.runs["C"]["score"] == 0.0
    assert rep.errors["webber_park"]["n_runs"] == 0
    assert rep.to_dict()["estimators"]["webber_park"]["mae"] is None


def test_honest_mode_scores_an_emptied_topic_as_excluded_not_nan_when_others_remain() -> None:
    qrels = Qrels.from_dict({"1": {"a": 1, "b": 1}, "2": {"c": 1, "x": 0}})
    runs = {
        "A": _run({"1": ["a"], "2": ["c"]}, "A"),
        "B": _run({"1": ["b"], "2": ["c", "x"]}, "B"),
    }
    rep = estimator_report(qrels, runs, "P@1", LeaveOut(depth=1, leave_out="group", compat=None))
    # A out: pool = B's top 1: {b} on topic 1, {c} on topic 2. R(1) = 1, R(2) = 1: both topics
    # count. A: topic 1 "a" unjudged -> 0; topic 2 "c" rel -> 1: score 0.5; full pool 1.0.
    assert rep.runs["A"]["score"] == 0.5 and rep.runs["A"]["score_full_pool"] == 1.0
    assert rep.compat == "honest"


# --------------------------------------------------------------------------------------------
# Worked by hand: Lipani's estimators (p∘r)

# Depth 2, P@2. Topic 1: A = d1 d2 x1, B = d3 d4 x1, N (not pooled) = x1 d1 d9; pool {d1..d4}
# judged d1 1, d2 0, d3 1, d4 0; x1 and d9 unjudged. Topic 2: everyone's top 2 is {e1 e2}, both
# relevant, and N ranks them e1 e2.
LP_QRELS = Qrels.from_dict({"1": {"d1": 1, "d2": 0, "d3": 1, "d4": 0}, "2": {"e1": 1, "e2": 1}})
LP_RUNS = {
    "A": _run({"1": ["d1", "d2", "x1"], "2": ["e1", "e2"]}, "A"),
    "B": _run({"1": ["d3", "d4", "x1"], "2": ["e2", "e1"]}, "B"),
    "N": _run({"1": ["x1", "d1", "d9"], "2": ["e1", "e2"]}, "N"),
}


def test_lipani_estimators_by_hand() -> None:
    rep = estimator_report(
        LP_QRELS, LP_RUNS, "P@2", LeaveOut(depth=2, leave_out="group", pooled=["A", "B"])
    )
    est = rep.to_dict()["not_pooled"]["N"]["estimates"]
    # Topic 1, r = N: s = 0.5 (x1 unjudged, d1 rel), a = 0, k = 0.5.
    #   A∘N: d1 has N rank 2, A rank 1 (lower in N: fix (1+1)/1e4) -> x 2.0002; d2 not in N ->
    #   2.0001; x1 N rank 1, A rank 3 (higher: fix 3/1e8) -> 1.00000003. Order x1 d2 d1: top 2 =
    #   x1 (unjudged), d2 (non-rel): P 0, anti 0.5. A itself: P 0.5, anti 0.5. dS -0.5, dA 0.
    #   B∘N: d3 1.0001, d4 2.0001, x1 1.00000003: x1 d3 -> P 0.5, anti 0; B: P 0.5, anti 0.5.
    #   dS 0, dA -0.5.
    # Topic 2: N = e1 e2, s = 1, a = 0, k = 0: A∘N = A's order; B∘N: e1 (N 1, B 2: 1.00000002),
    #   e2 (N 2, B 1: 2.0002) -> e1 e2, both relevant like B's: every change is 0.
    # lipani2016, per topic: topic 1 DS = -0.25, DA = -0.25, lambda = DS a - DA s = 0.125 > 0,
    #   DK = 0.5, correction k * DK = 0.25 -> 0.75; topic 2: k = 0 -> 1.0. Mean 0.875.
    assert est["lipani2016"]["estimate"] == pytest.approx(0.875)
    # lipani2015, aggregate: s = 0.75, a = 0, k = 0.25; dS_A = mean(-0.5, 0) = -0.25, dA_A = 0;
    #   dS_B = 0, dA_B = -0.25; DS = DA = -0.125, DK = 0.25; lambda = 0.125 * 0.75 > 0;
    #   correction 0.25 * 0.25 = 0.0625 -> 0.8125.
    assert est["lipani2015"]["estimate"] == pytest.approx(0.8125)
    assert est["lipani2015"]["penalty"] == pytest.approx(0.0625)
    assert est["pool"]["estimate"] == 0.75
    # two left-out runs cannot calibrate an interval: N's bounds (topic 1's x1 unjudged)
    assert est["lipani2015"]["interval"] == pytest.approx([0.75, 1.0])
    assert est["lipani2015"]["interval_method"] == "bounds"


def test_lipani2016_recall_by_hand() -> None:
    rep = estimator_report(
        LP_QRELS, LP_RUNS, "R@2", LeaveOut(depth=2, leave_out="group", pooled=["A", "B"])
    )
    est = rep.to_dict()["not_pooled"]["N"]["estimates"]
    # n = d = 2: topic 1 (n P@n + n c_n) / (R + n c_n) = (1 + 0.5) / (2 + 0.5) = 0.6; topic 2:
    # c = 0, R = 2: (2 + 0) / 2 = 1. Mean 0.8 (plain R@2: 0.5 and 1 -> 0.75).
    assert est["lipani2016"]["estimate"] == pytest.approx(0.8)
    assert est["pool"]["estimate"] == pytest.approx(0.75)
    assert "lipani2015" not in est
    assert rep.why_not["lipani2015"] == "P@k only"


def test_lipani2016_recall_below_the_depth_by_hand() -> None:
    rep = estimator_report(
        LP_QRELS, LP_RUNS, "R@1", LeaveOut(depth=2, leave_out="group", pooled=["A", "B"])
    )
    est = rep.to_dict()["not_pooled"]["N"]["estimates"]
    # topic 1, n = 1: s = 0 (x1), a = 0, k = 1; A∘N and B∘N both start with x1 (P 0, anti 0)
    #   while A and B start with a relevant document: DS = -1, DA = 0, lambda = -1*0 - 0*0 = 0:
    #   c_1 = 0. c_2 = 0.25 (above). R@1 = (1*0 + 1*0) / (2 + 0 + 1 * 0.25) = 0.
    # topic 2, n = 1: s = 1 (e1), k = 0: c_1 = 0; c_2 = 0 -> (1 + 0) / (2 + 0 + 0) = 0.5.
    assert est["lipani2016"]["estimate"] == pytest.approx(0.25)


def test_harness_rows_for_lipani_by_hand() -> None:
    rep = estimator_report(
        LP_QRELS, LP_RUNS, "P@2", LeaveOut(depth=2, leave_out="group", pooled=["A", "B"])
    )
    # A left out: pool = B's top 2 ({d3 d4}, {e1 e2}); A: topic 1 d1 d2 unjudged -> 0, topic 2
    # -> 1: 0.5. B∘A, topic 1: d3 1.0001, d4 2.0001, x1 (A 3, B 3: 3.0001): B's order, no change;
    # topic 2: B∘A = e1 e2, both relevant as in B: no change. Every dS and dA is 0: lambda = 0,
    # so lipani = pool = 0.5. The same for B (by symmetry): 0.5; full pool 0.75 and 0.75.
    for tag in "AB":
        assert rep.runs[tag]["score"] == 0.5
        assert rep.runs[tag]["lipani2015"] == 0.5
        assert rep.runs[tag]["lipani2016"] == 0.5
        assert rep.runs[tag]["score_full_pool"] == 0.75
    assert rep.errors["lipani2015"]["mae"] == pytest.approx(0.25)


# --------------------------------------------------------------------------------------------
# The error measures, by hand


def test_errors_by_hand() -> None:
    true = {"a": 0.5, "b": 0.4, "c": 0.3, "d": 0.2}
    est = {"a": 0.5, "b": 0.25, "c": 0.45, "d": 0.2}
    per_topic = {
        # a vs c: differences 0.2 0.2 0.2 0.2 -> zero variance, non-zero mean: p = 0
        "a": {"1": 0.6, "2": 0.5, "3": 0.4, "4": 0.5},
        "b": {"1": 0.1, "2": 0.7, "3": 0.2, "4": 0.6},
        "c": {"1": 0.4, "2": 0.3, "3": 0.2, "4": 0.3},
        "d": {"1": 0.2, "2": 0.2, "3": 0.2, "4": 0.2},
    }
    e = estimator_errors(true, est, per_topic)
    # |errors| = 0, 0.15, 0.15, 0 -> MAE 0.075
    assert e["mae"] == pytest.approx(0.075)
    # ranks (1 + strictly higher): a true 1, estimate 0.5 among {.4 .3 .2} -> 1: 0.
    # b true 2, estimate 0.25 among {.5 .3 .2} -> 3: 1. c true 3, 0.45 among {.5 .4 .2} -> 2: 1.
    # d: 4 and 4: 0. SRE = 2.
    assert e["sre"] == 2
    # SRE*: b passed over position 3 (c): b - c = (-.3 .4 0 .3), mean 0.1, sd 0.3162, t = 0.632,
    # p = 0.57: not significant. c passed over position 2 (b), the same test: 0. SRE* = 0.
    assert e["sre_star"] == 0
    # tau-b: pairs (a b)(a c)(a d) concordant, (b c) discordant, (b d)(c d) concordant: 4/6
    assert e["kendall_tau"] == pytest.approx(4 / 6)
    assert e["n_runs"] == 4


def test_sre_star_counts_significant_pairs_only() -> None:
    true = {"a": 0.5, "b": 0.4, "c": 0.3}
    est = {"a": 0.1, "b": 0.4, "c": 0.3}  # a drops from 1 to 3, passing b (pos 2) and c (pos 3)
    per_topic = {
        "a": {"1": 0.5, "2": 0.5, "3": 0.5},
        "b": {"1": 0.4, "2": 0.4, "3": 0.4},  # a - b = 0.1 everywhere: p = 0 -> counted
        "c": {"1": 0.9, "2": 0.0, "3": 0.0},  # a - c = (-.4 .5 .5): p = 0.6 -> not counted
    }
    e = estimator_errors(true, est, per_topic)
    assert e["sre"] == 2
    assert e["sre_star"] == 1


# --------------------------------------------------------------------------------------------
# Applicability and bad input


def test_estimators_that_do_not_apply_say_why() -> None:
    rep = estimator_report(
        WP_QRELS, WP_RUNS, "AP", LeaveOut(depth=2, leave_out="group", pooled=["A", "B", "C"])
    ).to_dict()
    est = rep["estimators"]
    assert est["lipani2015"] == {
        "label": est["lipani2015"]["label"],
        "applicable": False,
        "why": "P@k only",
    }
    assert est["lipani2016"]["applicable"] is False
    assert est["lipani2016"]["why"] == "P@k and R@k only"
    assert est["upper"]["applicable"] is False and "top-k" in est["upper"]["why"]
    assert est["condensed"]["applicable"] is True
    assert set(rep["runs"]["A"]) == {
        "unit",
        "score",
        "score_full_pool",
        "judged",
        "unjudged",
        "pool",
        "webber_park",
        "condensed",
    }
    assert rep["recommended"] in ("pool", "webber_park", "condensed")
    assert "measured by leaving out each of the 3 pooled runs in turn" in rep["recommended_why"]


def test_only_the_estimators_asked_for() -> None:
    rep = estimator_report(
        WP_QRELS,
        WP_RUNS,
        "P@2",
        LeaveOut(depth=2, leave_out="group", pooled=["A", "B", "C"]),
        estimators=("webber_park",),
    ).to_dict()
    assert list(rep["estimators"]) == ["webber_park"]
    assert rep["recommended"] == "webber_park"


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="no pooled run"):
        estimator_report(WP_QRELS, WP_RUNS, "P@2", LeaveOut(leave_out="group", pooled=[]))
    with pytest.raises(UnknownMeasureError):
        estimator_report(WP_QRELS, WP_RUNS, "PP@2")
    with pytest.raises(ValueError, match="no group for run"):
        estimator_report(WP_QRELS, WP_RUNS, "P@2", LeaveOut(leave_out="group", groups={"A": "g"}))
    with pytest.raises(ValueError, match="estimators are defined for"):
        estimator_report(WP_QRELS, WP_RUNS, "NumRel")
    with pytest.raises(ValueError, match="unknown estimator"):
        estimator_report(WP_QRELS, WP_RUNS, "P@2", estimators=("webber",))
    with pytest.raises(ValueError, match="at least 2 pooled units"):
        estimator_report(WP_QRELS, WP_RUNS, "P@2", LeaveOut(leave_out="group", pooled=["A"]))
    with pytest.raises(ValueError, match="pooled runs not among"):
        estimator_report(WP_QRELS, WP_RUNS, "P@2", LeaveOut(leave_out="group", pooled=["Z"]))


def test_json_has_no_nan_and_the_issue_shape() -> None:
    rep = estimator_report(
        LP_QRELS, LP_RUNS, "P@2", LeaveOut(depth=2, leave_out="group", pooled=["A", "B"])
    ).to_dict()
    for key in ("measure", "depth", "estimators", "runs", "not_pooled", "deltas", "topics"):
        assert key in rep
    for e in rep["estimators"].values():
        assert {"mae", "sre", "sre_star", "kendall_tau"} <= set(e)
    text = repr(rep)
    assert "nan" not in text


def test_top75_drops_the_worst_quarter_from_the_pool() -> None:
    # 4 pooled runs: round(0.75 * 4) = 3 stay; the one with the lowest full-pool score goes
    qrels = Qrels.from_dict({"1": {"a": 1, "b": 1, "c": 1, "z": 0}})
    runs = {
        "A": _run({"1": ["a", "b"]}, "A"),
        "B": _run({"1": ["b", "c"]}, "B"),
        "C": _run({"1": ["c", "a"]}, "C"),
        "Z": _run({"1": ["z", "a"]}, "Z"),
    }
    rep = estimator_report(qrels, runs, "P@1", LeaveOut(depth=1, leave_out="group"), top75=True)
    assert rep.top75 and rep.dropped == ("Z",)
    assert set(rep.runs) == {"A", "B", "C"}
    assert rep.to_dict()["top75_dropped"] == ["Z"]


# --------------------------------------------------------------------------------------------
# The literal reference


PYTREC = {
    "P": "P_{k}",
    "R": "recall_{k}",
    "AP": "map",
    "AP@": "map_cut_{k}",
    "nDCG@": "ndcg_cut_{k}",
    "nDCG": "ndcg",
    "RR": "recip_rank",
    "Bpref": "bpref",
    "Rprec": "Rprec",
    "Success": "success_{k}",
}


def _pytrec_name(family: str, k: int | None) -> str:
    key = family if k is None or family in ("P", "R", "Success") else family + "@"
    return PYTREC[key].format(k=k)


def _per_topic(
    qrels: QrelsDict, run: RunDict, measure: str, compat: str | None
) -> dict[str, float]:
    """Per-topic values over the topics averaged (trec_eval mode: pytrec_eval; honest mode:
    the Evaluator's honest mode, every qrels topic with a relevant document, unanswered = 0)."""
    if compat is None:
        qrels = {q: j for q, j in qrels.items() if any(g >= 1 for g in j.values())}
        if not qrels:
            return {}
        res = Evaluator(qrels, [measure], compat=None, ci=None).evaluate(
            run if run else {"__none__": {"x": 0.0}}
        )
        name = res.measures[0]
        return dict(res.per_query[name])
    fam, _, k = measure.partition("@")
    name = _pytrec_name(fam, int(k) if k else None)
    run = {q: d for q, d in run.items() if q in qrels and d}
    if not qrels or not run:
        return {}
    values = pytrec_eval.RelevanceEvaluator(qrels, {name}).evaluate(run)
    return {q: v[name] for q, v in values.items()}


def _mean(d: Mapping[str, float]) -> float:
    return math.fsum(d.values()) / len(d) if d else math.nan


def _ranking(run: Run, q: str) -> list[str]:
    return run.ranking(q)


def _pool(
    runs: Mapping[str, Run], tags: list[str], topics: list[str], depth: int
) -> dict[str, set[str]]:
    return {q: {d for t in tags for d in runs[t].ranking(q)[:depth]} for q in topics}


def _restrict(qrels: QrelsDict, pool: Mapping[str, set[str]]) -> QrelsDict:
    out = {q: {d: g for d, g in j.items() if d in pool.get(q, set())} for q, j in qrels.items()}
    return {q: j for q, j in out.items() if j}


def _as_dict(run: Run) -> RunDict:
    return {
        q: {d: float(len(run.ranking(q)) - i) for i, d in enumerate(run.ranking(q))}
        for q in run.qids
    }


def _compose(p: Run, r: Run, q: str) -> list[str]:
    """p∘r on topic q, literally: x per document of p, sorted by x, ties by docid descending."""
    rank_r = {d: i + 1 for i, d in enumerate(r.ranking(q))}
    keyed = []
    for i, d in enumerate(p.ranking(q)):
        rp = i + 1
        if d in rank_r:
            rr = rank_r[d]
            step = rr - rp
            fix = 1e-4 if step == 0 else (rp + 1.0) / 10000.0 if step > 0 else rp / 1e8
            x = rr + fix
        else:
            x = rp + 1e-4
        keyed.append((x, d))
    keyed.sort(key=lambda e: e[1], reverse=True)
    keyed.sort(key=lambda e: e[0])
    return [d for _, d in keyed]


def _precision_counts(j: Mapping[str, int], docs: list[str], n: int, level: int) -> tuple[int, int]:
    rel = sum(1 for d in docs[:n] if d in j and j[d] >= level)
    non = sum(1 for d in docs[:n] if d in j and 0 <= j[d] < level)
    return rel, non


def literal(
    qrels: Qrels,
    runs: dict[str, Run],
    measure: str,
    *,
    depth: int,
    pooled: list[str],
    units: dict[str, str],
    compat: str | None,
    level: int = 1,
) -> dict[str, dict[str, float]]:
    """Every estimate of every pooled run (harness) and not-pooled run (full pool), from the
    definitions, one scenario at a time."""
    qd = qrels.to_dict()
    topics = list(qd)
    fam, _, kk = measure.partition("@")
    k = int(kk) if kk else None
    unit_names = list(dict.fromkeys(units[t] for t in pooled))

    def pool_without(*gone: str) -> QrelsDict:
        tags = [t for t in pooled if units[t] not in gone]
        return _restrict(qd, _pool(runs, tags, topics, depth))

    def score(q: QrelsDict, tag: str) -> float:
        return _mean(_per_topic(q, _as_dict(runs[tag]), measure, compat))

    def treated(q: QrelsDict, tag: str, how: str) -> float:
        run = runs[tag]
        base = _per_topic(q, _as_dict(run), measure, compat)
        out = {}
        for t in base:
            judged = q.get(t, {})
            docs = run.ranking(t)
            if how == "condensed":
                kept = [d for d in docs if d in judged]
                sub = {t: {d: float(len(kept) - i) for i, d in enumerate(kept)}}
                vals = _per_topic({t: judged}, sub, measure, compat) if kept else {}
                out[t] = vals.get(t, 0.0)
            else:
                assert k is not None
                if not docs:  # honest mode: a topic the run did not answer scores 0
                    out[t] = base[t]
                    continue
                flip = {d: level for d in docs[:k] if d not in judged}
                qq = {t: {**judged, **flip}}
                sub = {t: _as_dict(run)[t]}
                vals = _per_topic(qq, sub, measure, compat)
                out[t] = max(vals.get(t, 0.0), base[t])
        return _mean(out)

    def lipani(
        q: QrelsDict, r: str, pool_runs: list[str], n: int
    ) -> dict[str, tuple[float, float, float, float, float]]:
        """Per counted topic of r: s, a, and the means DS, DA over the pool runs."""
        counted = _per_topic(q, _as_dict(runs[r]), measure, compat)
        out: dict[str, tuple[float, float, float, float, float]] = {}
        for t in counted:
            j = q.get(t, {})
            rel, non = _precision_counts(j, runs[r].ranking(t), n, level)
            s, a = rel / n, non / n
            dss, das = [], []
            for p in pool_runs:
                pr = _precision_counts(j, runs[p].ranking(t), n, level)
                cr = _precision_counts(j, _compose(runs[p], runs[r], t), n, level)
                dss.append((cr[0] - pr[0]) / n)
                das.append((cr[1] - pr[1]) / n)
            out[t] = (
                s,
                a,
                float(np.mean(dss)),
                float(np.mean(das)),
                sum(1 for _ in j.values() if _ >= level),
            )
        return out

    def correction(s: float, a: float, ds: float, da: float) -> float:
        lam = ds * a - da * s
        return (1 - s - a) * max(-ds - da, 0.0) if lam > 0 else 0.0

    def lipani2015(q: QrelsDict, r: str, pool_runs: list[str], n: int) -> float:
        counted = list(_per_topic(q, _as_dict(runs[r]), measure, compat))
        if not counted or not pool_runs:
            return math.nan
        s = a = 0.0
        per_p = []
        for t in counted:
            j = q.get(t, {})
            rel, non = _precision_counts(j, runs[r].ranking(t), n, level)
            s += rel / n / len(counted)
            a += non / n / len(counted)
        for p in pool_runs:
            ds = da = 0.0
            for t in counted:
                j = q.get(t, {})
                pr = _precision_counts(j, runs[p].ranking(t), n, level)
                cr = _precision_counts(j, _compose(runs[p], runs[r], t), n, level)
                ds += (cr[0] - pr[0]) / n / len(counted)
                da += (cr[1] - pr[1]) / n / len(counted)
            per_p.append((ds, da))
        mds = float(np.mean([x for x, _ in per_p]))
        mda = float(np.mean([y for _, y in per_p]))
        return s + correction(s, a, mds, mda)

    def lipani2016(q: QrelsDict, r: str, pool_runs: list[str]) -> float:
        assert k is not None
        per_n = lipani(q, r, pool_runs, k)
        if not per_n:
            return math.nan
        if fam == "P":
            return _mean(
                {t: s + correction(s, a, ds, da) for t, (s, a, ds, da, _) in per_n.items()}
            )
        per_d = lipani(q, r, pool_runs, depth)
        vals = {}
        for t, (s, a, ds, da, big_r) in per_n.items():
            cn = correction(s, a, ds, da)
            sd, ad, dsd, dad, _ = per_d[t]
            cd = correction(sd, ad, dsd, dad)
            den = big_r + k * cn + max(depth - k, 0) * cd
            vals[t] = (k * s + k * cn) / den if big_r > 0 else 0.0
        return _mean(vals)

    out: dict[str, dict[str, float]] = {}
    full = pool_without()
    for tag in runs:
        mine = units.get(tag) if tag in pooled else None
        q = pool_without(mine) if mine else full
        others = [p for p in pooled if units[p] != mine]
        row = {"score": score(q, tag), "score_full_pool": score(full, tag)}
        row["pool"] = row["score"]
        deltas = []
        for p in others:
            inner = pool_without(mine, units[p]) if mine else pool_without(units[p])
            d = score(q, p) - score(inner, p)
            if math.isfinite(d):
                deltas.append(d)
        row["webber_park"] = row["score"] + (float(np.mean(deltas)) if deltas else math.nan)
        row["condensed"] = treated(q, tag, "condensed")
        if k is not None and fam in ("P", "R", "AP", "nDCG", "RR", "Success"):
            row["upper"] = treated(q, tag, "upper")
        if fam == "P":
            assert k is not None
            row["lipani2015"] = lipani2015(q, tag, others, k)
        if fam in ("P", "R") and k is not None:
            row["lipani2016"] = lipani2016(q, tag, others)
        out[tag] = row
    assert unit_names
    return out


def random_collection(seed: int) -> tuple[Qrels, dict[str, Run], list[str], dict[str, str], int]:
    rng = random.Random(seed)
    topics = [str(i) for i in range(1, rng.randint(2, 3) + 1)]
    docs = {q: [f"{q}-{j:02d}" for j in range(rng.randint(6, 14))] for q in topics}
    qrels: QrelsDict = {}
    for q in topics:
        j = {d: rng.choice([0, 0, 1, 2]) for d in docs[q] if rng.random() < 0.7}
        if j:
            qrels[q] = j
    if not qrels:
        qrels[topics[0]] = {docs[topics[0]][0]: 1}
    nruns = rng.randint(4, 6)
    runs: dict[str, Run] = {}
    for i in range(nruns):
        tag = f"r{i}"
        ranking = {}
        for q in topics:
            if rng.random() < 0.1:
                continue  # the run does not answer this topic
            length = rng.randint(0, len(docs[q]))
            chosen = rng.sample(docs[q], length)
            if chosen:
                ranking[q] = chosen
        if not ranking:
            ranking[topics[0]] = [docs[topics[0]][0]]
        # a few tied scores: trec_eval order breaks them by docid descending
        runs[tag] = Run.from_dict(
            {
                q: {d: float(len(ds) - i // 2 * 2) for i, d in enumerate(ds)}
                for q, ds in ranking.items()
            },
            tag=tag,
        )
    tags = list(runs)
    pooled = tags[:-1] if rng.random() < 0.7 else tags
    ngroups = rng.randint(2, max(2, len(pooled) - 1))
    groups = {t: f"g{rng.randrange(ngroups)}" for t in pooled}
    if len(set(groups.values())) < 2:
        groups[pooled[0]] = "g-solo"
    return Qrels.from_dict(qrels), runs, pooled, groups, rng.randint(1, 4)


MEASURES = ["P@3", "P@1", "R@3", "R@5", "AP", "AP@3", "nDCG@3", "RR", "Bpref", "Rprec", "Success@2"]


@pytest.mark.parametrize("seed", range(12))
def test_vectorised_estimates_match_the_literal_reference(seed: int) -> None:
    qrels, runs, pooled, groups, depth = random_collection(seed)
    rng = random.Random(1000 + seed)
    by_group = rng.random() < 0.6
    compat = "trec_eval" if rng.random() < 0.7 else None
    units = groups if by_group else {t: t for t in pooled}
    analysis = EstimatorAnalysis(
        qrels,
        runs,
        LeaveOut(
            depth=depth,
            pooled=pooled,
            groups=groups if by_group else None,
            leave_out="group" if by_group else "run",
            compat="trec_eval" if compat == "trec_eval" else None,
        ),
    )
    if len(set(units.values())) < 2:
        pytest.skip("one unit")
    for measure in rng.sample(MEASURES, 4):
        rep = analysis.report(measure)
        want = literal(qrels, runs, measure, depth=depth, pooled=pooled, units=units, compat=compat)
        got = rep.to_dict()
        for tag in pooled:
            for key, value in want[tag].items():
                have = rep.runs[tag][key]
                assert _same(have, value), (measure, tag, key, have, value)
        for tag, row in got["not_pooled"].items():
            for key, value in want[tag].items():
                if key in ("score_full_pool",):
                    continue
                have = row["score"] if key == "score" else row["estimates"][key]["estimate"]
                assert _same(have, value), (measure, tag, key, have, value)


def _same(a: float | None, b: float) -> bool:
    if a is None or (isinstance(a, float) and math.isnan(a)):
        return math.isnan(b)
    return abs(a - b) <= 1e-12


def test_p_composed_with_r_windows_agree_with_the_literal_order() -> None:
    # Long rankings with little overlap: the top n of p∘r often lies deep (the windows grow),
    # and short runs (3 documents) keep everything
    rng = random.Random(7)
    docs = [f"d{i:04d}" for i in range(400)]
    qrels = Qrels.from_dict({"1": {d: rng.choice([0, 1]) for d in rng.sample(docs, 300)}})
    runs = {}
    for i in range(6):
        ranked = rng.sample(docs, rng.choice([3, 12, 50, 200]))
        runs[f"r{i}"] = _run({"1": ranked}, f"r{i}")
    an = EstimatorAnalysis(qrels, runs, LeaveOut(depth=400, compat="trec_eval"))
    topic = an._topic(0)
    qd = qrels.to_dict()["1"]
    grid_p, grid_r = np.meshgrid(np.arange(6), np.arange(6), indexing="ij")
    pp, rr = grid_p.reshape(-1), grid_r.reshape(-1)
    full = np.full(pp.size, an.nu)  # the kinds of the full pool
    for n in (1, 5, 10, 30):
        rel, non = topic.counts(pp, rr, n, full)
        for i, (p, r) in enumerate(zip(pp.tolist(), rr.tolist(), strict=True)):
            top = _compose(runs[f"r{p}"], runs[f"r{r}"], "1")[:n]
            assert rel[i] == sum(1 for d in top if qd.get(d, -1) >= 1), (n, p, r)
            assert non[i] == sum(1 for d in top if qd.get(d, -1) == 0), (n, p, r)


def test_paired_p_values_match_scipy() -> None:
    import scipy.stats

    from metrics.bias.estimator_report import _paired_p

    rng = np.random.default_rng(3)
    values = rng.random((6, 9))
    valid = rng.random((6, 9)) < 0.85
    p = _paired_p(values, valid)
    for i in range(6):
        for j in range(6):
            both = valid[i] & valid[j]
            d = values[i, both] - values[j, both]
            if i == j:
                assert p[i, j] == 1.0  # no difference at all
                continue
            want = scipy.stats.ttest_rel(values[i, both], values[j, both]).pvalue
            assert d.size >= 2 and p[i, j] == pytest.approx(want, rel=1e-9)
