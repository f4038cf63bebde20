"""Every 4xx answer of the API has one shape: {"error": code, "detail": message} (+ problems)."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings
from rest_framework.test import APIClient
from rest_framework.throttling import BaseThrottle

from judging.api.errors import _flatten
from judging.api.views import MeView
from judging.workflows import runs as run_workflow
from metrics.problems import InvalidInput as ReaderError
from metrics.problems import Problem
from tests.knobs import override_knobs

pytestmark = pytest.mark.django_db


def assert_shape(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.content
    body: dict[str, Any] = response.json()
    assert body["error"] == code
    assert isinstance(body["detail"], str) and body["detail"]
    assert set(body) <= {"error", "detail", "problems", "problem_count", "problems_shown", "source"}
    if "problems" in body:
        assert body["problem_count"] >= body["problems_shown"] == len(body["problems"])
        for problem in body["problems"]:
            assert set(problem) <= {"message", "line", "location"} and problem["message"]
    return body


def test_serializer_errors_are_problems_located_by_field_path(
    api_client_for: Any, admin_user: Any, campaign: Any
) -> None:
    response = api_client_for(admin_user).post(
        f"/api/v1/campaigns/{campaign.pk}/pools/",
        {"depth": 0, "runs": ["bm25", {"not": "a tag"}]},
        format="json",
    )
    body = assert_shape(response, 400, "invalid_input")
    assert {p["location"] for p in body["problems"]} == {"depth", "runs[1]"}
    assert body["problem_count"] == 2 and body["detail"] == "the request has 2 problem(s)"


def test_nested_serializer_errors_name_the_index_and_the_field() -> None:
    detail = {"results": [{}, {}, {}, {"docid": ["This field is required."]}], "tag": ["bad"]}

    assert _flatten(detail, "") == [
        ("results[3].docid", "This field is required."),
        ("tag", "bad"),
    ]


def test_an_empty_file_is_a_problem_of_the_file_field(
    api_client_for: Any, researcher: Any, campaign: Any
) -> None:
    response = api_client_for(researcher).post(
        f"/api/v1/campaigns/{campaign.pk}/runs/",
        {"file": SimpleUploadedFile("run.txt", b"")},
        format="multipart",
    )
    body = assert_shape(response, 400, "invalid_input")
    (problem,) = body["problems"]
    assert problem["location"] == "file" and "empty" in problem["message"]
    assert body["detail"] == f"file: {problem['message']}"


def test_a_missing_file_is_a_problem_of_the_file_field(
    api_client_for: Any, admin_user: Any, campaign: Any
) -> None:
    response = api_client_for(admin_user).post(
        f"/api/v1/campaigns/{campaign.pk}/topics/", {}, format="multipart"
    )
    body = assert_shape(response, 400, "invalid_input")
    assert body["problems"] == [{"message": "missing file", "location": "file"}]


def test_a_bad_login_is_invalid_input() -> None:
    response = APIClient().post(
        "/api/v1/auth/token/", {"username": "nobody", "password": "wrong"}, format="json"
    )
    body = assert_shape(response, 400, "invalid_input")
    assert body["detail"] == "Unable to log in with provided credentials."
    assert body["problems"] == [{"message": "Unable to log in with provided credentials."}]


def test_a_missing_login_field_is_located(make_user: Any) -> None:
    response = APIClient().post("/api/v1/auth/token/", {"username": "x"}, format="json")
    body = assert_shape(response, 400, "invalid_input")
    assert [p["location"] for p in body["problems"]] == ["password"]


def test_no_credentials_is_401_not_authenticated() -> None:
    response = APIClient().get("/api/v1/me/")
    assert_shape(response, 401, "not_authenticated")
    assert response["WWW-Authenticate"] == "Token"


def test_a_bad_token_is_401_not_authenticated() -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    assert_shape(client.get("/api/v1/me/"), 401, "not_authenticated")


def test_a_role_without_permission_is_403(
    api_client_for: Any, annotator: Any, campaign: Any
) -> None:
    response = api_client_for(annotator).get("/api/v1/runs/")
    assert_shape(response, 403, "permission_denied")


def test_an_object_out_of_sight_is_404(api_client_for: Any, researcher: Any) -> None:
    body = assert_shape(api_client_for(researcher).get("/api/v1/runs/999999/"), 404, "not_found")
    assert body["detail"] == "No Run matches the given query."


def test_an_unknown_method_is_405(api_client_for: Any, researcher: Any) -> None:
    response = api_client_for(researcher).delete("/api/v1/me/")
    body = assert_shape(response, 405, "method_not_allowed")
    assert "DELETE" in body["detail"]


class _Refuse(BaseThrottle):
    def allow_request(self, request: Any, view: Any) -> bool:
        return False

    def wait(self) -> float:
        return 30.0


def test_too_many_requests_is_429(
    api_client_for: Any, researcher: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(MeView, "throttle_classes", [_Refuse])
    response = api_client_for(researcher).get("/api/v1/me/")
    assert_shape(response, 429, "throttled")
    assert response["Retry-After"] == "30"


def test_a_body_that_does_not_parse_is_400(api_client_for: Any, admin_user: Any) -> None:
    response = api_client_for(admin_user).post(
        "/api/v1/campaigns/", b'{"name": ', content_type="application/json"
    )
    body = assert_shape(response, 400, "parse_error")
    assert "JSON parse error" in body["detail"]


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=100)
def test_a_body_over_the_request_limit_is_413(api_client_for: Any, admin_user: Any) -> None:
    response = api_client_for(admin_user).post(
        "/api/v1/campaigns/", {"name": "x" * 500}, format="json"
    )
    assert_shape(response, 413, "too_large")


@override_knobs(max_upload_bytes=10)
def test_a_file_over_the_upload_limit_is_413(
    api_client_for: Any, researcher: Any, campaign: Any
) -> None:
    response = api_client_for(researcher).post(
        f"/api/v1/campaigns/{campaign.pk}/runs/",
        {"file": SimpleUploadedFile("run.txt", b"401 Q0 d1 1 1.0 t\n")},
        format="multipart",
    )
    assert_shape(response, 413, "too_large")


def test_a_reader_error_that_reaches_a_view_is_400_not_500(
    api_client_for: Any, researcher: Any, campaign: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    def stray(**kwargs: Any) -> Any:
        raise ReaderError("run.txt", [Problem(2, "score 'x' is not a number")], 3)

    monkeypatch.setattr(run_workflow, "run_submit", stray)  # what the workflow calls
    response = api_client_for(researcher).post(
        f"/api/v1/campaigns/{campaign.pk}/runs/",
        {"file": SimpleUploadedFile("run.txt", b"401 Q0 d1 1 1.0 t\n")},
        format="multipart",
    )
    body = assert_shape(response, 400, "invalid_input")
    assert body["problems"] == [{"message": "score 'x' is not a number", "line": 2}]
    assert (body["problem_count"], body["source"]) == (3, "run.txt")


def test_a_domain_error_keeps_its_code(api_client_for: Any, researcher: Any, campaign: Any) -> None:
    response = api_client_for(researcher).post(
        f"/api/v1/campaigns/{campaign.pk}/runs/",
        {"tag": "has space", "results": {"401": {"d1": 1.0}}},
        format="json",
    )
    body = assert_shape(response, 400, "invalid_input")
    assert body["problems"] == [
        {"message": "a tag is 1-255 bytes (UTF-8) without white space", "location": "tag"}
    ]
