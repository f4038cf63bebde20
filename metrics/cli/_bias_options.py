"""What every ``python -m metrics bias`` subcommand shares: its scoring options, worded once, and
the ``run<TAB>group`` file. Read by :mod:`metrics.cli.bias` and :mod:`metrics.cli.bias_compare`
(which :mod:`metrics.cli.bias` imports only when asked, so neither imports the other at load)."""

from __future__ import annotations

import argparse
from pathlib import Path

from metrics.io import InvalidInput, Problem

__all__ = [
    "add_compat_options",
    "add_scoring_options",
    "read_groups",
]


def add_scoring_options(p: argparse.ArgumentParser, *, compat: bool = True) -> None:
    """``-m/--measure`` and ``--topics`` (and, unless ``compat=False``, ``--compat`` and
    ``-l/--level``): the options every ``bias`` subcommand shares, worded once."""
    p.add_argument("-m", "--measure", default="AP", help="measure (default AP): AP, P@10, ...")
    p.add_argument("--topics", help="topics to analyse, e.g. 601-650 or 301,303,310-320")
    if compat:
        add_compat_options(p)


def add_compat_options(p: argparse.ArgumentParser) -> None:
    """``--compat`` (scoring mode) and ``-l/--level`` (relevance level)."""
    p.add_argument(
        "--compat",
        choices=("trec_eval", "honest"),
        default="trec_eval",
        help="scoring mode (default trec_eval-compatible)",
    )
    p.add_argument(
        "-l", "--level", type=int, default=1, help="relevance level: relevant = grade >= LEVEL"
    )


def read_groups(path: str) -> dict[str, str]:
    """``run<TAB>group`` lines after a header line; raises InvalidInput listing problems."""
    problems: list[Problem] = []
    groups: dict[str, str] = {}
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    lines = text.splitlines()
    if not lines or lines[0].split("\t")[0].strip().lower() != "run":
        problems.append(Problem(1, "expected a header line 'run<TAB>group'"))
    for n, line in enumerate(lines[1:], start=2):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.rstrip("\r").split("\t")
        if len(fields) != 2 or not fields[0].strip() or not fields[1].strip():
            problems.append(Problem(n, f"expected 'run<TAB>group', found {line[:60]!r}"))
            continue
        tag = fields[0].strip()
        if tag in groups:
            problems.append(Problem(n, f"run {tag!r} listed twice"))
            continue
        groups[tag] = fields[1].strip()
    if problems:
        raise InvalidInput(path, problems[:100], len(problems))
    return groups
