"""Graded-gain measures, each exactly as its reference tool computes it, vectorised over queries.

- nDCG with trec_eval's gain map (``ndcg.1=3,2=9``) or with exponential gains (``exp-log2``:
  gdeval, Burges et al. 2005): :func:`ndcg_gain` (reached through
  :func:`metrics.measures.basic.ndcg`);
- trec_eval 10.0's experimental gain measures ``ndcg_rel`` (:func:`ndcg_rel`), ``Rndcg``
  (:func:`rndcg`), ``G`` (:func:`g_measure`) and ``binG`` (:func:`bin_g`);
- ERR@k (Chapelle et al. 2009) as gdeval computes it (:func:`err`);
- RBP (Moffat & Zobel 2008): ir_measures' ``RBP(p=0.8)``, graded, and ``RBP(p=0.8, rel=1)``,
  binary (:func:`rbp`), trec_eval's ``rbp`` with its gain map (:func:`rbp_trec`) and its
  residual ``rbp_resid`` (:func:`rbp_resid`).

trec_eval's gain map (gain_init.c): ``level=gain`` pairs, comma separated; a relevance level of
the query's qrels (0 .. its highest grade) not in the map has gain = level; documents not judged
(absent from the qrels or with a negative grade) have gain 0. The ideal ranking is every qrels
document with a positive gain, by gain descending (a level-0 document too if the map gives level
0 a positive gain). trec_eval sorts the levels with a comparator that truncates the difference
of two gains to an int, so levels whose gains differ by less than 1 may be ordered wrongly in
its ideal ranking; here the ideal is always sorted by gain (the two agree whenever distinct
gains differ by at least 1, as with integer gains).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import numpy.typing as npt

from metrics.measures.ranked import Ideal, Ranked, Result, _ratio, _seg_cumsum, _seg_of, _value

__all__ = [
    "DCG_KINDS",
    "bin_g",
    "err",
    "g_measure",
    "gain_map",
    "ndcg_gain",
    "ndcg_rel",
    "parse_dcg",
    "parse_gains",
    "parse_max_grade",
    "parse_p",
    "parse_rbp_params",
    "rbp",
    "rbp_params",
    "rbp_resid",
    "rbp_trec",
    "rndcg",
]

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]
GainMap = tuple[tuple[int, float], ...]

DCG_KINDS = ("log2", "exp-log2")
RBP_TREC_P = 0.9  # trec_eval m_rbp.c / m_rbp_resid.c default persistence


# -- parameters ------------------------------------------------------------------------------
def parse_dcg(text: str) -> str:
    """``log2`` (gain = grade, trec_eval) or ``exp-log2`` (gain = 2^grade - 1, gdeval)."""
    if text not in DCG_KINDS:
        raise ValueError(f"must be one of {', '.join(DCG_KINDS)}")
    return text


def _pairs(text: str, allowed: tuple[str, ...] = ()) -> list[tuple[str, float]]:
    """trec_eval's ``name=value,...`` (meas_init.c get_param_pairs), values as numbers."""
    out: list[tuple[str, float]] = []
    for part in text.split(","):
        name, eq, value = part.partition("=")
        name, value = name.strip(), value.strip()
        if not eq or not name:
            raise ValueError(f"{part!r} is not level=gain")
        try:
            number = float(value)
        except ValueError:
            raise ValueError(f"{part!r}: {value!r} is not a number") from None
        if not np.isfinite(number):
            raise ValueError(f"{part!r}: the value must be finite")
        if name not in allowed:
            body = name[1:] if name[:1] in "+-" else name
            if not body.isdigit():
                raise ValueError(f"{part!r}: {name!r} is not a relevance level")
            if int(name) < 0:
                raise ValueError(f"{part!r}: levels are >= 0 (unjudged documents have gain 0)")
        out.append((name, number))
    names = [n if n in allowed else str(int(n)) for n, _ in out]
    if len(set(names)) != len(names):
        raise ValueError("a level is given twice")
    return out


def parse_gains(text: str) -> str:
    """trec_eval's gain map ``level=gain,...`` (``1=3,2=9,4=4.5``), kept as its raw text."""
    if text.strip():
        _pairs(text)
    return text


@lru_cache(maxsize=64)
def gain_map(text: str) -> GainMap:
    """The ``(level, gain)`` pairs of a gain-map text (empty: no map)."""
    if not text.strip():
        return ()
    return tuple((int(n), v) for n, v in _pairs(text))


def parse_max_grade(text: str) -> int:
    """A non-negative integer (ERR's highest grade)."""
    if not text.strip().isdigit():
        raise ValueError("must be an integer >= 0")
    return int(text)


def parse_p(text: str) -> float:
    """RBP's persistence, 0 <= p <= 1."""
    try:
        p = float(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a number") from None
    if not 0.0 <= p <= 1.0:
        raise ValueError("must be between 0 and 1")
    return p


def parse_rbp_params(text: str) -> str:
    """trec_eval's ``rbp`` parameters ``p=0.8,level=gain,...``, kept as their raw text."""
    if text.strip():
        for name, value in _pairs(text, ("p",)):
            if name == "p" and not 0.0 <= value <= 1.0:
                raise ValueError("p must be between 0 and 1")
    return text


@lru_cache(maxsize=64)
def rbp_params(text: str) -> tuple[float, GainMap]:
    """``(p, gain map)`` of trec_eval ``rbp`` parameters (p defaults to 0.9, as in trec_eval)."""
    p, gains = RBP_TREC_P, []
    if text.strip():
        for name, value in _pairs(text, ("p",)):
            if name == "p":
                p = value
            else:
                gains.append((int(name), value))
    return p, tuple(gains)


# -- building blocks -------------------------------------------------------------------------
def _map(grades: I64, gmap: GainMap) -> F64:
    """trec_eval's gain of each (judged) grade: the map's, else the grade itself."""
    out = grades.astype(np.float64)
    for level, gain in gmap:
        out[grades == level] = gain
    return out


def _zero_gain(gmap: GainMap) -> float:
    return dict(gmap).get(0, 0.0)


def _row_gains(r: Ranked, gmap: GainMap, exp: bool = False) -> tuple[I64, F64]:
    """Rows with a non-zero gain (judged rows only), in order, and their gains."""
    rows = np.flatnonzero(r.judged) if _zero_gain(gmap) != 0.0 else r.gain_rows
    g = _map(r.grade[rows], gmap)
    if exp:
        g = np.exp2(g) - 1.0
    keep = g != 0.0
    return rows[keep], g[keep]


def _mapped_ideal(r: Ranked, gmap: GainMap, exp: bool = False) -> Ideal:
    """The ideal ranking's gains under the gain map: every qrels document with a positive gain
    (``r.ideal`` holds the grades >= 1; level-0 documents are counted from ``r.num_nonrel``)."""
    if not gmap and not exp:
        return r.ideal
    grades = r.ideal.gains.astype(np.int64)
    seg = _seg_of(r.ideal.offsets)
    g = _map(grades, gmap)
    zero = _zero_gain(gmap)
    if zero > 0.0:  # the judged grade-0 documents: judged non-relevant minus grades in [1, level)
        below = np.bincount(seg[grades < r.level], minlength=r.nq)
        n0 = np.maximum(r.num_nonrel - below, 0)
        g = np.concatenate((g, np.full(int(n0.sum()), zero)))
        seg = np.concatenate((seg, np.repeat(np.arange(r.nq, dtype=np.int64), n0)))
    if exp:
        g = np.exp2(g) - 1.0
    keep = g > 0.0
    g, seg = g[keep], seg[keep]
    order = np.lexsort((-g, seg))
    off = np.zeros(r.nq + 1, dtype=np.int64)
    np.cumsum(np.bincount(seg, minlength=r.nq), out=off[1:])
    return Ideal(g[order], off)


def _ideal_at(ideal: Ideal, q: I64, j: I64) -> F64:
    """Ideal DCG at rank min(j, ideal length) for the queries ``q`` (0 where that is 0)."""
    n = np.diff(ideal.offsets)[q]
    take = np.minimum(j, n)
    out = np.zeros(q.size)
    has = take > 0
    out[has] = ideal._cum[ideal.offsets[q[has]] + take[has] - 1]
    return out


class _Cum:
    """Per-query cumulative sums of row values (rows in order), read at any rank."""

    def __init__(self, r: Ranked, rows: I64, values: F64) -> None:
        self.width = int(r.pos.max(initial=0)) + 1
        self.key = r.seg[rows] * self.width + r.pos[rows]
        self.cum = np.concatenate(([0.0], np.cumsum(values)))

    def at(self, q: I64, rank: I64) -> F64:
        """Sum over the rows of query q ranked at or above ``rank``."""
        lo = np.searchsorted(self.key, q * self.width, side="left")
        hi = np.searchsorted(self.key, q * self.width + np.minimum(rank, self.width - 1), "right")
        out: F64 = self.cum[hi] - self.cum[lo]
        return out


# -- nDCG with gains -------------------------------------------------------------------------
def ndcg_gain(r: Ranked, k: int | None, *, dcg: str = "log2", gains: str = "") -> Result:
    """nDCG@k = DCG@k / IDCG@k with the discount log2(rank + 1) and the gain of a judged row

    - ``dcg="log2"``: gain = grade, or the gain map's (trec_eval ``ndcg.1=3,2=9``, m_ndcg.c);
    - ``dcg="exp-log2"``: gain = 2^grade - 1 (gdeval, Burges et al. 2005; ranx ``ndcg_burges``),
      2^(mapped gain) - 1 with a gain map.

    The ideal ranking holds every qrels document with a positive gain, by gain descending.
    """
    gmap = gain_map(gains)
    exp = dcg == "exp-log2"
    rows, g = _row_gains(r, gmap, exp)
    if k is not None:
        top = r.pos[rows] <= k
        rows, g = rows[top], g[top]
    num = np.bincount(r.seg[rows], weights=g / np.log2(r.pos[rows] + 1.0), minlength=r.nq)
    return _value(_ratio(num.astype(np.float64), _mapped_ideal(r, gmap, exp).idcg(k)))


def ndcg_rel(r: Ranked, k: int | None = None, *, gains: str = "") -> Result:
    """trec_eval's ``ndcg_rel`` (m_ndcg_rel.c): nDCG averaged over the positive-gain documents.

    With P = qrels documents of positive gain: (1/P) * [sum over retrieved rows of positive gain
    at rank i of DCG@i / IDCG@min(i, P) + (P - those rows) * DCG / IDCG@P], DCG the whole
    ranking's; 0 when that sum is not positive. No cutoff.
    """
    gmap = gain_map(gains)
    rows, g = _row_gains(r, gmap)
    ideal = _mapped_ideal(r, gmap)
    big_p = np.diff(ideal.offsets)
    disc = g / np.log2(r.pos[rows] + 1.0)
    seg = r.seg[rows]
    cum = np.zeros(0) if rows.size == 0 else _seg_cumsum(disc, _offsets(seg, r.nq), seg)
    pos = g > 0.0
    at = _ideal_at(ideal, seg[pos], r.pos[rows][pos])
    part = np.bincount(seg[pos], weights=_ratio(cum[pos], at), minlength=r.nq)
    total = np.bincount(seg, weights=disc, minlength=r.nq).astype(np.float64)
    idcg = ideal.idcg(None)
    missing = big_p - np.bincount(seg[pos], minlength=r.nq)
    s = part + missing * _ratio(total, idcg)
    return _value(np.where(s > 0.0, _ratio(s, big_p.astype(np.float64)), 0.0))


def _offsets(seg: I64, nq: int) -> I64:
    off = np.zeros(nq + 1, dtype=np.int64)
    np.cumsum(np.bincount(seg, minlength=nq), out=off[1:])
    return off


def rndcg(r: Ranked, k: int | None = None, *, gains: str = "") -> Result:
    """trec_eval's ``Rndcg`` (m_Rndcg.c): nDCG averaged at the ideal ranking's gain changes.

    With n retrieved, P qrels documents of positive gain and ideal gains I_1 >= ... >= I_P: the
    mean over b in {1..P: b = P or I_b != I_(b+1)} of DCG@min(b, n) / IDCG@b, plus, when
    n > P + 1, the term DCG@n / IDCG@P (trec_eval's loop adds it only then). 0 for a query with
    no relevant document at the relevance level (trec_eval returns early); 0 also when P = 0
    (trec_eval divides 0 by 0 there). No cutoff.
    """
    gmap = gain_map(gains)
    rows, g = _row_gains(r, gmap)
    ideal = _mapped_ideal(r, gmap)
    big_p = np.diff(ideal.offsets)
    n = r.num_ret
    cum = _Cum(r, rows, g / np.log2(r.pos[rows] + 1.0))
    iseg = _seg_of(ideal.offsets)
    ig = ideal.gains
    last = np.ones(ig.size, dtype=bool)
    if ig.size:
        last[:-1] = (iseg[1:] != iseg[:-1]) | (ig[1:] != ig[:-1])
    bq = iseg[last]
    b = (np.flatnonzero(last) - ideal.offsets[bq] + 1).astype(np.int64)
    terms = _ratio(cum.at(bq, np.minimum(b, n[bq])), ideal._cum[last])
    s = np.bincount(bq, weights=terms, minlength=r.nq).astype(np.float64)
    count = np.bincount(bq, minlength=r.nq).astype(np.float64)
    qs = np.arange(r.nq, dtype=np.int64)
    extra = (n > big_p + 1) & (big_p > 0)
    s[extra] += _ratio(cum.at(qs[extra], n[extra]), ideal.idcg(None)[extra])
    count[extra] += 1.0
    out = _ratio(s, count)
    out[r.num_rel == 0] = 0.0
    return _value(out)


def g_measure(r: Ranked, k: int | None = None, *, gains: str = "") -> Result:
    """trec_eval's ``G`` (m_G.c): sum over rows at rank i of gain_i / log2(2 + C_i - S_i),
    divided by the sum of the positive ideal gains.

    S_i = the ranking's summed gain down to rank i; C_i = sum over ranks t <= i of
    max(I_t, 1), I_t the ideal gain at rank t (0 past the ideal ranking). No cutoff.
    """
    gmap = gain_map(gains)
    rows, g = _row_gains(r, gmap)
    ideal = _mapped_ideal(r, gmap)
    big_p = np.diff(ideal.offsets)
    seg = r.seg[rows]
    pos = r.pos[rows]
    sums = np.zeros(0) if rows.size == 0 else _seg_cumsum(g, _offsets(seg, r.nq), seg)
    iseg = _seg_of(ideal.offsets)
    ioff = ideal.offsets
    floor = _seg_cumsum(np.maximum(ideal.gains, 1.0), ioff, iseg) if ideal.gains.size else None
    take = np.minimum(pos, big_p[seg])
    cost = (pos - take).astype(np.float64)
    has = take > 0
    if floor is not None:
        cost[has] += floor[ioff[seg[has]] + take[has] - 1]
    num = np.bincount(seg, weights=g / np.log2(2.0 + cost - sums), minlength=r.nq)
    total = np.bincount(iseg, weights=ideal.gains, minlength=r.nq)
    return _value(_ratio(num.astype(np.float64), total.astype(np.float64)))


def bin_g(r: Ranked, k: int | None = None) -> Result:
    """trec_eval's ``binG`` (m_binG.c): (1/R) * sum over the relevant rows of
    1 / log2(2 + rows not relevant above it) (unjudged rows count as not relevant). No cutoff."""
    term = 1.0 / np.log2(2.0 + r.rel_pos - r.rel_rank)
    return _value(_ratio(r.rel_sum(weights=term), r.num_rel.astype(np.float64)))


# -- ERR -------------------------------------------------------------------------------------
def err(r: Ranked, k: int | None, *, max_grade: int = 4) -> Result:
    """ERR@k (Chapelle et al. 2009) as gdeval.pl computes it: sum over ranks i <= k of
    R_i / i * prod_{j < i} (1 - R_j), R_i = (2^g_i - 1) / 2^max_grade.

    g_i = the judged grade (0 for unjudged rows and negative grades); gdeval's maximum grade is 4
    (it refuses qrels with a higher grade; here a higher grade counts as ``max_grade``).
    """
    rows = r.gain_rows
    if k is not None:
        rows = rows[r.pos[rows] <= k]
    grade = np.minimum(r.grade[rows], max_grade).astype(np.float64)
    stop = (np.exp2(grade) - 1.0) / 2.0**max_grade
    seg = r.seg[rows]
    logs = np.log1p(-stop)  # stop < 1: grade <= max_grade
    if rows.size:
        before = _seg_cumsum(logs, _offsets(seg, r.nq), seg) - logs  # exclusive
        decay = np.exp(before)
    else:
        decay = np.zeros(0)
    w = stop * decay / r.pos[rows]
    return _value(np.bincount(seg, weights=w, minlength=r.nq).astype(np.float64))


# -- RBP -------------------------------------------------------------------------------------
def rbp(r: Ranked, k: int | None, *, p: float = 0.8, binary: bool = False) -> Result:
    """RBP@k = (1 - p) * sum over rows at rank i <= k of gain_i p^(i - 1) (Moffat & Zobel 2008),
    in ir_measures' two forms: ``RBP(p=0.8)`` graded, gain = the grade of a judged row (0 below
    1), whatever the relevance level (its trectools provider, ranx); ``RBP(p=0.8, rel=2)``
    (``binary``, which the registry sets when ``rel=`` is given) gain 1 for a grade >= rel, else
    0 (its cwl_eval provider)."""
    if binary:
        top = r.rel_top(k)
        return _value((1.0 - p) * r.rel_sum(top, np.power(p, r.rel_pos - 1.0)))
    rows = r.gain_rows
    if k is not None:
        rows = rows[r.pos[rows] <= k]
    w = r.grade[rows] * np.power(p, r.pos[rows] - 1.0)
    total = np.bincount(r.seg[rows], weights=w, minlength=r.nq).astype(np.float64)
    return _value((1.0 - p) * total)


def _query_max_grade(r: Ranked) -> I64:
    """Each query's highest qrels grade (0 when none is >= 1)."""
    counts = np.diff(r.ideal.offsets)
    out = np.zeros(r.nq, dtype=np.int64)
    has = counts > 0
    out[has] = r.ideal.gains[r.ideal.offsets[:-1][has]].astype(np.int64)
    return out


def rbp_trec(r: Ranked, k: int | None = None, *, params: str = "") -> Result:
    """trec_eval 10.0's ``rbp`` (m_rbp.c): (1 - p) * sum over rows at rank i of gain_i p^(i-1).

    ``params``: trec_eval's ``p=0.8,level=gain,...`` (p defaults to 0.9). Gains are trec_eval's
    (the gain map, else the grade); when a query's gains (levels 0 .. its highest grade, and the
    map's) go below 0 or above 1 the judged rows' gains become (gain - lo) / (hi - lo), lo =
    min(0, gains), hi = max(0, gains) (m_rbp.c leaves lo and hi uninitialised; the binary
    behaves as if they started at 0). Unjudged rows have gain 0. No cutoff.
    """
    p, gmap = rbp_params(params)
    rows = np.flatnonzero(r.judged)
    g = _map(r.grade[rows], gmap)
    top = _query_max_grade(r)
    mapped = dict(gmap)
    vals = list(mapped.values())
    lo = np.full(r.nq, min([0.0, *vals]))  # the default gains (levels >= 0) are >= 0
    hi = np.full(r.nq, max([0.0, *vals]))
    last = top.copy()  # the highest level <= the query's top grade with the default gain
    for _ in range(len(mapped)):
        hit = np.isin(last, list(mapped))
        if not hit.any():
            break
        last[hit] -= 1
    hi = np.maximum(hi, last.astype(np.float64))
    seg = r.seg[rows]
    scale = (lo < 0.0) | (hi > 1.0)
    sc = scale[seg]
    g[sc] = (g[sc] - lo[seg][sc]) / (hi[seg][sc] - lo[seg][sc])
    w = g * np.power(p, r.pos[rows] - 1.0)
    return _value((1.0 - p) * np.bincount(seg, weights=w, minlength=r.nq).astype(np.float64))


def rbp_resid(r: Ranked, k: int | None = None, *, params: str = "") -> Result:
    """trec_eval 10.0's ``rbp_resid`` (m_rbp_resid.c): p^n + (1 - p) * sum over unjudged rows
    at rank i of p^(i - 1), n = retrieved (0 when no row is unjudged); ``params`` as for ``rbp``
    (only p is read). Computed as 1 - (1 - p) * sum over judged rows of p^(i - 1), the same sum
    (sum_{i <= n} p^(i-1) = (1 - p^n) / (1 - p)). No cutoff.
    """
    p, _ = rbp_params(params)
    rows = np.flatnonzero(r.judged)
    seg = r.seg[rows]
    s = np.bincount(seg, weights=np.power(p, r.pos[rows] - 1.0), minlength=r.nq)
    unjudged = r.num_ret - np.bincount(seg, minlength=r.nq)
    return _value(np.where(unjudged > 0, 1.0 - (1.0 - p) * s, 0.0))
