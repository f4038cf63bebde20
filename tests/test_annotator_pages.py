"""The annotator's pages: blind, escaped, keyboard-first forms that judge, skip, undo, go back."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from judging.assessments.models import Judgment, JudgmentChange, Lease
from judging.campaigns.models import Document
from judging.workflows.pools import pool_requested
from judging.workflows.runs import run_submitted

pytestmark = pytest.mark.django_db

EVIL = '<script>alert("pwned")</script> solar <b>sails</b> & "quotes"'


@pytest.fixture
def judging_campaign(campaign: Any, researcher: Any, as_committed: Any) -> Any:
    campaign.topics.filter(qid="401").update(
        title="solar sails",
        description="How do solar <sails> work?",
        narrative="Relevant: physics of light pressure.",
    )
    run_submitted(
        campaign=campaign,
        owner=researcher,
        tag="secret-run-tag",
        results={"401": {"D1": 3.0, "D2": 2.0, "D3": 1.0}},
    )
    Document.objects.create(campaign=campaign, docid="D1", title="Solar sails explained", text=EVIL)
    Document.objects.create(campaign=campaign, docid="D2", title="Sails", text="A second text.")
    Document.objects.create(campaign=campaign, docid="D3", title="", text="A third text.")
    with as_committed():  # the pool is built after commit
        pool_requested(campaign=campaign, strategy="depth", depth=10)
    return campaign


@pytest.fixture
def browser(annotator: Any) -> Client:
    client = Client()
    client.force_login(annotator)
    return client


def test_the_judging_page_shows_topic_and_document_and_nothing_about_systems(
    browser: Client, judging_campaign: Any
) -> None:
    html = _page(browser, f"/annotate/{judging_campaign.pk}/")
    assert "solar sails" in html and "How do solar &lt;sails&gt; work?" in html
    assert "Relevant: physics of light pressure." in html
    assert 'id="docid">D1<' in html  # documents come in the pool's order (docid order here)
    for label in ("No", "Some", "Yes"):
        assert label in html
    for leak in ("secret-run-tag", "rank", "score", "system"):
        assert leak not in html.lower().replace("systems", ""), leak


def test_document_text_is_escaped_and_query_terms_are_highlighted(
    browser: Client, judging_campaign: Any
) -> None:
    html = _page(browser, f"/annotate/{judging_campaign.pk}/")
    assert "<script>alert" not in html
    assert "&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;" in html
    # title words are strong marks; every mark's text escaped and nothing else in it
    assert '<mark class="t">solar</mark>' in html
    assert '&lt;b&gt;<mark class="t">sails</mark>&lt;/b&gt;' in html
    assert re.findall(r"<mark[^>]*>", html) and all(
        m in ('<mark class="t">', '<mark class="d">') for m in re.findall(r"<mark[^>]*>", html)
    )
    assert "&amp; &quot;quotes&quot;" in html


def _page(browser: Client, url: str) -> str:
    """The judging page as a browser shows it: its GET only reads, and without a lease it
    posts for the next document at once (the page's script does that)."""
    html = browser.get(url).content.decode()
    if 'id="next-form"' in html:
        html = browser.post(f"{url}next/", follow=True).content.decode()
    return html


def _lease(html: str) -> str:
    match = re.search(r'name="lease" value="(\d+)"', html)
    assert match
    return match.group(1)


def test_a_grade_judges_and_moves_on_and_undo_brings_it_back(
    browser: Client, judging_campaign: Any, annotator: Any
) -> None:
    url = f"/annotate/{judging_campaign.pk}/"
    lease = _lease(_page(browser, url))
    r = browser.post(f"{url}submit/", {"lease": lease, "grade": "2", "active_seconds": "4.5"})
    assert r.status_code == 302 and r["Location"] == url
    j = Judgment.objects.get(annotator=annotator)
    assert (j.docid, j.grade, j.active_seconds) == ("D1", 2, 4.5)
    # a double click posts the same lease again: still one judgment, one history row
    browser.post(f"{url}submit/", {"lease": lease, "grade": "2"})
    assert Judgment.objects.count() == 1 and JudgmentChange.objects.count() == 1
    assert 'id="docid">D2<' in _page(browser, url)
    browser.post(f"{url}undo/")
    assert Judgment.objects.count() == 0
    assert 'id="docid">D1<' in _page(browser, url)


def test_going_back_changes_an_earlier_judgment_and_keeps_history(
    browser: Client, judging_campaign: Any, annotator: Any
) -> None:
    url = f"/annotate/{judging_campaign.pk}/"
    browser.post(f"{url}submit/", {"lease": _lease(_page(browser, url)), "grade": "0"})
    page = _page(browser, url)
    back = re.search(r'id="back-link" href="([^"]+)"', page)
    assert back
    judged_page = browser.get(back.group(1)).content.decode()
    assert 'id="docid">D1<' in judged_page and 'id="current-grade">No<' in judged_page
    browser.post(back.group(1), {"grade": "2"})
    j = Judgment.objects.get(annotator=annotator, docid="D1")
    assert j.grade == 2
    assert [(c.old_grade, c.new_grade) for c in JudgmentChange.objects.order_by("pk")] == [
        (None, 0),
        (0, 2),
    ]


def test_skipping_moves_to_another_document(browser: Client, judging_campaign: Any) -> None:
    url = f"/annotate/{judging_campaign.pk}/"
    first = _page(browser, url)
    browser.post(f"{url}skip/", {"lease": _lease(first)})
    assert 'id="docid">D1<' not in _page(browser, url)


def test_when_everything_is_judged_the_page_says_so(browser: Client, judging_campaign: Any) -> None:
    url = f"/annotate/{judging_campaign.pk}/"
    for _ in range(3):
        browser.post(f"{url}submit/", {"lease": _lease(_page(browser, url)), "grade": "1"})
    assert "Nothing left to judge" in _page(browser, url)
    work = browser.get("/annotate/").content.decode()
    assert "401" in work and "secret-run-tag" not in work


def test_renewing_extends_the_lease(browser: Client, judging_campaign: Any) -> None:
    url = f"/annotate/{judging_campaign.pk}/"
    lease = _lease(_page(browser, url))
    r = browser.post(f"{url}renew/", {"lease": lease})
    assert r.status_code == 200 and r.json()["ok"] is True
    assert browser.post(f"{url}renew/", {"lease": "999999"}).status_code == 404


def test_researchers_cannot_judge_and_annotators_cannot_manage(
    judging_campaign: Any, researcher: Any, annotator: Any
) -> None:
    client = Client()
    client.force_login(researcher)
    assert client.get("/annotate/").status_code == 403
    assert client.get(f"/annotate/{judging_campaign.pk}/").status_code == 403
    client.force_login(annotator)
    for page in ("", "agreement/"):
        r = client.get(f"/manage/{judging_campaign.pk}/{page}")
        assert r.status_code == 403


def test_admins_see_progress_agreement_and_publish_qrels(
    browser: Client, judging_campaign: Any, admin_user: Any, as_committed: Any
) -> None:
    url = f"/annotate/{judging_campaign.pk}/"
    browser.post(f"{url}submit/", {"lease": _lease(_page(browser, url)), "grade": "2"})
    admin = Client()
    admin.force_login(admin_user)
    page = admin.get(f"/manage/{judging_campaign.pk}/").content.decode()
    assert 'id="judged">1 / 3<' in page and "ann-annotator" in page
    assert admin.get(f"/manage/{judging_campaign.pk}/agreement/").status_code == 200
    with as_committed():  # publishing evaluates the runs after commit
        r = admin.post(f"/manage/{judging_campaign.pk}/publish/", {"note": "first"})
    assert r.status_code == 302
    from judging.assessments.models import QrelsVersion

    v = QrelsVersion.objects.get(campaign=judging_campaign)
    assert (v.number, v.num_judgments, v.num_relevant) == (1, 1, 1)
    assert v.evaluations.get().state == "done"  # the run was evaluated after the commit


def test_the_judging_page_get_only_reads(browser: Client, judging_campaign: Any) -> None:
    url = f"/annotate/{judging_campaign.pk}/"
    for _ in range(2):  # without a lease (it offers to get one), then with one
        assert _writes_of_get(browser, url) == set(), url
        _page(browser, url)
    assert Lease.objects.count() == 1
    assert _writes_of_get(browser, f"{url}done/") == set()


def _writes_of_get(browser: Client, url: str) -> set[str]:
    with CaptureQueriesContext(connection) as ctx:
        assert browser.get(url).status_code == 200
    verbs = {q["sql"].lstrip().split(" ", 1)[0].upper() for q in ctx.captured_queries}
    return verbs & {"INSERT", "UPDATE", "DELETE"}
