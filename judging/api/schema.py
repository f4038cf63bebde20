"""drf-spectacular hooks: aliases left out, every error answer documented in the one shape."""

from __future__ import annotations

from typing import Any

ERROR_REF = {"$ref": "#/components/schemas/Error"}

# The statuses an operation can answer besides its own, and when (judging.api.errors makes
# each of them an Error body). Descriptions an operation gives itself are kept.
ERROR_DESCRIPTIONS = {
    "400": "invalid input: every problem listed, with where it is; nothing stored",
    "401": "no credentials, or a bad or expired token",
    "403": "not allowed for your role (or a session request without its CSRF token)",
    "404": "no such object visible to you",
    "409": "conflicts with the stored state (a tag already used, a build not finished, ...)",
    "413": "the request body or the file is too large",
    "415": "a request body in a media type the operation does not take",
    "429": "too many requests; retry after the Retry-After header's seconds",
}
UNSAFE_METHODS = {"post", "put", "patch", "delete"}


def drop_alias_paths(endpoints: list[tuple[Any, ...]], **kwargs: Any) -> list[tuple[Any, ...]]:
    """Leave out aliases that exist for scripts (``/export`` beside ``/export/``)."""
    return [e for e in endpoints if not e[0].endswith("/export")]


def document_errors(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Give every operation the error answers it can give, each with the ``Error`` body.

    400 where it takes parameters or a body; 401 and 403 where it needs credentials (a
    bad token is refused even where none is needed); 404 where its path names an object;
    409 for changes; 413 and 415 where it takes a body; 429 everywhere (throttles). An error
    an operation documents without a body gets the ``Error`` body.
    """
    for methods in result.get("paths", {}).values():
        for method, operation in methods.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            for status in _error_statuses(method, operation):
                _document(operation["responses"], status)
            for status, response in operation["responses"].items():
                if str(status).startswith("4"):
                    _document(operation["responses"], str(status), response)
    return result


def _error_statuses(method: str, operation: dict[str, Any]) -> list[str]:
    parameters = operation.get("parameters", [])
    has_body = "requestBody" in operation
    statuses = ["401", "403", "429"]
    if parameters or has_body:
        statuses.append("400")
    if any(p.get("in") == "path" for p in parameters):
        statuses.append("404")
    if method in UNSAFE_METHODS:
        statuses.append("409")
    if has_body:
        statuses += ["413", "415"]
    return statuses


def _document(
    responses: dict[str, Any], status: str, response: dict[str, Any] | None = None
) -> None:
    response = responses.setdefault(status, response or {})
    response.setdefault("description", ERROR_DESCRIPTIONS.get(status, "error"))
    response.setdefault("content", {"application/json": {"schema": ERROR_REF}})
    if status == "401":
        response.setdefault("headers", {})["WWW-Authenticate"] = {
            "description": "how to authenticate: Token",
            "required": True,
            "schema": {"type": "string"},
        }
    if status == "429":
        response.setdefault("headers", {})["Retry-After"] = {
            "description": "seconds to wait before the next request",
            "schema": {"type": "integer"},
        }


def add_result_components(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Put the components of the result types the views refer to (``api.result_schemas.ref``) in
    the schema; a name already taken by a serializer's component is an error, not a silent
    overwrite."""
    from judging.api.result_schemas import COMPONENTS

    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    for name, component in COMPONENTS.items():
        if name in schemas and schemas[name] != component:
            raise ValueError(f"two OpenAPI components are named {name!r}")
        schemas[name] = component
    return result
