"""Parsers for importing topics and documents: TREC SGML, JSON lines, TSV and SMART.

No models and no database, so that commands, the API and tests share one implementation. Gzip and
UTF-8 decoding are ``judging.core.uploads``'s; uploads reach these parsers through it already
decompressed.

Inputs are ``bytes`` (raw file content), ``str`` (the text itself, *not* a file name), an
``os.PathLike`` (a file to open) or, for documents, a binary stream. Gzip is recognised by its magic
bytes, text must be UTF-8 (a BOM is tolerated) and CRLF line endings are accepted everywhere.

Every parser collects problems with their 1-based line numbers instead of stopping at the first one
and raises :class:`InvalidInput` listing them all (capped at ``max_problems``, with the total).

Normalisation, the same for every format:

* ids (qid, docid) are stripped and may not contain whitespace, because run and qrels files are
  whitespace separated; numeric ids read from TREC ``<num>`` and SMART ``.I`` lose their leading
  zeros (``051`` -> ``51``, as the qrels write them). JSON and TSV ids are kept as written.
* topic fields and document titles have their whitespace collapsed to single spaces;
* document text from TREC and SMART files is re-flowed into paragraphs, one per line: a paragraph
  ends at a blank line, at ``<P>``-like block tags, or before a line indented by two or more columns
  (how AP, WSJ and Cranfield mark paragraphs). Text from JSON lines and TSV is kept as given.
"""

from __future__ import annotations

import functools
import html
import itertools
import json
import os
import re
from bisect import bisect_right
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Literal

from judging.core.uploads import GZIP_MAGIC, decode_lines, gunzip, gunzip_head
from metrics.io.limits import NO_LIMITS, Limits, id_problem, show
from metrics.problems import InvalidInput, Problem, Problems

__all__ = [
    "DOCUMENT_FORMATS",
    "TOPIC_FORMATS",
    "DocumentRecord",
    "TopicRecord",
    "detect_document_format",
    "detect_topic_format",
    "iter_documents",
    "parse_documents",
    "parse_topics",
]

TOPIC_FORMATS: tuple[str, ...] = ("trec", "jsonl", "smart")
DOCUMENT_FORMATS: tuple[str, ...] = ("jsonl", "trec", "tsv", "smart")

SmartNumbering = Literal["sequential", "id"]
Input = bytes | str | os.PathLike[str] | BinaryIO

_HEAD_BYTES = 8192
_CHUNK_BYTES = 1 << 20
_BOM = "\ufeff"


@dataclass(frozen=True, slots=True)
class TopicRecord:
    qid: str
    title: str
    description: str = ""
    narrative: str = ""
    tags: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class DocumentRecord:
    docid: str
    title: str
    text: str
    url: str = ""
    # Left out of the hash so that records stay hashable; still compared by ==.
    metadata: dict[str, str] = field(default_factory=dict, hash=False)


_TEXT_LIMIT = "POOLJUDGE_MAX_DOCUMENT_CHARS"


def _text_ok(fields: dict[str, str], line: int, problems: Problems) -> bool:
    """Report each field holding a NUL character (no database stores one); True if none."""
    ok = True
    for name, value in fields.items():
        at = value.find("\x00")
        if at >= 0:
            problems.add(line, f"{name} contains a NUL character (at character {at + 1})")
            ok = False
    return ok


def _too_long(name: str, value: str, limit: int | None, line: int, problems: Problems) -> bool:
    if limit is not None and len(value) > limit:
        problems.add(line, f"{name} is {len(value):,} characters long; the limit is {limit:,}")
        return True
    return False


class _Ids:
    """Rejects ids with whitespace, over the length limit, with control characters, and
    duplicates, naming the line of the first occurrence. Carries the reader's limits."""

    def __init__(self, kind: str, problems: Problems, limits: Limits = NO_LIMITS) -> None:
        self.kind = kind
        self.problems = problems
        self.limits = limits
        self.limit = {"qid": limits.qid_bytes, "docid": limits.docid_bytes}.get(kind)
        self.seen: dict[str, int] = {}

    def accept(self, ident: str, line: int) -> bool:
        if _WHITESPACE.search(ident):
            self.problems.add(line, f"{self.kind} {ident[:40]!r} contains whitespace")
            return False
        problem = id_problem(self.kind, ident, self.limit)
        if problem is not None:
            self.problems.add(line, problem)
            return False
        first = self.seen.get(ident)
        if first is not None:
            self.problems.add(line, f"duplicate {self.kind} {ident} (first on line {first})")
            return False
        self.seen[ident] = line
        return True


# --------------------------------------------------------------------------- reading input

_WHITESPACE = re.compile(r"\s")
_NUMERIC = re.compile(r"[0-9]+")


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _strip_zeros(ident: str) -> str:
    if _NUMERIC.fullmatch(ident):
        return ident.lstrip("0") or "0"
    return ident


def _source_name(data: Input, source: str | None) -> str:
    if source is not None:
        return source
    if isinstance(data, os.PathLike):
        return os.path.basename(os.fspath(data))
    if not isinstance(data, bytes | str):
        name = getattr(data, "name", None)
        if isinstance(name, str) and name:
            return os.path.basename(name)
    return "input"


def _open_chunks(data: Input) -> tuple[Iterator[bytes], Callable[[], None]]:
    """Raw byte chunks of the input and a function that releases it."""
    if isinstance(data, bytes):
        return iter([data]), lambda: None
    if isinstance(data, str):
        # surrogatepass: a lone surrogate becomes an encoding problem on its line, not a crash
        return iter([data.encode("utf-8", "surrogatepass")]), lambda: None
    if isinstance(data, os.PathLike):
        # A generator owns the file: closing it, or dropping it unfinished, closes the file.
        chunks = _read_path(data)
        return chunks, chunks.close
    return _read_chunks(data), lambda: None


def _read_path(path: os.PathLike[str]) -> Generator[bytes, None, None]:
    with open(path, "rb") as handle:
        yield from _read_chunks(handle)


def _read_chunks(stream: BinaryIO) -> Iterator[bytes]:
    while chunk := stream.read(_CHUNK_BYTES):
        yield chunk


def _peek(chunks: Iterator[bytes], size: int = _HEAD_BYTES) -> tuple[bytes, Iterator[bytes]]:
    """The first ``size`` or more bytes, and an iterator that still yields everything."""
    taken: list[bytes] = []
    length = 0
    for chunk in chunks:
        taken.append(chunk)
        length += len(chunk)
        if length >= size:
            break
    head = b"".join(taken)
    return head, itertools.chain([head], chunks)


def _decompressed(
    chunks: Iterator[bytes], problems: Problems, source: str
) -> tuple[bytes, Iterator[bytes]]:
    """The decompressed head (for sniffing) and all decompressed chunks, head included."""
    head, chunks = _peek(chunks)
    if head.startswith(GZIP_MAGIC):
        head, chunks = _peek(gunzip(chunks, source=source, problems=problems))
    return head, chunks


# --------------------------------------------------------------------------- sniffing

_SMART_START = re.compile(rb"\.I(?:[ \t]|\r?$)")
_TREC_TOPIC = re.compile(rb"<\s*top(?:ic)?\b", re.IGNORECASE)
_TREC_DOC = re.compile(rb"<\s*doc(?:\s[^<>]*)?>", re.IGNORECASE)


def _sniffable(head: bytes, source: str) -> bytes:
    if head.startswith(GZIP_MAGIC):
        head = gunzip_head(head, source=source)
    if head.startswith(_BOM.encode()):
        head = head[3:]
    return head.lstrip()


def _first_line(head: bytes) -> bytes:
    return head.split(b"\n", 1)[0]


def detect_topic_format(head: bytes, *, source: str = "input") -> str:
    """Guess the topic format (one of ``TOPIC_FORMATS``) from the first few KB of a file."""
    text = _sniffable(head, source)
    if not text:
        raise InvalidInput(source, [Problem(0, "no topics found")])
    if text.startswith(b"{"):
        return "jsonl"
    if _SMART_START.match(_first_line(text)):
        return "smart"
    if _TREC_TOPIC.search(text):
        return "trec"
    raise InvalidInput(
        source,
        [
            Problem(
                0,
                "unrecognised topic format: expected TREC <top> topics, JSON lines "
                "or SMART .I/.W queries",
            )
        ],
    )


def detect_document_format(head: bytes, *, source: str = "input") -> str:
    """Guess the document format (one of ``DOCUMENT_FORMATS``) from the first few KB of a file."""
    text = _sniffable(head, source)
    if not text:
        raise InvalidInput(source, [Problem(0, "no documents found")])
    first = _first_line(text)
    if text.startswith(b"{"):
        return "jsonl"
    if _SMART_START.match(first):
        return "smart"
    if b"\t" in first and not first.startswith(b"<"):
        return "tsv"  # before TREC, so that a "<doc>" inside some TSV text does not mislead
    if _TREC_DOC.search(text):
        return "trec"
    raise InvalidInput(
        source,
        [
            Problem(
                0,
                "unrecognised document format: expected JSON lines, TREC <DOC> documents, "
                "TSV (docid<TAB>text) or SMART .I/.T/.W documents",
            )
        ],
    )


def _check_format(fmt: str, known: tuple[str, ...], source: str) -> None:
    if fmt not in known:
        expected = ", ".join(known)
        raise InvalidInput(
            source, [Problem(0, f"unknown format {fmt!r} (expected one of {expected})")]
        )


# --------------------------------------------------------------------------- shared helpers

_SMART_MARKER = re.compile(r"\.([ITABWXKCN])(?:\s+(.*))?$")
_INDENTED = re.compile(r"(?:\t| {2})")


def _paragraphs(lines: Iterable[str]) -> str:
    """Join hard-wrapped lines into paragraphs, one per output line (see the module docstring)."""
    paragraphs: list[str] = []
    current: list[str] = []
    for line in lines:
        blank = not line.strip()
        if current and (blank or _INDENTED.match(line)):
            paragraphs.append(_collapse(" ".join(current)))
            current = []
        if not blank:
            current.append(line)
    if current:
        paragraphs.append(_collapse(" ".join(current)))
    return "\n".join(paragraphs)


def _json_object(line: str, number: int, problems: Problems) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        problems.add(number, f"malformed JSON: {exc.msg} (column {exc.colno})")
        return None
    if not isinstance(value, dict):
        problems.add(number, f"expected a JSON object, found {type(value).__name__}")
        return None
    return value


def _json_id(
    obj: dict[str, Any], keys: tuple[str, ...], kind: str, number: int, problems: Problems
) -> str | None:
    for key in keys:
        if key not in obj:
            continue
        value = obj[key]
        if isinstance(value, bool) or not isinstance(value, str | int):
            problems.add(number, f"{key} must be a string or an integer")
            return None
        ident = str(value).strip()
        if ident:
            return ident
        break
    problems.add(number, f"missing {kind} (expected one of {', '.join(keys)})")
    return None


def _json_str(
    obj: dict[str, Any], keys: tuple[str, ...], number: int, problems: Problems
) -> tuple[str | None, str | None]:
    """``(key, value)`` of the first key present; value None when it is not a string."""
    for key in keys:
        if key in obj:
            value = obj[key]
            if value is None:
                return key, ""
            if not isinstance(value, str):
                problems.add(number, f"{key} must be a string")
                return key, None
            return key, value
    return None, ""


# --------------------------------------------------------------------------- topics


def parse_topics(
    data: Input,
    *,
    fmt: str | None = None,
    source: str | None = None,
    max_problems: int = 100,
    smart_numbering: SmartNumbering = "sequential",
    limits: Limits = NO_LIMITS,
) -> list[TopicRecord]:
    """Parse a topic file in TREC ``<top>``/``<topic>``, JSON lines or SMART ``.I/.W`` format.

    ``smart_numbering`` only matters for SMART files. ``"sequential"`` (the default) numbers the
    queries 1..N in file order, which is how the Cranfield qrels (cranqrel) refer to them even
    though the ``.I`` values skip numbers (cran.qry: 001, 002, 004, ...). ``"id"`` uses the
    ``.I`` value without its leading zeros instead.
    """
    if smart_numbering not in ("sequential", "id"):
        raise ValueError("smart_numbering must be 'sequential' or 'id'")
    name = _source_name(data, source)
    problems = Problems(max_problems)
    chunks, close = _open_chunks(data)
    try:
        head, chunks = _decompressed(chunks, problems, name)
        if fmt is None:
            fmt = detect_topic_format(head, source=name)
        _check_format(fmt, TOPIC_FORMATS, name)
        lines = decode_lines(chunks, problems, max_line=limits.line_bytes)
        ids = _Ids("qid", problems, limits)
        if fmt == "trec":
            topics, attempts = _trec_topics(lines, problems, ids)
        elif fmt == "jsonl":
            topics, attempts = _jsonl_topics(lines, problems, ids)
        else:
            topics, attempts = _smart_topics(lines, problems, smart_numbering, ids)
    finally:
        close()
    if not attempts:
        problems.add(0, "no topics found")
    problems.raise_if_any(name)
    return topics


def _topic_record(
    qid: str,
    title: str,
    line: int,
    ids: _Ids,
    problems: Problems,
    *,
    description: str = "",
    narrative: str = "",
    tags: tuple[str, ...] = (),
) -> TopicRecord | None:
    valid = ids.accept(qid, line)
    if not title:
        problems.add(line, f"topic {qid[:40]} has no title")
        valid = False
    if _too_long("the title", title, ids.limits.title_chars, line, problems):
        valid = False
    texts = {"the title": title, "the description": description, "the narrative": narrative}
    texts.update({f"tag {i + 1}": tag for i, tag in enumerate(tags)})
    if not _text_ok(texts, line, problems):
        valid = False
    if not valid:
        return None
    return TopicRecord(qid, title, description=description, narrative=narrative, tags=tags)


_SGML_TOKEN = re.compile(
    r"<!--.*?-->|<[!?][^>]*>|<\s*(/?)\s*([A-Za-z][\w.:-]*)([^<>]*)>", re.DOTALL
)
_ATTRIBUTE = re.compile(r"""([\w.:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""")
_TOPIC_FIELDS = {
    "num": "qid",
    "number": "qid",
    "title": "title",
    "query": "title",
    "desc": "description",
    "description": "description",
    "question": "description",
    "narr": "narrative",
    "narrative": "narrative",
}
_TOPIC_LABELS = {
    "qid": re.compile(r"\s*number\s*:", re.IGNORECASE),
    "title": re.compile(r"\s*topic\s*:", re.IGNORECASE),
    "description": re.compile(r"\s*description\s*:", re.IGNORECASE),
    "narrative": re.compile(r"\s*narrative\s*:", re.IGNORECASE),
}


@dataclass
class _OpenTopic:
    tag: str
    line: int
    attr_qid: str | None
    fields: dict[str, list[str]] = field(default_factory=dict)
    field_lines: dict[str, int] = field(default_factory=dict)


def _trec_topics(
    lines: Iterator[tuple[int, str]], problems: Problems, ids: _Ids
) -> tuple[list[TopicRecord], int]:
    # Topic files are small, so read them whole and map offsets back to line numbers.
    starts: list[int] = []
    parts: list[str] = []
    offset = 0
    for _, line in lines:
        starts.append(offset)
        parts.append(line)
        offset += len(line) + 1
    text = "\n".join(parts)

    def line_of(pos: int) -> int:
        return bisect_right(starts, pos)

    topics: list[TopicRecord] = []
    attempts = 0
    topic: _OpenTopic | None = None
    current: str | None = None  # field receiving text
    previous_end = 0

    def finish(item: _OpenTopic) -> None:
        values: dict[str, str] = {}
        for name, pieces in item.fields.items():
            value = html.unescape("".join(pieces))
            label = _TOPIC_LABELS[name].match(value)
            if label:
                value = value[label.end() :]
            values[name] = _collapse(value)
        qid = item.attr_qid if item.attr_qid is not None else values.get("qid")
        if qid is None:
            wanted = "a <num>" if item.tag == "top" else "a number attribute or <num>"
            problems.add(item.line, f"<{item.tag}> without {wanted}")
            return
        qid_line = item.field_lines.get("qid", item.line)
        if not qid:
            problems.add(qid_line, "<num> without a number")
            return
        record = _topic_record(
            _strip_zeros(qid),
            values.get("title", ""),
            qid_line,
            ids,
            problems,
            description=values.get("description", ""),
            narrative=values.get("narrative", ""),
            tags=(),
        )
        if record is not None:
            topics.append(record)

    for match in _SGML_TOKEN.finditer(text):
        if topic is not None and current is not None:
            topic.fields[current].append(text[previous_end : match.start()])
        previous_end = match.end()
        name = match.group(2)
        if name is None:  # comment or declaration
            continue
        closing = bool(match.group(1))
        tag = name.lower()
        if tag in ("top", "topic"):
            if closing:
                if topic is None:
                    problems.add(line_of(match.start()), f"</{tag}> without an opening <{tag}>")
                else:
                    finish(topic)
                topic, current = None, None
                continue
            if topic is not None:
                problems.add(topic.line, f"<{topic.tag}> is not closed before the next one")
                finish(topic)
            attempts += 1
            attributes = {
                # only one of the three value groups takes part in a match; the others are ""
                key.lower(): "".join(values)
                for key, *values in _ATTRIBUTE.findall(match.group(3))
            }
            attr_qid = attributes.get("number", attributes.get("id"))
            topic = _OpenTopic(
                tag=tag,
                line=line_of(match.start()),
                attr_qid=attr_qid.strip() if attr_qid is not None else None,
            )
            current = None
            continue
        if topic is None:
            continue
        target = _TOPIC_FIELDS.get(tag)
        if closing or target is None:
            current = None  # closing tag, or a field we do not import (<dom>, <con>, <subtopic>)
            continue
        current = target
        if target not in topic.fields:
            topic.fields[target] = []
            topic.field_lines[target] = line_of(match.start())
    if topic is not None:
        if current is not None:
            topic.fields[current].append(text[previous_end:])
        problems.add(topic.line, f"<{topic.tag}> is never closed")
        finish(topic)
    return topics, attempts


def _jsonl_topics(
    lines: Iterator[tuple[int, str]], problems: Problems, ids: _Ids
) -> tuple[list[TopicRecord], int]:
    topics: list[TopicRecord] = []
    attempts = 0
    for number, line in lines:
        if not line.strip():
            continue
        attempts += 1
        obj = _json_object(line, number, problems)
        if obj is None:
            continue
        qid = _json_id(obj, ("qid", "id", "query_id", "_id"), "qid", number, problems)
        _, title = _json_str(obj, ("title", "query", "text"), number, problems)
        _, description = _json_str(obj, ("description",), number, problems)
        _, narrative = _json_str(obj, ("narrative",), number, problems)
        tags = _json_tags(obj.get("tags"), number, problems)
        if qid is None or title is None or description is None or narrative is None:
            continue
        if tags is None:
            continue
        record = _topic_record(
            qid,
            _collapse(title),
            number,
            ids,
            problems,
            description=_collapse(description),
            narrative=_collapse(narrative),
            tags=tags,
        )
        if record is not None:
            topics.append(record)
    return topics, attempts


def _json_tags(value: object, number: int, problems: Problems) -> tuple[str, ...] | None:
    if value is None:
        return ()
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        problems.add(number, "tags must be a list of strings or a comma-separated string")
        return None
    return tuple(tag for tag in (_collapse(item) for item in value) if tag)


def _smart_sections(
    lines: Iterator[tuple[int, str]], problems: Problems, cap: int | None = None
) -> Iterator[tuple[int, str, dict[str, list[str]], bool]]:
    """``(line of .I, .I value, {letter: lines}, cut)`` per record; repeated sections are
    appended. A record's sections hold at most ``cap`` characters: the rest is dropped as it is
    read, and ``cut`` says so."""
    record: tuple[int, str, dict[str, list[str]]] | None = None
    section: str | None = None
    size, cut = 0, False
    stray_reported = False

    def keep(letter: str, text: str) -> None:
        nonlocal size, cut
        size += len(text)
        if cap is not None and size > cap:
            cut = True
        elif record is not None and not cut:
            record[2][letter].append(text)

    for number, line in lines:
        marker = _SMART_MARKER.match(line)
        if marker:
            letter, rest = marker.group(1), (marker.group(2) or "").strip()
            if letter == "I":
                if record is not None:
                    yield (*record, cut)
                record, section, size, cut = (number, rest, {}), None, 0, False
                continue
            if record is not None:
                section = letter
                record[2].setdefault(letter, [])
                if rest:
                    keep(letter, rest)
                continue
        if record is None:
            if line.strip() and not stray_reported:
                problems.add(number, "text before the first .I")
                stray_reported = True
        elif section is not None:
            keep(section, line)
    if record is not None:
        yield (*record, cut)


def _smart_topics(
    lines: Iterator[tuple[int, str]], problems: Problems, numbering: SmartNumbering, qids: _Ids
) -> tuple[list[TopicRecord], int]:
    seen_values = _Ids(".I", problems)  # a repeated .I means a damaged file in either numbering
    topics: list[TopicRecord] = []
    attempts = 0
    for line, value, sections, _ in _smart_sections(lines, problems):
        attempts += 1
        if not value:
            problems.add(line, ".I without a number")
            continue
        value = _strip_zeros(value)
        if numbering == "sequential" and not seen_values.accept(value, line):
            continue
        qid = str(attempts) if numbering == "sequential" else value
        title = _collapse(" ".join(sections.get("W") or sections.get("T") or []))
        record = _topic_record(qid, title, line, qids, problems)
        if record is not None:
            topics.append(record)
    return topics, attempts


# --------------------------------------------------------------------------- documents


def iter_documents(
    data: Input,
    *,
    fmt: str | None = None,
    source: str | None = None,
    max_problems: int = 100,
    limits: Limits = NO_LIMITS,
) -> Iterator[DocumentRecord]:
    """Stream documents from JSON lines, TREC ``<DOC>``, TSV or SMART ``.I/.T/.A/.B/.W`` input.

    The format is detected (and an unknown one rejected) before this returns. Valid documents are
    yielded as they are read; invalid ones are skipped and, after the last document, the iterator
    raises :class:`InvalidInput` listing every problem. Callers that import inside one
    transaction can therefore simply let the error roll it back.
    """
    name = _source_name(data, source)
    problems = Problems(max_problems)
    chunks, close = _open_chunks(data)
    try:
        head, chunks = _decompressed(chunks, problems, name)
        if fmt is None:
            fmt = detect_document_format(head, source=name)
        _check_format(fmt, DOCUMENT_FORMATS, name)
    except BaseException:
        close()
        raise
    parser: _DocumentParser = {
        "jsonl": _jsonl_documents,
        "trec": _trec_documents,
        "tsv": _tsv_documents,
        "smart": _smart_documents,
    }[fmt]
    ids = _Ids("docid", problems, limits)
    why = (
        ""
        if limits.text_chars is None
        else f"a document's text is at most {limits.text_chars:,} characters, {_TEXT_LIMIT}"
    )
    lines = decode_lines(chunks, problems, max_line=limits.document_bytes, why=why)
    return _documents(parser, lines, problems, ids, name, close)


class _Counter:
    """How many records were started, valid or not (none means "no documents found")."""

    def __init__(self) -> None:
        self.attempts = 0


_DocumentParser = Callable[
    [Iterator[tuple[int, str]], Problems, _Ids, _Counter], Iterator[DocumentRecord]
]


def _documents(
    parser: _DocumentParser,
    lines: Iterator[tuple[int, str]],
    problems: Problems,
    ids: _Ids,
    source: str,
    close: Callable[[], None],
) -> Iterator[DocumentRecord]:
    counter = _Counter()
    try:
        yield from parser(lines, problems, ids, counter)
    finally:
        close()
    if not counter.attempts:
        problems.add(0, "no documents found")
    problems.raise_if_any(source)


def parse_documents(
    data: Input,
    *,
    fmt: str | None = None,
    source: str | None = None,
    max_problems: int = 100,
    limits: Limits = NO_LIMITS,
) -> list[DocumentRecord]:
    """All documents of ``data`` as a list (see :func:`iter_documents`)."""
    return list(
        iter_documents(data, fmt=fmt, source=source, max_problems=max_problems, limits=limits)
    )


def _document_ok(record: DocumentRecord, line: int, problems: Problems, ids: _Ids) -> bool:
    """The record's text is within the limit, its URL fits its column and no field holds a NUL
    (each problem reported)."""
    limit = ids.limits.text_chars
    long_text = limit is not None and len(record.text) > limit
    if long_text:
        problems.add(
            line,
            f"document {show(record.docid.encode())}: the text is {len(record.text):,} "
            f"characters long; the limit is {limit:,} characters ({_TEXT_LIMIT})",
        )
    long_url = _too_long("the url", record.url, ids.limits.url_chars, line, problems)
    texts = {"the title": record.title, "the text": record.text, "the url": record.url}
    for key, value in record.metadata.items():
        texts[f"metadata key {key[:40]!r}"] = key
        texts[f"metadata {key[:40]!r}"] = value
    return _text_ok(texts, line, problems) and not long_url and not long_text


def _cut_short(docid: str | None, line: int, problems: Problems, ids: _Ids) -> None:
    """A record the reader stopped holding (over ``Limits.document_bytes``)."""
    what = f"document {show(docid.encode())}" if docid else "the document starting here"
    problems.add(
        line,
        f"{what} is longer than {ids.limits.document_bytes:,} characters as written; a "
        f"document's text is at most {ids.limits.text_chars:,} characters ({_TEXT_LIMIT})",
    )


class _Held:
    """The pieces of one open record, up to ``cap`` characters: beyond it the rest is dropped
    as it is read (``cut``), so memory does not grow with a document, however long."""

    __slots__ = ("cap", "cut", "pieces", "size")

    def __init__(self, cap: int | None) -> None:
        self.cap = cap
        self.cut = False
        self.pieces: list[str] = []
        self.size = 0

    def add(self, piece: str) -> None:
        if self.cut:
            return
        self.size += len(piece)
        if self.cap is not None and self.size > self.cap:
            self.cut = True
        else:
            self.pieces.append(piece)

    def text(self) -> str:
        return "".join(self.pieces)


_DOCUMENT_ID_KEYS = ("docid", "id", "doc_id", "_id")
_DOCUMENT_TEXT_KEYS = ("text", "contents", "body")


def _jsonl_documents(
    lines: Iterator[tuple[int, str]], problems: Problems, ids: _Ids, counter: _Counter
) -> Iterator[DocumentRecord]:
    for number, line in lines:
        if not line.strip():
            continue
        counter.attempts += 1
        obj = _json_object(line, number, problems)
        if obj is None:
            continue
        docid = _json_id(obj, _DOCUMENT_ID_KEYS, "docid", number, problems)
        title_key, title = _json_str(obj, ("title",), number, problems)
        text_key, text = _json_str(obj, _DOCUMENT_TEXT_KEYS, number, problems)
        url_key, url = _json_str(obj, ("url",), number, problems)
        if text_key is None:
            problems.add(number, f"missing text (expected one of {', '.join(_DOCUMENT_TEXT_KEYS)})")
            continue
        if docid is None or title is None or text is None or url is None:
            continue
        if not ids.accept(docid, number):
            continue
        used = {title_key, text_key, url_key, *_DOCUMENT_ID_KEYS}
        metadata = {
            key: value if isinstance(value, str) else json.dumps(value)
            for key, value in obj.items()
            if key not in used and isinstance(value, str | int | float | bool)
        }
        record = DocumentRecord(
            docid=docid, title=_collapse(title), text=text, url=url.strip(), metadata=metadata
        )
        if _document_ok(record, number, problems, ids):
            yield record


_TSV_ID_NAMES = frozenset(_DOCUMENT_ID_KEYS) | {"docno"}


def _tsv_documents(
    lines: Iterator[tuple[int, str]], problems: Problems, ids: _Ids, counter: _Counter
) -> Iterator[DocumentRecord]:
    columns: list[str] | None = None  # column names, from the header or the first row's width
    for number, line in lines:
        if not line.strip():
            continue
        fields = line.split("\t")
        if columns is None:
            names = [name.strip().lower() for name in fields]
            if names[0] in _TSV_ID_NAMES and set(names) & set(_DOCUMENT_TEXT_KEYS):
                columns = names
                continue
            if len(fields) == 2:
                columns = ["docid", "text"]
            elif len(fields) == 3:
                columns = ["docid", "title", "text"]
            else:
                counter.attempts += 1
                problems.add(
                    number,
                    f"expected 2 or 3 tab-separated fields (docid, [title,] text), "
                    f"found {len(fields)}",
                )
                continue
        counter.attempts += 1
        if len(fields) != len(columns):
            problems.add(
                number, f"expected {len(columns)} tab-separated fields, found {len(fields)}"
            )
            continue
        row = dict(zip(columns, fields, strict=True))
        docid = fields[0].strip()
        if not docid:
            problems.add(number, "missing docid")
            continue
        if not ids.accept(docid, number):
            continue
        text_column = next(name for name in columns if name in _DOCUMENT_TEXT_KEYS)
        known = {columns[0], "title", text_column, "url"}
        record = DocumentRecord(
            docid=docid,
            title=_collapse(row.get("title", "")),
            text=row[text_column],
            url=row.get("url", "").strip(),
            metadata={key: value for key, value in row.items() if key not in known},
        )
        if _document_ok(record, number, problems, ids):
            yield record


_DOC_TAG = re.compile(r"<\s*(/?)\s*DOC(?:\s[^<>]*)?>", re.IGNORECASE)
# Elements are found by an opening tag, then the closing tag searched from it: once an opening
# has no closing after it, no later one of the same name has either, so a document full of
# unclosed tags costs linear time (a lazy ``<X>.*?</X>`` regex rescans the rest of the document
# from every unclosed opening: 64 KB of "<URL>" lines took 4.5 s). Attributes are bounded, so a
# "<URL" without its ">" costs at most that much too.
_TEXT_ELEMENT = re.compile(r"<TEXT\b[^>]{0,1000}>(.*?)(?:</TEXT\s*>|\Z)", re.IGNORECASE | re.DOTALL)
_TITLE_TAGS = ("HEADLINE", "TITLE", "TI", "HEAD", "HL")
_NOT_TEXT_TAGS = ("DOCNO", "DOCOLDNO", "DOCHDR", "URL", "SCRIPT", "STYLE")


@dataclass(frozen=True, slots=True)
class _Element:
    start: int  # of the opening tag
    end: int  # just after the closing tag
    content: str


@functools.cache
def _tag_patterns(name: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    return (
        re.compile(rf"<{name}\b[^>]{{0,1000}}>", re.IGNORECASE),
        re.compile(rf"</{name}\s*>", re.IGNORECASE),
    )


def _element(text: str, name: str, pos: int = 0) -> _Element | None:
    """The first ``<name ...>content</name>`` of ``text`` at or after ``pos``, or None."""
    opening_tag, closing_tag = _tag_patterns(name)
    opening = opening_tag.search(text, pos)
    if opening is None:
        return None
    closing = closing_tag.search(text, opening.end())
    if closing is None:
        return None
    return _Element(opening.start(), closing.end(), text[opening.end() : closing.start()])


def _without_elements(text: str, names: Iterable[str]) -> str:
    """``text`` with every complete ``<name>...</name>`` element replaced by a space."""
    for name in names:
        pieces: list[str] = []
        pos = 0
        while (found := _element(text, name, pos)) is not None:
            pieces += [text[pos : found.start], " "]
            pos = found.end
        text = "".join(pieces) + text[pos:] if pieces else text
    return text


def _without_comments(text: str) -> str:
    pieces: list[str] = []
    pos = 0
    while (start := text.find("<!--", pos)) >= 0 and (end := text.find("-->", start + 4)) >= 0:
        pieces += [text[pos:start], " "]
        pos = end + 3
    return "".join(pieces) + text[pos:] if pieces else text


_BLOCK_TAG = re.compile(
    r"</?(?:p|br|div|h[1-6]|li|ul|ol|tr|table|pre|blockquote)\b[^<>]*>", re.IGNORECASE
)
_ANY_TAG = re.compile(r"<[^<>]*>")


def _sgml_text(fragment: str) -> str:
    """Text of an SGML/HTML fragment: tags dropped, paragraphs kept one per line."""
    fragment = _without_comments(fragment)
    fragment = _BLOCK_TAG.sub("\n\n", fragment)
    fragment = _ANY_TAG.sub(" ", fragment)
    return _paragraphs(html.unescape(fragment).split("\n"))


def _trec_documents(
    lines: Iterator[tuple[int, str]], problems: Problems, ids: _Ids, counter: _Counter
) -> Iterator[DocumentRecord]:
    body: _Held | None = None  # the open <DOC>, one piece per line
    start = 0
    for number, line in lines:
        position = 0
        for tag in _DOC_TAG.finditer(line):
            before = line[position : tag.start()]
            position = tag.end()
            if body is not None:
                body.add(before)
            elif before.strip():
                problems.add(number, "text outside <DOC> ... </DOC>")
            if tag.group(1):  # </DOC>
                if body is None:
                    problems.add(number, "</DOC> without an opening <DOC>")
                    continue
                record = _trec_document(body, start, problems, ids)
                body = None
                if record is not None:
                    yield record
            else:
                counter.attempts += 1
                if body is not None:
                    problems.add(start, "<DOC> is not closed before the next <DOC>")
                    record = _trec_document(body, start, problems, ids)
                    if record is not None:
                        yield record
                body, start = _Held(ids.limits.document_bytes), number
        rest = line[position:]
        if body is not None:
            body.add(rest + "\n")
        elif rest.strip():
            problems.add(number, "text outside <DOC> ... </DOC>")
    if body is not None:
        problems.add(start, "<DOC> is never closed")
        record = _trec_document(body, start, problems, ids)
        if record is not None:
            yield record


def _trec_document(held: _Held, start: int, problems: Problems, ids: _Ids) -> DocumentRecord | None:
    body = held.text()
    docno = _element(body, "DOCNO")
    if docno is None:
        if held.cut:
            _cut_short(None, start, problems, ids)
        else:
            problems.add(start, "<DOC> without a <DOCNO>")
        return None
    docid_line = start + body.count("\n", 0, docno.start)
    docid = html.unescape(docno.content).strip()
    if not docid:
        problems.add(docid_line, "<DOCNO> without a document number")
        return None
    if not ids.accept(docid, docid_line):
        return None
    if held.cut:
        _cut_short(docid, docid_line, problems, ids)
        return None
    title_match = next((e for t in _TITLE_TAGS if (e := _element(body, t)) is not None), None)
    title = _collapse(_sgml_text(title_match.content)) if title_match else ""
    blocks = [_sgml_text(m.group(1)) for m in _TEXT_ELEMENT.finditer(body)]
    if blocks:
        text = "\n".join(block for block in blocks if block)
    else:
        rest = _without_elements(body, _NOT_TEXT_TAGS)
        if title_match is not None:
            rest = rest.replace(body[title_match.start : title_match.end], " ", 1)
        text = _sgml_text(rest)
    url_match = _element(body, "URL")
    url = _collapse(html.unescape(url_match.content)) if url_match else ""
    record = DocumentRecord(docid=docid, title=title, text=text, url=url)
    return record if _document_ok(record, docid_line, problems, ids) else None


def _smart_documents(
    lines: Iterator[tuple[int, str]], problems: Problems, ids: _Ids, counter: _Counter
) -> Iterator[DocumentRecord]:
    for line, value, sections, cut in _smart_sections(lines, problems, ids.limits.document_bytes):
        counter.attempts += 1
        if not value:
            problems.add(line, ".I without a number")
            continue
        docid = _strip_zeros(value)
        if not ids.accept(docid, line):
            continue
        if cut:
            _cut_short(docid, line, problems, ids)
            continue
        metadata: dict[str, str] = {}
        # CISI gives one author per .A section; repeated sections were appended in order.
        authors = "; ".join(a for a in (_collapse(x) for x in sections.get("A", [])) if a)
        if authors:
            metadata["authors"] = authors
        origin = _collapse(" ".join(sections.get("B", [])))
        if origin:
            metadata["source"] = origin
        record = DocumentRecord(
            docid=docid,
            title=_collapse(" ".join(sections.get("T", []))),
            text=_paragraphs(sections.get("W", [])),
            metadata=metadata,
        )
        if _document_ok(record, line, problems, ids):
            yield record
