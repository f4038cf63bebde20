"""The answers of the retrieval demo (issue 34, point 7): each setup's top passages answered by an
extractive generator, a nugget bank written from the planted truth, and the simulated assessor
of nugget assignment and citation support.

- **Generator** (:func:`extract`): for a question, each of the setup's first :data:`TOP_K`
  paragraphs gives its sentence sharing the most stemmed words with the question
  (:func:`.retrieval.tokens`; ties go to the earlier sentence; a sentence sharing none is
  skipped), cited to that paragraph. Nothing is generated: every sentence is one of the help
  centre's, so a citation to the paragraph it came from supports it.
- **The careless system** (:data:`CARELESS`): the hybrid setup's answer, each sentence citing the
  *next* reference (its neighbour in the ranking, not its source), and one claim the help
  centre never makes (:data:`CLAIMS`) added, citing the first reference. It says what the
  hybrid answer says, so its nugget recall is the hybrid's; its citations do not support it.
- **Bank** (:func:`bank`): per answerable question, its answering sentences (vital) and its
  related sentences (okay), as an assessor would write them; the four ``no-answer`` questions
  get none.
- **Assessor** (:func:`assign`, :func:`support`): an answer holds a nugget (2) when one of its
  sentences is the nugget's sentence, partly (1) when one holds at least half of the nugget's
  words, else not (0); a segment fully supports a sentence (2) when its text holds the sentence,
  partly (1) when it holds at least half of the sentence's words, else not (0). Words are
  :func:`.retrieval.tokens`.

Pure, no Django: the answers depend only on the runs and the passages' texts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from judging.demo.rag.questions import RagQuestion
from judging.demo.rag.retrieval import RunDict, tokens
from metrics.passages.sentences import sentence_spans

TOP_K = 3
CARELESS = "hybrid-careless"
CLAIMS = (
    "Every plan includes unlimited free storage for the first year.",
    "Support can restore any deleted project at any time without a backup.",
    "Invoices can be paid in cash at any Northwind Cloud office.",
    "API keys never expire and cannot be revoked once created.",
)

Answer = dict[str, Any]  # one line of TREC RAG's answer format


def _sentences(text: str) -> list[str]:
    return [" ".join(text[a:b].split()) for a, b in sentence_spans(text)]


def _best(question: RagQuestion, text: str) -> str | None:
    asked = set(tokens(question.text))
    scored = [(len(asked & set(tokens(s))), -i, s) for i, s in enumerate(_sentences(text))]
    found = max(scored, default=None)
    return found[2] if found is not None and found[0] > 0 else None


def extract(
    run_id: str, question: RagQuestion, ranking: Sequence[str], texts: Mapping[str, str]
) -> Answer:
    """The extractive answer to ``question`` from the first :data:`TOP_K` passage ids of
    ``ranking`` (``texts``: passage id -> text), in TREC RAG's answer format."""
    references = list(ranking[:TOP_K])
    answer: list[dict[str, Any]] = []
    for i, pid in enumerate(references):
        sentence = _best(question, texts[pid])
        if sentence is not None and all(sentence != a["text"] for a in answer):
            answer.append({"text": sentence, "citations": [i]})
    if not answer:  # an answer says something: the first reference's first sentence
        answer.append({"text": _sentences(texts[references[0]])[0], "citations": [0]})
    words = sum(len(a["text"].split()) for a in answer)
    return {
        "run_id": run_id,
        "topic_id": question.qid,
        "references": references,
        "response_length": words,
        "answer": answer,
    }


def careless(answer: Answer, n: int) -> Answer:
    """:data:`CARELESS`'s form of an answer: citations moved to the next reference, and claim
    ``n`` of :data:`CLAIMS` (cycled) added, citing the first."""
    refs = len(answer["references"])
    moved = [
        {"text": a["text"], "citations": [(a["citations"][0] + 1) % refs]} for a in answer["answer"]
    ]
    claim = CLAIMS[n % len(CLAIMS)]
    moved.insert(1, {"text": claim, "citations": [0]})
    return {
        **answer,
        "run_id": CARELESS,
        "answer": moved,
        "response_length": answer["response_length"] + len(claim.split()),
    }


def answer_runs(
    runs: Mapping[str, RunDict], questions: Sequence[RagQuestion], texts: Mapping[str, str]
) -> dict[str, list[Answer]]:
    """Run tag -> its answers: each setup's (tagged ``<setup>-answers``) and the careless one."""
    out: dict[str, list[Answer]] = {}
    for setup, run in runs.items():
        tag = f"{setup}-answers"
        out[tag] = [
            extract(tag, q, sorted(run[q.qid], key=lambda p: -run[q.qid][p]), texts)
            for q in questions
            if run.get(q.qid)
        ]
    out[CARELESS] = [careless(a, i) for i, a in enumerate(out["hybrid-answers"])]
    return out


def jsonl(answers: Sequence[Answer]) -> bytes:
    return "".join(json.dumps(a) + "\n" for a in answers).encode()


def bank(questions: Sequence[RagQuestion], texts: Mapping[str, str]) -> bytes:
    """The nugget file (nuggetizer's JSON lines): per answerable question, its answering
    sentences vital, its related sentences okay (``texts``: docid -> text)."""
    lines = []
    for q in questions:
        if not q.answers:
            continue
        nuggets: dict[str, str] = {}
        for importance, spans in (("vital", q.answers), ("okay", q.related)):
            for s in spans:
                nuggets.setdefault(" ".join(texts[s.docid][s.start : s.end].split()), importance)
        listed = [{"text": t, "importance": i} for t, i in nuggets.items()]
        lines.append(json.dumps({"qid": q.qid, "nuggets": listed}) + "\n")
    return "".join(lines).encode()


def _held(part: str, whole: str) -> int:
    """2 when ``whole`` holds ``part`` (white space aside), 1 when it holds at least half of
    its words, else 0."""
    if " ".join(part.split()) in " ".join(whole.split()):
        return 2
    words, held = set(tokens(part)), set(tokens(whole))
    return 1 if words and 2 * len(words & held) >= len(words) else 0


def assign(nugget: str, sentences: Sequence[str]) -> int:
    """The assessor's grade of a nugget in an answer (its ``sentences``)."""
    return max((_held(nugget, s) for s in sentences), default=0)


def support(sentence: str, segment: str) -> int:
    """The assessor's grade of a cited ``segment``'s support of ``sentence``."""
    return _held(sentence, segment)
