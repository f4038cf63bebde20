"""trec_eval's set and trec-only measures (metrics/measures/trec.py): hand-worked values, both
name styles, pytrec_eval for what it has, and (with TREC_EVAL set) the trec_eval 10.0 binary.

pytrec_eval embeds trec_eval 9, which turns recall level x into the c-th relevant document by
c = (long)(x R + 0.9); trec_eval 10.0 (and we) use c = lround(x R). IPrec and IPrec11pt are
compared with pytrec_eval only where both give the same c (always for x = 0, 0.5, 1); the
binary test compares every level.
"""

from __future__ import annotations

import io
import math
import os
import subprocess
import tempfile
from pathlib import Path

import pytest
import pytrec_eval
import pytrec_eval_ext
from hypothesis import HealthCheck, assume, given, settings

from metrics import Evaluator
from metrics.cli.app import main
from metrics.measures.names import Measure, parse_measures
from tests._trec_eval_test_dir import needs_test_dir, trec_eval_test_dir
from tests.metrics.test_pytrec_eval_property import qrels_st, run_st

# One query with everything: R = 4 (a b c d), x judged non-relevant, u pooled but unjudged (-1),
# y absent from the qrels. Ranking a x b y c u: relevant at ranks 1, 3, 5; ret = 6, rr = 3.
# Query 2 has R = 0: e judged non-relevant, f absent; ranking e f.
QRELS = {
    "1": {"a": 1, "b": 1, "c": 1, "d": 1, "x": 0, "u": -1},
    "2": {"e": 0},
}
RUN = {
    "1": {"a": 6.0, "x": 5.0, "b": 4.0, "y": 3.0, "c": 2.0, "u": 1.0},
    "2": {"e": 2.0, "f": 1.0},
}

HAND: dict[str, tuple[float, float]] = {  # measure: (query 1, query 2); query 2 has R = 0
    "SetP": (3 / 6, 0.0),  # rr / ret (query 2: 0 / 2)
    "SetR": (3 / 4, 0.0),  # rr / R (R = 0: 0)
    "SetRelP": (3 / 4, 0.0),  # rr / min(ret, R) = 3 / min(6, 4)
    "SetAP": (9 / 24, 0.0),  # rr^2 / (ret R) = 9 / (6 * 4)
    "SetF": (0.6, 0.0),  # P = .5, R = .75: 2 * .375 / 1.25
    "SetF(beta=0.5)": (0.5625, 0.0),  # 1.5 * .375 / (.5 * .5 + .75) = .5625 / 1
    "RelP@2": (1 / 2, 0.0),  # 1 rel in top 2 / min(2, 4)
    "RelP@3": (2 / 3, 0.0),  # 2 / min(3, 4)
    "RelP@10": (3 / 4, 0.0),  # 3 / min(10, 4)
    "RprecMult@0.2": (1.0, 0.0),  # c = (long)(.8 + .9) = 1: 1 / 1 (R = 0: c = 0, value 0)
    "RprecMult@0.4": (1 / 2, 0.0),  # c = (long)(1.6 + .9) = 2: 1 / 2
    "RprecMult@1": (2 / 4, 0.0),  # c = (long)(4.9) = 4: 2 / 4
    "RprecMult@2": (3 / 8, 0.0),  # c = 8 > ret: 3 / 8
    # precision at the relevant ranks 1, 3, 5: 1, 2/3, 3/5, already non-increasing, so the
    # interpolated precision at the j-th relevant is the same; c = lround(4 x)
    "IPrec@0": (1.0, 0.0),  # c = 0: the maximum over all ranks (R = 0, nothing rel: 0)
    "IPrec@0.3": (1.0, 0.0),  # lround(1.2) = 1 (trec_eval 9: (long)(2.1) = 2, giving 2/3)
    "IPrec@0.4": (2 / 3, 0.0),  # lround(1.6) = 2
    "IPrec@0.7": (3 / 5, 0.0),  # lround(2.8) = 3
    "IPrec@0.9": (0.0, 0.0),  # lround(3.6) = 4 > rr = 3
    # levels 0, .1, ..., 1: c = 0 0 1 1 2 2 2 3 3 4 4: 1 1 1 1 2/3 2/3 2/3 .6 .6 0 0 = 7.2
    "IPrec11pt": (7.2 / 11, 0.0),
    # levels .25 .5 .75: c = 1 2 3
    "IPrec11pt(levels='.25,.5,.75')": ((1 + 2 / 3 + 3 / 5) / 3, 0.0),
    "Utility": (0.0, -2.0),  # 1 * 3 - 1 * (6 - 3); query 2: -1 * 2
    "Utility(coeffs='2,-1,0,0')": (3.0, -2.0),  # 2 * 3 - 3; query 2: -2
    "NumNonrelJudgedRet": (1.0, 1.0),  # x; e
    "Unj@3": (0.0, 1 / 3),  # a x b: none unjudged; e f: f
    "Unj@5": (1 / 5, 1 / 5),  # y in a x b y c; f
    "Unj@10": (2 / 10, 1 / 10),  # y, u of 6 retrieved, divided by 10; f
    "Unjudged@10": (2 / 6, 1 / 2),  # ours: divided by min(10, retrieved)
}


def test_hand_worked_values_and_aggregates() -> None:
    ev = Evaluator(QRELS, list(HAND), compat="trec_eval", ci=None)
    res = ev.evaluate(RUN)
    for name, (v1, v2) in HAND.items():
        canonical = parse_measures([name])[0].name
        got = res.per_query[canonical]
        assert got["1"] == pytest.approx(v1, abs=1e-12), name
        assert got["2"] == pytest.approx(v2, abs=1e-12), name
        # trec_eval averages over the two queries, and sums num_nonrel_judged_ret
        agg = v1 + v2 if name == "NumNonrelJudgedRet" else (v1 + v2) / 2
        assert res.aggregates[canonical].value == pytest.approx(agg, abs=1e-12), name


def test_utility_reads_the_collection_size() -> None:
    # d (N + rr - ret - R) with N = 100: 100 + 3 - 6 - 4 = 93; c (R - rr) = 1: 94
    m = "utility.0,0,1,1"
    res = Evaluator(QRELS, [m], compat="trec_eval", ci=None, num_docs=100).evaluate(RUN)
    assert res.per_query["Utility(coeffs='0,0,1,1')"]["1"] == 94.0
    # trec_eval's default N is 0: 0 + 3 - 6 - 4 = -7, plus 1
    res = Evaluator(QRELS, [m], compat="trec_eval", ci=None).evaluate(RUN)
    assert res.per_query["Utility(coeffs='0,0,1,1')"]["1"] == -6.0


def test_unsorted_levels_are_walked_as_trec_eval_walks_them() -> None:
    # levels .9, .1, .5 (R = 4: c = 4, 0, 2), walked from the last: c = 2 <= rr adds ip(2) =
    # 2/3; c = 0 is never met, so it and the level before it add ip(1) = 1 each: 8/3 / 3
    res = Evaluator(QRELS, ["11pt_avg.0.9,0.1,0.5"], compat="trec_eval", ci=None).evaluate(RUN)
    assert res.per_query["IPrec11pt(levels='0.9,0.1,0.5')"]["1"] == pytest.approx(8 / 9)


def test_micro_averaging_of_the_set_ratios() -> None:
    res = Evaluator(
        QRELS, ["SetP", "RelP@10", "Unj@10"], compat="trec_eval", ci=None, average="micro"
    ).evaluate(RUN)
    assert res.aggregates["SetP"].value == pytest.approx(3 / 8)  # (3 + 0) / (6 + 2)
    assert res.aggregates["RelP@10"].value == pytest.approx(3 / 4)  # (3 + 0) / (4 + 0)
    assert res.aggregates["Unj@10"].value == pytest.approx(3 / 20)  # (2 + 1) / (10 + 10)


# -- names ------------------------------------------------------------------------------------


def test_trec_eval_names_and_their_printed_forms() -> None:
    def show(text: str) -> list[tuple[str, str | None]]:
        return [(m.name, m.trec_name) for m in parse_measures([text])]

    rm = parse_measures(["Rprec_mult"])
    assert [m.cutoff for m in rm] == [0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0]
    assert [m.trec_name for m in rm][:2] == ["Rprec_mult_0.20", "Rprec_mult_0.40"]
    assert rm[-1].trec_name == "Rprec_mult_2.00"
    assert show("iprec_at_recall.0.1,0.25") == [
        ("IPrec@0.1", "iprec_at_recall_0.10"),
        ("IPrec@0.25", "iprec_at_recall_0.25"),
    ]
    assert [m.trec_name for m in parse_measures(["iprec_at_recall"])] == [
        f"iprec_at_recall_{x / 10:3.2f}" for x in range(11)
    ]
    # as trec_eval's test/out.test.meas_params prints them
    assert show("utility.2,-1,0,0") == [("Utility(coeffs='2,-1,0,0')", "utility_2,-1,0,0")]
    assert show("11pt_avg..25,.5,.75") == [
        ("IPrec11pt(levels='.25,.5,.75')", "11pt_avg_.25,.5,.75")
    ]
    assert show("Rprec_mult.0.2,0.35,5.0")[1] == ("RprecMult@0.35", "Rprec_mult_0.35")
    assert parse_measures(["set_F.0.5"])[0].trec_name == "set_F_0.5"
    assert parse_measures(["SetF(beta=0.5)"]) == parse_measures(["set_F.0.5"])
    assert show("set_F") == [("SetF", "set_F")]
    assert show("11pt_avg") == [("IPrec11pt", "11pt_avg")]
    assert show("utility") == [("Utility", "utility")]
    assert show("unj") == [("Unj@5", "unj_5"), ("Unj@10", "unj_10"), ("Unj@20", "unj_20")]
    assert show("relative_P")[0] == ("RelP@5", "relative_P_5")
    assert len(show("relative_P")) == 9
    names = ["set_P", "set_recall", "set_relative_P", "set_map", "num_nonrel_judged_ret"]
    assert [m.name for n in names for m in parse_measures([n])] == [
        "SetP",
        "SetR",
        "SetRelP",
        "SetAP",
        "NumNonrelJudgedRet",
    ]


def test_ir_measures_names() -> None:
    assert parse_measures(["IPrec@0.5"]) == [Measure("IPrec", 0.5)]
    assert parse_measures(["RprecMult@1.5", "RelP@10", "Unj@10"]) == [
        Measure("RprecMult", 1.5),
        Measure("RelP", 10),
        Measure("Unj", 10),
    ]
    assert parse_measures(["Unj@10"]) != parse_measures(["Unjudged@10"])


@pytest.mark.parametrize(
    "bad", ["set_F.x", "utility.1,2,3", "SetF(beta=nan)", "11pt_avg.a", "Unj(rel=2)@5"]
)
def test_bad_parameters_are_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_measures([bad])


# -- pytrec_eval ------------------------------------------------------------------------------

# trec_eval name (pytrec_eval's key) -> ours
CUTS = (1, 3, 5, 10)
MULTS = (0.2, 0.5, 1.0, 1.5, 2.0)
LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
SAME = {  # one pytrec_eval evaluator: measures with default or cutoff parameters
    "set_P": "SetP",
    "set_recall": "SetR",
    "set_relative_P": "SetRelP",
    "set_map": "SetAP",
    "set_F": "SetF",
    "num_nonrel_judged_ret": "NumNonrelJudgedRet",
    "utility": "Utility",
    **{f"relative_P_{k}": f"RelP@{k}" for k in CUTS},
    **{f"Rprec_mult_{x:3.2f}": f"RprecMult@{x:g}" for x in MULTS},
    **{f"iprec_at_recall_{x:3.2f}": f"IPrec@{x:g}" for x in LEVELS},
}
REQUEST = {
    "set_P",
    "set_recall",
    "set_relative_P",
    "set_map",
    "set_F",
    "num_nonrel_judged_ret",
    "utility",
    "relative_P.1,3,5,10",
    "Rprec_mult.0.2,0.5,1.0,1.5,2.0",
    "iprec_at_recall",
}
# measures with their own parameter text, each in its own evaluator (trec_eval keeps one
# parameter set per measure): (pytrec_eval request, its key, ours, recall levels if any)
OWN: list[tuple[str, str, str, tuple[float, ...] | None]] = [
    ("set_F.0.5", "set_F", "SetF(beta=0.5)", None),
    ("set_F.2.5", "set_F", "SetF(beta=2.5)", None),
    ("utility.2,-1,0,0", "utility", "Utility(coeffs='2,-1,0,0')", None),
    ("utility.1.5,-0.5,2,0", "utility", "Utility(coeffs='1.5,-0.5,2,0')", None),
    ("11pt_avg", "11pt_avg", "IPrec11pt", LEVELS),
    ("11pt_avg.0,.5,1", "11pt_avg", "IPrec11pt(levels='0,.5,1')", (0.0, 0.5, 1.0)),
    ("11pt_avg..2,.5,.8", "11pt_avg", "IPrec11pt(levels='.2,.5,.8')", (0.2, 0.5, 0.8)),
]


def _same_rounding(levels: tuple[float, ...], big_r: int) -> bool:
    """trec_eval 9's (long)(x R + 0.9) and trec_eval 10's lround(x R) agree for every level."""
    out = True
    for x in levels:
        v = x * big_r
        out &= math.trunc(v + 0.9) == math.floor(v + 0.5)
    return out


def _ours(name: str) -> str:
    return parse_measures([name])[0].name


@pytest.mark.parametrize("level", [1, 2])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(qrels=qrels_st, run=run_st)
def test_every_value_equals_pytrec_eval(
    level: int, qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]
) -> None:
    big_r = {q: sum(g >= level for g in d.values()) for q, d in qrels.items()}
    refs: list[tuple[str, str, tuple[float, ...] | None, dict[str, dict[str, float]]]] = []
    same = pytrec_eval.RelevanceEvaluator(qrels, REQUEST, relevance_level=level).evaluate(run)
    for key, ours in SAME.items():
        lv: tuple[float, ...] | None = None
        if ours.startswith("IPrec@"):
            lv = (float(ours.split("@")[1]),)
        refs.append((key, ours, lv, same))
    for request, key, ours, lv in OWN:
        # the wrapper would cut "2,-1,0,0" at the "-": give trec_eval the text as it is
        ev = pytrec_eval_ext.RelevanceEvaluator(
            query_relevance=qrels,
            measures={request},
            relevance_level=level,
            judged_docs_only_flag=False,
        )
        refs.append((key, _ours(ours), lv, ev.evaluate(run)))
    res = Evaluator(
        qrels, [ours for _, ours, _, _ in refs], compat="trec_eval", relevance_level=level, ci=None
    ).evaluate(run)
    assert sorted(res.queries) == sorted(same)
    for key, ours, lv, ref in refs:
        values = []
        for qid, per in ref.items():
            got = res.per_query[ours][qid]
            values.append(per[key])
            if lv is None or _same_rounding(lv, big_r[qid]):
                assert abs(got - per[key]) <= 1e-9, (qid, key, ours, got, per[key])
        if values and (lv is None or all(_same_rounding(lv, big_r[q]) for q in ref)):
            agg = pytrec_eval.compute_aggregated_measure(key, values)
            assert abs(res.aggregates[ours].value - agg) <= 1e-9, (key, ours)


# -- the trec_eval 10.0 binary (TREC_EVAL=/path/to/trec_eval) -----------------------------------

TREC_EVAL = os.environ.get("TREC_EVAL")
needs_binary = pytest.mark.skipif(
    not TREC_EVAL, reason="set TREC_EVAL to a trec_eval 10.0 binary to compare with it"
)
BINARY_SETS = [  # one trec_eval call each (it keeps one parameter set per measure)
    [
        "set_P",
        "set_recall",
        "set_relative_P",
        "set_map",
        "set_F",
        "relative_P",
        "Rprec_mult",
        "iprec_at_recall",
        "11pt_avg",
        "utility",
        "num_nonrel_judged_ret",
        "unj",
    ],
    [
        "set_F.0.5",
        "relative_P.1,2,3,7",
        "Rprec_mult.0.05,0.35,5.0",
        "iprec_at_recall.0.05,0.25,0.33,0.75",
        "11pt_avg.0.9,0.1,0.5",
        "utility.2,-1,0.5,0.25",
        "unj.1,2,3,4,1000",
    ],
]


def _write_trec_files(
    folder: Path, qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]
) -> tuple[Path, Path]:
    qp, rp = folder / "qrels", folder / "run"
    qp.write_text("".join(f"{q} 0 {d} {g}\n" for q, dd in qrels.items() for d, g in dd.items()))
    rp.write_text(
        "".join(f"{q} Q0 {d} 1 {s!r} t\n" for q, dd in run.items() for d, s in dd.items())
    )
    return qp, rp


def _binary(args: list[str], qp: Path, rp: Path) -> dict[tuple[str, str], str]:
    assert TREC_EVAL is not None
    done = subprocess.run(
        [TREC_EVAL, "-q", *args, str(qp), str(rp)], capture_output=True, text=True
    )
    assert done.returncode == 0, (done.stderr, qp.read_text(), rp.read_text())
    out = done.stdout
    return {(m, q): v for m, q, v in (line.split() for line in out.splitlines())}


@needs_binary
@pytest.mark.parametrize("level", [1, 2])
@pytest.mark.parametrize("num_docs", [None, 40])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(qrels=qrels_st, run=run_st)
def test_every_value_equals_trec_eval_10(
    level: int,
    num_docs: int | None,
    qrels: dict[str, dict[str, int]],
    run: dict[str, dict[str, float]],
) -> None:
    # trec_eval 10.0 exits (status 4) on a qrels topic the run lacks (without -c) and on an
    # empty results file: give it the topics both have
    run = {q: docs for q, docs in run.items() if q in qrels}
    qrels = {q: judged for q, judged in qrels.items() if q in run}
    assume(run)
    with tempfile.TemporaryDirectory() as tmp:
        qp, rp = _write_trec_files(Path(tmp), qrels, run)
        for names in BINARY_SETS:
            opts = ["-l", str(level)] + ([] if num_docs is None else ["-N", str(num_docs)])
            ref = _binary(opts + [a for n in names for a in ("-m", n)], qp, rp)
            ms = parse_measures(names)
            res = Evaluator(
                qrels, ms, compat="trec_eval", relevance_level=level, ci=None, num_docs=num_docs
            ).evaluate(run)
            seen = set()
            for m in ms:
                trec = m.trec_name
                assert trec is not None
                rows = [*res.per_query[m.name].items(), ("all", res.aggregates[m.name].value)]
                for qid, v in rows:
                    seen.add((trec, qid))
                    printed = str(round(v)) if m.is_count else f"{v:.4f}"
                    # trec_eval prints 4 decimals: equal, or one unit apart at a rounding edge
                    assert abs(float(printed) - float(ref[(trec, qid)])) <= 1.01e-4, (
                        trec,
                        qid,
                        v,
                        ref[(trec, qid)],
                    )
            assert set(ref) == seen


@needs_test_dir()
@needs_binary
def test_unj_on_trec_eval_test_collection() -> None:
    folder = trec_eval_test_dir()
    assert folder is not None
    qp, rp = folder / "qrels.test", folder / "results.test"
    from metrics.io import read_qrels, read_run

    ref = _binary(["-m", "unj.5,10,20,100,1000", "-m", "set_P"], qp, rp)
    ms = parse_measures(["unj.5,10,20,100,1000", "set_P"])
    res = Evaluator(read_qrels(qp), ms, compat="trec_eval", ci=None).evaluate(read_run(rp))
    for m in ms:
        assert m.trec_name is not None
        for qid, v in [*res.per_query[m.name].items(), ("all", res.aggregates[m.name].value)]:
            assert f"{v:.4f}" == ref[(m.trec_name, qid)], (m.name, qid)


def test_the_command_line_prints_trec_eval_names(tmp_path: Path) -> None:
    qp, rp = _write_trec_files(tmp_path, QRELS, RUN)
    argv = ["evaluate", str(qp), str(rp), "--compat", "trec_eval", "--format", "trec", "-q"]
    for m in ("set_F.0.5", "iprec_at_recall.0.3", "11pt_avg..25,.5,.75", "utility.2,-1,0,0"):
        argv += ["-m", m]
    out = io.StringIO()
    assert main(argv, out) == 0
    got = {(m, q): v for m, q, v in (line.split() for line in out.getvalue().splitlines())}
    assert got[("set_F_0.5", "1")] == "0.5625"
    assert got[("iprec_at_recall_0.30", "1")] == "1.0000"
    assert got[("11pt_avg_.25,.5,.75", "1")] == f"{(1 + 2 / 3 + 3 / 5) / 3:.4f}"
    assert got[("utility_2,-1,0,0", "all")] == "0.5000"  # (3 - 2) / 2
