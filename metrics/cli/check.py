"""``python -m metrics check``: a regression check for a retrieval team's CI.

    python -m metrics check QRELS RUN --baseline BASE_RUN -m nDCG@10 [-m R@100 ...]
                            --max-drop 0.01|2% [--test t|randomization|bootstrap]
                            [--alpha 0.05] [--correction none|holm|bonferroni|bh]
                            [--judged-tolerance 0.05] [--min-judged 0.9] [--format text|json]

Fails (exit 1) when a measure drops by more than ``--max-drop`` and the paired test finds the
drop significant; see :mod:`metrics.evaluation.check` for every figure and decision. The text output
is a table (measure, baseline, run, delta, CI, p, judged@k run/baseline, verdict) and a last line
``PASS``, ``PASS (warning: ...)`` or ``FAIL: nDCG@10 dropped 0.023 (p = 0.004)``.

Exit codes: 0 pass (a drop beyond the threshold that is not significant is a warning, still 0),
1 regression found, 2 usage, 3 bad input file (file, line and problem on stderr), 4 unknown
measure.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from metrics.cli._read import add_line_limit
from metrics.evaluation.check import (
    DEFAULT_JUDGED_TOLERANCE,
    DEFAULT_MIN_JUDGED,
    CheckResult,
    parse_max_drop,
    regression_check,
)

__all__ = ["EXIT_REGRESSION", "register", "write_text"]

EXIT_OK = 0
EXIT_REGRESSION = 1
EXIT_USAGE = 2


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text!r} is not between 0 and 1")
    return value


def register(subparsers: Any) -> None:
    """Add ``check``."""
    from metrics.stats.multiple import CORRECTIONS

    p: argparse.ArgumentParser = subparsers.add_parser(
        "check",
        help="regression check of a run against a baseline run (exit 1 on a significant drop)",
        description="Fail (exit 1) when a measure of RUN drops below BASELINE's by more than "
        "--max-drop and a paired test finds the drop significant.",
    )
    p.add_argument("qrels", help="qrels file (qid iter docid grade; plain or gzip)")
    p.add_argument("run", metavar="RUN", help="the new run (plain or gzip)")
    p.add_argument("--baseline", required=True, metavar="BASE_RUN", help="the baseline run")
    p.add_argument(
        "-m",
        "--measure",
        action="append",
        dest="measures",
        metavar="MEASURE",
        required=True,
        help="measure to check (nDCG@10, R@100, AP, ndcg_cut_10 ...); repeatable",
    )
    p.add_argument(
        "--max-drop",
        required=True,
        metavar="X",
        help="largest drop allowed: absolute (0.01) or relative to the baseline's score (2%%)",
    )
    p.add_argument(
        "--test",
        choices=("t", "randomization", "bootstrap"),
        default="t",
        help="paired test (default: t)",
    )
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    p.add_argument(
        "--correction",
        choices=CORRECTIONS,
        default="none",
        help="multiple-comparison correction across the measures (default: none; each "
        "measure is its own gate)",
    )
    p.add_argument("--ci-level", type=float, default=0.95, help="CI level (default 0.95)")
    p.add_argument(
        "--judged-tolerance",
        type=_fraction,
        default=DEFAULT_JUDGED_TOLERANCE,
        help="flag a drop when the run's judged@k is this much below the baseline's "
        f"(default {DEFAULT_JUDGED_TOLERANCE})",
    )
    p.add_argument(
        "--min-judged",
        type=_fraction,
        default=DEFAULT_MIN_JUDGED,
        help=f"flag a drop when the run's judged@k is below this (default {DEFAULT_MIN_JUDGED}) "
        "and at least 0.01 below the baseline's",
    )
    p.add_argument(
        "-l", "--level", type=int, default=1, help="relevance level: relevant = grade >= LEVEL"
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap and randomization")
    add_line_limit(p)
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(func=_cmd_check)


def _cmd_check(args: argparse.Namespace, out: TextIO) -> int:
    from metrics.cli._read import line_limits, read_qrels_any, read_run_said
    from metrics.measures.names import parse_measures

    try:
        max_drop, relative = parse_max_drop(args.max_drop)
    except ValueError as exc:
        print(f"python -m metrics check: error: --max-drop: {exc}", file=sys.stderr)
        return EXIT_USAGE
    measures = parse_measures(args.measures)  # an unknown measure: exit 4 before any reading
    limits = line_limits(args)
    qrels = read_qrels_any(args.qrels, limits)
    run = read_run_said(args.run, limits)
    baseline = read_run_said(args.baseline, limits)
    result = regression_check(
        qrels,
        run,
        baseline,
        measures,
        max_drop,
        test=args.test,
        alpha=args.alpha,
        correction=args.correction,
        relative=relative,
        ci_level=args.ci_level,
        judged_tolerance=args.judged_tolerance,
        min_judged=args.min_judged,
        relevance_level=args.level,
        seed=args.seed,
    )
    if args.format == "json":
        doc = {"qrels": args.qrels, "run_file": args.run, "baseline_file": args.baseline}
        json.dump({**doc, **result.to_dict()}, out, indent=2)
        out.write("\n")
    else:
        write_text(result, out, run_file=args.run, baseline_file=args.baseline)
    return EXIT_OK if result.passed else EXIT_REGRESSION


def _f(v: float | None) -> str:
    return "-" if v is None or v != v else f"{v:.4f}"


def _p(p: float, n_resamples: int) -> str:
    if p == 0.0:  # the bootstrap test's p can be 0: read it as below 1/B
        return f"<{1.0 / n_resamples:.2g}"
    return f"{p:.2g}" if p < 0.001 else f"{p:.4f}"


def write_text(
    result: CheckResult, out: TextIO, *, run_file: str = "", baseline_file: str = ""
) -> None:
    """The table and the PASS/FAIL line; the settings as ``#`` lines above it."""
    run = f"{result.run} ({run_file})" if run_file else result.run
    base = f"{result.baseline} ({baseline_file})" if baseline_file else result.baseline
    lines = [f"# run {run} against baseline {base}", f"# {result.method}"]
    lines += [f"# {n}" for n in result.notes]
    lines.append(
        "# judged@k: Judged@k at the measure's cut-off k, Judged (the whole ranking) for "
        "measures without one"
    )
    ci = f"{result.ci_level:.0%} CI"
    corrected = result.correction != "none"
    header = ["measure", "baseline", "run", "delta", ci, "p"]
    header += [f"p_{result.correction}"] if corrected else []
    header += ["judged@k run/baseline", "verdict"]
    rows = [header]
    for m in result.measures:
        judged = (
            f"{m.judged_measure} {_f(m.judged_run)}/{_f(m.judged_baseline)}"
            if m.judged_measure
            else "-"
        )
        row = [
            m.measure,
            _f(m.baseline),
            _f(m.run),
            f"{m.delta:+.4f}",
            f"[{m.ci_low:+.4f}, {m.ci_high:+.4f}]",
            _p(m.p_value, result.n_resamples),
        ]
        row += [_p(m.p_adjusted, result.n_resamples)] if corrected else []
        row += [judged, m.verdict + (" (unjudged?)" if m.unjudged else "")]
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    for r in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    lines += [f"note: {m.measure}: {m.unjudged_note}" for m in result.measures if m.unjudged]
    lines.append(result.summary)
    out.write("\n".join(lines) + "\n")
