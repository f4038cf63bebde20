"""Building a pool and simulating its judging with the qrels as the oracle: the documents found
relevant after each judgment, per strategy."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from metrics.pooling.base import Strategy, _union
from metrics.pooling.runs import JSONValue, Judgments, Runs, cut_runs, topic_sort_key

__all__ = [
    "SimulationResult",
    "simulate",
]


@dataclass(frozen=True)
class SimulationResult:
    """Relevant documents found after each budget, per topic and mean over topics."""

    strategy: str
    params: dict[str, JSONValue]
    depth: int
    budgets: tuple[int, ...]
    relevance_level: int
    found: dict[str, tuple[int, ...]]
    pool_size: dict[str, int]

    @property
    def mean_found(self) -> tuple[float, ...]:
        """Mean over topics of the relevant documents found after each budget."""
        if not self.found:
            return tuple(0.0 for _ in self.budgets)
        table = np.array(list(self.found.values()), dtype=float)
        return tuple(float(v) for v in table.mean(axis=0))

    def to_json(self) -> dict[str, JSONValue]:
        """A JSON-able summary with per-topic counts."""
        return {
            "strategy": self.strategy,
            "params": self.params,
            "depth": self.depth,
            "relevance_level": self.relevance_level,
            "topics": len(self.found),
            "budgets": list(self.budgets),
            "mean_relevant_found": list(self.mean_found),
            "mean_pool_size": (
                sum(self.pool_size.values()) / len(self.pool_size) if self.pool_size else 0.0
            ),
            "per_topic": {q: list(v) for q, v in self.found.items()},
        }


def simulate(
    runs: Runs,
    qrels: Mapping[str, Judgments],
    strategy: Strategy,
    *,
    depth: int,
    budgets: Sequence[int],
    topics: Iterable[str] | None = None,
    relevance_level: int = 1,
) -> SimulationResult:
    """Judge each topic's depth-k pool in the strategy's order with the qrels as the oracle.

    For each topic the strategy's state is driven through :meth:`Strategy.next_document` (the
    code the judging queue uses), feeding it the oracle grade of each document it asks for; a
    pooled document absent from the qrels counts as non-relevant (grade 0). found[q][i] = number
    of relevant documents (grade >= ``relevance_level``) among the first ``budgets[i]`` judged
    (fewer if the pool is smaller). ``topics`` defaults to the qrels topics answered by some run.
    """
    if not budgets or any(b < 0 for b in budgets):
        raise ValueError(f"budgets must be non-negative integers, got {list(budgets)}")
    tags = strategy.contributing(runs)
    chosen = {t: runs[t] for t in tags}
    if topics is None:
        answered = {q for r in chosen.values() for q in r}
        topics = [q for q in qrels if q in answered]
    limit = max(budgets)
    found: dict[str, tuple[int, ...]] = {}
    sizes: dict[str, int] = {}
    for qid in sorted(set(topics), key=topic_sort_key):
        topic_runs = cut_runs(chosen, qid, depth)
        oracle = qrels.get(qid, {})
        state = strategy.start(topic_runs, topic=qid, relevance_level=relevance_level)
        hits: list[int] = []
        feedback: dict[str, int] = {}
        while len(hits) < limit:
            doc = strategy.next_document(state, feedback)
            if doc is None:
                break
            grade = oracle.get(doc, 0)
            feedback = {doc: grade}
            hits.append(int(grade >= relevance_level))
        cumulative = np.cumsum([0, *hits])
        found[qid] = tuple(int(cumulative[min(b, len(hits))]) for b in budgets)
        sizes[qid] = len(_union(strategy._restrict(topic_runs)))
    return SimulationResult(
        strategy=strategy.name,
        params=strategy.params(),
        depth=depth,
        budgets=tuple(budgets),
        relevance_level=relevance_level,
        found=found,
        pool_size=sizes,
    )
