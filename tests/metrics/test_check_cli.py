"""``python -m metrics check``: the table and its PASS/FAIL line, JSON, exit codes (0 pass,
1 regression, 2 usage, 3 bad file, 4 unknown measure), and on Robust 2003 in a fresh process: a
run passes against a weaker baseline and fails against a stronger one, with the delta and p that
``metrics.stats.paired.paired_test`` gives on ``python -m metrics evaluate -q``'s per-query
values."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
import scipy.stats

from metrics.cli.app import main
from metrics.stats.paired import paired_test
from tests._shared_data import needs_shared_data

REPO = Path(__file__).resolve().parents[2]
QIDS = [f"q{i:02d}" for i in range(1, 21)]


def _run_lines(tag: str, worse: int) -> str:
    """One line pair per query; the non-relevant document first on the first ``worse``."""
    lines = []
    for i, q in enumerate(QIDS):
        first, second = (f"n{q}", f"r{q}") if i < worse else (f"r{q}", f"n{q}")
        lines += [f"{q} Q0 {first} 1 2.0 {tag}", f"{q} Q0 {second} 2 1.0 {tag}"]
    return "\n".join(lines) + "\n"


# written by conftest's ``files`` fixture
FILES = {
    "qrels.txt": "".join(f"{q} 0 r{q} 1\n{q} 0 n{q} 0\n" for q in QIDS),
    "base.txt": _run_lines("base", 0),
    "worse.txt": _run_lines("new", 10),
    "slightly.txt": _run_lines("new", 1),
    "bad_run.txt": "q01 Q0 d 1 notascore sys\n",
    "bad_qrels.txt": "q01 0 d1 1\nq01 0 d2\n",
}


def _check(args: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    code = main(["check", *args], out)
    return code, out.getvalue()


def test_a_significant_drop_exits_1_with_the_table_and_a_fail_line(
    files: dict[str, str],
) -> None:
    code, out = _check(
        [
            files["qrels"],
            files["worse"],
            "--baseline",
            files["base"],
            "-m",
            "P@1",
            "-m",
            "P@2",
            "--max-drop",
            "0.01",
        ]
    )
    assert code == 1
    lines = out.splitlines()
    p = float(scipy.stats.ttest_rel([0.0] * 10 + [1.0] * 10, [1.0] * 20).pvalue)
    assert lines[-1] == f"FAIL: P@1 dropped 0.5 (p = {p:.2g})"
    header = next(line for line in lines if line.startswith("measure"))
    for column in ("baseline", "run", "delta", "95% CI", "p", "judged@k run/baseline", "verdict"):
        assert column in header
    p1 = next(line for line in lines if line.startswith("P@1 "))
    assert "1.0000" in p1 and "0.5000" in p1 and "-0.5000" in p1 and p1.endswith("fail")
    assert "Judged@1 1.0000/1.0000" in p1
    p2 = next(line for line in lines if line.startswith("P@2 "))
    assert p2.endswith("pass")  # both documents in the top 2 either way
    assert "# paired t test, alpha 0.05, no correction across the 2 measures" in out
    assert "macro average over 20 queries" in out


def test_a_gain_and_a_drop_within_the_threshold_exit_0_with_pass(files: dict[str, str]) -> None:
    code, out = _check(
        [
            files["qrels"],
            files["base"],
            "--baseline",
            files["worse"],
            "-m",
            "nDCG@5",
            "--max-drop",
            "0.01",
        ]
    )
    assert code == 0 and out.splitlines()[-1] == "PASS"
    code, out = _check(
        [
            files["qrels"],
            files["slightly"],
            "--baseline",
            files["base"],
            "-m",
            "P@1",
            "--max-drop",
            "10%",
        ]
    )
    assert code == 0 and out.splitlines()[-1] == "PASS"


def test_a_drop_that_is_not_significant_warns_and_exits_0(files: dict[str, str]) -> None:
    code, out = _check(
        [
            files["qrels"],
            files["slightly"],
            "--baseline",
            files["base"],
            "-m",
            "P@1",
            "--max-drop",
            "0.01",
        ]
    )
    assert code == 0
    assert out.splitlines()[-1].startswith("PASS (warning: P@1 dropped 0.05 (p = 0.330")
    assert "drop-not-significant" in out


def test_json_carries_passed_verdict_and_every_row(files: dict[str, str]) -> None:
    code, out = _check(
        [
            files["qrels"],
            files["worse"],
            "--baseline",
            files["base"],
            "-m",
            "P@1",
            "--max-drop",
            "0.01",
            "--format",
            "json",
            "--test",
            "randomization",
        ]
    )
    assert code == 1
    doc = json.loads(out)
    assert doc["passed"] is False and doc["verdict"] == "fail" and doc["test"] == "randomization"
    assert doc["qrels"] == files["qrels"] and doc["n_queries"] == 20
    (row,) = doc["measures"]
    assert row["measure"] == "P@1" and row["delta"] == -0.5 and row["verdict"] == "fail"
    assert row["judged_measure"] == "Judged@1"


@pytest.mark.parametrize(
    ("which", "needle"),
    [("bad_run", "bad_run.txt line 1"), ("bad_qrels", "bad_qrels.txt line 2")],
)
def test_a_bad_file_exits_3_naming_file_and_line(
    files: dict[str, str], capsys: pytest.CaptureFixture[str], which: str, needle: str
) -> None:
    qrels = files["bad_qrels"] if which == "bad_qrels" else files["qrels"]
    run = files["bad_run"] if which == "bad_run" else files["worse"]
    code, _ = _check([qrels, run, "--baseline", files["base"], "-m", "P@1", "--max-drop", "0"])
    assert code == 3
    assert needle in capsys.readouterr().err


def test_a_missing_file_exits_3(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = _check(
        [
            files["qrels"],
            files["worse"],
            "--baseline",
            "/nonexistent.run",
            "-m",
            "P@1",
            "--max-drop",
            "0",
        ]
    )
    assert code == 3 and "/nonexistent.run" in capsys.readouterr().err


def test_an_unknown_measure_exits_4(
    files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = _check(
        [
            files["qrels"],
            files["worse"],
            "--baseline",
            files["base"],
            "-m",
            "nDCG@x",
            "--max-drop",
            "0.01",
        ]
    )
    assert code == 4 and "nDCG@x" in capsys.readouterr().err


@pytest.mark.parametrize(
    "args",
    [
        ["-m", "P@1", "--max-drop", "0.01"],  # no --baseline
        ["--baseline", "B", "--max-drop", "0.01"],  # no measure
        ["--baseline", "B", "-m", "P@1"],  # no --max-drop
        ["--baseline", "B", "-m", "P@1", "--max-drop", "lots"],
        ["--baseline", "B", "-m", "P@1", "--max-drop", "-1"],
        ["--baseline", "B", "-m", "P@1", "--max-drop", "0.01", "--test", "wilcoxon"],
        ["--baseline", "B", "-m", "P@1", "--max-drop", "0.01", "--min-judged", "2"],
    ],
)
def test_usage_errors_exit_2(files: dict[str, str], args: list[str]) -> None:
    args = [a if a != "B" else files["base"] for a in args]
    code, _ = _check([files["qrels"], files["worse"], *args])
    assert code == 2


def test_a_bad_alpha_exits_2(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = _check(
        [
            files["qrels"],
            files["worse"],
            "--baseline",
            files["base"],
            "-m",
            "P@1",
            "--max-drop",
            "0.01",
            "--alpha",
            "1.5",
        ]
    )
    assert code == 2 and "alpha" in capsys.readouterr().err


def _fresh(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "metrics", *argv],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
    )


def test_python_dash_m_metrics_check_exits_with_the_verdict(files: dict[str, str]) -> None:
    fail = _fresh(
        [
            "check",
            files["qrels"],
            files["worse"],
            "--baseline",
            files["base"],
            "-m",
            "P@1",
            "--max-drop",
            "0.01",
        ]
    )
    assert fail.returncode == 1, fail.stderr
    assert fail.stdout.splitlines()[-1].startswith("FAIL: P@1 dropped 0.5")


def test_the_randomization_check_does_not_import_scipy(files: dict[str, str]) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-X",
            "importtime",
            "-m",
            "metrics",
            "check",
            files["qrels"],
            files["worse"],
            "--baseline",
            files["base"],
            "-m",
            "P@1",
            "--max-drop",
            "0.01",
            "--test",
            "randomization",
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
    )
    assert proc.returncode == 1
    assert "scipy" not in proc.stderr


# --------------------------------------------------------------------------------------------
# Robust 2003: official MAP pircRBa1 0.3101 > uic0301 0.2404 > humR03dc 0.1248


def _per_query(qrels: Path, run: Path, measure: str) -> dict[str, float]:
    proc = _fresh(["evaluate", str(qrels), str(run), "-m", measure, "-q", "--format", "json"])
    assert proc.returncode == 0, proc.stderr
    values: dict[str, float] = json.loads(proc.stdout)["runs"][0]["per_query"][measure]
    return values


@pytest.mark.data
@needs_shared_data("robust03")
def test_robust_2003_passes_against_a_weaker_baseline_and_fails_against_a_stronger(
    shared_data: Path,
) -> None:
    root = shared_data / "robust03"
    qrels, runs = root / "qrels.txt", root / "runs"
    new, weaker, stronger = (runs / f"input.{t}.gz" for t in ("uic0301", "humR03dc", "pircRBa1"))
    measures = ["-m", "AP", "-m", "nDCG@10", "-m", "P@10"]
    passed = _fresh(
        [
            "check",
            str(qrels),
            str(new),
            "--baseline",
            str(weaker),
            *measures,
            "--max-drop",
            "0.01",
            "--format",
            "json",
        ]
    )
    assert passed.returncode == 0, passed.stderr
    assert json.loads(passed.stdout)["passed"] is True
    failed = _fresh(
        [
            "check",
            str(qrels),
            str(new),
            "--baseline",
            str(stronger),
            *measures,
            "--max-drop",
            "0.01",
            "--format",
            "json",
        ]
    )
    assert failed.returncode == 1, failed.stderr
    doc = json.loads(failed.stdout)
    assert doc["passed"] is False and doc["n_queries"] == 100
    rows = {m["measure"]: m for m in doc["measures"]}
    assert rows["AP"]["baseline"] == pytest.approx(0.3101, abs=5e-5)  # the official MAP
    assert rows["AP"]["run"] == pytest.approx(0.2404, abs=5e-5)
    # the same delta and p as the paired t test on evaluate -q's per-query values
    for measure in ("AP", "nDCG@10"):
        a = _per_query(qrels, new, measure)
        b = _per_query(qrels, stronger, measure)
        assert set(a) == set(b) and len(a) == 100
        qids = sorted(a)
        expected = paired_test([a[q] for q in qids], [b[q] for q in qids], test="t")
        assert rows[measure]["delta"] == pytest.approx(expected.mean_diff, abs=1e-12)
        assert rows[measure]["p_value"] == pytest.approx(expected.p_value, rel=1e-9)
        assert rows[measure]["verdict"] == "fail"


def test_a_correction_across_measures_is_named_and_shown_beside_p(files: dict[str, str]) -> None:
    code, out = _check(
        [
            files["qrels"],
            files["worse"],
            "--baseline",
            files["base"],
            "-m",
            "P@1",
            "-m",
            "nDCG@5",
            "--max-drop",
            "0.01",
            "--correction",
            "holm",
        ]
    )
    assert code == 1
    assert "# paired t test, alpha 0.05, holm correction across the 2 measures" in out
    header = next(line for line in out.splitlines() if line.startswith("measure"))
    assert " p " in header and " p_holm " in header
    assert ", holm = " in out.splitlines()[-1]
