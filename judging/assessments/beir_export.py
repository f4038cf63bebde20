"""A campaign's golden set in BEIR's layout: ``corpus.jsonl``, ``queries.jsonl`` and
``qrels/test.tsv`` (as BEIR and MTEB ship a dataset, so ``GenericDataLoader`` and every
BEIR-style tool read it), with ``pooljudge.json`` naming the qrels version and its hash.

Written as a zip whose bytes depend only on the campaign's documents, topics and the qrels
version: entries in a fixed order with a fixed date, documents and topics sorted by id (Python's
code-point order, whatever the database's collation), JSON as ``json.dumps`` writes it by
default (BEIR's own scripts do: ASCII, non-ASCII escaped) with a fixed key order, and no
timestamps. Exporting twice gives the same bytes; importing the files (``import_collection
--beir``) and exporting again gives the same corpus, queries and qrels bytes and the same qrels
hash.

- ``corpus.jsonl``: ``{"_id", "title", "text"}`` then ``url`` when set and the document's
  metadata keys (their string values), as the JSONL document reader reads them back.
- ``queries.jsonl``: ``{"_id", "text"}`` (the topic's title, the query) then ``description``,
  ``narrative`` and ``tags`` when set.
- ``qrels/test.tsv``: ``query-id corpus-id score`` under that header, the version's rows in its
  canonical (hashed) order, checked against its stored hash first.

A version of passages (judged, or carried to a chunking) exports its chunking's passages as the
corpus (``_id`` the passage id, the document's title, the passage's text), and
``pooljudge.json`` names the chunking; a version mixing chunkings is refused (one corpus cannot
hold them apart). A sampled version has pooled documents that were not judged (-1); BEIR's qrels
cannot say so, and exporting the judged rows alone would read as complete judgments: it is
refused.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from collections.abc import Iterator
from tempfile import SpooledTemporaryFile
from typing import IO, Any

from judging.assessments.models import QrelsVersion
from judging.assessments.services import qrels_export_lines
from judging.campaigns.models import Chunking, Document, Passage, Topic
from judging.campaigns.passages import items_by_chunking
from judging.core.errors import InvalidInput
from metrics.problems import Problem

__all__ = ["BEIR_FILES", "beir_zip", "write_beir_zip"]

BEIR_FILES = ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv", "pooljudge.json")
_DATE = (1980, 1, 1, 0, 0, 0)  # the earliest a zip can say: no export time in the bytes
_CHUNK = 2000
_DOCUMENT_KEYS = frozenset({"_id", "title", "text", "url"})


def _json(obj: dict[str, Any]) -> bytes:
    return (json.dumps(obj) + "\n").encode()


def _corpus(version: QrelsVersion) -> Iterator[bytes]:
    ids = list(Document.objects.filter(campaign=version.campaign).values_list("pk", "docid"))
    ids.sort(key=lambda row: row[1])
    for at in range(0, len(ids), _CHUNK):
        pks = [pk for pk, _ in ids[at : at + _CHUNK]]
        docs = {d.pk: d for d in Document.objects.filter(pk__in=pks)}
        for pk in pks:
            doc = docs[pk]
            record: dict[str, Any] = {"_id": doc.docid, "title": doc.title, "text": doc.text}
            if doc.url:
                record["url"] = doc.url
            for key in sorted(doc.metadata):
                value = doc.metadata[key]
                if key not in _DOCUMENT_KEYS and isinstance(value, str):
                    record[key] = value
            yield _json(record)


def _passages(chunking: Chunking) -> Iterator[bytes]:
    """A chunking's passages as BEIR documents: ``_id`` the passage id, the document's title,
    the passage's text."""
    rows = list(Passage.objects.filter(chunking=chunking).values_list("pk", "passage_id"))
    rows.sort(key=lambda row: row[1])
    for at in range(0, len(rows), _CHUNK):
        pks = [pk for pk, _ in rows[at : at + _CHUNK]]
        found = Passage.objects.filter(pk__in=pks).select_related("document")
        passages = {p.pk: p for p in found}
        for pk in pks:
            p = passages[pk]
            text = p.document.text[p.start : p.end]
            yield _json({"_id": p.passage_id, "title": p.document.title, "text": text})


def _corpus_of(version: QrelsVersion, lines: list[str]) -> tuple[Iterator[bytes], Chunking | None]:
    """The corpus the version's rows name: the campaign's documents, or the passages of the one
    chunking its rows are passages of; rows of several chunkings (or passages and documents)
    are refused, since one corpus cannot hold them apart."""
    items = [line.split()[2] for line in lines]
    if not any("#" in item for item in items):
        return _corpus(version), None
    counts = items_by_chunking(version.campaign, items)
    names = [name for name in counts if name]
    if len(counts) != 1 or not names:
        shown = ", ".join(
            f"{n} {'documents or other ids' if k == '' else f'of {k!r}'}"
            for k, n in sorted(counts.items())
        )
        raise InvalidInput(
            "the version's rows are items of several chunkings",
            [Problem.at("format", f"one BEIR corpus cannot hold them apart ({shown})")],
        )
    chunking = Chunking.objects.get(campaign=version.campaign, name=names[0])
    return _passages(chunking), chunking


def _queries(version: QrelsVersion) -> Iterator[bytes]:
    topics = sorted(Topic.objects.filter(campaign=version.campaign), key=lambda t: t.qid)
    for topic in topics:
        record: dict[str, Any] = {"_id": topic.qid, "text": topic.title}
        if topic.description:
            record["description"] = topic.description
        if topic.narrative:
            record["narrative"] = topic.narrative
        if topic.tags:
            record["tags"] = list(topic.tags)
        yield _json(record)


def _qrels(lines: list[str]) -> Iterator[bytes]:
    yield b"query-id\tcorpus-id\tscore\n"
    for line in lines:
        qid, _, docid, grade = line.split()
        yield f"{qid}\t{docid}\t{grade}\n".encode()


def _entry(archive: zipfile.ZipFile, name: str, chunks: Iterator[bytes]) -> str:
    info = zipfile.ZipInfo(name, date_time=_DATE)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    digest = hashlib.sha256()
    with archive.open(info, "w", force_zip64=True) as out:
        for chunk in chunks:
            digest.update(chunk)
            out.write(chunk)
    return digest.hexdigest()


def write_beir_zip(version: QrelsVersion, out: IO[bytes]) -> dict[str, Any]:
    """Write the golden set of ``version``'s campaign to ``out`` as a zip; its metadata (the
    ``pooljudge.json`` written last). Raises ``InvalidInput`` for a sampled version and
    ``IntegrityFailure`` when the version's rows no longer hash to its stored hash."""
    if version.design:
        raise InvalidInput(
            "a sampled qrels version has no BEIR form",
            [
                Problem.at(
                    "format",
                    "BEIR qrels cannot mark pooled documents that were not sampled (-1); export "
                    "format=sample_eval or format=prels instead",
                )
            ],
        )
    lines = qrels_export_lines(version)  # the integrity check comes before any byte is written
    corpus, chunking = _corpus_of(version, lines)
    with zipfile.ZipFile(out, "w", compresslevel=6) as archive:
        hashes = {
            "corpus.jsonl": _entry(archive, "corpus.jsonl", corpus),
            "queries.jsonl": _entry(archive, "queries.jsonl", _queries(version)),
            "qrels/test.tsv": _entry(archive, "qrels/test.tsv", _qrels(lines)),
        }
        meta = {
            "format": "BEIR (corpus.jsonl, queries.jsonl, qrels/test.tsv)",
            "qrels": {
                "version": version.number,
                "label": version.label,
                "kind": version.kind,
                "sha256": version.content_hash,
                "sha256_of": "the version's TREC qrels lines (qid 0 docid grade), sorted",
                "judgments": version.num_judgments,
            },
            "files_sha256": hashes,
        }
        if chunking is not None:
            meta["corpus"] = {"chunking": chunking.name, "spec": chunking.spec}
        body = (json.dumps(meta, indent=2, sort_keys=True) + "\n").encode()
        _entry(archive, "pooljudge.json", iter([body]))
    return meta


def beir_zip(version: QrelsVersion) -> IO[bytes]:
    """The zip in a temporary file (in memory up to 32 MB), rewound to its start."""
    spool: IO[bytes] = SpooledTemporaryFile(max_size=32 << 20)  # noqa: SIM115 (returned open)
    try:
        write_beir_zip(version, spool)
    except BaseException:
        spool.close()
        raise
    spool.seek(0)
    return spool
