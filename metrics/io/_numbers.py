"""The fast reader's tokens as fixed-width words, and its number columns read from them.

A chunk's fields are cut by :mod:`metrics.io._tokenizer`; here they are gathered and converted,
vectorised over the whole chunk. Why it is built this way:

- **Fixed-width gathers and SWAR arithmetic.** Tokens are gathered as 8-byte words
  (:class:`Chunk`); digits are classified eight at a time with carry-free byte tricks and
  summed eight at a time (SIMD within a register, :func:`_swar8`); a decimal point is removed
  by moving the digits to its left one place over it, so no division per digit
  (:func:`_decimals`). A fixed point position (``%.6f``) makes those masks scalars.
- **Exact numbers.** A mantissa of at most 2**53 divided by an exact power of ten is correctly
  rounded in IEEE arithmetic (Clinger 1990): the value ``float()`` gives. Longer mantissas are
  divided in x87 extended precision where that is exact; exponents, ``+`` and junk go through
  numpy's and then Python's own conversion (so each bad token gets its message).

:func:`ints` and :func:`floats` read a column of a chunk, reporting each bad token on its line;
:func:`python_int` and :func:`python_float` are the rules the line-by-line path applies to one
token, and the fallback of the vectorised one.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from metrics.io.limits import show
from metrics.io.tables import empty_bytes
from metrics.problems import Problems

__all__ = [
    "INF_SCORE",
    "NAN_SCORE",
    "Chunk",
    "floats",
    "ints",
    "note_nonfinite",
    "python_float",
    "python_int",
    "score_message",
    "words_as_bytes",
]

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]
Bytes = npt.NDArray[np.bytes_]
U8 = npt.NDArray[np.uint8]
Bool = npt.NDArray[np.bool_]

_POW10_FLOAT = np.array([10.0**i for i in range(23)], dtype=np.float64)
_INT_RE = re.compile(rb"[+-]?[0-9]+")
_FLOAT_RE = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
# what strtod also reads besides decimals: NaN and infinity, any case, optional sign
_NONFINITE_RE = re.compile(rb"[+-]?(?:nan|inf|infinity)", re.IGNORECASE)
# the scores accepted with a warning (metrics.io._tokenizer.Notes counts them)
NAN_SCORE = "a NaN score (ranked after every other document of its query)"
INF_SCORE = "an infinite score (out of range or inf, ordered as a number)"


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


class Chunk:
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
        return words_as_bytes(*self.left_words(starts, lens))

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


def python_int(token: bytes) -> int | None:
    if not _INT_RE.fullmatch(token) or len(token.lstrip(b"+-").lstrip(b"0")) > 19:
        return None  # beyond 19 digits no value fits int64 (and int() refuses 4,300)
    return int(token)


def python_float(token: bytes) -> float | None:
    """The score strtod reads from ``token`` (decimals, NaN, infinity; overflow gives
    infinity), or None when it is not a number."""
    if not (_FLOAT_RE.fullmatch(token) or _NONFINITE_RE.fullmatch(token)):
        return None
    return float(token)


def note_nonfinite(notes: dict[str, list[int]], line: int, value: float) -> None:
    if math.isnan(value):
        notes.setdefault(NAN_SCORE, []).append(line)
    elif math.isinf(value):
        notes.setdefault(INF_SCORE, []).append(line)


def ints(
    c: Chunk,
    chunk: bytes,
    en: I64,
    lens: I64,
    line: Callable[[int], int],
    what: str,
    probs: Problems,
    *,
    values: bool = True,
) -> I64 | None:
    """The integers of the tokens ending at ``en`` (None with ``values=False``: only checked);
    each token that is not one is reported to ``probs`` on its ``line(row)``."""
    num = _decimals(c.words(en, lens), lens, real=False, values=values)
    vals: I64 | None = None
    ok = num.ok
    if values:
        ok &= num.mantissa < _TWO63
        mag = num.mantissa.astype(np.int64)
        vals = np.where(num.neg, -mag, mag)
    for i in np.flatnonzero(~ok).tolist():
        tok = chunk[int(en[i] - lens[i]) : int(en[i])]
        v = python_int(tok)
        if v is None or not -(2**63) <= v < 2**63:
            probs.add(line(i), f"{what} {show(tok)} is not an integer")
        elif vals is not None:
            vals[i] = v
    return vals


def floats(
    c: Chunk,
    chunk: bytes,
    en: I64,
    lens: I64,
    line: Callable[[int], int],
    notes: dict[str, list[int]],
    probs: Problems,
) -> F64:
    """The scores of the tokens ending at ``en``, as ``float()`` reads them; each token that is
    not a number is reported to ``probs``, each NaN or infinity noted in ``notes``."""
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
        v = python_float(tok)
        if v is None:
            probs.add(line(i), score_message(tok))
        else:
            vals[i] = v
            note_nonfinite(notes, line(i), v)
    return vals


def score_message(tok: bytes) -> str:
    # (NaN, infinity and out-of-range decimals are read, as strtod reads them)
    return f"score {show(tok)} is not a number"


def words_as_bytes(raw: npt.NDArray[np.uint64], width: int) -> Bytes:
    """``(n, k)`` native words of NUL-padded values as an ``S<width>`` array."""
    n, k = raw.shape
    if n == 0:
        return empty_bytes()
    out: Bytes = raw.view(f"S{8 * k}").reshape(n)
    return out if width == 8 * k else out.astype(f"S{max(1, width)}")
