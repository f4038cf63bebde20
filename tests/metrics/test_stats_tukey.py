"""Tukey's HSD, the studentized range tail and the all-pairs paired t-test of metrics.stats,
checked against a hand-worked example, statsmodels (OLS two-way ANOVA, pairwise_tukeyhsd) and
scipy (studentized_range, ttest_rel through paired_test)."""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from statsmodels.formula.api import ols
from statsmodels.stats.multicomp import pairwise_tukeyhsd

from metrics import evaluate, read_qrels
from metrics.stats.matrices import effect_size_matrix, paired_resampling_matrix, paired_t_matrix
from metrics.stats.paired import compare_runs, effect_size, paired_test
from metrics.stats.tukey import studentized_range_sf, tukey_hsd
from tests._shared_data import needs_shared_data, trec_runs


def runs_of(x: np.ndarray) -> dict[str, dict[str, float]]:
    return {f"r{i}": {f"q{j}": float(v) for j, v in enumerate(row)} for i, row in enumerate(x)}


def test_tukey_two_way_on_a_hand_worked_example() -> None:
    # 3 systems x 4 topics. Grand mean 0.45; system means A 0.5, B 0.55, C 0.3; topic means
    # 0.2, 11/30, 0.5, 11/15. The sums of squares, by hand:
    #   SS_total  = sum (x - 0.45)^2 = 0.21 + 0.23 + 0.19                = 0.63
    #   SS_system = 4 * (0.05^2 + 0.1^2 + 0.15^2)                        = 0.14
    #   SS_topic  = 3 * ((-0.25)^2 + (-1/12)^2 + 0.05^2 + (17/60)^2)     = 137/300
    #   SS_error  = 0.63 - 0.14 - 137/300 = 1/30 on (3 - 1)(4 - 1) = 6 d.f.: MSE = 1/180
    # q(A, C) = 0.2 / sqrt(MSE / 4) = 0.2 / sqrt(1/720) = 5.3666...
    x = np.array([[0.2, 0.4, 0.6, 0.8], [0.3, 0.5, 0.5, 0.9], [0.1, 0.2, 0.4, 0.5]])
    rows = tukey_hsd({"A": runs_of(x)["r0"], "B": runs_of(x)["r1"], "C": runs_of(x)["r2"]})
    by_pair = {(r.run_a, r.run_b): r for r in rows}
    assert [(r.run_a, r.run_b) for r in rows] == [("A", "B"), ("A", "C"), ("B", "C")]
    ac = by_pair[("A", "C")]
    assert ac.df == 6 and ac.n == 4 and ac.design == "two-way"
    assert ac.mse == pytest.approx(1 / 180, rel=1e-12)
    assert ac.q == pytest.approx(0.2 / math.sqrt(1 / 720), rel=1e-12)
    assert ac.diff == pytest.approx(0.2)
    assert ac.p_value == pytest.approx(scipy.stats.studentized_range.sf(ac.q, 3, 6), abs=1e-6)
    assert ac.significant  # q = 5.37 > q_crit(0.05; 3, 6) = 4.34 (tables)
    ab = by_pair[("A", "B")]
    assert ab.q == pytest.approx(0.05 / math.sqrt(1 / 720), rel=1e-12)  # 1.34: not significant
    assert not ab.significant


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tukey_two_way_matches_statsmodels_ols_anova_and_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    m, n = 6, 15
    topic = rng.uniform(0.0, 0.6, size=n)
    system = rng.uniform(-0.1, 0.1, size=m)
    x = np.clip(topic[None, :] + system[:, None] + rng.normal(0, 0.08, size=(m, n)), 0, 1)
    frame = pd.DataFrame(
        [(f"s{i}", f"t{j}", x[i, j]) for i in range(m) for j in range(n)],
        columns=["system", "topic", "score"],
    )
    fit = ols("score ~ C(system) + C(topic)", data=frame).fit()
    mse, df = float(fit.mse_resid), int(fit.df_resid)
    assert df == (m - 1) * (n - 1)
    means = x.mean(axis=1)
    rows = tukey_hsd(runs_of(x))
    assert len(rows) == m * (m - 1) // 2
    for row in rows:
        i, j = int(row.run_a[1:]), int(row.run_b[1:])
        q = abs(means[i] - means[j]) / math.sqrt(mse / n)
        assert row.mse == pytest.approx(mse, rel=1e-9)
        assert row.df == df
        assert row.q == pytest.approx(q, rel=1e-9)
        assert row.p_value == pytest.approx(scipy.stats.studentized_range.sf(q, m, df), abs=1e-6)


def test_tukey_one_way_is_ranx_s_statsmodels_pairwise_tukeyhsd_and_scipy_tukey_hsd() -> None:
    rng = np.random.default_rng(7)
    m, n = 4, 20
    x = rng.uniform(0, 1, size=(m, n)) + np.array([0.0, 0.05, 0.2, 0.3])[:, None]
    res = pairwise_tukeyhsd(
        endog=x.ravel(), groups=np.repeat([f"r{i}" for i in range(m)], n), alpha=0.05
    )
    rows = tukey_hsd(runs_of(x), design="one-way")
    # statsmodels lists the pairs (r0, r1), (r0, r2), ... as combinations: the same order
    assert [r.df for r in rows] == [m * (n - 1)] * len(rows)
    for row, p, reject in zip(rows, res.pvalues, res.reject, strict=True):
        assert row.p_value == pytest.approx(float(p), abs=1e-4)
        assert row.significant == bool(reject)
    # later ranx: scipy.stats.tukey_hsd on the runs' scores as independent groups
    scipy_p = scipy.stats.tukey_hsd(*x).pvalue
    for row in rows:
        i, j = int(row.run_a[1:]), int(row.run_b[1:])
        assert row.p_value == pytest.approx(float(scipy_p[i, j]), abs=1e-6)


def test_the_two_way_design_takes_the_topic_effect_out_of_the_error() -> None:
    # Every topic's difficulty varies a lot, the systems differ a little but consistently:
    # the paired (two-way) test sees it, the one-way (unpaired) test does not.
    rng = np.random.default_rng(3)
    topic = rng.uniform(0, 1, size=30)
    x = np.vstack([topic, topic + 0.03 + rng.normal(0, 0.01, 30), topic - 0.01])
    two = {(r.run_a, r.run_b): r.p_value for r in tukey_hsd(runs_of(x))}
    one = {(r.run_a, r.run_b): r.p_value for r in tukey_hsd(runs_of(x), design="one-way")}
    assert two[("r0", "r1")] < 0.001 < 0.5 < one[("r0", "r1")]


def test_tukey_edge_cases() -> None:
    assert tukey_hsd({"a": {"q1": 0.5, "q2": 0.1}}) == []
    with pytest.raises(ValueError, match="two topics"):
        tukey_hsd({"a": {"q1": 0.5}, "b": {"q1": 0.2}})
    with pytest.raises(ValueError, match="design"):
        tukey_hsd({"a": {"q1": 0.5}, "b": {"q1": 0.2}}, design="three-way")
    with pytest.raises(ValueError, match="no value"):
        tukey_hsd({"a": {"q1": 0.5, "q2": 0.1}, "b": {"q1": 0.2}})
    # queries given: a missing value scores 0
    (row,) = tukey_hsd({"a": {"q1": 0.5, "q2": 0.1}, "b": {"q1": 0.2}}, queries=["q1", "q2"])
    assert row.mean_b == pytest.approx(0.1)
    # no residual variation: an exact shift is certain, no shift is no difference
    shifted = {
        "a": {"q1": 0.5, "q2": 0.25},
        "b": {"q1": 0.25, "q2": 0.0},
        "c": {"q1": 0.5, "q2": 0.25},
    }
    rows = {(r.run_a, r.run_b): r for r in tukey_hsd(shifted)}
    assert rows[("a", "b")].p_value == 0.0 and rows[("a", "b")].significant
    assert rows[("a", "c")].p_value == 1.0 and not rows[("a", "c")].significant


@pytest.mark.parametrize(
    ("k", "df"), [(2, 1), (2, 10), (3, 6), (5, 30), (17, 784), (40, 1950), (127, 4158)]
)
def test_the_studentized_range_tail_matches_scipy(k: int, df: int) -> None:
    q = np.array([0.0, 0.3, 1.0, 2.0, 3.0, 3.5, 4.0, 5.0, 6.5, 9.0])
    mine = studentized_range_sf(q, k, df)
    expected = scipy.stats.studentized_range.sf(q, k, df)
    assert np.max(np.abs(mine - expected)) < 1e-6
    assert np.all(np.diff(mine) <= 0)  # a tail: decreasing in q


def test_the_studentized_range_tail_rejects_what_is_not_a_distribution() -> None:
    with pytest.raises(ValueError):
        studentized_range_sf([1.0], 1, 10)
    with pytest.raises(ValueError):
        studentized_range_sf([1.0], 3, 0)


@pytest.mark.filterwarnings("ignore:Precision loss occurred:RuntimeWarning")  # scipy, x[4]
def test_the_all_pairs_t_test_equals_paired_test_on_every_pair() -> None:
    rng = np.random.default_rng(11)
    x = rng.uniform(0, 1, size=(9, 25)).round(2)
    x[3] = x[2]  # identical runs: every difference 0
    x[4] = x[2] + 0.1  # a constant shift: every difference equal
    x[5, :5] = x[6, :5]  # some ties
    t, p = paired_t_matrix(x)
    e = effect_size_matrix(x)
    for i, j in itertools.permutations(range(len(x)), 2):
        ref = paired_test(x[i], x[j], test="t")
        if math.isinf(ref.statistic):
            assert t[i, j] == ref.statistic
        else:
            assert t[i, j] == pytest.approx(ref.statistic, rel=1e-9, abs=1e-12)
        assert p[i, j] == pytest.approx(ref.p_value, rel=1e-9, abs=1e-15), (i, j)
        ref_e = effect_size(x[i], x[j])
        assert e[i, j] == ref_e or e[i, j] == pytest.approx(ref_e, rel=1e-9)
    assert np.all(np.diag(p) == 1.0) and np.all(np.diag(t) == 0.0)


def test_the_all_pairs_t_test_needs_two_queries() -> None:
    with pytest.raises(ValueError, match="two queries"):
        paired_t_matrix([[0.1], [0.2]])
    assert np.isnan(effect_size_matrix([[0.1], [0.2]])).all()


@pytest.mark.parametrize("test", ["randomization", "bootstrap"])
@pytest.mark.parametrize(
    ("n", "rounded"),
    [(10, False), (13, True), (14, False), (50, True), (300, False)],  # exact, Monte Carlo,
)  # and (300) more resamples than one chunk holds
def test_the_all_pairs_resampling_tests_equal_paired_test_on_every_pair(
    test: Literal["randomization", "bootstrap"], n: int, rounded: bool
) -> None:
    rng = np.random.default_rng(n)
    x = rng.uniform(0, 1, size=(7, n))
    if rounded:  # ties between runs and resampled means equal to the observed one
        x = x.round(1)
    x[2] = x[1]
    p = paired_resampling_matrix(x, test=test)
    pairs = list(itertools.combinations(range(len(x)), 2))
    expected = [paired_test(x[i], x[j], test=test).p_value for i, j in pairs]
    assert p.tolist() == expected
    seeded = paired_resampling_matrix(x, test=test, n_resamples=999, seed=5)
    again = [paired_test(x[i], x[j], test=test, n_resamples=999, seed=5).p_value for i, j in pairs]
    assert seeded.tolist() == again


def test_the_all_pairs_resampling_tests_refuse_what_paired_test_refuses() -> None:
    with pytest.raises(ValueError, match="randomization or bootstrap"):
        paired_resampling_matrix([[0.1, 0.2], [0.3, 0.4]], test="t")
    with pytest.raises(ValueError, match="two pairs"):
        paired_resampling_matrix([[0.1], [0.3]], test="bootstrap")
    assert paired_resampling_matrix([[0.1], [0.3]], test="randomization").tolist() == [1.0]
    assert paired_resampling_matrix([[0.1, 0.2]], test="randomization").size == 0


@pytest.mark.data
@needs_shared_data("robust03")
def test_on_the_17_robust_runs_tukey_and_the_all_pairs_t_test_agree_with_their_peers(
    shared_data: Path,
) -> None:
    """Real data: AP per topic of the 17 TREC 2003 Robust runs (100 topics, 136 pairs)."""
    root = shared_data / "robust03"
    qrels = read_qrels(root / "qrels.txt")
    per_query = {
        tag: dict(evaluate(qrels, run, ["AP"], ci=None).per_query["AP"])
        for tag, run in trec_runs(root).items()
    }
    queries = sorted(set.intersection(*(set(v) for v in per_query.values())))
    tags = list(per_query)
    x = np.array([[per_query[t][q] for q in queries] for t in tags])
    m, n = x.shape
    assert (m, n) == (17, 100)
    frame = pd.DataFrame(
        [(t, q, per_query[t][q]) for t in tags for q in queries],
        columns=["system", "topic", "score"],
    )
    fit = ols("score ~ C(system) + C(topic)", data=frame).fit()
    rows = tukey_hsd(per_query, queries=queries)
    qs = np.array([r.q for r in rows])
    assert rows[0].df == int(fit.df_resid) and rows[0].mse == pytest.approx(fit.mse_resid)
    expected = scipy.stats.studentized_range.sf(qs, m, int(fit.df_resid))
    assert np.max(np.abs(np.array([r.p_value for r in rows]) - expected)) < 1e-6
    _, p = paired_t_matrix(x)
    reference = compare_runs(per_query, test="t", queries=queries)
    iu, ju = np.triu_indices(m, k=1)
    assert p[iu, ju] == pytest.approx([c.p_value for c in reference], rel=1e-9, abs=1e-15)
    # Tukey's HSD finds differences, and no more than the uncorrected t-tests do
    assert 0 < sum(r.significant for r in rows) <= sum(c.p_value <= 0.05 for c in reference)
