"""The judge audit on hand-worked examples; statsmodels (kappa) and scipy (tau) as references."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.stats import kendalltau, norm
from statsmodels.stats.inter_rater import cohens_kappa

from metrics.judges.audit import label_agreement, ranking_agreement
from metrics.judges.families import family_gaps, model_family, same_family
from metrics.judges.robustness import anchoring, probe_result

# --- label agreement --------------------------------------------------------------------------

# Ten items on the scale 0..2. By hand: confusion (rows human) [[3,1,0],[1,1,1],[1,0,2]],
# margins human (.4, .3, .3), auto (.5, .2, .3).
HUMAN = [0, 0, 0, 1, 1, 2, 2, 2, 0, 1]
AUTO = [0, 0, 1, 1, 2, 2, 0, 2, 0, 0]


def _keyed(grades, prefix="d"):
    return {("q1", f"{prefix}{i}"): g for i, g in enumerate(grades)}


def test_hand_worked_ten_items():
    human = {**_keyed(HUMAN), ("q2", "only-human"): 1}
    auto = {**_keyed(AUTO), ("q2", "only-auto"): 0, ("q2", "also-auto"): 2}
    la = label_agreement(human, auto, [0, 1, 2], threshold=1)
    assert la.n == 10 and la.human_only == 1 and la.auto_only == 2
    assert la.confusion == [[3, 1, 0], [1, 1, 1], [1, 0, 2]]
    assert la.human_base_rate == pytest.approx({0: 0.4, 1: 0.3, 2: 0.3})
    assert la.auto_base_rate == pytest.approx({0: 0.5, 1: 0.2, 2: 0.3})
    assert la.exact == pytest.approx(0.6)
    assert la.within_one == pytest.approx(0.9)  # one item 2 -> 0
    # linear: observed weighted disagreement 2.5 / 10 = .25 (w = |i-j|/2); expected
    # .5 (.08 + .15 + .09 + .06) + (.12 + .15) = .46; kappa = 1 - .25/.46 = 21/46
    assert la.kappa_linear == pytest.approx(21 / 46)
    # quadratic: observed .175, expected .365: kappa = 38/73
    assert la.kappa_quadratic == pytest.approx(38 / 73)
    # binary at 1: table [[3, 1], [2, 4]], p_o = .7, p_e = .4 * .5 + .6 * .5 = .5 -> .4
    assert la.binary_kappa == pytest.approx(0.4)
    assert la.notes == []


def test_kappas_match_statsmodels_on_random_labels():
    rng = np.random.default_rng(11)
    for _ in range(30):
        k = int(rng.integers(2, 5))
        scale = [0, 1, 2, 4, 7][:k]
        n = int(rng.integers(5, 60))
        h = rng.integers(0, k, size=n)
        a = np.clip(h + rng.integers(-1, 2, size=n), 0, k - 1)
        la = label_agreement(
            _keyed([scale[i] for i in h]), _keyed([scale[i] for i in a]), scale, threshold=scale[1]
        )
        table = np.zeros((k, k))
        np.add.at(table, (h, a), 1)
        assert la.confusion == table.astype(int).tolist()
        for wt, got in (("linear", la.kappa_linear), ("quadratic", la.kappa_quadratic)):
            expected = cohens_kappa(table, wt=wt, return_results=False)
            if np.isnan(expected):
                assert math.isnan(got)
            else:
                assert got == pytest.approx(expected)
        binary = np.array(
            [[table[0, 0], table[0, 1:].sum()], [table[1:, 0].sum(), table[1:, 1:].sum()]]
        )
        expected = cohens_kappa(binary, return_results=False)
        assert (math.isnan(la.binary_kappa) and np.isnan(expected)) or la.binary_kappa == (
            pytest.approx(expected)
        )


def test_one_shared_grade_leaves_kappa_undefined_and_json_safe():
    la = label_agreement(_keyed([0, 0, 0]), _keyed([0, 0, 0]), [0, 1])
    assert la.exact == 1.0 and math.isnan(la.kappa_linear) and math.isnan(la.binary_kappa)
    d = json.loads(json.dumps(la.to_dict(), allow_nan=False))
    assert d["kappa_linear"] is None and d["human_base_rate"] == {"0": 1.0, "1": 0.0}
    assert any("undefined" in note for note in la.notes)


def test_no_shared_items():
    la = label_agreement(_keyed([1], "a"), _keyed([1], "b"), [0, 1])
    assert la.n == 0 and math.isnan(la.exact) and la.human_only == la.auto_only == 1
    assert la.notes == ["no item was judged by both the humans and the judge"]


def test_grade_outside_the_scale_is_refused():
    with pytest.raises(ValueError, match="automatic grade 3"):
        label_agreement(_keyed([0, 1]), _keyed([0, 3]), [0, 1, 2])


# --- ranking agreement ------------------------------------------------------------------------


def test_hand_worked_four_runs():
    human = {"A": 0.4, "B": 0.3, "C": 0.2, "D": 0.1}
    auto = {"A": 0.3, "B": 0.4, "C": 0.2, "D": 0.1, "E": 0.9}
    ra = ranking_agreement(human, auto, top_k=2)
    assert ra.n_runs == 4 and ra.missing == 1
    assert ra.kendall_tau_b == pytest.approx(2 / 3)  # 5 concordant, 1 discordant pair
    # auto order B, A, C, D against human: C(2) = 0 of 1, C(3) = 2 of 2, C(4) = 3 of 3
    # tau_AP = 2/3 * (0 + 1 + 1) - 1 = 1/3
    assert ra.tau_ap == pytest.approx(1 / 3)
    assert ra.top_runs == ["A", "B"] and ra.tau_top_k == pytest.approx(-1.0)
    assert ra.top_k_overlap == 1.0
    assert ra.rank_changes == [("A", 1, 2), ("B", 2, 1)]


def test_taus_match_scipy_overall_and_among_the_human_top_ten():
    rng = np.random.default_rng(5)
    runs = [f"r{i:02d}" for i in range(30)]
    h = rng.random(30)
    a = h + rng.normal(scale=0.15, size=30)
    ra = ranking_agreement(dict(zip(runs, h, strict=True)), dict(zip(runs, a, strict=True)))
    assert ra.kendall_tau_b == pytest.approx(kendalltau(h, a).statistic)
    top = np.argsort(-h)[:10]
    assert ra.top_k == 10
    assert ra.top_runs == [runs[i] for i in top]
    assert ra.tau_top_k == pytest.approx(kendalltau(h[top], a[top]).statistic)
    auto_top = set(np.argsort(-a)[:10].tolist())
    assert ra.top_k_overlap == pytest.approx(len(auto_top & set(top.tolist())) / 10)


def test_fewer_runs_than_top_k_use_them_all():
    ra = ranking_agreement({"a": 1.0, "b": 2.0, "c": 3.0}, {"a": 1.0, "b": 3.0, "c": 2.0})
    assert ra.top_k == 3 and ra.tau_top_k == pytest.approx(1 / 3)
    # c and b swap: equal moves, listed by human rank (c is first under the humans)
    assert json.loads(json.dumps(ra.to_dict()))["rank_changes"][0] == {
        "run": "c",
        "human_rank": 1,
        "auto_rank": 2,
    }


def test_single_run_gives_nan_correlations():
    ra = ranking_agreement({"a": 1.0}, {"a": 2.0})
    assert math.isnan(ra.kendall_tau_b) and math.isnan(ra.tau_top_k)
    assert ra.to_dict()["tau_ap"] is None


def test_top_k_below_two_is_refused():
    with pytest.raises(ValueError, match="top_k"):
        ranking_agreement({"a": 1.0}, {"a": 1.0}, top_k=1)


# --- families ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("OpenAI/GPT-4o", "gpt-4o"),
        ("gpt-4-0613", "gpt-4"),
        ("claude-3-5-sonnet-20241022", "claude-3-5-sonnet"),
        ("claude-3-5-sonnet@20240620", "claude-3-5-sonnet"),
        ("gpt-4-turbo-preview", "gpt-4-turbo"),
        ("meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b-instruct"),
        ("llama3.1:70b", "llama3.1"),
        ("mistral-large-latest", "mistral-large"),
        ("  Mistral Large 2407 ", "mistral-large"),
    ],
)
def test_model_family_rule(name, family):
    assert model_family(name) == family


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("gpt-4o-2024-08-06", "gpt-4o", True),
        ("gpt-4o-mini", "gpt-4o", True),
        ("gpt-4", "gpt-4o", False),
        ("llama-3", "llama-3.1", False),
        ("llama3.1:8b", "llama3.1:70b", True),
        ("", "gpt-4o", False),
    ],
)
def test_same_family(a, b, same):
    assert same_family(a, b) is same


def test_family_gaps_hand_worked():
    human = {"r1": 0.30, "r2": 0.20, "r3": 0.25, "r4": 0.10}
    auto = {"r1": 0.40, "r2": 0.25, "r3": 0.25, "r4": 0.10}
    families = {"r1": ["gpt-4o-2024-08-06"], "r2": ["gpt-4o-mini"], "r3": ["Llama-3.1-8B"]}
    gaps = family_gaps(human, auto, families, judge_model="gpt-4o")
    assert [(g.family, g.runs, g.circular) for g in gaps] == [
        ("gpt-4o", ["r1"], True),
        ("gpt-4o-mini", ["r2"], True),
        ("(none declared)", ["r4"], False),
        ("llama-3.1-8b", ["r3"], False),
    ]
    # mean gap of all runs: (.10 + .05 + 0 + 0) / 4 = .0375
    assert [g.mean_gap for g in gaps] == pytest.approx([0.10, 0.05, 0.0, 0.0])
    assert [g.relative_gap for g in gaps] == pytest.approx([0.0625, 0.0125, -0.0375, -0.0375])
    assert gaps[0].human_mean == pytest.approx(0.30) and gaps[0].auto_mean == pytest.approx(0.40)


def test_a_run_declaring_two_models_is_in_both_families():
    gaps = family_gaps(
        {"a": 0.1, "b": 0.2},
        {"a": 0.3, "b": 0.2},
        {"a": ["gpt-4o", "bm25"], "b": ["BM25"]},
        judge_model="qwen2.5-72b",
    )
    by = {g.family: g for g in gaps}
    assert by["bm25"].runs == ["a", "b"] and by["bm25"].mean_gap == pytest.approx(0.1)
    assert by["gpt-4o"].runs == ["a"] and not any(g.circular for g in gaps)


# --- probes -----------------------------------------------------------------------------------


def test_probe_result_hand_worked():
    before = {("q", "k1"): 0, ("q", "k2"): 0, ("q", "k3"): 1, ("q", "k4"): 0}
    after = {("q", "k1"): 2, ("q", "k2"): 0, ("q", "k3"): 0, ("q", "k4"): 0, ("q", "k5"): 1}
    pr = probe_result("stuffing", before, after, threshold=1)
    assert (pr.n, pr.flipped, pr.raised, pr.lowered, pr.missing) == (4, 2, 1, 1, 1)
    assert pr.share == 0.5 and pr.mean_shift == pytest.approx(0.25)
    assert [(e.key, e.before, e.after) for e in pr.examples] == [
        (("q", "k1"), 0, 2),
        (("q", "k3"), 1, 0),
    ]
    d = pr.to_dict()
    assert d["examples"][0] == {"qid": "q", "docid": "k1", "before": 0, "after": 2}


def test_grade_change_below_the_threshold_is_not_a_flip():
    pr = probe_result("injection", {("q", "d"): 1}, {("q", "d"): 2}, threshold=1)
    assert pr.flipped == 0 and pr.raised == 1 and pr.mean_shift == 1.0


def test_probe_on_nothing():
    pr = probe_result("injection", {}, {})
    assert pr.n == 0 and math.isnan(pr.share) and pr.to_dict()["share"] is None


# --- anchoring --------------------------------------------------------------------------------


def _arm(pairs):
    return {("q", f"d{i}"): p for i, p in enumerate(pairs)}


def test_anchoring_hand_worked_exact_difference_and_wald_interval():
    shown = _arm([(0, 0)] * 4 + [(1, 1)] * 4 + [(0, 1), (1, 0)])  # exact 8/10
    hidden = _arm([(0, 0)] * 3 + [(1, 1)] * 3 + [(0, 1)] * 2 + [(1, 0)] * 2)  # exact 6/10
    res = anchoring(shown, hidden, [0, 1])
    assert res["shown"]["n"] == 10 and res["shown"]["exact"] == pytest.approx(0.8)
    assert res["hidden"]["exact"] == pytest.approx(0.6)
    diff = res["difference"]
    assert diff["exact"] == pytest.approx(0.2)
    # se = sqrt(.8 * .2 / 10 + .6 * .4 / 10) = .2
    z = norm.ppf(0.975)
    assert diff["exact_interval"] == pytest.approx([0.2 - z * 0.2, 0.2 + z * 0.2])
    # kappa per arm: shown (.8 - .5)/.5 = .6, hidden (.6 - .5)/.5 = .2
    assert res["shown"]["kappa_linear"] == pytest.approx(0.6)
    assert res["hidden"]["kappa_linear"] == pytest.approx(0.2)
    assert diff["kappa_linear"] == pytest.approx(0.4)
    lo, hi = diff["kappa_linear_interval"]
    assert lo < 0.4 < hi
    json.dumps(res, allow_nan=False)


def test_anchoring_bootstrap_interval_agrees_with_the_asymptotic_kappa_error():
    # Large arms: the percentile bootstrap half-width should be close to 1.96 sqrt(se1^2 + se2^2)
    # with statsmodels' asymptotic standard errors of weighted kappa (an independent formula).
    rng = np.random.default_rng(2)

    def draw(n, noise):
        h = rng.integers(0, 3, size=n)
        a = np.where(rng.random(n) < noise, rng.integers(0, 3, size=n), h)
        return h, a

    arms, ses, kappas = {}, [], []
    for name, noise in (("shown", 0.3), ("hidden", 0.5)):
        h, a = draw(600, noise)
        arms[name] = _arm(list(zip(h.tolist(), a.tolist(), strict=True)))
        table = np.zeros((3, 3))
        np.add.at(table, (h, a), 1)
        r = cohens_kappa(table, wt="linear")
        ses.append(r["std_kappa"])
        kappas.append(r["kappa"])
    res = anchoring(arms["shown"], arms["hidden"], [0, 1, 2], n_resamples=4000, seed=1)
    assert res["difference"]["kappa_linear"] == pytest.approx(kappas[0] - kappas[1])
    lo, hi = res["difference"]["kappa_linear_interval"]
    expected_half = norm.ppf(0.975) * math.hypot(*ses)
    assert (hi - lo) / 2 == pytest.approx(expected_half, rel=0.15)


def test_anchoring_with_a_tiny_arm_gives_no_interval():
    res = anchoring(_arm([(1, 1)]), _arm([(0, 0), (1, 0)]), [0, 1])
    assert res["difference"]["exact_interval"] is None
    assert res["difference"]["kappa_linear_interval"] is None
    assert res["shown"]["kappa_linear"] is None  # one item: undefined, JSON-safe
