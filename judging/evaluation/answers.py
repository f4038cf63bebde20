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

from judging.evaluation.results import EvaluationResult, MeasureSummary


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
class StratumCount:
    """One stratum of a sampled qrels version: pooled documents, judged ones, sampling rate."""

    pooled: int
    judged: int
    rate: float | None


@dataclass(frozen=True)
class SampledDesign:
    """A sampled qrels version's design as a board says it (``evaluation.selectors``)."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    pool: int | None
    strategy: str
    strata: dict[str, StratumCount]
    awaiting: int
    judged_outside_sample: int
    sentence: str


@dataclass(frozen=True)
class LeaderboardAnswer:
    """Every run's aggregates under one qrels version, as sorted and filtered (``view`` says
    how, ``shown`` of ``total`` runs)."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    campaign: int
    qrels_version: int
    qrels_kind: str
    qrels_hash: str
    sampled: SampledDesign | None
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


# --- the design forecast --------------------------------------------------------------------


@dataclass(frozen=True)
class DesignOutcome:
    """One design simulated at the budget on the pilot (``metrics.evaluation.design_forecast``)."""

    design: str
    detail: str
    judged: float
    tau: float
    tau_ap: float
    rmse: float
    width: float | None
    coverage: float | None
    reps: int


@dataclass(frozen=True)
class DesignForecastAnswer:
    """Depth-k vs stratified vs statAP vs hybrid at a budget, on the campaign's own runs and
    pilot topics, the recommended one with what it rests on, and the topics a target MAP
    interval width takes (``difference 0.05``: two runs' mean difference; ``mean 0.05``: one
    run's MAP)."""

    campaign: int
    qrels_version: int
    budget: int
    pool: int
    share: float
    pilot_topics: list[str]
    runs: int
    reps: int
    designs: list[DesignOutcome]
    recommended: str
    basis: str
    sentence: str
    topics_for_width: dict[str, int]


# --- significance -------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunSelection:
    """Which runs a table compares and why."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    how: str
    text: str
    n_available: int
    cap: int
    available: list[str]


@dataclass(frozen=True)
class RunMean:
    run: str
    mean: float | None


@dataclass(frozen=True)
class PairComparison:
    """Two runs compared on the topics both scored (the pairs view)."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    run_a: str
    run_b: str
    mean_a: float | None
    mean_b: float | None
    diff: float | None
    effect: float | None
    p_value: float | None
    p_adjusted: float | None
    significant: bool
    test: str
    correction: str
    n: int
    p_holm: float | None


@dataclass(frozen=True)
class MatrixCell:
    """The row's run against the column's (the matrix view; null on the diagonal)."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    diff: float | None
    p: float | None
    p_adjusted: float | None
    effect: float | None
    significant: bool


@dataclass(frozen=True)
class BaselineRow:
    """A run against the baseline (the baseline view)."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    run: str
    mean: float | None
    diff: float | None
    ci_low: float | None
    ci_high: float | None
    effect: float | None
    p_value: float | None
    p_adjusted: float | None
    wins: int
    ties: int
    losses: int
    significant: bool


@dataclass(frozen=True)
class SignificanceAnswer:
    """Paired tests between runs on one measure, by view: ``comparisons`` (pairs), ``cells``
    (matrix) or ``rows`` (against ``baseline``); ``note`` when there is nothing to pair."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    campaign: int
    qrels_version: int
    qrels_kind: str
    qrels_hash: str
    measure: str
    averaging: str
    baseline: str
    baseline_mean: float | None
    test: str
    test_name: str
    correction: str
    correction_name: str
    alpha: float
    level: float
    n_queries: int
    selection: RunSelection
    runs: list[RunMean]
    comparisons: list[PairComparison]
    cells: list[list[MatrixCell | None]]
    rows: list[BaselineRow]
    note: str


# --- two runs head to head ----------------------------------------------------------------------


@dataclass(frozen=True)
class VersusTopic:
    """One topic's scores of A and B (a run that did not answer it scores 0: ``*_missing``)."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    qid: str
    title: str
    description: str
    narrative: str
    a: float | None
    b: float | None
    diff: float | None
    a_missing: bool
    b_missing: bool


@dataclass(frozen=True)
class MissingScore:
    qid: str
    run: str
    scored: float


@dataclass(frozen=True)
class VersusAnswer:
    """Two runs topic by topic on one measure: wins, ties and losses, the paired test."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    campaign: int
    qrels_version: int
    qrels_kind: str
    qrels_hash: str
    mode: str
    measure: str
    a: str
    b: str
    difference: str
    averaging: str
    sort: str
    tie: float
    tie_rule: str
    n_topics: int
    wins: int
    ties: int
    losses: int
    mean_a: float | None
    mean_b: float | None
    mean_diff: float | None
    test: str
    test_name: str
    correction: str
    statistic: float | None
    p_value: float | None
    note: str
    missing: list[MissingScore]
    topics: list[VersusTopic]


@dataclass(frozen=True)
class RankedDocument:
    """A document of one run's ranking for the topic, with its judgment."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    rank: int
    docid: str
    title: str
    grade: int | None
    judged: bool
    relevant: bool
    in_other: int | None
    in_other_top: bool


@dataclass(frozen=True)
class RankingColumn:
    """One run's ranking for the topic (documents only for a run the reader sees by name)."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    run: str
    score: float | None
    shown: bool
    retrieved: int | None
    rows: list[RankedDocument]


@dataclass(frozen=True)
class VersusTopicAnswer:
    """Two runs on one topic: their scores and their rankings side by side."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    campaign: int
    qrels_version: int
    qrels_kind: str
    qrels_hash: str
    mode: str
    measure: str
    a: str
    b: str
    difference: str
    qid: str
    title: str
    description: str
    narrative: str
    depth: int
    relevance_threshold: int
    num_relevant: int
    num_judged: int
    relevant_missed_by_both: int
    score_a: float | None
    score_b: float | None
    diff: float | None
    columns: list[RankingColumn]
    sort: str
    prev: str | None
    next: str | None
    position: int | None
    n_topics: int


# --- regression check ---------------------------------------------------------------------------


@dataclass(frozen=True)
class MeasureCheckRow:
    """One measure of a regression check (``metrics.evaluation.check.MeasureCheck``)."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    measure: str
    baseline: float | None
    run: float | None
    delta: float | None
    relative_delta: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    p_adjusted: float | None
    effect: float | None
    wins: int
    ties: int
    losses: int
    threshold: float | None
    judged_measure: str | None
    judged_run: float | None
    judged_baseline: float | None
    unjudged: bool
    unjudged_note: str
    verdict: str


@dataclass(frozen=True)
class Unanswered:
    run: int
    baseline: int


@dataclass(frozen=True)
class EvaluationRequestBody:
    qrels: int
    mode: str


@dataclass(frozen=True)
class EvaluationRequest:
    """The request that computes a missing or failed evaluation."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    method: str
    url: str
    body: EvaluationRequestBody


@dataclass(frozen=True)
class CheckedEvaluation:
    """The state of one run's evaluation, while the check cannot be made."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    run: str
    run_id: int
    state: str
    error: str
    request: EvaluationRequest


@dataclass(frozen=True)
class CheckAnswer:
    """A regression check of a run against a baseline: when done, the verdict and a row per
    measure; else the state of each run's evaluation and how to ask for a missing one."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    campaign: int
    run_id: int
    baseline_id: int
    qrels_version: int
    qrels_kind: str
    qrels_hash: str
    mode: str
    run: str
    baseline: str
    state: str
    passed: bool | None
    detail: str
    evaluations: list[CheckedEvaluation]
    verdict: str
    summary: str
    method: str
    test: str
    correction: str
    alpha: float
    ci_level: float
    n_resamples: int
    max_drop: float
    relative: bool
    judged_tolerance: float
    min_judged: float
    average: str
    n_queries: int
    unanswered: Unanswered
    notes: list[str]
    measures: list[MeasureCheckRow]


# --- a run's penalty ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RunPenaltyAnswer:
    """A run against a pool it did not help build (``evaluation.penalty.run_penalty``):
    ``status`` says what there is; when "estimated", what is known for sure (its score, the
    unjudged documents in its top k, its bounds) and the estimate of its score had it been
    pooled, with a 95% interval for that score."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    run: str
    status: str
    detail: str
    measure: str
    qrels_version: int | None
    pooled: bool
    score: float | None
    judged: float | None
    unjudged: int | None
    top_k: int | None
    k: int | None
    bounds: list[float | None] | None
    bounds_exact: bool | None
    estimator: str | None
    estimator_label: str | None
    for_this_run: bool | None
    recommended_why: str | None
    estimate: float | None
    penalty: float | None
    interval: list[float | None] | None
    interval_words: str | None
    extrapolating: bool | None


@dataclass(frozen=True)
class TopUpEstimate:
    """The run's score with its unjudged top k judged, estimated from the judged sample, with
    its 95% interval (``metrics.bias.topup``)."""

    estimate: float
    low: float
    high: float
    level: float


@dataclass(frozen=True)
class TopUpCorrectionAnswer:
    """An automatic judge correcting a top-up (``autojudge.topups.correction_status``): how
    much of the hole it graded, and the run's score with its hole judged estimated from its
    grades corrected by the judged sample."""

    judge: int
    judge_label: str
    labelling: str
    live: bool
    graded: int
    hole: int
    judged: int
    sampled: int
    estimates: dict[str, TopUpEstimate]


@dataclass(frozen=True)
class TopUpAnswer:
    """A top-up of a run (``assessments.topups.topup_status``): n of m judged, the time the rest
    will take, and the estimates so far."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    id: int
    measure: str
    k: int
    design: str
    budget: int
    qrels_version: int
    hole: int
    sampled: int
    judged: int
    done: bool
    time_left: str
    created_at: datetime.datetime
    estimates: dict[str, TopUpEstimate]
    correction: TopUpCorrectionAnswer | None = None


@dataclass(frozen=True)
class TopUpOffer:
    """What a top-up of the run would judge: its unjudged top-k documents, the default budget
    and its cost at the assessors' measured pace."""

    k: int
    unjudged: int
    documents: int
    topics: int
    p_at_k_bounds: list[float] | None
    budget: int
    max_budget: int
    cost: str
    topics_with_hole: int
    per_topic_cost: str
    designs: list[str]


@dataclass(frozen=True)
class RunTopUpsAnswer:
    run: str
    measure: str
    offer: TopUpOffer
    topups: list[TopUpAnswer]
