"""What the client returns: small frozen dataclasses read from the service's JSON answers.

Each keeps the whole answer as ``raw``, so a field the dataclass does not model is still there
(``campaign.raw["highlight_terms"]``). Names follow the API reference (``docs/reference/api.md``);
a measure value the service could not compute is ``None``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "Campaign",
    "CheckResult",
    "Chunking",
    "Derivation",
    "Evaluation",
    "GoldenSet",
    "ImportSummary",
    "Leaderboard",
    "LeaderboardRow",
    "Lease",
    "Me",
    "MeasureCheck",
    "Passage",
    "PoolVersion",
    "QrelsVersion",
    "Run",
    "RunWarning",
]

Raw = Mapping[str, Any]


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _float(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _values(measures: Any) -> dict[str, float | None]:
    """``{"AP": {"value": 0.5, ...}, ...}`` -> ``{"AP": 0.5, ...}``."""
    if not isinstance(measures, Mapping):
        return {}
    return {
        str(name): _float(summary.get("value")) if isinstance(summary, Mapping) else None
        for name, summary in measures.items()
    }


@dataclass(frozen=True)
class Me:
    id: int
    username: str
    roles: tuple[str, ...]
    raw: Raw = field(repr=False, compare=False)

    @classmethod
    def from_api(cls, raw: Raw) -> Me:
        return cls(int(raw["id"]), str(raw["username"]), tuple(raw.get("roles", ())), raw)


@dataclass(frozen=True)
class Campaign:
    """A campaign as you may read it (annotators see fewer fields: ``num_runs`` None)."""

    id: int
    name: str
    description: str
    scale: tuple[tuple[int, str], ...]
    relevance_threshold: int | None
    num_topics: int | None
    num_documents: int | None
    num_runs: int | None
    raw: Raw = field(repr=False, compare=False)

    @classmethod
    def from_api(cls, raw: Raw) -> Campaign:
        scale = tuple(
            (int(item["grade"]), str(item["label"]))
            for item in raw.get("scale") or ()
            if isinstance(item, Mapping)
        )
        return cls(
            id=int(raw["id"]),
            name=str(raw["name"]),
            description=str(raw.get("description", "")),
            scale=scale,
            relevance_threshold=_int(raw.get("relevance_threshold")),
            num_topics=_int(raw.get("num_topics")),
            num_documents=_int(raw.get("num_documents")),
            num_runs=_int(raw.get("num_runs")),
            raw=raw,
        )


@dataclass(frozen=True)
class ImportSummary:
    """What an import of topics or documents stored."""

    created: int
    updated: int
    unchanged: int
    notes: tuple[str, ...]
    raw: Raw = field(repr=False, compare=False)

    @classmethod
    def from_api(cls, raw: Raw) -> ImportSummary:
        return cls(
            created=int(raw.get("created", 0)),
            updated=int(raw.get("updated", 0)),
            unchanged=int(raw.get("unchanged", 0)),
            notes=tuple(str(n) for n in raw.get("notes", ())),
            raw=raw,
        )


@dataclass(frozen=True)
class Derivation:
    """How a derived qrels version was made: ``base``'s judgments carried by their text spans to
    ``chunking`` (``None``: taken to documents), under ``rule``; ``overall`` counts the new
    passages carried relevant, non-relevant and left unknown; ``lost_topics`` lost every
    relevant judgment."""

    base: int
    chunking: str | None
    rule: str
    overall: Mapping[str, int]
    lost_topics: tuple[str, ...]
    raw: Raw = field(repr=False, compare=False)

    @classmethod
    def from_api(cls, raw: Raw) -> Derivation:
        return cls(
            base=int(raw["base"]),
            chunking=raw.get("chunking"),
            rule=str(raw.get("rule", "")),
            overall=dict(raw.get("overall") or {}),
            lost_topics=tuple(raw.get("lost_topics") or ()),
            raw=raw,
        )


@dataclass(frozen=True)
class Chunking:
    """A way the campaign's documents are cut into passages: derived by a chunker (``spec``,
    e.g. ``fixed(size=500,overlap=100)``) or imported (``spec`` "imported")."""

    id: int
    campaign: int
    name: str
    spec: str
    num_passages: int
    num_documents: int
    raw: Raw = field(repr=False, compare=False)

    @classmethod
    def from_api(cls, raw: Raw) -> Chunking:
        return cls(
            id=int(raw["id"]),
            campaign=int(raw["campaign"]),
            name=str(raw["name"]),
            spec=str(raw["spec"]),
            num_passages=int(raw.get("num_passages", 0)),
            num_documents=int(raw.get("num_documents", 0)),
            raw=raw,
        )


@dataclass(frozen=True)
class Passage:
    """A passage: ``text`` is ``document text[start:end]``; runs rank it by ``passage_id``."""

    passage_id: str
    docid: str
    start: int
    end: int
    text: str

    @classmethod
    def from_api(cls, raw: Raw) -> Passage:
        return cls(
            str(raw["passage_id"]),
            str(raw["docid"]),
            int(raw["start"]),
            int(raw["end"]),
            str(raw.get("text", "")),
        )


@dataclass(frozen=True)
class PoolVersion:
    """A pool version and its build (``state``: queued, building, built or failed)."""

    id: int
    campaign: int
    number: int | None
    state: str
    depth: int | None
    num_documents: int
    num_to_judge: int
    raw: Raw = field(repr=False, compare=False)

    @classmethod
    def from_api(cls, raw: Raw) -> PoolVersion:
        return cls(
            id=int(raw["id"]),
            campaign=int(raw["campaign"]),
            number=raw.get("number"),
            state=str(raw.get("state", "")),
            depth=raw.get("depth"),
            num_documents=int(raw.get("num_documents") or 0),
            num_to_judge=int(raw.get("num_to_judge") or 0),
            raw=raw,
        )


@dataclass(frozen=True)
class Lease:
    """An item leased to an annotator to judge: the topic and the document (the whole text;
    for a passage, ``passage`` is its ``(start, end)`` in it), nothing about the runs."""

    id: int
    campaign: int
    qid: str
    topic: str
    docid: str
    title: str
    text: str
    passage: tuple[int, int] | None
    raw: Raw = field(repr=False, compare=False)

    @classmethod
    def from_api(cls, raw: Raw) -> Lease:
        doc, topic = raw.get("document") or {}, raw.get("topic") or {}
        span = doc.get("passage")
        return cls(
            id=int(raw["id"]),
            campaign=int(raw["campaign"]),
            qid=str(topic.get("qid", "")),
            topic=str(topic.get("title", "")),
            docid=str(doc.get("docid", "")),
            title=str(doc.get("title", "")),
            text=str(doc.get("text", "")),
            passage=(int(span[0]), int(span[1])) if span else None,
            raw=raw,
        )


@dataclass(frozen=True)
class QrelsVersion:
    """A stored (immutable) qrels version. ``id`` names it in URLs (``export_qrels``);
    ``number`` is its version number in the campaign (the ``qrels_version`` of reads)."""

    id: int
    campaign: int
    number: int
    kind: str
    content_hash: str
    num_judgments: int
    num_relevant: int
    raw: Raw = field(repr=False, compare=False)
    derivation: Derivation | None = None

    @classmethod
    def from_api(cls, raw: Raw) -> QrelsVersion:
        derived = raw.get("derivation")
        return cls(
            id=int(raw["id"]),
            campaign=int(raw["campaign"]),
            number=int(raw["number"]),
            kind=str(raw.get("kind", "")),
            content_hash=str(raw.get("content_hash", "")),
            num_judgments=int(raw.get("num_judgments", 0)),
            num_relevant=int(raw.get("num_relevant", 0)),
            raw=raw,
            derivation=Derivation.from_api(derived) if derived else None,
        )


@dataclass(frozen=True)
class RunWarning:
    """Something a run was stored with although it deserves a look (``kind``: read,
    same_content, unknown_docids)."""

    kind: str
    text: str
    count: int

    @classmethod
    def from_api(cls, raw: Raw) -> RunWarning:
        text = raw.get("text") or raw.get("message") or ""
        return cls(str(raw.get("kind", "")), str(text), int(raw.get("count", 0)))


@dataclass(frozen=True)
class Run:
    """A stored run. ``tag`` is its name as you know it; ``evaluation_status`` the state of its
    evaluation against the latest qrels version (None: nothing to evaluate against yet)."""

    id: int
    campaign: int
    tag: str
    owner: str
    pooled: bool
    num_entries: int
    num_topics: int
    warnings: tuple[RunWarning, ...]
    evaluation_status: str | None
    raw: Raw = field(repr=False, compare=False)

    @classmethod
    def from_api(cls, raw: Raw) -> Run:
        status = raw.get("evaluation")
        return cls(
            id=int(raw["id"]),
            campaign=int(raw["campaign"]),
            tag=str(raw["tag"]),
            owner=str(raw.get("owner", "")),
            pooled=bool(raw.get("pooled")),
            num_entries=int(raw.get("num_entries", 0)),
            num_topics=int(raw.get("num_topics", 0)),
            warnings=tuple(
                RunWarning.from_api(w) for w in raw.get("warnings") or () if isinstance(w, Mapping)
            ),
            evaluation_status=(status.get("status") if isinstance(status, Mapping) else None),
            raw=raw,
        )


@dataclass(frozen=True)
class Evaluation:
    """A run's stored evaluation against one qrels version, in one mode. ``values`` holds each
    measure's aggregate (``values["AP"]``), ``per_query`` each measure's value per topic
    (``per_query["AP"]["401"]``); the intervals, Judged@k and treatments are in ``raw``."""

    run: str
    qrels_version: int
    qrels_hash: str
    mode: str
    state: str
    error: str
    n_queries: int | None
    values: Mapping[str, float | None]
    per_query: Mapping[str, Mapping[str, float | None]]
    raw: Raw = field(repr=False, compare=False)

    @classmethod
    def from_api(cls, raw: Raw, run: str = "") -> Evaluation:
        result = raw.get("result") or {}
        per_query = result.get("per_query") or {}
        return cls(
            run=str(result.get("run") or raw.get("run") or run),
            qrels_version=int(raw.get("qrels_version", 0)),
            qrels_hash=str(raw.get("qrels_hash", "")),
            mode=str(raw.get("mode", "")),
            state=str(raw.get("state", "")),
            error=str(raw.get("error") or ""),
            n_queries=_int(result.get("n_queries")),
            values=_values(result.get("measures")),
            per_query={
                str(m): {str(q): _float(v) for q, v in by_topic.items()}
                for m, by_topic in per_query.items()
                if isinstance(by_topic, Mapping)
            },
            raw=raw,
        )


@dataclass(frozen=True)
class LeaderboardRow:
    """One run's row: ``values`` per measure (None: not evaluated, or no value)."""

    run_id: int | None
    run: str
    pooled: bool
    group: str | None
    state: str | None
    n_queries: int | None
    values: Mapping[str, float | None]
    raw: Raw = field(repr=False, compare=False)

    @classmethod
    def from_api(cls, raw: Raw) -> LeaderboardRow:
        return cls(
            run_id=_int(raw.get("run_id")),
            run=str(raw.get("run", "")),
            pooled=bool(raw.get("pooled")),
            group=raw.get("group"),
            state=raw.get("state"),
            n_queries=_int(raw.get("n_queries")),
            values=_values(raw.get("measures")),
            raw=raw,
        )


@dataclass(frozen=True)
class Leaderboard:
    """Every run's aggregates under one qrels version, as sorted and filtered."""

    campaign: int
    qrels_version: int
    qrels_hash: str
    mode: str
    measures: tuple[str, ...]
    sorted_by: str
    rows: tuple[LeaderboardRow, ...]
    raw: Raw = field(repr=False, compare=False)

    @classmethod
    def from_api(cls, raw: Raw) -> Leaderboard:
        return cls(
            campaign=int(raw.get("campaign", 0)),
            qrels_version=int(raw.get("qrels_version", 0)),
            qrels_hash=str(raw.get("qrels_hash", "")),
            mode=str(raw.get("mode", "")),
            measures=tuple(str(m) for m in raw.get("measures", ())),
            sorted_by=str(raw.get("sorted_by", "")),
            rows=tuple(LeaderboardRow.from_api(r) for r in raw.get("runs", ())),
            raw=raw,
        )

    def row(self, run: str) -> LeaderboardRow:
        """The row of the run labelled ``run``; KeyError when the board has none."""
        for row in self.rows:
            if row.run == run:
                return row
        raise KeyError(f"no run {run!r} on the leaderboard ({len(self.rows)} rows)")


@dataclass(frozen=True)
class MeasureCheck:
    """One measure of a regression check: the two means, the delta and its interval, the
    paired test's p, both runs' judged fractions and the measure's verdict (pass,
    drop-not-significant, fail)."""

    measure: str
    baseline: float | None
    run: float | None
    delta: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    threshold: float | None
    unjudged_note: str
    verdict: str

    @classmethod
    def from_api(cls, raw: Raw) -> MeasureCheck:
        return cls(
            measure=str(raw.get("measure", "")),
            baseline=_float(raw.get("baseline")),
            run=_float(raw.get("run")),
            delta=_float(raw.get("delta")),
            ci_low=_float(raw.get("ci_low")),
            ci_high=_float(raw.get("ci_high")),
            p_value=_float(raw.get("p_value")),
            threshold=_float(raw.get("threshold")),
            unjudged_note=str(raw.get("unjudged_note") or ""),
            verdict=str(raw.get("verdict", "")),
        )

    @property
    def reason(self) -> str:
        """Why this measure did not simply pass ('' when it did)."""
        if self.verdict == "pass":
            return ""
        delta = "?" if self.delta is None else f"{self.delta:+.4f}"
        p = "?" if self.p_value is None else f"{self.p_value:.3g}"
        said = f"{self.measure}: {self.verdict} (delta {delta}, p = {p})"
        return f"{said}; {self.unjudged_note}" if self.unjudged_note else said


@dataclass(frozen=True)
class CheckResult:
    """A regression check of ``run`` against ``baseline``: ``passed``, the ``verdict`` (pass,
    drop-not-significant: passed with a warning, fail), the service's one-line ``summary`` and
    a row per measure; ``reasons`` names each measure that did not simply pass."""

    passed: bool
    verdict: str
    summary: str
    run: str
    baseline: str
    qrels_version: int
    qrels_hash: str
    n_queries: int | None
    measures: tuple[MeasureCheck, ...]
    raw: Raw = field(repr=False, compare=False)

    @classmethod
    def from_api(cls, raw: Raw) -> CheckResult:
        return cls(
            passed=raw.get("passed") is True,
            verdict=str(raw.get("verdict", "")),
            summary=str(raw.get("summary", "")),
            run=str(raw.get("run", "")),
            baseline=str(raw.get("baseline", "")),
            qrels_version=int(raw.get("qrels_version", 0)),
            qrels_hash=str(raw.get("qrels_hash", "")),
            n_queries=_int(raw.get("n_queries")),
            measures=tuple(MeasureCheck.from_api(m) for m in raw.get("measures", ())),
            raw=raw,
        )

    @property
    def reasons(self) -> tuple[str, ...]:
        return tuple(m.reason for m in self.measures if m.reason)


@dataclass(frozen=True)
class GoldenSet:
    """A golden set unpacked in BEIR's layout under ``path`` (``corpus.jsonl``,
    ``queries.jsonl``, ``qrels/test.tsv``), with the service's ``pooljudge.json`` as
    ``metadata``: the qrels version it was exported from and that version's sha256."""

    path: Path
    files: tuple[str, ...]
    metadata: Mapping[str, Any]

    @property
    def qrels_version(self) -> int | None:
        qrels = self.metadata.get("qrels")
        return _int(qrels.get("version")) if isinstance(qrels, Mapping) else None

    @property
    def content_hash(self) -> str | None:
        qrels = self.metadata.get("qrels")
        value = qrels.get("sha256") if isinstance(qrels, Mapping) else None
        return str(value) if value else None
