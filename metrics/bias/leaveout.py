"""Leave-one-run-out and leave-one-group-out (Zobel 1998): what being in the pool is worth to a run.

Leave-one-out, exactly (a user must know this to reproduce a figure):

1. The pool of a topic is the union of ranks 1..K of every *pooled* run (default: every run
   given), each run ranked as trec_eval ranks it (score descending, ties by docid descending, the
   rank column ignored). Only the topics of the qrels (after the ``topics`` filter) are pooled.
2. The qrels are restricted to that pool: a judgment of a document outside the pool is dropped (the
   document becomes unjudged). Every run is scored against the restricted qrels: ``score``.
3. For each pooled run (``leave_out="run"``) or group (``"group"``), the pool is rebuilt without
   it: the documents that no other run (group) put in its top K leave the pool, so the restricted
   qrels lose exactly those judgments (its *unique* documents). The left-out run (every run of
   the left-out group) is scored again: ``score_without``. Computed from per-document contributor
   counts in one vectorised pass, identical to rebuilding each restricted qrels and evaluating.
4. ``delta = score - score_without`` (what being in the pool is worth to the run), ``delta_pct =
   100 * delta / score_without`` (None when ``score_without`` is 0). ``rank`` = 1 + the number of
   pooled runs with a strictly higher ``score``; ``rank_without`` = 1 + the number of *other*
   pooled runs whose ``score`` is strictly higher than this run's ``score_without`` (the run is
   left out, everyone else keeps their full-pool score). ``kendall_tau`` (tau-b) and ``tau_ap``
   (Yilmaz et al. 2008, the full-pool ranking as reference) compare the ranking by ``score`` with
   the ranking by ``score_without`` (every run with its own leave-out score). ``unique_relevant``
   counts the relevant documents (grade >= relevance level) that only this run (group) put in the
   pool, summed over topics.

Measures are evaluated with :mod:`metrics.measures`, by default in trec_eval-compatible mode
(``compat="trec_eval"``): topics averaged = those in both the restricted qrels and the run. With
``compat=None`` (the honest mode) topics with no relevant document in the restricted qrels are
excluded and unanswered topics score 0.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from metrics._docindex import DocIndex
from metrics.bias.results import LooResult, LooRun, PoolContributions
from metrics.bias.topics import _topics_of
from metrics.io import Qrels, Run
from metrics.measures.names import Measure, parse_measure
from metrics.measures.ranked import Ideal, Ranked
from metrics.measures.registry import compute
from metrics.stats.rank import kendall_tau_b, tau_ap

__all__ = [
    "LeaveOneOut",
    "leave_one_out",
]

I64 = npt.NDArray[np.int64]


F64 = npt.NDArray[np.float64]


Bool = npt.NDArray[np.bool_]


Bytes = npt.NDArray[np.bytes_]


Compat = Literal["trec_eval"] | None


LeaveOutUnit = Literal["run", "group"]


@dataclass(frozen=True)
class LeaveOut:
    """How a leave-out analysis pools and scores, given once to :class:`LeaveOneOut`,
    :func:`leave_one_out`, :class:`~metrics.bias.nested.EstimatorAnalysis`,
    :func:`~metrics.bias.estimators.estimator_report` and
    :func:`~metrics.bias.reusability.reusability`.

    ``depth``: the pool depth K; ``leave_out``: what is left out, each pooled ``"run"`` or each
    ``"group"`` (then ``groups`` maps tag -> group, and every pooled run needs one);
    ``pooled``: the tags that contribute to the pool (None: every run given); ``topics``: the
    topics analysed (None: the qrels'); ``relevance_level``: the lowest relevant grade;
    ``compat``: ``"trec_eval"`` (topics averaged = those in both the restricted qrels and the
    run) or None (the honest mode). See the module docstring for the definitions.
    """

    depth: int = 10
    leave_out: LeaveOutUnit = "run"
    groups: Mapping[str, str] | None = None
    pooled: Iterable[str] | None = None
    topics: Iterable[str] | None = None
    relevance_level: int = 1
    compat: Compat = "trec_eval"

    def __post_init__(self) -> None:
        if self.depth < 1:
            raise ValueError(f"depth must be >= 1, got {self.depth}")
        if self.leave_out not in ("run", "group"):
            raise ValueError(f"leave_out must be 'run' or 'group', got {self.leave_out!r}")
        if self.compat not in (None, "trec_eval"):
            raise ValueError(f"compat must be None or 'trec_eval', got {self.compat!r}")
        if self.relevance_level < 1:
            raise ValueError(f"relevance_level must be >= 1, got {self.relevance_level}")


class _SparseRanked(Ranked):
    """A :class:`Ranked` holding only the rows that are in the qrels, with their true ranks.

    Every measure we score here reads unjudged rows only through their ranks (``pos``) and the
    number retrieved (``num_ret``), so dropping them and supplying both keeps every value exact
    (Unjudged@k is derived from Judged@k instead). This is what makes scoring 127 runs x 2 pools
    cheap: the qrels rows are a few percent of the retrieved rows.
    """

    def __init__(self, *, true_pos: I64, true_num_ret: I64, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        object.__setattr__(self, "_true_pos", true_pos)
        object.__setattr__(self, "_true_num_ret", true_num_ret)

    @cached_property
    def pos(self) -> I64:
        """True 1-based rank of every kept row."""
        out: I64 = self.__dict__["_true_pos"]
        return out

    @cached_property
    def num_ret(self) -> I64:
        """True number of retrieved rows per query."""
        out: I64 = self.__dict__["_true_num_ret"]
        return out


class LeaveOneOut:
    """Pool, restricted qrels and document lookups prepared once; :meth:`result` per measure.

    ``runs`` maps tag -> run; ``pooled`` the tags that contribute to the pool (default all);
    ``groups`` maps tag -> group (required for ``leave_out="group"``; every pooled run needs
    one). See the module docstring for the definitions.

    How it is fast: only the qrels documents matter (a pooled document without a judgment is
    unjudged either way), so every retrieved row is looked up once in the qrels of the analysed
    topics (:class:`metrics._docindex.DocIndex`, the Evaluator's per-topic hash table). A
    judgment is in the pool when a pooled run has it in its top K; it leaves the pool with a run
    (group) exactly when that run (group) is its only contributor. Contributor counts per judgment
    give every leave-out pool at once, and each run is scored on the full pool and on its own
    leave-out pool in one vectorised pass over (run, topic) cells.
    """

    def __init__(
        self, qrels: Qrels, runs: Mapping[str, Run], leave: LeaveOut | None = None
    ) -> None:
        leave = LeaveOut() if leave is None else leave
        if not runs:
            raise ValueError("no runs given")
        self.leave = leave
        self.depth = leave.depth
        self.leave_out: LeaveOutUnit = leave.leave_out
        self.compat = leave.compat
        self.level = leave.relevance_level
        pooled, groups, topics = leave.pooled, leave.groups, leave.topics
        self.tags = list(runs)
        self.runs = [runs[t] for t in self.tags]
        pooled_set = set(self.tags) if pooled is None else set(pooled)
        unknown = sorted(pooled_set - set(self.tags))
        if unknown:
            raise ValueError(f"pooled runs not among the runs given: {', '.join(unknown[:5])}")
        self.pooled = [t for t in self.tags if t in pooled_set]
        if not self.pooled:
            raise ValueError("no pooled run: the pool would be empty")
        self.topics = _topics_of(qrels, topics)
        self._units(groups)
        self._judgments(qrels)
        self._rows()
        self._pool()

    # -- preparation -------------------------------------------------------------------------
    def _units(self, groups: Mapping[str, str] | None) -> None:
        """Unit (left-out entity) of every run: its own index, its group's, or -1 if unpooled."""
        unit = np.full(len(self.tags), -1, dtype=np.int64)
        names: list[str] = []
        pooled = set(self.pooled)
        if self.leave_out == "group":
            if groups is None:
                raise ValueError("leave-one-group-out needs the run -> group mapping")
            missing = [t for t in self.pooled if t not in groups]
            if missing:
                raise ValueError(f"no group for run(s): {', '.join(missing[:5])}")
            index: dict[str, int] = {}
            for i, tag in enumerate(self.tags):
                if tag in pooled:
                    unit[i] = index.setdefault(groups[tag], len(index))
            names = list(index)
        else:
            for i, tag in enumerate(self.tags):
                if tag in pooled:
                    unit[i] = len(names)
                    names.append(tag)
        self.unit = unit
        self.unit_names = names

    def _judgments(self, qrels: Qrels) -> None:
        """The qrels of the analysed topics as entries, and an index to find them."""
        qindex = {q: i for i, q in enumerate(qrels.qids)}
        spans = [
            (int(qrels.offsets[qindex[q]]), int(qrels.offsets[qindex[q] + 1])) for q in self.topics
        ]
        rows = np.concatenate([np.arange(a, b, dtype=np.int64) for a, b in spans])
        sizes = np.array([b - a for a, b in spans], dtype=np.int64)
        self.e_row = rows  # entry -> qrels row
        self.e_topic = np.repeat(np.arange(len(spans), dtype=np.int64), sizes)
        self.e_grade = qrels.grades[rows]
        self._t_span = np.zeros(len(spans) + 1, dtype=np.int64)
        np.cumsum(sizes, out=self._t_span[1:])
        # finds a run's docids among these judgments (the spans keep the qrels' docid order)
        self._index = DocIndex.build(qrels.docids[rows], self._t_span)

    def _lookup(self, run: Run, rows: I64, starts: I64, tq: I64) -> tuple[I64, I64]:
        """Judged rows among ``rows`` (a run's rows, query after query from ``starts``, of topics
        ``tq``): their indices into ``rows``, in order, and their entries in the analysed qrels."""
        none = np.zeros(0, dtype=np.int64)
        if self.e_row.size == 0 or rows.size == 0:
            return none, none
        sizes = np.diff(np.append(starts, rows.size))
        idx, ent = self._index.find(run.docids, run.hashes, rows, tq, sizes)
        order = np.argsort(idx, kind="stable")
        return idx[order], ent[order]

    def _rows(self) -> None:
        """Rank, cell and entry of every retrieved row that is in the qrels; rows per cell."""
        nt = len(self.topics)
        tindex = {q: i for i, q in enumerate(self.topics)}
        cells: list[I64] = []
        poss: list[I64] = []
        entries: list[I64] = []
        num_ret = np.zeros((len(self.runs), nt), dtype=np.int64)
        for ri, run in enumerate(self.runs):
            sel = sorted((tindex[q], i) for i, q in enumerate(run.qids) if q in tindex)
            if not sel:
                continue
            off = run.offsets
            tq = np.array([t for t, _ in sel], dtype=np.int64)
            qi = np.array([i for _, i in sel], dtype=np.int64)
            sizes = off[qi + 1] - off[qi]
            num_ret[ri, tq] = sizes
            order = run.order
            if qi.size == len(run.qids) and np.all(np.diff(qi) == 1):
                rows = order  # the run's queries are exactly the analysed ones, in topic order
            else:
                rows = np.concatenate([order[off[i] : off[i + 1]] for i in qi.tolist()])
            starts = np.zeros(sizes.size, dtype=np.int64)
            np.cumsum(sizes[:-1], out=starts[1:])
            idx, entry = self._lookup(run, rows, starts, tq)
            q = np.searchsorted(starts, idx, side="right") - 1
            cells.append(ri * nt + tq[q])
            poss.append(idx - starts[q] + 1)
            entries.append(entry)

        def cat(xs: list[I64]) -> I64:
            return np.concatenate(xs) if xs else np.zeros(0, dtype=np.int64)

        self.cell = cat(cells)
        self.pos = cat(poss)
        self.entry = cat(entries)
        self.num_ret = num_ret
        self.answered = num_ret > 0

    def _pool(self) -> None:
        nt, nu, ne = len(self.topics), max(len(self.unit_names), 1), int(self.e_row.size)
        run_of = self.cell // nt
        unit_row = self.unit[run_of]
        top = (self.pos <= self.depth) & (unit_row >= 0)
        # contributors: distinct units per judgment; the owner is the only one, if any
        pair = np.unique(self.entry[top] * nu + unit_row[top])
        ncontrib = np.bincount(pair // nu, minlength=ne)
        owner = np.full(ne, -1, dtype=np.int64)
        single = pair[ncontrib[pair // nu] == 1]
        owner[single // nu] = single % nu
        pooled = ncontrib > 0
        self.e_pooled = pooled
        self.e_owner = owner
        g = self.e_grade
        rel = pooled & (g >= self.level)
        nonrel = pooled & (g >= 0) & (g < self.level)
        self.found_t = np.bincount(self.e_topic[pooled], minlength=nt)
        self.rel_t = np.bincount(self.e_topic[rel], minlength=nt)
        self.nonrel_t = np.bincount(self.e_topic[nonrel], minlength=nt)
        own = owner >= 0
        cell = owner[own] * nt + self.e_topic[own]

        def by_unit(mask: Bool) -> I64:
            return np.bincount(cell[mask[own]], minlength=nu * nt).reshape(nu, nt)

        self.removed_found = by_unit(pooled)
        self.removed_rel = by_unit(rel)
        self.removed_nonrel = by_unit(nonrel)
        # ideal documents (pooled, grade >= 1) in Ideal order (topic, grade descending)
        gi = np.flatnonzero(pooled & (g >= 1))
        gi = gi[np.lexsort((-g[gi], self.e_topic[gi]))]
        self.ideal_docs = (self.e_topic[gi], g[gi].astype(np.float64), owner[gi])
        # rows whose judgment is in the (full) pool; the others are unjudged in every scenario
        keep = pooled[self.entry]
        self.cell, self.pos, self.entry = self.cell[keep], self.pos[keep], self.entry[keep]
        self.row_grade = g[self.entry]
        row_owner = owner[self.entry]
        self.row_removed = (row_owner >= 0) & (row_owner == self.unit[self.cell // nt])

    # -- scoring ---------------------------------------------------------------------------
    def _ranked(self, m: Measure, without: bool) -> Ranked:
        nt, nr = len(self.topics), len(self.runs)
        ncell = nr * nt
        keep = np.ones(self.cell.size, dtype=bool) if not without else ~self.row_removed
        if m.spec.cuttable and m.cutoff is not None:  # rows below k cannot change the value
            keep &= self.pos <= m.cutoff
        cell = self.cell[keep]
        offsets = np.zeros(ncell + 1, dtype=np.int64)
        np.cumsum(np.bincount(cell, minlength=ncell), out=offsets[1:])
        grade = self.row_grade[keep]
        num_rel, num_nonrel = self._counts(without)
        inq = np.ones(grade.size, dtype=bool)
        return _SparseRanked(
            true_pos=self.pos[keep],
            true_num_ret=self.num_ret.reshape(-1),
            offsets=offsets,
            grade=grade,
            pooled=inq,
            judged=grade >= 0,
            num_rel=num_rel.reshape(-1),
            num_nonrel=num_nonrel.reshape(-1),
            ideal=self._ideal(without) if m.spec.reads_ideal else self.no_ideal(ncell),
            level=self.level,
        )

    def _counts(self, without: bool) -> tuple[I64, I64]:
        """R and the judged non-relevant count per (run, topic) cell."""
        nr = len(self.runs)
        rel = np.tile(self.rel_t, (nr, 1))
        nonrel = np.tile(self.nonrel_t, (nr, 1))
        if without:
            has = self.unit >= 0
            rel[has] -= self.removed_rel[self.unit[has]]
            nonrel[has] -= self.removed_nonrel[self.unit[has]]
        return rel, nonrel

    def _present(self, without: bool) -> Bool:
        """Topic present in the (restricted) qrels, per cell."""
        found = np.tile(self.found_t, (len(self.runs), 1))
        if without:
            has = self.unit >= 0
            found[has] -= self.removed_found[self.unit[has]]
        out: Bool = found > 0
        return out

    @staticmethod
    def no_ideal(ncell: int) -> Ideal:
        return Ideal(np.zeros(0), np.zeros(ncell + 1, dtype=np.int64))

    def _ideal(self, without: bool) -> Ideal:
        nt, nr = len(self.topics), len(self.runs)
        topic, gain, owner = self.ideal_docs
        keep = np.ones((nr, topic.size), dtype=bool)
        if without:
            keep = ~((owner[None, :] >= 0) & (owner[None, :] == self.unit[:, None]))
        cells = (np.arange(nr, dtype=np.int64)[:, None] * nt + topic[None, :])[keep]
        gains = np.broadcast_to(gain, keep.shape)[keep]
        off = np.zeros(nr * nt + 1, dtype=np.int64)
        np.cumsum(np.bincount(cells, minlength=nr * nt), out=off[1:])
        return Ideal(np.ascontiguousarray(gains, dtype=np.float64), off)

    def _values(self, m: Measure, without: bool) -> F64:
        """Per-cell values of ``m``, shape (runs, topics)."""
        nr = len(self.runs)
        if m.spec.loo_complement is not None:  # it counts the rows not kept (Unjudged@k)
            other = self._values(Measure(m.spec.loo_complement, m.cutoff), without)
            has = (self.num_ret > 0).reshape(nr, -1)
            out: F64 = np.where(has, 1.0 - other, 0.0)
            return out
        return compute(m, self._ranked(m, without))[0].reshape(nr, -1)

    def scores(self, measure: str | Measure, *, without: bool = False) -> dict[str, float]:
        """Every run's mean score on the full pool, or (``without``) with its run/group left out.

        A run that is not pooled scores the same either way. NaN when no topic is averaged.
        """
        m = measure if isinstance(measure, Measure) else parse_measure(measure)
        value = self._values(m, without)
        num_rel = self._counts(without)[0]
        if self.compat == "trec_eval":
            counted = self.answered & self._present(without)
        else:
            counted = num_rel > 0
        n = counted.sum(axis=1)
        total = np.where(counted, value, 0.0).sum(axis=1)
        mean = np.full(len(self.runs), math.nan)
        np.divide(total, n, out=mean, where=n > 0)
        return dict(zip(self.tags, mean.tolist(), strict=True))

    def result(self, measure: str | Measure) -> LooResult:
        """The leave-one-out analysis of ``measure`` (see the module docstring)."""
        m = measure if isinstance(measure, Measure) else parse_measure(measure)
        full = self.scores(m)
        without = self.scores(m, without=True)
        pooled = self.pooled
        unique_rel = self.removed_rel.sum(axis=1)
        unit_of = dict(zip(self.tags, self.unit.tolist(), strict=True))
        s = np.array([full[t] for t in pooled])
        runs: dict[str, LooRun] = {}
        for tag in pooled:
            sc, sw = full[tag], without[tag]
            delta = sc - sw
            others = np.array([full[t] for t in pooled if t != tag])
            runs[tag] = LooRun(
                score=sc,
                score_without=sw,
                delta=delta,
                delta_pct=100.0 * delta / sw if sw != 0 and not math.isnan(sw) else None,
                rank=1 + int(np.count_nonzero(s > sc)),
                rank_without=1 + int(np.count_nonzero(others > sw)),
                unique_relevant=int(unique_rel[unit_of[tag]]),
            )
        deltas = {t: r.delta for t, r in runs.items() if not math.isnan(r.delta)}
        best = max(deltas, key=lambda t: deltas[t]) if deltas else None
        x = {t: full[t] for t in pooled}
        y = {t: without[t] for t in pooled}
        complete = not any(math.isnan(v) for v in (*x.values(), *y.values()))
        groups: dict[str, dict[str, Any]] = {}
        if self.leave_out == "group":
            for u, name in enumerate(self.unit_names):
                members = [t for t in self.pooled if unit_of[t] == u]
                groups[name] = {"runs": members, "unique_relevant": int(unique_rel[u])}
        pooled_set = set(pooled)
        return LooResult(
            measure=m.name,
            depth=self.depth,
            leave_out=self.leave_out,
            compat="trec_eval" if self.compat == "trec_eval" else "honest",
            topics=self.topics,
            kendall_tau=kendall_tau_b(x, y) if complete else math.nan,
            tau_ap=tau_ap(x, y) if complete else math.nan,
            runs=runs,
            mean_delta=math.fsum(deltas.values()) / len(deltas) if deltas else math.nan,
            max_delta=deltas[best] if best is not None else math.nan,
            max_delta_run=best,
            not_pooled={t: full[t] for t in self.tags if t not in pooled_set},
            groups=groups,
        )

    def contributions(self) -> PoolContributions:
        """Every judgment of the analysed topics that is in the full pool, and who put it there.

        One entry per (topic, judged document) in the pool of the pooled runs' top ``depth``:
        its topic (index into ``topics``), grade, ``first_rank`` (the best rank at which a pooled
        run has it: the pool depth from which it is in the pool), and the number of distinct
        units (``n_units``) and pooled runs (``n_runs``) with it in their top ``depth``;
        ``owner`` is the unit index when that unit is its only contributor, else -1. From the
        same contributor counts the leave-out pools are built from (no rebuilding).
        """
        nt, nr = len(self.topics), len(self.runs)
        nu = max(len(self.unit_names), 1)
        run_of = self.cell // nt
        top = (self.pos <= self.depth) & (self.unit[run_of] >= 0)
        ent, pos, run = self.entry[top], self.pos[top], run_of[top]
        ne = int(self.e_row.size)
        first = np.full(ne, np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(first, ent, pos)
        n_runs = np.bincount(np.unique(ent * nr + run) // nr, minlength=ne)
        n_units = np.bincount(np.unique(ent * nu + self.unit[run]) // nu, minlength=ne)
        idx = np.flatnonzero(self.e_pooled)
        return PoolContributions(
            topics=self.topics,
            units=tuple(self.unit_names),
            topic=self.e_topic[idx],
            grade=self.e_grade[idx],
            first_rank=first[idx],
            n_units=n_units[idx],
            n_runs=n_runs[idx],
            owner=self.e_owner[idx],
        )

    def pools(self) -> dict[str, frozenset[str]]:
        """The full pool per topic (docids of ranks 1..K of the pooled runs), computed plainly.

        For inspection and explicit cross-checks (with :func:`restrict_qrels`).
        """
        out: dict[str, frozenset[str]] = {}
        for qid in self.topics:
            docs: set[str] = set()
            for tag, run in zip(self.tags, self.runs, strict=True):
                if tag in self.pooled:
                    docs.update(run.ranking(qid)[: self.depth])
            out[qid] = frozenset(docs)
        return out


def leave_one_out(
    qrels: Qrels, runs: Mapping[str, Run], measure: str | Measure, leave: LeaveOut | None = None
) -> LooResult:
    """Leave-one-run-out (or leave-one-group-out) analysis of pooling bias (Zobel 1998).

    Pool = union of the top ``depth`` of the pooled runs; qrels restricted to it; each run scored;
    then each run (group) left out of the pool and its run(s) scored again. delta = score -
    score_without; tau-b and tau_AP between the two rankings. Exact definitions in the module
    docstring. For several measures over the same runs, prepare a :class:`LeaveOneOut` once.
    """
    return LeaveOneOut(qrels, runs, leave).result(measure)
