"""The fast paths of Evaluator.evaluate: the docid index (a per-query hash table, and its exact
fallback when hashes collide), the stretches of run rows, and the measures computed on the
relevant rows only.

Each path is forced by giving the docid index weak hashes or probe positions, and its results are
checked against pytrec_eval and against the normal path, bit for bit.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import pytrec_eval
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metrics import Evaluator, Qrels, Run, _docindex
from metrics._docindex import docid_hashes
from metrics.measures.basic import INFAP_EPSILON
from metrics.measures.names import parse_measures
from metrics.measures.ranked import Ideal, Ranked
from metrics.measures.registry import compute

TREC = {
    "P_5": "P@5",
    "recall_10": "R@10",
    "ndcg_cut_5": "nDCG@5",
    "ndcg": "nDCG",
    "map": "AP",
    "recip_rank": "RR",
    "Rprec": "Rprec",
    "bpref": "Bpref",
    "infAP": "infAP",
    "num_rel_ret": "NumRelRet",
}


def _results(ev: Evaluator, run: Any) -> dict[str, Any]:
    out: dict[str, Any] = ev.evaluate(run).to_dict()
    return out


def _assert_matches_pytrec(
    qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]], ev: Evaluator
) -> None:
    ref = pytrec_eval.RelevanceEvaluator(qrels, set(TREC)).evaluate(run)
    res = ev.evaluate(run)
    assert sorted(res.queries) == sorted(ref)
    for qid, values in ref.items():
        for trec, ours in TREC.items():
            assert res.per_query[ours][qid] == pytest.approx(values[trec], abs=1e-12), (qid, trec)


def _trec(qrels: dict[str, dict[str, int]]) -> Evaluator:
    return Evaluator(qrels, list(TREC.values()), compat="trec_eval", ci=None)


def _weak_hash(col: np.ndarray) -> np.ndarray:
    """A hash with many collisions: the docid's length (so "ab" and "cd" collide)."""
    return np.char.str_len(col).astype(np.uint64) + np.uint64(1)


QRELS = {
    "q1": {"ab": 2, "cd": 0, "e": 1, "fgh": -1, "ij": 1},
    "q2": {"ab": 0, "xy": 3, "zzzz": 1},
}
RUN = {
    "q1": {"cd": 3.0, "ab": 2.5, "zz": 2.0, "ij": 1.5, "fgh": 1.0, "e": 0.5, "kl": 0.25},
    "q2": {"xy": 1.0, "zzzz": 0.9, "ab": 0.8, "cd": 0.7},
}


# -- the exact fallback ------------------------------------------------------------------------


def test_docids_sharing_a_hash_inside_one_query_use_the_exact_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fast = _results(_trec(QRELS), RUN)
    monkeypatch.setattr(_docindex, "docid_hashes", _weak_hash)
    ev = _trec(QRELS)  # "ab", "cd" and "ij" of q1 share a hash: no table, a binary search
    _assert_matches_pytrec(QRELS, RUN, ev)
    assert _results(ev, RUN) == fast


def test_a_docid_whose_hash_marks_a_free_slot_uses_the_exact_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    qrels = {"q1": {"a": 1, "bb": 0}, "q2": {"ccc": 1}}
    run = {"q1": {"bb": 2.0, "a": 1.0, "dd": 0.5}, "q2": {"a": 1.0, "ccc": 0.5}}
    fast = _results(_trec(qrels), run)
    # a distinct hash per docid, with "a" hashing to the free-slot marker
    monkeypatch.setattr(
        _docindex, "docid_hashes", lambda col: np.char.str_len(col).astype(np.uint64) - 1
    )
    ev = _trec(qrels)
    _assert_matches_pytrec(qrels, run, ev)
    assert _results(ev, run) == fast


def test_a_run_docid_sharing_a_hash_with_a_judged_one_is_not_judged() -> None:
    # The run's hashes are its own: "zz" given the hash of the judged "ab" must still miss.
    run = Run.from_dict(RUN)
    hashes = docid_hashes(run.docids)
    hashes[run.docids == b"zz"] = hashes[run.docids == b"ab"][0]
    run.__dict__["hashes"] = hashes
    assert _results(_trec(QRELS), run) == _results(_trec(QRELS), RUN)


# -- the hash table ----------------------------------------------------------------------------


def _last_home_slot(keys: np.ndarray, shift: np.ndarray) -> np.ndarray:
    top = np.full(keys.size, np.iinfo(np.uint64).max, dtype=np.uint64)
    out: np.ndarray = (top >> shift).view(np.int64)
    return out


@pytest.mark.parametrize(
    "home",
    [
        lambda keys, shift: np.zeros(keys.size, dtype=np.int64),
        _last_home_slot,  # the chain then runs through the slots past the home range
    ],
    ids=["first-slot", "last-home-slot"],
)
def test_judgments_that_all_share_one_probe_chain_are_all_found(
    monkeypatch: pytest.MonkeyPatch, home: Any
) -> None:
    qrels = {
        "q1": {f"d{i}": i % 4 - 1 for i in range(40)},
        "q2": {"d3": 2, "x": 1},
        "q3": {"only": 1},
    }
    run = {
        "q1": {f"d{i}": float(i % 7) for i in range(0, 60, 2)},
        "q2": {"x": 1.0, "d3": 2.0, "d4": 3.0},
        "q3": {"nope": 1.0, "only": 0.5},
    }
    fast = _results(_trec(qrels), run)
    monkeypatch.setattr(_docindex, "_home", home)
    ev = _trec(qrels)
    _assert_matches_pytrec(qrels, run, ev)
    assert _results(ev, run) == fast


def test_docids_of_different_byte_widths_are_found() -> None:
    docs = ["a", "bb", "1234567", "12345678", "123456789", "x" * 16, "x" * 17, "é", "日本語"]
    qrels = {"q1": {d: i % 3 for i, d in enumerate(docs)}, "q2": {"12345678": 1}}
    run = {
        # prefixes and extensions of judged docids must not match them
        "q1": {d: float(i) for i, d in enumerate([*docs, "1234567890", "x" * 15, "日本"])},
        "q2": {"1234567": 2.0, "12345678": 1.0, "123456789": 0.5},
    }
    ev = _trec(qrels)
    _assert_matches_pytrec(qrels, run, ev)
    # the same run with its docids stored wider, and the qrels' narrower than the run's
    r = Run.from_dict(run)
    wide = Run(r.qids, r.offsets, r.docids.astype("S40"), r.scores)
    assert wide.docids.dtype.itemsize != Qrels.from_dict(qrels).docids.dtype.itemsize
    assert _results(ev, wide) == _results(ev, r)


def test_queries_without_judgments_and_empty_qrels() -> None:
    qrels = {"q1": {}, "q2": {"a": 1, "b": 0}, "q3": {}}
    run = {"q1": {"a": 1.0}, "q2": {"b": 2.0, "a": 1.0}, "q3": {"c": 1.0}}
    res = _trec(qrels).evaluate(run)
    assert res.per_query["AP"] == {"q1": 0.0, "q2": 0.5, "q3": 0.0}
    assert res.per_query["NumRelRet"] == {"q1": 0.0, "q2": 1.0, "q3": 0.0}
    honest = Evaluator(qrels, ["P@5", "AP"], ci=None).evaluate(run)
    assert honest.queries == ["q2"]
    assert {e.qid for e in honest.excluded} == {"q1", "q3"}
    nothing = Evaluator({"q1": {}}, ["P@5", "NumRet"], compat="trec_eval", ci=None)
    assert nothing.evaluate({"q1": {"a": 1.0, "b": 0.5}}).per_query["NumRet"] == {"q1": 2.0}
    assert nothing.evaluate({"q2": {"a": 1.0}}).queries == []


def test_run_queries_in_another_order_with_queries_outside_the_qrels() -> None:
    # different ideal rankings per query: a shared Evaluator must not reuse another query set's
    qrels = {str(i): {"a": 1, "b": i % 3, "c": 0, f"d{i}": i} for i in range(1, 6)}
    run_a = {
        "5": {"a": 1.0, "b": 2.0},
        "x": {"a": 1.0},
        "2": {"c": 3.0, "a": 1.0},
        "3": {"b": 1.0, "z": 2.0},
        "y": {"b": 1.0},
        "1": {"a": 0.5},
    }
    run_b = {"1": {"b": 1.0}, "2": {"a": 1.0}, "3": {"c": 1.0}, "4": {"a": 1.0, "b": 2.0}}
    ev = _trec(qrels)
    for run in (run_a, run_b, run_a, run_b):  # a shared Evaluator, answering different queries
        _assert_matches_pytrec(qrels, run, ev)
        assert _results(ev, run) == _results(_trec(qrels), run)
    res = ev.evaluate(run_a)
    assert [e.qid for e in res.excluded if e.reason.startswith("no judgments")] == ["x", "y"]
    complete = Evaluator(qrels, ["AP"], compat="trec_eval", complete=True, ci=None)
    assert complete.evaluate(run_a).per_query["AP"]["4"] == 0.0


DOCS = st.text(alphabet="ab1é", min_size=1, max_size=10)
QIDS = st.sampled_from(["1", "2", "3", "10", "11"])
qrels_st = st.dictionaries(QIDS, st.dictionaries(DOCS, st.integers(-1, 3), max_size=12))
run_st = st.dictionaries(
    QIDS, st.dictionaries(DOCS, st.integers(0, 40).map(lambda i: i / 4), max_size=15)
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(qrels=qrels_st, run=run_st)
def test_hash_table_and_exact_search_give_identical_results(
    qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]
) -> None:
    measures = [*TREC.values(), "Success@3", "AP@3", "RR@2", "Judged@5", "ceiling@3"]
    for compat in ("trec_eval", None):
        fast = Evaluator(qrels, measures, compat=compat, ci=None)
        with pytest.MonkeyPatch.context() as mp:
            # every qrels docid hashing to the free-slot marker: no table, the exact search
            mp.setattr(_docindex, "docid_hashes", lambda col: np.zeros(col.size, dtype=np.uint64))
            exact = Evaluator(qrels, measures, compat=compat, ci=None)
        assert _results(fast, run) == _results(exact, run)


# -- measures on the relevant rows: bit for bit what the per-row formulas give -----------------


def _dense(r: Ranked, family: str, k: int | None) -> np.ndarray:
    """The measure computed over every row (the formulas before the relevant-rows forms)."""
    seg, pos = r.seg, r.pos
    rel = r.judged & (r.grade >= r.level)
    top = np.ones(rel.size, dtype=bool) if k is None else pos <= k

    def seg_cumsum(x: np.ndarray) -> np.ndarray:
        c = np.cumsum(x, dtype=np.float64)
        out: np.ndarray = c - np.concatenate(([0.0], c))[r.offsets[:-1]][seg]
        return out

    def per_query(mask: np.ndarray, w: np.ndarray | None = None) -> np.ndarray:
        sel = np.flatnonzero(mask)
        return np.bincount(seg[sel], None if w is None else w[sel], r.nq).astype(np.float64)

    def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
        out = np.zeros(num.size)
        np.divide(num, den, out=out, where=den > 0)
        return out

    big_r = r.num_rel.astype(np.float64)
    crel = seg_cumsum(rel)
    nonrel = r.judged & (r.grade < r.level)
    nb = seg_cumsum(nonrel)
    if family == "P":
        assert k is not None
        return ratio(per_query(rel & top), np.full(r.nq, float(k)))
    if family == "RR":
        return per_query(rel & (crel == 1) & top, 1.0 / pos)
    if family == "AP":
        return ratio(per_query(rel & top, crel / pos), big_r)
    if family == "Rprec":
        return ratio(per_query(rel & (pos <= r.num_rel[seg])), big_r)
    if family == "nDCG":
        gain = np.where(r.judged & (r.grade > 0), r.grade, 0).astype(np.float64)
        return ratio(per_query(top & (gain > 0), gain / np.log2(pos + 1.0)), r.ideal.idcg(k))
    if family == "Bpref":
        den = np.minimum(r.num_nonrel[seg], r.num_rel[seg]).astype(np.float64)
        term = np.ones(nb.size)
        some = rel & (nb > 0)
        term[some] = 1.0 - np.minimum(nb[some], big_r[seg][some]) / den[some]
        return ratio(per_query(rel, term), big_r)
    assert family == "infAP"
    ub = seg_cumsum(r.pooled & ~r.judged)
    rb = crel - 1.0
    j = (pos - 1).astype(np.float64)
    eps = INFAP_EPSILON
    term = 1.0 / (j + 1.0) + (j / (j + 1.0)) * ((rb + nb + ub) / np.maximum(j, 1.0)) * (
        (rb + eps) / (rb + nb + 2.0 * eps)
    )
    return ratio(per_query(rel, np.where(j == 0, 1.0, term)), big_r)


rows_st = st.lists(
    st.lists(st.sampled_from([None, -1, 0, 1, 2, 3]), max_size=30), min_size=1, max_size=6
)


@settings(max_examples=200, deadline=None)
@given(queries=rows_st, level=st.sampled_from([1, 2]), extra=st.integers(0, 5))
def test_relevant_row_measures_equal_the_per_row_formulas_bit_for_bit(
    queries: list[list[int | None]], level: int, extra: int
) -> None:
    grade = np.array([0 if g is None else g for q in queries for g in q], dtype=np.int64)
    pooled = np.array([g is not None for q in queries for g in q], dtype=bool)
    offsets = np.zeros(len(queries) + 1, dtype=np.int64)
    np.cumsum([len(q) for q in queries], out=offsets[1:])
    judged = pooled & (grade >= 0)
    seg = np.repeat(np.arange(len(queries)), np.diff(offsets))
    # R and the judged non-relevant count include documents that were not retrieved
    num_rel = np.bincount(seg[judged & (grade >= level)], minlength=len(queries)) + extra
    num_nonrel = np.bincount(seg[judged & (grade < level)], minlength=len(queries)) + extra
    ideal_grades = np.concatenate([grade[judged], np.full(extra * len(queries), level)])
    ideal_seg = np.concatenate([seg[judged], np.repeat(np.arange(len(queries)), extra)])
    order = np.argsort(ideal_seg, kind="stable")
    ioff = np.zeros(len(queries) + 1, dtype=np.int64)
    np.cumsum(np.bincount(ideal_seg, minlength=len(queries)), out=ioff[1:])
    r = Ranked(
        offsets=offsets,
        grade=grade,
        pooled=pooled,
        judged=judged,
        num_rel=num_rel.astype(np.int64),
        num_nonrel=num_nonrel.astype(np.int64),
        ideal=Ideal.from_grades(ideal_grades[order], ioff),
        level=level,
    )
    for name in ("P@3", "RR", "RR@2", "AP", "AP@4", "Rprec", "nDCG", "nDCG@3", "Bpref", "infAP"):
        m = parse_measures([name])[0]
        value = compute(m, r)[0]
        expected = _dense(r, m.family, None if m.cutoff is None else int(m.cutoff))
        assert value.tobytes() == expected.tobytes(), name
