"""Which topics an analysis uses: the qrels cut to a topic set or a pool, the topics a side can
score, and the rule for comparing two sides (:func:`common_topics`; defined in
:mod:`metrics.bias.versions`)."""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from metrics.io import Qrels
from metrics.pooling.runs import topic_sort_key

__all__ = [
    "TopicSplit",
    "common_topics",
    "restrict_qrels",
    "scorable_topics",
    "subset_qrels",
]


def _num(x: float | None) -> float | None:
    return None if x is None or math.isnan(x) else float(x)


def subset_qrels(qrels: Qrels, topics: Iterable[str] | None) -> Qrels:
    """The qrels of the given topics only (all of them when ``topics`` is None)."""
    if topics is None:
        return qrels
    wanted = set(topics)
    keep = [i for i, q in enumerate(qrels.qids) if q in wanted]
    sizes = np.diff(qrels.offsets)[keep]
    offsets = np.zeros(len(keep) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    rows = (
        np.concatenate([np.arange(qrels.offsets[i], qrels.offsets[i + 1]) for i in keep])
        if keep
        else np.zeros(0, dtype=np.int64)
    )
    return Qrels(
        tuple(qrels.qids[i] for i in keep), offsets, qrels.docids[rows], qrels.grades[rows]
    )


def restrict_qrels(qrels: Qrels, pool: Mapping[str, Collection[str]]) -> Qrels:
    """The judgments of pooled documents only: ``{(q, d) in qrels : d in pool[q]}``.

    A topic left with no judgment disappears. This is the explicit (slow, obvious) form of what
    :class:`LeaveOneOut` computes implicitly; tests and benchmarks use it as the reference.
    """
    out: dict[str, dict[str, int]] = {}
    for qid in qrels.qids:
        docs = pool.get(qid)
        if not docs:
            continue
        kept = {d: g for d, g in qrels.judgments(qid).items() if d in docs}
        if kept:
            out[qid] = kept
    return Qrels.from_dict(out)


def _topics_of(qrels: Qrels, topics: Iterable[str] | None) -> tuple[str, ...]:
    qids = qrels.qids if topics is None else [q for q in qrels.qids if q in set(topics)]
    if not qids:
        raise ValueError("no topic to analyse: the topics given have no judgments in the qrels")
    return tuple(sorted(qids, key=topic_sort_key))


def scorable_topics(
    qrels: Qrels, *, relevance_level: int = 1, topics: Iterable[str] | None = None
) -> tuple[str, ...]:
    """The topics ``qrels`` can score: at least one judgment with grade >= ``relevance_level``.

    Only topics among ``topics`` when given; in topic order
    (:func:`metrics.pooling.runs.topic_sort_key`).
    A topic whose judgments are all non-relevant cannot be scored (R = 0: AP, recall and nDCG are
    undefined), so it cannot be compared either.
    """
    if relevance_level < 1:
        raise ValueError(f"relevance_level must be >= 1, got {relevance_level}")
    cum = np.zeros(qrels.grades.size + 1, dtype=np.int64)
    np.cumsum(qrels.grades >= relevance_level, out=cum[1:])
    n_rel = cum[qrels.offsets[1:]] - cum[qrels.offsets[:-1]]
    wanted = None if topics is None else set(topics)
    keep = [q for q, n in zip(qrels.qids, n_rel.tolist(), strict=True) if n > 0]
    return tuple(sorted((q for q in keep if wanted is None or q in wanted), key=topic_sort_key))


def _id_list(ids: Sequence[str], *, limit: int = 8) -> str:
    """``6``, ``6 and 7``, ``6, 7 and 8``; beyond ``limit`` ids: ``601, ..., 605 and 45 more``."""
    if len(ids) > limit:
        return f"{', '.join(ids[:5])} and {len(ids) - 5} more"
    if len(ids) == 1:
        return ids[0]
    return f"{', '.join(ids[:-1])} and {ids[-1]}" if ids else ""


def _topics_phrase(ids: Sequence[str]) -> str:
    return f"topic {ids[0]} is" if len(ids) == 1 else f"topics {_id_list(ids)} are"


@dataclass(frozen=True)
class TopicSplit:
    """Which topics two sides (qrels versions, pools, runs) can both score.

    ``compared`` = scorable by both; ``only_a`` / ``only_b`` = by one side only; ``neither`` =
    topics named (the universe) that neither side can score. Each in topic order.
    """

    compared: tuple[str, ...]
    only_a: tuple[str, ...]
    only_b: tuple[str, ...]
    neither: tuple[str, ...]

    def note(self, labels: tuple[str, str] = ("a", "b")) -> str:
        """What differs, in plain words.

        "compared on all 6 topics"; "compared on 5 topics; topic 6 is new in v2 (not in v1)";
        "...; topics 3 and 4 are in v1 only (not in v2)"; "...; topic 9 is in neither".
        """
        la, lb = labels
        n = len(self.compared)
        if not (self.only_a or self.only_b or self.neither):
            if n == 1:
                return f"compared on the one topic both can score ({self.compared[0]})"
            return f"compared on all {n} topics"
        parts = [f"compared on {n} topic{'' if n == 1 else 's'}"]
        if self.only_b:
            parts.append(f"{_topics_phrase(self.only_b)} new in {lb} (not in {la})")
        if self.only_a:
            parts.append(f"{_topics_phrase(self.only_a)} in {la} only (not in {lb})")
        if self.neither:
            parts.append(f"{_topics_phrase(self.neither)} in neither")
        return "; ".join(parts)

    def to_dict(self) -> dict[str, list[str]]:
        """``{"compared", "only_a", "only_b", "neither"}``: lists of topic ids."""
        return {
            "compared": list(self.compared),
            "only_a": list(self.only_a),
            "only_b": list(self.only_b),
            "neither": list(self.neither),
        }


def common_topics(
    a: Iterable[str], b: Iterable[str], *, universe: Iterable[str] | None = None
) -> TopicSplit:
    """Split topics by which side can score them: the rule for comparing any two sides.

    ``a`` and ``b`` are the topics each side can score (for qrels: :func:`scorable_topics`; for
    two runs against one qrels: the scorable topics each run answers; for two pools: the topics
    each pool's qrels can score). ``universe`` (default: ``a`` and ``b`` together) bounds every
    list, e.g. a ``topics`` filter; its topics that neither side can score are ``neither``. Every
    figure that compares the two sides must be computed on ``compared`` only, and the difference
    stated (:meth:`TopicSplit.note`): two averages over different topics mix the change of
    interest with the change of topics.
    """
    sa, sb = set(a), set(b)
    everything = sa | sb if universe is None else set(universe)
    sa &= everything
    sb &= everything

    def ordered(xs: set[str]) -> tuple[str, ...]:
        return tuple(sorted(xs, key=topic_sort_key))

    return TopicSplit(
        compared=ordered(sa & sb),
        only_a=ordered(sa - sb),
        only_b=ordered(sb - sa),
        neither=ordered(everything - sa - sb),
    )
