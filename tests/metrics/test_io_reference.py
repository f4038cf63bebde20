"""The fast reader reads every file exactly as the plain reference reader does.

Files are generated with every layout the format allows (spaces, tabs, runs of blanks, leading
blanks, CRLF, comments, blank lines, interleaved queries, non-ASCII docids), numbers in every
spelling, and some bad lines; read in one piece or in many small ones. A file the reference
finds clean must read to the same rows, order and tags; otherwise the same lines must be named.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics.io import InvalidInput, _pieces, _tokenizer, read_qrels, read_run
from metrics.io._reference import Reference, read_reference

WARNING_KINDS = {
    _tokenizer.NAN_SCORE: "nan",
    _tokenizer.INF_SCORE: "inf",
    _tokenizer.EXTRA_FIELDS: "extra",
}

SEP = st.sampled_from([" ", "\t", "  ", " \t", "\t\t"])
INT = st.one_of(
    st.integers(-(10**20), 10**20).map(str),
    st.sampled_from(["+3", "007", "-0", "1.5", "x", "9" * 19]),
)
SCORE = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.integers(-(10**6), 10**6).map(lambda i: f"{i / 1000:.6f}"),
    st.integers(-(10**25), 10**25).map(str),
    st.sampled_from(
        [
            *["+1.5", ".5", "5.", "1e5", "-2E-3", "1e999", "-1e309", "1_0", "x", "nan(1)"],
            *["0x1p3", "nan", "NaN", "-nan", "+NAN", "inf", "-inf", "Infinity", "-INFINITY"],
            "infinit",
        ]
    ),
)
DOC = st.text(alphabet="ab1é日-_.\x00\x7f\x85", min_size=1, max_size=6)


@st.composite
def files(draw: st.DrawFn, run: bool) -> bytes:
    lines: list[str] = []
    for i in range(draw(st.integers(0, 40))):
        kind = draw(st.sampled_from(["data"] * 8 + ["blank", "comment", "short", "dup", "long"]))
        if kind == "blank":
            lines.append(draw(st.sampled_from(["", " ", "\t"])))
            continue
        if kind == "comment":
            lines.append("# " + draw(st.text(alphabet="ab #", max_size=5)))
            continue
        qid = draw(st.sampled_from(["1", "2", "10", "q"]))
        doc = draw(DOC) + ("" if kind == "dup" else str(i))
        if run:
            fields = [qid, "Q0", doc, draw(INT), draw(SCORE), draw(st.sampled_from(["t", "u"]))]
        else:
            fields = [qid, "0", doc, draw(INT)]
        if kind == "short":
            fields = fields[: draw(st.integers(1, len(fields) - 1))]
        if kind == "long":  # fields after the sixth: ignored in a run, an error in qrels
            fields += draw(
                st.lists(st.sampled_from(["x", "#", "1.5", "é"]), min_size=1, max_size=3)
            )
        lead = draw(st.sampled_from(["", "", " ", "\t"]))
        line = lead + "".join(f + draw(SEP) for f in fields[:-1]) + fields[-1]
        lines.append(line + draw(st.sampled_from(["", "", "\r", " "])))
    ending = draw(st.sampled_from(["\n", ""]))
    return ("\n".join(lines) + ending).encode()


def _expect_same(data: bytes, ref: Reference, *, run: bool) -> None:
    if ref.bad_lines:
        with pytest.raises(InvalidInput) as info:
            if run:
                read_run(data, max_problems=10_000)
            else:
                read_qrels(data, max_problems=10_000)
        assert sorted({p.line for p in info.value.problems}) == sorted(set(ref.bad_lines))
        return
    qids = list(dict.fromkeys(q for q, _, _ in ref.rows))

    def rows(q: str) -> list[tuple[str, float | int]]:
        return [(d, v) for qq, d, v in ref.rows if qq == q]

    if run:
        got_run = read_run(data)
        assert list(got_run.qids) == qids
        for q in qids:  # (repr: NaN equals nothing, not even itself)
            assert [(d, repr(v)) for d, v in got_run.scores_of(q).items()] == [
                (d, repr(v)) for d, v in rows(q)
            ]
        assert list(got_run.tags) == ref.tags
        got = {WARNING_KINDS[w.message]: (w.total, list(w.lines)) for w in got_run.warnings}
        assert got == {k: (len(v), v[:10]) for k, v in ref.warnings.items()}
    else:
        got_qrels = read_qrels(data)
        assert list(got_qrels.qids) == qids
        assert all(got_qrels.judgments(q) == dict(rows(q)) for q in qids)


@pytest.mark.parametrize("run", [True, False], ids=["run", "qrels"])
@pytest.mark.parametrize("small", [False, True], ids=["one-piece", "small-pieces"])
def test_fast_reader_agrees_with_the_reference_reader(run: bool, small: bool) -> None:
    @settings(max_examples=150, deadline=None)
    @given(data=files(run))
    def check(data: bytes) -> None:
        ref = read_reference(data, run=run)
        with pytest.MonkeyPatch.context() as mp:
            if small:
                mp.setattr(_pieces, "_FIRST_CHUNK", 64)
                mp.setattr(_pieces, "_CHUNK", 160)
                mp.setattr(_tokenizer, "_PRIME_FROM", 400)
            _expect_same(data, ref, run=run)

    check()
