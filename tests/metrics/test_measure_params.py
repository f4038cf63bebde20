"""A relevance level per measure (``P(rel=2)@10``, ``AP(rel=2)``, ``RR(rel=2)``) beside measures at
the evaluator's level, checked against pytrec_eval run at that level; and the parameter
syntax's errors."""

from __future__ import annotations

import pytest
import pytrec_eval
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metrics import Evaluator
from metrics.measures.names import Measure, UnknownMeasureError, parse_measure

DOCS = st.sampled_from([f"d{i}" for i in range(12)])
qrels_st = st.dictionaries(
    st.sampled_from(["q1", "q2", "q3"]),
    st.dictionaries(DOCS, st.integers(-1, 3), min_size=1),
    min_size=1,
)
run_st = st.dictionaries(
    st.sampled_from(["q1", "q2", "q3"]),
    st.dictionaries(DOCS, st.integers(0, 5).map(float), min_size=1),
    min_size=1,
)
AT_2 = {
    "P(rel=2)@5": "P_5",
    "AP(rel=2)": "map",
    "RR(rel=2)": "recip_rank",
    "R(rel=2)@5": "recall_5",
}
AT_1 = {"P@5": "P_5", "AP": "map", "RR": "recip_rank", "R@5": "recall_5"}


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(qrels=qrels_st, run=run_st)
def test_a_measure_s_own_level_equals_pytrec_eval_at_that_level(
    qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]
) -> None:
    res = Evaluator(qrels, [*AT_1, *AT_2], compat="trec_eval", ci=None).evaluate(run)
    for level, names in ((1, AT_1), (2, AT_2)):
        ref = pytrec_eval.RelevanceEvaluator(qrels, set(names.values()), relevance_level=level)
        for qid, values in ref.evaluate(run).items():
            for ours, trec in names.items():
                got = res.per_query[parse_measure(ours).name][qid]
                assert abs(got - values[trec]) <= 1e-12, (ours, qid)


def test_honest_mode_treats_a_measure_at_its_own_level() -> None:
    qrels = {"q": {"a": 2, "b": 1, "c": 0}}
    run = {"q": {"a": 3.0, "x": 2.0, "b": 1.0}}  # x unjudged
    res = Evaluator(qrels, ["P(rel=2)@3", "P@3"], ci=None).evaluate(run)
    at2 = res.treatments["P(rel=2)@3"]
    assert at2["lower"].value == pytest.approx(1 / 3)  # a
    assert at2["upper"].value == pytest.approx(2 / 3)  # a, and x as relevant
    assert res.treatments["P@3"]["lower"].value == pytest.approx(2 / 3)  # a, b


def test_parameters_are_canonical_and_errors_name_the_problem() -> None:
    assert parse_measure("p(rel=2)@10") == Measure("P", 10, (("rel", 2),))
    # rel=1 is kept: it holds whatever the evaluator's level (P@10 follows the evaluator's)
    assert parse_measure("P(rel=1)@10") != Measure("P", 10)
    assert parse_measure("SetF(beta=1)") == Measure("SetF")  # a family default is dropped
    assert parse_measure("P(rel=2)@10").name == "P(rel=2)@10"
    assert parse_measure("nDCG(dcg='exp-log2')@10").name == "nDCG(dcg='exp-log2')@10"
    for text, why in [
        ("P(rel=0)@10", "rel='0' must be an integer >= 1"),
        ("P(bogus=1)@10", "P has no parameter 'bogus'"),
        ("nDCG(rel=2)@10", "does not depend on the relevance level"),
        ("P(rel)@10", "is not name=value"),
    ]:
        with pytest.raises(UnknownMeasureError, match=why.replace("(", r"\(")):
            parse_measure(text)
