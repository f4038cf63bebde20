"""Workflows on campaigns: creating them, importing topics and documents, submitting runs.

Every function validates its whole input first and writes inside one transaction, so bad input
leaves nothing stored. Errors are ``judging.core.errors`` exceptions.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.conf import settings
from django.db import IntegrityError, transaction

from judging.campaigns import formats
from judging.campaigns.models import Campaign, Document, Run, RunEntry, Topic, UnknownTopicPolicy
from judging.core.bulk import insert_rows
from judging.core.errors import Conflict, InputProblem, InvalidInput, TooLarge
from metrics.io import TrecFormatError, parse_run

GZIP_MAGIC = b"\x1f\x8b"


def read_limited(data: bytes, *, limit: int, what: str) -> bytes:
    """Return ``data`` decompressed if gzip, refusing anything over ``limit`` bytes (413).

    The limit applies after decompression too, so a small gzip bomb is refused as well.
    """
    if len(data) > limit:
        raise TooLarge(f"{what} is {len(data):,} bytes; the limit is {limit:,} bytes")
    if data[:2] != GZIP_MAGIC:
        return data
    out = io.BytesIO()
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as gz:
            while chunk := gz.read(1 << 20):
                out.write(chunk)
                if out.tell() > limit:
                    raise TooLarge(
                        f"{what} decompresses to more than {limit:,} bytes (the limit)"
                    )
    except (OSError, EOFError, zlib.error) as exc:
        raise InvalidInput(
            f"{what} is not a valid gzip file", [InputProblem(f"bad gzip data: {exc}", line=0)]
        ) from None
    return out.getvalue()


# --- Campaigns --------------------------------------------------------------------------------


def campaign_create(
    *, name: str, description: str = "", scale: list[dict[str, Any]] | None = None,
    relevance_threshold: int = 1, unknown_topic_policy: str = UnknownTopicPolicy.REJECT,
    default_pooled: bool = True, created_by: Any = None,
) -> Campaign:
    campaign = Campaign(
        name=name, description=description, relevance_threshold=relevance_threshold,
        unknown_topic_policy=unknown_topic_policy, default_pooled=default_pooled,
        created_by=created_by,
    )
    if scale is not None:
        campaign.scale = scale
    from django.core.exceptions import ValidationError

    try:
        campaign.full_clean()
    except ValidationError as exc:
        problems = [
            InputProblem(msg, location=fieldname)
            for fieldname, msgs in exc.message_dict.items()
            for msg in msgs
        ]
        raise InvalidInput("the campaign is not valid", problems) from None
    campaign.save()
    return campaign


# --- Topics and documents ---------------------------------------------------------------------


def _format_error(exc: formats.ImportFormatError, what: str) -> InvalidInput:
    problems = [InputProblem(p.message, line=p.line) for p in exc.problems]
    return InvalidInput(
        f"the {what} file has {exc.total} problem(s)", problems, total=exc.total,
        source=exc.source,
    )


@dataclass
class ImportSummary:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"created": self.created, "updated": self.updated, "unchanged": self.unchanged,
                "notes": self.notes}


def topics_import(
    *, campaign: Campaign, data: bytes, fmt: str | None = None, source: str | None = None,
    **options: Any,
) -> ImportSummary:
    """Create or update topics from a TREC ``<top>``, JSONL or SMART ``.I/.W`` file."""
    try:
        records = formats.parse_topics(data, fmt=fmt, source=source,
                                       max_problems=settings.POOLJUDGE_MAX_PROBLEMS, **options)
    except formats.ImportFormatError as exc:
        raise _format_error(exc, "topics") from None
    summary = ImportSummary()
    with transaction.atomic():
        existing = {t.qid: t for t in campaign.topics.all()}
        new: list[Topic] = []
        changed: list[Topic] = []
        for rec in records:
            values = {"title": rec.title, "description": rec.description,
                      "narrative": rec.narrative, "tags": list(rec.tags)}
            topic = existing.get(rec.qid)
            if topic is None:
                new.append(Topic(campaign=campaign, qid=rec.qid, **values))
            elif any(getattr(topic, k) != v for k, v in values.items()):
                for k, v in values.items():
                    setattr(topic, k, v)
                changed.append(topic)
            else:
                summary.unchanged += 1
        Topic.objects.bulk_create(new, batch_size=1000)
        Topic.objects.bulk_update(changed, ["title", "description", "narrative", "tags"],
                                  batch_size=1000)
    summary.created, summary.updated = len(new), len(changed)
    return summary


def documents_import(
    *, campaign: Campaign, data: bytes | io.BufferedIOBase, fmt: str | None = None,
    source: str | None = None,
) -> ImportSummary:
    """Create or replace documents from JSONL, TREC ``<DOC>``, TSV or SMART files.

    Streams the records and validates them all before committing: a bad file stores nothing.
    """
    summary = ImportSummary()
    try:
        with transaction.atomic():
            existing = dict(campaign.documents.values_list("docid", "id"))
            batch: list[Document] = []
            updates: list[Document] = []
            for rec in formats.iter_documents(data, fmt=fmt, source=source,
                                              max_problems=settings.POOLJUDGE_MAX_PROBLEMS):
                doc = Document(campaign=campaign, docid=rec.docid, title=rec.title,
                               text=rec.text, url=rec.url, metadata=dict(rec.metadata))
                if rec.docid in existing:
                    doc.pk = existing[rec.docid]
                    updates.append(doc)
                else:
                    batch.append(doc)
                if len(batch) >= 2000:
                    Document.objects.bulk_create(batch)
                    summary.created += len(batch)
                    batch.clear()
                if len(updates) >= 2000:
                    Document.objects.bulk_update(updates, ["title", "text", "url", "metadata"])
                    summary.updated += len(updates)
                    updates.clear()
            Document.objects.bulk_create(batch)
            Document.objects.bulk_update(updates, ["title", "text", "url", "metadata"])
            summary.created += len(batch)
            summary.updated += len(updates)
    except formats.ImportFormatError as exc:
        raise _format_error(exc, "documents") from None
    return summary


# --- Runs -------------------------------------------------------------------------------------


@dataclass
class RunColumns:
    """A validated run in columns (file order), ready to rank and store."""

    qids: list[str]
    docids: list[str]
    scores: np.ndarray
    tags: list[str]


def _columns_from_file(data: bytes, source: str) -> RunColumns:
    try:
        table = parse_run(data, source=source, max_problems=settings.POOLJUDGE_MAX_PROBLEMS)
    except TrecFormatError as exc:
        problems = [InputProblem(p.message, line=p.line) for p in exc.problems]
        raise InvalidInput(
            f"the run file has {exc.total} problem(s); nothing was stored", problems,
            total=exc.total, source=source,
        ) from None
    return RunColumns(list(table.qids), list(table.docids), np.asarray(table.scores, np.float64),
                      list(table.tags))


def _columns_from_json(results: Any) -> RunColumns:
    """``results`` is ``{qid: {docid: score}}`` (the pytrec_eval / ranx shape)."""
    limit = settings.POOLJUDGE_MAX_PROBLEMS
    problems: list[InputProblem] = []
    total = 0

    def problem(message: str, location: str) -> None:
        nonlocal total
        total += 1
        if len(problems) < limit:
            problems.append(InputProblem(message, location=location))

    qids: list[str] = []
    docids: list[str] = []
    scores: list[float] = []
    if not isinstance(results, Mapping) or not results:
        problem("'results' must be a non-empty object {qid: {docid: score}}", "results")
    else:
        for qid, ranked in results.items():
            if not isinstance(ranked, Mapping):
                problem("must be an object {docid: score}", f"results.{qid}")
                continue
            for docid, score in ranked.items():
                where = f"results.{qid}.{docid}"
                if not docid or any(ch.isspace() for ch in docid):
                    problem("docid must be non-empty and contain no white space", where)
                    continue
                if isinstance(score, bool) or not isinstance(score, int | float) or \
                        not np.isfinite(score):
                    problem(f"score {score!r} is not a finite number", where)
                    continue
                qids.append(str(qid))
                docids.append(docid)
                scores.append(float(score))
    if total:
        raise InvalidInput(
            f"the run has {total} problem(s); nothing was stored", problems, total=total
        )
    if not qids:
        raise InvalidInput("the run is empty", [InputProblem("no results", location="results")])
    return RunColumns(qids, docids, np.asarray(scores, np.float64), [])


def effective_ranks(
    qids: list[str], docids: list[str], scores: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Order of the rows by (qid, score descending, docid descending) and each row's rank.

    That is trec_eval's order: the submitted rank column is ignored and ties on the score are
    broken by docid in descending byte order. Returns ``(order, ranks)`` where ``order`` lists
    row indexes in that order and ``ranks[i]`` is the 1-based rank of row ``order[i]``.
    """
    n = len(qids)
    qid_codes = np.unique(np.asarray(qids, dtype=object), return_inverse=True)[1]
    doc_codes = np.unique(np.asarray(docids, dtype=object), return_inverse=True)[1]
    # lexsort sorts ascending on the last key first; reversing the result gives descending
    # docid and score within each (descending) qid block.
    order = np.lexsort((doc_codes, scores, qid_codes))[::-1]
    sorted_q = qid_codes[order]
    starts = np.flatnonzero(np.r_[True, sorted_q[1:] != sorted_q[:-1]])
    block_start = np.repeat(starts, np.diff(np.r_[starts, n]))
    ranks = np.arange(n) - block_start + 1
    return order, ranks


def _checksum(results: Any) -> str:
    """SHA-256 of the canonical JSON of a run submitted as JSON (keys sorted)."""
    canonical = json.dumps(results, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def run_submit(
    *, campaign: Campaign, owner: Any, data: bytes | None = None, results: Any = None,
    tag: str | None = None, group: str = "", description: str = "", pooled: bool | None = None,
    priority: int = 1, source: str = "run",
) -> Run:
    """Validate a whole run (a TREC file in ``data`` or JSON ``results``) and store it.

    Raises ``TooLarge`` (413), ``Conflict`` (409: tag already used) or ``InvalidInput`` listing
    every problem with its line; on any error nothing is stored.
    """
    if tag is not None:
        tag = tag.strip()
        _check_tag(campaign, tag)
    raw = b""
    if data is not None:
        raw = read_limited(data, limit=settings.POOLJUDGE_MAX_UPLOAD_BYTES, what="the run file")
        cols = _columns_from_file(raw, source)
    else:
        cols = _columns_from_json(results)
    if not tag:
        if len(cols.tags) != 1:
            found = ", ".join(cols.tags[:5]) or "none"
            raise InvalidInput(
                "name the run: give 'tag', or submit a file whose lines share one tag",
                [InputProblem(f"the file has {len(cols.tags)} distinct tags ({found})", line=0)],
            )
        tag = cols.tags[0]
        _check_tag(campaign, tag)

    topic_ids = dict(campaign.topics.values_list("qid", "id"))
    qids, docids, scores = cols.qids, cols.docids, cols.scores
    unknown = sorted({q for q in set(qids) if q not in topic_ids})
    dropped = 0
    if unknown:
        if campaign.unknown_topic_policy == UnknownTopicPolicy.REJECT:
            first_line: dict[str, int] = {}
            counts: dict[str, int] = {}
            for i, q in enumerate(qids):
                if q not in topic_ids:
                    first_line.setdefault(q, i + 1)
                    counts[q] = counts.get(q, 0) + 1
            problems = [
                InputProblem(
                    f"topic {q!r} is not in campaign {campaign.name!r} "
                    f"({counts[q]} line(s), first at line {first_line[q]})",
                    line=first_line[q] if data is not None else None,
                    location=None if data is not None else f"results.{q}",
                )
                for q in sorted(unknown, key=lambda q: first_line[q])
            ]
            limit = settings.POOLJUDGE_MAX_PROBLEMS
            raise InvalidInput(
                f"the run names {len(unknown)} topic(s) the campaign does not have "
                "(policy: reject); nothing was stored",
                problems[:limit], total=len(problems), source=source,
            )
        keep = np.fromiter((q in topic_ids for q in qids), dtype=bool, count=len(qids))
        dropped = int((~keep).sum())
        idx = np.flatnonzero(keep)
        qids = [qids[i] for i in idx]
        docids = [docids[i] for i in idx]
        scores = scores[idx]
        if not qids:
            raise InvalidInput(
                "every line names a topic the campaign does not have",
                [InputProblem(f"unknown topics: {', '.join(unknown[:20])}", line=0)],
            )

    order, ranks = effective_ranks(qids, docids, scores)
    counts_per_topic: dict[str, int] = {}
    for q in qids:
        counts_per_topic[q] = counts_per_topic.get(q, 0) + 1
    checksum = hashlib.sha256(raw).hexdigest() if data is not None else _checksum(results)

    try:
        with transaction.atomic():
            run = Run.objects.create(
                campaign=campaign, tag=tag, owner=owner, group=group, description=description,
                pooled=campaign.default_pooled if pooled is None else pooled, priority=priority,
                checksum=checksum, num_entries=len(qids), topic_counts=counts_per_topic,
                dropped_lines=dropped,
            )
            rows = _entry_rows(run.pk, order, ranks, qids, docids, scores, topic_ids)
            insert_rows(RunEntry, ("run_id", "topic_id", "docid", "rank", "score"), rows)
    except IntegrityError:
        if Run.objects.filter(campaign=campaign, tag=tag).exists():
            raise Conflict(f"run tag {tag!r} is already used in campaign {campaign.name!r}") \
                from None
        raise
    return run


def _entry_rows(
    run_id: int, order: np.ndarray, ranks: np.ndarray, qids: list[str], docids: list[str],
    scores: np.ndarray, topic_ids: Mapping[str, int],
) -> Iterable[tuple[int, int, str, int, float]]:
    score_list = scores.tolist()
    for i, rank in zip(order.tolist(), ranks.tolist(), strict=True):
        yield (run_id, topic_ids[qids[i]], docids[i], rank, score_list[i])


def _check_tag(campaign: Campaign, tag: str) -> None:
    if not tag or len(tag) > 100 or any(ch.isspace() for ch in tag):
        raise InvalidInput(
            "the run tag is not valid",
            [InputProblem("a tag is 1-100 characters without white space", location="tag")],
        )
    if Run.objects.filter(campaign=campaign, tag=tag).exists():
        raise Conflict(f"run tag {tag!r} is already used in campaign {campaign.name!r}")


def run_delete(*, run: Run) -> None:
    run.delete()


def run_as_trec(run: Run) -> Iterable[str]:
    """The stored run as TREC lines, in trec_eval order, with effective ranks."""
    rows = (
        RunEntry.objects.filter(run=run)
        .order_by("topic__qid", "rank")
        .values_list("topic__qid", "docid", "rank", "score")
        .iterator(chunk_size=10_000)
    )
    for qid, docid, rank, score in rows:
        yield f"{qid} Q0 {docid} {rank} {score!r} {run.tag}\n"


def json_results_from_body(body: Any) -> Any:
    """Accept ``{"results": {...}}`` or a JSON string of it (multipart fields)."""
    if isinstance(body, str):
        try:
            return json.loads(body)
        except json.JSONDecodeError as exc:
            raise InvalidInput("'results' is not valid JSON",
                               [InputProblem(str(exc), location="results")]) from None
    return body
