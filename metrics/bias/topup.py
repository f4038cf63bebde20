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
    each: inclusion probability m_h / U_h in band h. Every band is looked at, whatever the draw.
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
as judged (for P@k with k its cutoff: exactly its score had it been pooled; for R@k, AP and
nDCG@k the relevant documents only the run's top k holds enter R and the ideal ranking too, and
unjudged documents below k stay non-relevant). The measures (P@j, R@j with ceiling@j, nDCG@j,
AP, Unique@j) and how a draw's grades are completed: :mod:`metrics.bias.topup_measures`.

With strata (``per_topic``), each stratum's rate has the hole's overall rate as its prior, worth
:data:`POOLING` documents (p_h ~ Beta(r_h + c p, m_h - r_h + c (1 - p)), p drawn from the hole's
Jeffreys posterior): a stratum holding one or two judged documents is not pulled to 1/2. The
``rank`` design's bands are collapsed instead: one rate for the hole, the bands' rates weighted
by their unjudged documents, its Beta posterior on Kish's effective sample size (a band's own
rate, from one or two documents at small m, biased the estimate and its interval held in 90% of
the replays). Topics differ too: a topic's rate is drawn around its stratum's, worth
:data:`TOPIC_SPREAD` documents, updated by the topic's own judged documents. For P@k's total
this changes little; for R@k, AP and nDCG@k, where it matters which topic holds the relevant
documents, it widens the interval to what the sample cannot tell.

With an automatic judge (``auto``, a uniform sample only), the judge's grade of each hole
document is its stratum ("judge: relevant", "judge: not relevant", "judge: no label"): the
sample measures how often the judge's word holds in each, and every unsampled document is
relevant at its stratum's rate, the calibrated-predictor form of prediction-powered inference.
Each stratum's prior is the hole's rate worth :data:`POOLING` documents plus Jeffreys' half
document on each side (a stratum with no relevant document judged is not taken to hold none).

Measured: ``benchmarks/README.md`` ("The top-up"), every design over P@10, R@10, nDCG@10, AP and
Unique@10 at 5, 10 and 20 judged documents per run (1 or 2 per topic).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import numpy.typing as npt

from metrics.bias.topup_measures import Completed, grades_of
from metrics.bias.topup_measures import values as measure_values

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
    known_gain: F64  # (topics, k): the grade (> 0) of each judged document in the top k
    ideal: F64  # (topics, k): each topic's largest qrels grades (> 0), in decreasing order
    grade_counts: dict[int, int]  # how many of the analysed topics' judgments have each grade


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
        known_gain = np.zeros((nt, k))
        ideal = np.zeros((nt, k))
        counts: dict[int, int] = {}
        holes = []
        for t, qid in enumerate(topics):
            docs = self.ranked[qid]
            grades = self.grades.get(qid, {})
            known_rel[t] = sum(1 for g in grades.values() if g >= level)
            for g in grades.values():
                counts[int(g)] = counts.get(int(g), 0) + 1
            best = sorted((g for g in grades.values() if g > 0), reverse=True)[:k]
            ideal[t, : len(best)] = best
            for i, doc in enumerate(docs[:k]):
                if doc in grades:
                    known_top[t, i] = grades[doc] >= level
                    known_gain[t, i] = max(grades[doc], 0)
                else:
                    hole_mask[t, i] = True
                    holes.append((t, i, qid, doc))
            c = 0.0
            for i, doc in enumerate(docs[k:], start=k + 1):
                if grades.get(doc, -1) >= level:
                    c += 1.0
                    beyond_a[t] += c / i
                    beyond_b[t] += 1.0 / i
        return _Static(
            known_top,
            hole_mask,
            known_rel,
            beyond_a,
            beyond_b,
            tuple(holes),
            known_gain,
            ideal,
            counts,
        )

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
    auto: Mapping[tuple[str, str], int] | None = None,
) -> dict[str, TopUpEstimate]:
    """Each measure's estimate and interval for the run with its hole judged, from the sample's
    judgments so far (``labels``: (qid, docid) -> grade; sampled documents not yet judged are
    treated as unsampled). ``auto``: an automatic judge's grades of the hole's documents, which
    the sample corrects (a uniform sample only). See the module docstring."""
    rng = rng or np.random.default_rng(0)
    st = hole.static
    k = hole.k
    topics_at = {q: t for t, q in enumerate(hole.ranked)}
    population = dict(sample.population)
    if auto is not None:
        if sample.design != "uniform":
            raise ValueError("an automatic judge corrects a uniform sample only")
        population = {}
        for qid, _, doc in hole.unjudged:
            h = _judge_class(auto.get((qid, doc)), hole.relevance_level)
            population[h] = population.get(h, 0) + 1

    def stratum(qid: str, rank: int, doc: str) -> str:
        """The stratum a hole document's rate is estimated in."""
        if auto is not None:
            return _judge_class(auto.get((qid, doc)), hole.relevance_level)
        return _stratum(sample.design, qid, rank, k)

    # per stratum: judged relevant / judged; sampled documents not judged yet count as unsampled
    judged_in: dict[str, list[int]] = {}
    sampled: dict[tuple[str, str], bool] = {}
    sampled_grade: dict[tuple[str, str], int] = {}
    for qid, rank, doc in sample.documents:
        h = stratum(qid, rank, doc)
        grade = labels.get((qid, doc))
        if grade is None:
            continue
        rel = int(grade) >= hole.relevance_level
        sampled[(qid, doc)] = rel
        sampled_grade[(qid, doc)] = int(grade)
        judged_in.setdefault(h, []).append(int(rel))
    strata = sorted(set(population) | set(judged_in))
    index = {h: i for i, h in enumerate(strata)}
    r = np.array([sum(judged_in.get(h, [])) for h in strata], dtype=np.float64)
    m = np.array([len(judged_in.get(h, [])) for h in strata], dtype=np.float64)
    if sample.design == "rank":
        # the bands collapsed, weighted by their unjudged documents (see the module docstring)
        sizes = [population.get(h, 0) for h in strata]
        p = _collapsed(r, m, sizes, draws, rng)
        index = {h: 0 for h in strata}  # one population: topics vary around the hole's rate
    else:
        # the hole's rate (Jeffreys), then each stratum's, shrunk towards it by POOLING documents
        p = rng.beta(r.sum() + 0.5, (m - r).sum() + 0.5, size=(draws, 1))
        if len(strata) > 1:
            o = np.clip(p, 1e-9, 1 - 1e-9)
            # a judge's grades split the hole into strata whose rates differ by design, so the
            # hole's rate is a poor centre for them: Jeffreys' half document on each side keeps
            # a stratum that has shown no relevant document off a rate of 0 (measured with a
            # simulated judge: 96% held with it, 90% without; centring the prior on the judge's
            # own grade instead biased it up, 90%: benchmarks/penalty_intervals.py)
            floor = 0.5 if auto is not None else 0.0
            p = rng.beta(
                r[None, :] + floor + POOLING * o, (m - r)[None, :] + floor + POOLING * (1 - o)
            )
    base = st.known_top.copy()
    base_gain = st.known_gain.copy()
    t_idx: list[int] = []
    i_idx: list[int] = []
    cols: list[int] = []
    for t, i, qid, doc in st.holes:
        known = sampled.get((qid, doc))
        if known is not None:
            base[t, i] = known
            base_gain[t, i] = max(sampled_grade[(qid, doc)], 0)
        else:
            t_idx.append(t)
            i_idx.append(i)
            cols.append(index[stratum(qid, i + 1, doc)])
    top = np.broadcast_to(base, (draws, *base.shape)).copy()
    if t_idx and spread is not None:
        # topics differ: each topic's rate in a stratum is drawn around the stratum's, with
        # what the topic's own judged documents said (a topic's hole may hold most of the
        # relevant documents, which matters for R@k and AP, not for P@k's total)
        cells = sorted(set(zip(t_idx, cols, strict=True)))
        at = {c: j for j, c in enumerate(cells)}
        r_tc = np.zeros(len(cells))
        m_tc = np.zeros(len(cells))
        for qid, rank, doc in sample.documents:
            seen = sampled.get((qid, doc))
            j = at.get((topics_at[qid], index[stratum(qid, rank, doc)]))
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
    gains = None
    if any(name.startswith("nDCG@") for name in measures):
        gains = np.broadcast_to(base_gain, (draws, *base_gain.shape)).copy()
        if t_idx:
            ti, ii = np.array(t_idx), np.array(i_idx)
            gains[:, ti, ii] = grades_of(
                top[:, ti, ii],
                hole.relevance_level,
                list(sampled_grade.values()),
                st.grade_counts,
                rng,
            )
    done = Completed(
        top_f,
        np.where(st.known_rel[None, :] > 0, R, 0.0),  # see topup_measures: topics left out
        st.hole_mask,
        st.beyond_a,
        st.beyond_b,
        st.ideal,
        gains,
    )
    out: dict[str, TopUpEstimate] = {}
    for name in measures:
        values = measure_values(name, done)
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


def _judge_class(grade: int | None, level: int) -> str:
    """The stratum of a hole document by its automatic grade."""
    if grade is None:
        return "judge: no label"
    return "judge: relevant" if grade >= level else "judge: not relevant"


def _collapsed(r: F64, m: F64, sizes: list[int], draws: int, rng: np.random.Generator) -> F64:
    """The hole's rate from a stratified sample, its strata collapsed: the strata's rates
    weighted by their unjudged documents, a Beta posterior (Jeffreys) on Kish's effective sample
    size (draws, 1)."""
    seen = m > 0
    size = np.asarray(sizes, dtype=np.float64)
    weight = np.where(seen, size, 0.0)
    if not seen.any() or weight.sum() <= 0:
        return rng.beta(0.5, 0.5, size=(draws, 1))
    rate = float((weight * np.divide(r, m, out=np.zeros_like(r), where=seen)).sum() / weight.sum())
    w = np.divide(weight, m, out=np.zeros_like(weight), where=seen)  # per judged document
    n_eff = float((w * m).sum() ** 2 / (w**2 * m).sum())
    return rng.beta(n_eff * rate + 0.5, n_eff * (1 - rate) + 0.5, size=(draws, 1))
