"""What the automatic-judge reads answer (an audit, a human sample and its hybrid estimate), as
types: the API's schema is generated from them (``api.result_schemas``), and ``autojudge.
reports`` reads a stored audit (``AuditResult``) and a computed estimate (``HybridEstimate``)
into them and renders them for the reader (``metrics.results.render``): the runs they name are
``RunLabel`` values, shown or anonymised by the reader's rights wherever they are.

Keys that depend on the state (an audit not done has no result, a sample not complete no
estimate rows) are described without being promised (``SCHEMA_PARTIAL``); a key a stored result
lacks stays absent when it is rendered.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from metrics.results import STORED, RunLabel, parse, upgraded

# The format of a stored audit result (``JudgeAudit.result``); 1: stored before versions were.
AUDIT_RESULT_VERSION = 2


def _stamp(blob: dict[str, Any]) -> dict[str, Any]:
    """1 -> 2: the same keys; version 2 only says so."""
    return blob


_AUDIT_UPGRADES = {1: _stamp}


@dataclass(frozen=True)
class JudgeDescription:
    """A judge version as a qrels version names it (``Judge.describe``)."""

    id: int
    name: str
    version: int
    kind: str
    model: str


@dataclass(frozen=True)
class QrelsNamed:
    number: int
    hash: str


@dataclass(frozen=True)
class LabelAgreement:
    """The judge's labels against people's on the same pool documents
    (``metrics.judges.audit``): confusion, base rates, exact and within-one agreement, kappas."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    n: int
    scale: list[int]
    threshold: int
    confusion: list[list[int]]
    human_base_rate: dict[str, float | None]
    auto_base_rate: dict[str, float | None]
    exact: float | None
    within_one: float | None
    kappa_linear: float | None
    kappa_quadratic: float | None
    binary_kappa: float | None
    human_only: int
    auto_only: int
    notes: list[str]


@dataclass(frozen=True)
class RankChange:
    run: RunLabel
    human_rank: int | None
    auto_rank: int | None


@dataclass(frozen=True)
class RankingAgreement:
    """The runs ranked under the judge's labels against people's, overall and in the top k."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    n_runs: int
    kendall_tau_b: float | None
    tau_ap: float | None
    top_k: int
    tau_top_k: float | None
    top_k_overlap: float | None
    top_runs: list[RunLabel]
    rank_changes: list[RankChange]
    missing: int


@dataclass(frozen=True)
class FamilyGap:
    """How much the judge favours one model family's runs (circular: the judge's own)."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    family: str
    runs: list[RunLabel]
    mean_gap: float | None
    relative_gap: float | None
    human_mean: float | None
    auto_mean: float | None
    circular: bool


@dataclass(frozen=True)
class ProbeExample:
    qid: str
    docid: str
    before: int | None
    after: int | None


@dataclass(frozen=True)
class Probe:
    """One probe (query-word stuffing, an injected instruction): how many labels crossed the
    relevance threshold when the text was altered."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    probe: str
    n: int
    threshold: int
    flipped: int
    share: float | None
    raised: int
    lowered: int
    mean_shift: float | None
    examples: list[ProbeExample]
    missing: int


@dataclass(frozen=True)
class Probes:
    """The probes, or why they could not be run."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    available: bool
    reason: str
    items: int
    stuffing: Probe
    injection: Probe


@dataclass(frozen=True)
class ArmAgreement:
    n: int
    exact: float | None
    within_one: float | None
    kappa_linear: float | None


@dataclass(frozen=True)
class ArmDifference:
    exact: float | None
    exact_interval: list[float | None] | None
    kappa_linear: float | None
    kappa_linear_interval: list[float | None] | None


@dataclass(frozen=True)
class AnchoringMethod:
    exact_interval: str
    kappa_linear_interval: str
    bootstrap_resamples_dropped: int


@dataclass(frozen=True)
class SuggestionsShown:
    enabled: bool
    judge: JudgeDescription
    hidden_share: float
    updated_at: str


@dataclass(frozen=True)
class AnchoringExcluded:
    gold: int
    without_suggestion: int
    not_graded_by_judge: int


@dataclass(frozen=True)
class Anchoring:
    """Agreement with the judge where its suggestions were shown and where they were hidden,
    and the difference with its interval."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    campaign: int
    setting: SuggestionsShown | None
    automatic: str
    judge: JudgeDescription | None
    kind: str  # the items compared: document, nugget_assignment or citation_support
    scale: list[int]
    excluded: AnchoringExcluded
    changed_after_commit: dict[str, int]
    shown: ArmAgreement
    hidden: ArmAgreement
    difference: ArmDifference
    level: float
    method: AnchoringMethod


@dataclass(frozen=True)
class ConfusionRow:
    grade: int
    cells: list[int]
    human_rate: float | None


@dataclass(frozen=True)
class AuditResult:
    """A judge version's audit against a human qrels version over a pool version."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    judge: JudgeDescription
    human_qrels: QrelsNamed
    pool: int
    pool_documents: int
    human_graded: int
    auto_graded: int
    agreement: LabelAgreement
    measures: list[str]
    scores: dict[str, dict[str, dict[RunLabel, float | None]]]
    rankings: dict[str, RankingAgreement]
    family_gaps: dict[str, list[FamilyGap]]
    probes: Probes
    anchoring: Anchoring | None
    computed_at: str
    confusion_rows: list[ConfusionRow]
    auto_rates: list[float | None]
    version: int = field(default=AUDIT_RESULT_VERSION, metadata=STORED)


def read_audit_result(blob: dict[str, Any]) -> AuditResult:
    """A stored audit's result (any version) as an ``AuditResult``."""
    return parse(AuditResult, upgraded(blob, AUDIT_RESULT_VERSION, _AUDIT_UPGRADES, "audit"))


@dataclass(frozen=True)
class AuditAnswer:
    """An audit, its state and (once done) its result, run tags as the reader may see them."""

    id: int
    judge: JudgeDescription
    human_qrels: int
    pool: int
    state: str
    error: str
    result: AuditResult | None


@dataclass(frozen=True)
class SampleProgress:
    SCHEMA_PARTIAL: ClassVar[bool] = True

    phase: str | None
    queued: int
    graded: int
    complete: bool


@dataclass(frozen=True)
class Interval:
    """An estimate with its interval and standard error."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    value: float | None
    low: float | None
    high: float | None
    se: float | None


@dataclass(frozen=True)
class RunEstimate:
    """One run's measure: corrected by the human sample (PPI), the judge alone, people alone."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    ppi: Interval
    auto_only: float | None
    human_only: Interval | None


@dataclass(frozen=True)
class EstimateCell:
    SCHEMA_PARTIAL: ClassVar[bool] = True

    measure: str
    ppi: Interval
    ppi_interval: list[float | None]
    auto_only: float | None
    human_only: Interval | None
    alone_interval: list[float | None] | None
    degenerate: bool
    narrower: float | None


@dataclass(frozen=True)
class EstimateRow:
    run: RunLabel
    cells: list[EstimateCell]


@dataclass(frozen=True)
class HybridEstimate:
    """A sample's progress and, once every sampled document is graded (``ready``), every run's
    corrected estimate (``runs``, and the board's ``rows``)."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    sample: int
    design: str
    budget: int
    judge: JudgeDescription
    pool: int
    progress: SampleProgress
    measures: list[str]
    without_auto_grade: int
    ready: bool
    level: float
    n_sampled: int
    n_items: int
    judge_weight: dict[str, float | None]
    n_topics: int
    thin_topics: int
    calibration: str
    runs: dict[RunLabel, dict[str, RunEstimate]]
    rows: list[EstimateRow]


@dataclass(frozen=True)
class SampleAnswer:
    """A human sample of a pool version for a judge version (with ``estimate`` when read)."""

    id: int
    judge: JudgeDescription
    pool: int
    design: str
    budget: int
    seed: int
    phase: str | None
    queued: int
    estimate: HybridEstimate | None = field(default=None, metadata={"schema_optional": True})


@dataclass(frozen=True)
class SuggestionsAnswer:
    """The campaign's suggestion setting (None: never set up) and the anchoring report."""

    setting: SuggestionsShown | None
    report: Anchoring


@dataclass(frozen=True)
class AnswerAudit:
    """An automatic judge's labels of answer items against people's (``autojudge.answer_audit``):
    agreement overall and per topic, the runs' rankings per measure (empty with
    ``rankings_note`` until people judged every item) and the anchoring control where its labels
    were suggested (null otherwise)."""

    judge: str
    kind: str
    bank: int | None
    items: int
    judged_by_people: int
    labelled_by_judge: int
    labels: LabelAgreement
    topics: dict[str, LabelAgreement]
    rankings: dict[str, RankingAgreement]
    rankings_note: str
    anchoring: Anchoring | None
