"""The instant judging screen's server side: the next item leased ahead while the current one is
read (at most one more, never the other slot of an item held, given back by an undo, renewed
with the current one, ended by expiry), its JSON for the page (escaped and highlighted on the
server, with the item's place in the topic) and the feedback messages of undo and change."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from judging.assessments import queue
from judging.assessments.models import JudgingSlot, Judgment, Lease, LeaseState
from judging.campaigns.models import Campaign, Document
from judging.core.roles import account
from tests.knobs import override_knobs
from tests.test_judging_api import after_expiry, build_pool, clock_at

pytestmark = pytest.mark.django_db

FOUR_DOCS = {"401": [f"d401-{i}" for i in range(1, 5)]}
TWO_TOPICS = {"401": ["d401-1", "d401-2"], "402": ["d402-1", "d402-2"]}


@pytest.fixture
def four_docs(campaign: Campaign, researcher: Any) -> Campaign:
    return build_pool(campaign, researcher, FOUR_DOCS)


@pytest.fixture
def web(annotator: Any) -> Client:
    client = Client()
    client.force_login(annotator)
    return client


def _ahead(
    client: Client, campaign: Campaign, current: int | None, pending: list[int] | None = None
) -> Any:
    return client.post(
        f"/annotate/{campaign.pk}/ahead/",
        json.dumps({"current": current, "pending": pending or []}),
        content_type="application/json",
    )


def _live(annotator: Any) -> list[int]:
    return sorted(
        Lease.objects.filter(annotator=annotator, state=LeaseState.ACTIVE).values_list(
            "pk", flat=True
        )
    )


def _judge(client: Client, lease_id: int, grade: int) -> Any:
    return client.post(
        f"/api/v1/leases/{lease_id}/judgment/", {"grade": grade}, content_type="application/json"
    )


def test_the_item_ahead_is_a_second_lease_and_asking_again_returns_it(
    four_docs: Campaign, annotator: Any, web: Client
) -> None:
    current = queue.lease_next(campaign=four_docs, annotator=account(annotator))
    assert current is not None
    first = _ahead(web, four_docs, current.pk)
    assert first.status_code == 200
    item = first.json()["ahead"]
    assert item["lease"] != current.pk and item["docid"] != current.slot.docid
    # a repeated (retried) request leases nothing more
    assert _ahead(web, four_docs, current.pk).json()["ahead"]["lease"] == item["lease"]
    assert _live(annotator) == sorted([current.pk, item["lease"]])
    # the pages and the API still show the current one: the oldest live lease
    assert queue.lease_current(campaign=four_docs, annotator=annotator) == current
    assert queue.lease_next(campaign=four_docs, annotator=account(annotator)) == current


def test_an_annotator_holds_at_most_the_current_item_and_one_ahead(
    four_docs: Campaign, annotator: Any, web: Client
) -> None:
    current = queue.lease_next(campaign=four_docs, annotator=account(annotator))
    assert current is not None
    ahead = _ahead(web, four_docs, current.pk).json()["ahead"]["lease"]
    # the page claiming nothing: still the same lease ahead, never a third one
    for claimed in (None, current.pk, ahead):
        _ahead(web, four_docs, claimed)
    assert _live(annotator) == sorted([current.pk, ahead])


def test_judgments_still_on_their_way_do_not_count_but_cannot_hoard_the_queue(
    campaign: Campaign, researcher: Any, annotator: Any, web: Client
) -> None:
    build_pool(campaign, researcher, {"401": [f"d401-{i}" for i in range(1, 9)]})
    held = [queue.lease_next(campaign=campaign, annotator=account(annotator)).pk]  # type: ignore[union-attr]
    for _ in range(6):  # the page says every item it holds is judged, not yet recorded
        item = _ahead(web, campaign, None, pending=held).json()["ahead"]
        if item is None:
            break
        held.append(item["lease"])
    # 1 current + 1 ahead + 2 in flight (queue.IN_FLIGHT)
    assert len(_live(annotator)) == 1 + 1 + queue.IN_FLIGHT
    assert _ahead(web, campaign, None, pending=held).json()["ahead"] is None


def test_the_item_ahead_is_never_the_other_slot_of_the_item_held(
    campaign: Campaign, researcher: Any, annotator: Any, web: Client
) -> None:
    build_pool(campaign, researcher, {"401": ["d401-1"]}, overlap=1.0)
    assert JudgingSlot.objects.filter(docid="d401-1").count() == 2
    current = queue.lease_next(campaign=campaign, annotator=account(annotator))
    assert current is not None
    assert _ahead(web, campaign, current.pk).json()["ahead"] is None
    assert _live(annotator) == [current.pk]


def test_without_prefetch_nothing_is_leased_ahead(
    four_docs: Campaign, annotator: Any, web: Client
) -> None:
    current = queue.lease_next(campaign=four_docs, annotator=account(annotator))
    assert current is not None
    with override_knobs(prefetch=0):
        assert _ahead(web, four_docs, current.pk).json()["ahead"] is None
    assert _live(annotator) == [current.pk]


def test_the_item_ahead_comes_next_after_a_judgment_and_a_new_one_is_leased_ahead(
    four_docs: Campaign, annotator: Any, web: Client
) -> None:
    current = queue.lease_next(campaign=four_docs, annotator=account(annotator))
    assert current is not None
    ahead = _ahead(web, four_docs, current.pk).json()["ahead"]
    # the page sends the judgment and asks for the next item at the same time: whichever
    # arrives first, the judged lease is not handed back as the item ahead
    third = _ahead(web, four_docs, ahead["lease"], pending=[current.pk]).json()["ahead"]
    assert third["lease"] not in (current.pk, ahead["lease"])
    assert _judge(web, current.pk, 2).status_code == 201
    assert _judge(web, current.pk, 2).status_code == 200  # the retry stores nothing new
    assert Judgment.objects.filter(annotator=annotator).count() == 1
    assert _ahead(web, four_docs, ahead["lease"]).json()["ahead"]["lease"] == third["lease"]
    # the no-script form path moves on to the oldest live lease: the one that was ahead
    page = web.post(f"/annotate/{four_docs.pk}/next/", follow=True).content.decode()
    assert f'id="docid">{ahead["docid"]}<' in page


def test_undo_gives_back_the_item_ahead_and_leases_the_undone_item(
    four_docs: Campaign, annotator: Any, web: Client
) -> None:
    current = queue.lease_next(campaign=four_docs, annotator=account(annotator))
    assert current is not None
    ahead = _ahead(web, four_docs, current.pk).json()["ahead"]
    assert _judge(web, current.pk, 1).status_code == 201
    r = web.post(f"/annotate/{four_docs.pk}/undo/", HTTP_ACCEPT="application/json")
    assert r.status_code == 200
    body = r.json()
    assert body["current"]["docid"] == current.slot.docid
    assert body["message"] == f"Undone: document {current.slot.docid} is back to judge."
    assert Lease.objects.get(pk=ahead["lease"]).state == LeaseState.EXPIRED
    slot = JudgingSlot.objects.get(leases__pk=ahead["lease"])
    assert slot.lease_expires_at is None  # back in the queue
    assert _live(annotator) == [body["current"]["lease"]]
    assert not Judgment.objects.filter(annotator=annotator).exists()
    # nothing left to undo: said so, and the current item stays
    again = web.post(f"/annotate/{four_docs.pk}/undo/", HTTP_ACCEPT="application/json").json()
    assert again["message"] == "Nothing to undo."
    assert again["current"]["lease"] == body["current"]["lease"]


def test_renewing_extends_every_item_held(four_docs: Campaign, annotator: Any, web: Client) -> None:
    current = queue.lease_next(campaign=four_docs, annotator=account(annotator))
    assert current is not None
    ahead = _ahead(web, four_docs, current.pk).json()["ahead"]["lease"]
    before = dict(Lease.objects.filter(pk__in=[current.pk, ahead]).values_list("pk", "expires_at"))
    r = web.post(f"/annotate/{four_docs.pk}/renew/", {"lease": current.pk})
    assert r.status_code == 200 and sorted(r.json()["renewed"]) == sorted([current.pk, ahead])
    for lease in Lease.objects.filter(pk__in=[current.pk, ahead]).select_related("slot"):
        assert lease.expires_at > before[lease.pk]
        assert lease.slot.lease_expires_at == lease.expires_at


def test_expired_leases_are_not_shown_and_the_items_come_back_ahead(
    four_docs: Campaign, annotator: Any, web: Client
) -> None:
    current = queue.lease_next(campaign=four_docs, annotator=account(annotator))
    assert current is not None
    ahead = _ahead(web, four_docs, current.pk).json()["ahead"]
    with clock_at(after_expiry(four_docs)):
        assert queue.lease_current(campaign=four_docs, annotator=annotator) is None
        late = _judge(web, current.pk, 2)
        assert late.status_code == 409 and "expired" in late.json()["detail"]
        fresh = _ahead(web, four_docs, current.pk).json()["ahead"]
        renewed = web.post(f"/annotate/{four_docs.pk}/renew/", {"lease": current.pk})
    assert fresh["lease"] not in (current.pk, ahead["lease"])
    assert renewed.status_code == 409
    assert not Judgment.objects.exists()


def test_the_item_json_is_escaped_and_highlighted_on_the_server_with_its_place_in_the_topic(
    campaign: Campaign, researcher: Any, annotator: Any, web: Client
) -> None:
    build_pool(campaign, researcher, {"401": ["d401-1", "d401-2", "d401-3"]})
    campaign.topics.filter(qid="401").update(title="solar sails")
    Document.objects.filter(docid="d401-2").update(
        title="Solar <b>sails</b>", text='<script>alert("x")</script> about solar sails\n\nmore'
    )
    current = queue.lease_next(campaign=campaign, annotator=account(annotator))
    assert current is not None and current.slot.docid == "d401-1"
    item = _ahead(web, campaign, current.pk).json()["ahead"]
    assert item["docid"] == "d401-2"
    assert item["title_html"] == (
        '<mark class="t">Solar</mark> &lt;b&gt;<mark class="t">sails</mark>&lt;/b&gt;'
    )
    assert item["paragraphs_html"] == [
        '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; about <mark class="t">solar</mark> '
        '<mark class="t">sails</mark>',
        "more",
    ]
    assert item["topic"] == {
        "qid": "401",
        "title": "solar sails",
        "description": "",
        "narrative": "",
    }
    assert item["position"] == {"n": 2, "of": 3}
    page = web.get(f"/annotate/{campaign.pk}/").content.decode()
    assert 'id="position"' in page and "1 of 3</span>" in page
    for leak in ("run", "rank", "score"):
        assert leak not in json.dumps(item).lower()


def test_bad_requests_to_the_ahead_call_are_named_and_lease_nothing(
    four_docs: Campaign, annotator: Any, web: Client, researcher: Any
) -> None:
    url = f"/annotate/{four_docs.pk}/ahead/"
    r = web.post(url, "{not json", content_type="application/json")
    assert r.status_code == 400 and "not JSON" in r.json()["detail"]
    r = web.post(url, json.dumps({"current": "x"}), content_type="application/json")
    assert r.status_code == 400 and "current must be a lease id" in r.json()["detail"]
    r = web.post(url, json.dumps({"pending": 5}), content_type="application/json")
    assert r.status_code == 400 and "pending must be a list" in r.json()["detail"]
    assert _live(annotator) == []
    assert web.get(url).status_code == 405
    other = Client()
    other.force_login(researcher)
    assert other.post(url, "{}", content_type="application/json").status_code == 403


def test_changing_an_earlier_grade_says_what_changed_on_the_next_page(
    four_docs: Campaign, annotator: Any, web: Client
) -> None:
    current = queue.lease_next(campaign=four_docs, annotator=account(annotator))
    assert current is not None
    assert _judge(web, current.pk, 0).status_code == 201
    judgment = Judgment.objects.get(annotator=annotator)
    back = f"/annotate/{four_docs.pk}/judged/{judgment.pk}/"
    html = web.get(back).content.decode()
    assert 'id="position"' in html and ">1 of 4</span>" in html
    page = web.post(back, {"grade": "2"}, follow=True).content.decode()
    assert f"Changed: {current.slot.docid} from No to Yes." in page
    judgment.refresh_from_db()
    assert judgment.grade == 2


def test_a_stale_form_cannot_change_a_judgment_and_says_so(
    four_docs: Campaign, annotator: Any, web: Client
) -> None:
    """The no-script form of a page that is out of date (a second tab, Back): its grade for a
    document already judged is refused with the reason, the judgment stays as it was."""
    page = web.post(f"/annotate/{four_docs.pk}/next/", follow=True).content.decode()
    lease = Lease.objects.get(annotator=annotator, state=LeaseState.ACTIVE)
    assert f'name="lease" value="{lease.pk}"' in page
    submit = f"/annotate/{four_docs.pk}/submit/"
    web.post(submit, {"lease": lease.pk, "grade": "0"})  # this tab
    stale = web.post(submit, {"lease": lease.pk, "grade": "2"}, follow=True)  # the other one
    html = stale.content.decode()
    assert f"{lease.slot.docid} is already judged No" in html and "Yes was not recorded" in html
    judgment = Judgment.objects.get(annotator=annotator)
    assert judgment.grade == 0 and judgment.history.count() == 1


def test_topic_change_is_visible_in_the_item_json(
    campaign: Campaign, researcher: Any, annotator: Any, web: Client
) -> None:
    build_pool(campaign, researcher, TWO_TOPICS)
    current = queue.lease_next(campaign=campaign, annotator=account(annotator))
    assert current is not None and current.slot.topic.qid == "401"
    second = _ahead(web, campaign, current.pk).json()["ahead"]
    assert second["topic"]["qid"] == "401" and second["position"] == {"n": 2, "of": 2}
    assert _judge(web, current.pk, 1).status_code == 201
    third = _ahead(web, campaign, second["lease"]).json()["ahead"]
    # the annotator's topic has nothing left beyond the item being read: the next topic
    assert third["topic"]["qid"] == "402" and third["position"] == {"n": 1, "of": 2}


def test_items_of_a_topic_another_assessor_owns_say_more_may_come_not_n_of_n(
    four_docs: Campaign, annotator: Any, make_user: Any
) -> None:
    """Issue 29, point 4: served one at a time from a topic another assessor owns, the items
    were "1 of 1 · 1 left", "2 of 2 · 1 left", ...; no total is known there."""
    owner = make_user("owner-annotator", "annotator")
    assert queue.lease_next(campaign=four_docs, annotator=account(owner)) is not None  # owns 401
    web = Client()
    web.force_login(annotator)
    for n in (1, 2):
        page = web.post(f"/annotate/{four_docs.pk}/next/", follow=True).content.decode()
        assert f'title="this item\'s place among your items of the topic">item {n}</span>' in page
        if n > 1:  # (no progress box before their first judgment in the topic)
            assert f"{n - 1} judged · more may come" in page
        assert f"{n} of {n}" not in page and "1 left" not in page
        current = queue.lease_current(campaign=four_docs, annotator=annotator)
        assert current is not None
        item = _ahead(web, four_docs, current.pk).json()["ahead"]
        assert item["position"] == {"n": n + 1, "of": None}
        web.post(f"/annotate/{four_docs.pk}/submit/", {"lease": current.pk, "grade": "1"})
    # the owner's count stays a count: their item, of those not judged or held by the other
    owner_web = Client()
    owner_web.force_login(owner)
    page = owner_web.get(f"/annotate/{four_docs.pk}/").content.decode()
    assert 'topic">1 of 1</span>' in page and "more may come" not in page


def test_without_prefetch_the_page_judges_with_full_page_forms(
    four_docs: Campaign, annotator: Any, web: Client
) -> None:
    with override_knobs(prefetch=0):
        page = web.post(f"/annotate/{four_docs.pk}/next/", follow=True).content.decode()
    assert 'id="grade-form"' in page and "data-ahead-url" not in page
    assert "data-ahead-url" in web.get(f"/annotate/{four_docs.pk}/").content.decode()


def test_with_a_deeper_prefetch_the_page_holds_that_many_items_ahead(
    four_docs: Campaign, annotator: Any, web: Client
) -> None:
    current = queue.lease_next(campaign=four_docs, annotator=account(annotator))
    assert current is not None
    url = f"/annotate/{four_docs.pk}/ahead/"

    def ask(holding: list[int]) -> Any:
        body = json.dumps({"current": current.pk, "holding": holding})
        return web.post(url, body, content_type="application/json").json()["ahead"]

    with override_knobs(prefetch=2):
        first = ask([])
        second = ask([first["lease"]])
        assert ask([first["lease"], second["lease"]]) is None  # two ahead: no third
        assert ask([first["lease"]])["lease"] == second["lease"]  # a retry: the same one
    assert len({current.pk, first["lease"], second["lease"]}) == 3
    assert [first["position"]["n"], second["position"]["n"]] == [2, 3]
    assert _live(annotator) == sorted([current.pk, first["lease"], second["lease"]])


def test_one_call_can_refill_several_items_ahead(
    four_docs: Campaign, annotator: Any, web: Client
) -> None:
    current = queue.lease_next(campaign=four_docs, annotator=account(annotator))
    assert current is not None
    body = json.dumps({"current": current.pk, "count": 5})
    with override_knobs(prefetch=2):
        r = web.post(f"/annotate/{four_docs.pk}/ahead/", body, content_type="application/json")
    items = [r.json()["ahead"], *r.json()["more"]]
    assert len(items) == 2  # no more than POOLJUDGE_PREFETCH, whatever the page asks
    assert [i["position"]["n"] for i in items] == [2, 3]
    assert _live(annotator) == sorted([current.pk, *(i["lease"] for i in items)])
