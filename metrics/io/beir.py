"""BEIR's qrels layout (``qrels/test.tsv``, as BEIR and MTEB ship them): tab-separated
``query-id corpus-id score`` lines under that header.

The header is optional on reading (some copies drop it) and always written. A score is an
integer grade; negative grades are kept, as in TREC qrels. A file is validated whole and every
problem is named with its line (:class:`InvalidInput`): a line without exactly three
tab-separated fields, a grade that is not an integer, an id that breaks the TREC readers' rules
(empty, white space, a control character, over :class:`Limits`), a (query, document) pair
judged twice, bad UTF-8, no data. Written with queries and documents in :class:`Qrels` order
(sorted), so reading a written file and writing it again gives the same bytes.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import IO, Any

from metrics.io.limits import DEFAULT_LIMITS, Limits, id_problem, line_problem
from metrics.io.tables import Qrels
from metrics.io.trec import Source, _open_out, read_head
from metrics.problems import InvalidInput, Problems

__all__ = ["HEADER", "looks_like_beir_qrels", "read_beir_qrels", "write_beir_qrels"]

HEADER = "query-id\tcorpus-id\tscore"


def _lines(src: Source, source: str | None) -> tuple[list[bytes], str]:
    data, name = read_head(src, source, 1 << 62)
    return data.removeprefix(b"\xef\xbb\xbf").split(b"\n"), name


def looks_like_beir_qrels(src: Source) -> bool:
    """Whether ``src`` starts with BEIR's header, or its first line has three tab-separated
    fields (a TREC qrels line has four, separated by any white space)."""
    head, _ = read_head(src, None, 4096)
    first = head.removeprefix(b"\xef\xbb\xbf").split(b"\n", 1)[0].rstrip(b"\r")
    return first.strip().lower() == HEADER.encode() or len(first.split(b"\t")) == 3


def read_beir_qrels(
    src: Source,
    *,
    source: str | None = None,
    max_problems: int = 100,
    limits: Limits = DEFAULT_LIMITS,
    scale: Collection[int] | None = None,
) -> Qrels:
    """Read and validate BEIR qrels into :class:`Qrels` (module docstring); with a ``scale``
    every grade but a negative one must be on it, as :func:`~metrics.io.trec.read_qrels` has."""
    allowed = None if scale is None else sorted(set(scale))
    lines, name = _lines(src, source)
    problems = Problems(max_problems)
    judged: dict[str, dict[str, int]] = {}
    first: dict[tuple[str, str], int] = {}
    for number, raw in enumerate(lines, 1):
        raw = raw.rstrip(b"\r")
        if not raw.strip():
            continue
        if limits.line_bytes is not None and len(raw) > limits.line_bytes:
            problems.add(number, line_problem(len(raw), limits.line_bytes))
            continue
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            problems.add(number, f"not UTF-8 (byte {e.start + 1} of the line)")
            continue
        if number == 1 and line.strip().lower() == HEADER:
            continue
        fields = line.split("\t")
        if len(fields) != 3:
            problems.add(
                number, f"{len(fields)} tab-separated field(s); BEIR qrels have 3 ({HEADER})"
            )
            continue
        qid, docid, score = (f.strip() for f in fields)
        bad = _id("query-id", qid, limits.qid_bytes) or _id("corpus-id", docid, limits.docid_bytes)
        if bad is not None:
            problems.add(number, bad)
            continue
        try:
            grade = int(score)
        except ValueError:
            problems.add(number, f"score {score[:40]!r} is not an integer")
            continue
        if allowed is not None and grade >= 0 and grade not in allowed:
            problems.add(
                number,
                f"grade {grade} is not on the scale (allowed: {', '.join(map(str, allowed))}, "
                "or a negative grade for pooled but unjudged)",
            )
            continue
        if (qid, docid) in first:
            problems.add(
                number,
                f"query {qid!r}, document {docid!r} judged twice (first on line "
                f"{first[qid, docid]})",
            )
            continue
        first[qid, docid] = number
        judged.setdefault(qid, {})[docid] = grade
    if not problems and not judged:
        problems.add(0, "no judgments")
    if problems:
        raise InvalidInput(name, problems.sorted(), total=problems.total)
    return Qrels.from_dict(judged)


def _id(kind: str, value: str, limit: int | None) -> str | None:
    if not value or any(ch.isspace() for ch in value):
        return f"{kind} {value[:40]!r} must be non-empty and contain no white space"
    return id_problem(kind, value, limit)


def write_beir_qrels(qrels: Qrels, dst: str | Any | IO[bytes]) -> None:
    """Write ``qrels`` in BEIR's layout, header first (module docstring)."""
    out, close = _open_out(dst)
    try:
        out.write((HEADER + "\n").encode())
        for qid, docs in qrels.to_dict().items():
            for docid, grade in docs.items():
                out.write(f"{qid}\t{docid}\t{grade}\n".encode())
    finally:
        if close:
            out.close()
