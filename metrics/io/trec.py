"""Readers and writers for TREC run and qrels files.

Formats (whitespace separated, one record per line; blank lines and lines whose first field starts
with ``#`` are skipped; CRLF line endings are tolerated; UTF-8):

- run:   ``qid Q0 docid rank score tag`` (6 fields; the second field is ignored)
- qrels: ``qid iter docid grade``       (4 fields; the second field is ignored)

Sources may be a path (``str`` or ``os.PathLike``), a binary file object, or ``bytes``; gzip is
recognised by its magic bytes, so ``.gz`` files and plain files are both read the same way.

A file is validated whole: every problem (fewer fields than the format's, a score that is not
a number, a rank or grade that is not an integer, a duplicate docid within a topic, bad UTF-8, a
control character in an id, no data lines, and a line or id longer than the reader's
:class:`~metrics.io.limits.Limits`) is collected with its 1-based line number and reported
together in :class:`InvalidInput`. A UTF-8 BOM at the start of the file is dropped. By default
a line is at most 64 KiB (:data:`~metrics.io.limits.DEFAULT_LINE_BYTES`; an over-long line is
named with its length and never gathered whole); ``limits=NO_LIMITS`` reads any line.

Read as trec_eval reads them, and accepted with a warning naming the lines (``Run.warnings``,
``RunTable.warnings``: :class:`~metrics.problems.ReadWarning`, each kind with its count and
first ten lines): a score strtod reads as NaN (``nan``, ``NaN``, any case, optional sign),
ranked after every other document of its query, NaNs among themselves by docid descending; an
infinite score (``inf``, ``-Infinity``, or a decimal beyond a double's range such as
``1e309``), ordered as a number; fields after a run line's sixth (trec_eval's "reserved for
future expansion"), ignored. Qrels lines still need exactly 4 fields.

Speed: the file is streamed in pieces that end at line ends (256 KB growing to 1 MB), each parsed
by a vectorised path over its raw bytes, so memory stays near the size of the result; numbers are
exactly the values ``float()``/``strtod`` give. How, and why so: :mod:`metrics.io._pieces`,
:mod:`metrics.io._tokenizer` and :mod:`metrics.io._numbers`.
:func:`read_run` validates the rank column but does not keep it (trec_eval ignores it);
:func:`parse_run` keeps it.

The tables read into are in :mod:`metrics.io.tables`.
"""

from __future__ import annotations

import gzip
import io
import os
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Union, cast

import numpy as np
import numpy.typing as npt

from metrics.io._pieces import read_pieces
from metrics.io._tokenizer import Cols, Parser
from metrics.io.limits import DEFAULT_LIMITS, Limits, show
from metrics.io.tables import Qrels, Run, RunTable, segments
from metrics.problems import Problems, ReadWarning

__all__ = ["Source", "parse_run", "read_qrels", "read_run", "write_qrels", "write_run"]

Source = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, IO[bytes]]

I64 = npt.NDArray[np.int64]
Bytes = npt.NDArray[np.bytes_]


# --------------------------------------------------------------------------------------------
# Sources


class _Prefixed:
    """A binary stream with its first bytes already read (to look for the gzip magic)."""

    def __init__(self, head: bytes, rest: Any) -> None:
        self.head = head
        self.rest = rest

    def read(self, n: int = -1) -> bytes:
        if self.head:
            out, self.head = self.head, b""
            return out
        raw = self.rest.read(n)
        return bytes(raw)


def _open_source(src: Source, source: str | None) -> tuple[Any, str, Any]:
    """A binary stream over ``src`` (gzip undone), its name, and what to close afterwards."""
    closer: Any = None
    if isinstance(src, bytes | bytearray | memoryview):
        stream: Any = io.BytesIO(src)
        name = source or "<bytes>"
    elif isinstance(src, str | os.PathLike):
        stream = closer = open(src, "rb")  # noqa: SIM115 - closed by the caller
        name = source or os.fspath(src)
    elif hasattr(src, "read"):
        stream = src
        name = source or str(getattr(src, "name", "<stream>"))
    else:
        raise TypeError(f"cannot read TREC data from {type(src).__name__}")
    head = stream.read(2)
    if isinstance(head, str):
        raise TypeError("TREC readers need a binary file object (open the file with 'rb')")
    head = bytes(head)
    while 0 < len(head) < 2:  # a stream may hand out fewer bytes than asked
        more = bytes(stream.read(2 - len(head)))
        if not more:
            break
        head += more
    stream = _Prefixed(head, stream)
    if head == b"\x1f\x8b":
        stream = gzip.GzipFile(fileobj=stream, mode="rb")
    return stream, name, closer


def read_head(src: Source, source: str | None, limit: int) -> tuple[bytes, str]:
    """At most ``limit`` bytes from the start of ``src`` (gzip undone) and its name."""
    stream, name, closer = _open_source(src, source)
    parts: list[bytes] = []
    size = 0
    try:
        while size < limit:
            part = bytes(stream.read(min(limit - size, 1 << 20)))
            if not part:
                break
            parts.append(part)
            size += len(part)
    finally:
        if closer is not None:
            closer.close()
    return b"".join(parts), name


# --------------------------------------------------------------------------------------------
# Grouping and duplicates


@dataclass
class _Grouped:
    qids: tuple[str, ...]
    offsets: I64
    perm: I64 | None  # rows in grouped order (None: file order is already grouped)


def _group(qcol: Bytes) -> _Grouped:
    """Group rows by qid, queries in first-seen order, rows in file order within a query."""
    n = qcol.size
    if n == 0:
        return _Grouped((), np.zeros(1, dtype=np.int64), None)
    change = np.flatnonzero(qcol[1:] != qcol[:-1]) + 1
    heads = np.concatenate(([0], change)).astype(np.int64)
    head_q = qcol[heads].tolist()
    index: dict[bytes, int] = {}
    seg_q = np.fromiter((index.setdefault(q, len(index)) for q in head_q), np.int64, heads.size)
    qids = tuple(q.decode() for q in index)
    if len(index) == heads.size:  # every query contiguous
        offsets = np.append(heads, n).astype(np.int64)
        return _Grouped(qids, offsets, None)
    lengths = np.diff(np.append(heads, n))
    row_q = np.repeat(seg_q, lengths)
    perm = np.argsort(row_q, kind="stable").astype(np.int64)
    offsets = np.zeros(len(index) + 1, dtype=np.int64)
    np.cumsum(np.bincount(row_q, minlength=len(index)), out=offsets[1:])
    return _Grouped(qids, offsets, perm)


def _check_duplicates(
    qcol: Bytes, docids: Bytes, cols: Cols, grouped: _Grouped, problems: Problems
) -> None:
    """Report every docid that appears more than once for the same query."""
    n = docids.size
    if n < 2:
        return
    row_q = segments(grouped.offsets)
    if grouped.perm is not None:  # row_q is in grouped order; map back to file order
        q_file = np.empty(n, dtype=np.int64)
        q_file[grouped.perm] = row_q
        row_q = q_file
    hashes = cols.hashes
    if len(grouped.qids) < 1 << 20:
        # (query, 44 hash bits) keys: one sort; equal keys are only candidates, confirmed on the
        # docid bytes below (a collision among a million rows has odds of about 1 in 30)
        key = (hashes >> np.uint64(20)) | (row_q.astype(np.uint64) << np.uint64(44))
        ordered = np.sort(key)
        same = ordered[1:] == ordered[:-1]
        if not same.any():
            return
        dupkeys = np.unique(ordered[1:][same])
        at = np.minimum(np.searchsorted(dupkeys, key), dupkeys.size - 1)
        cand = np.flatnonzero(dupkeys[at] == key)
    else:
        cand = np.arange(n)
    sub = np.lexsort((docids[cand], row_q[cand]))
    order = cand[sub]
    d = docids[order]
    q = row_q[order]
    dup = np.flatnonzero((d[1:] == d[:-1]) & (q[1:] == q[:-1])) + 1
    for i in dup.tolist():
        j = i
        while j > 0 and q[j - 1] == q[i] and d[j - 1] == d[i]:
            j -= 1
        first = cols.line(int(order[j]))
        line = cols.line(int(order[i]))
        problems.add(
            line,
            f"duplicate docid {show(bytes(d[i]))} for query "
            f"{show(bytes(qcol[order[i]]))} (first on line {first})",
        )


# --------------------------------------------------------------------------------------------
# Public readers


def _parse(
    src: Source,
    source: str | None,
    max_problems: int,
    *,
    run: bool,
    rank_values: bool = True,
    limits: Limits = DEFAULT_LIMITS,
    scale: Collection[int] | None = None,
) -> tuple[Cols, _Grouped, tuple[ReadWarning, ...]]:
    stream, name, closer = _open_source(src, source)
    problems = Problems(max(1, max_problems))
    try:
        parser = Parser(
            run=run, problems=problems, rank_values=rank_values, limits=limits, scale=scale
        )
        cut: dict[int, int] = {}
        cols = parser.parse(read_pieces(stream, name, limits.line_bytes, cut), cut)
    finally:
        if closer is not None:
            closer.close()
    if cols.qids.size == 0 and problems.total == 0:
        problems.add(0, "no data lines (empty file)")
    grouped = _group(cols.qids)
    _check_duplicates(cols.qids, cols.docids, cols, grouped, problems)
    problems.raise_if_any(name)
    return cols, grouped, parser.notes.warnings()


def _take(a: Any, perm: I64 | None) -> Any:
    return a if perm is None else a[perm]


def parse_run(
    src: Source,
    *,
    source: str | None = None,
    max_problems: int = 100,
    limits: Limits = DEFAULT_LIMITS,
) -> RunTable:
    """Validate a whole TREC run file and return its columns in file order.

    Format: ``qid Q0 docid rank score tag`` per line. Raises :class:`InvalidInput` listing
    every problem (at most ``max_problems``, with the total), lines and ids over ``limits``
    among them (by default a line over 64 KiB; ``limits=NO_LIMITS``: none).
    """
    cols, _, warnings = _parse(src, source, max_problems, run=True, limits=limits)
    assert cols.ranks is not None
    return RunTable(
        qids=np.char.decode(cols.qids, "utf-8").tolist(),
        docids=np.char.decode(cols.docids, "utf-8").tolist(),
        ranks=cols.ranks,
        scores=cols.nums.astype(np.float64, copy=False),
        tags=[t.decode() for t in cols.tags],
        lines=int(cols.qids.size),
        warnings=warnings,
    )


def read_run(
    src: Source,
    *,
    source: str | None = None,
    max_problems: int = 100,
    limits: Limits = DEFAULT_LIMITS,
) -> Run:
    """Read and validate a TREC run into a :class:`Run` grouped per query.

    ``tag`` is the first tag in the file, ``tags`` every distinct tag in first-seen order;
    ``warnings`` what was accepted although unusual (NaN or infinite scores, extra fields).
    Raises :class:`InvalidInput` on any problem (lines and ids over ``limits`` among them; by
    default a line over 64 KiB, ``limits=NO_LIMITS`` for none).
    """
    cols, grouped, warnings = _parse(
        src, source, max_problems, run=True, rank_values=False, limits=limits
    )
    tags = tuple(t.decode() for t in cols.tags)
    run = Run(
        qids=grouped.qids,
        offsets=grouped.offsets,
        docids=_take(cols.docids, grouped.perm),
        scores=_take(cols.nums, grouped.perm),
        tag=tags[0] if tags else "",
        tags=tags,
        warnings=warnings,
    )
    run.__dict__["hashes"] = _take(cols.hashes, grouped.perm)  # evaluation reuses them
    return run


def read_qrels(
    src: Source,
    *,
    source: str | None = None,
    max_problems: int = 100,
    limits: Limits = DEFAULT_LIMITS,
    scale: Collection[int] | None = None,
) -> Qrels:
    """Read and validate TREC qrels (``qid iteration docid grade``) into :class:`Qrels`.

    Grades are integers; negative grades are kept (pooled but unjudged); with a ``scale`` every
    other grade must be one of it. A docid judged twice for one query is an error. Raises
    :class:`InvalidInput` on any problem (lines and ids over ``limits`` among them; by default a
    line over 64 KiB, ``limits=NO_LIMITS`` for none).
    """
    cols, grouped, _ = _parse(src, source, max_problems, run=False, limits=limits, scale=scale)
    return Qrels._sorted(
        grouped.qids,
        grouped.offsets,
        _take(cols.docids, grouped.perm),
        _take(cols.nums, grouped.perm).astype(np.int64, copy=False),
    )


# --------------------------------------------------------------------------------------------
# Writers


def _open_out(dst: str | os.PathLike[str] | IO[bytes]) -> tuple[IO[bytes], bool]:
    if isinstance(dst, str | os.PathLike):
        path = Path(dst)
        if path.suffix == ".gz":
            return cast(IO[bytes], gzip.open(path, "wb")), True
        return path.open("wb"), True
    return dst, False


def _write_lines(dst: str | os.PathLike[str] | IO[bytes], lines: Iterable[str]) -> None:
    out, owned = _open_out(dst)
    try:
        batch: list[str] = []
        for line in lines:
            batch.append(line)
            if len(batch) >= 65536:
                out.write("".join(batch).encode())
                batch.clear()
        out.write("".join(batch).encode())
    finally:
        if owned:
            out.close()


def write_run(run: Run, dst: str | os.PathLike[str] | IO[bytes], *, tag: str | None = None) -> None:
    """Write a run in TREC format, each query in trec_eval order with ranks 1..n.

    Scores are written with ``repr`` (shortest text that reads back to the same double). A path
    ending in ``.gz`` is gzip-compressed.
    """
    name = tag if tag is not None else (run.tag or "run")
    if not name or any(c.isspace() for c in name):
        raise ValueError(f"run tag must be a non-empty word, got {name!r}")
    order = run.order
    docs = run.docids[order].tolist()
    scores = run.scores[order].tolist()

    def lines() -> Iterable[str]:
        for i, qid in enumerate(run.qids):
            a, b = int(run.offsets[i]), int(run.offsets[i + 1])
            for r in range(a, b):
                yield f"{qid} Q0 {docs[r].decode()} {r - a + 1} {scores[r]!r} {name}\n"

    _write_lines(dst, lines())


def write_qrels(qrels: Qrels, dst: str | os.PathLike[str] | IO[bytes]) -> None:
    """Write qrels in TREC format (``qid 0 docid grade``), docids sorted within each query."""
    docs = qrels.docids.tolist()
    grades = qrels.grades.tolist()

    def lines() -> Iterable[str]:
        for i, qid in enumerate(qrels.qids):
            for r in range(int(qrels.offsets[i]), int(qrels.offsets[i + 1])):
                yield f"{qid} 0 {docs[r].decode()} {grades[r]}\n"

    _write_lines(dst, lines())
