"""Reading an answer run: every line validated, every problem named with its line and field
(the format and the rules: :mod:`metrics.io.answers`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import partial
from typing import Any

from metrics.io._json import kind_of, no_twice, text_problem
from metrics.io._pieces import read_pieces
from metrics.io.answers.model import (
    DUPLICATE_CITATION,
    MAX_REFERENCES,
    MAX_SENTENCE_CHARS,
    MAX_SENTENCES,
    RESPONSE_LENGTH,
    UNCITED_REFERENCE,
    UNCITED_SENTENCE,
    UNKNOWN_FIELDS,
    AnswerRun,
    AnswerSentence,
    TopicAnswer,
)
from metrics.io.limits import DEFAULT_LIMITS, Limits, id_problem, line_problem, show
from metrics.io.trec import Source, _open_source
from metrics.problems import Problems, ReadWarning

__all__ = ["looks_like_answer_run", "read_answer_run"]

_ORDER = (RESPONSE_LENGTH, UNCITED_SENTENCE, UNCITED_REFERENCE, DUPLICATE_CITATION, UNKNOWN_FIELDS)

_FLAT = {"run_id", "topic_id", "topic", "references", "response_length", "answer"}
_NESTED = {"metadata", "references", "response_length", "answer"}
_METADATA = {"team_id", "run_id", "type", "narrative_id", "narrative", "prompt"}
_SENTENCE = {"text", "citations"}
_LINES_NAMED = 10


class _Warnings:
    """Each kind of warning: on how many lines (a kind counts once a line), the first ten."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.lines: dict[str, list[int]] = {}
        self.last: dict[str, int] = {}

    def add(self, kind: str, line: int) -> None:
        if self.last.get(kind) == line:
            return
        self.last[kind] = line
        self.counts[kind] = self.counts.get(kind, 0) + 1
        seen = self.lines.setdefault(kind, [])
        if len(seen) < _LINES_NAMED:
            seen.append(line)

    def result(self) -> tuple[ReadWarning, ...]:
        return tuple(
            ReadWarning(k, self.counts[k], tuple(self.lines[k])) for k in _ORDER if k in self.counts
        )


def _lines(
    src: Source, source: str | None, limit: int | None
) -> tuple[str, Iterator[tuple[int, bytes | int]]]:
    """The source's name and its (line number, bytes or its length when over ``limit``)."""
    stream, name, closer = _open_source(src, source)

    def lines() -> Iterator[tuple[int, bytes | int]]:
        number = 0
        cut: dict[int, int] = {}
        try:
            for k, piece in enumerate(read_pieces(stream, name, limit, cut)):
                parts = piece.split(b"\n")
                if parts[-1] == b"":
                    parts.pop()
                for j, raw in enumerate(parts):
                    number += 1
                    raw = raw.removesuffix(b"\r")
                    length = cut[k] if j == 0 and k in cut else len(raw)
                    yield number, length if limit is not None and length > limit else raw
        finally:
            if closer is not None:
                closer.close()

    return name, lines()


def _shown(value: str) -> str:
    return show(value.encode("utf-8", "surrogatepass"))


class _Line:
    """One line's checks: each problem recorded with the line and the field it is in."""

    def __init__(self, number: int, problems: Problems, limits: Limits) -> None:
        self.number = number
        self.problems = problems
        self.limits = limits
        self.ok = True
        self.run_field = "run_id"  # where the run and topic ids are (the 2025 layout nests them)
        self.topic_field = "topic_id"

    def bad(self, field: str, message: str) -> None:
        self.ok = False
        self.problems.add(self.number, f"{field}: {message}", field)

    def ident(self, field: str, kind: str, value: Any, limit: int | None) -> str | None:
        """``value`` as an id (a string; a number for a topic id), or None after a problem."""
        if kind == "topic id" and isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str):
            self.bad(field, f"must be a string, not {kind_of(value)}")
            return None
        if not value:
            self.bad(field, f"the {kind} is empty")
            return None
        if any(c.isspace() for c in value):
            self.bad(field, f"{kind} {_shown(value)} contains white space (no TREC id can)")
            return None
        why = id_problem(kind, value, limit) or (
            None if (t := text_problem(value)) is None else f"{kind} {t}"
        )
        if why is not None:
            self.bad(field, why)
            return None
        return value

    def text(self, field: str, value: Any, *, required: bool) -> str | None:
        if value is None and not required:
            return None
        if not isinstance(value, str):
            self.bad(field, f"must be a string, not {kind_of(value)}")
            return None
        why = text_problem(value)
        if why is not None:
            self.bad(field, why)
            return None
        return value


def _twice(problems: Problems, number: int, key: str) -> None:
    problems.add(number, f"{key}: given twice in one object", key)


def looks_like_answer_run(data: bytes) -> bool:
    """Whether ``data`` begins with an answer run's line: a JSON object with ``answer`` and
    ``references`` (either layout), as no other run file does. Reads the first non-blank line
    only."""
    data = data.removeprefix(b"\xef\xbb\xbf")
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        if data[start:end].strip():
            try:
                value = json.loads(data[start:end])
            except (ValueError, RecursionError):
                return False
            return isinstance(value, dict) and "answer" in value and "references" in value
        start = end + 1
    return False


def read_answer_run(
    src: Source,
    limits: Limits = DEFAULT_LIMITS,
    *,
    source: str | None = None,
    max_problems: int = 100,
    max_references: int | None = MAX_REFERENCES,
    max_sentences: int | None = MAX_SENTENCES,
    max_sentence_chars: int | None = MAX_SENTENCE_CHARS,
) -> AnswerRun:
    """Read and validate an answer run (either layout; rules in the module docstring).

    ``src`` is a path, a binary file object or bytes, gzip or not. Raises
    :class:`~metrics.problems.InvalidInput` naming every problem (at most ``max_problems``) by
    line and field; the limits (``None``: none) bound a line, an id, a topic's references and
    sentences and a sentence's characters.
    """
    problems = Problems(max_problems)
    warnings = _Warnings()
    name, lines = _lines(src, source, limits.line_bytes)
    run_id: tuple[str, int] | None = None  # the first run_id and its line
    first: dict[str, int] = {}
    answers: list[TopicAnswer] = []
    for number, raw in lines:
        if isinstance(raw, int):
            problems.add(number, line_problem(raw, limits.line_bytes or 0))
            continue
        if not raw.strip():
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            problems.add(number, f"not UTF-8 (byte {e.start + 1} of the line)")
            continue
        try:
            value = json.loads(text, object_pairs_hook=no_twice(partial(_twice, problems, number)))
        except RecursionError:
            problems.add(number, "not JSON: nested too deeply")
            continue
        except json.JSONDecodeError as e:
            if number == 1 and text.strip() in ("{", "["):  # pretty-printed JSON
                problems.fatal(name, number, "not one JSON object a line (JSON lines)")
            problems.add(number, f"not JSON: {e.msg} (column {e.colno})")
            continue
        except ValueError as e:  # an integer of more digits than Python converts
            problems.add(number, f"not JSON: {str(e).split(':')[0][:80]}")
            continue
        if not isinstance(value, dict):
            problems.add(number, f"expected a JSON object, found {kind_of(value)}")
            continue
        line = _Line(number, problems, limits)
        answer = _answer(line, value, warnings, max_references, max_sentences, max_sentence_chars)
        if answer is None:
            continue
        this_run, one = answer
        if run_id is None:
            run_id = (this_run, number)
        elif this_run != run_id[0]:
            line.bad(
                line.run_field,
                f"{this_run!r} differs from {run_id[0]!r} (line {run_id[1]}): one run a file",
            )
        if one.topic_id in first:
            line.bad(
                line.topic_field,
                f"topic {one.topic_id!r} answered twice (first on line {first[one.topic_id]})",
            )
        else:
            first[one.topic_id] = number
        if line.ok:
            answers.append(one)
    if not problems and run_id is None:
        problems.add(0, "no answers")
    problems.raise_if_any(name)
    assert run_id is not None
    return AnswerRun(run_id[0], tuple(answers), warnings.result())


def _answer(
    line: _Line,
    record: dict[str, Any],
    warnings: _Warnings,
    max_references: int | None,
    max_sentences: int | None,
    max_chars: int | None,
) -> tuple[str, TopicAnswer] | None:
    """One line's run id and answer, or None when the line has no usable run and topic id."""
    limits = line.limits
    if "metadata" in record:  # the 2025 layout
        meta = record["metadata"]
        if not isinstance(meta, dict):
            line.bad("metadata", f"must be an object, not {kind_of(meta)}")
            return None
        known = _NESTED
        line.run_field, line.topic_field = "metadata.run_id", "metadata.narrative_id"
        if set(meta) - _METADATA:
            warnings.add(UNKNOWN_FIELDS, line.number)
        run_id = line.ident(line.run_field, "run id", meta.get("run_id"), limits.tag_bytes)
        topic_id = line.ident(
            line.topic_field, "topic id", meta.get("narrative_id"), limits.qid_bytes
        )
        topic = line.text("metadata.narrative", meta.get("narrative"), required=False)
        line.text("metadata.team_id", meta.get("team_id"), required=True)
        line.text("metadata.prompt", meta.get("prompt"), required=False)
        kind = meta.get("type")
        if kind is not None and kind not in ("manual", "automatic"):
            line.bad("metadata.type", f"{str(kind)[:40]!r} is neither 'manual' nor 'automatic'")
    else:  # the 2024 layout
        known = _FLAT
        run_id = line.ident("run_id", "run id", record.get("run_id"), limits.tag_bytes)
        topic_id = line.ident("topic_id", "topic id", record.get("topic_id"), limits.qid_bytes)
        topic = line.text("topic", record.get("topic"), required=False)
    if set(record) - known:
        warnings.add(UNKNOWN_FIELDS, line.number)
    references = _references(line, record.get("references"), max_references)
    length = record.get("response_length")
    if length is not None and (
        isinstance(length, bool) or not isinstance(length, int) or length < 0
    ):
        shown = json.dumps(length)[:40]
        line.bad("response_length", f"must be a non-negative integer, not {shown}")
        length = None
    sentences = _sentences(
        line, record.get("answer"), references, warnings, max_sentences, max_chars
    )
    if run_id is None or topic_id is None:
        return None
    answer = TopicAnswer(topic_id, references or (), sentences, length, line.number, topic)
    if line.ok:
        if length is not None and length != answer.words:
            warnings.add(RESPONSE_LENGTH, line.number)
        if len(answer.cited) < len(answer.references):
            warnings.add(UNCITED_REFERENCE, line.number)
    return run_id, answer


def _references(line: _Line, value: Any, limit: int | None) -> tuple[str, ...] | None:
    if not isinstance(value, list):
        line.bad("references", f"must be a list of segment ids, not {kind_of(value)}")
        return None
    if not value:
        line.bad("references", "is empty: an answer cites from at least one segment")
        return None
    if limit is not None and len(value) > limit:
        line.bad("references", f"{len(value):,} segment ids; the limit is {limit:,}")
    refs: list[str] = []
    at: dict[str, int] = {}
    for i, item in enumerate(value):
        ref = line.ident(f"references[{i}]", "segment id", item, line.limits.docid_bytes)
        if ref is not None and ref in at:
            line.bad(f"references[{i}]", f"{ref!r} given twice (first at references[{at[ref]}])")
        elif ref is not None:
            at[ref] = i
            refs.append(ref)
    # citations are checked against the references only when every one of them is an id
    return tuple(refs) if len(refs) == len(value) else None


def _sentences(
    line: _Line,
    value: Any,
    refs: tuple[str, ...] | None,
    warnings: _Warnings,
    limit: int | None,
    max_chars: int | None,
) -> tuple[AnswerSentence, ...]:
    if not isinstance(value, list):
        line.bad("answer", f"must be a list of sentences, not {kind_of(value)}")
        return ()
    if not value:
        line.bad("answer", "has no sentences")
        return ()
    if limit is not None and len(value) > limit:
        line.bad("answer", f"{len(value):,} sentences; the limit is {limit:,}")
    index = {ref: i for i, ref in enumerate(refs or ())}
    out: list[AnswerSentence] = []
    for i, item in enumerate(value):
        where = f"answer[{i}]"
        if not isinstance(item, dict):
            line.bad(where, f"must be an object {{text, citations}}, not {kind_of(item)}")
            continue
        if set(item) - _SENTENCE:
            warnings.add(UNKNOWN_FIELDS, line.number)
        text = line.text(f"{where}.text", item.get("text"), required=True)
        if text is not None and not text.strip():
            line.bad(f"{where}.text", "is blank")
        elif text is not None and max_chars is not None and len(text) > max_chars:
            line.bad(f"{where}.text", f"{len(text):,} characters; the limit is {max_chars:,}")
        cites = item.get("citations")
        if not isinstance(cites, list):
            line.bad(f"{where}.citations", f"must be a list, not {kind_of(cites)}")
            continue
        kept: list[int] = []
        seen: set[int] = set()
        for j, cite in enumerate(cites):
            at = f"{where}.citations[{j}]"
            if isinstance(cite, int) and not isinstance(cite, bool):
                if refs is not None and not 0 <= cite < len(refs):
                    shown = str(cite)[:40]
                    line.bad(at, f"{shown} is out of range (references 0 to {len(refs) - 1})")
                    continue
                n = cite
            elif isinstance(cite, str):
                if refs is not None and cite not in index:
                    line.bad(at, f"{_shown(cite)} is not in references")
                    continue
                n = index.get(cite, -1)
            else:
                line.bad(
                    at, f"must be an index into references or a segment id, not {kind_of(cite)}"
                )
                continue
            if n in seen:
                warnings.add(DUPLICATE_CITATION, line.number)
            else:
                seen.add(n)
                kept.append(n)
        if not cites:
            warnings.add(UNCITED_SENTENCE, line.number)
        if text is not None:
            out.append(AnswerSentence(text, tuple(kept)))
    return tuple(out)
