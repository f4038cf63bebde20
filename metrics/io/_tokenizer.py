"""The fast reader's insides: TREC lines to columns, vectorised over pieces of about 1 MB.

Reading is most of the time of evaluating a run file, and a plain ``line.split()`` loop costs
seconds per million lines. The reader is three modules: :mod:`metrics.io._pieces` cuts the
stream at line ends into pieces (:func:`~metrics.io._pieces.read_pieces`), this one cuts each
piece into fields and columns (:class:`Parser`), and :mod:`metrics.io._numbers` gathers the
fields as words and reads the numbers; each says why it is built so. Here:

- **Token boundaries in one pass.** The usual layout (single spaces or tabs, no comments) is
  cut with one ``flatnonzero`` over the separator bytes (:meth:`Parser._cut`); anything else
  goes through a general whitespace pass (:meth:`Parser._cut_lines`), and a piece whose lines do
  not all have the right number of fields is re-read line by line (:meth:`Parser._slow`), so
  every problem gets its exact line number.
- **Less work for what nobody reads.** ``read_run`` validates ranks without computing them; a
  constant tag column is checked, not gathered; line numbers are implied until a message needs
  them; docid hashes (:func:`metrics._docindex.hash_words`) come from the words already
  gathered.
- **Heap priming.** glibc returns large freed blocks to the system until its mmap threshold
  adapts; :func:`_prime_heap` makes it adapt before the first big piece, so temporaries reuse
  freed heap instead of faulting in fresh pages (page faults reading a 36 MB run: ~100,000 ->
  17,000).

The pure-Python reference reader the tests compare against is :mod:`metrics.io._reference`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from metrics._docindex import docid_hashes, hash_words
from metrics.io._numbers import (
    INF_SCORE,
    NAN_SCORE,
    Chunk,
    floats,
    ints,
    note_nonfinite,
    python_float,
    python_int,
    score_message,
    words_as_bytes,
)
from metrics.io.limits import CONTROL_BYTES, NO_LIMITS, Limits, id_problem, line_problem, show
from metrics.io.tables import empty_bytes
from metrics.problems import Problems, ReadWarning

__all__ = ["EXTRA_FIELDS", "INF_SCORE", "NAN_SCORE", "Cols", "Parser", "show"]

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]
Bytes = npt.NDArray[np.bytes_]
U8 = npt.NDArray[np.uint8]

_PRIME_FROM = 4 << 20  # bytes read before the heap is primed: four of the largest pieces
_RUN_FIELDS = 6
_QRELS_FIELDS = 4
# kinds of unusual input accepted with a warning (see Notes): the scores' are in _numbers
EXTRA_FIELDS = "more than 6 fields (the fields after the sixth are ignored)"
# Widest token the vectorised path gathers: its cost is rows x the widest token of a piece, so
# a piece with a longer one (never a real id, and over any id limit) is read line by line.
_FAST_WIDTH = 256


@dataclass
class Cols:
    """Parsed columns of one chunk (or of the whole file once concatenated).

    ``lineno`` holds each row's 1-based line number, or None when the rows are exactly the
    chunk's lines in order (the usual case: the numbers are implied and built only for messages).
    Within a chunk, line numbers count from the chunk's first line.
    """

    qids: Bytes
    docids: Bytes
    nums: I64 | F64  # run: scores (float64); qrels: grades (int64)
    ranks: I64 | None  # run only, and only when rank values are asked for
    tags: list[bytes]  # run only: the distinct tags in first-seen order
    lineno: I64 | None
    hashes: npt.NDArray[np.uint64]  # docid_hashes(docids), for the duplicate check and lookups
    nlines: int = 0  # lines in the chunk, to number the next chunk's lines
    notes: dict[str, list[int]] = field(default_factory=dict)  # kind -> lines accepted unusually

    def line(self, row: int) -> int:
        return row + 1 if self.lineno is None else int(self.lineno[row])


def _merge_tags(lists: Iterable[list[bytes]]) -> list[bytes]:
    return list(dict.fromkeys(t for tags in lists for t in tags))


_HEAP_PRIMED = False


def _prime_heap() -> None:
    """Let the chunks' temporaries reuse freed memory instead of faulting in fresh pages.

    glibc's malloc serves big blocks with mmap and returns them to the system when freed, until
    the first such block of at most 32 MB is freed: it then raises its mmap threshold to that
    size (and its trim threshold to twice it), so later blocks of up to that size come from the
    heap and are reused. A numpy program reaches that state after its first large temporary;
    allocating and freeing one untouched block reaches it before the first chunk, which cuts
    the page faults of reading a 36 MB run from about 100,000 to 17,000 (a fifth of the time).
    Nothing is touched, so nothing is resident; other allocators just get a free block back.
    """
    global _HEAP_PRIMED
    if not _HEAP_PRIMED:
        _HEAP_PRIMED = True
        block = np.empty((32 << 20) - (1 << 16), dtype=np.uint8)
        del block


class Notes:
    """What was accepted although unusual, per kind: how many lines, and the first of them."""

    KEEP = 10  # lines kept per kind
    ORDER = (NAN_SCORE, INF_SCORE, EXTRA_FIELDS)

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.first: dict[str, list[int]] = {}

    def add(self, kind: str, lines: list[int], offset: int = 0) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + len(lines)
        kept = self.first.setdefault(kind, [])
        kept.extend(line + offset for line in lines[: self.KEEP - len(kept)])

    def warnings(self) -> tuple[ReadWarning, ...]:
        return tuple(
            ReadWarning(kind, self.counts[kind], tuple(self.first[kind]))
            for kind in self.ORDER
            if self.counts.get(kind)
        )


class Parser:
    """Chunked parser shared by runs and qrels.

    The data comes cut at line ends into chunks (:func:`metrics.io._pieces.read_pieces`). Each
    chunk is parsed on its own, numbering its lines from 1 and collecting its own problems; the
    parts are then joined in order, which is when line numbers become the file's.
    """

    def __init__(
        self,
        *,
        run: bool,
        problems: Problems,
        rank_values: bool = True,
        limits: Limits = NO_LIMITS,
        scale: Collection[int] | None = None,
    ) -> None:
        self.run = run
        # qrels: the grades allowed besides negative ones (pooled but unjudged); None: any
        self.scale = None if scale is None else np.array(sorted(set(scale)), dtype=np.int64)
        self.rank_values = rank_values
        self.nfields = _RUN_FIELDS if run else _QRELS_FIELDS
        self.problems = problems
        self.notes = Notes()
        self.limits = limits
        # widest token per field that the vectorised path takes (wider: the validating path)
        widths = [_FAST_WIDTH] * self.nfields
        for col, limit in ((0, limits.qid_bytes), (2, limits.docid_bytes)) + (
            ((5, limits.tag_bytes),) if run else ()
        ):
            if limit is not None:
                widths[col] = min(limit, _FAST_WIDTH)
        self.widths = np.array(widths, dtype=np.int64)

    # -- whole file ------------------------------------------------------------------------
    def parse(self, pieces: Iterable[bytes], cut: Mapping[int, int] | None = None) -> Cols:
        """Parse the pieces (each ending at a line end) in order; ``cut`` is the whole length
        of the first line of each piece whose first line was cut while read (``read_pieces``),
        filled in by the time the piece comes."""
        parts: list[tuple[Cols, Problems]] = []
        seen = 0
        for i, piece in enumerate(pieces):
            seen += len(piece)
            if seen > _PRIME_FROM:
                _prime_heap()
            parts.append(self._chunk(piece, None if cut is None else cut.get(i)))
        return self._concat(parts)

    def _chunk(self, chunk: bytes, first_length: int | None = None) -> tuple[Cols, Problems]:
        probs = Problems(self.problems.limit)
        cols = self._fast(chunk, probs)
        return (cols if cols is not None else self._slow(chunk, probs, first_length)), probs

    def _concat(self, parts: list[tuple[Cols, Problems]]) -> Cols:
        def cat(xs: list[Any], dtype: Any) -> Any:
            xs = [x for x in xs if x.size]
            if len(xs) == 1:
                return xs[0]
            return np.concatenate(xs) if xs else np.empty(0, dtype=dtype)

        implied = all(cols.lineno is None for cols, _ in parts)
        linenos: list[I64] = []
        base = 0
        for cols, probs in parts:
            self.problems.merge(probs, base)
            for kind, lines in cols.notes.items():
                self.notes.add(kind, lines, base)
            if not implied:
                n = cols.qids.size
                own = np.arange(1, n + 1, dtype=np.int64) if cols.lineno is None else cols.lineno
                linenos.append(own + base)
            base += cols.nlines
        ps = [cols for cols, _ in parts]
        return Cols(
            qids=cat([p.qids for p in ps], "S1"),
            docids=cat([p.docids for p in ps], "S1"),
            nums=cat([p.nums for p in ps], np.float64 if self.run else np.int64),
            ranks=cat([p.ranks for p in ps], np.int64) if self.run and self.rank_values else None,
            tags=_merge_tags(p.tags for p in ps),
            lineno=None if implied else cat(linenos, np.int64),
            hashes=cat([p.hashes for p in ps], np.uint64),
            nlines=base,
        )

    # -- vectorised path ---------------------------------------------------------------------
    def _cut(self, chunk: bytes, arr: U8) -> tuple[I64, I64] | None:
        """Token lengths and ends, (lines, nfields) each, when every line is ``nfields`` tokens
        separated by single spaces or tabs (the usual layout); None otherwise."""
        nf = self.nfields
        sep = arr <= 32
        if sep[0] or b"#" in chunk or np.any(sep[1:] & sep[:-1]):
            return None  # leading space, comments, blank lines, CRLF, runs of blanks
        pos = np.flatnonzero(sep)
        if pos.size % nf:
            return None
        seps = arr[pos]
        rows = pos.size // nf
        if not (
            np.all(seps[nf - 1 :: nf] == 10)  # every nf-th separator ends a line...
            and np.count_nonzero(seps == 10) == rows  # ...and no other does
            and np.count_nonzero(seps == 32) + np.count_nonzero(seps == 9) == pos.size - rows
        ):
            return None  # a line of another length, or other control characters
        lens = np.diff(pos, prepend=-1)
        lens -= 1
        return lens.reshape(-1, nf), pos.reshape(-1, nf)

    def _cut_lines(self, chunk: bytes, arr: U8) -> tuple[I64, I64, I64, int, int, I64] | None:
        """Token starts and ends of every data line (any whitespace, comments and blank lines
        skipped), the lines' numbers, the chunk's line count, its longest line and the lines
        with fields after a run's sixth (ignored); None if a line has the wrong number of
        fields or a control character."""
        nf = self.nfields
        # exactly bytes.split()'s whitespace: space and \t \n \v \f \r (9..13)
        ws = (arr - np.uint8(9)) < 5
        ws |= arr == 32
        if np.any(~ws & (arr < 32)):
            return None  # a control character: reported line by line
        nl = (arr == 10).nonzero()[0]
        trans = (ws[:-1] != ws[1:]).nonzero()[0] + 1
        if not ws[0]:
            trans = np.concatenate(([0], trans))
        starts, ends = trans[0::2], trans[1::2]
        prev_nl = np.empty_like(nl)
        prev_nl[:1] = -1
        prev_nl[1:] = nl[:-1]
        first_tok = np.searchsorted(starts, prev_nl + 1)
        ntok = np.searchsorted(starts, nl) - first_tok
        has = ntok > 0
        comment = np.zeros_like(has)
        comment[has] = arr[starts[first_tok[has]]] == 35
        data_line = has & ~comment
        counts = ntok[data_line]
        if np.any(counts < nf) or (not self.run and np.any(counts > nf)):
            return None
        idx = first_tok[data_line][:, None] + np.arange(nf)
        lineno = np.flatnonzero(data_line).astype(np.int64) + 1
        longest = int((nl - prev_nl).max()) - 1 if nl.size else 0
        extra = lineno[counts > nf]
        return starts[idx], ends[idx], lineno, int(nl.size), longest, extra

    def _fast(self, chunk: bytes, probs: Problems) -> Cols | None:
        """Columns of a chunk whose every data line has the right number of fields (bad numbers
        are reported to ``probs``), or None when the chunk needs the validating path."""
        if b"\x7f" in chunk:
            return None  # DEL: reported line by line
        if not chunk.isascii():
            if b"\xc2" in chunk and CONTROL_BYTES.search(chunk):
                return None  # a C1 control character
            try:
                chunk.decode("utf-8")
            except UnicodeDecodeError:
                return None
        if chunk[-1:] != b"\n":
            chunk += b"\n"
        arr = np.frombuffer(chunk, dtype=np.uint8)
        lineno: I64 | None = None
        extra: I64 | None = None
        cut = self._cut(chunk, arr)  # (no control characters when it cuts)
        if cut is not None:
            ln, en = cut
            nlines = en.shape[0]
            longest = int(np.diff(en[:, -1], prepend=-1).max()) - 1 if nlines else 0
        else:
            cut_lines = self._cut_lines(chunk, arr)
            if cut_lines is None:
                return None
            st, en, lineno, nlines, longest, extra = cut_lines
            ln = en - st
        if ln.size and np.any(ln.max(axis=0) > self.widths):
            return None  # an over-long token: reported (or read, without limits) line by line
        if self.limits.line_bytes is not None and longest > self.limits.line_bytes:
            return None
        st = en - ln
        c = Chunk(arr, int(ln.max()) if ln.size else 1)
        doc_words, doc_width = c.left_words(st[:, 2], ln[:, 2])
        cols = Cols(
            qids=c.left(st[:, 0], ln[:, 0]),
            docids=words_as_bytes(doc_words, doc_width),
            nums=np.zeros(0),
            ranks=None,
            tags=[],
            lineno=lineno,
            hashes=hash_words(doc_words),
            nlines=nlines,
        )
        if extra is not None and extra.size:
            cols.notes[EXTRA_FIELDS] = extra.tolist()
        if self.run:
            cols.ranks = ints(
                c, chunk, en[:, 3], ln[:, 3], cols.line, "rank", probs, values=self.rank_values
            )
            cols.nums = floats(c, chunk, en[:, 4], ln[:, 4], cols.line, cols.notes, probs)
            cols.tags = c.same(st[:, 5], ln[:, 5]) or _distinct_bytes(c.left(st[:, 5], ln[:, 5]))
        else:
            grades = ints(c, chunk, en[:, 3], ln[:, 3], cols.line, "grade", probs)
            assert grades is not None
            cols.nums = grades
            self._check_scale(cols, probs)
        return cols

    def _check_scale(self, cols: Cols, probs: Problems) -> None:
        """Report each grade that is neither negative nor one of ``self.scale``."""
        if self.scale is None or cols.nums.size == 0:
            return
        grades = cols.nums
        bad = np.flatnonzero(~np.isin(grades, self.scale) & (grades >= 0))
        if not bad.size:
            return
        reported = {p.line for p in probs.items}  # (a grade that is not an integer)
        allowed = ", ".join(str(g) for g in self.scale.tolist())
        for i in bad.tolist():
            line = cols.line(i)
            if line not in reported:
                probs.add(
                    line,
                    f"grade {int(grades[i])} is not on the scale (allowed: {allowed}, "
                    "or a negative grade for pooled but unjudged)",
                )

    # -- validating path ---------------------------------------------------------------------
    def _slow(self, chunk: bytes, probs: Problems, first_length: int | None = None) -> Cols:
        """Every line of ``chunk`` checked on its own, each problem on its line;
        ``first_length`` is the first line's whole length when it was cut while read."""
        qids: list[bytes] = []
        docids: list[bytes] = []
        fnums: list[float] = []
        inums: list[int] = []
        ranks: list[int] = []
        tags: dict[bytes, None] = {}
        lineno: list[int] = []
        notes: dict[str, list[int]] = {}
        nf = self.nfields
        expect = "qid Q0 docid rank score tag" if self.run else "qid iteration docid grade"
        limits = self.limits
        id_fields = [(0, "qid", limits.qid_bytes), (2, "docid", limits.docid_bytes)]
        if self.run:
            id_fields.append((5, "tag", limits.tag_bytes))
        lines = chunk.split(b"\n")
        for i, raw in enumerate(lines):
            line = i + 1
            if limits.line_bytes is not None:
                length = len(raw.rstrip(b"\r")) if i or first_length is None else first_length
                if length > limits.line_bytes:
                    probs.add(line, line_problem(length, limits.line_bytes))
                    continue
            fields = raw.split()
            if not fields or fields[0].startswith(b"#"):
                continue
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                probs.add(
                    line, f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})"
                )
                continue
            if len(fields) < nf or (len(fields) > nf and not self.run):
                probs.add(line, f"expected {nf} fields ({expect}), found {len(fields)}")
                continue
            bad = False
            for col, kind, limit in id_fields:
                problem = id_problem(kind, fields[col], limit)
                if problem is not None:
                    probs.add(line, problem)
                    bad = True
            if bad:
                continue
            if self.run:
                rank = python_int(fields[3])
                if rank is None or not -(2**63) <= rank < 2**63:
                    probs.add(line, f"rank {show(fields[3])} is not an integer")
                    bad = True
                score = python_float(fields[4])
                if score is None:
                    probs.add(line, score_message(fields[4]))
                    bad = True
                # a line with bad numbers stays a row (valued 0) so that the duplicate check
                # sees its docid, as the vectorised path's does; the problem it has already
                # recorded means no row of this read is ever returned
                ranks.append(0 if bad or rank is None else rank)
                fnums.append(0.0 if bad or score is None else score)
                tags.setdefault(fields[5])
                if not bad:
                    assert score is not None
                    note_nonfinite(notes, line, score)
                if len(fields) > nf:
                    notes.setdefault(EXTRA_FIELDS, []).append(line)
            else:
                grade = python_int(fields[3])
                if grade is None or not -(2**63) <= grade < 2**63:
                    probs.add(line, f"grade {show(fields[3])} is not an integer")
                    grade = 0  # kept for the duplicate check, as above
                inums.append(grade)
            qids.append(fields[0])
            docids.append(fields[2])
            lineno.append(line)

        def sarr(xs: list[bytes]) -> Bytes:
            return np.array(xs, dtype=np.bytes_) if xs else empty_bytes()

        docs = sarr(docids)
        out = Cols(
            qids=sarr(qids),
            docids=docs,
            nums=(
                np.array(fnums, dtype=np.float64) if self.run else np.array(inums, dtype=np.int64)
            ),
            ranks=np.array(ranks, dtype=np.int64) if self.run and self.rank_values else None,
            tags=list(tags),
            lineno=np.array(lineno, dtype=np.int64),
            hashes=docid_hashes(docs),
            nlines=chunk.count(b"\n"),
            notes=notes,
        )
        if not self.run:
            self._check_scale(out, probs)
        return out


def _distinct_bytes(col: Bytes) -> list[bytes]:
    """Distinct values of a column in first-seen order."""
    if col.size == 0:
        return []
    first = col[0]
    if np.all(col == first):
        return [bytes(first)]
    _, idx = np.unique(col, return_index=True)
    return [bytes(col[i]) for i in np.sort(idx).tolist()]
