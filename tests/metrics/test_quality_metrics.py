"""metrics.judges.quality: Wilson intervals, gold accuracy, kappa against the other assessors,
drift; checked by hand and against statsmodels."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.proportion import proportion_confint

from metrics.judges.quality import (
    agreement_with_others,
    cohen_kappa,
    drift,
    gold_accuracy,
    grade_distribution,
    median,
    wilson_interval,
)


def cohen_kappa_score(a: list[int], b: list[int], labels: list[int] | None = None) -> float:
    """Unweighted Cohen's kappa of two raters by statsmodels (an independent reference), from
    their contingency table over ``labels`` (default: the grades that occur)."""
    scale = sorted(set(a) | set(b)) if labels is None else labels
    table = np.zeros((len(scale), len(scale)))
    for x, y in zip(a, b, strict=True):
        table[scale.index(x), scale.index(y)] += 1
    return float(cohens_kappa(table).kappa)


def test_wilson_interval_at_the_edges() -> None:
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)  # not degenerate at p = 0
    lo, hi = wilson_interval(10, 10)
    assert hi == pytest.approx(1.0) and lo == pytest.approx(0.7225, abs=1e-4)
    assert all(math.isnan(x) for x in wilson_interval(0, 0))
    with pytest.raises(ValueError):
        wilson_interval(3, 2)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(min_value=1, max_value=500).flatmap(
        lambda n: st.tuples(st.integers(0, n), st.just(n))
    )
)
def test_wilson_interval_matches_statsmodels(kn: tuple[int, int]) -> None:
    k, n = kn
    assert wilson_interval(k, n) == pytest.approx(proportion_confint(k, n, method="wilson"))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=2, max_size=40).filter(
        lambda pairs: len({g for p in pairs for g in p}) > 1
    )
)
def test_cohen_kappa_matches_statsmodels(pairs: list[tuple[int, int]]) -> None:
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    expected = cohen_kappa_score(a, b, labels=[0, 1, 2, 3])
    ours = cohen_kappa(a, b, scale=[0, 1, 2, 3])
    if math.isnan(expected):
        assert math.isnan(ours)
    else:
        assert ours == pytest.approx(expected, abs=1e-9)


def test_kappa_is_undefined_without_variation() -> None:
    assert math.isnan(cohen_kappa([1, 1], [1, 1], scale=[0, 1]))
    assert math.isnan(cohen_kappa([], [], scale=[0, 1]))
    with pytest.raises(ValueError):
        cohen_kappa([5], [0], scale=[0, 1])


def test_gold_accuracy_by_hand() -> None:
    acc = gold_accuracy([2, 2, 0, 1, 0], [2, 1, 0, 0, 2], relevance_level=1)
    assert (acc.n, acc.exact, acc.binary, acc.mean_abs_error) == (5, 0.4, 0.6, 0.8)
    empty = gold_accuracy([], [], relevance_level=1)
    assert empty.n == 0 and math.isnan(empty.exact)
    assert empty.to_dict()["exact"] is None


def test_agreement_with_others_pools_every_other_assessor() -> None:
    # item 1: a=1, b=1, c=0; item 2: a=0, b=0; item 3: c alone (no pair)
    rows = [(1, "a", 1), (1, "b", 1), (1, "c", 0), (2, "a", 0), (2, "b", 0), (3, "c", 1)]
    out = agreement_with_others(rows, scale=[0, 1])
    # a's pairs: (1,1) with b, (1,0) with c, (0,0) with b: 2 of 3 equal
    assert (out["a"].n_items, out["a"].n_pairs) == (2, 3)
    assert out["a"].exact == pytest.approx(2 / 3)
    assert out["a"].kappa == pytest.approx(cohen_kappa_score([1, 1, 0], [1, 0, 0]))
    assert (out["c"].n_items, out["c"].n_pairs, out["c"].exact) == (1, 2, 0.0)
    with pytest.raises(ValueError):
        agreement_with_others([(1, "a", 1), (1, "a", 0)], scale=[0, 1])


def test_drift_blocks_and_distribution() -> None:
    seconds = [1.0, 2.0, 3.0, 10.0, 20.0]
    given_ = [2, 0, 1, 2, 2]
    gold = [2, None, 0, None, 0]
    blocks = drift(seconds, given_, gold, size=3, relevance_level=1)
    assert [b.label for b in blocks] == ["1-3", "4-5"]
    assert [b.n for b in blocks] == [3, 2]
    assert [b.median_seconds for b in blocks] == [2.0, 15.0]
    assert blocks[0].accuracy.n == 2 and blocks[0].accuracy.exact == 0.5
    assert blocks[1].accuracy.binary == 0.0
    assert grade_distribution([0, 2, 2], scale=[0, 1, 2]) == {0: 1, 1: 0, 2: 2}
    assert math.isnan(median([]))
    with pytest.raises(ValueError):
        drift(seconds, given_, gold, size=0, relevance_level=1)
