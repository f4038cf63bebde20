"""Scores of answer runs (TREC RAG's generation output, read by :mod:`metrics.io.answers`):
nugget recall per run and topic (:mod:`metrics.answers.nuggets`: All, Vital, their strict and
weighted forms, as castorini/nuggetizer and the TREC 2024 RAG Track define them), citation
support (:mod:`metrics.answers.support`: weighted precision and recall, as the track's support
evaluation defines them) and answer length, each macro-averaged over topics with a confidence
interval. Each module's docstring gives its definitions and sources; the judgments themselves
(nugget assignments, support labels) come from elsewhere.

Estimated scores (not imported here, so that scoring does not load scipy): the judging items of
answer runs and the scores as linear functions of their labels (:mod:`metrics.answers.items`),
and the scores estimated from an automatic assigner's labels corrected by a human sample
(:mod:`metrics.answers.estimates`, prediction-powered inference with :mod:`metrics.sampling`).
"""

from metrics.answers.averages import MacroAverage, macro_average
from metrics.answers.nuggets import (
    NUGGET_MEASURES,
    Nugget,
    NuggetScores,
    nugget_averages,
    nugget_scores,
    run_nugget_scores,
)
from metrics.answers.support import (
    SUPPORT_MEASURES,
    SupportScores,
    run_support_scores,
    support_averages,
    support_scores,
)

__all__ = [
    "NUGGET_MEASURES",
    "SUPPORT_MEASURES",
    "MacroAverage",
    "Nugget",
    "NuggetScores",
    "SupportScores",
    "macro_average",
    "nugget_averages",
    "nugget_scores",
    "run_nugget_scores",
    "run_support_scores",
    "support_averages",
    "support_scores",
]
