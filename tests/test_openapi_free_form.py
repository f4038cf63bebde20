"""No answer of the API is declared as a bare object: every response schema (and every object in
it) says its properties, or is a map whose values have a schema. The few that are free-form on
purpose are listed here with the reason; the answers not typed yet are listed apart, so that the
list can only shrink."""

from __future__ import annotations

from typing import Any

import pytest
from drf_spectacular.generators import SchemaGenerator

# (method, path, status, where in the body) -> why it is free-form
FREE_FORM_ON_PURPOSE: dict[tuple[str, str, str, str], str] = {
    **{
        (method, path, status, ".params"): "an automatic judge's parameters: each kind of "
        "judge (LLM endpoint, embedding model, imported labels) takes its own"
        for method, path, status in (
            ("post", "/api/v1/campaigns/{campaign_id}/judges/", "201"),
            ("post", "/api/v1/campaigns/{campaign_id}/judges/", "200"),
            ("get", "/api/v1/judges/{id}/", "200"),
        )
    },
    **{
        (method, path, status, ".scale[]"): "a grade of the campaign's relevance scale as the "
        "admin wrote it (its label and key, checked by campaigns.models.scale_problems)"
        for method, path, status in (
            ("post", "/api/v1/campaigns/{campaign_id}/leases/", "201"),
            ("post", "/api/v1/campaigns/{campaign_id}/undo/", "201"),
            ("get", "/api/v1/leases/{id}/", "200"),
            ("post", "/api/v1/leases/{id}/renew/", "200"),
        )
    },
    **{
        ("post", "/api/v1/collections/", status, ".summary"): "the import plan's summary, "
        "whose tables depend on the collection's format"
        for status in ("201", "200")
    },
}

# Answers still declared as a bare object (issue 30, typed results: not done yet).
NOT_TYPED_YET: set[tuple[str, str, str, str]] = {
    ("get", "/api/v1/campaigns/{campaign_id}/exclusions/", "200", ""),
    ("get", "/api/v1/campaigns/{campaign_id}/gold/", "200", ""),
    ("get", "/api/v1/campaigns/{campaign_id}/plan/", "200", ""),
    ("get", "/api/v1/campaigns/{campaign_id}/quality/", "200", ""),
    ("get", "/api/v1/campaigns/{campaign_id}/suggestions/", "200", ""),
    ("get", "/api/v1/runs/{id}/check/", "200", ""),
    ("get", "/api/v1/runs/{id}/check/", "202", ""),
    ("post", "/api/v1/campaigns/{campaign_id}/exclusions/", "201", ""),
    ("post", "/api/v1/campaigns/{campaign_id}/exclusions/{id}/lift/", "200", ""),
}


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    generated: dict[str, Any] = SchemaGenerator().get_schema(request=None, public=True)
    return generated


def free_form_places(schema: dict[str, Any]) -> set[tuple[str, str, str, str]]:
    components = schema["components"]["schemas"]

    def resolve(node: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in node:
            node = components[node["$ref"].rsplit("/", 1)[-1]]
        return node

    def free_form(node: dict[str, Any]) -> bool:
        return (
            node.get("type") == "object"
            and not node.get("properties")
            and node.get("additionalProperties") in (None, True, {})
            and node.get("maxProperties") != 0  # an empty object is not free-form
            and not any(k in node for k in ("allOf", "anyOf", "oneOf"))
        )

    found: set[tuple[str, str, str, str]] = set()

    def walk(node: dict[str, Any], where: str, seen: frozenset[str], at: tuple[str, ...]) -> None:
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[-1]
            if name in seen:
                return
            seen |= {name}
        node = resolve(node)
        if free_form(node):
            found.add((*at, where))  # type: ignore[arg-type]
            return
        for key in ("allOf", "anyOf", "oneOf"):
            for part in node.get(key, []):
                walk(part, where, seen, at)
        for name, prop in (node.get("properties") or {}).items():
            walk(prop, f"{where}.{name}", seen, at)
        if isinstance(node.get("additionalProperties"), dict):
            walk(node["additionalProperties"], f"{where}.*", seen, at)
        if "items" in node:
            walk(node["items"], f"{where}[]", seen, at)

    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            for status, response in operation.get("responses", {}).items():
                for content in (response.get("content") or {}).values():
                    if "schema" in content:
                        walk(content["schema"], "", frozenset(), (method, path, str(status)))
    return found


def test_no_answer_is_a_free_form_object(schema: dict[str, Any]) -> None:
    unexpected = free_form_places(schema) - set(FREE_FORM_ON_PURPOSE) - NOT_TYPED_YET
    assert not unexpected, "\n".join(" ".join(p) or "(the whole body)" for p in sorted(unexpected))


def test_the_lists_name_only_what_is_there(schema: dict[str, Any]) -> None:
    found = free_form_places(schema)
    assert set(FREE_FORM_ON_PURPOSE) <= found, set(FREE_FORM_ON_PURPOSE) - found
    assert found >= NOT_TYPED_YET, NOT_TYPED_YET - found  # typed since: take it off the list


def test_the_reports_declare_their_results(schema: dict[str, Any]) -> None:
    components = schema["components"]["schemas"]
    bias = components["BiasResult"]["properties"]
    assert bias["loo"]["allOf"] == [{"$ref": "#/components/schemas/Loo"}]
    loo = components["Loo"]["properties"]
    assert loo["runs"]["additionalProperties"] == {"$ref": "#/components/schemas/LooRun"}
    assert "anonymised" in loo["max_delta_run"]["description"]
    reusability = components["ReusabilityResult"]["properties"]
    assert reusability["unique_relevant"]["additionalProperties"] == {"type": "integer"}
    assert "version" not in reusability  # stored, not shown


def test_stored_reports_match_their_declared_schemas(schema: dict[str, Any]) -> None:
    """What each viewer saw of the demo's stored reports (tests/test_typed_results.py) is valid
    under the components the API declares for it."""
    import json
    from pathlib import Path

    from openapi_schema_validator import OAS30Validator

    captured = json.loads(
        (Path(__file__).parent / "fixtures" / "stored_results_v1.json").read_text()
    )
    components = {"components": schema["components"]}
    names = {"bias": "BiasResult", "reusability": "ReusabilityResult"}
    for case in captured["cases"]:
        component = {"$ref": f"#/components/schemas/{names[case['kind']]}", **components}
        validator = OAS30Validator(component)
        for seen in case["seen"].values():
            validator.validate(seen)
