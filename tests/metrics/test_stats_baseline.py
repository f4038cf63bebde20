"""Corrections other than Holm and comparisons against one baseline run (metrics.stats)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from metrics.stats.multiple import adjust
from metrics.stats.paired import compare_runs, compare_to_baseline, effect_size, paired_test

multitest = pytest.importorskip("statsmodels.stats.multitest")


@pytest.mark.parametrize(
    ("ours", "theirs"), [("holm", "holm"), ("bonferroni", "bonferroni"), ("bh", "fdr_bh")]
)
def test_adjust_equals_statsmodels(ours: str, theirs: str) -> None:
    rng = np.random.default_rng(7)
    for size in (1, 2, 5, 17, 136):
        p = rng.uniform(0, 1, size) ** 3
        p[::4] = p[0]  # ties
        expected = multitest.multipletests(p, method=theirs)[1]
        assert adjust(list(p), ours) == pytest.approx(list(expected), abs=1e-12)


def test_adjust_by_hand_and_edge_cases() -> None:
    # BH by hand: sorted 0.01, 0.02, 0.03, 0.5 with m = 4 -> 0.04, 0.04, 0.04, 0.5
    assert adjust([0.03, 0.5, 0.01, 0.02], "bh") == pytest.approx([0.04, 0.5, 0.04, 0.04])
    assert adjust([0.2, 0.4], "bonferroni") == [0.4, 0.8]
    assert adjust([0.2, 0.7], "bonferroni") == [0.4, 1.0]
    assert adjust([0.2, 0.7], "none") == [0.2, 0.7]
    out = adjust([0.01, math.nan, 0.02], "bonferroni")
    assert out[0] == pytest.approx(0.02) and math.isnan(out[1]) and out[2] == pytest.approx(0.04)
    with pytest.raises(ValueError, match="unknown correction 'sidak'"):
        adjust([0.1], "sidak")
    with pytest.raises(ValueError, match="must lie in"):
        adjust([1.5], "bh")


def test_effect_size_is_cohens_dz() -> None:
    a, b = [0.5, 0.7, 0.2, 0.9], [0.4, 0.5, 0.3, 0.6]
    d = np.array(a) - np.array(b)
    assert effect_size(a, b) == pytest.approx(d.mean() / d.std(ddof=1))
    assert effect_size([1, 2], [1, 2]) == 0.0
    assert effect_size([2, 3], [1, 2]) == math.inf
    assert math.isnan(effect_size([1], [0]))


def test_compare_to_baseline_tests_each_run_against_the_baseline_only() -> None:
    rng = np.random.default_rng(3)
    qids = [f"q{i}" for i in range(30)]
    base = rng.uniform(0, 1, 30)
    runs = {
        "base": dict(zip(qids, base, strict=True)),
        "better": dict(zip(qids, np.clip(base + 0.2 + rng.normal(0, 0.05, 30), 0, 1), strict=True)),
        "same": dict(zip(qids, np.clip(base + rng.normal(0, 0.05, 30), 0, 1), strict=True)),
    }
    rows = compare_to_baseline(runs, "base", test="t", correction="holm")
    assert [r.run for r in rows] == ["better", "same"]
    raw = [
        paired_test(np.array([runs[r][q] for q in qids]), base, test="t").p_value
        for r in ("better", "same")
    ]
    assert [r.p_value for r in rows] == pytest.approx(raw)
    assert [r.p_adjusted for r in rows] == pytest.approx(
        list(multitest.multipletests(raw, method="holm")[1])
    )
    better = rows[0]
    assert better.significant and better.diff > 0.15 and better.ci_low > 0 and better.effect > 1
    assert better.wins + better.ties + better.losses == 30 and better.n == 30
    assert better.mean_baseline == pytest.approx(base.mean())
    # the family is the m - 1 baseline comparisons, not all pairs
    all_pairs = compare_runs(runs, test="t")
    assert len(all_pairs) == 3 and len(rows) == 2


def test_compare_to_baseline_scores_missing_queries_zero_and_rejects_bad_input() -> None:
    runs = {"base": {"q1": 0.5, "q2": 0.5}, "r": {"q1": 1.0}}
    with pytest.raises(ValueError, match="has no value for 1 queries"):
        compare_to_baseline(runs, "base")
    (row,) = compare_to_baseline(runs, "base", queries=["q1", "q2"], test="randomization")
    assert row.mean_run == 0.5 and row.wins == 1 and row.losses == 1
    with pytest.raises(ValueError, match="baseline 'x' is not one"):
        compare_to_baseline(runs, "x", queries=["q1"])
    with pytest.raises(ValueError, match="unknown correction"):
        compare_to_baseline(runs, "base", queries=["q1", "q2"], correction="fdr")
