"""``python -m metrics bias``: leave-one-run-out / leave-one-group-out pool-bias report.

    python -m metrics bias QRELS RUN [RUN ...] [--depth K] [--leave-one-out run|group]
                           [--groups runs.tsv] [-m MEASURE] [--topics 601-650]
                           [--compat trec_eval|honest] [-l LEVEL] [--format json|tsv]

Defaults: ``--depth 10``, ``--leave-one-out run``, ``-m AP``, trec_eval-compatible scoring, every
topic of the qrels. ``runs.tsv`` is ``run<TAB>group`` with a header line (as in the shared data).
A run's tag is the tag in its file (the path when the file has none); the same tag twice is an
error. See :mod:`metrics.bias` for the exact definitions.

Output: ``json`` (default) is :meth:`metrics.bias.LooResult.to_dict`; ``tsv`` is one row per run
(``run score score_without delta delta_pct rank rank_without unique_relevant``, sorted by rank)
with a summary (measure, depth, tau, tau_AP, largest delta) on stderr.

Exit codes: 0 ok, 2 usage (bad option, group mode without ``--groups``, bad topic spec),
3 bad input (unreadable or invalid run, qrels or groups file, a run missing from the groups file),
4 unknown measure.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from metrics.bias import LooResult, leave_one_out
from metrics.io import InvalidInput, Problem, Run, read_qrels, read_run
from metrics.pooling import parse_topic_spec

__all__ = ["read_groups", "register"]

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_INPUT = 3


def register(subparsers: Any) -> None:
    """Add the ``bias`` subcommand to ``python -m metrics``."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "bias",
        help="pool bias: leave-one-run-out / leave-one-group-out (Zobel 1998)",
        description="Rebuild the depth-K pool of the runs, restrict the qrels to it, and score "
        "every run with and without its own (or its group's) contribution to the pool.",
    )
    p.add_argument("qrels", help="qrels file (qid iter docid grade; plain or gzip)")
    p.add_argument("runs", nargs="+", metavar="RUN", help="run files (plain or gzip)")
    p.add_argument("--depth", type=int, default=10, help="pool depth K (default 10)")
    p.add_argument(
        "--leave-one-out",
        choices=("run", "group"),
        default="run",
        dest="leave_out",
        help="leave out each run, or each group of runs (needs --groups)",
    )
    p.add_argument("--groups", help="run<TAB>group file with a header line")
    p.add_argument("-m", "--measure", default="AP", help="measure (default AP): AP, P@10, ...")
    p.add_argument("--topics", help="topics to analyse, e.g. 601-650 or 301,303,310-320")
    p.add_argument(
        "--compat",
        choices=("trec_eval", "honest"),
        default="trec_eval",
        help="scoring mode (default trec_eval-compatible)",
    )
    p.add_argument(
        "-l", "--level", type=int, default=1, help="relevance level: relevant = grade >= LEVEL"
    )
    p.add_argument("--format", choices=("json", "tsv"), default="json")
    p.set_defaults(func=run_bias)


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


def _fail(message: str, code: int) -> int:
    print(f"python -m metrics bias: error: {message}", file=sys.stderr)
    return code


def run_bias(args: argparse.Namespace, out: TextIO) -> int:
    """The ``bias`` command: read inputs, run the analysis, print json or tsv."""
    if args.depth < 1:
        return _fail(f"--depth must be >= 1, got {args.depth}", EXIT_USAGE)
    if args.leave_out == "group" and not args.groups:
        return _fail("--leave-one-out group needs --groups runs.tsv", EXIT_USAGE)
    topics = None
    if args.topics is not None:
        try:
            topics = parse_topic_spec(args.topics)
        except ValueError as exc:
            return _fail(f"--topics: {exc}", EXIT_USAGE)
    qrels = read_qrels(args.qrels)
    runs: dict[str, Run] = {}
    for path in args.runs:
        run = read_run(path)
        tag = run.tag or path
        if tag in runs:
            return _fail(f"run tag {tag!r} appears in two files (the second: {path})", EXIT_INPUT)
        runs[tag] = run
    groups = None
    if args.groups:
        groups = read_groups(args.groups)
        if args.leave_out == "group":
            missing = [t for t in runs if t not in groups]
            if missing:
                shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
                return _fail(f"{args.groups}: no group for run(s) {shown}", EXIT_INPUT)
    if topics is not None and not set(topics) & set(qrels.qids):
        return _fail(f"--topics {args.topics}: none of these topics is in the qrels", EXIT_INPUT)
    result = leave_one_out(
        qrels,
        runs,
        args.measure,
        depth=args.depth,
        leave_out=args.leave_out,
        groups=groups,
        topics=topics,
        relevance_level=args.level,
        compat="trec_eval" if args.compat == "trec_eval" else None,
    )
    if args.format == "json":
        json.dump(result.to_dict(), out, indent=2)
        out.write("\n")
    else:
        _write_tsv(result, out)
    return EXIT_OK


def _cell(x: float | None, digits: int = 4) -> str:
    return "" if x is None or x != x else f"{x:.{digits}f}"


def _write_tsv(res: LooResult, out: TextIO) -> None:
    cols = [
        "run",
        "score",
        "score_without",
        "delta",
        "delta_pct",
        "rank",
        "rank_without",
        "unique_relevant",
    ]
    out.write("\t".join(cols) + "\n")
    for tag, r in sorted(res.runs.items(), key=lambda kv: (kv[1].rank, kv[0])):
        row = [
            tag,
            _cell(r.score),
            _cell(r.score_without),
            _cell(r.delta),
            _cell(r.delta_pct, 2),
            str(r.rank),
            str(r.rank_without),
            str(r.unique_relevant),
        ]
        out.write("\t".join(row) + "\n")
    unit = "group" if res.leave_out == "group" else "run"
    print(
        f"# leave-one-{unit}-out, {res.measure} ({res.compat} mode), depth {res.depth}, "
        f"{len(res.topics)} topics, {len(res.runs)} runs: kendall_tau={_cell(res.kendall_tau)} "
        f"tau_ap={_cell(res.tau_ap)} mean_delta={_cell(res.mean_delta)} "
        f"max_delta={_cell(res.max_delta)} ({res.max_delta_run})",
        file=sys.stderr,
    )
