"""The runs a pool is built from, per topic: the types, topic order and topic specs, cutting runs
to a depth, and the runs' priority order."""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt

__all__ = [
    "JSONValue",
    "cut_runs",
    "parse_topic_spec",
    "priority_runs",
    "topic_sort_key",
]

JSONValue: TypeAlias = "str | int | float | bool | list[JSONValue] | dict[str, JSONValue] | None"


TopicRuns: TypeAlias = Mapping[str, Sequence[str]]


Runs: TypeAlias = Mapping[str, Mapping[str, Sequence[str]]]


Judgments: TypeAlias = Mapping[str, int]


FloatArray: TypeAlias = npt.NDArray[np.float64]


def topic_sort_key(qid: str) -> tuple[int, int, str]:
    """Sort key for topic ids: numeric ids by value (``"9" < "10"``), then others by string."""
    return (0, int(qid), qid) if qid.isdigit() else (1, 0, qid)


def parse_topic_spec(spec: str) -> list[str]:
    """Topic ids from ``"601-650"`` or ``"601,605,610-620"`` (ranges inclusive, numeric).

    Non-numeric ids may be listed but not used in ranges. Order is kept, duplicates dropped.
    """
    out: dict[str, None] = {}
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        low, dash, high = part.partition("-")
        if dash and low.strip().isdigit() and high.strip().isdigit():
            a, b = int(low), int(high)
            if a > b:
                raise ValueError(f"empty topic range {part!r}")
            out.update(dict.fromkeys(str(q) for q in range(a, b + 1)))
        elif dash and low:
            raise ValueError(f"topic range {part!r} must be two integers, as in 601-650")
        else:
            out[part] = None
    if not out:
        raise ValueError(f"no topics in {spec!r}")
    return list(out)


def _topic_seed(seed: int, topic: str) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32(topic.encode("utf-8"))])


def cut_runs(runs: Runs, topic: str, depth: int | None) -> dict[str, list[str]]:
    """One topic's rankings cut to ranks 1..depth (``None``: no cut), keyed by run tag.

    Runs that did not answer ``topic`` are left out. A duplicate docid within a ranking is an error
    (trec_eval semantics), raised as ``ValueError``.
    """
    if depth is not None and depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth}")
    out: dict[str, list[str]] = {}
    for tag in sorted(runs):
        ranking = runs[tag].get(topic)
        if not ranking:
            continue
        docs = list(ranking if depth is None else ranking[:depth])
        if len(set(docs)) != len(docs):
            raise ValueError(f"run {tag!r}, topic {topic!r}: duplicate docid in ranking")
        out[tag] = docs
    return out


def _whole(name: str, value: Any, *, minimum: int) -> None:
    """Strategy parameters come from JSON: check their type here, not when the pool is built."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be a whole number >= {minimum}, got {value!r}")


def _number(
    name: str, value: Any, *, low: float, high: float | None = None, low_inclusive: bool = False
) -> None:
    """A finite real number above ``low`` (or at it, with ``low_inclusive``) and below ``high``."""
    ok = isinstance(value, int | float) and not isinstance(value, bool) and np.isfinite(value)
    if ok:
        ok = (value >= low if low_inclusive else value > low) and (high is None or value < high)
    if not ok:
        bounds = (">= " if low_inclusive else "> ") + str(low)
        bounds += f" and < {high}" if high is not None else ""
        raise ValueError(f"{name} must be a number {bounds}, got {value!r}")


def priority_runs(
    tags: Iterable[str],
    groups: Mapping[str, str],
    priority: Mapping[str, int] | None = None,
    per_group: int = 1,
) -> list[str]:
    """The runs that contribute to a pool when each group may contribute its top-n runs.

    TREC practice: a group submits several runs ranked by priority (1 = most important) and only
    the first ``per_group`` of them are pooled. Within a group, runs are taken by ascending
    ``priority`` (a run without one comes after those that have one), then by tag. A run missing
    from ``groups`` forms a group of its own. Returns the selected tags, sorted.
    """
    if per_group < 1:
        raise ValueError(f"per_group must be >= 1, got {per_group}")
    prio = priority or {}
    by_group: dict[str, list[str]] = {}
    for tag in tags:
        by_group.setdefault(groups.get(tag, f"\0{tag}"), []).append(tag)
    chosen: list[str] = []
    for members in by_group.values():
        members.sort(key=lambda t: (t not in prio, prio.get(t, 0), t))
        chosen.extend(members[:per_group])
    return sorted(chosen)
