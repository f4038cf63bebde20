"""The OpenAPI schema is served, valid, and documents the run submission endpoint."""

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
