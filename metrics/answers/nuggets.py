"""Nugget recall of an answer, as the TREC 2024 RAG Track scored it (AutoNuggetizer), and the
macro average over topics with its interval.

A topic's nugget bank lists nuggets, each ``vital`` or ``okay``; an assessor (or an LLM) assigns
each nugget to a run's answer as ``support``, ``partial_support`` or ``not_support``. With
p_i = 1 for support and 0 otherwise (strict), and s_i = 1, 0.5, 0 for support, partial support
and no support, over the N nuggets of the topic, V of them vital and O = N - V okay:

- ``strict_all_score`` (A_strict) = sum_i p_i / N;
- ``strict_vital_score`` (V_strict, the track's primary measure) = sum_{i vital} p_i / V;
- ``all_score`` (A) = sum_i s_i / N;
- ``vital_score`` (V) = sum_{i vital} s_i / V;
- ``weighted_score`` (W) = (sum_{i vital} s_i + 0.5 sum_{i okay} s_i) / (V + 0.5 O), and
  ``strict_weighted_score`` (W_strict) the same with p_i.

Sources. A_strict and V_strict: Pradeep et al., "The Great Nugget Recall" (arXiv 2504.15068,
SIGIR 2025), section 4.4 "Scoring", equations for All Strict and Vital Strict; a run's score is
the mean of its topics' scores. The four of A, V, A_strict, V_strict exactly as castorini/
nuggetizer computes them: ``src/nuggetizer/core/metrics.py``, ``calculate_nugget_scores``, lines
14-47 (commit d00dc3e, version 0.0.6): strict counts only ``support``, the others add 0.5 for
``partial_support``; the field names here are its output keys. The weighted pair is not in
nuggetizer: it is the initial report's (Pradeep et al., "Initial Nugget Evaluation Results for
the TREC 2024 RAG Track with the AutoNuggetizer Framework", arXiv 2411.09607), confirmed here
only through vectara/open-rag-eval, which implements it (``open_rag_eval/metrics/
autonugget_metric.py``, lines 340-345, and its METRICS.md), not from the report's text.

Edge cases, each decided here:

- **A nugget with no assignment, or nuggetizer's ``failed``** (the label its assigner writes
  when every LLM call failed, ``models/nuggetizer.py`` line 275) counts as not supported, as in
  nuggetizer: its scorer credits only ``support`` and ``partial_support`` and its
  ``AssignedScoredNugget`` defaults to ``not_support`` (``core/types.py`` line 91). They are
  counted in ``NuggetScores.unassigned``, so a judging gap is visible.
- **A topic with no nuggets** has no score; **a topic with no vital nugget** has no V and
  V_strict: ``None``, not 0. nuggetizer returns 0.0 there (``... if vital_nuggets else 0.0``,
  lines 34-39) and averages it in; :func:`macro_average` leaves such topics out unless asked for
  ``undefined="zero"``, which reproduces nuggetizer's ``calculate_global_metrics`` (lines 50-62).
- Labels are read case-insensitively, spaces and hyphens as underscores (nuggetizer lower-cases
  its assigner's labels, ``models/nuggetizer.py`` line 194); any other label is an error, where
  nuggetizer would silently score it 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from metrics.answers.averages import MacroAverage, macro_average

__all__ = [
    "NUGGET_MEASURES",
    "MacroAverage",
    "Nugget",
    "NuggetScores",
    "macro_average",
    "nugget_averages",
    "nugget_scores",
    "run_nugget_scores",
]

Importance = Literal["vital", "okay"]
NUGGET_MEASURES = (
    "strict_vital_score",
    "strict_all_score",
    "vital_score",
    "all_score",
    "strict_weighted_score",
    "weighted_score",
)
_LABELS = ("support", "partial_support", "not_support")
_FAILED = "failed"


@dataclass(frozen=True, slots=True)
class Nugget:
    """One nugget of a topic's bank: its id (unique in the bank), text and importance."""

    id: str
    text: str
    importance: Importance

    def __post_init__(self) -> None:
        if self.importance not in ("vital", "okay"):
            raise ValueError(f"nugget {self.id!r}: importance must be 'vital' or 'okay'")


@dataclass(frozen=True, slots=True)
class NuggetScores:
    """One answer's nugget counts on one topic, and the scores they give (module docstring);
    a score is ``None`` where its denominator is 0."""

    topic_id: str
    nuggets: int
    vital: int
    support: int
    partial: int
    vital_support: int
    vital_partial: int
    unassigned: int

    @property
    def strict_all_score(self) -> float | None:
        return _ratio(self.support, self.nuggets)

    @property
    def all_score(self) -> float | None:
        return _ratio(self.support + 0.5 * self.partial, self.nuggets)

    @property
    def strict_vital_score(self) -> float | None:
        return _ratio(self.vital_support, self.vital)

    @property
    def vital_score(self) -> float | None:
        return _ratio(self.vital_support + 0.5 * self.vital_partial, self.vital)

    @property
    def strict_weighted_score(self) -> float | None:
        okay_support = self.support - self.vital_support
        return _ratio(self.vital_support + 0.5 * okay_support, self._weights())

    @property
    def weighted_score(self) -> float | None:
        vital = self.vital_support + 0.5 * self.vital_partial
        okay = (self.support - self.vital_support) + 0.5 * (self.partial - self.vital_partial)
        return _ratio(vital + 0.5 * okay, self._weights())

    def score(self, measure: str) -> float | None:
        """The score named ``measure`` (one of :data:`NUGGET_MEASURES`)."""
        if measure not in NUGGET_MEASURES:
            raise ValueError(f"unknown nugget measure {measure!r}; one of {NUGGET_MEASURES}")
        value: float | None = getattr(self, measure)
        return value

    def _weights(self) -> float:
        return self.vital + 0.5 * (self.nuggets - self.vital)


def _ratio(numerator: float, denominator: float) -> float | None:
    return numerator / denominator if denominator else None


def _label(raw: str, where: str) -> str:
    label = raw.strip().lower().replace(" ", "_").replace("-", "_")
    if label not in _LABELS and label != _FAILED:
        raise ValueError(f"{where}: unknown assignment {raw!r}; one of {_LABELS} or 'failed'")
    return label


def nugget_scores(
    nuggets: Sequence[Nugget], assignments: Mapping[str, str], *, topic_id: str = ""
) -> NuggetScores:
    """Score one answer on one topic: ``assignments`` maps nugget ids to labels (a missing id:
    not supported). An id outside the bank, or twice in it, is an error."""
    ids = [n.id for n in nuggets]
    if len(set(ids)) != len(ids):
        raise ValueError(f"topic {topic_id!r}: a nugget id is listed twice in the bank")
    stray = sorted(set(assignments) - set(ids))
    if stray:
        raise ValueError(f"topic {topic_id!r}: assignments to nuggets not in the bank: {stray[:5]}")
    support = partial = vital_support = vital_partial = unassigned = 0
    for n in nuggets:
        raw = assignments.get(n.id)
        label = _FAILED if raw is None else _label(raw, f"topic {topic_id!r}, nugget {n.id!r}")
        vital = n.importance == "vital"
        if label == "support":
            support += 1
            vital_support += vital
        elif label == "partial_support":
            partial += 1
            vital_partial += vital
        elif label == _FAILED:
            unassigned += 1
    return NuggetScores(
        topic_id,
        nuggets=len(nuggets),
        vital=sum(n.importance == "vital" for n in nuggets),
        support=support,
        partial=partial,
        vital_support=vital_support,
        vital_partial=vital_partial,
        unassigned=unassigned,
    )


def run_nugget_scores(
    banks: Mapping[str, Sequence[Nugget]],
    assignments: Mapping[str, Mapping[str, Mapping[str, str]]],
) -> dict[str, dict[str, NuggetScores]]:
    """Every run (``assignments``: run -> topic -> nugget id -> label) scored on every topic of
    ``banks``. A topic a run has no assignments for scores as all nuggets unassigned (so 0
    where defined); a topic outside ``banks`` is an error."""
    out: dict[str, dict[str, NuggetScores]] = {}
    for run, by_topic in assignments.items():
        stray = sorted(set(by_topic) - set(banks))
        if stray:
            raise ValueError(
                f"run {run!r}: assignments for topics with no nugget bank: {stray[:5]}"
            )
        out[run] = {
            topic: nugget_scores(bank, by_topic.get(topic, {}), topic_id=topic)
            for topic, bank in sorted(banks.items())
        }
    return out


def nugget_averages(
    scores: Mapping[str, NuggetScores],
    *,
    undefined: Literal["skip", "zero"] = "skip",
    interval: Literal["bootstrap", "t"] = "bootstrap",
    level: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict[str, MacroAverage]:
    """A run's macro average of every measure in :data:`NUGGET_MEASURES` over its topics
    (``scores``: topic -> :class:`NuggetScores`), each by :func:`macro_average`."""
    return {
        m: macro_average(
            {t: s.score(m) for t, s in scores.items()},
            undefined=undefined,
            interval=interval,
            level=level,
            n_resamples=n_resamples,
            seed=seed,
        )
        for m in NUGGET_MEASURES
    }
