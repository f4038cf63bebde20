"""``python -m metrics diversity``: ndeval's novelty and diversity measures from TREC files.

Usage::

    diversity SUBTOPIC_QRELS RUN [RUN ...] [-m MEASURE ...] [-q] [--format ndeval|json]
              [--run-topics-only] [--ci LEVEL]

The subtopic qrels are ndeval's ``topic subtopic docno grade`` lines
(:func:`metrics.measures.subtopic_qrels.read_subtopic_qrels`); runs are TREC runs, ranked as
trec_eval ranks them (ndeval's ``-traditional``). Measures (``-m``, repeatable, either naming style)
default to ndeval's report at k = 5, 10, 20 of ERR-IA, nERR-IA, alpha-nDCG, P-IA and strec.

``--format ndeval`` (default) prints ndeval's CSV: a ``runid,topic,MEASURE...`` header, with
``-q`` one row per topic (values ``%.6f``), then the ``RUNID,amean,...`` row; with several runs
each run's block follows the previous one, each with its header, as concatenated ndeval outputs
are. ``--format json`` prints one object with a ``runs`` list (per-topic values with ``-q``).

The mean covers every qrels topic (ndeval ``-c``), a topic the run lacks scoring 0;
``--run-topics-only`` averages over the qrels topics the run has (ndeval's default). Run topics
without subtopic qrels are never averaged. Both are said on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from metrics.cli._read import add_line_limit
from metrics.measures.diversity import DiversityResult, evaluate_diversity
from metrics.measures.diversity_names import (
    DEFAULT_MEASURES,
    UnknownDiversityMeasure,
    parse_diversity_measure,
)
from metrics.measures.subtopic_qrels import read_subtopic_qrels

__all__ = ["add_parser", "format_json", "format_ndeval", "register", "run_diversity"]

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_MEASURE = 4


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "diversity",
        help="ndeval's diversity measures (alpha-nDCG, ERR-IA, P-IA, strec) on subtopic qrels",
        description=(
            "Evaluate runs with ndeval's novelty and diversity measures over subtopic qrels "
            "(topic subtopic docno grade). Measures: " + ", ".join(DEFAULT_MEASURES) + " by "
            "default; ir_measures names (alpha_nDCG(alpha=0.5)@20, ERR_IA@20, nERR_IA@20, "
            "P_IA@20, StRecall@20, alpha_DCG@20) are accepted too."
        ),
    )
    p.add_argument("qrels", metavar="SUBTOPIC_QRELS", help="ndeval subtopic qrels file")
    p.add_argument("runs", metavar="RUN", nargs="+", help="TREC run file(s)")
    p.add_argument(
        "-m",
        "--measure",
        dest="measures",
        action="append",
        metavar="MEASURE",
        help="a measure (repeatable; default: ndeval's report at 5, 10, 20)",
    )
    p.add_argument("-q", dest="per_query", action="store_true", help="also print every topic")
    p.add_argument("--format", choices=("ndeval", "json"), default="ndeval")
    p.add_argument(
        "--run-topics-only",
        action="store_true",
        help="average over the qrels topics the run has (ndeval's default) instead of all",
    )
    p.add_argument(
        "--ci", type=float, metavar="LEVEL", default=None, help="bootstrap interval (json only)"
    )
    add_line_limit(p, "run")
    p.set_defaults(func=run_diversity)
    return p


def register(subparsers: Any) -> None:
    """Add ``diversity`` to the ``python -m metrics`` subcommands."""
    add_parser(subparsers)


def format_ndeval(result: DiversityResult, *, per_query: bool) -> str:
    """ndeval's CSV for one run: header, per-topic rows (``per_query``), the ``amean`` row."""
    runid = result.run
    names = [m.name for m in result.measures]
    lines = ["runid,topic," + ",".join(m.ndeval_name for m in result.measures)]
    if per_query:
        for topic in result.topics:
            row = result.per_query[topic]
            lines.append(f"{runid},{topic}," + ",".join(f"{row[n]:.6f}" for n in names))
    lines.append(f"{runid},amean," + ",".join(f"{result.mean[n]:.6f}" for n in names))
    return "\n".join(lines) + "\n"


def format_json(results: list[DiversityResult], *, per_query: bool) -> str:
    def num(x: float) -> float | None:
        return None if x != x else x  # NaN (no topic) -> null

    runs = []
    for r in results:
        d = r.to_dict(per_query=per_query)
        d["mean"] = {k: num(v) for k, v in d["mean"].items()}
        runs.append(d)
    return json.dumps({"runs": runs}, indent=2) + "\n"


def run_diversity(args: argparse.Namespace, out: TextIO) -> int:
    """The ``diversity`` command; :class:`~metrics.problems.InvalidInput` propagates (exit 3)."""
    from metrics.cli._read import line_limits, read_run_said

    prog = "python -m metrics diversity"
    try:
        measures = [parse_diversity_measure(m) for m in (args.measures or DEFAULT_MEASURES)]
    except UnknownDiversityMeasure as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return EXIT_MEASURE
    if args.ci is not None and not 0.0 < args.ci < 1.0:
        print(f"{prog}: error: --ci must be in (0, 1), got {args.ci}", file=sys.stderr)
        return EXIT_USAGE
    qrels = read_subtopic_qrels(args.qrels)
    results = []
    for path in args.runs:
        run = read_run_said(path, line_limits(args))
        result = evaluate_diversity(
            qrels, run, measures, complete=not args.run_topics_only, ci_level=args.ci
        )
        if not result.run:
            result = _renamed(result, path)
        for note in result.notes:
            print(f"{path}: note: {note}", file=sys.stderr)
        results.append(result)
    if args.format == "json":
        out.write(format_json(results, per_query=args.per_query))
    else:
        for r in results:
            out.write(format_ndeval(r, per_query=args.per_query))
    return EXIT_OK


def _renamed(result: DiversityResult, name: str) -> DiversityResult:
    from dataclasses import replace

    return replace(result, run=name)
