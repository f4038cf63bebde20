"""The simulated assessor: a passage's grade for a question, read from the planted truth.

For a passage ``[start, end)`` of document ``docid`` and a question (:class:`RagQuestion`):

* grade **2** (it answers) if it holds at least half of one of the question's answer spans (the
  share :class:`metrics.passages.CarryRule` uses by default, so the assessor and the carry-over
  agree on what answers);
* grade **1** (partially relevant) if it overlaps a related span, or a piece of an answer span
  smaller than half;
* grade **0** otherwise.

:func:`answer_marks` is what the assessor marks with the mouse in a passage graded 2: each answer
span held at least half, cut to the passage.
"""

from __future__ import annotations

from judging.demo.rag.questions import RagQuestion, Span


def _overlap(span: Span, docid: str, start: int, end: int) -> int:
    if span.docid != docid:
        return 0
    return max(0, min(end, span.end) - max(start, span.start))


def _held(span: Span, docid: str, start: int, end: int) -> bool:
    return 2 * _overlap(span, docid, start, end) >= span.end - span.start


def grade(question: RagQuestion, docid: str, start: int, end: int) -> int:
    """0, 1 or 2 for the passage ``[start, end)`` of ``docid`` (module docstring)."""
    if any(_held(a, docid, start, end) for a in question.answers):
        return 2
    spans = (*question.answers, *question.related)
    return 1 if any(_overlap(s, docid, start, end) > 0 for s in spans) else 0


def answer_marks(question: RagQuestion, docid: str, start: int, end: int) -> list[tuple[int, int]]:
    """The answer spans the passage holds at least half of, cut to it, in order of start."""
    return sorted(
        (max(start, a.start), min(end, a.end))
        for a in question.answers
        if _held(a, docid, start, end)
    )
