"""What an evaluation returns: :class:`EvaluationResult` (per-query values and their
:class:`Aggregate` per measure, the :class:`Excluded` queries and why), defined by
:mod:`metrics.evaluation.evaluator`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from metrics.measures.names import parse_measures

__all__ = [
    "Aggregate",
    "EvaluationResult",
    "Excluded",
]

NO_RELEVANT = "no relevant documents"


NOT_IN_QRELS = "no judgments (not in qrels)"


NOT_IN_RUN = "not in run"


def _num(x: float | None) -> float | None:
    return None if x is None or math.isnan(x) else float(x)


def _canonical(name: str) -> str:
    return parse_measures([name])[0].name


@dataclass(frozen=True)
class Aggregate:
    """One measure's aggregate over the evaluated queries.

    ``average`` is "macro", "micro" or "sum" (counts); ``ci_method`` is None when no interval
    was computed (counts, or ``ci=None``).
    """

    value: float
    ci_low: float | None
    ci_high: float | None
    ci_method: str | None
    n_queries: int
    average: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (NaN becomes None)."""
        return {
            "value": _num(self.value),
            "ci_low": _num(self.ci_low),
            "ci_high": _num(self.ci_high),
            "ci_method": self.ci_method,
            "n_queries": self.n_queries,
            "average": self.average,
        }


@dataclass(frozen=True)
class Excluded:
    """A query left out of the averages, and why."""

    qid: str
    reason: str


@dataclass(frozen=True)
class EvaluationResult:
    """Per-query values and aggregates of one run; see the module docstring for semantics.

    ``per_query[name][qid]`` and ``aggregates[name]`` are keyed by canonical measure names
    (``nDCG@10``); they include the companions the honest mode adds (``Judged@k``,
    ``ceiling@k``), listed in ``companions[name]``. ``treatments[name]`` maps "lower",
    "condensed", "upper" to aggregates (honest mode, top-k measures), with per-query values in
    ``per_query_treatments``.
    """

    run: str
    mode: str
    average: str
    relevance_level: int
    complete: bool
    ci_method: str | None
    ci_level: float
    measures: list[str]
    queries: list[str]
    per_query: dict[str, dict[str, float]]
    aggregates: dict[str, Aggregate]
    excluded: list[Excluded]
    companions: dict[str, dict[str, str]] = field(default_factory=dict)
    treatments: dict[str, dict[str, Aggregate]] = field(default_factory=dict)
    per_query_treatments: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    unanswered: list[str] = field(default_factory=list)

    @property
    def excluded_summary(self) -> list[str]:
        """Human-readable lines such as "3 of 50 queries excluded: no relevant documents"."""
        total = len(self.queries) + len(self.excluded)
        counts: dict[str, int] = {}
        for e in self.excluded:
            counts[e.reason] = counts.get(e.reason, 0) + 1
        out = [f"{n} of {total} queries excluded: {why}" for why, n in counts.items()]
        if self.unanswered:
            n = len(self.unanswered)
            out.append(
                f"{n} of {len(self.queries)} averaged queries {'is' if n == 1 else 'are'} not in "
                "the run (scored 0)"
            )
        return out

    def value(self, measure: str) -> float:
        """Aggregate value of a measure (canonical or any accepted spelling)."""
        return self.aggregates[_canonical(measure)].value

    def to_dict(self, *, per_query: bool = True) -> dict[str, Any]:
        """JSON-able dict: run, mode, averaging, CI settings, measures with aggregates (and
        their companions and treatments), excluded queries, and per-query values."""
        measures: dict[str, Any] = {}
        for name in self.measures:
            entry = self.aggregates[name].to_dict()
            relevance = parse_measures([name])[0].relevance  # RBP: graded, RBP(rel=1): binary
            if relevance is not None:
                entry["relevance"] = relevance
            for role, comp in self.companions.get(name, {}).items():
                entry[role] = {"measure": comp, **self.aggregates[comp].to_dict()}
            if name in self.treatments:
                entry["treatments"] = {t: a.to_dict() for t, a in self.treatments[name].items()}
            measures[name] = entry
        out: dict[str, Any] = {
            "run": self.run,
            "mode": self.mode,
            "average": self.average,
            "relevance_level": self.relevance_level,
            "complete": self.complete,
            "ci": {"method": self.ci_method, "level": self.ci_level},
            "n_queries": len(self.queries),
            "excluded": [{"qid": e.qid, "reason": e.reason} for e in self.excluded],
            "unanswered": list(self.unanswered),
            "excluded_summary": self.excluded_summary,
            "measures": measures,
        }
        if per_query:
            out["per_query"] = {
                m: {q: _num(v) for q, v in vals.items()} for m, vals in self.per_query.items()
            }
            if self.per_query_treatments:
                out["per_query_treatments"] = {
                    m: {t: {q: _num(v) for q, v in vals.items()} for t, vals in ts.items()}
                    for m, ts in self.per_query_treatments.items()
                }
        return out
