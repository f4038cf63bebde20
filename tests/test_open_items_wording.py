"""The publish form's and the progress page's sentences about open items follow the data the
export uses: a document the sentence puts in the version you publish is in the exported qrels,
one it leaves out is not (issue 29, point 6).

On the demo's re-pooled campaign (README steps 2-5: qrels v2 published) some first slots stay
open while their documents were judged through another slot (second opinions), and topics whose
every item has a judgment still have overlap slots open."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.messages import get_messages
from django.test import Client

from judging.assessments.models import QrelsVersion
from judging.campaigns.models import Campaign
from tests.test_budget_plan import (
    bob,  # noqa: F401 (judged's second annotator)
    judged,  # noqa: F401 (the fixture: 11 first slots open)
)
from tests.test_demo_story import play_the_story

pytestmark = pytest.mark.django_db

ROW = re.compile(r'<tr data-topic="([^"]*)" data-docid="([^"]*)" data-in-version="(yes|no)">')


def admin_client() -> Client:
    client = Client()
    client.force_login(get_user_model().objects.get(username="admin"))
    return client


def exported(client: Client, version: QrelsVersion) -> set[tuple[str, str]]:
    """(topic, docid) of every line of the version's TREC qrels file, as a user downloads it."""
    r = client.get(f"/api/v1/qrels/{version.pk}/export/")
    assert r.status_code == 200, r.content
    lines = r.getvalue().decode().splitlines()  # streamed or not
    return {(p[0], p[2]) for p in (line.split() for line in lines) if p}


def publish_box(page: str) -> tuple[str, list[tuple[str, str, bool]]]:
    """The publish form's open-items box: its sentence (text) and its listed items."""
    box = page[page.index('id="publish-open"') : page.index("</details>")]
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", box.split("<details>")[0])).split())
    return text, [(t, d, v == "yes") for t, d, v in ROW.findall(box)]


def plan_rows(page: str) -> dict[str, str]:
    """Topic -> the text of its row in the budget plan's table."""
    table = page[page.index('id="plan-topics"') :]
    table = table[: table.index("</table>")]
    rows = re.findall(r'<tr data-qid="([^"]+)">(.*?)</tr>', table, flags=re.S)
    return {q: " ".join(html.unescape(re.sub(r"<[^>]+>", " ", r)).split()) for q, r in rows}


def test_after_qrels_v2_the_publish_form_says_the_open_items_documents_are_in_the_export(
    demo: Campaign, as_committed: Any
) -> None:
    story = play_the_story(demo, as_committed)
    client = admin_client()
    page = client.get(f"/manage/{demo.pk}/").content.decode()
    sentence, items = publish_box(page)
    in_export = exported(client, story.v2)
    # the demo leaves first slots open whose documents were judged as second opinions
    assert "first slot" in sentence and items
    assert all((t, d) in in_export for t, d, _ in items)  # every listed document is exported
    assert all(in_version for _, _, in_version in items)  # and the list says so
    documents = {(t, d) for t, d, _ in items}
    assert "not in the version you publish" not in sentence
    assert (
        f"All {len(documents)} of their documents already have a judgment and are in the "
        "version you publish" in sentence
    ), sentence
    # publishing again changes nothing: the latest version is the one the sentence describes
    with as_committed():
        r = client.post(f"/manage/{demo.pk}/publish/", {"confirm_open": "1"})
    said = [str(m) for m in get_messages(r.wsgi_request)]
    assert len(said) == 1 and said[0].startswith("Nothing changed since qrels version 2")
    assert f"all {len(documents)} of their documents are in the version" in said[0], said


def test_after_qrels_v2_no_topic_with_open_slots_reads_done(
    demo: Campaign, as_committed: Any
) -> None:
    play_the_story(demo, as_committed)
    page = admin_client().get(f"/manage/{demo.pk}/").content.decode()
    rows = plan_rows(page)
    open_topics = {t for t, _, _ in publish_box(page)[1]}
    assert open_topics
    for qid in open_topics:
        assert " done" not in rows[qid], rows[qid]
        assert "would add a second opinion" in rows[qid] or "second opinions" in rows[qid], rows[
            qid
        ]


def test_unjudged_documents_are_said_to_be_left_out_and_the_export_lacks_them(
    judged: Campaign,  # noqa: F811
    admin_user: Any,
    client: Any,
    as_committed: Any,
) -> None:
    client.force_login(admin_user)
    sentence, items = publish_box(client.get(f"/manage/{judged.pk}/").content.decode())
    assert len(items) == 11 and not any(in_version for _, _, in_version in items)
    assert "Not one of their 11 documents has a judgment yet" in sentence, sentence
    assert "not in the version you publish" in sentence
    with as_committed():
        client.post(f"/manage/{judged.pk}/publish/", {"confirm_open": "1"})
    version = QrelsVersion.objects.get(campaign=judged)
    in_export = exported(client, version)
    assert in_export and not any((t, d) in in_export for t, d, _ in items)
