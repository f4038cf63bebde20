"""Answer runs' model: the dataclasses, the checkers' word count, the references as a ranked
run, and the writer (the format: :mod:`metrics.io.answers`)."""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import IO, Any

from metrics.io.tables import Run
from metrics.io.trec import _open_out
from metrics.problems import ReadWarning

__all__ = [
    "DUPLICATE_CITATION",
    "MAX_REFERENCES",
    "MAX_SENTENCES",
    "MAX_SENTENCE_CHARS",
    "RESPONSE_LENGTH",
    "UNCITED_REFERENCE",
    "UNCITED_SENTENCE",
    "UNKNOWN_FIELDS",
    "AnswerRun",
    "AnswerSentence",
    "TopicAnswer",
    "references_run",
    "word_count",
    "write_answer_run",
]

MAX_REFERENCES = 100  # TREC 2025 RAG's limit (2024's was 20)
MAX_SENTENCES = 100  # a 400-word answer (the track's limit) has far fewer
MAX_SENTENCE_CHARS = 2000

RESPONSE_LENGTH = "response_length other than the answer's word count"
UNCITED_SENTENCE = "a sentence that cites no reference"
UNCITED_REFERENCE = "a reference that no sentence cites"
DUPLICATE_CITATION = "a sentence citing one reference twice (cited once)"
UNKNOWN_FIELDS = "fields that TREC RAG's answer format does not have (ignored)"


@dataclass(frozen=True, slots=True)
class AnswerSentence:
    """One sentence of an answer and the references it cites (0-based indices, in the order
    given: TREC 2025 asks for highest support first)."""

    text: str
    citations: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class TopicAnswer:
    """One topic's answer: its ranked ``references`` (segment ids), its sentences, the
    ``response_length`` the file states (None: not given), the file ``line`` it was on and the
    topic's text as the file gives it (``topic`` / ``narrative``; None: not given)."""

    topic_id: str
    references: tuple[str, ...]
    sentences: tuple[AnswerSentence, ...]
    response_length: int | None
    line: int
    topic: str | None = None

    @property
    def words(self) -> int:
        """The answer's word count (:func:`word_count`)."""
        return word_count(s.text for s in self.sentences)

    @property
    def cited(self) -> tuple[str, ...]:
        """The references some sentence cites, in reference order."""
        used = {c for s in self.sentences for c in s.citations}
        return tuple(ref for i, ref in enumerate(self.references) if i in used)


@dataclass(frozen=True)
class AnswerRun:
    """A run's answers, one per topic in file order, and what the reader accepted although
    unusual (``warnings``, with their lines)."""

    run_id: str
    answers: tuple[TopicAnswer, ...]
    warnings: tuple[ReadWarning, ...] = ()

    def __len__(self) -> int:
        return len(self.answers)


def word_count(sentences: Iterator[str] | Sequence[str]) -> int:
    """Words in an answer as TREC RAG's checkers count them (``rag24_validation.py``,
    ``validate_trec_rag25_gen.py``): each sentence stripped, NFKC-normalised, split at white
    space; the counts summed."""
    return sum(len(unicodedata.normalize("NFKC", s.strip()).split()) for s in sentences)


def references_run(answers: AnswerRun) -> Run:
    """The answers' references as a ranked run, tagged ``run_id``: the reference at rank r
    (1-based) of n scores n - r + 1, strictly decreasing, so trec_eval's order (score
    descending) is the submitted order and pooling, judging and evaluation take it unchanged."""
    ranked = {
        a.topic_id: {ref: float(len(a.references) - r) for r, ref in enumerate(a.references)}
        for a in answers.answers
    }
    return Run.from_dict(ranked, tag=answers.run_id)


def write_answer_run(answers: AnswerRun, dst: str | Any | IO[bytes]) -> None:
    """Write ``answers`` as JSON lines in the 2024 layout (module docstring), UTF-8 unescaped;
    a path ending in ``.gz`` is gzip-compressed."""
    out, owned = _open_out(dst)
    try:
        for a in answers.answers:
            record: dict[str, Any] = {"run_id": answers.run_id, "topic_id": a.topic_id}
            if a.topic is not None:
                record["topic"] = a.topic
            record["references"] = list(a.references)
            if a.response_length is not None:
                record["response_length"] = a.response_length
            record["answer"] = [
                {"text": s.text, "citations": list(s.citations)} for s in a.sentences
            ]
            out.write((json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))
    finally:
        if owned:
            out.close()
