"""The judging state of an adaptive strategy on one topic: what it has judged and what it picks
next (one class per adaptive strategy, driven by
:meth:`metrics.pooling.base.Strategy.next_document`)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np

from metrics.pooling.runs import FloatArray, Judgments, TopicRuns

__all__ = [
    "PoolState",
]


class PoolState(ABC):
    """Per-topic judging state of a strategy: what is judged, and what to judge next.

    :meth:`update` absorbs judgments (docid -> grade) in the mapping's iteration order; documents
    already absorbed are ignored (the first grade absorbed wins), so a caller may pass either all
    judgments so far or only the new ones. Each judgment is credited as if the strategy had just
    been asked for its next document: a judgment of the document it would propose rewards the run
    it came from; any other judgment only marks its document judged (Hedge: updates the weights).
    :meth:`propose` returns the next document to judge, or ``None`` when every pooled document is
    judged. Calling :meth:`propose` again without a new
    judgment returns the same document (and draws no new random numbers).
    """

    def __init__(self, relevance_level: int) -> None:
        self.relevance_level = relevance_level
        self.judged: dict[str, int] = {}

    def update(self, judgments: Judgments) -> None:
        """Absorb the judgments not seen before, in iteration order."""
        for doc, grade in judgments.items():
            if doc not in self.judged:
                # Propose first, as the queue would have: a state is then a pure function of
                # the ordered judgment history, however it is fed (one by one or all at once).
                self.propose()
                self.judged[doc] = grade
                self._record(doc, grade)

    def relevant(self, grade: int) -> bool:
        """``grade >= relevance_level``."""
        return grade >= self.relevance_level

    @abstractmethod
    def _record(self, doc: str, grade: int) -> None: ...

    @abstractmethod
    def propose(self) -> str | None:
        """The next document to judge, or ``None`` when the pool is exhausted."""


class _ListState(PoolState):
    """A fixed order: the next document is the first one not yet judged."""

    def __init__(self, order: Sequence[str], relevance_level: int) -> None:
        super().__init__(relevance_level)
        self._order = list(order)
        self._next = 0

    def _record(self, doc: str, grade: int) -> None:
        pass

    def propose(self) -> str | None:
        while self._next < len(self._order) and self._order[self._next] in self.judged:
            self._next += 1
        return self._order[self._next] if self._next < len(self._order) else None


class _RunsState(PoolState):
    """Runs as arms: each run's pointer moves past documents already judged (from any run)."""

    def __init__(self, topic_runs: TopicRuns, relevance_level: int) -> None:
        super().__init__(relevance_level)
        self.tags = sorted(topic_runs)
        self._lists = [list(topic_runs[t]) for t in self.tags]
        self._pos = [0] * len(self.tags)
        # (docid, arm) proposed and not yet judged: its judgment is credited to that arm.
        self._pending: tuple[str, int] | None = None

    def head(self, arm: int) -> str | None:
        """The best-ranked unjudged document of run ``arm`` (None when exhausted)."""
        ranking, pos = self._lists[arm], self._pos[arm]
        while pos < len(ranking) and ranking[pos] in self.judged:
            pos += 1
        self._pos[arm] = pos
        return ranking[pos] if pos < len(ranking) else None

    def _record(self, doc: str, grade: int) -> None:
        if self._pending is not None and self._pending[0] == doc:
            arm = self._pending[1]
            self._pending = None
            self._reward(arm, self.relevant(grade))
        # A judgment the strategy did not ask for only marks the document judged.

    @abstractmethod
    def _reward(self, arm: int, relevant: bool) -> None: ...

    @abstractmethod
    def _choose(self, live: list[int]) -> int: ...

    def propose(self) -> str | None:
        if self._pending is not None and self._pending[0] not in self.judged:
            return self._pending[0]
        self._pending = None
        live = [arm for arm in range(len(self.tags)) if self.head(arm) is not None]
        if not live:
            return None
        arm = self._choose(live)
        doc = self.head(arm)
        assert doc is not None
        self._pending = (doc, arm)
        return doc


class _MoveToFrontState(_RunsState):
    def __init__(self, topic_runs: TopicRuns, relevance_level: int) -> None:
        super().__init__(topic_runs, relevance_level)
        self._priority = [0] * len(self.tags)
        self._current: int | None = None

    def _reward(self, arm: int, relevant: bool) -> None:
        if not relevant:
            self._priority[arm] -= 1
            self._current = None

    def _choose(self, live: list[int]) -> int:
        if self._current in live:
            return self._current
        # max() keeps the first maximum: ties go to the tag that sorts first.
        self._current = max(live, key=lambda arm: self._priority[arm])
        return self._current


class _MaxMeanState(_RunsState):
    def __init__(self, topic_runs: TopicRuns, relevance_level: int) -> None:
        super().__init__(topic_runs, relevance_level)
        self.hits = np.zeros(len(self.tags))
        self.pulls = np.zeros(len(self.tags))

    def _reward(self, arm: int, relevant: bool) -> None:
        self.pulls[arm] += 1
        self.hits[arm] += relevant

    def _scores(self) -> FloatArray:
        return (self.hits + 1.0) / (self.pulls + 2.0)

    def _choose(self, live: list[int]) -> int:
        scores = self._scores()
        masked = np.full(len(self.tags), -np.inf)
        masked[live] = scores[live]
        return int(np.argmax(masked))  # first maximum: tag order breaks ties


class _ThompsonState(_MaxMeanState):
    def __init__(
        self, topic_runs: TopicRuns, relevance_level: int, rng: np.random.Generator
    ) -> None:
        super().__init__(topic_runs, relevance_level)
        self._rng = rng

    def _scores(self) -> FloatArray:
        sample: FloatArray = self._rng.beta(1.0 + self.hits, 1.0 + self.pulls - self.hits)
        return sample


class _HedgeState(PoolState):
    def __init__(self, topic_runs: TopicRuns, relevance_level: int, beta: float) -> None:
        super().__init__(relevance_level)
        tags = sorted(topic_runs)
        self.docs = sorted({d for ranking in topic_runs.values() for d in ranking})
        self._index = {d: i for i, d in enumerate(self.docs)}
        self.gain = np.zeros((len(self.docs), len(tags)))
        for arm, tag in enumerate(tags):
            ranking = topic_runs[tag]
            if ranking:
                self.gain[[self._index[d] for d in ranking], arm] = _ap_rank_weights(len(ranking))
        self.weights = np.full(len(tags), 1.0 / max(len(tags), 1))
        self._open = np.ones(len(self.docs), dtype=bool)
        self._beta = beta
        self._cached: str | None = None

    def _record(self, doc: str, grade: int) -> None:
        i = self._index.get(doc)
        if i is None:
            return
        self._open[i] = False
        sign = -1.0 if self.relevant(grade) else 1.0
        loss = (1.0 + sign * self.gain[i]) / 2.0
        self.weights = self.weights * self._beta**loss
        self.weights /= self.weights.sum()
        self._cached = None

    def propose(self) -> str | None:
        if self._cached is not None and self._cached not in self.judged:
            return self._cached
        if not self._open.any():
            return None
        scores = self.gain @ self.weights
        scores[~self._open] = -np.inf
        self._cached = self.docs[int(np.argmax(scores))]  # docs sorted: smaller docid wins ties
        return self._cached


def _ap_rank_weights(n: int) -> FloatArray:
    """w(r) = (H_n - H_{r-1}) / H_n for r = 1..n, where H_i = sum_{j<=i} 1/j.

    The average-precision-inspired rank weight of Aslam, Pavlu & Yilmaz (SIGIR 2006), scaled to
    w(1) = 1; it falls like log(n / r). A document a run did not retrieve has weight 0.
    """
    harmonic = np.concatenate(([0.0], np.cumsum(1.0 / np.arange(1, n + 1))))
    weights: FloatArray = (harmonic[n] - harmonic[:n]) / harmonic[n]
    return weights
