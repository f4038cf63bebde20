"""BEIR's qrels TSV and JSON runs ``{qid: {docid: score}}``: read, validated whole, written
byte-stably, and accepted by ``python -m metrics`` wherever TREC files are (issue 33, point 3)."""

from __future__ import annotations

import gzip
import io
import math
from pathlib import Path

import pytest

from metrics.cli.app import main
from metrics.io import InvalidInput, Run, read_qrels, read_run, write_run
from metrics.io.beir import looks_like_beir_qrels, read_beir_qrels, write_beir_qrels
from metrics.io.jsonrun import looks_like_json, read_json_run, write_json_run

BEIR = b"query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td3\t2\nq2\td2\t0\nq2\td9\t1\n"
TREC_QRELS = b"q1 0 d1 1\nq1 0 d3 2\nq2 0 d2 0\nq2 0 d9 1\n"
TREC_RUN = b"""q1 Q0 d3 1 2.5 sys
q1 Q0 d7 2 1.5 sys
q1 Q0 d1 3 0.5 sys
q2 Q0 d9 1 3.0 sys
q2 Q0 d2 2 2.0 sys
"""
JSON_RUN = b'{"q1": {"d3": 2.5, "d7": 1.5, "d1": 0.5}, "q2": {"d9": 3, "d2": 2}}'


def test_beir_qrels_read_as_trec_qrels_and_round_trip_byte_for_byte() -> None:
    got = read_beir_qrels(BEIR)
    assert got.to_dict() == read_qrels(TREC_QRELS).to_dict()
    assert read_beir_qrels(BEIR.split(b"\n", 1)[1]).to_dict() == got.to_dict()  # no header
    out = io.BytesIO()
    write_beir_qrels(got, out)
    assert out.getvalue() == BEIR
    again = io.BytesIO()
    write_beir_qrels(read_beir_qrels(out.getvalue()), again)
    assert again.getvalue() == out.getvalue()
    assert read_beir_qrels(gzip.compress(BEIR)).to_dict() == got.to_dict()


def test_the_layouts_are_told_apart_by_their_content() -> None:
    assert looks_like_beir_qrels(BEIR) and looks_like_beir_qrels(b"q1\td1\t1\n")
    assert not looks_like_beir_qrels(TREC_QRELS)
    assert not looks_like_beir_qrels(b"q1\t0\td1\t1\n")  # TREC with tabs: four fields
    assert looks_like_json(b"\xef\xbb\xbf  \n" + JSON_RUN) and looks_like_json(
        gzip.compress(JSON_RUN)
    )
    assert not looks_like_json(TREC_RUN)


def test_every_bad_beir_line_is_named() -> None:
    bad = (
        b"query-id\tcorpus-id\tscore\n"
        b"q1\td1\n"  # 2: two fields
        b"q1\td2\thigh\n"  # 3: not an integer
        b"q1\td 3\t1\n"  # 4: white space in an id
        b"q1\td4\t1\n"
        b"q1\td4\t2\n"  # 6: judged twice
    )
    with pytest.raises(InvalidInput) as e:
        read_beir_qrels(bad, source="test.tsv")
    lines = {p.line: p.message for p in e.value.problems}
    assert sorted(lines) == [2, 3, 4, 6]
    assert "2 tab-separated field(s)" in lines[2]
    assert "'high' is not an integer" in lines[3]
    assert "white space" in lines[4]
    assert "judged twice (first on line 5)" in lines[6]
    assert str(e.value).startswith("test.tsv line 2:")
    with pytest.raises(InvalidInput, match="no judgments"):
        read_beir_qrels(b"query-id\tcorpus-id\tscore\n")


def test_a_json_run_is_the_trec_run_and_writes_back_the_same_bytes() -> None:
    run = read_json_run(JSON_RUN)
    trec = read_run(TREC_RUN)
    for qid in ("q1", "q2"):
        assert run.ranking(qid) == trec.ranking(qid)
        assert run.scores_of(qid) == trec.scores_of(qid)
    out = io.BytesIO()
    write_json_run(run, out)
    again = io.BytesIO()
    write_json_run(read_json_run(out.getvalue()), again)
    assert again.getvalue() == out.getvalue()
    assert read_json_run(out.getvalue()).to_dict() == run.to_dict()


def test_json_scores_read_as_a_files_are_and_odd_ones_are_said() -> None:
    run = read_json_run(b'{"q1": {"a": "NaN", "b": "-Infinity", "c": 1e400, "d": 1}}')
    scores = run.scores_of("q1")
    assert math.isnan(scores["a"]) and scores["b"] == -math.inf and scores["c"] == math.inf
    assert run.ranking("q1") == ["c", "d", "b", "a"]  # NaN last, as trec_eval ranks it
    said = {w.message: w.total for w in run.warnings}
    assert sum(said.values()) == 3 and all(w.lines == () for w in run.warnings)
    out = io.BytesIO()
    write_json_run(run, out)
    back = read_json_run(out.getvalue()).scores_of("q1")
    assert math.isnan(back["a"]) and back["b"] == -math.inf and back["c"] == math.inf


def test_every_json_problem_is_named_by_where_it_is() -> None:
    bad = b'{"q1": {"a": "high", "b c": 1, "d": true}, "q 2": {"x": 1}, "q3": [1], "q1": {}}'
    with pytest.raises(InvalidInput) as e:
        read_json_run(bad, source="run.json")
    where = {p.location: p.message for p in e.value.problems}
    assert "is not a number" in where["run.q1.a"] and "is not a number" in where["run.q1.d"]
    assert "white space" in where["run.q1.b c"]
    assert "given twice" in where["run.q1"]
    assert "must be an object" in where["run.q3"]
    assert "a topic id must be non-empty" in where["run"]
    with pytest.raises(InvalidInput, match=r"not JSON: .* \(column"):
        read_json_run(b'{"q1": {"a": 1,}}')
    with pytest.raises(InvalidInput, match="must be a non-empty object"):
        read_json_run(b"[]")
    with pytest.raises(InvalidInput, match="no results"):
        read_json_run(b'{"q1": {}}')
    with pytest.raises(InvalidInput, match="read whole: over 10 bytes"):
        read_json_run(JSON_RUN, max_bytes=10)


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_the_cli_evaluates_beir_qrels_and_json_runs_as_their_trec_forms(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = {
        "qrels.trec": TREC_QRELS,
        "test.tsv": BEIR,
        "run.trec": TREC_RUN,
        "run.json": JSON_RUN,
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    p = {name: str(tmp_path / name) for name in files}
    measures = ["-m", "map", "-m", "ndcg_cut.5", "-m", "recip_rank", "-m", "recall.5", "-q"]
    code, want, _ = _cli(["evaluate", *measures, p["qrels.trec"], p["run.trec"]], capsys)
    assert code == 0 and "map" in want
    code, got, _ = _cli(["evaluate", *measures, p["test.tsv"], p["run.json"]], capsys)
    assert code == 0
    # the JSON run has no tag: its path names it where the TREC run's tag did
    assert got.replace(p["run.json"], "sys") == want


def test_a_json_run_from_the_trec_writer_round_trip(tmp_path: Path) -> None:
    run = Run.from_dict({"q1": {"a": 0.25, "b": 0.5}, "q2": {"c": 1.0}}, tag="t")
    write_run(run, tmp_path / "r.trec")
    write_json_run(read_run(tmp_path / "r.trec"), tmp_path / "r.json")
    assert read_json_run(tmp_path / "r.json").to_dict() == run.to_dict()
