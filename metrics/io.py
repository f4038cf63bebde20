"""Readers and writers for TREC run and qrels files.

Formats (whitespace separated, one record per line; blank lines and lines whose first field starts
with ``#`` are skipped; CRLF line endings are tolerated; UTF-8):

- run:   ``qid Q0 docid rank score tag`` (6 fields; the second field is ignored)
- qrels: ``qid iter docid grade``       (4 fields; the second field is ignored)

Sources may be a path (``str`` or ``os.PathLike``), a binary file object, or ``bytes``; gzip is
recognised by its magic bytes, so ``.gz`` files and plain files are both read the same way.

A file is validated whole: every problem (wrong field count, a score that is not a finite number,
a rank or grade that is not an integer, a duplicate docid within a topic, bad UTF-8, no data lines)
is collected with its 1-based line number and reported together in :class:`InvalidInput`.

Speed: the file is streamed in pieces that end at line ends (256 KB growing to 1 MB), each parsed
by a vectorised path over its raw bytes (numpy: token boundaries, fixed-width gathers, digit
arithmetic for numbers), so memory stays near the size of the result. A piece whose lines do not
all have the right number of fields is re-read by a line-by-line validating path, so error
messages carry exact line numbers. Numbers parsed by the vectorised path are exactly the values
``float()``/``strtod`` give: a decimal mantissa of at most 2**53 divided by an exact power of ten
is correctly rounded in IEEE arithmetic (Clinger 1990); longer mantissas are divided in x87
extended precision where that is exact, and other spellings (exponents, ``+``) go through
numpy's and Python's own conversions.
:func:`read_run` validates the rank column but does not keep it (trec_eval ignores it);
:func:`parse_run` keeps it.

Documents ids are kept as UTF-8 bytes in numpy ``S`` arrays: compact, and byte order is the order
trec_eval's ``strcmp`` uses for tie-breaking.
"""

from __future__ import annotations

import gzip
import io
import math
import os
import re
import sys
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import IO, Any, NamedTuple, Union, cast

import numpy as np
import numpy.typing as npt

from metrics._docindex import docid_hashes, hash_words
from metrics.problems import InvalidInput, Problem, Problems

__all__ = [
    "InvalidInput",
    "Problem",
    "Qrels",
    "Run",
    "RunTable",
    "Source",
    "parse_run",
    "read_qrels",
    "read_run",
    "write_qrels",
    "write_run",
]

Source = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, IO[bytes]]

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]
Bytes = npt.NDArray[np.bytes_]
U8 = npt.NDArray[np.uint8]
Bool = npt.NDArray[np.bool_]

_CHUNK = 1 << 20  # largest piece parsed at once (see _pieces)
_FIRST_CHUNK = 1 << 18  # smallest piece, but for the last
_PRIME_FROM = 4 * _CHUNK  # bytes read before the heap is primed (see _prime_heap)
_POW10_FLOAT = np.array([10.0**i for i in range(23)], dtype=np.float64)
_RUN_FIELDS = 6
_QRELS_FIELDS = 4
_INT_RE = re.compile(rb"[+-]?[0-9]+")
_FLOAT_RE = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


# --------------------------------------------------------------------------------------------
# Problems


def _show(token: bytes) -> str:
    text = token.decode("utf-8", "backslashreplace")
    return repr(text if len(text) <= 40 else text[:37] + "...")


# --------------------------------------------------------------------------------------------
# Data types


def _empty_bytes() -> Bytes:
    return np.empty(0, dtype="S1")


def _segments(offsets: I64) -> I64:
    """Query index of every row, from segment offsets."""
    return np.repeat(np.arange(offsets.size - 1, dtype=np.int64), np.diff(offsets))


@dataclass(frozen=True)
class RunTable:
    """A run's columns in file order, for ingestion (see :func:`parse_run`)."""

    qids: list[str]
    docids: list[str]
    ranks: I64
    scores: F64
    tags: list[str]
    lines: int


@dataclass(frozen=True, eq=False)
class Run:
    """A run grouped per query: columnar, numpy-backed.

    Rows of one query are contiguous, in file order; ``offsets[i]:offsets[i+1]`` are the rows of
    ``qids[i]``. ``docids`` holds UTF-8 bytes. Build one with :func:`read_run` or
    :meth:`Run.from_dict`.
    """

    qids: tuple[str, ...]
    offsets: I64
    docids: Bytes
    scores: F64
    tag: str = ""
    tags: tuple[str, ...] = field(default=(), repr=False)  # every distinct tag, first-seen order

    @classmethod
    def from_dict(cls, run: Mapping[str, Mapping[str, float]], *, tag: str = "") -> Run:
        """Build a run from ``{qid: {docid: score}}``."""
        qids = tuple(str(q) for q in run)
        sizes = [len(run[q]) for q in run]
        offsets = np.zeros(len(qids) + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        docs = [str(d).encode() for q in run for d in run[q]]
        scores = np.fromiter(
            (float(s) for q in run for s in run[q].values()), np.float64, count=int(offsets[-1])
        )
        if not np.all(np.isfinite(scores)):
            raise ValueError("run scores must be finite numbers")
        docids = np.array(docs, dtype=np.bytes_) if docs else _empty_bytes()
        return cls(qids, offsets, docids, scores, tag, tags=(tag,) if tag else ())

    def __len__(self) -> int:
        return int(self.offsets[-1])

    def with_float32_scores(self) -> Run:
        """This run with scores rounded to single precision.

        trec_eval 9.x (and so pytrec_eval, and many published figures) stored scores as C
        ``float``; rounding reproduces its ties and order. trec_eval 10 keeps doubles.
        """
        return Run(
            self.qids,
            self.offsets,
            self.docids,
            self.scores.astype(np.float32).astype(np.float64),
            self.tag,
            self.tags,
        )

    @cached_property
    def _index(self) -> dict[str, int]:
        return {q: i for i, q in enumerate(self.qids)}

    def __contains__(self, qid: object) -> bool:
        return qid in self._index

    @cached_property
    def hashes(self) -> npt.NDArray[np.uint64]:
        """64-bit hash of every docid (see :func:`docid_hashes`)."""
        return docid_hashes(self.docids)

    @cached_property
    def order(self) -> I64:
        """Row permutation into trec_eval order.

        Within each query: score descending (as double), ties broken by docid in *descending* byte
        order (trec_eval ``form_res_rels.c``); queries keep their place.
        """
        return _trec_order(self.offsets, self.scores, self.docids)

    def ranking(self, qid: str) -> list[str]:
        """Docids of ``qid`` in trec_eval order (score desc, docid desc); ``[]`` if absent."""
        i = self._index.get(qid)
        if i is None:
            return []
        rows = self.order[self.offsets[i] : self.offsets[i + 1]]
        return [d.decode() for d in self.docids[rows].tolist()]

    def scores_of(self, qid: str) -> dict[str, float]:
        """``{docid: score}`` of one query (empty if absent)."""
        i = self._index.get(qid)
        if i is None:
            return {}
        a, b = int(self.offsets[i]), int(self.offsets[i + 1])
        return dict(
            zip(
                (d.decode() for d in self.docids[a:b].tolist()),
                self.scores[a:b].tolist(),
                strict=True,
            )
        )

    def to_dict(self) -> dict[str, dict[str, float]]:
        """``{qid: {docid: score}}``."""
        return {q: self.scores_of(q) for q in self.qids}


@dataclass(frozen=True, eq=False)
class Qrels:
    """Relevance judgments grouped per query: columnar, numpy-backed.

    ``docids`` (UTF-8 bytes) are sorted within each query so lookups are binary searches.
    Negative grades mean "pooled but not judged" (trec_eval's convention).
    """

    qids: tuple[str, ...]
    offsets: I64
    docids: Bytes
    grades: I64

    @classmethod
    def from_dict(cls, qrels: Mapping[str, Mapping[str, int]]) -> Qrels:
        """Build qrels from ``{qid: {docid: grade}}``."""
        qids = tuple(str(q) for q in qrels)
        sizes = [len(qrels[q]) for q in qrels]
        offsets = np.zeros(len(qids) + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        docs = [str(d).encode() for q in qrels for d in qrels[q]]
        grades = np.fromiter(
            (int(g) for q in qrels for g in qrels[q].values()), np.int64, count=int(offsets[-1])
        )
        docids = np.array(docs, dtype=np.bytes_) if docs else _empty_bytes()
        return cls._sorted(qids, offsets, docids, grades)

    @classmethod
    def _sorted(cls, qids: tuple[str, ...], offsets: I64, docids: Bytes, grades: I64) -> Qrels:
        if docids.size:
            # sort by (query, docid bytes): rank the docids once, then one integer sort
            keys = _byte_keys(docids)
            by_doc = np.argsort(keys[0]) if len(keys) == 1 else np.lexsort(keys[::-1])
            rank = np.empty(docids.size, dtype=np.int64)
            rank[by_doc] = np.arange(docids.size, dtype=np.int64)
            order = np.argsort(_segments(offsets) * docids.size + rank, kind="stable")
            docids, grades = docids[order], grades[order]
        return cls(qids, offsets, docids, grades)

    def __len__(self) -> int:
        return int(self.offsets[-1])

    @cached_property
    def _index(self) -> dict[str, int]:
        return {q: i for i, q in enumerate(self.qids)}

    def __contains__(self, qid: object) -> bool:
        return qid in self._index

    def judgments(self, qid: str) -> dict[str, int]:
        """``{docid: grade}`` of one query (empty if the query has no judgments)."""
        i = self._index.get(qid)
        if i is None:
            return {}
        a, b = int(self.offsets[i]), int(self.offsets[i + 1])
        return dict(
            zip(
                (d.decode() for d in self.docids[a:b].tolist()),
                self.grades[a:b].tolist(),
                strict=True,
            )
        )

    def to_dict(self) -> dict[str, dict[str, int]]:
        """``{qid: {docid: grade}}``."""
        return {q: self.judgments(q) for q in self.qids}

    def num_rel(self, qid: str, relevance_level: int = 1) -> int:
        """Number of documents of ``qid`` with grade >= ``relevance_level``."""
        i = self._index.get(qid)
        if i is None:
            return 0
        g = self.grades[self.offsets[i] : self.offsets[i + 1]]
        return int(np.count_nonzero(g >= relevance_level))


def _byte_keys(col: Bytes) -> list[npt.NDArray[np.uint64]]:
    """Each value's bytes as big-endian uint64 words: comparing the words in turn compares the
    bytes (NUL padded) in order, and numeric sort keys sort much faster than ``S`` values."""
    n = col.size
    w = col.dtype.itemsize
    k = max(1, (w + 7) // 8)
    buf = np.zeros((n, 8 * k), dtype=np.uint8)
    buf[:, :w] = np.ascontiguousarray(col).view(np.uint8).reshape(n, w)
    words = buf.view(">u8").astype(np.uint64)
    return [words[:, j] for j in range(k)]


def _tie_groups(tie: Bool) -> tuple[I64, I64]:
    """Rows in runs of ties (``tie[i]``: rows i and i+1 tie) and each one's group number."""
    n = tie.size + 1
    member = np.zeros(n, dtype=bool)
    member[:-1] |= tie
    member[1:] |= tie
    rows = np.flatnonzero(member)
    starts = np.ones(rows.size, dtype=bool)
    starts[1:] = ~tie[rows[1:] - 1] | (rows[1:] - 1 != rows[:-1])
    return rows, np.cumsum(starts) - 1


def _reverse_groups(tie: Bool) -> I64:
    """The identity permutation with every run of tied rows reversed."""
    rows, group = _tie_groups(tie)
    first = np.flatnonzero(np.diff(group, prepend=-1))  # each group's first place in rows
    last = np.append(first[1:], rows.size) - 1
    order = np.arange(tie.size + 1, dtype=np.int64)
    order[rows] = rows[(first + last)[group] - np.arange(rows.size)]
    return order


def _trec_order(offsets: I64, scores: F64, docids: Bytes) -> I64:
    """Permutation: per segment, score descending, ties by docid descending (byte order)."""
    n = scores.size
    ident = np.arange(n, dtype=np.int64)
    if n < 2:
        return ident
    seg = _segments(offsets)
    same_q = seg[1:] == seg[:-1]
    d = scores[1:] - scores[:-1]
    if not np.any(same_q & (d > 0)):
        # Already score-descending within each query (the usual case): only ties may need fixing.
        tie = same_q & (d == 0)
        if not np.any(tie):
            return ident
        rising = docids[1:][tie] > docids[:-1][tie]
        if not np.any(rising):
            return ident
        if np.all(rising):  # ties listed in ascending docid order (common): reverse each group
            return _reverse_groups(tie)
        order = ident
    else:
        order = np.lexsort((-scores, seg))
    s = scores[order]
    q = seg[order]
    tie = (q[1:] == q[:-1]) & (s[1:] == s[:-1])
    if not np.any(tie):
        return order
    # Rows that belong to a group of equal (query, score): re-sort those by docid, descending.
    rows, group = _tie_groups(tie)
    sub = np.lexsort((*_byte_keys(docids[order[rows]])[::-1], -group))[::-1]
    order = order.copy()
    order[rows] = order[rows[sub]]
    return order


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


def _pieces(stream: Any, name: str) -> Iterator[bytes]:
    """The stream's bytes in pieces that end at line ends.

    Pieces grow from ``_FIRST_CHUNK`` to ``_CHUNK`` bytes (an eighth of what was read so far):
    parsing needs about ten times a piece's size in temporaries, which stays small for a small
    file and small next to the result for a large one, while each piece stays large enough for
    numpy's per-call overhead not to matter.
    """
    carry = b""
    total = 0
    while True:
        try:
            block = stream.read(min(_CHUNK, max(_FIRST_CHUNK, total // 8)))
        except (OSError, EOFError, zlib.error) as exc:
            raise InvalidInput(name, [Problem(0, f"not a valid gzip file ({exc})")]) from exc
        if not block:
            break
        total += len(block)
        buf = carry + block if carry else block
        cut = buf.rfind(b"\n") + 1
        if cut == 0:  # no line end yet
            carry = buf
            continue
        carry = buf[cut:]
        yield buf if cut == len(buf) else buf[:cut]
    if carry:
        yield carry


# --------------------------------------------------------------------------------------------
# Vectorised parsing


@dataclass
class _Cols:
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

    def line(self, row: int) -> int:
        return row + 1 if self.lineno is None else int(self.lineno[row])


def _mask_tables(k: int, *, right: bool) -> npt.NDArray[np.uint64]:
    """``t[j, n]``: the bytes of word j (of k) that a token of n <= 8k bytes occupies.

    ``right``: the token ends at the last byte of word k-1 (numbers, read right-aligned);
    otherwise it starts at byte 0 of word 0 (strings, read left-aligned).
    """
    t = np.zeros((k, 8 * k + 1), dtype=np.uint64)
    for j in range(k):
        for n in range(8 * k + 1):
            lo, hi = (8 * k - n, 8 * k) if right else (0, n)  # the token's bytes
            a, b = max(lo, 8 * j), min(hi, 8 * j + 8)
            if a < b:
                t[j, n] = ((1 << (8 * (b - a))) - 1) << (8 * (a - 8 * j))
    return t


_LEFT_MASKS = {k: _mask_tables(k, right=False) for k in range(1, 5)}
_RIGHT_MASKS = {k: _mask_tables(k, right=True) for k in range(1, 4)}


class _Chunk:
    """One chunk's bytes, padded so fixed-width windows never run off either end."""

    def __init__(self, arr: U8, pad: int) -> None:
        self.pad = pad + 8
        padded = np.empty(arr.size + 2 * self.pad, dtype=np.uint8)
        padded[: self.pad] = 32
        padded[self.pad + arr.size :] = 32
        padded[self.pad : self.pad + arr.size] = arr
        self.padded = padded
        # every byte offset viewed as the start of an (unaligned) little-endian uint64
        self.view: npt.NDArray[np.uint64] = np.ndarray(
            (padded.size - 7,), dtype="<u8", buffer=padded.data, strides=(1,)
        )

    def left(self, starts: I64, lens: I64) -> Bytes:
        """Tokens as ``S<maxlen>`` values (NUL padded), gathered eight bytes at a time."""
        return _words_as_bytes(*self.left_words(starts, lens))

    def left_words(self, starts: I64, lens: I64) -> tuple[npt.NDArray[np.uint64], int]:
        """Tokens NUL padded in ``(n, k)`` native uint64 words, and the longest token's length."""
        n = starts.size
        width = int(lens.max()) if n else 0
        k = max(1, (width + 7) // 8)
        base = starts + self.pad
        raw = np.empty((n, k), dtype=np.uint64)
        masks = _LEFT_MASKS[k] if k in _LEFT_MASKS else _mask_tables(k, right=False)
        for j in range(k):
            keep = masks[j][lens]
            np.bitwise_and(self.view[base + 8 * j if j else base], keep, out=raw[:, j])
        if sys.byteorder != "little":  # pragma: no cover - words were read little-endian
            raw = raw.byteswap()
        return raw, width

    def same(self, starts: I64, lens: I64) -> list[bytes]:
        """``[token]`` when every token is the same (a run's tag column, usually), else ``[]``."""
        n = starts.size
        width = int(lens[0]) if n else 0
        if n == 0 or not np.all(lens == width):
            return []
        base = starts + self.pad
        for j in range(0, width, 8):
            words = self.view[base + j if j else base] & np.uint64(2 ** (8 * min(width - j, 8)) - 1)
            if not np.all(words == words[0]):
                return []
        a = int(starts[0]) + self.pad
        return [self.padded[a : a + width].tobytes()]

    def words(self, ends: I64, lens: I64) -> list[npt.NDArray[np.uint64]]:
        """Tokens right-aligned in k little-endian uint64 words, k = ceil(maxlen / 8) <= 3.

        Word j holds bytes 8j..8j+7 of the 8k bytes that end where the token ends; bytes left
        of a token belong to whatever precedes it, and longer tokens lose their left part.
        """
        w = max(1, int(lens.max())) if lens.size else 1
        k = min((w + 7) // 8, _NUMBER_WIDTH // 8)
        base = ends + self.pad
        return [self.view[base - 8 * (k - j)] for j in range(k)]


_NUMBER_WIDTH = 24  # widest number token read vectorised
_M8 = np.uint64(0x00FF00FF00FF00FF)
_M16 = np.uint64(0x0000FFFF0000FFFF)
_M32 = np.uint64(0x00000000FFFFFFFF)
_POW10_LD = np.array([10**i for i in range(28)], dtype=np.longdouble)
# x87 extended precision (64-bit significand) lets 19-digit mantissas round exactly; elsewhere
# (long double == double, or quad) those tokens take numpy's own conversion instead.
_EXTENDED = np.finfo(np.longdouble).nmant == 63
_TWO53 = np.uint64(1 << 53)
_TWO63 = np.uint64(1 << 63)
_B01 = np.uint64(0x0101010101010101)
_B7F = np.uint64(0x7F7F7F7F7F7F7F7F)
_B76 = np.uint64(0x7676767676767676)
_B80 = np.uint64(0x8080808080808080)
_B30 = np.uint64(0x3030303030303030)
_U1 = np.uint64(1)
_U7 = np.uint64(7)
_U8 = np.uint64(8)
_U56 = np.uint64(56)
_MAX_INT_DIGITS = 18  # at most 18 digits always fit an int64


def _swar8(words: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """Value of 8 decimal digit bytes (0..9, first byte most significant) per uint64 word."""
    v = (words * np.uint64(10) + (words >> _U8)) & _M8
    v = (v * np.uint64(100) + (v >> np.uint64(16))) & _M16
    return (v * np.uint64(10000) + (v >> np.uint64(32))) & _M32


def _eq_bytes(x: npt.NDArray[np.uint64], byte: int) -> npt.NDArray[np.uint64]:
    """High bit of every byte of ``x`` that equals ``byte`` (exact, no carries between bytes)."""
    y = x ^ (np.uint64(byte) * _B01)
    return ~(((y & _B7F) + _B7F) | y | _B7F)


def _after(flags: list[npt.NDArray[np.uint64]]) -> I64:
    """Bytes after the one flagged byte of each row of right-aligned words (0 if none)."""
    k = len(flags)
    total = np.zeros(flags[0].size, dtype=np.int64)
    for j, f in enumerate(flags):
        # bits above a lone high bit 8i+7: ~(2f - 1); 8 per byte after it in this word
        above = np.bitwise_count(~((f << _U1) - _U1)).astype(np.int64) >> 3
        total += np.where(f != 0, above + 8 * (k - 1 - j), 0)
    return total


class _Numbers(NamedTuple):
    mantissa: npt.NDArray[np.uint64]
    frac: I64 | int  # digits after the decimal point (one number when the same for all)
    neg: Bool
    ok: Bool


def _decimals(
    words: list[npt.NDArray[np.uint64]], lens: I64, *, real: bool, values: bool = True
) -> _Numbers:
    """Vectorised reading of right-aligned ``-?digits`` (``real``: ``-?digits[.digits]``) tokens.

    Characters are classified eight at a time with carry-free byte tricks. The sign and the
    decimal point are cleared, the digits left of the point are moved one place right (over the
    point), and the digits are summed eight at a time (SWAR) into an exact uint64 mantissa. Rows
    not ``ok`` (exponents, ``+``, junk, too many digits) are left to the caller. With
    ``values=False`` only ``ok`` is computed (validation).
    """
    k = len(words)
    w = 8 * k
    n = lens.size
    xs: list[npt.NDArray[np.uint64]] = []
    other = np.zeros(n, dtype=np.uint64)
    nds: list[npt.NDArray[np.uint64]] = []  # per word: non-digit bytes other than the point
    dots: list[npt.NDArray[np.uint64]] = []
    fit = np.minimum(lens, w)
    masks = _RIGHT_MASKS[k]
    for j, raw in enumerate(words):
        x = raw ^ _B30  # digits become 0..9
        x &= masks[j][fit]  # bytes left of the token: 0
        nondigit = (((x & _B7F) + _B76) | x) & _B80
        if real:
            dot = _eq_bytes(x, 0x1E)  # b"." ^ b"0"
            dots.append(dot)
            nondigit &= ~dot
        xs.append(x)
        nds.append(nondigit)
        other |= nondigit
    ok = lens <= (w if values or real else min(w, _MAX_INT_DIGITS))
    neg = np.zeros(n, dtype=bool)
    body = lens.copy()
    if np.any(other):
        minus = [_eq_bytes(x, 0x1D) for x in xs]  # b"-" ^ b"0"
        rest = nds[0] & ~minus[0]
        nminus = np.bitwise_count(minus[0]).astype(np.int64)
        for j in range(1, k):
            rest |= nds[j] & ~minus[j]
            nminus += np.bitwise_count(minus[j])
        neg = nminus == 1
        ok &= (rest == 0) & (nminus <= 1) & (~neg | (_after(minus) == lens - 1))
        body -= nminus
        for j in range(k):  # the sign becomes a leading zero
            xs[j] = xs[j] ^ (minus[j] >> _U7) * np.uint64(0x1D)
    if real:
        ndot: I64 = np.bitwise_count(dots[0]).astype(np.int64)
        for d in dots[1:]:
            ndot += np.bitwise_count(d)
        ok &= ndot <= 1
        body -= ndot
    ok &= body >= 1
    has_point = real and bool(np.any(ndot))
    if not values:
        return _Numbers(np.zeros(0, dtype=np.uint64), 0, neg, ok)
    frac: I64 | int = 0
    if has_point:
        # the same point position on every row (a fixed format such as %.6f, usually): the
        # masks below are scalars
        if all(bool(np.all(d == d[0])) for d in dots):
            dots = [d[:1] for d in dots]
        frac = _after(dots)
        if frac.size == 1:
            frac = int(frac[0])
        later = np.zeros(dots[0].size, dtype=np.uint64)
        shifted = list(xs)
        for j in range(k - 1, -1, -1):
            g = dots[j] >> _U7  # 1 << 8i at the point's byte i, else 0
            before = np.where((g | later) != 0, g - _U1, np.uint64(0))  # bytes left of the point
            later |= g
            xd = xs[j] ^ g * np.uint64(0x1E)  # the point becomes 0
            head = xd & before
            shifted[j] = (head << _U8) | (xd ^ head)
            if j + 1 < k:
                shifted[j + 1] |= head >> _U56
        xs = shifted
    m = _swar8(xs[0])
    if k == 3:
        ok &= m < 1844  # m * 10**16 + ... must stay below 2**64
    for x in xs[1:]:
        m = m * np.uint64(100_000_000) + _swar8(x)
    return _Numbers(m, frac, neg, ok)


def _python_int(token: bytes) -> int | None:
    return int(token) if _INT_RE.fullmatch(token) else None


def _python_float(token: bytes) -> float | None:
    if not _FLOAT_RE.fullmatch(token):
        return None
    value = float(token)
    return value if math.isfinite(value) else None


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


class _Parser:
    """Chunked parser shared by runs and qrels.

    The data is cut at line ends into chunks of about ``_CHUNK`` bytes. Each chunk is parsed on
    its own, numbering its lines from 1 and collecting its own problems; the parts are then
    joined in order, which is when line numbers become the file's.
    """

    def __init__(self, *, run: bool, problems: Problems, rank_values: bool = True) -> None:
        self.run = run
        self.rank_values = rank_values
        self.nfields = _RUN_FIELDS if run else _QRELS_FIELDS
        self.problems = problems

    # -- whole file ------------------------------------------------------------------------
    def parse(self, pieces: Iterable[bytes]) -> _Cols:
        """Parse the pieces (each ending at a line end) in order."""
        parts: list[tuple[_Cols, Problems]] = []
        seen = 0
        for piece in pieces:
            seen += len(piece)
            if seen > _PRIME_FROM:
                _prime_heap()
            parts.append(self._chunk(piece))
        return self._concat(parts)

    def _chunk(self, chunk: bytes) -> tuple[_Cols, Problems]:
        probs = Problems(self.problems.limit)
        cols = self._fast(chunk, probs)
        return (cols if cols is not None else self._slow(chunk, probs)), probs

    def _concat(self, parts: list[tuple[_Cols, Problems]]) -> _Cols:
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
            if not implied:
                n = cols.qids.size
                own = np.arange(1, n + 1, dtype=np.int64) if cols.lineno is None else cols.lineno
                linenos.append(own + base)
            base += cols.nlines
        ps = [cols for cols, _ in parts]
        return _Cols(
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

    def _cut_lines(self, chunk: bytes, arr: U8) -> tuple[I64, I64, I64, int] | None:
        """Token starts and ends of every data line (any whitespace, comments and blank lines
        skipped), the lines' numbers and the chunk's line count; None if a line has the wrong
        number of fields."""
        nf = self.nfields
        # exactly bytes.split()'s whitespace: space and \t \n \v \f \r (9..13)
        ws = (arr - np.uint8(9)) < 5
        ws |= arr == 32
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
        if np.any(ntok[data_line] != nf):
            return None
        idx = first_tok[data_line][:, None] + np.arange(nf)
        lineno = np.flatnonzero(data_line).astype(np.int64) + 1
        return starts[idx], ends[idx], lineno, int(nl.size)

    def _fast(self, chunk: bytes, probs: Problems) -> _Cols | None:
        """Columns of a chunk whose every data line has the right number of fields (bad numbers
        are reported to ``probs``), or None when the chunk needs the validating path."""
        if not chunk.isascii():
            try:
                chunk.decode("utf-8")
            except UnicodeDecodeError:
                return None
        if chunk[-1:] != b"\n":
            chunk += b"\n"
        arr = np.frombuffer(chunk, dtype=np.uint8)
        lineno: I64 | None = None
        cut = self._cut(chunk, arr)
        if cut is not None:
            ln, en = cut
            nlines = en.shape[0]
        else:
            cut_lines = self._cut_lines(chunk, arr)
            if cut_lines is None:
                return None
            st, en, lineno, nlines = cut_lines
            ln = en - st
        st = en - ln
        c = _Chunk(arr, int(ln.max()) if ln.size else 1)
        doc_words, doc_width = c.left_words(st[:, 2], ln[:, 2])
        cols = _Cols(
            qids=c.left(st[:, 0], ln[:, 0]),
            docids=_words_as_bytes(doc_words, doc_width),
            nums=np.zeros(0),
            ranks=None,
            tags=[],
            lineno=lineno,
            hashes=hash_words(doc_words),
            nlines=nlines,
        )
        if self.run:
            cols.ranks = self._ints(
                c, chunk, en[:, 3], ln[:, 3], cols, "rank", probs, values=self.rank_values
            )
            cols.nums = self._floats(c, chunk, en[:, 4], ln[:, 4], cols, probs)
            cols.tags = c.same(st[:, 5], ln[:, 5]) or _distinct_bytes(c.left(st[:, 5], ln[:, 5]))
        else:
            grades = self._ints(c, chunk, en[:, 3], ln[:, 3], cols, "grade", probs)
            assert grades is not None
            cols.nums = grades
        return cols

    def _ints(
        self,
        c: _Chunk,
        chunk: bytes,
        en: I64,
        lens: I64,
        cols: _Cols,
        what: str,
        probs: Problems,
        *,
        values: bool = True,
    ) -> I64 | None:
        num = _decimals(c.words(en, lens), lens, real=False, values=values)
        vals: I64 | None = None
        ok = num.ok
        if values:
            ok &= num.mantissa < _TWO63
            mag = num.mantissa.astype(np.int64)
            vals = np.where(num.neg, -mag, mag)
        for i in np.flatnonzero(~ok).tolist():
            tok = chunk[int(en[i] - lens[i]) : int(en[i])]
            v = _python_int(tok)
            if v is None or not -(2**63) <= v < 2**63:
                probs.add(cols.line(i), f"{what} {_show(tok)} is not an integer")
            elif vals is not None:
                vals[i] = v
        return vals

    def _floats(
        self, c: _Chunk, chunk: bytes, en: I64, lens: I64, cols: _Cols, probs: Problems
    ) -> F64:
        num = _decimals(c.words(en, lens), lens, real=True)
        # m / 10**f with m <= 2**53 and f <= 22: one IEEE operation on exact operands, hence
        # correctly rounded (Clinger 1990)
        frac = np.broadcast_to(num.frac, lens.shape)
        vals = num.mantissa.astype(np.float64) / _POW10_FLOAT[np.minimum(num.frac, 22)]
        fast = num.ok & (num.mantissa <= _TWO53) & (frac <= 22)
        rest = np.flatnonzero(~fast)
        if rest.size and _EXTENDED:
            # m < 2**64 and f <= 27 in x87 extended precision: exact unless the extended result
            # falls exactly halfway between two doubles
            idx = rest[num.ok[rest] & (frac[rest] <= 27)]
            ml = num.mantissa[idx].astype(np.longdouble)
            xl = ml / _POW10_LD[frac[idx]]
            dx = xl.astype(np.float64)
            significand = np.ascontiguousarray(xl).view(np.uint64).reshape(-1, 2)[:, 0]
            good = ((significand & np.uint64(0x7FF)) != np.uint64(0x400)) & np.isfinite(dx)
            vals[idx[good]] = dx[good]
            fast[idx[good]] = True
            rest = np.flatnonzero(~fast)
        np.negative(vals, out=vals, where=num.neg)
        if rest.size:
            # exponents, long mantissas, junk: numpy's own (correctly rounded) conversion in
            # bulk, then Python for whatever is left, so each bad token gets its message
            toks = c.left(en[rest] - lens[rest], lens[rest])
            try:
                conv = toks.astype(np.float64)
                good = np.isfinite(conv) & (np.strings.find(toks, b"_") < 0)
                vals[rest[good]] = conv[good]
                rest = rest[~good]
            except ValueError:
                pass
        for i in rest.tolist():
            tok = chunk[int(en[i] - lens[i]) : int(en[i])]
            v = _python_float(tok)
            if v is None:
                probs.add(cols.line(i), _score_message(tok))
            else:
                vals[i] = v
        return vals

    # -- validating path ---------------------------------------------------------------------
    def _slow(self, chunk: bytes, probs: Problems) -> _Cols:
        qids: list[bytes] = []
        docids: list[bytes] = []
        fnums: list[float] = []
        inums: list[int] = []
        ranks: list[int] = []
        tags: dict[bytes, None] = {}
        lineno: list[int] = []
        nf = self.nfields
        expect = "qid Q0 docid rank score tag" if self.run else "qid iteration docid grade"
        lines = chunk.split(b"\n")
        for i, raw in enumerate(lines):
            line = i + 1
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
            if len(fields) != nf:
                probs.add(line, f"expected {nf} fields ({expect}), found {len(fields)}")
                continue
            bad = False
            if self.run:
                rank = _python_int(fields[3])
                if rank is None or not -(2**63) <= rank < 2**63:
                    probs.add(line, f"rank {_show(fields[3])} is not an integer")
                    bad = True
                score = _python_float(fields[4])
                if score is None:
                    probs.add(line, _score_message(fields[4]))
                    bad = True
                if bad:
                    continue
                assert rank is not None and score is not None
                ranks.append(rank)
                fnums.append(score)
                tags.setdefault(fields[5])
            else:
                grade = _python_int(fields[3])
                if grade is None or not -(2**63) <= grade < 2**63:
                    probs.add(line, f"grade {_show(fields[3])} is not an integer")
                    continue
                inums.append(grade)
            qids.append(fields[0])
            docids.append(fields[2])
            lineno.append(line)

        def sarr(xs: list[bytes]) -> Bytes:
            return np.array(xs, dtype=np.bytes_) if xs else _empty_bytes()

        docs = sarr(docids)
        return _Cols(
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
        )


def _distinct_bytes(col: Bytes) -> list[bytes]:
    """Distinct values of a column in first-seen order."""
    if col.size == 0:
        return []
    first = col[0]
    if np.all(col == first):
        return [bytes(first)]
    _, idx = np.unique(col, return_index=True)
    return [bytes(col[i]) for i in np.sort(idx).tolist()]


def _score_message(tok: bytes) -> str:
    low = tok.lower().lstrip(b"+-")
    if low in (b"nan", b"inf", b"infinity"):
        return f"score {_show(tok)} is not a finite number"
    if _FLOAT_RE.fullmatch(tok):
        return f"score {_show(tok)} is out of range"
    return f"score {_show(tok)} is not a number"


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


def _words_as_bytes(raw: npt.NDArray[np.uint64], width: int) -> Bytes:
    """``(n, k)`` native words of NUL-padded values as an ``S<width>`` array."""
    n, k = raw.shape
    if n == 0:
        return _empty_bytes()
    out: Bytes = raw.view(f"S{8 * k}").reshape(n)
    return out if width == 8 * k else out.astype(f"S{max(1, width)}")


def _check_duplicates(
    qcol: Bytes, docids: Bytes, cols: _Cols, grouped: _Grouped, problems: Problems
) -> None:
    """Report every docid that appears more than once for the same query."""
    n = docids.size
    if n < 2:
        return
    row_q = _segments(grouped.offsets)
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
            f"duplicate docid {_show(bytes(d[i]))} for query "
            f"{_show(bytes(qcol[order[i]]))} (first on line {first})",
        )


# --------------------------------------------------------------------------------------------
# Public readers


def _parse(
    src: Source, source: str | None, max_problems: int, *, run: bool, rank_values: bool = True
) -> tuple[_Cols, _Grouped]:
    stream, name, closer = _open_source(src, source)
    problems = Problems(max(1, max_problems))
    try:
        parser = _Parser(run=run, problems=problems, rank_values=rank_values)
        cols = parser.parse(_pieces(stream, name))
    finally:
        if closer is not None:
            closer.close()
    if cols.qids.size == 0 and problems.total == 0:
        problems.add(0, "no data lines (empty file)")
    grouped = _group(cols.qids)
    _check_duplicates(cols.qids, cols.docids, cols, grouped, problems)
    problems.raise_if_any(name)
    return cols, grouped


def _take(a: Any, perm: I64 | None) -> Any:
    return a if perm is None else a[perm]


def parse_run(src: Source, *, source: str | None = None, max_problems: int = 100) -> RunTable:
    """Validate a whole TREC run file and return its columns in file order.

    Format: ``qid Q0 docid rank score tag`` per line. Raises :class:`InvalidInput` listing
    every problem (at most ``max_problems``, with the total).
    """
    cols, _ = _parse(src, source, max_problems, run=True)
    assert cols.ranks is not None
    return RunTable(
        qids=np.char.decode(cols.qids, "utf-8").tolist(),
        docids=np.char.decode(cols.docids, "utf-8").tolist(),
        ranks=cols.ranks,
        scores=cols.nums.astype(np.float64, copy=False),
        tags=[t.decode() for t in cols.tags],
        lines=int(cols.qids.size),
    )


def read_run(src: Source, *, source: str | None = None, max_problems: int = 100) -> Run:
    """Read and validate a TREC run into a :class:`Run` grouped per query.

    ``tag`` is the first tag in the file, ``tags`` every distinct tag in first-seen order.
    Raises :class:`InvalidInput` on any problem.
    """
    cols, grouped = _parse(src, source, max_problems, run=True, rank_values=False)
    tags = tuple(t.decode() for t in cols.tags)
    run = Run(
        qids=grouped.qids,
        offsets=grouped.offsets,
        docids=_take(cols.docids, grouped.perm),
        scores=_take(cols.nums, grouped.perm),
        tag=tags[0] if tags else "",
        tags=tags,
    )
    run.__dict__["hashes"] = _take(cols.hashes, grouped.perm)  # evaluation reuses them
    return run


def read_qrels(src: Source, *, source: str | None = None, max_problems: int = 100) -> Qrels:
    """Read and validate TREC qrels (``qid iteration docid grade``) into :class:`Qrels`.

    Grades are integers; negative grades are kept (pooled but unjudged). A docid judged twice
    for one query is an error. Raises :class:`InvalidInput` on any problem.
    """
    cols, grouped = _parse(src, source, max_problems, run=False)
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
