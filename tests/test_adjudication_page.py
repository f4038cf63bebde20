"""Adjudicating a disagreement with the document in view: the topic, the document with its
terms marked, each assessor's grade (named or anonymised) and time, no grade preset, the next
undecided item, and a history of every decision with its reason. Admins only."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

import pytest
from django.test import Client

from judging.assessments.models import (
    Adjudication,
    AdjudicationChange,
    GoldItem,
    GoldSource,
    Judgment,
)
from judging.campaigns.models import Campaign, Document
from tests.test_browser_judging import page  # noqa: F401  (the Chromium fixture)

pytestmark = pytest.mark.django_db

# (qid, docid) -> grades of judge-a, judge-b (scale 0-2); the adjudication list orders by
# spread, largest first, then by (qid, docid): doc-2 (spread 2), then doc/1, then doc-4.
JUDGED: dict[tuple[str, str], list[int]] = {
    ("401", "doc/1"): [2, 1],
    ("401", "doc-2"): [0, 2],
    ("402", "doc-3"): [1, 1],  # agreed: not a disagreement
    ("402", "doc-4"): [0, 1],
}
ORDER = [("401", "doc-2"), ("401", "doc/1"), ("402", "doc-4")]
SECONDS = {"judge-a": 12.4, "judge-b": 127.0}


@pytest.fixture
def judges(make_user: Callable[..., Any]) -> list[Any]:
    return [make_user(name, "annotator") for name in ("judge-a", "judge-b")]


@pytest.fixture
def judged(campaign: Campaign, judges: list[Any]) -> Campaign:
    campaign.topics.filter(qid="401").update(
        title="solar sails",
        description="What do solar sails cost?",
        narrative="A relevant document discusses <b>light pressure</b>.",
    )
    for (qid, docid), grades in JUDGED.items():
        topic = campaign.topics.get(qid=qid)
        for judge, grade in zip(judges, grades, strict=True):
            Judgment.objects.create(
                campaign=campaign,
                topic=topic,
                docid=docid,
                annotator=judge,
                grade=grade,
                active_seconds=SECONDS[judge.username],
            )
    Document.objects.create(
        campaign=campaign,
        docid="doc/1",
        title="Sails and costs",
        text="<script>alert(1)</script> Solar sailing costs little.\n\nLight pressure works.",
    )
    # a gold item both judges graded differently: quality control, never a disagreement
    topic = campaign.topics.get(qid="403")
    gold = GoldItem.objects.create(
        campaign=campaign, topic=topic, docid="gold-doc", grade=2, source=GoldSource.IMPORTED
    )
    for judge, grade in zip(judges, (0, 2), strict=True):
        Judgment.objects.create(
            campaign=campaign,
            topic=topic,
            docid="gold-doc",
            annotator=judge,
            grade=grade,
            gold=gold,
        )
    return campaign


@pytest.fixture
def admin(admin_user: Any) -> Client:
    client = Client()
    client.force_login(admin_user)
    return client


def url(campaign: Campaign, qid: str | None = None, docid: str | None = None) -> str:
    base = f"/manage/{campaign.pk}/adjudicate/"
    return f"{base}?{urlencode({'topic': qid, 'docid': docid})}" if qid is not None else base


def decide(client: Client, campaign: Campaign, qid: str, docid: str, **form: str) -> Any:
    return client.post(url(campaign), {"topic": qid, "docid": docid, **form})


def test_the_page_shows_the_topic_the_marked_document_and_each_assessor_with_no_grade_chosen(
    admin: Client, judged: Campaign
) -> None:
    r = admin.get(url(judged, "401", "doc/1"))
    assert r.status_code == 200
    html = r.content.decode()
    assert "solar sails" in html and "What do solar sails cost?" in html
    assert "discusses &lt;b&gt;light pressure&lt;/b&gt;." in html  # the narrative, escaped
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert '<mark class="t">Solar</mark> <mark class="t">sailing</mark>' in html
    assert '<mark class="d">costs</mark>' in html
    rows = re.findall(r"<tr><td>([^<]+)</td><td><strong>(\d)</strong> · (\w+)</td>", html)
    assert rows == [("judge-a", "2", "Yes"), ("judge-b", "1", "Some")]
    assert ">12 s<" in html and ">2 min 07 s<" in html
    radios = re.findall(r'<input type="radio" name="grade"[^>]*>', html)
    assert len(radios) == 3 and not any("checked" in radio for radio in radios)
    assert all("required" in radio for radio in radios)
    assert "No decision yet." in html and "No final grade yet." in html
    assert f'href="{url(judged, "402", "doc-4")}"' in html.replace("&amp;", "&")  # next


def test_assessors_are_anonymised_when_the_campaign_hides_their_names(
    admin: Client, judged: Campaign
) -> None:
    judged.show_assessor_names = False
    judged.save()
    html = admin.get(url(judged, "401", "doc/1")).content.decode()
    assert "Assessor A" in html and "Assessor B" in html
    assert "judge-a" not in html and "judge-b" not in html
    agreement = admin.get(f"/manage/{judged.pk}/agreement/").content.decode()
    table = agreement[agreement.index('id="disagreements"') :]
    assert "judge-a" not in table and "judge-b" not in table


def test_a_decision_is_kept_in_history_with_its_reason_and_leads_to_the_next_undecided(
    admin: Client, judged: Campaign, admin_user: Any
) -> None:
    r = decide(
        admin, judged, "401", "doc/1", grade="2", note="the text is about sails", then="next"
    )
    assert r.status_code == 302 and r["Location"] == url(judged, "402", "doc-4")
    r = decide(admin, judged, "401", "doc/1", grade="1", note="only in passing", then="item")
    assert r.status_code == 302 and r["Location"] == url(judged, "401", "doc/1")
    # a double submit of the same decision records nothing new
    decide(admin, judged, "401", "doc/1", grade="1", note="only in passing", then="item")
    history = list(
        AdjudicationChange.objects.filter(campaign=judged).values_list(
            "docid", "old_grade", "new_grade", "note", "decided_by"
        )
    )
    assert history == [
        ("doc/1", None, 2, "the text is about sails", admin_user.pk),
        ("doc/1", 2, 1, "only in passing", admin_user.pk),
    ]
    assert Adjudication.objects.get(docid="doc/1").grade == 1
    html = admin.get(url(judged, "401", "doc/1")).content.decode()
    rows = html[html.index('id="history"') :]
    assert "set to <strong>2</strong>" in rows and "2 → <strong>1</strong>" in rows
    assert "the text is about sails" in rows and "only in passing" in rows
    assert "alice-admin" in rows
    assert "Final grade now: <strong>1</strong> · Some" in html


def test_the_next_undecided_follows_the_list_skips_decided_items_and_ends_on_the_agreement_page(
    admin: Client, judged: Campaign
) -> None:
    r = admin.get(url(judged))
    assert r.status_code == 302 and r["Location"] == url(judged, *ORDER[0])
    decide(admin, judged, "401", "doc/1", grade="2", then="item")
    r = decide(admin, judged, *ORDER[0], grade="2", then="next")
    assert r["Location"] == url(judged, *ORDER[2])  # doc/1 is decided already
    r = decide(admin, judged, *ORDER[2], grade="0", then="next")
    assert r["Location"] == f"/manage/{judged.pk}/agreement/"
    shown = admin.get(r["Location"]).content.decode()
    assert "That was the last undecided disagreement." in shown
    r = admin.get(url(judged))
    assert r["Location"] == f"/manage/{judged.pk}/agreement/"


def test_no_grade_a_grade_off_the_scale_or_a_nul_is_refused_with_a_message(
    admin: Client, judged: Campaign
) -> None:
    r = decide(admin, judged, "401", "doc/1", then="next")
    assert r.status_code == 302 and r["Location"] == url(judged, "401", "doc/1")
    assert "choose a grade first" in admin.get(r["Location"]).content.decode()
    r = decide(admin, judged, "401", "doc/1", grade="7", then="next")
    shown = admin.get(r["Location"]).content.decode()
    assert "the grade is not on the campaign&#x27;s scale" in shown
    r = decide(admin, judged, "401", "doc/1", grade="two", then="next")
    assert "the grade must be a whole number" in admin.get(r["Location"]).content.decode()
    r = decide(admin, judged, "401", "doc\x00", grade="1", then="next")
    assert r.status_code == 302
    assert not Adjudication.objects.exists() and not AdjudicationChange.objects.exists()
    assert admin.get(url(judged, "401", "no-such-doc")).status_code == 404
    assert admin.get(url(judged, "401\x00", "doc/1")).status_code == 404
    assert admin.get(url(judged, "403", "gold-doc")).status_code == 404  # gold only


@pytest.mark.parametrize("who", ["anonymous", "annotator", "researcher"])
def test_only_admins_see_or_decide(
    who: str, judged: Campaign, judges: list[Any], researcher: Any
) -> None:
    client = Client()
    if who != "anonymous":
        client.force_login(judges[0] if who == "annotator" else researcher)

    def refused(r: Any) -> bool:  # signed out: to the sign-in page; signed in: the 403 page
        if who == "anonymous":
            return r.status_code == 302 and r["Location"].startswith("/login/?next=/manage/")
        return r.status_code == 403

    assert refused(client.get(url(judged, "401", "doc/1")))
    assert refused(decide(client, judged, "401", "doc/1", grade="2", then="next"))
    assert not Adjudication.objects.exists() and not AdjudicationChange.objects.exists()
    assert refused(client.get(f"/manage/{judged.pk}/agreement/"))


def test_the_agreement_page_links_each_disagreement_and_presets_no_grade(
    admin: Client, judged: Campaign
) -> None:
    decide(admin, judged, "401", "doc-2", grade="2", then="item")
    html = admin.get(f"/manage/{judged.pk}/agreement/").content.decode()
    table = html[html.index('id="disagreements"') :]
    links = re.findall(r'href="([^"]*adjudicate/\?[^"]*)"', table)
    assert [link.replace("&amp;", "&") for link in links] == [url(judged, *item) for item in ORDER]
    assert "gold-doc" not in html
    selects = re.findall(r'<select name="grade".*?</select>', table, re.S)
    assert len(selects) == 3
    for select in selects:
        assert re.findall(r"<option [^>]*selected", select) == ['<option value="" selected']
    assert "final: 2" in table  # the decided one says so, without preselecting it
    # the inline form still decides, and goes back to the list
    r = decide(admin, judged, "402", "doc-4", grade="1")
    assert r["Location"] == f"/manage/{judged.pk}/agreement/"
    assert Adjudication.objects.get(docid="doc-4").grade == 1


def test_gold_judgments_are_no_disagreement_and_cannot_be_adjudicated(
    judged: Campaign, api_client_for: Any, admin_user: Any
) -> None:
    api = api_client_for(admin_user)
    items = api.get(f"/api/v1/campaigns/{judged.pk}/disagreements/").json()["results"]
    assert [(d["topic"], d["docid"]) for d in items] == ORDER
    r = api.post(
        f"/api/v1/campaigns/{judged.pk}/adjudications/",
        {"topic": "403", "docid": "gold-doc", "grade": 2},
        format="json",
    )
    assert r.status_code == 400 and r.json()["problems"][0]["location"] == "docid"


def test_the_api_answers_a_decision_with_the_items_history_and_lists_the_history(
    judged: Campaign, api_client_for: Any, admin_user: Any, judges: list[Any]
) -> None:
    api = api_client_for(admin_user)
    base = f"/api/v1/campaigns/{judged.pk}/adjudications/"
    r = api.post(base, {"topic": "401", "docid": "doc/1", "grade": 2}, format="json")
    assert r.status_code == 201, r.json()
    r = api.post(
        base, {"topic": "401", "docid": "doc/1", "grade": 1, "note": "on reflection"}, format="json"
    )
    body = r.json()
    assert (body["grade"], body["note"]) == (1, "on reflection")
    history = [
        (h["old_grade"], h["new_grade"], h["note"], h["decided_by"]) for h in body["history"]
    ]
    assert history == [
        (None, 2, "", "alice-admin"),
        (2, 1, "on reflection", "alice-admin"),
    ]
    api.post(base, {"topic": "402", "docid": "doc-4", "grade": 0}, format="json")
    listed = api.get(base).json()
    assert listed["count"] == 3
    assert [(h["topic"], h["docid"]) for h in listed["results"]] == [
        ("401", "doc/1"),
        ("401", "doc/1"),
        ("402", "doc-4"),
    ]
    only = api.get(base, {"topic": "402"}).json()
    assert [(h["docid"], h["new_grade"]) for h in only["results"]] == [("doc-4", 0)]
    assert api.get(base, {"docid": "doc/1"}).json()["count"] == 2
    assert api.get(base, {"docid": "a\x00"}).status_code == 400
    assert api_client_for(judges[0]).get(base).status_code == 403
    assert api_client_for(None).get(base).status_code == 401


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_an_admin_adjudicates_by_keyboard_with_no_grade_preset_and_sees_the_history(
    page: Any,  # noqa: F811
    live_server: Any,
    judged: Campaign,
    admin_user: Any,
) -> None:
    item = url(judged, "401", "doc/1")
    page.goto(f"{live_server.url}/login/?{urlencode({'next': item})}")
    page.fill("#id_username", admin_user.username)
    page.fill("#id_password", "pw-for-tests-only")
    page.click("button[type=submit]")
    page.wait_for_selector("#adjudicate-form")
    checked = "els => els.filter(e => e.checked).map(e => e.value)"
    assert page.eval_on_selector_all("input[name=grade]", checked) == []
    assert "solar sails" in page.inner_text("#topic-title")
    assert page.locator("#doc-text mark").count() >= 3

    page.keyboard.press("Enter")  # nothing chosen: nothing decided
    page.keyboard.press("2")  # a digit only chooses
    assert page.eval_on_selector_all("input[name=grade]", checked) == ["2"]
    assert not Adjudication.objects.exists()

    page.keyboard.press("r")
    page.keyboard.type("judge-a read it closely")
    page.keyboard.press("Escape")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    page.wait_for_selector("#adjudicate-form")
    assert page.url.endswith(url(judged, "402", "doc-4"))  # the next undecided one
    assert "Final grade 2 (Yes) set for doc/1 on topic 401." in page.inner_text(".messages")
    decision = Adjudication.objects.get(docid="doc/1")
    assert (decision.grade, decision.note) == (2, "judge-a read it closely")
    assert page.eval_on_selector_all("input[name=grade]", checked) == []  # none carried over

    with page.expect_navigation():
        page.keyboard.press("n")  # the next undecided, wrapping round: doc-2
    assert page.url.endswith(url(judged, "401", "doc-2"))
    assert Adjudication.objects.count() == 1

    page.goto(f"{live_server.url}{item}")
    history = page.inner_text("#history")
    assert "alice-admin" in history and "judge-a read it closely" in history
    assert "set to 2" in history


def test_anonymous_assessors_are_lettered_like_spreadsheet_columns() -> None:
    from judging.assessments.adjudication import assessor_label

    assert [assessor_label(i) for i in (0, 1, 25, 26, 27, 701, 702)] == [
        "Assessor A",
        "Assessor B",
        "Assessor Z",
        "Assessor AA",
        "Assessor AB",
        "Assessor ZZ",
        "Assessor AAA",
    ]


def test_a_passage_item_shows_the_passages_text(
    campaign: Campaign, judges: list[Any], admin: Client
) -> None:
    from judging.workflows.passages import chunking_made

    text = "Solar sails ride on light.\n\nRockets burn fuel instead."
    Document.objects.create(campaign=campaign, docid="d7", title="Sails", text=text)
    chunking_made(campaign=campaign, name="para", spec="paragraph")
    topic = campaign.topics.get(qid="401")
    for judge, grade in zip(judges, (0, 2), strict=True):
        Judgment.objects.create(
            campaign=campaign, topic=topic, docid="d7#para-1", annotator=judge, grade=grade
        )
    html = admin.get(url(campaign, "401", "d7#para-1")).content.decode()
    assert "Rockets burn fuel instead." in html and "has no text" not in html
    assert "Solar sails ride on light." not in html
