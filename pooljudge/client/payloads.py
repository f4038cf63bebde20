"""Python data as the files and bodies the service reads.

- topics: JSON lines (``{"qid", "title", ...}``, the service's ``jsonl`` topic format; BEIR's
  ``queries.jsonl`` keys ``_id``/``text`` are read too);
- documents: JSON lines (``{"docid", "title", "text", ...}``, its ``jsonl`` document format);
- qrels: BEIR's qrels TSV (``query-id corpus-id score`` under that header), tab-separated so
  that an id with a space in it is refused by name instead of splitting a TREC line;
- runs: ``{qid: {docid: score}}`` (the pytrec_eval / ranx shape) for the JSON submission, from a
  mapping or a pandas-like DataFrame, with NaN and the infinities as the strings the service
  reads ("NaN", "Infinity", "-Infinity": JSON has no such numbers).

A problem in Python data is reported by the service with the line of the file written here: the
n-th record is line n (for qrels, line n + 1, after the header).
"""

from __future__ import annotations

import gzip
import json
import math
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "DataFrameLike",
    "Upload",
    "documents_jsonl",
    "qrels_tsv",
    "run_results",
    "topics_jsonl",
]

PathLike = str | os.PathLike[str]
Upload = tuple[str, bytes]  # (file name, content) of a multipart 'file' part

_GZIP_ABOVE = 1 << 20  # bigger payloads travel gzipped (the service reads gzip uploads)
QID_COLUMNS = ("qid", "query_id", "q_id")
DOCID_COLUMNS = ("docno", "doc_id", "docid")


@runtime_checkable
class DataFrameLike(Protocol):
    """What the client needs of a pandas DataFrame: its columns, each convertible to a list."""

    @property
    def columns(self) -> Any: ...

    def __getitem__(self, key: str) -> Any: ...


def _jsonl(records: Iterable[Mapping[str, Any]]) -> bytes:
    return "".join(json.dumps(dict(r), ensure_ascii=False) + "\n" for r in records).encode()


def packed(name: str, content: bytes) -> Upload:
    """``content`` as an upload, gzipped when large (the service reads gzip by its magic)."""
    if len(content) > _GZIP_ABOVE:
        return f"{name}.gz", gzip.compress(content, compresslevel=6)
    return name, content


def topics_jsonl(
    topics: Mapping[str, str] | Mapping[str, Mapping[str, Any]] | Iterable[Mapping[str, Any]],
) -> bytes:
    """``{qid: title}``, ``{qid: {"title", "description", "narrative", "tags"}}`` or records
    that carry their own ``qid`` (or ``_id``, ``id``, ``query_id``) as JSON lines."""
    if isinstance(topics, Mapping):
        return _jsonl(
            {"qid": str(qid), **value}
            if isinstance(value, Mapping)
            else {"qid": str(qid), "title": value}
            for qid, value in topics.items()
        )
    return _jsonl(topics)


def documents_jsonl(
    documents: Mapping[str, str] | Mapping[str, Mapping[str, Any]] | Iterable[Mapping[str, Any]],
) -> bytes:
    """``{docid: text}``, ``{docid: {"title", "text", "url", ...}}`` or records that carry their
    own ``docid`` (or ``_id``, ``id``, ``doc_id``) as JSON lines."""
    if isinstance(documents, Mapping):
        return _jsonl(
            {"docid": str(docid), **value}
            if isinstance(value, Mapping)
            else {"docid": str(docid), "text": value}
            for docid, value in documents.items()
        )
    return _jsonl(documents)


def qrels_tsv(qrels: Mapping[str, Mapping[str, int]]) -> bytes:
    """``{qid: {docid: grade}}`` as BEIR's qrels TSV, sorted by query and document."""
    lines = ["query-id\tcorpus-id\tscore\n"]
    for qid in sorted(qrels, key=str):
        judged = qrels[qid]
        for docid in sorted(judged, key=str):
            grade = judged[docid]
            if isinstance(grade, bool) or int(grade) != grade:
                raise ValueError(
                    f"qrels[{qid!r}][{docid!r}]: grade {grade!r} is not a whole number"
                )
            lines.append(f"{qid}\t{docid}\t{int(grade)}\n")
    return "".join(lines).encode()


def _score(value: Any) -> Any:
    """A score for the JSON body: a finite float, or the string the service reads for NaN and
    the infinities; what is not a number is sent as it is, for the service to name."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return value
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    return number


def _find(frame: DataFrameLike, names: tuple[str, ...]) -> str | None:
    present = {str(c) for c in frame.columns}
    return next((name for name in names if name in present), None)


def _needed(frame: DataFrameLike, names: tuple[str, ...], what: str) -> str:
    found = _find(frame, names)
    if found is None:
        columns = ", ".join(str(c) for c in frame.columns)
        raise ValueError(
            f"the DataFrame has no {what} column (one of {', '.join(names)}; it has {columns})"
        )
    return found


def _from_frame(frame: DataFrameLike) -> dict[str, dict[str, Any]]:
    """Columns qid/query_id/q_id, docno/doc_id/docid and score (or, without one, rank: a
    score of -rank keeps the order), one row per retrieved document."""
    qids = list(frame[_needed(frame, QID_COLUMNS, "query id")])
    docids = list(frame[_needed(frame, DOCID_COLUMNS, "document id")])
    if _find(frame, ("score",)) is None and _find(frame, ("rank",)) is not None:
        scores = [-float(rank) for rank in frame["rank"]]
    else:
        scores = list(frame[_needed(frame, ("score",), "score")])
    results: dict[str, dict[str, Any]] = {}
    for row, (qid, docid, score) in enumerate(zip(qids, docids, scores, strict=True)):
        ranked = results.setdefault(str(qid), {})
        if str(docid) in ranked:
            raise ValueError(f"row {row}: document {docid!r} twice for query {qid!r}")
        ranked[str(docid)] = _score(score)
    return results


def run_results(run: Mapping[str, Mapping[str, float]] | DataFrameLike) -> dict[str, Any]:
    """A run as the JSON submission's ``results``: ``{qid: {docid: score}}``."""
    if isinstance(run, Mapping):
        return {
            str(qid): {str(docid): _score(score) for docid, score in ranked.items()}
            for qid, ranked in run.items()
        }
    if isinstance(run, DataFrameLike):
        return _from_frame(run)
    raise TypeError(
        "a run is a file path, a mapping {qid: {docid: score}} or a DataFrame, "
        f"not {type(run).__name__}"
    )


def file_upload(path: PathLike) -> Upload:
    """A file to send as it is (plain or gzip: the service tells them apart)."""
    file = Path(path)
    return file.name, file.read_bytes()
