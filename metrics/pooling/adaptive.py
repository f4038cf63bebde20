"""The adaptive strategies: the next document chosen from the judgments made so far (move-to-front,
MaxMean, Thompson sampling, Hedge)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from metrics.pooling.base import Strategy
from metrics.pooling.runs import JSONValue, TopicRuns, _number, _topic_seed, _whole
from metrics.pooling.state import (
    PoolState,
    _HedgeState,
    _MaxMeanState,
    _MoveToFrontState,
    _ThompsonState,
)

__all__ = [
    "HedgeStrategy",
    "MaxMeanStrategy",
    "MoveToFrontStrategy",
    "ThompsonStrategy",
]


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
