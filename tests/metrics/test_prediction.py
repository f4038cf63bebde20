"""Prediction intervals for a run's full-pool score (``metrics.bias.prediction``): the hand-worked
interval, what it falls back to, errors by novelty, and coverage on Robust 2003."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from metrics.bias.prediction import (
    HOLE_FLOOR,
    Calibration,
    calibration_of,
    errors_by_novelty,
    novelty_bin,
    prediction_interval,
    recommend_for,
)
from tests._shared_data import needs_shared_data, shared_data_path, trec_groups, trec_runs

# six calibration runs: residuals 0.02, 0.04, 0.00, 0.06, 0.03, 0.05 on holes 0.2 or 0.1
CAL = Calibration(
    "lipani2015",
    units=("a", "a", "b", "c", "d", "e"),
    estimates=(0.50, 0.40, 0.30, 0.60, 0.45, 0.35),
    truths=(0.52, 0.44, 0.30, 0.66, 0.48, 0.40),
    holes=(0.2, 0.2, 0.1, 0.3, 0.1, 0.25),
)


def test_the_interval_is_the_estimate_plus_the_hole_times_the_t_interval_of_scaled_residuals() -> (
    None
):
    z = [0.02 / 0.2, 0.04 / 0.2, 0.0 / 0.1, 0.06 / 0.3, 0.03 / 0.1, 0.05 / 0.25]
    n = len(z)
    mean = sum(z) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in z) / (n - 1))
    half = stats.t.ppf(0.975, n - 1) * sd * math.sqrt(1 + 1 / n)
    pi = prediction_interval(0.50, 0.25, (0.45, 0.70), CAL)
    assert pi.method == "t on hole-scaled residuals" and pi.n_runs == 6
    assert pi.low == pytest.approx(0.50 + 0.25 * (mean - half))
    assert pi.high == pytest.approx(0.50 + 0.25 * (mean + half))
    assert pi.contains(0.55) and not pi.extrapolating
    # wider for a run with a larger hole, clipped to its bounds
    wide = prediction_interval(0.50, 0.3, (0.49, 0.52), CAL)
    assert (wide.low, wide.high) == (0.49, 0.52)


def test_a_run_with_nothing_unjudged_has_its_score_and_a_tiny_hole_is_floored() -> None:
    exact = prediction_interval(0.4, 0.0, (0.4, 0.4), CAL)
    assert (exact.low, exact.high, exact.method) == (0.4, 0.4, "exact")
    tiny = prediction_interval(0.4, 0.001, (0.0, 1.0), CAL)
    same = prediction_interval(0.4, HOLE_FLOOR, (0.0, 1.0), CAL)
    assert (tiny.low, tiny.high) == pytest.approx((same.low, same.high))


def test_beyond_the_calibrated_holes_or_with_too_few_runs_the_interval_is_the_bounds() -> None:
    far = prediction_interval(0.70, 0.30 + 0.05, (0.70, 1.00), CAL)
    assert (far.low, far.high, far.method, far.extrapolating) == (0.70, 1.00, "bounds", True)
    assert far.why == (
        "extrapolating: the calibration runs had at most 30% of their top k unjudged; this run "
        "has 35%"
    )
    few = prediction_interval(0.5, 0.1, (0.45, 0.55), CAL.without("a").without("b"))
    assert (few.low, few.high, few.method) == (0.45, 0.55, "bounds")
    assert few.why == "3 calibration runs (at least 5)"
    assert CAL.without("a").units == ("b", "c", "d", "e")
    assert prediction_interval(math.nan, 0.1, (0.0, 1.0), CAL).why == "no estimate"


def test_errors_by_novelty_bin_the_runs_and_recommend_by_the_runs_like_this_one() -> None:
    report = {
        "runs": {
            "r1": {"unit": "a", "judged": 0.5, "score_full_pool": 0.5, "x": 0.4, "y": 0.45},
            "r2": {"unit": "b", "judged": 0.55, "score_full_pool": 0.6, "x": 0.5, "y": 0.58},
            "r3": {"unit": "c", "judged": 0.58, "score_full_pool": 0.3, "x": 0.25, "y": 0.29},
            "r4": {"unit": "d", "judged": 0.95, "score_full_pool": 0.3, "x": 0.30, "y": 0.25},
        }
    }
    bins = errors_by_novelty(report, ["x", "y"])
    assert [(b.bin, b.n_runs) for b in bins["x"]] == [("< 0.6", 3), (">= 0.9", 1)]
    assert bins["x"][0].mae == pytest.approx((0.1 + 0.1 + 0.05) / 3)
    assert bins["x"][0].mean_error == pytest.approx(-(0.1 + 0.1 + 0.05) / 3)  # under-corrects
    assert bins["y"][0].mae == pytest.approx((0.05 + 0.02 + 0.01) / 3)
    assert recommend_for(0.52, bins)[0] == "y"
    name, why = recommend_for(0.93, bins)
    assert name is None and "fewer than 3 validation runs had a Judged@k >= 0.9" in why
    assert [novelty_bin(j) for j in (0.1, 0.6, 0.85, 1.0)] == [
        "< 0.6",
        "0.6-0.8",
        "0.8-0.9",
        ">= 0.9",
    ]
    cal = calibration_of(report, "x")
    assert cal.holes == pytest.approx((0.5, 0.45, 0.42, 0.05))


@needs_shared_data("robust03")
def test_on_robust_2003_the_intervals_hold_for_the_left_out_groups() -> None:
    """Leave one group out at depth 10 (topics 601-650), P@10, each run's interval from the other
    groups' residuals: 16 of 17 full-pool scores inside (the benchmark, all settings: 93%)."""
    from metrics import read_qrels
    from metrics.bias.estimators import estimator_report
    from metrics.bias.leaveout import LeaveOut

    root = shared_data_path("robust03")
    leave = LeaveOut(
        depth=10,
        leave_out="group",
        groups=trec_groups(root),
        topics=[str(t) for t in range(601, 651)],
    )
    rep = estimator_report(read_qrels(root / "qrels.txt"), trec_runs(root), "P@10", leave).to_dict()
    cal = calibration_of(rep, rep["recommended"])
    inside = []
    for row in rep["runs"].values():
        hole = 1.0 - row["judged"]
        pi = prediction_interval(
            row[rep["recommended"]],
            hole,
            (row["score"], row["score"] + hole),
            cal.without(row["unit"]),
        )
        assert row["score"] <= pi.low <= pi.high <= row["score"] + hole + 1e-12
        inside.append(pi.contains(row["score_full_pool"]))
    assert sum(inside) == 16
