"""Quality control of relevance assessors: accuracy on gold items, agreement with the other
assessors, grade distribution, pace, and drift of all of these over time.

A *gold item* is a (topic, document) whose grade is known (imported by an admin or taken from a
published qrels version) and which is mixed into an assessor's queue. The assessor's grade ``g``
is compared with the known grade ``t``:

- exact accuracy: share of gold items with ``g == t``;
- binary accuracy: share with ``(g >= L) == (t >= L)`` for the relevance level ``L`` (relevant
  vs not relevant: the distinction the binary measures and the qrels' users care about most;
  neighbouring grades of a graded scale are disputed even among careful assessors);
- mean absolute error ``mean |g - t|``, in grades.

Every accuracy carries a 95% Wilson score interval (Wilson 1927): for ``k`` successes in ``n``
trials, ``p = k/n`` and ``z = 1.96``,

    centre = (p + z^2 / (2n)) / (1 + z^2 / n)
    half   = z / (1 + z^2 / n) * sqrt(p (1 - p) / n + z^2 / (4 n^2))

which, unlike the normal (Wald) interval, stays inside [0, 1] and is not degenerate at
``p = 0`` or ``p = 1`` for the small counts quality control works with (Brown, Cai & DasGupta
2001 recommend it for n < 40).

Agreement of one assessor with the others (``agreement_with_others``): every item the assessor
judged that somebody else judged too gives one pair (their grade, the other's grade) per other
assessor; on those pairs, exact agreement is the share of equal pairs and Cohen's kappa
(unweighted, Cohen 1960) is ``(p_o - p_e) / (1 - p_e)`` with ``p_o`` the observed share of equal
pairs and ``p_e = sum_j a_j b_j`` from the two sides' marginal grade shares ``a_j`` and ``b_j``.

Drift (``drift``): the judgments in time order, cut into consecutive blocks (of N judgments, or
by the caller's grouping such as per day), each summarised as above (``summarise``), so that an
assessor who starts well and tires, or speeds up and stops reading, shows it.

References
----------
- Wilson (1927), "Probable inference, the law of succession, and statistical inference",
  JASA 22(158).
- Brown, Cai & DasGupta (2001), "Interval estimation for a binomial proportion", Stat. Sci. 16(2).
- Cohen (1960), "A coefficient of agreement for nominal scales", Educ. Psychol. Meas. 20(1).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "AssessorAgreement",
    "Block",
    "GoldAccuracy",
    "agreement_with_others",
    "cohen_kappa",
    "drift",
    "gold_accuracy",
    "grade_distribution",
    "median",
    "summarise",
    "wilson_interval",
]

Z95 = 1.959963984540054  # the standard normal's 97.5% quantile


def _json_float(x: float) -> float | None:
    return None if math.isnan(x) else x


def wilson_interval(successes: int, n: int, *, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for ``successes`` of ``n`` (module docstring); (nan, nan) for
    ``n == 0``. ``0 <= successes <= n`` or ``ValueError``."""
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"need 0 <= successes <= n, got {successes} of {n}")
    if n == 0:
        return math.nan, math.nan
    p = successes / n
    z2 = z * z
    denominator = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z / denominator * math.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class GoldAccuracy:
    """An assessor's accuracy on ``n`` gold items (module docstring); NaN when ``n == 0``."""

    n: int
    exact: float
    exact_interval: tuple[float, float]
    binary: float
    binary_interval: tuple[float, float]
    mean_abs_error: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable; NaN becomes ``None``."""
        return {
            "n": self.n,
            "exact": _json_float(self.exact),
            "exact_interval": [_json_float(x) for x in self.exact_interval],
            "binary": _json_float(self.binary),
            "binary_interval": [_json_float(x) for x in self.binary_interval],
            "mean_abs_error": _json_float(self.mean_abs_error),
        }


def gold_accuracy(
    given: Sequence[int], gold: Sequence[int], *, relevance_level: int
) -> GoldAccuracy:
    """Exact and binary accuracy (grade >= ``relevance_level`` is relevant) of the grades
    ``given`` against the known grades ``gold`` (same length, pairwise), with 95% Wilson
    intervals, and the mean absolute error."""
    if len(given) != len(gold):
        raise ValueError(f"{len(given)} grades given for {len(gold)} gold grades")
    n = len(given)
    if n == 0:
        nan2 = (math.nan, math.nan)
        return GoldAccuracy(0, math.nan, nan2, math.nan, nan2, math.nan)
    g = np.asarray(given, dtype=np.int64)
    t = np.asarray(gold, dtype=np.int64)
    exact = int((g == t).sum())
    binary = int(((g >= relevance_level) == (t >= relevance_level)).sum())
    return GoldAccuracy(
        n=n,
        exact=exact / n,
        exact_interval=wilson_interval(exact, n),
        binary=binary / n,
        binary_interval=wilson_interval(binary, n),
        mean_abs_error=float(np.abs(g - t).mean()),
    )


def cohen_kappa(a: Sequence[int], b: Sequence[int], *, scale: Sequence[int]) -> float:
    """Unweighted Cohen's kappa of two paired grade sequences on ``scale`` (module docstring).

    NaN when there are no pairs or when chance agreement is perfect (both sides used one and the
    same grade: 0/0). A grade outside ``scale`` raises ``ValueError``."""
    if len(a) != len(b):
        raise ValueError(f"{len(a)} grades paired with {len(b)}")
    if not a:
        return math.nan
    position = {g: i for i, g in enumerate(scale)}
    k = len(position)
    table = np.zeros((k, k), dtype=np.float64)
    for x, y in zip(a, b, strict=True):
        if x not in position or y not in position:
            raise ValueError(f"grade pair ({x}, {y}) is not on the scale {list(scale)}")
        table[position[x], position[y]] += 1.0
    table /= table.sum()
    observed = float(np.trace(table))
    expected = float(table.sum(axis=1) @ table.sum(axis=0))
    if expected >= 1.0 - 1e-12:
        return math.nan
    return (observed - expected) / (1.0 - expected)


@dataclass(frozen=True)
class AssessorAgreement:
    """One assessor against the others on shared items: ``n_items`` items shared with at least
    one other assessor, ``n_pairs`` (own grade, other's grade) pairs, the share of equal pairs
    and Cohen's kappa on them (NaN when undefined)."""

    n_items: int
    n_pairs: int
    exact: float
    kappa: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "n_items": self.n_items,
            "n_pairs": self.n_pairs,
            "exact": _json_float(self.exact),
            "kappa": _json_float(self.kappa),
        }


def agreement_with_others(
    judgments: Iterable[tuple[Hashable, str, int]], *, scale: Sequence[int]
) -> dict[str, AssessorAgreement]:
    """Per assessor, agreement with every other assessor on the items they share (module
    docstring), from ``(item, assessor, grade)`` triples (one per item and assessor: a repeat
    raises ``ValueError``). Assessors who share no item get ``n_items == 0`` and NaN."""
    by_item: dict[Hashable, dict[str, int]] = {}
    for item, who, grade in judgments:
        grades = by_item.setdefault(item, {})
        if who in grades:
            raise ValueError(f"{who!r} judged item {item!r} twice")
        grades[who] = grade
    mine: dict[str, list[int]] = {}
    theirs: dict[str, list[int]] = {}
    items: dict[str, int] = {}
    for grades in by_item.values():
        for who, grade in grades.items():
            mine.setdefault(who, [])
            theirs.setdefault(who, [])
            items.setdefault(who, 0)
            others = [g for other, g in grades.items() if other != who]
            if others:
                items[who] += 1
            for g in others:
                mine[who].append(grade)
                theirs[who].append(g)
    out = {}
    for who in sorted(mine):
        a, b = mine[who], theirs[who]
        n = len(a)
        exact = sum(1 for x, y in zip(a, b, strict=True) if x == y) / n if n else math.nan
        out[who] = AssessorAgreement(
            n_items=items[who], n_pairs=n, exact=exact, kappa=cohen_kappa(a, b, scale=scale)
        )
    return out


def grade_distribution(grades: Iterable[int], *, scale: Sequence[int]) -> dict[int, int]:
    """How often each grade of ``scale`` was given (every grade of the scale present, 0 if
    unused; a grade off the scale is counted under its own value)."""
    out = dict.fromkeys(scale, 0)
    for g in grades:
        out[g] = out.get(g, 0) + 1
    return out


def median(values: Sequence[float]) -> float:
    """The median (mean of the middle two for an even count); NaN for no values."""
    if len(values) == 0:
        return math.nan
    return float(np.median(np.asarray(values, dtype=np.float64)))


@dataclass(frozen=True)
class Block:
    """A run of consecutive judgments: ``n`` judgments, ``median_seconds`` of active time per
    judgment, and the accuracy on the gold items among them."""

    label: str
    n: int
    median_seconds: float
    accuracy: GoldAccuracy

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "n": self.n,
            "median_seconds": _json_float(self.median_seconds),
            "gold": self.accuracy.to_dict(),
        }


def summarise(
    label: str,
    seconds: Sequence[float],
    given: Sequence[int],
    gold: Sequence[int | None],
    *,
    relevance_level: int,
) -> Block:
    """One block: ``seconds``, ``given`` grades and ``gold`` grades (None: not a gold item) of
    its judgments, pairwise."""
    if not len(seconds) == len(given) == len(gold):
        raise ValueError("seconds, given and gold must have one entry per judgment")
    pairs = [(g, t) for g, t in zip(given, gold, strict=True) if t is not None]
    return Block(
        label=label,
        n=len(given),
        median_seconds=median(seconds),
        accuracy=gold_accuracy(
            [g for g, _ in pairs], [t for _, t in pairs], relevance_level=relevance_level
        ),
    )


def drift(
    seconds: Sequence[float],
    given: Sequence[int],
    gold: Sequence[int | None],
    *,
    size: int,
    relevance_level: int,
) -> list[Block]:
    """The judgments (in time order) in consecutive blocks of ``size`` (the last one may be
    shorter), each summarised by ``summarise``; labels are 1-based judgment ranges ("1-20")."""
    if size < 1:
        raise ValueError(f"block size must be at least 1, got {size}")
    out = []
    for start in range(0, len(given), size):
        end = min(start + size, len(given))
        out.append(
            summarise(
                f"{start + 1}-{end}",
                seconds[start:end],
                given[start:end],
                gold[start:end],
                relevance_level=relevance_level,
            )
        )
    return out
