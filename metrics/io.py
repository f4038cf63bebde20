"""Readers and writers for TREC run and qrels files.

Formats (whitespace separated, one record per line; blank lines and lines whose first field starts
with ``#`` are skipped; CRLF line endings are tolerated; UTF-8):

- run:   ``qid Q0 docid rank score tag`` (6 fields; the second field is ignored)
- qrels: ``qid iter docid grade``       (4 fields; the second field is ignored)

Sources may be a path (``str`` or ``os.PathLike``), a binary file object, or ``bytes``; gzip is
recognised by its magic bytes, so ``.gz`` files and plain files are both read the same way.

A file is validated whole: every problem (wrong field count, a score that is not a finite number,
a rank or grade that is not an integer, a duplicate docid within a topic, bad UTF-8, no data lines)
is collected with its 1-based line number and reported together in :class:`TrecFormatError`.

Speed: a clean file is parsed by a vectorised path over the raw bytes (numpy: token boundaries,
fixed-width gathers, digit arithmetic for numbers), chunk by chunk so memory stays near the size of
the result. A chunk with any anomaly is re-read by a line-by-line validating path, so error
messages carry exact line numbers. Numbers parsed by the vectorised path are exactly the values
``float()``/``strtod`` give: a decimal mantissa of at most 2**53 divided by an exact power of ten
is correctly rounded in IEEE arithmetic (Clinger 1990); other spellings go through ``float()``.

Documents ids are kept as UTF-8 bytes in numpy ``S`` arrays: compact, and byte order is the order
trec_eval's ``strcmp`` uses for tie-breaking.
"""

from __future__ import annotations

import gzip
import math
import os
import re
import sys
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import IO, Any, NamedTuple, Union, cast

import numpy as np
import numpy.typing as npt

__all__ = [
    "Problem",
    "Qrels",
    "Run",
    "RunTable",
    "Source",
    "TrecFormatError",
    "docid_hashes",
    "parse_qrels",
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

_CHUNK = 1 << 21  # bytes per vectorised chunk: keeps temporaries to a few tens of MB
_GATHER_CELLS = 1 << 22  # max rows * width of one gather
_POW10_FLOAT = np.array([10.0**i for i in range(23)], dtype=np.float64)
_RUN_FIELDS = 6
_QRELS_FIELDS = 4
_INT_RE = re.compile(rb"[+-]?[0-9]+")
_FLOAT_RE = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


# --------------------------------------------------------------------------------------------
# Problems


class Problem(NamedTuple):
    """One problem found in an input file; ``line`` is 1-based, 0 for whole-file problems."""

    line: int
    message: str


class TrecFormatError(ValueError):
    """A run or qrels file failed validation.

    ``problems`` lists at most ``max_problems`` problems in line order; ``total`` counts all of
    them. ``str(e)`` names the source, the first problem and how many more there are, e.g.
    ``run.txt line 12: score 'abc' is not a number (and 4 more problems)``.
    """

    def __init__(self, source: str, problems: list[Problem], total: int | None = None) -> None:
        self.source = source
        self.problems = list(problems)
        self.total = len(problems) if total is None else total
        super().__init__(self._message())

    def _message(self) -> str:
        if not self.problems:
            return f"{self.source}: invalid file"
        first = self.problems[0]
        where = f"{self.source} line {first.line}" if first.line > 0 else self.source
        more = self.total - 1
        tail = ""
        if more == 1:
            tail = " (and 1 more problem)"
        elif more > 1:
            tail = f" (and {more} more problems)"
        return f"{where}: {first.message}{tail}"


class _Problems:
    def __init__(self, limit: int) -> None:
        self.limit = max(1, limit)
        self.items: list[Problem] = []
        self.total = 0

    def add(self, line: int, message: str) -> None:
        self.total += 1
        self.items.append(Problem(line, message))
        if len(self.items) > 4 * self.limit:  # keep memory bounded on a hopeless file
            self.items = sorted(self.items, key=lambda p: p.line)[: self.limit]

    def raise_if_any(self, source: str) -> None:
        if self.total:
            items = sorted(self.items, key=lambda p: p.line)[: self.limit]
            raise TrecFormatError(source, items, self.total)


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
    ranks: I64 | None = field(default=None, repr=False)
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
            self.ranks,
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
            order = np.lexsort((docids, _segments(offsets)))
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
        if not np.any(docids[1:][tie] > docids[:-1][tie]):
            return ident
        order = ident
    else:
        order = np.lexsort((-scores, seg))
    s = scores[order]
    q = seg[order]
    tie = (q[1:] == q[:-1]) & (s[1:] == s[:-1])
    if not np.any(tie):
        return order
    # Rows that belong to a group of equal (query, score): re-sort those by docid, descending.
    member = np.zeros(n, dtype=bool)
    member[:-1] |= tie
    member[1:] |= tie
    rows = np.flatnonzero(member)
    starts = np.ones(rows.size, dtype=bool)
    starts[1:] = ~tie[rows[1:] - 1] | (rows[1:] - 1 != rows[:-1])
    group = np.cumsum(starts)
    sub = np.lexsort((docids[order[rows]], -group))[::-1]
    order = order.copy()
    order[rows] = order[rows[sub]]
    return order


# --------------------------------------------------------------------------------------------
# Sources


def _read_source(src: Source, source: str | None) -> tuple[bytes, str]:
    if isinstance(src, bytes | bytearray | memoryview):
        data = bytes(src)
        name = source or "<bytes>"
    elif isinstance(src, str | os.PathLike):
        path = Path(src)
        data = path.read_bytes()
        name = source or os.fspath(src)
    elif hasattr(src, "read"):
        raw: Any = src.read()
        if isinstance(raw, str):
            raise TypeError("TREC readers need a binary file object (open the file with 'rb')")
        data = bytes(raw)
        name = source or str(getattr(src, "name", "<stream>"))
    else:
        raise TypeError(f"cannot read TREC data from {type(src).__name__}")
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise TrecFormatError(name, [Problem(0, f"not a valid gzip file ({exc})")]) from exc
    return data, name


# --------------------------------------------------------------------------------------------
# Vectorised parsing


@dataclass
class _Cols:
    """Parsed columns of one chunk (or of the whole file once concatenated)."""

    qids: Bytes
    docids: Bytes
    nums: I64 | F64  # run: scores (float64); qrels: grades (int64)
    ranks: I64 | None  # run only
    tags: Bytes | None  # run only
    lineno: I64


class _Chunk:
    """One chunk's bytes, padded so fixed-width windows never run off either end."""

    def __init__(self, arr: U8, pad: int) -> None:
        self.pad = pad + 8
        padded = np.full(arr.size + 2 * self.pad, 32, dtype=np.uint8)
        padded[self.pad : self.pad + arr.size] = arr
        self.padded = padded

    def _view(self) -> npt.NDArray[np.uint64]:
        # every byte offset of the padded chunk viewed as the start of an (unaligned) uint64
        return np.ndarray(
            (self.padded.size - 7,), dtype="<u8", buffer=self.padded.data, strides=(1,)
        )

    def left(self, starts: I64, lens: I64) -> Bytes:
        """Tokens as ``S<8k>`` values (NUL padded), gathered eight bytes at a time."""
        n = starts.size
        if n == 0:
            return _empty_bytes()
        k = max(1, (int(lens.max()) + 7) // 8)
        raw = self._view()[(starts + self.pad)[:, None] + 8 * np.arange(k)]
        for j in range(k):
            c = np.clip(lens - 8 * j, 0, 8).astype(np.uint64)
            raw[:, j] &= np.where(
                c >= 8, _FULL, (np.uint64(1) << (c * np.uint64(8))) - np.uint64(1)
            )
        if sys.byteorder != "little":  # pragma: no cover - words were read little-endian
            raw = raw.byteswap()
        out: Bytes = raw.view(f"S{8 * k}").reshape(n).astype(f"S{int(lens.max())}")
        return out

    def words(self, ends: I64, lens: I64) -> npt.NDArray[np.uint64]:
        """Tokens right-aligned in ``(n, k)`` little-endian uint64 words, k = ceil(maxlen / 8).

        At most ``_NUMBER_WIDTH`` bytes wide: longer tokens lose their left part (the number
        parser marks them not ok). Bytes left of a token belong to whatever precedes it.
        """
        w = max(1, int(lens.max())) if lens.size else 1
        k = min((w + 7) // 8, _NUMBER_WIDTH // 8)
        first = ends + self.pad - 8 * k
        out: npt.NDArray[np.uint64] = self._view()[first[:, None] + 8 * np.arange(k)]
        return out


_NUMBER_WIDTH = 24  # widest number token read vectorised
_M8 = np.uint64(0x00FF00FF00FF00FF)
_M16 = np.uint64(0x0000FFFF0000FFFF)
_M32 = np.uint64(0x00000000FFFFFFFF)
_POW10_U64 = np.array([10**i for i in range(20)], dtype=np.uint64)
_POW10_LD = np.array([10**i for i in range(28)], dtype=np.longdouble)
# x87 extended precision (64-bit significand) lets 19-digit mantissas round exactly; elsewhere
# (long double == double, or quad) those tokens take numpy's own conversion instead.
_EXTENDED = np.finfo(np.longdouble).nmant == 63
_TWO53 = np.uint64(1 << 53)
# byte - b"0" (uint8 wrap-around) of the non-digit characters a number may contain
_DOT, _LOW_E, _UP_E, _PLUS, _MINUS = 254, 53, 21, 251, 253


def _swar8(words: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """Value of 8 decimal digit bytes (0..9, first byte most significant) per uint64 word."""
    v = (words * np.uint64(10) + (words >> np.uint64(8))) & _M8
    v = (v * np.uint64(100) + (v >> np.uint64(16))) & _M16
    return (v * np.uint64(10000) + (v >> np.uint64(32))) & _M32


_B01 = np.uint64(0x0101010101010101)
_B7F = np.uint64(0x7F7F7F7F7F7F7F7F)
_B76 = np.uint64(0x7676767676767676)
_B80 = np.uint64(0x8080808080808080)
_B30 = np.uint64(0x3030303030303030)
_FULL = np.uint64(0xFFFFFFFFFFFFFFFF)


def _eq_bytes(x: npt.NDArray[np.uint64], byte: int) -> npt.NDArray[np.uint64]:
    """High bit of every byte of ``x`` that equals ``byte`` (exact, no carries between bytes)."""
    y = x ^ (np.uint64(byte) * _B01)
    return ~(((y & _B7F) + _B7F) | y | _B7F)


def _flag_pos(flags: npt.NDArray[np.uint64]) -> I64:
    """Byte position (0 = leftmost) of the single flagged byte of each row of (n, k) flags."""
    pos = np.zeros(flags.shape[0], dtype=np.int64)
    for j in range(flags.shape[1]):
        f = flags[:, j]
        hit = f != 0
        # a lone high bit 8i+7 is an exact power of two: log2 is exact in float64
        bit = np.log2(np.where(hit, f, np.uint64(1)).astype(np.float64)).astype(np.int64)
        pos = np.where(hit, 8 * j + (bit - 7) // 8, pos)
    return pos


def _count(flags: npt.NDArray[np.uint64]) -> I64:
    total = np.bitwise_count(flags[:, 0]).astype(np.int64)
    for j in range(1, flags.shape[1]):
        total += np.bitwise_count(flags[:, j])
    return total


def _parse_numbers(raw: npt.NDArray[np.uint64], lens: I64, *, real: bool) -> tuple[F64, Bool]:
    """Vectorised strtod/int of right-aligned tokens held in (n, k) uint64 words.

    Accepted: ``[+-]?digits`` (``real=False``), or ``[+-]?(d+.?d*|.d+)([eE][+-]?d{1,3})?``.
    Characters are classified eight at a time with carry-free byte tricks, and digits summed
    eight at a time (SWAR) into an exact uint64 S in which the dot, the ``e`` and the exponent
    sign weigh nothing but occupy a place; the exponent is S mod 10**L (L = characters from the
    ``e`` on), the decimal digits after the dot are the low ``frac`` digits of the rest, and the
    mantissa m follows exactly. Then value = m * 10**e, e = exponent - frac: for m <= 2**53 and
    |e| <= 22 one IEEE operation on exact operands, hence correctly rounded (Clinger 1990); for
    m < 2**64 and |e| <= 27 the same in x87 extended precision, exact unless the extended result
    falls exactly halfway between two doubles (then left to the caller, like every token not
    ``ok``).
    """
    n, k = raw.shape
    if n == 0:
        return np.zeros(0, dtype=np.float64), np.zeros(0, dtype=bool)
    w = 8 * k
    fits = lens <= w
    start = np.clip(w - lens, 0, w - 1)  # byte position of the token's first character
    fc = (raw[np.arange(n), start // 8] >> (8 * (start % 8)).astype(np.uint64)) & np.uint64(255)
    neg = fc == 45
    sign = neg | (fc == 43)
    lo = start + sign  # bytes left of lo become '0'
    x = np.empty_like(raw)
    for j in range(k):
        c = np.clip(lo - 8 * j, 0, 8).astype(np.uint64)
        keep = np.where(c >= 8, np.uint64(0), _FULL << (np.minimum(c, 7) * np.uint64(8)))
        x[:, j] = ((raw[:, j] & keep) | (_B30 & ~keep)) ^ _B30
    nondigit = (((x & _B7F) + _B76) | x) & _B80
    body = lens - sign
    if not real:
        ok = fits & (body >= 1) & (k <= 2) & ~np.any(nondigit != 0, axis=1)
        s = _swar8(x[:, 0])
        for j in range(1, min(k, 2)):
            s = s * np.uint64(100_000_000) + _swar8(x[:, j])
        ok &= s <= _TWO53
        out = s.astype(np.int64)
        return np.where(neg, -out, out).astype(np.float64), ok
    dot = _eq_bytes(x, 0x1E)  # b"." ^ b"0"
    other = nondigit & ~dot
    if np.any(other):
        emark = _eq_bytes(x, 0x55) | _eq_bytes(x, 0x75)  # b"e", b"E"
        minus = _eq_bytes(x, 0x1D)
        esign = _eq_bytes(x, 0x1B) | minus  # b"+", b"-"
        ok = fits & ~np.any(other & ~(emark | esign) != 0, axis=1)
    else:  # plain decimals only (the usual case): no exponent to look for
        emark = minus = esign = np.zeros_like(x)
        ok = fits.copy()
    xd = x & ~((nondigit >> np.uint64(7)) * np.uint64(255))
    s = _swar8(xd[:, 0])
    if k == 3:
        ok &= s < 1844  # s * 10**16 + ... must stay below 2**64
    for j in range(1, k):
        s = s * np.uint64(100_000_000) + _swar8(xd[:, j])
    ndot = _count(dot)
    ne = _count(emark)
    nsign = _count(esign)
    ok &= (ndot <= 1) & (ne <= 1) & (nsign <= ne)
    if np.any(ne):
        epos = np.where(ne > 0, _flag_pos(emark), w)
        spos = _flag_pos(esign)
        exp_len = w - epos  # characters from the e on
        exp_digits = exp_len - 1 - nsign
        ok &= (nsign == 0) | (spos == epos + 1)
        ok &= (ne == 0) | ((exp_digits >= 1) & (exp_digits <= 3))
        pe = _POW10_U64[np.minimum(exp_len, 19)]
        expo = (s % pe).astype(np.int64)
        expo = np.where(_count(minus) > 0, -expo, expo)
        ms = s // pe
    else:
        epos = np.full(n, w, dtype=np.int64)
        exp_len = np.zeros(n, dtype=np.int64)
        expo = np.zeros(n, dtype=np.int64)
        ms = s
    dpos = _flag_pos(dot)
    ok &= (ndot == 0) | (dpos < epos)
    ok &= body - exp_len - ndot >= 1
    frac = np.where(ndot > 0, epos - 1 - dpos, 0)
    ok &= frac <= 19
    pf = _POW10_U64[np.minimum(frac, 19)]
    low = ms % pf
    m = np.where(ndot > 0, low + (ms - low) // np.uint64(10), ms)
    e = expo - frac
    fast = ok & (m <= _TWO53) & (np.abs(e) <= 22)
    mf = m.astype(np.float64)
    ef = _POW10_FLOAT[np.minimum(np.abs(e), 22)]
    out = np.where(e >= 0, mf * ef, mf / ef)
    slow = ok & ~fast
    if slow.any():
        ok[slow] = False
        if _EXTENDED:
            idx = np.flatnonzero(slow & (np.abs(e) <= 27))
            ml = m[idx].astype(np.longdouble)
            el = _POW10_LD[np.abs(e[idx])]
            xl = np.where(e[idx] >= 0, ml * el, ml / el)
            dx = xl.astype(np.float64)
            # Rounding xl to double is exact unless xl lies exactly halfway between two
            # doubles: then the low 11 of its 64 significand bits are 100 0000 0000 (x87).
            significand = np.ascontiguousarray(xl).view(np.uint64).reshape(-1, 2)[:, 0]
            half = (significand & np.uint64(0x7FF)) == np.uint64(0x400)
            good = ~half & np.isfinite(dx)
            out[idx[good]] = dx[good]
            ok[idx[good]] = True
    return np.where(neg, -out, out), ok


def _parse_ints(raw: npt.NDArray[np.uint64], lens: I64) -> tuple[I64, Bool]:
    """Vectorised ``int()`` of right-aligned ``[+-]?digits`` tokens; ``ok`` marks success."""
    vals, ok = _parse_numbers(raw, lens, real=False)
    return vals.astype(np.int64), ok


def _parse_floats(raw: npt.NDArray[np.uint64], lens: I64) -> tuple[F64, Bool]:
    """Vectorised ``float()`` of right-aligned decimal tokens (see :func:`_parse_numbers`)."""
    return _parse_numbers(raw, lens, real=True)


def _python_int(token: bytes) -> int | None:
    return int(token) if _INT_RE.fullmatch(token) else None


def _python_float(token: bytes) -> float | None:
    if not _FLOAT_RE.fullmatch(token):
        return None
    value = float(token)
    return value if math.isfinite(value) else None


class _Parser:
    """Chunked parser shared by runs and qrels."""

    def __init__(self, data: bytes, *, run: bool, problems: _Problems) -> None:
        self.data = data
        self.run = run
        self.nfields = _RUN_FIELDS if run else _QRELS_FIELDS
        self.problems = problems

    # -- whole file ------------------------------------------------------------------------
    def parse(self) -> _Cols:
        data = self.data
        spans: list[tuple[int, int, int]] = []  # (start, end, first line number)
        pos = 0
        line0 = 1
        while pos < len(data):
            end = data.find(b"\n", min(len(data), pos + _CHUNK))
            end = len(data) if end < 0 else end + 1
            spans.append((pos, end, line0))
            line0 += data.count(b"\n", pos, end)
            pos = end
        return self._concat([self._chunk(span) for span in spans])

    def _chunk(self, span: tuple[int, int, int]) -> _Cols:
        start, end, line0 = span
        chunk = self.data[start:end]
        cols = self._fast(chunk, line0)
        return cols if cols is not None else self._slow(chunk, line0)

    def _concat(self, parts: list[_Cols]) -> _Cols:
        def cat(xs: list[Any], dtype: Any) -> Any:
            xs = [x for x in xs if x.size]
            return np.concatenate(xs) if xs else np.empty(0, dtype=dtype)

        return _Cols(
            qids=cat([p.qids for p in parts], "S1"),
            docids=cat([p.docids for p in parts], "S1"),
            nums=cat([p.nums for p in parts], np.float64 if self.run else np.int64),
            ranks=cat([p.ranks for p in parts], np.int64) if self.run else None,
            tags=cat([p.tags for p in parts], "S1") if self.run else None,
            lineno=cat([p.lineno for p in parts], np.int64),
        )

    # -- vectorised path ---------------------------------------------------------------------
    def _fast(self, chunk: bytes, line0: int) -> _Cols | None:
        """Columns of a clean chunk, or None when the chunk needs the validating path."""
        if not chunk.isascii():
            try:
                chunk.decode("utf-8")
            except UnicodeDecodeError:
                return None
        arr = np.frombuffer(chunk, dtype=np.uint8)
        # exactly bytes.split()'s whitespace: space and \t \n \v \f \r (9..13)
        ws = (arr - np.uint8(9)) < 5
        ws |= arr == 32
        nl = (arr == 10).nonzero()[0]
        trans = (ws[:-1] != ws[1:]).nonzero()[0] + 1
        if not ws[0]:
            trans = np.concatenate(([0], trans))
        if not ws[-1]:
            trans = np.append(trans, arr.size)
        if chunk[-1:] != b"\n":
            nl = np.append(nl, arr.size)
        starts, ends = trans[0::2], trans[1::2]
        nf = self.nfields
        prev_nl = np.empty_like(nl)
        prev_nl[:1] = -1
        prev_nl[1:] = nl[:-1]
        if (
            starts.size == nf * nl.size
            and b"#" not in chunk
            and bool(np.all(starts[0::nf] > prev_nl))
            and bool(np.all(ends[nf - 1 :: nf] <= nl))
        ):
            # every line holds exactly nf tokens (nf per line in order, nf * lines in total)
            st = starts.reshape(-1, nf)
            en = ends.reshape(-1, nf)
            lineno = np.arange(line0, line0 + nl.size, dtype=np.int64)
        else:
            first_tok = np.searchsorted(starts, prev_nl + 1)
            ntok = np.searchsorted(starts, nl) - first_tok
            has = ntok > 0
            comment = np.zeros_like(has)
            comment[has] = arr[starts[first_tok[has]]] == 35
            data_line = has & ~comment
            if np.any(ntok[data_line] != nf):
                return None
            idx = first_tok[data_line][:, None] + np.arange(nf)
            st = starts[idx]
            en = ends[idx]
            lineno = np.flatnonzero(data_line).astype(np.int64) + line0
        ln = en - st
        c = _Chunk(arr, int(ln.max()) if ln.size else 1)
        qids = c.left(st[:, 0], ln[:, 0])
        docids = c.left(st[:, 2], ln[:, 2])
        if self.run:
            ranks = self._ints(c, chunk, st[:, 3], en[:, 3], lineno, "rank")
            scores = self._floats(c, chunk, st[:, 4], en[:, 4], lineno)
            tags = c.left(st[:, 5], ln[:, 5])
            return _Cols(qids, docids, scores, ranks, tags, lineno)
        grades = self._ints(c, chunk, st[:, 3], en[:, 3], lineno, "grade")
        return _Cols(qids, docids, grades, None, None, lineno)

    def _ints(self, c: _Chunk, chunk: bytes, st: I64, en: I64, lineno: I64, what: str) -> I64:
        lens = en - st
        vals, ok = _parse_ints(c.words(en, lens), lens)
        for i in np.flatnonzero(~ok).tolist():
            tok = chunk[int(st[i]) : int(en[i])]
            v = _python_int(tok)
            if v is None or not -(2**63) <= v < 2**63:
                self.problems.add(int(lineno[i]), f"{what} {_show(tok)} is not an integer")
            else:
                vals[i] = v
        return vals

    def _floats(self, c: _Chunk, chunk: bytes, st: I64, en: I64, lineno: I64) -> F64:
        lens = en - st
        vals, ok = _parse_floats(c.words(en, lens), lens)
        rest = np.flatnonzero(~ok)
        if rest.size:
            # Long mantissas, exponents, junk: numpy's own (correctly rounded) conversion in bulk,
            # then Python for whatever is left, so each bad token gets its message.
            toks = c.left(st[rest], lens[rest])
            try:
                conv = toks.astype(np.float64)
                good = np.isfinite(conv) & (np.strings.find(toks, b"_") < 0)
                vals[rest[good]] = conv[good]
                rest = rest[~good]
            except ValueError:
                pass
        for i in rest.tolist():
            tok = chunk[int(st[i]) : int(en[i])]
            v = _python_float(tok)
            if v is None:
                self.problems.add(int(lineno[i]), _score_message(tok))
            else:
                vals[i] = v
        return vals

    # -- validating path ---------------------------------------------------------------------
    def _slow(self, chunk: bytes, line0: int) -> _Cols:
        qids: list[bytes] = []
        docids: list[bytes] = []
        fnums: list[float] = []
        inums: list[int] = []
        ranks: list[int] = []
        tags: list[bytes] = []
        lineno: list[int] = []
        nf = self.nfields
        expect = "qid Q0 docid rank score tag" if self.run else "qid iteration docid grade"
        for i, raw in enumerate(chunk.split(b"\n")):
            line = line0 + i
            fields = raw.split()
            if not fields or fields[0].startswith(b"#"):
                continue
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                self.problems.add(
                    line, f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})"
                )
                continue
            if len(fields) != nf:
                self.problems.add(line, f"expected {nf} fields ({expect}), found {len(fields)}")
                continue
            bad = False
            if self.run:
                rank = _python_int(fields[3])
                if rank is None or not -(2**63) <= rank < 2**63:
                    self.problems.add(line, f"rank {_show(fields[3])} is not an integer")
                    bad = True
                score = _python_float(fields[4])
                if score is None:
                    self.problems.add(line, _score_message(fields[4]))
                    bad = True
                if bad:
                    continue
                assert rank is not None and score is not None
                ranks.append(rank)
                fnums.append(score)
                tags.append(fields[5])
            else:
                grade = _python_int(fields[3])
                if grade is None or not -(2**63) <= grade < 2**63:
                    self.problems.add(line, f"grade {_show(fields[3])} is not an integer")
                    continue
                inums.append(grade)
            qids.append(fields[0])
            docids.append(fields[2])
            lineno.append(line)

        def sarr(xs: list[bytes]) -> Bytes:
            return np.array(xs, dtype=np.bytes_) if xs else _empty_bytes()

        return _Cols(
            qids=sarr(qids),
            docids=sarr(docids),
            nums=(
                np.array(fnums, dtype=np.float64) if self.run else np.array(inums, dtype=np.int64)
            ),
            ranks=np.array(ranks, dtype=np.int64) if self.run else None,
            tags=sarr(tags) if self.run else None,
            lineno=np.array(lineno, dtype=np.int64),
        )


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


def docid_hashes(col: Bytes) -> npt.NDArray[np.uint64]:
    """A 64-bit hash of each bytes value, independent of the array's ``S`` width.

    Used only to find candidate matches quickly; callers confirm matches by comparing the bytes.
    """
    n = col.size
    w = col.dtype.itemsize
    words = (w + 7) // 8
    buf = np.zeros((n, words * 8), dtype=np.uint8)
    buf[:, :w] = col.view(np.uint8).reshape(n, w)
    h = np.full(n, 0xCBF29CE484222325, dtype=np.uint64)
    mult = np.uint64(0x100000001B3)
    with np.errstate(over="ignore"):
        for i, word in enumerate(buf.view(np.uint64).T):
            mixed = (h ^ word) * mult
            mixed ^= mixed >> np.uint64(29)
            # trailing all-NUL words are padding: skipping them keeps the hash width-independent
            h = mixed if i == 0 else np.where(word != 0, mixed, h)
    return h


def _check_duplicates(
    qcol: Bytes, docids: Bytes, lineno: I64, grouped: _Grouped, problems: _Problems
) -> npt.NDArray[np.uint64] | None:
    """Report every docid that appears more than once for the same query; return the hashes."""
    n = docids.size
    if n < 2:
        return None
    row_q = _segments(grouped.offsets)
    if grouped.perm is not None:  # row_q is in grouped order; map back to file order
        q_file = np.empty(n, dtype=np.int64)
        q_file[grouped.perm] = row_q
        row_q = q_file
    hashes = docid_hashes(docids)
    if len(grouped.qids) < 1 << 20:
        # (query, 44 hash bits) keys: one sort; equal keys are only candidates, confirmed on the
        # docid bytes below (a collision among a million rows has odds of about 1 in 30)
        key = (hashes >> np.uint64(20)) | (row_q.astype(np.uint64) << np.uint64(44))
        ordered = np.sort(key)
        same = ordered[1:] == ordered[:-1]
        if not same.any():
            return hashes
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
        first = int(lineno[order[j]])
        line = int(lineno[order[i]])
        problems.add(
            line,
            f"duplicate docid {_show(bytes(d[i]))} for query "
            f"{_show(bytes(qcol[order[i]]))} (first on line {first})",
        )
    return hashes


# --------------------------------------------------------------------------------------------
# Public readers


def _parse(
    src: Source, source: str | None, max_problems: int, *, run: bool
) -> tuple[_Cols, _Grouped, npt.NDArray[np.uint64] | None]:
    data, name = _read_source(src, source)
    problems = _Problems(max_problems)
    cols = _Parser(data, run=run, problems=problems).parse()
    del data
    if cols.qids.size == 0 and problems.total == 0:
        problems.add(0, "no data lines (empty file)")
    grouped = _group(cols.qids)
    hashes = _check_duplicates(cols.qids, cols.docids, cols.lineno, grouped, problems)
    problems.raise_if_any(name)
    return cols, grouped, hashes


def _take(a: Any, perm: I64 | None) -> Any:
    return a if perm is None else a[perm]


def _distinct(col: Bytes) -> list[str]:
    if col.size == 0:
        return []
    if np.all(col == col[0]):
        return [bytes(col[0]).decode()]
    _, first = np.unique(col, return_index=True)
    return [bytes(col[i]).decode() for i in np.sort(first).tolist()]


def parse_run(src: Source, *, source: str | None = None, max_problems: int = 100) -> RunTable:
    """Validate a whole TREC run file and return its columns in file order.

    Format: ``qid Q0 docid rank score tag`` per line. Raises :class:`TrecFormatError` listing
    every problem (at most ``max_problems``, with the total).
    """
    cols, _, _ = _parse(src, source, max_problems, run=True)
    assert cols.ranks is not None and cols.tags is not None
    return RunTable(
        qids=np.char.decode(cols.qids, "utf-8").tolist(),
        docids=np.char.decode(cols.docids, "utf-8").tolist(),
        ranks=cols.ranks,
        scores=cols.nums.astype(np.float64, copy=False),
        tags=_distinct(cols.tags),
        lines=int(cols.qids.size),
    )


def read_run(src: Source, *, source: str | None = None, max_problems: int = 100) -> Run:
    """Read and validate a TREC run into a :class:`Run` grouped per query.

    ``tag`` is the first tag in the file, ``tags`` every distinct tag in first-seen order.
    Raises :class:`TrecFormatError` on any problem.
    """
    cols, grouped, hashes = _parse(src, source, max_problems, run=True)
    assert cols.tags is not None
    tags = tuple(_distinct(cols.tags))
    run = Run(
        qids=grouped.qids,
        offsets=grouped.offsets,
        docids=_take(cols.docids, grouped.perm),
        scores=_take(cols.nums, grouped.perm),
        tag=tags[0] if tags else "",
        ranks=_take(cols.ranks, grouped.perm),
        tags=tags,
    )
    if hashes is not None:  # computed for the duplicate check; evaluation reuses them
        run.__dict__["hashes"] = _take(hashes, grouped.perm)
    return run


def parse_qrels(src: Source, *, source: str | None = None, max_problems: int = 100) -> Qrels:
    """Validate a whole TREC qrels file (``qid iteration docid grade``); same as read_qrels."""
    return read_qrels(src, source=source, max_problems=max_problems)


def read_qrels(src: Source, *, source: str | None = None, max_problems: int = 100) -> Qrels:
    """Read and validate TREC qrels (``qid iteration docid grade``) into :class:`Qrels`.

    Grades are integers; negative grades are kept (pooled but unjudged). A docid judged twice
    for one query is an error. Raises :class:`TrecFormatError` on any problem.
    """
    cols, grouped, _ = _parse(src, source, max_problems, run=False)
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
