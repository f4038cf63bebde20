"""``python -m metrics compare``: every pair of runs with a paired test and a multiple-comparison
correction."""

from __future__ import annotations

import argparse
import csv
import json
import sys
from typing import Any, TextIO

from metrics.cli.evaluate import EXIT_OK, EXIT_USAGE, _add_eval_options, _evaluator, _iter_runs


def register_compare(subparsers: Any) -> None:
    """Add ``compare``."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "compare", help="paired significance tests between runs (Holm-corrected)"
    )
    _add_eval_options(p)
    p.add_argument("runs", nargs="+", metavar="RUN", help="two or more run files")
    p.add_argument("--test", choices=("t", "randomization", "bootstrap"), default="randomization")
    p.add_argument("--format", choices=("text", "json", "csv"), default="text")
    p.set_defaults(func=_cmd_compare)


def _cmd_compare(args: argparse.Namespace, out: TextIO) -> int:
    if len(args.runs) < 2:
        print("compare: error: give at least two runs", file=sys.stderr)
        return EXIT_USAGE
    if not args.measures:
        print("compare: error: give at least one measure with -m", file=sys.stderr)
        return EXIT_USAGE
    from metrics.stats.paired import compare_runs

    args.ci = "none"
    ev, measures = _evaluator(args, args.measures)
    results = [(tag, ev.evaluate(run)) for tag, run in _iter_runs(args)]
    queries = sorted({q for _, r in results for q in r.queries}, key=lambda q: q.encode())
    tables: list[dict[str, Any]] = []
    for m in measures:
        per_query = {tag: r.per_query[m.name] for tag, r in results}
        rows = compare_runs(per_query, test=args.test, seed=args.seed, queries=queries)
        tables.append({"measure": m.name, "rows": [_row(c) for c in rows]})
    if args.format == "json":
        mode = results[0][1].mode
        json.dump(
            {"test": args.test, "mode": mode, "n_queries": len(queries), "tables": tables},
            out,
            indent=2,
        )
        out.write("\n")
    elif args.format == "csv":
        fields = [
            "measure",
            "run_a",
            "run_b",
            "mean_a",
            "mean_b",
            "diff",
            "p_value",
            "p_holm",
            "significant",
        ]
        w = csv.DictWriter(out, fieldnames=fields, lineterminator="\n", extrasaction="ignore")
        w.writeheader()
        for t in tables:
            for row in t["rows"]:
                w.writerow({"measure": t["measure"], **row})
    else:
        for t in tables:
            out.write(f"{t['measure']} ({args.test} test, {len(queries)} queries, Holm)\n")
            out.write(
                f"{'run_a':<20} {'run_b':<20} {'mean_a':>8} {'mean_b':>8} {'diff':>8} "
                f"{'p':>8} {'p_holm':>8}\n"
            )
            for row in t["rows"]:
                star = " *" if row["significant"] else ""
                out.write(
                    f"{row['run_a']:<20} {row['run_b']:<20} {row['mean_a']:>8.4f} "
                    f"{row['mean_b']:>8.4f} {row['diff']:>+8.4f} {row['p_value']:>8.4f} "
                    f"{row['p_holm']:>8.4f}{star}\n"
                )
    return EXIT_OK


def _row(c: Any) -> dict[str, Any]:
    return {
        "run_a": c.run_a,
        "run_b": c.run_b,
        "mean_a": c.mean_a,
        "mean_b": c.mean_b,
        "diff": c.diff,
        "p_value": c.p_value,
        "p_holm": c.p_holm,
        "significant": bool(c.significant),
    }
