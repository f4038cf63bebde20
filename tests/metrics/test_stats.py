"""Confidence intervals, paired tests, Holm and rank correlations against independent sources.

Independent sources: hand-worked numbers, a peer code path (scipy.stats.bootstrap, statsmodels
DescrStatsW, statsmodels multipletests), brute-force enumeration of a definition, and known
properties (hypothesis).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.weightstats import DescrStatsW

from metrics.stats.intervals import bootstrap_ci, t_ci
from metrics.stats.multiple import holm
from metrics.stats.paired import Comparison, PairedTest, compare_runs, paired_test
from metrics.stats.rank import kendall_tau_b, tau_ap, tau_ap_symmetric

scores = st.floats(min_value=0.0, max_value=1.0, allow_nan=False, allow_subnormal=False)
score_lists = st.lists(scores, min_size=2, max_size=60)


# --- bootstrap_ci -----------------------------------------------------------------------------


def test_bootstrap_ci_of_two_values_spans_both_by_hand() -> None:
    # Means of resamples of [0, 1] are 0, 0.5, 1 with probabilities 1/4, 1/2, 1/4: the 2.5% and
    # 97.5% quantiles are 0 and 1, the 30% and 70% quantiles both 0.5.
    assert bootstrap_ci([0.0, 1.0], n_resamples=20_000) == (0.0, 1.0)
    assert bootstrap_ci([0.0, 1.0], level=0.4, n_resamples=20_000) == (0.5, 0.5)


def test_bootstrap_ci_agrees_with_scipy_percentile_bootstrap_within_monte_carlo_error() -> None:
    values = np.random.default_rng(7).beta(0.6, 1.4, size=200)
    ours = bootstrap_ci(values, n_resamples=20_000, seed=1)
    ref = scipy.stats.bootstrap(
        (values,),
        np.mean,
        n_resamples=20_000,
        method="percentile",
        vectorized=True,
        rng=np.random.default_rng(12345),
    ).confidence_interval
    width = ref.high - ref.low
    assert ours[0] == pytest.approx(ref.low, abs=0.03 * width)
    assert ours[1] == pytest.approx(ref.high, abs=0.03 * width)


def test_bootstrap_ci_of_many_normal_values_matches_the_t_interval() -> None:
    values = np.random.default_rng(3).normal(0.4, 0.2, size=1000)
    lo, hi = bootstrap_ci(values, n_resamples=10_000)
    ref = DescrStatsW(values).tconfint_mean(alpha=0.05)
    assert lo == pytest.approx(ref[0], abs=0.002)
    assert hi == pytest.approx(ref[1], abs=0.002)


def test_bootstrap_ci_of_no_values_is_nan() -> None:
    lo, hi = bootstrap_ci([])
    assert math.isnan(lo) and math.isnan(hi)


@pytest.mark.parametrize("values", [[0.3], [0.7, 0.7, 0.7]])
def test_bootstrap_ci_of_one_or_equal_values_is_that_value(values: list[float]) -> None:
    assert bootstrap_ci(values) == (values[0], values[0])


def test_bootstrap_ci_is_deterministic_for_a_seed_and_varies_with_it() -> None:
    values = np.random.default_rng(0).random(50)
    assert bootstrap_ci(values, seed=5) == bootstrap_ci(values, seed=5)
    assert bootstrap_ci(values, seed=5) != bootstrap_ci(values, seed=6)


def test_bootstrap_ci_rejects_nan_values() -> None:
    with pytest.raises(ValueError, match="NaN"):
        bootstrap_ci([0.1, math.nan])


@settings(max_examples=60, deadline=None)
@given(values=score_lists, seed=st.integers(0, 2**32 - 1))
def test_bootstrap_ci_contains_the_mean_and_lies_within_the_data(
    values: list[float], seed: int
) -> None:
    lo, hi = bootstrap_ci(values, n_resamples=500, seed=seed)
    mean = float(np.mean(values))
    eps = 1e-12
    assert min(values) - eps <= lo <= mean + eps <= hi + 2 * eps <= max(values) + 3 * eps


# --- t_ci -------------------------------------------------------------------------------------


def test_t_ci_matches_the_hand_worked_interval() -> None:
    # mean 3, s = sqrt(2.5), sem = sqrt(0.5), t_{0.975, 4} = 2.7764451051977987.
    half = 2.7764451051977987 * math.sqrt(0.5)
    lo, hi = t_ci([1.0, 2.0, 3.0, 4.0, 5.0])
    assert lo == pytest.approx(3.0 - half, rel=1e-12)
    assert hi == pytest.approx(3.0 + half, rel=1e-12)


def test_t_ci_matches_statsmodels_at_other_levels() -> None:
    values = np.random.default_rng(1).random(37)
    for level in (0.5, 0.9, 0.99):
        ref = DescrStatsW(values).tconfint_mean(alpha=1 - level)
        assert t_ci(values, level=level) == pytest.approx(ref, rel=1e-12)


def test_t_ci_is_undefined_for_fewer_than_two_values() -> None:
    assert all(math.isnan(v) for v in t_ci([]) + t_ci([0.4]))


def test_t_ci_of_equal_values_is_that_value() -> None:
    assert t_ci([0.25, 0.25, 0.25]) == (0.25, 0.25)


@settings(max_examples=60, deadline=None)
@given(values=score_lists)
def test_t_ci_contains_the_mean_and_widens_with_the_level(values: list[float]) -> None:
    lo90, hi90 = t_ci(values, level=0.9)
    lo99, hi99 = t_ci(values, level=0.99)
    mean = float(np.mean(values))
    assert lo99 <= lo90 + 1e-12 and hi90 <= hi99 + 1e-12
    assert lo90 <= mean + 1e-12 <= hi90 + 2e-12


# --- paired_test ------------------------------------------------------------------------------


def test_paired_t_test_matches_the_hand_worked_statistic_and_statsmodels_p() -> None:
    a = [0.5, 0.6, 0.7, 0.8]
    b = [0.4, 0.4, 0.6, 0.5]
    # d = [0.1, 0.2, 0.1, 0.3]: mean 0.175, s^2 = 0.0275 / 3, t = 0.175 / sqrt(s^2 / 4).
    t_hand = 0.175 / math.sqrt(0.0275 / 3 / 4)
    t_sm, p_sm, _ = DescrStatsW(np.subtract(a, b)).ttest_mean(0.0)
    res = paired_test(a, b, test="t")
    assert (res.test, res.n) == ("t", 4)
    assert res.statistic == pytest.approx(t_hand)
    assert res.mean_diff == pytest.approx(0.175)
    assert res.p_value == pytest.approx(p_sm)
    assert t_sm == pytest.approx(t_hand)
    assert isinstance(res, PairedTest)


def test_randomization_test_on_three_pairs_is_exact_by_hand() -> None:
    # d = [1, 2, 3]: sign patterns give sums 6, 4, 2, 0, 0, -2, -4, -6; |sum| >= 6 in 2 of 8.
    res = paired_test([1.0, 2.0, 3.0], [0.0, 0.0, 0.0], test="randomization")
    assert res.p_value == pytest.approx(0.25)
    assert res.statistic == pytest.approx(2.0)


def _exact_sign_flip_p(d: np.ndarray) -> float:
    observed = abs(d.mean())
    hits = 0
    patterns = list(itertools.product((1.0, -1.0), repeat=d.size))
    for signs in patterns:
        hits += abs(np.dot(signs, d) / d.size) >= observed - 1e-12
    return hits / len(patterns)


def test_randomization_test_equals_brute_force_enumeration_of_sign_flips() -> None:
    rng = np.random.default_rng(11)
    a = rng.random(12)
    b = a - 0.08 + 0.15 * rng.standard_normal(12)
    exact = _exact_sign_flip_p(a - b)
    assert paired_test(a, b, test="randomization").p_value == pytest.approx(exact)
    sampled = paired_test(a, b, test="randomization", n_resamples=3000, seed=4).p_value
    assert sampled == pytest.approx(exact, abs=0.03)


def test_randomization_test_agrees_with_scipy_permutation_test() -> None:
    rng = np.random.default_rng(5)
    b = rng.random(30)
    a = b + 0.03 + 0.1 * rng.standard_normal(30)
    ref = scipy.stats.permutation_test(
        (a, b),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=50_000,
        rng=np.random.default_rng(99),
    )
    ours = paired_test(a, b, test="randomization", n_resamples=50_000)
    assert ours.p_value == pytest.approx(ref.pvalue, abs=0.01)
    assert ours.statistic == pytest.approx(ref.statistic)


def test_sampled_randomization_p_value_is_never_zero() -> None:
    b = np.linspace(0.0, 0.5, 40)
    res = paired_test(
        b + 0.3, b + np.linspace(0.0, 0.01, 40), test="randomization", n_resamples=999
    )
    assert res.p_value == pytest.approx(1 / 1000)


def test_bootstrap_test_on_two_pairs_matches_the_hand_worked_p() -> None:
    # d = [0, 2]: centred [-1, 1]; resampled means -1, 0, 1 with probabilities 1/4, 1/2, 1/4;
    # |mean*| >= |1| with probability 1/2.
    res = paired_test([0.0, 2.0], [0.0, 0.0], test="bootstrap", n_resamples=20_000)
    assert res.p_value == pytest.approx(0.5, abs=0.015)
    assert res.statistic == 1.0


@pytest.mark.parametrize("test", ["t", "randomization", "bootstrap"])
def test_identical_runs_are_not_significantly_different(test: str) -> None:
    a = [0.1, 0.5, 0.3, 0.9]
    res = paired_test(a, a, test=test)  # type: ignore[arg-type]
    assert (res.p_value, res.mean_diff) == (1.0, 0.0)


@pytest.mark.parametrize("test", ["t", "randomization", "bootstrap"])
def test_a_large_consistent_difference_is_significant(test: str) -> None:
    rng = np.random.default_rng(2)
    b = rng.random(40)
    a = b + 0.2 + 0.02 * rng.standard_normal(40)
    assert paired_test(a, b, test=test).p_value < 0.001  # type: ignore[arg-type]


def test_paired_t_of_a_constant_nonzero_difference_is_infinitely_significant() -> None:
    res = paired_test([0.5, 0.6, 0.7], [0.4, 0.5, 0.6], test="t")
    assert res.p_value == 0.0 and res.statistic == math.inf


@settings(max_examples=25, deadline=None)
@given(
    pairs=st.lists(st.tuples(scores, scores), min_size=2, max_size=30),
    test=st.sampled_from(["t", "randomization", "bootstrap"]),
)
def test_swapping_the_runs_negates_the_difference_and_keeps_the_p_value(
    pairs: list[tuple[float, float]], test: str
) -> None:
    a = [p[0] for p in pairs]
    b = [p[1] for p in pairs]
    ab = paired_test(a, b, test=test, n_resamples=500)  # type: ignore[arg-type]
    ba = paired_test(b, a, test=test, n_resamples=500)  # type: ignore[arg-type]
    assert ab.mean_diff == pytest.approx(-ba.mean_diff, abs=1e-12)
    assert ab.p_value == pytest.approx(ba.p_value, abs=1e-9)
    assert 0.0 <= ab.p_value <= 1.0


def test_one_pair_is_never_significant_and_undefined_for_t_and_bootstrap() -> None:
    assert paired_test([0.9], [0.1], test="randomization").p_value == 1.0
    for test in ("t", "bootstrap"):
        with pytest.raises(ValueError, match="at least two pairs"):
            paired_test([0.9], [0.1], test=test)


def test_paired_test_rejects_unequal_lengths_and_unknown_tests() -> None:
    with pytest.raises(ValueError, match="same length"):
        paired_test([0.1, 0.2], [0.1], test="t")
    with pytest.raises(ValueError, match="unknown test"):
        paired_test([0.1, 0.2], [0.1, 0.3], test="wilcoxon")  # type: ignore[arg-type]


# --- holm -------------------------------------------------------------------------------------


def test_holm_matches_the_hand_worked_example_in_input_order() -> None:
    # Sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, max(0.04*1, 0.06) = 0.06.
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_holm_agrees_with_statsmodels_multipletests() -> None:
    p = np.random.default_rng(8).random(40) ** 3
    p[[3, 17]] = p[5]  # ties
    assert holm(list(p)) == pytest.approx(list(multipletests(p, method="holm")[1]), abs=1e-15)


def test_holm_caps_adjusted_p_values_at_one() -> None:
    assert holm([0.5, 0.6]) == [1.0, 1.0]


def test_holm_leaves_nan_out_of_the_family() -> None:
    out = holm([0.01, math.nan, 0.02])
    assert out[0] == pytest.approx(0.02) and out[2] == pytest.approx(0.02)
    assert math.isnan(out[1])


def test_holm_of_nothing_is_nothing() -> None:
    assert holm([]) == []


@settings(max_examples=100, deadline=None)
@given(p=st.lists(scores, min_size=1, max_size=30))
def test_holm_adjusted_values_are_at_least_raw_monotone_and_at_most_bonferroni(
    p: list[float],
) -> None:
    adj = holm(p)
    m = len(p)
    for raw, a in zip(p, adj, strict=True):
        assert raw - 1e-12 <= a <= min(1.0, m * raw) + 1e-12
    for i, j in itertools.product(range(m), repeat=2):
        if p[i] <= p[j]:
            assert adj[i] <= adj[j] + 1e-12


# --- compare_runs -----------------------------------------------------------------------------

PER_QUERY = {
    "A": {"q1": 0.9, "q2": 0.8, "q3": 0.7, "q4": 0.6},
    "B": {"q1": 0.5, "q2": 0.4, "q3": 0.5, "q4": 0.2},
    "C": {"q1": 0.8, "q2": 0.8, "q3": 0.6, "q4": 0.6},
}


def test_compare_runs_tests_every_pair_in_order_with_holm_across_pairs() -> None:
    out = compare_runs(PER_QUERY)
    assert [(c.run_a, c.run_b) for c in out] == [("A", "B"), ("A", "C"), ("B", "C")]
    assert [c.mean_a for c in out] == pytest.approx([0.75, 0.75, 0.4])
    assert [c.diff for c in out] == pytest.approx([0.35, 0.05, -0.3])
    raw = [
        scipy.stats.ttest_rel(list(PER_QUERY[a].values()), list(PER_QUERY[b].values())).pvalue
        for a, b in [("A", "B"), ("A", "C"), ("B", "C")]
    ]
    reject, adjusted, _, _ = multipletests(raw, alpha=0.05, method="holm")
    assert [c.p_value for c in out] == pytest.approx(raw)
    assert [c.p_holm for c in out] == pytest.approx(list(adjusted))
    assert [c.significant for c in out] == list(reject)
    assert all(c.n == 4 and c.test == "t" for c in out)


def test_compare_runs_refuses_runs_that_answered_different_queries() -> None:
    runs = {"A": PER_QUERY["A"], "B": {"q1": 0.5, "q2": 0.4, "q3": 0.5}}
    with pytest.raises(ValueError, match="q4"):
        compare_runs(runs)


def test_compare_runs_scores_missing_queries_zero_when_queries_are_given() -> None:
    runs = {"A": PER_QUERY["A"], "B": {"q1": 0.5, "q2": 0.4, "q3": 0.5}}
    (c,) = compare_runs(runs, queries=["q1", "q2", "q3", "q4"])
    assert isinstance(c, Comparison)
    assert (c.run_a, c.run_b, c.n, c.test) == ("A", "B", 4, "t")
    assert (c.mean_a, c.mean_b, c.diff) == pytest.approx((0.75, 1.4 / 4, 0.4))
    assert c.p_holm == c.p_value  # a family of one pair
    d = [0.4, 0.4, 0.2, 0.6]
    assert c.p_value == pytest.approx(DescrStatsW(np.array(d)).ttest_mean(0.0)[1])


def test_compare_runs_of_one_run_is_empty() -> None:
    assert compare_runs({"A": PER_QUERY["A"]}) == []


# --- kendall_tau_b ----------------------------------------------------------------------------

REF = {"A": 4.0, "B": 3.0, "C": 2.0, "D": 1.0}
TOP_SWAP = {"A": 3.0, "B": 4.0, "C": 2.0, "D": 1.0}
BOTTOM_SWAP = {"A": 4.0, "B": 3.0, "C": 1.0, "D": 2.0}


def test_kendall_tau_b_of_one_swap_among_four_is_two_thirds() -> None:
    # 5 concordant, 1 discordant of 6 pairs.
    assert kendall_tau_b(REF, TOP_SWAP) == pytest.approx(2 / 3)
    assert kendall_tau_b(REF, BOTTOM_SWAP) == pytest.approx(2 / 3)


def test_kendall_tau_b_corrects_for_ties_by_hand() -> None:
    # P = 2, Q = 0, one pair tied only in y: 2 / sqrt(2 * 3).
    x = {"A": 3.0, "B": 2.0, "C": 1.0}
    y = {"A": 2.0, "B": 2.0, "C": 1.0}
    assert kendall_tau_b(x, y) == pytest.approx(2 / math.sqrt(6))


def test_kendall_tau_b_needs_the_same_systems() -> None:
    with pytest.raises(ValueError, match="same systems"):
        kendall_tau_b(REF, {"A": 1.0, "B": 2.0})


distinct_rankings = st.lists(
    st.floats(-100, 100, allow_nan=False), min_size=2, max_size=12, unique=True
)


@settings(max_examples=60, deadline=None)
@given(values=distinct_rankings, data=st.data())
def test_kendall_tau_b_is_one_for_identical_and_minus_one_for_reversed_rankings(
    values: list[float], data: st.DataObject
) -> None:
    x = {f"s{i}": v for i, v in enumerate(values)}
    other = data.draw(st.permutations(values))
    y = {f"s{i}": v for i, v in enumerate(other)}
    assert kendall_tau_b(x, x) == pytest.approx(1.0)
    assert kendall_tau_b(x, {k: -v for k, v in x.items()}) == pytest.approx(-1.0)
    assert kendall_tau_b(x, y) == pytest.approx(kendall_tau_b(y, x))


# --- tau_ap -----------------------------------------------------------------------------------


def test_tau_ap_charges_a_swap_at_the_top_more_than_one_at_the_bottom_by_hand() -> None:
    # Top swap, y = B A C D: C(2) = 0, C(3) = 2, C(4) = 3 -> 2/3 * (0 + 1 + 1) - 1 = 1/3.
    # Bottom swap, y = A B D C: C(2) = 1, C(3) = 2, C(4) = 2 -> 2/3 * (1 + 1 + 2/3) - 1 = 7/9.
    assert tau_ap(REF, TOP_SWAP) == pytest.approx(1 / 3)
    assert tau_ap(REF, BOTTOM_SWAP) == pytest.approx(7 / 9)


def test_tau_ap_is_asymmetric_and_the_symmetric_version_averages_by_hand() -> None:
    # x = A B C D, y = B C A D: against x, y gets C = 1, 0, 3 -> 1/3; against y, x = A B C D
    # gets C = 0, 1, 3 -> 2/3 * (0 + 1/2 + 1) - 1 = 0.
    y = {"B": 4.0, "C": 3.0, "A": 2.0, "D": 1.0}
    assert tau_ap(REF, y) == pytest.approx(1 / 3)
    assert tau_ap(y, REF) == pytest.approx(0.0, abs=1e-12)
    assert tau_ap_symmetric(REF, y) == pytest.approx(1 / 6)


def test_tau_ap_orders_tied_scores_by_system_name() -> None:
    assert tau_ap({"A": 2.0, "B": 1.0}, {"A": 1.0, "B": 1.0}) == pytest.approx(1.0)
    assert tau_ap({"A": 1.0, "B": 2.0}, {"A": 1.0, "B": 1.0}) == pytest.approx(-1.0)


def _tau_ap_by_pair_enumeration(x: dict[str, float], y: dict[str, float]) -> float:
    """The paper's random experiment, enumerated: pick a system below the top of y uniformly, then
    one above it in y uniformly; p = probability that x orders the two the same way."""
    order_y = sorted(y, key=lambda s: -y[s])
    n = len(order_y)
    p = 0.0
    for i in range(1, n):
        agree = sum(x[order_y[j]] > x[order_y[i]] for j in range(i))
        p += agree / i / (n - 1)
    return 2 * p - 1


@settings(max_examples=100, deadline=None)
@given(values=distinct_rankings, data=st.data())
def test_tau_ap_equals_the_probabilistic_definition_and_is_one_on_identical_rankings(
    values: list[float], data: st.DataObject
) -> None:
    x = {f"s{i}": v for i, v in enumerate(values)}
    y = {f"s{i}": v for i, v in enumerate(data.draw(st.permutations(values)))}
    assert tau_ap(x, y) == pytest.approx(_tau_ap_by_pair_enumeration(x, y), abs=1e-12)
    assert tau_ap(x, x) == pytest.approx(1.0)
    assert tau_ap(x, {k: -v for k, v in x.items()}) == pytest.approx(-1.0)
    assert -1.0 - 1e-12 <= tau_ap(x, y) <= 1.0 + 1e-12


def test_tau_ap_of_two_systems_equals_kendall_tau() -> None:
    x = {"A": 1.0, "B": 2.0}
    for y in ({"A": 1.0, "B": 2.0}, {"A": 2.0, "B": 1.0}):
        assert tau_ap(x, y) == pytest.approx(kendall_tau_b(x, y))
