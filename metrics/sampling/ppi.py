"""Run measures estimated from automatic labels for the whole pool corrected by a human sample.

Prediction-powered inference (Angelopoulos et al. 2023, "Prediction-powered inference",
Science 382) in its survey-sampling form, the difference estimator (Särndal, Swensson and
Wretman 1992, "Model Assisted Survey Sampling", §6.3), as Oosterhuis et al. (KDD 2024) use it
for IR evaluation with generative judges.

Target
------
Items are pool entries i = (topic q, docid d). Every item has an automatic grade a_i; a sample S
of items also has a human grade y_i. The target is each run's measure under the human grade of
EVERY pool item (documents outside the pool are non-relevant, as trec_eval scores a run against a
pool's qrels), macro-averaged over the pool's topics, a topic the run did not answer scoring 0:

- ``P@k``  = rel(top k) / k;
- ``R@k``  = rel(top k) / R, R = relevant items of the topic in the pool;
- ``nDCG@k`` = DCG@k / IDCG@k, gain = grade, discount log2(rank + 1), the ideal list from the
  pool's grades (trec_eval ``ndcg_cut``);
- ``AP`` to the run's depth: (1/R) sum over relevant retrieved items of P@rank.

Relevance is grade >= ``threshold``. A topic with R = 0 (IDCG = 0 for nDCG) scores 0 on R@k, AP
and nDCG@k, as in trec_eval (it stays in the average). Grades must be integers >= 0.

Estimator
---------
Every measure is a function of item-level label functionals f_h(y) = [y >= h], h = 1..G
(G the largest grade or the threshold): rel = f_threshold, gain = sum_h f_h, and the ideal DCG
is IDCG@k = sum_h D(min(C_h, k)) with C_h the topic's count of items with grade >= h and
D(m) = sum_{j<=m} 1/log2(j+1) (linearly interpolated between integers). With inclusion
probabilities pi_i > 0 and S_i the sample indicator, each functional is corrected per item,

    f~_i = p_i + S_i / pi_i * (f(y_i) - p_i),          E[f~_i] = f(y_i),

for ANY prediction p_i fixed before the sample is drawn: p_i = f(a_i) (the automatic grade's
functional), or better its calibrated rate (below). Linear totals (relevant retrieved in the top
k, DCG, counts per grade, R) are then unbiased. The AP numerator
sum_i rel_i / rank_i * (1 + sum_{i' ranked above i} rel_i') has pair terms; the product of two
corrected values is unbiased for independent inclusions (Poisson sampling) and nearly so (a
covariance of order 1/N) for sampling without replacement. Each measure theta = g(totals) is
estimated per topic, then averaged.

Every topic is linearised at its own point: the pilot's labels, and elsewhere the predictions
moved by one logit offset per topic towards the topic's relevant count estimated from its
sample, shrunk by empirical Bayes between the two (:mod:`metrics.sampling.topic_point`; the
calibration does not see topics, and a point whose relevant count is far from the topic's leaves
the ratio measures biased by terms beyond the second order): its measure there with the sampled
labels in, plus the sampled residuals weighted (1/pi_i - 1) along the gradient at that point,
plus the second-order term (:mod:`metrics.sampling.second_order`): the cross products of the
residuals of items not judged with certainty, estimated by Horvitz-Thompson over pairs. A
topic's relevant items depart from the calibrated rates together (the calibration does not see
topics), so those cross products do not average to 0, and the first-order estimate of a ratio is
low by about their sum. The moved point's own O(1/n) bias (an item pulls the point towards its
label) is estimated and added back, and its terms join the linearised errors. A topic whose
correction sample is expected to hold fewer than one relevant item, or that the predictions give
fewer than ``_SMALL_TOPIC`` = 8, takes instead of its measure at the point its expected measure
under the calibrated model (the mean of ``_DRAWS`` = 32 draws from a fixed seed,
:meth:`PoolStructure._expected_cells`): it may hold no relevant item at all (and score 0, a jump
no expansion sees); its variance adds the spread of that measure over the draws. (An earlier
plug-in form, the ratio of the corrected totals with its gradient at those totals, gave
intervals 5-6 times the estimate's spread for R@10, nDCG@10 and AP: 1/R at an estimated R of a
topic with ~25 sampled items; ``benchmarks/README.md``.) The choice depends on the pilot, the
design and the topic's moved point.

The ratio measures' macro values are clipped to [0, 1]; P@k is linear in the corrected
labels and left unclipped (unbiased but for the moved point's O(1/n) term, corrected above).

Calibrated predictor. The items judged with certainty (pi = 1: the pilot slice that every design
of :func:`sample` judges first) estimate p_i = E[f(y) | a_i] (per automatic grade, optionally
per (grade, group), e.g. :meth:`PoolStructure.popularity`: how many runs rank the item high),
shrunk to coarser rates and, at the coarsest, to the judge's own label f(a_i) (one pseudo-
observation: a judge that agrees with every pilot label keeps its labels, so a perfect judge
gives the full-judgment value with width 0). The estimate is conditional on the pilot; given the
pilot the predictor is fixed, so the correction above stays unbiased. This is what makes a noisy
judge useful: a raw grade that is wrong 30% of the time is replaced by the rate at which it is
right. The pilot items themselves enter with their human labels. When the judge's raw score of
every item is given (``score=``: an embedding judge's cosine), the predictor is instead a
ridge-penalised logistic fit of f_h(y) on the standardised score, the grade and the group
(:func:`_calibrated_scores`): a grade keeps only which band a score fell in, and a cell per
(grade, group) spreads a pilot of ~100 items thin.

Variance (linearisation): theta~ - theta ~= sum_i (S_i / pi_i - 1) v_i with v_i = sum_h (d theta
/ d f_h,i) (f_h(y_i) - p_h,i), the gradient taken at the fixed point and moved by the
second-order term's own first-order part (the gradient at the estimated point, to first order,
without dividing by an estimated denominator). So the error is that of a Horvitz-Thompson
total of v, whose variance is estimated from the sample by the design's formula:

- ``uniform``: simple random sampling without replacement (SRSWOR) of n of N items,
  N^2 (1 - n/N) s_v^2 / n;
- ``stratified``: SRSWOR within strata, sum_h N_h^2 (1 - n_h/N_h) s_{v,h}^2 / n_h;
- ``active``: Poisson sampling with unequal pi_i, sum_{i in S} (1 - pi_i) v_i^2 / pi_i^2.

Variance floor. These design estimates rest on the sampled residuals alone. Where a stratum's
rare relevant items were all missed, its residuals agree, the estimate is near 0, and that is
exactly when the point estimate is furthest off (Neyman and active designs sample the large
"judge says 0" stratum thinly).
Each run's P@k variance is therefore the mean of the design estimate and a model-based one (the
larger of the two, used before, overstated it 1.6-1.8 times under the Neyman and active designs on
TREC 2011 Medical: two noisy estimates of the same variance), the same HT variance with each sampled
v_i^2 replaced by its expectation g_i' Sigma_c g_i in the item's calibration cell c (automatic grade
x group; Sigma_c the cell's residual covariance, shrunk to the predictions' Bernoulli covariance
with rates kept 1/(n_c + 2) away from 0 and 1; :meth:`PoolStructure._model_covariance`). Covariances
between runs keep the model's correlations, so differences still cancel shared errors.
``estimate(variance_floor=False)`` gives the design estimate alone (exactly unbiased for P@k). The
ratio measures do not take the model's: their model variance (independent items at the moved point's
rates) overstates their error's variance (``benchmarks/README.md``), and their thin topics add the
model's spread.

Power tuning (PPI++, Angelopoulos, Duchi and Zrnic 2023, "PPI++: efficient prediction-powered
inference"). A weak judge can make the estimate noisier than the human sample alone: its
calibration cells are finer than the judge-free ones, and where its predictions are poor per
topic the ratio measures' gradients grow. So the estimate is computed twice on the same sample,
with the judge's calibrated predictions (e1) and with the judge-free ones (e0: the pilot's rate per
group, what the human sample alone gives), and reported as lam e1 + (1 - lam) e0, lam in [0, 1]
per measure minimising the design variance summed over runs (:func:`_power`). Each of e1 and e0
is unbiased (to first order), so any fixed blend is, and its error is lam v1 + (1 - lam) v0 on the
same items; lam estimated from the sample costs a second-order term (as in PPI++). The design
variance of the blend is at most the smaller of the two; ``estimate(power=False)`` gives e1
alone, and :attr:`ArrayEstimate.judge_weight` the lam used.

Items with pi_i = 1 (a pilot or calibration slice judged first, see :func:`sample`) are known
exactly and add no variance: the estimate is conditional on them, which keeps it unbiased even
though the later probabilities were chosen from the pilot's labels. Intervals are
theta~ +- t sd, clipped to the measure's range ([0, 1]; [-1, 1] for a difference of runs), t
Student's quantile at the design variance's degrees of freedom (Satterthwaite, from the variance
terms' fourth moment: :func:`_dof`), the normal quantile where the model's floor set the variance.
With 2-4 sampled items a topic the variance of a ratio measure rests on a few large terms (the
rare relevant items found), hence t rather than z. A difference
between two runs uses v_a - v_b on the same sample, so the runs' shared errors cancel (its
degrees of freedom from the terms of v_a - v_b).

The "human sample alone" comparator is the same machinery with f(a_i) = 0 for every item: with
calibration, the pilot's rate (per group) as a constant predictor, i.e. the usual
difference/ratio estimator from the human sample and no judge.

Known limits: measured in ``benchmarks/ppi_coverage.py``; the figures are in
``benchmarks/README.md`` ("Measured results moved from the metrics docstrings").
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from metrics.sampling.forms import DEFAULT_MEASURES
from metrics.sampling.structure import PoolStructure
from metrics.sampling.variance import _z

if TYPE_CHECKING:
    from metrics.sampling.variance import ArrayEstimate


__all__ = [
    "Estimate",
    "PPIReport",
    "by_item",
    "estimate_runs",
]


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its standard error and interval (``level``, normal)."""

    value: float
    low: float
    high: float
    se: float

    def to_dict(self) -> dict[str, float | None]:
        return {k: _json(getattr(self, k)) for k in ("value", "low", "high", "se")}


def _json(x: float) -> float | None:
    return None if not math.isfinite(x) else round(float(x), 6)


@dataclass(frozen=True)
class PPIReport:
    """Per run and measure: the corrected :class:`Estimate`, the value under the automatic
    labels alone, and (when asked) the human-sample-alone estimate; :meth:`differences`."""

    runs: tuple[str, ...]
    measures: tuple[str, ...]
    design: str
    level: float
    n_sampled: int
    n_items: int
    n_topics: int
    # how the pilot calibrated the judge: "grade" (a rate per grade and group), "score" (a
    # logistic fit on the judge's raw score, :func:`_calibrated_scores`) or "none"
    calibration: str
    estimates: dict[str, dict[str, Estimate]]
    auto_only: dict[str, dict[str, float]]
    human_only: dict[str, dict[str, Estimate]] | None
    _arrays: ArrayEstimate = field(repr=False)

    def differences(self, run_a: str, run_b: str, measure: str) -> Estimate:
        """run_a minus run_b, with the interval from v_a - v_b on the same sample."""
        for r in (run_a, run_b):
            if r not in self.runs:
                raise ValueError(f"unknown run {r!r}")
        if measure not in self.measures:
            raise ValueError(f"unknown measure {measure!r}: the report has {list(self.measures)}")
        a, b, m = self.runs.index(run_a), self.runs.index(run_b), self.measures.index(measure)
        values, ses, qs = self._arrays.differences(np.array([a]), np.array([b]), self.level)
        value, se, z = float(values[0, m]), float(ses[0, m]), float(qs[0, m])
        return Estimate(value, max(-1.0, value - z * se), min(1.0, value + z * se), se)

    @property
    def judge_weight(self) -> dict[str, float]:
        """Per measure, the weight of the judge-assisted estimate in the power-tuned blend
        (1: the judge's predictions alone; 0: the human sample's own rates)."""
        w = self._arrays.judge_weight
        return {m: 1.0 if w is None else float(w[j]) for j, m in enumerate(self.measures)}

    def to_dict(self) -> dict[str, Any]:
        return {
            "design": self.design,
            "level": self.level,
            "n_sampled": self.n_sampled,
            "n_items": self.n_items,
            "judge_weight": self.judge_weight,
            "n_topics": self.n_topics,
            "thin_topics": self._arrays.thin_topics,
            "calibration": self.calibration,
            "runs": {
                r: {
                    m: {
                        "ppi": self.estimates[r][m].to_dict(),
                        "auto_only": _json(self.auto_only[r][m]),
                        "human_only": (
                            None if self.human_only is None else self.human_only[r][m].to_dict()
                        ),
                    }
                    for m in self.measures
                }
                for r in self.runs
            },
        }


def _estimates(
    arr: ArrayEstimate, runs: tuple[str, ...], measures: tuple[str, ...], level: float
) -> dict[str, dict[str, Estimate]]:
    low, high = arr.interval(level)
    se = arr.se
    return {
        r: {
            m: Estimate(
                float(arr.value[i, j]), float(low[i, j]), float(high[i, j]), float(se[i, j])
            )
            for j, m in enumerate(measures)
        }
        for i, r in enumerate(runs)
    }


def by_item(
    items: Sequence[tuple[str, str]], values: Sequence[Any] | npt.NDArray[Any]
) -> dict[str, dict[str, Any]]:
    """``{qid: {docid: value}}`` from values in item order (e.g. a :class:`Sample`'s ``pi``
    over :attr:`PoolStructure.items`)."""
    if len(items) != len(values):
        raise ValueError(f"{len(values)} values for {len(items)} items")
    out: dict[str, dict[str, Any]] = {}
    for (q, d), v in zip(items, values, strict=True):
        out.setdefault(q, {})[d] = v.item() if hasattr(v, "item") else v
    return out


def estimate_runs(
    runs: Mapping[str, Mapping[str, Sequence[str]]],
    pool: Mapping[str, Sequence[str]],
    auto: Mapping[str, Mapping[str, int]],
    human: Mapping[str, Mapping[str, int]],
    pi: Mapping[str, Mapping[str, float]],
    *,
    design: str,
    measures: Sequence[str] = DEFAULT_MEASURES,
    threshold: int = 1,
    level: float = 0.95,
    strata: Mapping[str, Mapping[str, int]] | None = None,
    human_only: bool = True,
    calibrate: bool = True,
    popularity_groups: bool = True,
    scores: Mapping[str, Mapping[str, float]] | None = None,
) -> PPIReport:
    """Prediction-powered estimates of every run's measures (module docstring).

    ``runs``: run -> qid -> ranked docids; ``pool``: qid -> pool docids; ``auto``: the automatic
    grade of EVERY pool item; ``human``: the human grades of the sampled items (the sample is
    their keys); ``pi``: every pool item's inclusion probability; ``design``: ``uniform``,
    ``stratified`` (then ``strata``: every item's stratum) or ``active``. ``human_only`` adds
    the human-sample-alone estimates (f(a) = 0) from the same sample. ``calibrate``: the items
    with pi = 1 (the pilot) calibrate the predictor, per automatic grade and, with
    ``popularity_groups``, per how many runs rank the item in their top 10 (the configuration
    ``benchmarks/ppi_coverage.py`` measures). ``scores``: the judge's raw score of EVERY pool
    item (a similarity, say): the calibration is then a logistic fit on the score, grade and
    group (:func:`_calibrated_scores`) instead of a rate per cell; the report's ``calibration``
    says which. :func:`sample` and :func:`by_item` give ``pi``.
    """
    _z(level)
    st = PoolStructure(runs, pool, measures=measures, threshold=threshold)
    a_list = st.flat(auto, what="auto")
    missing = [st.items[i] for i, x in enumerate(a_list) if x is None]
    if missing:
        raise ValueError(f"{len(missing)} pool items have no automatic grade, e.g. {missing[0]}")
    p_list = st.flat(pi, what="pi")
    missing = [st.items[i] for i, x in enumerate(p_list) if x is None]
    if missing:
        raise ValueError(
            f"{len(missing)} pool items have no inclusion probability, e.g. {missing[0]}"
        )
    h_list = st.flat(human, what="human")
    sampled = np.array([x is not None for x in h_list])
    y = np.array([0 if x is None else int(x) for x in h_list], dtype=np.int64)
    a = np.array([int(x) for x in a_list], dtype=np.int64)
    p = np.array([float(x) for x in p_list], dtype=np.float64)
    if np.any(sampled & ~(p > 0)):
        raise ValueError("a sampled item has inclusion probability 0")
    s_arr = None
    if strata is not None:
        s_list = st.flat(strata, what="strata")
        if any(x is None for x in s_list):
            raise ValueError("strata must give every pool item's stratum")
        s_arr = np.array([int(x) for x in s_list], dtype=np.int64)
    sc = None
    if scores is not None:
        sc_list = st.flat(scores, what="scores")
        missing = [st.items[i] for i, x in enumerate(sc_list) if x is None]
        if missing:
            raise ValueError(f"{len(missing)} pool items have no score, e.g. {missing[0]}")
        sc = np.array([float(x) for x in sc_list], dtype=np.float64)
        if not np.all(np.isfinite(sc)):
            raise ValueError("every score must be a finite number")
    groups = st.popularity() if popularity_groups else None
    opts: dict[str, Any] = {"design": design, "strata": s_arr, "calibrate": calibrate}
    arr = st.estimate(a, y, sampled, p, covariance=True, groups=groups, score=sc, **opts)
    ho = None
    if human_only:
        zero = np.zeros_like(a)
        ho_arr = st.estimate(zero, y, sampled, p, groups=groups, auto_value=False, **opts)
        ho = _estimates(ho_arr, st.run_names, st.measures, level)
    return PPIReport(
        runs=st.run_names,
        measures=st.measures,
        design=design,
        level=level,
        n_sampled=int(sampled.sum()),
        n_items=st.n_items,
        n_topics=len(st.topics),
        calibration=("none" if not calibrate else "grade" if sc is None else "score"),
        estimates=_estimates(arr, st.run_names, st.measures, level),
        auto_only={
            r: {m: float(arr.auto_value[i, j]) for j, m in enumerate(st.measures)}
            for i, r in enumerate(st.run_names)
        },
        human_only=ho,
        _arrays=arr,
    )
