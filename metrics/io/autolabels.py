"""Readers for automatic relevance labels imported from files: TREC qrels and UMBRELA's JSONL.

Both return :class:`AutoLabels`: one :class:`AutoLabel` per (qid, docid) with its grade and,
when the file has them, the judge's extras (its raw answer, whether the answer could be read,
the model). Like every reader in :mod:`metrics`, the whole file is validated and every problem
is reported with its 1-based line in one :class:`~metrics.problems.InvalidInput`.

TREC qrels (:func:`read_trec_labels`)
    ``qid iteration docid grade``, read by :func:`metrics.io.read_qrels` (same rules, limits and
    scale check). A negative grade means "pooled, not judged" there; an automatic label file
    has no such rows to import, so they are left out with a warning. Rows carry no line and no
    extras (``line`` 0).

UMBRELA JSONL (:func:`read_umbrela_jsonl`)
    What ``umbrela judge --input-file requests.jsonl --output-file judgments.jsonl`` writes
    (castorini/umbrela, ``src/umbrela/utils/common_utils.py:prepare_judgments``): one object a
    line, in the order of the request's candidates::

        {"model": "gpt-4o", "query": "<query text>", "passage": "<passage text>",
         "prompt": "<the rendered prompt>", "prediction": "<raw answer> ##final score: 3",
         "judgment": 3, "result_status": 1, "reasoning": "..."}

    ``judgment`` (required) is UMBRELA's grade, an integer 0..3, kept as it is: mapping it to a
    campaign's scale is the caller's (``judging.autojudge.prompts.default_mapping``).
    ``result_status`` 0 means UMBRELA could not read the answer and wrote 0 instead: such rows
    are kept (``parsed`` False) and counted in a warning, so that the caller can drop them.
    ``prediction`` becomes ``answer`` (at most 2,000 characters), ``model`` is kept.

    The output names no qid or docid, so each record is identified by the first of:

    1. its own ``qid`` and ``docid`` fields (a string or an integer; ``query`` may also be
       UMBRELA's ``{"qid": ..., "text": ...}`` object), which pipelines that add ids write;
    2. ``requests``, the batch input file that UMBRELA judged (``{"query": {"text", "qid"},
       "candidates": [{"docid", "doc": {"segment"}}]}`` a line): record i is the request files'
       i-th candidate, and its query and passage texts must equal that candidate's, so two
       files from different runs are caught rather than paired;
    3. ``queries`` (qid -> text) and ``passages`` (docid -> text): the record's query and
       passage texts, white space collapsed, must each match exactly one of them.

    A (qid, docid) labelled twice is an error, as in qrels. UMBRELA's ``--output json`` envelope
    (``castorini.cli.v1``) is recognised and refused with a pointer to the JSONL file. Lines
    carry the prompt and the passage, so ``limits.line_bytes`` should be generous here.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from metrics.io.limits import NO_LIMITS, Limits, id_problem
from metrics.io.tables import Qrels
from metrics.io.trec import Source, _open_source, read_qrels
from metrics.problems import Problems, ReadWarning

__all__ = [
    "NEGATIVE_GRADE",
    "UNPARSED",
    "AutoLabel",
    "AutoLabels",
    "read_trec_labels",
    "read_umbrela_jsonl",
]

UMBRELA_GRADES = (0, 1, 2, 3)
ANSWER_CHARS = 2000
NEGATIVE_GRADE = "a negative grade (pooled, not judged): left out"
UNPARSED = "result_status 0 (UMBRELA could not read the answer and wrote 0)"
_MAX_LINES_NAMED = 10


@dataclass(frozen=True, slots=True)
class AutoLabel:
    """One automatic label: ``grade`` for ``docid`` under ``qid``, from file ``line`` (0: not
    known), with the judge's raw ``answer``, whether it could be read (``parsed``; None: the
    file does not say) and its ``model``, when the file has them."""

    qid: str
    docid: str
    grade: int
    line: int = 0
    answer: str | None = None
    parsed: bool | None = None
    model: str | None = None


@dataclass(frozen=True)
class AutoLabels:
    """The labels of one file, in file order (TREC: qrels order), its ``format`` and what the
    reader accepted although unusual (``warnings``)."""

    format: Literal["trec", "umbrela"]
    rows: tuple[AutoLabel, ...]
    warnings: tuple[ReadWarning, ...] = ()

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[AutoLabel]:
        return iter(self.rows)

    def to_qrels(self, *, parsed_only: bool = False) -> Qrels:
        """The grades as :class:`Qrels` (``parsed_only``: without rows whose answer the judge
        could not read)."""
        out: dict[str, dict[str, int]] = {}
        for row in self.rows:
            if parsed_only and row.parsed is False:
                continue
            out.setdefault(row.qid, {})[row.docid] = row.grade
        return Qrels.from_dict(out)

    def models(self) -> set[str]:
        """The models named in the file."""
        return {row.model for row in self.rows if row.model is not None}


# --------------------------------------------------------------------------------------------
# TREC qrels


def read_trec_labels(
    src: Source,
    *,
    source: str | None = None,
    max_problems: int = 100,
    limits: Limits = NO_LIMITS,
    scale: Collection[int] | None = None,
) -> AutoLabels:
    """Read automatic labels in TREC qrels format (rules in the module docstring)."""
    qrels = read_qrels(src, source=source, max_problems=max_problems, limits=limits, scale=scale)
    rows = []
    negative = 0
    for i, qid in enumerate(qrels.qids):
        a, b = int(qrels.offsets[i]), int(qrels.offsets[i + 1])
        for docid, grade in zip(
            qrels.docids[a:b].tolist(), qrels.grades[a:b].tolist(), strict=True
        ):
            if grade < 0:
                negative += 1
                continue
            rows.append(AutoLabel(qid, docid.decode("utf-8"), int(grade)))
    warnings = (ReadWarning(NEGATIVE_GRADE, negative, ()),) if negative else ()
    return AutoLabels("trec", tuple(rows), warnings)


# --------------------------------------------------------------------------------------------
# UMBRELA JSONL


def _lines(src: Source, source: str | None) -> tuple[str, Iterator[tuple[int, bytes]]]:
    """The source's name and its (1-based line number, line bytes without the end of line)."""
    stream, name, closer = _open_source(src, source)

    def lines() -> Iterator[tuple[int, bytes]]:
        try:
            pending: list[bytes] = []
            number = 0
            first = True
            while chunk := bytes(stream.read(1 << 20)):
                if first:
                    first = False
                    if chunk.startswith(b"\xef\xbb\xbf"):
                        chunk = chunk[3:]
                parts = chunk.split(b"\n")
                for part in parts[:-1]:
                    pending.append(part)
                    number += 1
                    yield number, b"".join(pending).rstrip(b"\r")
                    pending = []
                pending.append(parts[-1])
            tail = b"".join(pending)
            if tail:
                yield number + 1, tail.rstrip(b"\r")
        finally:
            if closer is not None:
                closer.close()

    return name, lines()


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _digest(text: str) -> bytes:
    return hashlib.sha1(_collapse(text).encode("utf-8", "surrogatepass")).digest()


def _an_id(value: Any) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return value
    return None


def _check_id(problems: Problems, line: int, kind: str, value: str, limit: int | None) -> bool:
    if not value:
        problems.add(line, f"{kind} is empty")
        return False
    if any(c.isspace() for c in value):
        problems.add(line, f"{kind} {value[:40]!r} contains white space (no qrels id can)")
        return False
    why = id_problem(kind, value, limit)
    if why is not None:
        problems.add(line, why)
        return False
    return True


def _json_lines(
    src: Source, source: str | None, problems: Problems, line_bytes: int | None, what: str
) -> tuple[str, Iterator[tuple[int, Any]]]:
    """(line, parsed object) of each non-blank line; problems recorded for the rest."""
    name, lines = _lines(src, source)

    def objects() -> Iterator[tuple[int, Any]]:
        for number, raw in lines:
            if not raw.strip():
                continue
            if line_bytes is not None and len(raw) > line_bytes:
                problems.add(
                    number, f"line is {len(raw):,} bytes long; the limit is {line_bytes:,}"
                )
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                problems.add(number, "not valid UTF-8")
                continue
            try:
                value = json.loads(text)
            except RecursionError:
                problems.add(number, "JSON nested too deeply")
                continue
            except json.JSONDecodeError as e:
                if number == 1 and text.strip() in ("{", "["):  # pretty-printed JSON
                    problems.fatal(
                        name,
                        number,
                        f"not one JSON object a line: {what} must be JSONL (UMBRELA's "
                        "--output json envelope is not; use the --output-file JSONL)",
                    )
                problems.add(number, f"not JSON ({e.msg} at column {e.colno})")
                continue
            if isinstance(value, dict) and value.get("schema_version") == "castorini.cli.v1":
                problems.fatal(
                    name,
                    number,
                    "this is UMBRELA's --output json envelope; import the JSONL file that "
                    "umbrela judge --output-file writes",
                )
            if not isinstance(value, dict):
                problems.add(number, f"expected a JSON object, found {type(value).__name__}")
                continue
            yield number, value

    return name, objects()


@dataclass(frozen=True)
class _Candidate:
    qid: str
    docid: str
    query: bytes  # digests of the collapsed texts
    passage: bytes | None
    line: int


def _read_requests(
    src: Source, problems: Problems, limits: Limits, name_hint: str | None
) -> tuple[str, list[_Candidate]]:
    """The (qid, docid, texts) of every candidate in an UMBRELA batch input file, in order."""
    own = Problems(problems.limit)
    name, objects = _json_lines(src, name_hint, own, limits.line_bytes, "a requests file")
    out: list[_Candidate] = []
    for number, record in objects:
        query = record.get("query")
        if isinstance(query, dict):
            qid, qtext = _an_id(query.get("qid")), query.get("text")
        else:
            qid, qtext = None, query
        if qid is None or not isinstance(qtext, str):
            own.add(number, "a request needs query.qid and query.text")
            continue
        candidates = record.get("candidates")
        if not isinstance(candidates, list) or not candidates:
            own.add(number, "a request needs a non-empty candidates list")
            continue
        for j, cand in enumerate(candidates):
            docid = _an_id(cand.get("docid")) if isinstance(cand, dict) else None
            if docid is None:
                own.add(number, f"candidate {j + 1} has no docid")
                continue
            doc = cand.get("doc")
            text = cand.get("text")
            if isinstance(doc, dict):
                text = doc.get("segment") or doc.get("contents")
            elif isinstance(doc, str):
                text = doc
            passage = _digest(text) if isinstance(text, str) else None
            out.append(_Candidate(qid, docid, _digest(qtext), passage, number))
    if own:
        problems.add(0, f"the requests file is invalid: {own.error(name)}")
    elif not out:
        problems.add(0, f"the requests file {name} has no candidates")
    return name, out


def _index(texts: Mapping[str, str]) -> dict[bytes, list[str]]:
    by_text: dict[bytes, list[str]] = {}
    for key, text in texts.items():
        by_text.setdefault(_digest(text), []).append(str(key))
    return by_text


def _by_text(
    problems: Problems, line: int, kind: str, text: Any, index: dict[bytes, list[str]]
) -> str | None:
    if not isinstance(text, str):
        problems.add(line, f"no {kind} text to find its id by")
        return None
    found = index.get(_digest(text), [])
    if len(found) == 1:
        return found[0]
    shown = _collapse(text)
    shown = repr(shown if len(shown) <= 40 else shown[:37] + "...")
    if not found:
        problems.add(line, f"the {kind} text {shown} matches no given {kind}")
    else:
        ids = ", ".join(repr(i) for i in sorted(found)[:3])
        problems.add(
            line, f"the {kind} text {shown} matches {len(found)} {kind}s ({ids}): give ids"
        )
    return None


def read_umbrela_jsonl(
    src: Source,
    *,
    source: str | None = None,
    max_problems: int = 100,
    limits: Limits = NO_LIMITS,
    requests: Source | None = None,
    queries: Mapping[str, str] | None = None,
    passages: Mapping[str, str] | None = None,
) -> AutoLabels:
    """Read UMBRELA's judgment JSONL (rules, and how records are tied to ids, in the module
    docstring). Raises :class:`~metrics.problems.InvalidInput` listing every problem."""
    problems = Problems(max(1, max_problems))
    candidates: list[_Candidate] | None = None
    if requests is not None:
        _, candidates = _read_requests(requests, problems, limits, None)
    query_index = _index(queries) if queries is not None else None
    passage_index = _index(passages) if passages is not None else None
    name, objects = _json_lines(src, source, problems, limits.line_bytes, "UMBRELA's output")
    rows: list[AutoLabel] = []
    first: dict[tuple[str, str], int] = {}
    unparsed: list[int] = []
    unparsed_total = 0
    position = 0
    for number, record in objects:
        position += 1
        judgment = record.get("judgment")
        grade: int | None = None
        if judgment is None:
            problems.add(number, "no judgment")
        elif isinstance(judgment, bool) or not isinstance(judgment, int):
            problems.add(number, f"judgment {judgment!r} is not an integer")
        elif judgment not in UMBRELA_GRADES:
            problems.add(number, f"judgment {judgment} is outside UMBRELA's 0..3")
        else:
            grade = judgment
        status = record.get("result_status")
        parsed: bool | None = None
        if status is not None:
            if status in (0, 1) and not isinstance(status, float):
                parsed = bool(status)
            else:
                problems.add(number, f"result_status {status!r} is neither 0 nor 1")
        query = record.get("query")
        qtext = query.get("text") if isinstance(query, dict) else query
        qid = _an_id(record.get("qid"))
        if qid is None and isinstance(query, dict):
            qid = _an_id(query.get("qid"))
        docid = _an_id(record.get("docid"))
        if qid is None or docid is None:
            if candidates is not None:
                if position > len(candidates):
                    problems.add(
                        number,
                        f"record {position} has no candidate in the requests file (it has "
                        f"{len(candidates)})",
                    )
                    continue
                cand = candidates[position - 1]
                if isinstance(qtext, str) and _digest(qtext) != cand.query:
                    problems.add(
                        number,
                        f"the query differs from the requests file's for candidate {position} "
                        f"(line {cand.line}): are these files from one run?",
                    )
                    continue
                ptext = record.get("passage")
                if isinstance(ptext, str) and cand.passage not in (None, _digest(ptext)):
                    problems.add(
                        number,
                        f"the passage differs from the requests file's candidate {position} "
                        f"(docid {cand.docid!r}, line {cand.line}): are these files from one run?",
                    )
                    continue
                qid, docid = qid or cand.qid, docid or cand.docid
            elif query_index is not None and passage_index is not None:
                qid = qid or _by_text(problems, number, "query", qtext, query_index)
                docid = docid or _by_text(
                    problems, number, "passage", record.get("passage"), passage_index
                )
            else:
                problems.add(
                    number,
                    "no qid and docid: give the requests file UMBRELA judged, or the topics' "
                    "and documents' texts",
                )
                continue
        if qid is None or docid is None:
            continue
        ok_q = _check_id(problems, number, "qid", qid, limits.qid_bytes)
        ok_d = _check_id(problems, number, "docid", docid, limits.docid_bytes)
        if not (ok_q and ok_d) or grade is None:
            continue
        key = (qid, docid)
        if key in first:
            problems.add(
                number,
                f"duplicate label of docid {docid!r} for query {qid!r} (first on line "
                f"{first[key]})",
            )
            continue
        first[key] = number
        answer = record.get("prediction")
        if isinstance(answer, str) and len(answer) > ANSWER_CHARS:
            answer = answer[: ANSWER_CHARS - 1] + "…"
        model = record.get("model")
        if parsed is False:
            unparsed_total += 1
            if len(unparsed) < _MAX_LINES_NAMED:
                unparsed.append(number)
        rows.append(
            AutoLabel(
                qid,
                docid,
                grade,
                number,
                answer if isinstance(answer, str) else None,
                parsed,
                model if isinstance(model, str) else None,
            )
        )
    if candidates is not None and position < len(candidates) and not problems:
        problems.add(
            0,
            f"the requests file has {len(candidates)} candidates but {name} only {position} "
            "judgments",
        )
    if not position and not problems:
        problems.add(0, "no data lines (empty file)")
    problems.raise_if_any(name)
    warnings = (ReadWarning(UNPARSED, unparsed_total, tuple(unparsed)),) if unparsed_total else ()
    return AutoLabels("umbrela", tuple(rows), warnings)
