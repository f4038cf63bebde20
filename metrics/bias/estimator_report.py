"""The estimators' names and labels, the measure families they apply to, and what
:func:`metrics.bias.estimators.estimator_report` returns (:class:`EstimatorReport`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from metrics.measures.names import Measure

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]
Bool = npt.NDArray[np.bool_]

__all__ = [
    "ALL",
    "LABELS",
    "EstimatorReport",
]

ALL: tuple[str, ...] = ("pool", "webber_park", "lipani2015", "lipani2016", "condensed", "upper")


LABELS: dict[str, str] = {
    "pool": "Pool (no correction)",
    "webber_park": "Webber & Park 2009",
    "lipani2015": "Lipani, Lupu & Hanbury 2015 (anti-precision)",
    "lipani2016": "Lipani, Lupu & Hanbury 2016 (per topic)",
    "condensed": "Condensed list (Sakai 2007)",
    "upper": "Upper bound (unjudged in the top k relevant)",
}


# measure families the estimators are defined for (all read judged rows through ranks only)
FAMILIES = ("P", "R", "AP", "nDCG", "RR", "Bpref", "Success", "Rprec")


_TOP_K = ("P", "R", "AP", "nDCG", "RR", "Success")  # the upper treatment's families (with a k)


_SIG = 0.05  # SRE*: the paired t-test's level


def _num(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def _why_not(name: str, m: Measure) -> str | None:
    """Why estimator ``name`` does not apply to ``m`` (None when it does)."""
    if name == "lipani2015" and m.family != "P":
        return "P@k only"
    if name == "lipani2016" and m.family not in ("P", "R"):
        return "P@k and R@k only"
    if name == "upper" and (m.family not in _TOP_K or m.cutoff is None):
        return "top-k measures only (P@k, R@k, RR@k, AP@k, nDCG@k, Success@k)"
    return None


def _java_round(x: float) -> int:
    return math.floor(x + 0.5)


@dataclass(frozen=True)
class EstimatorReport:
    """Estimates and their measured error for one measure; see the module docstring.

    ``errors[name]`` holds "mae", "sre", "sre_star", "kendall_tau", "n_runs" of an applicable
    estimator, ``why_not[name]`` the reason one does not apply. ``runs[tag]`` are the harness
    rows (pooled runs), ``not_pooled[tag]`` the estimates of the runs outside the pool.
    """

    measure: str
    depth: int
    leave_out: str
    compat: str
    top75: bool
    topics: tuple[str, ...]
    n_units: int
    estimators: tuple[str, ...]
    errors: dict[str, dict[str, Any]]
    why_not: dict[str, str]
    runs: dict[str, dict[str, Any]]
    not_pooled: dict[str, dict[str, Any]]
    deltas: dict[str, Any]
    recommended: str | None
    recommended_why: str | None
    dropped: tuple[str, ...] = field(default=())
    by_novelty: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    novelty_k: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of SPEC.md (floats may be None, never NaN)."""
        est: dict[str, Any] = {}
        for name in self.estimators:
            if name in self.why_not:
                est[name] = {"label": LABELS[name], "applicable": False, "why": self.why_not[name]}
            else:
                e = self.errors[name]
                est[name] = {
                    "label": LABELS[name],
                    "applicable": True,
                    "mae": _num(e["mae"]),
                    "sre": e["sre"],
                    "sre_star": e["sre_star"],
                    "kendall_tau": _num(e["kendall_tau"]),
                    "n_runs": e["n_runs"],
                }
        runs = {
            tag: {k: (_num(v) if isinstance(v, float) else v) for k, v in row.items()}
            for tag, row in self.runs.items()
        }
        out: dict[str, Any] = {
            "measure": self.measure,
            "depth": self.depth,
            "leave_out": self.leave_out,
            "mode": self.compat,
            "top75": self.top75,
            "topics": list(self.topics),
            "n_units": self.n_units,
            "estimators": est,
            "recommended": self.recommended,
            "recommended_why": self.recommended_why,
            "runs": runs,
            "not_pooled": self.not_pooled,
            "deltas": self.deltas,
            "novelty_k": self.novelty_k,
            "by_novelty": self.by_novelty,
        }
        if self.top75:
            out["top75_dropped"] = list(self.dropped)
        return out


def _t_half(sd: F64, n: I64, level: float = 0.95) -> F64:
    """Half-width of the Student-t interval of a mean (NaN for n < 2)."""
    import scipy.special  # only the interval and test code needs scipy

    out = np.full(sd.shape, np.nan)
    ok = n >= 2
    q = scipy.special.stdtrit(np.maximum(n[ok] - 1, 1).astype(np.float64), 0.5 + level / 2.0)
    out[ok] = q * sd[ok] / np.sqrt(n[ok])
    return out


def _paired_p(values: F64, valid: Bool) -> F64:
    """Two-sided paired t-test p-values between every two rows of ``values`` (runs x topics),
    on the topics valid in both; zero variance: p = 0 if the mean difference is not 0, else 1
    (as :func:`metrics.stats.paired.paired_test`); fewer than 2 topics: NaN (not significant)."""
    import scipy.special

    v = np.where(valid, values, 0.0)
    w = valid.astype(np.float64)
    both = w @ w.T
    # sums over common topics of d = v_i - v_j and d^2
    s1 = (v * w) @ w.T - w @ (v * w).T
    s2 = (v * v * w) @ w.T - 2.0 * (v * w) @ (v * w).T + w @ (v * v * w).T
    n = both
    mean = np.divide(s1, n, out=np.zeros_like(s1), where=n > 0)
    var = np.divide(s2 - n * mean * mean, n - 1, out=np.zeros_like(s1), where=n > 1)
    var = np.maximum(var, 0.0)
    p = np.full(s1.shape, np.nan)
    ok = n >= 2
    scale = np.abs(mean) * 1e-12 + 1e-300
    flat = ok & (var <= scale * scale)
    p[flat] = np.where(np.abs(mean[flat]) > 1e-15, 0.0, 1.0)
    vary = ok & ~flat
    t = np.abs(mean[vary]) / np.sqrt(var[vary] / n[vary])
    p[vary] = 2.0 * scipy.special.stdtr(n[vary] - 1.0, -t)
    return p


@dataclass
class _Scenario:
    """Which judgments a run is scored without: rows removed, counts and ideal gains per cell."""

    removed: Bool  # per sparse row
    rel: I64  # (runs, topics)
    nonrel: I64
    found: I64
    ideal_removed: Bool | None  # (runs, ideal docs)


def cell_means(values: F64, counted: Bool) -> F64:
    """Per run, the mean of ``values`` (runs, topics) over the cells ``counted`` (NaN: none)."""
    n = counted.sum(axis=1)
    total = np.where(counted, values, 0.0).sum(axis=1)
    out = np.full(values.shape[0], np.nan)
    np.divide(total, n, out=out, where=n > 0)
    return out
