"""Citation support of an answer, as the TREC 2024 RAG Track measured it: weighted precision and
weighted recall, with the answer's length beside them.

Source: Thakur et al., "Support Evaluation for the TREC 2024 RAG Track: Comparing Human versus
LLM Judges" (arXiv 2504.15205, SIGIR 2025). A judge labels an (answer sentence a_i, cited
passage d_j) pair full, partial or no support (section 3.2), weighted s(a_i, d_j) = 1, 0.5, 0
(section 3.4). For an answer of n sentences:

- **weighted precision** = sum of s over the judged (sentence, passage) pairs / their count;
- **weighted recall** = sum over the n sentences of the sentence's s / n.

A sentence with zero citations is "no support" (section 3.2): it adds 0 to recall's numerator
and 1 to its denominator, and nothing to precision ("it reduces the recall score but keeps
precision unchanged", section 3.4). The paper's example: a1 cites p1 (partial), a2 cites p2
(full), a3 cites nothing: precision (0.5 + 1) / 2 = 0.75, recall (0.5 + 1) / 3 = 0.5.

Which citations are judged (``citations``):

- ``"first"`` (the default, the track's protocol): only the first cited passage of each sentence
  is judged and scored (section 3.3: "We fixed both the human and GPT-4o judge to evaluate only
  the first cited passage of every answer sentence"); a sentence's s is then that pair's. This
  is exactly the paper's definition, and precision equals recall when every sentence cites.
- ``"all"``: every (sentence, cited passage) pair is judged; precision averages all of them,
  and a sentence counts in recall with its best pair (1 if some citation fully supports it,
  0.5 if the best is partial, 0 otherwise). This is **not** from the paper, which leaves
  several citations a sentence to future work (end of section 3.4); it is the extension this
  module chooses, and it reduces to ``"first"`` when each sentence cites one passage.

Undefined values are ``None``, not 0: precision of an answer that cites nothing (no pair), and
both scores of an answer with no sentence (which :mod:`metrics.io.answers` never reads).
Labels: ``full`` / ``partial`` / ``none``, the paper's ``FS`` / ``PS`` / ``NS``, or its prompt's
``Full Support`` / ``Partial Support`` / ``No Support`` (any case; spaces, hyphens and
underscores alike). Length: the answer's words as TREC RAG's checkers count them
(:func:`metrics.io.answers.word_count`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from metrics.answers.averages import MacroAverage, macro_average
from metrics.io.answers import TopicAnswer

__all__ = [
    "SUPPORT_MEASURES",
    "SupportScores",
    "run_support_scores",
    "support_averages",
    "support_scores",
]

SUPPORT_MEASURES = ("precision", "recall", "words")
Citations = Literal["first", "all"]
_WEIGHTS = {"full": 1.0, "partial": 0.5, "none": 0.0}
_ALIASES = {
    "fs": "full",
    "full_support": "full",
    "ps": "partial",
    "partial_support": "partial",
    "ns": "none",
    "no_support": "none",
}


@dataclass(frozen=True, slots=True)
class SupportScores:
    """One answer's support on one topic: its ``sentences`` (``cited`` of them cite), the
    judged ``pairs`` scored and the sums of their weights (precision's numerator) and of the
    sentences' weights (recall's numerator), and its length in ``words``."""

    topic_id: str
    sentences: int
    cited: int
    pairs: int
    precision_sum: float
    recall_sum: float
    words: int
    citations: Citations

    @property
    def precision(self) -> float | None:
        return self.precision_sum / self.pairs if self.pairs else None

    @property
    def recall(self) -> float | None:
        return self.recall_sum / self.sentences if self.sentences else None

    def score(self, measure: str) -> float | None:
        """The value named ``measure`` (one of :data:`SUPPORT_MEASURES`)."""
        if measure not in SUPPORT_MEASURES:
            raise ValueError(f"unknown support measure {measure!r}; one of {SUPPORT_MEASURES}")
        return float(self.words) if measure == "words" else getattr(self, measure)


def _weight(raw: str, where: str) -> float:
    key = raw.strip().lower().replace(" ", "_").replace("-", "_")
    key = _ALIASES.get(key, key)
    if key not in _WEIGHTS:
        raise ValueError(f"{where}: unknown support label {raw!r}; full, partial or none")
    return _WEIGHTS[key]


def support_scores(
    answer: TopicAnswer,
    judgments: Mapping[tuple[int, str], str],
    *,
    citations: Citations = "first",
) -> SupportScores:
    """Score ``answer`` from ``judgments`` keyed (sentence index from 0, cited segment id).
    Every pair that ``citations`` scores must be judged; a judgment of a pair the answer does
    not have (a sentence that does not cite that segment) is an error, other cited pairs'
    judgments are allowed and unused under ``"first"``."""
    if citations not in ("first", "all"):
        raise ValueError(f"citations must be 'first' or 'all', got {citations!r}")
    where = f"topic {answer.topic_id!r}"
    cited_by = [[answer.references[c] for c in s.citations] for s in answer.sentences]
    stray = [
        (i, seg) for i, seg in judgments if not (0 <= i < len(cited_by) and seg in cited_by[i])
    ]
    if stray:
        raise ValueError(f"{where}: judgments of pairs the answer does not cite: {stray[:5]}")
    missing: list[tuple[int, str]] = []
    pairs = 0
    precision_sum = recall_sum = 0.0
    for i, segments in enumerate(cited_by):
        scored = segments[:1] if citations == "first" else segments
        weights = []
        for seg in scored:
            label = judgments.get((i, seg))
            if label is None:
                missing.append((i, seg))
            else:
                weights.append(_weight(label, f"{where}, sentence {i}, {seg!r}"))
        pairs += len(weights)
        precision_sum += sum(weights)
        recall_sum += max(weights, default=0.0)
    if missing:
        raise ValueError(f"{where}: unjudged (sentence, segment) pairs: {missing[:5]}")
    return SupportScores(
        answer.topic_id,
        sentences=len(cited_by),
        cited=sum(bool(s) for s in cited_by),
        pairs=pairs,
        precision_sum=precision_sum,
        recall_sum=recall_sum,
        words=answer.words,
        citations=citations,
    )


def run_support_scores(
    answers: Iterable[TopicAnswer],
    judgments: Mapping[str, Mapping[tuple[int, str], str]],
    *,
    topics: Collection[str] | None = None,
    citations: Citations = "first",
) -> dict[str, SupportScores]:
    """A run's ``answers`` scored on ``topics`` (default: every answered topic) from
    ``judgments`` (topic -> pair -> label; a topic whose answer cites nothing needs none). A
    topic in ``topics`` the run did not answer is left out: with no sentence neither score is
    defined, and the returned mapping shows which topics were scored."""
    out: dict[str, SupportScores] = {}
    for a in answers:
        if topics is None or a.topic_id in topics:
            out[a.topic_id] = support_scores(a, judgments.get(a.topic_id, {}), citations=citations)
    return out


def support_averages(
    scores: Mapping[str, SupportScores],
    *,
    undefined: Literal["skip", "zero"] = "skip",
    interval: Literal["bootstrap", "t"] = "bootstrap",
    level: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict[str, MacroAverage]:
    """A run's macro average of precision, recall and words over its topics (``scores``:
    topic -> :class:`SupportScores`), each by :func:`~metrics.answers.nuggets.macro_average`;
    a topic whose answer cites nothing is left out of precision (``undefined="zero"``: 0)."""
    return {
        m: macro_average(
            {t: s.score(m) for t, s in scores.items()},
            undefined=undefined,
            interval=interval,
            level=level,
            n_resamples=n_resamples,
            seed=seed,
        )
        for m in SUPPORT_MEASURES
    }
