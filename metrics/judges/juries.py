"""Juries: one grade per item from several automatic judges' grades (issue 35), as a panel of
judges replaces one (Verga et al. 2024), and the figures of :mod:`metrics.judges.meta_labels`
then compare the jury with people like any single judge.

Input: ``labels``, judge name -> ``(qid, docid)`` -> grade on ``scale``. Each function returns
the jury's ``labels`` (an item no judge labelled is absent) and what its method adds:

- :func:`majority`: the most frequent grade among the judges that labelled the item; a tie goes
  to the lower grade, conservatively (a jury split between "relevant" and "not" does not make
  the item relevant); ``ties`` counts those items.
- :func:`mean_grade`: the mean of the grades, rounded to the nearest grade of the scale, half to
  even (the grade of even value, as Python's ``round`` does on consecutive integers; on a scale
  with gaps where both neighbours share a parity, the lower); ``ties`` counts the halves.
- :func:`dawid_skene`: Dawid & Skene's (1979) EM, which learns each judge's confusion matrix
  (rows: true grade, columns: the judge's grade) and the grades' priors, and weighs every judge by
  what its label says about the true grade. A judge that is consistently wrong (one that says 2
  for 1) still informs; a random one is ignored. Initialised from the majority vote's soft
  labels (the share of judges giving each grade), a local optimum near the majority.
- :func:`defer_to_people`: the judges' grade where every judge that labelled the item agrees
  (one judge always agrees with itself); people's grade where they disagree, when people have
  judged the item, and otherwise the item is ``pending``: deferred to people, not judged yet.

A grade outside the scale raises ``ValueError`` naming the judge and the item.

References
----------
- Dawid & Skene (1979), "Maximum likelihood estimation of observer error-rates using the EM
  algorithm", J. R. Stat. Soc. C 28(1).
- Verga et al. (2024), "Replacing judges with juries: evaluating LLM generations with a panel of
  diverse models", arXiv:2404.18796.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from metrics.judges.agreement import check_scale

__all__ = [
    "DawidSkeneJury",
    "DeferredJury",
    "MajorityJury",
    "MeanGradeJury",
    "dawid_skene",
    "defer_to_people",
    "majority",
    "mean_grade",
]

Key = tuple[str, str]
Labels = Mapping[str, Mapping[Key, int]]
FloatArray = npt.NDArray[np.float64]

# Pseudo-count added to every cell of a judge's confusion counts and to the priors' counts: a
# grade a judge never gave keeps a small probability, so one label cannot zero a posterior.
SMOOTHING = 0.01


def _votes(labels: Labels, scale: Sequence[int]) -> tuple[list[int], dict[Key, dict[str, int]]]:
    """The scale, and item -> judge -> grade, items and judges sorted."""
    grades = check_scale(scale)
    votes: dict[Key, dict[str, int]] = {}
    for judge in sorted(labels):
        for key, grade in labels[judge].items():
            if grade not in grades:
                raise ValueError(
                    f"judge {judge!r} gave item {key!r} the grade {grade!r}, not in the scale "
                    f"{grades}"
                )
            votes.setdefault(key, {})[judge] = int(grade)
    return grades, dict(sorted(votes.items()))


@dataclass(frozen=True)
class MajorityJury:
    """The majority grade per item; ``ties`` items had two or more most frequent grades."""

    labels: dict[Key, int]
    ties: int


def majority(labels: Labels, scale: Sequence[int]) -> MajorityJury:
    """The most frequent grade among the judges that labelled each item, the lower on a tie."""
    _, votes = _votes(labels, scale)
    out: dict[Key, int] = {}
    ties = 0
    for key, given in votes.items():
        counts = Counter(given.values())
        most = max(counts.values())
        best = [grade for grade, count in counts.items() if count == most]
        ties += len(best) > 1
        out[key] = min(best)
    return MajorityJury(out, ties)


@dataclass(frozen=True)
class MeanGradeJury:
    """The rounded mean grade per item; ``ties`` items had a mean halfway between two grades."""

    labels: dict[Key, int]
    ties: int


def mean_grade(labels: Labels, scale: Sequence[int]) -> MeanGradeJury:
    """The mean of each item's grades, rounded half to even onto the scale (module docstring);
    computed exactly (fractions), so 2.5 is a half and not 2.4999999."""
    grades, votes = _votes(labels, scale)
    out: dict[Key, int] = {}
    ties = 0
    for key, given in votes.items():
        mean = Fraction(sum(given.values()), len(given))
        nearest = min(abs(g - mean) for g in grades)
        best = [g for g in grades if abs(g - mean) == nearest]
        ties += len(best) > 1
        even = [g for g in best if g % 2 == 0]
        out[key] = even[0] if len(even) == 1 else best[0]
    return MeanGradeJury(out, ties)


@dataclass(frozen=True)
class DawidSkeneJury:
    """Dawid & Skene's labels (the grade of highest posterior, the lower on a tie) with each
    item's ``posteriors`` (grade -> probability), each judge's ``confusions`` (rows: true grade,
    columns: the judge's grade, both in scale order; rows sum to 1), the grades' ``priors``, the
    EM ``iterations`` run and whether they ``converged`` (no posterior moved by ``tol`` or more
    in the last one)."""

    labels: dict[Key, int]
    posteriors: dict[Key, dict[int, float]]
    confusions: dict[str, list[list[float]]]
    priors: dict[int, float]
    iterations: int
    converged: bool


def _maximise(posterior: FloatArray, given: FloatArray) -> tuple[FloatArray, FloatArray]:
    """M step: priors (grades) and confusions (judges x true x given) from the soft labels
    (items x grades) and the one-hot labels (items x judges x grades), each count + SMOOTHING."""
    k = posterior.shape[1]
    priors = (posterior.sum(axis=0) + SMOOTHING) / (posterior.shape[0] + k * SMOOTHING)
    counts = np.einsum("ik,ijl->jkl", posterior, given) + SMOOTHING
    return priors, counts / counts.sum(axis=2, keepdims=True)


def _expect(priors: FloatArray, confusions: FloatArray, given: FloatArray) -> FloatArray:
    """E step: P(true grade | the item's labels), proportional to
    prior_k * prod_j confusion_j[k, label_j] over the judges that labelled the item."""
    log = np.log(priors)[None, :] + np.einsum("ijl,jkl->ik", given, np.log(confusions))
    odds = np.exp(log - log.max(axis=1, keepdims=True))
    posterior: FloatArray = odds / odds.sum(axis=1, keepdims=True)
    return posterior


def dawid_skene(
    labels: Labels, scale: Sequence[int], *, max_iter: int = 100, tol: float = 1e-6
) -> DawidSkeneJury:
    """Dawid & Skene (1979): EM over the true grades, from the majority vote's soft labels, for
    at most ``max_iter`` iterations (an M step then an E step), until no posterior changes by
    ``tol`` or more. Confusion and prior counts get :data:`SMOOTHING` added."""
    if max_iter < 1:
        raise ValueError(f"max_iter must be at least 1, got {max_iter}")
    grades, votes = _votes(labels, scale)
    if not votes:
        return DawidSkeneJury({}, {}, {}, {}, 0, True)
    judges = sorted({judge for given in votes.values() for judge in given})
    items = list(votes)
    column = {judge: j for j, judge in enumerate(judges)}
    position = {g: i for i, g in enumerate(grades)}
    given = np.zeros((len(items), len(judges), len(grades)))
    for i, key in enumerate(items):
        for judge, grade in votes[key].items():
            given[i, column[judge], position[grade]] = 1.0
    posterior = given.sum(axis=1) / given.sum(axis=(1, 2))[:, None]
    converged = False
    iterations = 0
    while iterations < max_iter and not converged:
        priors, confusions = _maximise(posterior, given)
        updated = _expect(priors, confusions, given)
        converged = float(np.abs(updated - posterior).max()) < tol
        posterior = updated
        iterations += 1
    best = posterior.argmax(axis=1)  # the first maximum: the lower grade on a tie
    return DawidSkeneJury(
        labels={key: grades[int(b)] for key, b in zip(items, best, strict=True)},
        posteriors={
            key: dict(zip(grades, map(float, row), strict=True))
            for key, row in zip(items, posterior, strict=True)
        },
        confusions={judge: confusions[column[judge]].tolist() for judge in judges},
        priors=dict(zip(grades, map(float, priors), strict=True)),
        iterations=iterations,
        converged=converged,
    )


@dataclass(frozen=True)
class DeferredJury:
    """Labels where the judges agree (``agreed`` items) or people settled a disagreement
    (``deferred_judged`` of the ``deferred`` items); the ``pending`` items were deferred but
    people have not judged them yet, and have no label."""

    labels: dict[Key, int]
    agreed: int
    deferred: int
    deferred_judged: int
    pending: list[Key]


def defer_to_people(labels: Labels, human: Mapping[Key, int], scale: Sequence[int]) -> DeferredJury:
    """The judges' grade where all that labelled the item agree, people's (``human``) where
    they disagree; items with a disagreement people have not judged are ``pending``."""
    grades, votes = _votes(labels, scale)
    out: dict[Key, int] = {}
    pending: list[Key] = []
    agreed = 0
    for key, given in votes.items():
        distinct = set(given.values())
        if len(distinct) == 1:
            out[key] = distinct.pop()
            agreed += 1
        elif key in human:
            if human[key] not in grades:
                raise ValueError(
                    f"people gave item {key!r} the grade {human[key]!r}, not in the scale {grades}"
                )
            out[key] = int(human[key])
        else:
            pending.append(key)
    deferred = len(votes) - agreed
    return DeferredJury(out, agreed, deferred, deferred - len(pending), pending)
