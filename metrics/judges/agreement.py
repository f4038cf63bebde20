"""Inter-annotator agreement for graded relevance judgments, and the adjudication list.

Input everywhere is an iterable of ``(item, annotator, grade)`` triples: ``item`` is any hashable
key (for example ``(qid, docid)``), ``annotator`` a string and ``grade`` an integer from the
campaign's grade scale. Each annotator judges an item at most once: a repeated
``(item, annotator)`` pair raises ``ValueError`` (pass the latest judgment, not the history).

Statistics, all computed on the items judged by two or more annotators (an item judged once says
nothing about agreement):

- Cohen's kappa per pair of annotators, linear-weighted by default (Cohen 1968), on the items the
  pair shares. Weights use the grades' positions in the scale, so ``[0, 1, 2, 3]`` and
  ``[0, 1, 2, 4]`` weight alike.
- Fleiss' kappa (Fleiss 1971), nominal, computed here from its definition (the tests check it
  against ``statsmodels.stats.inter_rater.fleiss_kappa``, which the service does not need). It
  needs the same number of ratings on every item; with unequal counts it is computed on the items
  having the most common number of ratings, and ``Agreement.notes`` says so.
- Krippendorff's alpha, ordinal, via the ``krippendorff`` package; it handles unequal numbers of
  ratings (missing data) natively.

A chance-corrected statistic is undefined (NaN, with a note) when there is no variation: if only
one grade occurs, expected agreement is perfect and the ratio is 0/0.

References
----------
- Cohen (1960), "A coefficient of agreement for nominal scales", Educ. Psychol. Meas. 20(1).
- Cohen (1968), "Weighted kappa", Psychol. Bull. 70(4).
- Fleiss (1971), "Measuring nominal scale agreement among many raters", Psychol. Bull. 76(5).
- Krippendorff (2011), "Computing Krippendorff's alpha-reliability", Univ. of Pennsylvania,
  https://repository.upenn.edu/asc_papers/43
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import krippendorff
import numpy as np
import numpy.typing as npt

__all__ = [
    "Agreement",
    "Disagreement",
    "PairKappa",
    "agreement",
    "agreement_by_topic",
    "check_scale",
    "consensus_grade",
    "disagreements",
    "weight_matrix",
    "weighted_kappa",
]

Weights = Literal["linear", "quadratic", "none"]
ConsensusRule = Literal["median", "majority", "max", "min"]
Judgment = tuple[Hashable, str, int]

_WEIGHTS: tuple[str, ...] = ("linear", "quadratic", "none")
_RULES: tuple[str, ...] = ("median", "majority", "max", "min")


@dataclass(frozen=True)
class PairKappa:
    """Cohen's kappa of one pair of annotators on the ``n_items`` items both judged.

    Weighted as asked of ``agreement()`` (linear by default). ``kappa`` is NaN when the pair shares
    fewer than 2 items, or when both gave one and the same grade to every shared item (expected
    disagreement is then 0 and kappa is 0/0).
    """

    annotator_a: str
    annotator_b: str
    n_items: int
    kappa: float


@dataclass(frozen=True)
class Agreement:
    """Agreement statistics over the items judged by two or more annotators.

    ``n_items`` counts those items; ``n_annotators`` counts the annotators who judged at least one
    of them. NaN marks an undefined statistic; ``notes`` says why, in plain language.
    """

    n_items: int
    n_annotators: int
    percent_agreement: float
    fleiss_kappa: float
    krippendorff_alpha: float
    pairs: list[PairKappa]
    notes: list[str]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict; NaN becomes ``None``."""
        return {
            "n_items": self.n_items,
            "n_annotators": self.n_annotators,
            "percent_agreement": _json_float(self.percent_agreement),
            "fleiss_kappa": _json_float(self.fleiss_kappa),
            "krippendorff_alpha": _json_float(self.krippendorff_alpha),
            "pairs": [
                {
                    "annotator_a": p.annotator_a,
                    "annotator_b": p.annotator_b,
                    "n_items": p.n_items,
                    "kappa": _json_float(p.kappa),
                }
                for p in self.pairs
            ],
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class Disagreement:
    """One item whose annotators gave different grades: ``grades`` maps annotator -> grade.

    ``spread`` is max(grade) - min(grade), derived from ``grades``.
    """

    item: Hashable
    grades: dict[str, int]
    spread: int = field(init=False)

    def __post_init__(self) -> None:
        if not self.grades:
            raise ValueError("a disagreement needs at least one grade")
        values = self.grades.values()
        object.__setattr__(self, "spread", max(values) - min(values))


def _json_float(x: float) -> float | None:
    return None if math.isnan(x) else x


def _collect(judgments: Iterable[Judgment]) -> dict[Hashable, dict[str, int]]:
    """item -> {annotator: grade}, annotators sorted; a repeated (item, annotator) is an error."""
    by_item: dict[Hashable, dict[str, int]] = {}
    for item, annotator, grade in judgments:
        grades = by_item.setdefault(item, {})
        if annotator in grades:
            raise ValueError(
                f"annotator {annotator!r} judged item {item!r} more than once; "
                "pass one judgment per annotator and item"
            )
        grades[annotator] = int(grade)
    return {item: dict(sorted(grades.items())) for item, grades in by_item.items()}


def check_scale(scale: Sequence[int]) -> list[int]:
    """The scale as ints; ``ValueError`` unless it has two or more strictly increasing grades."""
    grades = [int(g) for g in scale]
    if len(grades) < 2:
        raise ValueError(f"the grade scale needs at least two grades, got {grades}")
    if any(b <= a for a, b in itertools.pairwise(grades)):
        raise ValueError(f"the grade scale must be strictly increasing, got {grades}")
    return grades


def weight_matrix(k: int, weights: Weights) -> npt.NDArray[np.float64]:
    """Disagreement weights w_ij on category positions i, j in 0..k-1 (0 on the diagonal).

    linear: |i - j| / (k - 1); quadratic: (i - j)^2 / (k - 1)^2; none: 1 if i != j else 0.
    """
    idx = np.arange(k, dtype=np.float64)
    dist = np.abs(idx[:, None] - idx[None, :]) / (k - 1)
    if weights == "linear":
        return dist
    if weights == "quadratic":
        return dist**2
    return (dist > 0).astype(np.float64)


def weighted_kappa(table: npt.NDArray[np.float64], w: npt.NDArray[np.float64]) -> float:
    """Cohen's weighted kappa of a k x k confusion table (rows: rater A, columns: rater B).

    kappa_w = 1 - sum(w * O) / sum(w * E), with O the observed proportions and
    E_ij = p_i. * p_.j the proportions expected from the margins (Cohen 1968). With 0/1 weights
    this is Cohen's (1960) unweighted kappa. NaN when fewer than 2 items or sum(w * E) = 0.
    """
    n = float(table.sum())
    if n < 2:
        return math.nan
    observed = table / n
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    d_expected = float((w * expected).sum())
    if d_expected <= 0.0:
        return math.nan
    return 1.0 - float((w * observed).sum()) / d_expected


def agreement(
    judgments: Iterable[Judgment],
    *,
    scale: Sequence[int],
    weights: Weights = "linear",
) -> Agreement:
    """Agreement among annotators on the items that two or more of them judged.

    - ``percent_agreement``: share of those items on which all their annotators gave one grade.
    - ``pairs``: for every pair of annotators sharing at least one item, Cohen's weighted kappa
      kappa_w = 1 - sum_ij w_ij O_ij / sum_ij w_ij E_ij over the pair's confusion table on the
      scale's grades (Cohen 1968); ``weights`` picks w_ij on grade positions i, j (k grades):
      linear |i-j|/(k-1), quadratic (i-j)^2/(k-1)^2, or none (unweighted, Cohen 1960).
    - ``fleiss_kappa``: Fleiss (1971), kappa = (P_bar - P_e) / (1 - P_e) with P_bar the mean
      per-item share of agreeing rater pairs and P_e = sum_j p_j^2, nominal. Fleiss' kappa
      assumes the same number n of ratings on every item; when counts differ it is computed on
      the items having the most common n (the larger n on a tie), and a note says how many.
    - ``krippendorff_alpha``: alpha = 1 - D_o / D_e with the ordinal distance metric
      (Krippendorff 2011), over all items with >= 2 ratings; ``scale`` is the value domain, so an
      unused grade still orders the others.

    Undefined values are NaN with a note: no item with >= 2 ratings (everything NaN), a pair
    sharing < 2 items, or no variation (a single grade used: expected agreement is perfect, so
    kappa and alpha are 0/0; percent agreement is then 1.0). A grade outside ``scale``, a repeated
    (item, annotator) pair, or a scale of fewer than 2 strictly increasing grades raises
    ``ValueError``.
    """
    if weights not in _WEIGHTS:
        raise ValueError(f"weights must be one of {_WEIGHTS}, got {weights!r}")
    grades_scale = check_scale(scale)
    position = {g: i for i, g in enumerate(grades_scale)}
    k = len(grades_scale)

    by_item = _collect(judgments)
    for item, grades in by_item.items():
        for annotator, grade in grades.items():
            if grade not in position:
                raise ValueError(
                    f"grade {grade} by {annotator!r} on item {item!r} is not in the scale "
                    f"{grades_scale}"
                )

    notes: list[str] = []
    shared = {item: g for item, g in by_item.items() if len(g) >= 2}
    all_annotators = {a for g in by_item.values() for a in g}
    annotators = {a for g in shared.values() for a in g}
    single = len(by_item) - len(shared)
    if single:
        notes.append(
            f"{single} item{'s' if single != 1 else ''} judged by a single annotator "
            f"{'are' if single != 1 else 'is'} left out."
        )
    alone = sorted(all_annotators - annotators)
    if alone and shared:
        notes.append("Left out, sharing no item with another annotator: " + ", ".join(alone) + ".")

    if not shared:
        notes.append(
            "No item was judged by two or more annotators, so agreement cannot be measured: "
            "all statistics are undefined (NaN)."
        )
        return Agreement(
            n_items=0,
            n_annotators=0,
            percent_agreement=math.nan,
            fleiss_kappa=math.nan,
            krippendorff_alpha=math.nan,
            pairs=[],
            notes=notes,
        )

    # Per item, how many annotators gave each grade (items x grades): input to Fleiss and alpha.
    items = list(shared)
    counts = np.zeros((len(items), k), dtype=np.int64)
    for row, item in enumerate(items):
        for grade in shared[item].values():
            counts[row, position[grade]] += 1

    unanimous = sum(1 for g in shared.values() if len(set(g.values())) == 1)
    percent = unanimous / len(shared)

    used = [grades_scale[j] for j in np.flatnonzero(counts.sum(axis=0))]
    if len(used) == 1:
        notes.append(
            f"Every rating is grade {used[0]}: with no variation, chance agreement is perfect, so "
            "Fleiss' kappa, Krippendorff's alpha and Cohen's kappa are undefined (NaN)."
        )

    fleiss = _fleiss(counts, notes)
    alpha = math.nan
    if len(used) > 1:
        alpha = float(
            krippendorff.alpha(
                value_counts=counts, value_domain=grades_scale, level_of_measurement="ordinal"
            )
        )

    pairs = _pairs(shared, position, weight_matrix(k, weights), notes, single_grade=len(used) == 1)
    return Agreement(
        n_items=len(shared),
        n_annotators=len(annotators),
        percent_agreement=percent,
        fleiss_kappa=fleiss,
        krippendorff_alpha=alpha,
        pairs=pairs,
        notes=notes,
    )


def _fleiss(counts: npt.NDArray[np.int64], notes: list[str]) -> float:
    """Fleiss' kappa on the rows (items) having the most common number of ratings."""
    per_item = counts.sum(axis=1)
    frequency = Counter(int(n) for n in per_item)
    modal = max(frequency, key=lambda n: (frequency[n], n))
    table = counts[per_item == modal]
    if len(table) < len(counts):
        notes.append(
            f"Fleiss' kappa uses {len(table)} of {len(counts)} items: those judged by exactly "
            f"{modal} annotators (it needs the same number of ratings on every item)."
        )
    column_totals = table.sum(axis=0)
    if np.count_nonzero(column_totals) < 2:
        if np.count_nonzero(counts.sum(axis=0)) > 1:  # else the single-grade note covers it
            notes.append(
                "Fleiss' kappa is undefined (NaN): every rating on the items it uses is one grade."
            )
        return math.nan
    return _fleiss_kappa(table)


def _fleiss_kappa(table: npt.NDArray[np.int64]) -> float:
    """Fleiss (1971): items x grades counts, every item rated n >= 2 times. P_i is the share
    of agreeing rater pairs on item i, P_e the chance agreement from the grades' overall
    shares; kappa = (mean P_i - P_e) / (1 - P_e)."""
    counts = table.astype(np.float64)
    n = counts[0].sum()
    shares = counts.sum(axis=0) / counts.sum()
    agreeing = ((counts * counts).sum(axis=1) - n) / (n * (n - 1))
    chance = float((shares * shares).sum())
    return (float(agreeing.mean()) - chance) / (1.0 - chance)


def _pairs(
    shared: Mapping[Hashable, Mapping[str, int]],
    position: Mapping[int, int],
    w: npt.NDArray[np.float64],
    notes: list[str],
    *,
    single_grade: bool,
) -> list[PairKappa]:
    """Cohen's weighted kappa for every pair of annotators sharing at least one item."""
    cells: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for grades in shared.values():
        # grades is sorted by annotator, so combinations yield (a, b) with a < b.
        for (a, ga), (b, gb) in itertools.combinations(grades.items(), 2):
            cells.setdefault((a, b), []).append((position[ga], position[gb]))

    k = w.shape[0]
    pairs: list[PairKappa] = []
    too_few = 0
    no_variation = 0
    for (a, b), cell_list in sorted(cells.items()):
        table = np.zeros((k, k), dtype=np.float64)
        rows, cols = zip(*cell_list, strict=True)
        np.add.at(table, (np.array(rows), np.array(cols)), 1.0)
        kappa = weighted_kappa(table, w)
        if len(cell_list) < 2:
            too_few += 1
        elif math.isnan(kappa):
            no_variation += 1
        pairs.append(PairKappa(annotator_a=a, annotator_b=b, n_items=len(cell_list), kappa=kappa))

    if too_few:
        notes.append(
            f"Cohen's kappa is undefined (NaN) for {too_few} pair{'s' if too_few != 1 else ''} "
            "of annotators sharing fewer than 2 items."
        )
    if no_variation and not single_grade:
        notes.append(
            f"Cohen's kappa is undefined (NaN) for {no_variation} "
            f"pair{'s' if no_variation != 1 else ''} of annotators who both gave one and the same "
            "grade to every item they share."
        )
    return pairs


def agreement_by_topic(
    judgments: Iterable[Judgment],
    *,
    topic_of: Callable[[Hashable], str] | Mapping[Hashable, str],
    scale: Sequence[int],
    weights: Weights = "linear",
) -> dict[str, Agreement]:
    """``agreement()`` computed separately on each topic's items, keyed by topic, sorted.

    ``topic_of`` maps an item to its topic (a function or a mapping). Every topic with at least
    one judgment appears, even one with no item judged twice (its statistics are then NaN). For
    the overall figures call ``agreement()`` on all the judgments: pooled statistics are not an
    average of the per-topic ones.
    """
    lookup: Callable[[Hashable], str]
    lookup = topic_of.__getitem__ if isinstance(topic_of, Mapping) else topic_of
    by_topic: dict[str, list[Judgment]] = {}
    for judgment in judgments:
        by_topic.setdefault(lookup(judgment[0]), []).append(judgment)
    return {
        topic: agreement(by_topic[topic], scale=scale, weights=weights)
        for topic in sorted(by_topic)
    }


def disagreements(
    judgments: Iterable[Judgment],
    *,
    relevance_level: int | None = None,
) -> list[Disagreement]:
    """Items whose annotators gave different grades: the adjudication list.

    With ``relevance_level`` L, only the items where the annotators disagree on relevance, that
    is some grade >= L and some grade < L (a 2-vs-3 split is then not listed, a 0-vs-1 split with
    L = 1 is). Sorted by spread (max grade - min grade) descending, then by item (natural order,
    or ``repr`` order when items of mixed types do not compare).
    """
    found: list[Disagreement] = []
    for item, grades in _collect(judgments).items():
        values = set(grades.values())
        if len(values) < 2:
            continue
        if relevance_level is not None and not (min(values) < relevance_level <= max(values)):
            continue
        found.append(Disagreement(item=item, grades=grades))

    def natural(d: Disagreement) -> Any:
        return (-d.spread, d.item)

    try:
        return sorted(found, key=natural)
    except TypeError:  # items of mixed types do not compare
        return sorted(found, key=lambda d: (-d.spread, repr(d.item)))


def consensus_grade(grades: Sequence[int], *, rule: ConsensusRule = "median") -> int:
    """One grade from several annotators' grades of the same item.

    - median: the middle grade of the sorted grades; for an even count the lower median,
      sorted[(n - 1) // 2]. Ties go to the lower grade, so an even split between relevant and
      not relevant counts as not relevant (conservative: relevance needs a majority).
    - majority: the most common grade (a plurality); a tie between grades goes to the lowest.
    - max / min: the most / least generous annotator's grade.

    An empty sequence or an unknown rule raises ``ValueError``.
    """
    if rule not in _RULES:
        raise ValueError(f"rule must be one of {_RULES}, got {rule!r}")
    if not grades:
        raise ValueError("consensus_grade needs at least one grade")
    ordered = sorted(int(g) for g in grades)
    if rule == "median":
        return ordered[(len(ordered) - 1) // 2]
    if rule == "max":
        return ordered[-1]
    if rule == "min":
        return ordered[0]
    frequency = Counter(ordered)
    return min(frequency, key=lambda g: (-frequency[g], g))
