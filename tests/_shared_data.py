"""Where the shared real TREC data is, and how a test that needs it skips: one place for all tests.

``$POOLJUDGE_SHARED_DATA``, else ``../shared/data`` beside the repository. A fresh clone has no
``../shared``, so its tests skip, naming the missing path. No Django here: the metrics tests use it.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest

from metrics import Run, read_run

BESIDE_THE_REPOSITORY = Path(__file__).resolve().parents[2] / "shared" / "data"
SHARED_DATA = Path(os.environ.get("POOLJUDGE_SHARED_DATA") or BESIDE_THE_REPOSITORY)


def missing_reason(*parts: str) -> str | None:
    """Why ``SHARED_DATA/parts`` cannot be read (a skip reason), or None when it is there."""
    path = SHARED_DATA.joinpath(*parts)
    if path.exists():
        return None
    return (
        f"the shared TREC data is not at {path} (a fresh clone has no ../shared; "
        "set POOLJUDGE_SHARED_DATA to its data folder)"
    )


def needs_shared_data(*parts: str) -> pytest.MarkDecorator:
    """Mark a test that reads ``SHARED_DATA/parts``: skipped with the reason when it is absent."""
    reason = missing_reason(*parts)
    return pytest.mark.skipif(reason is not None, reason=reason or "")


def shared_data_path(*parts: str) -> Path:
    """``SHARED_DATA/parts``, or skip the test (from a test or fixture) when it is absent."""
    reason = missing_reason(*parts)
    if reason is not None:
        pytest.skip(reason)
    return SHARED_DATA.joinpath(*parts)


def trec_runs(root: Path) -> dict[str, Run]:
    """Every ``runs/input.*.gz`` of a shared collection, read unmodified, by tag, scores as
    float32 (as pytrec_eval stores them).

    (One TREC 2011 Medical run, uogTrDeNsEc, has three "NaN" scores: the reader accepts them,
    ranked last in their topic, with a warning.)"""
    runs: dict[str, Run] = {}
    for path in sorted((root / "runs").glob("input.*.gz")):
        run = read_run(path)
        runs[run.tag] = run.with_float32_scores()
    return runs


def trec_groups(root: Path) -> dict[str, str]:
    """The run -> group mapping of a shared collection's ``runs.tsv``."""
    with (root / "runs.tsv").open() as f:
        return {row["run"]: row["group"] for row in csv.DictReader(f, delimiter="\t")}
