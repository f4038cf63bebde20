"""Workflows on campaigns: creating them, importing topics and documents, submitting runs.

Every function validates its whole input first and writes inside one transaction, so bad input
leaves nothing stored. Errors are ``judging.core.errors`` exceptions.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ParamSpec, cast

import numpy as np
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import UploadedFile
from django.db import IntegrityError, transaction

from judging.campaigns import formats, run_checks
from judging.campaigns.answers import answer_rows, answer_run_read, answers_ranked
from judging.campaigns.models import (
    Campaign,
    Document,
    RankedList,
    RunAnswer,
    RunPooling,
    ScorePrecision,
    Topic,
    UnknownTopicPolicy,
)
from judging.campaigns.models import Run as RunModel
from judging.campaigns.run_warnings import RunWarning
from judging.core import uploads
from judging.core.errors import Conflict, InvalidInput, NotAllowed, TooLarge
from judging.core.roles import Account, UserLike, is_admin
from metrics.io import Run, read_run
from metrics.io.answers import AnswerRun
from metrics.io.jsonrun import looks_like_json, read_json_run, run_entries, with_warnings
from metrics.io.jsonrun import shown as _shown
from metrics.io.limits import Limits, id_problem
from metrics.problems import Problem, Problems

P = ParamSpec("P")

# --- Campaigns --------------------------------------------------------------------------------


def campaign_validate(
    *,
    name: str,
    description: str = "",
    guidelines: str = "",
    scale: list[dict[str, Any]] | None = None,
    relevance_threshold: int = 1,
    unknown_topic_policy: str = UnknownTopicPolicy.REJECT,
    run_pooling: str = RunPooling.AUTO,
    measures: list[str] | None = None,
    pool_strategy: str = "depth",
    pool_depth: int = 100,
    pooled_topics: str = "",
    pool_budget: int | None = None,
    overlap: float = 0.0,
    document_source: str = "",
    score_precision: str = ScorePrecision.DOUBLE,
    highlight_terms: list[str] | None = None,
    created_by: Account | None = None,
) -> Campaign:
    """The campaign ``campaign_create`` would store, validated (fields, scale, measures, a
    unique name) but not saved: lets a multi-file import check everything before storing."""
    campaign = Campaign(
        name=name,
        description=description,
        guidelines=guidelines,
        relevance_threshold=relevance_threshold,
        unknown_topic_policy=unknown_topic_policy,
        run_pooling=run_pooling,
        pool_strategy=pool_strategy,
        pool_depth=pool_depth,
        pooled_topics=pooled_topics,
        pool_budget=pool_budget,
        overlap=overlap,
        document_source=document_source,
        score_precision=score_precision,
        created_by=created_by,
    )
    if scale is not None:
        campaign.scale = scale
    if measures is not None:
        campaign.measures = measures
    if highlight_terms is not None:
        campaign.highlight_terms = highlight_terms
    _full_clean(campaign, "the campaign is not valid")
    return campaign


def _saved(validate: Callable[P, Campaign]) -> Callable[P, Campaign]:
    def create(*args: P.args, **kwargs: P.kwargs) -> Campaign:
        campaign = validate(*args, **kwargs)
        campaign.save()
        return campaign

    create.__doc__ = """Validate a campaign (``campaign_validate``: same arguments and errors) and
    store it."""
    return create


campaign_create = _saved(campaign_validate)


def _full_clean(instance: Any, what: str, *, exclude: Iterable[str] | None = None) -> None:
    """Run the model's validation (fields, ``clean()``, constraints); every problem is reported
    as an ``InvalidInput`` with its field as location."""
    try:
        instance.full_clean(exclude=exclude)
    except ValidationError as exc:
        problems = []
        by_field = exc.error_dict if hasattr(exc, "error_dict") else {"": exc.error_list}
        for fieldname, errors in by_field.items():
            for error in errors:
                params = error.params or {}
                if "location" in params:  # Campaign.clean(): "scale[0].grade"
                    problems.append(Problem.at(params["location"], params["problem"]))
                else:
                    problems += [
                        Problem.at(fieldname, msg) if fieldname else Problem(0, msg)
                        for msg in error.messages
                    ]
        if len(problems) == 1:
            what = f"{what}: {problems[0]}"
        raise InvalidInput(what, problems) from None


def _only_fields(data: Mapping[str, Any], allowed: frozenset[str], what: str) -> None:
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise InvalidInput(
            f"{what}: unknown or read-only field(s)",
            [Problem.at(name, f"{name!r} cannot be changed") for name in unknown],
        )


CAMPAIGN_EDITABLE = frozenset(
    {
        "name",
        "description",
        "guidelines",
        "scale",
        "relevance_threshold",
        "unknown_topic_policy",
        "run_pooling",
        "measures",
        "pool_strategy",
        "pool_depth",
        "pool_budget",
        "overlap",
        "lease_seconds",
        "consensus_rule",
        "highlight_terms",
        "show_assessor_names",
    }
)


def campaign_update(*, campaign: Campaign, data: Mapping[str, Any]) -> Campaign:
    """Change a campaign's settings, validated together (``Campaign.clean()``: a scale with a
    grade at the relevance threshold, known strategy and measures, ...). On any problem nothing
    is stored. Returns the updated campaign."""
    _only_fields(data, CAMPAIGN_EDITABLE, "the campaign cannot be changed")
    with transaction.atomic():
        current = Campaign.objects.select_for_update().get(pk=campaign.pk)
        for name, value in data.items():
            setattr(current, name, value)
        _full_clean(current, "the campaign is not valid")
        current.save(update_fields=list(data))
    return current


# --- Topics and documents ---------------------------------------------------------------------


def _text_limits() -> Limits:
    """The settings' id limits and the columns' lengths, for the topic and document readers."""
    return Limits(
        line_bytes=settings.POOLJUDGE_UPLOADS.max_line_bytes,
        qid_bytes=settings.POOLJUDGE_UPLOADS.max_qid_bytes,
        docid_bytes=settings.POOLJUDGE_UPLOADS.max_docid_bytes,
        title_chars=Topic._meta.get_field("title").max_length,
        url_chars=Document._meta.get_field("url").max_length,
        text_chars=settings.POOLJUDGE_UPLOADS.max_document_chars,
    )


@dataclass
class ImportSummary:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "created": self.created,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "notes": self.notes,
        }


def topics_read(
    *,
    data: uploads.Source,
    fmt: str | None = None,
    source: str | None = None,
    **options: Any,
) -> list[formats.TopicRecord]:
    """The topics of a file, validated whole (what ``topics_import`` stores); nothing stored."""
    what = "the topics file"
    upload = uploads.read(
        data, what=what, limit=settings.POOLJUDGE_UPLOADS.max_upload_bytes, source=source
    )
    with uploads.reading(what):
        return formats.parse_topics(
            upload.data,
            fmt=fmt,
            source=upload.name,
            max_problems=settings.POOLJUDGE_UPLOADS.max_problems,
            limits=_text_limits(),
            **options,
        )


def topics_from_ids(*, campaign: Campaign, qids: Iterable[str]) -> ImportSummary:
    """Create the topics named by ``qids`` that the campaign lacks, with no title (id only:
    ``Topic.id_only``; their pages say so until a topics import fills them in). Every id is
    checked first (length, no white space); on a problem nothing is stored."""
    wanted = list(dict.fromkeys(qids))
    problems = []
    for q in wanted:
        bad = id_problem("qid", q, settings.POOLJUDGE_UPLOADS.max_qid_bytes)
        if not q or q.split() != [q]:
            bad = "a topic id is non-empty, without white space"
        if bad is not None:
            problems.append(Problem.at(_shown(q), bad))
    if problems:
        raise InvalidInput("topic ids are not valid; nothing was stored", problems)
    summary = ImportSummary()
    with transaction.atomic():
        existing = set(campaign.topics.values_list("qid", flat=True))
        new = [Topic(campaign=campaign, qid=q, title="") for q in wanted if q not in existing]
        Topic.objects.bulk_create(new, batch_size=1000)
    summary.created, summary.unchanged = len(new), len(wanted) - len(new)
    return summary


def topics_import(
    *,
    campaign: Campaign,
    data: uploads.Source,
    fmt: str | None = None,
    source: str | None = None,
    **options: Any,
) -> ImportSummary:
    """Create or update topics from a TREC ``<top>``, JSONL or SMART ``.I/.W`` file."""
    records = topics_read(data=data, fmt=fmt, source=source, **options)
    summary = ImportSummary()
    with transaction.atomic():
        existing = {t.qid: t for t in campaign.topics.all()}
        new: list[Topic] = []
        changed: list[Topic] = []
        for rec in records:
            values = {
                "title": rec.title,
                "description": rec.description,
                "narrative": rec.narrative,
                "tags": list(rec.tags),
            }
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
        Topic.objects.bulk_update(
            changed, ["title", "description", "narrative", "tags"], batch_size=1000
        )
    summary.created, summary.updated = len(new), len(changed)
    return summary


def documents_import(
    *,
    campaign: Campaign,
    data: uploads.Source,
    fmt: str | None = None,
    source: str | None = None,
) -> ImportSummary:
    """Create or replace documents from JSONL, TREC ``<DOC>``, TSV or SMART files.

    Streams the file (never whole in memory) and validates every record before committing: a
    bad file stores nothing. The upload size limits guard uploads; files given as a path or
    bytes (the operator's own, from a command) have none. A document's text is at most
    ``POOLJUDGE_MAX_DOCUMENT_CHARS`` characters, whatever the file came from.
    """
    name = uploads.source_name(data, source)
    summary = ImportSummary()
    with uploads.reading("the documents file"), transaction.atomic():
        existing = dict(campaign.documents.values_list("docid", "id"))
        batch: list[Document] = []
        updates: list[Document] = []
        for rec in formats.iter_documents(
            _document_stream(data, name),
            fmt=fmt,
            source=name,
            max_problems=settings.POOLJUDGE_UPLOADS.max_problems,
            limits=_text_limits(),
        ):
            doc = Document(
                campaign=campaign,
                docid=rec.docid,
                title=rec.title,
                text=rec.text,
                url=rec.url,
                metadata=dict(rec.metadata),
            )
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
                _keep_cut_texts(campaign, updates)
                Document.objects.bulk_update(updates, ["title", "text", "url", "metadata"])
                summary.updated += len(updates)
                updates.clear()
        Document.objects.bulk_create(batch)
        _keep_cut_texts(campaign, updates)
        Document.objects.bulk_update(updates, ["title", "text", "url", "metadata"])
        summary.created += len(batch)
        summary.updated += len(updates)
    return summary


def _keep_cut_texts(campaign: Campaign, updates: list[Document]) -> None:
    from judging.campaigns.passages import text_kept

    changed = text_kept(campaign, {doc.pk: doc.text for doc in updates})
    if changed:
        raise InvalidInput(
            f"{len(changed)} document(s) with passages would get another text; nothing was stored",
            [
                Problem.at(
                    f"document {docid[:60]!r}",
                    "it has passages (a chunking): a new text would move their offsets and the "
                    "spans judged on them; import it under a new docid",
                )
                for docid in changed[:20]
            ],
            total=len(changed),
        )


class _Chunks:
    """A binary stream over decompressed chunks, for ``formats.iter_documents`` (which reads
    ``read(size)`` until it gets nothing)."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks

    def read(self, size: int = -1) -> bytes:
        return next(self._chunks, b"")


def _document_stream(data: uploads.Source, name: str) -> formats.Input:
    """``data`` as the document reader streams it, never whole in memory: an upload is checked
    against ``POOLJUDGE_MAX_DOCUMENT_UPLOAD_BYTES`` (and its gzip output against the
    decompressed limit) and read chunk by chunk; a path is read by the reader itself."""
    if not isinstance(data, UploadedFile):
        return data
    limit = settings.POOLJUDGE_UPLOADS.max_document_upload_bytes
    if data.size is not None and data.size > limit:
        raise TooLarge(f"the documents file is {data.size:,} bytes; the limit is {limit:,} bytes")
    data.seek(0)
    chunks = iter(data.chunks(1 << 20))
    first = next(chunks, b"")
    everything: Iterator[bytes] = itertools.chain([first], chunks)
    if first[:2] == uploads.GZIP_MAGIC:
        everything = uploads.gunzip(
            everything,
            source=name,
            limit=uploads.decompressed_limit(limit),
            what="the documents file",
        )
    return cast(formats.Input, _Chunks(everything))


@dataclass
class WantedDocuments:
    """The records kept by :func:`documents_read_wanted` (docid -> record, in file order), how
    many records the files held (``read``) and the files' names."""

    records: dict[str, formats.DocumentRecord] = field(default_factory=dict)
    read: int = 0
    files: list[str] = field(default_factory=list)


def documents_read_wanted(
    *,
    sources: Sequence[tuple[uploads.Source, str]],
    wanted: set[str],
    fmt: str | None = None,
) -> WantedDocuments:
    """Read collection files and keep only the records whose docid is in ``wanted``; every
    other record is read, validated and dropped. Stores nothing (call it outside a transaction:
    a collection takes time to read).

    ``sources`` are (file, name) pairs. The files are streamed (``formats.iter_documents``) and
    only wanted records are kept, so memory grows with ``wanted``, not with the files (the
    reader remembers each docid it has seen, to report duplicates, but no text). Every file is
    validated whole: a problem anywhere (named with its file and line), or a wanted docid in two
    files, raises ``InvalidInput``.
    """
    out = WantedDocuments()
    where: dict[str, str] = {}
    twice: list[Problem] = []
    for data, name in sources:
        out.files.append(name)
        with uploads.reading("the documents file"):
            for rec in formats.iter_documents(
                _document_stream(data, name),
                fmt=fmt,
                source=name,
                max_problems=settings.POOLJUDGE_UPLOADS.max_problems,
                limits=_text_limits(),
            ):
                out.read += 1
                if rec.docid not in wanted:
                    continue
                if rec.docid in out.records:
                    twice.append(
                        Problem.at(
                            name,
                            f"docid {_shown(rec.docid)} is also in {where[rec.docid]}",
                        )
                    )
                    continue
                out.records[rec.docid] = rec
                where[rec.docid] = name
    if twice:
        raise InvalidInput(
            f"{len(twice)} wanted document(s) are in more than one file; nothing was stored",
            twice[: settings.POOLJUDGE_UPLOADS.max_problems],
            total=len(twice),
        )
    return out


def documents_store_new(
    *, campaign: Campaign, records: Iterable[formats.DocumentRecord]
) -> list[Document]:
    """Store the records as new documents of the campaign, in one transaction; a docid the
    campaign already holds (stored meanwhile by another import) keeps its document. Returns the
    documents stored. A record with neither title nor text is stored as it is: the
    collection's own document is empty."""
    with transaction.atomic():
        pending = {rec.docid: rec for rec in records}
        ids = list(pending)
        for i in range(0, len(ids), 5000):
            for docid in campaign.documents.filter(docid__in=ids[i : i + 5000]).values_list(
                "docid", flat=True
            ):
                del pending[docid]
        new = [
            Document(
                campaign=campaign,
                docid=rec.docid,
                title=rec.title,
                text=rec.text,
                url=rec.url,
                metadata=dict(rec.metadata),
            )
            for rec in pending.values()
        ]
        Document.objects.bulk_create(new, batch_size=2000)
    return new


def documents_check(
    *,
    data: uploads.Source,
    fmt: str | None = None,
    source: str | None = None,
) -> int:
    """Validate a documents file as ``documents_import`` reads it, storing nothing: the number
    of documents, or ``InvalidInput`` with every problem."""
    name = uploads.source_name(data, source)
    with uploads.reading("the documents file"):
        return sum(
            1
            for _ in formats.iter_documents(
                _document_stream(data, name),
                fmt=fmt,
                source=name,
                max_problems=settings.POOLJUDGE_UPLOADS.max_problems,
                limits=_text_limits(),
            )
        )


# --- Runs -------------------------------------------------------------------------------------


def _run_from_file(upload: uploads.Upload) -> Run:
    """A TREC run file, or a JSON one ``{qid: {docid: score}}`` (``metrics.io.jsonrun``)."""
    with uploads.reading("the run file"):
        if looks_like_json(upload.data):
            return read_json_run(
                upload.data,
                source=upload.name,
                max_problems=settings.POOLJUDGE_UPLOADS.max_problems,
                limits=uploads.record_limits(),
                max_bytes=settings.POOLJUDGE_UPLOADS.max_upload_bytes,
            )
        return read_run(
            upload.data,
            source=upload.name,
            max_problems=settings.POOLJUDGE_UPLOADS.max_problems,
            limits=uploads.record_limits(),
        )


def _run_upload(data: uploads.Source, source: str) -> uploads.Upload:
    """A run file's plain content (size checked, gzip undone)."""
    return uploads.read(
        data, what="the run file", limit=settings.POOLJUDGE_UPLOADS.max_upload_bytes, source=source
    )


def run_read(*, data: uploads.Source, source: str = "run") -> tuple[Run, bytes]:
    """A run file read and validated whole as ``run_submit`` reads it (size, gzip, every line),
    and its plain content; nothing stored."""
    upload = _run_upload(data, source)
    return _run_from_file(upload), upload.data


def run_first_lines(data: bytes, qids: set[str]) -> dict[str, int]:
    """Line number of the first line naming each of ``qids`` in a TREC run or qrels file."""
    return run_checks.first_lines(data, qids)


def _run_from_json(results: Any) -> Run:
    """``results`` is ``{qid: {docid: score}}`` (the pytrec_eval / ranx shape), validated as a
    JSON run file is (``metrics.io.jsonrun``)."""
    problems = Problems(settings.POOLJUDGE_UPLOADS.max_problems)
    limits = Limits(
        qid_bytes=settings.POOLJUDGE_UPLOADS.max_qid_bytes,
        docid_bytes=settings.POOLJUDGE_UPLOADS.max_docid_bytes,
    )
    clean, odd = run_entries(results, limits, problems, "results")
    if problems:
        raise InvalidInput(
            f"the run has {problems.total} problem(s); nothing was stored",
            problems.sorted(),
            total=problems.total,
        )
    if not clean:
        raise InvalidInput("the run is empty", [Problem.at("results", "no results")])
    return with_warnings(Run.from_dict(clean), odd)


def _parsed_or_none(raw: bytes) -> Any:
    """``raw`` parsed as JSON, or None when it is not JSON."""
    try:
        return json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError):
        return None


def _checksum(results: Any) -> str:
    """SHA-256 of the canonical JSON of a run submitted as JSON (keys sorted)."""
    canonical = json.dumps(results, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def run_submit(
    *,
    campaign: Campaign,
    owner: Account,
    data: uploads.Source | None = None,
    results: Any = None,
    tag: str | None = None,
    group: str = "",
    description: str = "",
    model_names: Sequence[str] = (),
    pooled: bool,
    priority: int = 1,
    source: str = "run",
) -> RunModel:
    """Validate a whole run (a TREC file in ``data`` or JSON ``results``) and store it.

    Entries are stored with their effective rank in trec_eval order (score descending, ties by
    docid descending; the submitted rank column is not trusted). Raises ``TooLarge`` (413),
    ``Conflict`` (409: tag already used) or ``InvalidInput`` listing every problem with its line;
    on any error nothing is stored. A file is read as trec_eval reads it (NaN scores ranked last,
    infinities, fields after the sixth ignored: ``metrics.io.trec``); what was accepted so is
    stored in the run's ``warnings`` (shown on its page and in the API). JSON scores are
    numbers, or NaN and the infinities as the strings "NaN", "Infinity", "-Infinity" (JSON has
    no such numbers), read and said the same way (their warnings give counts: JSON has no
    lines).

    ``pooled`` is decided by the caller (``workflows.runs.run_submitted`` follows the
    campaign's ``run_pooling`` when the submission does not say, which needs the pools).

    Topics the campaign does not have (policy reject) are listed with the file's other
    problems, all at once (``run_checks``). Stored with a warning besides the reader's: the same
    content as a run of the submitter's (any run of the campaign, for an admin), docids not
    among the campaign's documents when it has some (``run_warnings``).
    """
    _check_run_fields(group=group, description=description)
    model_names = check_model_names(model_names)
    if tag is not None:
        tag = tag.strip()
        _check_tag(campaign, owner, tag)
    raw = b""
    as_json = data is None
    answers: AnswerRun | None = None
    if data is not None:
        upload = _run_upload(data, source)
        raw = upload.data
        answers = answer_run_read(upload)
        as_json = answers is None and looks_like_json(raw)
        try:
            run = answers_ranked(answers) if answers is not None else _run_from_file(upload)
        except InvalidInput as refused:  # with the unknown topics, not only once it is fixed
            if as_json:  # no lines: the topics by name (run.<qid>), if the JSON parses
                counts, first = run_checks.json_topics(_parsed_or_none(raw)), None
            else:
                counts, first = run_checks.topic_lines(raw)
            raise run_checks.with_topic_problems(
                refused, campaign, counts, first, "the run file"
            ) from None
    else:
        try:
            run = _run_from_json(results)
        except InvalidInput as refused:
            counts = run_checks.json_topics(results)
            raise run_checks.with_topic_problems(
                refused, campaign, counts, None, "the run"
            ) from None
    if not tag:
        if len(run.tags) != 1:
            found = ", ".join(run.tags[:5]) or "none"
            raise InvalidInput(
                "name the run: give 'tag', or submit a file whose lines share one tag",
                [Problem(0, f"the file has {len(run.tags)} distinct tags ({found})")],
            )
        tag = run.tags[0]
        _check_tag(campaign, owner, tag)

    topic_ids = dict(campaign.topics.values_list("qid", "id"))
    lengths = np.diff(run.offsets)
    known = np.fromiter((q in topic_ids for q in run.qids), dtype=bool, count=len(run.qids))
    unknown = [q for q, k in zip(run.qids, known.tolist(), strict=True) if not k]
    if unknown and campaign.unknown_topic_policy == UnknownTopicPolicy.REJECT:
        lines = raw if data is not None and not as_json and answers is None else None
        first = {a.topic_id: a.line for a in answers.answers} if answers is not None else None
        raise _unknown_topics(campaign, run, topic_ids, lines, source, first)
    if not known.any():
        raise InvalidInput(
            "every line names a topic the campaign does not have",
            [Problem(0, f"unknown topics: {', '.join(unknown[:20])}")],
        )
    dropped = int(lengths[~known].sum())

    # Each known topic's ranking in trec_eval order, stored as one row.
    order = run.order
    offsets = run.offsets.tolist()
    docids = run.docids[order]
    scores = run.scores[order].astype("<f8", copy=False)
    rankings: list[tuple[int, int, bytes, bytes]] = []
    contents: list[tuple[str, bytes, bytes]] = []
    counts_per_topic: dict[str, int] = {}
    for i, qid in enumerate(run.qids):
        if qid in topic_ids:
            a, b = offsets[i], offsets[i + 1]
            contents.append((qid, b"\n".join(docids[a:b].tolist()), scores[a:b].tobytes()))
            rankings.append((topic_ids[qid], b - a, contents[-1][1], contents[-1][2]))
            counts_per_topic[qid] = b - a
    checksum = hashlib.sha256(raw).hexdigest() if data is not None else _checksum(results)
    content_checksum = run_checks.content_checksum(contents)
    warnings = [RunWarning.read(w) for w in run.warnings]
    same = run_checks.same_content(
        campaign=campaign,
        owner=owner,
        checksum=content_checksum,
        file_checksum=checksum,
        entries=sum(counts_per_topic.values()),
    )
    unlisted = run_checks.unknown_docids(campaign, docids[np.repeat(known, lengths)])
    warnings += [w for w in (same, unlisted) if w is not None]

    for attempt in range(3):  # another researcher may take the same tag at the same moment
        try:
            stored = _run_store(
                campaign=campaign,
                tag=_campaign_tag(campaign, tag),
                name=tag,
                owner=owner,
                group=group,
                description=description,
                model_names=model_names,
                pooled=pooled,
                priority=priority,
                checksum=checksum,
                content_checksum=content_checksum,
                num_entries=sum(counts_per_topic.values()),
                topic_counts=counts_per_topic,
                dropped_lines=dropped,
                warnings=[w.as_dict() for w in warnings],
                rankings=rankings,
                answers=answer_rows(answers, topic_ids) if answers is not None else [],
            )
        except IntegrityError:
            if RunModel.objects.filter(campaign=campaign, owner=owner, name=tag).exists():
                raise Conflict(
                    f"you already have a run tagged {tag!r} in campaign {campaign.name!r}"
                ) from None
            if attempt == 2:
                raise
            continue
        return stored
    raise AssertionError("unreachable")  # the loop returns or raises


def _run_store(
    *,
    rankings: list[tuple[int, int, bytes, bytes]],
    answers: list[RunAnswer],
    **fields: Any,
) -> RunModel:
    """The run row, its ranked lists and an answer run's answers, in one transaction."""
    with transaction.atomic():
        stored = RunModel.objects.create(**fields)
        RankedList.objects.bulk_create(
            (
                RankedList(run=stored, topic_id=t, size=n, docids=d.decode(), scores=sc)
                for t, n, d, sc in rankings
            ),
            batch_size=200,
        )
        for answer in answers:
            answer.run = stored
        RunAnswer.objects.bulk_create(answers, batch_size=200)
    return stored


def run_stored_identically(
    *,
    campaign: Campaign,
    owner: Account,
    data: uploads.Source,
    tag: str | None = None,
    source: str = "run",
) -> RunModel | None:
    """The owner's run in the campaign stored from the same file content (checksum) under the
    name ``tag`` (or any name when None: a file's tag column is part of its content), or None.
    Lets a re-run of a batch import skip what it stored the first time."""
    upload = _run_upload(data, source)
    found = RunModel.objects.filter(
        campaign=campaign, owner=owner, checksum=hashlib.sha256(upload.data).hexdigest()
    )
    if tag is not None:
        found = found.filter(name=tag.strip())
    return found.first()


def _unknown_topics(
    campaign: Campaign,
    run: Run,
    topic_ids: Mapping[str, int],
    raw: bytes | None,
    source: str,
    first: Mapping[str, int] | None = None,
) -> InvalidInput:
    """The refusal of a run naming topics the campaign does not have, each with its first line
    (found in the TREC ``raw`` lines, or given as ``first``)."""
    unknown = {q for q in run.qids if q not in topic_ids}
    counts = dict(zip(run.qids, np.diff(run.offsets).tolist(), strict=True))
    if raw is not None:
        first = run_checks.first_lines(raw, unknown)
    problems = run_checks.unknown_topic_problems(campaign, counts, first, topic_ids)
    return InvalidInput(
        f"the run names {len(problems)} topic(s) the campaign does not have (policy: reject); "
        "nothing was stored",
        problems[: settings.POOLJUDGE_UPLOADS.max_problems],
        total=len(problems),
        source=source,
    )


def _check_run_fields(**fields: str) -> None:
    """The run's free text fits its column and holds no NUL (no database stores one)."""
    problems = []
    for name, value in fields.items():
        limit = getattr(RunModel._meta.get_field(name), "max_length", None)
        if limit is not None and len(value) > limit:
            problems.append(Problem.at(name, f"at most {limit:,} characters (got {len(value):,})"))
        if "\x00" in value:
            problems.append(Problem.at(name, "contains a NUL character"))
    if problems:
        raise InvalidInput("the run is not valid", problems)


MAX_MODEL_NAMES = 20


def check_model_names(names: Sequence[str]) -> list[str]:
    """The models a run declares it is built on: at most 20 names of 1-200 characters, kept in
    the given order without repeats."""
    if isinstance(names, str) or not all(isinstance(n, str) for n in names):
        raise InvalidInput(
            "model_names is a list of names", [Problem.at("model_names", "must be a list")]
        )
    out = list(dict.fromkeys(n.strip() for n in names if n.strip()))
    problems = [
        Problem.at(f"model_names[{i}]", "at most 200 characters without NUL")
        for i, n in enumerate(out)
        if len(n) > 200 or "\x00" in n
    ]
    if len(out) > MAX_MODEL_NAMES:
        problems.append(Problem.at("model_names", f"at most {MAX_MODEL_NAMES} names"))
    if problems:
        raise InvalidInput("the run is not valid", problems)
    return out


def _check_tag(campaign: Campaign, owner: Account, tag: str) -> None:
    """A valid tag, not yet used by this submitter in the campaign. Other researchers' tags do
    not count: the run gets a campaign-unique tag of its own (``_campaign_tag``), so the answer
    is the same whether or not someone else uses the tag."""
    limit = settings.POOLJUDGE_UPLOADS.max_tag_bytes
    problem = id_problem("tag", tag, limit)
    if not tag or any(ch.isspace() for ch in tag):
        problem = f"a tag is 1-{limit} bytes (UTF-8) without white space"
    if problem is not None:
        raise InvalidInput("the run tag is not valid", [Problem.at("tag", problem)])
    if RunModel.objects.filter(campaign=campaign, owner=owner, name=tag).exists():
        raise Conflict(f"you already have a run tagged {tag!r} in campaign {campaign.name!r}")


_TAG_COLUMN = 255  # Run.tag's max_length


def _campaign_tag(campaign: Campaign, name: str) -> str:
    """The run's tag in the campaign: ``name`` if no run has it, else ``name~2``, ``name~3``...
    (cut to fit the column), the first that no run has."""
    taken = set(
        RunModel.objects.filter(campaign=campaign, tag__startswith=name[:200]).values_list(
            "tag", flat=True
        )
    )
    candidate, n = name, 1
    while candidate in taken:
        n += 1
        suffix = f"~{n}"
        candidate = name[: _TAG_COLUMN - len(suffix)] + suffix
    return candidate


def run_pooled_check(*, user: UserLike, pooled: bool | None) -> None:
    """Only admins decide whether a run is pooled, when it is submitted and afterwards."""
    if pooled is not None and not is_admin(user):
        raise NotAllowed("only admins decide whether a run is pooled")


RUN_EDITABLE = frozenset({"group", "description", "model_names", "pooled", "priority"})


def run_update(*, run: RunModel, by: UserLike, data: Mapping[str, Any]) -> RunModel:
    """Change a run's group, description, declared models, priority or (admins only) whether it
    is pooled."""
    _only_fields(data, RUN_EDITABLE, "the run cannot be changed")
    if "model_names" in data:
        data = {**data, "model_names": check_model_names(data["model_names"])}
    run_pooled_check(user=by, pooled=data.get("pooled"))
    with transaction.atomic():
        current = RunModel.objects.select_for_update().get(pk=run.pk)
        for name, value in data.items():
            setattr(current, name, value)
        others = [f.name for f in RunModel._meta.fields if f.name not in data]
        _full_clean(current, "the run is not valid", exclude=others)
        current.save(update_fields=list(data))
    return current


def run_delete(*, run: RunModel) -> None:
    run.delete()


def run_as_trec(run: RunModel, *, tag: str | None = None) -> Iterable[str]:
    """The stored run as TREC lines, in trec_eval order, with effective ranks, tagged ``tag``
    (default: the name its submitter gave it)."""
    tag = tag or run.name
    lists = RankedList.objects.filter(run=run).select_related("topic").order_by("topic__qid")
    for ranked in lists.iterator(chunk_size=100):
        qid = ranked.topic.qid
        yield "".join(
            f"{qid} Q0 {docid} {rank} {score!r} {tag}\n"
            for rank, (docid, score) in enumerate(
                zip(ranked.docid_list(), ranked.score_array().tolist(), strict=True), 1
            )
        )


def json_results_from_body(body: Any) -> Any:
    """Accept ``{"results": {...}}`` or a JSON string of it (multipart fields)."""
    if isinstance(body, str):
        try:
            return json.loads(body)
        except json.JSONDecodeError as exc:
            raise InvalidInput(
                "'results' is not valid JSON", [Problem.at("results", str(exc))]
            ) from None
    return body
