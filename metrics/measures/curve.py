"""Recall@k curve of one run: macro recall for k = 1..K, its achievable ceiling, elbow and plateau.

Recall@k bounds everything downstream: a reranker cannot promote a document the first stage never
returned. The curve shows where widening k stops finding relevant documents (the plateau) and where
it stops paying well (the elbow), and lists, per query, the relevant documents that no depth of the
ranking ever reached (shared/seeds/000, "Recall@k is the ceiling on everything else").
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["RecallCurve", "kneedle", "recall_curve"]


@dataclass(frozen=True)
class RecallCurve:
    """Macro-averaged Recall@k for k = 1..max_k, with its ceiling and diagnostics.

    Attributes:
        k: ``numpy`` int array ``[1, 2, ..., max_k]``.
        recall: macro mean over the included queries of R@k = |rel & top-k| / R (NaN if no query
            is included).
        ceiling: mean over the included queries of min(k, R) / R, the best any ranking can do.
        per_query_recall: qid -> R@k array aligned with ``k``, for every included query.
        elbow: k at the Kneedle knee of ``recall`` (see :func:`kneedle`), or None.
        plateau: smallest k after which macro recall gains at most ``plateau_tol`` up to max_k, or
            None when the curve is still rising at max_k or no query is included.
        never_retrieved: qid -> sorted relevant docids absent from the *whole* ranking (any depth,
            also beyond max_k), for every included query (an empty list when none is missing).
        excluded: sorted qids in the qrels with no relevant document; left out of every average.
        queries: sorted qids included in the averages.
    """

    k: npt.NDArray[np.int64]
    recall: npt.NDArray[np.float64]
    ceiling: npt.NDArray[np.float64]
    per_query_recall: dict[str, npt.NDArray[np.float64]]
    elbow: int | None
    plateau: int | None
    never_retrieved: dict[str, list[str]]
    excluded: list[str]
    queries: list[str] = field(default_factory=list)

    def to_dict(self, *, per_query: bool = True) -> dict[str, Any]:
        """JSON-able dict (plain lists and floats; NaN becomes None)."""

        def floats(a: npt.NDArray[np.float64]) -> list[float | None]:
            return [None if math.isnan(v) else float(v) for v in a.tolist()]

        out: dict[str, Any] = {
            "averaging": "macro",
            "k": [int(v) for v in self.k.tolist()],
            "recall": floats(self.recall),
            "ceiling": floats(self.ceiling),
            "elbow": self.elbow,
            "plateau": self.plateau,
            "never_retrieved": {q: list(d) for q, d in self.never_retrieved.items()},
            "excluded": list(self.excluded),
            "queries": list(self.queries),
            "num_queries": len(self.queries),
        }
        if per_query:
            out["per_query_recall"] = {q: floats(r) for q, r in self.per_query_recall.items()}
        return out


def kneedle(x: npt.ArrayLike, y: npt.ArrayLike, *, sensitivity: float = 1.0) -> int | None:
    """Index of the knee of a concave increasing curve by Kneedle (Satopaa et al. 2011).

    Steps of the paper, without its smoothing step (a recall curve is monotone already):

    1. normalise to the unit square: x_n = (x - x_0) / (x_max - x_0), y_n likewise with min/max;
    2. difference curve d_i = y_n,i - x_n,i (height above the chord);
    3. at each local maximum i* of d, threshold T = d_i* - S * mean(diff(x_n)); the local maximum
       is a knee if d falls below T before the next local maximum.

    Among the confirmed knees the one with the largest d (the most prominent bend) is returned;
    the paper's offline mode reports every knee, kneed returns the first, which on a staircase
    curve is merely the first step. ``sensitivity`` S >= 0: larger S demands a bigger drop after
    the bend and so finds fewer, sharper knees; S = 1 is the paper's recommendation for offline
    data. Returns None for fewer than three points, a flat curve, or no confirmed knee (e.g. a
    straight line).
    """
    if sensitivity < 0:
        raise ValueError(f"sensitivity must be >= 0, got {sensitivity}")
    xs = np.asarray(x, dtype=np.float64)
    ys = np.asarray(y, dtype=np.float64)
    if xs.shape != ys.shape or xs.ndim != 1:
        raise ValueError("x and y must be one-dimensional and of equal length")
    n = xs.size
    if n < 3 or not np.all(np.isfinite(ys)):
        return None
    x_span = xs[-1] - xs[0]
    y_span = ys.max() - ys.min()
    if x_span <= 0 or y_span <= 0:
        return None
    xn = (xs - xs[0]) / x_span
    yn = (ys - ys.min()) / y_span
    d = yn - xn
    # Local maxima of d: rises into i (strictly) and does not rise out of it; a flat top counts at
    # its first point.
    interior = np.arange(1, n - 1)
    is_max = (d[interior] > d[interior - 1]) & (d[interior] >= d[interior + 1])
    maxima = interior[is_max]
    if maxima.size == 0:
        return None
    step = float(np.mean(np.diff(xn)))
    best: int | None = None
    bounds = [*maxima[1:].tolist(), n]
    for i_max, next_max in zip(maxima.tolist(), bounds, strict=True):
        threshold = d[i_max] - sensitivity * step
        after = d[i_max + 1 : next_max]
        if after.size and bool(np.any(after < threshold)) and (best is None or d[i_max] > d[best]):
            best = i_max
    if best is None or d[best] <= 0:
        return None
    return best


def recall_curve(
    qrels: Mapping[str, Mapping[str, int]],
    rankings: Mapping[str, Sequence[str]],
    *,
    max_k: int,
    relevance_level: int = 1,
    sensitivity: float = 1.0,
    plateau_tol: float = 1e-9,
) -> RecallCurve:
    """Macro Recall@k curve for k = 1..max_k with ceiling, elbow, plateau and missed documents.

    - R@k(q) = |{relevant d in the top k of q's ranking}| / R_q, R_q = #{d : grade >= level}
      (all relevant documents, retrieved or not); ``recall`` is the macro mean over queries.
    - ceiling@k = mean over queries of min(k, R_q) / R_q (the essay in shared/seeds/000).
    - ``rankings`` are docids already in rank order per query (the caller orders them). A docid
      occurring twice in one ranking raises ``ValueError`` (DESIGN section 5).
    - Queries: those in ``qrels``. A query with no relevant document is excluded (listed in
      ``excluded``) rather than scored 0; a qrels query without a ranking retrieves nothing and
      scores 0 at every k; rankings of queries absent from the qrels are ignored (R unknown).
    - elbow: :func:`kneedle` on (k, recall) with the origin (0, 0) prepended, so that a curve that
      jumps at k = 1 and then creeps can have its elbow at 1; ``sensitivity`` is Kneedle's S.
    - plateau: the smallest k with R@max_k - R@k <= ``plateau_tol`` (from k on, widening to max_k
      finds at most that much more recall; with the default 1e-9, no more relevant documents).
      None when the last step, k = max_k - 1 -> max_k, still gains more than the tolerance: the
      curve has not been seen to level off.
    - never_retrieved uses the whole ranking, also beyond max_k.
    """
    if max_k < 1:
        raise ValueError(f"max_k must be >= 1, got {max_k}")
    if plateau_tol < 0:
        raise ValueError(f"plateau_tol must be >= 0, got {plateau_tol}")
    ks = np.arange(1, max_k + 1, dtype=np.int64)

    included: list[str] = []
    excluded: list[str] = []
    n_rel: list[int] = []
    rows: list[int] = []
    cols: list[int] = []
    never: dict[str, list[str]] = {}
    for qid in sorted(qrels):
        relevant = {d for d, g in qrels[qid].items() if g >= relevance_level}
        if not relevant:
            excluded.append(qid)
            continue
        ranking = rankings.get(qid, ())
        if len(set(ranking)) != len(ranking):
            raise ValueError(f"query {qid!r}: duplicate docid in the ranking")
        row = len(included)
        included.append(qid)
        n_rel.append(len(relevant))
        found: set[str] = set()
        for rank, docid in enumerate(ranking):
            if docid in relevant:
                found.add(docid)
                if rank < max_k:
                    rows.append(row)
                    cols.append(rank)
        never[qid] = sorted(relevant - found)

    if not included:
        nan = np.full(max_k, math.nan)
        return RecallCurve(
            k=ks,
            recall=nan,
            ceiling=nan.copy(),
            per_query_recall={},
            elbow=None,
            plateau=None,
            never_retrieved={},
            excluded=excluded,
            queries=[],
        )

    hits = np.zeros((len(included), max_k), dtype=np.int64)
    hits[np.asarray(rows, dtype=np.intp), np.asarray(cols, dtype=np.intp)] = 1
    r = np.asarray(n_rel, dtype=np.float64)[:, None]
    per_query = np.cumsum(hits, axis=1) / r
    recall = per_query.mean(axis=0)
    ceiling = (np.minimum(ks[None, :], r) / r).mean(axis=0)

    knee = kneedle(
        np.concatenate(([0], ks)), np.concatenate(([0.0], recall)), sensitivity=sensitivity
    )
    elbow = int(knee) if knee is not None and knee >= 1 else None

    remaining = recall[-1] - recall
    plateau_idx = int(np.argmax(remaining <= plateau_tol))
    still_rising = max_k >= 2 and recall[-1] - recall[-2] > plateau_tol
    plateau = None if plateau_idx == max_k - 1 and still_rising else int(ks[plateau_idx])

    return RecallCurve(
        k=ks,
        recall=recall,
        ceiling=ceiling,
        per_query_recall={q: per_query[i] for i, q in enumerate(included)},
        elbow=elbow,
        plateau=plateau,
        never_retrieved=never,
        excluded=excluded,
        queries=included,
    )
