"""Z-scores (trec_eval ``-Z FILE``): reading the file, converting values, printing them.

The figures are worked out by hand from convert_zscores.c, trec_eval.c and meas_print_*.c;
``test_trec_eval_prefs.py`` compares the command line with the binary.
"""

from __future__ import annotations

import io
import math
from pathlib import Path

import pytest

from metrics.cli import app as cli
from metrics.evaluation.zscores import MISSING, ZScores, read_zscores
from metrics.problems import InvalidInput

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d1 1\nq2 0 d9 0\n"
RUN = "q1 Q0 d2 1 5 tag\nq1 Q0 d1 2 4 tag\nq2 Q0 d1 2 4 tag\n"
# map: q1 1/2 / 2 = 0.25 (d1 at rank 2 of 2 relevant), q2 1.0; P_5: q1 1/5, q2 1/5


def test_value_is_deviations_from_the_mean() -> None:
    z = ZScores.from_entries({("q1", "map"): (0.5, 0.25), ("q1", "P_5"): (0.1, 0.0)})
    assert z.convert("q1", "map", 0.25) == pytest.approx(-1.0)
    assert z.convert("q1", "P_5", 0.1) == 0.0  # zero deviation, value at the mean
    assert z.convert("q1", "P_5", 0.2) == MISSING  # zero deviation, elsewhere
    assert z.convert("q1", "ndcg", 0.2) == MISSING  # no entry
    assert z.convert("q7", "map", 0.2) == MISSING  # no such qid


def test_a_name_past_a_querys_last_is_looked_up_in_the_next_querys_first() -> None:
    """convert_zscores.c searches a query's n entries over n + 1 places: q1 has only P_5, so
    "map" (above it) is compared with q2's first entry, "map", and found there (the binary
    prints 0.5000 for q1's map 0.25 with q2's mean 0.2 and deviation 0.1)."""
    z = ZScores.from_entries(
        {("q1", "P_5"): (0.1, 0.5), ("q2", "map"): (0.2, 0.1), ("q2", "num_rel"): (0.1, 0.5)}
    )
    assert z.convert("q1", "map", 0.25) == pytest.approx(0.5)
    assert z.convert("q1", "num_rel", 2.0) == MISSING  # q2's first is map: not it
    # past the file's last entry trec_eval reads outside its array: not found here
    assert z.convert("q2", "zzz", 1.0) == MISSING
    assert z.convert("q9", "map", 1.0) == MISSING


def test_reader_sorts_by_bytes_and_reports_bad_lines() -> None:
    z = read_zscores(b"# comment\nq2 map 0.2 0.1\n\nq1 P_5 0.1 0.5\n")
    assert z.qids == (b"q1", b"q2")
    with pytest.raises(InvalidInput) as err:
        read_zscores(b"q1 map 0.5\nq1 P_5 x 1\nq1 P_10 1 inf\nq1 map 1 1\nq1 map 2 2\n", source="z")
    text = [str(p) for p in err.value.problems]
    assert text == [
        "line 1: expected 4 fields (qid measure mean stddev), got 3",
        "line 2: mean 'x' is not a number",
        "line 3: stddev 'inf' is not a finite number",
        "line 5: measure 'map' of qid 'q1' is given twice (first on line 4)",
    ]


def _cli(tmp_path: Path, zscores: str, *flags: str) -> tuple[int, str]:
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    (tmp_path / "z").write_text(zscores)
    buf = io.StringIO()
    args = ["evaluate", "--compat", "trec_eval", *flags, "-Z", str(tmp_path / "z")]
    code = cli.main([*args, str(tmp_path / "qrels"), str(tmp_path / "run")], out=buf)
    return code, buf.getvalue()


def test_cli_prints_z_scores_as_trec_eval(tmp_path: Path) -> None:
    """map: q1 (0.25 - 0.5) / 0.25 = -1, q2 (1 - 0.2) / 0.1 = 8: mean 3.5. num_ret: q1 2 with
    (1, 2): 0.5, q2 1 not in the file: -1000000; a count, so summed. gm_map converts
    log(max(AP, 0.00001)): q1 (log 0.25 - log 0.25) / 1 = 0, q2 (log 1 - 0) / 2 = 0, exp(0) = 1.
    num_q stays the number of queries, printed %6.4f."""
    zscores = "q1 map 0.5 0.25\nq2 map 0.2 0.1\nq1 num_ret 1 2\n"
    zscores += f"q1 gm_map {math.log(0.25)} 1\nq2 gm_map 0 2\n"
    code, out = _cli(tmp_path, zscores, "-q", "-m", "map", "-m", "num_ret", "-m", "gm_map")
    assert code == 0, out
    assert out.splitlines() == [
        "Znum_ret               \tq1\t0.5000",
        "Zmap                   \tq1\t-1.0000",
        "Znum_ret               \tq2\t-1000000.0000",
        "Zmap                   \tq2\t8.0000",
        "Znum_ret               \tall\t-999999.5000",
        "Zmap                   \tall\t3.5000",
        "Zgm_map                \tall\t1.0000",
    ]


def test_cli_keeps_runid_num_q_and_relstring_as_they_are(tmp_path: Path) -> None:
    code, out = _cli(
        tmp_path, "q1 map 0 1\n", "-q", "-m", "runid", "-m", "num_q", "-m", "relstring"
    )
    assert code == 0, out
    assert out.splitlines() == [
        "relstring             \tq1\t'01'",
        "relstring             \tq2\t'1'",
        "runid                 \tall\ttag",
        "Znum_q                 \tall\t2.0000",
    ]


def test_cli_refuses_z_scores_outside_trec_eval_output(tmp_path: Path) -> None:
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    (tmp_path / "z").write_text("q1 map 0 1\n")
    buf = io.StringIO()
    files = [str(tmp_path / "qrels"), str(tmp_path / "run")]
    code = cli.main(["evaluate", "-m", "AP", "-Z", str(tmp_path / "z"), *files], out=buf)
    assert code == 2


def test_cli_z_scores_of_judgment_group_measures(tmp_path: Path) -> None:
    """-R qrels_jg: map_avgjg of topic 1 is (AP 1 for group A + AP 1/2 for B) / 2 = 0.75, with
    (0.5, 0.25): 1.0; P_avgjg_5 has no entry: -1000000 (the binary prints the same)."""
    (tmp_path / "qrels").write_text("1 A d1 1\n1 A d2 0\n1 B d1 0\n1 B d2 1\n")
    (tmp_path / "run").write_text("1 Q0 d1 1 2 tag\n1 Q0 d2 2 1 tag\n")
    (tmp_path / "z").write_text("1 map_avgjg 0.5 0.25\n")
    buf = io.StringIO()
    args = ["evaluate", "--compat", "trec_eval", "-q", "-R", "qrels_jg", "-Z", str(tmp_path / "z")]
    measures = ["-m", "num_q", "-m", "map_avgjg", "-m", "P_avgjg.5"]
    code = cli.main([*args, *measures, str(tmp_path / "qrels"), str(tmp_path / "run")], out=buf)
    assert code == 0, buf.getvalue()
    assert buf.getvalue().splitlines() == [
        "Zmap_avgjg             \t1\t1.0000",
        "ZP_avgjg_5             \t1\t-1000000.0000",
        "Znum_q                 \tall\t1.0000",
        "Zmap_avgjg             \tall\t1.0000",
        "ZP_avgjg_5             \tall\t-1000000.0000",
    ]
