"""Judgments carried from judged character spans to the chunks of a new chunking.

Judgments are kept as spans of a document's text, so that they outlive the chunking they were
made on. A :class:`JudgedSpan` is either a ``"passage"`` (an assessor judged that whole chunk at
``grade``, 0 being non-relevant) or an ``"answer"`` (an assessor, judging a passage relevant,
marked that span of the document as what answers the topic, with that passage's grade > 0; the
judging screen shows the passage in its document, so the span may lie in the passage or in the
text around it: either way it answers the topic there). For one topic and one
document, a new chunk ``c`` gets (:class:`CarryRule`, ``s = min_share``, default 0.5):

1. grade ``g`` if ``|c ∩ x| >= s * |x|`` for some span ``x`` judged ``g > 0`` (a relevant passage
   or an answer span), the highest such ``g``;
2. else 0 if ``c`` lies wholly inside the union of the passages judged 0 and overlaps (by at
   least one character) no span judged ``> 0``; given the document's text, white space counts
   as inside (between two paragraphs judged 0, or at the chunk's edges): it holds nothing to
   judge;
3. else nothing: it is unjudged.

Only the documents with a judged span for a topic are considered for it. A relevant span is
*kept* when some new chunk holds ``s`` of it (rule 1 fires for it), else *lost*; a topic with
relevant spans none of which is kept has lost its judgments (:class:`CoverageReport`).

Per document the spans are sorted once and the chunks swept in order of start, keeping the spans
that may still overlap: the cost is the documents' spans and chunks, no pairs across documents.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

from metrics.passages.chunkers import Chunk, Span
from metrics.passages.chunking import passage_id, split_passage_id
from metrics.passages.coverage import Carried, Coverage, CoverageReport

__all__ = [
    "CarryRule",
    "JudgedSpan",
    "carry_judgments",
    "document_qrels",
    "judged_spans",
]

Kind = Literal["passage", "answer"]

# min_share * length, compared with an integer overlap: the slack keeps "at least 30%" true for
# 3 characters of 10, which 0.3 * 10 = 3.0000000000000004 in floating point would not be
_SLACK = 1e-9


class JudgedSpan(NamedTuple):
    """A judged span of one document for one topic: ``text[start:end]`` judged ``grade``."""

    start: int
    end: int
    grade: int
    kind: Kind = "passage"


def _check(span: JudgedSpan, where: str) -> None:
    if not 0 <= span.start < span.end:
        raise ValueError(f"{where}: a span needs 0 <= start < end, got {span.start}, {span.end}")
    if span.kind not in ("passage", "answer"):
        raise ValueError(f"{where}: kind must be 'passage' or 'answer', got {span.kind!r}")
    if span.grade < 0 or (span.kind == "answer" and span.grade == 0):
        need = "an answer span's grade must be > 0" if span.kind == "answer" else "grade >= 0"
        raise ValueError(f"{where}: {need}, got {span.grade}")


@dataclass(frozen=True)
class CarryRule:
    """The carry-over rule (module docstring) with its one threshold, ``0 < min_share <= 1``."""

    min_share: float = 0.5

    def __post_init__(self) -> None:
        if not 0 < self.min_share <= 1:
            raise ValueError(f"min_share must be in (0, 1], got {self.min_share}")

    def describe(self) -> str:
        """The rule as one sentence, with the threshold filled in (for people to read)."""
        share = f"{self.min_share * 100:g}%"
        return (
            f"A new chunk gets grade g if it contains at least {share} of a passage or answer "
            "span judged g > 0 (the highest such g), else grade 0 if it lies wholly inside "
            "passages judged non-relevant (white space between them counts as inside) and "
            "overlaps no span judged relevant, else it stays unjudged."
        )

    def label_document(
        self, spans: Sequence[JudgedSpan], chunks: Sequence[Chunk], text: str | None = None
    ) -> tuple[list[int | None], list[bool]]:
        """One document's chunks labelled (a grade, or None: unjudged), in the given order, and
        for each span judged > 0, in order of (start, end), whether a chunk kept it. With the
        document's ``text``, white space is inside the non-relevant passages it lies between
        or borders (module docstring, rule 2)."""
        relevant = _relevant_spans(spans)
        kept = [False] * len(relevant)
        non_relevant = _union(s for s in spans if s.grade == 0 and s.kind == "passage")
        if text is not None:
            non_relevant = _through_white_space(non_relevant, text)
        union_starts = [s for s, _ in non_relevant]
        labels: list[int | None] = [None] * len(chunks)
        active: list[int] = []  # relevant spans that started before the chunk's end, not yet over
        nxt = 0
        for i in sorted(range(len(chunks)), key=lambda i: chunks[i].start):
            start, end = chunks[i].start, chunks[i].end
            while nxt < len(relevant) and relevant[nxt].start < end:
                active.append(nxt)
                nxt += 1
            active = [j for j in active if relevant[j].end > start]  # chunks only move right
            grade, touched = 0, False
            for j in active:
                span = relevant[j]
                overlap = min(end, span.end) - max(start, span.start)
                if overlap <= 0:
                    continue
                touched = True
                if overlap >= self.min_share * (span.end - span.start) - _SLACK:
                    kept[j] = True
                    grade = max(grade, span.grade)
            if grade > 0:
                labels[i] = grade
            elif not touched:
                k = bisect_right(union_starts, start) - 1
                if k >= 0 and non_relevant[k][1] >= end:
                    labels[i] = 0
        return labels, kept


def _through_white_space(union: list[Span], text: str) -> list[Span]:
    """The disjoint spans widened over the white space around them, and so joined where only
    white space separates them."""
    out: list[Span] = []
    for start, end in union:
        while start > 0 and text[start - 1].isspace():
            start -= 1
        while end < len(text) and text[end].isspace():
            end += 1
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _relevant_spans(spans: Sequence[JudgedSpan]) -> list[JudgedSpan]:
    """The spans judged > 0, sorted (by start, then end)."""
    return sorted(s for s in spans if s.grade > 0)


def _union(spans: Iterable[JudgedSpan]) -> list[Span]:
    """The union of spans as sorted disjoint intervals (touching ones joined)."""
    merged: list[Span] = []
    for span in sorted(spans):
        if merged and span.start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], span.end))
        else:
            merged.append((span.start, span.end))
    return merged


def carry_judgments(
    judged: Mapping[str, Mapping[str, Sequence[JudgedSpan]]],
    chunks: Mapping[str, Sequence[Chunk]],
    *,
    rule: CarryRule | None = None,
    texts: Mapping[str, str] | None = None,
) -> Carried:
    """Carry ``judged`` (topic -> docid -> spans) to the new ``chunks`` (docid -> chunks);
    with the documents' ``texts`` (docid -> text), white space is no obstacle to rule 2.

    Returns the labels, topic -> ``docid#pid`` -> grade (unjudged chunks left out), and the
    :class:`CoverageReport`. A judged document missing from ``chunks`` (no text, say) has no
    chunk, so its relevant spans are lost. Raises ``ValueError`` for a malformed span.
    """
    rule = rule or CarryRule()
    labels: dict[str, dict[str, int]] = {}
    topics: dict[str, Coverage] = {}
    judged_docs: set[str] = set()
    for topic, docs in judged.items():
        carried: dict[str, int] = {}
        counts = Coverage()
        for docid, spans in docs.items():
            for n, span in enumerate(spans):
                _check(span, f"topic {topic!r} document {docid!r} span {n}")
            judged_docs.add(docid)
            doc_chunks = chunks.get(docid, ())
            text = texts.get(docid) if texts is not None else None
            grades, kept = rule.label_document(spans, doc_chunks, text)
            for chunk, grade in zip(doc_chunks, grades, strict=True):
                if grade is not None:
                    carried[passage_id(docid, chunk.pid)] = grade
            counts = counts.plus(grades, kept)
        labels[topic] = carried
        topics[topic] = counts
    return Carried(
        labels=labels,
        report=CoverageReport.of(
            rule=rule.describe(),
            min_share=rule.min_share,
            topics=topics,
            unjudged_documents=sum(1 for d in chunks if d not in judged_docs),
        ),
    )


def judged_spans(
    labels: Mapping[str, Mapping[str, int]], chunks: Mapping[str, Sequence[Chunk]]
) -> dict[str, dict[str, list[JudgedSpan]]]:
    """Passage labels (topic -> ``docid#pid`` -> grade) as judged ``"passage"`` spans, through
    the chunks they were made on (docid -> chunks): what :func:`carry_judgments` reads.
    ``KeyError`` for a passage id that is not among ``chunks``."""
    offsets = {
        passage_id(docid, c.pid): (docid, c.start, c.end)
        for docid, doc_chunks in chunks.items()
        for c in doc_chunks
    }
    out: dict[str, dict[str, list[JudgedSpan]]] = {}
    for topic, passages in labels.items():
        docs = out.setdefault(topic, {})
        for full, grade in passages.items():
            docid, start, end = offsets[full]
            docs.setdefault(docid, []).append(JudgedSpan(start, end, grade))
    return out


def document_qrels(labels: Mapping[str, Mapping[str, int]]) -> dict[str, dict[str, int]]:
    """Document qrels from passage labels (topic -> ``docid#pid`` -> grade): a document's grade
    is the highest of its judged passages' (0 when they are all 0)."""
    out: dict[str, dict[str, int]] = {}
    for topic, passages in labels.items():
        docs = out.setdefault(topic, {})
        for full, grade in passages.items():
            docid, _ = split_passage_id(full)
            docs[docid] = max(grade, docs.get(docid, grade))
    return out
