"""OpenAPI schemas generated from the result dataclasses (``evaluation.results`` and the like), so
that the API declares what a stored result looks like instead of a bare object.

``ref(cls)`` gives the ``$ref`` to a dataclass's component and registers it (with every dataclass
it holds); ``schema.add_result_components`` (a drf-spectacular postprocessing hook) puts the
registered components in the schema. Fields map by their annotations, as ``metrics.results``
reads them: the label types and ``Sentence`` are strings (as the reader may see them), ``T |
None`` is nullable, ``dict[K, V]`` an object whose values are ``V`` (a map keyed by run, topic,
measure...), a ``flatten`` field the extra keys of its object. A field is required unless it may
be None or left out (``omit_none``, ``omit_when``, ``schema_optional``, or the class says
``SCHEMA_PARTIAL = True``: an answer whose keys depend on its mode or state, described key by
key without promising every one); a field's ``schema``
(a function of ``schema_of``) gives its schema where the annotation cannot say it all.
"""

from __future__ import annotations

import dataclasses
import datetime
import types
import typing
from typing import Any

from metrics.results import GroupLabel, RunLabel, Sentence, UnitLabel

COMPONENTS: dict[str, dict[str, Any]] = {}
# The class each component was read from, by name: two result types of one name (in two modules)
# would share one component, every $ref to it describing one of them.
_SOURCES: dict[str, str] = {}

_STRINGS: dict[Any, str] = {
    RunLabel: "a run: its tag, its name to its owner, else anonymised",
    GroupLabel: "a group of runs: by name to who may see one of its runs, else anonymised",
    UnitLabel: "a group, or a run without one, as you may see it",
    Sentence: "text; the runs and groups it names as you may see them",
}


def ref(cls: type) -> dict[str, Any]:
    """The ``$ref`` to ``cls``'s component (registered with those it refers to); a name already
    taken by another result type is an error (not the first one's schema for both)."""
    name = cls.__name__
    source = f"{cls.__module__}.{cls.__qualname__}"
    if _SOURCES.setdefault(name, source) != source:
        raise TypeError(
            f"two result types are named {name!r} ({_SOURCES[name]} and {source}): rename one"
        )
    if name not in COMPONENTS:
        COMPONENTS[name] = {}  # a placeholder while its fields are read (recursion)
        COMPONENTS[name] = _dataclass_schema(cls)
    return {"$ref": f"#/components/schemas/{name}"}


def schema_of(tp: Any) -> dict[str, Any]:
    """The OpenAPI schema of a type hint."""
    inner = _optional(tp)
    if inner is not None:
        schema = schema_of(inner)
        if "$ref" in schema:
            return {"allOf": [schema], "nullable": True}
        return {**schema, "nullable": True}
    if tp in _STRINGS:
        return {"type": "string", "description": _STRINGS[tp]}
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return {"type": "integer"}
    if tp is float:
        return {"type": "number"}
    if tp is str:
        return {"type": "string"}
    if tp is datetime.datetime:
        return {"type": "string", "format": "date-time"}
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return ref(tp)
    origin = typing.get_origin(tp)
    if origin in (list, tuple):
        args = [a for a in typing.get_args(tp) if a is not Ellipsis]
        item = schema_of(args[0]) if len(set(args)) == 1 else {}
        return {"type": "array", "items": item}
    if origin is dict:
        _, value = typing.get_args(tp)
        return {"type": "object", "additionalProperties": schema_of(value)}
    if origin is typing.Literal:
        values = list(typing.get_args(tp))
        return {"type": "string", "enum": values}
    raise TypeError(f"no OpenAPI schema for {tp!r}")


def _optional(tp: Any) -> Any:
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1 and len(typing.get_args(tp)) == 2:
            return args[0]
        if len(args) > 1:
            raise TypeError(f"no OpenAPI schema for the union {tp!r}")
    return None


def _dataclass_schema(cls: type) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    properties: dict[str, Any] = {}
    required: list[str] = []
    extra: dict[str, Any] | None = None
    for f in dataclasses.fields(cls):
        tp = hints[f.name]
        if f.metadata.get("stored"):
            continue
        if f.metadata.get("flatten"):
            extra = schema_of(typing.get_args(tp)[1])
            continue
        key = f.metadata.get("key", f.name)
        given = f.metadata.get("schema")
        properties[key] = given(schema_of) if given is not None else schema_of(tp)
        optional = (
            getattr(cls, "SCHEMA_PARTIAL", False)
            or _optional(tp) is not None
            or f.metadata.get("omit_none")
            or f.metadata.get("omit_when")
            or f.metadata.get("schema_optional")
        )
        if not optional:
            required.append(key)
    out: dict[str, Any] = {"type": "object", "properties": properties}
    doc = (cls.__doc__ or "").strip()
    if doc and not doc.startswith(f"{cls.__name__}("):  # not the dataclass' generated one
        out["description"] = " ".join(doc.split())
    if required:
        out["required"] = required
    if extra is not None:
        out["additionalProperties"] = extra
    return out
