"""Evaluate runs on sampled qrels with the inferred measures (issue 32, point 2).

:func:`evaluate_sampled` computes the inferred measures asked
(:data:`metrics.measures.sampled_registry.SAMPLED_MEASURES`) from
:class:`metrics.io.sampled.SampledQrels` and a run, as NIST's ``sample_eval.pl`` does
(:mod:`metrics.measures.sample_eval`): per topic, and over the topics evaluated (the run's
topics the qrels hold; a qrels topic the run did not answer is not averaged, as in the script)
the mean, or the sum for counts. Beside each mean, an interval over topics (percentile bootstrap
or Student t, as :class:`metrics.Evaluator` gives every measure): it says how much the mean would
move with other topics; it does not hold the sampling error of each topic's inferred value.
The result names the design (per stratum, pooled and sampled documents over every topic).
``statAP`` (:mod:`metrics.measures.statap`) reads each document's inclusion probability (on
sampled qrels, its stratum's sampled share); its mean, statMAP, is over the topics with a
sampled relevant document, and carries no interval unless asked: the interval of its sampling
error fell far short of 95% in the validation (:data:`STATMAP_CAVEAT`). ``ebAP``
(:mod:`metrics.measures.ebap`) carries its own: the judging error of ebMAP for these topics,
model-assisted (:data:`EBMAP_NOTE`).

:func:`sampled_warnings` says, for measures of complete qrels asked on sampled qrels, why each
is biased and which inferred measure to use instead.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from metrics.evaluation.results import Aggregate
from metrics.io.prels import Prels, prels_of
from metrics.io.sampled import SampledQrels
from metrics.io.tables import Run
from metrics.measures.ebap import ebap
from metrics.measures.names import Measure
from metrics.measures.sample_eval import CUTOFFS, sample_eval
from metrics.measures.sampled_registry import SampledMeasure, inferred_for, needs_inferred
from metrics.measures.statap import StatMAP, statap

__all__ = [
    "EBMAP_CI",
    "EBMAP_NOTE",
    "STATMAP_CAVEAT",
    "SampledResult",
    "evaluate_prels",
    "evaluate_sampled",
    "prels_of",
    "sampled_warnings",
]


def _num(x: float | None) -> float | None:
    return None if x is None or math.isnan(x) else float(x)


@dataclass(frozen=True)
class SampledResult:
    """A run's inferred measures: per topic, aggregated, with the sample's design."""

    run: str
    measures: list[str]
    queries: list[str]
    per_query: dict[str, dict[str, float]]
    aggregates: dict[str, Aggregate]
    strata: dict[str, tuple[int, int]]  # stratum -> (pooled, sampled), every qrels topic
    ci_method: str | None
    ci_level: float
    warnings: list[str] = field(default_factory=list)

    def to_dict(self, *, per_query: bool = True) -> dict[str, Any]:
        """JSON-able form, in the shape of :meth:`EvaluationResult.to_dict`, with ``sampled``."""
        out: dict[str, Any] = {
            "run": self.run,
            "mode": "sampled",
            "average": "macro",
            "ci": {"method": self.ci_method, "level": self.ci_level},
            "n_queries": len(self.queries),
            "sampled": {
                "strata": {s: {"pooled": n, "sampled": k} for s, (n, k) in self.strata.items()},
                "interval": "over topics, not each topic's sampling error; ebAP's: "
                + EBMAP_NOTE
                + "; statAP's (when given): "
                + STATMAP_CAVEAT,
            },
            "measures": {m: self.aggregates[m].to_dict() for m in self.measures},
            "warnings": list(self.warnings),
        }
        if per_query:
            out["per_query"] = {
                m: {q: _num(v) for q, v in vals.items()} for m, vals in self.per_query.items()
            }
        return out


def evaluate_sampled(
    qrels: SampledQrels,
    run: Run,
    measures: Sequence[SampledMeasure],
    *,
    gains: Mapping[int, int] | None = None,
    max_result_size: int = 1000,
    ci: Literal["bootstrap", "t"] | None = "bootstrap",
    ci_level: float = 0.95,
    seed: int = 0,
    statap_interval: bool = False,
) -> SampledResult:
    """The inferred ``measures`` of ``run`` on ``qrels`` (see the module docstring); ``gains``
    maps grades first (``sample_eval.pl -G``); ``statap_interval``: give statMAP its interval
    (:data:`STATMAP_CAVEAT` says what it is worth)."""
    wanted = list(dict.fromkeys(measures))
    stat = [m for m in wanted if m.name == "statAP"]
    eb = [m for m in wanted if m.name == "ebAP"]
    wanted = [m for m in wanted if m.name not in ("statAP", "ebAP")]
    cuts = {m.cutoff for m in wanted if m.cutoff is not None} | set(CUTOFFS)
    got = sample_eval(
        qrels,
        run,
        gains=gains,
        max_result_size=max_result_size,
        cutoffs=tuple(sorted(c for c in cuts if c != max_result_size)),
    )
    queries = list(got.per_topic)
    per_query: dict[str, dict[str, float]] = {}
    aggregates: dict[str, Aggregate] = {}
    for m in wanted:
        key = f"iP{m.cutoff}" if m.cutoff is not None else m.key
        if m.key.startswith("iprec"):  # the script gives these for the mean only
            aggregates[m.name] = Aggregate(got.all[key], None, None, None, len(queries), "macro")
            continue
        values = {q: got.per_topic[q][key] for q in queries}
        per_query[m.name] = values
        arr = np.fromiter(values.values(), np.float64, count=len(values))
        if m.count:
            aggregates[m.name] = Aggregate(float(arr.sum()), None, None, None, arr.size, "sum")
            continue
        mean = float(arr.mean()) if arr.size else math.nan
        lo = hi = None
        if ci is not None and arr.size:
            from metrics.stats.intervals import bootstrap_ci, t_ci  # not for ``evaluate --help``

            lo, hi = (
                bootstrap_ci(arr, level=ci_level, seed=seed)
                if ci == "bootstrap"
                else t_ci(arr, level=ci_level)
            )
        aggregates[m.name] = Aggregate(mean, lo, hi, ci, arr.size, "macro")
    got_stat = statap(prels_of(qrels), run) if stat or eb else None  # once for both
    if stat and got_stat is not None:
        per_query["statAP"], aggregates["statAP"] = _statap_summary(
            got_stat, interval=statap_interval
        )
    if eb:
        got_eb = ebap(qrels, run, stat=got_stat)
        per_query["ebAP"] = got_eb.per_topic
        lo, hi = got_eb.interval
        aggregates["ebAP"] = Aggregate(
            got_eb.mean, lo, hi, EBMAP_CI, len(got_eb.per_topic), "macro"
        )
    return SampledResult(
        run=run.tag or "run",
        measures=[m.name for m in wanted] + [m.name for m in stat] + [m.name for m in eb],
        queries=queries,
        per_query=per_query,
        aggregates=aggregates,
        strata=qrels.totals(),
        ci_method=ci,
        ci_level=ci_level,
    )


EBMAP_CI = "ebMAP judging error"  # the interval's name: for these topics, model-assisted
# What the validation measured of it (benchmarks/sampled_validation.py, README):
EBMAP_NOTE = (
    "the judging error of ebMAP for these topics (model-assisted: an empirical-Bayes count of "
    "each stratum's relevant documents); on Robust 2003 and TREC 2011 Medical sampled in strata "
    "at 10-30% it held the pool's full-judgment MAP in 91-100% of draws (at least 93% in 11 "
    "of 12 designs and budgets), its standard error 1.2-1.8 times the estimate's spread: wide, "
    "not short"
)
STATMAP_CI = "statMAP sampling"  # the interval's name: the sampling error, for these topics
# What the validation measured of that interval (benchmarks/sampled_validation.py, README):
STATMAP_CAVEAT = (
    "statMAP's interval is the sampling error of the estimate for these topics; on Robust 2003 "
    "and TREC 2011 Medical sampled at 10-30% it held the full-judgment MAP in 6-89% of draws, "
    "not 95% (its variance is short and its ratio bias does not average out over topics): "
    "read it as a lower bound on the uncertainty"
)


def _statap_summary(got: StatMAP, *, interval: bool) -> tuple[dict[str, float], Aggregate]:
    """statAP per topic and statMAP, with its interval (the sampling error of the estimate for
    these topics: :mod:`metrics.measures.statap`) only when ``interval``: the validation found
    it far short of 95% (:data:`STATMAP_CAVEAT`), so a board does not show it."""
    values = {q: t.ap for q, t in got.per_topic.items()}
    lo, hi = got.interval if interval and values else (None, None)
    method = STATMAP_CI if interval and values else None
    return values, Aggregate(got.mean, lo, hi, method, len(values), "macro")


def evaluate_prels(prels: Prels, run: Run, *, ci_level: float = 0.95) -> SampledResult:
    """statAP of ``run`` on a Million Query ``prels`` file, with statMAP's interval."""
    if abs(ci_level - 0.95) > 1e-9:
        raise ValueError("statMAP's interval is a 95% interval")
    values, agg = _statap_summary(statap(prels, run), interval=True)
    pooled = sum(len(docs) for docs in prels.topics.values())
    sampled = sum(len(prels.sample(q)) for q in prels.topics)
    return SampledResult(
        run=run.tag or "run",
        measures=["statAP"],
        queries=list(values),
        per_query={"statAP": values},
        aggregates={"statAP": agg},
        strata={"all": (pooled, sampled)},
        ci_method=STATMAP_CI,
        ci_level=0.95,
    )


def sampled_warnings(qrels: SampledQrels, measures: Sequence[Measure]) -> list[str]:
    """Why each measure of complete qrels in ``measures`` is biased on ``qrels``, and what to
    use instead (none for judgment-free and coverage measures; trec_eval's infAP is named when
    the sample has strata, which it ignores)."""
    unsampled = qrels.num_unsampled
    strata = qrels.totals()
    out: list[str] = []
    for m in measures:
        if m.family == "infAP":
            rates = {round(k / n, 6) for n, k in strata.values() if n}
            if len(rates) > 1:
                out.append(
                    f"{m.name} (trec_eval's) assumes one uniform sample; these qrels have "
                    f"{len(strata)} strata sampled at different rates: use xinfAP"
                )
            continue
        if not needs_inferred(m) or not unsampled:
            continue
        instead = inferred_for(m)
        use = (
            f"use {instead}"
            if instead
            else "it has no inferred form here: read it as a lower bound, or judge the sample"
        )
        if m.family == "nDCG" and m.cutoff is not None:
            use += " (over the whole ranking: inferred nDCG has no cut-off form)"
        out.append(
            f"{m.name} reads the {unsampled} pooled documents that were not sampled as "
            f"unjudged (non-relevant in its value), so it is biased low on sampled qrels: {use}"
        )
    return out
