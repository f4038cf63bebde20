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
class AgreementAnswer:
    """Agreement overall and per topic."""

    overall: Agreement
    topics: dict[str, Agreement]


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
