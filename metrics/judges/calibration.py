"""Cut points that turn a judge's continuous scores into the campaign's grades.

An automatic judge that outputs a score (a cosine similarity, a probability) needs thresholds
``t_1 < t_2 < ... < t_{K-1}`` to speak the campaign's scale ``g_0 < g_1 < ... < g_{K-1}``:

    grade(s) = g_j   with   j = #{i : t_i <= s},

so a score equal to a cut point takes the higher grade. :func:`calibrate_thresholds` fits the
cut points on a sample that people judged; :func:`grades_from_thresholds` applies them.

What is maximised
-----------------
Cohen's **linear-weighted kappa** (Cohen 1968) between the human grades and the grades the cut
points give, exactly (not by a grid search). Exact agreement is not used as the objective: on a
sample where most items are non-relevant it is maximised by calling everything non-relevant, a
judge with kappa 0. Kappa corrects for the base rates, so it rewards separating the grades.

With grade positions i (human) and j (automatic), n items and n_i humans at position i, linear
kappa is ``1 - O / E`` with

    O = sum over items |i - j|,        E = sum_j c_j * D_j,   D_j = sum_i n_i |i - j| / n,

c_j the number of items given position j. Both O and E are sums over items of a term that
depends only on the item's human grade and its assigned position, and the assignment is monotone
in the score, so ``min O - lambda * E`` over all cut points is a shortest path over the sorted
distinct scores (dynamic programming, O(m K) for m distinct scores). Minimising the ratio O / E
is then Dinkelbach's (1967) method: start from lambda = 0, solve, set lambda = O / E of the
solution, repeat until the minimum is 0; it converges in a few rounds to the global optimum.

Details that make it usable on small, tied, lopsided samples
------------------------------------------------------------
- Ties: items with the same score always get the same grade (a cut point never splits a tie).
- Ties between solutions are broken deterministically: the dynamic programme prefers the lowest
  grade where two choices cost the same, so a cut point sits as high as the optimum allows.
- Placement: a cut point between two neighbouring sample scores sits at their midpoint; several
  cut points in the same gap divide it evenly. A cut point below every sample score sits at
  ``min - k * step``, one above every score at ``max + k * step`` (k = 1, 2, ...), with ``step``
  the sample's score range (1 when every score is equal). The points are strictly increasing.
- A grade absent from the human sample usually receives no sample item; its interval is then
  kept narrow (inside a gap, or above the largest score for missing top grades), so in use it is
  given only to scores the sample did not cover. This is the fallback for missing grades: the
  fit never invents where a grade it has not seen begins.
- Fewer than two distinct human grades: kappa is undefined or 0 for every choice, so the cut
  points maximise exact agreement instead, which puts every sample item in the one grade seen
  (the other grades' cut points go below or above the sample as above).
- Scores and grades must be finite and the grades in the scale (``ValueError`` otherwise); an
  empty sample is an error, a sample of one item is allowed (it falls under the previous rule).

References
----------
- Cohen (1968), "Weighted kappa", Psychol. Bull. 70(4).
- Dinkelbach (1967), "On nonlinear fractional programming", Management Science 13(7).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from metrics.judges.agreement import check_scale

__all__ = ["calibrate_thresholds", "grades_from_thresholds"]

_MAX_ROUNDS = 100


def _as_scores(scores: npt.ArrayLike, name: str = "scores") -> npt.NDArray[np.float64]:
    arr = np.asarray(scores, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN or infinity)")
    return arr


def _positions(grades: npt.ArrayLike, scale: list[int]) -> npt.NDArray[np.int64]:
    arr = np.asarray(grades)
    if arr.ndim != 1:
        raise ValueError(f"grades must be one-dimensional, got shape {arr.shape}")
    index = {g: i for i, g in enumerate(scale)}
    out = np.empty(arr.size, dtype=np.int64)
    for k, g in enumerate(arr.tolist()):
        if g not in index or int(g) != g:
            raise ValueError(f"grade {g!r} is not in the scale {scale}")
        out[k] = index[int(g)]
    return out


def _best_assignment(
    counts: npt.NDArray[np.float64], cost: npt.NDArray[np.float64]
) -> npt.NDArray[np.int64]:
    """Non-decreasing positions a[b] per score block minimising sum_b counts[b] @ cost[:, a[b]].

    ``counts[b, i]``: items in block b with human position i; ``cost[i, j]``: cost of one such
    item at automatic position j. Ties go to the lowest position (deterministic).
    """
    m, k = counts.shape
    block_cost = counts @ cost  # (m, k)
    best = np.empty((m, k), dtype=np.float64)
    choice = np.empty((m, k), dtype=np.int64)  # argmin over j' <= j of best[b - 1, j']
    best[0] = block_cost[0]
    for b in range(1, m):
        prev = best[b - 1]
        # running minimum over j' <= j; np.minimum.accumulate keeps the first (lowest) minimiser
        run_min = np.minimum.accumulate(prev)
        arg = np.zeros(k, dtype=np.int64)
        for j in range(1, k):
            arg[j] = arg[j - 1] if prev[arg[j - 1]] <= prev[j] else j
        choice[b] = arg
        best[b] = block_cost[b] + run_min
    assign = np.empty(m, dtype=np.int64)
    assign[-1] = int(np.argmin(best[-1]))
    for b in range(m - 1, 0, -1):
        assign[b - 1] = choice[b, assign[b]]
    return assign


def _cut_points(
    values: npt.NDArray[np.float64], assign: npt.NDArray[np.int64], k: int
) -> list[float]:
    """Strictly increasing cut points reproducing ``assign`` on the sorted distinct ``values``."""
    lo_all, hi_all = float(values[0]), float(values[-1])
    step = hi_all - lo_all if hi_all > lo_all else 1.0
    # first block at position >= j, for each cut j = 1..k-1 (m when none)
    firsts = [int(np.searchsorted(assign, j, side="left")) for j in range(1, k)]
    m = values.size
    out: list[float] = [0.0] * (k - 1)
    cut = 0
    while cut < k - 1:
        b = firsts[cut]
        group = [c for c in range(cut, k - 1) if firsts[c] == b]
        r = len(group)
        for pos, c in enumerate(group, start=1):
            if b == 0:
                t = lo_all - step * (r - pos + 1)
            elif b == m:
                t = hi_all + step * pos
            else:
                lo, hi = float(values[b - 1]), float(values[b])
                t = lo + (hi - lo) * pos / (r + 1)
                if t <= lo:  # float resolution: the gap has no interior point
                    t = hi
            out[c] = t
        cut += r
    return out


def calibrate_thresholds(
    scores: npt.ArrayLike, grades: npt.ArrayLike, scale: Sequence[int]
) -> list[float]:
    """``len(scale) - 1`` increasing cut points maximising linear-weighted kappa on the sample.

    ``scores[i]`` is the judge's score of sample item i and ``grades[i]`` its human grade (a
    member of ``scale``). See the module docstring for the objective (Cohen's linear-weighted
    kappa, maximised exactly by Dinkelbach's method over a dynamic programme), the placement of
    the cut points, ties, and the fallbacks for grades missing from the sample.
    """
    grade_scale = check_scale(scale)
    k = len(grade_scale)
    s = _as_scores(scores)
    h = _positions(grades, grade_scale)
    if s.size != h.size:
        raise ValueError(f"{s.size} scores but {h.size} grades; pass one grade per score")
    if s.size == 0:
        raise ValueError("cannot calibrate on an empty sample")
    values, block = np.unique(s, return_inverse=True)
    counts = np.zeros((values.size, k), dtype=np.float64)
    np.add.at(counts, (block, h), 1.0)
    idx = np.arange(k, dtype=np.float64)
    dist = np.abs(idx[:, None] - idx[None, :])  # |i - j|, rows human, columns automatic
    human = counts.sum(axis=0)
    if np.count_nonzero(human) < 2:
        # kappa is undefined or 0 everywhere: maximise exact agreement instead
        assign = _best_assignment(counts, (dist > 0).astype(np.float64))
        return _cut_points(values, assign, k)
    d_col = human @ dist / float(s.size)  # D_j: expected disagreement of one item at position j
    per_item = counts @ dist  # (m, k): observed disagreement of each block at each position
    sizes = counts.sum(axis=1)
    rows = np.arange(values.size)

    def ratio_terms(a: npt.NDArray[np.int64]) -> tuple[float, float]:
        return float(per_item[rows, a].sum()), float((sizes * d_col[a]).sum())

    assign = _best_assignment(counts, dist)  # lambda = 0: least observed disagreement
    for _ in range(_MAX_ROUNDS):
        o, e = ratio_terms(assign)
        lam = o / e  # e > 0: two human grades make every D_j positive
        candidate = _best_assignment(counts, dist - lam * d_col[None, :])
        c_o, c_e = ratio_terms(candidate)
        if c_o - lam * c_e >= -1e-12 * max(1.0, e):
            break  # nothing beats the current ratio O / E: it is the optimum
        assign = candidate
    return _cut_points(values, assign, k)


def grades_from_thresholds(
    scores: npt.ArrayLike, thresholds: Sequence[float], scale: Sequence[int]
) -> npt.NDArray[np.int64]:
    """Grades of ``scores`` under the cut points: ``scale[j]`` with j = #{i : thresholds[i] <= s}.

    ``thresholds`` must be ``len(scale) - 1`` non-decreasing finite numbers (``ValueError``
    otherwise); a score equal to a cut point takes the higher grade.
    """
    grade_scale = check_scale(scale)
    s = _as_scores(scores)
    t = _as_scores(thresholds, "thresholds")
    if t.size != len(grade_scale) - 1:
        raise ValueError(
            f"{t.size} thresholds for a scale of {len(grade_scale)} grades; "
            f"pass {len(grade_scale) - 1}"
        )
    if np.any(np.diff(t) < 0):
        raise ValueError(f"thresholds must be non-decreasing, got {t.tolist()}")
    pos = np.searchsorted(t, s, side="right")
    return np.asarray(grade_scale, dtype=np.int64)[pos]
