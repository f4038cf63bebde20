"""Macro averages over topics with a confidence interval, for the answer measures
(:mod:`metrics.answers.nuggets`, :mod:`metrics.answers.support`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from metrics.stats.intervals import bootstrap_ci, t_ci

__all__ = ["MacroAverage", "macro_average"]


@dataclass(frozen=True, slots=True)
class MacroAverage:
    """A mean over topics and its confidence interval (``low``, ``high``); ``topics`` values
    were averaged, ``undefined`` topics had none (left out, or counted 0 when asked)."""

    mean: float
    low: float
    high: float
    topics: int
    undefined: int
    level: float
    interval: Literal["bootstrap", "t"]


def macro_average(
    values: Mapping[str, float | None],
    *,
    undefined: Literal["skip", "zero"] = "skip",
    interval: Literal["bootstrap", "t"] = "bootstrap",
    level: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> MacroAverage:
    """Mean of per-topic ``values`` (topic -> value, ``None`` undefined) with a ``level``
    interval: the seeded percentile bootstrap over topics (:func:`~metrics.stats.intervals.
    bootstrap_ci`) or Student's t (:func:`~metrics.stats.intervals.t_ci`). Topics are taken in
    sorted order, so the bootstrap does not depend on the mapping's order. No value: NaN."""
    if undefined not in ("skip", "zero"):
        raise ValueError(f"undefined must be 'skip' or 'zero', got {undefined!r}")
    missing = sum(v is None for v in values.values())
    kept = [
        0.0 if v is None else v
        for _, v in sorted(values.items())
        if v is not None or undefined == "zero"
    ]
    if interval == "bootstrap":
        low, high = bootstrap_ci(kept, level=level, n_resamples=n_resamples, seed=seed)
    elif interval == "t":
        low, high = t_ci(kept, level=level)
    else:
        raise ValueError(f"interval must be 'bootstrap' or 't', got {interval!r}")
    mean = math.fsum(kept) / len(kept) if kept else math.nan
    return MacroAverage(mean, low, high, len(kept), missing, level, interval)
