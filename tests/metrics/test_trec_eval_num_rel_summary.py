"""trec_eval's summary ``num_rel`` with ``-c``: every qrels line with a grade > 0, whatever ``-l``.

trec_eval 10.0 (and 9.0.8) print per topic the relevant documents at the relevance level
(form_res_rels.c: grade >= ``-l``), but with ``-c`` the summary is recomputed from the qrels
(m_num_rel.c, ``te_calc_avg_num_rel``): every line of every qrels topic whose grade is > 0, so
``-c -l 2`` prints 6074 on Robust 2003 where the topics' values add up to 407. Checked by hand,
against the binary on generated data (``TREC_EVAL``) and on the shared Robust 2003 and TREC 2011
Medical runs (``TREC_EVAL`` and the shared data).
"""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from metrics import Evaluator
from metrics.cli.app import main
from tests._shared_data import SHARED_DATA, missing_reason
from tests.metrics.test_pytrec_eval_property import qrels_st, run_st

TREC_EVAL = os.environ.get("TREC_EVAL")
needs_binary = pytest.mark.skipif(
    not TREC_EVAL, reason="set TREC_EVAL to a trec_eval 10.0 binary to compare with it"
)
COUNTS = ["-m", "num_q", "-m", "num_ret", "-m", "num_rel", "-m", "num_rel_ret"]

# q1: grades 2, 1, 0; q2: 1, 3; q3 (not in the run): 2, 1 and -1 (pooled, unjudged).
# Lines with a grade > 0: a b d e f g = 6. At level 2: q1 a, q2 e, q3 f = 1 each.
HAND_QRELS = "q1 0 a 2\nq1 0 b 1\nq1 0 c 0\nq2 0 d 1\nq2 0 e 3\nq3 0 f 2\nq3 0 g 1\nq3 0 h -1\n"
HAND_RUN = "q1 Q0 a 1 3 r\nq1 Q0 x 2 2 r\nq2 Q0 e 1 1 r\n"


def _ours(qrels: Path, run: Path, *flags: str) -> str:
    out = io.StringIO()
    argv = ["evaluate", "--compat", "trec_eval", "--format", "trec", *flags, str(qrels), str(run)]
    assert main(argv, out) == 0
    return out.getvalue()


def _binary(qrels: Path, run: Path, *flags: str) -> str:
    assert TREC_EVAL is not None
    done = subprocess.run(
        [TREC_EVAL, *flags, str(qrels), str(run)], capture_output=True, text=True, check=True
    )
    return done.stdout


def _hand_files(folder: Path) -> tuple[Path, Path]:
    qrels, run = folder / "qrels", folder / "run"
    qrels.write_text(HAND_QRELS)
    run.write_text(HAND_RUN)
    return qrels, run


def test_with_c_the_summary_counts_every_positive_qrels_line_whatever_the_level(
    tmp_path: Path,
) -> None:
    qrels, run = _hand_files(tmp_path)
    got = _ours(qrels, run, "-q", "-c", "-l", "2", "-m", "num_rel", "-m", "num_rel_ret")
    assert got == (
        "num_rel               \tq1\t1\n"
        "num_rel_ret           \tq1\t1\n"
        "num_rel               \tq2\t1\n"
        "num_rel_ret           \tq2\t1\n"
        "num_rel               \tq3\t1\n"
        "num_rel_ret           \tq3\t0\n"
        "num_rel               \tall\t6\n"  # a b d e f g, not 1 + 1 + 1
        "num_rel_ret           \tall\t2\n"  # summed as ever
    )  # what trec_eval 10.0 prints for these files


def test_without_c_and_in_the_honest_mode_num_rel_is_the_sum_over_the_topics(
    tmp_path: Path,
) -> None:
    qrels, run = _hand_files(tmp_path)
    # without -c: the topics both have, q1 and q2, one relevant each at level 2
    assert _ours(qrels, run, "-l", "2", "-m", "num_rel") == "num_rel               \tall\t2\n"
    qd = {"q1": {"a": 2, "b": 1, "c": 0}, "q2": {"d": 1, "e": 3}, "q3": {"f": 2, "g": 1, "h": -1}}
    rd = {"q1": {"a": 3.0, "x": 2.0}, "q2": {"e": 1.0}}
    honest = Evaluator(qd, ["NumRel"], relevance_level=2, ci=None).evaluate(rd)
    assert honest.aggregates["NumRel"].value == 3  # every qrels topic: 1 + 1 + 1
    # with -c at level 1 the two rules agree: 2 + 2 + 2 = 6
    trec = Evaluator(qd, ["NumRel"], compat="trec_eval", complete=True, ci=None).evaluate(rd)
    assert trec.aggregates["NumRel"].value == 6


def test_num_rel_with_its_own_level_is_summed_even_with_c() -> None:
    # NumRel(rel=2) is not trec_eval's num_rel (which has no level of its own): its summary is
    # the sum of its topics' values, 1 + 1 + 1
    qd = {"q1": {"a": 2, "b": 1, "c": 0}, "q2": {"d": 1, "e": 3}, "q3": {"f": 2, "g": 1, "h": -1}}
    rd = {"q1": {"a": 3.0, "x": 2.0}, "q2": {"e": 1.0}}
    ev = Evaluator(qd, ["NumRel(rel=2)", "num_rel"], compat="trec_eval", complete=True, ci=None)
    res = ev.evaluate(rd)
    assert res.aggregates["NumRel(rel=2)"].value == 3
    assert res.aggregates["NumRel"].value == 6


@needs_binary
def test_the_hand_worked_case_is_what_the_binary_prints(tmp_path: Path) -> None:
    qrels, run = _hand_files(tmp_path)
    for flags in (["-q", "-c", "-l", "2"], ["-c", "-l", "3"], ["-q", "-c"]):
        assert _ours(qrels, run, *flags, *COUNTS) == _binary(qrels, run, *flags, *COUNTS)


@needs_binary
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(qrels=qrels_st, run=run_st, level=st.sampled_from([1, 2, 3]))
def test_the_counts_with_c_equal_the_binary_on_generated_data(
    qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]], level: int
) -> None:
    assume(run)  # trec_eval stops on an empty results file
    with tempfile.TemporaryDirectory() as tmp:
        qp, rp = Path(tmp) / "qrels", Path(tmp) / "run"
        qp.write_text("".join(f"{q} 0 {d} {g}\n" for q, dd in qrels.items() for d, g in dd.items()))
        rp.write_text(
            "".join(f"{q} Q0 {d} 1 {s!r} t\n" for q, dd in run.items() for d, s in dd.items())
        )
        flags = ["-q", "-c", "-l", str(level), *COUNTS]
        assert _ours(qp, rp, *flags) == _binary(qp, rp, *flags)


REAL = [
    (collection, run)
    for collection, runs in (
        ("robust03", ("input.InexpC2.gz", "input.uic0301.gz")),
        ("trec2011-medical", ("input.NLMManual.gz", "input.uogTrDeNsEc.gz")),
    )
    for run in runs
]


@needs_binary
@pytest.mark.parametrize(("collection", "run"), REAL, ids=[f"{c}-{r}" for c, r in REAL])
def test_c_l_2_equals_the_binary_on_real_runs(collection: str, run: str, tmp_path: Path) -> None:
    reason = missing_reason(collection, "runs", run)
    if reason is not None:
        pytest.skip(reason)
    qrels = SHARED_DATA / collection / "qrels.txt"
    # trec_eval reads no gzip: the run is unpacked into the test's own folder
    plain = tmp_path / "run"
    plain.write_bytes(gzip.decompress((SHARED_DATA / collection / "runs" / run).read_bytes()))
    flags = ["-c", "-l", "2", *COUNTS]
    ours = _ours(qrels, plain, *flags)
    assert ours == _binary(qrels, plain, *flags)
    if collection == "robust03":
        assert "num_rel               \tall\t6074\n" in ours  # 407 at level 2, + 5667 at 1
