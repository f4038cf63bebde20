"""Changing a campaign or a run goes through a service that validates the whole object."""

from __future__ import annotations

from typing import Any

import pytest

from judging.campaigns.models import Campaign
from judging.workflows.runs import run_submitted

pytestmark = pytest.mark.django_db


def test_a_patch_that_leaves_no_gradable_scale_is_400_and_stores_nothing(
    campaign: Any, api_client_for: Any, admin_user: Any
) -> None:
    before = Campaign.objects.values().get(pk=campaign.pk)
    r = api_client_for(admin_user).patch(
        f"/api/v1/campaigns/{campaign.pk}/",
        {"relevance_threshold": 7, "scale": [{"grade": 5, "label": "x"}]},
        format="json",
    )
    assert r.status_code == 400, r.json()
    body = r.json()
    assert body["error"] == "invalid_input"
    assert [p["location"] for p in body["problems"]] == ["scale"]
    assert Campaign.objects.values().get(pk=campaign.pk) == before


def test_a_threshold_that_is_not_a_grade_of_the_scale_is_refused(
    campaign: Any, api_client_for: Any, admin_user: Any
) -> None:
    r = api_client_for(admin_user).patch(
        f"/api/v1/campaigns/{campaign.pk}/", {"relevance_threshold": 7}, format="json"
    )
    assert r.status_code == 400
    assert r.json()["problems"][0]["location"] == "relevance_threshold"
    campaign.refresh_from_db()
    assert campaign.relevance_threshold == 1


def test_a_valid_patch_changes_the_campaign_and_answers_with_its_counts(
    campaign: Any, api_client_for: Any, admin_user: Any
) -> None:
    r = api_client_for(admin_user).patch(
        f"/api/v1/campaigns/{campaign.pk}/",
        {"relevance_threshold": 2, "description": "graded"},
        format="json",
    )
    assert r.status_code == 200, r.json()
    assert r.json()["relevance_threshold"] == 2 and r.json()["num_topics"] == 3
    campaign.refresh_from_db()
    assert (campaign.relevance_threshold, campaign.description) == (2, "graded")


def test_only_admins_change_a_campaign(campaign: Any, api_client_for: Any, researcher: Any) -> None:
    r = api_client_for(researcher).patch(
        f"/api/v1/campaigns/{campaign.pk}/", {"description": "mine"}, format="json"
    )
    assert r.status_code == 403
    campaign.refresh_from_db()
    assert campaign.description == ""


def test_a_researcher_cannot_pool_their_run_on_submission_either(
    campaign: Any, api_client_for: Any, researcher: Any
) -> None:
    r = api_client_for(researcher).post(
        f"/api/v1/campaigns/{campaign.pk}/runs/",
        {"tag": "mine", "results": {"401": {"d1": 1.0}}, "pooled": False},
        format="json",
    )
    assert r.status_code == 403
    assert not campaign.runs.exists()


def test_a_run_patch_answers_with_the_whole_run(
    campaign: Any, api_client_for: Any, researcher: Any
) -> None:
    run = run_submitted(campaign=campaign, owner=researcher, tag="r1", results={"401": {"d1": 1.0}})
    r = api_client_for(researcher).patch(
        f"/api/v1/runs/{run.pk}/", {"group": "lab", "priority": 3}, format="json"
    )
    assert r.status_code == 200
    assert r.json()["tag"] == "r1" and r.json()["group"] == "lab" and r.json()["priority"] == 3
