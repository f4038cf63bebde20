"""Passages in the service (issue 33, points 1-2): chunkings derived or imported, runs ranking
passages, documents that keep their text, and qrels carried by their spans to a new chunking or
taken to documents, with the rule and the coverage stated."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from judging.assessments.carryover import qrels_carry, qrels_to_documents
from judging.assessments.models import Judgment, JudgmentChange, QrelsEntry, QrelsVersion
from judging.assessments.services import qrels_import
from judging.campaigns.models import Campaign, Chunking, Passage
from judging.campaigns.passages import passage_text, text_ids
from judging.campaigns.services import documents_import, run_submit
from judging.core.errors import Conflict, InvalidInput
from judging.workflows.passages import chunking_made
from metrics.passages import Chunking as Chunker

# d1: three paragraphs; the answer to 401 is the middle one's second sentence
P1 = "Solar sails ride on light. They need no fuel."
P2 = "A sail of one square kilometre feels a tiny push. The push adds up over months."
P3 = "Rockets burn fuel and are fast at first."
D1 = f"{P1}\n\n{P2}\n\n{P3}"
DOCS = (
    json.dumps({"docid": "d1", "title": "Sails", "text": D1})
    + "\n"
    + json.dumps({"docid": "d2", "title": "Rockets", "text": "Rockets are loud. They burn fuel."})
    + "\n"
).encode()


@pytest.fixture
def with_docs(campaign: Campaign) -> Campaign:
    documents_import(campaign=campaign, data=DOCS)
    return campaign


def _passages(chunking: Chunking) -> dict[str, tuple[int, int]]:
    rows = Passage.objects.filter(chunking=chunking).values_list("passage_id", "start", "end")
    return {pid: (s, e) for pid, s, e in rows}


def test_a_chunker_cuts_every_document_under_ids_that_name_the_chunking(
    with_docs: Campaign,
) -> None:
    chunking = chunking_made(campaign=with_docs, name="para", spec="paragraph")
    assert chunking.spec == "paragraph(min_chars=0)"
    got = _passages(chunking)
    expected = {
        f"{docid}#para-{c.pid[1:]}": (c.start, c.end)
        for docid, text in (("d1", D1), ("d2", "Rockets are loud. They burn fuel."))
        for c in Chunker.parse("paragraph").chunk(text)
    }
    assert got == expected
    assert got["d1#para-1"] == (D1.index(P2), D1.index(P2) + len(P2))
    assert (chunking.num_passages, chunking.num_documents) == (4, 2)
    shown = passage_text(with_docs.pk, "d1#para-1")
    assert shown is not None and shown.document.docid == "d1" and shown.chunking == "para"
    assert shown.document.text[slice(*shown.passage or (0, 0))] == P2
    assert passage_text(with_docs.pk, "d1") is not None
    assert passage_text(with_docs.pk, "d1#nope") is None
    assert {"d1", "d1#para-2"} <= text_ids(with_docs)


def test_bad_chunkings_are_named_and_nothing_is_stored(with_docs: Campaign) -> None:
    with pytest.raises(InvalidInput) as caught:
        chunking_made(campaign=with_docs, name="f", spec="fixed(size=100,overlap=100)")
    assert "overlap" in caught.value.problems[0].message
    with pytest.raises(InvalidInput, match="name is not valid"):
        chunking_made(campaign=with_docs, name="has space", spec="paragraph")
    chunking_made(campaign=with_docs, name="para", spec="paragraph")
    with pytest.raises(Conflict, match="already"):
        chunking_made(campaign=with_docs, name="para", spec="fixed")
    with pytest.raises(InvalidInput, match="derived by a chunker or imported"):
        chunking_made(campaign=with_docs, name="x")
    assert Chunking.objects.count() == 1


def test_a_teams_own_passages_import_with_every_problem_named(with_docs: Campaign) -> None:
    bad = (
        "docid\tpassage_id\tstart\tend\n"
        "d1\tc1\t0\t26\n"
        "d9\tc2\t0\t5\n"  # no such document
        f"d1\tc3\t10\t{len(D1) + 1}\n"  # past the end
        "d1\tc1\t30\t40\n"  # given twice
        "d2\tc4\tfive\t9\n"
        "d2\tc5\t\u00b2\t9\n"  # a superscript two is no offset
    ).encode() + b"d2\tc6\t1\t2\xff\n"  # not UTF-8
    with pytest.raises(InvalidInput) as caught:
        chunking_made(campaign=with_docs, name="team", data=bad)
    by_line = {p.line: p.message for p in caught.value.problems}
    assert "'d9' is not in the campaign" in by_line[3]
    assert f"whose text has {len(D1)} characters" in by_line[4]
    assert "given twice (line 2)" in by_line[5]
    assert "whole numbers" in by_line[6] and "whole numbers" in by_line[7]
    assert any("UTF-8" in p.message for p in caught.value.problems if p.line == 8)
    assert not Chunking.objects.exists() and not Passage.objects.exists()
    good = "\n".join(
        json.dumps(r)
        for r in (
            {"docid": "d1", "passage_id": "c1", "start": 0, "end": 26},
            {"docid": "d2", "passage_id": "d2#rk0", "start": 0, "end": 17},
            # an id naming another document before its # is d2's local id, not d1's passage
            {"docid": "d2", "passage_id": "d1#x", "start": 0, "end": 5},
        )
    ).encode()
    chunking = chunking_made(campaign=with_docs, name="team", data=good)
    assert _passages(chunking) == {"d1#c1": (0, 26), "d2#rk0": (0, 17), "d2#d1#x": (0, 5)}
    assert chunking.spec == "imported"


def test_a_run_of_passages_is_known_and_its_pool_is_servable(
    with_docs: Campaign, researcher: Any
) -> None:
    chunking_made(campaign=with_docs, name="para", spec="paragraph")
    lines = b"401 Q0 d1#para-1 1 9.0 dense\n401 Q0 d1#para-0 2 8.0 dense\n"
    run = run_submit(campaign=with_docs, owner=researcher, data=lines, pooled=True)
    assert not [w for w in run.submission_warnings if "not among" in w.message]
    unknown = run_submit(
        campaign=with_docs, owner=researcher, data=b"401 Q0 d1#para-9 1 9.0 other\n", pooled=False
    )
    assert any("not among" in w.message for w in unknown.submission_warnings)


def test_a_document_with_passages_keeps_its_text(with_docs: Campaign) -> None:
    chunking_made(campaign=with_docs, name="para", spec="paragraph")
    documents_import(campaign=with_docs, data=DOCS)  # the same text again: fine
    changed = DOCS.replace(b"Rockets are loud.", b"Rockets are LOUD.")
    with pytest.raises(InvalidInput) as caught:
        documents_import(campaign=with_docs, data=changed)
    assert "document 'd2'" in (caught.value.problems[0].location or "")
    assert "new docid" in caught.value.problems[0].message


def _judge(
    campaign: Campaign, annotator: Any, qid: str, item: str, grade: int, **spans: Any
) -> None:
    """A judgment and its history row, as the judging service records them."""
    topic = campaign.topics.get(qid=qid)
    judgment = Judgment.objects.create(
        campaign=campaign,
        topic=topic,
        docid=item,
        annotator=annotator,
        grade=grade,
        spans=spans or None,
    )
    JudgmentChange.objects.create(
        judgment=judgment,
        topic=topic,
        docid=item,
        annotator=annotator,
        old_grade=None,
        new_grade=grade,
        spans=spans or None,
    )


def test_judgments_carry_to_a_new_chunking_by_their_spans(
    with_docs: Campaign, annotator: Any, make_user: Any
) -> None:
    chunking_made(campaign=with_docs, name="para", spec="paragraph")
    # the new cut: one sentence per passage
    fine = chunking_made(campaign=with_docs, name="sent", spec="sentence_window(window=1)")
    sentences = _passages(fine)
    answer = D1.index("The push adds up")
    _judge(with_docs, annotator, "401", "d1#para-1", 2, answers=[[answer, answer + 30]])
    qrels = b"401 0 d1#para-0 0\n401 0 d1#para-1 2\n402 0 d2#para-0 1\n"
    v1 = qrels_import(campaign=with_docs, data=qrels)
    # an answer marked after the version was made is not the version's: not carried
    _judge(with_docs, make_user("late", "annotator"), "401", "d1#para-1", 2, answers=[[0, 5]])
    v2 = qrels_carry(version=v1, chunking=fine)
    got = {
        (e.topic.qid, e.docid): e.grade
        for e in QrelsEntry.objects.filter(version=v2).select_related("topic")
    }
    by_text = {D1[s:e] if pid.startswith("d1") else pid: pid for pid, (s, e) in sentences.items()}
    expected = {
        ("401", by_text["Solar sails ride on light."]): 0,  # inside the non-relevant paragraph
        ("401", by_text["They need no fuel."]): 0,
        # the relevant paragraph's first sentence holds 49 of its 79 characters (62% >= 50%)
        ("401", by_text["A sail of one square kilometre feels a tiny push."]): 2,
        # the second holds 29 (37%), under half: relevant by the answer span inside it
        ("401", by_text["The push adds up over months."]): 2,
        # d2 judged whole through its one paragraph: 17 of 33 characters (51.5%) and 15 (45%)
        ("402", "d2#sent-0"): 1,
    }
    assert got == expected
    assert D1[slice(*sentences[by_text["Rockets burn fuel and are fast at first."]])]
    derivation = v2.derivation
    assert derivation.base == v1 and derivation.chunking == fine
    assert "at least 50%" in derivation.rule
    overall = derivation.report["overall"]
    # d1's last sentence (outside every judged span) and d2's second stay unjudged
    assert (overall["relevant"], overall["non_relevant"], overall["unknown"]) == (3, 2, 2)
    assert derivation.report["lost_topics"] == []
    assert v2.source == "derived" and "carried to chunking 'sent'" in v2.note
    # at document level: the highest grade of each document's passages
    v3 = qrels_to_documents(version=v1)
    docs = {
        (e.topic.qid, e.docid): e.grade
        for e in QrelsEntry.objects.filter(version=v3).select_related("topic")
    }
    assert docs == {("401", "d1"): 2, ("402", "d2"): 1}
    assert v3.derivation.report["passage_rows"] == 3


def test_carrying_refuses_what_it_cannot_carry(with_docs: Campaign) -> None:
    qrels_import(campaign=with_docs, data=b"401 0 d1 1\n")
    v1 = QrelsVersion.objects.get(campaign=with_docs)
    with pytest.raises(InvalidInput, match="names no passage"):
        qrels_to_documents(version=v1)
    chunking = chunking_made(campaign=with_docs, name="para", spec="paragraph")
    with pytest.raises(InvalidInput, match=r"carry rule"):
        qrels_carry(version=v1, chunking=chunking, min_share=0)
    # a document judged whole carries too: its span is the whole text
    v2 = qrels_carry(version=v1, chunking=chunking)
    assert QrelsEntry.objects.filter(version=v2, grade=1).count() == 0  # each paragraph < 50%
    assert v2.derivation.report["overall"]["unknown"] == 3


def test_the_commands_cut_carry_and_report(with_docs: Campaign) -> None:
    out = io.StringIO()
    call_command(
        "chunk_documents", campaign=with_docs.name, name="para", chunker="paragraph", stdout=out
    )
    assert "4 passages of 2 documents" in out.getvalue()
    call_command(
        "chunk_documents",
        campaign=with_docs.name,
        name="halves",
        chunker="fixed(size=60,overlap=0)",
        stdout=io.StringIO(),
    )
    qrels_import(campaign=with_docs, data=b"401 0 d1#para-1 2\n401 0 d1#para-0 0\n")
    out = io.StringIO()
    call_command("carry_qrels", campaign=with_docs.name, chunking="halves", stdout=out)
    text = out.getvalue()
    assert "qrels version 2" in text and "rule: A new chunk gets grade g" in text
    assert "topics that lost every relevant judgment" in text
    with pytest.raises(CommandError, match="no chunking 'nope'"):
        call_command("carry_qrels", campaign=with_docs.name, chunking="nope")
    out = io.StringIO()
    call_command("carry_qrels", campaign=with_docs.name, version=1, documents=True, stdout=out)
    assert "at document level" in out.getvalue()


def test_judgments_of_the_new_chunking_publish_onto_the_carried_version(
    with_docs: Campaign, annotator: Any
) -> None:
    from judging.assessments.carryover import qrels_publish_onto
    from judging.assessments.services import qrels_publish

    chunking_made(campaign=with_docs, name="para", spec="paragraph")
    fine = chunking_made(campaign=with_docs, name="sent", spec="sentence_window(window=1)")
    v1 = qrels_import(campaign=with_docs, data=b"401 0 d1#para-1 2\n")
    v2 = qrels_carry(version=v1, chunking=fine)
    with pytest.raises(InvalidInput, match="nothing to publish"):
        qrels_publish_onto(base=v2)
    with pytest.raises(InvalidInput, match="carried to a chunking"):
        qrels_publish_onto(base=v1)
    # a hole judged: d1's last sentence, unjudged by the carry-over; and a paragraph judged
    _judge(with_docs, annotator, "401", "d1#sent-4", 0)
    _judge(with_docs, annotator, "401", "d1#para-2", 1)
    v3 = qrels_publish_onto(base=v2)
    assert (v3.extends, v3.minor_label) == (v2, "2.1")
    rows = {e.docid: e.grade for e in QrelsEntry.objects.filter(version=v3)}
    carried = {e.docid: e.grade for e in QrelsEntry.objects.filter(version=v2)}
    assert rows == {**carried, "d1#sent-4": 0}  # the paragraph's judgment stays out
    assert "1 judgments of its passages (1 new)" in v3.note
    # a plain publish holds both chunkings' items, and its note says so
    mixed, _ = qrels_publish(campaign=with_docs)
    assert "mixes the items of several chunkings" in mixed.note
    assert "passages of 'para'" in mixed.note and "passages of 'sent'" in mixed.note


def test_a_passage_can_be_a_gold_item(with_docs: Campaign) -> None:
    from judging.assessments.gold import GoldRow, gold_import

    chunking_made(campaign=with_docs, name="para", spec="paragraph")
    rows = [GoldRow("401", "d1#para-1", 2, 1), GoldRow("401", "d1#para-9", 2, 2)]
    with pytest.raises(InvalidInput) as caught:
        gold_import(campaign=with_docs, rows=rows)
    assert [p.line for p in caught.value.problems] == [2]  # no such passage; the first is known
    made = gold_import(campaign=with_docs, rows=rows[:1])
    assert made.created == 1
