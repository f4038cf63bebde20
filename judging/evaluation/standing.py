"""Whether a run is scored against a pool it did not help build, for the leaderboard's mark.

A pool of depth d judges the top d of every pooled run, so below rank d every run meets
unjudged documents (counted not relevant): a pooled run's R@50 or AP on a depth-10 pool has a
Judged of 0.3-0.5 and says nothing about bias. What does is a run *outside* the pool:

- it is not pooled (it did not contribute documents), or
- it has unjudged documents within the pool's depth: its Judged@k below 1 at the deepest
  cut-off k <= d the stored evaluation has (a measure's Judged@k companion, or a Judged@k
  measure). A run that helped build the pool has every one of its top d judged once the pool
  is; one judged against an older pool or an unfinished one has not.

Only the stored aggregates are read (``Evaluation.summary``); when no Judged@k with k <= d is
stored, only the first rule applies, and ``k`` says so (None)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from metrics.measures.names import parse_measure


@dataclass(frozen=True)
class PoolStanding:
    """``outside``: the run did not help build the pool (``why`` says how); ``k`` and
    ``judged``: the Judged@k read for the depth rule (None when none is stored)."""

    outside: bool
    why: str
    k: int | None
    judged: float | None

    def as_dict(self) -> dict[str, Any]:
        return {"outside": self.outside, "why": self.why, "k": self.k, "judged": self.judged}


def _judged_cutoff(name: str) -> int | None:
    try:
        parsed = parse_measure(name)
    except ValueError:
        return None
    if parsed.family != "Judged" or not isinstance(parsed.cutoff, int):
        return None
    return parsed.cutoff


def judged_within(measures: Mapping[str, Any], depth: int) -> tuple[int, float] | None:
    """(k, Judged@k) at the deepest k <= ``depth`` among the stored aggregates ``measures``
    (measure name -> entry with ``value`` and maybe a ``judged`` companion); None if none."""
    found: dict[int, float] = {}
    for name, entry in measures.items():
        if not isinstance(entry, Mapping):
            continue
        candidates = [(name, entry.get("value"))]
        companion = entry.get("judged")
        if isinstance(companion, Mapping):
            candidates.append((str(companion.get("measure", "")), companion.get("value")))
        for measure, value in candidates:
            k = _judged_cutoff(measure)
            if k is not None and k <= depth and isinstance(value, int | float):
                found[k] = float(value)
    if not found:
        return None
    k = max(found)
    return k, found[k]


def pool_standing(*, pooled: bool, measures: Mapping[str, Any], depth: int) -> PoolStanding:
    """The run's standing against a pool of ``depth`` (see the module docstring)."""
    within = judged_within(measures, depth)
    k, judged = within if within is not None else (None, None)
    if not pooled:
        return PoolStanding(True, "not pooled", k, judged)
    if judged is not None and judged < 1.0:
        return PoolStanding(
            True, f"unjudged documents in its top {k} (Judged@{k} {judged:.2f})", k, judged
        )
    return PoolStanding(False, "", k, judged)
