r"""A top-up's measures, per draw of the completed judgments (:mod:`metrics.bias.topup`).

Each draw completes the run's judgments: its top k relevant or not (``top``, draws x topics x
k) and, for nDCG, each document's grade (``gains``). A measure's value per draw is its mean
over the analysed topics, as the evaluation computes it:

- ``P@j``: relevant in the top j over j, every topic;
- ``R@j``: relevant in the top j over R, where R is the qrels' relevant documents plus the
  hole's found in the draw; ``ceiling@j``: min(j, R) / R, the best R@j any ranking reaches;
- ``AP``: to the run's depth, the documents below k as judged;
- ``nDCG@j``: gain = grade (> 0), discount log2(rank + 1), the ideal ranking from every
  relevant grade the qrels hold plus the hole's drawn ones (trec_eval's ``ndcg_cut``);
- ``Unique@j``: the share of the run's relevant documents in its top j that the pool had not
  judged, over all topics.

R@j, ceiling@j, AP and nDCG@j average the topics with a relevant document known before the
top-up (a topic with none is left out, as honest mode leaves it out): a topic is never in or out
of the average by a draw.

Grades (:func:`grades_of`): a document drawn relevant takes a grade from the relevant grades,
one drawn non-relevant from the others (0 and any grade below the relevance level), each by a
Dirichlet posterior: the judged sample's grades, with the qrels' mix of grades on the analysed
topics as its prior, worth :data:`GRADE_PRIOR` documents.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["GRADE_PRIOR", "Completed", "grades_of", "values"]

F64 = npt.NDArray[np.float64]
Bool = npt.NDArray[np.bool_]
# the weight, in documents, of the qrels' mix of grades in the prior of a hole's grades
GRADE_PRIOR = 2.0


@dataclass(frozen=True)
class Completed:
    """One estimate's draws: ``top`` (draws, topics, k) relevant or not; ``R`` (draws, topics)
    each topic's relevant documents, 0 for a topic left out; ``gains`` (draws, topics, k) the
    grades (nDCG only, else None); the hole (topics, k) and what the qrels hold per topic."""

    top: F64
    R: F64
    hole: Bool
    beyond_a: F64  # per topic: sum over relevant ranks i > k of (relevant in k+1..i) / i
    beyond_b: F64  # per topic: sum over relevant ranks i > k of 1 / i
    ideal: F64  # (topics, k): the qrels' largest grades (> 0), in decreasing order
    gains: F64 | None = None

    @property
    def k(self) -> int:
        return int(self.top.shape[2])


def values(name: str, c: Completed) -> F64:
    """Per draw, ``name``'s mean over the topics on the completed judgments."""
    family, _, cut = name.partition("@")
    k = c.k
    cutoff = int(cut) if cut.isdigit() else None
    if cut and (cutoff is None or not 0 < cutoff <= k):
        raise ValueError(f"{name}: the top-up judged the top {k} only")
    ok = c.R > 0
    if family == "AP" and not cut:
        ranks = np.arange(1, k + 1, dtype=np.float64)
        cum = c.top @ np.triu(np.ones((k, k)))  # relevant at ranks <= i
        prec = (c.top * cum) @ (1.0 / ranks)
        rel_top = c.top.sum(axis=2)
        total = prec + rel_top * c.beyond_b[None, :] + c.beyond_a[None, :]
        return _topic_mean(np.divide(total, c.R, out=np.zeros_like(total), where=ok), ok)
    if cutoff is None:
        raise ValueError(f"{name}: a top-up estimates P@j, R@j, ceiling@j, nDCG@j, AP, Unique@j")
    head = (np.arange(k) < cutoff).astype(np.float64)
    if family == "P":
        out: F64 = ((c.top @ head) / cutoff).mean(axis=1)
        return out
    if family == "R":
        hits = c.top @ head
        return _topic_mean(np.divide(hits, c.R, out=np.zeros_like(hits), where=ok), ok)
    if family == "ceiling":
        best = np.minimum(c.R, float(cutoff))
        return _topic_mean(np.divide(best, c.R, out=np.zeros_like(best), where=ok), ok)
    if family == "nDCG":
        if c.gains is None:
            raise ValueError(f"{name}: the draws carry no grades")
        return _ndcg(c, cutoff, ok)
    if family == "Unique":
        found = ((c.top * c.hole[None, :, :]) @ head).sum(axis=1)
        total = (c.top @ head).sum(axis=1)
        unique: F64 = np.divide(found, total, out=np.zeros(len(total)), where=total > 0)
        return unique
    raise ValueError(f"{name}: a top-up estimates P@j, R@j, ceiling@j, nDCG@j, AP, Unique@j")


def _ndcg(c: Completed, cut: int, ok: Bool) -> F64:
    assert c.gains is not None
    disc = 1.0 / np.log2(np.arange(2, cut + 2, dtype=np.float64))
    dcg = c.gains[:, :, :cut] @ disc
    # the ideal ranking: the qrels' grades and the hole's drawn ones (the hole is not in them)
    hole_gains = c.gains * c.hole[None, :, :]
    known = np.broadcast_to(c.ideal[None, :, :cut], (len(c.gains), *c.ideal[:, :cut].shape))
    pool = np.concatenate((known, hole_gains), axis=2)
    best = -np.sort(-pool, axis=2)[:, :, :cut]
    idcg = best @ disc
    return _topic_mean(np.divide(dcg, idcg, out=np.zeros_like(dcg), where=ok & (idcg > 0)), ok)


def grades_of(
    relevant: Bool,
    level: int,
    judged: list[int],
    prior: Mapping[int, int],
    rng: np.random.Generator,
) -> F64:
    """Per draw, a grade for each unsampled hole document (``relevant``: draws x documents,
    whether the draw made it relevant): from the judged sample's grades (``judged``) with the
    qrels' counts of each grade (``prior``) as the prior, worth :data:`GRADE_PRIOR` documents."""
    out = np.zeros(relevant.shape)
    draws, n = relevant.shape
    if n == 0:
        return out
    for side in (True, False):
        cats = sorted(
            {g for g in prior if (g >= level) == side} | {g for g in judged if (g >= level) == side}
        ) or [level if side else 0]
        mask = relevant if side else ~relevant
        if len(cats) == 1:
            out[mask] = max(cats[0], 0)
            continue
        weight = np.array([float(prior.get(g, 0)) for g in cats])
        share = weight / weight.sum() if weight.sum() > 0 else np.full(len(cats), 1 / len(cats))
        seen = np.array([float(sum(1 for j in judged if j == g)) for g in cats])
        alpha = np.maximum(GRADE_PRIOR * share + seen, 1e-3)
        mix = np.cumsum(rng.dirichlet(alpha, size=draws), axis=1)  # (draws, categories)
        pick = (rng.random((draws, n))[:, :, None] > mix[:, None, :-1]).sum(axis=2)
        grade = np.maximum(np.asarray(cats, dtype=np.float64)[pick], 0.0)
        out[mask] = grade[mask]
    return out


def _topic_mean(per: F64, ok: Bool) -> F64:
    """Per draw, the mean of ``per`` over the topics ``ok`` (0 with none)."""
    n = ok.sum(axis=1).astype(np.float64)
    out: F64 = np.divide(per.sum(axis=1), n, out=np.zeros(len(n)), where=n > 0)
    return out
