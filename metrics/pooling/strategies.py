"""Pooling strategies: which documents to judge, and in what order.

A *strategy* turns the runs of one topic, cut to the pool depth k, into a judging order. Static
strategies (``docid``, ``depth``, ``rank``, ``rrf``, ``borda``, ``stratified``) decide the whole
order up front. Adaptive strategies (``mtf``, ``maxmean``, ``thompson``, ``hedge``) decide the next
document from the judgments made so far; a judging queue asks them one document at a time through
:meth:`Strategy.next_document`, and :func:`simulate` drives exactly the same code with the qrels as
the oracle.

Conventions shared by every strategy (a user must know them to reproduce a figure):

* A run's ranking for a topic is given as a sequence of docids, best first. Callers reading TREC
  files rank as trec_eval does: score descending, ties by docid in descending byte order, the rank
  column ignored (:mod:`metrics.io` does this). Ranks are 1-based; the pool depth k keeps ranks
  1..k of every run.
* Runs are visited in the order of their tags (``sorted``): when two runs tie (same priority, same
  mean, same sampled value), the run whose tag sorts first wins.
* When two documents tie (same best rank, same fused score, same Hedge score), the smaller docid
  (``str`` order) comes first.
* A document is relevant when its grade is >= ``relevance_level`` (default 1). In a simulation a
  pooled document absent from the qrels counts as non-relevant.
* Randomised strategies (``thompson``, ``stratified``) draw from ``numpy.random.default_rng`` seeded
  with ``[seed, crc32(topic)]``: the same runs, topic and seed give the same order.
"""

from __future__ import annotations

import zlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TextIO, TypeAlias

import numpy as np
import numpy.typing as npt

__all__ = [
    "STRATEGIES",
    "BordaStrategy",
    "DepthStrategy",
    "DocidStrategy",
    "HedgeStrategy",
    "JSONValue",
    "MaxMeanStrategy",
    "MoveToFrontStrategy",
    "Pool",
    "PoolState",
    "PoolStrategy",
    "RRFStrategy",
    "RankStrategy",
    "SimulationResult",
    "Strategy",
    "StratifiedStrategy",
    "ThompsonStrategy",
    "cut_runs",
    "make_strategy",
    "parse_topic_spec",
    "priority_runs",
    "simulate",
    "topic_sort_key",
]

JSONValue: TypeAlias = "str | int | float | bool | list[JSONValue] | dict[str, JSONValue] | None"
TopicRuns: TypeAlias = Mapping[str, Sequence[str]]
"""One topic's runs: run tag -> ranked docids (best first)."""
Runs: TypeAlias = Mapping[str, Mapping[str, Sequence[str]]]
"""Several topics' runs: run tag -> qid -> ranked docids (best first)."""
Judgments: TypeAlias = Mapping[str, int]
"""One topic's judgments: docid -> grade."""
FloatArray: TypeAlias = npt.NDArray[np.float64]


def topic_sort_key(qid: str) -> tuple[int, int, str]:
    """Sort key for topic ids: numeric ids by value (``"9" < "10"``), then others by string."""
    return (0, int(qid), qid) if qid.isdigit() else (1, 0, qid)


def parse_topic_spec(spec: str) -> list[str]:
    """Topic ids from ``"601-650"`` or ``"601,605,610-620"`` (ranges inclusive, numeric).

    Non-numeric ids may be listed but not used in ranges. Order is kept, duplicates dropped.
    """
    out: dict[str, None] = {}
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        low, dash, high = part.partition("-")
        if dash and low.strip().isdigit() and high.strip().isdigit():
            a, b = int(low), int(high)
            if a > b:
                raise ValueError(f"empty topic range {part!r}")
            out.update(dict.fromkeys(str(q) for q in range(a, b + 1)))
        elif dash and low:
            raise ValueError(f"topic range {part!r} must be two integers, as in 601-650")
        else:
            out[part] = None
    if not out:
        raise ValueError(f"no topics in {spec!r}")
    return list(out)


def _topic_seed(seed: int, topic: str) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32(topic.encode("utf-8"))])


def cut_runs(runs: Runs, topic: str, depth: int | None) -> dict[str, list[str]]:
    """One topic's rankings cut to ranks 1..depth (``None``: no cut), keyed by run tag.

    Runs that did not answer ``topic`` are left out. A duplicate docid within a ranking is an error
    (trec_eval semantics), raised as ``ValueError``.
    """
    if depth is not None and depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth}")
    out: dict[str, list[str]] = {}
    for tag in sorted(runs):
        ranking = runs[tag].get(topic)
        if not ranking:
            continue
        docs = list(ranking if depth is None else ranking[:depth])
        if len(set(docs)) != len(docs):
            raise ValueError(f"run {tag!r}, topic {topic!r}: duplicate docid in ranking")
        out[tag] = docs
    return out


def _whole(name: str, value: Any, *, minimum: int) -> None:
    """Strategy parameters come from JSON: check their type here, not when the pool is built."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be a whole number >= {minimum}, got {value!r}")


def _number(
    name: str, value: Any, *, low: float, high: float | None = None, low_inclusive: bool = False
) -> None:
    """A finite real number above ``low`` (or at it, with ``low_inclusive``) and below ``high``."""
    ok = isinstance(value, int | float) and not isinstance(value, bool) and np.isfinite(value)
    if ok:
        ok = (value >= low if low_inclusive else value > low) and (high is None or value < high)
    if not ok:
        bounds = (">= " if low_inclusive else "> ") + str(low)
        bounds += f" and < {high}" if high is not None else ""
        raise ValueError(f"{name} must be a number {bounds}, got {value!r}")


def priority_runs(
    tags: Iterable[str],
    groups: Mapping[str, str],
    priority: Mapping[str, int] | None = None,
    per_group: int = 1,
) -> list[str]:
    """The runs that contribute to a pool when each group may contribute its top-n runs.

    TREC practice: a group submits several runs ranked by priority (1 = most important) and only
    the first ``per_group`` of them are pooled. Within a group, runs are taken by ascending
    ``priority`` (a run without one comes after those that have one), then by tag. A run missing
    from ``groups`` forms a group of its own. Returns the selected tags, sorted.
    """
    if per_group < 1:
        raise ValueError(f"per_group must be >= 1, got {per_group}")
    prio = priority or {}
    by_group: dict[str, list[str]] = {}
    for tag in tags:
        by_group.setdefault(groups.get(tag, f"\0{tag}"), []).append(tag)
    chosen: list[str] = []
    for members in by_group.values():
        members.sort(key=lambda t: (t not in prio, prio.get(t, 0), t))
        chosen.extend(members[:per_group])
    return sorted(chosen)


# --------------------------------------------------------------------------------------------
# Incremental state: the one code path used by the judging queue and by the simulation.


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


# --------------------------------------------------------------------------------------------
# Strategies


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


class DocidStrategy(_StaticStrategy):
    """Depth-k union judged in docid order (``str`` ascending): the naive TREC baseline."""

    name = "docid"

    def rank_documents(self, topic_runs: TopicRuns, *, topic: str = "") -> list[str]:
        """sorted(union of ranks 1..k of every run)."""
        return sorted(_union(topic_runs))


@dataclass(frozen=True)
class DepthStrategy(_StaticStrategy):
    """Depth-k union (TREC pooling), optionally with per-group priority.

    With ``groups`` (run tag -> group) and ``per_group`` = n, only each group's top-n runs by
    ``priority`` (run tag -> 1, 2, ...; see :func:`priority_runs`) contribute. The union is listed
    in docid order, which reveals neither rank nor system.
    """

    groups: Mapping[str, str] | None = None
    priority: Mapping[str, int] | None = None
    per_group: int | None = None
    name: ClassVar[str] = "depth"

    def __post_init__(self) -> None:
        if self.per_group is not None:
            _whole("per_group", self.per_group, minimum=1)
        for name in ("groups", "priority"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), Mapping):
                raise ValueError(f"{name} must be an object {{run tag: value}}")

    def params(self) -> dict[str, JSONValue]:
        """``per_group`` and the group map and priorities when set."""
        out: dict[str, JSONValue] = {}
        if self.per_group is not None:
            out["per_group"] = self.per_group
            out["groups"] = dict(sorted((self.groups or {}).items()))
            out["priority"] = dict(sorted((self.priority or {}).items()))
        return out

    def contributing(self, tags: Iterable[str]) -> list[str]:
        """All runs, or each group's top ``per_group`` runs by priority."""
        if self.per_group is None:
            return sorted(tags)
        return priority_runs(tags, self.groups or {}, self.priority, self.per_group)

    def rank_documents(self, topic_runs: TopicRuns, *, topic: str = "") -> list[str]:
        """sorted(union of ranks 1..k of the contributing runs)."""
        return sorted(_union(topic_runs))


class RankStrategy(_StaticStrategy):
    """Rank order / take-N: documents by their best rank over all runs, ties by smaller docid.

    key(d) = (min_s rank_s(d), d). Judging the first N gives the "take-N" pool (every rank-1
    document, then every rank-2 document, ...).
    """

    name = "rank"

    def rank_documents(self, topic_runs: TopicRuns, *, topic: str = "") -> list[str]:
        """Sort by (best rank over runs, docid)."""
        best: dict[str, int] = {}
        for ranking in topic_runs.values():
            for rank, doc in enumerate(ranking, start=1):
                if rank < best.get(doc, rank + 1):
                    best[doc] = rank
        return sorted(best, key=lambda d: (best[d], d))


@dataclass(frozen=True)
class RRFStrategy(_StaticStrategy):
    """Reciprocal rank fusion order (Cormack, Clarke & Buettcher, SIGIR 2009).

    score(d) = sum over runs s retrieving d of 1 / (k + rank_s(d)); descending, ties by docid.
    """

    k: float = 60.0
    name: ClassVar[str] = "rrf"

    def __post_init__(self) -> None:
        _number("k", self.k, low=0.0, low_inclusive=True)

    def params(self) -> dict[str, JSONValue]:
        """``{"k": k}``."""
        return {"k": self.k}

    def rank_documents(self, topic_runs: TopicRuns, *, topic: str = "") -> list[str]:
        """Sort by (-RRF score, docid); runs are summed in tag order (deterministic floats)."""
        score: dict[str, float] = {}
        for tag in sorted(topic_runs):
            for rank, doc in enumerate(topic_runs[tag], start=1):
                score[doc] = score.get(doc, 0.0) + 1.0 / (self.k + rank)
        return sorted(score, key=lambda d: (-score[d], d))


class BordaStrategy(_StaticStrategy):
    """Borda count order (Aslam & Montague, SIGIR 2001).

    With n = the longest ranking of the topic (the pool depth for full runs), a document at rank
    r of a run earns n - r + 1 points; a run that did not retrieve it gives 0. Order by total
    points descending, ties by docid.
    """

    name = "borda"

    def rank_documents(self, topic_runs: TopicRuns, *, topic: str = "") -> list[str]:
        """Sort by (-sum_s (n - rank_s(d) + 1), docid)."""
        n = max((len(r) for r in topic_runs.values()), default=0)
        points: dict[str, int] = {}
        for ranking in topic_runs.values():
            for rank, doc in enumerate(ranking, start=1):
                points[doc] = points.get(doc, 0) + n - rank + 1
        return sorted(points, key=lambda d: (-points[d], d))


class MoveToFrontStrategy(Strategy):
    """Move-to-Front pooling (Cormack, Palmer & Clarke, SIGIR 1998).

    Every run starts with priority 0. The current run is the live run (one with unjudged pooled
    documents) of highest priority, ties to the tag that sorts first. Its best-ranked unjudged
    document is judged next. A relevant document keeps the same run current; a non-relevant one
    lowers that run's priority by 1 and a new current run is chosen. Documents already judged
    (through another run) are skipped without reward.
    """

    name = "mtf"
    adaptive = True

    def start(
        self, topic_runs: TopicRuns, *, topic: str = "", relevance_level: int = 1
    ) -> PoolState:
        """A fresh MTF state: all priorities 0, no current run."""
        return _MoveToFrontState(self._restrict(topic_runs), relevance_level)


class MaxMeanStrategy(Strategy):
    """MaxMean bandit (Losada, Parapar & Barreiro, SAC 2016; IP&M 2017).

    Runs are arms. Run s's posterior mean of relevance is (1 + rel_s) / (2 + n_s), with n_s the
    documents judged because s was pulled and rel_s the relevant ones (Beta(1, 1) prior). The
    live run with the highest mean is pulled (ties: tag first) and its best-ranked unjudged
    document judged. Documents already judged via another run are skipped without reward.
    """

    name = "maxmean"
    adaptive = True

    def start(
        self, topic_runs: TopicRuns, *, topic: str = "", relevance_level: int = 1
    ) -> PoolState:
        """A fresh MaxMean state: every arm at mean 1/2."""
        return _MaxMeanState(self._restrict(topic_runs), relevance_level)


@dataclass(frozen=True)
class ThompsonStrategy(Strategy):
    """Thompson sampling bandit (Losada, Parapar & Barreiro, SAC 2016; IP&M 2017).

    As MaxMean, but each pull draws theta_s ~ Beta(1 + rel_s, 1 + n_s - rel_s) for every run and
    pulls the live run with the largest draw (ties: tag first). Draws come from
    ``default_rng([seed, crc32(topic)])``: same runs, topic, judgments and seed -> same order.
    """

    seed: int = 0
    name: ClassVar[str] = "thompson"
    adaptive: ClassVar[bool] = True

    def __post_init__(self) -> None:
        _whole("seed", self.seed, minimum=0)

    def params(self) -> dict[str, JSONValue]:
        """``{"seed": seed}``."""
        return {"seed": self.seed}

    def start(
        self, topic_runs: TopicRuns, *, topic: str = "", relevance_level: int = 1
    ) -> PoolState:
        """A fresh Thompson state seeded from (seed, topic)."""
        rng = _topic_seed(self.seed, topic)
        return _ThompsonState(self._restrict(topic_runs), relevance_level, rng)


@dataclass(frozen=True)
class HedgeStrategy(Strategy):
    """Hedge pooling (Aslam, Pavlu & Savell, CIKM 2003; Freund & Schapire's Hedge).

    Runs are experts with weights p_s (initially uniform). A run's rank weight for a document is
    g_s(d) = (H_n - H_{r-1}) / H_n at rank r of its n-document ranking (H = harmonic numbers;
    g = 1 at rank 1, about log(n/r)/log(n) below, 0 if not retrieved). Next document:
    argmax over unjudged d of sum_s p_s g_s(d) (ties: smaller docid). After a judgment each run
    suffers loss l_s = (1 - g_s(d)) / 2 if d is relevant, (1 + g_s(d)) / 2 if not (in [0, 1]),
    and p_s <- p_s * beta**l_s, renormalised. Every judgment of a pooled document updates the
    weights, whoever asked for it.
    """

    beta: float = 0.1
    name: ClassVar[str] = "hedge"
    adaptive: ClassVar[bool] = True

    def __post_init__(self) -> None:
        _number("beta", self.beta, low=0.0, high=1.0)

    def params(self) -> dict[str, JSONValue]:
        """``{"beta": beta}``."""
        return {"beta": self.beta}

    def start(
        self, topic_runs: TopicRuns, *, topic: str = "", relevance_level: int = 1
    ) -> PoolState:
        """A fresh Hedge state: uniform weights over the runs."""
        return _HedgeState(self._restrict(topic_runs), relevance_level, self.beta)


DEFAULT_STRATA: tuple[tuple[int, float], ...] = ((10, 1.0), (30, 0.5), (100, 0.1))


@dataclass(frozen=True)
class StratifiedStrategy(_StaticStrategy):
    """Stratified random sampling of the pool with inclusion probabilities, for infAP/statAP.

    ``strata`` = ((depth_1, rate_1), (depth_2, rate_2), ...), depths increasing. A pooled document
    belongs to the first stratum whose depth is >= its best rank over the runs (documents deeper
    than the last stratum are not pooled). From a stratum of N documents a uniform sample without
    replacement of m = max(1, round(rate * N)) documents is drawn (m = N when rate = 1), so each
    sampled document has inclusion probability pi = m / N (Yilmaz, Kanoulas & Aslam, SIGIR 2008).
    Order: stratum by stratum, then best rank, then docid. Seeded with
    ``default_rng([seed, crc32(topic)])``.
    """

    strata: tuple[tuple[int, float], ...] = DEFAULT_STRATA
    seed: int = 0
    name: ClassVar[str] = "stratified"

    def __post_init__(self) -> None:
        _whole("seed", self.seed, minimum=0)
        pairs = self.strata if isinstance(self.strata, list | tuple) else None
        if not pairs or any(not isinstance(p, list | tuple) or len(p) != 2 for p in pairs):
            raise ValueError(f"strata must be a list of [depth, rate] pairs, got {self.strata!r}")
        for depth, rate in pairs:
            _whole("a stratum's depth", depth, minimum=1)
            _number("a stratum's rate", rate, low=0.0)  # <= 1: checked below
        depths = [d for d, _ in self.strata]
        if not self.strata or depths != sorted(set(depths)) or depths[0] < 1:
            raise ValueError(f"strata depths must be increasing positive integers: {self.strata}")
        if any(not 0.0 < rate <= 1.0 for _, rate in self.strata):
            raise ValueError(f"sampling rates must be in (0, 1]: {self.strata}")

    def params(self) -> dict[str, JSONValue]:
        """``{"strata": [[depth, rate], ...], "seed": seed}``."""
        return {"strata": [[d, r] for d, r in self.strata], "seed": self.seed}

    def _sample(self, topic_runs: TopicRuns, topic: str) -> tuple[list[str], dict[str, float]]:
        best: dict[str, int] = {}
        for ranking in topic_runs.values():
            for rank, doc in enumerate(ranking, start=1):
                if rank < best.get(doc, rank + 1):
                    best[doc] = rank
        rng = _topic_seed(self.seed, topic)
        order: list[str] = []
        probs: dict[str, float] = {}
        low = 0
        for depth, rate in self.strata:
            members = sorted(d for d, r in best.items() if low < r <= depth)
            low = depth
            if not members:
                continue
            m = len(members) if rate >= 1.0 else max(1, round(rate * len(members)))
            picked = rng.choice(len(members), size=m, replace=False)
            sample = [members[i] for i in picked]
            sample.sort(key=lambda d: (best[d], d))
            order.extend(sample)
            probs.update(dict.fromkeys(sample, m / len(members)))
        return order, probs

    def rank_documents(self, topic_runs: TopicRuns, *, topic: str = "") -> list[str]:
        """The sampled documents, stratum by stratum, then by (best rank, docid)."""
        return self._sample(topic_runs, topic)[0]

    def inclusion(self, topic_runs: TopicRuns, *, topic: str = "") -> dict[str, float]:
        """Sampled docid -> inclusion probability m_h / N_h of its stratum h."""
        return self._sample(self._restrict(topic_runs), topic)[1]


StrategyFactory: TypeAlias = Callable[..., Strategy]

STRATEGIES: dict[str, StrategyFactory] = {
    "docid": DocidStrategy,
    "depth": DepthStrategy,
    "rank": RankStrategy,
    "rrf": RRFStrategy,
    "borda": BordaStrategy,
    "mtf": MoveToFrontStrategy,
    "maxmean": MaxMeanStrategy,
    "thompson": ThompsonStrategy,
    "hedge": HedgeStrategy,
    "stratified": StratifiedStrategy,
}
"""Strategy name -> factory; keyword arguments are the strategy's parameters."""

if TYPE_CHECKING:  # every registered strategy satisfies the protocol
    _static: PoolStrategy = DepthStrategy()
    _adaptive: PoolStrategy = HedgeStrategy()


def make_strategy(name: str, **params: Any) -> Strategy:
    """``STRATEGIES[name](**params)`` with a clear error for an unknown name or parameter."""
    try:
        factory = STRATEGIES[name]
    except KeyError:
        known = ", ".join(STRATEGIES)
        raise ValueError(f"unknown pooling strategy {name!r}; known: {known}") from None
    try:
        return factory(**params)
    except TypeError as exc:
        raise ValueError(f"bad parameters for strategy {name!r}: {exc}") from None


# --------------------------------------------------------------------------------------------
# Pools


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


# --------------------------------------------------------------------------------------------
# Simulation


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
