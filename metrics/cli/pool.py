"""``python -m metrics pool``: build pools and simulate judging orders from TREC files.

Subcommands::

    pool build    --runs RUN... --depth K [--topics SPEC] [--strategy depth] [--budget B]
                  [-o FILE] [--format trec|json]
    pool simulate --qrels QRELS --runs RUN... --depth K --strategy NAME [NAME ...]
                  --budget B [B ...] [--topics SPEC] [--format tsv|json]

Runs are read with :func:`metrics.io.read_run` and ranked as trec_eval ranks them (score
descending, ties by docid descending, rank column ignored); a run is named by its tag (the sixth
column). ``--topics`` takes ranges and comma lists (``601-650``, ``601,605,610-620``).

The pool file (``build``, default format ``trec``) is the common trec_eval-style pool listing,
one ``qid Q0 docid`` line per pooled document, topics in numeric order and documents in the
strategy's judging order (a stratified pool adds the inclusion probability as a fourth column).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from metrics.cli._read import add_line_limit, line_limits
from metrics.io import DEFAULT_LIMITS, Limits
from metrics.pooling.base import Strategy
from metrics.pooling.runs import JSONValue, parse_topic_spec
from metrics.pooling.simulation import SimulationResult, simulate
from metrics.pooling.strategies import STRATEGIES, make_strategy

__all__ = ["add_parser", "load_rankings", "parse_strata", "register"]


def parse_strata(spec: str) -> tuple[tuple[int, float], ...]:
    """Strata from ``"10:1,30:0.5,100:0.1"`` (depth:rate, depths increasing)."""
    strata: list[tuple[int, float]] = []
    for part in (p.strip() for p in spec.split(",") if p.strip()):
        depth, colon, rate = part.partition(":")
        if not colon:
            raise ValueError(f"stratum {part!r} must be DEPTH:RATE, as in 30:0.5")
        strata.append((int(depth), float(rate)))
    return tuple(strata)


def load_rankings(
    paths: Sequence[str], depth: int | None, limits: Limits = DEFAULT_LIMITS
) -> dict[str, dict[str, list[str]]]:
    """Read TREC runs into run tag -> qid -> docids in trec_eval order, cut to ``depth``.

    Two files with the same run tag are an error (pools are keyed by run).
    """
    from metrics.cli._read import read_run_said

    out: dict[str, dict[str, list[str]]] = {}
    for path in paths:
        run = read_run_said(path, limits)
        tag = run.tag or Path(path).name
        if tag in out:
            raise ValueError(f"{path}: run tag {tag!r} is used by another run")
        order = run.order
        per_topic: dict[str, list[str]] = {}
        for i, qid in enumerate(run.qids):
            rows = order[int(run.offsets[i]) : int(run.offsets[i + 1])]
            if depth is not None:
                rows = rows[:depth]
            per_topic[qid] = [d.decode() for d in run.docids[rows].tolist()]
        out[tag] = per_topic
    return out


def _read_groups(path: str) -> tuple[dict[str, str], dict[str, int]]:
    """``run group [priority]`` per line (tabs or spaces; a ``run group`` header is skipped)."""
    groups: dict[str, str] = {}
    priority: dict[str, int] = {}
    for lineno, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        if lineno == 1 and fields[:2] == ["run", "group"]:
            continue
        if len(fields) not in (2, 3):
            raise ValueError(f"{path} line {lineno}: expected 'run group [priority]'")
        groups[fields[0]] = fields[1]
        if len(fields) == 3:
            priority[fields[0]] = int(fields[2])
    return groups, priority


def _strategy(name: str, args: argparse.Namespace, run_order: Sequence[str]) -> Strategy:
    params: dict[str, Any] = {}
    if name in ("thompson", "stratified"):
        params["seed"] = args.seed
    if name == "hedge":
        params["beta"] = args.beta
    if name == "rrf":
        params["k"] = args.rrf_k
    if name == "stratified" and args.strata:
        params["strata"] = parse_strata(args.strata)
    if args.per_group is not None:
        if name != "depth":
            raise ValueError("--per-group applies to the depth strategy only")
        if not args.groups:
            raise ValueError("--per-group needs --groups FILE (run -> group [priority])")
        groups, priority = _read_groups(args.groups)
        # Without a priority column, runs keep the order given on the command line.
        if not priority:
            priority = {tag: i for i, tag in enumerate(run_order, 1)}
        params.update(groups=groups, priority=priority, per_group=args.per_group)
    return make_strategy(name, **params)


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--runs", nargs="+", required=True, metavar="RUN", help="TREC run files")
    parser.add_argument("--depth", type=int, required=True, metavar="K", help="pool depth k")
    parser.add_argument("--topics", type=parse_topic_spec, help="e.g. 601-650 or 601,605,610-620")
    parser.add_argument("--seed", type=int, default=0, help="thompson/stratified seed (0)")
    parser.add_argument("--beta", type=float, default=0.1, help="hedge beta (0.1)")
    parser.add_argument("--rrf-k", type=float, default=60.0, help="RRF constant k (60)")
    parser.add_argument("--strata", help="stratified: DEPTH:RATE,... (10:1,30:0.5,100:0.1)")
    parser.add_argument("--groups", help="file of 'run group [priority]' lines")
    parser.add_argument("--per-group", type=int, help="depth: pool each group's top-n runs")
    parser.add_argument(
        "--relevance-level", type=int, default=1, help="relevant = grade >= this (1)"
    )
    add_line_limit(parser)


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``pool`` command (with ``build`` and ``simulate``) to an argparse subparsers."""
    pool: argparse.ArgumentParser = subparsers.add_parser(
        "pool", help="build pools; simulate judging orders"
    )
    actions = pool.add_subparsers(dest="pool_command", required=True)
    names = ", ".join(STRATEGIES)

    build = actions.add_parser("build", help="write a pool as 'qid Q0 docid' lines")
    _add_common(build)
    build.add_argument("--strategy", default="depth", choices=list(STRATEGIES), help=names)
    build.add_argument("--budget", type=int, help="documents per topic (static strategies)")
    build.add_argument("-o", "--output", help="output file (default: stdout)")
    build.add_argument("--format", choices=("trec", "json"), default="trec")
    build.set_defaults(func=_run_build)

    sim = actions.add_parser("simulate", help="relevant documents found after each budget")
    _add_common(sim)
    sim.add_argument("--qrels", required=True, help="qrels file (the oracle)")
    sim.add_argument("--strategy", nargs="+", required=True, choices=list(STRATEGIES), help=names)
    sim.add_argument("--budget", type=int, nargs="+", required=True, metavar="B")
    sim.add_argument("--format", choices=("tsv", "json"), default="tsv")
    sim.set_defaults(func=_run_simulate)
    return pool


def register(subparsers: Any) -> None:
    """The :data:`metrics.cli.app.SUBCOMMANDS` hook: add ``pool`` to ``python -m metrics``."""
    add_parser(subparsers)


def _run_build(args: argparse.Namespace, out: TextIO) -> int:
    runs = load_rankings(args.runs, args.depth, line_limits(args))
    strategy = _strategy(args.strategy, args, list(runs))
    pool = strategy.pool(
        runs,
        depth=args.depth,
        topics=args.topics,
        budget=args.budget,
        relevance_level=args.relevance_level,
    )
    if args.output:
        with open(args.output, "w", encoding="utf-8") as fh:
            _write_pool(pool, args.format, fh)
    else:
        _write_pool(pool, args.format, out)
    return 0


def _write_pool(pool: Any, fmt: str, out: TextIO) -> None:
    if fmt == "json":
        json.dump(pool.to_json(), out, indent=1)
        out.write("\n")
    else:
        pool.write_trec(out)


def _run_simulate(args: argparse.Namespace, out: TextIO) -> int:
    from metrics.cli._read import read_qrels_any

    runs = load_rankings(args.runs, args.depth, line_limits(args))
    qrels = read_qrels_any(args.qrels, line_limits(args)).to_dict()
    results: list[SimulationResult] = []
    for name in dict.fromkeys(args.strategy):
        strategy = _strategy(name, args, list(runs))
        results.append(
            simulate(
                runs,
                qrels,
                strategy,
                depth=args.depth,
                budgets=args.budget,
                topics=args.topics,
                relevance_level=args.relevance_level,
            )
        )
    if args.format == "json":
        doc: list[JSONValue] = [r.to_json() for r in results]
        json.dump(doc if len(doc) > 1 else doc[0], out, indent=1)
        out.write("\n")
    else:
        out.write("strategy\tbudget\ttopics\tmean_relevant_found\n")
        for result in results:
            for budget, mean in zip(result.budgets, result.mean_found, strict=True):
                out.write(f"{result.strategy}\t{budget}\t{len(result.found)}\t{mean:.4f}\n")
    return 0
