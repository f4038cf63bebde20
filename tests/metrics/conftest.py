"""Fixtures for the metrics tests: no database, no Django."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def shared_data_dir() -> Path:
    """``../shared/data`` beside the project, or ``$POOLJUDGE_SHARED_DATA``."""
    env = os.environ.get("POOLJUDGE_SHARED_DATA")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2].parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real TREC collections; the test is skipped (with the path) when they are absent."""
    path = shared_data_dir()
    if not (path / "robust03" / "qrels.txt").is_file():
        pytest.skip(
            f"real TREC data not found at {path} (a fresh clone has no ../shared; "
            "set POOLJUDGE_SHARED_DATA to its data folder)"
        )
    return path
