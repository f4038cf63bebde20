"""The per-item structure of a run set over a pool (:class:`PoolStructure`), built once: ranks of
every pool item in every run, topics, and the top-k masks. Its estimates are computed by
:mod:`metrics.sampling.gradients` and :mod:`metrics.sampling.estimator`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from metrics.sampling.estimator import estimate, expected_cells
from metrics.sampling.forms import DEFAULT_MEASURES, _parse_measure, functionals
from metrics.sampling.gradients import active_weights, measure_cells, pool_influence

if TYPE_CHECKING:
    from metrics.sampling.forms import F64, I64, Bool
    from metrics.sampling.variance import ArrayEstimate


__all__ = [
    "PoolStructure",
]


class PoolStructure:
    """The per-item structure of a run set over a pool, built once: ranks of every pool item in
    every run, topics, and the top-k masks. Each estimate is then array algebra
    (:meth:`estimate`), so many repetitions of a design cost little.

    ``runs``: run -> qid -> ranked docids (rank = position, 1-based; docids outside the pool take
    their rank and count as non-relevant). ``pool``: qid -> pool docids. Items are ordered topic
    by topic in the pool's order (:attr:`items`).
    """

    _linear: F64 | None = None  # no linear measure of arbitrary items (:mod:`.linear`)

    def __init__(
        self,
        runs: Mapping[str, Mapping[str, Sequence[str]]],
        pool: Mapping[str, Sequence[str]],
        *,
        measures: Sequence[str] = DEFAULT_MEASURES,
        threshold: int = 1,
    ) -> None:
        if not runs:
            raise ValueError("no runs to estimate")
        if not pool or not any(len(d) for d in pool.values()):
            raise ValueError("the pool is empty")
        if threshold < 1:
            raise ValueError(f"threshold must be >= 1, got {threshold}")
        self.measures = tuple(measures)
        if not self.measures:
            raise ValueError("no measures asked")
        if len(set(self.measures)) != len(self.measures):
            raise ValueError(f"a measure is asked twice: {list(self.measures)}")
        self._parsed = [_parse_measure(m) for m in self.measures]
        self.threshold = threshold
        self.topics = tuple(str(q) for q in pool)
        items: list[tuple[str, str]] = []
        index: dict[tuple[str, str], int] = {}
        for q in self.topics:
            for d in pool[q]:
                key = (q, str(d))
                if key in index:
                    raise ValueError(f"docid {d!r} is twice in the pool of topic {q!r}")
                index[key] = len(items)
                items.append(key)
        self.items = tuple(items)
        self._index = index
        tpos = {q: t for t, q in enumerate(self.topics)}
        self.topic_of = np.array([tpos[q] for q, _ in items], dtype=np.int64)
        self.run_names = tuple(str(r) for r in runs)
        n_runs, n_items = len(self.run_names), len(items)
        rank = np.zeros((n_runs, n_items), dtype=np.int64)  # 0: not retrieved
        # per topic, its pool items (docid -> item): each run's ranking is looked up by the pool's
        # documents (~100 a topic), not walked document by document (~1,000)
        by_topic: dict[str, list[tuple[str, int]]] = {}
        for (q, d), i in index.items():
            by_topic.setdefault(q, []).append((d, i))
        for r, name in enumerate(self.run_names):
            for q, docs in runs[name].items():
                position = dict(zip(map(str, docs), range(1, len(docs) + 1), strict=False))
                if len(position) != len(docs):
                    twice = next(d for d, n in Counter(map(str, docs)).items() if n > 1)
                    raise ValueError(f"run {name!r} ranks docid {twice!r} twice for topic {q!r}")
                for d, i in by_topic.get(str(q), ()):
                    pos = position.get(d)
                    if pos is not None:
                        rank[r, i] = pos
        self.rank = rank
        self._entries()

    def _entries(self) -> None:
        """The retrieved pool items of every run, run by run, topic by topic, in rank order
        (for AP), from :attr:`rank` and :attr:`topic_of`."""
        rank = self.rank
        rr, ii = np.nonzero(rank)
        order = np.lexsort((rank[rr, ii], self.topic_of[ii], rr))
        self._e_run, self._e_item = rr[order], ii[order]
        self._e_rank = rank[self._e_run, self._e_item].astype(np.float64)
        self._e_cell = self._e_run * len(self.topics) + self.topic_of[self._e_item]
        starts = np.ones(self._e_cell.size, dtype=bool)
        starts[1:] = self._e_cell[1:] != self._e_cell[:-1]
        self._e_start = np.maximum.accumulate(np.where(starts, np.arange(starts.size), 0))
        self._topk: dict[int, tuple[I64, I64, F64]] = {}
        self._parts: dict[bytes, tuple[PoolStructure, I64]] = {}

    def _part(self, topics: Bool) -> tuple[PoolStructure, I64]:
        """The same structure over the ``topics`` only (a mask over :attr:`topics`), and the
        indices of its items here; cached (an estimate asks for the same few sets again)."""
        key = topics.tobytes()
        got = self._parts.get(key)
        if got is None:
            keep = np.flatnonzero(topics[self.topic_of])
            sub = object.__new__(PoolStructure)
            sub.measures, sub._parsed, sub.threshold = self.measures, self._parsed, self.threshold
            sub.topics = tuple(q for q, k in zip(self.topics, topics, strict=True) if k)
            sub.items = tuple(self.items[i] for i in keep)
            sub._index = {}
            new_id = np.cumsum(topics) - 1
            sub.topic_of = np.asarray(new_id[self.topic_of[keep]], dtype=np.int64)
            sub.run_names = self.run_names
            sub.rank = self.rank[:, keep]
            sub._entries()
            if len(self._parts) >= 8:
                self._parts.clear()
            got = self._parts[key] = (sub, keep)
        return got

    # -- indexing -----------------------------------------------------------------------------

    def flat(self, mapping: Mapping[str, Mapping[str, Any]], *, what: str) -> list[Any]:
        """The values of ``mapping[qid][docid]`` in item order (None where absent); a key
        outside the pool is an error (``what`` names the mapping in the message)."""
        out: list[Any] = [None] * len(self.items)
        for q, docs in mapping.items():
            for d, v in docs.items():
                i = self._index.get((str(q), str(d)))
                if i is None:
                    raise ValueError(f"{what} has ({q!r}, {d!r}), which is not in the pool")
                out[i] = v
        return out

    @property
    def n_items(self) -> int:
        return len(self.items)

    # -- point values -------------------------------------------------------------------------

    def _top(self, k: int) -> tuple[I64, I64, F64]:
        """Retrieved pool items ranked at most k: items, (run, topic) cells, discounts."""
        got = self._topk.get(k)
        if got is None:
            keep = self._e_rank <= k
            got = (self._e_item[keep], self._e_cell[keep], 1.0 / np.log2(self._e_rank[keep] + 1))
            self._topk[k] = got
        return got

    def popularity(self, depth: int = 10, bins: Sequence[int] = (1, 3, 6)) -> I64:
        """(N,) a calibration group per item: how many runs rank it in their top ``depth``,
        binned at ``bins`` (group j: at least bins[j-1] runs; 0: fewer than bins[0]). Items
        many systems put high are more often relevant whatever the judge says."""
        votes = ((self.rank >= 1) & (self.rank <= depth)).sum(axis=0)
        return np.asarray(np.searchsorted(np.asarray(bins), votes, side="right"), dtype=np.int64)

    def values(self, grades: Sequence[int] | I64) -> F64:
        """(runs, measures) macro values with ``grades`` (every item, item order) as truth: the
        full-judgment target."""
        g = np.asarray(grades, dtype=np.int64)
        self._check_grades(g, "grades")
        F = functionals(g, max(self.threshold, int(g.max(initial=0))))
        points, _ = measure_cells(self, F)
        return np.stack([p.cell.mean(axis=1) for p in points], axis=1)

    def _check_grades(self, g: I64, what: str) -> None:
        if g.shape != (self.n_items,):
            raise ValueError(f"{what}: expected {self.n_items} grades, got shape {g.shape}")
        if g.size and int(g.min()) < 0:
            raise ValueError(f"{what}: grades must be >= 0 (got {int(g.min())})")

    # -- influence ----------------------------------------------------------------------------

    def influence(
        self,
        auto: Sequence[int] | I64,
        *,
        pilot: Sequence[int] | I64 | None = None,
        pilot_grades: Sequence[int] | I64 | None = None,
        groups: Sequence[int] | I64 | None = None,
        score: Sequence[float] | F64 | None = None,
    ) -> F64:
        """(N,) how much an error in each item's label moves the estimates: the mean over
        measures (each scaled to mean 1) of sum over runs of |d theta / d rel_i|. Feeds the
        ``active`` design. Taken at the automatic labels, or, given the ``pilot`` (item indices)
        and its human grades, at the predictions the estimate will calibrate from them (with the
        same ``groups`` and ``score``): a weak judge's raw labels put the gradients of R@k and
        AP in the wrong topics (where the judge sees no relevant item the denominator is 0 and
        so is the influence, and those items fall to the design's floor). On Cranfield with the
        embedding judge the calibrated influence made the active design's intervals 1.6-2.6
        times narrower for R@10, nDCG@10 and AP."""
        return pool_influence(
            self, auto, pilot=pilot, pilot_grades=pilot_grades, groups=groups, score=score
        )

    def active_weights(
        self,
        auto: Sequence[int] | I64,
        *,
        pilot: Sequence[int] | I64,
        pilot_grades: Sequence[int] | I64,
        groups: Sequence[int] | I64 | None = None,
        score: Sequence[float] | F64 | None = None,
    ) -> tuple[F64, F64]:
        """What the ``active`` design of :func:`sample` reads, from one set of gradients at the
        predictions the pilot calibrates: the :meth:`influence` (N,), and the variance weights
        (M, N), what each item adds to each measure's variance per unit of (1/pi - 1): sum
        over runs of (d theta / d rel_i)^2 times p_i (1 - p_i), with which the design keeps
        every measure's predicted variance at or below the uniform design's."""
        return active_weights(
            self, auto, pilot=pilot, pilot_grades=pilot_grades, groups=groups, score=score
        )

    # -- estimates ----------------------------------------------------------------------------

    def _expected_cells(self, Fp: F64, Fy: F64, cols: I64, topics: Bool) -> tuple[F64, F64]:
        """(M, R, Q) each run's expected measure on the ``topics`` (0 elsewhere) under the
        calibrated model: the sampled items at their human labels, every other item relevant
        at grade >= h with probability Fp_h, independently; the mean of :data:`_DRAWS` draws
        from a fixed seed (so an estimate is reproducible), one uniform per item for all its
        grades. It is the expected per-topic ratio, not the ratio of expected totals: with a
        few relevant items a topic, the two differ (a topic may hold none, and then scores 0)."""
        return expected_cells(self, Fp, Fy, cols, topics)

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
        """Array form of :func:`estimate_runs`: every argument in item order; ``human`` is read
        where ``sampled`` only. ``strata`` (stratified design): an integer per item.

        ``calibrate``: the sampled items with pi = 1 (the pilot slice) recalibrate the
        predictor: f(a_i) is replaced by the pilot's rate of f(y) among items with the same
        automatic grade (:func:`_calibrated`). The estimate is conditional on the pilot, and
        given the pilot the predictor is fixed, so it stays unbiased. ``groups``: an integer per
        item refining the calibration cells (e.g. how many runs rank the item high, see
        :meth:`popularity`): the rate is then per (automatic grade, group), shrunk to the
        grade's rate. ``auto_value``: also compute the values under the automatic labels
        alone (NaN otherwise). ``variance_floor``: each run's P@k variance is the mean of the
        design estimate and the model-based one (:meth:`_model_covariance`); without it the
        design estimate alone (exactly unbiased for P@k, and 0 when a thin stratum's sampled
        items happen to agree with their predictions). ``power`` (with ``calibrate`` and a
        pilot): blend with the judge-free estimate on the same sample, per measure, at the
        weight of least design variance (module docstring, "Power tuning"); without it the
        judge-assisted estimate alone."""
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
