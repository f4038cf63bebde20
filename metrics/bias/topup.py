r"""A top-up: measuring a run's penalty with a few judgments, instead of estimating it.

A run scored against a pool it did not help build has unjudged documents in its top k (its
*hole*). Judging a random sample of them measures the penalty: the sample says what share of the
hole is relevant, and the run's score with its hole judged follows, with an interval. Organisers
did this by hand for late runs (Touché's post-hoc judgments, the TREC-8 re-pool); here it is a
design, a draw with stored inclusion probabilities, and an estimator.

Designs (:func:`draw`)
----------------------
The population is the run's unjudged documents in its top k over the analysed topics.

``uniform``
    ``m`` documents drawn without replacement from the whole hole: each has inclusion
    probability m / U.
``rank``
    Stratified by rank: the ranks 1..k split into three bands (1-4, 5-8, 9-10 for k = 10), ``m``
    allocated to the bands in proportion to their unjudged documents (largest remainders, at
    least one per non-empty band while the budget allows), drawn without replacement within
    each: inclusion probability m_h / U_h in band h. Relevance falls with rank, so the bands
    hold more alike documents than the whole hole.
``per_topic``
    ``m`` documents per topic (all of a topic's hole when it has fewer), uniform within it.

The estimate (:func:`estimate`)
-------------------------------
Every unjudged document of a stratum is relevant with the same unknown probability p_h (the
design makes the sampled ones a simple random sample of their stratum). With Jeffreys' prior,
p's posterior after r relevant of m judged is Beta(r + 1/2, m - r + 1/2). Each draw
takes p_h from it and makes every *unsampled* unjudged document relevant with probability p_h;
the sampled ones keep their judgments and the judged ones theirs; the run's measures are computed
on the completed judgments. The estimate is the draws' mean and the 95% interval their 2.5 and
97.5 percentiles: a posterior predictive interval for the run's score with its whole hole judged
(finite-population: a hole judged whole has a zero-width interval). It is not a normal (Wald)
interval, which fails at small m; at m = 5 it still holds (``benchmarks/penalty_intervals.py``).

What is estimated: the run's score when its unjudged top-k documents are judged, other documents
as judged (for P@k with k its cutoff: exactly its score had it been pooled; for R@k and AP the
relevant documents only the run's top k holds enter R too, and unjudged documents below k stay
non-relevant). Measures: P@k, R@k (topics with no relevant document left out, per draw) and AP
(to the run's depth), binary relevance at ``relevance_level``, and ``Unique@k``: the share of the
run's relevant documents in its top k that the pool had not judged (what only it found, over
all topics); R@k and AP average the topics with
a relevant document known before the top-up (a topic with none is left out, as honest mode
leaves out a topic without relevant documents).

With strata (``rank``), each stratum's rate has the hole's overall rate as its prior, worth
:data:`POOLING` documents (p_h ~ Beta(r_h + c p, m_h - r_h + c (1 - p)), p drawn from the hole's
Jeffreys posterior): a stratum holding one or two judged documents is not pulled to 1/2. Topics
differ too: a topic's rate is drawn around its stratum's, worth :data:`TOPIC_SPREAD` documents,
updated by the topic's own judged documents. For P@k's total this changes little; for R@k and
AP, where it matters which topic holds the relevant documents, it widens the interval to what
the sample cannot tell.

Measured (``benchmarks/penalty_intervals.py``, Robust 2003 and TREC 2011 Medical, left-out runs,
qrels as the oracle): the uniform design's 95% intervals hold the target in 95% of the
replays over P@10, R@10 and AP at m = 5, 10, 20 (the least: Medical R@10, about 89%), the
per-topic design's (1 or 2 per topic) in 94%; the rank design's in about 90% (biased up at
m = 5, when a band holds one or two judged documents), so it is not the one to use.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import numpy.typing as npt

__all__ = [
    "DESIGNS",
    "Hole",
    "Sample",
    "TopUpEstimate",
    "draw",
    "estimate",
    "hole_of",
    "stratum_of",
]

DESIGNS = ("uniform", "rank", "per_topic")
F64 = npt.NDArray[np.float64]
DRAWS = 1000
# the weight, in documents, of the hole's overall rate in each stratum's prior (rank strata)
POOLING = 2.0
# how much topics' rates may differ around their stratum's: the prior weight, in documents, of
# the stratum's rate in a topic's (None: every topic at its stratum's rate)
TOPIC_SPREAD: float | None = 4.0


@dataclass(frozen=True)
class _Static:
    known_top: npt.NDArray[np.bool_]  # (topics, k): judged relevant in the top k
    hole_mask: npt.NDArray[np.bool_]  # (topics, k): unjudged
    known_rel: F64  # per topic: the qrels' relevant documents
    beyond_a: F64  # per topic: sum over relevant ranks i > k of (relevant in k+1..i) / i
    beyond_b: F64  # per topic: sum over relevant ranks i > k of 1 / i
    holes: tuple[tuple[int, int, str, str], ...]  # (topic index, rank index, qid, docid)


@dataclass(frozen=True)
class Hole:
    """A run's top k on the analysed topics: per topic its ranked docids (to its depth, for AP),
    which of the top k are unjudged, the judged grades, and each topic's known relevant count
    (the qrels' relevant documents, retrieved or not)."""

    k: int
    ranked: dict[str, list[str]]
    grades: dict[str, dict[str, int]]
    relevance_level: int = 1

    @cached_property
    def static(self) -> _Static:
        """What every estimate of this hole reads (computed once)."""
        topics = list(self.ranked)
        k, level = self.k, self.relevance_level
        nt = len(topics)
        known_top = np.zeros((nt, k), dtype=bool)
        hole_mask = np.zeros((nt, k), dtype=bool)
        known_rel = np.zeros(nt)
        beyond_a = np.zeros(nt)
        beyond_b = np.zeros(nt)
        holes = []
        for t, qid in enumerate(topics):
            docs = self.ranked[qid]
            grades = self.grades.get(qid, {})
            known_rel[t] = sum(1 for g in grades.values() if g >= level)
            for i, doc in enumerate(docs[:k]):
                if doc in grades:
                    known_top[t, i] = grades[doc] >= level
                else:
                    hole_mask[t, i] = True
                    holes.append((t, i, qid, doc))
            c = 0.0
            for i, doc in enumerate(docs[k:], start=k + 1):
                if grades.get(doc, -1) >= level:
                    c += 1.0
                    beyond_a[t] += c / i
                    beyond_b[t] += 1.0 / i
        return _Static(known_top, hole_mask, known_rel, beyond_a, beyond_b, tuple(holes))

    @property
    def unjudged(self) -> list[tuple[str, int, str]]:
        """``(qid, rank, docid)`` of every unjudged document in the top k (rank from 1)."""
        out = []
        for qid, docs in self.ranked.items():
            judged = self.grades.get(qid, {})
            for rank, doc in enumerate(docs[: self.k], start=1):
                if doc not in judged:
                    out.append((qid, rank, doc))
        return out


def hole_of(
    qrels: Mapping[str, Mapping[str, int]],
    ranked: Mapping[str, Sequence[str]],
    k: int,
    *,
    topics: Sequence[str] | None = None,
    relevance_level: int = 1,
) -> Hole:
    """The hole of a run ranked as ``ranked`` (qid -> docids in rank order) against ``qrels``,
    on ``topics`` (default: the topics of the qrels the run answered)."""
    chosen = list(topics) if topics is not None else sorted(q for q in ranked if q in qrels)
    return Hole(
        k,
        {q: list(ranked.get(q, [])) for q in chosen},
        {q: dict(qrels.get(q, {})) for q in chosen},
        relevance_level,
    )


@dataclass(frozen=True)
class Sample:
    """The documents drawn for judging: ``(qid, rank, docid)`` each with its stratum and
    inclusion probability, and the design that drew them."""

    design: str
    budget: int
    documents: tuple[tuple[str, int, str], ...]
    strata: tuple[str, ...]
    probabilities: tuple[float, ...]
    population: dict[str, int] = field(default_factory=dict)  # stratum -> unjudged documents


def stratum_of(design: str, qid: str, rank: int, k: int) -> str:
    """The stratum of the document at ``rank`` of topic ``qid`` under ``design``."""
    return _stratum(design, qid, rank, k)


def _stratum(design: str, qid: str, rank: int, k: int) -> str:
    if design == "rank":
        width = max(1, math.ceil(k / 3))
        band = min((rank - 1) // width, 2)
        lo, hi = band * width + 1, k if band == 2 else (band + 1) * width
        return f"ranks {lo}-{hi}" if hi > lo else f"rank {lo}"
    if design == "per_topic":
        return f"topic {qid}"
    return "all"


def _allocate(sizes: dict[str, int], budget: int) -> dict[str, int]:
    """``budget`` spread over strata in proportion to ``sizes`` (largest remainders), at least
    one per non-empty stratum while the budget allows, never more than a stratum holds."""
    total = sum(sizes.values())
    if budget >= total:
        return dict(sizes)
    alloc = {h: 0 for h in sizes}
    nonempty = [h for h, n in sizes.items() if n > 0]
    for h in sorted(nonempty, key=lambda h: -sizes[h])[:budget]:
        alloc[h] = 1
    left = budget - sum(alloc.values())
    if left > 0:
        share = {h: budget * sizes[h] / total for h in nonempty}
        extra = {h: max(0, min(sizes[h], math.floor(share[h])) - alloc[h]) for h in nonempty}
        for h in nonempty:
            take = min(extra[h], left)
            alloc[h] += take
            left -= take
        order = sorted(nonempty, key=lambda h: -(share[h] - math.floor(share[h])))
        while left > 0:
            moved = False
            for h in order:
                if left and alloc[h] < sizes[h]:
                    alloc[h] += 1
                    left -= 1
                    moved = True
            if not moved:
                break
    return alloc


def draw(hole: Hole, design: str, budget: int, rng: np.random.Generator) -> Sample:
    """A sample of the hole's documents by ``design`` (``budget``: documents in all; per topic
    for ``per_topic``)."""
    if design not in DESIGNS:
        raise ValueError(f"unknown design {design!r}; known: {', '.join(DESIGNS)}")
    if budget < 1:
        raise ValueError("the budget must be at least 1 document")
    by: dict[str, list[tuple[str, int, str]]] = {}
    for doc in hole.unjudged:
        by.setdefault(_stratum(design, doc[0], doc[1], hole.k), []).append(doc)
    sizes = {h: len(v) for h, v in by.items()}
    if design == "per_topic":
        alloc = {h: min(n, budget) for h, n in sizes.items()}
    else:
        alloc = _allocate(sizes, budget)
    docs, strata, probs = [], [], []
    for h in sorted(by):
        members = by[h]
        n = alloc.get(h, 0)
        if n <= 0:
            continue
        picked = rng.choice(len(members), size=n, replace=False)
        for i in sorted(picked.tolist()):
            docs.append(members[i])
            strata.append(h)
            probs.append(n / len(members))
    return Sample(design, budget, tuple(docs), tuple(strata), tuple(probs), sizes)


@dataclass(frozen=True)
class TopUpEstimate:
    """A measure's estimate for the run with its hole judged, from the judged sample."""

    measure: str
    estimate: float
    low: float
    high: float
    judged: int  # sampled documents judged so far
    sampled: int
    unjudged: int  # the hole
    level: float = 0.95

    def contains(self, value: float) -> bool:
        return self.low - 1e-12 <= value <= self.high + 1e-12


def estimate(
    hole: Hole,
    sample: Sample,
    labels: Mapping[tuple[str, str], int],
    measures: Sequence[str] = ("P@10",),
    *,
    draws: int = DRAWS,
    rng: np.random.Generator | None = None,
    level: float = 0.95,
    spread: float | None = TOPIC_SPREAD,
) -> dict[str, TopUpEstimate]:
    """Each measure's estimate and interval for the run with its hole judged, from the sample's
    judgments so far (``labels``: (qid, docid) -> grade; sampled documents not yet judged are
    treated as unsampled). See the module docstring."""
    rng = rng or np.random.default_rng(0)
    st = hole.static
    k = hole.k
    topics_at = {q: t for t, q in enumerate(hole.ranked)}
    # per stratum: judged relevant / judged; sampled documents not judged yet count as unsampled
    judged_in: dict[str, list[int]] = {}
    sampled: dict[tuple[str, str], bool] = {}
    for (qid, _, doc), h in zip(sample.documents, sample.strata, strict=True):
        grade = labels.get((qid, doc))
        if grade is None:
            continue
        rel = int(grade) >= hole.relevance_level
        sampled[(qid, doc)] = rel
        judged_in.setdefault(h, []).append(int(rel))
    strata = sorted(set(sample.population) | set(judged_in))
    index = {h: i for i, h in enumerate(strata)}
    r = np.array([sum(judged_in.get(h, [])) for h in strata], dtype=np.float64)
    m = np.array([len(judged_in.get(h, [])) for h in strata], dtype=np.float64)
    # the hole's rate (Jeffreys), then each stratum's, shrunk towards it by POOLING documents
    overall = rng.beta(r.sum() + 0.5, (m - r).sum() + 0.5, size=(draws, 1))
    if len(strata) == 1:
        p = overall
    else:
        o = np.clip(overall, 1e-9, 1 - 1e-9)
        p = rng.beta(r[None, :] + POOLING * o, (m - r)[None, :] + POOLING * (1 - o))
    base = st.known_top.copy()
    t_idx: list[int] = []
    i_idx: list[int] = []
    cols: list[int] = []
    for t, i, qid, doc in st.holes:
        known = sampled.get((qid, doc))
        if known is not None:
            base[t, i] = known
        else:
            t_idx.append(t)
            i_idx.append(i)
            cols.append(index[_stratum(sample.design, qid, i + 1, k)])
    top = np.broadcast_to(base, (draws, *base.shape)).copy()
    if t_idx and spread is not None:
        # topics differ: each topic's rate in a stratum is drawn around the stratum's, with
        # what the topic's own judged documents said (a topic's hole may hold most of the
        # relevant documents, which matters for R@k and AP, not for P@k's total)
        cells = sorted(set(zip(t_idx, cols, strict=True)))
        at = {c: j for j, c in enumerate(cells)}
        r_tc = np.zeros(len(cells))
        m_tc = np.zeros(len(cells))
        for (qid, _, doc), h in zip(sample.documents, sample.strata, strict=True):
            seen = sampled.get((qid, doc))
            j = at.get((topics_at[qid], index[h]))
            if seen is not None and j is not None:
                r_tc[j] += seen
                m_tc[j] += 1
        pc = np.clip(p[:, np.array([c for _, c in cells])], 1e-9, 1 - 1e-9)
        p_tc = rng.beta(spread * pc + r_tc[None, :], spread * (1 - pc) + (m_tc - r_tc)[None, :])
        which = [at[(t, c)] for t, c in zip(t_idx, cols, strict=True)]
        chance = p_tc[:, np.array(which)]
        top[:, np.array(t_idx), np.array(i_idx)] = rng.random((draws, len(t_idx))) < chance
    elif t_idx:
        chance = p[:, np.array(cols)]
        top[:, np.array(t_idx), np.array(i_idx)] = rng.random((draws, len(t_idx))) < chance
    top_f = top.astype(np.float64)
    found = np.einsum("dtk,tk->dt", top_f, st.hole_mask.astype(np.float64))
    R = st.known_rel[None, :] + found  # the hole's relevant documents join R
    # R@k and AP average the topics with a relevant document known before the top-up: a topic
    # is never in or out of the average by a draw
    R = np.where(st.known_rel[None, :] > 0, R, 0.0)
    beyond_a, beyond_b = st.beyond_a, st.beyond_b
    rel_top = top_f @ np.ones(k)
    out: dict[str, TopUpEstimate] = {}
    for name in measures:
        if name.startswith("Unique@"):
            values = _unique(name, top_f, st.hole_mask, k)
        else:
            values = _measure(name, top_f, rel_top, R, beyond_a, beyond_b, k)
        lo, hi = np.quantile(values, [(1 - level) / 2, (1 + level) / 2])
        out[name] = TopUpEstimate(
            name,
            float(values.mean()),
            float(lo),
            float(hi),
            len(sampled),
            len(sample.documents),
            len(hole.unjudged),
            level,
        )
    return out


def _measure(
    name: str,
    top: F64,
    rel_top: F64,
    R: F64,
    beyond_a: F64,
    beyond_b: F64,
    k: int,
) -> F64:
    """Per draw, the mean over topics of ``name`` on the completed judgments."""
    family, _, cut = name.partition("@")
    cutoff = int(cut) if cut else None
    if cutoff is not None and cutoff > k:
        raise ValueError(f"{name}: the top-up judged the top {k} only")
    head = (np.arange(k) < cutoff).astype(np.float64) if cutoff is not None else None
    if family == "P" and head is not None and cutoff is not None:
        values: F64 = ((top @ head) / cutoff).mean(axis=1)
        return values
    if family == "R" and head is not None:
        hits = top @ head
        ok = R > 0
        per = np.divide(hits, R, out=np.zeros_like(hits), where=ok)
        return _topic_mean(per, ok)
    if family == "AP" and cutoff is None:
        ranks = np.arange(1, k + 1, dtype=np.float64)
        cum = top @ np.triu(np.ones((k, k)))  # relevant at ranks <= i
        prec = (top * cum) @ (1.0 / ranks)
        total = prec + rel_top * beyond_b[None, :] + beyond_a[None, :]
        ok = R > 0
        per = np.divide(total, R, out=np.zeros_like(total), where=ok)
        return _topic_mean(per, ok)
    raise ValueError(f"{name}: a top-up estimates P@k, R@k and AP")


def _unique(name: str, top: F64, hole: npt.NDArray[np.bool_], k: int) -> F64:
    """Per draw, the share of the run's relevant documents in its top j (``Unique@j``) that the
    pool had not judged: what only the run found (1 when it found nothing relevant: 0/0 is
    taken as 0)."""
    cut = int(name.partition("@")[2])
    if not 0 < cut <= k:
        raise ValueError(f"{name}: the top-up judged the top {k} only")
    head = (np.arange(k) < cut).astype(np.float64)
    found = (top * hole[None, :, :]) @ head
    total = (top @ head).sum(axis=1)
    out: F64 = np.divide(found.sum(axis=1), total, out=np.zeros(len(total)), where=total > 0)
    return out


def _topic_mean(per: F64, ok: npt.NDArray[np.bool_]) -> F64:
    """Per draw, the mean of ``per`` over the topics ``ok`` (0 with none)."""
    n = ok.sum(axis=1).astype(np.float64)
    out: F64 = np.divide(per.sum(axis=1), n, out=np.zeros(len(n)), where=n > 0)
    return out
