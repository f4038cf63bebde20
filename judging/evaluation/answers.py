"""What the evaluation selectors answer (a run's evaluations, the leaderboard, significance, a
head-to-head of two runs), as types for the API's schema (``api.result_schemas``).

The selectors still build these answers as dicts; these types say what their keys hold. Their
keys depend on the mode and the state (trec_eval mode has no treatments, a pending evaluation no
result), so each says ``SCHEMA_PARTIAL``: every key described, none promised. Run names in them
are as the reader may see them (``campaigns.selectors.run_label``).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class Aggregate:
    """A measure's aggregate over queries with its confidence interval."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    measure: str
    value: float | None
    ci_low: float | None
    ci_high: float | None
    ci_method: str | None
    n_queries: int
    average: str


@dataclass(frozen=True)
class Treatments:
    """A measure with unjudged documents as non-relevant (lower), removed (condensed, Sakai
    2007) and as relevant (upper)."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    lower: Aggregate
    condensed: Aggregate
    upper: Aggregate


@dataclass(frozen=True)
class MeasureSummary:
    """A measure's aggregate with its Judged@k, its achievable ceiling (Recall@k) and its
    treatments of unjudged documents."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    value: float | None
    ci_low: float | None
    ci_high: float | None
    ci_method: str | None
    n_queries: int
    average: str
    judged: Aggregate | None
    ceiling: Aggregate | None
    treatments: Treatments | None


@dataclass(frozen=True)
class ConfidenceMethod:
    method: str | None
    level: float | None


@dataclass(frozen=True)
class ExcludedQuery:
    qid: str
    reason: str


@dataclass(frozen=True)
class EvaluationResult:
    """A stored evaluation (``metrics.evaluate``): aggregates, per-query values, and the
    queries excluded or unanswered."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    run: str
    mode: str
    average: str
    relevance_level: int
    complete: bool
    ci: ConfidenceMethod | None
    n_queries: int
    excluded: list[ExcludedQuery]
    unanswered: list[str]
    excluded_summary: list[str]
    measures: dict[str, MeasureSummary]
    per_query: dict[str, dict[str, float | None]]
    per_query_treatments: dict[str, dict[str, dict[str, float | None]]]


@dataclass(frozen=True)
class SliceValue:
    """A measure's mean over the topics of one tag, with its interval."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    value: float | None
    ci_low: float | None
    ci_high: float | None
    n_queries: int


@dataclass(frozen=True)
class RecallCurve:
    """Recall@k for k = 1..depth with its ceiling, the elbow and plateau, and per query the
    relevant documents never retrieved."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    averaging: str
    k: list[int]
    recall: list[float | None]
    ceiling: list[float | None]
    elbow: int | None
    plateau: int | None
    never_retrieved: dict[str, list[str]]
    excluded: list[str]
    queries: list[str]
    num_queries: int
    depth: int
    k_sampling: str


@dataclass(frozen=True)
class EvaluationAnswer:
    """One stored evaluation of a run: its qrels version, mode and state, and once done its
    result, topic slices and recall curve."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    run: str
    qrels_version: int
    qrels_kind: str
    qrels_hash: str
    mode: str
    state: str
    error: str
    measures: list[str]
    computed_at: datetime.datetime | None
    result: EvaluationResult | None
    slices: dict[str, dict[str, SliceValue]] | None
    recall_curve: RecallCurve | None


@dataclass(frozen=True)
class RunEvaluationsAnswer:
    """A run's stored evaluations (or the one asked for)."""

    run: str
    evaluations: list[EvaluationAnswer]


# --- the leaderboard ----------------------------------------------------------------------------


@dataclass(frozen=True)
class BoardFilters:
    SCHEMA_PARTIAL: ClassVar[bool] = True

    pooled: str
    group: str
    slice: str


@dataclass(frozen=True)
class PoolStanding:
    """Whether a run is scored against a pool it did not help build, and why."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    outside: bool
    why: str
    k: int
    judged: float | None


@dataclass(frozen=True)
class BoardRun:
    """One run's row: its label, pooling, group (to who may see it) and aggregates."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    run_id: int | None
    run: str
    pooled: bool
    group: str | None
    state: str | None
    n_queries: int | None
    excluded_summary: list[str]
    slices: dict[str, dict[str, SliceValue]]
    measures: dict[str, MeasureSummary]
    pool_standing: PoolStanding | None


@dataclass(frozen=True)
class LeaderboardAnswer:
    """Every run's aggregates under one qrels version, as sorted and filtered (``view`` says
    how, ``shown`` of ``total`` runs)."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    campaign: int
    qrels_version: int
    qrels_kind: str
    qrels_hash: str
    mode: str
    measures: list[str]
    campaign_measures: list[str]
    sorted_by: str
    order: str
    filters: BoardFilters
    slice: str | None
    view: str
    shown: int
    total: int
    groups: list[str]
    slices: list[str]
    runs: list[BoardRun]
