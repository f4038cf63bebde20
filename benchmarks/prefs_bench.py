"""trec_eval's preference measures as a user runs them: our CLI against the trec_eval 10.0 binary.

    TREC_EVAL=/path/to/trec_eval .venv/bin/python benchmarks/prefs_bench.py [--repeat 5]

Writes a qrels file read as preferences (``-R qrels_prefs``: per topic 1,000 judged documents at
levels 0-3, so each topic has hundreds of thousands of document pairs) and a 1,000-deep run for
each size, then runs ``python -m metrics evaluate --compat trec_eval -m all_prefs -R qrels_prefs``
and ``trec_eval -m all_prefs -R qrels_prefs`` on them as whole processes, in turn (start-up and
imports included), checks the two outputs are byte-identical, and prints the median wall time of
each and their ratio per size, so that how the cost grows with topics shows too.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def write_inputs(folder: Path, topics: int, seed: int = 1) -> tuple[Path, Path]:
    rng = random.Random(seed)
    qrels, run = folder / f"qrels.{topics}", folder / f"run.{topics}"
    with qrels.open("w") as q, run.open("w") as r:
        for t in range(1, topics + 1):
            docs = [f"D{t}-{i}" for i in range(1500)]
            for d in docs[:1000]:
                q.write(f"{t} 0 {d} {rng.choice([0, 0, 0, 1, 1, 2, 3])}\n")
            for rank, d in enumerate(rng.sample(docs, 1000), start=1):
                r.write(f"{t} Q0 {d} {rank} {1000 - rank} run\n")
    return qrels, run


def timed(cmd: list[str]) -> tuple[float, bytes]:
    start = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True).stdout
    return time.perf_counter() - start, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--topics", type=int, nargs="+", default=[10, 25, 50])
    args = parser.parse_args()
    binary = os.environ.get("TREC_EVAL")
    if not binary:
        sys.exit("set TREC_EVAL to a trec_eval 10.0 binary (see ../shared/oracles/README.md)")
    flags = ["-m", "all_prefs", "-R", "qrels_prefs"]
    print("topics  ours (median s)  trec_eval (median s)  ratio")
    with tempfile.TemporaryDirectory() as tmp:
        for topics in args.topics:
            qrels, run = write_inputs(Path(tmp), topics)
            ours_cmd = [sys.executable, "-m", "metrics", "evaluate", "--compat", "trec_eval"]
            ours_cmd += [*flags, str(qrels), str(run)]
            theirs_cmd = [binary, *flags, str(qrels), str(run)]
            ours, theirs = [], []
            for _ in range(args.repeat):  # in turn, so that drift hits both alike
                t, mine = timed(ours_cmd)
                ours.append(t)
                t, reference = timed(theirs_cmd)
                theirs.append(t)
                if mine != reference:
                    sys.exit(f"{topics} topics: the outputs differ")
            o, r = statistics.median(ours), statistics.median(theirs)
            print(f"{topics:>6}  {o:>15.3f}  {r:>20.3f}  {o / r:>5.2f}")


if __name__ == "__main__":
    main()
