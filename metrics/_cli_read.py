"""Reading a run for a command line: what the reader accepted unusually is said on stderr.

The reader accepts NaN and infinite scores and fields after the sixth, as trec_eval does, and
records them as warnings (:class:`metrics.problems.ReadWarning`) instead of failing; every
``python -m metrics`` command that reads runs prints them through :func:`read_run_said`, so no
command reads such a file silently.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from metrics.io import Run, read_run

__all__ = ["SameTag", "read_run_said", "read_runs_said"]


def read_run_said(path: str) -> Run:
    """``read_run(path)``, each of its warnings printed as ``PATH: warning: ...`` on stderr."""
    run = read_run(path)
    for warning in run.warnings:  # accepted, but said: NaN or infinite scores, extra fields
        print(f"{path}: warning: {warning}", file=sys.stderr)
    return run


class SameTag(Exception):
    """Two run files carry the same tag (a command line cannot tell their figures apart)."""


def read_runs_said(paths: Sequence[str]) -> dict[str, Run]:
    """Every run by its tag (the path when the file has none), read by :func:`read_run_said`;
    :class:`SameTag` when a tag is in two files."""
    runs: dict[str, Run] = {}
    for path in paths:
        run = read_run_said(path)
        tag = run.tag or path
        if tag in runs:
            raise SameTag(f"run tag {tag!r} appears in two files (the second: {path})")
        runs[tag] = run
    return runs
