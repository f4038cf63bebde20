"""The Million Query track's ``prels``: a sampled pool with each document's inclusion probability
(issue 32, point 1), the input of statAP (:mod:`metrics.measures.statap`).

Format (TREC 2007-2009 Million Query; read by Pavlu's ``statAP_MQ_eval_v3.pl``), five
whitespace-separated fields per line::

    topic docid grade method inclusion_probability

- ``grade``: the judgment (0 non-relevant, 1 relevant, 2 highly relevant), or -999 (the script's
  "not sampled") or -1 (``sample_eval.pl``'s): pooled, not sampled;
- ``method``: who selected the document: 1 statAP's sample (NEU), 0 MTC's (UMass) alone, 2 both
  (the script also counts 4 as statAP's). The script reads a document that MTC picked (method 0
  or 2) with probability 1 (:meth:`PrelsDoc.effective_pi`);
- ``inclusion_probability``: pi in [0, 1] (> 0 for a judged document), or ``NA``: a document
  judged outside the sample, which the script ignores and so does statAP here.

Every pooled document is in one of three states (:class:`metrics.io.sampled.DocState`): judged
(a grade and a probability), pooled but not sampled (grade ``None``: -999/-1 in the file, or a
probability ``NA``), or not in the pool (not listed). :class:`Prels` is not a
:class:`metrics.io.tables.Qrels`, so nothing reads an unsampled document as non-relevant.

Differences from the script, each an error naming the line here where the script reads on: a line
with another number of fields (the script reads the file as one stream of fields, so one missing
field shifts every later line), a grade or method that is not an integer, a probability outside
[0, 1] or 0 for a judged document (the script skips the former and divides by the latter), a
document listed twice for a topic (the script keeps the last). The script also reads a grade -1
as a judged non-relevant document; here it is unsampled, and :func:`write_prels` writes -999.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO, NamedTuple

from metrics.io.sampled import UNSAMPLED, DocState, SampledQrels
from metrics.io.trec import Source, _open_source
from metrics.problems import InvalidInput, Problems

__all__ = ["Prels", "PrelsDoc", "prels_of", "read_prels", "write_prels"]

NOT_SAMPLED = (-999, -1)
MTC_METHODS = (0, 2)  # the script's "collision": read with probability 1


class PrelsDoc(NamedTuple):
    """One pooled document: inclusion probability (``None``: NA), grade (``None``: not sampled),
    selecting method."""

    pi: float | None
    grade: int | None
    method: int = 1

    @property
    def effective_pi(self) -> float | None:
        """The probability statAP weighs a judged document by (``None``: not in the sample)."""
        if self.grade is None or self.pi is None:
            return None
        return 1.0 if self.method in MTC_METHODS else self.pi


@dataclass(frozen=True)
class Prels:
    """Per topic, each pooled document's :class:`PrelsDoc`; topics and documents in file order."""

    topics: Mapping[str, Mapping[str, PrelsDoc]]

    def state(self, qid: str, docid: str) -> DocState:
        found = self.topics.get(qid, {}).get(docid)
        if found is None:
            return DocState.NOT_POOLED
        return DocState.UNSAMPLED if found.effective_pi is None else DocState.JUDGED

    def sample(self, qid: str) -> dict[str, tuple[float, int]]:
        """The sampled documents of ``qid``: docid -> (effective pi, grade); never an unsampled
        one."""
        out: dict[str, tuple[float, int]] = {}
        for docid, doc in self.topics.get(qid, {}).items():
            pi = doc.effective_pi
            if pi is not None and doc.grade is not None:
                out[docid] = (pi, doc.grade)
        return out


def _parse(fields: list[str], problems: Problems, number: int) -> PrelsDoc | None:
    grade_text, method_text, pi_text = fields[2:]
    try:
        grade, method = int(grade_text), int(method_text)
    except ValueError:
        problems.add(number, f"grade {grade_text!r} and method {method_text!r} must be integers")
        return None
    if grade < 0 and grade not in NOT_SAMPLED:
        problems.add(number, f"grade {grade} is negative (-999 or -1: pooled, not sampled)")
        return None
    pi: float | None = None
    if pi_text != "NA":
        try:
            pi = float(pi_text)
        except ValueError:
            problems.add(number, f"inclusion probability {pi_text!r} is not a number or NA")
            return None
        if not (math.isfinite(pi) and 0.0 <= pi <= 1.0):
            problems.add(number, f"inclusion probability {pi_text} is not in [0, 1]")
            return None
        if pi == 0.0 and grade >= 0:
            problems.add(number, "a judged document has inclusion probability 0")
            return None
    return PrelsDoc(pi, None if grade < 0 else grade, method)


def read_prels(src: Source, *, source: str | None = None, max_problems: int = 100) -> Prels:
    """Read a Million Query ``prels`` file (see the module docstring), validating all of it."""
    stream, name, closer = _open_source(src, source)
    problems = Problems(max_problems)
    topics: dict[str, dict[str, PrelsDoc]] = {}
    try:
        data = b"".join(iter(lambda: bytes(stream.read(1 << 20)), b""))
    finally:
        if closer is not None:
            closer.close()
    for number, line in enumerate(data.splitlines(), start=1):
        fields = [f.decode("utf-8", "replace") for f in line.split()]
        if not fields:
            continue
        if len(fields) != 5:
            problems.add(
                number,
                f"expected 5 fields (topic docid grade method probability), got {len(fields)}",
            )
            continue
        doc = _parse(fields, problems, number)
        if doc is None:
            continue
        docs = topics.setdefault(fields[0], {})
        if fields[1] in docs:
            problems.add(number, f"document {fields[1]} of topic {fields[0]} is listed twice")
            continue
        docs[fields[1]] = doc
    if problems:
        raise InvalidInput(name, problems.sorted(), problems.total)
    return Prels(topics)


def write_prels(prels: Prels, out: IO[str]) -> None:
    """Write ``prels`` in the five-column format, a topic's lines together (the script resets its
    counts at every change of topic), unsampled documents with grade -999, probabilities as
    ``repr`` (exact)."""
    for qid, docs in prels.topics.items():
        for docid, doc in docs.items():
            grade = -999 if doc.grade is None else doc.grade
            pi = "NA" if doc.pi is None else repr(doc.pi)
            out.write(f"{qid} {docid} {grade} {doc.method} {pi}\n")


def prels_of(qrels: SampledQrels) -> Prels:
    """Sampled qrels as statAP's input: each document's inclusion probability, the share of its
    topic's stratum that was sampled (a uniform draw without replacement in each stratum)."""
    topics: dict[str, dict[str, PrelsDoc]] = {}
    for qid, docs in qrels.topics.items():
        rate = {s: (k / n if n else 0.0) for s, (n, k) in qrels.counts(qid).items()}
        topics[qid] = {
            d: PrelsDoc(rate[s], None if g == UNSAMPLED else g) for d, (s, g) in docs.items()
        }
    return Prels(topics)
