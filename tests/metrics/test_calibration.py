"""Calibrated cut points: hand-worked optima, the exhaustive optimum, fallbacks.

Kappa is checked with statsmodels' ``cohens_kappa``; the exhaustive search over every placement
of the cuts uses the textbook formula written out here, not the module's code.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from statsmodels.stats.inter_rater import cohens_kappa

from metrics.judges.calibration import calibrate_thresholds, grades_from_thresholds


def _table(a, b, k: int) -> np.ndarray:
    table = np.zeros((k, k))
    np.add.at(table, (np.asarray(a), np.asarray(b)), 1)
    return table


def _kappa(a, b, k: int = 2, wt: str | None = None) -> float:
    return float(cohens_kappa(_table(a, b, k), wt=wt, return_results=False))


def test_separable_sample_gets_midpoint_cuts_and_is_reproduced_exactly():
    scores = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    grades = [0, 0, 1, 1, 2, 2]
    cuts = calibrate_thresholds(scores, grades, [0, 1, 2])
    assert cuts == pytest.approx([0.25, 0.45])
    assert grades_from_thresholds(scores, cuts, [0, 1, 2]).tolist() == grades


def test_kappa_not_exact_agreement_is_maximised():
    # scores 1..10, relevant at 6, 8 and 10. Exact agreement is 8/10 for a cut at 5.5, 7.5 or
    # 9.5, but kappa differs: by hand, p_e = 0.3 p_a + 0.7 (1 - p_a) with p_a the share called
    # relevant: cut 9.5 -> (0.8 - 0.66) / 0.34 = 0.41; cut 7.5 -> 0.22 / 0.42 = 0.52;
    # cut 5.5 -> (0.8 - 0.5) / 0.5 = 0.6, the best.
    scores = list(range(1, 11))
    grades = [0, 0, 0, 0, 0, 1, 0, 1, 0, 1]
    cuts = calibrate_thresholds(scores, grades, [0, 1])
    assert cuts == pytest.approx([5.5])
    auto = grades_from_thresholds(scores, cuts, [0, 1])
    assert _kappa(grades, auto) == pytest.approx(0.6)


def test_tied_scores_are_never_split():
    # The tie at 0.5 holds a 0 and a 1. Cut below it: kappa 0 (everything relevant); cut above
    # 0.9: kappa 0; cut between: humans [0, 1, 1] vs [0, 0, 1], kappa = (2/3 - 4/9) / (5/9) = 0.4.
    cuts = calibrate_thresholds([0.5, 0.5, 0.9], [0, 1, 1], [0, 1])
    assert cuts == pytest.approx([0.7])


def test_input_order_does_not_change_the_cuts():
    rng = np.random.default_rng(3)
    grades = rng.integers(0, 3, size=60)
    scores = np.round(grades * 0.2 + rng.normal(scale=0.3, size=60), 2)
    cuts = calibrate_thresholds(scores, grades, [0, 1, 2])
    perm = rng.permutation(60)
    assert calibrate_thresholds(scores[perm], grades[perm], [0, 1, 2]) == cuts


def _linear_kappa(table: np.ndarray) -> float:
    # Cohen (1968): 1 - sum(w O) / sum(w E), w_ij = |i - j|
    k = table.shape[0]
    w = np.abs(np.arange(k)[:, None] - np.arange(k)[None, :])
    expected = np.outer(table.sum(axis=1), table.sum(axis=0)) / table.sum()
    return 1.0 - float((w * table).sum()) / float((w * expected).sum())


def _exhaustive_best_kappa(scores: np.ndarray, grades: np.ndarray, k: int) -> float:
    values = np.unique(scores)
    candidates = [-np.inf, *((values[1:] + values[:-1]) / 2), np.inf]
    return max(
        _linear_kappa(_table(grades, np.searchsorted(np.asarray(c), scores, side="right"), k))
        for c in itertools.combinations_with_replacement(candidates, k - 1)
    )


def test_cuts_reach_the_exhaustive_optimum_of_linear_kappa():
    rng = np.random.default_rng(20260)
    for _ in range(150):
        n = int(rng.integers(2, 13))
        k = int(rng.integers(2, 5))
        scale = list(range(k))
        scores = np.round(rng.normal(size=n), 1)  # rounding makes ties common
        grades = rng.integers(0, k, size=n)
        if len(set(grades.tolist())) < 2:
            continue
        cuts = calibrate_thresholds(scores, grades, scale)
        assert all(b > a for a, b in itertools.pairwise(cuts))
        auto = grades_from_thresholds(scores, cuts, scale)
        got = _kappa(grades, auto, k, wt="linear")
        assert got == pytest.approx(_exhaustive_best_kappa(scores, grades, k), abs=1e-12)


def test_non_contiguous_scale_uses_grade_positions():
    # Grades 0, 1, 3: the fit works on positions, the output speaks the scale.
    scores = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    grades = [0, 0, 1, 1, 3, 3]
    cuts = calibrate_thresholds(scores, grades, [0, 1, 3])
    assert cuts == pytest.approx([2.5, 4.5])
    assert grades_from_thresholds(scores, cuts, [0, 1, 3]).tolist() == grades


def test_a_top_grade_missing_from_the_sample_starts_above_every_sample_score():
    scores = [1.0, 2.0, 3.0, 4.0]
    cuts = calibrate_thresholds(scores, [0, 0, 1, 1], [0, 1, 2])
    # documented placement: max + step, step = the sample's range (3)
    assert cuts == pytest.approx([2.5, 7.0])
    assert grades_from_thresholds([3.9, 7.0], cuts, [0, 1, 2]).tolist() == [1, 2]


def test_a_middle_grade_missing_from_the_sample_gets_a_narrow_interval_in_the_gap():
    cuts = calibrate_thresholds([1.0, 2.0, 3.0, 4.0], [0, 0, 2, 2], [0, 1, 2])
    assert cuts == pytest.approx([2 + 1 / 3, 2 + 2 / 3])


def test_one_human_grade_falls_back_to_exact_agreement():
    # Kappa is undefined or 0 whatever the cuts: every sample item gets the one grade seen.
    cuts = calibrate_thresholds([0.2, 0.4, 0.9], [1, 1, 1], [0, 1, 2])
    assert cuts == pytest.approx([0.2 - 0.7, 0.9 + 0.7])
    assert grades_from_thresholds([0.2, 0.4, 0.9], cuts, [0, 1, 2]).tolist() == [1, 1, 1]


def test_single_item_sample_uses_a_unit_step():
    assert calibrate_thresholds([0.3], [0], [0, 1]) == pytest.approx([1.3])


def test_score_on_a_cut_point_takes_the_higher_grade():
    got = grades_from_thresholds([0.1, 0.25, 0.3, 0.45, 0.9], [0.25, 0.45], [0, 1, 2])
    assert got.tolist() == [0, 1, 1, 2, 2]


@pytest.mark.parametrize(
    ("scores", "grades", "scale", "message"),
    [
        ([0.1, 0.2], [0, 2], [0, 1], "not in the scale"),
        ([0.1, 0.2], [0], [0, 1], "one grade per score"),
        ([], [], [0, 1], "empty sample"),
        ([0.1, float("nan")], [0, 1], [0, 1], "finite"),
        ([0.1, 0.2], [0, 1], [1, 0], "strictly increasing"),
        ([0.1, 0.2], [0, 0.5], [0, 1], "not in the scale"),
    ],
)
def test_bad_samples_are_refused(scores, grades, scale, message):
    with pytest.raises(ValueError, match=message):
        calibrate_thresholds(scores, grades, scale)


@pytest.mark.parametrize(
    ("thresholds", "message"),
    [([0.5], "pass 2"), ([0.6, 0.5], "non-decreasing"), ([0.1, float("inf")], "finite")],
)
def test_bad_thresholds_are_refused(thresholds, message):
    with pytest.raises(ValueError, match=message):
        grades_from_thresholds([0.3], thresholds, [0, 1, 2])


def test_equally_good_cuts_resolve_to_the_highest():
    # [0, 1, 0, 1]: a cut at 1.5 or at 3.5 both give kappa 0.5 (by hand: p_o = 3/4, p_e = 1/2);
    # the documented tie rule keeps the cut as high as the optimum allows.
    assert calibrate_thresholds([1, 2, 3, 4], [0, 1, 0, 1], [0, 1]) == pytest.approx([3.5])
