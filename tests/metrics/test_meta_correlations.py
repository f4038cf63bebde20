"""Correlations for the meta-evaluation of judges (issue 35, point 2): hand-worked values, and
degenerate inputs reported as undefined with their reason, never 0.0."""

from __future__ import annotations

import pytest

from metrics.judges.meta import Undefined, correlation, correlation_interval

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
