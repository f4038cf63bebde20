"""The retrieval demo's generated data (`judging.demo.rag`): a help centre, 40 questions with
answer spans, a simulated assessor and three retrieval setups that tell the story: BM25 wins where
questions use the answer's words, the dense stand-in where they paraphrase, their fusion overall,
and switching stemming off loses recall."""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping

import pytest

from judging.demo.rag import (
    CHUNKING_A,
    CHUNKING_B,
    SETUPS,
    RagCollection,
    RagQuestion,
    RunDict,
    Span,
    answer_marks,
    build,
    grade,
)
from judging.demo.rag.retrieval import FUSION_DEPTH, bm25, dense, stem, tokens
from metrics import EvaluationResult, Evaluator
from metrics.evaluation.check import FAIL, regression_check
from metrics.passages import Carried, Chunking, carry_judgments, split_passage_id
from metrics.passages.sentences import sentence_spans

TYPES = {"factoid", "how-to", "numeric", "policy"}
WORDINGS = {"lexical", "paraphrase"}
MEASURES = ["R@5", "RR@10", "nDCG@5"]

Qrels = dict[str, dict[str, int]]
Runs = dict[str, dict[str, RunDict]]  # chunking -> setup -> run


@pytest.fixture(scope="module")
def collection() -> RagCollection:
    return build()


@pytest.fixture(scope="module")
def runs(collection: RagCollection) -> Runs:
    """chunking -> setup -> run."""
    return {c: collection.runs(c) for c in (CHUNKING_A, CHUNKING_B)}


@pytest.fixture(scope="module")
def truth_a(collection: RagCollection) -> Qrels:
    """Every passage of the first cut judged by the simulated assessor."""
    return collection.truth_qrels(CHUNKING_A)


@pytest.fixture(scope="module")
def carried_b(collection: RagCollection, truth_a: Qrels) -> Carried:
    return carry_judgments(
        collection.judged_spans(truth_a, CHUNKING_A), collection.chunks(CHUNKING_B)
    )


def _evaluate(
    qrels: Mapping[str, Mapping[str, int]], runs: dict[str, RunDict]
) -> dict[str, EvaluationResult]:
    evaluator = Evaluator(qrels, MEASURES, ci=None)
    return {name: evaluator.evaluate(run) for name, run in runs.items()}


def _question(collection: RagCollection, qid: str) -> RagQuestion:
    return next(q for q in collection.questions if q.qid == qid)


def _text(collection: RagCollection, span: Span) -> str:
    document = next(d for d in collection.documents if d.docid == span.docid)
    return document.text[span.start : span.end]


# --- the collection -----------------------------------------------------------------------


def test_the_collection_is_the_same_on_every_call(runs: Runs) -> None:
    a, b = build(), build()
    assert a == b
    assert b.runs(CHUNKING_A) == runs[CHUNKING_A]


def test_the_help_centre_is_a_few_dozen_articles_of_short_paragraphs(
    collection: RagCollection,
) -> None:
    documents = collection.documents
    assert 60 <= len(documents) <= 80
    assert all(re.fullmatch(r"kb-\d{3}", d.docid) for d in documents)
    assert len({d.docid for d in documents}) == len(documents)
    assert len({d.title for d in documents}) == len(documents)
    for d in documents:
        paragraphs = d.text.split("\n\n")
        assert 3 <= len(paragraphs) <= 6, d.docid
        for paragraph in paragraphs:
            assert 2 <= len(sentence_spans(paragraph)) <= 4, (d.docid, paragraph)


def test_forty_questions_four_of_them_without_an_answer(collection: RagCollection) -> None:
    questions = collection.questions
    assert [q.qid for q in questions] == [f"q{i:02d}" for i in range(1, 41)]
    no_answer = [q for q in questions if "no-answer" in q.tags]
    assert len(no_answer) == 4
    assert all(q.tags == ("no-answer",) and not q.answers and not q.related for q in no_answer)
    for q in questions:
        if q not in no_answer:
            assert q.answers, q.qid
            assert len(set(q.tags) & TYPES) == 1 and len(set(q.tags) & WORDINGS) == 1, q.qid
    answerable = [q for q in questions if q not in no_answer]
    assert {t for q in answerable for t in q.tags} == TYPES | WORDINGS
    assert sum("paraphrase" in q.tags for q in answerable) >= 12
    assert sum("lexical" in q.tags for q in answerable) >= 12


def test_every_answer_and_related_span_is_a_sentence_of_its_document(
    collection: RagCollection,
) -> None:
    texts = {d.docid: d.text for d in collection.documents}
    for q in collection.questions:
        for span in (*q.answers, *q.related):
            text = texts[span.docid]
            sentence = text[span.start : span.end]
            assert sentence[-1] in ".?!" and sentence[0].isupper(), (q.qid, sentence)
            assert "\n" not in sentence  # within one paragraph
            assert (span.start, span.end) in sentence_spans(text), (q.qid, sentence)


def test_answer_spans_hold_the_planted_sentences(collection: RagCollection) -> None:
    q01 = _question(collection, "q01")
    assert [_text(collection, a) for a in q01.answers] == [
        "Payment is due 30 days after the invoice date."
    ]
    q11 = _question(collection, "q11")  # two articles answer it
    assert len({a.docid for a in q11.answers}) == 2
    assert all("30 days" in _text(collection, a) for a in q11.answers)


@pytest.mark.parametrize("chunking", [CHUNKING_A, CHUNKING_B])
def test_each_chunking_cuts_every_article_into_passages(
    collection: RagCollection, chunking: str
) -> None:
    chunks = collection.chunks(chunking)
    assert set(chunks) == {d.docid for d in collection.documents}
    assert all(chunks.values())
    passages = collection.passages(chunking)
    assert len(passages) == sum(len(c) for c in chunks.values())
    assert all(text and text == text.strip() for _, text in passages)
    if chunking == CHUNKING_A:  # paragraphs
        assert len(passages) == sum(len(d.text.split("\n\n")) for d in collection.documents)
    else:
        size = Chunking.parse(chunking).param("size")
        assert max(len(text) for _, text in passages) <= size


# --- the simulated assessor ---------------------------------------------------------------

TOY = RagQuestion("t1", "toy", ("factoid", "lexical"), (Span("d", 10, 20),), (Span("d", 30, 40),))


@pytest.mark.parametrize(
    ("docid", "start", "end", "expected"),
    [
        ("d", 0, 100, 2),  # holds the whole answer
        ("d", 15, 25, 2),  # exactly half of it: 5 of 10 characters
        ("d", 16, 25, 1),  # 4 of 10: a part of the answer only
        ("d", 35, 50, 1),  # overlaps the related sentence
        ("d", 20, 30, 0),  # touches both, overlaps neither
        ("e", 0, 100, 0),  # another document
    ],
)
def test_the_assessor_grades_by_the_share_of_the_answer_held(
    docid: str, start: int, end: int, expected: int
) -> None:
    assert grade(TOY, docid, start, end) == expected


def test_the_assessor_marks_the_answer_it_holds_cut_to_the_passage() -> None:
    assert answer_marks(TOY, "d", 0, 100) == [(10, 20)]
    assert answer_marks(TOY, "d", 15, 25) == [(15, 20)]
    assert answer_marks(TOY, "d", 16, 25) == []
    assert answer_marks(TOY, "e", 0, 100) == []


def test_the_assessor_on_the_real_paragraphs(collection: RagCollection) -> None:
    q01 = _question(collection, "q01")
    answer = q01.answers[0]
    paragraphs = collection.chunks(CHUNKING_A)[answer.docid]
    graded = {c.pid: grade(q01, answer.docid, c.start, c.end) for c in paragraphs}
    (holder,) = [c for c in paragraphs if c.start <= answer.start and answer.end <= c.end]
    assert graded[holder.pid] == 2
    assert answer_marks(q01, answer.docid, holder.start, holder.end) == [(answer.start, answer.end)]
    assert sorted(graded.values()).count(2) == 1  # the other paragraphs do not answer
    for q in collection.questions:
        if "no-answer" in q.tags:
            assert grade(q, answer.docid, holder.start, holder.end) == 0


# --- the setups ---------------------------------------------------------------------------


@pytest.mark.parametrize("chunking", [CHUNKING_A, CHUNKING_B])
def test_setups_return_ranked_passages_for_every_question(
    collection: RagCollection,
    runs: Runs,
    chunking: str,
) -> None:
    ids = {pid for pid, _ in collection.passages(chunking)}
    texts = dict(collection.passages(chunking))
    qids = {q.qid for q in collection.questions}
    assert set(runs[chunking]) == {s.name for s in SETUPS}
    for name, run in runs[chunking].items():
        if name in ("dense", "hybrid"):
            assert set(run) == qids and all(len(r) == 20 for r in run.values()), name
        for qid, ranked in run.items():
            assert 1 <= len(ranked) <= 20 and set(ranked) <= ids
            scores = list(ranked.values())
            assert all(a > b for a, b in itertools.pairwise(scores)), (name, qid)
    # BM25 returns the passages sharing a (stemmed) term with the question, up to 20 of them
    for q in collection.questions:
        terms = set(tokens(q.text))
        for pid in runs[chunking]["bm25"].get(q.qid, {}):
            assert terms & set(tokens(texts[pid])), (q.qid, pid)
    assert sum(len(runs[chunking]["bm25"].get(q, {})) == 20 for q in qids) >= 25


def test_the_crude_stemmer_conflates_inflections() -> None:
    assert {stem(w) for w in ("rotate", "rotated", "rotating", "rotation")} == {"rotat"}
    assert {stem(w) for w in ("copy", "copies", "copied")} == {"copy"}
    assert stem("access") == "access"  # -ss is kept


def _ask(text: str) -> RagQuestion:
    return RagQuestion("x", text, ("factoid", "lexical"), ())


def test_bm25_scores_a_hand_worked_example() -> None:
    passages = [("a", "Refunds and a refund policy."), ("b", "The invoice policy.")]
    run = bm25(passages, [_ask("How are refunds made?")])
    # "refunds" -> "refund", in a only (tf 2); stopwords "and", "a", "the" dropped, so a has 3
    # terms (refund, refund, policy), b 2 (invoic, policy); avgdl 2.5, N 2, df 1
    idf = math.log(1 + (2 - 1 + 0.5) / (1 + 0.5))
    norm = 0.9 * (1 - 0.4 + 0.4 * 3 / 2.5)
    assert run == {"x": {"a": pytest.approx(idf * 2 * 1.9 / (2 + norm), abs=1e-9)}}


def test_the_dense_stand_in_reads_paraphrases_as_the_same_words() -> None:
    passages = [("p1", "Past invoices."), ("p2", "Bucket names are global.")]
    run = dense(passages, [_ask("Old bills?")])
    assert list(run["x"]) == ["p1", "p2"]
    assert run["x"]["p1"] == pytest.approx(1.0)  # "old bills" folds to "past invoice"


def test_hybrid_is_the_reciprocal_rank_fusion_of_bm25_and_dense(
    collection: RagCollection, runs: Runs
) -> None:
    passages = collection.passages(CHUNKING_A)
    components = [f(passages, collection.questions, depth=FUSION_DEPTH) for f in (bm25, dense)]
    for qid, ranked in runs[CHUNKING_A]["hybrid"].items():
        for pid, score in ranked.items():
            fused = sum(
                1 / (60 + list(run[qid]).index(pid) + 1) for run in components if pid in run[qid]
            )
            assert score == pytest.approx(fused, abs=1e-7), (qid, pid)


def test_no_answer_questions_are_excluded_from_the_evaluation(truth_a: Qrels, runs: Runs) -> None:
    result = Evaluator(truth_a, ["R@5"], ci=None).evaluate(runs[CHUNKING_A]["hybrid"])
    assert len(result.queries) == 36
    assert {e.qid for e in result.excluded} == {"q09", "q19", "q29", "q39"}
    assert result.excluded_summary == ["4 of 40 queries excluded: no relevant documents"]


@pytest.mark.parametrize("which", ["truth A", "carried B"])
def test_hybrid_wins_overall(truth_a: Qrels, carried_b: Carried, runs: Runs, which: str) -> None:
    qrels, chunking = (
        (truth_a, CHUNKING_A) if which == "truth A" else (carried_b.labels, CHUNKING_B)
    )
    results = _evaluate(qrels, runs[chunking])
    for single in ("bm25", "dense"):
        assert any(
            results["hybrid"].value(m) >= results[single].value(m) for m in ("R@5", "nDCG@5")
        ), single


def test_bm25_wins_where_questions_use_the_answers_words_dense_where_they_paraphrase(
    collection: RagCollection,
    truth_a: Qrels,
    runs: Runs,
) -> None:
    results = _evaluate(truth_a, runs[CHUNKING_A])
    ndcg = {name: r.per_query["nDCG@5"] for name, r in results.items()}
    bm25_wins = {q for q in ndcg["bm25"] if ndcg["bm25"][q] > ndcg["dense"][q]}
    dense_wins = {q for q in ndcg["bm25"] if ndcg["dense"][q] > ndcg["bm25"][q]}
    assert len(bm25_wins) >= 3 and len(dense_wins) >= 3

    def mean(name: str, tag: str) -> float:
        qids = [q.qid for q in collection.questions if tag in q.tags]
        return sum(ndcg[name][q] for q in qids) / len(qids)

    assert mean("bm25", "lexical") > mean("dense", "lexical")
    assert mean("dense", "paraphrase") > mean("bm25", "paraphrase")


@pytest.mark.parametrize("which", ["truth A", "carried B"])
def test_switching_stemming_off_loses_recall(
    truth_a: Qrels, carried_b: Carried, runs: Runs, which: str
) -> None:
    qrels, chunking = (
        (truth_a, CHUNKING_A) if which == "truth A" else (carried_b.labels, CHUNKING_B)
    )
    results = _evaluate(qrels, runs[chunking])
    assert results["bm25"].value("R@5") - results["bm25_nostem"].value("R@5") >= 0.05
    check = regression_check(
        qrels, runs[chunking]["bm25_nostem"], runs[chunking]["bm25"], ["R@5"], max_drop=0.02
    )
    assert check.verdict == FAIL


# --- the re-chunk -------------------------------------------------------------------------


def test_judgments_carry_to_the_re_chunk_with_some_passages_unknown(
    collection: RagCollection,
    carried_b: Carried,
) -> None:
    report = carried_b.report
    assert report.overall.lost_spans == 0 and not report.lost_topics
    assert report.overall.relevant > 0 and report.overall.unknown > 0
    # what the assessor would grade 2 on the new passages, the carry-over grades 2 (answer marks)
    chunks = collection.chunks(CHUNKING_B)
    for q in collection.questions:
        for docid, doc_chunks in chunks.items():
            for c in doc_chunks:
                if grade(q, docid, c.start, c.end) == 2:
                    assert carried_b.labels[q.qid].get(f"{docid}#{c.pid}") == 2
    carried_docs = {split_passage_id(p)[0] for q in carried_b.labels.values() for p in q}
    assert carried_docs <= set(chunks)
