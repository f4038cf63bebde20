"""Reading a run for a command line: what the reader accepted unusually is said on stderr.

The reader accepts NaN and infinite scores and fields after the sixth, as trec_eval does, and
records them as warnings (:class:`metrics.problems.ReadWarning`) instead of failing; every
``python -m metrics`` command that reads runs prints them through :func:`read_run_said`, so no
command reads such a file silently.

Every command that reads runs or qrels takes ``--max-line-length N`` (:func:`add_line_limit`):
the longest line in bytes, by default the readers' own (64 KiB), 0 for no limit.

Runs and qrels are read in either layout, told apart by their content: a run is TREC lines or a
JSON object ``{qid: {docid: score}}`` (:mod:`metrics.io.jsonrun`, pytrec_eval's and ranx's
dictionary); qrels are TREC lines or BEIR's ``query-id corpus-id score`` TSV
(:mod:`metrics.io.beir`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from metrics.io import DEFAULT_LIMITS, DEFAULT_LINE_BYTES, Limits, Qrels, Run, read_qrels, read_run
from metrics.io.beir import looks_like_beir_qrels, read_beir_qrels
from metrics.io.jsonrun import looks_like_json, read_json_run

__all__ = [
    "SameTag",
    "add_line_limit",
    "line_limits",
    "read_qrels_any",
    "read_run_said",
    "read_runs_said",
]


def _bytes(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of bytes") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative (0: no limit)")
    return value


def add_line_limit(p: argparse.ArgumentParser, what: str = "run or qrels") -> None:
    """``--max-line-length N``: the longest line of a ``what`` file, in bytes."""
    p.add_argument(
        "--max-line-length",
        type=_bytes,
        default=DEFAULT_LINE_BYTES,
        metavar="N",
        help=f"refuse a {what} line over N bytes (default {DEFAULT_LINE_BYTES}; 0: no limit)",
    )


def line_limits(args: argparse.Namespace) -> Limits:
    """The readers' limits for ``--max-line-length`` (0: no limit)."""
    return Limits(line_bytes=args.max_line_length or None)


def read_run_said(path: str, limits: Limits = DEFAULT_LIMITS) -> Run:
    """``read_run(path)`` (or :func:`~metrics.io.jsonrun.read_json_run` for a JSON run), each of
    its warnings printed as ``PATH: warning: ...`` on stderr."""
    if looks_like_json(path):
        run = read_json_run(path, limits=limits)
    else:
        run = read_run(path, limits=limits)
    for warning in run.warnings:  # accepted, but said: NaN or infinite scores, extra fields
        print(f"{path}: warning: {warning}", file=sys.stderr)
    return run


def read_qrels_any(path: str, limits: Limits = DEFAULT_LIMITS) -> Qrels:
    """Qrels from TREC lines, or from BEIR's TSV layout (module docstring)."""
    if looks_like_beir_qrels(path):
        return read_beir_qrels(path, limits=limits)
    return read_qrels(path, limits=limits)


class SameTag(Exception):
    """Two run files carry the same tag (a command line cannot tell their figures apart)."""


def read_runs_said(paths: Sequence[str], limits: Limits = DEFAULT_LIMITS) -> dict[str, Run]:
    """Every run by its tag (the path when the file has none), read by :func:`read_run_said`;
    :class:`SameTag` when a tag is in two files."""
    runs: dict[str, Run] = {}
    for path in paths:
        run = read_run_said(path, limits)
        tag = run.tag or path
        if tag in runs:
            raise SameTag(f"run tag {tag!r} appears in two files (the second: {path})")
        runs[tag] = run
    return runs
