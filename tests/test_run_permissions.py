"""Every API endpoint checks who is asking: researchers see their own runs only."""

from __future__ import annotations

from typing import Any

import pytest

from judging.campaigns.models import Run
from judging.workflows.runs import run_submitted

pytestmark = pytest.mark.django_db


@pytest.fixture
def ritas_run(campaign: Any, researcher: Any) -> Run:
    return run_submitted(
        campaign=campaign, owner=researcher, tag="rita-1", results={"401": {"d1": 2.0, "d2": 1.0}}
    )


@pytest.fixture
def oscars_run(campaign: Any, other_researcher: Any) -> Run:
    return run_submitted(
        campaign=campaign, owner=other_researcher, tag="oscar-1", results={"401": {"d3": 2.0}}
    )


def test_a_researcher_cannot_read_another_researchers_run(
    api_client_for: Any, researcher: Any, oscars_run: Run
) -> None:
    response = api_client_for(researcher).get(f"/api/v1/runs/{oscars_run.pk}/")
    assert response.status_code == 404


def test_a_researcher_cannot_delete_another_researchers_run(
    api_client_for: Any, researcher: Any, oscars_run: Run
) -> None:
    response = api_client_for(researcher).delete(f"/api/v1/runs/{oscars_run.pk}/")
    assert response.status_code == 404
    assert Run.objects.filter(pk=oscars_run.pk).exists()


def test_a_researcher_lists_only_their_own_runs(
    api_client_for: Any, researcher: Any, campaign: Any, ritas_run: Run, oscars_run: Run
) -> None:
    for url in ("/api/v1/runs/", f"/api/v1/campaigns/{campaign.pk}/runs/"):
        tags = [r["tag"] for r in api_client_for(researcher).get(url).json()["results"]]
        assert tags == ["rita-1"], url


def test_a_researcher_can_delete_their_own_run_and_its_entries(
    api_client_for: Any, researcher: Any, ritas_run: Run
) -> None:
    from judging.campaigns.models import RankedList

    response = api_client_for(researcher).delete(f"/api/v1/runs/{ritas_run.pk}/")
    assert response.status_code == 204
    assert not Run.objects.filter(pk=ritas_run.pk).exists()
    assert not RankedList.objects.filter(run_id=ritas_run.pk).exists()


def test_an_admin_sees_every_run(
    api_client_for: Any, admin_user: Any, ritas_run: Run, oscars_run: Run
) -> None:
    tags = {r["tag"] for r in api_client_for(admin_user).get("/api/v1/runs/").json()["results"]}
    assert tags == {"rita-1", "oscar-1"}


def test_an_annotator_cannot_list_read_or_submit_runs(
    api_client_for: Any, annotator: Any, campaign: Any, ritas_run: Run
) -> None:
    client = api_client_for(annotator)
    assert client.get("/api/v1/runs/").status_code == 403
    assert client.get(f"/api/v1/runs/{ritas_run.pk}/").status_code == 403
    assert client.get(f"/api/v1/campaigns/{campaign.pk}/runs/").status_code == 403
    response = client.post(
        f"/api/v1/campaigns/{campaign.pk}/runs/",
        {"tag": "x", "results": {"401": {"d1": 1}}},
        format="json",
    )
    assert response.status_code == 403
    assert Run.objects.count() == 1


def test_anonymous_requests_are_refused(api_client_for: Any, campaign: Any, ritas_run: Run) -> None:
    client = api_client_for(None)
    for url in (
        "/api/v1/runs/",
        f"/api/v1/runs/{ritas_run.pk}/",
        "/api/v1/campaigns/",
        f"/api/v1/campaigns/{campaign.pk}/runs/",
        "/api/v1/qrels/",
        "/api/v1/me/",
    ):
        assert client.get(url).status_code == 401, url


def test_a_user_without_a_role_sees_no_campaign(
    api_client_for: Any, make_user: Any, campaign: Any
) -> None:
    nobody = make_user("nobody")
    assert api_client_for(nobody).get("/api/v1/campaigns/").status_code == 403


def test_only_admins_decide_whether_a_run_is_pooled(
    api_client_for: Any, researcher: Any, admin_user: Any, ritas_run: Run
) -> None:
    url = f"/api/v1/runs/{ritas_run.pk}/"
    denied = api_client_for(researcher).patch(url, {"pooled": False}, format="json")
    assert denied.status_code == 403
    ritas_run.refresh_from_db()
    assert ritas_run.pooled is True
    ok = api_client_for(admin_user).patch(url, {"pooled": False}, format="json")
    assert ok.status_code == 200 and ok.json()["pooled"] is False


def test_a_researcher_may_edit_the_description_of_their_run(
    api_client_for: Any, researcher: Any, ritas_run: Run
) -> None:
    response = api_client_for(researcher).patch(
        f"/api/v1/runs/{ritas_run.pk}/", {"description": "BM25, k1=0.9"}, format="json"
    )
    assert response.status_code == 200
    ritas_run.refresh_from_db()
    assert ritas_run.description == "BM25, k1=0.9"


@pytest.mark.parametrize("who", ["researcher", "annotator"])
def test_only_admins_import_topics_documents_and_qrels(
    api_client_for: Any, request: Any, campaign: Any, who: str
) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    client = api_client_for(request.getfixturevalue(who))
    for kind, body in (
        ("topics", b'{"qid": "9", "title": "t"}\n'),
        ("documents", b'{"docid": "d9", "text": "t"}\n'),
        ("qrels", b"401 0 d1 1\n"),
    ):
        upload = SimpleUploadedFile(f"{kind}.txt", body)
        response = client.post(
            f"/api/v1/campaigns/{campaign.pk}/{kind}/", {"file": upload}, format="multipart"
        )
        assert response.status_code == 403, kind
    assert campaign.topics.count() == 3
    assert campaign.documents.count() == 0


def test_only_admins_create_campaigns(
    api_client_for: Any, researcher: Any, admin_user: Any
) -> None:
    body = {"name": "New one", "relevance_threshold": 1}
    assert (
        api_client_for(researcher).post("/api/v1/campaigns/", body, format="json").status_code
        == 403
    )
    created = api_client_for(admin_user).post("/api/v1/campaigns/", body, format="json")
    assert created.status_code == 201
    assert created.json()["scale"][0] == {"grade": 0, "label": "Not relevant"}


def test_annotators_cannot_read_qrels(api_client_for: Any, annotator: Any) -> None:
    assert api_client_for(annotator).get("/api/v1/qrels/").status_code == 403


def test_me_names_the_roles(api_client_for: Any, researcher: Any) -> None:
    body = api_client_for(researcher).get("/api/v1/me/").json()
    assert body["username"] == "rita-researcher" and body["roles"] == ["researcher"]


def test_a_token_is_issued_for_a_username_and_password(researcher: Any) -> None:
    from rest_framework.test import APIClient

    client = APIClient()
    bad = client.post("/api/v1/auth/token/", {"username": "rita-researcher", "password": "no"})
    assert bad.status_code == 400
    good = client.post(
        "/api/v1/auth/token/", {"username": "rita-researcher", "password": "pw-for-tests-only"}
    )
    assert good.status_code == 200
    token = good.json()["token"]
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert client.get("/api/v1/me/").json()["username"] == "rita-researcher"
