"""Reading cost stays linear in the bytes whatever the docid length (issue 13, point 2).

The tokenizer once rebuilt a k x (8k+1) mask table per wide token: a 16,000-character docid took
39 s and 352 MB, 100,000 over 9 minutes. Without limits (``NO_LIMITS``: the readers' default
refuses a line over 64 KiB) the cost of one wide token must grow with its width, not its square.
CPU time, with bounds far above what this machine takes (0.05 s for 100,000 characters)."""

from __future__ import annotations

import time

from metrics import read_qrels, read_run
from metrics.io import NO_LIMITS


def _cpu(data: bytes, *, qrels: bool = False) -> float:
    started = time.process_time()
    if qrels:
        read_qrels(data, limits=NO_LIMITS)
    else:
        read_run(data, limits=NO_LIMITS)
    return time.process_time() - started


def _run(width: int) -> bytes:
    return f"1 Q0 {'x' * width} 1 1.0 t\n1 Q0 b 2 0.5 t\n2 Q0 c 1 3.0 t\n".encode()


def test_a_100000_character_docid_reads_in_well_under_a_second() -> None:
    data = _run(100_000)
    assert _cpu(data) < 0.5
    run = read_run(data, limits=NO_LIMITS)
    assert run.ranking("1")[0] == "x" * 100_000 and len(run) == 3
    qrels = f"1 0 {'y' * 100_000} 1\n1 0 b 0\n".encode()
    assert _cpu(qrels, qrels=True) < 0.5
    assert read_qrels(qrels, limits=NO_LIMITS).judgments("1")["y" * 100_000] == 1


def test_ten_times_the_docid_costs_about_ten_times_not_a_hundred() -> None:
    small = min(_cpu(_run(100_000)) for _ in range(3))
    large = min(_cpu(_run(1_000_000)) for _ in range(3))
    assert large < 30 * max(small, 0.005), (small, large)  # quadratic would be ~100x
