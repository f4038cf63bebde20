"""Typed results: the names a result mentions as value types, and the codec that reads a stored
result (JSON) into dataclasses and renders it for a viewer.

A result names runs and groups. Instead of plain strings, a result type declares each such name
as a :class:`RunLabel` (a run, by its tag), a :class:`GroupLabel` (a group in a leave-one-group-out
table) or a :class:`UnitLabel` (what a leave-one-unit-out analysis leaves out: a group, or a run
without one, named by its tag); a sentence that names them is a :class:`Sentence`, text with the
names as labels in it. :func:`render` turns a result into JSON for a :class:`Viewer`, which says
how each label is shown (by name, or anonymised): who may see what is decided by the viewer, and
where the names are by the types, so a new field of a label type is shown or hidden like every
other without any change here.

The codec reads the fields of a dataclass by their annotations: ``int``, ``float``, ``str``,
``bool`` (passed through as stored), the label types, :class:`Sentence`, ``list[T]``,
``dict[K, V]``, ``T | None`` and nested dataclasses. Field metadata:

- ``key``: the JSON key when it is not the field's name (``"from"``);
- ``omit_none``: the key is left out of the JSON when the value is None (a result that says
  nothing of a part leaves its key out);
- ``flatten``: a ``dict[str, V]`` field whose items stand beside the other keys (a row with one
  column per estimator);
- ``omit_when``: a predicate of the whole value; the key is left out when it holds (the keys
  of one variant of a row);
- ``stored``: the field is stored but not rendered for a viewer (the format ``version``).

A :class:`Sentence` is rendered as text for a viewer, and stored (``render(stored=True)``) as its
parts, a list of text pieces and ``{"unit": name}``; it reads from either form (text: the names
found by :meth:`Sentence.parse`).

A key that the JSON lacks (a result stored before the field existed) reads as the field's
default (None for ``T | None``) and is left out again when the value is rendered, so that a
reader that tells an old result by a missing key still can.

No Django, no I/O: ``judging`` declares its stored results with these types.
"""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any, Protocol, TypeVar

__all__ = [
    "OMIT_NONE",
    "STORED",
    "GroupLabel",
    "Label",
    "RunLabel",
    "Sentence",
    "ShowAll",
    "UnitLabel",
    "Viewer",
    "labels_in",
    "parse",
    "read_named",
    "render",
    "upgraded",
]


@dataclass(frozen=True, order=True)
class RunLabel:
    """A run, by its tag (unique in its campaign)."""

    name: str


@dataclass(frozen=True, order=True)
class GroupLabel:
    """A group of runs (a row of a leave-one-group-out table), by its name; a run without a group
    stands as a group named by its tag."""

    name: str


@dataclass(frozen=True, order=True)
class UnitLabel:
    """What a leave-one-unit-out analysis leaves out: a group, or a run without one (its tag)."""

    name: str


Label = RunLabel | GroupLabel | UnitLabel


class Viewer(Protocol):
    """How one reader sees the names of a result."""

    def run(self, tag: str) -> str: ...

    def group(self, name: str) -> str: ...

    def unit(self, name: str) -> str: ...


class ShowAll:
    """The viewer who sees every name as stored (what is stored, and the admins' view)."""

    def run(self, tag: str) -> str:
        return tag

    def group(self, name: str) -> str:
        return name

    def unit(self, name: str) -> str:
        return name


def show(label: Label, viewer: Viewer) -> str:
    """``label`` as ``viewer`` sees it."""
    if isinstance(label, RunLabel):
        return viewer.run(label.name)
    if isinstance(label, GroupLabel):
        return viewer.group(label.name)
    return viewer.unit(label.name)


@dataclass(frozen=True)
class Sentence:
    """Text naming runs or groups: plain pieces and the names in it, as units (a name in a
    sentence is a group's or a run's, whichever it is)."""

    parts: tuple[str | UnitLabel, ...]

    @classmethod
    def parse(cls, text: str, names: Collection[str]) -> Sentence:
        """``text`` with every name of ``names`` standing alone in it (not inside a longer word,
        tag or file name) as a label."""
        if not names or not text:
            return cls((text,))
        out: list[str | UnitLabel] = []
        last = 0
        for m in _name_pattern(frozenset(names)).finditer(text):
            if m.start() > last:
                out.append(text[last : m.start()])
            out.append(UnitLabel(m.group(1)))
            last = m.end()
        if last < len(text):
            out.append(text[last:])
        return cls(tuple(out))

    @classmethod
    def from_parts(cls, parts: list[Any]) -> Sentence:
        """A sentence from its stored parts (:meth:`stored_parts`): text, and ``{"unit": name}``
        for a name."""
        return cls(tuple(p if isinstance(p, str) else UnitLabel(str(p["unit"])) for p in parts))

    def stored_parts(self) -> list[str | dict[str, str]]:
        """The sentence as stored: its text pieces, and each name as ``{"unit": name}``, so that
        reading it back finds no name in text."""
        return [p if isinstance(p, str) else {"unit": p.name} for p in self.parts]

    def text(self, viewer: Viewer | None = None) -> str:
        """The sentence as ``viewer`` sees it (every name as stored without one)."""
        seen = viewer or ShowAll()
        return "".join(p if isinstance(p, str) else seen.unit(p.name) for p in self.parts)

    def __str__(self) -> str:
        return self.text()


@lru_cache(maxsize=64)
def _name_pattern(names: frozenset[str]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True) if n)
    return re.compile(r"(?<![\w.~-])(" + alternatives + r")(?![\w~-]|\.\w)")


# --- the codec --------------------------------------------------------------------------------

T = TypeVar("T")

OMIT_NONE: dict[str, Any] = {"omit_none": True}
# the keys a value read from JSON lacked (a result stored in an older format, before a field
# existed): read as the field's default, and left out again when it is rendered
_ABSENT = "_absent_keys"
STORED: dict[str, Any] = {"stored": True}

_LABELS = (RunLabel, GroupLabel, UnitLabel)


@cache
def _fields(cls: type) -> tuple[tuple[dataclasses.Field[Any], Any, str], ...]:
    hints = typing.get_type_hints(cls)
    return tuple(
        (f, hints[f.name], f.metadata.get("key", f.name)) for f in dataclasses.fields(cls) if f.init
    )


def _optional(tp: Any) -> Any:
    """``T`` for ``T | None``, else None."""
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return None


def parse(cls: type[T], data: Any, names: Collection[str] = ()) -> T:
    """A ``cls`` read from its JSON form; ``names`` are the run tags and group names that a
    :class:`Sentence` field may mention. A key the type does not declare is left out, one it
    declares but the data lacks takes the field's default (None for ``T | None``)."""
    value: T = _read(cls, data, frozenset(names))
    return value


@cache
def _plain(tp: Any) -> bool:
    """Whether a value of type ``tp`` holds no label, sentence or dataclass at any depth: read
    and written as stored, without walking it (a report's per-run, per-topic maps of numbers are
    most of its values)."""
    inner = _optional(tp)
    if inner is not None:
        return _plain(inner)
    if tp in _LABELS or tp is Sentence or dataclasses.is_dataclass(tp):
        return False
    return all(_plain(a) for a in typing.get_args(tp) if a is not Ellipsis)


def _read(tp: Any, data: Any, names: frozenset[str]) -> Any:
    if _plain(tp):
        if data is None and _optional(tp) is None:
            origin = typing.get_origin(tp)
            if origin is list or origin is tuple:
                return []
            if origin is dict:
                return {}
        return data  # int, float, str, bool, Any and containers of them: as stored
    inner = _optional(tp)
    if inner is not None:
        return None if data is None else _read(inner, data, names)
    if tp in _LABELS:
        return tp(str(data))
    if tp is Sentence:
        if isinstance(data, list):  # stored as its parts (``render(stored=True)``)
            return Sentence.from_parts(data)
        return Sentence.parse(str(data), names)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return _read_dataclass(tp, data if isinstance(data, dict) else {}, names)
    origin = typing.get_origin(tp)
    if origin is list or origin is tuple:
        (item, *_) = typing.get_args(tp)
        return [_read(item, x, names) for x in (data or [])]
    if origin is dict:
        k, v = typing.get_args(tp)
        return {_read(k, key, names): _read(v, x, names) for key, x in (data or {}).items()}
    return data  # int, float, str, bool, Any: as stored


def _read_dataclass(cls: type, data: dict[str, Any], names: frozenset[str]) -> Any:
    kwargs: dict[str, Any] = {}
    rest = dict(data)
    flat: str | None = None
    for f, tp, key in _fields(cls):
        if f.metadata.get("flatten"):
            flat = f.name
            continue
        if key in rest:
            kwargs[f.name] = _read(tp, rest.pop(key), names)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            kwargs[f.name] = None if _optional(tp) is not None else _read(tp, None, names)
    if flat is not None:
        tp = dict(((f.name, t) for f, t, _ in _fields(cls)))[flat]
        kwargs[flat] = _read(tp, rest, names)
    value = cls(**kwargs)
    absent = frozenset(
        key for f, _, key in _fields(cls) if key not in data and not f.metadata.get("flatten")
    )
    if absent:
        object.__setattr__(value, _ABSENT, absent)
    return value


def render(value: Any, viewer: Viewer | None = None, *, stored: bool = False) -> Any:
    """``value`` as JSON for ``viewer`` (every name as stored without one). ``stored``: the form
    that is stored, with the fields readers are not shown (the format version)."""
    seen = viewer or ShowAll()
    return _write(value, seen, stored)


def _write(value: Any, viewer: Viewer, stored: bool) -> Any:
    if isinstance(value, _LABELS):
        return show(value, viewer)
    if isinstance(value, Sentence):
        return value.stored_parts() if stored else value.text(viewer)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        absent: frozenset[str] = getattr(value, _ABSENT, frozenset())
        for f, tp, key in _fields(type(value)):
            x = getattr(value, f.name)
            if key in absent:
                continue
            omit_when = f.metadata.get("omit_when")
            if (
                (f.metadata.get("stored") and not stored)
                or (x is None and f.metadata.get("omit_none"))
                or (omit_when is not None and omit_when(value))
            ):
                continue
            if f.metadata.get("flatten"):
                out.update(_write(x, viewer, stored))
            elif _plain(tp):
                out[key] = list(x) if isinstance(x, tuple) else x  # nothing to show or hide
            else:
                out[key] = _write(x, viewer, stored)
        return out
    if isinstance(value, dict):
        return {_write(k, viewer, stored): _write(v, viewer, stored) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_write(x, viewer, stored) for x in value]
    return value


def labels_in(value: Any) -> Iterator[Label]:
    """Every label in ``value`` (a result, or any part of one), sentences included."""
    if isinstance(value, _LABELS):
        yield value
    elif isinstance(value, Sentence):
        yield from (p for p in value.parts if isinstance(p, UnitLabel))
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f, tp, _ in _fields(type(value)):
            if not _plain(tp):
                yield from labels_in(getattr(value, f.name))
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from labels_in(k)
            yield from labels_in(v)
    elif isinstance(value, list | tuple):
        for x in value:
            yield from labels_in(x)


def read_named(cls: type[T], data: Any, names: Collection[str] = ()) -> T:
    """A ``cls`` read from its JSON form, its sentences reading as names the run tags and group
    names in ``names`` and those the result itself declares (in its label fields)."""
    first = parse(cls, data)
    known = set(names) | {label.name for label in labels_in(first)}
    return parse(cls, data, known) if known else first


def upgraded(
    blob: dict[str, Any],
    current: int,
    steps: Mapping[int, Callable[[dict[str, Any]], dict[str, Any]]],
    kind: str = "result",
) -> dict[str, Any]:
    """A stored result ``blob`` in the ``current`` format of its kind: each step from its version
    (1 when it has none: stored before versions were) up, ``steps[v]`` taking version v to v + 1,
    then stamped with ``current``. A version above ``current`` (stored by newer code) is an
    error, not a guess."""
    out = dict(blob)
    version = out.get("version", 1)
    if not isinstance(version, int) or isinstance(version, bool) or version > current:
        raise ValueError(f"a stored {kind} of an unknown format version {version!r}")
    while version < current:
        out = steps[version](out)
        version += 1
    out["version"] = current
    return out
