"""``python -m metrics bias``: pool-bias reports (leave-one-out, estimators, and dispatch).

    python -m metrics bias QRELS RUN [RUN ...] [--depth K] [--leave-one-out run|group]
                           [--groups runs.tsv] [-m MEASURE] [--topics 601-650]
                           [--compat trec_eval|honest] [-l LEVEL] [--format json|tsv]
    python -m metrics bias estimators QRELS RUN [RUN ...] --depth K [--groups runs.tsv]
                           -m MEASURE [--topics ...] [--not-pooled TAG,...] [--top75]
                           [--leave-one-out run|group] [--estimators NAME,...]
                           [--compat trec_eval|honest] [-l LEVEL] [--format json|tsv]
    python -m metrics bias compare ... | bias reusability ...   (metrics.cli.bias_compare)

Defaults: ``--depth 10``, ``--leave-one-out run``, ``-m AP``, trec_eval-compatible scoring, every
topic of the qrels. ``runs.tsv`` is ``run<TAB>group`` with a header line (as in the shared data).
A run's tag is the tag in its file (the path when the file has none); the same tag twice is an
error. See :mod:`metrics.bias` for the exact definitions.

Output: ``json`` (default) is :meth:`metrics.bias.results.LooResult.to_dict`; ``tsv`` is one row
per run (``run score score_without delta delta_pct rank rank_without unique_relevant``, sorted by
rank) with a summary (measure, depth, tau, tau_AP, largest delta) on stderr.

``bias estimators`` (:func:`metrics.bias.estimators.estimator_report`): every estimator of the
pooling penalty and its error measured by leaving out each group (with ``--groups``; each run
without) of the pooled runs (every run given, except those named by ``--not-pooled``). ``json``
(default) is :meth:`metrics.bias.estimator_report.EstimatorReport.to_dict` (``measure``, ``depth``,
``estimators`` with ``mae``/``sre``/``sre_star``/``kendall_tau``, ``runs`` with ``score``,
``score_full_pool``, each estimate and the run's novelty on the pool without its unit (``judged``:
Judged@k, ``unjudged``: the unjudged documents in its top k; k the measure's cutoff, else the pool
depth), ``not_pooled`` (with the same novelty on the full pool), ``recommended``, ...); ``tsv``
is one row per estimator (``estimator applicable mae sre sre_star kendall_tau n_runs why``) with
the recommendation on stderr.

``bias compare`` and ``bias reusability`` are dispatched to ``run_compare`` / ``run_reusability``
of :mod:`metrics.cli.bias_compare` when that module is installed.

The analyses' modules (and scipy, which they need) are imported when a ``bias`` command runs,
not when ``python -m metrics`` starts: ``evaluate`` does not pay for them.

Exit codes: 0 ok, 2 usage (bad option, group mode without ``--groups``, bad topic spec),
3 bad input (unreadable or invalid run, qrels or groups file, a run missing from the groups file),
4 unknown measure.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any, Literal, TextIO

from metrics.cli._bias_options import add_compat_options, add_scoring_options, read_groups
from metrics.cli._read import (
    SameTag,
    add_line_limit,
    line_limits,
    read_qrels_any,
    read_runs_said,
)
from metrics.pooling.runs import parse_topic_spec

__all__ = [
    "SUBCOMMANDS",
    "dispatch",
    "register",
    "run_estimators",
]

if TYPE_CHECKING:
    from metrics.bias.estimator_report import EstimatorReport
    from metrics.bias.results import LooResult


EXIT_OK = 0


EXIT_USAGE = 2


EXIT_INPUT = 3


# ``python -m metrics bias <SUB> ...``: metrics.cli hands these to :func:`dispatch`
SUBCOMMANDS = ("estimators", "compare", "reusability")


def register(subparsers: Any) -> None:
    """Add the ``bias`` subcommand to ``python -m metrics``."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "bias",
        help="pool bias: leave-one-run-out / leave-one-group-out (Zobel 1998); "
        "bias estimators|compare|reusability ...",
        description="Rebuild the depth-K pool of the runs, restrict the qrels to it, and score "
        "every run with and without its own (or its group's) contribution to the pool.",
        epilog="Also: 'python -m metrics bias estimators QRELS RUN... --depth K -m MEASURE' "
        "(estimators of the pooling penalty with their measured error; --help for its options), "
        "'bias compare ...' and 'bias reusability ...'.",
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
    add_scoring_options(p)
    add_line_limit(p)
    p.add_argument("--format", choices=("json", "tsv"), default="json")
    p.set_defaults(func=run_bias)


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
    qrels = read_qrels_any(args.qrels, line_limits(args))
    try:
        runs = read_runs_said(args.runs, line_limits(args))
    except SameTag as exc:
        return _fail(str(exc), EXIT_INPUT)
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
    from metrics.bias.leaveout import LeaveOut, leave_one_out  # imported here: it needs scipy

    result = leave_one_out(
        qrels,
        runs,
        args.measure,
        LeaveOut(
            depth=args.depth,
            leave_out=args.leave_out,
            groups=groups,
            topics=topics,
            relevance_level=args.level,
            compat="trec_eval" if args.compat == "trec_eval" else None,
        ),
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


PROG = "python -m metrics bias"


def estimators_parser() -> argparse.ArgumentParser:
    """The parser of ``python -m metrics bias estimators``."""
    p = argparse.ArgumentParser(
        prog=f"{PROG} estimators",
        description="Estimators of the pooling penalty (pool, Webber & Park 2009, Lipani et al. "
        "2015 and 2016, condensed, upper) and their error on these runs: each group (or run) of "
        "the pooled runs is left out in turn, the pool rebuilt without it at depth K, its runs "
        "estimated from the reduced pool and compared with their full-pool scores (MAE, SRE, "
        "SRE*, Kendall tau-b). Runs named by --not-pooled get every estimate from the full pool.",
    )
    p.add_argument("qrels", help="qrels file (qid iter docid grade; plain or gzip)")
    p.add_argument("runs", nargs="+", metavar="RUN", help="run files (plain or gzip)")
    p.add_argument("--depth", type=int, default=10, help="pool depth K (default 10)")
    p.add_argument("--groups", help="run<TAB>group file with a header line")
    p.add_argument(
        "--leave-one-out",
        choices=("run", "group"),
        default=None,
        dest="leave_out",
        help="the unit left out (default: group with --groups, else run)",
    )
    add_scoring_options(p, compat=False)
    p.add_argument(
        "--not-pooled",
        default="",
        metavar="TAG,...",
        help="tags of runs that did not contribute to the pool (default: every run pooled)",
    )
    p.add_argument(
        "--top75",
        action="store_true",
        help="pool only the best 75%% of the pooled runs by full-pool score (as the reference)",
    )
    p.add_argument(
        "--estimators",
        default=None,
        metavar="NAME,...",
        help="estimators to report (default all: pool, webber_park, lipani2015, lipani2016, "
        "condensed, upper)",
    )
    add_compat_options(p)
    add_line_limit(p)
    p.add_argument("--format", choices=("json", "tsv"), default="json")
    return p


def _fail_as(prog: str, message: str, code: int) -> int:
    print(f"{prog}: error: {message}", file=sys.stderr)
    return code


def run_estimators(argv: list[str], out: TextIO) -> int:
    """``bias estimators``: read the inputs, validate every estimator, print json or tsv."""
    prog = f"{PROG} estimators"
    try:
        args = estimators_parser().parse_args(argv)
    except SystemExit as exc:  # usage error (2) or --help (0)
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    if args.depth < 1:
        return _fail_as(prog, f"--depth must be >= 1, got {args.depth}", EXIT_USAGE)
    leave_out: Literal["run", "group"] = (
        args.leave_out if args.leave_out else "group" if args.groups else "run"
    )
    if leave_out == "group" and not args.groups:
        return _fail_as(prog, "--leave-one-out group needs --groups runs.tsv", EXIT_USAGE)
    topics = None
    if args.topics is not None:
        try:
            topics = parse_topic_spec(args.topics)
        except ValueError as exc:
            return _fail_as(prog, f"--topics: {exc}", EXIT_USAGE)
    names = None
    if args.estimators is not None:
        names = tuple(n.strip() for n in args.estimators.split(",") if n.strip())
    qrels = read_qrels_any(args.qrels, line_limits(args))
    try:
        runs = read_runs_said(args.runs, line_limits(args))
    except SameTag as exc:
        return _fail_as(prog, str(exc), EXIT_INPUT)
    not_pooled = [t.strip() for t in args.not_pooled.split(",") if t.strip()]
    unknown = [t for t in not_pooled if t not in runs]
    if unknown:
        return _fail_as(prog, f"--not-pooled: no run tagged {', '.join(unknown[:5])}", EXIT_INPUT)
    pooled = [t for t in runs if t not in set(not_pooled)]
    groups = None
    if args.groups:
        groups = read_groups(args.groups)
        if leave_out == "group":
            missing = [t for t in pooled if t not in groups]
            if missing:
                shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
                return _fail_as(prog, f"{args.groups}: no group for run(s) {shown}", EXIT_INPUT)
    if topics is not None and not set(topics) & set(qrels.qids):
        return _fail_as(
            prog, f"--topics {args.topics}: none of these topics is in the qrels", EXIT_INPUT
        )
    from metrics.bias.estimator_report import ALL  # needs scipy: imported here
    from metrics.bias.estimators import estimator_report
    from metrics.bias.leaveout import LeaveOut

    report = estimator_report(
        qrels,
        runs,
        args.measure,
        LeaveOut(
            depth=args.depth,
            pooled=pooled,
            groups=groups if leave_out == "group" else None,
            leave_out=leave_out,
            topics=topics,
            relevance_level=args.level,
            compat="trec_eval" if args.compat == "trec_eval" else None,
        ),
        top75=args.top75,
        estimators=ALL if names is None else names,
    )
    if args.format == "json":
        json.dump(report.to_dict(), out, indent=2)
        out.write("\n")
    else:
        _write_estimators_tsv(report, out)
    return EXIT_OK


def _write_estimators_tsv(report: EstimatorReport, out: TextIO) -> None:
    d = report.to_dict()
    cols = ["estimator", "applicable", "mae", "sre", "sre_star", "kendall_tau", "n_runs", "why"]
    out.write("\t".join(cols) + "\n")
    for name, e in d["estimators"].items():
        if e["applicable"]:
            row = [
                name,
                "yes",
                _cell(e["mae"]),
                str(e["sre"]),
                str(e["sre_star"]),
                _cell(e["kendall_tau"]),
                str(e["n_runs"]),
                "",
            ]
        else:
            row = [name, "no", "", "", "", "", "", e["why"]]
        out.write("\t".join(row) + "\n")
    unit = "group" if report.leave_out == "group" else "run"
    rec = d["recommended"]
    print(
        f"# {report.measure} ({report.compat} mode), depth {report.depth}, leave-one-{unit}-out "
        f"over {report.n_units} units, {len(report.topics)} topics: recommended "
        + (f"{rec}: {d['recommended_why']}" if rec else "none (no estimator has a measured error)"),
        file=sys.stderr,
    )


def _compare_module() -> Any:
    import importlib
    import importlib.util

    if importlib.util.find_spec("metrics.cli.bias_compare") is None:
        return None
    return importlib.import_module("metrics.cli.bias_compare")


def dispatch(argv: list[str], out: TextIO) -> int:
    """``python -m metrics bias SUB ...`` for SUB in :data:`SUBCOMMANDS` (``argv`` starts with
    SUB): estimators here; compare and reusability in :mod:`metrics.cli.bias_compare`."""
    sub, rest = argv[0], list(argv[1:])
    if sub == "estimators":
        return run_estimators(rest, out)
    module = _compare_module()
    if module is None:
        return _fail_as(
            f"{PROG} {sub}",
            f"'bias {sub}' is not available here (its module metrics.cli.bias_compare is not "
            "installed); available: bias QRELS RUN..., bias estimators ...",
            EXIT_USAGE,
        )
    fn = module.run_compare if sub == "compare" else module.run_reusability
    code: int = fn(rest, out)
    return code
