"""Sampled qrels: every pooled document in one of three states (issue 32, point 1).

A sampled pool judges a sample of its documents. Each pooled document is then either *judged*
(a grade >= 0) or *pooled but not sampled* (grade -1 in both NIST formats: in the universe, its
relevance unknown); a document outside the pool is *not in the pool*. Reading an unsampled
document as non-relevant is the classic bug; :class:`SampledQrels` keeps the states apart
(:meth:`SampledQrels.state`) and is not a :class:`metrics.io.tables.Qrels`, so no measure that
expects complete judgments is handed one by mistake.

Formats read (:func:`read_sampled_qrels`) and written (:func:`write_sampled_qrels`):

- ``sample_eval``: ``sample_eval.pl``'s five columns, ``topic iteration docid stratum grade``,
  the stratum a token naming the document's sampling stratum (TRECVID and TREC CDS 2016 ship
  such files);
- ``trec``: trec_eval's four columns, ``topic iteration docid grade``, -1 for a pooled document
  not sampled (the convention of trec_eval's ``infAP``): one uniform sample, so every document is
  read into the one stratum ``"1"``;
- ``auto`` (reading): five fields on the first data line mean ``sample_eval``, four ``trec``.

A line with another number of fields, a grade that is not an integer or is below -1, or a
document listed twice for a topic is an error naming the line. :meth:`SampledQrels.to_qrels`
gives the trec_eval form (grades, -1 kept; strata dropped) for trec_eval's ``infAP``, the one
measure of complete qrels that reads the -1s as the sample they are.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import IO, Literal

from metrics.io.tables import Qrels
from metrics.io.trec import Source, _open_source, _write_lines
from metrics.problems import InvalidInput, Problems

__all__ = [
    "DocState",
    "SampledFormat",
    "SampledQrels",
    "has_unsampled",
    "read_sampled_qrels",
    "sampled_from_qrels",
    "write_sampled_qrels",
]

UNSAMPLED = -1
ONE_STRATUM = "1"  # the stratum of a trec_eval-style sample (one uniform sample)
SampledFormat = Literal["auto", "sample_eval", "trec"]


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

    def totals(self) -> dict[str, tuple[int, int]]:
        """Per stratum over every topic: (pooled documents, sampled documents)."""
        out: dict[str, list[int]] = {}
        for qid in self.topics:
            for stratum, (n, k) in self.counts(qid).items():
                c = out.setdefault(stratum, [0, 0])
                c[0] += n
                c[1] += k
        return {s: (n, k) for s, (n, k) in sorted(out.items())}

    @property
    def num_unsampled(self) -> int:
        """Pooled documents not sampled, over every topic."""
        return sum(g == UNSAMPLED for docs in self.topics.values() for _, g in docs.values())

    def to_qrels(self) -> Qrels:
        """trec_eval's form: every pooled document with its grade, -1 when not sampled (for
        trec_eval's ``infAP``; a measure of complete qrels reads -1 as unjudged)."""
        return Qrels.from_dict(
            {q: {d: g for d, (_, g) in docs.items()} for q, docs in self.topics.items()}
        )


def has_unsampled(qrels: Qrels) -> bool:
    """Whether ``qrels`` hold a pooled document not sampled (a grade of -1, or below)."""
    return bool((qrels.grades < 0).any())


def sampled_from_qrels(qrels: Qrels) -> SampledQrels:
    """trec_eval-style sampled qrels (-1: pooled, not sampled) as one uniform sample: every
    document in stratum ``"1"``. Grades below -1 are read as -1 (trec_eval reads any negative
    grade as unjudged)."""
    return SampledQrels(
        {
            q: {d: (ONE_STRATUM, max(g, UNSAMPLED)) for d, g in docs.items()}
            for q, docs in qrels.to_dict().items()
        }
    )


def write_sampled_qrels(
    qrels: SampledQrels,
    dst: str | os.PathLike[str] | IO[bytes],
    *,
    format: Literal["sample_eval", "trec"] = "sample_eval",
) -> None:
    """Write ``qrels`` in one of the formats (module docstring), topics and documents sorted.
    ``trec`` drops the strata, so it is refused for qrels of more than one stratum: their
    inclusion rates would be lost."""
    if format == "trec" and len(qrels.totals()) > 1:
        raise ValueError(
            f"trec_eval's -1 format holds one uniform sample; these qrels have "
            f"{len(qrels.totals())} strata: write them in sample_eval's five columns"
        )

    def lines() -> Iterable[str]:
        for qid in sorted(qrels.topics):
            docs = qrels.topics[qid]
            for docid in sorted(docs):
                stratum, grade = docs[docid]
                if format == "trec":
                    yield f"{qid} 0 {docid} {grade}\n"
                else:
                    yield f"{qid} 0 {docid} {stratum} {grade}\n"

    _write_lines(dst, lines())


_LAYOUT = {5: "topic iteration docid stratum grade", 4: "topic iteration docid grade"}


def read_sampled_qrels(
    src: Source,
    *,
    source: str | None = None,
    format: SampledFormat = "auto",
    max_problems: int = 100,
) -> SampledQrels:
    """Read sampled qrels in one of the formats (see the module docstring)."""
    stream, name, closer = _open_source(src, source)
    problems = Problems(max_problems)
    topics: dict[str, dict[str, tuple[str, int]]] = {}
    width = {"sample_eval": 5, "trec": 4}.get(format, 0)
    try:
        data = b"".join(iter(lambda: bytes(stream.read(1 << 20)), b""))
        for number, line in enumerate(data.splitlines(), start=1):
            fields = line.split()
            if not fields or fields[0].startswith(b"#"):
                continue
            if not width:  # auto: the first data line says which
                width = 5 if len(fields) == 5 else 4
            if len(fields) != width:
                problems.add(
                    number, f"expected {width} fields ({_LAYOUT[width]}), got {len(fields)}"
                )
                continue
            if width == 5:
                qid, _, docid, stratum, grade_text = (f.decode("utf-8", "replace") for f in fields)
            else:
                qid, _, docid, grade_text = (f.decode("utf-8", "replace") for f in fields)
                stratum = ONE_STRATUM
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
    if not topics and not problems:
        problems.add(0, "no data lines (empty file)")
    if problems:
        raise InvalidInput(name, problems.sorted(), problems.total)
    return SampledQrels(topics)
