"""Graded-gain measures (metrics/measures/gain.py): hand-worked values, and the reference tools.

References: pytrec_eval (trec_eval 9 code: ndcg_rel, Rndcg, G, binG; gain maps through mapped
qrels, as ir_measures does, since pytrec_eval cannot take ``ndcg.1=3``), ranx (``ndcg_burges``),
ir_measures' gdeval (nDCG exp-log2, ERR), trectools (graded RBP) and cwl_eval (RBP(rel=...))
providers, and, when the env var TREC_EVAL names a trec_eval 10.0 binary, that binary (gain maps,
rbp, rbp_resid).
"""

from __future__ import annotations

import io
import math
import os
import shutil
import subprocess
import tempfile
from math import log2
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import pytrec_eval
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metrics import Evaluator, evaluate
from metrics.measures.names import parse_measure
from tests.metrics.test_pytrec_eval_property import DOCS, qrels_st, run_st  # shared collections

# The example: q has a=2, b=1, c=0, d=1; the run ranks a, x (unjudged), b, c; d is not retrieved.
QRELS = {"q": {"a": 2, "b": 1, "c": 0, "d": 1}}
RUN = {"q": {"a": 5.0, "x": 4.0, "b": 3.0, "c": 2.0}}
IDCG3 = 2 + 1 / log2(3) + 1 / 2  # ideal [2, 1, 1]


def _one(name: str, qrels: dict[str, dict[str, int]] = QRELS, run: Any = RUN, **kw: Any) -> float:
    res = evaluate(qrels, run, [name], compat="trec_eval", ci=None, **kw)
    return float(res.per_query[parse_measure(name).name]["q"])


@pytest.mark.parametrize(
    ("name", "expect"),
    [
        # gain = grade: DCG = 2/log2(2) + 1/log2(4) = 2.5
        ("nDCG", 2.5 / IDCG3),
        # gains a=9, b=3, c=0: DCG = 9 + 3/2; ideal [9, 3, 3] (a, b and d)
        ("ndcg.1=3,2=9", (9 + 3 / 2) / (9 + 3 / log2(3) + 3 / 2)),
        ("nDCG(gains='1=3,2=9')", (9 + 3 / 2) / (9 + 3 / log2(3) + 3 / 2)),
        # at 2: DCG@2 = 9; IDCG@2 = 9 + 3/log2(3)
        ("nDCG(gains='1=3,2=9')@2", 9 / (9 + 3 / log2(3))),
        # level 0 gains 1, level 2 gains -1: DCG = -1 + 1/2 (b) + 1/log2(5) (c); the ideal is the
        # positive gains b, d, c = [1, 1, 1] (a's -1 is left out)
        ("ndcg.0=1,2=-1", (-1 + 1 / 2 + 1 / log2(5)) / (1 + 1 / log2(3) + 1 / 2)),
        # exp-log2: gains 2^2-1 = 3 (a), 1 (b); ideal [3, 1, 1]
        ("nDCG(dcg='exp-log2')", (3 + 1 / 2) / (3 + 1 / log2(3) + 1 / 2)),
        ("nDCG(dcg='exp-log2')@1", 3 / 3),
        ("nDCG(dcg='exp-log2')@3", (3 + 1 / 2) / (3 + 1 / log2(3) + 1 / 2)),
        # ndcg_rel: P = 3; at a (rank 1) DCG@1/IDCG@1 = 2/2, at b (rank 3) 2.5/IDCG@3, and d (not
        # retrieved) adds DCG/IDCG@3 = 2.5/IDCG3; / P
        ("ndcg_rel", (2 / 2 + 2.5 / IDCG3 + 2.5 / IDCG3) / 3),
        # gains 1=3, 2=9: rows a (9, rank 1), b (3, rank 3); ideal [9, 3, 3]
        (
            "ndcg_rel.1=3,2=9",
            (9 / 9 + 10.5 / (9 + 3 / log2(3) + 1.5) * 2) / 3,
        ),
        # Rndcg: ideal [2, 1, 1], P = 3, n = 4: gain changes after rank 1 and at P = 3:
        # (DCG@1/IDCG@1 + DCG@3/IDCG@3) / 2; n = P + 1 adds no final term
        ("Rndcg", (2 / 2 + 2.5 / IDCG3) / 2),
        # G: C_i = 2, 3, 4, 5 (max(ideal gain, 1) summed); a: 2/log2(2 + 2 - 2), b at 3 with
        # S_3 = 3: 1/log2(2 + 4 - 3); / the ideal gain 4
        ("G", (2 / log2(2) + 1 / log2(3)) / 4),
        # gains 1=3, 2=9: ideal [9, 3, 3], C = 9, 12, 15; a: 9/log2(2 + 9 - 9), b: S_3 = 12,
        # 3/log2(2 + 15 - 12); / 15
        ("G.1=3,2=9", (9 / log2(2) + 3 / log2(5)) / 15),
        # binG: a: 1/log2(2 + 0), b (one non-relevant row above): 1/log2(2 + 1); / R = 3
        ("binG", (1 + 1 / log2(3)) / 3),
        # ERR: R = (2^g - 1)/16: a 3/16 at rank 1, b 1/16 at rank 3 after (1 - 3/16)
        ("ERR", 3 / 16 + (1 / 16) / 3 * (1 - 3 / 16)),
        ("ERR@10", 3 / 16 + (1 / 16) / 3 * (1 - 3 / 16)),
        ("ERR@2", 3 / 16),
        ("ERR(max_grade=2)@10", 3 / 4 + (1 / 4) / 3 * (1 - 3 / 4)),
        # RBP as ir_measures: graded without rel= (gain = grade: a 2 at rank 1, b 1 at rank 3),
        # (1 - p)(2 p^0 + 1 p^2); binary with rel=: (1 - p)(p^0 + p^2) at 1, a alone at 2
        ("RBP", 0.2 * (2 + 0.8**2)),
        ("RBP(p=0.8)", 0.2 * (2 + 0.8**2)),
        ("RBP(p=0.5)@2", 0.5 * 2),
        ("RBP(rel=1)", 0.2 * (1 + 0.8**2)),
        ("RBP(p=0.8, rel=1)", 0.2 * (1 + 0.8**2)),
        ("RBP(p=0.5, rel=1)@2", 0.5 * 1),
        ("RBP(rel=2)", 0.2 * 1),
        # trec_eval rbp: p = 0.9; gains 0, 1, 2 go beyond 1, so / 2: a 1, b 0.5
        ("rbp", 0.1 * (1 + 0.5 * 0.9**2)),
        # p = 0.5, level 0 gains 2: gains 2, 1, 2 / 2: a 1, b 0.5, c 1
        ("rbp.p=0.5,0=2", 0.5 * (1 + 0.5 * 0.5**2 + 1 * 0.5**3)),
        # rbp_resid: p^4 + (1 - p) p^1 (x, rank 2)
        ("rbp_resid", 0.9**4 + 0.1 * 0.9),
        ("rbp_resid.p=0.5", 0.5**4 + 0.5 * 0.5),
    ],
)
def test_hand_worked(name: str, expect: float) -> None:
    assert _one(name) == pytest.approx(expect, abs=1e-12)


def test_graded_rbp_ignores_the_relevance_level_and_binary_rbp_keeps_its_own() -> None:
    # gain = grade whatever -l (as trec_eval's ndcg); RBP(rel=1) is binary at 1 whatever -l
    assert _one("RBP", relevance_level=2) == pytest.approx(0.2 * (2 + 0.8**2), abs=1e-12)
    assert _one("RBP(rel=1)", relevance_level=2) == pytest.approx(0.2 * (1 + 0.8**2), abs=1e-12)


def test_rndcg_final_term_and_more_gain_changes() -> None:
    # a=2, b=1, c=0, d=1, e=3, f=3; ranking a, x, e, c, y, z, w, v (n = 8). Ideal [3, 3, 2, 1, 1]
    # (P = 5): gain changes after ranks 2, 3 and at 5; n > P + 1 adds DCG@8/IDCG@5.
    qrels = {"q": {"a": 2, "b": 1, "c": 0, "d": 1, "e": 3, "f": 3}}
    run = {"q": {d: float(9 - i) for i, d in enumerate("axecyzwv")}}
    dcg2, dcg3 = 2.0, 2 + 3 / 2  # DCG@5 = DCG@8 = DCG@3
    i2 = 3 + 3 / log2(3)
    i3 = i2 + 2 / 2
    i5 = i3 + 1 / log2(5) + 1 / log2(6)
    expect = (dcg2 / i2 + dcg3 / i3 + dcg3 / i5 + dcg3 / i5) / 4
    assert _one("Rndcg", qrels, run) == pytest.approx(expect, abs=1e-12)  # trec_eval: 0.5115
    # no relevant document at level 4: trec_eval returns 0 before computing
    assert _one("RnDCG(rel=4)", qrels, run) == 0.0


def test_names() -> None:
    assert parse_measure("ndcg.1=3,2=9,4=4.5").trec_name == "ndcg_1=3,2=9,4=4.5"
    assert parse_measure("nDCG(gains='1=3,2=9')").trec_name == "ndcg_1=3,2=9"
    assert parse_measure("nDCG(dcg='exp-log2')@10").trec_name is None
    assert parse_measure("nDCG(dcg='log2')@10") == parse_measure("ndcg_cut_10")
    assert parse_measure("RBP").family == "RBP"  # ir_measures' RBP, not trec_eval's rbp
    assert parse_measure("rbp").family == "RBPTrec"
    assert parse_measure("rbp.p=0.5").trec_name == "rbp_p=0.5"
    assert parse_measure("rbp_resid.p=0.8").trec_name == "rbp_resid_p=0.8"
    assert parse_measure("Rndcg.1=2").trec_name == "Rndcg_1=2"
    for bad in ("nDCG(dcg='exp')", "ndcg.1=x", "ndcg.a=3", "ndcg.1=2,1=3", "ndcg.-1=2"):
        with pytest.raises(ValueError):
            parse_measure(bad)
    with pytest.raises(ValueError):
        parse_measure("ERR(rel=2)@10")  # ERR reads the raw grades


def test_gain_map_in_honest_mode() -> None:
    qrels = {"q": {"a": 1, "b": 0, "c": 2}}
    run = {"q": {"a": 3.0, "x": 2.0, "c": 1.0}}
    res = evaluate(qrels, run, ["nDCG(gains='1=3,2=9')@2", "nDCG(dcg='exp-log2')@2"], ci=None)
    t = res.per_query_treatments["nDCG(gains='1=3,2=9')@2"]
    # lower: a (gain 3) at 1, x unjudged; ideal [9 (c), 3 (a)]
    assert t["lower"]["q"] == pytest.approx(3 / (9 + 3 / log2(3)))
    # condensed: a, c: DCG = 3 + 9/log2(3)
    assert t["condensed"]["q"] == pytest.approx((3 + 9 / log2(3)) / (9 + 3 / log2(3)))
    # upper: x has grade 1 (gain 3) and joins the ideal ranking: [9, 3, 3]
    assert t["upper"]["q"] == pytest.approx((3 + 3 / log2(3)) / (9 + 3 / log2(3)))
    t = res.per_query_treatments["nDCG(dcg='exp-log2')@2"]
    # exp gains a 1, c 3; upper: x gains 2^1 - 1 = 1
    assert t["upper"]["q"] == pytest.approx((1 + 1 / log2(3)) / (3 + 1 / log2(3)))


# -- pytrec_eval ------------------------------------------------------------------------------

# ndcg_rel, Rndcg, G, binG against pytrec_eval per query: test_pytrec_eval_property.py


# A gain map of non-negative integer gains is the same as mapping the qrels grades (ir_measures
# passes gains to pytrec_eval that way) for the measures that ignore the relevance level.
gain_maps = st.dictionaries(st.integers(0, 4), st.integers(0, 12), min_size=1, max_size=4)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(qrels=qrels_st, run=run_st, gmap=gain_maps, k=st.sampled_from([1, 3, 5]))
def test_gain_maps_equal_pytrec_eval_on_mapped_qrels(
    qrels: dict[str, dict[str, int]],
    run: dict[str, dict[str, float]],
    gmap: dict[int, int],
    k: int,
) -> None:
    text = ",".join(f"{lvl}={g}" for lvl, g in gmap.items())
    mapped = {
        q: {d: gmap.get(g, g) if g >= 0 else g for d, g in j.items()} for q, j in qrels.items()
    }
    names = {
        "ndcg": f"ndcg.{text}",
        f"ndcg_cut_{k}": f"nDCG(gains='{text}')@{k}",
        "ndcg_rel": f"ndcg_rel.{text}",
        "G": f"G.{text}",
    }
    ref = pytrec_eval.RelevanceEvaluator(mapped, {"ndcg", f"ndcg_cut.{k}", "ndcg_rel", "G"})
    expect = ref.evaluate(run)
    res = Evaluator(qrels, list(names.values()), compat="trec_eval", ci=None).evaluate(run)
    for qid, values in expect.items():
        for trec, ours in names.items():
            got = res.per_query[parse_measure(ours).name][qid]
            assert abs(got - values[trec]) <= 1e-9, (qid, trec, text)


# -- ranx, ir_measures ------------------------------------------------------------------------
UNIQUE = st.lists(st.integers(0, 10_000), min_size=12, max_size=12, unique=True)
grades_st = st.dictionaries(DOCS, st.integers(0, 4), min_size=1).filter(
    lambda d: any(g > 0 for g in d.values())
)


@st.composite
def graded(draw: st.DrawFn) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Numeric topics, grades 0..4 with one > 0, distinct scores (tools break ties differently)."""
    qids = draw(st.lists(st.sampled_from(["1", "2", "3"]), min_size=1, unique=True))
    qrels = {q: draw(grades_st) for q in qids}
    run = {}
    for q in qids:
        docs = draw(st.lists(DOCS, min_size=1, max_size=12, unique=True))
        scores = draw(UNIQUE)
        run[q] = {d: float(s) / 8 for d, s in zip(docs, scores, strict=False)}
    return qrels, run


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graded())
def test_exp_log2_ndcg_equals_ranx_ndcg_burges(
    data: tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]],
) -> None:
    ranx = pytest.importorskip("ranx")
    qrels, run = data
    ref = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), "ndcg_burges@10", return_mean=False)
    res = evaluate(qrels, run, ["nDCG(dcg='exp-log2')@10"], compat="trec_eval", ci=None)
    ours = res.per_query["nDCG(dcg='exp-log2')@10"]
    ref_list = [float(v) for v in np.atleast_1d(ref)]
    # ranx orders queries as the run does
    for qid, want in zip(ranx.Run(run).keys(), ref_list, strict=True):
        assert ours[qid] == pytest.approx(want, abs=1e-9), qid


def _ir_measures(
    measure: str, provider: str, qrels: dict[str, Any], run: dict[str, Any]
) -> dict[str, float]:
    irm = pytest.importorskip("ir_measures")
    prov = irm.providers.registry[provider]
    m = irm.parse_measure(measure)
    if not prov.is_available() or not prov.supports(m):
        pytest.skip(f"ir_measures' {provider} provider cannot compute {measure} here")
    qr = [irm.Qrel(q, d, g) for q, ds in qrels.items() for d, g in ds.items()]
    sd = [irm.ScoredDoc(q, d, s) for q, ds in run.items() for d, s in ds.items()]
    return {x.query_id: x.value for x in prov.iter_calc([m], qr, sd)}


@pytest.mark.skipif(shutil.which("perl") is None, reason="gdeval.pl needs perl")
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graded(), st.sampled_from([1, 5, 10]))
def test_exp_log2_ndcg_and_err_equal_gdeval(
    data: tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]], k: int
) -> None:
    qrels, run = data
    for name in (f"nDCG(dcg='exp-log2')@{k}", f"ERR@{k}"):
        ref = _ir_measures(name, "gdeval", qrels, run)
        ours = evaluate(qrels, run, [name], compat="trec_eval", ci=None).per_query[name]
        for qid, want in ref.items():
            assert ours[qid] == pytest.approx(want, abs=6e-6), (qid, name)  # gdeval: %.5f


def _err_loop(grades: list[int], k: int, max_grade: int = 4) -> float:
    """ERR@k, the plain loop of gdeval.pl's ``err``."""
    score, decay = 0.0, 1.0
    for i, g in enumerate(grades[:k]):
        r = (2 ** min(g, max_grade) - 1) / 2**max_grade
        score += r * decay / (i + 1)
        decay *= 1 - r
    return score


@settings(max_examples=100, deadline=None)
@given(graded(), st.sampled_from([1, 3, 10]), st.integers(1, 5))
def test_err_equals_a_plain_loop(
    data: tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]], k: int, top: int
) -> None:
    qrels, run = data
    name = f"ERR(max_grade={top})@{k}" if top != 4 else f"ERR@{k}"
    ours = evaluate(qrels, run, [name], compat="trec_eval", ci=None).per_query[name]
    for qid, docs in run.items():
        ranked = sorted(docs, key=lambda d: -docs[d])
        grades = [max(qrels[qid].get(d, 0), 0) for d in ranked]
        assert ours[qid] == pytest.approx(_err_loop(grades, k, top), abs=1e-12)


def _rbp_loop(grades: list[int], p: float, k: int | None, rel: int | None) -> float:
    """RBP of a ranking's grades (Moffat & Zobel 2008), the plain loop: (1 - p) * sum over the
    first k of gain * p^(rank - 1); gain = the grade (0 below 1) without rel, else 1 for a
    grade >= rel (ir_measures' two forms of RBP)."""
    total = 0.0
    for i, g in enumerate(grades[:k]):
        gain = max(g, 0) if rel is None else float(g >= rel)
        total += gain * p**i
    return (1.0 - p) * total


def _rbp_name(p: float, k: int | None, rel: int | None) -> str:
    return f"RBP(p={p}" + ("" if rel is None else f", rel={rel}") + ")" + (f"@{k}" if k else "")


def _apart(run: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """The run with no score shared across queries (trectools averages the RBP weights of tied
    consecutive rows of its whole table, across queries too)."""
    return {
        q: {d: s + 1000.0 * i for d, s in docs.items()} for i, (q, docs) in enumerate(run.items())
    }


@settings(max_examples=100, deadline=None)
@given(
    graded(),
    st.sampled_from([0.5, 0.8, 0.95]),
    st.sampled_from([None, 1, 3, 10]),
    st.sampled_from([None, 1, 2, 3]),
)
def test_rbp_equals_a_plain_loop(
    data: tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]],
    p: float,
    k: int | None,
    rel: int | None,
) -> None:
    qrels, run = data
    name = _rbp_name(p, k, rel)
    ours = evaluate(qrels, run, [name], compat="trec_eval", ci=None)
    for qid, docs in run.items():
        grades = [qrels[qid].get(d, 0) for d in sorted(docs, key=lambda d: -docs[d])]
        want = _rbp_loop(grades, p, k, rel)
        assert ours.per_query[parse_measure(name).name][qid] == pytest.approx(want, abs=1e-12)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graded(), st.sampled_from([0.5, 0.8, 0.95]), st.sampled_from([None, 5, 10]))
def test_graded_rbp_equals_ir_measures_trectools(
    data: tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]], p: float, k: int | None
) -> None:
    # ir_measures computes RBP without rel= through trectools, with the grade as the gain
    qrels, run = data
    run = _apart(run)
    name = _rbp_name(p, k, None)
    ref = _ir_measures(name, "trectools", qrels, run)
    ours = evaluate(qrels, run, [name], compat="trec_eval", ci=None).per_query
    for qid, want in ref.items():
        assert ours[parse_measure(name).name][qid] == pytest.approx(want, abs=1e-9), qid


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graded(), st.sampled_from([0.5, 0.8, 0.95]), st.sampled_from([1, 2, 3]))
def test_binary_rbp_equals_ir_measures_cwl_eval(
    data: tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]], p: float, rel: int
) -> None:
    # ir_measures computes RBP(rel=...) through cwl_eval: 1 for a grade >= rel, else 0
    qrels, run = data
    name = _rbp_name(p, None, rel)
    ref = _ir_measures(name, "cwl_eval", qrels, run)
    ours = evaluate(qrels, run, [name], compat="trec_eval", ci=None).per_query
    for qid, want in ref.items():
        assert ours[parse_measure(name).name][qid] == pytest.approx(want, abs=1e-9), qid


# -- the trec_eval 10.0 binary ----------------------------------------------------------------
TREC_EVAL = os.environ.get("TREC_EVAL")
# Gains that differ by less than 1 (ndcg.2=0.5 beside level 1's gain 1) are not used: trec_eval
# sorts the levels with a comparator that truncates the difference to an int (gain_init.c), so
# its ideal ranking may put them in the wrong order (measures_gain.py's docstring).
BINARY_MEASURES = (
    "ndcg.1=3,2=9,4=5", "ndcg.0=1,3=-2", "ndcg.2=4.5", "ndcg_rel.1=3,2=0", "Rndcg",
    "Rndcg.1=2,2=2,4=7", "G", "G.0=2,1=5", "G.3=-1", "rbp", "rbp.p=0.5,0=1", "rbp.1=-1,3=0.5",
    "rbp.p=0.3", "rbp_resid", "rbp_resid.p=0.3",
)  # fmt: skip


def _binary(
    qrels: dict[str, Any], run: dict[str, Any], measure: str, *opts: str
) -> dict[str, float]:
    assert TREC_EVAL is not None
    with tempfile.TemporaryDirectory() as tmp:
        qf, rf = os.path.join(tmp, "qrels"), os.path.join(tmp, "run")
        with open(qf, "w") as f:
            f.writelines(f"{q} 0 {d} {g}\n" for q, j in qrels.items() for d, g in j.items())
        with open(rf, "w") as f:
            f.writelines(f"{q} Q0 {d} 0 {s} r\n" for q, j in run.items() for d, s in j.items())
        out = subprocess.run(
            [TREC_EVAL, *opts, "-q", "-m", measure, qf, rf],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    values = {}
    for line in out.splitlines():
        _, qid, value = line.split()
        if qid != "all":
            values[qid] = float(value)
    return values


@pytest.mark.skipif(TREC_EVAL is None, reason="set TREC_EVAL to a trec_eval 10.0 binary")
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(qrels=qrels_st, run=run_st, level=st.sampled_from([1, 2]))
def test_gain_maps_rbp_and_residual_equal_the_binary(
    qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]], level: int
) -> None:
    run = {q: run.get(q) or {"zz": 1.0} for q in qrels}  # trec_eval 10 wants every topic run
    res = Evaluator(
        qrels, list(BINARY_MEASURES), compat="trec_eval", relevance_level=level, ci=None
    ).evaluate(run)
    for measure in BINARY_MEASURES:
        if level != 1 and not measure.startswith("Rndcg"):
            continue  # -l changes only Rndcg (its early return when R = 0)
        ref = _binary(qrels, run, measure, "-l", str(level))
        name = parse_measure(measure).name
        for qid, want in ref.items():
            got = res.per_query[name][qid]
            assert math.isclose(got, want, abs_tol=5.1e-5), (qid, measure)  # printed %.4f


def test_cli_prints_trec_eval_labels_of_raw_parameters(tmp_path: Path) -> None:
    from metrics.cli.app import main

    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("".join(f"q 0 {d} {g}\n" for d, g in QRELS["q"].items()))
    run.write_text("".join(f"q Q0 {d} 0 {s} r\n" for d, s in RUN["q"].items()))
    out = io.StringIO()
    argv = ["evaluate", "--compat", "trec_eval", "-m", "ndcg.1=3,2=9", "-m", "rbp.p=0.5"]
    assert main([*argv, str(qrels), str(run)], out) == 0
    rows = {line.split()[0]: float(line.split()[2]) for line in out.getvalue().splitlines()}
    assert rows["ndcg_1=3,2=9"] == pytest.approx(_one("ndcg.1=3,2=9"), abs=1e-4)
    assert rows["rbp_p=0.5"] == pytest.approx(0.5625, abs=1e-4)  # trec_eval 10.0 prints 0.5625


def test_the_output_says_which_rbp_is_graded_and_which_binary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import csv
    import json

    from metrics.cli.app import main

    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("".join(f"q 0 {d} {g}\n" for d, g in QRELS["q"].items()))
    run.write_text("".join(f"q Q0 {d} 0 {s} r\n" for d, s in RUN["q"].items()))
    argv = ["evaluate", "-m", "RBP(p=0.8)", "-m", "RBP(p=0.8,rel=1)", str(qrels), str(run)]
    graded, binary = "graded (gain = grade)", "binary (relevant: grade >= 1)"
    out = io.StringIO()
    assert main(argv, out) == 0
    rows = {line.split()[0]: float(line.split()[2]) for line in out.getvalue().splitlines()}
    assert rows["RBP"] == pytest.approx(0.528, abs=1e-4)  # 0.2 (2 + 0.8^2)
    assert rows["RBP(rel=1)"] == pytest.approx(0.328, abs=1e-4)  # 0.2 (1 + 0.8^2)
    err = capsys.readouterr().err
    assert f"# RBP: {graded}" in err and f"# RBP(rel=1): {binary}" in err
    out = io.StringIO()
    assert main([*argv, "--format", "json"], out) == 0
    measures = json.loads(out.getvalue())["runs"][0]["measures"]
    assert measures["RBP"]["relevance"] == graded
    assert measures["RBP(rel=1)"]["relevance"] == binary
    out = io.StringIO()
    assert main([*argv, "--format", "csv"], out) == 0
    notes = {
        r["measure"]: r["note"]
        for r in csv.DictReader(io.StringIO(out.getvalue()))
        if r["query"] == "all" and not r["treatment"]
    }
    assert notes["RBP"] == graded and notes["RBP(rel=1)"] == binary
