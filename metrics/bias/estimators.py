r"""Estimators of the pooling penalty, and their error measured on the collection itself.

A run that did not contribute to a pool is scored against judgments other systems chose, so its
score is biased low. :func:`estimator_report` computes, for one measure, six *estimators* of the
score the run would get had it been pooled, and measures how well each works on this collection
with the validation harness of PoolBiasEstimators (Lipani's reference implementation,
``ScoresError`` / ``Analysis``): every pooled unit (a group, or a run when groups are unknown) is
left out in turn, its runs are estimated from the reduced pool, and the estimates are compared
with their scores on the full pool.

Estimators (the names are API keys)
-----------------------------------
``pool``
    No correction: the run's score on the pool as it is (the baseline every estimator must beat).
``webber_park``
    Webber & Park (2009), "Score adjustment for correction of pooling bias", SIGIR: the score plus
    the mean, over the runs of the pool, of what being in the pool is worth to them,
    ``score(p, pool) - score(p, pool without p's unit)`` (the reference's WebberOnRunsEstimator,
    its L1OO variant when units are groups). In the harness "the pool" is the reduced pool, so
    each delta is a nested leave-out: a judgment leaves ``pool \ {g, h}`` exactly when its
    contributor set is a subset of ``{g, h}``; per-judgment owners (one contributor) and pairs
    (two) score every nested scenario at once. A delta that is not a number (the nested pool
    left the run no topic to average) is skipped; the reference would return NaN.
``lipani2015``
    Lipani, Lupu & Hanbury (2015), "Splitting water: precision and anti-precision to reduce pool
    bias", SIGIR (the reference's LipaniEstimator). P@n only. For the run r: s = P@n(r), a =
    anti-P@n(r) (judged non-relevant in the top n / n) and k = 1 - s - a (the unjudged share).
    Each pooled run p is re-ranked as ``p∘r`` (below); dS_p, dA_p = the change of P@n and anti-P@n
    from p to p∘r on the same qrels, dK_p = -dS_p - dA_p. With means DS, DA, DK over the pool's
    runs and lambda = DS * a - DA * s, the estimate is s + k * max(DK, 0) when lambda > 0, else s.
    Everything is at the aggregate level: s, a and each dS_p are means over the run's topics.
``lipani2016``
    Lipani, Lupu & Hanbury (2016), "The curious incidence of bias corrections in the pool", ECIR,
    as the reference's query-based LipaniEstimatorQB: the same correction computed per topic
    (P@n) and averaged; for R@n, per topic ``(n P@n + n c_n) / (R + n c_n + max(d - n, 0) c_d)``
    with c_n, c_d the topic's P corrections at n and at the pool depth d and R its relevant count
    (0 when R = 0).
``condensed``
    Sakai (2007): the measure on the condensed list, unjudged documents removed
    (:func:`metrics.measures.basic.condensed`).
``upper``
    The unjudged documents in the top k counted relevant (:func:`metrics.measures.basic.optimistic`,
    per topic the larger of that value and the plain one, as :mod:`metrics.evaluation.evaluator`'s
    upper treatment). Top-k measures only.

``p∘r`` exactly (the reference's ``getNewRunBySelectedRuns`` / ``getNewScore``): p's documents,
each given the key x = r's rank of it plus a small "fix" when r retrieved it (fix = 1e-4 when both
ranks are equal, (p's rank + 1) / 1e4 when r ranks it lower than p, p's rank / 1e8 when higher),
and p's rank + 1e-4 otherwise; ranked by x ascending, ties by docid descending. x is computed in
float64 (the reference casts the score it derives from x to float32, where fixes below the float's
resolution become ties broken by docid; those rare orders differ). Documents r retrieved but p
did not are not added. On a topic p did not answer, p∘r is empty (both P@n are 0: no change).

The harness (``runs`` of the report)
------------------------------------
For each unit g among the pooled runs: the depth-d pool is rebuilt without g (the qrels lose the
judgments only g contributed); each run of g gets ``score`` (the reduced pool's score),
``score_full_pool``, and each estimator's estimate, computed with the other pooled runs as the
pool. Per estimator: MAE = mean |estimate - score_full_pool|; SRE = sum over runs of |rank of
score_full_pool among all full-pool scores - rank of the estimate among the other runs' full-pool
scores| (ranks = 1 + number strictly higher: the reference's ``findRank``); SRE* = the same, each
run counting only the runs it passed over (positions, by full-pool score descending and tag
descending, between the two ranks) whose per-topic full-pool scores differ from its own by a
two-sided paired t-test at p < 0.05; kendall_tau = tau-b between full-pool scores and estimates.
The full-pool score is the reference's ``TrueEstimator`` for leave-one-run-out; for groups the
reference scores each run on the pool without its group's other runs, here it is the full pool.

``top75``: as the reference's ``get75TopLRuns``, only the best round(0.75 n) pooled runs by
full-pool score (Java's Math.round; ties in the order given) make the pool; the others are left
out of the analysis altogether (neither pooled nor estimated).

Runs that were not pooled (``not_pooled``) get every estimate from the full pool, as a penalty
(estimate - score) and as a percentage of the run's own score, with their novelty (``judged``:
Judged@k, ``unjudged``: the unjudged documents in the top k; k the measure's cutoff, else the pool
depth), their ``bounds`` (P@k: the score with the unjudged documents in the top k non-relevant
and relevant, ``bounds_exact``; other measures [0, 1]), the estimator ``recommended`` for runs as
novel (the lowest error in the run's Judged@k bin, :func:`metrics.bias.prediction.recommend_for`;
None, with why, when the bin holds fewer than 3 validation runs), and per estimate a 95%
``interval`` for the run's full-pool score: a prediction interval calibrated on the validation's
left-out runs, which includes the estimator's own error (:mod:`metrics.bias.prediction`;
``interval_method``, ``interval_why``, ``extrapolating``: the bounds when the run is more novel
than every left-out run). ``by_novelty`` gives each estimator's error per Judged@k bin of the
validation's runs. (The t interval of the mean delta, which reports gave before, is an interval
on a mean correction: it held for 0-47% of left-out runs; ``deltas`` still reports it.)

Scores are exact, computed in float64 without the reference's 4-decimal rounding; topics are
averaged as in :mod:`metrics.bias` (trec_eval mode: topics in the reduced qrels and the run).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from metrics.bias.estimator_report import ALL, EstimatorReport, _java_round
from metrics.bias.leaveout import LeaveOut
from metrics.bias.nested import EstimatorAnalysis
from metrics.io import Qrels, Run
from metrics.measures.names import Measure

if TYPE_CHECKING:
    from metrics.bias.leaveout import LeaveOneOut


__all__ = [
    "estimator_report",
    "top75_pooled",
]


def estimator_report(
    qrels: Qrels,
    runs: Mapping[str, Run],
    measure: str | Measure,
    leave: LeaveOut | None = None,
    *,
    top75: bool = False,
    estimators: Sequence[str] = ALL,
) -> EstimatorReport:
    """Every estimator of the pooling penalty for ``measure``, validated on the pooled runs.

    ``leave`` defaults to leaving out groups (``LeaveOut(leave_out="group")``), which falls back
    to runs when ``groups`` is None. See the module docstring for the definitions. For several
    measures over the same runs prepare an :class:`EstimatorAnalysis` once and call
    :meth:`EstimatorAnalysis.report`.
    """
    leave = LeaveOut(leave_out="group") if leave is None else leave
    if leave.leave_out == "group" and leave.groups is None:
        leave = replace(leave, leave_out="run")
    analysis = EstimatorAnalysis(qrels, runs, leave)
    if not top75:
        return analysis.report(measure, estimators=estimators)
    keep, dropped = top75_pooled(analysis.loo, measure)
    runs2 = {t: r for t, r in runs.items() if t not in set(dropped)}
    sub = EstimatorAnalysis(qrels, runs2, replace(leave, pooled=keep))
    rep = sub.report(measure, estimators=estimators, top75=True)
    return EstimatorReport(**{**rep.__dict__, "dropped": tuple(dropped)})


def top75_pooled(analysis: LeaveOneOut, measure: str | Measure) -> tuple[list[str], list[str]]:
    """The best round(0.75 n) pooled runs by full-pool score (ties in the order given), and the
    others (the reference's get75TopLRuns)."""
    scores = analysis.scores(measure)
    pooled = list(analysis.pooled)
    ranked = sorted(pooled, key=lambda t: -scores[t] if math.isfinite(scores[t]) else math.inf)
    n = _java_round(0.75 * len(pooled))
    keep = set(ranked[:n])
    return [t for t in pooled if t in keep], [t for t in pooled if t not in keep]
