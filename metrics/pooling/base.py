"""What a pooling strategy is: the :class:`PoolStrategy` protocol, the :class:`Strategy` base
class (static strategies order the whole pool up front, adaptive ones pick one document at a
time) and the :class:`Pool` a strategy builds."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import ClassVar, Protocol, TextIO

from metrics.pooling.runs import JSONValue, Judgments, Runs, TopicRuns, cut_runs, topic_sort_key
from metrics.pooling.state import PoolState, _ListState

__all__ = [
    "Pool",
    "PoolStrategy",
    "Strategy",
]


class PoolStrategy(Protocol):
    """What a pooling strategy offers (see :class:`Strategy` for the shared implementation)."""

    @property
    def name(self) -> str: ...

    @property
    def adaptive(self) -> bool: ...

    def params(self) -> dict[str, JSONValue]: ...

    def contributing(self, tags: Iterable[str]) -> list[str]: ...

    def start(
        self, topic_runs: TopicRuns, *, topic: str = "", relevance_level: int = 1
    ) -> PoolState: ...

    def next_document(self, state: PoolState, judgments: Judgments) -> str | None: ...

    def order(
        self,
        topic_runs: TopicRuns,
        judged: Judgments | None = None,
        budget: int | None = None,
        *,
        topic: str = "",
        relevance_level: int = 1,
    ) -> list[str]: ...

    def pool(
        self,
        runs: Runs,
        *,
        depth: int,
        topics: Iterable[str] | None = None,
        budget: int | None = None,
        relevance_level: int = 1,
    ) -> Pool: ...


class Strategy(ABC):
    """Base of every strategy: one incremental code path (:meth:`start`, :meth:`next_document`)
    from which :meth:`order` and :meth:`pool` are derived."""

    name: ClassVar[str]
    adaptive: ClassVar[bool] = False

    def params(self) -> dict[str, JSONValue]:
        """The strategy's parameters as a JSON-able dict (recorded in every :class:`Pool`)."""
        return {}

    def contributing(self, tags: Iterable[str]) -> list[str]:
        """The run tags whose documents enter the pool (all of them unless overridden)."""
        return sorted(tags)

    @abstractmethod
    def start(
        self, topic_runs: TopicRuns, *, topic: str = "", relevance_level: int = 1
    ) -> PoolState:
        """A fresh judging state for one topic (runs already cut to the pool depth)."""

    def next_document(self, state: PoolState, judgments: Judgments) -> str | None:
        """Absorb ``judgments`` (those new to ``state``, in iteration order) and return the next
        document to judge, or ``None`` when every pooled document is judged.

        The judging queue calls this at lease time; :func:`simulate` calls it with the oracle's
        grade of the previous document. Pass judgments in the order they were made: rebuilding a
        state from ``start`` plus the ordered history reproduces the same next document.
        """
        state.update(judgments)
        return state.propose()

    def order(
        self,
        topic_runs: TopicRuns,
        judged: Judgments | None = None,
        budget: int | None = None,
        *,
        topic: str = "",
        relevance_level: int = 1,
    ) -> list[str]:
        """The next documents to judge (at most ``budget``), given the judgments so far.

        Already-judged documents are never returned. For static strategies this is the exact
        order. For adaptive ones it is provisional: the order the strategy would follow if every
        document still unjudged turned out non-relevant; its first element is exact (it equals
        :meth:`next_document`), the rest is re-decided as real judgments arrive.
        """
        state = self.start(self._restrict(topic_runs), topic=topic, relevance_level=relevance_level)
        state.update(judged or {})
        assumed: dict[str, int] = {}
        out: list[str] = []
        while budget is None or len(out) < budget:
            doc = self.next_document(state, assumed)
            if doc is None:
                break
            out.append(doc)
            assumed = {doc: relevance_level - 1}
        return out

    def _restrict(self, topic_runs: TopicRuns) -> TopicRuns:
        keep = set(self.contributing(topic_runs))
        if len(keep) == len(topic_runs):
            return topic_runs
        return {t: r for t, r in topic_runs.items() if t in keep}

    def inclusion(self, topic_runs: TopicRuns, *, topic: str = "") -> dict[str, float] | None:
        """Inclusion probability of each sampled document (sampling strategies), else ``None``."""
        return None

    def pool(
        self,
        runs: Runs,
        *,
        depth: int,
        topics: Iterable[str] | None = None,
        budget: int | None = None,
        relevance_level: int = 1,
    ) -> Pool:
        """Build a pool: per topic, the pooled documents in judging order.

        ``runs`` is run tag -> qid -> ranking; every ranking is cut to ``depth``. ``topics``
        defaults to every topic some run answered. A static strategy's pool is its order cut to
        ``budget`` documents per topic. An adaptive strategy's pool is the whole depth-k union in
        provisional order (:meth:`order`): which documents a budget reaches is decided while
        judging, by :meth:`next_document`.
        """
        tags = self.contributing(runs)
        chosen = {t: runs[t] for t in tags}
        qids = topics if topics is not None else {q for r in chosen.values() for q in r}
        per_topic: dict[str, tuple[str, ...]] = {}
        inclusion: dict[str, dict[str, float]] = {}
        for qid in sorted(set(qids), key=topic_sort_key):
            topic_runs = cut_runs(chosen, qid, depth)
            cut = None if self.adaptive else budget
            per_topic[qid] = tuple(
                self.order(topic_runs, None, cut, topic=qid, relevance_level=relevance_level)
            )
            probs = self.inclusion(topic_runs, topic=qid)
            if probs is not None:
                if budget is not None and len(probs) > budget:
                    raise ValueError(
                        f"topic {qid}: the stratified sample has {len(probs)} documents, more "
                        f"than the budget {budget}; cutting it would falsify the inclusion "
                        "probabilities: lower the sampling rates instead"
                    )
                inclusion[qid] = probs
        return Pool(
            strategy=self.name,
            params=self.params(),
            depth=depth,
            budget=budget,
            runs=tuple(tags),
            adaptive=self.adaptive,
            topics=per_topic,
            inclusion=inclusion,
        )


class _StaticStrategy(Strategy):
    @abstractmethod
    def rank_documents(self, topic_runs: TopicRuns, *, topic: str = "") -> list[str]:
        """The full judging order of the topic's pooled documents."""

    def start(
        self, topic_runs: TopicRuns, *, topic: str = "", relevance_level: int = 1
    ) -> PoolState:
        order = self.rank_documents(self._restrict(topic_runs), topic=topic)
        return _ListState(order, relevance_level)

    def order(
        self,
        topic_runs: TopicRuns,
        judged: Judgments | None = None,
        budget: int | None = None,
        *,
        topic: str = "",
        relevance_level: int = 1,
    ) -> list[str]:
        """The strategy's fixed order without the documents already judged, cut to ``budget``."""
        done = judged or {}
        docs = self.rank_documents(self._restrict(topic_runs), topic=topic)
        out = [d for d in docs if d not in done]
        return out if budget is None else out[:budget]


def _union(topic_runs: TopicRuns) -> set[str]:
    return {d for ranking in topic_runs.values() for d in ranking}


@dataclass(frozen=True)
class Pool:
    """A built pool: per topic, the pooled documents in judging order, and how it was made.

    ``topics``: qid -> docids in judging order (for an adaptive strategy the whole candidate set
    in provisional order; the real order comes from :meth:`Strategy.next_document`).
    ``inclusion``: qid -> docid -> inclusion probability (stratified sampling only).
    """

    strategy: str
    params: dict[str, JSONValue]
    depth: int
    budget: int | None
    runs: tuple[str, ...]
    adaptive: bool
    topics: dict[str, tuple[str, ...]]
    inclusion: dict[str, dict[str, float]] = field(default_factory=dict)

    def documents(self, qid: str) -> frozenset[str]:
        """The pooled document set of one topic (empty if the topic is not in the pool)."""
        return frozenset(self.topics.get(qid, ()))

    def size(self) -> int:
        """Total pooled (topic, document) pairs."""
        return sum(len(docs) for docs in self.topics.values())

    def to_json(self) -> dict[str, JSONValue]:
        """A JSON-able description: strategy, parameters, runs and per-topic documents."""
        out: dict[str, JSONValue] = {
            "strategy": self.strategy,
            "params": self.params,
            "depth": self.depth,
            "budget": self.budget,
            "runs": list(self.runs),
            "adaptive": self.adaptive,
            "topics": {q: list(d) for q, d in self.topics.items()},
        }
        if self.inclusion:
            out["inclusion"] = {q: dict(p) for q, p in self.inclusion.items()}
        return out

    def write_trec(self, out: TextIO) -> None:
        """Write ``qid Q0 docid`` lines (the trec_eval-style pool file; judging order kept).

        For a stratified pool a fourth column holds the inclusion probability.
        """
        for qid, docs in self.topics.items():
            probs = self.inclusion.get(qid)
            for doc in docs:
                if probs is None:
                    out.write(f"{qid} Q0 {doc}\n")
                else:
                    out.write(f"{qid} Q0 {doc} {probs[doc]:.6g}\n")
