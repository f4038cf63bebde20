"""When to stop judging a topic: discovery rates, relevant documents left, a stopping rule.

Input everywhere is a topic's judging history as a sequence of outcomes in the order the items
were judged (``True`` = relevant), ``y_1, ..., y_n``, and the number ``m`` of queued items not
judged yet.

**Recent rate.** ``rate = (y_{n-w+1} + ... + y_n) / w`` over the last ``w`` (default 50)
judgments, or over all ``n`` when fewer. This is the quantity Losada, Parapar and Barreiro's
rate-based stopping methods watch: once new relevant documents have become rare, further
judgments of the topic buy little.

**Relevant left: the fitted discovery curve.** The probability that the ``t``-th judged item is
relevant is modelled as a non-increasing curve ``p(t) = a * g(t)`` with ``g(1) = 1``:

- exponential: ``g(t) = exp(-b (t - 1))``;
- power: ``g(t) = t ** -b``;
- flat: ``g(t) = 1`` (``a = K / n``, the plain sampling estimate), for an order known to say
  nothing about relevance (docid order): fitting a decay there only fits noise;

with ``0 <= a <= 1`` and ``b >= 0``, fitted by maximum likelihood to the Bernoulli outcomes
(``log L = sum_t y_t log p(t) + (1 - y_t) log(1 - p(t))``; for a fixed ``b`` the likelihood is
concave in ``a``, solved by bisection; ``b`` by a grid search refined by golden section). Both
shapes have two parameters; the one with the higher likelihood is used and named in the result.
The expected relevant among the next ``m`` items is ``sum_{t=n+1}^{n+m} p(t)``.

Assumptions (say them wherever the figure is shown): the items left are judged in an order that
continues the trend of the items judged so far. That holds for a fixed judging order (rank or
fusion order: relevance thins out along it; docid order: the rate is flat, ``b = 0``, and the
estimate is the plain sampling estimate ``m * K / n``), and roughly for adaptive orders (the
strategy keeps choosing the most promising items first). It does not hold when the order is
changed midway (a re-pool that queues a novel run's documents behind the old ones): the fit then
sees one curve where there are two. Grades are taken as the truth (no assessor error).

**Recent-rate estimate.** ``rate * m``: the relevant left if the last ``w`` judgments' rate held
for every item left. Under a decaying rate it overestimates; it is shown beside the fit as the
pessimistic (larger) figure.

**Stopping rule.** Suggest stopping a topic once at least ``w`` items are judged and the recent
rate is below ``stop_rate`` (a rate-based rule in the family studied by Losada et al. 2019), or
when nothing is left to judge.

References
----------
- Losada, Parapar, Barreiro (2016), "Feeling lucky? Multi-armed bandits for ordering judgements
  in pooling-based evaluation", ACM SAC.
- Losada, Parapar, Barreiro (2017), "Multi-armed bandits for adjudicating documents in
  pooling-based evaluation of information retrieval systems", Inf. Process. Manage. 53(5).
- Losada, Parapar, Barreiro (2019), "When to stop making relevance judgments? A study of
  stopping methods for building information retrieval test collections", JASIST 70(1).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

__all__ = [
    "DEFAULT_WINDOW",
    "DecayFit",
    "RecentRate",
    "StopSuggestion",
    "expected_left",
    "fit_decay",
    "recent_rate",
    "stop_suggestion",
]

DEFAULT_WINDOW = 50
Shape = Literal["exponential", "power", "flat"]
FloatArray = npt.NDArray[np.float64]

# b is searched on [0, B_MAX]: exp(-2 (t-1)) or t**-2 already leave almost nothing after a few
# dozen items; anything steeper is indistinguishable from "no relevant left".
_B_MAX = 2.0


@dataclass(frozen=True)
class RecentRate:
    """``found`` relevant among the last ``judged`` (at most ``window``) judgments."""

    found: int
    judged: int
    window: int

    @property
    def rate(self) -> float | None:
        """found / judged; None when nothing is judged."""
        return self.found / self.judged if self.judged else None

    @property
    def full(self) -> bool:
        """True when the window holds ``window`` judgments (the rate is over a full window)."""
        return self.judged >= self.window


def recent_rate(outcomes: Sequence[bool], *, window: int = DEFAULT_WINDOW) -> RecentRate:
    """Relevant found among the last ``window`` outcomes (all of them when fewer)."""
    if window < 1:
        raise ValueError(f"window must be at least 1, got {window}")
    last = list(outcomes)[-window:]
    return RecentRate(found=sum(1 for y in last if y), judged=len(last), window=window)


@dataclass(frozen=True)
class DecayFit:
    """``p(t) = a * g(t)``, ``t`` = 1-based judging order (see the module docstring)."""

    shape: Shape
    a: float
    b: float
    log_likelihood: float
    n: int  # outcomes fitted

    def p(self, t: FloatArray) -> FloatArray:
        """The fitted probability of relevance of the items at judging positions ``t``."""
        return self.a * _g(self.shape, self.b, t)


def _g(shape: Shape, b: float, t: FloatArray) -> FloatArray:
    if shape == "flat":
        return np.ones_like(t)
    if shape == "exponential":
        return np.exp(-b * (t - 1.0))
    return np.power(t, -b)


def _best_a(y: FloatArray, c: FloatArray) -> float:
    """argmax over 0 <= a <= 1 of sum y log(a c) + (1 - y) log(1 - a c), for c in (0, 1].

    d/da = K / a - sum_{y=0} c / (1 - a c) is decreasing in a; its root is found by bisection.
    """
    k = float(y.sum())
    if k == 0.0:
        return 0.0
    c0 = c[y == 0]
    if c0.size == 0:
        return 1.0
    hi = 1.0 / float(c0.max())  # the likelihood is -inf at a = 1 / max c0
    lo = 0.0
    for _ in range(60):
        mid = (lo + hi) / 2.0
        grad = k / mid - float(np.sum(c0 / (1.0 - mid * c0)))
        if grad > 0:
            lo = mid
        else:
            hi = mid
    return min(lo, 1.0)


def _log_likelihood(y: FloatArray, p: FloatArray) -> float:
    p = np.clip(p, 1e-12, 1.0 - 1e-12)
    return float(np.sum(y * np.log(p) + (1.0 - y) * np.log1p(-p)))


def _profile(shape: Shape, y: FloatArray, t: FloatArray, b: float) -> tuple[float, float]:
    c = _g(shape, b, t)
    a = _best_a(y, c)
    return _log_likelihood(y, a * c), a


def _fit_shape(shape: Shape, y: FloatArray, t: FloatArray) -> DecayFit:
    if shape == "flat":
        ll, a = _profile(shape, y, t, 0.0)
        return DecayFit(shape=shape, a=a, b=0.0, log_likelihood=ll, n=int(y.size))
    grid = np.concatenate([[0.0], np.geomspace(1e-5, _B_MAX, 60)])
    values = [_profile(shape, y, t, float(b))[0] for b in grid]
    i = int(np.argmax(values))
    lo, hi = float(grid[max(i - 1, 0)]), float(grid[min(i + 1, grid.size - 1)])
    # golden-section refinement of b inside the bracket around the best grid point
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    x1, x2 = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    f1, f2 = _profile(shape, y, t, x1)[0], _profile(shape, y, t, x2)[0]
    for _ in range(40):
        if f1 >= f2:
            hi, x2, f2 = x2, x1, f1
            x1 = hi - ratio * (hi - lo)
            f1 = _profile(shape, y, t, x1)[0]
        else:
            lo, x1, f1 = x1, x2, f2
            x2 = lo + ratio * (hi - lo)
            f2 = _profile(shape, y, t, x2)[0]
    candidates = [(values[i], float(grid[i])), (f1, x1), (f2, x2)]
    _, best_b = max(candidates)
    ll, a = _profile(shape, y, t, best_b)
    return DecayFit(shape=shape, a=a, b=best_b, log_likelihood=ll, n=int(y.size))


def fit_decay(
    outcomes: Sequence[bool], *, shapes: Sequence[Shape] = ("exponential", "power")
) -> DecayFit | None:
    """The maximum-likelihood non-increasing discovery curve of ``outcomes`` (judging order),
    the best of ``shapes`` by likelihood (ties: the first); None when nothing is judged."""
    if not outcomes:
        return None
    if not shapes:
        raise ValueError("shapes must name at least one curve")
    y = np.asarray([1.0 if v else 0.0 for v in outcomes], dtype=np.float64)
    t = np.arange(1, y.size + 1, dtype=np.float64)
    fits = [_fit_shape(shape, y, t) for shape in shapes]
    return max(fits, key=lambda f: f.log_likelihood)  # max keeps the first of equals


def expected_left(fit: DecayFit | None, *, judged: int, left: int) -> float:
    """sum_{t=judged+1}^{judged+left} p(t): expected relevant among the ``left`` items still to
    judge after ``judged`` (0 when nothing is left; None fit, nothing judged: NaN)."""
    if left < 0 or judged < 0:
        raise ValueError("judged and left must be non-negative")
    if left == 0:
        return 0.0
    if fit is None:
        return math.nan
    t = np.arange(judged + 1, judged + left + 1, dtype=np.float64)
    return float(np.sum(fit.p(t)))


@dataclass(frozen=True)
class StopSuggestion:
    stop: bool
    reason: str


def stop_suggestion(
    recent: RecentRate, *, stop_rate: float, left: int, expected: float | None = None
) -> StopSuggestion:
    """Stop when nothing is left, or when a full window's rate is below ``stop_rate``.

    ``expected`` (relevant left, from the fit) is only quoted in the reason."""
    if left == 0:
        return StopSuggestion(True, "done: no item is left that nobody judged")
    rate = recent.rate
    if not recent.full or rate is None:
        return StopSuggestion(
            False,
            f"continue: {recent.judged} of the {recent.window} judgments the rate needs",
        )
    tail = "" if expected is None or math.isnan(expected) else f", about {expected:.1f} left"
    if rate < stop_rate:
        return StopSuggestion(
            True,
            f"stop: {recent.found} relevant in the last {recent.judged} "
            f"(rate {rate:.3f} < {stop_rate:g}{tail})",
        )
    return StopSuggestion(
        False,
        f"continue: {recent.found} relevant in the last {recent.judged} "
        f"(rate {rate:.3f} >= {stop_rate:g}{tail})",
    )
