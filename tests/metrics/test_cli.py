"""The ``python -m metrics`` command line: output formats, several runs, and exit codes."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
import pytrec_eval

from metrics.cli.app import SUBCOMMANDS, build_parser, main

QRELS = "q1 0 a 1\nq1 0 b 0\nq1 0 c 2\nq2 0 d 1\nq3 0 e 0\n"
RUN_A = "q1 Q0 a 1 3.0 sysA\nq1 Q0 x 2 2.0 sysA\nq1 Q0 c 3 1.0 sysA\nq2 Q0 z 1 1.0 sysA\n"
RUN_B = "q1 Q0 c 1 3.0 sysB\nq1 Q0 a 2 2.0 sysB\nq2 Q0 d 1 1.0 sysB\nq3 Q0 e 1 1.0 sysB\n"


# written by conftest's ``files`` fixture
FILES = {"qrels.txt": QRELS, "a.txt": RUN_A, "b.txt": RUN_B}


def _run(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    code = main(argv, out)
    return code, out.getvalue()


def _lines(text: str) -> list[list[str]]:
    return [line.split("\t") for line in text.splitlines()]


def test_trec_format_matches_trec_eval_layout_and_values(files: dict[str, str]) -> None:
    code, out = _run(
        [
            "evaluate",
            files["qrels"],
            files["a"],
            "-m",
            "map",
            "-m",
            "P.2",
            "-m",
            "num_ret",
            "--compat",
            "trec_eval",
        ]
    )
    assert code == 0
    qrels = {"q1": {"a": 1, "b": 0, "c": 2}, "q2": {"d": 1}, "q3": {"e": 0}}
    run = {"q1": {"a": 3.0, "x": 2.0, "c": 1.0}, "q2": {"z": 1.0}}
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"map", "P_2"}).evaluate(run)
    mean_map = sum(v["map"] for v in ref.values()) / len(ref)
    mean_p2 = sum(v["P_2"] for v in ref.values()) / len(ref)
    # trec_eval's order (its measure table), not the order asked for
    assert out.splitlines() == [
        f"{'num_ret':<22}\tall\t4",
        f"{'map':<22}\tall\t{mean_map:.4f}",
        f"{'P_2':<22}\tall\t{mean_p2:.4f}",
    ]


def test_per_query_lines_come_first_in_byte_order_of_query_ids(files: dict[str, str]) -> None:
    code, out = _run(
        ["evaluate", files["qrels"], files["b"], "-m", "P@1", "-q", "--compat", "trec_eval"]
    )
    assert code == 0
    assert [(r[0].strip(), r[1], r[2]) for r in _lines(out)] == [
        ("P@1", "q1", "1.0000"),
        ("P@1", "q2", "1.0000"),
        ("P@1", "q3", "0.0000"),
        ("P@1", "all", "0.6667"),
    ]


def test_several_runs_are_separated_by_runid_lines(files: dict[str, str]) -> None:
    code, out = _run(["evaluate", files["qrels"], files["a"], files["b"], "-m", "RR"])
    assert code == 0
    rows = [(r[0].strip(), r[1], r[2]) for r in _lines(out)]
    assert ("runid", "all", "sysA") in rows and ("runid", "all", "sysB") in rows
    assert rows.index(("runid", "all", "sysA")) < rows.index(("runid", "all", "sysB"))


def test_honest_trec_output_adds_companions_and_treatments(
    files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _run(["evaluate", files["qrels"], files["a"], "-m", "R@2"])
    assert code == 0
    labels = [r[0].strip() for r in _lines(out)]
    assert labels == ["R@2", "Judged@2", "ceiling@2", "R@2:condensed", "R@2:upper"]
    err = capsys.readouterr().err
    assert "honest mode, macro average, CIs with --format json|csv, 2 queries" in err
    assert "1 of 3 queries excluded: no relevant documents" in err


def test_json_output_carries_tag_mode_averaging_intervals_and_exclusions(
    files: dict[str, str],
) -> None:
    code, out = _run(
        ["evaluate", files["qrels"], files["a"], files["b"], "-m", "nDCG@2", "--format", "json"]
    )
    assert code == 0
    doc = json.loads(out)
    assert [r["run"] for r in doc["runs"]] == ["sysA", "sysB"]
    first = doc["runs"][0]
    assert first["mode"] == "honest" and first["average"] == "macro"
    agg = first["measures"]["nDCG@2"]
    assert agg["ci_method"] == "bootstrap"
    assert agg["ci_low"] <= agg["value"] <= agg["ci_high"]
    assert first["excluded"] == [{"qid": "q3", "reason": "no relevant documents"}]


def test_csv_output_has_one_row_per_aggregate_query_and_exclusion(files: dict[str, str]) -> None:
    code, out = _run(["evaluate", files["qrels"], files["a"], "-m", "P@2", "-q", "--format", "csv"])
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    agg = [r for r in rows if r["measure"] == "P@2" and r["query"] == "all" and not r["treatment"]]
    assert len(agg) == 1 and agg[0]["run"] == "sysA" and agg[0]["ci_method"] == "bootstrap"
    assert {r["treatment"] for r in rows if r["measure"] == "P@2"} == {
        "",
        "lower",
        "condensed",
        "upper",
    }
    assert [r["note"] for r in rows if r["measure"] == "excluded"] == ["no relevant documents"]
    judged = [r for r in rows if r["measure"] == "Judged@2" and r["query"] == "all"]
    assert judged[0]["note"] == "judged of P@2"


def test_compare_prints_a_holm_corrected_table(files: dict[str, str]) -> None:
    code, out = _run(
        [
            "compare",
            files["qrels"],
            files["a"],
            files["b"],
            "-m",
            "RR",
            "--test",
            "t",
            "--format",
            "json",
        ]
    )
    assert code == 0
    doc = json.loads(out)
    (row,) = doc["tables"][0]["rows"]
    assert (row["run_a"], row["run_b"]) == ("sysA", "sysB")
    assert row["mean_a"] == pytest.approx(0.5)  # q1: 1, q2: 0
    assert row["mean_b"] == pytest.approx(1.0)
    assert 0.0 <= row["p_value"] <= row["p_holm"] <= 1.0
    code, text = _run(["compare", files["qrels"], files["a"], files["b"], "-m", "RR"])
    assert code == 0 and text.startswith("RR (randomization test, 2 queries, Holm)")


def test_usage_error_exits_2() -> None:
    assert _run(["evaluate"])[0] == 2
    assert _run(["frobnicate"])[0] == 2


def test_bad_run_file_exits_3_naming_file_line_and_problem(
    files: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("q1 Q0 a 1 3.0 t\nq1 Q0 b 2 oops t\n")
    code, _ = _run(["evaluate", files["qrels"], str(bad), "-m", "AP"])
    assert code == 3
    assert f"{bad} line 2: score 'oops' is not a number" in capsys.readouterr().err


def test_a_bad_run_after_good_ones_prints_nothing(
    files: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # runs are evaluated one by one as they are read; the output waits for the last of them
    bad = tmp_path / "bad.txt"
    bad.write_text("q1 Q0 a 1 3.0 t\nq1 Q0 a 2 2.0 t\n")
    for command in ("evaluate", "compare"):
        argv = [command, files["qrels"], files["a"], files["b"], str(bad), "-m", "AP"]
        code, out = _run(argv)
        assert (code, out) == (3, "")
        assert f"{bad} line 2:" in capsys.readouterr().err


def test_missing_file_exits_3(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = _run(["evaluate", files["qrels"], "/nonexistent/run.txt", "-m", "AP"])
    assert code == 3
    assert "/nonexistent/run.txt" in capsys.readouterr().err


def test_unknown_measure_exits_4_with_close_matches(
    files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = _run(["evaluate", files["qrels"], files["a"], "-m", "ndgc@10"])
    assert code == 4
    assert "nDCG@10" in capsys.readouterr().err


DIVERSITY_NAMES = [
    "alpha_nDCG@20", "alpha-nDCG@20", "alpha_nDCG(alpha=0.5)@20", "\u03b1-nDCG@20", "alpha_DCG@5",
    "ERR-IA@20", "ERR_IA@20", "nERR-IA@10", "nERR_IA@10", "P-IA@10", "P_IA@10", "strec@20",
    "StRecall@20", "alpha_nDCG",
]  # fmt: skip


@pytest.mark.parametrize("name", DIVERSITY_NAMES)
def test_a_diversity_measure_names_the_diversity_subcommand_and_its_qrels(
    name: str, files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = _run(["evaluate", files["qrels"], files["a"], "-m", name])
    assert code == 4
    err = capsys.readouterr().err
    assert f"{name} is a diversity measure" in err
    assert "python -m metrics diversity SUBTOPIC_QRELS RUN" in err
    assert "topic subtopic docno grade" in err  # the subtopic qrels' lines
    assert "close matches" not in err  # nDCG@10 is no match for alpha_nDCG@20
    check = ["check", files["qrels"], files["a"], "--baseline", files["b"], "--max-drop", "0.01"]
    code, _ = _run([*check, "-m", name])
    assert code == 4 and f"{name} is a diversity measure" in capsys.readouterr().err


def test_subcommands_are_registered_through_a_list() -> None:
    parser = build_parser()
    assert len(SUBCOMMANDS) >= 2
    help_text = parser.format_help()
    assert "evaluate" in help_text and "compare" in help_text


def test_python_dash_m_metrics_runs(files: dict[str, str]) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "metrics",
            "evaluate",
            files["qrels"],
            files["b"],
            "-m",
            "P_1",
            "--compat",
            "trec_eval",
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"{'P_1':<22}\tall\t0.6667\n"


def _imported_by_cli(argv: list[str]) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run ``python -X importtime -m metrics ARGV`` in a fresh process; the modules it imported."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "metrics", *argv],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(__file__).resolve().parents[2],
    )
    modules = {
        line.rsplit("|", 1)[1].strip()
        for line in proc.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    return proc, modules


@pytest.mark.parametrize(
    "options",
    [[], ["--ci", "none"], ["--compat", "trec_eval"], ["--format", "json"]],
    ids=["default-bootstrap", "no-ci", "trec_eval", "json"],
)
def test_evaluate_does_not_import_scipy_or_the_analyses(
    files: dict[str, str], options: list[str]
) -> None:
    # the bootstrap interval (the default) is numpy only; scipy costs ~0.6 s of imports per call
    proc, modules = _imported_by_cli(["evaluate", files["qrels"], files["a"], "-m", "AP", *options])
    assert proc.returncode == 0, proc.stderr
    assert "metrics" in modules and "numpy" in modules  # the probe sees imports at all
    heavy = {m for m in modules if m.split(".")[0] in ("scipy", "statsmodels", "krippendorff")}
    assert not heavy
    assert not modules & {"metrics.bias", "metrics.bias.estimators", "metrics.judges.agreement"}


def test_t_intervals_and_t_tests_still_import_scipy_and_work(files: dict[str, str]) -> None:
    argv = ["evaluate", files["qrels"], files["a"], "-m", "AP", "--ci", "t", "--format", "json"]
    proc, modules = _imported_by_cli(argv)
    assert proc.returncode == 0, proc.stderr
    assert "scipy.stats" in modules
    agg = json.loads(proc.stdout)["runs"][0]["measures"]["AP"]
    assert agg["ci_method"] == "t" and agg["ci_low"] < agg["value"] < agg["ci_high"]
    proc, modules = _imported_by_cli(
        ["compare", files["qrels"], files["a"], files["b"], "-m", "P@1", "--test", "t"]
    )
    assert proc.returncode == 0, proc.stderr
    assert "scipy.stats" in modules and "P@1 (t test" in proc.stdout
