"""Label agreement for the meta-evaluation of judges (issue 35): kappas and Krippendorff's alpha
worked by hand and checked against the ``krippendorff`` package, bootstrap intervals over topics,
and degenerate inputs reported as undefined with their reason, never 0.0."""

from __future__ import annotations

import json

import krippendorff
import numpy as np
import pytest

from metrics.judges.meta import Undefined
from metrics.judges.meta_labels import AlphaMetric, krippendorff_alpha, label_meta

SCALE = [0, 1, 2]

# Ten items on the scale 0, 1, 2; rows people, columns the judge:
#
#            judge 0  1  2     rows
#   people 0       3  1  0      4
#          1       1  2  1      4
#          2       0  0  2      2
#   columns        4  3  3     10
#
# Cohen's kappa: p_o = 7/10, p_e = .4*.4 + .4*.3 + .2*.3 = .34, kappa = .36/.66 = 6/11.
# Linear weights |i - j| / 2: observed disagreement 3 * .5 / 10 = .15; expected
# .5 * (.4*.3 + .4*.4 + .4*.3 + .2*.3) + 1 * (.4*.3 + .2*.4) = .23 + .20 = .43;
# kappa = 1 - .15/.43 = 28/43.
# Quadratic weights (i - j)^2 / 4: observed 3 * .25 / 10 = .075; expected .25 * .46 + .20 = .315;
# kappa = 1 - .075/.315 = 16/21.
# Binary at threshold 1 (relevant = 1 or 2): [[3, 1], [1, 5]]: p_o = .8,
# p_e = .4*.4 + .6*.6 = .52, kappa = .28/.48 = 7/12.
# Krippendorff: coincidences o = C + C^T = [[6, 2, 0], [2, 4, 1], [0, 1, 4]], margins
# n_c = 8, 7, 5, n = 20.
#   nominal: sum of o off the diagonal 6; sum_{c != k} n_c n_k = 400 - (64 + 49 + 25) = 262;
#     alpha = 1 - 19 * 6 / 262 = 74/131.
#   interval (values 0, 1, 2): observed 6 * 1; expected 2 * (8*7*1 + 7*5*1 + 8*5*4) = 502;
#     alpha = 1 - 19 * 6 / 502 = 194/251.
#   ordinal: d2(0,1) = (8 + 7 - 7.5)^2 = 56.25, d2(1,2) = (7 + 5 - 6)^2 = 36,
#     d2(0,2) = (8 + 7 + 5 - 6.5)^2 = 182.25; observed 4 * 56.25 + 2 * 36 = 297;
#     expected 2 * (8*7*56.25 + 7*5*36 + 8*5*182.25) = 23400; alpha = 1 - 19 * 297 / 23400.
CELLS = [(0, 0)] * 3 + [(0, 1), (1, 0)] + [(1, 1)] * 2 + [(1, 2)] + [(2, 2)] * 2
KAPPA, LINEAR, QUADRATIC, BINARY = 6 / 11, 28 / 43, 16 / 21, 7 / 12
ALPHA = {"nominal": 74 / 131, "interval": 194 / 251, "ordinal": 1 - 19 * 297 / 23400}

# the first five items on topic q1, the other five on q2
HUMAN = {("q1" if i < 5 else "q2", f"d{i}"): h for i, (h, _) in enumerate(CELLS)}
JUDGE = {("q1" if i < 5 else "q2", f"d{i}"): j for i, (_, j) in enumerate(CELLS)}


@pytest.mark.parametrize("metric", ["nominal", "ordinal", "interval"])
def test_krippendorff_alpha_by_hand(metric: AlphaMetric) -> None:
    assert krippendorff_alpha(CELLS, SCALE, metric) == pytest.approx(ALPHA[metric])


def test_krippendorff_alpha_of_the_textbook_example() -> None:
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability", section A: binary
    # data, two observers, no missing data, ten units; alpha = 0.095
    mary = [0, 1, 0, 0, 0, 0, 0, 0, 1, 0]
    jon = [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]
    found = krippendorff_alpha(zip(mary, jon, strict=True), [0, 1], "nominal")
    # o_01 = o_10 = 4, n_0 = 14, n_1 = 6: 1 - 19 * 4 / (14 * 6)
    assert found == pytest.approx(1 - 19 * 4 / 84)
    assert round(found, 3) == 0.095  # type: ignore[arg-type]


@pytest.mark.parametrize("metric", ["nominal", "ordinal", "interval"])
def test_krippendorff_alpha_agrees_with_the_krippendorff_package(metric: AlphaMetric) -> None:
    rng = np.random.default_rng(11)
    for _ in range(40):
        scale = sorted(rng.choice(10, int(rng.integers(2, 6)), replace=False).tolist())
        n = int(rng.integers(2, 40))
        a = rng.choice(scale, n)
        b = np.where(rng.random(n) < 0.6, a, rng.choice(scale, n))
        found = krippendorff_alpha(zip(a.tolist(), b.tolist(), strict=True), scale, metric)
        if isinstance(found, Undefined):
            assert len(set(a) | set(b)) == 1
            continue
        peer = krippendorff.alpha(
            reliability_data=np.array([a, b]), level_of_measurement=metric, value_domain=scale
        )
        assert found == pytest.approx(peer, abs=1e-9)


def test_krippendorff_alpha_undefined_and_refused() -> None:
    assert krippendorff_alpha([], SCALE) == Undefined(
        "no item is judged by both people and the judge"
    )
    assert krippendorff_alpha([(0, 1)], SCALE) == Undefined(
        "1 item is judged by both: agreement needs at least 2"
    )
    assert krippendorff_alpha([(1, 1), (1, 1)], SCALE, "interval") == Undefined(
        "people and the judge gave every shared item one and the same grade"
    )
    with pytest.raises(ValueError, match="outside the scale"):
        krippendorff_alpha([(0, 3)], SCALE)
    with pytest.raises(ValueError, match="unknown metric"):
        krippendorff_alpha(CELLS, SCALE, "ratio")  # type: ignore[arg-type]


def test_label_meta_by_hand() -> None:
    human = HUMAN | {("q1", "only people"): 2}
    judge = JUDGE | {("q3", "only the judge"): 0}
    found = label_meta(human, judge, SCALE, threshold=1, resamples=200)
    assert (found.n, found.n_topics, found.human_only, found.judge_only) == (10, 2, 1, 1)
    assert found.confusion == [[3, 1, 0], [1, 2, 1], [0, 0, 2]]
    assert found.kappa.value == pytest.approx(KAPPA)
    assert found.kappa_linear.value == pytest.approx(LINEAR)
    assert found.kappa_quadratic.value == pytest.approx(QUADRATIC)
    assert found.binary_kappa.value == pytest.approx(BINARY)
    assert found.krippendorff_alpha.value == pytest.approx(ALPHA["ordinal"])
    q1, q2 = found.topics
    # q1: [[3, 1, 0], [1, 0, 0], [0, 0, 0]]: p_o = .6, p_e = .8*.8 + .2*.2 = .68,
    # kappa = -.08/.32; only grades 0 and 1 occur, so linear and quadratic weights agree with it
    assert (q1.topic, q1.n, q1.confusion) == ("q1", 5, [[3, 1, 0], [1, 0, 0], [0, 0, 0]])
    assert q1.kappa == pytest.approx(-0.25)
    assert q1.kappa_linear == pytest.approx(-0.25) and q1.kappa_quadratic == pytest.approx(-0.25)
    # q2: [[0, 0, 0], [0, 2, 1], [0, 0, 2]]: p_o = .8, p_e = .6*.4 + .4*.6 = .48,
    # kappa = .32/.52
    assert (q2.topic, q2.n) == ("q2", 5)
    assert q2.kappa == pytest.approx(8 / 13)
    out = found.to_dict()
    json.dumps(out, allow_nan=False)
    assert out["kappa"]["value"] == pytest.approx(KAPPA) and out["kappa"]["undefined"] is None
    assert out["kappa"]["resamples"] == 200 and out["kappa"]["level"] == 0.95
    assert out["topics"][0]["kappa"] == {"value": pytest.approx(-0.25), "undefined": None}
    assert set(out) >= {"n", "confusion", "human_only", "judge_only", "krippendorff_alpha"}


def test_intervals_contain_the_value_on_a_reasonable_example() -> None:
    rng = np.random.default_rng(4)
    human: dict[tuple[str, str], int] = {}
    judge: dict[tuple[str, str], int] = {}
    for t in range(30):
        for d in range(20):
            grade = int(rng.choice(SCALE, p=[0.6, 0.25, 0.15]))
            key = (f"q{t}", f"d{d}")
            human[key] = grade
            judge[key] = grade if rng.random() < 0.7 else int(rng.choice(SCALE))
    found = label_meta(human, judge, SCALE, threshold=1, resamples=500, seed=1)
    for figure in (
        found.kappa,
        found.binary_kappa,
        found.kappa_linear,
        found.kappa_quadratic,
        found.krippendorff_alpha,
    ):
        assert figure.defined == figure.resamples == 500
        assert figure.low is not None and figure.high is not None
        assert figure.low < figure.value < figure.high  # type: ignore[operator]
        assert figure.high - figure.low < 0.2


def test_a_perfect_judge_has_a_point_interval() -> None:
    found = label_meta(HUMAN, HUMAN, SCALE, threshold=1, resamples=100)
    for figure in (found.kappa, found.kappa_quadratic, found.krippendorff_alpha):
        assert (figure.value, figure.low, figure.high) == (1.0, 1.0, 1.0)


def test_no_interval_when_too_few_resamples_are_defined() -> None:
    # ten topics; on q0 people grade two items 1, the judge one of them 1 and one 0; on every
    # other topic both grade the only item 0. A resample without q0 (probability 0.9^10 = 0.35)
    # has one grade throughout: kappa undefined there.
    human = {("q0", "a"): 1, ("q0", "b"): 1} | {(f"q{t}", "a"): 0 for t in range(1, 10)}
    judge = {("q0", "a"): 1, ("q0", "b"): 0} | {(f"q{t}", "a"): 0 for t in range(1, 10)}
    found = label_meta(human, judge, SCALE, threshold=1, resamples=400)
    assert isinstance(found.kappa.value, float)
    assert found.kappa.low is None and found.kappa.high is None
    assert 0.55 * 400 < found.kappa.defined < 0.75 * 400
    assert (
        found.kappa.no_interval is not None and "an interval needs 90%" in found.kappa.no_interval
    )
    found = label_meta(human, judge, SCALE, threshold=1, resamples=400, min_defined=0.5)
    assert found.kappa.low is not None


def test_degenerate_inputs_are_undefined_with_their_reason() -> None:
    found = label_meta({("q1", "a"): 1}, {("q1", "b"): 1}, SCALE, threshold=1)
    assert found.n == 0 and found.topics == [] and found.kappa.resamples == 0
    nothing = Undefined("no item is judged by both people and the judge")
    assert found.kappa.value == nothing and found.krippendorff_alpha.value == nothing
    assert found.to_dict()["kappa"] == {
        "value": None,
        "undefined": "no item is judged by both people and the judge",
        "low": None,
        "high": None,
        "resamples": 0,
        "defined": 0,
        "level": 0.95,
        "no_interval": None,  # the value is undefined: its reason says why
    }
    found = label_meta({("q1", "a"): 1}, {("q1", "a"): 1}, SCALE, threshold=1)
    assert found.kappa_linear.value == Undefined(
        "1 item is judged by both: agreement needs at least 2"
    )
    same = {("q1", "a"): 2, ("q2", "b"): 2}
    found = label_meta(same, same, SCALE, threshold=1, resamples=50)
    grade = Undefined("people and the judge gave every shared item one and the same grade")
    assert found.kappa.value == grade and found.krippendorff_alpha.value == grade
    assert found.kappa.low is None and found.kappa.defined == 0
    assert found.topics[0].kappa == Undefined(
        "1 item is judged by both: agreement needs at least 2"
    )
    # grades 1 and 2 swapped: kappa on the grades is -1 (p_o = 0, p_e = .5), but both sides
    # call every item relevant at threshold 1, so binary kappa is undefined, not 0.0
    found = label_meta(
        {("q1", "a"): 1, ("q1", "b"): 2}, {("q1", "a"): 2, ("q1", "b"): 1}, SCALE, threshold=1
    )
    assert found.kappa.value == pytest.approx(-1.0)
    assert found.binary_kappa.value == Undefined(
        "people and the judge gave every shared item one and the same relevance label at "
        "threshold 1"
    )


def test_a_grade_outside_the_scale_is_refused() -> None:
    with pytest.raises(ValueError, match="not in the scale"):
        label_meta({("q1", "a"): 5}, {("q1", "a"): 1}, SCALE, threshold=1)
