"""No answer of the API is declared as a bare object: every response schema (and every object in
it) says its properties, or is a map whose values have a schema. The few that are free-form on
purpose are listed here with the reason."""

from __future__ import annotations

import json
from pathlib import Path
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
    unexpected = free_form_places(schema) - set(FREE_FORM_ON_PURPOSE)
    assert not unexpected, "\n".join(" ".join(p) or "(the whole body)" for p in sorted(unexpected))


def test_the_list_names_only_what_is_there(schema: dict[str, Any]) -> None:
    found = free_form_places(schema)
    assert set(FREE_FORM_ON_PURPOSE) <= found, set(FREE_FORM_ON_PURPOSE) - found


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


def validator(schema: dict[str, Any], component: str) -> Any:
    """A JSON Schema validator of ``component`` as schemathesis reads response schemas (OpenAPI's
    ``nullable`` as a null alternative)."""
    from jsonschema import Draft7Validator
    from schemathesis.specs.openapi.converter import to_json_schema

    components = {
        name: to_json_schema(s, nullable_keyword="nullable", is_response_schema=True)
        for name, s in schema["components"]["schemas"].items()
    }
    root = {"$ref": f"#/components/schemas/{component}", "components": {"schemas": components}}
    return Draft7Validator(root)


def test_stored_reports_match_their_declared_schemas(schema: dict[str, Any]) -> None:
    """What each viewer saw of the demo's stored reports (tests/test_typed_results.py) is valid
    under the components the API declares for it."""
    captured = json.loads(
        (Path(__file__).parent / "fixtures" / "stored_results_v1.json").read_text()
    )
    names = {"bias": "BiasResult", "reusability": "ReusabilityResult"}
    for case in captured["cases"]:
        check = validator(schema, names[case["kind"]])
        for seen in case["seen"].values():
            check.validate(seen)
    # a wrong type is caught
    assert not validator(schema, "BiasResult").is_valid({"qrels_version": "one"})
