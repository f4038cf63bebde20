"""The audit of one automatic judge against human judgments (issue 17, points 3 and 5).

Every function compares two sources of labels or scores and says how far the automatic one can
be trusted where people have not looked. Keys of judgments are ``(qid, docid)`` pairs; grades
are integers of the campaign's scale; run scores are one number per run (a measure's mean).

Label agreement (:func:`label_agreement`), on the items both judged:
    the confusion matrix (rows: human grade, columns: automatic grade), each grade's base rate in
    both, exact agreement, agreement within one grade step (positions in the scale, so on
    ``[0, 1, 3]`` the grades 1 and 3 are one step apart), Cohen's weighted kappa with linear and
    quadratic weights (Cohen 1968; the weights use scale positions, as
    :mod:`metrics.judges.agreement`
    does), and Cohen's (1960) kappa of the binary labels "grade >= threshold".

Ranking agreement (:func:`ranking_agreement`), on the runs scored under both qrels:
    Kendall's tau-b, tau_AP with the human ranking as the reference (Yilmaz et al. 2008), and the
    same tau-b among the ``top_k`` best runs under the HUMAN qrels, with the share of those runs
    that the automatic qrels also put in their top k. Automatic judges rank the best systems
    worse than the rest (Clarke & Dietz 2024), which the overall tau hides.

Family gaps (:func:`family_gaps`): the mean score gap (automatic - human) of the runs built on
    each model, and whether that model is the judge's own (circularity: LLM judges favour
    rankers built on LLMs, and their own family most; Balog et al. 2025). See
    :func:`model_family` for how model names are compared.

Robustness probes (:func:`probe_result`): the labels a text transform (query-word stuffing, an
    injected instruction; :mod:`metrics.judges.probes`) flips across the relevance threshold
    (Alaofi et al. 2025).

Anchoring (:func:`anchoring`): human-automatic agreement when the assessor saw the automatic
    grade and when it stayed hidden, and the difference with a 95% interval.

References
----------
- Cohen (1960), Educ. Psychol. Meas. 20(1); Cohen (1968), Psychol. Bull. 70(4).
- Yilmaz, Aslam & Robertson (2008), "A new rank correlation coefficient for information
  retrieval", SIGIR.
- Clarke & Dietz (2024), "LLM-based relevance assessment still can't replace human relevance
  assessment", arXiv:2412.17156.
- Balog, Metzler & Qin (2025), "Rankers, judges, and assistants", arXiv:2503.19092.
- Alaofi et al. (2025), "Generative AI and relevance judgments: query stuffing and prompt
  injection", arXiv (LLM judges are moved by query words and instructions).
- Efron & Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 13 (percentile intervals).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from metrics.judges.agreement import check_scale, weight_matrix, weighted_kappa
from metrics.stats.rank import kendall_tau_b, tau_ap

__all__ = [
    "LabelAgreement",
    "RankingAgreement",
    "label_agreement",
    "ranking_agreement",
]

Key = tuple[str, str]


def _json(x: float) -> float | None:
    return None if math.isnan(x) else float(x)


def _json_any(value: Any) -> Any:
    if isinstance(value, float):
        return _json(value)
    if isinstance(value, dict):
        return {k: _json_any(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_any(v) for v in value]
    return value


@dataclass(frozen=True)
class LabelAgreement:
    """Agreement of automatic with human grades on the ``n`` items both judged.

    ``confusion[i][j]`` counts items the humans graded ``scale[i]`` and the judge ``scale[j]``.
    Base rates are shares of the ``n`` shared items per grade (every grade of the scale present,
    0.0 when unused). ``human_only`` and ``auto_only`` count items only one side judged (left
    out of everything else). A statistic that is undefined (no shared items; kappa when the
    margins leave no room for disagreement) is NaN, with a note.
    """

    n: int
    scale: list[int]
    threshold: int
    confusion: list[list[int]]
    human_base_rate: dict[int, float]
    auto_base_rate: dict[int, float]
    exact: float
    within_one: float
    kappa_linear: float
    kappa_quadratic: float
    binary_kappa: float
    human_only: int
    auto_only: int
    notes: list[str]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict (NaN -> None; grade keys of the base rates as strings)."""
        return {
            "n": self.n,
            "scale": list(self.scale),
            "threshold": self.threshold,
            "confusion": [list(row) for row in self.confusion],
            "human_base_rate": {str(g): r for g, r in self.human_base_rate.items()},
            "auto_base_rate": {str(g): r for g, r in self.auto_base_rate.items()},
            "exact": _json(self.exact),
            "within_one": _json(self.within_one),
            "kappa_linear": _json(self.kappa_linear),
            "kappa_quadratic": _json(self.kappa_quadratic),
            "binary_kappa": _json(self.binary_kappa),
            "human_only": self.human_only,
            "auto_only": self.auto_only,
            "notes": list(self.notes),
        }


def _position_of(scale: list[int], grade: int, who: str, key: Hashable) -> int:
    try:
        return scale.index(int(grade))
    except ValueError:
        raise ValueError(f"{who} grade {grade!r} of {key!r} is not in the scale {scale}") from None


def _confusion(pairs: Sequence[tuple[int, int]], scale: list[int]) -> npt.NDArray[np.int64]:
    k = len(scale)
    table = np.zeros((k, k), dtype=np.int64)
    for h, a in pairs:
        table[h, a] += 1
    return table


def _table_stats(table: npt.NDArray[np.int64]) -> tuple[float, float, float, float]:
    """exact, within one step, linear kappa, quadratic kappa of a confusion table (positions)."""
    k = table.shape[0]
    n = int(table.sum())
    if n == 0:
        return math.nan, math.nan, math.nan, math.nan
    idx = np.arange(k)
    dist = np.abs(idx[:, None] - idx[None, :])
    exact = float(np.trace(table)) / n
    within = float(table[dist <= 1].sum()) / n
    t = table.astype(np.float64)
    return (
        exact,
        within,
        weighted_kappa(t, weight_matrix(k, "linear")),
        weighted_kappa(t, weight_matrix(k, "quadratic")),
    )


def label_agreement(
    human: Mapping[Key, int],
    auto: Mapping[Key, int],
    scale: Sequence[int],
    threshold: int = 1,
) -> LabelAgreement:
    """Confusion, base rates, exact and within-one agreement, weighted and binary kappa.

    Computed on the keys present in both mappings. With ``O`` the confusion table as proportions
    and ``E_ij = O_i. O_.j`` the table expected from its margins, weighted kappa is
    ``1 - sum(w O) / sum(w E)`` with ``w_ij = |i - j| / (K - 1)`` (linear) or its square
    (quadratic), i and j positions in ``scale`` (Cohen 1968). ``binary_kappa`` is Cohen's
    unweighted kappa of "relevant" = grade >= ``threshold`` on both sides. Grades outside the
    scale raise ``ValueError``.
    """
    grade_scale = check_scale(scale)
    shared = sorted(set(human) & set(auto))
    notes: list[str] = []
    pairs = [
        (
            _position_of(grade_scale, human[key], "human", key),
            _position_of(grade_scale, auto[key], "automatic", key),
        )
        for key in shared
    ]
    table = _confusion(pairs, grade_scale)
    n = len(shared)
    exact, within, k_lin, k_quad = _table_stats(table)
    rel = np.asarray([g >= threshold for g in grade_scale])
    binary = np.array(
        [
            [table[np.ix_(~rel, ~rel)].sum(), table[np.ix_(~rel, rel)].sum()],
            [table[np.ix_(rel, ~rel)].sum(), table[np.ix_(rel, rel)].sum()],
        ],
        dtype=np.float64,
    )
    b_kappa = weighted_kappa(binary, weight_matrix(2, "none"))
    if n == 0:
        notes.append("no item was judged by both the humans and the judge")
    elif math.isnan(k_lin):
        notes.append(
            "weighted kappa is undefined: "
            + ("a single shared item" if n < 2 else "both sides gave one and the same grade")
        )
    if n >= 2 and math.isnan(b_kappa):
        notes.append(
            f"binary kappa is undefined: at threshold {threshold} both sides call every shared "
            "item relevant, or both call every one non-relevant"
        )
    human_rate = table.sum(axis=1)
    auto_rate = table.sum(axis=0)
    return LabelAgreement(
        n=n,
        scale=grade_scale,
        threshold=int(threshold),
        confusion=table.tolist(),
        human_base_rate={
            g: (float(c) / n if n else 0.0) for g, c in zip(grade_scale, human_rate, strict=True)
        },
        auto_base_rate={
            g: (float(c) / n if n else 0.0) for g, c in zip(grade_scale, auto_rate, strict=True)
        },
        exact=exact,
        within_one=within,
        kappa_linear=k_lin,
        kappa_quadratic=k_quad,
        binary_kappa=b_kappa,
        human_only=len(set(human) - set(auto)),
        auto_only=len(set(auto) - set(human)),
        notes=notes,
    )


@dataclass(frozen=True)
class RankingAgreement:
    """How the automatic qrels rank the ``n_runs`` runs scored under both, against the humans'.

    ``top_k`` is the number of runs in the top set actually used (``min(top_k, n_runs)``);
    ``top_runs`` are those runs, best first, under the HUMAN qrels (ties broken by run name).
    ``tau_top_k`` is Kendall's tau-b among them; ``top_k_overlap`` the share of them that the
    automatic qrels also rank in their own top ``top_k``. ``rank_changes`` lists the runs whose
    rank moves most, as ``(run, human_rank, auto_rank)`` with ranks from 1, largest move first
    (at most 5). ``missing`` counts runs scored under only one of the two qrels.
    """

    n_runs: int
    kendall_tau_b: float
    tau_ap: float
    top_k: int
    tau_top_k: float
    top_k_overlap: float
    top_runs: list[str]
    rank_changes: list[tuple[str, int, int]]
    missing: int

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict (NaN -> None)."""
        return {
            "n_runs": self.n_runs,
            "kendall_tau_b": _json(self.kendall_tau_b),
            "tau_ap": _json(self.tau_ap),
            "top_k": self.top_k,
            "tau_top_k": _json(self.tau_top_k),
            "top_k_overlap": _json(self.top_k_overlap),
            "top_runs": list(self.top_runs),
            "rank_changes": [
                {"run": r, "human_rank": h, "auto_rank": a} for r, h, a in self.rank_changes
            ],
            "missing": self.missing,
        }


def _ranked(scores: Mapping[str, float]) -> list[str]:
    # best first; ties by run name, as metrics.stats orders systems
    return sorted(scores, key=lambda r: (-float(scores[r]), r))


def ranking_agreement(
    human_scores: Mapping[str, float], auto_scores: Mapping[str, float], top_k: int = 10
) -> RankingAgreement:
    """Kendall tau-b, tau_AP (human = reference) and tau-b among the human top ``top_k`` runs.

    tau-b is ``scipy.stats.kendalltau(variant="b")`` via :func:`metrics.stats.rank.kendall_tau_b`;
    tau_AP is :func:`metrics.stats.rank.tau_ap` with the human ranking as the reference. Only runs
    scored under both qrels count. With fewer than two runs (or two in the top set) a
    correlation is NaN. ``top_k`` must be at least 2.
    """
    if top_k < 2:
        raise ValueError(f"top_k must be at least 2 (a correlation needs two runs), got {top_k}")
    runs = sorted(set(human_scores) & set(auto_scores))
    missing = len(set(human_scores) ^ set(auto_scores))
    h = {r: float(human_scores[r]) for r in runs}
    a = {r: float(auto_scores[r]) for r in runs}
    n = len(runs)
    k = min(top_k, n)
    human_order = _ranked(h)
    auto_order = _ranked(a)
    top = human_order[:k]
    if n >= 2:
        tau = kendall_tau_b(h, a)
        t_ap = tau_ap(h, a)
    else:
        tau = t_ap = math.nan
    tau_top = kendall_tau_b({r: h[r] for r in top}, {r: a[r] for r in top}) if k >= 2 else math.nan
    overlap = len(set(top) & set(auto_order[:k])) / k if k else math.nan
    human_rank = {r: i + 1 for i, r in enumerate(human_order)}
    auto_rank = {r: i + 1 for i, r in enumerate(auto_order)}
    moves = sorted(runs, key=lambda r: (-abs(human_rank[r] - auto_rank[r]), human_rank[r]))
    changes = [(r, human_rank[r], auto_rank[r]) for r in moves if human_rank[r] != auto_rank[r]]
    return RankingAgreement(
        n_runs=n,
        kendall_tau_b=tau,
        tau_ap=t_ap,
        top_k=k,
        tau_top_k=tau_top,
        top_k_overlap=overlap,
        top_runs=top,
        rank_changes=changes[:5],
        missing=missing,
    )
