"""Juries of automatic judges (issue 35): majority, rounded mean, Dawid & Skene's EM and deferral
to people, on small hand-worked examples and a seeded simulation."""

from __future__ import annotations

import numpy as np
import pytest

from metrics.judges.juries import dawid_skene, defer_to_people, majority, mean_grade

SCALE = [0, 1, 2, 3]
Q = "q1"

# Four items, three judges (c has not labelled d3):
#   d1: a 2, b 2, c 1 -> majority 2, mean 5/3 -> 2
#   d2: a 0, b 1, c 3 -> three-way tie -> 0, mean 4/3 -> 1
#   d3: a 1, b 2      -> tie -> 1, mean 1.5 -> 2 (half to even)
#   d4: a 3           -> 3, mean 3
# d5 is labelled by nobody: absent everywhere.
LABELS = {
    "a": {(Q, "d1"): 2, (Q, "d2"): 0, (Q, "d3"): 1, (Q, "d4"): 3},
    "b": {(Q, "d1"): 2, (Q, "d2"): 1, (Q, "d3"): 2},
    "c": {(Q, "d1"): 1, (Q, "d2"): 3},
}


def test_majority_breaks_ties_toward_the_lower_grade() -> None:
    found = majority(LABELS, SCALE)
    assert found.labels == {(Q, "d1"): 2, (Q, "d2"): 0, (Q, "d3"): 1, (Q, "d4"): 3}
    assert found.ties == 2


def test_mean_grade_rounds_half_to_even() -> None:
    found = mean_grade(LABELS, SCALE)
    assert found.labels == {(Q, "d1"): 2, (Q, "d2"): 1, (Q, "d3"): 2, (Q, "d4"): 3}
    assert found.ties == 1
    # 0 and 1: 0.5 -> 0 (even); 2 and 3: 2.5 -> 2 (even)
    found = mean_grade({"a": {(Q, "x"): 0, (Q, "y"): 2}, "b": {(Q, "x"): 1, (Q, "y"): 3}}, SCALE)
    assert found.labels == {(Q, "x"): 0, (Q, "y"): 2} and found.ties == 2


def test_mean_grade_on_a_scale_with_gaps() -> None:
    # scale 0, 1, 3: grades 1 and 3 average 2, halfway between two odd grades -> the lower, 1;
    # grades 0 and 3 average 1.5, nearest 1; grades 0 and 1 average 0.5 -> 0 (even)
    labels = {
        "a": {(Q, "x"): 1, (Q, "y"): 0, (Q, "z"): 0},
        "b": {(Q, "x"): 3, (Q, "y"): 3, (Q, "z"): 1},
    }
    found = mean_grade(labels, [0, 1, 3])
    assert found.labels == {(Q, "x"): 1, (Q, "y"): 1, (Q, "z"): 0}
    assert found.ties == 2


def test_a_grade_outside_the_scale_names_the_judge_and_the_item() -> None:
    labels = {"a": {(Q, "d1"): 1}, "b": {(Q, "d2"): 7}}
    for combine in (majority, mean_grade, dawid_skene):
        with pytest.raises(ValueError, match=r"judge 'b' gave item \('q1', 'd2'\) the grade 7"):
            combine(labels, SCALE)
    with pytest.raises(ValueError, match="judge 'b'"):
        defer_to_people(labels, {}, SCALE)


def test_defer_to_people_where_the_judges_disagree() -> None:
    # d1, d2, d3 split the judges; people judged d1 (grade 3) and d3 (grade 0); d2 is pending.
    # d4 has one judge, who agrees with itself.
    human = {(Q, "d1"): 3, (Q, "d3"): 0, (Q, "d9"): 1}
    found = defer_to_people(LABELS, human, SCALE)
    assert found.labels == {(Q, "d1"): 3, (Q, "d3"): 0, (Q, "d4"): 3}
    assert (found.agreed, found.deferred, found.deferred_judged) == (1, 3, 2)
    assert found.pending == [(Q, "d2")]
    with pytest.raises(ValueError, match="people gave item"):
        defer_to_people(LABELS, {(Q, "d1"): 9}, SCALE)


def _simulated(seed: int) -> tuple[dict[str, dict[tuple[str, str], int]], dict[str, int]]:
    """300 items on 0, 1, 2 with true grades drawn 50/30/20%; judges: 'good' right 80% of the
    time, 'fair' 70% (else another grade at random), 'shifted' says (truth + 1) mod 3 90% of
    the time (adversarial but consistent), 'random' draws a grade uniformly."""
    rng = np.random.default_rng(seed)
    scale = [0, 1, 2]
    truth = rng.choice(scale, 300, p=[0.5, 0.3, 0.2])
    keys = [(Q, f"d{i}") for i in range(300)]

    def noisy(right: float) -> list[int]:
        return [
            int(t) if rng.random() < right else int(rng.choice([g for g in scale if g != t]))
            for t in truth
        ]

    shifted = [int((t + 1) % 3) if rng.random() < 0.9 else int(rng.choice(scale)) for t in truth]
    labels = {
        "good": dict(zip(keys, noisy(0.8), strict=True)),
        "fair": dict(zip(keys, noisy(0.7), strict=True)),
        "shifted": dict(zip(keys, shifted, strict=True)),
        "random": dict(zip(keys, map(int, rng.choice(scale, 300)), strict=True)),
    }
    return labels, {key[1]: int(t) for key, t in zip(keys, truth, strict=True)}


def test_dawid_skene_recovers_the_truth_where_the_majority_fails() -> None:
    labels, truth = _simulated(seed=7)

    def accuracy(found: dict[tuple[str, str], int]) -> float:
        return float(np.mean([found[(Q, d)] == t for d, t in truth.items()]))

    voted = majority(labels, [0, 1, 2])
    found = dawid_skene(labels, [0, 1, 2], max_iter=500)
    assert found.converged and found.iterations < 500
    # the shifted judge and the random one drag the majority down; Dawid & Skene learn that
    # the shifted judge's 1 means 0, its 2 means 1 and its 0 means 2
    assert accuracy(voted.labels) < 0.75
    assert accuracy(found.labels) > 0.9
    outvoted = [d for d, t in truth.items() if voted.labels[(Q, d)] != t]
    assert len(outvoted) > 75
    assert np.mean([found.labels[(Q, d)] == truth[d] for d in outvoted]) > 0.75
    shifted = np.array(found.confusions["shifted"])
    assert [shifted[t].argmax() for t in range(3)] == [1, 2, 0]
    assert shifted[np.arange(3), [1, 2, 0]].min() > 0.8
    # the random judge's rows are near a third everywhere
    assert np.abs(np.array(found.confusions["random"]) - 1 / 3).max() < 0.15
    assert sum(found.priors.values()) == pytest.approx(1.0)
    assert found.priors[0] == pytest.approx(0.5, abs=0.07)
    for posterior in found.posteriors.values():
        assert sum(posterior.values()) == pytest.approx(1.0)


def test_dawid_skene_matches_the_majority_of_perfect_judges() -> None:
    _, truth = _simulated(seed=2)
    perfect = {judge: {(Q, d): t for d, t in truth.items()} for judge in ("x", "y", "z")}
    found = dawid_skene(perfect, [0, 1, 2])
    assert found.labels == majority(perfect, [0, 1, 2]).labels
    assert found.labels == {(Q, d): t for d, t in truth.items()}
    assert found.converged
    assert min(max(p.values()) for p in found.posteriors.values()) > 0.999


def test_dawid_skene_breaks_a_tie_toward_the_lower_grade() -> None:
    # one item, two judges, 0 and 1: by symmetry both grades have posterior 1/2
    found = dawid_skene({"a": {(Q, "d"): 0}, "b": {(Q, "d"): 1}}, [0, 1])
    assert found.posteriors[(Q, "d")] == {0: pytest.approx(0.5), 1: pytest.approx(0.5)}
    assert found.labels == {(Q, "d"): 0}
    assert dawid_skene({}, [0, 1]).labels == {}
