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
import re
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from metrics.judges.agreement import check_scale, weight_matrix, weighted_kappa
from metrics.stats.rank import kendall_tau_b, tau_ap

__all__ = [
    "FamilyGap",
    "LabelAgreement",
    "ProbeFlip",
    "ProbeResult",
    "RankingAgreement",
    "anchoring",
    "family_gaps",
    "label_agreement",
    "model_family",
    "probe_result",
    "ranking_agreement",
    "same_family",
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


# --- label agreement --------------------------------------------------------------------------


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


# --- ranking agreement ------------------------------------------------------------------------


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


# --- run families and circularity -------------------------------------------------------------

_DATE_SUFFIX = re.compile(r"(?:[-@](?:\d{4}-\d{2}-\d{2}|\d{8}|\d{4}|\d{2}-\d{4}|latest|preview))+$")


def model_family(name: str) -> str:
    """The family a declared model name belongs to, for comparing runs with the judge.

    The rule, in order: lower-case and trim; keep what follows the last ``/`` (drop a provider
    or organisation: ``openai/gpt-4o``, ``meta-llama/Llama-3.1-8B``); drop an Ollama-style tag
    after ``:`` (``llama3.1:70b`` -> ``llama3.1``); turn ``_`` and spaces into ``-``; drop
    trailing snapshot stamps, repeatedly: ``-2024-08-06``, ``-20241022``, ``-0613``,
    ``-04-2024``, ``@20240620``, ``-latest``, ``-preview``. So ``gpt-4o-2024-08-06`` and
    ``OpenAI/GPT-4o`` both give ``gpt-4o``; ``claude-3-5-sonnet@20240620`` gives
    ``claude-3-5-sonnet``. Size or variant words (``mini``, ``8b``, ``instruct``) are kept: they
    name different models; :func:`same_family` relates them.
    """
    s = name.strip().lower()
    s = s.rsplit("/", 1)[-1]
    s = s.split(":", 1)[0]
    s = re.sub(r"[\s_]+", "-", s)
    return _DATE_SUFFIX.sub("", s).strip("-")


def same_family(a: str, b: str) -> bool:
    """Whether two model names are one family: after :func:`model_family`, equal, or one extends
    the other after a hyphen (``gpt-4o-mini`` is in ``gpt-4o``'s family; ``gpt-4`` and
    ``gpt-4o`` are not, nor are ``llama-3`` and ``llama-3.1``). Empty names match nothing."""
    fa, fb = model_family(a), model_family(b)
    if not fa or not fb:
        return False
    short, long = sorted((fa, fb), key=len)
    return long == short or long.startswith(short + "-")


@dataclass(frozen=True)
class FamilyGap:
    """The runs declaring one model family and their mean score gap, automatic - human.

    ``family`` is the :func:`model_family` of the declared names (``"(none declared)"`` for runs
    declaring none); a run declaring several models is in each of their families. ``mean_gap``
    averages ``auto - human`` over the family's runs; ``relative_gap`` subtracts the mean gap of
    all runs, so a judge that inflates every score does not look biased toward one family.
    ``circular``: the family is the judge's own (:func:`same_family`).
    """

    family: str
    runs: list[str]
    mean_gap: float
    relative_gap: float
    human_mean: float
    auto_mean: float
    circular: bool

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict (NaN -> None)."""
        return {
            "family": self.family,
            "runs": list(self.runs),
            "mean_gap": _json(self.mean_gap),
            "relative_gap": _json(self.relative_gap),
            "human_mean": _json(self.human_mean),
            "auto_mean": _json(self.auto_mean),
            "circular": self.circular,
        }


NO_MODEL = "(none declared)"


def family_gaps(
    human_scores: Mapping[str, float],
    auto_scores: Mapping[str, float],
    families: Mapping[str, Sequence[str]],
    judge_model: str,
) -> list[FamilyGap]:
    """Mean score gap per model family, circular families (the judge's own) first.

    ``families`` maps a run to the models it declares (runs absent from it, or declaring none,
    form the ``"(none declared)"`` family). Only runs scored under both qrels count. Families
    are sorted circular first, then by name.
    """
    runs = sorted(set(human_scores) & set(auto_scores))
    gap = {r: float(auto_scores[r]) - float(human_scores[r]) for r in runs}
    overall = float(np.mean(list(gap.values()))) if runs else math.nan
    members: dict[str, list[str]] = {}
    for r in runs:
        names = {model_family(m) for m in families.get(r, ())} - {""}
        for fam in sorted(names) or [NO_MODEL]:
            members.setdefault(fam, []).append(r)
    out = []
    for fam, rs in members.items():
        mean_gap = float(np.mean([gap[r] for r in rs]))
        out.append(
            FamilyGap(
                family=fam,
                runs=rs,
                mean_gap=mean_gap,
                relative_gap=mean_gap - overall,
                human_mean=float(np.mean([float(human_scores[r]) for r in rs])),
                auto_mean=float(np.mean([float(auto_scores[r]) for r in rs])),
                circular=fam != NO_MODEL and same_family(fam, judge_model),
            )
        )
    return sorted(out, key=lambda f: (not f.circular, f.family))


# --- robustness probes ------------------------------------------------------------------------


@dataclass(frozen=True)
class ProbeFlip:
    """One probed item whose relevance changed: its grade before and after the transform."""

    key: Key
    before: int
    after: int


@dataclass(frozen=True)
class ProbeResult:
    """What one probe did to the judge's labels on the ``n`` items labelled before and after.

    ``flipped`` counts items crossing the relevance threshold (either way), ``share`` is
    ``flipped / n``; ``raised`` counts items whose grade went up at all; ``mean_shift`` is the
    mean of ``after - before`` in grade values. ``examples``: the first few flips by key.
    ``missing``: items labelled on one side only (a failed call), left out.
    """

    probe: str
    n: int
    threshold: int
    flipped: int
    share: float
    raised: int
    lowered: int
    mean_shift: float
    examples: list[ProbeFlip]
    missing: int

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict (NaN -> None)."""
        return {
            "probe": self.probe,
            "n": self.n,
            "threshold": self.threshold,
            "flipped": self.flipped,
            "share": _json(self.share),
            "raised": self.raised,
            "lowered": self.lowered,
            "mean_shift": _json(self.mean_shift),
            "examples": [
                {"qid": e.key[0], "docid": e.key[1], "before": e.before, "after": e.after}
                for e in self.examples
            ],
            "missing": self.missing,
        }


def probe_result(
    probe: str,
    before: Mapping[Key, int],
    after: Mapping[Key, int],
    threshold: int = 1,
    *,
    n_examples: int = 5,
) -> ProbeResult:
    """Compare the judge's grades of the same items before and after a probe's transform.

    flipped = #{(before >= t) != (after >= t)}, share = flipped / n over the n items in both;
    NaN share and shift when n = 0.
    """
    shared = sorted(set(before) & set(after))
    b = np.asarray([int(before[k]) for k in shared], dtype=np.int64)
    a = np.asarray([int(after[k]) for k in shared], dtype=np.int64)
    flips = (b >= threshold) != (a >= threshold)
    n = len(shared)
    examples = [
        ProbeFlip(key=shared[i], before=int(b[i]), after=int(a[i]))
        for i in np.flatnonzero(flips)[:n_examples]
    ]
    return ProbeResult(
        probe=probe,
        n=n,
        threshold=int(threshold),
        flipped=int(flips.sum()),
        share=float(flips.mean()) if n else math.nan,
        raised=int((a > b).sum()),
        lowered=int((a < b).sum()),
        mean_shift=float((a - b).mean()) if n else math.nan,
        examples=examples,
        missing=len(set(before) ^ set(after)),
    )


# --- anchoring --------------------------------------------------------------------------------


def _arm_tables(
    arm: Mapping[Key, tuple[int, int]], scale: list[int], which: str
) -> npt.NDArray[np.int64]:
    pairs = [
        (
            _position_of(scale, h, f"{which} arm human", key),
            _position_of(scale, a, f"{which} arm automatic", key),
        )
        for key, (h, a) in sorted(arm.items())
    ]
    return _confusion(pairs, scale)


def _codes(table: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """One code h * K + a per item of a confusion table (for resampling items)."""
    return np.repeat(np.arange(table.size), table.ravel())


def _boot_kappa_exact(
    codes: npt.NDArray[np.int64], k: int, rng: np.random.Generator, n_resamples: int
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Linear kappa and exact agreement of ``n_resamples`` bootstrap resamples of the items."""
    n = codes.size
    draws = codes[rng.integers(0, n, size=(n_resamples, n))]
    offset = (np.arange(n_resamples) * k * k)[:, None]
    counts = np.bincount((draws + offset).ravel(), minlength=n_resamples * k * k)
    tables = counts.reshape(n_resamples, k, k).astype(np.float64) / n
    w = weight_matrix(k, "linear")
    expected = tables.sum(axis=2)[:, :, None] * tables.sum(axis=1)[:, None, :]
    d_exp = (w * expected).sum(axis=(1, 2))
    d_obs = (w * tables).sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = np.where(d_exp > 0, 1.0 - d_obs / d_exp, np.nan)
    exact = np.trace(tables, axis1=1, axis2=2)
    return kappa, exact


def anchoring(
    shown: Mapping[Key, tuple[int, int]],
    hidden: Mapping[Key, tuple[int, int]],
    scale: Sequence[int],
    *,
    level: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict[str, Any]:
    """Human-automatic agreement with the automatic grade shown to the assessor and hidden.

    Each arm maps an item to ``(human grade, automatic grade)``. Per arm: ``n``, ``exact``,
    ``within_one``, ``kappa_linear`` (as :func:`label_agreement`). The anchoring effect is
    ``shown - hidden``: for exact agreement with the normal (Wald) interval of a difference of
    two independent proportions, ``d +- z sqrt(p1 (1 - p1) / n1 + p2 (1 - p2) / n2)``; for
    linear kappa with a percentile bootstrap interval, items resampled within each arm
    independently (``n_resamples``, ``seed``; resamples with undefined kappa are dropped and
    counted). Positive values mean assessors agree more with the judge when they see its grade.
    Intervals are None when an arm has fewer than 2 items. Returns a JSON-safe dict.
    """
    grade_scale = check_scale(scale)
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    from scipy.stats import norm

    k = len(grade_scale)
    tables = {
        "shown": _arm_tables(shown, grade_scale, "shown"),
        "hidden": _arm_tables(hidden, grade_scale, "hidden"),
    }
    arms: dict[str, dict[str, Any]] = {}
    for name, table in tables.items():
        exact, within, k_lin, _ = _table_stats(table)
        arms[name] = {
            "n": int(table.sum()),
            "exact": exact,
            "within_one": within,
            "kappa_linear": k_lin,
        }
    s, h = arms["shown"], arms["hidden"]
    z = float(norm.ppf(0.5 + level / 2))
    d_exact = s["exact"] - h["exact"]
    d_kappa = s["kappa_linear"] - h["kappa_linear"]
    exact_ci: list[float] | None = None
    kappa_ci: list[float] | None = None
    dropped = 0
    if s["n"] >= 2 and h["n"] >= 2:
        se = math.sqrt(
            s["exact"] * (1 - s["exact"]) / s["n"] + h["exact"] * (1 - h["exact"]) / h["n"]
        )
        exact_ci = [d_exact - z * se, d_exact + z * se]
        rng = np.random.default_rng(seed)
        ks, _ = _boot_kappa_exact(_codes(tables["shown"]), k, rng, n_resamples)
        kh, _ = _boot_kappa_exact(_codes(tables["hidden"]), k, rng, n_resamples)
        diff = ks - kh
        ok = diff[np.isfinite(diff)]
        dropped = int(diff.size - ok.size)
        if ok.size:
            alpha = (1.0 - level) / 2
            kappa_ci = [float(np.quantile(ok, alpha)), float(np.quantile(ok, 1 - alpha))]
    result = {
        "shown": s,
        "hidden": h,
        "difference": {
            "exact": d_exact,
            "exact_interval": exact_ci,
            "kappa_linear": d_kappa,
            "kappa_linear_interval": kappa_ci,
        },
        "level": level,
        "method": {
            "exact_interval": "normal (Wald) interval of a difference of two proportions",
            "kappa_linear_interval": (
                f"percentile bootstrap, {n_resamples} resamples of the items within each arm, "
                f"seed {seed}"
            ),
            "bootstrap_resamples_dropped": dropped,
        },
    }
    return dict(_json_any(result))
