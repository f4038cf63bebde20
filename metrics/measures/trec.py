"""trec_eval's set measures and its other measures that ir_measures does not name, each computed
exactly as trec_eval 10.0 computes it (its ``m_<name>.c``), vectorised over all queries.

Notation per query: ``ret`` = documents retrieved, ``R`` = relevant documents in the qrels,
``rr`` = relevant retrieved, ``rel@k`` = relevant in the top k; a document is relevant when
judged with grade >= the relevance level (:mod:`metrics.measures`). Values that trec_eval
leaves at its initial 0 (it divides only when the divisor is positive) are 0 here too.

- set measures (the retrieved set, ranks ignored): SetP = rr / ret (``set_P``); SetR = rr / R
  (``set_recall``); SetRelP = rr / min(ret, R) (``set_relative_P``); SetAP = rr^2 / (ret * R)
  (``set_map``); SetF = (x + 1) P R / (x P + R) with P = SetP, R = SetR, x = ``beta``
  (``set_F``, 0 when rr = 0);
- RelP@k = rel@k / min(k, R) (``relative_P``);
- RprecMult@x = rel@c / c with c = (long)(x R + 0.9) (``Rprec_mult``; 0 when c = 0);
- IPrec@x: interpolated precision at recall x (``iprec_at_recall``); IPrec11pt its mean over
  recall levels (``11pt_avg``);
- Utility = a rr + b (ret - rr) + c (R - rr) + d (N + rr - ret - R) (``utility``);
- NumNonrelJudgedRet: judged non-relevant documents retrieved (``num_nonrel_judged_ret``);
- Unj@k = unjudged in the top k / k (``unj``, trec_eval 10.0's ``m_unjudged.c``).

Reference: trec_eval 10.0 (https://github.com/usnistgov/trec_eval), files ``m_set_P.c``,
``m_set_recall.c``, ``m_set_rel_P.c``, ``m_set_map.c``, ``m_set_F.c``, ``m_rel_P.c``,
``m_Rprec_mult.c``, ``m_iprec_at_recall.c``, ``m_11pt_avg.c``, ``m_utility.c``,
``m_num_nonrel_judged_ret.c``, ``m_unjudged.c``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from metrics.measures.ranked import F64, I64, Ranked, Result, _frac, _ratio, _value

__all__ = [
    "DEFAULT_11PT_LEVELS",
    "DEFAULT_UTILITY",
    "IPREC_CUTOFFS",
    "RPREC_MULT_CUTOFFS",
    "iprec",
    "iprec_11pt",
    "num_nonrel_judged_ret",
    "parse_beta",
    "parse_coeffs",
    "parse_levels",
    "relative_precision",
    "rprec_mult",
    "set_average_precision",
    "set_f",
    "set_precision",
    "set_recall",
    "set_relative_precision",
    "unj",
    "utility",
]

# trec_eval's default parameters (m_Rprec_mult.c, m_iprec_at_recall.c, m_11pt_avg.c, m_utility.c)
RPREC_MULT_CUTOFFS = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)
IPREC_CUTOFFS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
DEFAULT_11PT_LEVELS = "0.0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1.0"
DEFAULT_UTILITY = "1,-1,0,0"


def _numbers(text: str) -> list[float]:
    """trec_eval's comma-separated double parameters (get_double_params), as floats."""
    out: list[float] = []
    for part in text.split(","):
        try:
            value = float(part)
        except ValueError:
            raise ValueError(f"{part.strip()!r} is not a number") from None
        if not math.isfinite(value):
            raise ValueError(f"{part.strip()!r} is not a finite number")
        out.append(value)
    return out


def parse_beta(text: str) -> float:
    """``set_F``'s parameter: one finite number."""
    values = _numbers(text)
    if len(values) != 1:
        raise ValueError("set_F takes one number")
    return values[0]


def parse_levels(text: str) -> str:
    """``11pt_avg``'s recall levels: comma-separated numbers, kept as their raw text."""
    _numbers(text)
    return text


def parse_coeffs(text: str) -> str:
    """``utility``'s coefficients: four comma-separated numbers, kept as their raw text."""
    if len(_numbers(text)) != 4:
        raise ValueError("utility takes four numbers a,b,c,d")
    return text


def _f(x: I64) -> F64:
    return x.astype(np.float64)


def _rel_ret(r: Ranked) -> F64:
    return r.rel_sum()


def set_precision(r: Ranked, k: int | None = None) -> Result:
    """SetP = rr / ret, relevant retrieved over retrieved (trec_eval ``set_P``; 0 if ret = 0)."""
    return _frac(_rel_ret(r), _f(r.num_ret))


def set_recall(r: Ranked, k: int | None = None) -> Result:
    """SetR = rr / R (trec_eval ``set_recall``; 0 if R = 0)."""
    return _frac(_rel_ret(r), _f(r.num_rel))


def set_relative_precision(r: Ranked, k: int | None = None) -> Result:
    """SetRelP = rr / min(ret, R), SetP relative to the best a set of that size can reach
    (trec_eval ``set_relative_P``; 0 if ret = 0 or R = 0)."""
    return _frac(_rel_ret(r), _f(np.minimum(r.num_ret, r.num_rel)))


def set_average_precision(r: Ranked, k: int | None = None) -> Result:
    """SetAP = rr^2 / (ret * R) = SetP * SetR, unranked AP (trec_eval ``set_map``; 0 if ret = 0
    or R = 0)."""
    rr = _rel_ret(r)
    return _value(_ratio(rr * rr, _f(r.num_ret) * _f(r.num_rel)))


def set_f(r: Ranked, k: int | None = None, *, beta: float = 1.0) -> Result:
    """SetF = (x + 1) P R / (x P + R), P = SetP, R = SetR, x = ``beta`` (trec_eval ``set_F``;
    0 when rr = 0).

    As in trec_eval, x multiplies P unsquared: this is van Rijsbergen's F_b with b^2 = x
    (``set_F.0.25`` is the usual F_0.5). ``SetF(beta=x)`` is trec_eval's ``set_F.x``, printed
    ``set_F_x``.
    """
    rr = _rel_ret(r)
    p = _ratio(rr, _f(r.num_ret))
    rec = _ratio(rr, _f(r.num_rel))
    x = float(beta)
    num = np.where(rr > 0, (x + 1.0) * p * rec, 0.0)
    return _value(_ratio(num, x * p + rec))


def relative_precision(r: Ranked, k: int | None) -> Result:
    """RelP@k = rel@k / min(k, R): precision at k relative to the best possible at k, i.e.
    P@k up to R and R@k beyond (trec_eval ``relative_P``; 0 if R = 0)."""
    assert k is not None
    return _frac(r.rel_sum(r.rel_top(int(k))), _f(np.minimum(r.num_rel, int(k))))


def rprec_mult(r: Ranked, k: int | float | None) -> Result:
    """RprecMult@x = rel@c / c, precision at rank c = (long)(x R + 0.9), a multiple x of R
    (trec_eval ``Rprec_mult``: it truncates x R + 0.9; 0 when c = 0, e.g. R = 0). Past the
    retrieved documents the missing ones count as non-relevant."""
    assert k is not None
    c = np.trunc(float(k) * _f(r.num_rel) + 0.9).astype(np.int64)
    return _frac(r.rel_sum(r.rel_pos <= c[r.rel_seg]), _f(c))


def _lround(v: F64) -> I64:
    """C's lround (half away from zero) for v >= 0, exactly (v - floor(v) is exact)."""
    fl = np.floor(v)
    out: I64 = np.where(v - fl >= 0.5, fl + 1.0, fl).astype(np.int64)
    return out


def _interpolated(r: Ranked) -> F64:
    """Per relevant row (the j-th relevant, at rank p_j): max over j' >= j of j' / p_j', the
    interpolated precision there (precision peaks at relevant rows)."""
    prec: F64 = r.rel_rank / r.rel_pos
    n = prec.size
    if n == 0:
        return prec
    order = np.argsort(prec, kind="stable")
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n, dtype=np.int64)
    # later queries get smaller keys, so a suffix maximum never crosses into an earlier query
    shift = n * (r.nq - 1 - r.rel_seg)
    key = rank + shift
    suffix = np.maximum.accumulate(key[::-1])[::-1] - shift
    out: F64 = prec[order[suffix]]
    return out


def _iprec_sum(r: Ranked, levels: Sequence[float]) -> F64:
    """Sum over recall ``levels`` of interpolated precision, as m_11pt_avg.c adds them.

    Level x stands for the c = lround(x R)-th relevant document. trec_eval walks the levels
    from the last and the relevant documents from the last: levels with c > rr add nothing;
    then a level whose c is met (1 <= c <= the previous matched c) adds the interpolated
    precision at the c-th relevant; once one is not met (c = 0, or levels out of order) it and
    every earlier level add the interpolated precision at the first relevant (0 if rr = 0).
    For sorted levels this is the sum of each level's own value.
    """
    ip = _interpolated(r)
    rr = np.bincount(r.rel_seg, minlength=r.nq).astype(np.int64)
    first = np.zeros(r.nq + 1, dtype=np.int64)
    np.cumsum(rr, out=first[1:])
    has = rr > 0
    top = np.zeros(r.nq)
    if ip.size:
        top[has] = ip[first[:-1][has]]
    big_r = _f(r.num_rel)
    total = np.zeros(r.nq)
    mode = np.zeros(r.nq, dtype=np.int8)  # 0: skipping levels above rr, 1: matching, 2: done
    last = rr.copy()
    for x in reversed(levels):
        c = _lround(float(x) * big_r)
        mode[(mode == 0) & (c <= rr)] = 1
        match = (mode == 1) & (c >= 1) & (c <= last)
        mode[(mode == 1) & ~match] = 2
        val = np.zeros(r.nq)
        if ip.size:
            idx = first[:-1] + np.clip(c - 1, 0, None)
            val[match] = ip[idx[match]]
        done = mode == 2
        val[done] = top[done]
        total = total + val
        last = np.where(match, c, last)
    return total


def iprec(r: Ranked, k: int | float | None) -> Result:
    """IPrec@x: interpolated precision at recall x, max precision at any rank at or below the
    c-th relevant document, c = lround(x R) (trec_eval 10.0 ``iprec_at_recall``; trec_eval 9
    and pytrec_eval use (long)(x R + 0.9) instead). 0 when c > rr; for c = 0 (x = 0 or R = 0)
    the maximum over all ranks (0 when nothing relevant is retrieved)."""
    assert k is not None
    return _value(_iprec_sum(r, [float(k)]))


def iprec_11pt(r: Ranked, k: int | None = None, *, levels: str = DEFAULT_11PT_LEVELS) -> Result:
    """IPrec11pt: mean of IPrec over the recall ``levels`` (default 0.0, 0.1, ..., 1.0), added
    in trec_eval's order (trec_eval ``11pt_avg``; ``11pt_avg..2,.5,.8`` is the old 3-point
    average, printed ``11pt_avg_.2,.5,.8``). Levels out of increasing order are walked as
    trec_eval walks them (see ``_iprec_sum``)."""
    values = _numbers(levels)
    return _value(_iprec_sum(r, values) / float(len(values)))


def utility(r: Ranked, k: int | None = None, *, coeffs: str = DEFAULT_UTILITY) -> Result:
    """Utility = a rr + b (ret - rr) + c (R - rr) + d (N + rr - ret - R), ``coeffs`` = "a,b,c,d"
    (default "1,-1,0,0"), N = the collection size ``Ranked.num_docs`` (trec_eval -N, default 0),
    summed in that order (trec_eval ``utility``; aggregated as a mean, as trec_eval does).

    Known difference: with ``-c`` trec_eval scores a topic the run lacks on a ranking of one
    document absent from the qrels and then zeroes the value named exactly ``utility``; with
    coefficients given (``utility_2,-1,0,0``) it keeps b + c R + d (N - 1 - R) for that topic,
    where an empty ranking, as here, gives c R + d (N - R).
    """
    a, b, c, d = _numbers(coeffs)
    rr = np.bincount(r.rel_seg, minlength=r.nq).astype(np.int64)
    ret, big_r = r.num_ret, r.num_rel
    rest = (np.int64(r.num_docs) - big_r) - (ret - rr)  # N + rr - ret - R without overflow
    return _value(a * _f(rr) + b * _f(ret - rr) + c * _f(big_r - rr) + d * _f(rest))


def num_nonrel_judged_ret(r: Ranked, k: int | None = None) -> Result:
    """NumNonrelJudgedRet = retrieved documents judged non-relevant (judged, grade < level):
    trec_eval ``num_nonrel_judged_ret`` (summed over queries)."""
    return _value(r.per_query(r.judged & (r.grade < r.level)))


def unj(r: Ranked, k: int | None) -> Result:
    """Unj@k = unjudged documents in the top k / k (trec_eval 10.0 ``unj``, default cutoffs 5,
    10, 20): missing ranks past the retrieved documents count as judged, so the divisor is k
    even when fewer are retrieved. Unjudged = absent from the qrels or with a negative grade.

    Not :func:`metrics.measures.basic.unjudged` (``Unjudged@k``), which divides by min(k,
    retrieved): 15 retrieved, 11 of them unjudged, give Unj@20 = 11/20 but Unjudged@20 = 11/15.
    """
    assert k is not None
    kk = int(k)
    shown = np.minimum(r.num_ret, kk)  # counted from the judged rows, as leave-one-out keeps
    return _frac(_f(shown) - r.per_query(r.judged & r.top(kk)), np.full(r.nq, float(kk)))
