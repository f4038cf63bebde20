"""Property: in trec_eval mode every per-query value equals pytrec_eval's, for random inputs.

Scores are multiples of 1/8 below 64, exactly representable in single precision, so trec_eval 9
(pytrec_eval stores scores as C float) and trec_eval 10 (double) order the documents the same
way; ties are frequent, so the docid tie-break is exercised too.
"""

from __future__ import annotations

import pytest
import pytrec_eval
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metrics import Evaluator

CUTS = (1, 3, 5, 10)
TREC = {
    **{f"P_{k}": f"P@{k}" for k in CUTS},
    **{f"recall_{k}": f"R@{k}" for k in CUTS},
    **{f"ndcg_cut_{k}": f"nDCG@{k}" for k in CUTS},
    **{f"map_cut_{k}": f"AP@{k}" for k in CUTS},
    **{f"success_{k}": f"Success@{k}" for k in CUTS},
    "ndcg": "nDCG",
    "ndcg_rel": "nDCGRel",
    "Rndcg": "RnDCG",
    "G": "G",
    "binG": "binG",
    "map": "AP",
    "recip_rank": "RR",
    "Rprec": "Rprec",
    "bpref": "Bpref",
    "infAP": "infAP",
    "num_rel": "NumRel",
    "num_ret": "NumRet",
    "num_rel_ret": "NumRelRet",
}

DOCS = st.sampled_from(["1", "2", "9", "10", "100", "A", "Z", "a", "z", "d-1", "d-2", "doc_07"])
QIDS = st.sampled_from(["1", "2", "3", "10"])
SCORES = st.integers(min_value=-16, max_value=511).map(lambda i: i / 8)
GRADES = st.integers(min_value=-2, max_value=3)

# trec_eval's nDCG ideal-gain loop never ends for a query whose judgments are all negative (no
# relevance level >= 0 exists), so every generated query keeps at least one grade >= 0.
judgments_st = st.dictionaries(DOCS, GRADES, min_size=1).filter(
    lambda d: any(g >= 0 for g in d.values())
)
qrels_st = st.dictionaries(QIDS, judgments_st, min_size=1)
run_st = st.dictionaries(QIDS, st.dictionaries(DOCS, SCORES, min_size=1))


@pytest.mark.parametrize("level", [1, 2])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(qrels=qrels_st, run=run_st)
def test_every_per_query_value_equals_pytrec_eval(
    level: int, qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]
) -> None:
    ref = pytrec_eval.RelevanceEvaluator(qrels, set(TREC), relevance_level=level).evaluate(run)
    res = Evaluator(
        qrels, list(TREC.values()), compat="trec_eval", relevance_level=level, ci=None
    ).evaluate(run)
    assert sorted(res.queries) == sorted(ref)
    for qid, values in ref.items():
        for trec, ours in TREC.items():
            assert abs(res.per_query[ours][qid] - values[trec]) <= 1e-9, (qid, trec)
