"""``python -m metrics bias compare|reusability``: qrels versions compared; a reusability verdict.

    python -m metrics bias compare QRELS_A QRELS_B RUN [RUN ...] [-m AP] [--novel TAG,...]
                           [--recall-k K] [--topics SPEC] [--labels v1,v2]
                           [--compat trec_eval|honest] [-l LEVEL] [--format json|tsv]
    python -m metrics bias reusability QRELS RUN [RUN ...] [--depth K] [--groups runs.tsv]
                           [--pooled TAG,...] [-m AP] [--topics SPEC]
                           [--compat trec_eval|honest] [-l LEVEL] [--format json|text]

``compare`` scores every run under both qrels versions on the topics both can score
(:func:`metrics.bias.versions.compare_qrels_versions`; the topics that differ are named). ``json``
(default) is its ``to_dict()``; ``tsv`` is one row per run sorted by rank under the second
version, with the topics note, the rank correlations and the other runs' recall change on
stderr. ``reusability`` is :func:`metrics.bias.reusability.reusability`: ``json`` (default) its
``to_dict()``, ``text`` the verdict, its basis and the per-topic counts.

A run's tag is the tag in its file (the path when the file has none); the same tag twice is an
error. ``runs.tsv`` is ``run<TAB>group`` with a header line. Defaults: ``-m AP``, ``--recall-k
1000``, ``--labels a,b``, ``--depth 10``, every run pooled, groups unknown (units are runs),
trec_eval-compatible scoring, every topic.

Exit codes: 0 ok, 2 usage (bad option or topic spec), 3 bad input (unreadable or invalid file,
a run missing from the groups file, no topic both versions can score), 4 unknown measure.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from metrics.cli._bias_options import add_scoring_options
from metrics.cli._read import (
    SameTag,
    add_line_limit,
    line_limits,
    read_qrels_any,
    read_runs_said,
)
from metrics.io import InvalidInput, Run
from metrics.measures.names import UnknownMeasureError

__all__ = ["register_compare", "register_reusability", "run_compare", "run_reusability"]

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_INPUT = 3
EXIT_MEASURE = 4

COMPARE_PROG = "python -m metrics bias compare"
REUSABILITY_PROG = "python -m metrics bias reusability"


class _Fail(Exception):
    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


# --------------------------------------------------------------------------------------------
# parsers


def _add_compare(p: argparse.ArgumentParser) -> None:
    p.add_argument("qrels_a", metavar="QRELS_A", help="qrels before (plain or gzip)")
    p.add_argument("qrels_b", metavar="QRELS_B", help="qrels after (plain or gzip)")
    p.add_argument("runs", nargs="+", metavar="RUN", help="run files (plain or gzip)")
    add_scoring_options(p)
    add_line_limit(p)
    p.add_argument(
        "--novel", default="", help="tags of the runs added to the pool, comma-separated"
    )
    p.add_argument("--recall-k", type=int, default=1000, help="k of the recall R@k (default 1000)")
    p.add_argument("--labels", default="a,b", help="names of the two versions (default a,b)")
    p.add_argument("--format", choices=("json", "tsv"), default="json")


def _add_reusability(p: argparse.ArgumentParser) -> None:
    p.add_argument("qrels", metavar="QRELS", help="qrels file (plain or gzip)")
    p.add_argument("runs", nargs="+", metavar="RUN", help="run files (plain or gzip)")
    p.add_argument("--depth", type=int, default=10, help="pool depth K (default 10)")
    p.add_argument("--groups", help="run<TAB>group file with a header line (units = groups)")
    p.add_argument("--pooled", help="tags of the pooled runs, comma-separated (default: all)")
    add_scoring_options(p)
    add_line_limit(p)
    p.add_argument("--format", choices=("json", "text"), default="json")


def _parser(prog: str, add: Callable[[argparse.ArgumentParser], None], what: str) -> Any:
    p = argparse.ArgumentParser(prog=prog, description=what)
    add(p)
    return p


_COMPARE_HELP = (
    "Every run's score, rank and recall under two qrels versions, on the topics both can score, "
    "with paired 95%% intervals and the rank correlations."
)
_REUSABILITY_HELP = (
    "Is the collection reusable for a system outside the pool? Unique relevant documents, "
    "leave-one-group-out drops, Judged@k, pooling efficiency and a verdict."
)


def register_compare(subparsers: Any) -> None:
    """Add ``compare`` to a subparsers object (e.g. the ``bias`` command's)."""
    p = subparsers.add_parser(
        "compare", help="two qrels versions on the same topics", description=_COMPARE_HELP
    )
    _add_compare(p)
    p.set_defaults(func=lambda args, out: _guarded(COMPARE_PROG, _compare, args, out))


def register_reusability(subparsers: Any) -> None:
    """Add ``reusability`` to a subparsers object (e.g. the ``bias`` command's)."""
    p = subparsers.add_parser(
        "reusability", help="is the collection reusable: a verdict", description=_REUSABILITY_HELP
    )
    _add_reusability(p)
    p.set_defaults(func=lambda args, out: _guarded(REUSABILITY_PROG, _reusability, args, out))


def run_compare(argv: Sequence[str], out: TextIO) -> int:
    """``python -m metrics bias compare ARGV``: parse, compare, print; returns the exit code."""
    return _run(COMPARE_PROG, _add_compare, _COMPARE_HELP, _compare, argv, out)


def run_reusability(argv: Sequence[str], out: TextIO) -> int:
    """``python -m metrics bias reusability ARGV``: parse, report, print; the exit code."""
    return _run(REUSABILITY_PROG, _add_reusability, _REUSABILITY_HELP, _reusability, argv, out)


Command = Callable[[argparse.Namespace, TextIO], int]


def _run(
    prog: str,
    add: Callable[[argparse.ArgumentParser], None],
    what: str,
    command: Command,
    argv: Sequence[str],
    out: TextIO,
) -> int:
    try:
        args = _parser(prog, add, what).parse_args(list(argv))
    except SystemExit as exc:  # argparse: usage error (2) or --help (0)
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    return _guarded(prog, command, args, out)


def _guarded(prog: str, command: Command, args: argparse.Namespace, out: TextIO) -> int:
    """Run ``command``, turning every expected failure into a message and an exit code."""
    try:
        return command(args, out)
    except _Fail as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return exc.code
    except InvalidInput as exc:
        for p in exc.problems:
            where = f"{exc.source} line {p.line}" if p.line else str(exc.source)
            print(f"{prog}: error: {where}: {p.message}", file=sys.stderr)
        if exc.total > len(exc.problems):
            print(f"{prog}: error: ... and {exc.total - len(exc.problems)} more", file=sys.stderr)
        return EXIT_INPUT
    except UnknownMeasureError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return EXIT_MEASURE
    except OSError as exc:
        print(f"{prog}: error: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_INPUT


# --------------------------------------------------------------------------------------------
# shared input handling


def _tags(text: str | None, option: str) -> list[str]:
    if not text:
        return []
    tags = [t.strip() for t in text.split(",")]
    if any(not t for t in tags):
        raise _Fail(f"{option}: empty tag in {text!r} (comma-separated tags)", EXIT_USAGE)
    return tags


def _topics(spec: str | None) -> list[str] | None:
    if spec is None:
        return None
    from metrics.pooling.runs import parse_topic_spec

    try:
        return parse_topic_spec(spec)
    except ValueError as exc:
        raise _Fail(f"--topics: {exc}", EXIT_USAGE) from exc


def _check_level(level: int) -> None:
    if level < 1:
        raise _Fail(f"-l/--level must be >= 1, got {level}", EXIT_USAGE)


def _read_runs(args: argparse.Namespace) -> dict[str, Run]:
    try:
        return read_runs_said(args.runs, line_limits(args))
    except SameTag as exc:
        raise _Fail(str(exc), EXIT_INPUT) from None


def _unknown(tags: Sequence[str], runs: dict[str, Run], option: str) -> None:
    missing = [t for t in tags if t not in runs]
    if missing:
        raise _Fail(f"{option}: not the tag of any run given: {', '.join(missing[:5])}", EXIT_USAGE)


def _measure(name: str) -> None:
    from metrics.measures.names import parse_measure

    parse_measure(name)  # UnknownMeasureError -> exit 4, before any file is read


# --------------------------------------------------------------------------------------------
# compare


def _compare(args: argparse.Namespace, out: TextIO) -> int:
    from metrics.bias.versions import compare_qrels_versions

    if args.recall_k < 1:
        raise _Fail(f"--recall-k must be >= 1, got {args.recall_k}", EXIT_USAGE)
    _check_level(args.level)
    labels = [x.strip() for x in args.labels.split(",")]
    if len(labels) != 2 or not all(labels) or labels[0] == labels[1]:
        raise _Fail(f"--labels: two different names, e.g. v1,v2; got {args.labels!r}", EXIT_USAGE)
    topics = _topics(args.topics)
    novel = _tags(args.novel, "--novel")
    _measure(args.measure)
    limits = line_limits(args)
    qrels_a = read_qrels_any(args.qrels_a, limits)
    qrels_b = read_qrels_any(args.qrels_b, limits)
    runs = _read_runs(args)
    _unknown(novel, runs, "--novel")
    try:
        cmp = compare_qrels_versions(
            qrels_a,
            qrels_b,
            runs,
            args.measure,
            novel=novel,
            recall_k=args.recall_k,
            topics=topics,
            relevance_level=args.level,
            compat="trec_eval" if args.compat == "trec_eval" else None,
            labels=(labels[0], labels[1]),
        )
    except UnknownMeasureError:
        raise
    except ValueError as exc:  # no topic both versions can score
        raise _Fail(str(exc), EXIT_INPUT) from exc
    result = cmp.to_dict()
    if args.format == "json":
        json.dump(result, out, indent=2)
        out.write("\n")
    else:
        _compare_tsv(result, out)
    return EXIT_OK


def _cell(x: float | None, digits: int = 4) -> str:
    return "" if x is None else f"{x:.{digits}f}"


def _p(x: float | None) -> str:
    if x is None:
        return ""
    return "<0.0001" if x < 0.0001 else f"{x:.4f}"


def _int(x: int | None) -> str:
    return "" if x is None else str(x)


def _compare_tsv(res: dict[str, Any], out: TextIO) -> None:
    la, lb = res["labels"]
    cols = [
        "run",
        "novel",
        f"score_{la}",
        f"score_{lb}",
        "delta",
        "delta_ci_low",
        "delta_ci_high",
        "delta_p",
        f"rank_{la}",
        f"rank_{lb}",
        "rank_change",
        f"recall_{la}",
        f"recall_{lb}",
        "recall_delta",
        "recall_change",
        f"new_topics_score_{lb}",
        f"new_topics_rank_{lb}",
    ]
    out.write("\t".join(cols) + "\n")

    def order(kv: tuple[str, dict[str, Any]]) -> tuple[int, str]:
        rank = kv[1]["rank_b"]
        return (rank if rank is not None else 1 << 30, kv[0])

    for tag, r in sorted(res["runs"].items(), key=order):
        ci = r["delta_ci"] or [None, None]
        new = r["new_topics"] or {}
        row = [
            tag,
            "yes" if r["novel"] else "no",
            _cell(r["score_a"]),
            _cell(r["score_b"]),
            _cell(r["delta"]),
            _cell(ci[0]),
            _cell(ci[1]),
            _p(r["delta_p"]),
            _int(r["rank_a"]),
            _int(r["rank_b"]),
            _int(r["rank_change"]),
            _cell(r["recall_a"]),
            _cell(r["recall_b"]),
            _cell(r["recall_delta"]),
            r["recall_change"] or "",
            _cell(new.get("score_b")),
            _int(new.get("rank_b")),
        ]
        out.write("\t".join(row) + "\n")
    tau, tap = res["kendall_tau"], res["tau_ap"]
    print(
        f"# {res['measure']} ({res['mode']} mode), {la} -> {lb}: {res['topics_note']}; "
        f"Kendall tau-b {_cell(tau, 3) or 'undefined'}, tau_AP {_cell(tap, 3) or 'undefined'}",
        file=sys.stderr,
    )
    print(f"# {res['others_recall_summary']}", file=sys.stderr)


# --------------------------------------------------------------------------------------------
# reusability


def _reusability(args: argparse.Namespace, out: TextIO) -> int:
    from metrics.bias.leaveout import LeaveOut
    from metrics.bias.reusability import reusability
    from metrics.cli._bias_options import read_groups

    if args.depth < 1:
        raise _Fail(f"--depth must be >= 1, got {args.depth}", EXIT_USAGE)
    _check_level(args.level)
    topics = _topics(args.topics)
    pooled = _tags(args.pooled, "--pooled") or None
    _measure(args.measure)
    qrels = read_qrels_any(args.qrels, line_limits(args))
    runs = _read_runs(args)
    if pooled is not None:
        _unknown(pooled, runs, "--pooled")
    groups = None
    if args.groups:
        groups = read_groups(args.groups)
        missing = [t for t in (pooled or runs) if t not in groups]
        if missing:
            shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
            raise _Fail(f"{args.groups}: no group for pooled run(s) {shown}", EXIT_INPUT)
    if topics is not None and not set(topics) & set(qrels.qids):
        raise _Fail(f"--topics {args.topics}: none of these topics is in the qrels", EXIT_INPUT)
    try:
        rep = reusability(
            qrels,
            runs,
            LeaveOut(
                depth=args.depth,
                pooled=pooled,
                groups=groups,
                topics=topics,
                relevance_level=args.level,
                compat="trec_eval" if args.compat == "trec_eval" else None,
            ),
            measure=args.measure,
        )
    except UnknownMeasureError:
        raise
    except ValueError as exc:
        raise _Fail(str(exc), EXIT_INPUT) from exc
    result = rep.to_dict()
    if args.format == "json":
        json.dump(result, out, indent=2)
        out.write("\n")
    else:
        _reusability_text(result, out)
    return EXIT_OK


def _reusability_text(res: dict[str, Any], out: TextIO) -> None:
    out.write(res["verdict"] + "\n\nBasis:\n")
    for line in res["basis"]:
        out.write(f"- {line}\n")
    eff = res["efficiency"]
    out.write("\nPooling efficiency (cumulative over topics):\n")
    out.write("depth\tpooled\tjudged\trelevant\trelevant_per_new_judgment\n")
    for i, d in enumerate(eff["depths"]):
        rate = eff["relevant_per_judgment"][i]
        out.write(
            f"{d}\t{eff['pooled'][i]}\t{eff['judged'][i]}\t{eff['relevant'][i]}\t"
            f"{'' if rate is None else f'{rate:.4f}'}\n"
        )
    out.write("\nPer topic:\n")
    out.write("topic\tpooled\tjudged\trelevant\trelevant_at_deepest\tshallow\n")
    for qid, t in res["per_topic"].items():
        out.write(
            f"{qid}\t{t['pooled']}\t{t['judged']}\t{t['relevant']}\t{t['relevant_at_deepest']}\t"
            f"{'yes' if t['shallow'] else 'no'}\n"
        )
    unit = res["leave_out"]
    out.write(f"\nRelevant documents only one {unit} found, per {unit}:\n")
    for name, n in sorted(res["unique_relevant"].items(), key=lambda kv: (-kv[1], kv[0])):
        out.write(f"{name}\t{n}\n")
