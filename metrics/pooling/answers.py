"""What a generated answer's reader saw: the segments an answer run pools from, for a topic.

An answer run (TREC RAG's format, :mod:`metrics.io.answers`) gives per topic its ranked
``references`` (the segments handed to the generator; they are also the run's ranked list) and
its sentences, each citing references by 0-based index. Judging the whole ranked list judges
segments no reader of the answer saw; a pool may instead take from an answer run

* ``received``: every reference, in reference order: what the generator received;
* ``cited``: the references some sentence cites, in reference order (uncited ones left out):
  what the answer shows its reader. Equal to :attr:`metrics.io.answers.TopicAnswer.cited`.

``ranked`` (the run's ranked list cut to the pool depth, as for any run) is the pool's own
business and not computed here. The depth a pool applies to these lists is decided by the pool,
not here (``judging.pools``: neither list is cut to the depth).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["ANSWER_SEGMENTS", "answer_segments", "cited_segments"]

ANSWER_SEGMENTS = ("received", "cited")
"""The restrictions :func:`answer_segments` knows."""


def cited_segments(references: Sequence[str], citations: Iterable[Iterable[int]]) -> list[str]:
    """The references cited by some sentence, in reference order, each once.

    ``citations`` holds one iterable of indices per sentence. With C = the union of the
    sentences' indices, the answer is ``[references[i] for i in range(len(references)) if i in
    C]``. An index outside ``0 .. len(references) - 1`` is a ``ValueError`` (the reader of answer
    runs refuses such a file, so stored answers never have one)."""
    used: set[int] = set()
    for sentence in citations:
        for i in sentence:
            if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < len(references):
                raise ValueError(
                    f"citation {i!r} is not an index into the {len(references)} references"
                )
            used.add(i)
    return [ref for i, ref in enumerate(references) if i in used]


def answer_segments(
    segments: str, references: Sequence[str], citations: Iterable[Iterable[int]]
) -> list[str]:
    """The segments an answer contributes to a pool under ``segments``: ``received``, every
    reference (``list(references)``); ``cited``, :func:`cited_segments`. Any other name is a
    ``ValueError`` naming the known ones."""
    if segments == "received":
        return list(references)
    if segments == "cited":
        return cited_segments(references, citations)
    known = ", ".join(ANSWER_SEGMENTS)
    raise ValueError(f"unknown answer segments {segments!r}; known: {known}")
