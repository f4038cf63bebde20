"""``python -m metrics bias estimators`` (and the bias dispatcher), in-process and in a fresh
process; the old ``bias QRELS RUN...`` form keeps working; ``evaluate`` does not load scipy."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from metrics import Qrels, Run, write_qrels, write_run
from metrics.bias.estimators import estimator_report
from metrics.bias.leaveout import LeaveOut
from metrics.cli.app import main

ROOT = Path(__file__).resolve().parents[2]

# the hand-worked collection of test_bias_estimators (Webber & Park): P@2 at depth 2
QRELS = {"1": {"d1": 1, "d2": 0, "d3": 1, "d4": 1, "d5": 0, "d6": 1}}
RANKINGS = {
    "A": ["d1", "d2", "d3"],
    "B": ["d1", "d3", "d4"],
    "C": ["d4", "d5", "d1"],
    "N": ["d6", "d3", "d1"],
}


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, list[Path], Path]:
    qrels = tmp_path / "qrels.txt"
    write_qrels(Qrels.from_dict(QRELS), qrels)
    runs = []
    for tag, docs in RANKINGS.items():
        path = tmp_path / f"{tag}.run"
        run = Run.from_dict({"1": {d: float(3 - i) for i, d in enumerate(docs)}}, tag=tag)
        write_run(run, path)
        runs.append(path)
    groups = tmp_path / "runs.tsv"
    groups.write_text("run\tgroup\nA\tga\nB\tgb\nC\tgc\nN\tgn\n")
    return qrels, runs, groups


def _main(argv: list[str]) -> tuple[int, str]:
    buf = io.StringIO()
    code = main(argv, out=buf)
    return code, buf.getvalue()


def test_estimators_json(files: tuple[Path, list[Path], Path]) -> None:
    qrels, runs, _ = files
    code, text = _main(
        [
            "bias",
            "estimators",
            str(qrels),
            *map(str, runs),
            "--depth",
            "2",
            "-m",
            "P@2",
            "--not-pooled",
            "N",
        ]
    )
    assert code == 0
    d = json.loads(text)
    assert d["measure"] == "P@2" and d["depth"] == 2 and d["leave_out"] == "run"
    assert set(d["estimators"]) == {
        "pool",
        "webber_park",
        "lipani2015",
        "lipani2016",
        "condensed",
        "upper",
    }
    for e in d["estimators"].values():
        assert {"mae", "sre", "sre_star", "kendall_tau"} <= set(e)
    # the hand-worked values (test_bias_estimators.test_webber_park_and_pool_by_hand)
    assert d["runs"]["A"]["webber_park"] == 1.25
    assert d["runs"]["B"] == {**d["runs"]["B"], "score": 0.5, "score_full_pool": 1.0}
    assert d["estimators"]["webber_park"]["mae"] == pytest.approx(1 / 3)
    assert d["not_pooled"]["N"]["estimates"]["webber_park"]["estimate"] == pytest.approx(5 / 6)
    # the same as the library call
    lib = estimator_report(
        Qrels.from_dict(QRELS),
        {
            t: Run.from_dict({"1": {x: float(3 - i) for i, x in enumerate(v)}}, tag=t)
            for t, v in RANKINGS.items()
        },
        "P@2",
        LeaveOut(depth=2, leave_out="group", pooled=["A", "B", "C"]),
    ).to_dict()
    assert d == json.loads(json.dumps(lib))


def test_estimators_groups_and_tsv(
    files: tuple[Path, list[Path], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    qrels, runs, groups = files
    code, text = _main(
        [
            "bias",
            "estimators",
            str(qrels),
            *map(str, runs),
            "--depth",
            "2",
            "-m",
            "AP",
            "--groups",
            str(groups),
            "--format",
            "tsv",
        ]
    )
    assert code == 0
    lines = text.splitlines()
    assert lines[0].split("\t") == [
        "estimator",
        "applicable",
        "mae",
        "sre",
        "sre_star",
        "kendall_tau",
        "n_runs",
        "why",
    ]
    rows = {ln.split("\t")[0]: ln.split("\t") for ln in lines[1:]}
    assert rows["lipani2015"][1] == "no" and rows["lipani2015"][-1] == "P@k only"
    assert rows["webber_park"][1] == "yes"
    err = capsys.readouterr().err
    assert "leave-one-group-out over 4 units" in err and "recommended" in err


def test_estimators_bad_input(files: tuple[Path, list[Path], Path]) -> None:
    qrels, runs, _ = files
    base = ["bias", "estimators", str(qrels), *map(str, runs)]
    assert _main([*base, "--not-pooled", "nope"])[0] == 3
    assert _main([*base, "-m", "PP@2"])[0] == 4
    assert _main([*base, "--depth", "0"])[0] == 2
    assert _main([*base, "--leave-one-out", "group"])[0] == 2
    assert _main([*base, "--topics", "5-x"])[0] == 2
    assert _main([*base, "--estimators", "nope"])[0] == 2
    assert _main([*base, "--not-pooled", "A,B,C"])[0] == 2  # one unit left: nothing to validate
    assert _main(["bias", "estimators"])[0] == 2


def test_old_form_still_works(files: tuple[Path, list[Path], Path]) -> None:
    qrels, runs, _ = files
    code, text = _main(["bias", str(qrels), *map(str, runs), "--depth", "2", "-m", "P@2"])
    assert code == 0
    d = json.loads(text)
    # every run pooled (N's top 2 adds d6 and d3): C's d4 and d5 are its own
    assert d["runs"]["C"]["score"] == 0.5 and d["runs"]["C"]["score_without"] == 0.0


def test_compare_and_reusability_are_dispatched(monkeypatch: pytest.MonkeyPatch) -> None:
    import types

    from metrics.cli import bias as bias_cli

    seen: list[tuple[str, list[str]]] = []
    fake = types.ModuleType("metrics.cli.bias_compare")

    def run_compare(argv: list[str], out: io.StringIO) -> int:
        seen.append(("compare", argv))
        return 0

    def run_reusability(argv: list[str], out: io.StringIO) -> int:
        seen.append(("reusability", argv))
        return 3

    fake.run_compare = run_compare  # type: ignore[attr-defined]
    fake.run_reusability = run_reusability  # type: ignore[attr-defined]
    monkeypatch.setattr(bias_cli, "_compare_module", lambda: fake)
    assert _main(["bias", "compare", "a", "b", "--x"])[0] == 0
    assert _main(["bias", "reusability", "q", "r"])[0] == 3
    assert seen == [("compare", ["a", "b", "--x"]), ("reusability", ["q", "r"])]


def test_compare_without_its_module_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from metrics.cli import bias as bias_cli

    monkeypatch.setattr(bias_cli, "_compare_module", lambda: None)
    assert _main(["bias", "compare", "a", "b"])[0] == 2
    err = capsys.readouterr().err
    assert "python -m metrics bias compare: error:" in err
    assert "metrics.cli.bias_compare is not installed" in err


def test_fresh_process_and_evaluate_does_not_load_scipy(
    files: tuple[Path, list[Path], Path],
) -> None:
    qrels, runs, _ = files
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "metrics",
            "bias",
            "estimators",
            str(qrels),
            *map(str, runs),
            "--depth",
            "2",
            "-m",
            "P@2",
            "--not-pooled",
            "N",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=False,
    )
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["runs"]["A"]["webber_park"] == 1.25
    probe = (
        "import sys\nfrom metrics.cli.app import main\nmain(['evaluate', '--help'])\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy' "
        "or m in ('metrics.bias', 'metrics.stats', 'metrics.bias.estimators')))"
    )
    res = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=False,
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip().splitlines()[-1] == "[]"
