"""Evaluate runs against qrels: per-query values, aggregates with confidence intervals.

Two modes (DESIGN section 5), named in every result:

``compat="trec_eval"`` reproduces trec_eval 10.0: the queries averaged are those in both the qrels
and the run (``complete=True``: every qrels query, an unanswered one scoring 0, like ``-c``); a
query whose judgments hold no relevant document is averaged in with its zeros; NumRel, NumRet and
NumRelRet are summed, except that with ``complete`` trec_eval's ``num_rel`` summary counts every
qrels line with a grade > 0 whatever the relevance level (m_num_rel.c; ``NumRel(rel=2)``, which
trec_eval has not, is summed). Rank column ignored, order = score descending, ties by docid
descending.

``compat=None`` (honest, the default) uses the same per-query definitions, and:

- queries with no relevant document are excluded from every average, and reported;
- every qrels query counts: a query the run did not answer scores 0, and the result says how
  many (``unanswered``, a line of ``excluded_summary``);
- run queries without judgments are excluded, and reported;
- R@k is reported with ceiling@k (mean over queries of min(k, R)/R);
- each top-k measure (P, R, RR, AP, nDCG, Success at k) carries Judged@k and three treatments of
  unjudged documents (absent from the qrels, or a negative grade):
- AP, RR and nDCG without a cutoff, Rprec and bpref carry Judged (the judged fraction of the
  whole ranking) and the same three treatments over the whole ranking (``upper``: every
  unjudged retrieved document relevant; for bpref, which ignores unjudged documents,
  ``condensed`` equals the measure).

  - ``lower``: unjudged = non-relevant (the measure itself);
  - ``condensed``: unjudged documents removed before cutting at k (Sakai 2007);
  - ``upper``: the u_k unjudged documents in the top k count as relevant with grade =
    ``relevance_level``; being relevant documents, they also join R (R + u_k) and the ideal
    ranking (u_k more gains of ``relevance_level``). For P@k, R@k, RR@k and Success@k that can
    only raise the score; for AP@k and nDCG@k the larger normaliser can lower it, so ``upper``
    is the larger of that value and ``lower``, per query, and upper >= lower always holds.

Averaging: ``macro`` (mean over queries) by default. ``micro`` = sum of per-query numerators /
sum of denominators, defined for ratio-of-counts measures: R@k = sum |rel in top k| / sum R,
P@k = sum |rel in top k| / sum k, ceiling@k, Rprec, Judged@k, Unjudged@k, Success@k (micro =
macro for P and Success); for AP, RR, nDCG, bpref and infAP it is refused with an error.

Confidence intervals come from :mod:`metrics.stats` (percentile bootstrap over queries, or
Student t). For micro averages the interval is that of the mean of the linearised values
z_i = m + (num_i - m den_i) / mean(den) (the delta method for a ratio estimator), whose mean is m.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Literal

import numpy as np
import numpy.typing as npt

from metrics._docindex import DocIndex
from metrics.evaluation.results import (
    NO_RELEVANT,
    NOT_IN_QRELS,
    NOT_IN_RUN,
    Aggregate,
    EvaluationResult,
    Excluded,
)
from metrics.io import Qrels, Run
from metrics.measures.basic import condensed, optimistic, truncated
from metrics.measures.names import Measure, parse_measures
from metrics.measures.ranked import Ideal, Ranked
from metrics.measures.registry import FAMILIES, compute

__all__ = [
    "Evaluator",
    "evaluate",
]

I64 = npt.NDArray[np.int64]


F64 = npt.NDArray[np.float64]


Compat = Literal["trec_eval"] | None


Average = Literal["macro", "micro"]


CiMethod = Literal["bootstrap", "t"] | None


GEO_MEAN_FLOOR = 0.00001  # trec_eval's MIN_GEO_MEAN: gm_map of a query with AP 0


# the families micro-averaging applies to, as the error message lists them
_MICRO_FAMILIES = ", ".join(
    f.name if f.cutoff == "none" else f"{f.name}@k" for f in FAMILIES.values() if f.micro
)


class Evaluator:
    """Qrels prepared once for evaluating many runs with the same settings.

    ``Evaluator(qrels, ["nDCG@10", "R@100"]).evaluate(run)`` is :func:`evaluate` without
    redoing the qrels work (grouping, hashing, R, ideal gains) for every run.
    """

    def __init__(
        self,
        qrels: Qrels | Mapping[str, Mapping[str, int]],
        measures: Sequence[str | Measure],
        *,
        compat: Compat = None,
        relevance_level: int = 1,
        complete: bool = False,
        average: Average = "macro",
        ci: CiMethod = "bootstrap",
        ci_level: float = 0.95,
        seed: int = 0,
        n_resamples: int = 2000,
        depth: int | None = None,
        judged_only: bool = False,
        num_docs: int | None = None,
    ) -> None:
        if compat not in (None, "trec_eval"):
            raise ValueError(f"compat must be None or 'trec_eval', got {compat!r}")
        if average not in ("macro", "micro"):
            raise ValueError(f"average must be 'macro' or 'micro', got {average!r}")
        if ci not in (None, "bootstrap", "t"):
            raise ValueError(f"ci must be None, 'bootstrap' or 't', got {ci!r}")
        if not 0.0 < ci_level < 1.0:
            raise ValueError(f"ci_level must be strictly between 0 and 1, got {ci_level}")
        if relevance_level < 1:
            raise ValueError(f"relevance_level must be >= 1, got {relevance_level}")
        wanted: list[Measure] = []
        for m in measures:
            wanted.extend([m] if isinstance(m, Measure) else parse_measures([m]))
        self.measures: list[Measure] = list(dict.fromkeys(wanted))
        if not self.measures:
            raise ValueError("no measures requested")
        if average == "micro":
            bad = [m.name for m in self.measures if not m.micro_defined]
            if bad:
                raise ValueError(
                    f"micro-averaging is not defined for {', '.join(bad)}: it applies to "
                    f"ratios of counts ({_MICRO_FAMILIES}); these are means of per-query "
                    "ratios, so use average='macro'"
                )
        if depth is not None and depth < 1:
            raise ValueError(f"depth must be >= 1, got {depth}")
        if num_docs is not None and num_docs < 0:
            raise ValueError(f"num_docs must be >= 0, got {num_docs}")
        self.depth = depth
        self.judged_only = judged_only
        self.num_docs = num_docs
        self.compat = compat
        self.relevance_level = relevance_level
        self.complete = complete
        self.average = average
        self.ci = ci
        self.ci_level = ci_level
        self.seed = seed
        self.n_resamples = n_resamples
        self.honest = compat is None
        self.qrels = qrels if isinstance(qrels, Qrels) else Qrels.from_dict(qrels)
        self._companions, self._computed = self._plan()
        self._prepare()

    # -- setup ---------------------------------------------------------------------------
    def _plan(self) -> tuple[dict[Measure, dict[str, Measure]], list[Measure]]:
        companions: dict[Measure, dict[str, Measure]] = {}
        if self.honest:
            for m in self.measures:
                if m.cutoff is not None and m.spec.companions:
                    companions[m] = {
                        role: Measure(family, m.cutoff) for role, family in m.spec.companions
                    }
                elif m.cutoff is None and m.spec.treat_full:  # AP, bpref: Judged at run depth
                    companions[m] = {"judged": Measure("Judged")}
        extra = [c for comp in companions.values() for c in comp.values()]
        computed = list(dict.fromkeys(self.measures + extra))
        return companions, computed

    def _prepare(self) -> None:
        q = self.qrels
        self._qindex = {qid: i for i, qid in enumerate(q.qids)}
        self._level_counts: dict[int, tuple[I64, I64]] = {}
        self._num_rel, self._num_nonrel = self._counts(self.relevance_level)
        self._ideal = Ideal.from_grades(q.grades, q.offsets)
        self._index = DocIndex.build(q.docids, q.offsets)  # finds run docids in the qrels
        self._last_ideal: tuple[bytes, Ideal] | None = None

    # -- evaluation ------------------------------------------------------------------------
    def rows(self, run: Run | Mapping[str, Mapping[str, float]]) -> tuple[list[str], Ranked]:
        """The evaluated queries and their judged rows, in trec_eval order (after ``depth`` and
        ``judged_only``): what every measure of :meth:`evaluate` reads."""
        if not isinstance(run, Run):
            run = Run.from_dict(run)
        names, _, _, ranked, _ = self._select(run)
        return names, ranked

    def _select(self, run: Run) -> tuple[list[str], list[Excluded], list[str], Ranked, I64]:
        qids = self.qrels.qids
        run_index = {qid: i for i, qid in enumerate(run.qids)}
        excluded: list[Excluded] = []
        unanswered: list[str] = []
        chosen: list[int] = []
        for i, qid in enumerate(qids):
            answered = qid in run_index
            if self.honest:
                if self._num_rel[i] == 0:
                    excluded.append(Excluded(qid, NO_RELEVANT))
                    continue
            elif not answered and not self.complete:
                excluded.append(Excluded(qid, NOT_IN_RUN))
                continue
            if not answered:
                unanswered.append(qid)
            chosen.append(i)
        excluded.extend(Excluded(qid, NOT_IN_QRELS) for qid in run.qids if qid not in self._qindex)
        sel_q = np.array(chosen, dtype=np.int64)
        ranked = self._ranked(run, sel_q, [run_index.get(qids[i], -1) for i in chosen])
        if self.depth is not None:  # trec_eval -M: cut after ordering, before anything else
            ranked = truncated(ranked, self.depth)
        if self.judged_only:  # trec_eval -J: unjudged documents removed, ranks closed up
            ranked = condensed(ranked)
        if self.num_docs is not None:
            ranked = replace(ranked, num_docs=self.num_docs)
        return [qids[i] for i in chosen], excluded, unanswered, ranked, sel_q

    def evaluate(self, run: Run | Mapping[str, Mapping[str, float]]) -> EvaluationResult:
        """Evaluate one run (a :class:`Run` or ``{qid: {docid: score}}``)."""
        if not isinstance(run, Run):
            run = Run.from_dict(run)
        names, excluded, unanswered, ranked, sel_q = self._select(run)

        per_query: dict[str, dict[str, float]] = {}
        aggregates: dict[str, Aggregate] = {}
        results: dict[Measure, tuple[F64, F64, F64]] = {}
        by_level: dict[int, Ranked] = {self.relevance_level: ranked}

        def at_level(m: Measure) -> Ranked:
            level = m.rel or self.relevance_level
            if level not in by_level:  # P(rel=2)@10: the same rows, relevant from grade 2
                num_rel, num_nonrel = self._counts(level)
                by_level[level] = replace(
                    ranked, level=level, num_rel=num_rel[sel_q], num_nonrel=num_nonrel[sel_q]
                )
            return by_level[level]

        for m in self._computed:
            results[m] = value, num, den = compute(m, at_level(m))
            per_query[m.name] = dict(zip(names, value.tolist(), strict=True))
            aggregates[m.name] = self._aggregate(m, value, num, den)
            if self.compat == "trec_eval" and self.complete and m.trec_name == "num_rel":
                # trec_eval -c recounts its summary num_rel from the qrels (m_num_rel.c,
                # te_calc_avg_num_rel): every line with a grade > 0, whatever -l
                total = float(np.count_nonzero(self.qrels.grades > 0))
                aggregates[m.name] = replace(aggregates[m.name], value=total)

        treatments: dict[str, dict[str, Aggregate]] = {}
        per_query_treatments: dict[str, dict[str, dict[str, float]]] = {}
        if self.honest:
            cond_at: dict[int, Ranked] = {}
            top_k = [
                m
                for m in self.measures
                if (m.spec.treatments and m.cutoff is not None)
                or (m.spec.treat_full and m.cutoff is None)
            ]
            key = {m: (m.rel or self.relevance_level, int(m.cutoff or 0)) for m in top_k}
            last_use = {key[m]: i for i, m in enumerate(top_k)}
            upper_at: dict[tuple[int, int], Ranked] = {}  # P@10 and nDCG@10 share the one at 10
            for i, m in enumerate(top_k):
                lower = results[m]
                base = at_level(m)
                if base.level not in cond_at:
                    cond_at[base.level] = condensed(base)
                mid = compute(m, cond_at[base.level])
                if key[m] not in upper_at:
                    upper_at[key[m]] = optimistic(base, None if m.cutoff is None else int(m.cutoff))
                opt = compute(m, upper_at[key[m]])
                if last_use[key[m]] == i:  # a run-sized ranking: keep it no longer than needed
                    del upper_at[key[m]]
                up_value = np.maximum(opt[0], lower[0])
                # a ratio of counts keeps the optimistic ranking's counts (micro-averaging sums
                # them); for the others (AP, nDCG, RR) the value is all there is
                up = (
                    (up_value, *opt[1:])
                    if m.spec.micro
                    else (up_value, up_value, np.ones(up_value.size))
                )
                # "lower" is the measure itself, aggregated above
                treatments[m.name] = {"lower": aggregates[m.name]}
                per_query_treatments[m.name] = {"lower": dict(per_query[m.name])}
                for tname, res in (("condensed", mid), ("upper", up)):
                    treatments[m.name][tname] = self._aggregate(m, *res)
                    per_query_treatments[m.name][tname] = dict(
                        zip(names, res[0].tolist(), strict=True)
                    )

        return EvaluationResult(
            run=run.tag,
            mode="trec_eval" if self.compat == "trec_eval" else "honest",
            average=self.average,
            relevance_level=self.relevance_level,
            complete=self.complete or self.honest,
            ci_method=self.ci,
            ci_level=self.ci_level,
            measures=[m.name for m in self.measures],
            queries=names,
            per_query=per_query,
            aggregates=aggregates,
            excluded=excluded,
            companions={
                m.name: {role: c.name for role, c in comp.items()}
                for m, comp in self._companions.items()
            },
            treatments=treatments,
            per_query_treatments=per_query_treatments,
            unanswered=unanswered,
        )

    def _ranked(self, run: Run, sel_q: I64, run_rows: list[int]) -> Ranked:
        """Rows of the chosen queries (qrels indices ``sel_q``) in trec_eval order, judged."""
        order = run.order
        rr = np.array(run_rows, dtype=np.int64)
        answered = rr >= 0
        starts = np.where(answered, run.offsets[rr], 0)
        sizes = np.where(answered, run.offsets[rr + 1] - starts, 0)
        offsets = np.zeros(sel_q.size + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        n = int(offsets[-1])
        # their rows of ``order``: a slice per stretch of queries that are consecutive in the run
        gap = starts - offsets[:-1]
        head = np.ones(sel_q.size, dtype=bool)
        head[1:] = gap[1:] != gap[:-1]
        bounds = np.append(np.flatnonzero(head), sel_q.size)
        first, last = bounds[:-1], bounds[1:]
        pieces = [
            order[s : s + m]
            for s, m in zip(
                starts[first].tolist(), (offsets[last] - offsets[first]).tolist(), strict=True
            )
        ]
        rows = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int64)
        at, pos = self._lookup(run, rows, sel_q, sizes)
        grade = np.zeros(n, dtype=np.int64)
        grade[at] = self.qrels.grades[pos]
        found = np.zeros(n, dtype=bool)
        found[at] = True
        return Ranked(
            offsets=offsets,
            grade=grade,
            pooled=found,
            judged=found & (grade >= 0),
            num_rel=self._num_rel[sel_q],
            num_nonrel=self._num_nonrel[sel_q],
            ideal=self._ideal_of(sel_q),
            level=self.relevance_level,
        )

    def _ideal_of(self, sel_q: I64) -> Ideal:
        """Ideal gains of the queries ``sel_q``. The last one is kept: runs mostly answer the
        same queries, and its cumulative ideal DCG is then computed once."""
        key = sel_q.tobytes()
        if self._last_ideal is not None and self._last_ideal[0] == key:
            return self._last_ideal[1]
        full = self._ideal
        counts = np.diff(full.offsets)[sel_q]
        ioff = np.zeros(sel_q.size + 1, dtype=np.int64)
        np.cumsum(counts, out=ioff[1:])
        gather = np.repeat(full.offsets[:-1][sel_q] - ioff[:-1], counts) + np.arange(
            int(ioff[-1]), dtype=np.int64
        )
        ideal = Ideal(full.gains[gather], ioff)
        self._last_ideal = (key, ideal)
        return ideal

    def _lookup(self, run: Run, rows: I64, sel_q: I64, sizes: I64) -> tuple[I64, I64]:
        """Run rows ``rows`` (``sizes[i]`` of them for qrels query ``sel_q[i]``, in that order)
        that the qrels judge: their indices into ``rows`` and their qrels rows."""
        return self._index.find(run.docids, run.hashes, rows, sel_q, sizes)

    def _counts(self, level: int) -> tuple[I64, I64]:
        """Per qrels query: R and the judged non-relevant count at relevance level ``level``."""
        if level not in self._level_counts:
            q = self.qrels
            nq = len(q.qids)
            seg = np.repeat(np.arange(nq, dtype=np.int64), np.diff(q.offsets))
            judged_nonrel = (q.grades >= 0) & (q.grades < level)
            self._level_counts[level] = (
                np.bincount(seg[q.grades >= level], minlength=nq).astype(np.int64),
                np.bincount(seg[judged_nonrel], minlength=nq).astype(np.int64),
            )
        return self._level_counts[level]

    def _sum(self, values: F64) -> float:
        """The sum of per-query values: as trec_eval sums them (doubles, left to right, queries
        in the order it evaluates them) in trec_eval mode, so its printed figures come out
        byte-identical; correctly rounded (no drift with the number of queries) otherwise."""
        if self.compat == "trec_eval":
            total = 0.0
            for v in values.tolist():
                total += v
            return total
        return math.fsum(values.tolist())

    def _aggregate(self, m: Measure, value: F64, num: F64, den: F64) -> Aggregate:
        n = int(value.size)
        if m.is_count:
            return Aggregate(self._sum(value), None, None, None, n, "sum")
        if n == 0:
            return Aggregate(math.nan, math.nan, math.nan, self.ci, 0, self.average)
        if m.spec.geometric:  # trec_eval's gm_map: exp(mean log max(v, 0.00001))
            logs = np.log(np.maximum(value, GEO_MEAN_FLOOR))
            return Aggregate(math.exp(self._sum(logs) / n), None, None, None, n, "geometric")
        if self.average == "micro":
            total = self._sum(den)
            agg = self._sum(num) / total if total > 0 else 0.0
            mean_den = total / n
            sample = agg + (num - agg * den) / mean_den if mean_den > 0 else np.zeros(n)
        else:
            agg = self._sum(value) / n
            sample = value
        lo: float | None = None
        hi: float | None = None
        if self.ci is not None:
            # imported here, not at the top: reading files through the package stays scipy-free
            from metrics.stats.intervals import bootstrap_ci, t_ci
        if self.ci == "bootstrap":
            lo, hi = bootstrap_ci(
                sample, level=self.ci_level, n_resamples=self.n_resamples, seed=self.seed
            )
        elif self.ci == "t":
            lo, hi = t_ci(sample, level=self.ci_level)
        return Aggregate(agg, lo, hi, self.ci, n, self.average)


def evaluate(
    qrels: Qrels | Mapping[str, Mapping[str, int]],
    run: Run | Mapping[str, Mapping[str, float]],
    measures: Sequence[str | Measure],
    *,
    compat: Compat = None,
    relevance_level: int = 1,
    complete: bool = False,
    average: Average = "macro",
    ci: CiMethod = "bootstrap",
    ci_level: float = 0.95,
    seed: int = 0,
) -> EvaluationResult:
    """Evaluate ``run`` against ``qrels`` on ``measures``; see the module docstring.

    ``compat="trec_eval"`` reproduces trec_eval 10.0 (``complete`` = its ``-c``); the default
    honest mode excludes zero-relevant queries, scores unanswered queries 0, and adds ceilings,
    Judged@k and unjudged treatments. Every aggregate carries a ``ci_level`` interval by
    ``ci`` ("bootstrap" over queries, "t", or None).
    """
    return Evaluator(
        qrels,
        measures,
        compat=compat,
        relevance_level=relevance_level,
        complete=complete,
        average=average,
        ci=ci,
        ci_level=ci_level,
        seed=seed,
    ).evaluate(run)
