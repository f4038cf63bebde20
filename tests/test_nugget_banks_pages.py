"""The nugget banks' pages: the editing screen of a topic (its nuggets, the relevant segments
with each nugget's sources marked, the history; edits posted from its forms, a stale one
refused; read-only once published; blind to runs), the list of a campaign's versions (an admin
drafts there) and a version's page (an admin publishes there); and who is refused."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from judging.assessments.models import Nugget, NuggetBank
from judging.assessments.nugget_selectors import bank_topics
from judging.assessments.nuggets import bank_publish
from judging.campaigns.models import Campaign
from judging.workflows.runs import run_submitted
from tests.test_nugget_banks import draft, texts_and_qrels

pytestmark = pytest.mark.django_db

SECRET_RUN = "rita-secret-rag-run"


def signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def bank(campaign: Campaign, admin_user: Any, researcher: Any) -> NuggetBank:
    qrels = texts_and_qrels(campaign, admin_user)
    run_submitted(
        campaign=campaign, owner=researcher, tag=SECRET_RUN, results={"401": {"d401-1": 1.0}}
    )
    return draft(campaign, admin_user, qrels=qrels)


def page(bank: NuggetBank, qid: str = "401") -> str:
    return f"/campaigns/{bank.campaign_id}/nuggets/{bank.number}/topics/{qid}/"


def base(bank: NuggetBank, qid: str = "401") -> int:
    return bank_topics(bank, qid=qid)[0].last_edit


def texts(bank: NuggetBank, qid: str = "401") -> list[tuple[str, str, str]]:
    return [(n.key, n.importance, n.text) for n in bank_topics(bank, qid=qid)[0].nuggets]


def test_the_editing_screen_shows_nuggets_segments_and_history_and_no_run(
    bank: NuggetBank, annotator: Any
) -> None:
    html = signed_in(annotator).get(page(bank)).content.decode()
    assert 'id="n1" data-key="n1" data-position="0" data-sources="d401-1"' in html
    assert 'value="Honey never spoils"' in html and html.count('name="op" value="reword"') == 3
    # the relevant segments only (d401-3 is graded 0), each with the nuggets naming it
    assert 'data-id="d401-1"' in html and 'data-id="d401-2"' in html
    assert 'data-id="d401-3"' not in html and "A car needs fuel" not in html
    assert "source of n1, n2" in html and "source of n3" in html
    assert "judged relevant in qrels v1" in html
    assert "<td>draft</td>" in html  # the history's first row
    assert 'src="/static/pooljudge/nuggets.js"' in html and "<script>" not in html
    assert 'id="help"' in html and "<kbd>v</kbd>" in html
    assert SECRET_RUN not in html and "run" not in html.lower().replace("runs", "")


def test_edits_are_posted_from_the_page_and_come_back_to_it(
    bank: NuggetBank, annotator: Any
) -> None:
    client = signed_in(annotator)
    url = page(bank)
    answer = client.post(
        url, {"op": "reword", "key": "n2", "text": "Tomb honey", "base": base(bank)}
    )
    assert (answer.status_code, answer["Location"]) == (302, url + "#n2")
    client.post(url, {"op": "importance", "key": "n2", "importance": "vital", "base": base(bank)})
    client.post(url, {"op": "up", "key": "n3", "position": "2", "base": base(bank)})
    answer = client.post(
        url, {"op": "split", "key": "n1", "text": "Honey; never spoils", "separator": ";",
              "base": base(bank)},
    )  # fmt: skip
    assert answer["Location"] == url + "#n4"
    client.post(url, {"op": "merge", "keys": ["n4", "n5"], "base": base(bank)})
    client.post(
        url, {"op": "add", "text": "Honey is sweet", "importance": "okay", "base": base(bank)}
    )
    client.post(url, {"op": "delete", "key": "n2", "base": base(bank)})
    assert texts(bank) == [
        ("n6", "vital", "Honey; never spoils"),  # split at ";", then merged back with "; "
        ("n3", "vital", "Honey holds little water"),
        ("n7", "okay", "Honey is sweet"),
    ]
    html = client.get(url).content.decode()
    for op in ("reword", "importance", "move", "split", "merge", "add", "delete"):
        assert f"<td>{op}</td>" in html


def test_a_stale_page_is_told_and_changes_nothing(bank: NuggetBank, annotator: Any) -> None:
    client = signed_in(annotator)
    seen = base(bank)
    client.post(page(bank), {"op": "delete", "key": "n1", "base": seen})
    answer = client.post(
        page(bank), {"op": "reword", "key": "n2", "text": "x", "base": seen}, follow=True
    )
    assert "changed since you loaded it" in answer.content.decode()
    assert texts(bank)[0] == ("n2", "okay", "Edible honey was found in Egyptian tombs")
    nothing = client.post(page(bank), {"op": "split", "key": "n2", "base": base(bank)}, follow=True)
    assert "type the separator" in nothing.content.decode()


def test_a_published_bank_is_read_only(bank: NuggetBank, admin_user: Any, annotator: Any) -> None:
    bank_publish(bank=bank, by=admin_user)
    client = signed_in(annotator)
    html = client.get(page(bank)).content.decode()
    assert 'id="read-only"' in html and 'name="op"' not in html
    assert "Honey never spoils" in html
    answer = client.post(page(bank), {"op": "delete", "key": "n1", "base": base(bank)}, follow=True)
    assert "is published: it is frozen" in answer.content.decode()
    assert Nugget.objects.filter(bank=bank, topic__qid="401").count() == 3


def test_who_is_refused(bank: NuggetBank, admin_user: Any, researcher: Any, make_user: Any) -> None:
    lists = f"/campaigns/{bank.campaign_id}/nuggets/"
    one = f"/campaigns/{bank.campaign_id}/nuggets/{bank.number}/"
    anonymous = Client().get(page(bank))
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/login/")
    nobody = signed_in(make_user("no-role"))
    assert nobody.get(lists).status_code == 403 and nobody.get(page(bank)).status_code == 403
    reader = signed_in(researcher)
    assert reader.get(page(bank)).status_code == 404  # a draft is not found for researchers
    assert reader.get(one).status_code == 404
    assert reader.post(page(bank), {"op": "delete", "key": "n1", "base": "0"}).status_code == 403
    bank_publish(bank=bank, by=admin_user)
    assert reader.get(page(bank)).status_code == 200
    assert reader.get(page(bank, "999")).status_code == 404
    assert reader.post(f"{one}publish/").status_code == 403
    assert "Draft a new version" not in reader.get(lists).content.decode()


def test_an_admin_drafts_and_publishes_from_the_pages(
    campaign: Campaign, admin_user: Any, annotator: Any
) -> None:
    texts_and_qrels(campaign, admin_user)
    client = signed_in(admin_user)
    lists = f"/campaigns/{campaign.pk}/nuggets/"
    assert "Draft a new version" in client.get(lists).content.decode()
    upload = SimpleUploadedFile("b.tsv", b"401\tvital\tHoney never spoils\n402\tokay\tBees\n")
    answer = client.post(lists, {"source": "imported", "file": upload}, follow=True)
    html = answer.content.decode()
    assert answer.redirect_chain[-1][0] == f"/campaigns/{campaign.pk}/nuggets/1/"
    assert "Nugget bank v1 drafted: 2 nuggets over 2 topic(s)." in html
    assert "1 topic has no nugget" in html
    bad = client.post(
        lists, {"source": "imported", "file": SimpleUploadedFile("c.tsv", b"x\n")}, follow=True
    )
    assert "line 1: 1 tab-separated field(s)" in bad.content.decode()
    assert signed_in(annotator).post(f"{lists}1/publish/").status_code == 403
    done = client.post(f"{lists}1/publish/", follow=True).content.decode()
    assert "Nugget bank v1 published (2 nuggets" in done and "without a nugget: topics 403" in done
    assert NuggetBank.objects.get(number=1).state == "published"
