"""Passages: documents cut into chunks with character offsets, and judgments that outlive them.

Retrieval teams judge chunks of documents; when they chunk again, the chunk ids change. Keeping
each judgment as a character span of the document's text (:class:`JudgedSpan`) lets it be
carried to any new chunking (:func:`carry_judgments`, under the :class:`CarryRule`).

* :mod:`~metrics.passages.chunkers` and :mod:`~metrics.passages.sentences`: the chunkers, text to
  ``(start, end)`` spans;
* :mod:`~metrics.passages.chunking`: the registry, :class:`Chunking` (``fixed(size=500,
  overlap=100)``, parsed and printed), passage ids ``docid#pid``;
* :mod:`~metrics.passages.carry`: the carry-over rule, :func:`judged_spans` (passage labels to
  spans), :func:`document_qrels` (passage labels to document qrels);
* :mod:`~metrics.passages.coverage`: :class:`Carried`, :class:`CoverageReport`.
"""

from metrics.passages.carry import (
    CarryRule,
    JudgedSpan,
    carry_judgments,
    document_qrels,
    judged_spans,
)
from metrics.passages.chunkers import Chunk
from metrics.passages.chunking import (
    CHUNKERS,
    Chunking,
    make_chunking,
    passage_id,
    split_passage_id,
)
from metrics.passages.coverage import Carried, Coverage, CoverageReport

__all__ = [
    "CHUNKERS",
    "Carried",
    "CarryRule",
    "Chunk",
    "Chunking",
    "Coverage",
    "CoverageReport",
    "JudgedSpan",
    "carry_judgments",
    "document_qrels",
    "judged_spans",
    "make_chunking",
    "passage_id",
    "split_passage_id",
]
