"""Qrels versions: import from TREC files, export, content hashing."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Max

from judging.assessments.models import QrelsEntry, QrelsSource, QrelsVersion
from judging.campaigns.models import Campaign
from judging.campaigns.services import read_limited
from judging.core.bulk import insert_rows
from judging.core.errors import InputProblem, InvalidInput
from metrics.io import TrecFormatError, parse_qrels


def canonical_lines(rows: Iterable[tuple[str, str, int]]) -> list[str]:
    """TREC qrels lines sorted by (qid, docid): the form hashed and exported."""
    return [f"{q} 0 {d} {g}\n" for q, d, g in sorted(rows)]


def content_hash(lines: Iterable[str]) -> str:
    h = hashlib.sha256()
    for line in lines:
        h.update(line.encode())
    return h.hexdigest()


def _next_number(campaign: Campaign) -> int:
    top = QrelsVersion.objects.filter(campaign=campaign).aggregate(n=Max("number"))["n"]
    return (top or 0) + 1


def qrels_import(
    *,
    campaign: Campaign,
    data: bytes,
    source: str = "qrels",
    note: str = "",
    created_by: Any = None,
) -> QrelsVersion:
    """Store a TREC qrels file as the campaign's next qrels version.

    Every qrels topic must be a campaign topic; grades are kept as given (negative grades mean
    pooled but unjudged). Validated whole first; on any problem nothing is stored.
    """
    raw = read_limited(data, limit=settings.POOLJUDGE_MAX_UPLOAD_BYTES, what="the qrels file")
    try:
        table = parse_qrels(raw, source=source, max_problems=settings.POOLJUDGE_MAX_PROBLEMS)
    except TrecFormatError as exc:
        raise InvalidInput(
            f"the qrels file has {exc.total} problem(s); nothing was stored",
            [InputProblem(p.message, line=p.line) for p in exc.problems],
            total=exc.total,
            source=source,
        ) from None
    topic_ids = dict(campaign.topics.values_list("qid", "id"))
    rows = [(q, d, int(g)) for q, judged in table.to_dict().items() for d, g in judged.items()]
    unknown = [q for q in table.qids if q not in topic_ids]
    if unknown:
        problems = [
            InputProblem(f"topic {q!r} is not in campaign {campaign.name!r}", location=q)
            for q in unknown
        ]
        raise InvalidInput(
            f"the qrels name {len(unknown)} unknown topic(s); nothing was stored",
            problems[: settings.POOLJUDGE_MAX_PROBLEMS],
            total=len(problems),
            source=source,
        )
    lines = canonical_lines(rows)
    threshold = campaign.relevance_threshold
    with transaction.atomic():
        # Lock the campaign row so that two imports cannot take the same number.
        Campaign.objects.select_for_update().filter(pk=campaign.pk).first()
        version = QrelsVersion.objects.create(
            campaign=campaign,
            number=_next_number(campaign),
            source=QrelsSource.IMPORTED,
            content_hash=content_hash(lines),
            note=note,
            num_judgments=len(rows),
            num_relevant=sum(1 for _, _, g in rows if g >= threshold),
            created_by=created_by,
        )
        insert_rows(
            QrelsEntry,
            ("version_id", "topic_id", "docid", "grade"),
            ((version.pk, topic_ids[q], d, g) for q, d, g in rows),
        )
    return version


def qrels_rows(version: QrelsVersion) -> list[tuple[str, str, int]]:
    return list(
        QrelsEntry.objects.filter(version=version).values_list("topic__qid", "docid", "grade")
    )


def qrels_export_lines(version: QrelsVersion) -> Iterator[str]:
    """The version in TREC qrels format (``qid 0 docid grade``), sorted by qid and docid."""
    yield from canonical_lines(qrels_rows(version))
