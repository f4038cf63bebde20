"""What the judging reads and the publish answer hold (progress, agreement, disagreements, a
qrels diff, the open items of a publish), as types for the API's schema
(``api.result_schemas``). The selectors and services still build them as dicts; these types say
what their keys hold, without promising keys that depend on the data (``SCHEMA_PARTIAL``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class LeaseStates:
    SCHEMA_PARTIAL: ClassVar[bool] = True

    active: int
    released: int
    judged: int
    expired: int


@dataclass(frozen=True)
class TopicProgress:
    SCHEMA_PARTIAL: ClassVar[bool] = True

    topic__qid: str
    topic__title: str
    total: int
    judged: int
    waiting_text: int
    leased: int
    primary: str


@dataclass(frozen=True)
class AnnotatorProgress:
    SCHEMA_PARTIAL: ClassVar[bool] = True

    annotator__username: str
    judged: int
    last_hour: int
    active_seconds: float | None
    seconds_per_judgment: float | None


@dataclass(frozen=True)
class KindProgress:
    """Items of one kind (document, nugget_assignment, ...): slots queued and judged."""

    slots: int
    judged: int


@dataclass(frozen=True)
class ProgressAnswer:
    """Judging progress per topic and annotator, lease states and throughput."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    slots: int
    judged: int
    left: int
    waiting_text: int
    documents_waiting_text: int
    percent: float | None
    judgments_last_hour: int
    adjudications: int
    lease_states: LeaseStates
    topics: list[TopicProgress]
    annotators: list[AnnotatorProgress]
    kinds: dict[str, KindProgress]


@dataclass(frozen=True)
class PairKappa:
    SCHEMA_PARTIAL: ClassVar[bool] = True

    annotator_a: str
    annotator_b: str
    n_items: int
    kappa: float | None


@dataclass(frozen=True)
class Agreement:
    """Agreement on the items several annotators judged."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    n_items: int
    n_annotators: int
    percent_agreement: float | None
    fleiss_kappa: float | None
    krippendorff_alpha: float | None
    pairs: list[PairKappa]
    notes: list[str]


@dataclass(frozen=True)
class KindAgreement:
    """Agreement on one kind of item, overall and per topic."""

    overall: Agreement
    topics: dict[str, Agreement]


@dataclass(frozen=True)
class AgreementAnswer:
    """Agreement overall and per topic, on documents; ``kinds``: the same on each other kind
    of item judged (nugget assignment, citation support), on its own scale."""

    overall: Agreement
    topics: dict[str, Agreement]
    kinds: dict[str, KindAgreement]


@dataclass(frozen=True)
class Disagreement:
    """An item its annotators graded differently: each one's grade, and the adjudication."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    topic: str
    docid: str
    grades: dict[str, int]
    spread: int
    adjudicated: int | None


@dataclass(frozen=True)
class DisagreementsAnswer:
    count: int
    results: list[Disagreement]


@dataclass(frozen=True)
class GradedDocument:
    topic: str
    docid: str
    grade: int


@dataclass(frozen=True)
class RegradedDocument:
    topic: str
    docid: str
    old: int
    new: int


@dataclass(frozen=True)
class DiffCounts:
    added: int
    removed: int
    changed: int


@dataclass(frozen=True)
class QrelsDiffAnswer:
    """Judgments added, removed and changed between two qrels versions."""

    version: int
    against: int
    added: list[GradedDocument]
    removed: list[GradedDocument]
    changed: list[RegradedDocument]
    summary: DiffCounts


@dataclass(frozen=True)
class OpenItem:
    SCHEMA_PARTIAL: ClassVar[bool] = True

    topic: str
    docid: str
    slot: int
    state: str
    why: str
    in_version: bool


@dataclass(frozen=True)
class OpenItems:
    """The pooled slots still unjudged when a version was published, and what the version
    holds of their documents."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    count: int
    first_slots: int
    overlap_slots: int
    needs_another_assessor: int
    waiting_text: int
    documents_in_version: int
    documents_not_in_version: int
    documents_excluded_only: int
    items: list[OpenItem]
    listed: int
    truncated: bool
    complete_except_unfillable: bool
    sentence: str


@dataclass(frozen=True)
class PublishExtras:
    """What a publish answers besides the qrels version."""

    open_items: OpenItems
    warning: str


# --- quality control ----------------------------------------------------------------------------


@dataclass(frozen=True)
class GoldAccuracy:
    """Accuracy on gold items: exact and at the relevance threshold, with Wilson intervals."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    n: int
    exact: float | None
    exact_interval: list[float | None]
    binary: float | None
    binary_interval: list[float | None]
    mean_abs_error: float | None


@dataclass(frozen=True)
class SharedItems:
    """Agreement with the other assessors on the items shared with them."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    n_items: int
    n_pairs: int
    exact: float | None
    kappa: float | None


@dataclass(frozen=True)
class DriftBlock:
    """A block of consecutive judgments (or a day's): their pace and gold accuracy."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    label: str
    n: int
    median_seconds: float | None
    gold: GoldAccuracy


@dataclass(frozen=True)
class Drift:
    block: int
    blocks: list[DriftBlock]
    days: list[DriftBlock]


@dataclass(frozen=True)
class ExclusionInForce:
    id: int
    reason: str
    by: str
    at: str


@dataclass(frozen=True)
class QualityAlert:
    annotator: str
    level: str
    kind: str
    message: str


@dataclass(frozen=True)
class AssessorQuality:
    SCHEMA_PARTIAL: ClassVar[bool] = True

    annotator: str
    judgments: int
    gold: GoldAccuracy
    agreement: SharedItems
    grades: dict[str, int]
    timed_judgments: int
    median_seconds: float | None
    drift: Drift
    excluded: ExclusionInForce | None
    alerts: list[QualityAlert]


@dataclass(frozen=True)
class GoldCounts:
    total: int
    active: int


@dataclass(frozen=True)
class QualityAnswer:
    """Quality control per assessor, the settings it applies and the alerts."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    campaign: int
    gold_rate: float
    qc_min_accuracy: float
    qc_min_gold: int
    relevance_threshold: int
    gold_items: GoldCounts
    assessors: list[AssessorQuality]
    alerts: list[QualityAlert]


@dataclass(frozen=True)
class GoldItem:
    """A gold item with how often it was judged and judged right."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    id: int
    topic: str
    docid: str
    grade: int
    source: str
    qrels_version: int | None
    active: bool
    judged: int
    right: int


@dataclass(frozen=True)
class GoldItemsAnswer:
    count: int
    results: list[GoldItem]


@dataclass(frozen=True)
class Exclusion:
    """An assessor's exclusion from the qrels, in force or lifted, with the reasons."""

    id: int
    annotator: str
    reason: str
    excluded_by: str
    excluded_at: str
    lifted_at: str | None
    lifted_by: str | None
    lift_reason: str


@dataclass(frozen=True)
class ExclusionsAnswer:
    count: int
    results: list[Exclusion]


# --- the budget plan ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Pace:
    SCHEMA_PARTIAL: ClassVar[bool] = True

    seconds_per_judgment: float | None
    judgments: int
    rule: str


@dataclass(frozen=True)
class YieldModel:
    """The fitted curve of relevant documents found against judgments made."""

    shape: str
    a: float
    b: float


@dataclass(frozen=True)
class TopicPlan:
    """One topic: what was judged and found, what is expected left, and whether to stop."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    qid: str
    title: str
    judgments: int
    items_judged: int
    items_only_excluded: int
    relevant: int
    recent_found: int
    recent_judged: int
    recent_rate: float | None
    items_left: int
    expected_left: float | None
    expected_left_recent_rate: float | None
    model: YieldModel | None
    stop: bool
    suggestion: str
    slots_left: int
    unfillable_slots: int
    unfillable_why: list[str]
    seconds_per_judgment: float | None
    pace_source: str
    seconds_left: float | None
    time_left: str


@dataclass(frozen=True)
class PlanTotals:
    SCHEMA_PARTIAL: ClassVar[bool] = True

    judgments: int
    relevant: int
    items_left: int
    expected_left: float | None
    slots_left: int
    unfillable_slots: int
    seconds_left: float | None
    time_left: str


@dataclass(frozen=True)
class PlanAnswer:
    """The campaign's budget plan: per topic and in total, with its open items."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    window: int
    stop_rate: float
    relevance: str
    estimator: str
    stopping: str
    pool_strategy: str
    pace: Pace
    topics: list[TopicPlan]
    totals: PlanTotals
    open: OpenItems
    topics_to_stop: list[str]
