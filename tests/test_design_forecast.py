"""The budget planner's design forecast (issue 32, point 6): on a campaign whose pilot topics
are judged in full, ``GET .../plan/designs/?budget=N`` answers each design's simulated tau, RMSE
and interval, the recommended design and what it rests on, and the topics a target width takes;
the progress page shows the same; bad parameters are 400s naming them."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from django.test import Client

from judging.workflows.qrels import qrels_imported
from judging.workflows.runs import run_submitted

pytestmark = pytest.mark.django_db

TOPICS = ("401", "402", "403")


def _judged_campaign(campaign: Any, owner: Any) -> None:
    rng = np.random.default_rng(2)
    grades = {q: {f"d{q}-{i}": int(rng.random() < 0.3) for i in range(25)} for q in TOPICS}
    for r in range(4):
        results = {}
        for q in TOPICS:
            docs = sorted(grades[q], key=lambda d: -(grades[q][d] * r * 0.4 + rng.random()))
            results[q] = {d: float(20 - i) for i, d in enumerate(docs[:20])}
        run_submitted(campaign=campaign, owner=owner, tag=f"run{r}", results=results, pooled=True)
    campaign.pool_depth = 20
    campaign.save()
    lines = "".join(f"{q} 0 {d} {g}\n" for q in TOPICS for d, g in grades[q].items())
    qrels_imported(campaign=campaign, data=lines.encode())


def test_the_forecast_through_the_api_and_the_page(
    campaign, researcher, admin_user, api_client_for
) -> None:
    _judged_campaign(campaign, researcher)
    api = api_client_for(admin_user)
    r = api.get(f"/api/v1/campaigns/{campaign.pk}/plan/designs/?budget=20&reps=3")
    assert r.status_code == 200, r.content
    body = r.json()
    assert [d["design"] for d in body["designs"]] == ["depth-k", "stratified", "statAP", "hybrid"]
    assert body["pilot_topics"] == list(TOPICS) and body["reps"] == 3
    assert body["recommended"] in {d["design"] for d in body["designs"]}
    assert "3 pilot topics" in body["basis"] and body["sentence"].startswith("At 20 judgments")
    assert set(body["topics_for_width"]) == {
        "difference 0.05",
        "mean 0.05",
        "difference 0.1",
        "mean 0.1",
    }
    for query, name in (("", "budget"), ("?budget=0", "budget"), ("?budget=5&reps=999", "reps")):
        bad = api.get(f"/api/v1/campaigns/{campaign.pk}/plan/designs/{query}")
        assert bad.status_code == 400 and bad.json()["problems"][0]["location"] == name

    web = Client()
    web.force_login(admin_user)
    page = web.get(f"/manage/{campaign.pk}/?budget=20").content.decode()
    assert 'id="forecast-designs"' in page and "is recommended" in page


def test_without_pilot_topics_the_forecast_says_what_is_missing(
    campaign, researcher, admin_user, api_client_for
) -> None:
    run_submitted(
        campaign=campaign, owner=researcher, tag="a", results={"401": {"x": 1.0}}, pooled=True
    )
    run_submitted(
        campaign=campaign, owner=researcher, tag="b", results={"401": {"y": 1.0}}, pooled=True
    )
    qrels_imported(campaign=campaign, data=b"401 0 x 1\n")
    r = api_client_for(admin_user).get(f"/api/v1/campaigns/{campaign.pk}/plan/designs/?budget=5")
    assert r.status_code == 400
    assert "needs at least two (pilot topics)" in r.json()["detail"]
