"""What the judges' meta-evaluation answers, as types (issue 35, point 2): the API's schema is
generated from them (``api.result_schemas``), and ``autojudge.meta_board`` reads a stored
result into them and renders it for the reader: the runs it names are ``RunLabel`` values, and
another participant's judge is anonymised before it is read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from judging.autojudge.answers import QrelsNamed
from metrics.results import STORED, RunLabel, parse, upgraded

META_RESULT_VERSION = 1


@dataclass(frozen=True)
class Figure:
    """A figure and its percentile bootstrap interval over topics; ``value`` None and
    ``undefined`` its reason when it cannot be computed (never 0.0); no interval, and
    ``no_interval`` saying why, where the interval is not validated (``meta_eval.
    VALIDATED_FROM``) or fewer than 90% of the ``resamples`` were ``defined``."""

    value: float | None
    undefined: str | None
    low: float | None
    high: float | None
    resamples: int
    defined: int
    level: float
    no_interval: str | None = None


@dataclass(frozen=True)
class Value:
    value: float | None
    undefined: str | None


@dataclass(frozen=True)
class TopicAgreement:
    topic: str
    n: int
    confusion: list[list[int]]
    kappa: Value
    kappa_linear: Value
    kappa_quadratic: Value


@dataclass(frozen=True)
class LabelFigures:
    """The judge's grades against people's on the ``n`` pool documents both graded."""

    scale: list[int]
    threshold: int
    n: int
    n_topics: int
    human_only: int
    judge_only: int
    confusion: list[list[int]]
    kappa: Figure
    binary_kappa: Figure
    kappa_linear: Figure
    kappa_quadratic: Figure
    krippendorff_alpha: Figure
    topics: list[TopicAgreement]


@dataclass(frozen=True)
class RankingFigures:
    """The campaign's runs ranked by the measure under the judge's grades against people's."""

    n_runs: int
    n_topics: int
    human_only_runs: int
    judge_only_runs: int
    top_k: int
    top_runs: list[RunLabel]
    alpha: float
    kendall_tau_b: Figure
    tau_ap: Figure
    spearman: Figure
    tau_top_k: Figure
    significant_kept: Figure
    pairs: int
    significant_pairs: int
    kept: int
    kept_significant: int


@dataclass(frozen=True)
class Ledger:
    """What the judge cost: counted by the service, declared by its participant, or summed
    over a jury's members (``people``: judgments of people a deferring jury used)."""

    calls: float
    prompt_tokens: float
    completion_tokens: float
    cost: float
    seconds: float
    source: str
    people: int
    labels: int
    cost_per_1k: float | None
    seconds_per_label: float | None


@dataclass(frozen=True)
class MetaJudge:
    """A judge as the reader may see it: another participant's as "anonymous judge #n", its
    model and family hidden (``id`` None)."""

    id: int | None
    name: str
    version: int
    kind: str
    model: str
    owner: int | None
    family: str
    open_weights: bool | None
    saw_human_qrels: bool | None


@dataclass(frozen=True)
class JuryInfo:
    method: str
    members: list[int]
    deferred_judged: int
    pending: int


@dataclass(frozen=True)
class MetaRow:
    judge: MetaJudge
    jury: JuryInfo | None
    labelled: int
    labels: LabelFigures
    ranking: RankingFigures
    ledger: Ledger
    agreement_per_cost: Value
    notes: list[str]


@dataclass(frozen=True)
class MetaResult:
    """Every judge with labels on the pool, against people's qrels over the same pool."""

    SCHEMA_PARTIAL: ClassVar[bool] = True

    human_qrels: QrelsNamed
    pool: int
    measure: str
    threshold: int
    resamples: int
    pool_documents: int
    human_graded: int
    runs: int
    judges: list[MetaRow]
    computed_at: str
    version: int = field(default=META_RESULT_VERSION, metadata=STORED)


def read_meta_result(blob: dict[str, Any]) -> MetaResult:
    return parse(MetaResult, upgraded(blob, META_RESULT_VERSION, {}, "meta-evaluation"))


@dataclass(frozen=True)
class MetaAnswer:
    """A meta-evaluation, its state and (once done) its result sorted as asked."""

    id: int
    human_qrels: int
    pool: int
    measure: str
    state: str
    error: str
    sort: str
    result: MetaResult | None
