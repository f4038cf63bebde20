"""The loop of DESIGN section 2 on the demo campaign, as the README walks a newcomer through it:
pool v1 judged, a novel run penalised, re-pooling with it, judging, qrels v2, before/after."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from judging.assessments.models import QrelsVersion
from judging.assessments.queue import judgment_record, lease_next
from judging.campaigns.models import Campaign
from judging.demo.data import build
from judging.evaluation.bias import bias_report_request
from judging.evaluation.models import BiasReport
from judging.workflows.pools import pool_requested
from judging.workflows.qrels import qrels_published

pytestmark = pytest.mark.django_db


def judge_everything_left(campaign: Campaign, username: str) -> int:
    truth = build().truth
    annotator = get_user_model().objects.get(username=username)
    made = 0
    while (lease := lease_next(campaign=campaign, annotator=annotator)) is not None:
        slot = lease.slot
        judgment_record(
            lease_id=lease.pk, annotator=annotator, grade=truth[slot.topic.qid].get(slot.docid, 0)
        )
        made += 1
    return made


def test_after_load_demo_qrels_v1_exists_and_the_bias_page_shows_the_penalty(
    demo: Campaign, api_client_for: Any
) -> None:
    v1 = QrelsVersion.objects.get(campaign=demo)
    assert v1.number == 1 and v1.source == "published"
    report = BiasReport.objects.get(campaign=demo, qrels=v1)
    assert report.state == "done", report.error
    penalty = report.result["penalty"]
    assert penalty["estimate"] is True
    assert penalty["runs"]["novel-neural"]["estimated_penalty"] > 0
    coverage = report.result["coverage"]
    assert coverage["mean_pooled"] == 1.0 > coverage["runs"]["novel-neural"]["mean"]
    researcher = get_user_model().objects.get(username="researcher")
    client = Client()
    client.force_login(researcher)
    page = client.get(f"/campaigns/{demo.pk}/bias/").content.decode()
    assert "Estimated pooling penalty" in page and "novel-neural" in page
    assert page.count("<svg") >= 3
    chart = client.get(f"/campaigns/{demo.pk}/bias/scatter.svg?download=1")
    assert chart["Content-Type"] == "image/svg+xml" and b"y = x" in chart.content
    body = api_client_for(researcher).get(f"/api/v1/campaigns/{demo.pk}/bias/").json()
    assert body["state"] == "done" and body["qrels_version"] == 1
    assert set(body["result"]["loo"]["runs"]) == {
        "bm25-baseline",
        "bm25-rm3",
        "dense-v1",
        "keyword-weak",
        "random-walk",
    }


def test_the_demo_annotator_has_pool_v1_items_to_judge_right_away(demo: Campaign) -> None:
    annotator = get_user_model().objects.get(username="annotator")
    client = Client()
    client.force_login(annotator)
    start = client.get(f"/annotate/{demo.pk}/").content.decode()  # reads: asks for a lease
    assert 'id="next-form"' in start
    page = client.post(f"/annotate/{demo.pk}/next/", follow=True).content.decode()
    assert 'id="docid"' in page and "Topic 6" in page


def test_repooling_with_the_novel_run_and_judging_shows_the_change(
    demo: Campaign, as_committed: Any
) -> None:
    judge_everything_left(demo, "annotator")  # finish pool v1 (topic 6)
    with as_committed():
        qrels_published(campaign=demo, note="pool v1 complete")
    novel = demo.runs.get(tag="novel-neural")
    novel.pooled = True
    novel.save()
    with as_committed():  # re-pool: pooled runs now include the novel one
        v2, created = pool_requested(campaign=demo)
    v2.refresh_from_db()
    assert created and v2.number == 2 and v2.num_added > 0
    assert v2.num_to_judge == v2.num_added  # only never-judged documents are queued
    assert judge_everything_left(demo, "annotator") == v2.num_to_judge
    with as_committed():
        latest, _ = qrels_published(campaign=demo, note="pool v2 judged")
        report = bias_report_request(campaign=demo, qrels=latest)
    assert report is not None
    report.refresh_from_db()
    before_after = report.result["before_after"]
    assert before_after["from"] == latest.number - 1
    assert before_after["runs"]["novel-neural"]["novel"] is True
    assert before_after["novel_gain"]["novel-neural"] > 0
    assert before_after["mean_others_recall_change"] < 0  # the known relevant set grew
    client = Client()
    client.force_login(get_user_model().objects.get(username="researcher"))
    page = client.get(f"/campaigns/{demo.pk}/bias/").content.decode()
    assert "Before and after re-pooling" in page
