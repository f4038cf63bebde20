"""Subtopic qrels (ndeval's ``topic subtopic docno grade`` lines), read with every bad line
reported; the input of the diversity measures (:mod:`metrics.measures.diversity`, whose
docstring defines the format)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from metrics.io.trec import Source, _open_source
from metrics.problems import Problems

I64 = npt.NDArray[np.int64]
Bytes = npt.NDArray[np.bytes_]
Bool = npt.NDArray[np.bool_]


__all__ = [
    "SubtopicQrels",
    "TopicJudgments",
    "read_subtopic_qrels",
    "topic_sort_key",
]


@dataclass(frozen=True, eq=False)
class TopicJudgments:
    """One topic's subtopic judgments: ``grades[i, j]`` is the grade of ``docids[i]`` for
    ``subtopics[j]`` (0 where that pair has no qrels line). ``docids`` are UTF-8 bytes sorted in
    byte order; every docno with a qrels line for the topic is there (it is "judged")."""

    subtopics: tuple[str, ...]
    docids: Bytes
    grades: I64

    def relevant(self, rel: int = 1) -> Bool:
        """``J``: (documents, subtopics) booleans, grade >= ``rel``."""
        out: Bool = self.grades >= rel
        return out

    def actual_subtopics(self, rel: int = 1) -> int:
        """|S|: the subtopics with at least one relevant document."""
        return int(self.relevant(rel).any(axis=0).sum())


@dataclass(frozen=True, eq=False)
class SubtopicQrels:
    """Subtopic qrels per topic (see :func:`read_subtopic_qrels`), topics in file order."""

    topics: Mapping[str, TopicJudgments]

    @classmethod
    def from_tuples(cls, rows: Iterable[tuple[str, str, str, int]]) -> SubtopicQrels:
        """Build from ``(topic, subtopic, docno, grade)`` tuples; a repeated triple is an error."""
        seen: dict[tuple[str, str, str], int] = {}
        for topic, subtopic, docno, grade in rows:
            key = (str(topic), str(subtopic), str(docno))
            if key in seen:
                raise ValueError(f"topic {key[0]} subtopic {key[1]} docno {key[2]} judged twice")
            seen[key] = int(grade)
        return cls._build(seen)

    @classmethod
    def _build(cls, judged: Mapping[tuple[str, str, str], int]) -> SubtopicQrels:
        per: dict[str, list[tuple[str, str, int]]] = {}
        for (topic, subtopic, docno), grade in judged.items():
            per.setdefault(topic, []).append((subtopic, docno, grade))
        topics: dict[str, TopicJudgments] = {}
        for topic, rows in per.items():
            subs = tuple(sorted({s for s, _, _ in rows}, key=topic_sort_key))
            docs = sorted({d.encode() for _, d, _ in rows})
            s_at = {s: j for j, s in enumerate(subs)}
            d_at = {d: i for i, d in enumerate(docs)}
            grades = np.zeros((len(docs), len(subs)), dtype=np.int64)
            for s, d, g in rows:
                grades[d_at[d.encode()], s_at[s]] = g
            docids = np.array(docs, dtype=np.bytes_)
            topics[topic] = TopicJudgments(subs, docids, grades)
        return cls(topics)

    def __len__(self) -> int:
        return len(self.topics)


_INT = re.compile(rb"[+-]?[0-9]+\Z")


def read_subtopic_qrels(
    src: Source, *, source: str | None = None, max_problems: int = 100
) -> SubtopicQrels:
    """Read ndeval subtopic qrels (``topic subtopic docno grade``) and validate the whole file.

    Every problem is collected with its 1-based line (a line without exactly 4 fields, a grade
    that is not an integer, bad UTF-8, a (topic, subtopic, docno) judged twice, no data lines)
    and raised together as :class:`~metrics.problems.InvalidInput`. ``src`` is a path, bytes or
    a binary file object, gzip or not, as for :func:`metrics.io.read_qrels`.
    """
    stream, name, closer = _open_source(src, source)
    try:
        parts = []
        while chunk := bytes(stream.read(1 << 20)):  # a stream may hand out less than asked
            parts.append(chunk)
        data = b"".join(parts)
    finally:
        if closer is not None:
            closer.close()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    problems = Problems(max(1, max_problems))
    judged: dict[tuple[str, str, str], int] = {}
    first_line: dict[tuple[str, str, str], int] = {}
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        fields = raw.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        if len(fields) != 4:
            problems.add(
                lineno, f"expected 4 fields (topic subtopic docno grade), found {len(fields)}"
            )
            continue
        try:
            topic, subtopic, docno = (f.decode("utf-8") for f in fields[:3])
        except UnicodeDecodeError:
            problems.add(lineno, "not valid UTF-8")
            continue
        if not _INT.match(fields[3]):
            problems.add(
                lineno, f"grade {fields[3].decode('utf-8', 'replace')!r} is not an integer"
            )
            continue
        key = (topic, subtopic, docno)
        if key in judged:
            problems.add(
                lineno,
                f"duplicate judgment of docno {docno!r} for topic {topic!r} subtopic "
                f"{subtopic!r} (first on line {first_line[key]})",
            )
            continue
        judged[key] = int(fields[3])
        first_line[key] = lineno
    if not judged and not problems:
        problems.add(0, "no data lines (empty file)")
    problems.raise_if_any(name)
    return SubtopicQrels._build(judged)


def topic_sort_key(topic: str) -> tuple[int, int, str]:
    """Numeric ids in numeric order (as ndeval orders topics), then other ids as strings."""
    return (0, int(topic), "") if topic.isdigit() else (1, 0, topic)
