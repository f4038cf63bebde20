"""What the pool reads answer beyond their serializers, as types for the API's schema
(``api.result_schemas``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TopicPoolDiff:
    added: list[str]
    removed: list[str]


@dataclass(frozen=True)
class PoolDiffAnswer:
    """Documents added and removed per topic between two pool versions (``against`` None: the
    version has no base, every document is added)."""

    version: int
    against: int | None
    added: int
    removed: int
    topics: dict[str, TopicPoolDiff]
