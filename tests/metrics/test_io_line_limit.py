"""The readers' default line-length limit (issue 29, point 22).

A run with a 1 MB docid once cost the library about 2 GB and 9 s (every docid of the file was
stored as wide as the widest) where the service refused it at once. The readers now refuse a
line over ``DEFAULT_LINE_BYTES`` (64 KiB, the service's default) by default, naming the line and
its length, without gathering the line; ``limits`` overrides it in the library,
``--max-line-length`` on the command line (0: no limit).
"""

from __future__ import annotations

import gzip
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest

from metrics.io import DEFAULT_LINE_BYTES, NO_LIMITS, InvalidInput, Limits, read_qrels, read_run

MB = 1 << 20
ROOT = Path(__file__).resolve().parents[2]


def _run_with_wide_docid(width: int, rows: int = 2000) -> bytes:
    """``rows`` ordinary lines, the second one's docid ``width`` bytes long."""
    lines = [f"{q} Q0 d{i} {i + 1} {rows - i}.5 tag" for q in (1, 2) for i in range(rows // 2)]
    lines[1] = f"1 Q0 {'x' * width} 2 7.5 tag"
    return ("\n".join(lines) + "\n").encode()


def _problems(exc: pytest.ExceptionInfo[InvalidInput]) -> list[tuple[int, str]]:
    return [(p.line, p.message) for p in exc.value.problems]


def test_a_1_mb_docid_is_refused_by_default_naming_the_line_and_its_length() -> None:
    data = _run_with_wide_docid(MB)
    length = len(f"1 Q0 {'x' * MB} 2 7.5 tag")
    tracemalloc.start()
    started = time.process_time()
    with pytest.raises(InvalidInput) as exc:
        read_run(data)
    elapsed = time.process_time() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert _problems(exc) == [
        (2, f"the line is {length:,} bytes long; the limit is {DEFAULT_LINE_BYTES:,}")
    ]
    assert DEFAULT_LINE_BYTES == 64 * 1024
    # was 4 GB and 11 s of wall clock (2,000 docids stored 1 MB wide); the bounds are generous
    assert peak < 32 * MB, peak
    assert elapsed < 2.0, elapsed


def test_qrels_have_the_same_default_limit() -> None:
    wide = f"1 0 {'y' * MB} 0"
    with pytest.raises(InvalidInput) as exc:
        read_qrels(f"1 0 a 1\n{wide}\n2 0 b 1\n".encode())
    assert _problems(exc) == [(2, f"the line is {len(wide):,} bytes long; the limit is 65,536")]


def test_a_line_cut_while_read_still_has_its_whole_length_named() -> None:
    # 3 MB: the line spans several of the reader's 1 MB pieces, the rest dropped as it is read;
    # gzip, CRLF (the CR is not counted) and no line end at the end of the file
    wide = f"1 Q0 {'z' * (3 * MB)} 2 1.0 t"
    with pytest.raises(InvalidInput) as exc:
        read_run(gzip.compress(f"1 Q0 d1 1 2.0 t\r\n{wide}\r\n2 Q0 d2 1 1.0 t\r\n".encode()))
    assert _problems(exc) == [(2, f"the line is {len(wide):,} bytes long; the limit is 65,536")]
    tail = "1 Q0 " + "w" * (3 * MB)
    with pytest.raises(InvalidInput) as exc:
        read_run(f"1 Q0 d1 1 2.0 t\n{tail}".encode())
    assert _problems(exc) == [(2, f"the line is {len(tail):,} bytes long; the limit is 65,536")]
    with pytest.raises(InvalidInput) as exc:  # the same, its CR the last byte of the file
        read_run(f"1 Q0 d1 1 2.0 t\n{tail}\r".encode())
    assert _problems(exc) == [(2, f"the line is {len(tail):,} bytes long; the limit is 65,536")]


def test_a_line_at_the_limit_is_read_and_one_byte_more_is_not() -> None:
    head = "1 Q0 "
    tail = " 1 1.0 t"
    at_limit = head + "a" * (DEFAULT_LINE_BYTES - len(head) - len(tail)) + tail
    assert len(read_run(f"{at_limit}\r\n".encode())) == 1
    over = head + "a" * (DEFAULT_LINE_BYTES + 1 - len(head) - len(tail)) + tail
    with pytest.raises(InvalidInput, match="line 1: the line is 65,537 bytes long"):
        read_run(f"{over}\n".encode())


def test_the_limit_is_overridden_by_the_limits_keyword() -> None:
    data = _run_with_wide_docid(MB, rows=4)
    for limits in (NO_LIMITS, Limits(line_bytes=2 * MB)):
        run = read_run(data, limits=limits)
        assert run.ranking("1")[0] == "x" * MB and len(run) == 4
    qrels = f"1 0 {'y' * MB} 1\n".encode()
    assert read_qrels(qrels, limits=NO_LIMITS).judgments("1") == {"y" * MB: 1}
    with pytest.raises(InvalidInput, match="line 1: the line is 25 bytes long; the limit is 20"):
        read_run(b"1 Q0 abcdefghij 1 1.0 tag\n", limits=Limits(line_bytes=20))


def test_limits_that_name_only_ids_keep_the_default_line_limit() -> None:
    with pytest.raises(InvalidInput, match="the limit is 65,536"):
        read_run(_run_with_wide_docid(MB, rows=4), limits=Limits(qid_bytes=10))


def _cli(
    tmp_path: Path, run: bytes, *options: str
) -> tuple[subprocess.CompletedProcess[str], float]:
    (tmp_path / "qrels").write_text("1 0 d0 1\n2 0 d2 1\n")
    (tmp_path / "run").write_bytes(run)
    files = [str(tmp_path / "qrels"), str(tmp_path / "run")]
    started = time.perf_counter()
    proc = subprocess.run(  # a fresh process: the figures are the command's own
        [sys.executable, "-m", "metrics", "evaluate", *options, "-m", "P@10", *files],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    return proc, time.perf_counter() - started


def test_the_command_line_refuses_a_1_mb_docid_naming_the_line(tmp_path: Path) -> None:
    proc, elapsed = _cli(tmp_path, _run_with_wide_docid(MB))
    assert proc.returncode == 3, proc.stderr
    length = len(f"1 Q0 {'x' * MB} 2 7.5 tag")
    assert proc.stderr.strip() == (
        f"python -m metrics evaluate: error: {tmp_path / 'run'} line 2: "
        f"the line is {length:,} bytes long; the limit is 65,536"
    )
    assert proc.stdout == ""
    assert elapsed < 10.0  # was 11.6 s of wall clock and 4 GB; about 0.3 s now


def test_the_command_line_limit_is_a_flag_0_for_none(tmp_path: Path) -> None:
    run = _run_with_wide_docid(MB, rows=4)
    proc, _ = _cli(tmp_path, run, "--max-line-length", "0")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("P@10")
    proc, _ = _cli(tmp_path, run, "--max-line-length", str(2 * MB))
    assert proc.returncode == 0, proc.stderr
    proc, _ = _cli(tmp_path, b"1 Q0 d0 1 1.0 t\n1 Q0 d1 2 0.5 tag\n", "--max-line-length", "15")
    assert proc.returncode == 3
    assert "line 2: the line is 17 bytes long; the limit is 15" in proc.stderr
    proc, _ = _cli(tmp_path, run, "--max-line-length", "-1")
    assert proc.returncode == 2
    assert "--max-line-length" in proc.stderr


@pytest.mark.parametrize(
    "command",
    [
        ["evaluate"],
        ["compare"],
        ["check"],
        ["diversity"],
        ["pool", "build"],
        ["pool", "simulate"],
        ["bias"],
        ["bias", "estimators"],
        ["bias", "compare"],
        ["bias", "reusability"],
    ],
    ids=" ".join,
)
def test_every_command_that_reads_runs_takes_the_flag(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    from metrics.cli.app import main

    assert main([*command, "--help"]) == 0
    assert "--max-line-length N" in capsys.readouterr().out
