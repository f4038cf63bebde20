"""The built collection: documents, questions with their answer spans, and what the story needs
of them (passages of a chunking, the runs of the setups, the assessor's labels)."""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass

from judging.demo.rag.assessor import answer_marks, grade
from judging.demo.rag.corpus import RagDocument, write_documents
from judging.demo.rag.questions import FACTS, RagQuestion, Span
from judging.demo.rag.retrieval import SETUPS, RunDict
from metrics.passages import Chunk, Chunking, JudgedSpan, passage_id

SEED = 20240533
CHUNKING_A = "paragraph"  # the first cut, judged
CHUNKING_B = "fixed(size=240,overlap=40)"  # the re-chunk the judgments are carried to


@dataclass(frozen=True)
class RagCollection:
    documents: tuple[RagDocument, ...]  # in docid order
    questions: tuple[RagQuestion, ...]  # q01..q40

    def chunks(self, chunking: str) -> dict[str, list[Chunk]]:
        """docid -> the chunks of its text under ``chunking`` (``paragraph``, ``fixed(...)``)."""
        cut = Chunking.parse(chunking)
        return {d.docid: cut.chunk(d.text) for d in self.documents}

    def passages(self, chunking: str) -> list[tuple[str, str]]:
        """``(docid#pid, text)`` of every passage, in docid then passage order."""
        texts = {d.docid: d.text for d in self.documents}
        return [
            (passage_id(docid, c.pid), texts[docid][c.start : c.end])
            for docid, chunks in self.chunks(chunking).items()
            for c in chunks
        ]

    def runs(self, chunking: str) -> dict[str, RunDict]:
        """Setup name -> its run over the passages of ``chunking`` (at most 20 a question)."""
        passages = self.passages(chunking)
        return {s.name: s.retrieve(passages, self.questions) for s in SETUPS}

    def truth_qrels(self, chunking: str) -> dict[str, dict[str, int]]:
        """qid -> ``docid#pid`` -> grade of every passage of ``chunking``: the simulated assessor
        asked about all of them (a no-answer question's passages are all 0)."""
        chunks = self.chunks(chunking)
        return {
            q.qid: {
                passage_id(docid, c.pid): grade(q, docid, c.start, c.end)
                for docid, doc_chunks in chunks.items()
                for c in doc_chunks
            }
            for q in self.questions
        }

    def judged_spans(
        self, labels: Mapping[str, Mapping[str, int]], chunking: str
    ) -> dict[str, dict[str, list[JudgedSpan]]]:
        """The judged passages ``labels`` (qid -> ``docid#pid`` -> grade, made on ``chunking``)
        as spans for :func:`metrics.passages.carry_judgments`, with the assessor's answer marks
        in each passage graded 2."""
        offsets = {
            passage_id(docid, c.pid): (docid, c.start, c.end)
            for docid, doc_chunks in self.chunks(chunking).items()
            for c in doc_chunks
        }
        by_qid = {q.qid: q for q in self.questions}
        out: dict[str, dict[str, list[JudgedSpan]]] = {}
        for qid, passages in labels.items():
            docs = out.setdefault(qid, {})
            for full, g in passages.items():
                docid, start, end = offsets[full]
                spans = docs.setdefault(docid, [])
                spans.append(JudgedSpan(start, end, g))
                if g == 2:
                    marks = answer_marks(by_qid[qid], docid, start, end)
                    spans += [JudgedSpan(s, e, g, "answer") for s, e in marks]
        return out


def build() -> RagCollection:
    """Generate the collection. Same output on every machine and every call."""
    planted: dict[str, list[str]] = {}
    for fact in FACTS:
        for key, sentence in (*fact.answers, *fact.related):
            if sentence not in planted.setdefault(key, []):
                planted[key].append(sentence)
    documents, where = write_documents(random.Random(SEED), planted)
    questions = tuple(
        RagQuestion(
            fact.qid,
            fact.question,
            fact.tags,
            tuple(Span(*where[a]) for a in fact.answers),
            tuple(Span(*where[r]) for r in fact.related),
        )
        for fact in FACTS
    )
    return RagCollection(tuple(documents), questions)
