"""Which runs were pooled, and to what depth, recovered from the qrels alone.

A collection distributed as qrels and runs rarely says which runs contributed to the pool. The
qrels show it: a run that was pooled at depth d has its top d documents judged on every topic (a
document is judged when the qrels list it, whatever its grade: a negative grade is "pooled, not
judged" and still pooled), while a run that was not pooled runs into unjudged documents early on
some topics.

The decision follows PoolBiasEstimators' pool analyzer (Lipani, ``PoolAnalyzer.scala``, mode
analyser), written anew:

- for each run and topic, the *judged prefix*: how many of its top documents are judged before
  the first unjudged one (a ranking judged to its end does not bound anything and is left out);
- for each run, the deepest depth judged on *every* topic (the least judged prefix), and the
  campaign's pool depth is the most common of these over the runs (the largest on a tie, runs
  whose least prefix is 0 left out: they were not pooled at any depth);
- a run was pooled when, on every topic, its top ``depth`` documents are judged, allowing
  ``depth // 20`` unjudged documents among them (as the analyzer does, for judging slips), or
  the ranking is judged to its end.

Each run also gets its *majority depth* k: the deepest k whose top k is fully judged on more
than half of the topics it answers (with the fraction of topics so judged and its judged@k).
It is shown, not used for the verdict: on TREC 2011 Medical, 78 runs are judged to depth 10 on
most topics but only the 41 pooled runs on every topic, because runs of the same group share
most of their top documents with a pooled sibling. ``quorum`` below 1 relaxes "every topic"
for collections with holes in their qrels.

Only topics that were pooled should be analysed: Robust 2003's 50 old topics (303-397) were
judged in earlier years' pools, not from these runs, and analysing them drowns the signal
(``topics`` restricts the analysis).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["PoolInference", "RunPoolingGuess", "infer_pooling"]


@dataclass(frozen=True)
class RunPoolingGuess:
    """What the qrels say about one run (depths are ranks: the top ``k`` documents)."""

    tag: str
    topics: int  # topics analysed: the run answers them and the qrels judge them
    k: int  # majority depth: top k fully judged on more than half of the topics
    fraction_at_k: float  # share of the topics whose top k is fully judged
    judged_at_k: float  # mean share of judged documents in the top k (over the topics)
    least_depth: int  # the deepest depth fully judged on every topic
    fraction_at_depth: float  # share of topics judged to the pool depth (with the tolerance)
    judged_at_depth: float  # judged@depth, mean over the topics
    pooled: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            "run": self.tag,
            "topics": self.topics,
            "k": self.k,
            "fraction_at_k": round(self.fraction_at_k, 4),
            "judged_at_k": round(self.judged_at_k, 4),
            "least_depth": self.least_depth,
            "fraction_at_depth": round(self.fraction_at_depth, 4),
            "judged_at_depth": round(self.judged_at_depth, 4),
            "pooled": self.pooled,
        }


@dataclass(frozen=True)
class PoolInference:
    depth: int  # the campaign's pool depth estimate (0: no run looks pooled)
    tolerance: int  # unjudged documents allowed in a pooled run's top ``depth``
    quorum: float  # share of topics on which a pooled run must be judged to ``depth``
    topics: tuple[str, ...]  # the topics analysed
    runs: tuple[RunPoolingGuess, ...] = field(default=())

    @property
    def pooled(self) -> list[str]:
        return [r.tag for r in self.runs if r.pooled]

    def as_dict(self) -> dict[str, Any]:
        return {
            "depth": self.depth,
            "tolerance": self.tolerance,
            "quorum": self.quorum,
            "topics": len(self.topics),
            "pooled_runs": len(self.pooled),
            "runs": [r.as_dict() for r in self.runs],
        }


_WHOLE = np.iinfo(np.int64).max  # a ranking judged to its end: no bound on the depth


def _judged_flags(ranking: Sequence[str], judged: Collection[str]) -> np.ndarray:
    return np.fromiter((d in judged for d in ranking), dtype=bool, count=len(ranking))


def _prefix(flags: np.ndarray, allowed: int = 0) -> int:
    """Documents before the ``allowed + 1``-th unjudged one (``_WHOLE`` when there is none)."""
    misses = np.flatnonzero(~flags)
    if misses.size <= allowed:
        return int(_WHOLE)
    return int(misses[allowed])


def _mode_right(values: Iterable[int]) -> int:
    """The most common value, the largest on a tie (0 when there are none)."""
    counts = Counter(values)
    if not counts:
        return 0
    return max(counts.items(), key=lambda item: (item[1], item[0]))[0]


def infer_pooling(
    runs: Mapping[str, Mapping[str, Sequence[str]]],
    qrels: Mapping[str, Collection[str]],
    *,
    topics: Collection[str] | None = None,
    quorum: float = 1.0,
) -> PoolInference:
    """Guess which ``runs`` (tag -> {qid: docids, best first}) were pooled, and at what depth,
    from ``qrels`` (qid -> judged docids, e.g. ``{docid: grade}``), on ``topics`` (default:
    every qrels topic). See the module's docstring for the rule."""
    if not 0 < quorum <= 1:
        raise ValueError("quorum is a share of the topics, in (0, 1]")
    wanted = [q for q in qrels if topics is None or q in topics]
    flags: dict[str, list[np.ndarray]] = {}
    prefixes: dict[str, np.ndarray] = {}
    for tag, ranked in runs.items():
        answered = [q for q in wanted if q in ranked and len(ranked[q])]
        flags[tag] = [_judged_flags(ranked[q], qrels[q]) for q in answered]
        prefixes[tag] = np.array([_prefix(f) for f in flags[tag]], dtype=np.int64)

    # the least judged prefix of each run; runs judged to the end everywhere bound nothing
    least = {t: int(p.min()) if p.size else 0 for t, p in prefixes.items()}
    depth = _mode_right(v for v in least.values() if 0 < v < _WHOLE)
    tolerance = depth // 20

    guesses = []
    for tag in runs:
        p, fl = prefixes[tag], flags[tag]
        n = p.size
        if n == 0:
            guesses.append(RunPoolingGuess(tag, 0, 0, 0.0, 0.0, 0, 0.0, 0.0, False))
            continue
        longest = max(f.size for f in fl)
        capped = np.minimum(p, [f.size for f in fl])  # a whole ranking is judged to its end
        # deepest k with top k fully judged on more than half of the topics: the
        # (n // 2 + 1)-th largest prefix
        k = int(np.sort(capped)[::-1][n // 2])
        at_k = float(np.mean((p >= k) | (p == _WHOLE))) if k else 1.0
        judged_k = float(np.mean([f[:k].sum() / k for f in fl])) if k else 0.0
        if depth:
            tolerant = np.array([_prefix(f, tolerance) for f in fl], dtype=np.int64)
            ok = (tolerant >= depth) | (tolerant == _WHOLE)
            at_depth = float(ok.mean())
            judged_depth = float(np.mean([f[:depth].sum() / depth for f in fl]))
        else:
            at_depth, judged_depth = 0.0, 0.0
        least_depth = min(int(capped.min()), longest)
        pooled = bool(depth) and at_depth >= quorum
        guesses.append(
            RunPoolingGuess(tag, n, k, at_k, judged_k, least_depth, at_depth, judged_depth, pooled)
        )
    return PoolInference(depth, tolerance, quorum, tuple(wanted), tuple(guesses))
