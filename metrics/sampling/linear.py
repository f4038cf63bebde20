"""Linear measures of arbitrary judging items, estimated by the prediction-powered machinery of
:mod:`metrics.sampling` (:mod:`~metrics.sampling.ppi` defines the method).

The pool items of :class:`~metrics.sampling.structure.PoolStructure` are (topic, document) pairs
that runs rank. Other units are judged too: an (answer, nugget) pair, a (sentence, cited segment)
pair (:mod:`metrics.answers.estimates`). Where every run's measure is linear in those items'
labels with known coefficients, it is a measure of kind ``L``,

    theta_m,r = (1/Q) sum_q sum_{i in q} sum_h W_m,h,r,i f_h(y_i),   f_h(y) = [y >= h],

over the Q topics the items belong to, W fixed before any label is seen (a macro average over a
run's own topics is one: W holds its 1/Q_r, scaled by Q). :class:`LinearStructure` is the
estimator's view of such items (:class:`~metrics.sampling.forms.PoolView`: no run ranks any
item), and the estimate, its variance, the calibration of the predictor and the designs' active
weights are :mod:`~metrics.sampling.estimator`'s, :mod:`~metrics.sampling.variance`'s,
:mod:`~metrics.sampling.calibration`'s and :mod:`~metrics.sampling.gradients`' as for P@k, the
other linear measure: the difference estimator sum_i W_i (p_i + S_i / pi_i (f(y_i) - p_i)) about
each topic's moved point, no second-order term (a linear measure has none), the design variance
averaged with the model's, the PPI++ blend with the judge-free estimate. Only the thin topics'
model draws are left out: a linear measure's expectation under the model is its value at the
rates, so the draws would add nothing but their own Monte Carlo noise.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from metrics.sampling.estimator import estimate
from metrics.sampling.forms import functionals
from metrics.sampling.gradients import active_weights, measure_cells

if TYPE_CHECKING:
    from metrics.sampling.forms import F64, I64, Bool
    from metrics.sampling.variance import ArrayEstimate

__all__ = ["LinearStructure"]

_EMPTY_I = np.zeros(0, dtype=np.int64)
_EMPTY_F = np.zeros(0, dtype=np.float64)


class LinearStructure:
    """Items with a topic each and measures linear in their labels (module docstring).

    ``item_topics``: the topic of every item, in item order (the topics are numbered in order
    of first appearance); ``runs``: the run names; ``measures``: the measure names;
    ``weights``: (measures, G, runs, items) the coefficients W of f_1..f_G, already holding each
    run's 1/Q_r scaled by the structure's topic count Q (:attr:`topics`), so that the mean over
    topics of the per-topic sums is the measure. ``threshold``: the functional the calibration's
    topic shift and the designs' disagreement rates read.
    """

    rank: I64
    _e_run: I64 = _EMPTY_I
    _e_item: I64 = _EMPTY_I
    _e_rank: F64 = _EMPTY_F
    _e_cell: I64 = _EMPTY_I
    _e_start: I64 = _EMPTY_I

    def __init__(
        self,
        item_topics: Sequence[str],
        runs: Sequence[str],
        measures: Sequence[str],
        weights: F64,
        *,
        threshold: int = 1,
    ) -> None:
        w = np.asarray(weights, dtype=np.float64)
        shape = (len(measures), w.shape[1] if w.ndim == 4 else 0, len(runs), len(item_topics))
        if w.ndim != 4 or w.shape != shape or shape[1] < 1:
            raise ValueError(f"weights must be (measures, G, runs, items) = {shape}, not {w.shape}")
        if not item_topics:
            raise ValueError("no items to estimate from")
        if not np.all(np.isfinite(w)):
            raise ValueError("every coefficient must be finite")
        if len(set(measures)) != len(measures):
            raise ValueError(f"a measure is named twice: {list(measures)}")
        if threshold < 1:
            raise ValueError(f"threshold must be >= 1, got {threshold}")
        self.topics = tuple(dict.fromkeys(str(q) for q in item_topics))
        index = {q: t for t, q in enumerate(self.topics)}
        self.topic_of = np.array([index[str(q)] for q in item_topics], dtype=np.int64)
        self.run_names = tuple(str(r) for r in runs)
        self.measures = tuple(str(m) for m in measures)
        self._parsed = [("L", j) for j in range(len(self.measures))]
        self.threshold = threshold
        self._linear: F64 | None = w
        self.rank = np.zeros((len(self.run_names), self.topic_of.size), dtype=np.int64)

    @property
    def n_items(self) -> int:
        return int(self.topic_of.size)

    def _check_grades(self, g: I64, what: str) -> None:
        if g.shape != (self.n_items,):
            raise ValueError(f"{what}: expected {self.n_items} labels, got shape {g.shape}")
        if g.size and int(g.min()) < 0:
            raise ValueError(f"{what}: labels must be >= 0 (got {int(g.min())})")

    def _top(self, k: int) -> tuple[I64, I64, F64]:
        return _EMPTY_I, _EMPTY_I, _EMPTY_F  # no run ranks an item

    def _part(self, topics: Bool) -> tuple[LinearStructure, I64]:
        """The same structure over the ``topics`` only (a mask over :attr:`topics`), and the
        indices of its items here."""
        keep = np.flatnonzero(topics[self.topic_of])
        assert self._linear is not None
        sub = LinearStructure(
            [self.topics[t] for t in self.topic_of[keep]],
            self.run_names,
            self.measures,
            self._linear[..., keep],
            threshold=self.threshold,
        )
        return sub, keep

    def values(self, labels: Sequence[int] | I64) -> F64:
        """(runs, measures) every measure with ``labels`` (every item, item order) as truth."""
        g = np.asarray(labels, dtype=np.int64)
        self._check_grades(g, "labels")
        F = functionals(g, max(self.threshold, int(g.max(initial=0))))
        points, _ = measure_cells(self, F)
        return np.stack([p.cell.mean(axis=1) for p in points], axis=1)

    def active_weights(
        self,
        auto: Sequence[int] | I64,
        *,
        pilot: Sequence[int] | I64,
        pilot_grades: Sequence[int] | I64,
        groups: Sequence[int] | I64 | None = None,
        score: Sequence[float] | F64 | None = None,
    ) -> tuple[F64, F64]:
        """The ``active`` design's influence (N,) and variance weights (M, N), at the
        predictions the pilot calibrates (:meth:`PoolStructure.active_weights
        <metrics.sampling.structure.PoolStructure.active_weights>`)."""
        return active_weights(
            self, auto, pilot=pilot, pilot_grades=pilot_grades, groups=groups, score=score
        )

    def estimate(
        self,
        auto: Sequence[int] | I64,
        human: Sequence[int] | I64,
        sampled: Sequence[bool] | Bool,
        pi: Sequence[float] | F64,
        *,
        design: str,
        strata: Sequence[int] | I64 | None = None,
        covariance: bool = False,
        calibrate: bool = True,
        groups: Sequence[int] | I64 | None = None,
        auto_value: bool = True,
        variance_floor: bool = True,
        power: bool = True,
        score: Sequence[float] | F64 | None = None,
    ) -> ArrayEstimate:
        """Every run's measures estimated from the automatic labels ``auto`` of every item
        corrected by the ``human`` labels of the ``sampled`` ones, drawn with inclusion
        probabilities ``pi`` by ``design``: :meth:`PoolStructure.estimate
        <metrics.sampling.structure.PoolStructure.estimate>`, whose options these are
        (``groups``: an integer per item refining the calibration's cells and the model
        variance's, as the pool-popularity groups do there)."""
        return estimate(
            self,
            auto,
            human,
            sampled,
            pi,
            design=design,
            strata=strata,
            covariance=covariance,
            calibrate=calibrate,
            groups=groups,
            auto_value=auto_value,
            variance_floor=variance_floor,
            power=power,
            score=score,
        )
