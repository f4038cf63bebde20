"""Passages (chunks) of a campaign's documents: chunkings derived by a named chunker or imported
with the team's own ids and offsets, and the lookups the queue and the judging screen make.

A passage is ``text[start:end]`` of its document, ranked by runs under its id ``docid#pid``
(unique in the campaign across chunkings, so one id always names one span). A derived
chunking's ids are ``docid#<chunking name>-<i>``. Offsets count characters (Python's code
points, as the stored text is read back), so a document with passages keeps its text: replacing
it would move every span judged on it (``documents_import`` refuses that).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef, Q, QuerySet

from judging.campaigns.models import Campaign, Chunking, Document, Passage
from judging.core import uploads
from judging.core.bulk import insert_rows
from judging.core.errors import Conflict, InvalidInput
from judging.core.roles import Account
from metrics.io.limits import id_problem
from metrics.passages import CHUNKERS
from metrics.passages import Chunking as Chunker
from metrics.problems import InvalidInput as ReaderError
from metrics.problems import Problem, Problems

__all__ = [
    "IMPORTED",
    "PassageText",
    "chunker_help",
    "chunking_derive",
    "has_text",
    "items_by_chunking",
    "passage_text",
    "passages_import",
    "text_ids",
    "text_kept",
]

IMPORTED = "imported"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_CHUNK = 2000


@dataclass(frozen=True)
class PassageText:
    """What the judging screen shows for an item id: its document, and the passage's offsets in
    the document's text when the id names a passage (None: the whole document)."""

    document: Document
    passage: tuple[int, int] | None
    chunking: str = ""


def chunker_help() -> str:
    """The chunkers and their parameters in one sentence, for forms and ``--help``."""
    parts = []
    for c in CHUNKERS.values():
        params = ",".join(f"{p.name}={p.default}" for p in c.params)
        parts.append(f"{c.name}({params}): {c.doc}")
    return "A chunker: " + "; ".join(parts) + "."


def _check_name(campaign: Campaign, name: str) -> None:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise InvalidInput(
            "the chunking's name is not valid",
            [
                Problem.at(
                    "name",
                    "1-64 letters, digits, '_', '.' or '-', starting with one of "
                    "the first two (passage ids use it)",
                )
            ],
        )
    if Chunking.objects.filter(campaign=campaign, name=name).exists():
        raise Conflict(f"the campaign has a chunking named {name!r} already; choose another name")


def _taken(campaign: Campaign, ids: list[str]) -> set[str]:
    """Which of ``ids`` are already a passage's or a document's id in the campaign."""
    taken: set[str] = set()
    for at in range(0, len(ids), 5000):
        part = ids[at : at + 5000]
        taken.update(
            Passage.objects.filter(campaign=campaign, passage_id__in=part).values_list(
                "passage_id", flat=True
            )
        )
        taken.update(
            Document.objects.filter(campaign=campaign, docid__in=part).values_list(
                "docid", flat=True
            )
        )
    return taken


def _store(
    campaign: Campaign,
    name: str,
    spec: str,
    rows: list[tuple[int, str, int, int]],
    created_by: Account | None,
) -> Chunking:
    chunking = Chunking.objects.create(
        campaign=campaign,
        name=name,
        spec=spec,
        num_passages=len(rows),
        num_documents=len({doc for doc, *_ in rows}),
        created_by=created_by,
    )
    insert_rows(
        Passage,
        ("campaign_id", "chunking_id", "document_id", "passage_id", "start", "end"),
        ((campaign.pk, chunking.pk, *row) for row in rows),
    )
    return chunking


def chunking_derive(
    *, campaign: Campaign, name: str, spec: str, created_by: Account | None = None
) -> Chunking:
    """Cut every document of the campaign with the chunker ``spec`` (``metrics.passages``:
    ``fixed(size=500,overlap=100)``, ``paragraph(min_chars=0)``,
    ``sentence_window(window=3,stride=3)``) into passages ``docid#<name>-<i>``, stored as the
    chunking ``name`` with its canonical spec. Nothing is stored when a problem is found."""
    try:
        chunker = Chunker.parse(spec)
    except ReaderError as exc:
        raise InvalidInput(
            f"the chunker {spec!r} is not valid",
            [Problem.at("spec", p.message) for p in exc.problems],
        ) from None
    with transaction.atomic():
        Campaign.objects.select_for_update().filter(pk=campaign.pk).first()
        _check_name(campaign, name)
        limit = settings.POOLJUDGE_UPLOADS.max_docid_bytes
        rows: list[tuple[int, str, int, int]] = []
        problems = Problems(settings.POOLJUDGE_UPLOADS.max_problems)
        for doc in Document.objects.filter(campaign=campaign).order_by("docid").iterator(_CHUNK):
            for i, chunk in enumerate(chunker.chunk(doc.text)):
                full = f"{doc.docid}#{name}-{i}"
                bad = id_problem("passage id", full, limit)
                if bad is not None:
                    problems.add(0, f"document {doc.docid[:40]!r}: {bad}")
                    break
                rows.append((doc.pk, full, chunk.start, chunk.end))
        if not rows and not problems:
            problems.add(0, "no passage: the campaign has no document with text")
        taken = _taken(campaign, [full for _, full, _, _ in rows])
        for full in sorted(taken)[:5]:
            problems.add(0, f"passage id {full[:60]!r} is already a document's or passage's id")
        if problems:
            raise InvalidInput(
                f"the chunking {name!r} has {problems.total} problem(s); nothing was stored",
                problems.sorted(),
                total=problems.total,
            )
        return _store(campaign, name, str(chunker), rows, created_by)


_DIGITS = re.compile(r"[0-9]+")


def _records(data: bytes, problems: Problems) -> Iterator[tuple[int, dict[str, Any] | None, str]]:
    """Each line of a passages file as ``(line, record or None, what is wrong)``: JSON lines,
    or tab-separated ``docid passage_id start end`` with an optional header. Bad UTF-8 and
    over-long lines are ``problems`` of their line (``core.uploads.decode_lines``)."""
    keys = ("docid", "passage_id", "start", "end")
    is_json: bool | None = None
    limit = settings.POOLJUDGE_UPLOADS.max_line_bytes
    for number, line in uploads.decode_lines([data], problems, max_line=limit):
        if not line.strip():
            continue
        if is_json is None:
            is_json = line.lstrip().startswith("{")
        if is_json:
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                yield number, None, f"not JSON ({exc.msg} at column {exc.colno})"
                continue
            except (ValueError, RecursionError):  # a number too long, nesting too deep
                yield number, None, "not JSON this reader takes (a number too long, or nested "
                "too deeply)"
                continue
            if not isinstance(obj, dict):
                yield number, None, "a line is one JSON object"
                continue
            yield number, obj, ""
            continue
        fields = line.split("\t")
        if number == 1 and [f.strip().lower() for f in fields] == list(keys):
            continue
        if len(fields) != 4:
            yield number, None, f"expected 4 tab-separated fields ({' '.join(keys)})"
            continue
        yield number, dict(zip(keys, fields, strict=True)), ""


def _offset(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and _DIGITS.fullmatch(value.strip()) and len(value.strip()) < 19:
        return int(value.strip())
    return None


def passages_import(
    *,
    campaign: Campaign,
    name: str,
    data: uploads.Source,
    source: str | None = None,
    created_by: Account | None = None,
) -> Chunking:
    """Store a team's own chunking: a file of ``docid, passage_id, start, end`` (JSON lines or
    tab-separated, a header optional), each passage ``text[start:end]`` of a campaign document.
    A ``passage_id`` that does not start with ``docid#`` is the document's local id, stored as
    ``docid#passage_id``: every passage id names its document before its last ``#``.
    Validated whole, every problem named with its line; nothing is stored when one is found."""
    upload = uploads.read(
        data,
        what="the passages file",
        limit=settings.POOLJUDGE_UPLOADS.max_upload_bytes,
        source=source,
    )
    problems = Problems(settings.POOLJUDGE_UPLOADS.max_problems)
    limit = settings.POOLJUDGE_UPLOADS.max_docid_bytes
    with transaction.atomic():
        Campaign.objects.select_for_update().filter(pk=campaign.pk).first()
        _check_name(campaign, name)
        docs = {
            docid: (pk, length)
            for pk, docid, length in _lengths(Document.objects.filter(campaign=campaign))
        }
        rows: list[tuple[int, str, int, int]] = []
        first: dict[str, int] = {}
        for number, record, wrong in _records(upload.data, problems):
            if record is None:
                problems.add(number, wrong)
                continue
            docid, pid = record.get("docid"), record.get("passage_id")
            start, end = _offset(record.get("start")), _offset(record.get("end"))
            if not isinstance(docid, str) or not isinstance(pid, str) or not docid or not pid:
                problems.add(number, "docid and passage_id are non-empty text")
                continue
            if start is None or end is None:
                problems.add(number, "start and end are whole numbers of characters")
                continue
            full = pid if pid.startswith(f"{docid}#") else f"{docid}#{pid}"
            bad = id_problem("passage id", full, limit)
            if bad is None and full.split() != [full]:
                bad = f"passage id {full[:40]!r} must contain no white space"
            if bad is not None:
                problems.add(number, bad)
                continue
            if docid not in docs:
                problems.add(number, f"document {docid[:60]!r} is not in the campaign")
                continue
            pk, length = docs[docid]
            if not 0 <= start < end <= length:
                problems.add(
                    number,
                    f"[{start}, {end}) is not a span of {docid[:60]!r}, whose text has "
                    f"{length:,} characters (0 <= start < end <= {length:,})",
                )
                continue
            if full in first:
                problems.add(
                    number, f"passage id {full[:60]!r} is given twice (line {first[full]})"
                )
                continue
            first[full] = number
            rows.append((pk, full, start, end))
        if not rows and not problems:
            problems.add(0, "no passage in the file")
        taken = _taken(campaign, list(first))
        for full in sorted(taken)[:5]:
            problems.add(
                first[full],
                f"passage id {full[:60]!r} is already a document's or passage's id in the campaign",
            )
        if problems:
            raise InvalidInput(
                f"the passages file has {problems.total} problem(s); nothing was stored",
                problems.sorted(),
                total=problems.total,
                source=upload.name,
            )
        return _store(campaign, name, IMPORTED, rows, created_by)


def has_text(campaign: Campaign, ref: str = "docid") -> Q:
    """A filter: the row's item id (the field ``ref``) has text to show, as a document or as a
    passage of the campaign (what ``text_ids`` answers, in SQL)."""
    document = Document.objects.filter(campaign=campaign, docid=OuterRef(ref))
    passage = Passage.objects.filter(campaign=campaign, passage_id=OuterRef(ref))
    return Q(Exists(document)) | Q(Exists(passage))


def text_kept(campaign: Campaign, replaced: dict[int, str]) -> list[str]:
    """The docids among ``replaced`` (document pk -> its new text) whose text would change
    although passages of it are stored: their offsets, and the spans judged on them, would
    point at other text."""
    cut = set(
        Passage.objects.filter(campaign=campaign, document_id__in=list(replaced))
        .values_list("document_id", flat=True)
        .distinct()
    )
    if not cut:
        return []
    stored = Document.objects.filter(pk__in=cut).values_list("pk", "docid", "text")
    return sorted(docid for pk, docid, text in stored if replaced[pk] != text)


def _lengths(docs: QuerySet[Document]) -> Iterable[tuple[int, str, int]]:
    for pk, docid, text in docs.values_list("pk", "docid", "text").iterator(_CHUNK):
        yield pk, docid, len(text)


def text_ids(campaign: Campaign, ids: Iterable[str] | None = None) -> set[str]:
    """The ids (of ``ids``, or all) that have text to show: the campaign's docids and passage
    ids."""
    docs = Document.objects.filter(campaign=campaign)
    passages = Passage.objects.filter(campaign=campaign)
    if ids is None:
        return set(docs.values_list("docid", flat=True)) | set(
            passages.values_list("passage_id", flat=True)
        )
    wanted = list(ids)
    found: set[str] = set()
    for at in range(0, len(wanted), 5000):
        part = wanted[at : at + 5000]
        found.update(docs.filter(docid__in=part).values_list("docid", flat=True))
        found.update(passages.filter(passage_id__in=part).values_list("passage_id", flat=True))
    return found


def items_by_chunking(campaign: Campaign, items: Iterable[str]) -> dict[str, int]:
    """How many of ``items`` are passages of each chunking (by name); ``""`` counts the rest
    (documents, or ids with no text)."""
    wanted = list(set(items))
    counts: dict[str, int] = {}
    found = 0
    for at in range(0, len(wanted), 5000):
        part = wanted[at : at + 5000]
        for name in Passage.objects.filter(campaign=campaign, passage_id__in=part).values_list(
            "chunking__name", flat=True
        ):
            counts[name] = counts.get(name, 0) + 1
            found += 1
    if len(wanted) > found:
        counts[""] = len(wanted) - found
    return counts


def passage_text(campaign_id: int, item: str) -> PassageText | None:
    """The document an item id names, with the passage's offsets when it names a passage."""
    doc = Document.objects.filter(campaign_id=campaign_id, docid=item).order_by().first()
    if doc is not None:
        return PassageText(doc, None)
    passage = (
        Passage.objects.filter(campaign_id=campaign_id, passage_id=item)
        .select_related("document", "chunking")
        .order_by()
        .first()
    )
    if passage is None:
        return None
    return PassageText(passage.document, (passage.start, passage.end), passage.chunking.name)
