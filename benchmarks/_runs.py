"""Shared run files as the benchmarks read them, and the same runs as pytrec_eval takes them."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from metrics import Run, read_run


def read_runs(root: Path) -> dict[str, Run]:
    """Every ``runs/input.*.gz`` of a collection, read unmodified, by tag, scores as float32
    (as pytrec_eval stores them); uogTrDeNsEc's three NaN scores ranked last in their topic."""
    runs: dict[str, Run] = {}
    for path in sorted((root / "runs").glob("input.*.gz")):
        run = read_run(path)
        runs[run.tag] = run.with_float32_scores()
    return runs


def pytrec_dict(run: Run) -> dict[str, dict[str, float]]:
    """``run.to_dict()`` for pytrec_eval, each NaN score replaced by one value below every other
    score of the run: pytrec_eval's sort treats NaN as equal to everything (where a NaN lands is
    its qsort's doing); this gives it our order, NaN last and tied among themselves."""
    finite = run.scores[np.isfinite(run.scores)]
    below = float(finite.min()) - 1.0 if finite.size else 0.0
    return {
        q: {d: below if s != s else s for d, s in docs.items()} for q, docs in run.to_dict().items()
    }
