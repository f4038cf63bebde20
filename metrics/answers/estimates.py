"""Answer runs' nugget and support scores estimated from an automatic assigner's labels on every
item corrected by people's labels on a designed sample (issue 34, point 5): prediction-powered
inference with :mod:`metrics.sampling`'s estimator, variance and designs.

The items and the scores' linear form are :mod:`metrics.answers.items`' (an (answer, nugget)
or a (sentence, cited segment) pair, labelled 2 / 1 / 0; a run's macro score is
theta_r = sum_i c_r,i . f(y_i), f = ([y >= 1], [y >= 2]), the coefficients holding the known
denominators: the bank's nugget counts, the answer's cited sentences and sentences, the Q_r
topics averaged). With a prediction p_i of f(y_i) fixed before the sample (the automatic label's,
or its rate calibrated on the pilot slice, the items judged with certainty, pi = 1, per automatic
label and run) and inclusion probabilities pi_i, the estimate is the difference estimator

    theta~_r = sum_i c_r,i . (p_i + S_i / pi_i (f(y_i) - p_i)),     E[theta~_r] = theta_r,

unbiased for any fixed p: the denominators are known, so only the numerators' totals are
estimated, and no ratio of estimates is formed. The variance is the design's Horvitz-Thompson
variance of the total of v_i = c_r,i . (f(y_i) - p_i) (simple random sampling without
replacement, within strata, or Poisson for the active design), averaged with its model-based
value, and the interval Student's t at Satterthwaite's degrees of freedom, clipped to [0, 1].
:mod:`metrics.sampling.ppi` defines all of it, the per-topic moved point and the PPI++ blend
with the judge-free estimate (whose design variance is at most the judge-free estimate's);
:mod:`metrics.sampling.linear` says how a linear measure takes that path (as P@k does).
Items a human judged serve every run that contains them (the coefficients of a shared item
add up over its runs), and two runs' difference cancels their shared items' errors.

The human-sample-alone estimate beside it is the same estimator with no judge (f(a) = 0: the
pilot's rate, per run, as the prediction) on the same sample.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from metrics.answers.items import AnswerItem, AnswerItems
from metrics.sampling.ppi import Estimate
from metrics.sampling.variance import ArrayEstimate, _z

__all__ = ["AnswerReport", "estimate_answers"]

_NAN = Estimate(math.nan, math.nan, math.nan, math.nan)


@dataclass(frozen=True)
class AnswerReport:
    """Per run and measure: the corrected :class:`~metrics.sampling.ppi.Estimate` (NaN where
    the run's measure is undefined), the value under the automatic labels alone and the human
    sample's own estimate; :meth:`differences` between two runs."""

    kind: str
    runs: tuple[str, ...]
    measures: tuple[str, ...]
    design: str
    level: float
    n_sampled: int
    n_items: int
    calibration: str  # "grade" (a rate per automatic label), "score" (logistic) or "none"
    estimates: dict[str, dict[str, Estimate]]
    auto_only: dict[str, dict[str, float]]
    human_only: dict[str, dict[str, Estimate]] | None
    judge_weight: dict[str, float]
    _arrays: ArrayEstimate = field(repr=False)
    _counts: npt.NDArray[np.int64] = field(repr=False)

    def differences(self, run_a: str, run_b: str, measure: str) -> Estimate:
        """run_a minus run_b on ``measure``, its interval from v_a - v_b on the same sample."""
        for r in (run_a, run_b):
            if r not in self.runs:
                raise ValueError(f"unknown run {r!r}")
        if measure not in self.measures:
            raise ValueError(f"unknown measure {measure!r}: the report has {list(self.measures)}")
        a, b, m = self.runs.index(run_a), self.runs.index(run_b), self.measures.index(measure)
        if not (self._counts[m, a] and self._counts[m, b]):
            return _NAN
        values, ses, qs = self._arrays.differences(np.array([a]), np.array([b]), self.level)
        value, se, q = float(values[0, m]), float(ses[0, m]), float(qs[0, m])
        return Estimate(value, max(-1.0, value - q * se), min(1.0, value + q * se), se)

    def to_dict(self) -> dict[str, Any]:
        def rows(est: dict[str, dict[str, Estimate]] | None, r: str, m: str) -> Any:
            return None if est is None else est[r][m].to_dict()

        return {
            "kind": self.kind,
            "design": self.design,
            "level": self.level,
            "n_sampled": self.n_sampled,
            "n_items": self.n_items,
            "calibration": self.calibration,
            "judge_weight": self.judge_weight,
            "runs": {
                r: {
                    m: {
                        "ppi": rows(self.estimates, r, m),
                        "auto_only": _json(self.auto_only[r][m]),
                        "human_only": rows(self.human_only, r, m),
                    }
                    for m in self.measures
                }
                for r in self.runs
            },
        }


def _json(x: float) -> float | None:
    return None if not math.isfinite(x) else round(float(x), 6)


def _table(arr: ArrayEstimate, items: AnswerItems, level: float) -> dict[str, dict[str, Estimate]]:
    low, high = arr.interval(level)
    cells = np.stack([arr.value, low, high, arr.se], axis=-1)  # (runs, measures, 4)
    return {
        r: {
            m: Estimate(*map(float, cells[i, j])) if items.counts[j, i] else _NAN
            for j, m in enumerate(items.measures)
        }
        for i, r in enumerate(items.runs)
    }


def _complete(items: AnswerItems, mapping: Mapping[AnswerItem, Any], what: str) -> list[Any]:
    values = items.flat(mapping, what=what)
    missing = [items.items[i] for i, v in enumerate(values) if v is None]
    if missing:
        raise ValueError(f"{what}: {len(missing)} items have none, e.g. {missing[0]}")
    return values


def estimate_answers(
    items: AnswerItems,
    auto: Mapping[AnswerItem, int],
    human: Mapping[AnswerItem, int],
    pi: Mapping[AnswerItem, float],
    *,
    design: str,
    strata: Mapping[AnswerItem, int] | None = None,
    scores: Mapping[AnswerItem, float] | None = None,
    level: float = 0.95,
    human_only: bool = True,
    calibrate: bool = True,
    run_groups: bool = True,
) -> AnswerReport:
    """Every run's measures of ``items`` (:func:`~metrics.answers.items.nugget_items` or
    :func:`~metrics.answers.items.support_items`) estimated (module docstring).

    ``auto``: the assigner's label (0-2) of EVERY item; ``human``: people's labels of the
    sampled items (the sample is its keys); ``pi``: every item's inclusion probability;
    ``design``: ``uniform``, ``stratified`` (then ``strata``: every item's stratum) or
    ``active``, as :func:`metrics.sampling.designs.sample` draws them (its ``pi`` and
    ``strata``, in item order: :attr:`AnswerItems.items`). ``calibrate``: the items with pi = 1
    (the pilot) calibrate the predictor, per automatic label or, given ``scores`` (the
    assigner's raw score of EVERY item, a similarity say), by a logistic fit on the score;
    ``run_groups``: per run as well (:attr:`AnswerItems.groups`: an item's run, or one group
    for the items runs share), shrunk to the label's rate, and the model variance per (label,
    run): an assigner is fooled more by some systems than by others (a system that gets
    numbers wrong writes sentences that read like the nugget), and one rate for all runs
    leaves those runs' intervals too narrow and the others' too wide (``benchmarks/
    README.md``, "answer runs' scores")."""
    _z(level)
    a = np.array(_complete(items, auto, "auto"), dtype=np.int64)
    p = np.array(_complete(items, pi, "pi"), dtype=np.float64)
    h = items.flat(human, what="human")
    sampled = np.array([x is not None for x in h])
    y = np.array([0 if x is None else int(x) for x in h], dtype=np.int64)
    for what, labels in (("auto", a), ("human", y)):
        if labels.size and (int(labels.min()) < 0 or int(labels.max()) > 2):
            raise ValueError(f"{what}: labels are 0 (none), 1 (partial) or 2 (support)")
    s_arr = None if strata is None else np.array(_complete(items, strata, "strata"), dtype=np.int64)
    sc = None if scores is None else np.array(_complete(items, scores, "scores"), dtype=np.float64)
    st = items.structure()
    groups = items.groups if run_groups else None
    opts: dict[str, Any] = {
        "design": design,
        "strata": s_arr,
        "calibrate": calibrate,
        "groups": groups,
    }
    arr = st.estimate(a, y, sampled, p, covariance=True, score=sc, **opts)
    ho = None
    if human_only:
        zero = np.zeros_like(a)
        ho = _table(st.estimate(zero, y, sampled, p, auto_value=False, **opts), items, level)
    weight = arr.judge_weight
    return AnswerReport(
        kind=items.kind,
        runs=items.runs,
        measures=items.measures,
        design=design,
        level=level,
        n_sampled=int(sampled.sum()),
        n_items=items.n_items,
        calibration=("none" if not calibrate else "grade" if sc is None else "score"),
        estimates=_table(arr, items, level),
        auto_only={
            r: {
                m: float(arr.auto_value[i, j]) if items.counts[j, i] else math.nan
                for j, m in enumerate(items.measures)
            }
            for i, r in enumerate(items.runs)
        },
        human_only=ho,
        judge_weight={
            m: 1.0 if weight is None else float(weight[j]) for j, m in enumerate(items.measures)
        },
        _arrays=arr,
        _counts=items.counts,
    )
