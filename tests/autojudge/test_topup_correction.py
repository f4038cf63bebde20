"""An automatic judge correcting a top-up (issue 31, point 4; ``autojudge.topups``): it grades
the run's whole hole, the people's grades of the sample correct it, and the corrected interval
holds the run's score with its hole judged."""

from __future__ import annotations

import html
import re
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from judging.assessments.models import TopUp
from judging.autojudge.models import JudgeKind, JudgeRun
from judging.autojudge.services import judge_create, judge_run_request, labels_import
from judging.campaigns.models import Campaign, RankedList
from judging.core.errors import Conflict
from judging.demo.data import build
from tests.test_demo_story import NOVEL, judge_everything_left

pytestmark = [pytest.mark.django_db, pytest.mark.follow_ups]


def _p10_with_truth(demo: Campaign, topics: set[str]) -> float:
    truth = build().truth
    lists = RankedList.objects.filter(run__campaign=demo, run__tag=NOVEL, topic__qid__in=topics)
    scores = [
        sum(truth[q].get(d, 0) >= 1 for d in docids.split("\n")[:10]) / 10
        for q, docids in lists.values_list("topic__qid", "docids")
    ]
    return sum(scores) / len(topics)


def test_a_judge_grades_the_hole_and_the_judged_sample_corrects_it(
    demo: Campaign, api_client_for: Any, topup_seed: int
) -> None:
    admin = get_user_model().objects.get(username="admin")
    novel = demo.runs.get(tag=NOVEL)
    api = api_client_for(admin)
    judge_everything_left(demo, "annotator")  # topic 6 of pool v1 first: 17 documents unjudged
    judge = judge_create(campaign=demo, name="truth-file", kind=JudgeKind.IMPORTED, model="m")
    url = f"/api/v1/runs/{novel.pk}/topup/"
    refused = api.post(url, {"budget": 1, "design": "per_topic", "judge": judge.pk}, format="json")
    assert refused.status_code == 400
    assert "a judge corrects a uniform top-up only" in refused.json()["problems"][0]["message"]
    assert not TopUp.objects.filter(run=novel).exists()  # nothing half-stored
    made = api.post(url, {"budget": 5, "judge": judge.pk}, format="json")
    assert made.status_code == 201, made.content
    assert made.json()["correction"]["graded"] == 0  # its labels come from a file, not yet here
    assert made.json()["correction"]["labelling"] == "imported"
    topup = TopUp.objects.get(pk=made.json()["id"])
    truth = build().truth
    pairs = list(topup.items.values_list("topic__qid", "docid"))
    assert len(pairs) == 17
    labels_import(
        judge=judge,
        data="".join(f"{q} 0 {d} {truth[q].get(d, 0)}\n" for q, d in pairs).encode(),
    )
    assert judge_everything_left(demo, "annotator") == 5
    status = api.get(url).json()["topups"][0]
    correction = status["correction"]
    assert (correction["graded"], correction["hole"], correction["judged"]) == (17, 17, 5)
    exact = _p10_with_truth(demo, {str(t) for t in range(1, 7)})
    plain, corrected = status["estimates"]["P@10"], correction["estimates"]["P@10"]
    assert corrected["low"] - 1e-9 <= exact <= corrected["high"] + 1e-9
    assert plain["low"] - 1e-9 <= exact <= plain["high"] + 1e-9
    # never wider than the 5 alone (here both reach the bound 1.0: nearly all of the hole is
    # relevant; tests/metrics/test_topup.py measures how much a right judge narrows)
    assert corrected["high"] - corrected["low"] <= plain["high"] - plain["low"] + 1e-9
    client = Client()
    client.force_login(admin)
    page = client.get(f"/runs/{novel.pk}/").content.decode()
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())
    assert f'id="topup-correction-{topup.pk}"' in page
    assert "With truth-file v1's grades (17 of the 17 graded) corrected by the 5 judged" in text
    assert f'<option value="{judge.pk}">' in page  # the form offers the campaign's judges
    out = StringIO()
    call_command("topup", "--campaign", str(demo.pk), NOVEL, "--status", stdout=out)
    assert "with truth-file v1 (17 of 17 graded)" in out.getvalue()


def test_a_runnable_judge_labels_the_top_ups_hole_by_its_job(
    demo: Campaign, as_committed: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from judging.autojudge import services
    from judging.workflows.topups import topup_requested
    from tests.autojudge.judge_setup import Scripted

    monkeypatch.setitem(services._LABELLERS, JudgeKind.EMBEDDING, Scripted)
    judge = judge_create(
        campaign=demo, name="minilm", kind=JudgeKind.EMBEDDING, model="all-MiniLM-L6-v2"
    )
    novel = demo.runs.get(tag=NOVEL)
    with as_committed():
        topup = topup_requested(run=novel, budget=3, requested_by=None, judge=judge)
    run = JudgeRun.objects.get(topup=topup)
    run.refresh_from_db()
    assert run.state == "done", run.error
    assert run.pool is None and run.total == topup.items.count() == run.ok
    assert str(run) == f"{judge} over the top-up of run {NOVEL}"
    imported = judge_create(campaign=demo, name="file", kind=JudgeKind.IMPORTED, model="m")
    with pytest.raises(Conflict, match="imported"):
        judge_run_request(judge=imported, topup=topup)
