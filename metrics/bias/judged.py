"""Judged@k of every run per topic, with the means of pooled and not-pooled runs."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from metrics.bias.topics import _num, _topics_of, subset_qrels
from metrics.evaluation.evaluator import Evaluator
from metrics.io import Qrels, Run

__all__ = [
    "JudgedReport",
    "judged_at_k",
]


@dataclass(frozen=True)
class JudgedReport:
    """Judged@k per run and topic, with means.

    ``per_query[run][qid]`` is Judged@k; ``means[run]`` its mean over the run's topics. When the
    pooled runs were given, ``mean_pooled`` / ``mean_not_pooled`` are the means of ``means`` over
    the pooled and the other runs (None when a side is empty).
    """

    k: int
    per_query: dict[str, dict[str, float]]
    means: dict[str, float]
    pooled: tuple[str, ...] | None
    mean_pooled: float | None
    mean_not_pooled: float | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            "measure": f"Judged@{self.k}",
            "k": self.k,
            "mean_pooled": _num(self.mean_pooled),
            "mean_not_pooled": _num(self.mean_not_pooled),
            "runs": {
                tag: {
                    "mean": _num(self.means[tag]),
                    "pooled": None if self.pooled is None else tag in self.pooled,
                    "per_query": self.per_query[tag],
                }
                for tag in self.means
            },
        }


def judged_at_k(
    qrels: Qrels,
    runs: Mapping[str, Run],
    *,
    k: int = 10,
    topics: Iterable[str] | None = None,
    pooled: Iterable[str] | None = None,
) -> JudgedReport:
    """Judged@k of every run: the fraction of its top k that has a judgment in the qrels.

    Judged@k = |{d in top k : d in qrels with grade >= 0}| / min(k, retrieved) (ir_measures;
    a negative grade means pooled but not judged, so counts as unjudged). Per topic over the
    topics in both the qrels (after the ``topics`` filter) and the run; ``means[run]`` averages
    them. Given the tags of the pooled runs, the report also splits the mean of the run means
    into pooled and not pooled.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    sub = subset_qrels(qrels, _topics_of(qrels, topics))
    ev = Evaluator(sub, [f"Judged@{k}"], compat="trec_eval", ci=None)
    name = f"Judged@{k}"
    per_query: dict[str, dict[str, float]] = {}
    means: dict[str, float] = {}
    for tag, run in runs.items():
        res = ev.evaluate(run)
        per_query[tag] = res.per_query[name]
        means[tag] = res.aggregates[name].value
    pooled_set = None if pooled is None else tuple(t for t in runs if t in set(pooled))

    def mean_of(tags: list[str]) -> float | None:
        vals = [means[t] for t in tags if not math.isnan(means[t])]
        return math.fsum(vals) / len(vals) if vals else None

    mp = mnp = None
    if pooled_set is not None:
        mp = mean_of(list(pooled_set))
        mnp = mean_of([t for t in runs if t not in pooled_set])
    return JudgedReport(k, per_query, means, pooled_set, mp, mnp)
