"""Reading a run for a command line: what the reader accepted unusually is said on stderr.

The reader accepts NaN and infinite scores and fields after the sixth, as trec_eval does, and
records them as warnings (:class:`metrics.problems.ReadWarning`) instead of failing; every
``python -m metrics`` command that reads runs prints them through :func:`read_run_said`, so no
command reads such a file silently.
"""

from __future__ import annotations

import sys

from metrics.io import Run, read_run

__all__ = ["read_run_said"]


def read_run_said(path: str) -> Run:
    """``read_run(path)``, each of its warnings printed as ``PATH: warning: ...`` on stderr."""
    run = read_run(path)
    for warning in run.warnings:  # accepted, but said: NaN or infinite scores, extra fields
        print(f"{path}: warning: {warning}", file=sys.stderr)
    return run
