"""The stored results of the evaluation app as types: a run's evaluation, the bias report and the
reusability report.

Each is stored as JSON (``Evaluation.result``, ``BiasReport.result``, ``Reusability.result``:
the ``to_dict`` forms of ``metrics``' results, with a header for the reports) and read back into
these dataclasses (``read_evaluation_result``, ``read_bias_result``,
``read_reusability_result``), whose run and group names are ``metrics.results`` labels: a
selector renders a result for a viewer (``metrics.results.render``) and every label is shown or
anonymised by the viewer's rights, wherever it is (see ``evaluation.selectors``).

Sentences. A report's sentences name runs and groups. From version 3 a report is stored in its
typed form (``stored_report``): each sentence as its parts, the names in it found when it was
computed, among the runs and groups it was computed over; reading it finds no name in text.
A report of version 1 or 2 stored its sentences as text: they are read as before, by the names
of the campaign's runs and groups (``metrics.results.read_named``).

Versions. A stored result carries the version of its format (``version``); one stored before
versions were (no ``version``) is version 1, the format of the day the version was introduced.
``read_*`` upgrades an older blob step by step (``_UPGRADES``) before reading it, so every stored
result reads; a change of format adds its version and its upgrade step, with a test reading a
blob of the previous format.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any, ClassVar

from metrics.results import (
    OMIT_NONE,
    STORED,
    GroupLabel,
    RunLabel,
    Sentence,
    UnitLabel,
    parse,
    render,
    upgraded,
)
from metrics.results import read_named as _read_named

# The current version of each stored format; 1 is a blob stored before versions were.
EVALUATION_RESULT_VERSION = 2
BIAS_RESULT_VERSION = 3
REUSABILITY_RESULT_VERSION = 3
# the first version of a report that stores its sentences as parts (names as labels)
SENTENCES_AS_PARTS = 3

Blob = dict[str, Any]


def _stamp(blob: Blob) -> Blob:
    """1 -> 2: the same keys; version 2 only says so (it is stored from then on)."""
    return blob


def _sentences_as_text(blob: Blob) -> Blob:
    """2 -> 3: the same keys; a version 2 report's sentences are text, read by the campaign's
    names (``read_report``), where version 3 stores them as parts."""
    return blob


_UPGRADES: dict[str, dict[int, Callable[[Blob], Blob]]] = {
    "evaluation": {1: _stamp},
    "bias": {1: _stamp, 2: _sentences_as_text},
    "reusability": {1: _stamp, 2: _sentences_as_text},
}


def upgrade(kind: str, blob: Blob, current: int) -> Blob:
    """``blob`` (a stored result of ``kind``) in the ``current`` format
    (``metrics.results.upgraded`` with the steps of ``_UPGRADES``)."""
    return upgraded(blob, current, _UPGRADES[kind], f"{kind} result")


def read_report(cls: type[Any], kind: str, blob: Blob, current: int, names: Collection[str]) -> Any:
    """A stored report of ``kind`` (any version) as a ``cls``: from version 3 as stored (its
    sentences are parts); before, its sentences read by ``names`` (the campaign's run tags and
    groups) and the names the report declares."""
    version = blob.get("version", 1)
    blob = upgrade(kind, blob, current)
    if isinstance(version, int) and version >= SENTENCES_AS_PARTS:
        return parse(cls, blob)
    return _read_named(cls, blob, names)


def stored_report(cls: type[Any], blob: Blob, version: int, names: Collection[str]) -> Blob:
    """A report computed as ``blob`` (``metrics``' dicts with its header) in the form it is
    stored: read as a ``cls``, its sentences' names found among ``names`` (the runs and groups
    it was computed over) and the names it declares, rendered as stored (version and sentence
    parts) of ``version``."""
    typed = _read_named(cls, {**blob, "version": version}, names)
    stored: Blob = render(typed, stored=True)
    return stored


# --- a run's evaluation -----------------------------------------------------------------------


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
    relevance: int | None = field(default=None, metadata=OMIT_NONE)


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

    run: RunLabel
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
    version: int = field(default=EVALUATION_RESULT_VERSION, metadata=STORED)


def read_evaluation_result(blob: Blob) -> EvaluationResult:
    """A stored evaluation's result (any version) as an ``EvaluationResult``."""
    typed: EvaluationResult = parse(
        EvaluationResult, upgrade("evaluation", blob, EVALUATION_RESULT_VERSION)
    )
    return typed


def upgraded_evaluation(blob: Blob) -> Blob:
    """A stored evaluation's result or leaderboard summary (any version) as JSON of the current
    version, for readers of a few of its keys (the leaderboard, the run page, ``check``)."""
    return upgrade("evaluation", blob, EVALUATION_RESULT_VERSION) if blob else blob


# --- the bias report --------------------------------------------------------------------------


@dataclass(frozen=True)
class TopicsAnalysed:
    """The topics a report analysed: its spec, those with judgments, those named without any."""

    spec: str
    analysed: list[str]
    without_judgments: list[str] | None


@dataclass(frozen=True)
class LooRun:
    """One pooled run left out: its score with the full pool and without its own documents."""

    score: float | None
    score_without: float | None
    delta: float | None
    delta_pct: float | None
    rank: int | None
    rank_without: int | None
    unique_relevant: int | None


@dataclass(frozen=True)
class LooGroup:
    """One group left out: its runs and the relevant documents only it found."""

    runs: list[RunLabel]
    unique_relevant: int | None


@dataclass(frozen=True)
class Loo:
    """Leave-one-run-out or leave-one-group-out (``metrics.bias.results.LooResult``)."""

    measure: str
    depth: int
    kendall_tau: float | None
    tau_ap: float | None
    runs: dict[RunLabel, LooRun]
    mean_delta: float | None
    max_delta: float | None
    max_delta_run: RunLabel | None
    leave_out: str
    mode: str
    topics: list[str]
    not_pooled: dict[RunLabel, float | None] | None = field(default=None, metadata=OMIT_NONE)
    groups: dict[GroupLabel, LooGroup] | None = field(default=None, metadata=OMIT_NONE)


@dataclass(frozen=True)
class PenaltyBasis:
    """What an estimated penalty rests on."""

    source: Sentence
    n_runs: int
    measure: str
    depth: int
    leave_out: str
    mode: str
    n_topics: int
    mean_delta: float | None
    mean_delta_pct: float | None


@dataclass(frozen=True)
class PenaltyRun:
    score: float | None
    estimated_penalty: float | None
    estimated_score: float | None


@dataclass(frozen=True)
class Penalty:
    """The estimated pooling penalty of the runs not pooled (Webber & Park 2009)."""

    estimate: bool
    measure: str
    method: str
    penalty: float | None
    basis: PenaltyBasis
    runs: dict[RunLabel, PenaltyRun]


# an applicable estimator has its errors, one that does not apply says why
_APPLICABLE: dict[str, Any] = {"omit_when": lambda e: not e.applicable}
_NOT_APPLICABLE: dict[str, Any] = {"omit_when": lambda e: e.applicable}


@dataclass(frozen=True)
class EstimatorError:
    """One estimator's error measured on the campaign's pooled units (or why it does not apply)."""

    label: str
    applicable: bool
    mae: float | None = field(default=None, metadata=_APPLICABLE)
    sre: int | None = field(default=None, metadata=_APPLICABLE)
    sre_star: int | None = field(default=None, metadata=_APPLICABLE)
    kendall_tau: float | None = field(default=None, metadata=_APPLICABLE)
    n_runs: int | None = field(default=None, metadata=_APPLICABLE)
    why: Sentence | None = field(default=None, metadata=_NOT_APPLICABLE)


@dataclass(frozen=True)
class EstimatorRun:
    """A pooled run left out with its unit: its score, the full pool's, and each estimator's."""

    unit: UnitLabel | None
    values: dict[str, float | None] = field(default_factory=dict, metadata={"flatten": True})


@dataclass(frozen=True)
class Estimate:
    """One estimator's estimate for a run not pooled, with its 95% interval: for the run's
    full-pool score, calibrated on the validation's left-out runs (``interval_method`` says how;
    ``metrics.bias.prediction``), or, in reports stored before it had one, the interval of the
    mean correction the estimate rests on."""

    estimate: float | None
    penalty: float | None
    penalty_pct: float | None
    interval: list[float | None] | None
    interval_method: str | None = None
    interval_why: str | None = None
    extrapolating: bool | None = None


@dataclass(frozen=True)
class NotPooledEstimates:
    """A run not pooled: its score on the pool, its novelty (Judged@k, the unjudged documents in
    its top k), its bounds, the estimator recommended for runs as novel, and every estimate."""

    score: float | None
    estimates: dict[str, Estimate]
    judged: float | None = None
    unjudged: int | None = None
    top_k: int | None = None
    bounds: list[float | None] | None = None
    bounds_exact: bool | None = None
    recommended: str | None = None
    recommended_why: str | None = None


@dataclass(frozen=True)
class NoveltyBin:
    """An estimator's error on the validation runs of one Judged@k bin."""

    bin: str
    n_runs: int
    mae: float | None
    mean_error: float | None


@dataclass(frozen=True)
class Deltas:
    """The pooled units' leave-out deltas: how many, their mean and its interval."""

    n: int
    mean: float | None
    ci: list[float | None] | None


@dataclass(frozen=True)
class Estimators:
    """The penalty estimators validated on the campaign (``metrics.bias.estimators``)."""

    measure: str
    depth: int
    leave_out: str
    mode: str
    top75: bool
    topics: list[str]
    n_units: int
    estimators: dict[str, EstimatorError]
    recommended: str | None
    recommended_why: Sentence | None
    runs: dict[RunLabel, EstimatorRun]
    not_pooled: dict[RunLabel, NotPooledEstimates]
    deltas: Deltas | None
    top75_dropped: list[RunLabel] | None = field(default=None, metadata=OMIT_NONE)
    novelty_k: int | None = None
    by_novelty: dict[str, list[NoveltyBin]] | None = None


@dataclass(frozen=True)
class CoverageRun:
    mean: float | None
    pooled: bool | None
    per_query: dict[str, float | None]


@dataclass(frozen=True)
class Coverage:
    """Judged@k of every run, pooled and not pooled."""

    measure: str
    k: int
    mean_pooled: float | None
    mean_not_pooled: float | None
    runs: dict[RunLabel, CoverageRun]


@dataclass(frozen=True)
class Efficiency:
    """Mean relevant documents found per topic against judgments made, per pooling strategy
    (every field absent: no pooled run to simulate)."""

    budgets: list[int] | None = field(default=None, metadata=OMIT_NONE)
    curves: dict[str, list[float | None]] | None = field(default=None, metadata=OMIT_NONE)
    depth: int | None = field(default=None, metadata=OMIT_NONE)
    topics: int | None = field(default=None, metadata=OMIT_NONE)


@dataclass(frozen=True)
class TopicSplit:
    compared: list[str]
    only_a: list[str]
    only_b: list[str]
    neither: list[str]


@dataclass(frozen=True)
class NewTopics:
    score_b: float | None
    rank_b: int | None
    recall_b: float | None


@dataclass(frozen=True)
class RunChange:
    """One run under the two qrels versions, on the compared topics."""

    novel: bool
    n_topics: int
    score_a: float | None
    score_b: float | None
    rank_a: int | None
    rank_b: int | None
    rank_change: int | None
    delta: float | None
    delta_ci: list[float | None] | None
    delta_p: float | None
    recall_a: float | None
    recall_b: float | None
    recall_delta: float | None
    recall_delta_ci: list[float | None] | None
    recall_change: Sentence | None
    new_topics: NewTopics | None


@dataclass(frozen=True)
class RecallChange:
    a: float | None
    b: float | None
    delta: float | None
    change: Sentence | None


@dataclass(frozen=True)
class BeforeAfter:
    """Every run under the previous qrels version and this one (``compare_qrels_versions``)."""

    from_: int = field(metadata={"key": "from"})
    to: int
    measure: str
    recall_measure: str | None
    mode: str | None
    labels: list[str] | None  # absent, with ``topics``, from reports of before comparisons
    ci_level: float | None  # were restricted to the topics both versions can score
    topics: TopicSplit | None
    topics_note: Sentence | None
    kendall_tau: float | None
    tau_ap: float | None
    runs: dict[RunLabel, RunChange]
    novel_gain: dict[RunLabel, float | None]
    others_recall_change: dict[RunLabel, RecallChange]
    mean_others_recall_change: float | None
    others_recall_summary: Sentence | None


@dataclass(frozen=True)
class BiasResult:
    """A stored bias report's result: the header, then each analysis or why there is none."""

    qrels_version: int
    qrels_kind: str | None
    pooled: list[RunLabel]
    topics: TopicsAnalysed | None  # absent from reports stored before topic subsets
    loo: Loo | None = field(default=None, metadata=OMIT_NONE)
    loo_unavailable: Sentence | None = field(default=None, metadata=OMIT_NONE)
    penalty: Penalty | None = field(default=None, metadata=OMIT_NONE)
    penalty_unavailable: Sentence | None = field(default=None, metadata=OMIT_NONE)
    estimators: Estimators | None = field(default=None, metadata=OMIT_NONE)
    estimators_unavailable: Sentence | None = field(default=None, metadata=OMIT_NONE)
    coverage: Coverage | None = field(default=None, metadata=OMIT_NONE)
    efficiency: Efficiency | None = field(default=None, metadata=OMIT_NONE)
    before_after: BeforeAfter | None = field(default=None, metadata=OMIT_NONE)
    before_after_unavailable: Sentence | None = field(default=None, metadata=OMIT_NONE)
    version: int = field(default=BIAS_RESULT_VERSION, metadata=STORED)

    def group_runs(self) -> dict[str, list[str]]:
        """The groups of the leave-one-group-out table with their runs' tags (as computed)."""
        groups = self.loo.groups if self.loo is not None and self.loo.groups else {}
        return {g.name: [r.name for r in v.runs] for g, v in groups.items()}


def read_bias_result(blob: Blob, names: Collection[str] = ()) -> BiasResult:
    """A stored bias report's result (any version) as a ``BiasResult``; ``names`` (the
    campaign's run tags and groups) are read as names in its sentences, besides those the result
    declares."""
    typed: BiasResult = read_report(BiasResult, "bias", blob, BIAS_RESULT_VERSION, names)
    return typed


RUN_PENALTY_VERSION = 3  # a report's: its sentences are stored as parts (SENTENCES_AS_PARTS)


@dataclass(frozen=True)
class RunPenaltyResult:
    """A late run's penalty (``evaluation.late``): the campaign's estimators validated on the
    qrels version, with the run among those not pooled, or why there are none."""

    pooled: list[RunLabel]
    estimators: Estimators | None = field(default=None, metadata=OMIT_NONE)
    estimators_unavailable: Sentence | None = field(default=None, metadata=OMIT_NONE)
    version: int = field(default=RUN_PENALTY_VERSION, metadata=STORED)


def read_run_penalty(blob: Blob) -> RunPenaltyResult:
    """A stored late run's penalty as a ``RunPenaltyResult``."""
    typed: RunPenaltyResult = read_report(RunPenaltyResult, "bias", blob, RUN_PENALTY_VERSION, ())
    return typed


# --- the reusability report -------------------------------------------------------------------


@dataclass(frozen=True)
class RelevantFound:
    """Relevant documents, and those found by one unit (group or run) or one run only."""

    total: int | None
    by_one_unit: int | None
    by_one_unit_share: float | None
    by_one_run: int | None
    by_one_run_share: float | None


@dataclass(frozen=True)
class LeaveOneUnitOut:
    """The largest and mean drop of a run's score when its unit's documents leave the pool."""

    max_drop: float | None
    max_drop_unit: UnitLabel | None
    mean_drop: float | None
    kendall_tau: float | None
    tau_ap: float | None


@dataclass(frozen=True)
class JudgedSplit:
    pooled: float | None
    not_pooled: float | None


@dataclass(frozen=True)
class DepthEfficiency:
    """Judgments and relevant documents by pool depth."""

    depths: list[int]
    pooled: list[int] | None
    judged: list[int]
    relevant: list[int]
    relevant_per_judgment: list[float | None]


@dataclass(frozen=True)
class TopicDepth:
    """One topic's pool, judgments and relevant documents, overall and at the deepest ranks."""

    pooled: int | None
    relevant: int | None
    judged: int | None
    relevant_at_deepest: int | None
    judged_at_deepest: int | None
    rate: float | None
    rate_at_deepest: float | None
    shallow: bool | None


@dataclass(frozen=True)
class VerdictRules:
    """The thresholds the verdict applies."""

    shallow_window: int | None
    shallow_ratio: float | None
    tau_threshold: float | None
    drop_threshold: float | None


@dataclass(frozen=True)
class ReusabilityResult:
    """A stored reusability report's result (``metrics.bias.reusability.ReusabilityReport`` with the
    runs that were pooled and the topic spec)."""

    depth: int
    measure: str
    relevance_level: int
    mode: str
    topics: list[str]
    n_runs: int
    n_pooled: int
    n_units: int
    leave_out: str
    relevant: RelevantFound
    unjudged_in_pool: int | None
    unique_relevant: dict[UnitLabel, int]
    leave_one_out: LeaveOneUnitOut
    judged: dict[str, JudgedSplit]
    efficiency: DepthEfficiency
    per_topic: dict[str, TopicDepth]
    shallow_topics: list[str]
    expected_underestimate: list[float] | None
    reusable: bool | None
    rules: VerdictRules | None
    verdict: Sentence
    basis: list[Sentence]
    pooled: list[RunLabel]
    topics_spec: str | None
    version: int = field(default=REUSABILITY_RESULT_VERSION, metadata=STORED)


def read_reusability_result(blob: Blob, names: Collection[str] = ()) -> ReusabilityResult:
    """A stored reusability report's result (any version) as a ``ReusabilityResult``."""
    typed: ReusabilityResult = read_report(
        ReusabilityResult, "reusability", blob, REUSABILITY_RESULT_VERSION, names
    )
    return typed


# --- the answers that carry them (for the API's schema) -----------------------------------------


def _empty_unless_done(schema_of: Callable[[Any], dict[str, Any]]) -> dict[str, Any]:
    return {
        "anyOf": [
            schema_of(ReusabilityResult),
            {"type": "object", "maxProperties": 0, "description": "not computed (yet)"},
        ]
    }


@dataclass(frozen=True)
class BiasReportAnswer:
    """A bias report as its reader may see it (``evaluation.selectors.bias_report``): its
    parameters, its state and, once done, its result."""

    qrels_version: int
    qrels_kind: str
    measure: str
    depth: int
    kind: str
    topics: str
    state: str
    error: str
    computed_at: datetime.datetime | None
    result: BiasResult | None = field(default=None, metadata=OMIT_NONE)


@dataclass(frozen=True)
class ReusabilityAnswer:
    """A reusability report as its reader may see it (``evaluation.selectors.
    reusability_report``): its state and, once done, its result (empty before)."""

    qrels_version: int
    qrels_kind: str
    state: str
    error: str
    computed_at: datetime.datetime | None
    result: ReusabilityResult = field(metadata={"schema": _empty_unless_done})
