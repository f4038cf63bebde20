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
concave in ``a``, solved by bisection; ``b`` by a log-spaced grid refined twice around its best
point). Both
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
when nothing is left to judge. In docid order the rate is no guide (see ``stop_suggestion``):
there stopping is suggested only when the flat estimate of relevant left is below one.

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


@dataclass(frozen=True)
class _Blocks:
    """Outcomes grouped into consecutive blocks of judging positions: block j holds ``n[j]``
    outcomes, ``k[j]`` of them relevant, at mean position ``t[j]``. One outcome per block (exact
    likelihood) up to ``_MAX_BLOCKS`` outcomes; beyond, equal blocks whose outcomes share the
    curve's value at their mean position (the curves change little within 1/_MAX_BLOCKS of the
    history), so a fit costs the same for any history length."""

    t: FloatArray
    n: FloatArray
    k: FloatArray


_MAX_BLOCKS = 256


def _blocks(y: FloatArray) -> _Blocks:
    positions = np.arange(1, y.size + 1, dtype=np.float64)
    if y.size <= _MAX_BLOCKS:
        return _Blocks(t=positions, n=np.ones_like(y), k=y)
    edges = np.linspace(0, y.size, _MAX_BLOCKS + 1).round().astype(int)
    n = np.diff(edges).astype(np.float64)
    k = np.add.reduceat(y, edges[:-1])
    t = np.add.reduceat(positions, edges[:-1]) / n
    return _Blocks(t=t, n=n, k=k)


def _best_a(b: _Blocks, c: FloatArray) -> FloatArray:
    """For each row of ``c`` (the curve g at the blocks' positions, in (0, 1], one row per b):
    argmax over 0 <= a <= 1 of sum k log(a c) + (n - k) log(1 - a c).

    d/da = K / a - sum (n - k) c / (1 - a c) is decreasing in a; its root is found by
    bisection, all rows at once.
    """
    rows = c.shape[0]
    total = float(b.k.sum())
    if total == 0.0:
        return np.zeros(rows)
    misses = b.n - b.k
    has_miss = misses > 0
    if not has_miss.any():
        return np.ones(rows)
    c0, m0 = c[:, has_miss], misses[has_miss]
    hi = 1.0 / c0.max(axis=1)  # the likelihood is -inf at a = 1 / max c0
    lo = np.zeros(rows)
    for _ in range(32):  # a to within 2**-32
        mid = (lo + hi) / 2.0
        grad = total / mid - np.sum(m0 * c0 / (1.0 - mid[:, None] * c0), axis=1)
        up = grad > 0
        lo = np.where(up, mid, lo)
        hi = np.where(up, hi, mid)
    return np.minimum(lo, 1.0)


def _log_likelihood(b: _Blocks, p: FloatArray) -> FloatArray:
    """Row-wise binomial log-likelihood of the blocks under probabilities ``p`` (rows x blocks),
    without the constant binomial coefficients (the Bernoulli likelihood when blocks are single
    outcomes)."""
    p = np.clip(p, 1e-12, 1.0 - 1e-12)
    out: FloatArray = np.sum(b.k * np.log(p) + (b.n - b.k) * np.log1p(-p), axis=1)
    return out


def _profile(shape: Shape, b: _Blocks, bs: FloatArray) -> tuple[FloatArray, FloatArray]:
    """The profile log-likelihood max_a log L(a, b) and its a, for each b of ``bs``."""
    c = np.stack([_g(shape, float(v), b.t) for v in bs])
    a = _best_a(b, c)
    return _log_likelihood(b, a[:, None] * c), a


def _fit_shape(shape: Shape, blocks: _Blocks, n: int) -> DecayFit:
    if shape == "flat":
        ll, a = _profile(shape, blocks, np.zeros(1))
        return DecayFit(shape=shape, a=float(a[0]), b=0.0, log_likelihood=float(ll[0]), n=n)
    # b on a log grid (and 0), then twice more on a finer grid around the best point so far
    grid = np.concatenate([[0.0], np.geomspace(1e-5, _B_MAX, 40)])
    best_ll, best_a, best_b = -math.inf, 0.0, 0.0
    for _ in range(3):
        ll, a = _profile(shape, blocks, grid)
        i = int(np.argmax(ll))
        if ll[i] > best_ll:
            best_ll, best_a, best_b = float(ll[i]), float(a[i]), float(grid[i])
        lo, hi = float(grid[max(i - 1, 0)]), float(grid[min(i + 1, grid.size - 1)])
        grid = np.linspace(lo, hi, 21)
    return DecayFit(shape=shape, a=best_a, b=best_b, log_likelihood=best_ll, n=n)


def fit_decay(
    outcomes: Sequence[bool], *, shapes: Sequence[Shape] = ("exponential", "power")
) -> DecayFit | None:
    """The maximum-likelihood non-increasing discovery curve of ``outcomes`` (judging order),
    the best of ``shapes`` by likelihood (ties: the first); None when nothing is judged.

    Histories longer than 256 outcomes are fitted on 256 consecutive blocks (see ``_Blocks``)."""
    if not outcomes:
        return None
    if not shapes:
        raise ValueError("shapes must name at least one curve")
    y = np.asarray([1.0 if v else 0.0 for v in outcomes], dtype=np.float64)
    blocks = _blocks(y)
    fits = [_fit_shape(shape, blocks, int(y.size)) for shape in shapes]
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
    recent: RecentRate,
    *,
    stop_rate: float,
    left: int,
    expected: float | None = None,
    prioritised: bool = True,
) -> StopSuggestion:
    """Stop when nothing is left; in a prioritised order (rank, fusion, adaptive), when a full
    window's rate is below ``stop_rate``; in docid order (``prioritised=False``), only when the
    expected relevant left (the flat estimate) is below one document.

    Why the two rules: along a prioritised order a run of non-relevant items means relevance
    has thinned out; along docid order it does not (docids that sort together often share a
    source, and a source can be poor in relevant documents while a later one is rich: on TREC
    2003 Robust's depth-100 pools the rate rule stops at 32% of the relevant documents in
    docid order, 88% in rank order). ``expected`` is quoted in the reason."""
    if left == 0:
        return StopSuggestion(True, "done: no item is left that nobody judged")
    rate = recent.rate
    if not recent.full or rate is None:
        return StopSuggestion(
            False,
            f"continue: {recent.judged} of the {recent.window} judgments the rate needs",
        )
    known = expected is not None and not math.isnan(expected)
    tail = f", about {expected:.1f} left" if known else ""
    said = f"{recent.found} relevant in the last {recent.judged} (rate {rate:.3f}"
    if not prioritised:
        if known and expected is not None and expected < 1.0:
            return StopSuggestion(
                True, f"stop: about {expected:.1f} relevant expected among the {left} left"
            )
        return StopSuggestion(
            False,
            f"continue: docid order, so the rate says little; {said}{tail})",
        )
    if rate < stop_rate:
        return StopSuggestion(True, f"stop: {said} < {stop_rate:g}{tail})")
    return StopSuggestion(False, f"continue: {said} >= {stop_rate:g}{tail})")
