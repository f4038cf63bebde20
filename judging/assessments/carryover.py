"""Judgments that survive re-chunking: a qrels version carried by its text spans to the passages
of another chunking, or taken from passages to their documents.

Every row of a version names an item: a document or a passage (``campaigns.passages``). Its
span is the passage's offsets in its document's text, or the whole text for a document; a
relevant row adds the answer spans its assessors marked (``Judgment.spans``). The spans are
carried to the new chunking's passages by ``metrics.passages.carry_judgments`` under a stated
rule; the new version holds only the new passages' labels (the old ids are not among them, so a
run of the new chunking is scored against its own passages, never capped by ids it cannot
retrieve), and its :class:`QrelsDerivation` keeps the rule and the coverage report: how many
new passages were carried relevant, non-relevant, or left unjudged, and which topics lost their
relevant judgments.

``qrels_to_documents`` gives document-level qrels from a passage-level version (a document's
grade is the highest of its judged passages'), so TREC-style evaluation of document runs keeps
working. ``qrels_publish_onto`` adds the judgments made since on the new chunking's passages (the
holes the carry-over left, judged) to a carried version, as its minor version.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.db.models import Q

from judging.assessments.models import (
    JudgmentChange,
    QrelsDerivation,
    QrelsKind,
    QrelsSource,
    QrelsVersion,
    UnitKind,
)
from judging.assessments.services import current_human_grades, qrels_rows, qrels_store
from judging.campaigns.models import Campaign, Chunking, Document, Passage
from judging.core.errors import InvalidInput
from judging.core.roles import Account
from metrics.passages import CarryRule, Chunk, JudgedSpan, carry_judgments
from metrics.problems import Problem

__all__ = ["item_spans", "qrels_carry", "qrels_publish_onto", "qrels_to_documents"]

_BATCH = 5000


def _refuse_unless_human(version: QrelsVersion, what: str) -> None:
    if version.design or version.kind != QrelsKind.HUMAN:
        why = "a sampled version" if version.design else f"an {version.kind_label} version"
        raise InvalidInput(
            f"{what} takes a complete human qrels version, not {why}",
            [Problem.at("qrels", f"version {version.number} is {why}")],
        )


def item_spans(campaign: Campaign, items: Iterable[str]) -> dict[str, tuple[str, int, int]]:
    """Each item id's ``(docid, start, end)``: a passage's offsets, or a document's whole text;
    items with neither are left out."""
    wanted = list(dict.fromkeys(items))
    spans: dict[str, tuple[str, int, int]] = {}
    for at in range(0, len(wanted), _BATCH):
        part = wanted[at : at + _BATCH]
        for pid, docid, start, end in Passage.objects.filter(
            campaign=campaign, passage_id__in=part
        ).values_list("passage_id", "document__docid", "start", "end"):
            spans[pid] = (docid, start, end)
        rest = [i for i in part if i not in spans]
        for docid, text in Document.objects.filter(campaign=campaign, docid__in=rest).values_list(
            "docid", "text"
        ):
            spans[docid] = (docid, 0, len(text))
    return spans


def _answers(
    version: QrelsVersion, rows: list[tuple[str, str, int]]
) -> dict[tuple[str, str], list[tuple[int, int]]]:
    """The answer spans marked on the version's relevant items, as the judgment history stood
    when the version was made (so carrying a version is a function of it), on the judgments
    that gave the version's grade: (qid, item) -> spans, each once."""
    graded = {(q, d): g for q, d, g in rows if g > 0}
    latest: dict[tuple[str, str, int], tuple[int | None, Any]] = {}
    history = (
        JudgmentChange.objects.filter(
            topic__campaign=version.campaign,
            kind=UnitKind.DOCUMENT,
            changed_at__lte=version.created_at,
        )
        .filter(Q(judgment__isnull=True) | Q(judgment__gold__isnull=True))
        .order_by("changed_at", "pk")
        .values_list("topic__qid", "docid", "annotator_id", "new_grade", "spans")
    )
    for qid, item, who, grade, spans in history.iterator(chunk_size=_BATCH):
        if (qid, item) in graded:
            latest[(qid, item, who)] = (grade, spans)
    found: dict[tuple[str, str], set[tuple[int, int]]] = defaultdict(set)
    for (qid, item, _), (grade, spans) in latest.items():
        if grade == graded[(qid, item)] and isinstance(spans, dict):
            found[(qid, item)].update((int(a), int(b)) for a, b in spans.get("answers") or [])
    return {key: sorted(spans) for key, spans in found.items()}


def _judged(
    version: QrelsVersion,
) -> tuple[dict[str, dict[str, list[JudgedSpan]]], int]:
    rows = qrels_rows(version)
    spans = item_spans(version.campaign, (item for _, item, _ in rows))
    answers = _answers(version, rows)
    judged: dict[str, dict[str, list[JudgedSpan]]] = defaultdict(lambda: defaultdict(list))
    without_text = 0
    for qid, item, grade in rows:
        where = spans.get(item)
        if where is None:
            without_text += 1
            continue
        docid, start, end = where
        judged[qid][docid].append(JudgedSpan(start, end, max(grade, 0), "passage"))
        for a_start, a_end in answers.get((qid, item), ()):
            judged[qid][docid].append(JudgedSpan(a_start, a_end, grade, "answer"))
    return {q: dict(d) for q, d in judged.items()}, without_text


def qrels_carry(
    *,
    version: QrelsVersion,
    chunking: Chunking,
    min_share: float = 0.5,
    created_by: Account | None = None,
) -> QrelsVersion:
    """The next qrels version of the campaign: ``version``'s judgments carried by their spans
    to ``chunking``'s passages (module docstring), with its derivation and coverage report."""
    campaign = version.campaign
    if chunking.campaign_id != campaign.pk:
        raise InvalidInput(
            "the chunking is another campaign's",
            [Problem.at("chunking", f"{chunking.name!r} is not a chunking of this campaign")],
        )
    _refuse_unless_human(version, "carrying judgments to a chunking")
    try:
        rule = CarryRule(min_share)
    except ValueError as exc:
        problem = Problem.at("min_share", str(exc))
        raise InvalidInput("the carry rule is not valid", [problem]) from None
    judged, without_text = _judged(version)
    keys: dict[str, str] = {}  # docid#<passage pk> (what carry_judgments names) -> passage id
    chunks: dict[str, list[Chunk]] = defaultdict(list)
    docids = sorted({d for docs in judged.values() for d in docs})
    for at in range(0, len(docids), _BATCH):
        part = docids[at : at + _BATCH]
        for pk, pid, docid, start, end in Passage.objects.filter(
            chunking=chunking, document__docid__in=part
        ).values_list("pk", "passage_id", "document__docid", "start", "end"):
            chunks[docid].append(Chunk(str(pk), start, end))
            keys[f"{docid}#{pk}"] = pid
    texts: dict[str, str] = {}  # white space between judged paragraphs is not unjudged text
    for at in range(0, len(docids), _BATCH):
        texts.update(
            Document.objects.filter(
                campaign=campaign, docid__in=docids[at : at + _BATCH]
            ).values_list("docid", "text")
        )
    carried = carry_judgments(judged, dict(chunks), rule=rule, texts=texts)
    rows = [
        (qid, keys[key], grade)
        for qid, labels in carried.labels.items()
        for key, grade in labels.items()
    ]
    report: dict[str, Any] = carried.report.as_dict()
    report["rows_without_text"] = without_text
    report["base_rows"] = version.num_judgments
    note = (
        f"v{version.number}'s judgments carried to chunking {chunking.name!r} "
        f"({chunking.spec}): {len(rows)} labels; "
        f"{len(carried.report.lost_topics)} topic(s) lost relevant judgments"
    )
    with transaction.atomic():
        Campaign.objects.select_for_update().filter(pk=campaign.pk).first()
        derived = qrels_store(
            campaign=campaign,
            rows=rows,
            source=QrelsSource.DERIVED,
            note=note,
            created_by=created_by,
        )
        QrelsDerivation.objects.create(
            version=derived, base=version, chunking=chunking, rule=rule.describe(), report=report
        )
    return derived


DOCUMENT_RULE = (
    "A document's grade is the highest grade of its judged passages (a document judged as a "
    "whole keeps its grade)."
)


def qrels_to_documents(*, version: QrelsVersion, created_by: Account | None = None) -> QrelsVersion:
    """The next qrels version: ``version``'s rows at document level (``DOCUMENT_RULE``)."""
    _refuse_unless_human(version, "document-level qrels")
    rows = qrels_rows(version)
    spans = item_spans(version.campaign, (item for _, item, _ in rows))
    grades: dict[tuple[str, str], int] = {}
    passages = unknown = 0
    for qid, item, grade in rows:
        where = spans.get(item)
        if where is None:
            unknown += 1  # no text known: kept as it is (a document id, as TREC qrels give)
            docid = item
        else:
            docid = where[0]
            passages += docid != item
        key = (qid, docid)
        grades[key] = max(grades.get(key, grade), grade)
    if not passages:
        raise InvalidInput(
            "the version names no passage",
            [Problem.at("qrels", f"version {version.number} is document-level already")],
        )
    report = {
        "passage_rows": passages,
        "document_rows": len(rows) - passages,
        "rows_without_text": unknown,
        "documents": len(grades),
        "topics": len({q for q, _ in grades}),
    }
    with transaction.atomic():
        Campaign.objects.select_for_update().filter(pk=version.campaign_id).first()
        derived = qrels_store(
            campaign=version.campaign,
            rows=[(q, d, g) for (q, d), g in sorted(grades.items())],
            source=QrelsSource.DERIVED,
            note=f"v{version.number} at document level: {len(grades)} documents",
            created_by=created_by,
        )
        QrelsDerivation.objects.create(
            version=derived, base=version, chunking=None, rule=DOCUMENT_RULE, report=report
        )
    return derived


def qrels_publish_onto(
    *, base: QrelsVersion, note: str = "", created_by: Account | None = None
) -> QrelsVersion:
    """The next qrels version of a carried version's chunking: ``base``'s rows (its carried
    labels) overlaid with the people's current judgments of that chunking's passages (a
    judgment replaces a carried grade), a minor version of ``base`` (``2.1``). Judgments of
    other items (the earlier chunking's) stay out: a run of these passages is scored against
    these passages only."""
    derivation = QrelsDerivation.objects.filter(version=base).select_related("chunking").first()
    if derivation is None or derivation.chunking is None:
        raise InvalidInput(
            "only a version carried to a chunking is published onto",
            [Problem.at("qrels", f"version {base.number} was not carried to a chunking")],
        )
    chunking = derivation.chunking
    grades = current_human_grades(base.campaign)
    items = list({item for _, item in grades})
    ours: set[str] = set()
    for at in range(0, len(items), _BATCH):
        ours.update(
            Passage.objects.filter(
                chunking=chunking, passage_id__in=items[at : at + _BATCH]
            ).values_list("passage_id", flat=True)
        )
    judged = {(q, d): g for (q, d), g in grades.items() if d in ours}
    rows = {(q, d): g for q, d, g in qrels_rows(base)}
    if all(rows.get(key) == g for key, g in judged.items()):
        raise InvalidInput(
            "nothing to publish",
            [
                Problem.at(
                    "qrels", f"no judgment of chunking {chunking.name!r} since v{base.number}"
                )
            ],
        )
    added = sum(1 for key in judged if key not in rows)
    rows.update(judged)
    purpose = f"judgments of chunking {chunking.name} onto v{base.number}"
    text = (
        f"v{base.number} (carried to {chunking.name!r}) and {len(judged)} judgments of its "
        f"passages ({added} new)"
    )
    with transaction.atomic():
        Campaign.objects.select_for_update().filter(pk=base.campaign_id).first()
        return qrels_store(
            campaign=base.campaign,
            rows=[(q, d, g) for (q, d), g in rows.items()],
            source=QrelsSource.PUBLISHED,
            note=" · ".join(part for part in (note, text) if part),
            created_by=created_by,
            extends=base,
            purpose=purpose,
        )
