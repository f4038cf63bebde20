"""Judgments carried between two chunkings of Cranfield (../shared/data; skipped when absent).

This checks the mechanics on real text, not relevance truth. Cranfield's 1,400 abstracts
(``cran.all.1400``, the ``.W`` field, which begins with the title) are read as the service reads
SMART text, lines joined into paragraphs (a line indented by two or more columns starts one),
except that paragraphs are separated by a blank line rather than a single newline, so that the
blank-line rule of ``paragraph`` and of the sentence rule sees them. Cranfield is all lower
case, so the sentence rule splits at paragraph breaks and before digits (``0. 7``).

Chunking A is ``fixed(size=300,overlap=50)``, B ``sentence_window(window=2)``. Every A passage
of a judged document is judged with the document's grade mapped to 0-3 (``GRADE``: Cleverdon's
1 "complete answer" -> 3, 2 "high degree of relevance" -> 2, 3 "useful" and 4 "minimum
interest" -> 1, -1 and 5 "no interest" -> 0), then carried to B with ``min_share`` 0.5.

What the rule must give, worked out: A's passages of a document overlap one another (checked),
so their union is one interval, from the document's first to its last non-whitespace character,
and every B chunk of the document lies in it. So for a (topic, document) judged g:

* g = 0: every span is a passage judged 0, none relevant: every B chunk is 0 (rule 2);
* g > 0: every span is judged g: a B chunk is g when it holds at least half of one A passage
  (rule 1), else unjudged (rule 2 needs a span judged 0; there is none), never another grade.
  Checked below against a direct count of characters over every (B chunk, A passage) pair.

The document's derived grade is g exactly when one of its B chunks is carried as g. That is not
a theorem (a relevant document whose B chunks each held less than half of every A passage would
lose its judgment, and the report would list it), but it holds for every judged Cranfield
document with text here, which is asserted. One judged pair, topic 125 and document 995, has no
text (nor does document 471): no chunk under either chunking, so no span and nothing to carry.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import pytest

from metrics.passages import (
    Carried,
    Chunk,
    Chunking,
    JudgedSpan,
    carry_judgments,
    document_qrels,
    judged_spans,
    passage_id,
)
from tests._shared_data import needs_shared_data, shared_data_path

pytestmark = [pytest.mark.data, needs_shared_data("cranfield")]

GRADE = {1: 3, 2: 2, 3: 1, 4: 1, 5: 0, -1: 0}
A = Chunking.parse("fixed(size=300,overlap=50)")
B = Chunking.parse("sentence_window(window=2)")
FINE = Chunking.parse("fixed(size=100,overlap=0)")  # for the answer span


@dataclass(frozen=True)
class Cranfield:
    texts: dict[str, str]  # docid -> .W text, paragraphs separated by a blank line
    qrels: dict[str, dict[str, int]]  # topic -> docid -> grade mapped to 0-3
    a: dict[str, list[Chunk]]
    b: dict[str, list[Chunk]]
    carried: Carried  # every A passage of a judged document judged its grade, carried to B


def _paragraphs(lines: Sequence[str]) -> str:
    paragraphs: list[list[str]] = []
    for line in lines:
        if line.strip():
            if not paragraphs or line.startswith("  "):
                paragraphs.append([])
            paragraphs[-1].append(line.strip())
    return "\n\n".join(" ".join(p) for p in paragraphs)


def _read_texts(path: Path) -> dict[str, str]:
    fields: dict[str, dict[str, list[str]]] = {}
    docid, field = "", ""
    for line in path.read_text().splitlines():
        marker = re.fullmatch(r"\.([ITABW])(?:\s+(.*))?", line)
        if marker and marker.group(1) == "I":
            docid, field = (marker.group(2) or "").strip(), ""
            fields[docid] = {}
        elif marker:
            field = marker.group(1)
            fields[docid][field] = []
        elif field:
            fields[docid][field].append(line)
    return {d: _paragraphs(f.get("W", [])) for d, f in fields.items()}


def _read_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            topic, docid, grade = line.split()
            qrels.setdefault(topic, {})[docid] = GRADE[int(grade)]
    return qrels


@pytest.fixture(scope="module")
def cran() -> Cranfield:
    root = shared_data_path("cranfield")
    texts = _read_texts(root / "cran.all.1400")
    qrels = _read_qrels(root / "cranqrel")
    a = {d: A.chunk(t) for d, t in texts.items()}
    b = {d: B.chunk(t) for d, t in texts.items()}
    labels = {
        topic: {passage_id(d, c.pid): g for d, g in docs.items() for c in a[d]}
        for topic, docs in qrels.items()
    }
    return Cranfield(texts, qrels, a, b, carry_judgments(judged_spans(labels, a), b))


def _holds_half(chunk: Chunk, passage: Chunk) -> bool:
    overlap = min(chunk.end, passage.end) - max(chunk.start, passage.start)
    return 2 * overlap >= passage.end - passage.start


def test_the_collection_reads_as_expected(cran: Cranfield) -> None:
    assert len(cran.texts) == 1400
    assert sum(len(d) for d in cran.qrels.values()) == 1837
    assert [d for d, t in cran.texts.items() if not t.strip()] == ["471", "995"]
    # A's passages of a document overlap one another: their union is one interval
    for chunks in cran.a.values():
        assert all(p.start < q.end and q.start < p.end for p, q in pairwise(chunks))


def test_every_new_chunk_of_a_non_relevant_document_is_non_relevant(cran: Cranfield) -> None:
    pairs = 0
    for topic, docs in cran.qrels.items():
        for docid, grade in docs.items():
            if grade == 0:
                pairs += 1
                labels = cran.carried.labels[topic]
                got = [labels.get(passage_id(docid, c.pid)) for c in cran.b[docid]]
                assert got == [0] * len(cran.b[docid])
    assert pairs == 225  # cranqrel's -1 lines
    chunks = [len(cran.b[d]) for docs in cran.qrels.values() for d, g in docs.items() if g == 0]
    assert cran.carried.report.overall.non_relevant == sum(chunks)


def test_relevant_documents_carry_their_grade_where_a_chunk_holds_half_a_passage(
    cran: Cranfield,
) -> None:
    relevant = unknown = 0
    for topic, docs in cran.qrels.items():
        labels = cran.carried.labels[topic]
        for docid, grade in docs.items():
            if grade == 0:
                continue
            for chunk in cran.b[docid]:
                holds = any(_holds_half(chunk, p) for p in cran.a[docid])
                assert labels.get(passage_id(docid, chunk.pid)) == (grade if holds else None)
                relevant += holds
                unknown += not holds
    overall = cran.carried.report.overall
    assert (overall.relevant, overall.unknown) == (relevant, unknown)
    assert overall.chunks == sum(len(cran.b[d]) for docs in cran.qrels.values() for d in docs)
    assert overall.documents == 1836  # of 1,837 judged pairs, (125, 995) has no chunk
    assert unknown > 0  # short sentence windows (a title, a list's lines) do occur


def test_document_qrels_come_back_from_the_carried_passages(cran: Cranfield) -> None:
    with_text = {
        topic: {d: g for d, g in docs.items() if cran.texts[d].strip()}
        for topic, docs in cran.qrels.items()
    }
    assert document_qrels(cran.carried.labels) == with_text
    assert cran.carried.report.lost_topics == ()


# Checked by hand: for each judged document of these topics the A passages and B chunks were
# printed as offsets, and for every (B chunk, A passage) pair the overlap divided by the
# passage's length worked out from those offsets, then the rule applied. E.g. topic 138,
# document 1036 (grade 1 -> 3): A [0, 300), [245, 539), [485, 702); B [0, 89) holds 89/300 of
# the first, unjudged; B [90, 702) holds 210/300 of the first, 3. Document 846 (3): B
# [0, 1089) holds A's first four whole, B [1091, 1435) the last, [1215, 1435), whole; 953 (-1
# -> 0): one B chunk [0, 402) inside A's union [0, 402): 0. Relevant spans: 6 + 3 A passages,
# each held at least half by a B chunk. Topic 182: 685 (1 -> 3) B [0, 138) holds 138/294 of A
# [0, 294), unjudged ("0. 7" splits its title), then [139, 749) and [751, 1953), 3; 686 (3 -> 1)
# B [0, 77) 77/296, unjudged, two more 1; 634 (-1) two B chunks, 0. Topic 69: document 458
# (2 -> 2) is a column of short indented lines, 12 B chunks: [0, 642) holds A's first two whole
# and 150/300 of [492, 792), exactly half; the other 11 hold under a third of any A passage,
# unjudged, and A's last three passages (held at most 0.26, 0.26, 0.31) are lost spans; 570,
# 977, 336 (one B chunk each, holding every A passage whole) and 62 (two) relevant; 540 (-1)
# one chunk, 0.
HAND_CHECKED = {
    "138": {"documents": 3, "chunks": 5, "relevant": 3, "non_relevant": 1, "unknown": 1,
            "relevant_spans": 9, "lost_spans": 0},
    "182": {"documents": 3, "chunks": 8, "relevant": 4, "non_relevant": 2, "unknown": 2,
            "relevant_spans": 14, "lost_spans": 0},
    "69": {"documents": 6, "chunks": 18, "relevant": 6, "non_relevant": 1, "unknown": 11,
           "relevant_spans": 26, "lost_spans": 3},
}  # fmt: skip


@pytest.mark.parametrize("topic", HAND_CHECKED)
def test_coverage_of_three_topics_checked_by_hand(cran: Cranfield, topic: str) -> None:
    assert cran.carried.report.topics[topic].as_dict() == HAND_CHECKED[topic]


def test_an_answer_span_carries_where_its_passage_alone_would_not(cran: Cranfield) -> None:
    # Topic 16, document 266 (grade 2 -> 2), judged only in part: its A passage [250, 544) and,
    # inside it, the sentence marked as the answer. Carried to fixed(size=100,overlap=0), whose
    # chunks of 100 characters cannot hold half (147) of an A passage: B's sentence windows
    # here are paragraph pairs, long enough to hold half a passage around any sentence.
    text = cran.texts["266"]
    start = text.index("solid-body, inlet, and purely internal flow problems")
    answer = JudgedSpan(start, text.index(" .", start) + 2, 2, "answer")
    assert (answer.start, answer.end) == (407, 475)
    passage = next(c for c in cran.a["266"] if c.pid == "p1")
    assert (passage.start, passage.end) == (250, 544)
    fine: Mapping[str, list[Chunk]] = {
        "266": Chunking.parse("fixed(size=100,overlap=0)").chunk(text)
    }
    holding = [c for c in fine["266"] if c.start <= answer.start and answer.end <= c.end]
    assert [(c.pid, c.start, c.end) for c in holding] == [("p4", 390, 490)]

    spans = [JudgedSpan(passage.start, passage.end, 2), answer]
    with_answer = carry_judgments({"16": {"266": spans}}, fine)
    # the chunk holding the answer is relevant; every other is unjudged: the ones inside the
    # passage hold under half of it, the rest lie where nothing was judged
    assert with_answer.labels == {"16": {"266#p4": 2}}
    counts = with_answer.report.topics["16"]
    assert (counts.chunks, counts.relevant, counts.unknown) == (16, 1, 15)
    assert (counts.relevant_spans, counts.lost_spans) == (2, 1)  # the passage itself is lost

    without = carry_judgments({"16": {"266": spans[:1]}}, fine)
    assert without.labels == {"16": {}}
    assert without.report.lost_topics == ("16",)
