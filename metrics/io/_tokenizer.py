"""The fast reader's insides: TREC lines to columns, vectorised over pieces of about 1 MB.

Why it is built this way (reading is most of the time of evaluating a run file, and a plain
``line.split()`` loop costs seconds per million lines):

- **Pieces, not lines or whole files.** The stream is cut at line ends into pieces that grow
  from 256 KB to 1 MB (:func:`read_pieces`). Parsing needs about ten times a piece in
  temporaries: small pieces keep a 1 MB run's peak memory near pytrec_eval's (1 MB pieces from
  the start had cost 73 MB against its 44 on the Medical runs), while 1 MB is large enough for
  numpy's per-call overhead not to matter, and 36 MB files never sit in memory whole. One
  thread: two saved ~10% but cost 40 MB of peak memory (a malloc arena each).
- **Token boundaries in one pass.** The usual layout (single spaces or tabs, no comments) is
  cut with one ``flatnonzero`` over the separator bytes (:meth:`Parser._cut`); anything else
  goes through a general whitespace pass (:meth:`Parser._cut_lines`), and a piece whose lines do
  not all have the right number of fields is re-read line by line (:meth:`Parser._slow`), so
  every problem gets its exact line number.
- **Fixed-width gathers and SWAR arithmetic.** Tokens are gathered as 8-byte words
  (:class:`_Chunk`); digits are classified eight at a time with carry-free byte tricks and
  summed eight at a time (SIMD within a register, :func:`_swar8`); a decimal point is removed
  by moving the digits to its left one place over it, so no division per digit
  (:func:`_decimals`). A fixed point position (``%.6f``) makes those masks scalars.
- **Exact numbers.** A mantissa of at most 2**53 divided by an exact power of ten is correctly
  rounded in IEEE arithmetic (Clinger 1990): the value ``float()`` gives. Longer mantissas are
  divided in x87 extended precision where that is exact; exponents, ``+`` and junk go through
  numpy's and then Python's own conversion (so each bad token gets its message).
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

import math
import re
import sys
import zlib
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from metrics._docindex import docid_hashes, hash_words
from metrics.io.limits import CONTROL_BYTES, NO_LIMITS, Limits, id_problem, line_problem, show
from metrics.io.tables import empty_bytes
from metrics.problems import InvalidInput, Problem, Problems, ReadWarning

__all__ = ["Cols", "Parser", "read_pieces", "show"]

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]
Bytes = npt.NDArray[np.bytes_]
U8 = npt.NDArray[np.uint8]
Bool = npt.NDArray[np.bool_]

_CHUNK = 1 << 20  # largest piece parsed at once (see read_pieces)
_FIRST_CHUNK = 1 << 18  # smallest piece, but for the last
_PRIME_FROM = 4 * _CHUNK  # bytes read before the heap is primed (see _prime_heap)
_POW10_FLOAT = np.array([10.0**i for i in range(23)], dtype=np.float64)
_RUN_FIELDS = 6
_QRELS_FIELDS = 4
_INT_RE = re.compile(rb"[+-]?[0-9]+")
_FLOAT_RE = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
# what strtod also reads besides decimals: NaN and infinity, any case, optional sign
_NONFINITE_RE = re.compile(rb"[+-]?(?:nan|inf|infinity)", re.IGNORECASE)
# kinds of unusual input accepted with a warning (see Notes)
NAN_SCORE = "a NaN score (ranked after every other document of its query)"
INF_SCORE = "an infinite score (out of range or inf, ordered as a number)"
EXTRA_FIELDS = "more than 6 fields (the fields after the sixth are ignored)"
_BOM = b"\xef\xbb\xbf"
# Widest token the vectorised path gathers: its cost is rows x the widest token of a piece, so
# a piece with a longer one (never a real id, and over any id limit) is read line by line.
_FAST_WIDTH = 256


def read_pieces(
    stream: Any, name: str, max_line: int | None = None, cut: dict[int, int] | None = None
) -> Iterator[bytes]:
    """The stream's bytes in pieces that end at line ends, a leading UTF-8 BOM dropped.

    Pieces grow from ``_FIRST_CHUNK`` to ``_CHUNK`` bytes (an eighth of what was read so far):
    parsing needs about ten times a piece's size in temporaries, which stays small for a small
    file and small next to the result for a large one, while each piece stays large enough for
    numpy's per-call overhead not to matter.

    A line longer than ``max_line`` bytes keeps only its first ``max_line + 1`` bytes (enough
    for the parser to report it), the rest is dropped as it is read: memory stays bounded and
    time linear however long the line is. Such a line is the first line of the piece it ends
    up in; its whole length (without its line end and a CR before it) goes into ``cut`` under
    that piece's index (0-based), before the piece is yielded, so the parser can name it.
    Without a limit a long line is gathered whole, once.
    """
    pending: list[bytes] = []  # the start of a line whose end has not been read yet
    pending_len = 0
    skipping = False  # the rest of an over-long line is being dropped
    length = 0  # the whole length so far of the line being dropped
    last = b""  # its last byte so far (a CR before the line end is not counted)
    pieces = 0  # pieces yielded so far
    total = 0
    while True:
        try:
            block = stream.read(min(_CHUNK, max(_FIRST_CHUNK, total // 8)))
        except (OSError, EOFError, zlib.error) as exc:
            raise InvalidInput(name, [Problem(0, f"not a valid gzip file ({exc})")]) from exc
        if not block:
            break
        block = bytes(block)
        if total == 0:  # the first block (a stream may hand out fewer bytes than asked)
            while len(block) < len(_BOM) and _BOM.startswith(block):
                more = stream.read(len(_BOM))
                if not more:
                    break
                block += bytes(more)
            if block.startswith(_BOM):
                block = block[len(_BOM) :]
        total += len(block) or 1
        if skipping:
            end = block.find(b"\n")
            if end < 0:
                length, last = length + len(block), block[-1:] or last
                continue
            length += end - ((block[end - 1 : end] if end else last) == b"\r")
            if cut is not None:
                cut[pieces] = length
            block, skipping = block[end:], False
        cut_at = block.rfind(b"\n") + 1
        if cut_at == 0:  # no line end yet
            pending.append(block)
            pending_len += len(block)
        else:
            head = block if cut_at == len(block) else block[:cut_at]
            yield b"".join([*pending, head]) if pending else head
            pieces += 1
            pending = [block[cut_at:]] if cut_at < len(block) else []
            pending_len = len(block) - cut_at
        if max_line is not None and pending_len > max_line:
            whole = b"".join(pending)
            pending, length, last = [whole[: max_line + 1]], pending_len, whole[-1:]
            pending_len, skipping = max_line + 1, True
    if skipping and cut is not None:  # the last line, without a line end
        cut[pieces] = length - (last == b"\r")
    if pending:
        yield b"".join(pending)


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
# the low n bytes of a word, n = 0..8 (wider tokens: a table per word would cost 8k**2 entries)
_LOW_BYTES = np.array([(1 << (8 * n)) - 1 for n in range(9)], dtype=np.uint64)


def _left_mask(k: int, j: int, lens: I64) -> npt.NDArray[np.uint64]:
    """The bytes of word j (of k) that left-aligned tokens of ``lens`` bytes occupy."""
    table = _LEFT_MASKS.get(k)
    mask: npt.NDArray[np.uint64] = (
        table[j][lens] if table is not None else _LOW_BYTES[np.clip(lens - 8 * j, 0, 8)]
    )
    return mask


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
        for j in range(k):
            keep = _left_mask(k, j, lens)
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
    if not _INT_RE.fullmatch(token) or len(token.lstrip(b"+-").lstrip(b"0")) > 19:
        return None  # beyond 19 digits no value fits int64 (and int() refuses 4,300)
    return int(token)


def _python_float(token: bytes) -> float | None:
    """The score strtod reads from ``token`` (decimals, NaN, infinity; overflow gives
    infinity), or None when it is not a number."""
    if not (_FLOAT_RE.fullmatch(token) or _NONFINITE_RE.fullmatch(token)):
        return None
    return float(token)


def _note_nonfinite(notes: dict[str, list[int]], line: int, value: float) -> None:
    if math.isnan(value):
        notes.setdefault(NAN_SCORE, []).append(line)
    elif math.isinf(value):
        notes.setdefault(INF_SCORE, []).append(line)


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

    The data is cut at line ends into chunks of about ``_CHUNK`` bytes. Each chunk is parsed on
    its own, numbering its lines from 1 and collecting its own problems; the parts are then
    joined in order, which is when line numbers become the file's.
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
        c = _Chunk(arr, int(ln.max()) if ln.size else 1)
        doc_words, doc_width = c.left_words(st[:, 2], ln[:, 2])
        cols = Cols(
            qids=c.left(st[:, 0], ln[:, 0]),
            docids=_words_as_bytes(doc_words, doc_width),
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
            cols.ranks = self._ints(
                c, chunk, en[:, 3], ln[:, 3], cols, "rank", probs, values=self.rank_values
            )
            cols.nums = self._floats(c, chunk, en[:, 4], ln[:, 4], cols, probs)
            cols.tags = c.same(st[:, 5], ln[:, 5]) or _distinct_bytes(c.left(st[:, 5], ln[:, 5]))
        else:
            grades = self._ints(c, chunk, en[:, 3], ln[:, 3], cols, "grade", probs)
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

    def _ints(
        self,
        c: _Chunk,
        chunk: bytes,
        en: I64,
        lens: I64,
        cols: Cols,
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
                probs.add(cols.line(i), f"{what} {show(tok)} is not an integer")
            elif vals is not None:
                vals[i] = v
        return vals

    def _floats(
        self, c: _Chunk, chunk: bytes, en: I64, lens: I64, cols: Cols, probs: Problems
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
                _note_nonfinite(cols.notes, cols.line(i), v)
        return vals

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
                rank = _python_int(fields[3])
                if rank is None or not -(2**63) <= rank < 2**63:
                    probs.add(line, f"rank {show(fields[3])} is not an integer")
                    bad = True
                score = _python_float(fields[4])
                if score is None:
                    probs.add(line, _score_message(fields[4]))
                    bad = True
                # a line with bad numbers stays a row (valued 0) so that the duplicate check
                # sees its docid, as the vectorised path's does; the problem it has already
                # recorded means no row of this read is ever returned
                ranks.append(0 if bad or rank is None else rank)
                fnums.append(0.0 if bad or score is None else score)
                tags.setdefault(fields[5])
                if not bad:
                    assert score is not None
                    _note_nonfinite(notes, line, score)
                if len(fields) > nf:
                    notes.setdefault(EXTRA_FIELDS, []).append(line)
            else:
                grade = _python_int(fields[3])
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


def _score_message(tok: bytes) -> str:
    # (NaN, infinity and out-of-range decimals are read, as strtod reads them)
    return f"score {show(tok)} is not a number"


def _words_as_bytes(raw: npt.NDArray[np.uint64], width: int) -> Bytes:
    """``(n, k)`` native words of NUL-padded values as an ``S<width>`` array."""
    n, k = raw.shape
    if n == 0:
        return empty_bytes()
    out: Bytes = raw.view(f"S{8 * k}").reshape(n)
    return out if width == 8 * k else out.astype(f"S{max(1, width)}")
