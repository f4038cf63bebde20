"""What a leave-out analysis returns: every run's scores with and without its unit in the pool
(:class:`LooResult`, :class:`LooRun`) and each judgment's contributors
(:class:`PoolContributions`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from metrics.bias.topics import _num

__all__ = [
    "LooResult",
    "LooRun",
    "PoolContributions",
]


I64 = npt.NDArray[np.int64]


@dataclass(frozen=True)
class LooRun:
    """One run's leave-one-out figures (see the module docstring for the exact definitions)."""

    score: float
    score_without: float
    delta: float
    delta_pct: float | None
    rank: int
    rank_without: int
    unique_relevant: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (NaN becomes None)."""
        return {
            "score": _num(self.score),
            "score_without": _num(self.score_without),
            "delta": _num(self.delta),
            "delta_pct": _num(self.delta_pct),
            "rank": self.rank,
            "rank_without": self.rank_without,
            "unique_relevant": self.unique_relevant,
        }


@dataclass(frozen=True)
class LooResult:
    """A leave-one-run-out or leave-one-group-out analysis of one measure.

    ``runs`` holds the pooled runs; ``not_pooled`` the full-pool scores of runs given but not
    pooled (they cannot be left out). ``groups`` (group mode) maps each group to its runs and
    unique relevant documents.
    """

    measure: str
    depth: int
    leave_out: str
    compat: str
    topics: tuple[str, ...]
    kendall_tau: float
    tau_ap: float
    runs: dict[str, LooRun]
    mean_delta: float
    max_delta: float
    max_delta_run: str | None
    not_pooled: dict[str, float] = field(default_factory=dict)
    groups: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """``{"measure", "depth", "kendall_tau", "tau_ap", "runs": {TAG: {...}}, ...}``."""
        out: dict[str, Any] = {
            "measure": self.measure,
            "depth": self.depth,
            "kendall_tau": _num(self.kendall_tau),
            "tau_ap": _num(self.tau_ap),
            "runs": {tag: r.to_dict() for tag, r in self.runs.items()},
            "mean_delta": _num(self.mean_delta),
            "max_delta": _num(self.max_delta),
            "max_delta_run": self.max_delta_run,
            "leave_out": self.leave_out,
            "mode": self.compat,
            "topics": list(self.topics),
        }
        if self.not_pooled:
            out["not_pooled"] = {t: _num(s) for t, s in self.not_pooled.items()}
        if self.groups:
            out["groups"] = self.groups
        return out


@dataclass(frozen=True, eq=False)
class PoolContributions:
    """Judgments in a depth-K pool with their contributors; see :meth:`LeaveOneOut.contributions`.

    Parallel arrays, one entry per judged (topic, document) pair in the pool (grade < 0, "pooled
    but not judged", included: filter on ``grade >= 0`` to count judgments).
    """

    topics: tuple[str, ...]
    units: tuple[str, ...]
    topic: I64
    grade: I64
    first_rank: I64
    n_units: I64
    n_runs: I64
    owner: I64
