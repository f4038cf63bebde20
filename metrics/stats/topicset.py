"""How many topics for a target interval width: topic set size design from pilot data
(Sakai, "Topic set size design", Information Retrieval Journal 19(3), 2016; issue 32, point 6).

From a pilot matrix of scores (systems x topics), :func:`residual_variance` estimates the
variance sigma^2 that topics add to one system's score once the systems' and topics' own effects
are taken out: the residual mean square V_E of the two-way ANOVA without replication (Sakai's
estimate). :func:`topics_for_width` then finds the smallest number of topics n whose 95% Student
interval has an *expected* full width at most ``width``:

    2 t_{1-alpha/2}(n - 1) E[s] / sqrt(n) <= width,   E[s] = c4(n) sigma_x,

c4(n) = sqrt(2 / (n - 1)) Gamma(n / 2) / Gamma((n - 1) / 2) the bias of the sample standard
deviation (Sakai's CI-based design). ``what="difference"`` sizes the interval of the mean
difference between two systems over the same topics, sigma_x^2 = 2 sigma^2 (Sakai's choice for
paired comparisons); ``what="mean"`` sizes one system's mean, sigma_x^2 the variance of a
system's per-topic scores (:func:`score_variance`: the pooled within-system variance, topic
effects included: a mean over topics carries them).
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
import numpy.typing as npt

__all__ = ["expected_width", "residual_variance", "score_variance", "topics_for_width"]

MAX_TOPICS = 100_000


def _matrix(scores: npt.ArrayLike) -> npt.NDArray[np.float64]:
    x = np.asarray(scores, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 2 or x.shape[1] < 2:
        raise ValueError("pilot scores must be a systems x topics matrix, at least 2 x 2")
    if not np.isfinite(x).all():
        raise ValueError("pilot scores must be finite")
    return x


def residual_variance(scores: npt.ArrayLike) -> float:
    """V_E of the two-way ANOVA without replication (systems x topics), Sakai's sigma^2."""
    x = _matrix(scores)
    m, n = x.shape
    resid = x - x.mean(axis=1, keepdims=True) - x.mean(axis=0, keepdims=True) + x.mean()
    return float((resid**2).sum() / ((m - 1) * (n - 1)))


def score_variance(scores: npt.ArrayLike) -> float:
    """The pooled variance of each system's per-topic scores (unbiased, within systems)."""
    x = _matrix(scores)
    m, n = x.shape
    return float(((x - x.mean(axis=1, keepdims=True)) ** 2).sum() / (m * (n - 1)))


def _c4(n: int) -> float:
    return math.exp(0.5 * math.log(2.0 / (n - 1)) + math.lgamma(n / 2) - math.lgamma((n - 1) / 2))


def expected_width(n: int, variance: float, level: float = 0.95) -> float:
    """The expected full width of the Student interval of a mean over ``n`` topics."""
    from scipy.stats import t as student

    if n < 2:
        return math.inf
    q = float(student.ppf(0.5 + level / 2, n - 1))
    return 2.0 * q * _c4(n) * math.sqrt(variance / n)


def topics_for_width(
    variance: float,
    width: float,
    *,
    what: Literal["difference", "mean"] = "difference",
    level: float = 0.95,
) -> int:
    """The smallest number of topics whose interval's expected full width is at most ``width``
    (see the module docstring); ``variance`` is sigma^2 (:func:`residual_variance`) for a
    difference, a score's variance (:func:`score_variance`) for a mean."""
    if not width > 0:
        raise ValueError(f"the target width must be positive, got {width}")
    if not variance >= 0 or not math.isfinite(variance):
        raise ValueError(f"the variance must be a finite number >= 0, got {variance}")
    var = 2.0 * variance if what == "difference" else variance
    if var == 0:
        return 2
    n = max(2, math.ceil((2 * 1.96) ** 2 * var / width**2))  # the normal answer: a lower bound
    while expected_width(n, var, level) > width:
        n += 1
        if n > MAX_TOPICS:
            raise ValueError(f"more than {MAX_TOPICS} topics would be needed")
    while n > 2 and expected_width(n - 1, var, level) <= width:
        n -= 1
    return n
