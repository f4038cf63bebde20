"""The static strategies: the whole judging order decided up front (docid, depth, rank, RRF,
Borda, stratified sampling by rank)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import ClassVar

from metrics.pooling.base import _StaticStrategy, _union
from metrics.pooling.runs import (
    JSONValue,
    Runs,
    TopicRuns,
    _number,
    _topic_seed,
    _whole,
    cut_runs,
    priority_runs,
)

__all__ = [
    "BordaStrategy",
    "DepthStrategy",
    "DocidStrategy",
    "Member",
    "RRFStrategy",
    "RankStrategy",
    "StratifiedStrategy",
]


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


DEFAULT_STRATA: tuple[tuple[int, float], ...] = ((10, 1.0), (30, 0.5), (100, 0.1))
CERTAIN = "0"  # the stratum of documents judged before the draw: all of them, pi = 1


@dataclass(frozen=True)
class Member:
    """A document of a sampled pool: its stratum (``"0"``: judged before the draw; ``"1"``,
    ``"2"``, ...: the rank strata in order), its inclusion probability, whether it was drawn."""

    stratum: str
    pi: float
    sampled: bool


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

    def _sample(
        self, topic_runs: TopicRuns, topic: str, judged: Collection[str] = ()
    ) -> tuple[list[str], dict[str, Member]]:
        best: dict[str, int] = {}
        for ranking in topic_runs.values():
            for rank, doc in enumerate(ranking, start=1):
                if rank < best.get(doc, rank + 1):
                    best[doc] = rank
        rng = _topic_seed(self.seed, topic)
        order: list[str] = []
        members: dict[str, Member] = {}
        low = 0
        for i, (depth, rate) in enumerate(self.strata, start=1):
            inside = sorted(d for d, r in best.items() if low < r <= depth)
            low = depth
            for d in inside:
                if d in judged:  # known before the draw: a stratum of its own, all of it
                    members[d] = Member(CERTAIN, 1.0, True)
            stratum = [d for d in inside if d not in judged]
            if not stratum:
                continue
            m = len(stratum) if rate >= 1.0 else max(1, round(rate * len(stratum)))
            picked = rng.choice(len(stratum), size=m, replace=False)
            sample = [stratum[j] for j in picked]
            sample.sort(key=lambda d: (best[d], d))
            order.extend(sample)
            drawn = set(sample)
            for d in stratum:
                members[d] = Member(str(i), m / len(stratum), d in drawn)
        return order, members

    def universe(
        self, runs: Runs, *, depth: int, topic: str, judged: Collection[str] = ()
    ) -> tuple[list[str], dict[str, Member]]:
        """One topic's sampled pool, documents judged before (``judged``) kept apart: the
        documents drawn, in judging order, and every pooled document's :class:`Member`.

        The documents already judged form the certainty stratum ``"0"`` (all of them, pi = 1,
        not drawn again); each rank stratum is drawn from its documents not judged yet, so a
        re-pool adds strata without invalidating what was judged: the earlier judgments are a
        fixed set given the draw, and every other document has its known probability."""
        topic_runs = self._restrict(cut_runs(runs, topic, depth))
        return self._sample(topic_runs, topic, judged)

    def rank_documents(self, topic_runs: TopicRuns, *, topic: str = "") -> list[str]:
        """The sampled documents, stratum by stratum, then by (best rank, docid)."""
        return self._sample(topic_runs, topic)[0]

    def inclusion(self, topic_runs: TopicRuns, *, topic: str = "") -> dict[str, float]:
        """Sampled docid -> inclusion probability m_h / N_h of its stratum h."""
        members = self._sample(self._restrict(topic_runs), topic)[1]
        return {d: m.pi for d, m in members.items() if m.sampled}
