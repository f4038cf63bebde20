"""Find a run's docids in the qrels, per query: 64-bit docid hashes and one hash table.

Evaluation and leave-one-out both need, for every retrieved row, the qrels row of the same docid
in the same query (or that there is none). Comparing ``S`` byte strings is slow in numpy, so the
docids are hashed to 64-bit integers once (while a file is read, from the words the tokenizer
already gathered: :func:`hash_words`) and looked up in an open-addressing hash table built per
query; a hit is then confirmed on the bytes, so a hash shared by two different docids can never
make an unjudged document judged.

The table (linear probing, Fibonacci hashing): query i owns the ``2**b + n_i`` slots from
``base[i]`` for its n_i docids, where ``2**b >= 4 n_i`` and ``shift[i] = 64 - b``. A key starts at
its home slot (:func:`_home`, among the first ``2**b``) and moves right until it finds itself or
a free slot; the n_i extra slots mean no chain wraps around or leaves the query's slots. A slot
holds the key (``_EMPTY`` when free) and its row. Building and finding are vectorised in rounds:
in each, every key not yet placed (or found, or known absent) looks at one slot; with a load of
at most 1/4 almost every key is settled in the first round or two.

When two docids of one query share a hash, or a hash equals the free-slot marker, no table is
built and :meth:`DocIndex.find` falls back to an exact binary search per query (the docids are
sorted within each query, as :class:`~metrics.io.Qrels` keeps them). The fallback is slower but
gives the same answers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["DocIndex", "docid_hashes", "hash_words"]

I64 = npt.NDArray[np.int64]
U64 = npt.NDArray[np.uint64]
Bytes = npt.NDArray[np.bytes_]

_EMPTY = np.uint64(0)  # the key of a free slot (docids with a hash of 0 get no table)
_FIBONACCI = np.uint64(0x9E3779B97F4A7C15)  # 2**64 / golden ratio


def docid_hashes(col: Bytes) -> U64:
    """A 64-bit hash of each bytes value, independent of the array's ``S`` width.

    FNV-1a over the value's NUL-padded 8-byte words, each step followed by an xor-shift; used
    only to find candidate matches quickly (matches are confirmed on the bytes).
    """
    n = col.size
    w = col.dtype.itemsize
    words = (w + 7) // 8
    buf = np.zeros((n, words * 8), dtype=np.uint8)
    buf[:, :w] = col.view(np.uint8).reshape(n, w)
    return hash_words(buf.view(np.uint64))


def hash_words(raw: U64) -> U64:
    """:func:`docid_hashes` of values held NUL padded in ``(n, k)`` native uint64 words."""
    h = np.full(raw.shape[0], 0xCBF29CE484222325, dtype=np.uint64)
    mult = np.uint64(0x100000001B3)
    with np.errstate(over="ignore"):
        for i, word in enumerate(raw.T):
            mixed = (h ^ word) * mult
            mixed ^= mixed >> np.uint64(29)
            # trailing all-NUL words are padding: skipping them keeps the hash width-independent
            h = mixed if i == 0 else np.where(word != 0, mixed, h)
    return h


def _home(keys: U64, shift: U64) -> I64:
    """First slot to probe for each key, in a table of ``2**(64 - shift)`` slots.

    Fibonacci hashing: the top bits of ``key * 2**64/phi`` depend on every bit of the key.
    """
    out: I64 = ((keys * _FIBONACCI) >> shift).view(np.int64)
    return out


@dataclass(frozen=True)
class _Table:
    base: I64
    shift: U64
    keys: U64
    rows: I64


def _build(hashes: U64, offsets: I64) -> _Table | None:
    """The table of ``hashes`` (query i: rows ``offsets[i]:offsets[i+1]``), or None when two
    hashes of one query are equal or a hash is ``_EMPTY``."""
    if np.any(hashes == _EMPTY):
        return None
    counts = np.diff(offsets)
    # b = 2 + bit length of n - 1 (frexp's exponent): the smallest b >= 2 with 2**b >= 4 n
    bits = 2 + np.frexp(np.maximum(counts - 1, 0))[1].astype(np.int64)
    size = (np.int64(1) << bits) + counts
    base = np.concatenate(([0], np.cumsum(size)[:-1])).astype(np.int64)
    shift = (64 - bits).astype(np.uint64)
    keys = np.full(int(size.sum()), _EMPTY, dtype=np.uint64)
    rows = np.zeros(keys.size, dtype=np.int64)
    seg = np.repeat(np.arange(counts.size), counts)
    row = np.arange(hashes.size, dtype=np.int64)
    key = hashes
    slot = base[seg] + _home(hashes, shift[seg])
    while row.size:
        free = keys[slot] == _EMPTY
        rows[slot[free]] = row[free]
        won = free & (rows[slot] == row)  # one of the keys that tried a free slot got it
        keys[slot[won]] = key[won]
        lost = ~won
        row, key, slot = row[lost], key[lost], slot[lost]
        if np.any(keys[slot] == key):  # an equal key holds the slot: a hash collision
            return None
        slot += 1
    return _Table(base, shift, keys, rows)


@dataclass(frozen=True)
class DocIndex:
    """The docids of several queries (segments), indexed for :meth:`find`.

    Build with :meth:`build` from docids sorted within each segment and the segment offsets
    (query i: rows ``offsets[i]:offsets[i+1]``).
    """

    docids: Bytes
    offsets: I64
    _table: _Table | None

    @classmethod
    def build(cls, docids: Bytes, offsets: I64, hashes: U64 | None = None) -> DocIndex:
        """Index ``docids`` (sorted within each segment); ``hashes`` default to
        :func:`docid_hashes` of them."""
        h = docid_hashes(docids) if hashes is None else hashes
        return cls(docids, offsets, _build(h, offsets))

    def find(
        self, docids: Bytes, hashes: U64, rows: I64, segments: I64, sizes: I64
    ) -> tuple[I64, I64]:
        """Which of ``docids[rows]`` are indexed: their indices into ``rows`` and their rows in
        the index's ``docids``.

        ``hashes`` are :func:`docid_hashes` of ``docids``. The first ``sizes[0]`` of ``rows``
        are looked up in segment ``segments[0]``, the next ``sizes[1]`` in ``segments[1]``, and
        so on. The indices come in no particular order.
        """
        table = self._table
        if table is None:
            return self._search(docids[rows], segments, sizes)
        key = hashes[rows]
        slot = np.repeat(table.base[segments], sizes) + _home(
            key, np.repeat(table.shift[segments], sizes)
        )
        idx = np.arange(key.size, dtype=np.int64)
        free = key == _EMPTY  # never a key of the table (it would match a free slot)
        if free.any():
            go = np.flatnonzero(~free)
            idx, key, slot = idx[go], key[go], slot[go]
        found: list[I64] = [np.zeros(0, dtype=np.int64)]
        at_rows: list[I64] = [np.zeros(0, dtype=np.int64)]
        while idx.size:
            held = table.keys[slot]
            hit = held == key
            at = np.flatnonzero(hit)
            found.append(idx[at])
            at_rows.append(table.rows[slot[at]])
            go = np.flatnonzero(~hit & (held != _EMPTY))
            idx, key, slot = idx[go], key[go], slot[go] + 1
        at, pos = np.concatenate(found), np.concatenate(at_rows)
        same = self.docids[pos] == docids[rows[at]]  # the hashes matched: confirm the bytes
        return at[same], pos[same]

    def _search(self, docs: Bytes, segments: I64, sizes: I64) -> tuple[I64, I64]:
        """The exact fallback: a binary search per segment."""
        hit = np.zeros(docs.size, dtype=bool)
        pos = np.zeros(docs.size, dtype=np.int64)
        a = 0
        for qi, size in zip(segments.tolist(), sizes.tolist(), strict=True):
            b = a + size
            lo, hi = int(self.offsets[qi]), int(self.offsets[qi + 1])
            if hi > lo and b > a:
                at = np.minimum(np.searchsorted(self.docids[lo:hi], docs[a:b]), hi - lo - 1)
                pos[a:b] = lo + at
                hit[a:b] = self.docids[lo + at] == docs[a:b]
            a = b
        at = np.flatnonzero(hit)
        return at, pos[at]
