"""Lipani's corrections (2015, 2016): the ``p∘r`` runs (a pooled run p re-ranked by the run r) and
the precision / anti-precision changes they give, per topic and overall."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

from metrics.bias.estimator_report import _t_half, cell_means
from metrics.measures.names import Measure

if TYPE_CHECKING:
    from metrics.bias.estimator_report import F64, I64, Bool
    from metrics.bias.leaveout import LeaveOneOut


class _Topic:
    """One topic's rankings as integer document ids, for building ``p∘r`` of many pairs.

    ``ids[i, j]``: the document at rank j + 1 of run i (-1 past its end); ``rank[i, u]``: the rank
    of document u in run i (0: not retrieved); ``entry[u]``: its judgment in the analysed qrels
    when that is in the full pool, else -1; ``tie[u]``: larger for a docid later in byte order
    (only when some run is long enough for two keys x to tie); ``kind[g, u]``: bit 0 when u is
    relevant and bit 1 when it is judged non-relevant in the pool without unit g (row ``nu``:
    the full pool).
    """

    def __init__(
        self, ids: I64, ndocs: int, entry: I64, tie: I64 | None, kind: npt.NDArray[np.uint8]
    ) -> None:
        self.ids = ids
        nr = ids.shape[0]
        self.length = (ids >= 0).sum(axis=1)
        rank = np.zeros((nr, ndocs + 1), dtype=np.int32)  # column ndocs: padding (-1 ids)
        r_i, j = np.nonzero(ids >= 0)
        rank[r_i, ids[r_i, j]] = j + 1
        self.rank = rank
        self.entry = np.append(entry, -1)
        self.tie = tie if tie is None else np.append(tie, -1)
        self.kind = np.pad(kind, ((0, 0), (0, 1)))
        self.pad = ndocs

    def counts(self, pp: I64, rr: I64, n: int, kinds: I64) -> tuple[I64, I64]:
        """For each pair (pp[i], rr[i]): how many documents of each kind are in the top n of
        p∘r, for ``kinds`` (per pair) 0 and 1 of :attr:`kind` ((pairs, 2) counts: the caller's
        two kinds, e.g. relevant and judged non-relevant in that pair's qrels), as two arrays.

        A pair whose p has at most n documents keeps them all. The others are resolved with
        candidate windows (:meth:`_window`) w = n, 2n, 4n, ... until at least n candidates
        provably precede every other document, or w covers both runs (then every document of p
        is a candidate): exact at every step. P@n needs the set of the top n, not its order.
        """
        out = np.zeros((pp.size, 2), dtype=np.int64)
        small = self.length[pp] <= n
        if small.any():
            docs = self.ids[pp[small], :n]
            docs = np.where(docs >= 0, docs, self.pad)
            out[small] = self._kinds(docs, np.ones(docs.shape, dtype=bool), kinds[small])
        todo = np.flatnonzero(~small)
        w = n
        width = self.ids.shape[1]
        while todo.size:
            done, docs, sel = self._window(pp[todo], rr[todo], n, w)
            out[todo[done]] = self._kinds(docs, sel, kinds[todo[done]])
            todo = todo[~done]
            w = min(2 * w, width) if w < width else w
        return out[:, 0], out[:, 1]

    def _kinds(self, docs: I64, sel: Bool, kinds: I64) -> I64:
        """Per row: selected documents of kind 0 and of kind 1 (``self.kind[kinds[row], doc]``
        is a code: bit 0 kind 0, bit 1 kind 1)."""
        code = self.kind[kinds[:, None], docs] * sel
        return np.stack(((code & 1).sum(axis=1), (code >> 1).sum(axis=1)), axis=1)

    def _window(self, pp: I64, rr: I64, n: int, w: int) -> tuple[Bool, I64, Bool]:
        """Pairs resolved with window ``w``; their candidate documents and which are in p∘r's
        top n.

        Candidates: r's top w documents that p retrieved (x = r's rank + fix < w + 1 whenever
        the fix is below 1, i.e. p's rank is below 9999) and p's top w documents that r did not
        retrieve (x = p's rank + 1e-4 <= w + 1e-4). Every other document of p has x >= w + 1,
        so when at least n candidates have x < w + 1 the top n of p∘r are among them; once w
        covers both runs entirely every document of p is a candidate.
        """
        pad = self.pad
        ida = self.ids[rr, :w]
        ida = np.where(ida >= 0, ida, pad)
        idb = self.ids[pp, :w]
        idb = np.where(idb >= 0, idb, pad)
        rp = self.rank[pp[:, None], ida]  # p's rank of r's documents (0: not retrieved, pad)
        ina = rp > 0
        inb = self.rank[rr[:, None], idb] == 0
        inb &= idb != pad
        exhausted = w >= np.maximum(self.length[pp], self.length[rr])
        if self.tie is None:  # every fix is below 1: the candidates are all within the window
            count = ina.sum(axis=1) + inb.sum(axis=1)
            done = exhausted | (count >= n)
            ida, idb, rp, ina, inb, count = (
                ida[done],
                idb[done],
                rp[done],
                ina[done],
                inb[done],
                count[done],
            )
            docs = np.concatenate((ida, idb), axis=1)
            sel = np.concatenate((ina, inb), axis=1)
            over = np.flatnonzero(count > n)  # more candidates than n: keep the n smallest x
            if over.size:
                x = self._keys(rp[over], inb[over])
                kth = np.partition(x, n - 1, axis=1)[:, n - 1]
                sel[over] = x <= kth[:, None]  # keys are distinct (ranks below 9999)
            return done, docs, sel
        x = self._keys(rp, inb)
        limit = np.where(exhausted, np.inf, w + 1.0)
        count = (x < limit[:, None]).sum(axis=1)
        done = exhausted | (count >= n)
        x = np.where(x < limit[:, None], x, np.inf)[done]
        docs = np.concatenate((ida[done], idb[done]), axis=1)
        # ties in x are possible only with ranks >= 9999: docid descending breaks them
        order = np.lexsort((-self.tie[docs], x), axis=1)[:, :n]
        sel = np.zeros(x.shape, dtype=bool)
        rows = np.arange(x.shape[0])[:, None]
        sel[rows, order] = np.isfinite(x[rows, order])
        return done, docs, sel

    @staticmethod
    def _keys(rp: npt.NDArray[np.int32], inb: Bool) -> F64:
        """The keys x of the candidates: r's top documents (p's ranks ``rp``, 0 = absent) then
        p's top documents (``inb``: absent from r); inf for the non-candidates."""
        k = rp.shape[1]
        j = np.arange(1, k + 1, dtype=np.float64)
        rpf = rp.astype(np.float64)
        step = j - rpf
        fix = np.where(step == 0, 1e-4, np.where(step > 0, (rpf + 1.0) / 10000.0, rpf / 1e8))
        xa = np.where(rp > 0, j + fix, np.inf)
        xb = np.where(inb, j + 1e-4, np.inf)
        out: F64 = np.concatenate((xa, xb), axis=1)
        return out


class Prepared(Protocol):
    """What Lipani's corrections read of a prepared analysis
    (:class:`metrics.bias.nested.EstimatorAnalysis`): the leave-out analysis, the number of
    units, and their caches."""

    loo: LeaveOneOut
    nu: int
    _cells_by_topic: tuple[I64, I64] | None
    _topic_cache: dict[int, _Topic]
    _lipani_cache: dict[int, tuple[F64, F64, Bool]]


def topic_documents(ea: Prepared, t: int) -> _Topic:
    """Document ids of topic ``t`` over every run (hash-keyed, confirmed on the bytes)."""
    if t in ea._topic_cache:
        return ea._topic_cache[t]
    qid = ea.loo.topics[t]
    hashes: list[npt.NDArray[np.uint64]] = []
    docids: list[npt.NDArray[np.bytes_]] = []
    lengths = np.zeros(len(ea.loo.runs), dtype=np.int64)
    for i, run in enumerate(ea.loo.runs):
        qi = run._index.get(qid)
        if qi is None:
            continue
        rows = run.order[run.offsets[qi] : run.offsets[qi + 1]]
        hashes.append(run.hashes[rows])
        docids.append(run.docids[rows])
        lengths[i] = rows.size
    width = int(lengths.max()) if lengths.size else 0
    ids = np.full((len(ea.loo.runs), width), -1, dtype=np.int64)
    if not hashes:
        empty = np.zeros((ea.nu + 1, 0), dtype=np.uint8)
        topic = _Topic(ids, 0, np.zeros(0, dtype=np.int64), None, empty)
        ea._topic_cache[t] = topic
        return topic
    h = np.concatenate(hashes)
    d = np.concatenate(docids)
    _, first, inv = np.unique(h, return_index=True, return_inverse=True)
    if not np.array_equal(d, d[first][inv]):  # two docids share a hash: key on the bytes
        _, first, inv = np.unique(d, return_index=True, return_inverse=True)
    inv = inv.reshape(-1)
    ndocs = first.size
    r_i = np.repeat(np.arange(len(ea.loo.runs)), lengths)
    start = np.zeros(len(ea.loo.runs) + 1, dtype=np.int64)
    np.cumsum(lengths, out=start[1:])
    j = np.arange(h.size) - start[r_i]
    ids[r_i, j] = inv
    entry = np.full(ndocs, -1, dtype=np.int64)
    mine = cells_of(ea, t)
    run_of = ea.loo.cell[mine] // len(ea.loo.topics)
    entry[ids[run_of, ea.loo.pos[mine] - 1]] = ea.loo.entry[mine]
    tie: I64 | None = None
    if width >= 9999:  # x can tie only then: rank the docids in byte order
        order = np.argsort(d[first], kind="stable")
        tie = np.empty(ndocs, dtype=np.int64)
        tie[order] = np.arange(ndocs)
    topic = _Topic(ids, ndocs, entry, tie, kinds_of(ea, entry))
    ea._topic_cache[t] = topic
    return topic


def cells_of(ea: Prepared, t: int) -> I64:
    """Indices of topic ``t``'s retrieved-and-judged cells, in their stored order. Grouped
    once for every topic: selecting them with a mask over all cells per topic made the
    estimators' cost grow with the square of the topics."""
    if ea._cells_by_topic is None:
        topic_of = ea.loo.cell % len(ea.loo.topics)
        order = np.argsort(topic_of, kind="stable")
        bounds = np.searchsorted(topic_of[order], np.arange(len(ea.loo.topics) + 1))
        ea._cells_by_topic = (order, bounds)
    order, bounds = ea._cells_by_topic
    return order[bounds[t] : bounds[t + 1]]


def kinds_of(ea: Prepared, entry: I64) -> npt.NDArray[np.uint8]:
    """``_Topic.kind`` for documents with judgments ``entry`` (-1: none)."""
    e = np.where(entry >= 0, entry, 0)
    judged = entry >= 0
    g = ea.loo.e_grade[e]
    code = (judged & (g >= ea.loo.level)) | ((judged & (g >= 0) & (g < ea.loo.level)) << 1)
    owner = np.where(judged, ea.loo.e_owner[e], -1)
    kind = np.repeat(code.astype(np.uint8)[None, :], ea.nu + 1, axis=0)
    mine = owner >= 0
    kind[owner[mine], np.flatnonzero(mine)] = 0  # gone from the pool without its owner
    return kind


def top_counts(ea: Prepared, n: int) -> tuple[I64, I64]:
    """Relevant and judged non-relevant judgments in each run's top n, per (run, topic,
    owner unit) with one more owner slot for judgments no single unit owns."""
    nt, nr, nu = len(ea.loo.topics), len(ea.loo.runs), ea.nu
    sel = ea.loo.pos <= n
    own = ea.loo.e_owner[ea.loo.entry[sel]]
    own = np.where(own >= 0, own, nu)
    code = ea.loo.cell[sel] * (nu + 1) + own
    g = ea.loo.row_grade[sel]
    size = nr * nt * (nu + 1)
    rel = np.bincount(code[g >= ea.loo.level], minlength=size).reshape(nr, nt, nu + 1)
    non = np.bincount(code[(g >= 0) & (g < ea.loo.level)], minlength=size)
    return rel, non.reshape(nr, nt, nu + 1)


def lipani_deltas(ea: Prepared, n: int) -> tuple[F64, F64, Bool]:
    """dS and dA per (pooled run p, run r, topic) for P@n, each r scored on the pool without
    its unit; and which pairs are in r's pool (p pooled, not of r's unit)."""
    if n in ea._lipani_cache:
        return ea._lipani_cache[n]
    nt, nr = len(ea.loo.topics), len(ea.loo.runs)
    pooled_idx = np.flatnonzero(ea.loo.unit >= 0)
    npool = pooled_idx.size
    ru = ea.loo.unit
    in_pool = ru[pooled_idx][:, None] != ru[None, :]  # (pooled p, r)
    pp_all = np.repeat(pooled_idx, nr)
    rr_all = np.tile(np.arange(nr), npool)
    mask = in_pool.reshape(-1)
    pp, rr = pp_all[mask], rr_all[mask]
    gr = ru[rr]  # the unit left out for r (-1: r not pooled, nothing left out)
    rel_c, non_c = top_counts(ea, n)
    ds = np.zeros((npool, nr, nt))
    da = np.zeros((npool, nr, nt))
    pi_of = np.full(nr, -1, dtype=np.int64)
    pi_of[pooled_idx] = np.arange(npool)
    gslot = np.where(gr >= 0, gr, ea.nu)
    own_rel = np.where(gr >= 0, rel_c[pp, :, gslot].T, 0)  # (topics, pairs)
    own_non = np.where(gr >= 0, non_c[pp, :, gslot].T, 0)
    tot_rel = rel_c.sum(axis=2)
    tot_non = non_c.sum(axis=2)
    for t in range(nt):
        rel_pr, non_pr = topic_documents(ea, t).counts(pp, rr, n, gslot)
        # p's own top n on the same qrels (r's unit removed)
        rel_p = tot_rel[pp, t] - own_rel[t]
        non_p = tot_non[pp, t] - own_non[t]
        ds[pi_of[pp], rr, t] = (rel_pr - rel_p) / n
        da[pi_of[pp], rr, t] = (non_pr - non_p) / n
    out = (ds, da, in_pool)
    ea._lipani_cache[n] = out
    return out


def own_precision(ea: Prepared, n: int) -> tuple[F64, F64]:
    """P@n and anti-P@n per (run, topic), each run on the pool without its own unit (the
    full pool for runs not pooled)."""
    rel_c, non_c = top_counts(ea, n)
    nr = len(ea.loo.runs)
    u = ea.loo.unit
    rel = rel_c.sum(axis=2).astype(np.float64)
    non = non_c.sum(axis=2).astype(np.float64)
    has = u >= 0
    idx = np.flatnonzero(has)
    rel[idx] -= rel_c[idx, :, u[idx]]
    non[idx] -= non_c[idx, :, u[idx]]
    assert rel.shape[0] == nr
    return rel / n, non / n


def lipani_topic(ea: Prepared, n: int) -> tuple[F64, F64, F64, F64]:
    """Per (run, topic): P@n s, the correction, and the interval ends of the correction.

    correction = k * max(DK, 0) if DS a - DA s > 0 else 0, DS, DA, DK the means over r's
    pool of the per-topic changes (lipani2016's per-topic form)."""
    ds, da, in_pool = lipani_deltas(ea, n)
    s, a = own_precision(ea, n)
    w = in_pool[:, :, None].astype(np.float64)
    cnt = in_pool.sum(axis=0).astype(np.float64)[:, None]  # (r, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mds = (ds * w).sum(axis=0) / cnt
        mda = (da * w).sum(axis=0) / cnt
        dk = -ds - da
        mdk = -mds - mda
        var = (((dk - mdk[None]) ** 2) * w).sum(axis=0) / (cnt - 1.0)
    k = 1.0 - s - a
    lam = mds * a - mda * s
    corr = np.where(lam > 0, k * np.maximum(mdk, 0.0), 0.0)
    half = _t_half(
        np.sqrt(np.maximum(np.nan_to_num(var), 0.0)),
        np.repeat(cnt, ds.shape[2], 1).astype(np.int64),
    )
    lo = np.where(lam > 0, k * np.maximum(mdk - half, 0.0), 0.0)
    hi = np.where(lam > 0, k * np.maximum(mdk + half, 0.0), 0.0)
    corr = np.where(cnt > 0, corr, np.nan)
    return s, corr, lo, hi


def lipani2015(ea: Prepared, n: int, counted: Bool) -> tuple[F64, F64, F64]:
    """Aggregate estimate per run (lipani2015), with its interval ends."""
    ds, da, in_pool = lipani_deltas(ea, n)
    s_t, a_t = own_precision(ea, n)
    c = counted.astype(np.float64)
    nt_r = c.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        s = (s_t * c).sum(axis=1) / nt_r
        a = (a_t * c).sum(axis=1) / nt_r
        dsp = (ds * c[None]).sum(axis=2) / nt_r[None]  # (p, r): over r's topics
        dap = (da * c[None]).sum(axis=2) / nt_r[None]
        w = in_pool.astype(np.float64)
        cnt = w.sum(axis=0)
        mds = np.nansum(dsp * w, axis=0) / cnt
        mda = np.nansum(dap * w, axis=0) / cnt
        mdk = -mds - mda
        dk = -dsp - dap
        var = np.nansum(((dk - mdk[None]) ** 2) * w, axis=0) / (cnt - 1.0)
    k = 1.0 - s - a
    lam = mds * a - mda * s
    pos = lam > 0
    est = s + np.where(pos, k * np.maximum(mdk, 0.0), 0.0)
    half = _t_half(np.sqrt(np.maximum(np.nan_to_num(var), 0.0)), cnt.astype(np.int64))
    lo = s + np.where(pos, k * np.maximum(mdk - half, 0.0), 0.0)
    hi = s + np.where(pos, k * np.maximum(mdk + half, 0.0), 0.0)
    bad = (cnt == 0) | (nt_r == 0)
    est[bad] = np.nan
    return est, lo, hi


def lipani2016(ea: Prepared, m: Measure, counted: Bool, rel_count: I64) -> tuple[F64, F64, F64]:
    """Per-topic estimate averaged (lipani2016), with interval ends."""
    assert m.cutoff is not None
    n = int(m.cutoff)
    s, corr, lo, hi = lipani_topic(ea, n)
    if m.family == "P":
        per, plo, phi = s + corr, s + lo, s + hi
    else:
        d = ea.loo.depth
        _, cd, lod, hid = lipani_topic(ea, d)
        big_r = rel_count.astype(np.float64)
        extra = max(d - n, 0)

        def rec(c_n: F64, c_d: F64) -> F64:
            num = n * s + n * c_n
            den = big_r + n * c_n + extra * c_d
            out = np.zeros(num.shape)
            np.divide(num, den, out=out, where=(big_r > 0) & (den > 0))
            return np.where(np.isnan(c_n), np.nan, out)

        per, plo, phi = rec(corr, cd), rec(lo, lod), rec(hi, hid)
    return cell_means(per, counted), cell_means(plo, counted), cell_means(phi, counted)
