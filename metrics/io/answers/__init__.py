"""Answer runs: TREC RAG's generation output (the AG and RAG tasks), read, validated whole and
written back byte-stably; the ranked ``references`` become an ordinary :class:`Run`.

The format, one JSON object a line, one line a topic, in either layout:

TREC 2024 RAG (trec-rag.github.io, "TREC 2024 RAG Track Guidelines", Output Format (AG Output)
and (RAG Output); NIST's checker as kept in castorini/ragnarok,
``src/ragnarok/scripts/rag24_validation.py``)::

    {"run_id": "my-run", "topic_id": "2027497", "topic": "how often should you ...",
     "references": ["msmarco_v2.1_doc_51_766815931#2_1606878413", ...],
     "response_length": 192,
     "answer": [{"text": "The frequency ...", "citations": [0, 1, 12]}, ...]}

TREC 2025 RAG ("TREC 2025 RAG Track Guidelines", version 2.0; castorini/ragnarok,
``src/ragnarok/scripts/validate_trec_rag25_gen.py``): the run's and the topic's fields move into
``metadata``, the topic id is ``narrative_id`` (a string; a number in the guidelines' example,
so a number is read as its decimal string, in either layout), ``team_id`` is required, there is
no ``response_length``, up to 100 references are allowed (20 in 2024), and ``citations`` are
either indices (format 1) or the cited segment ids themselves (format 2)::

    {"metadata": {"team_id": "my-team", "run_id": "my-run", "type": "automatic",
                  "narrative_id": 1, "narrative": "I'm trying to ...", "prompt": "..."},
     "references": ["msmarco_v2.1_doc_16_1041913392#3_1268938142", ...],
     "answer": [{"text": "The Industrial ...",
                 "citations": ["msmarco_v2.1_doc_16_1041913392#3_1268938142", ...]}, ...]}

Read into :class:`AnswerRun` (``run_id``; one :class:`TopicAnswer` a line, in file order), a
citation always as a 0-based index into the topic's ``references``. ``topic`` / ``narrative``
is kept as ``topic``; ``team_id``, ``type`` and ``prompt`` are checked and not kept. A file is
written in the 2024 layout, keys in that order (``topic`` and ``response_length`` only when
known), so reading a written file gives the same run and writing it again the same bytes.

Errors, each with its line and field (:class:`~metrics.problems.InvalidInput`, nothing returned
when there is one): a line that is not UTF-8 (its byte), not JSON, not an object, or has a key
twice; a missing or wrongly typed field; an id (run, topic, segment) that is empty, has white
space or a control character or is longer than :class:`Limits` (``tag_bytes``, ``qid_bytes``,
``docid_bytes``); no references, or one segment twice in them; a citation that is not an
integer in range nor a segment id in the references; ``response_length`` not a non-negative
integer; a sentence whose text is blank, over ``max_sentence_chars`` characters or holds a NUL
or a lone surrogate; no sentences; more than ``max_references`` references or
``max_sentences`` sentences; a second ``run_id`` in the file; a topic answered twice (naming
the first line); a 2025 ``type`` other than ``manual`` / ``automatic``; a line over
``limits.line_bytes`` (never gathered whole; a 2025 line carries its ``prompt``, which may need
a larger limit than the 64 KiB default); no answer at all. A UTF-8 BOM is dropped.

Accepted with a :class:`~metrics.problems.ReadWarning` naming the lines: ``response_length``
other than the answer's word count (:func:`word_count`: TREC RAG's checkers' count, each
sentence stripped, NFKC-normalised and split at white space); a sentence with no citation; a
reference no sentence cites; a sentence citing one reference twice (kept once, in first-cited
order); fields neither layout has (ignored). ``response_length`` itself is optional, in both
layouts: the 2024 checker required it, but it only restates the count.
"""

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
    references_run,
    word_count,
    write_answer_run,
)
from metrics.io.answers.read import looks_like_answer_run, read_answer_run

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
    "looks_like_answer_run",
    "read_answer_run",
    "references_run",
    "word_count",
    "write_answer_run",
]
