"""Robustness probes and anchoring of an automatic judge (defined in :mod:`metrics.judges.audit`):
the labels a text transform flips, and human-automatic agreement with the automatic grade shown
or hidden."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from metrics.judges.agreement import check_scale, weight_matrix
from metrics.judges.audit import _confusion, _json, _json_any, _position_of, _table_stats

if TYPE_CHECKING:
    from metrics.judges.audit import Key


__all__ = [
    "ProbeFlip",
    "ProbeResult",
    "anchoring",
    "probe_result",
]


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
