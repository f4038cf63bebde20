"""Nested leave-outs over a prepared leave-out analysis (:class:`EstimatorAnalysis`): every run
scored on the pool without a unit and, nested, without its own unit too (Webber & Park's
deltas), from per-judgment owners and contributor pairs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from metrics.bias.estimator_report import ALL, FAMILIES, _Scenario
from metrics.bias.leaveout import LeaveOneOut, _SparseRanked
from metrics.bias.lipani import topic_documents
from metrics.bias.validation import _Harness
from metrics.io import Qrels, Run
from metrics.measures.basic import optimistic
from metrics.measures.names import Measure, parse_measure
from metrics.measures.ranked import Ideal, Ranked
from metrics.measures.registry import compute

if TYPE_CHECKING:
    from metrics.bias.estimator_report import F64, I64, Bool, EstimatorReport
    from metrics.bias.leaveout import LeaveOut
    from metrics.bias.lipani import _Topic


__all__ = [
    "EstimatorAnalysis",
]


class EstimatorAnalysis:
    """Nested leave-outs and ``p∘r`` runs over a prepared leave-out analysis.

    Prepared once for a set of runs (pool, units, sparse judged rows: :attr:`loo`, built from the
    same arguments as :class:`~metrics.bias.leaveout.LeaveOneOut`); :meth:`report` per measure.
    The estimators read the leave-out analysis through its public state and add their own
    (contributor pairs, per-topic documents, the Lipani corrections).
    """

    def __init__(
        self, qrels: Qrels, runs: Mapping[str, Run], leave: LeaveOut | None = None
    ) -> None:
        self.loo = LeaveOneOut(qrels, runs, leave)
        self._cells_by_topic: tuple[I64, I64] | None = None
        self._contributor_pairs()
        self._topic_cache: dict[int, _Topic] = {}
        self._lipani_cache: dict[int, tuple[F64, F64, Bool]] = {}

    # -- contributor pairs -------------------------------------------------------------------
    def _contributor_pairs(self) -> None:
        """The two units of every judgment contributed by exactly two, and per-topic counts."""
        nt, ne = len(self.loo.topics), int(self.loo.e_row.size)
        nu = max(len(self.loo.unit_names), 1)
        self.nu = nu
        unit_row = self.loo.unit[self.loo.cell // nt]
        top = (self.loo.pos <= self.loo.depth) & (unit_row >= 0)
        code = np.unique(self.loo.entry[top] * nu + unit_row[top])
        ent, un = code // nu, code % nu
        ncontrib = np.bincount(ent, minlength=ne)
        two = ncontrib[ent] == 2
        e2, u2 = ent[two], un[two]  # sorted by (entry, unit): lower unit first
        lo = np.full(ne, -1, dtype=np.int64)
        hi = np.full(ne, -1, dtype=np.int64)
        lo[e2[0::2]] = u2[0::2]
        hi[e2[1::2]] = u2[1::2]
        self.e_lo, self.e_hi = lo, hi
        self.row_lo, self.row_hi = lo[self.loo.entry], hi[self.loo.entry]
        g = self.loo.e_grade
        pooled = self.loo.e_pooled
        has = lo >= 0
        cell = (lo[has] * nu + hi[has]) * nt + self.loo.e_topic[has]

        def by_pair(mask: Bool) -> I64:
            c = np.bincount(cell[mask[has]], minlength=nu * nu * nt).reshape(nu, nu, nt)
            out: I64 = c + c.transpose(1, 0, 2)
            return out

        self.pair_rel = by_pair(pooled & (g >= self.loo.level))
        self.pair_nonrel = by_pair(pooled & (g >= 0) & (g < self.loo.level))
        self.pair_found = by_pair(pooled)
        gi = np.flatnonzero(pooled & (g >= 1))
        gi = gi[np.lexsort((-g[gi], self.loo.e_topic[gi]))]  # the order of LeaveOneOut's ideal docs
        self._ideal_lo, self._ideal_hi = lo[gi], hi[gi]

    # -- scenarios -----------------------------------------------------------------------------
    def _scenario(self, g: int, nested: bool, ideal: bool = True) -> _Scenario:
        """Every run scored on the pool without unit ``g`` (-1: none) and, when ``nested``,
        also without its own unit: judgments whose contributors all lie in {g, unit(run)}.
        ``ideal=False`` skips the ideal gains (only nDCG reads them)."""
        nr = len(self.loo.runs)
        nt = len(self.loo.topics)
        runit_row = self.loo.unit[self.loo.cell // nt]
        ro = self.loo.e_owner[self.loo.entry]
        removed = (ro >= 0) & (ro == g)
        if nested:
            removed |= (ro >= 0) & (ro == runit_row)
            if g >= 0:
                lo, hi = self.row_lo, self.row_hi
                removed |= (lo >= 0) & (
                    ((lo == g) & (hi == runit_row)) | ((hi == g) & (lo == runit_row))
                )
        rel = np.tile(self.loo.rel_t, (nr, 1))
        nonrel = np.tile(self.loo.nonrel_t, (nr, 1))
        found = np.tile(self.loo.found_t, (nr, 1))
        if g >= 0:
            rel -= self.loo.removed_rel[g]
            nonrel -= self.loo.removed_nonrel[g]
            found -= self.loo.removed_found[g]
        _, _, owner = self.loo.ideal_docs
        ideal_removed: Bool | None = None
        if g >= 0 and ideal:
            ideal_removed = np.broadcast_to(owner[None, :] == g, (nr, owner.size)).copy()
        if nested:
            h = self.loo.unit
            own = (h >= 0) & (h != g)
            rel[own] -= self.loo.removed_rel[h[own]]
            nonrel[own] -= self.loo.removed_nonrel[h[own]]
            found[own] -= self.loo.removed_found[h[own]]
            if g >= 0:
                rel[own] -= self.pair_rel[g, h[own]]
                nonrel[own] -= self.pair_nonrel[g, h[own]]
                found[own] -= self.pair_found[g, h[own]]
            if ideal:
                mine = (owner[None, :] >= 0) & (owner[None, :] == h[:, None])
                if g >= 0:
                    ilo, ihi = self._ideal_lo[None, :], self._ideal_hi[None, :]
                    hh = h[:, None]
                    mine |= (ilo >= 0) & (((ilo == g) & (ihi == hh)) | ((ihi == g) & (ilo == hh)))
                ideal_removed = mine if ideal_removed is None else ideal_removed | mine
        return _Scenario(removed, rel, nonrel, found, ideal_removed)

    def _ideal_for(self, removed: Bool | None) -> Ideal:
        nt, nr = len(self.loo.topics), len(self.loo.runs)
        topic, gain, _ = self.loo.ideal_docs
        keep = np.ones((nr, topic.size), dtype=bool) if removed is None else ~removed
        cells = (np.arange(nr, dtype=np.int64)[:, None] * nt + topic[None, :])[keep]
        gains = np.broadcast_to(gain, keep.shape)[keep]
        off = np.zeros(nr * nt + 1, dtype=np.int64)
        np.cumsum(np.bincount(cells, minlength=nr * nt), out=off[1:])
        return Ideal(np.ascontiguousarray(gains, dtype=np.float64), off)

    def _counted(self, sc: _Scenario) -> Bool:
        """The (run, topic) cells averaged in a scenario."""
        if self.loo.compat == "trec_eval":
            out: Bool = self.loo.answered & (sc.found > 0)
            return out
        out = sc.rel > 0
        return out

    def _cell_values(
        self, m: Measure, sc: _Scenario, treatment: str = "lower", only: Bool | None = None
    ) -> F64:
        """Per-cell values of ``m`` in scenario ``sc``: "lower" (the measure), "condensed" or
        "upper"; shape (runs, topics). With ``only`` (per run), the other runs' cells are
        computed as if they retrieved nothing (cheaper when few runs are needed)."""
        nt, nr = len(self.loo.topics), len(self.loo.runs)
        ncell = nr * nt
        keep = ~sc.removed
        if only is not None:
            keep &= only[self.loo.cell // nt]
        ideal = (
            self._ideal_for(sc.ideal_removed) if m.spec.reads_ideal else self.loo.no_ideal(ncell)
        )
        rel, nonrel = sc.rel.reshape(-1), sc.nonrel.reshape(-1)
        if treatment == "condensed":
            keep &= self.loo.row_grade >= 0  # unjudged (negative grade) rows go too
            cell = self.loo.cell[keep]
            offsets = np.zeros(ncell + 1, dtype=np.int64)
            np.cumsum(np.bincount(cell, minlength=ncell), out=offsets[1:])
            grade = self.loo.row_grade[keep]
            ones = np.ones(grade.size, dtype=bool)
            r = Ranked(offsets, grade, ones, ones, rel, nonrel, ideal, self.loo.level)
            return compute(m, r)[0].reshape(nr, -1)
        if treatment == "upper":
            assert m.cutoff is not None
            k = int(m.cutoff)
            num_ret = (
                self.loo.num_ret if only is None else np.where(only[:, None], self.loo.num_ret, 0)
            )
            take = np.minimum(num_ret.reshape(-1), k)
            offsets = np.zeros(ncell + 1, dtype=np.int64)
            np.cumsum(take, out=offsets[1:])
            n = int(offsets[-1])
            grade = np.zeros(n, dtype=np.int64)
            found = np.zeros(n, dtype=bool)
            sel = keep & (self.loo.pos <= k)
            at = offsets[self.loo.cell[sel]] + self.loo.pos[sel] - 1
            grade[at] = self.loo.row_grade[sel]
            found[at] = True
            r = Ranked(
                offsets, grade, found, found & (grade >= 0), rel, nonrel, ideal, self.loo.level
            )
            plain = compute(m, r)[0]
            up: F64 = np.maximum(compute(m, optimistic(r, k))[0], plain)
            return up.reshape(nr, -1)
        if m.spec.cuttable and m.cutoff is not None:
            keep &= self.loo.pos <= m.cutoff
        cell = self.loo.cell[keep]
        offsets = np.zeros(ncell + 1, dtype=np.int64)
        np.cumsum(np.bincount(cell, minlength=ncell), out=offsets[1:])
        grade = self.loo.row_grade[keep]
        sparse = _SparseRanked(
            true_pos=self.loo.pos[keep],
            true_num_ret=self.loo.num_ret.reshape(-1),
            offsets=offsets,
            grade=grade,
            pooled=np.ones(grade.size, dtype=bool),
            judged=grade >= 0,
            num_rel=rel,
            num_nonrel=nonrel,
            ideal=ideal,
            level=self.loo.level,
        )
        return compute(m, sparse)[0].reshape(nr, -1)

    # -- Lipani: p∘r ---------------------------------------------------------------------------
    def _topic(self, t: int) -> _Topic:
        """Document ids of topic ``t`` over every run (hash-keyed, confirmed on the bytes)."""
        return topic_documents(self, t)

    # -- the report ----------------------------------------------------------------------------
    def report(
        self, measure: str | Measure, *, estimators: Sequence[str] = ALL, top75: bool = False
    ) -> EstimatorReport:
        """The estimators and their validation for one measure (see the module docstring)."""
        m = measure if isinstance(measure, Measure) else parse_measure(measure)
        if m.family not in FAMILIES:
            raise ValueError(
                f"{m.name}: the estimators are defined for {', '.join(FAMILIES)} (with their "
                "cutoffs where they take one)"
            )
        unknown = [e for e in estimators if e not in ALL]
        if unknown:
            raise ValueError(f"unknown estimator(s) {', '.join(unknown)}; known: {', '.join(ALL)}")
        names = tuple(e for e in ALL if e in estimators)
        if len(self.loo.unit_names) < 2:
            raise ValueError(
                "the estimators' validation needs at least 2 pooled units (leaving the only "
                "one out empties the pool)"
            )
        return _Harness(self, m, names, top75=top75).run()
