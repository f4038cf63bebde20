"""Nugget banks as files: each topic's nuggets (atomic facts a good answer holds, ``vital`` or
``okay``), read and validated whole, and written back as JSON lines.

Two layouts, told apart by the first line that is not blank (a JSON object, or not):

JSON lines, castorini/nuggetizer's ``create`` output (``src/nuggetizer/cli/adapters.py``,
``create_output_record`` and ``serialize_nugget``, commit d00dc3e), one topic a line::

    {"qid": "q1", "query": "What is Python?",
     "nuggets": [{"text": "Python is a high-level programming language", "importance": "vital"},
                 {"text": "Python is used for web development", "importance": "okay"}]}

``qid`` is a string (a number is read as its decimal string) and ``nuggets`` a list (it may be
empty) of objects with ``text`` and ``importance``. A nugget may also carry ``sources`` (the
segment ids it was drafted from) and ``key`` (its id in the bank that wrote it), which
:func:`write_nuggets` writes. What else nuggetizer writes is ignored: ``query``, the reasoning
traces, a nugget's ``reasoning``, ``trace`` and ``assignment``; so is any other field.

TSV, ``qid<TAB>importance<TAB>text``, one nugget a line; a topic's nuggets in file order (its
lines need not be adjacent); the text is the rest of the line, tabs included. A first line
``qid<TAB>importance<TAB>text`` is a header.

``importance`` is ``vital`` or ``okay``, in any case (nuggetizer lower-cases its labels);
nuggetizer's ``failed`` (its scorer gave no label) is a problem naming it, and so is a missing
one (nuggetizer's reader would take it as ``vital``: here the file says which it is).

Problems, each with its line (and, in JSON lines, the field: ``nuggets[2].importance``), all
reported together in :class:`~metrics.problems.InvalidInput` and nothing returned: a line that
is not UTF-8, not JSON, not an object, has a key twice, or is longer than ``limits.line_bytes``;
a TSV line with fewer than three fields; a topic id that is empty, holds white space or a
control character, or is longer than ``limits.qid_bytes``; a topic on two JSON lines (naming
the first); a nugget's text that is blank, holds a NUL or a lone surrogate, or is over
``max_text_chars``; the same text twice in one topic (white space and case aside); a key given
twice in one topic, or not a string of at most 40 characters without white space; a source that
is not a segment id (``limits.docid_bytes``); more than ``max_nuggets`` nuggets in a topic; no
topic at all. A UTF-8 BOM is dropped; gzip is undone.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import IO, Any, Literal

from metrics.io._json import kind_of, no_twice, text_problem
from metrics.io.limits import DEFAULT_LIMITS, Limits, control_character, id_problem, line_problem
from metrics.io.trec import Source, _open_out, read_head
from metrics.problems import Problems

__all__ = [
    "IMPORTANCE",
    "KEY_CHARS",
    "DraftNugget",
    "Importance",
    "NuggetFile",
    "TopicNuggets",
    "read_nuggets",
    "write_nuggets",
]

Importance = Literal["vital", "okay"]
IMPORTANCE: tuple[Importance, ...] = ("vital", "okay")
KEY_CHARS = 40  # the longest key a bank stores
HEADER = "qid\timportance\ttext"


@dataclass(frozen=True, slots=True)
class DraftNugget:
    """One nugget as a file or a draft gives it: its text, importance, the segment ids it came
    from and its key in the bank that wrote it ("" when none)."""

    text: str
    importance: Importance
    sources: tuple[str, ...] = ()
    key: str = ""


@dataclass(frozen=True, slots=True)
class TopicNuggets:
    """A topic's nuggets in order, and the line the topic was first read on (0: not read)."""

    qid: str
    nuggets: tuple[DraftNugget, ...]
    line: int = 0


@dataclass(frozen=True)
class NuggetFile:
    """The topics of a nugget file in file order, and its layout (``jsonl`` or ``tsv``)."""

    topics: tuple[TopicNuggets, ...]
    layout: Literal["jsonl", "tsv"]

    def __len__(self) -> int:
        return len(self.topics)


class _Topic:
    """One topic's nuggets as they are read, with what makes a repeat a problem."""

    def __init__(self, qid: str, line: int) -> None:
        self.qid = qid
        self.line = line
        self.nuggets: list[DraftNugget] = []
        self.texts: dict[str, str] = {}  # normalised text -> where it was first
        self.keys: set[str] = set()


class _Reader:
    def __init__(
        self, limits: Limits, problems: Problems, max_nuggets: int | None, chars: int | None
    ):
        self.limits = limits
        self.problems = problems
        self.max_nuggets = max_nuggets
        self.max_chars = chars
        self.topics: dict[str, _Topic] = {}

    def bad(self, line: int, where: str | None, message: str) -> None:
        self.problems.add(line, f"{where}: {message}" if where else message, where)

    def qid(self, line: int, where: str | None, value: Any) -> str | None:
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str):
            self.bad(line, where, f"the topic id must be a string, not {kind_of(value)}")
            return None
        if not value:
            self.bad(line, where, "the topic id is empty")
            return None
        if any(c.isspace() for c in value):
            self.bad(line, where, f"topic id {value[:40]!r} contains white space")
            return None
        why = id_problem("topic id", value, self.limits.qid_bytes)
        if why is not None:
            self.bad(line, where, why)
            return None
        return value

    def topic(self, qid: str, line: int) -> _Topic:
        return self.topics.setdefault(qid, _Topic(qid, line))

    def importance(self, line: int, where: str | None, value: Any) -> Importance | None:
        if value is None:
            self.bad(line, where, "missing: 'vital' or 'okay'")
            return None
        if not isinstance(value, str):
            self.bad(line, where, f"must be 'vital' or 'okay', not {kind_of(value)}")
            return None
        label = value.strip().lower()
        if label == "failed":
            self.bad(line, where, "'failed' (nuggetizer could not label it): vital or okay")
            return None
        if label not in IMPORTANCE:
            self.bad(line, where, f"{value[:40]!r} is neither 'vital' nor 'okay'")
            return None
        return "vital" if label == "vital" else "okay"

    def text(self, line: int, where: str | None, value: Any) -> str | None:
        if not isinstance(value, str):
            self.bad(line, where, f"must be a string, not {kind_of(value)}")
            return None
        text = value.strip()
        why = text_problem(text)
        if why is None and not text:
            why = "is blank"
        if why is None and self.max_chars is not None and len(text) > self.max_chars:
            why = f"{len(text):,} characters; the limit is {self.max_chars:,}"
        if why is not None:
            self.bad(line, where, why)
            return None
        return text

    def key(self, line: int, where: str | None, value: Any) -> str | None:
        if value is None:
            return ""
        if not isinstance(value, str) or not value or len(value) > KEY_CHARS:
            self.bad(line, where, f"must be a string of 1 to {KEY_CHARS} characters")
            return None
        if any(c.isspace() for c in value) or control_character(value) is not None:
            self.bad(line, where, f"{value!r} holds white space or a control character")
            return None
        return value

    def sources(self, line: int, where: str, value: Any) -> tuple[str, ...] | None:
        if value is None:
            return ()
        if not isinstance(value, list):
            self.bad(line, where, f"must be a list of segment ids, not {kind_of(value)}")
            return None
        out: list[str] = []
        for i, item in enumerate(value):
            at = f"{where}[{i}]"
            if not isinstance(item, str) or not item or any(c.isspace() for c in item):
                self.bad(line, at, "must be a segment id (a string without white space)")
                return None
            why = id_problem("segment id", item, self.limits.docid_bytes)
            if why is not None:
                self.bad(line, at, why)
                return None
            if item not in out:
                out.append(item)
        return tuple(out)

    def add(self, topic: _Topic, line: int, where: str | None, nugget: DraftNugget) -> None:
        """Add ``nugget`` to ``topic`` unless it repeats a text or a key, or is one too many."""
        normal = " ".join(nugget.text.split()).casefold()
        if normal in topic.texts:
            first = topic.texts[normal]
            self.bad(line, where, f"the same nugget twice in topic {topic.qid!r} (first: {first})")
            return
        if nugget.key and nugget.key in topic.keys:
            self.bad(line, where, f"key {nugget.key!r} twice in topic {topic.qid!r}")
            return
        if self.max_nuggets is not None and len(topic.nuggets) == self.max_nuggets:
            self.bad(line, where, f"topic {topic.qid!r} has more than {self.max_nuggets} nuggets")
            return
        topic.texts[normal] = f"line {line}" + (f", {where}" if where else "")
        if nugget.key:
            topic.keys.add(nugget.key)
        topic.nuggets.append(nugget)


def _json_line(reader: _Reader, number: int, text: str, first: dict[str, int]) -> None:
    try:
        twice = no_twice(lambda key: reader.bad(number, key, "given twice in one object"))
        record = json.loads(text, object_pairs_hook=twice)
    except RecursionError:
        reader.bad(number, None, "not JSON: nested too deeply")
        return
    except ValueError as e:
        what = f"{e.msg} (column {e.colno})" if isinstance(e, json.JSONDecodeError) else str(e)
        reader.bad(number, None, f"not JSON: {what[:80]}")
        return
    if not isinstance(record, dict):
        reader.bad(number, None, f"expected a JSON object, found {kind_of(record)}")
        return
    qid = reader.qid(number, "qid", record.get("qid"))
    if qid is not None and qid in first:
        reader.bad(number, "qid", f"topic {qid!r} is on two lines (first on line {first[qid]})")
        qid = None
    if qid is not None:
        first[qid] = number
    nuggets = record.get("nuggets")
    if not isinstance(nuggets, list):
        reader.bad(number, "nuggets", f"must be a list of nuggets, not {kind_of(nuggets)}")
        nuggets = []
    topic = reader.topic(qid, number) if qid is not None else _Topic("", number)
    for i, item in enumerate(nuggets):
        at = f"nuggets[{i}]"
        if not isinstance(item, dict):
            reader.bad(number, at, f"must be an object {{text, importance}}, not {kind_of(item)}")
            continue
        said = reader.text(number, f"{at}.text", item.get("text"))
        importance = reader.importance(number, f"{at}.importance", item.get("importance"))
        sources = reader.sources(number, f"{at}.sources", item.get("sources"))
        key = reader.key(number, f"{at}.key", item.get("key"))
        if said is None or importance is None or sources is None or key is None:
            continue
        reader.add(topic, number, at, DraftNugget(said, importance, sources, key))


def _tsv_line(reader: _Reader, number: int, text: str) -> None:
    fields = text.split("\t", 2)
    if len(fields) < 3:
        reader.bad(number, None, f"{len(fields)} tab-separated field(s); qid, importance, text")
        return
    qid = reader.qid(number, "qid", fields[0].strip())
    importance = reader.importance(number, "importance", fields[1])
    nugget = reader.text(number, "text", fields[2])
    if qid is None or importance is None or nugget is None:
        return
    reader.add(reader.topic(qid, number), number, None, DraftNugget(nugget, importance))


def read_nuggets(
    src: Source,
    limits: Limits = DEFAULT_LIMITS,
    *,
    source: str | None = None,
    max_problems: int = 100,
    max_nuggets: int | None = None,
    max_text_chars: int | None = None,
) -> NuggetFile:
    """Read and validate a nugget file in either layout (the module docstring).

    ``src`` is a path, a binary file object or bytes, gzip or not, read whole. Raises
    :class:`~metrics.problems.InvalidInput` naming every problem (at most ``max_problems``)
    with its line; ``max_nuggets`` bounds a topic's nuggets and ``max_text_chars`` a nugget's
    text (``None``: no bound).
    """
    data, name = read_head(src, source, 1 << 62)
    lines = data.removeprefix(b"\xef\xbb\xbf").split(b"\n")
    problems = Problems(max_problems)
    reader = _Reader(limits, problems, max_nuggets, max_text_chars)
    layout: Literal["jsonl", "tsv"] | None = None
    first: dict[str, int] = {}
    for number, raw in enumerate(lines, 1):
        raw = raw.removesuffix(b"\r")
        if not raw.strip():
            continue
        if limits.line_bytes is not None and len(raw) > limits.line_bytes:
            problems.add(number, line_problem(len(raw), limits.line_bytes))
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            problems.add(number, f"not UTF-8 (byte {e.start + 1} of the line)")
            continue
        if layout is None:
            layout = "jsonl" if text.lstrip().startswith("{") else "tsv"
            if layout == "tsv" and text.strip().lower() == HEADER:
                continue
        if layout == "jsonl":
            _json_line(reader, number, text, first)
        else:
            _tsv_line(reader, number, text)
    if not problems and not reader.topics:
        problems.add(0, "no topic's nuggets in the file")
    problems.raise_if_any(name)
    topics = tuple(TopicNuggets(t.qid, tuple(t.nuggets), t.line) for t in reader.topics.values())
    return NuggetFile(topics, layout or "jsonl")


def write_nuggets(topics: Iterable[TopicNuggets], dst: str | Any | IO[bytes]) -> None:
    """Write ``topics`` as JSON lines (the first layout of the module docstring), one topic a
    line, UTF-8 unescaped; a nugget's ``sources`` and ``key`` only when it has them. Reading
    what is written gives the same topics (their ``line`` aside); a path ending in ``.gz`` is
    gzip-compressed."""
    out, owned = _open_out(dst)
    try:
        for topic in topics:
            nuggets: list[dict[str, Any]] = []
            for n in topic.nuggets:
                item: dict[str, Any] = {"text": n.text, "importance": n.importance}
                if n.sources:
                    item["sources"] = list(n.sources)
                if n.key:
                    item["key"] = n.key
                nuggets.append(item)
            record = {"qid": topic.qid, "nuggets": nuggets}
            out.write((json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))
    finally:
        if owned:
            out.close()
