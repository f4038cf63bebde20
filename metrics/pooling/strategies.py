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

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeAlias

from metrics.pooling.adaptive import (
    HedgeStrategy,
    MaxMeanStrategy,
    MoveToFrontStrategy,
    ThompsonStrategy,
)
from metrics.pooling.base import PoolStrategy, Strategy
from metrics.pooling.static import (
    BordaStrategy,
    DepthStrategy,
    DocidStrategy,
    RankStrategy,
    RRFStrategy,
    StratifiedStrategy,
)

__all__ = [
    "STRATEGIES",
    "make_strategy",
]

"""One topic's runs: run tag -> ranked docids (best first)."""


"""Several topics' runs: run tag -> qid -> ranked docids (best first)."""


"""One topic's judgments: docid -> grade."""


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
