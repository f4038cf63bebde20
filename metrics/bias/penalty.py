"""The estimated pooling penalty of runs that did not contribute to the pool (Webber & Park 2009),
from a leave-one-out analysis."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from metrics.bias.topics import _num

if TYPE_CHECKING:
    from metrics.bias.results import LooResult


__all__ = [
    "PenaltyEstimate",
    "estimate_penalty",
]


@dataclass(frozen=True)
class PenaltyEstimate:
    """Estimated pooling penalty of runs that were not pooled (an estimate, with its basis).

    ``runs[tag]`` = {"score", "estimated_penalty", "estimated_score"}; ``basis`` names the
    leave-one-out analysis it comes from (measure, depth, number of runs, method).
    """

    measure: str
    method: str
    penalty: float
    basis: dict[str, Any]
    runs: dict[str, dict[str, float | None]]

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form, labelled as an estimate."""
        return {
            "estimate": True,
            "measure": self.measure,
            "method": self.method,
            "penalty": _num(self.penalty),
            "basis": self.basis,
            "runs": self.runs,
        }


def estimate_penalty(
    loo: LooResult,
    scores: Mapping[str, float] | None = None,
    *,
    relative: bool = False,
) -> PenaltyEstimate:
    """Estimated pooling penalty of non-pooled runs (Webber & Park 2009).

    absolute (default): penalty = mean over the pooled runs of their leave-one-out delta, the same
    for every run; estimated score = score + penalty. ``relative=True``: penalty_run = score *
    mean(delta_pct) / 100 (the mean relative gain applied to the run's own score). ``scores``
    default to ``loo.not_pooled`` (the runs' scores against the pool of the pooled runs). It is
    an estimate: the basis (number of runs, measure, depth, leave-out unit) is returned with it.
    """
    deltas = [r.delta for r in loo.runs.values() if not math.isnan(r.delta)]
    pcts = [r.delta_pct for r in loo.runs.values() if r.delta_pct is not None]
    if not deltas:
        raise ValueError("the leave-one-out analysis has no delta to average")
    mean_delta = math.fsum(deltas) / len(deltas)
    mean_pct = math.fsum(pcts) / len(pcts) if pcts else math.nan
    base = dict(loo.not_pooled if scores is None else scores)
    out: dict[str, dict[str, float | None]] = {}
    for tag, s in base.items():
        p = s * mean_pct / 100.0 if relative else mean_delta
        out[tag] = {
            "score": _num(s),
            "estimated_penalty": _num(p),
            "estimated_score": _num(s + p),
        }
    return PenaltyEstimate(
        measure=loo.measure,
        method="relative" if relative else "absolute",
        penalty=mean_pct if relative else mean_delta,
        basis={
            "source": "leave-one-out over the pooled runs (Webber & Park 2009)",
            "n_runs": len(deltas),
            "measure": loo.measure,
            "depth": loo.depth,
            "leave_out": loo.leave_out,
            "mode": loo.compat,
            "n_topics": len(loo.topics),
            "mean_delta": _num(mean_delta),
            "mean_delta_pct": _num(mean_pct),
        },
        runs=out,
    )
