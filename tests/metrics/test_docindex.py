"""The docid index finds exactly the docids a plain dict lookup finds, whatever the hashes do.

The hashes are given explicitly, so the same data goes through the hash table (distinct hashes),
through a table whose probe chains are long (few distinct hashes across queries), and through
the exact fallback (two docids of one query sharing a hash, or a hash equal to the free-slot
marker).
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics._docindex import DocIndex, docid_hashes

DOCS = st.text(alphabet="ab1é", min_size=1, max_size=9)


def _index(judged: list[list[str]], hashing: str) -> tuple[DocIndex, list[list[str]], np.ndarray]:
    sorted_docs = [sorted(set(q), key=str.encode) for q in judged]
    flat = [d.encode() for q in sorted_docs for d in q]
    docids = np.array(flat, dtype=np.bytes_) if flat else np.empty(0, dtype="S1")
    offsets = np.zeros(len(judged) + 1, dtype=np.int64)
    np.cumsum([len(q) for q in sorted_docs], out=offsets[1:])
    hashes = _hashes(docids, hashing)
    return DocIndex.build(docids, offsets, hashes), sorted_docs, offsets


def _hashes(col: np.ndarray, hashing: str) -> np.ndarray:
    if hashing == "real":
        return docid_hashes(col)
    if hashing == "few":  # 1..3: collisions across queries, long chains, and within queries
        return (np.char.str_len(col) % 3 + 1).astype(np.uint64)
    return np.zeros(col.size, dtype=np.uint64)  # the free-slot marker: exact fallback


@settings(max_examples=200, deadline=None)
@given(
    judged=st.lists(st.lists(DOCS, max_size=12), min_size=1, max_size=5),
    asked=st.lists(st.tuples(st.integers(0, 4), st.lists(DOCS, max_size=10)), max_size=6),
    hashing=st.sampled_from(["real", "few", "marker"]),
)
def test_find_returns_the_rows_a_dict_lookup_finds(
    judged: list[list[str]], asked: list[tuple[int, list[str]]], hashing: str
) -> None:
    index, sorted_docs, offsets = _index(judged, hashing)
    asked = [(q % len(judged), docs) for q, docs in asked]
    flat = [d.encode() for _, docs in asked for d in docs]
    docids = np.array(flat, dtype="S40") if flat else np.empty(0, dtype="S1")  # wider: no matter
    rows = np.arange(docids.size, dtype=np.int64)[::-1].copy()  # looked up in reverse order
    segments = np.array([q for q, _ in asked], dtype=np.int64)
    sizes = np.array([len(docs) for _, docs in asked], dtype=np.int64)
    at, pos = index.find(docids, _hashes(docids, hashing), rows, segments, sizes)
    expect: dict[int, int] = {}
    i = 0
    for q, docs in asked:
        where = {d: int(offsets[q]) + j for j, d in enumerate(sorted_docs[q])}
        for _ in docs:
            doc = docids[rows[i]].decode()
            if doc in where:
                expect[i] = where[doc]
            i += 1
    assert dict(zip(at.tolist(), pos.tolist(), strict=True)) == expect
    assert at.size == len(expect)
