"""Sampled qrels: every pooled document in one of three states (issue 32, point 1).

A sampled pool judges a sample of its documents. Each pooled document is then either *judged*
(a grade >= 0) or *pooled but not sampled* (grade -1 in both NIST formats: in the universe, its
relevance unknown); a document outside the pool is *not in the pool*. Reading an unsampled
document as non-relevant is the classic bug; :class:`SampledQrels` keeps the states apart
(:meth:`SampledQrels.state`) and is not a :class:`metrics.io.tables.Qrels`, so no measure that
expects complete judgments is handed one by mistake.

Format read (:func:`read_sampled_qrels`): ``sample_eval.pl``'s five columns,
``topic iteration docid stratum grade``, the stratum a token naming the document's sampling
stratum (TRECVID and TREC CDS 2016 ship such files). A line with another number of fields, a
grade that is not an integer below -1, or a document listed twice for a topic is an error
naming the line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

from metrics.io.trec import Source, _open_source
from metrics.problems import InvalidInput, Problems

__all__ = ["DocState", "SampledQrels", "read_sampled_qrels"]

UNSAMPLED = -1


class DocState(Enum):
    """A document's state in a sampled pool."""

    NOT_POOLED = "not in the pool"
    UNSAMPLED = "in the pool, not sampled"
    JUDGED = "in the pool, sampled and judged"


@dataclass(frozen=True)
class SampledQrels:
    """Per topic, each pooled document's stratum and grade (-1: pooled, not sampled)."""

    topics: Mapping[str, Mapping[str, tuple[str, int]]]  # qid -> docid -> (stratum, grade)

    def state(self, qid: str, docid: str) -> DocState:
        found = self.topics.get(qid, {}).get(docid)
        if found is None:
            return DocState.NOT_POOLED
        return DocState.UNSAMPLED if found[1] == UNSAMPLED else DocState.JUDGED

    def judged(self, qid: str) -> dict[str, int]:
        """The sampled documents' grades of ``qid`` (never an unsampled one)."""
        return {d: g for d, (_, g) in self.topics.get(qid, {}).items() if g != UNSAMPLED}

    def counts(self, qid: str) -> dict[str, tuple[int, int]]:
        """Per stratum of ``qid``: (pooled documents, sampled documents)."""
        out: dict[str, list[int]] = {}
        for stratum, grade in self.topics.get(qid, {}).values():
            c = out.setdefault(stratum, [0, 0])
            c[0] += 1
            c[1] += grade != UNSAMPLED
        return {s: (n, k) for s, (n, k) in out.items()}


def read_sampled_qrels(
    src: Source, *, source: str | None = None, max_problems: int = 100
) -> SampledQrels:
    """Read ``sample_eval.pl``'s five-column sampled qrels (see the module docstring)."""
    stream, name, closer = _open_source(src, source)
    problems = Problems(max_problems)
    topics: dict[str, dict[str, tuple[str, int]]] = {}
    try:
        data = b"".join(iter(lambda: bytes(stream.read(1 << 20)), b""))
        for number, line in enumerate(data.splitlines(), start=1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 5:
                problems.add(
                    number,
                    f"expected 5 fields (topic iteration docid stratum grade), got {len(fields)}",
                )
                continue
            qid, _, docid, stratum, grade_text = (f.decode("utf-8", "replace") for f in fields)
            try:
                grade = int(grade_text)
            except ValueError:
                problems.add(number, f"grade {grade_text!r} is not an integer")
                continue
            if grade < UNSAMPLED:
                problems.add(number, f"grade {grade} is below -1 (-1: pooled, not sampled)")
                continue
            docs = topics.setdefault(qid, {})
            if docid in docs:
                problems.add(number, f"document {docid} of topic {qid} is listed twice")
                continue
            docs[docid] = (stratum, grade)
    finally:
        if closer is not None:
            closer.close()
    if problems:
        raise InvalidInput(name, problems.sorted(), problems.total)
    return SampledQrels(topics)
