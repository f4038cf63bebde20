"""Retrieval measures, vectorised over all queries of a run at once.

A :class:`Ranked` holds the retrieved documents of every evaluated query, flattened in trec_eval
order (score descending, ties by docid descending), each row carrying its qrels grade, plus the
per-query facts from the qrels (R, judged non-relevant count, ideal gains). Every measure is a
function ``(ranked, k)`` of a ``Ranked`` and a cutoff (None: no cutoff) that returns per-query
``(value, numerator, denominator)`` arrays (:data:`Result`); the numerator and denominator are what
micro-averaging sums. :mod:`metrics.measures.registry` names them and declares how each is used.

Conventions (trec_eval 10.0; ``level`` = relevance level, default 1):

- a row is *relevant* when judged with grade >= level; *judged* when present in the qrels with a
  grade >= 0; a negative grade means "pooled but not judged" and counts as unjudged;
- R = number of qrels documents with grade >= level (retrieved or not);
- nDCG gain is the raw grade of a judged row with grade > 0, whatever the level (trec_eval's
  ``ndcg``/``ndcg_cut``); the discount at rank r is log2(r + 1); the ideal ranking uses every
  qrels grade >= 1;
- a query with R = 0 scores 0 on every measure that divides by R.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from metrics.measures.gain import ndcg_gain
from metrics.measures.ranked import (
    Bool,
    Ideal,
    Ranked,
    Result,
    _cut,
    _frac,
    _ratio,
    _seg_of,
    _value,
)

__all__ = [
    "INFAP_EPSILON",
    "average_precision",
    "bpref",
    "ceiling",
    "condensed",
    "infap",
    "judged",
    "keep_rows",
    "ndcg",
    "num_q",
    "num_rel",
    "num_rel_ret",
    "num_ret",
    "optimistic",
    "precision",
    "r_precision",
    "recall",
    "reciprocal_rank",
    "success",
    "truncated",
    "unjudged",
]

INFAP_EPSILON = 0.00001  # trec_eval m_infAP.c


"""Per-query ``(value, numerator, denominator)``: for ratio-of-counts measures (P, R, ceiling,
Rprec, Judged, Unjudged, Success, Num*) value = numerator / denominator (0 when the denominator
is 0) and micro-averaging is sum(numerator) / sum(denominator); for the others numerator = value
and denominator = 1."""


def precision(r: Ranked, k: int | None) -> Result:
    """P@k = |rel in top k| / k (trec_eval ``P_k``: the divisor is k even if fewer retrieved)."""
    k = _cut(k)
    return _frac(r.rel_sum(r.rel_top(k)), np.full(r.nq, float(k)))


def recall(r: Ranked, k: int | None) -> Result:
    """R@k = |rel in top k| / R (trec_eval ``recall_k``)."""
    return _frac(r.rel_sum(r.rel_top(_cut(k))), r.num_rel.astype(np.float64))


def ceiling(r: Ranked, k: int | None) -> Result:
    """ceiling@k = min(k, R) / R: the best R@k any ranking can reach."""
    rr = r.num_rel.astype(np.float64)
    return _frac(np.minimum(rr, float(_cut(k))), rr)


def success(r: Ranked, k: int | None) -> Result:
    """Success@k = 1 if any relevant document is in the top k, else 0."""
    return _value((r.rel_sum(r.rel_top(_cut(k))) > 0).astype(np.float64))


def reciprocal_rank(r: Ranked, k: int | None) -> Result:
    """RR = 1 / rank of the first relevant document (0 if none; RR@k: none in the top k)."""
    first = r.rel_rank == 1
    top = r.rel_top(k)
    return _value(r.rel_sum(first if top is None else first & top, 1.0 / r.rel_pos))


def average_precision(r: Ranked, k: int | None) -> Result:
    """AP = sum over relevant rows in the top k of P@rank, / R (trec_eval ``map``/``map_cut``)."""
    s = r.rel_sum(r.rel_top(k), r.rel_rank / r.rel_pos)
    return _value(_ratio(s, r.num_rel.astype(np.float64)))


def r_precision(r: Ranked, k: int | None = None) -> Result:
    """R-prec = |rel in top R| / R (no cutoff: ``k`` is ignored)."""
    top_r = r.rel_pos <= r.num_rel[r.rel_seg]
    return _frac(r.rel_sum(top_r), r.num_rel.astype(np.float64))


def ndcg(r: Ranked, k: int | None, *, dcg: str = "log2", gains: str = "") -> Result:
    """nDCG@k = DCG@k / IDCG@k, DCG = sum gain / log2(rank + 1), gain = grade (> 0, judged).

    ``dcg="exp-log2"`` (gain 2^grade - 1, gdeval) and ``gains`` (trec_eval's gain map text,
    ``"1=3,2=9"``) are computed by :func:`metrics.measures.gain.ndcg_gain`.
    """
    if dcg != "log2" or gains:
        return ndcg_gain(r, k, dcg=dcg, gains=gains)
    rows = r.gain_rows
    if k is not None:
        rows = rows[r.pos[rows] <= k]
    gain = r.grade[rows].astype(np.float64) / np.log2(r.pos[rows] + 1.0)
    total = np.bincount(r.seg[rows], weights=gain, minlength=r.nq).astype(np.float64)
    return _value(_ratio(total, r.ideal.idcg(k)))


def bpref(r: Ranked, k: int | None = None) -> Result:
    """bpref (Buckley & Voorhees 2004, trec_eval 8+); no cutoff (``k`` is ignored).

    (1/R) * sum over retrieved relevant d of (1 - min(n_d, R) / min(N, R)), n_d = judged
    non-relevant documents ranked above d, N = judged non-relevant in the qrels; the term is 1
    when n_d = 0. Unjudged documents are ignored.
    """
    nb = r.above_rel(r.judged & (r.grade < r.level))
    seg = r.rel_seg
    big_r = r.num_rel[seg].astype(np.float64)
    den = np.minimum(r.num_nonrel[seg], r.num_rel[seg]).astype(np.float64)
    term = np.ones(nb.size)
    some = nb > 0  # then a judged non-relevant and a relevant exist: den >= 1
    term[some] = 1.0 - np.minimum(nb[some], big_r[some]) / den[some]
    return _value(_ratio(r.rel_sum(weights=term), r.num_rel.astype(np.float64)))


def infap(r: Ranked, k: int | None = None) -> Result:
    """infAP (Yilmaz & Aslam 2006) exactly as trec_eval's ``m_infAP.c``; no cutoff.

    For the relevant row at 0-based index j > 0, with r, n, u the judged relevant, judged
    non-relevant and pooled-but-unjudged (negative grade) rows above it:
    1/(j+1) + j/(j+1) * ((r + n + u)/j) * ((r + eps)/(r + n + 2 eps)); 1 at j = 0; documents
    absent from the qrels only advance j. Summed and divided by R.
    """
    rb = r.rel_rank - 1.0
    nb = r.above_rel(r.judged & (r.grade < r.level))
    ub = r.above_rel(r.pooled & ~r.judged)
    j = (r.rel_pos - 1).astype(np.float64)
    js = np.maximum(j, 1.0)
    eps = INFAP_EPSILON
    term = 1.0 / (j + 1.0) + (j / (j + 1.0)) * ((rb + nb + ub) / js) * (
        (rb + eps) / (rb + nb + 2.0 * eps)
    )
    term = np.where(j == 0, 1.0, term)
    return _value(_ratio(r.rel_sum(weights=term), r.num_rel.astype(np.float64)))


def _judged_fraction(r: Ranked, k: int | None, judged: bool) -> Result:
    mask = r.judged if judged else ~r.judged
    den = r.num_ret if k is None else np.minimum(r.num_ret, k)
    return _frac(r.per_query(mask & r.top(k)), den.astype(np.float64))


def judged(r: Ranked, k: int | None) -> Result:
    """Judged@k = judged rows in the top k / min(k, retrieved) (0 for an empty ranking)."""
    return _judged_fraction(r, k, True)


def unjudged(r: Ranked, k: int | None) -> Result:
    """Unjudged@k = unjudged rows in the top k / min(k, retrieved) (0 for an empty ranking).

    Not trec_eval's ``unj`` (``Unj@k``, :func:`metrics.measures.trec.unj`), which divides by k:
    15 retrieved, 11 of them unjudged, give Unjudged@20 = 11/15 but Unj@20 = 11/20.
    """
    return _judged_fraction(r, k, False)


def num_rel(r: Ranked, k: int | None = None) -> Result:
    """NumRel = R, the relevant documents in the qrels (retrieved or not)."""
    return _value(r.num_rel.astype(np.float64))


def num_ret(r: Ranked, k: int | None = None) -> Result:
    """NumRet = retrieved documents."""
    return _value(r.num_ret.astype(np.float64))


def num_q(r: Ranked, k: int | None = None) -> Result:
    """NumQ = 1 per query: summed, the number of queries evaluated (trec_eval ``num_q``)."""
    return _value(np.ones(r.nq))


def num_rel_ret(r: Ranked, k: int | None = None) -> Result:
    """NumRelRet = relevant retrieved documents."""
    return _value(r.rel_sum())


def condensed(r: Ranked) -> Ranked:
    """The condensed ranking (Sakai 2007): unjudged rows removed, judged rows moved up.

    R, the judged non-relevant count and the ideal gains are unchanged.
    """
    return keep_rows(r, r.judged)


def truncated(r: Ranked, depth: int) -> Ranked:
    """The first ``depth`` rows of every query (trec_eval's ``-M``)."""
    return r if depth >= int(r.num_ret.max(initial=0)) else keep_rows(r, r.pos <= depth)


def keep_rows(r: Ranked, keep: Bool) -> Ranked:
    """``r`` with only the rows where ``keep``, in their order (ranks close up)."""
    counts = np.bincount(r.seg[keep], minlength=r.nq)
    off = np.zeros(r.nq + 1, dtype=np.int64)
    np.cumsum(counts, out=off[1:])
    return replace(
        r, offsets=off, grade=r.grade[keep], pooled=r.pooled[keep], judged=r.judged[keep]
    )


def optimistic(r: Ranked, k: int | None) -> Ranked:
    """Unjudged rows in the top k (None: all of them) treated as relevant with grade = level
    (the upper treatment).

    Those u_k documents become relevant documents of the query, so R grows by u_k and the ideal
    ranking gains u_k documents of gain ``level`` (so nDCG@k and AP@k stay within [0, 1]).
    """
    flip = ~r.judged & r.top(k)
    u = np.bincount(r.seg[flip], minlength=r.nq)
    if not u.any():
        return r
    grade = np.where(flip, r.level, r.grade)
    gains = np.concatenate((r.ideal.gains, np.full(int(u.sum()), float(r.level))))
    seg = np.concatenate((_seg_of(r.ideal.offsets), np.repeat(np.arange(r.nq), u)))
    order = np.lexsort((-gains, seg))
    off = np.zeros(r.nq + 1, dtype=np.int64)
    np.cumsum(np.bincount(seg, minlength=r.nq), out=off[1:])
    return replace(
        r,
        grade=grade,
        pooled=r.pooled | flip,
        judged=r.judged | flip,
        num_rel=r.num_rel + u,
        ideal=Ideal(gains[order], off),
    )
