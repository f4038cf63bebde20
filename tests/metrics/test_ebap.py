"""ebAP (``metrics.measures.ebap``): hand-worked on a two-topic, two-stratum sample, and the
registry, the evaluator and the CLI carrying it with its interval."""

from __future__ import annotations

import math

import numpy as np
import pytest

from metrics import read_run
from metrics.evaluation.sampled import EBMAP_CI, evaluate_sampled
from metrics.io.sampled import read_sampled_qrels
from metrics.measures.ebap import eb_counts, ebap
from metrics.measures.sampled_registry import SAMPLED_MEASURES, inferred_set, parse_sampled

# topic 1: stratum 1 judged in full (a relevant, b not); stratum 2: c relevant, f not, d and e
# pooled but not sampled. Topic 2: g relevant (stratum 1); h not sampled, i not relevant.
QRELS = (
    b"1 0 a 1 1\n1 0 b 1 0\n1 0 c 2 1\n1 0 d 2 -1\n1 0 e 2 -1\n1 0 f 2 0\n"
    b"2 0 g 1 1\n2 0 h 2 -1\n2 0 i 2 0\n"
)
RUN = b"1 Q0 a 1 9 r\n1 Q0 c 2 8 r\n1 Q0 d 3 7 r\n2 Q0 h 1 9 r\n2 Q0 g 2 8 r\n"


def test_ebap_by_hand() -> None:
    # rates over topics: stratum 1 2/3, stratum 2 1/3; each topic found as many relevant
    # documents as those rates expect (phi = 1), so its prior mean is the stratum's rate.
    # Topic 1, stratum 2: a = 1 + 2/3, b = 1 + 4/3, 2 unseen: R~ = 1 + 1 + 2 * 5/12 = 17/6;
    # statAP = 1 with R^ = 3 (c weighs 2): ebAP = 3 / (17/6) = 18/17, capped at 1.
    # Topic 2, stratum 2: a = 2/3, b = 1 + 4/3, 1 unseen: R~ = 1 + 2/9 = 11/9; statAP = 1/2
    # (g at rank 2 below an unsampled h) with R^ = 1: ebAP = (1/2) / (11/9) = 9/22.
    got = ebap(read_sampled_qrels(QRELS), read_run(RUN))
    assert got.per_topic == pytest.approx({"1": 1.0, "2": 9 / 22})
    # topic 2's variance: statAP's design variance is 0 (g is certain), so only the unseen
    # count's: Var(U) = 1 a b (a + b + 1) / ((a + b)^2 (a + b + 1)) = (2/3)(7/3) / 9
    var_u = (2 / 3) * (7 / 3) / 9
    assert got.variance["2"] == pytest.approx((9 / 22 / (11 / 9)) ** 2 * var_u)
    assert got.mean == pytest.approx((1 + 9 / 22) / 2)
    half = 1.959963984540054 * math.sqrt(sum(got.variance.values())) / 2
    assert got.mean + half > 1.0  # clipped to AP's range
    assert got.interval == pytest.approx((got.mean - half, 1.0))


def test_eb_counts_take_a_stratum_judged_in_full_as_it_is() -> None:
    k = np.array([[3.0, 0.0]])
    n = np.array([[10.0, 0.0]])
    big_n = np.array([[10.0, 0.0]])
    r, v = eb_counts(k, n, big_n)
    assert r[0] == 3.0 and v[0] == 0.0


def test_ebap_in_the_registry_the_evaluator_and_the_board_set() -> None:
    assert parse_sampled("ebMAP") == [SAMPLED_MEASURES["ebAP"]]
    assert parse_sampled("ebap") == [SAMPLED_MEASURES["ebAP"]]
    res = evaluate_sampled(
        read_sampled_qrels(QRELS), read_run(RUN), [SAMPLED_MEASURES["ebAP"]], ci=None
    )
    agg = res.aggregates["ebAP"]
    assert agg.ci_method == EBMAP_CI and agg.ci_low is not None and agg.ci_high is not None
    assert agg.ci_low < agg.value < agg.ci_high
    assert res.per_query["ebAP"]["2"] == pytest.approx(9 / 22)
    from metrics.measures.names import parse_measures

    names = [m.name for m in inferred_set(parse_measures(["AP"]))]
    assert names[:4] == ["xinfAP", "statAP", "ebAP", "infNDCG"]
