"""Judgments stored against text spans (issue 33, points 1-2): a passage's judgment keeps the
passage's offsets in its document, the answer spans the assessor marks are checked, merged and
kept on the judgment and in its history, idempotently, through the API, the judging page's form
and going back; and the judging page shows a passage in its document's context."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from judging.assessments import queue
from judging.assessments.models import Judgment, JudgmentChange
from judging.campaigns.models import Campaign, Document
from judging.core.errors import InvalidInput
from judging.core.roles import account
from judging.workflows.passages import chunking_made
from judging.workflows.pools import pool_requested
from judging.workflows.runs import run_submitted
from tests.knobs import override_knobs

pytestmark = pytest.mark.django_db

# d1 in three paragraphs; the paragraph chunker makes d1#para-1 the middle one (P2)
P1 = "Solar sails ride on light. They need no fuel."
P2 = "A sail of one square kilometre feels a tiny push. The push adds up over months."
P3 = "Rockets burn fuel and are fast at first."
D1 = f"{P1}\n\n{P2}\n\n{P3}"
D2 = "Rockets are loud. They burn fuel."
PASSAGE = (D1.index(P2), D1.index(P2) + len(P2))  # (47, 126): P1 is 45 characters, P2 79


def span_of(text: str, part: str) -> list[int]:
    """``[start, end]`` of ``part`` in ``text`` (found once), the way an assessor marks it."""
    assert text.count(part) == 1, part
    start = text.index(part)
    return [start, start + len(part)]


@pytest.fixture
def passages(campaign: Campaign, researcher: Any, as_committed: Callable[[], Any]) -> Campaign:
    """Topic 401 pools the passage d1#para-1, then the whole document d2 (a run ranks both)."""
    Document.objects.create(campaign=campaign, docid="d1", title="Sails", text=D1)
    Document.objects.create(campaign=campaign, docid="d2", title="Rockets", text=D2)
    chunking_made(campaign=campaign, name="para", spec="paragraph")
    run_submitted(
        campaign=campaign,
        owner=researcher,
        tag="passage-run",
        results={"401": {"d1#para-1": 2.0, "d2": 1.0}},
        pooled=True,
    )
    with as_committed():
        version, _ = pool_requested(campaign=campaign, strategy="depth", depth=10)
    version.refresh_from_db()
    assert version.number == 1, version.error
    return campaign


@pytest.fixture
def client(annotator: Any, api_client_for: Callable[[Any], Any]) -> Any:
    return api_client_for(annotator)


def _lease(client: Any, campaign: Campaign) -> dict[str, Any]:
    r = client.post(f"/api/v1/campaigns/{campaign.pk}/leases/")
    assert r.status_code == 201, r.content
    return dict(r.json())


def _judge(client: Any, lease_id: int, grade: int, answers: Any = None, **more: Any) -> Any:
    body: dict[str, Any] = {"grade": grade, **more}
    if answers is not None:
        body["answers"] = answers
    return client.post(f"/api/v1/leases/{lease_id}/judgment/", body, format="json")


def _answers(judgment_id: int) -> Any:
    spans = Judgment.objects.get(pk=judgment_id).spans
    return (spans or {}).get("answers")


def _history(annotator: Any) -> list[tuple[int | None, int | None, Any]]:
    return list(
        JudgmentChange.objects.filter(annotator=annotator)
        .order_by("pk")
        .values_list("old_grade", "new_grade", "spans")
    )


def test_a_passage_judgment_keeps_the_passage_offsets_and_the_answers_merged(
    passages: Campaign, client: Any, annotator: Any
) -> None:
    lease = _lease(client, passages)
    assert lease["document"]["docid"] == "d1#para-1"
    tiny, push = span_of(D1, "tiny push"), span_of(D1, "The push adds up")
    # given out of order, and "tiny" again inside "a tiny push": merged into one span
    a_tiny = span_of(D1, "a tiny push")
    r = _judge(client, lease["id"], 2, [push, tiny, a_tiny])
    assert r.status_code == 201, r.content
    expected: dict[str, Any] = {"passage": list(PASSAGE), "answers": [a_tiny, push]}
    assert r.json()["spans"] == expected
    judgment = Judgment.objects.get(annotator=annotator)
    assert (judgment.docid, judgment.grade, judgment.spans) == ("d1#para-1", 2, expected)
    assert _history(annotator) == [(None, 2, expected)]
    assert D1[slice(*expected["passage"])] == P2  # the offsets name the text marked
    assert [D1[s:e] for s, e in expected["answers"]] == ["a tiny push", "The push adds up"]


def test_a_passage_judged_without_answers_keeps_only_its_offsets(
    passages: Campaign, client: Any, annotator: Any
) -> None:
    lease = _lease(client, passages)
    assert _judge(client, lease["id"], 0).status_code == 201
    judgment = Judgment.objects.get(annotator=annotator)
    assert judgment.spans == {"passage": list(PASSAGE)}
    assert _history(annotator) == [(None, 0, {"passage": list(PASSAGE)})]


def test_a_whole_document_keeps_its_answers_and_nothing_else(
    passages: Campaign, client: Any, annotator: Any
) -> None:
    first = _lease(client, passages)
    assert _judge(client, first["id"], 1).status_code == 201
    second = _lease(client, passages)
    assert second["document"]["docid"] == "d2"
    loud = span_of(D2, "Rockets are loud.")
    r = _judge(client, second["id"], 2, [loud])
    assert r.status_code == 201 and r.json()["spans"] == {"answers": [loud]}
    judgment = Judgment.objects.get(annotator=annotator, docid="d2")
    assert judgment.spans == {"answers": [loud]}
    assert _history(annotator)[-1] == (None, 2, {"answers": [loud]})


def test_a_whole_document_without_answers_has_no_spans(
    passages: Campaign, client: Any, annotator: Any
) -> None:
    _judge(client, _lease(client, passages)["id"], 1)
    r = _judge(client, _lease(client, passages)["id"], 2)
    assert r.status_code == 201 and r.json()["spans"] is None
    assert Judgment.objects.get(annotator=annotator, docid="d2").spans is None


@pytest.mark.parametrize(
    ("grade", "answers", "location", "words"),
    [
        (0, [[47, 60]], "answers", "grade above 0"),
        (2, [[47, 60], [120, 500]], "answers[1]", "has 168 characters"),
        (2, [[60, 60]], "answers[0]", "0 <= start < end"),
        (2, [[-1, 5]], "answers[0]", "0 <= start < end"),
        (2, [[1, 2], [3]], "answers[1]", "two whole numbers"),
        (2, [["1", "2"]], "answers[0]", "two whole numbers"),
        (2, [[True, 5]], "answers[0]", "two whole numbers"),
        (2, {"start": 1}, "answers", "list of [start, end] pairs"),
    ],
)
def test_answers_that_cannot_be_stored_are_refused_by_name_and_nothing_is_recorded(
    passages: Campaign,
    client: Any,
    annotator: Any,
    grade: int,
    answers: Any,
    location: str,
    words: str,
) -> None:
    assert len(D1) == 168  # 45 + 2 + 79 + 2 + 40: the length the message names
    lease = _lease(client, passages)
    r = _judge(client, lease["id"], grade, answers)
    assert r.status_code == 400, r.content
    body = r.json()
    assert body["error"] == "invalid_input" and "nothing was recorded" in body["detail"]
    assert [p["location"] for p in body["problems"]] == [location]
    assert words in body["problems"][0]["message"]
    assert not Judgment.objects.exists() and not JudgmentChange.objects.exists()
    # the lease is still live: the same item is judged once the answers are right
    assert _judge(client, lease["id"], 2, [[47, 60]]).status_code == 201


def test_more_answers_than_the_setting_allows_are_refused(passages: Campaign, client: Any) -> None:
    lease = _lease(client, passages)
    with override_knobs(max_answer_spans=2):
        r = _judge(client, lease["id"], 2, [[47, 50], [52, 55], [57, 60]])
        assert r.status_code == 400
        assert "at most 2" in r.json()["detail"]
        assert _judge(client, lease["id"], 2, [[47, 50], [52, 55]]).status_code == 201


def test_the_same_grade_and_answers_again_store_nothing_and_other_answers_conflict(
    passages: Campaign, client: Any, annotator: Any
) -> None:
    lease = _lease(client, passages)
    push = span_of(D1, "tiny push")
    assert _judge(client, lease["id"], 2, [push]).status_code == 201
    # a retry (the page's queue sends again after a lost answer): nothing new
    again = _judge(client, lease["id"], 2, [push])
    assert again.status_code == 200 and again.json()["spans"]["answers"] == [push]
    # the same spans given in two overlapping strokes are the same answers
    halves = [[push[0], push[0] + 5], [push[0] + 3, push[1]]]
    assert _judge(client, lease["id"], 2, halves).status_code == 200
    # the same grade with other answers (or none) comes from a page out of date: refused
    other = _judge(client, lease["id"], 2, [span_of(D1, "over months")])
    assert other.status_code == 409
    assert "other answer span" in other.json()["detail"] and "go back" in other.json()["detail"]
    assert _judge(client, lease["id"], 2).status_code == 409
    assert _judge(client, lease["id"], 1, [push]).status_code == 409  # another grade, as always
    judgment = Judgment.objects.get(annotator=annotator)
    assert judgment.spans == {"passage": list(PASSAGE), "answers": [push]}
    assert len(_history(annotator)) == 1


def test_going_back_replaces_keeps_or_clears_the_answers_with_history_and_undo_restores_them(
    passages: Campaign, client: Any, annotator: Any
) -> None:
    lease = _lease(client, passages)
    tiny, months = span_of(D1, "tiny push"), span_of(D1, "over months")
    judgment_id = _judge(client, lease["id"], 2, [tiny]).json()["id"]
    url = f"/api/v1/judgments/{judgment_id}/"
    passage = {"passage": list(PASSAGE)}

    # the same grade with other answers: a change of answers, kept in the history
    r = client.patch(url, {"grade": 2, "answers": [months]}, format="json")
    assert r.status_code == 200 and r.json()["spans"] == {**passage, "answers": [months]}
    # answers omitted: kept (and the same grade and answers change nothing)
    assert client.patch(url, {"grade": 1}, format="json").json()["spans"]["answers"] == [months]
    assert client.patch(url, {"grade": 1}, format="json").status_code == 200
    # grade 0: not relevant, so no answers (omitted ones are dropped; given ones refused)
    refused = client.patch(url, {"grade": 0, "answers": [months]}, format="json")
    assert refused.status_code == 400 and refused.json()["problems"][0]["location"] == "answers"
    assert client.patch(url, {"grade": 0}, format="json").json()["spans"] == passage
    assert _history(annotator) == [
        (None, 2, {**passage, "answers": [tiny]}),
        (2, 2, {**passage, "answers": [months]}),
        (2, 1, {**passage, "answers": [months]}),
        (1, 0, passage),
    ]
    # undo goes back one change at a time, with the spans the judgment had before it
    assert client.post(f"/api/v1/campaigns/{passages.pk}/undo/").status_code == 204
    judgment = Judgment.objects.get(pk=judgment_id)
    assert (judgment.grade, judgment.spans) == (1, {**passage, "answers": [months]})
    client.post(f"/api/v1/campaigns/{passages.pk}/undo/")
    client.post(f"/api/v1/campaigns/{passages.pk}/undo/")
    judgment.refresh_from_db()
    assert (judgment.grade, judgment.spans) == (2, {**passage, "answers": [tiny]})
    assert _history(annotator)[-1] == (2, 2, {**passage, "answers": [tiny]})


def test_another_annotator_can_neither_record_on_your_lease_nor_change_your_answers(
    passages: Campaign,
    client: Any,
    annotator: Any,
    make_user: Callable[..., Any],
    api_client_for: Callable[[Any], Any],
) -> None:
    bob = api_client_for(make_user("bob-annotator", "annotator"))
    lease = _lease(client, passages)
    answers = [span_of(D1, "tiny push")]
    assert _judge(bob, lease["id"], 2, answers).status_code == 404
    assert not Judgment.objects.exists()
    judgment_id = _judge(client, lease["id"], 2, answers).json()["id"]
    r = bob.patch(f"/api/v1/judgments/{judgment_id}/", {"grade": 2, "answers": []}, format="json")
    assert r.status_code == 404
    assert _answers(judgment_id) == answers
    with pytest.raises(InvalidInput):  # the service checks too, whoever calls it
        queue.judgment_change(
            judgment_id=judgment_id, annotator=account(annotator), grade=0, answers=answers
        )


# --- the judging page -----------------------------------------------------------------------


@pytest.fixture
def web(annotator: Any) -> Client:
    c = Client()
    c.force_login(annotator)
    return c


def _page(web: Client, campaign: Campaign) -> str:
    page = web.get(f"/annotate/{campaign.pk}/").content.decode()
    if 'id="next-form"' in page:  # without a lease the page posts for one
        page = web.post(f"/annotate/{campaign.pk}/next/", follow=True).content.decode()
    return page


def test_the_page_shows_a_passage_in_its_context_with_every_paragraphs_offsets(
    passages: Campaign, web: Client
) -> None:
    page = _page(web, passages)
    start, end = PASSAGE
    assert f'data-passage-start="{start}" data-passage-end="{end}"' in page
    assert '<span id="item-kind">Passage</span> <code id="docid">d1#para-1</code>' in page
    # the text before and after folded, each as one line saying how much it holds
    assert f"… {start} characters before — show" in page
    assert f"… {len(D1) - end} characters after — show" in page
    before = page.index('data-region="before"')
    passage = page.index('id="passage"')
    after = page.index('data-region="after"')
    assert before < passage < after
    assert f'<p data-start="0" data-end="{len(P1)}">{P1}</p>' in page[before:passage]
    assert f'<p data-start="{start}" data-end="{end}">' in page[passage:after]
    assert f'<p data-start="{D1.index(P3)}" data-end="{len(D1)}">{P3}</p>' in page[after:]
    assert 'name="answers"' in page and 'id="mark-answer"' in page
    assert "passage-run" not in page  # blind to runs


def test_the_next_item_as_json_carries_the_offsets_and_the_passage(
    passages: Campaign, web: Client, annotator: Any
) -> None:
    current = queue.lease_next(campaign=passages, annotator=account(annotator))
    assert current is not None and current.slot.docid == "d1#para-1"
    ahead = web.post(
        f"/annotate/{passages.pk}/ahead/",
        json.dumps({"current": current.pk}),
        content_type="application/json",
    ).json()["ahead"]
    assert ahead["docid"] == "d2" and ahead["passage"] is None
    assert ahead["offsets"] == [[0, len(D2)]] and ahead["length"] == len(D2)
    item = queue.item_text(current.slot)
    assert item is not None and item.passage == PASSAGE and item.document.docid == "d1"


def test_the_pages_form_records_the_answers_and_refuses_malformed_ones(
    passages: Campaign, web: Client, annotator: Any
) -> None:
    _page(web, passages)
    lease = queue.lease_current(campaign=passages, annotator=annotator)
    assert lease is not None
    url = f"/annotate/{passages.pk}/submit/"
    bad = web.post(url, {"lease": lease.pk, "grade": 2, "answers": "[[47,"}, follow=True)
    assert "answer spans are not JSON" in bad.content.decode()
    assert not Judgment.objects.exists()
    tiny = span_of(D1, "tiny push")
    web.post(url, {"lease": lease.pk, "grade": 2, "answers": json.dumps([tiny])})
    judgment = Judgment.objects.get(annotator=annotator)
    assert judgment.spans == {"passage": list(PASSAGE), "answers": [tiny]}


def test_going_back_on_the_page_shows_the_answers_and_changes_them(
    passages: Campaign, web: Client, client: Any, annotator: Any
) -> None:
    tiny, months = span_of(D1, "tiny push"), span_of(D1, "over months")
    judgment_id = _judge(client, _lease(client, passages)["id"], 2, [tiny]).json()["id"]
    url = f"/annotate/{passages.pk}/judged/{judgment_id}/"
    page = web.get(url).content.decode()
    assert f'data-answers="[[{tiny[0]}, {tiny[1]}]]"' in page
    # no answers field posted (a page without script): kept
    web.post(url, {"grade": 1})
    assert _answers(judgment_id) == [tiny]
    # the page's field, changed: replaced, said so
    done = web.post(url, {"grade": 1, "answers": json.dumps([months])}, follow=True)
    assert "stays Some, with 1 answer span." in done.content.decode()
    assert _answers(judgment_id) == [months]


def test_the_api_lease_gives_a_passage_with_its_offsets(passages: Campaign, client: Any) -> None:
    document = _lease(client, passages)["document"]
    assert (document["docid"], document["chunking"]) == ("d1#para-1", "para")
    assert document["text"] == D1 and document["passage"] == span_of(D1, D1.split("\n\n")[1])
