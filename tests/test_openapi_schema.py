"""The OpenAPI schema is served, valid, documents every error answer in the one error shape,
and the answers that do not come from a view (an unknown API URL, a server error) have it too."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from openapi_spec_validator import validate

pytestmark = pytest.mark.django_db


def test_the_schema_is_a_valid_openapi_document(api_client_for: Any, researcher: Any) -> None:
    response = api_client_for(researcher).get("/api/v1/schema/")
    assert response.status_code == 200
    schema = yaml.safe_load(response.content)
    validate(schema)
    post = schema["paths"]["/api/v1/campaigns/{id}/runs/"]["post"]
    assert {"201", "400", "409", "413"} <= set(post["responses"])
    assert "multipart/form-data" in post["requestBody"]["content"]


def test_the_interactive_docs_work_offline(api_client_for: Any, researcher: Any) -> None:
    client = api_client_for(researcher)
    client.force_login(researcher)
    page = client.get("/api/v1/docs/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "swagger-ui" in html
    assert "cdn.jsdelivr.net" not in html and "unpkg.com" not in html


def _schema(client: Any) -> dict[str, Any]:
    response = client.get("/api/v1/schema/")
    assert response.status_code == 200
    schema: dict[str, Any] = yaml.safe_load(response.content)
    return schema


def test_every_operation_documents_its_error_answers_in_the_one_shape(
    api_client_for: Any, researcher: Any
) -> None:
    schema = _schema(api_client_for(researcher))
    error = schema["components"]["schemas"]["Error"]
    assert {"error", "detail"} <= set(error["required"])
    assert {"problems", "problem_count", "problems_shown"} <= set(error["properties"])
    undocumented = []
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            responses = operation["responses"]
            expected = {"401", "403", "429"}
            parameters = operation.get("parameters", [])
            if parameters or "requestBody" in operation:
                expected.add("400")
            if any(p["in"] == "path" for p in parameters):
                expected.add("404")
            if method != "get":
                expected.add("409")
            if "requestBody" in operation:
                expected |= {"413", "415"}
            missing = expected - set(responses)
            if missing:
                undocumented.append(f"{method.upper()} {path}: {sorted(missing)}")
            for status, response in responses.items():
                if status.startswith("4"):
                    body = response.get("content", {}).get("application/json", {})
                    if body.get("schema") != {"$ref": "#/components/schemas/Error"}:
                        undocumented.append(f"{method.upper()} {path} {status}: not an Error")
    assert undocumented == []
    unauthorized = schema["paths"]["/api/v1/me/"]["get"]["responses"]["401"]
    assert unauthorized["headers"]["WWW-Authenticate"]["required"] is True
    assert "Retry-After" in schema["paths"]["/api/v1/me/"]["get"]["responses"]["429"]["headers"]


def test_a_bad_token_is_a_401_error_body_with_its_challenge(api_client_for: Any) -> None:
    client = api_client_for(None)
    client.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    response = client.get("/api/v1/me/")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    assert response.json() == {"error": "not_authenticated", "detail": "Invalid token."}


def test_an_api_url_that_matches_no_view_is_a_json_404_in_the_one_shape(
    api_client_for: Any, annotator: Any
) -> None:
    """Was Django's HTML page: ``<int:campaign_id>`` does not match ``abc``, no view runs."""
    response = api_client_for(annotator).post("/api/v1/campaigns/abc/leases/")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json() == {
        "error": "not_found",
        "detail": "no such URL: /api/v1/campaigns/abc/leases/",
    }


def test_pages_keep_django_s_404_page(client: Any) -> None:
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


def test_a_server_error_under_the_api_is_an_error_body_that_says_no_more(rf: Any) -> None:
    from judging.api.errors import server_error

    response = server_error(rf.get("/api/v1/campaigns/"))
    assert response.status_code == 500
    assert response["Content-Type"] == "application/json"
    assert yaml.safe_load(response.content) == {
        "error": "server_error",
        "detail": "the server failed; the failure is logged",
    }
    page = server_error(rf.get("/campaigns/"))
    assert page.status_code == 500 and page["Content-Type"].startswith("text/html")


def test_two_result_types_of_one_name_are_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """A component is keyed by its class' name: a second result type of that name (another
    module's) would silently get the first one's schema, as the human sample's progress once
    did (``autojudge.answers`` and ``autojudge.answer_samples`` each had a ``SampleProgress``)."""
    from dataclasses import dataclass

    from judging.api import result_schemas

    monkeypatch.setattr(result_schemas, "COMPONENTS", {})
    monkeypatch.setattr(result_schemas, "_SOURCES", {})

    @dataclass(frozen=True)
    class Progress:
        graded: int

    def elsewhere() -> type:
        @dataclass(frozen=True)
        class Progress:
            judged: int

        return Progress

    assert result_schemas.ref(Progress) == {"$ref": "#/components/schemas/Progress"}
    assert result_schemas.ref(Progress) == {"$ref": "#/components/schemas/Progress"}
    with pytest.raises(TypeError, match="two result types are named 'Progress'"):
        result_schemas.ref(elsewhere())
    assert result_schemas.COMPONENTS["Progress"]["required"] == ["graded"]
