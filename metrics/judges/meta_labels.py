"""Label agreement of an automatic judge with people for the meta-evaluation of judges (issue 35),
each figure with a percentile bootstrap over topics, undefined with its reason, never 0.0, where
it cannot be computed. System-ranking agreement is :mod:`metrics.judges.meta`.

Keys are ``(qid, docid)``; the figures are computed on the items both sides judged:

- Cohen's (1960) kappa on the grades, unweighted; binary kappa of "relevant" = grade >=
  ``threshold``; Cohen's (1968) weighted kappa with linear and quadratic weights on the grades'
  positions in the scale (:func:`metrics.judges.agreement.weighted_kappa`).
- Krippendorff's alpha (2011) for two coders with no missing values:
  alpha = 1 - (n - 1) sum_ck o_ck d2_ck / sum_ck n_c n_k d2_ck, where o = C + C^T is the
  coincidence matrix of the confusion table C (every item gives one pair each way), n_c its
  margins, n = 2N for N items, and d2 the metric's squared distance: nominal [c != k]; interval
  (v_c - v_k)^2 on the grades' values; ordinal (sum_{g=c..k} n_g - (n_c + n_k) / 2)^2.

Kappa and alpha need two items or more and some variation: with every item given one and the same
grade by both sides, expected disagreement is 0 and the ratio 0/0.

The bootstrap resamples topics with replacement and pools their items: with a confusion table per
topic, a resample's table is the weighted sum of the topics' tables (weights: how often each was
drawn), so every resample is one matrix product (:func:`metrics.judges.meta.estimate` turns the
draws into an interval).

References
----------
- Cohen (1960), Educ. Psychol. Meas. 20(1); Cohen (1968), Psychol. Bull. 70(4).
- Krippendorff (2011), "Computing Krippendorff's alpha-reliability", Univ. of Pennsylvania,
  https://repository.upenn.edu/asc_papers/43
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from metrics.judges.agreement import check_scale, weight_matrix, weighted_kappa
from metrics.judges.audit import _confusion, label_agreement
from metrics.judges.meta import (
    Estimate,
    Undefined,
    blocks,
    check_bootstrap,
    estimates,
    topic_weights,
    value_dict,
)

__all__ = [
    "ALPHA_METRICS",
    "AlphaMetric",
    "LabelMeta",
    "TopicLabels",
    "krippendorff_alpha",
    "label_meta",
]

Key = tuple[str, str]
AlphaMetric = Literal["nominal", "ordinal", "interval"]
ALPHA_METRICS: tuple[AlphaMetric, ...] = ("nominal", "ordinal", "interval")
FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def _no_agreement(table: IntArray, what: str = "grade") -> str:
    """Why a kappa or alpha of ``table`` is undefined."""
    n = int(table.sum())
    if n == 0:
        return "no item is judged by both people and the judge"
    if n == 1:
        return "1 item is judged by both: agreement needs at least 2"
    return f"people and the judge gave every shared item one and the same {what}"


def kappa_rows(tables: FloatArray, w: FloatArray) -> FloatArray:
    """:func:`weighted_kappa` of each table of a stack (tables x k x k), NaN where undefined."""
    n = tables.sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = tables / n[:, None, None]
        expected = np.einsum("ij,ri,rj->r", w, observed.sum(axis=2), observed.sum(axis=1))
        value = 1.0 - (observed * w).sum(axis=(1, 2)) / expected
    return np.where((n >= 2) & (expected > 0), value, np.nan)


def alpha_rows(tables: FloatArray, values: Sequence[float], metric: AlphaMetric) -> FloatArray:
    """Krippendorff's alpha of each confusion table of a stack (tables x k x k, positions of
    ``values``, the scale), two coders, as the module docstring defines it; NaN where undefined."""
    coincidence = tables + tables.transpose(0, 2, 1)
    margins = coincidence.sum(axis=2)
    n = margins.sum(axis=1)
    k = len(values)
    c, d = np.meshgrid(np.arange(k), np.arange(k), indexing="ij")
    if metric == "nominal":
        distance = np.broadcast_to((c != d).astype(np.float64), tables.shape)
    elif metric == "interval":
        v = np.asarray(values, dtype=np.float64)
        distance = np.broadcast_to((v[:, None] - v[None, :]) ** 2, tables.shape)
    else:
        low, high = np.minimum(c, d), np.maximum(c, d)
        below = np.cumsum(margins, axis=1) - margins  # sum of n_g for g < c
        between = below[:, high] + margins[:, high] - below[:, low]
        distance = (between - (margins[:, :, None] + margins[:, None, :]) / 2) ** 2
    observed = (coincidence * distance).sum(axis=(1, 2))
    expected = np.einsum("ri,rj,rij->r", margins, margins, distance)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = 1.0 - (n - 1) * observed / expected
    return np.where((n >= 4) & (expected > 0), value, np.nan)


def krippendorff_alpha(
    pairs: Iterable[tuple[int, int]], scale: Sequence[int], metric: AlphaMetric = "ordinal"
) -> float | Undefined:
    """Krippendorff's alpha of two coders' grades, one ``(a, b)`` pair per item, no missing
    values, with the ``metric``'s distance (module docstring); :class:`Undefined` with fewer
    than 2 items or one grade throughout. ``ValueError`` for a grade outside ``scale``."""
    if metric not in ALPHA_METRICS:
        raise ValueError(f"unknown metric {metric!r}; one of {ALPHA_METRICS}")
    grades = check_scale(scale)
    position = {g: i for i, g in enumerate(grades)}
    cells = []
    for a, b in pairs:
        if a not in position or b not in position:
            raise ValueError(f"the pair {(a, b)!r} has a grade outside the scale {grades}")
        cells.append((position[a], position[b]))
    return _alpha(_confusion(cells, grades), grades, metric)


def _alpha(table: IntArray, grades: Sequence[int], metric: AlphaMetric) -> float | Undefined:
    value = float(alpha_rows(table[None].astype(np.float64), grades, metric)[0])
    return value if math.isfinite(value) else Undefined(_no_agreement(table))


@dataclass(frozen=True)
class TopicLabels:
    """One topic's ``n`` shared items: their confusion table (rows people, columns the judge,
    positions in the scale), Cohen's kappa and weighted kappa (linear, quadratic)."""

    topic: str
    n: int
    confusion: list[list[int]]
    kappa: float | Undefined
    kappa_linear: float | Undefined
    kappa_quadratic: float | Undefined

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe; each kappa as ``{"value", "undefined"}``."""
        return {
            "topic": self.topic,
            "n": self.n,
            "confusion": [list(row) for row in self.confusion],
            "kappa": value_dict(self.kappa),
            "kappa_linear": value_dict(self.kappa_linear),
            "kappa_quadratic": value_dict(self.kappa_quadratic),
        }


@dataclass(frozen=True)
class LabelMeta:
    """A judge's grades against people's on the ``n`` items both judged, over ``n_topics``
    topics: each figure an :class:`Estimate` with its bootstrap over topics (module docstring).
    ``krippendorff_alpha`` is ordinal. ``confusion[i][j]`` counts items people graded
    ``scale[i]`` and the judge ``scale[j]``; ``human_only`` and ``judge_only`` count the items
    one side judged (left out)."""

    scale: list[int]
    threshold: int
    n: int
    n_topics: int
    human_only: int
    judge_only: int
    confusion: list[list[int]]
    kappa: Estimate
    binary_kappa: Estimate
    kappa_linear: Estimate
    kappa_quadratic: Estimate
    krippendorff_alpha: Estimate
    topics: list[TopicLabels]

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: counts, the confusion table, each figure as :meth:`Estimate.to_dict`, and
        the topics as :meth:`TopicLabels.to_dict`."""
        return {
            "scale": list(self.scale),
            "threshold": self.threshold,
            "n": self.n,
            "n_topics": self.n_topics,
            "human_only": self.human_only,
            "judge_only": self.judge_only,
            "confusion": [list(row) for row in self.confusion],
            "kappa": self.kappa.to_dict(),
            "binary_kappa": self.binary_kappa.to_dict(),
            "kappa_linear": self.kappa_linear.to_dict(),
            "kappa_quadratic": self.kappa_quadratic.to_dict(),
            "krippendorff_alpha": self.krippendorff_alpha.to_dict(),
            "topics": [topic.to_dict() for topic in self.topics],
        }


def _kappa(table: IntArray, w: FloatArray, what: str = "grade") -> float | Undefined:
    value = weighted_kappa(table.astype(np.float64), w)
    return Undefined(_no_agreement(table, what)) if math.isnan(value) else value


def label_meta(
    human: Mapping[Key, int],
    judge: Mapping[Key, int],
    scale: Sequence[int],
    *,
    threshold: int,
    resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    min_defined: float = 0.9,
) -> LabelMeta:
    """Cohen's kappa, binary kappa at ``threshold``, linear and quadratic weighted kappa and
    ordinal Krippendorff's alpha of the ``judge``'s grades against people's (``human``) on the
    keys both hold, each with a percentile bootstrap over topics (``resamples`` resamples of the
    topics with replacement, ``seed``, ``level``; no interval when fewer than ``min_defined`` of
    them are defined); and per topic its
    confusion table and kappas. ``ValueError`` for a shared item's grade outside ``scale``."""
    check_bootstrap(level, resamples, min_defined)
    overall = label_agreement(human, judge, scale, threshold)  # checks the grades
    grades = overall.scale
    k = len(grades)
    position = {g: i for i, g in enumerate(grades)}
    by_topic: dict[str, list[tuple[int, int]]] = {}
    for key in sorted(set(human) & set(judge)):
        cell = (position[int(human[key])], position[int(judge[key])])
        by_topic.setdefault(key[0], []).append(cell)
    names = sorted(by_topic)
    tables = np.array([_confusion(by_topic[t], grades) for t in names], dtype=np.int64)
    tables = tables.reshape(len(names), k, k)
    table = tables.sum(axis=0)
    unweighted, linear = weight_matrix(k, "none"), weight_matrix(k, "linear")
    quadratic = weight_matrix(k, "quadratic")
    relevant = np.array([[g < threshold, g >= threshold] for g in grades], dtype=np.float64)

    def binary(stack: FloatArray) -> FloatArray:  # tables x 2 x 2: (not) relevant
        out: FloatArray = np.einsum("ia,rij,jb->rab", relevant, stack, relevant)
        return out

    binary_table = binary(table[None].astype(np.float64))[0].astype(np.int64)
    relevance = f"relevance label at threshold {threshold}"
    values = {
        "kappa": _kappa(table, unweighted),
        "binary_kappa": _kappa(binary_table, weight_matrix(2, "none"), relevance),
        "kappa_linear": _kappa(table, linear),
        "kappa_quadratic": _kappa(table, quadratic),
        "krippendorff_alpha": _alpha(table, grades, "ordinal"),
    }
    draws = {name: np.full(resamples if names else 0, np.nan) for name in values}
    if names:
        weights = topic_weights(len(names), resamples, seed).astype(np.float64)
        flat = tables.reshape(len(names), k * k).astype(np.float64)
        for part in blocks(resamples, k * k):
            stack = (weights[part] @ flat).reshape(-1, k, k)
            draws["kappa"][part] = kappa_rows(stack, unweighted)
            draws["binary_kappa"][part] = kappa_rows(binary(stack), weight_matrix(2, "none"))
            draws["kappa_linear"][part] = kappa_rows(stack, linear)
            draws["kappa_quadratic"][part] = kappa_rows(stack, quadratic)
            draws["krippendorff_alpha"][part] = alpha_rows(stack, grades, "ordinal")
    found = estimates(values, draws, level=level, min_defined=min_defined)
    return LabelMeta(
        scale=grades,
        threshold=int(threshold),
        n=overall.n,
        n_topics=len(names),
        human_only=overall.human_only,
        judge_only=overall.auto_only,
        confusion=overall.confusion,
        kappa=found["kappa"],
        binary_kappa=found["binary_kappa"],
        kappa_linear=found["kappa_linear"],
        kappa_quadratic=found["kappa_quadratic"],
        krippendorff_alpha=found["krippendorff_alpha"],
        topics=[
            TopicLabels(
                topic=name,
                n=int(topic.sum()),
                confusion=topic.tolist(),
                kappa=_kappa(topic, unweighted),
                kappa_linear=_kappa(topic, linear),
                kappa_quadratic=_kappa(topic, quadratic),
            )
            for name, topic in zip(names, tables, strict=True)
        ],
    )
