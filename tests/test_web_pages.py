"""Browser pages: login required, and each role sees only what it may."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from judging.workflows.runs import run_submitted

pytestmark = pytest.mark.django_db


def test_pages_need_a_login(client: Client) -> None:
    response = client.get("/")
    assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_login_page_logs_a_user_in(client: Client, researcher: Any) -> None:
    response = client.post(
        "/login/", {"username": "rita-researcher", "password": "pw-for-tests-only"}
    )
    assert response.status_code == 302
    assert client.get("/").status_code == 200


def test_a_researcher_sees_their_runs_and_an_annotator_sees_none(
    client: Client, campaign: Any, researcher: Any, annotator: Any
) -> None:
    run_submitted(
        campaign=campaign, owner=researcher, tag="secret-system", results={"401": {"d1": 1.0}}
    )
    client.force_login(researcher)
    assert "secret-system" in client.get("/").content.decode()
    client.force_login(annotator)
    page = client.get("/").content.decode()
    assert "Test campaign" in page
    assert "secret-system" not in page
