"""Runs declare the models they are built on (for the judge audit's circularity flag)."""

from __future__ import annotations

from typing import Any

import pytest

from judging.campaigns.models import Campaign, Run

pytestmark = pytest.mark.django_db


def test_a_run_declares_its_models_and_may_change_them(
    campaign: Campaign, researcher: Any, api_client_for: Any
) -> None:
    api = api_client_for(researcher)
    r = api.post(
        f"/api/v1/campaigns/{campaign.pk}/runs/",
        {
            "tag": "rag-1",
            "results": {"401": {"d1": 2.0, "d2": 1.0}},
            "model_names": ["gpt-4o", " bge-base ", "gpt-4o"],
        },
        format="json",
    )
    assert r.status_code == 201, r.content
    assert r.json()["model_names"] == ["gpt-4o", "bge-base"]  # trimmed, repeats dropped
    run = Run.objects.get()
    assert run.model_names == ["gpt-4o", "bge-base"]
    r = api.patch(f"/api/v1/runs/{run.pk}/", {"model_names": ["llama-3-70b"]}, format="json")
    assert r.status_code == 200, r.content
    run.refresh_from_db()
    assert run.model_names == ["llama-3-70b"]


def test_too_many_or_too_long_model_names_are_400_naming_the_field(
    campaign: Campaign, researcher: Any, api_client_for: Any
) -> None:
    api = api_client_for(researcher)
    for names in ([f"m{i}" for i in range(21)], ["x" * 201]):
        r = api.post(
            f"/api/v1/campaigns/{campaign.pk}/runs/",
            {"tag": "bad", "results": {"401": {"d1": 1.0}}, "model_names": names},
            format="json",
        )
        assert r.status_code == 400, r.content
        assert "model_names" in r.content.decode()
    assert not Run.objects.exists()
