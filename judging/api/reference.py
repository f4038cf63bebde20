"""The API reference page (``docs/reference/api.md``) rendered from the OpenAPI schema.

``make docs-reference`` writes the schema with ``manage.py spectacular --format openapi-json``
and renders it here; ``tests/test_docs.py`` fails when the committed page is out of date. This
module reads a plain JSON document: it imports neither Django nor the API's views.

    python -m judging.api.reference SCHEMA.json [OUTPUT.md]
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

REGENERATE = "make docs-reference"
METHODS = ("get", "post", "put", "patch", "delete")

INT_FORMATS = ("int32", "int64")


def _one_line(text: str) -> str:
    """A description as one Markdown table cell: blank lines and pipes would break the row. A
    pipe inside a code span stays as it is (Python-Markdown does not split a cell there, and would
    show the backslash)."""
    parts = re.sub(r"\s+", " ", text).strip().split("`")
    return "`".join(p if i % 2 else p.replace("|", "\\|") for i, p in enumerate(parts))


def _anchor(name: str) -> str:
    return "schema-" + name.lower()


def _type(schema: dict[str, Any]) -> str:
    """A schema in a few words: ``[Run](#schema-run)``, ``array of string``, ``integer, null``."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{_anchor(name)})"
    for key, joiner in (("oneOf", " or "), ("anyOf", " or "), ("allOf", " and ")):
        if key in schema:
            return joiner.join(_type(s) for s in schema[key])
    kind = schema.get("type", "any")
    if isinstance(kind, list):
        kind = ", ".join(kind)
    if kind == "array":
        text = f"array of {_type(schema.get('items', {}))}"
    elif kind == "object" and schema.get("additionalProperties") not in (None, True, {}):
        text = f"object of {_type(schema['additionalProperties'])}"
    else:
        text = str(kind)
        # an integer's int32/int64 follows the database's column range (PostgreSQL's positive
        # integers are int32, SQLite's int64): left out, so the page is the same on both
        if "format" in schema and not (kind == "integer" and schema["format"] in INT_FORMATS):
            text += f" ({schema['format']})"
    if "enum" in schema:
        text += ": " + ", ".join(f"`{v}`" for v in schema["enum"] if v not in ("", None))
    if schema.get("nullable"):
        text += ", null"
    return text


def _body(content: dict[str, Any]) -> str:
    parts = []
    for media, entry in content.items():
        schema = entry.get("schema")
        parts.append(f"`{media}`" + (f" {_type(schema)}" if schema else ""))
    return "; ".join(parts)


def _operation(path: str, method: str, op: dict[str, Any]) -> list[str]:
    lines = [f"### `{method.upper()} {path}`", ""]
    if op.get("description"):
        lines += [op["description"].strip(), ""]
    parameters = op.get("parameters", [])
    if parameters:
        lines += ["| parameter | in | type | required | description |", "|---|---|---|---|---|"]
        for p in parameters:
            required = "yes" if p.get("required") else ""
            description = _one_line(p.get("description", ""))
            lines.append(
                f"| `{p['name']}` | {p['in']} | {_type(p.get('schema', {}))} | {required} "
                f"| {description} |"
            )
        lines.append("")
    body = op.get("requestBody")
    if body:
        lines += [f"Request body: {_body(body.get('content', {}))}", ""]
    lines += ["| status | meaning | body |", "|---|---|---|"]
    for status, answer in sorted(op.get("responses", {}).items()):
        body_text = _body(answer.get("content", {})) or "none"
        lines.append(f"| {status} | {_one_line(answer.get('description', ''))} | {body_text} |")
    lines.append("")
    return lines


def _component(name: str, schema: dict[str, Any]) -> list[str]:
    lines = [f"### {name} {{#{_anchor(name)}}}", ""]
    if schema.get("description"):
        lines += [_one_line(schema["description"]), ""]
    properties: dict[str, Any] = schema.get("properties", {})
    if not properties:
        lines += [_type({k: v for k, v in schema.items() if k != "description"}), ""]
        return lines
    required = set(schema.get("required", []))
    lines += ["| field | type | required | description |", "|---|---|---|---|"]
    for field, spec in properties.items():
        flags = "yes" if field in required else ""
        if spec.get("readOnly"):
            flags = (flags + ", read-only").lstrip(", ")
        if spec.get("writeOnly"):
            flags = (flags + ", write-only").lstrip(", ")
        description = _one_line(spec.get("description", ""))
        lines.append(f"| `{field}` | {_type(spec)} | {flags} | {description} |")
    lines.append("")
    return lines


def render(schema: dict[str, Any]) -> str:
    """The Markdown page for an OpenAPI 3 document: operations by tag, then the components."""
    info = schema.get("info", {})
    lines = [
        "# API reference",
        "",
        f"<!-- generated from the OpenAPI schema by `{REGENERATE}`: do not edit -->",
        "",
        f"{info.get('title', 'API')} {info.get('version', '')}: "
        f"{_one_line(info.get('description', ''))} Every path is served under the address of "
        "the service (`$POOLJUDGE_URL`); the running service serves the same schema at "
        "`/api/v1/schema/` and interactive documentation at `/api/v1/docs/`. "
        "How to use it, with examples: [the API guide](../guide/api.md).",
        "",
    ]
    by_tag: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
    for path, methods in schema.get("paths", {}).items():
        for method in METHODS:
            if method in methods:
                op = methods[method]
                tag = (op.get("tags") or ["other"])[0]
                by_tag.setdefault(tag, []).append((path, method, op))
    for tag in sorted(by_tag):
        lines += [f"## {tag}", ""]
        for path, method, op in by_tag[tag]:
            lines += _operation(path, method, op)
    components = schema.get("components", {}).get("schemas", {})
    if components:
        lines += ["## Schemas", ""]
        for name in sorted(components):
            lines += _component(name, components[name])
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: list[str]) -> int:
    if len(argv) not in (1, 2):
        print(__doc__, file=sys.stderr)
        return 2
    text = render(json.loads(Path(argv[0]).read_text(encoding="utf-8")))
    if len(argv) == 2:
        Path(argv[1]).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
