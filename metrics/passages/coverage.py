"""What a carry-over gives: the labels, and the coverage report saying how much was carried.

The report (:class:`CoverageReport`, format ``version`` 1) counts, per topic and over all topics,
the new chunks considered (those of documents with a judged span for the topic), how many were
carried as relevant, as non-relevant, and how many stayed unjudged; the relevant spans and how
many of them no new chunk kept; and lists the topics that lost their judgments: relevant spans
were judged, yet no new chunk was carried as relevant. ``as_dict()`` is its JSON form.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

__all__ = ["Carried", "Coverage", "CoverageReport"]


@dataclass(frozen=True)
class Coverage:
    """Counts for one topic, or summed over topics."""

    documents: int = 0  # documents with a judged span for the topic
    chunks: int = 0  # their new chunks: relevant + non_relevant + unknown
    relevant: int = 0  # carried with a grade > 0
    non_relevant: int = 0  # carried with grade 0
    unknown: int = 0  # left unjudged
    relevant_spans: int = 0  # spans judged > 0 (passages and answers)
    lost_spans: int = 0  # of those, the ones no new chunk holds enough of to carry

    def plus(self, grades: Sequence[int | None], kept: Sequence[bool]) -> Coverage:
        """These counts with one more document: its chunks' labels and its relevant spans'."""
        relevant = sum(1 for g in grades if g is not None and g > 0)
        non_relevant = sum(1 for g in grades if g == 0)
        return Coverage(
            documents=self.documents + 1,
            chunks=self.chunks + len(grades),
            relevant=self.relevant + relevant,
            non_relevant=self.non_relevant + non_relevant,
            unknown=self.unknown + len(grades) - relevant - non_relevant,
            relevant_spans=self.relevant_spans + len(kept),
            lost_spans=self.lost_spans + kept.count(False),
        )

    def __add__(self, other: Coverage) -> Coverage:
        return Coverage(
            **{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)}
        )

    @property
    def lost(self) -> bool:
        """Relevant spans were judged and no new chunk was carried as relevant."""
        return self.relevant_spans > 0 and self.relevant == 0

    def as_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class CoverageReport:
    """How a carry-over went: the rule in words, counts per topic and overall, lost topics."""

    rule: str  # CarryRule.describe()
    min_share: float
    topics: Mapping[str, Coverage]  # in the order of the judged topics
    overall: Coverage
    lost_topics: tuple[str, ...]  # topics whose relevant spans all found no relevant new chunk
    unjudged_documents: int  # documents of the new chunking with no judged span for any topic
    version: int = 1

    @classmethod
    def of(
        cls, *, rule: str, min_share: float, topics: Mapping[str, Coverage], unjudged_documents: int
    ) -> CoverageReport:
        """The report of per-topic counts (the overall counts and lost topics follow)."""
        return cls(
            rule=rule,
            min_share=min_share,
            topics=dict(topics),
            overall=sum(topics.values(), Coverage()),
            lost_topics=tuple(t for t, c in topics.items() if c.lost),
            unjudged_documents=unjudged_documents,
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "rule": self.rule,
            "min_share": self.min_share,
            "overall": self.overall.as_dict(),
            "topics": {t: c.as_dict() for t, c in self.topics.items()},
            "lost_topics": list(self.lost_topics),
            "unjudged_documents": self.unjudged_documents,
        }


@dataclass(frozen=True)
class Carried:
    """The carried labels, topic -> ``docid#pid`` -> grade (unjudged chunks absent), and the
    report."""

    labels: Mapping[str, Mapping[str, int]]
    report: CoverageReport
