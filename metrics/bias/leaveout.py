"""Pool-bias analyses: how much a run's score depends on having contributed to the pool.

Four analyses (DESIGN section 8), pure functions over :class:`~metrics.io.Qrels` and
:class:`~metrics.io.Run` objects:

- :func:`judged_at_k`: Judged@k of every run per topic, with means for pooled and not-pooled runs.
- :func:`leave_one_out` (and the prepared :class:`LeaveOneOut`): leave-one-run-out and
  leave-one-group-out (Zobel 1998).
- :func:`estimate_penalty`: the estimated pooling penalty of a run that did not contribute to the
  pool (Webber & Park 2009).
- :func:`compare_qrels_versions`: every run's score and rank under two qrels versions, on the
  topics both can score (:func:`common_topics`).

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

Comparisons of two sides (two qrels versions, two pools, two runs), exactly:

1. A side **can score** a topic when it has at least one relevant judgment (grade >= the relevance
   level) for it (:func:`scorable_topics`); for a run, when it also answers the topic. Only the
   topics of the ``topics`` filter count.
2. Every figure that compares the sides is computed on the topics **both** can score
   (:func:`common_topics`: ``compared``); the others are listed (``only_a``, ``only_b``: "new in
   b", ``neither``) and stated in plain words with the sides' labels (:meth:`TopicSplit.note`:
   "compared on 5 topics; topic 6 is new in v2 (not in v1)"). Two means over different topics
   mix the change of interest with the change of topics, so no comparison is made across them.
   No common topic is an error, not an empty comparison.
3. :func:`compare_qrels_versions`, per run: ``score_a``, ``score_b`` (the measure's mean on the
   compared topics), ``rank`` = 1 + the number of runs with a strictly higher score (a run with
   no score has no rank), ``rank_change = rank_a - rank_b`` (positive = rose), ``delta = score_b
   - score_a`` with the Student-t interval of the per-topic differences b - a (``ci_level``,
   default 95%) and the paired t-test p (both None with fewer than two topics), the same for
   R@k (``recall_change`` = "drop" below -1e-12, "gain" above 1e-12, else "no change"), and,
   separately, score, rank and recall under b on the ``only_b`` topics. Kendall tau-b and
   tau_AP (a as reference) compare the rankings by ``score_a`` and ``score_b``. The novel runs'
   ``delta`` is their gain; the other runs' recall change is expected to be a drop (the known
   relevant set of the compared topics grew), and is labelled by its sign either way.

Measures are evaluated with :mod:`metrics.measures`, by default in trec_eval-compatible mode
(``compat="trec_eval"``): topics averaged = those in both the restricted qrels and the run. With
``compat=None`` (the honest mode) topics with no relevant document in the restricted qrels are
excluded and unanswered topics score 0.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from metrics._docindex import DocIndex
from metrics.evaluation.evaluator import Evaluator
from metrics.io import Qrels, Run
from metrics.measures.basic import Ideal, Ranked
from metrics.measures.names import Measure, parse_measure
from metrics.measures.registry import compute
from metrics.pooling.runs import topic_sort_key
from metrics.stats.intervals import t_ci
from metrics.stats.paired import paired_test
from metrics.stats.rank import kendall_tau_b, tau_ap

__all__ = [
    "CHANGE_TOLERANCE",
    "JudgedReport",
    "LeaveOneOut",
    "LooResult",
    "LooRun",
    "NewTopicScores",
    "PenaltyEstimate",
    "PoolContributions",
    "RunComparison",
    "TopicSplit",
    "VersionComparison",
    "common_topics",
    "compare_qrels_versions",
    "estimate_penalty",
    "judged_at_k",
    "leave_one_out",
    "restrict_qrels",
    "scorable_topics",
    "subset_qrels",
]

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]
Bool = npt.NDArray[np.bool_]
Bytes = npt.NDArray[np.bytes_]

Compat = Literal["trec_eval"] | None
LeaveOut = Literal["run", "group"]


def _num(x: float | None) -> float | None:
    return None if x is None or math.isnan(x) else float(x)


# --------------------------------------------------------------------------------------------
# Topics and qrels subsets


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


# --------------------------------------------------------------------------------------------
# Judged@k


@dataclass(frozen=True)
class JudgedReport:
    """Judged@k per run and topic, with means.

    ``per_query[run][qid]`` is Judged@k; ``means[run]`` its mean over the run's topics. When the
    pooled runs were given, ``mean_pooled`` / ``mean_not_pooled`` are the means of ``means`` over
    the pooled and the other runs (None when a side is empty).
    """

    k: int
    per_query: dict[str, dict[str, float]]
    means: dict[str, float]
    pooled: tuple[str, ...] | None
    mean_pooled: float | None
    mean_not_pooled: float | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            "measure": f"Judged@{self.k}",
            "k": self.k,
            "mean_pooled": _num(self.mean_pooled),
            "mean_not_pooled": _num(self.mean_not_pooled),
            "runs": {
                tag: {
                    "mean": _num(self.means[tag]),
                    "pooled": None if self.pooled is None else tag in self.pooled,
                    "per_query": self.per_query[tag],
                }
                for tag in self.means
            },
        }


def judged_at_k(
    qrels: Qrels,
    runs: Mapping[str, Run],
    *,
    k: int = 10,
    topics: Iterable[str] | None = None,
    pooled: Iterable[str] | None = None,
) -> JudgedReport:
    """Judged@k of every run: the fraction of its top k that has a judgment in the qrels.

    Judged@k = |{d in top k : d in qrels with grade >= 0}| / min(k, retrieved) (ir_measures;
    a negative grade means pooled but not judged, so counts as unjudged). Per topic over the
    topics in both the qrels (after the ``topics`` filter) and the run; ``means[run]`` averages
    them. Given the tags of the pooled runs, the report also splits the mean of the run means
    into pooled and not pooled.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    sub = subset_qrels(qrels, _topics_of(qrels, topics))
    ev = Evaluator(sub, [f"Judged@{k}"], compat="trec_eval", ci=None)
    name = f"Judged@{k}"
    per_query: dict[str, dict[str, float]] = {}
    means: dict[str, float] = {}
    for tag, run in runs.items():
        res = ev.evaluate(run)
        per_query[tag] = res.per_query[name]
        means[tag] = res.aggregates[name].value
    pooled_set = None if pooled is None else tuple(t for t in runs if t in set(pooled))

    def mean_of(tags: list[str]) -> float | None:
        vals = [means[t] for t in tags if not math.isnan(means[t])]
        return math.fsum(vals) / len(vals) if vals else None

    mp = mnp = None
    if pooled_set is not None:
        mp = mean_of(list(pooled_set))
        mnp = mean_of([t for t in runs if t not in pooled_set])
    return JudgedReport(k, per_query, means, pooled_set, mp, mnp)


# --------------------------------------------------------------------------------------------
# Leave-one-out


@dataclass(frozen=True)
class LooRun:
    """One run's leave-one-out figures (see the module docstring for the exact definitions)."""

    score: float
    score_without: float
    delta: float
    delta_pct: float | None
    rank: int
    rank_without: int
    unique_relevant: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (NaN becomes None)."""
        return {
            "score": _num(self.score),
            "score_without": _num(self.score_without),
            "delta": _num(self.delta),
            "delta_pct": _num(self.delta_pct),
            "rank": self.rank,
            "rank_without": self.rank_without,
            "unique_relevant": self.unique_relevant,
        }


@dataclass(frozen=True)
class LooResult:
    """A leave-one-run-out or leave-one-group-out analysis of one measure.

    ``runs`` holds the pooled runs; ``not_pooled`` the full-pool scores of runs given but not
    pooled (they cannot be left out). ``groups`` (group mode) maps each group to its runs and
    unique relevant documents.
    """

    measure: str
    depth: int
    leave_out: str
    compat: str
    topics: tuple[str, ...]
    kendall_tau: float
    tau_ap: float
    runs: dict[str, LooRun]
    mean_delta: float
    max_delta: float
    max_delta_run: str | None
    not_pooled: dict[str, float] = field(default_factory=dict)
    groups: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """``{"measure", "depth", "kendall_tau", "tau_ap", "runs": {TAG: {...}}, ...}``."""
        out: dict[str, Any] = {
            "measure": self.measure,
            "depth": self.depth,
            "kendall_tau": _num(self.kendall_tau),
            "tau_ap": _num(self.tau_ap),
            "runs": {tag: r.to_dict() for tag, r in self.runs.items()},
            "mean_delta": _num(self.mean_delta),
            "max_delta": _num(self.max_delta),
            "max_delta_run": self.max_delta_run,
            "leave_out": self.leave_out,
            "mode": self.compat,
            "topics": list(self.topics),
        }
        if self.not_pooled:
            out["not_pooled"] = {t: _num(s) for t, s in self.not_pooled.items()}
        if self.groups:
            out["groups"] = self.groups
        return out


@dataclass(frozen=True, eq=False)
class PoolContributions:
    """Judgments in a depth-K pool with their contributors; see :meth:`LeaveOneOut.contributions`.

    Parallel arrays, one entry per judged (topic, document) pair in the pool (grade < 0, "pooled
    but not judged", included: filter on ``grade >= 0`` to count judgments).
    """

    topics: tuple[str, ...]
    units: tuple[str, ...]
    topic: I64
    grade: I64
    first_rank: I64
    n_units: I64
    n_runs: I64
    owner: I64


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
        self,
        qrels: Qrels,
        runs: Mapping[str, Run],
        *,
        depth: int = 10,
        leave_out: LeaveOut = "run",
        groups: Mapping[str, str] | None = None,
        pooled: Iterable[str] | None = None,
        topics: Iterable[str] | None = None,
        relevance_level: int = 1,
        compat: Compat = "trec_eval",
    ) -> None:
        if depth < 1:
            raise ValueError(f"depth must be >= 1, got {depth}")
        if leave_out not in ("run", "group"):
            raise ValueError(f"leave_out must be 'run' or 'group', got {leave_out!r}")
        if compat not in (None, "trec_eval"):
            raise ValueError(f"compat must be None or 'trec_eval', got {compat!r}")
        if relevance_level < 1:
            raise ValueError(f"relevance_level must be >= 1, got {relevance_level}")
        if not runs:
            raise ValueError("no runs given")
        self.depth = depth
        self.leave_out: LeaveOut = leave_out
        self.compat = compat
        self.level = relevance_level
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
        self._ideal_docs = (self.e_topic[gi], g[gi].astype(np.float64), owner[gi])
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
            ideal=self._ideal(without) if m.spec.reads_ideal else self._no_ideal(ncell),
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
    def _no_ideal(ncell: int) -> Ideal:
        return Ideal(np.zeros(0), np.zeros(ncell + 1, dtype=np.int64))

    def _ideal(self, without: bool) -> Ideal:
        nt, nr = len(self.topics), len(self.runs)
        topic, gain, owner = self._ideal_docs
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
    qrels: Qrels,
    runs: Mapping[str, Run],
    measure: str | Measure,
    *,
    depth: int = 10,
    leave_out: LeaveOut = "run",
    groups: Mapping[str, str] | None = None,
    pooled: Iterable[str] | None = None,
    topics: Iterable[str] | None = None,
    relevance_level: int = 1,
    compat: Compat = "trec_eval",
) -> LooResult:
    """Leave-one-run-out (or leave-one-group-out) analysis of pooling bias (Zobel 1998).

    Pool = union of the top ``depth`` of the pooled runs; qrels restricted to it; each run scored;
    then each run (group) left out of the pool and its run(s) scored again. delta = score -
    score_without; tau-b and tau_AP between the two rankings. Exact definitions in the module
    docstring. For several measures over the same runs, prepare a :class:`LeaveOneOut` once.
    """
    return LeaveOneOut(
        qrels,
        runs,
        depth=depth,
        leave_out=leave_out,
        groups=groups,
        pooled=pooled,
        topics=topics,
        relevance_level=relevance_level,
        compat=compat,
    ).result(measure)


# --------------------------------------------------------------------------------------------
# Estimated pooling penalty


@dataclass(frozen=True)
class PenaltyEstimate:
    """Estimated pooling penalty of runs that were not pooled (an estimate, with its basis).

    ``runs[tag]`` = {"score", "estimated_penalty", "estimated_score"}; ``basis`` names the
    leave-one-out analysis it comes from (measure, depth, number of runs, method).
    """

    measure: str
    method: str
    penalty: float
    basis: dict[str, Any]
    runs: dict[str, dict[str, float | None]]

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form, labelled as an estimate."""
        return {
            "estimate": True,
            "measure": self.measure,
            "method": self.method,
            "penalty": _num(self.penalty),
            "basis": self.basis,
            "runs": self.runs,
        }


def estimate_penalty(
    loo: LooResult,
    scores: Mapping[str, float] | None = None,
    *,
    relative: bool = False,
) -> PenaltyEstimate:
    """Estimated pooling penalty of non-pooled runs (Webber & Park 2009).

    absolute (default): penalty = mean over the pooled runs of their leave-one-out delta, the same
    for every run; estimated score = score + penalty. ``relative=True``: penalty_run = score *
    mean(delta_pct) / 100 (the mean relative gain applied to the run's own score). ``scores``
    default to ``loo.not_pooled`` (the runs' scores against the pool of the pooled runs). It is
    an estimate: the basis (number of runs, measure, depth, leave-out unit) is returned with it.
    """
    deltas = [r.delta for r in loo.runs.values() if not math.isnan(r.delta)]
    pcts = [r.delta_pct for r in loo.runs.values() if r.delta_pct is not None]
    if not deltas:
        raise ValueError("the leave-one-out analysis has no delta to average")
    mean_delta = math.fsum(deltas) / len(deltas)
    mean_pct = math.fsum(pcts) / len(pcts) if pcts else math.nan
    base = dict(loo.not_pooled if scores is None else scores)
    out: dict[str, dict[str, float | None]] = {}
    for tag, s in base.items():
        p = s * mean_pct / 100.0 if relative else mean_delta
        out[tag] = {
            "score": _num(s),
            "estimated_penalty": _num(p),
            "estimated_score": _num(s + p),
        }
    return PenaltyEstimate(
        measure=loo.measure,
        method="relative" if relative else "absolute",
        penalty=mean_pct if relative else mean_delta,
        basis={
            "source": "leave-one-out over the pooled runs (Webber & Park 2009)",
            "n_runs": len(deltas),
            "measure": loo.measure,
            "depth": loo.depth,
            "leave_out": loo.leave_out,
            "mode": loo.compat,
            "n_topics": len(loo.topics),
            "mean_delta": _num(mean_delta),
            "mean_delta_pct": _num(mean_pct),
        },
        runs=out,
    )


# --------------------------------------------------------------------------------------------
# The topics two sides can both score


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


# --------------------------------------------------------------------------------------------
# Before / after re-pooling

Change = Literal["drop", "gain", "no change"]
CHANGE_TOLERANCE = 1e-12  # a difference within this counts as "no change" (rounding noise)


def _change(delta: float) -> Change | None:
    if math.isnan(delta):
        return None
    if delta < -CHANGE_TOLERANCE:
        return "drop"
    if delta > CHANGE_TOLERANCE:
        return "gain"
    return "no change"


def _interval(ci: tuple[float, float] | None) -> list[float] | None:
    if ci is None or math.isnan(ci[0]) or math.isnan(ci[1]):
        return None
    return [float(ci[0]), float(ci[1])]


@dataclass(frozen=True)
class NewTopicScores:
    """A run's figures under version b on the topics only b can score (``only_b``)."""

    score_b: float
    rank_b: int | None
    recall_b: float

    def to_dict(self) -> dict[str, Any]:
        """``{"score_b", "rank_b", "recall_b"}`` (NaN becomes None)."""
        return {
            "score_b": _num(self.score_b),
            "rank_b": self.rank_b,
            "recall_b": _num(self.recall_b),
        }


@dataclass(frozen=True)
class RunComparison:
    """One run under qrels versions a and b, on the compared topics (see
    :func:`compare_qrels_versions`). ``n_topics`` is the number of paired topics (in trec_eval
    mode a run that does not answer a compared topic has no pair for it)."""

    score_a: float
    score_b: float
    delta: float
    rank_a: int | None
    rank_b: int | None
    recall_a: float
    recall_b: float
    recall_delta: float
    novel: bool
    n_topics: int = 0
    delta_ci: tuple[float, float] | None = None
    delta_p: float | None = None
    recall_delta_ci: tuple[float, float] | None = None
    recall_change: Change | None = None
    new_topics: NewTopicScores | None = None

    @property
    def rank_change(self) -> int | None:
        """rank_a - rank_b: positive when the run rose under b."""
        if self.rank_a is None or self.rank_b is None:
            return None
        return self.rank_a - self.rank_b

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (NaN becomes None)."""
        return {
            "novel": self.novel,
            "n_topics": self.n_topics,
            "score_a": _num(self.score_a),
            "score_b": _num(self.score_b),
            "rank_a": self.rank_a,
            "rank_b": self.rank_b,
            "rank_change": self.rank_change,
            "delta": _num(self.delta),
            "delta_ci": _interval(self.delta_ci),
            "delta_p": _num(self.delta_p),
            "recall_a": _num(self.recall_a),
            "recall_b": _num(self.recall_b),
            "recall_delta": _num(self.recall_delta),
            "recall_delta_ci": _interval(self.recall_delta_ci),
            "recall_change": self.recall_change,
            "new_topics": None if self.new_topics is None else self.new_topics.to_dict(),
        }


@dataclass(frozen=True)
class VersionComparison:
    """Every run's score and rank under qrels a and b; see :func:`compare_qrels_versions`."""

    measure: str
    recall_measure: str
    compat: str
    runs: dict[str, RunComparison]
    kendall_tau: float
    tau_ap: float
    novel_gain: dict[str, float]
    others_recall_change: dict[str, dict[str, Any]]
    mean_others_recall_change: float | None
    labels: tuple[str, str] = ("a", "b")
    ci_level: float = 0.95
    topics: TopicSplit = field(default_factory=lambda: TopicSplit((), (), (), ()))
    topics_note: str = ""
    others_recall_summary: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (the shape in the module docstring; NaN becomes None)."""
        return {
            "measure": self.measure,
            "recall_measure": self.recall_measure,
            "mode": self.compat,
            "labels": list(self.labels),
            "ci_level": self.ci_level,
            "topics": self.topics.to_dict(),
            "topics_note": self.topics_note,
            "kendall_tau": _num(self.kendall_tau),
            "tau_ap": _num(self.tau_ap),
            "runs": {t: r.to_dict() for t, r in self.runs.items()},
            "novel_gain": {t: _num(v) for t, v in self.novel_gain.items()},
            "others_recall_change": {
                t: {k: (_num(v) if isinstance(v, float) else v) for k, v in c.items()}
                for t, c in self.others_recall_change.items()
            },
            "mean_others_recall_change": _num(self.mean_others_recall_change),
            "others_recall_summary": self.others_recall_summary,
        }


def _ranks(scores: Mapping[str, float]) -> dict[str, int | None]:
    """1 + the number of runs with a strictly higher score (ties share the better rank).

    A run without a score (NaN: it answers none of the topics) has no rank and does not count.
    """
    vals = np.array([s for s in scores.values() if not math.isnan(s)])
    return {
        t: None if math.isnan(s) else 1 + int(np.count_nonzero(vals > s)) for t, s in scores.items()
    }


def _paired(
    per_a: Mapping[str, float], per_b: Mapping[str, float], level: float
) -> tuple[int, tuple[float, float] | None, float | None]:
    """Number of pairs, t interval of the mean of b - a, and the paired t-test p (None < 2)."""
    qids = sorted(set(per_a) & set(per_b), key=topic_sort_key)
    va = np.array([per_a[q] for q in qids], dtype=np.float64)
    vb = np.array([per_b[q] for q in qids], dtype=np.float64)
    if len(qids) < 2:
        return len(qids), None, None
    ci = t_ci(vb - va, level=level)
    p = paired_test(vb, va, test="t").p_value
    return len(qids), ci, p


def _recall_summary(
    others: Mapping[str, Mapping[str, Any]], recall: str, n_topics: int, mean: float | None
) -> str:
    """'recall (R@50) fell for 4 and rose for 1 of the 5 other runs on the 5 compared topics
    (mean -0.0310)'."""
    if not others:
        return "every run is novel: there is no other run whose recall could change"
    changes = [c["change"] for c in others.values() if c["change"] is not None]
    topics = f"the {n_topics} compared topic{'' if n_topics == 1 else 's'}"
    if not changes:
        return f"no other run answers any of {topics}: no recall change to report"
    counts = [(changes.count(c), w) for c, w in (("drop", "fell"), ("gain", "rose"))]
    words = [f"{w} for {k}" for k, w in counts if k]
    same = changes.count("no change")
    if same:
        words.append(f"did not change for {same}")
    said = words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"
    n = len(changes)
    text = f"recall ({recall}) {said} of the {n} other run{'' if n == 1 else 's'} on {topics}"
    if mean is not None:
        text += f" (mean {mean:+.4f})"
    missing = len(others) - n
    if missing:
        text += f"; {missing} other run{' answers' if missing == 1 else 's answer'} none of them"
    return text


def compare_qrels_versions(
    qrels_a: Qrels,
    qrels_b: Qrels,
    runs: Mapping[str, Run],
    measure: str | Measure,
    *,
    novel: Sequence[str] = (),
    recall_k: int = 1000,
    topics: Iterable[str] | None = None,
    relevance_level: int = 1,
    compat: Compat | Literal["honest"] = "trec_eval",
    labels: tuple[str, str] = ("a", "b"),
    ci_level: float = 0.95,
) -> VersionComparison:
    """Every run under qrels versions a (before) and b (after re-pooling), on the same topics.

    The rule (module docstring): both versions are scored on the topics both can score
    (``compared``: a relevant judgment at ``relevance_level`` in each, after the ``topics``
    filter); ``topics_note`` says what differs, with ``labels`` ("compared on 5 topics; topic 6 is
    new in v2 (not in v1)"). No common topic is a ``ValueError``.

    Per run, on the compared topics: score and rank (1 + runs strictly better) under a and b,
    ``delta = score_b - score_a`` with the ``ci_level`` Student-t interval of the per-topic
    differences b - a (:func:`metrics.stats.intervals.t_ci`) and the paired t-test p
    (:func:`metrics.stats.paired.paired_test`; both None with fewer than two paired topics), and
    R@``recall_k`` under both with its change ("drop" / "gain" / "no change", within
    ``CHANGE_TOLERANCE``) and interval. ``new_topics``: the run's score, rank and recall under b on
    the ``only_b`` topics (None when there are none). Kendall tau-b and tau_AP (a as reference)
    compare the two rankings on the compared topics. ``novel_gain[tag]`` = delta of each novel
    run (whose documents were added to the pool); ``others_recall_change[tag]`` = {"a", "b",
    "delta", "change"} of R@k of the other runs, with their mean and a sentence
    (``others_recall_summary``).
    """
    m = measure if isinstance(measure, Measure) else parse_measure(measure)
    if recall_k < 1:
        raise ValueError(f"recall_k must be >= 1, got {recall_k}")
    rk = Measure("R", recall_k)
    mode: Compat = None if compat == "honest" else compat
    if mode not in (None, "trec_eval"):
        raise ValueError(f"compat must be 'trec_eval', 'honest' or None, got {compat!r}")
    if (
        len(labels) != 2
        or not all(isinstance(x, str) and x.strip() for x in labels)
        or labels[0] == labels[1]
    ):
        raise ValueError(f"labels must be two different non-empty names, got {labels!r}")
    if not 0.0 < ci_level < 1.0:
        raise ValueError(f"ci_level must be strictly between 0 and 1, got {ci_level}")
    if not runs:
        raise ValueError("no runs given")
    unknown = sorted(set(novel) - set(runs))
    if unknown:
        raise ValueError(f"novel runs not among the runs given: {', '.join(unknown[:5])}")
    la, lb = labels
    wanted = None if topics is None else set(topics)
    universe = [q for q in (*qrels_a.qids, *qrels_b.qids) if wanted is None or q in wanted]
    split = common_topics(
        scorable_topics(qrels_a, relevance_level=relevance_level, topics=wanted),
        scorable_topics(qrels_b, relevance_level=relevance_level, topics=wanted),
        universe=universe,
    )
    if not split.compared:
        raise ValueError(
            f"no topic to compare: {la} and {lb} have no topic with a relevant judgment "
            f"(grade >= {relevance_level}) in common ({la} can score "
            f"{_id_list(split.only_a) or 'none'}; "
            f"{lb} can score {_id_list(split.only_b) or 'none'})"
        )

    def evaluator(q: Qrels, ids: tuple[str, ...]) -> Evaluator:
        return Evaluator(
            subset_qrels(q, ids), [m, rk], compat=mode, relevance_level=relevance_level, ci=None
        )

    ev_a, ev_b = evaluator(qrels_a, split.compared), evaluator(qrels_b, split.compared)
    ev_new = evaluator(qrels_b, split.only_b) if split.only_b else None
    res = {tag: (ev_a.evaluate(run), ev_b.evaluate(run)) for tag, run in runs.items()}
    sa = {t: a.aggregates[m.name].value for t, (a, _) in res.items()}
    sb = {t: b.aggregates[m.name].value for t, (_, b) in res.items()}
    ra, rb = _ranks(sa), _ranks(sb)
    new: dict[str, NewTopicScores] = {}
    if ev_new is not None:
        new_res = {tag: ev_new.evaluate(run) for tag, run in runs.items()}
        sn = {t: r.aggregates[m.name].value for t, r in new_res.items()}
        rn = _ranks(sn)
        new = {
            t: NewTopicScores(sn[t], rn[t], r.aggregates[rk.name].value) for t, r in new_res.items()
        }
    out: dict[str, RunComparison] = {}
    for tag, (a, b) in res.items():
        n, ci, p = _paired(a.per_query[m.name], b.per_query[m.name], ci_level)
        _, rci, _ = _paired(a.per_query[rk.name], b.per_query[rk.name], ci_level)
        rec_a, rec_b = a.aggregates[rk.name].value, b.aggregates[rk.name].value
        out[tag] = RunComparison(
            score_a=sa[tag],
            score_b=sb[tag],
            delta=sb[tag] - sa[tag],
            rank_a=ra[tag],
            rank_b=rb[tag],
            recall_a=rec_a,
            recall_b=rec_b,
            recall_delta=rec_b - rec_a,
            novel=tag in novel,
            n_topics=n,
            delta_ci=ci,
            delta_p=p,
            recall_delta_ci=rci,
            recall_change=_change(rec_b - rec_a),
            new_topics=new.get(tag),
        )
    others: dict[str, dict[str, Any]] = {
        t: {
            "a": _num(r.recall_a),
            "b": _num(r.recall_b),
            "delta": _num(r.recall_delta),
            "change": r.recall_change,
        }
        for t, r in out.items()
        if not r.novel
    }
    changes = [v["delta"] for v in others.values() if v["delta"] is not None]
    mean_change = math.fsum(changes) / len(changes) if changes else None
    both = [t for t in runs if not (math.isnan(sa[t]) or math.isnan(sb[t]))]
    x, y = {t: sa[t] for t in both}, {t: sb[t] for t in both}
    ok = len(both) >= 2
    return VersionComparison(
        measure=m.name,
        recall_measure=rk.name,
        compat="trec_eval" if mode == "trec_eval" else "honest",
        runs=out,
        kendall_tau=kendall_tau_b(x, y) if ok else math.nan,
        tau_ap=tau_ap(x, y) if ok else math.nan,
        novel_gain={t: out[t].delta for t in novel},
        others_recall_change=others,
        mean_others_recall_change=mean_change,
        labels=(la, lb),
        ci_level=ci_level,
        topics=split,
        topics_note=split.note((la, lb)),
        others_recall_summary=_recall_summary(others, rk.name, len(split.compared), mean_change),
    )
