"""Evaluate runs with metrics vs pytrec_eval, ranx and ir_measures: wall time and peak memory.

    .venv/bin/python benchmarks/metrics_bench.py [--repeat 3] [--case synthetic|medical|all]

Case "synthetic": 1,000 queries x 1,000 documents (a 1,000,000-line run) and qrels with about
100 judged documents per query, grades 0-3 (fixed seed, written to a temporary directory);
measures nDCG@10, R@100, P@10, RR, AP with per-query values. Case "medical": the 127 TREC 2011
Medical runs of ../shared/data (decompressed beforehand, otherwise unmodified: one run's three
NaN scores included), 10 measures.

Every measurement runs in its own process (``--child``), tools taking turns round by round;
the timed region is the work only:
reading the qrels and run files, and evaluating to per-query values (interpreter start-up and
imports excluded for every tool; ranx's numba JIT is warmed on a tiny input first, in the same
process). Figures are the median of ``--repeat`` runs; memory is the child's peak RSS
(``VmHWM``). "ours" runs in trec_eval mode without confidence intervals (what the peers
compute); "ours honest+CI" is the default mode with 2,000-resample bootstrap intervals, Judged@k,
ceilings and the three unjudged treatments.

The CLI path is measured as a user runs it: "ours CLI trec_eval" is ``python -m metrics evaluate
QRELS RUN... -m ... --compat trec_eval`` and "ours CLI honest" the same command in the default
mode, each a fresh process timed from outside (interpreter start-up, imports, reading, evaluating
and writing the output to a file: the whole wall time), bytecode compiled beforehand and each
command run once untimed first (as after an install); peak memory from ``wait4``'s
``ru_maxrss`` for that process alone. "pytrec_eval process" is the same for a minimal script
that imports pytrec_eval, reads the files and evaluates. The CLI's time is reported against
pytrec_eval's timed work (the stricter ratio: only the CLI pays start-up and imports) and
against the pytrec_eval process.
"""

from __future__ import annotations

import argparse
import compileall
import gzip
import importlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _peak import peak_rss_mb

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("POOLJUDGE_SHARED_DATA", ROOT.parent / "shared" / "data"))

# measure name per tool: ours (ir_measures style is also ir_measures'), trec_eval, ranx
SYNTHETIC = [
    ("nDCG@10", "ndcg_cut_10", "ndcg@10"),
    ("R@100", "recall_100", "recall@100"),
    ("P@10", "P_10", "precision@10"),
    ("RR", "recip_rank", "mrr"),
    ("AP", "map", "map"),
]
MEDICAL = [
    *SYNTHETIC,
    ("P@100", "P_100", "precision@100"),
    ("P@1000", "P_1000", "precision@1000"),
    ("nDCG", "ndcg", "ndcg"),
    ("Rprec", "Rprec", "r-precision"),
    ("Bpref", "bpref", "bpref"),
]
CLI_TOOLS = ["ours CLI trec_eval", "ours CLI honest", "pytrec_eval process"]
TOOLS = ["ours", "ours honest+CI", "pytrec_eval", "ranx", "ir_measures", *CLI_TOOLS]

# the pytrec_eval side of the process comparison: what a user's own evaluation script would do
PYTREC_SCRIPT = """
import sys, pytrec_eval
with open(sys.argv[1]) as f:
    ev = pytrec_eval.RelevanceEvaluator(pytrec_eval.parse_qrel(f), sys.argv[2].split(","))
for path in sys.argv[3:]:
    with open(path) as f:
        ev.evaluate(pytrec_eval.parse_run(f))
"""


# --------------------------------------------------------------------------------------------
# data


def make_synthetic(folder: Path, queries: int, docs: int) -> tuple[Path, list[Path]]:
    """A run of queries x docs lines and qrels of ~100 judged documents per query, grades 0-3."""
    import numpy as np

    rng = np.random.default_rng(20261130)
    run_path, qrels_path = folder / "run.txt", folder / "qrels.txt"
    with run_path.open("w") as run, qrels_path.open("w") as qrels:
        for q in range(queries):
            ids = rng.choice(docs * 50, size=docs, replace=False)
            scores = np.sort(rng.random(docs) * 30.0)[::-1]
            run.write(
                "".join(
                    f"q{q} Q0 doc{d} {r} {s:.6f} bench\n"
                    for r, (d, s) in enumerate(zip(ids.tolist(), scores.tolist(), strict=True), 1)
                )
            )
            # ~100 judged: 70 from the run's top 200 (pooled), 30 never retrieved
            pooled = rng.choice(ids[:200], size=70, replace=False).tolist()
            unseen = (docs * 50 + rng.choice(docs * 10, size=30, replace=False)).tolist()
            grades = rng.choice(4, size=100, p=[0.55, 0.25, 0.12, 0.08]).tolist()
            qrels.write(
                "".join(
                    f"q{q} 0 doc{d} {g}\n" for d, g in zip(pooled + unseen, grades, strict=True)
                )
            )
    return qrels_path, [run_path]


def make_medical(folder: Path) -> tuple[Path, list[Path]]:
    """Decompressed copies of the 127 Medical runs (unmodified: uogTrDeNsEc's three NaN scores
    included, which every tool here reads; where the peers rank them is their sort's business)
    and the qrels."""
    src = DATA / "trec2011-medical"
    runs = []
    for path in sorted((src / "runs").glob("input.*.gz")):
        out = folder / path.name[: -len(".gz")]
        out.write_bytes(gzip.decompress(path.read_bytes()))
        runs.append(out)
    qrels = folder / "qrels.txt"
    qrels.write_bytes((src / "qrels.txt").read_bytes())
    return qrels, runs


# --------------------------------------------------------------------------------------------
# children: one tool, timed work only


def _child(tool: str, qrels: str, runs: list[str], measures: list[tuple[str, str, str]]) -> None:
    ours = [m[0] for m in measures]
    trec = {m[1] for m in measures}
    ranx_names = [m[2] for m in measures]
    values = 0
    if tool.startswith("ours"):
        from metrics import Evaluator, read_qrels, read_run

        honest = tool != "ours"
        if honest:  # intervals need scipy: an import, kept outside the timing like the others
            import metrics.stats  # noqa: F401
        t0 = time.perf_counter()
        ev = Evaluator(
            read_qrels(qrels),
            ours,
            compat=None if honest else "trec_eval",
            ci="bootstrap" if honest else None,
        )
        for path in runs:
            res = ev.evaluate(read_run(path))
            values += sum(len(v) for v in res.per_query.values())
    elif tool == "pytrec_eval":
        import pytrec_eval

        t0 = time.perf_counter()
        with open(qrels) as f:
            q = pytrec_eval.parse_qrel(f)
        ev = pytrec_eval.RelevanceEvaluator(q, trec)
        for path in runs:
            with open(path) as f:
                r = pytrec_eval.parse_run(f)
            per_query = ev.evaluate(r)
            values += sum(len(v) for v in per_query.values())
    elif tool == "ranx":
        from ranx import Qrels, Run, evaluate

        warm_q = Qrels({"q": {"a": 1, "b": 2}})
        warm_r = Run({"q": {"a": 1.0, "b": 0.5, "c": 0.2}})
        evaluate(warm_q, warm_r, ranx_names)  # numba JIT compilation, outside the timing
        t0 = time.perf_counter()
        q = Qrels.from_file(qrels, kind="trec")
        for path in runs:
            r = Run.from_file(path, kind="trec")
            # make_comparable: score queries missing from the run 0 and drop unjudged ones
            evaluate(q, r, ranx_names, return_mean=False, make_comparable=True)
            values += len(r.scores) * len(ranx_names)
    elif tool == "ir_measures":
        # typed as Any: installed only with the bench extra, and its readers are untyped
        ir_measures: Any = importlib.import_module("ir_measures")

        parsed = [ir_measures.parse_measure(m) for m in ours]
        t0 = time.perf_counter()
        judged = list(ir_measures.read_trec_qrels(qrels))
        for path in runs:
            run_rows = ir_measures.read_trec_run(path)
            values += sum(1 for _ in ir_measures.iter_calc(parsed, judged, run_rows))
    else:
        raise SystemExit(f"unknown tool {tool}")
    seconds = time.perf_counter() - t0
    rss_mb = peak_rss_mb()
    print(json.dumps({"seconds": seconds, "rss_mb": rss_mb, "values": values}))


def _cli_command(tool: str, qrels: Path, runs: list[Path], case: str) -> list[str]:
    measures = SYNTHETIC if case == "synthetic" else MEDICAL
    paths = [str(qrels), *map(str, runs)]
    if tool == "pytrec_eval process":
        trec = ",".join(m[1] for m in measures)
        return [sys.executable, "-c", PYTREC_SCRIPT, paths[0], trec, *paths[1:]]
    cmd = [sys.executable, "-m", "metrics", "evaluate", *paths]
    cmd += [f"-m{m[0]}" for m in measures]
    return [*cmd, "--compat", "trec_eval"] if tool == "ours CLI trec_eval" else cmd


def _once_process(tool: str, qrels: Path, runs: list[Path], case: str) -> dict[str, Any]:
    """Wall time and peak RSS of one fresh process, timed from the outside."""
    cmd = _cli_command(tool, qrels, runs, case)
    path = [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=ROOT, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        lines = out.read().decode().splitlines()
        if proc.returncode != 0:
            return {"error": err.read().decode().strip().splitlines()[-1:]}
    # values printed (aggregates only, as trec_eval without -q); 0 for the pytrec_eval script
    return {"seconds": seconds, "rss_mb": usage.ru_maxrss / 1024, "values": len(lines)}


def _once(tool: str, qrels: Path, runs: list[Path], case: str) -> dict[str, Any]:
    if tool in CLI_TOOLS:
        return _once_process(tool, qrels, runs, case)
    cmd = [sys.executable, __file__, "--child", tool, "--case", case, "--qrels", str(qrels)]
    proc = subprocess.run(
        [*cmd, "--runs", *map(str, runs)], capture_output=True, text=True, check=False, cwd=ROOT
    )
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1:]}
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


def _measure_all(
    tools: list[str], qrels: Path, runs: list[Path], case: str, repeat: int
) -> list[dict[str, Any]]:
    """Median over ``repeat`` rounds; each round runs every tool once (round-robin), so a change
    of machine load between rounds affects all tools alike."""
    samples: dict[str, list[dict[str, Any]]] = {t: [] for t in tools}
    for tool in tools:  # warm-up, untimed: the page cache, and any bytecode not yet written
        if tool in CLI_TOOLS:
            _once(tool, qrels, runs, case)
    for _ in range(repeat):
        for tool in tools:
            samples[tool].append(_once(tool, qrels, runs, case))
    rows = []
    for tool in tools:
        errors = [s["error"] for s in samples[tool] if "error" in s]
        if errors:
            rows.append({"tool": tool, "error": errors[0]})
            continue
        rows.append(
            {
                "tool": tool,
                "seconds": statistics.median(s["seconds"] for s in samples[tool]),
                "range": (
                    min(s["seconds"] for s in samples[tool]),
                    max(s["seconds"] for s in samples[tool]),
                ),
                "rss_mb": statistics.median(s["rss_mb"] for s in samples[tool]),
                "values": samples[tool][0]["values"],
            }
        )
    return rows


def _report(title: str, rows: list[dict[str, Any]]) -> None:
    timed = [r for r in rows if "seconds" in r]
    if not timed:
        print(f"\n{title}: every tool failed: {[r['error'] for r in rows]}")
        return
    base = next((r for r in timed if r["tool"] == "ours"), timed[0])
    print(f"\n{title}")
    b = base["tool"]
    print(f"| tool | wall s (median) | min - max | peak RSS MB | time / {b} | memory / {b} |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        if "seconds" not in r:
            print(f"| {r['tool']} | failed: {r['error']} | | | | |")
            continue
        print(
            f"| {r['tool']} | {r['seconds']:.3f} | {r['range'][0]:.3f} - {r['range'][1]:.3f} | "
            f"{r['rss_mb']:.1f} | "
            f"{r['seconds'] / base['seconds']:.2f}x | {r['rss_mb'] / base['rss_mb']:.2f}x |"
        )
    by_tool = {r["tool"]: r for r in timed}
    for cli in ("ours CLI trec_eval", "ours CLI honest"):
        for peer in ("pytrec_eval", "pytrec_eval process"):
            if cli in by_tool and peer in by_tool:
                ratio = by_tool[cli]["seconds"] / by_tool[peer]["seconds"]
                print(f"{cli} / {peer}: {ratio:.2f}x wall time (target <= 0.5x)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--case", choices=("synthetic", "medical", "all"), default="all")
    p.add_argument("--queries", type=int, default=1000)
    p.add_argument("--docs", type=int, default=1000)
    p.add_argument("--tools", nargs="+", default=TOOLS, choices=TOOLS)
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--qrels", help=argparse.SUPPRESS)
    p.add_argument("--runs", nargs="+", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        sys.path.insert(0, str(ROOT))
        _child(
            args.child, args.qrels, args.runs, SYNTHETIC if args.case == "synthetic" else MEDICAL
        )
        return
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}"
    )
    # Installed packages carry compiled bytecode (pip compiles at install); this checkout may run
    # with PYTHONDONTWRITEBYTECODE=1, where every import would compile metrics/ from source and
    # count the compiler's memory. Compile once, like an install, before measuring.
    compileall.compile_dir(ROOT / "metrics", quiet=1)
    cases = ["synthetic", "medical"] if args.case == "all" else [args.case]
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            folder = Path(tmp) / case
            folder.mkdir()
            if case == "synthetic":
                qrels, runs = make_synthetic(folder, args.queries, args.docs)
                title = (
                    f"synthetic: {args.queries} queries x {args.docs} docs "
                    f"({args.queries * args.docs:,} run lines), 5 measures"
                )
            else:
                if not (DATA / "trec2011-medical").is_dir():
                    print(f"\nmedical: skipped ({DATA / 'trec2011-medical'} not found)")
                    continue
                qrels, runs = make_medical(folder)
                title = f"medical: {len(runs)} TREC 2011 Medical runs, 10 measures"
            rows = _measure_all(args.tools, qrels, runs, case, args.repeat)
            _report(title, rows)


if __name__ == "__main__":
    main()
