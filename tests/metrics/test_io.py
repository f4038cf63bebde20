"""Reading and writing TREC runs and qrels: formats, sources, exact numbers, and every problem."""

from __future__ import annotations

import gzip
import io
import math
import random
import re
import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from metrics._docindex import docid_hashes
from metrics.io import (
    InvalidInput,
    Problem,
    Qrels,
    Run,
    _pieces,
    _tokenizer,
    parse_run,
    read_qrels,
    read_run,
    write_qrels,
    write_run,
)

RUN = b"""\
q1 Q0 d1 1 3.5 tagA
q1 Q0 d2 2 2.25 tagA
q2 Q0 d9 1 -1 tagB
q2 Q0 d1 2 -7.125e-1 tagA
"""

QRELS = b"""\
q1 0 d1 2
q1 0 d3 0
q2 0 d9 -1
q2 0 d1 1
"""


def _errors(data: bytes, *, qrels: bool = False, **kw: object) -> InvalidInput:
    reader = read_qrels if qrels else parse_run
    with pytest.raises(InvalidInput) as info:
        reader(data, source="f.txt", **kw)  # type: ignore[arg-type]
    return info.value


# -- sources -------------------------------------------------------------------------------


def test_run_table_keeps_file_order_and_values() -> None:
    table = parse_run(RUN)
    assert table.qids == ["q1", "q1", "q2", "q2"]
    assert table.docids == ["d1", "d2", "d9", "d1"]
    assert table.ranks.tolist() == [1, 2, 1, 2]
    assert table.scores.tolist() == [3.5, 2.25, -1.0, -0.7125]
    assert table.tags == ["tagA", "tagB"]
    assert table.lines == 4


def test_path_string_pathlike_file_object_and_bytes_read_the_same(tmp_path: Path) -> None:
    p = tmp_path / "run.txt"
    p.write_bytes(RUN)
    expected = parse_run(RUN)
    for src in (str(p), p, io.BytesIO(RUN)):
        got = parse_run(src)
        assert got.docids == expected.docids
        assert got.scores.tolist() == expected.scores.tolist()


def test_gzip_is_detected_by_magic_bytes_not_by_name(tmp_path: Path) -> None:
    disguised = tmp_path / "run.txt"
    disguised.write_bytes(gzip.compress(RUN))
    plain_named_gz = tmp_path / "run.gz"
    plain_named_gz.write_bytes(RUN)
    assert parse_run(disguised).docids == ["d1", "d2", "d9", "d1"]
    assert parse_run(plain_named_gz).docids == ["d1", "d2", "d9", "d1"]
    assert parse_run(gzip.compress(RUN)).lines == 4


def test_comments_blank_lines_tabs_and_crlf_are_tolerated() -> None:
    data = (
        b"# a comment\r\n\r\nq1\tQ0\td1\t1\t3.5\tt\r\n   \r\n  # indented comment\nq1 Q0  d2 2 1 t"
    )
    table = parse_run(data)
    assert table.docids == ["d1", "d2"]
    assert table.scores.tolist() == [3.5, 1.0]


def test_text_mode_file_object_is_refused_with_a_clear_message() -> None:
    with pytest.raises(TypeError, match="binary"):
        parse_run(io.StringIO(RUN.decode()))  # type: ignore[arg-type]


def test_utf8_docids_round_trip() -> None:
    table = parse_run("q1 Q0 caf\u00e9 1 1 t\n".encode())
    assert table.docids == ["caf\u00e9"]


# -- exact numbers -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "0",
        "-0",
        "+1",
        "1.",
        ".5",
        "-.5",
        "49.19109429178723",
        "0.12345678901234567",
        "123456789012345678901234",
        "3.60098e-10",
        "1E+5",
        "0.000000000000000000000000001",
        "9007199254740993",
        "2.00000",
    ],
)
def test_scores_equal_python_float_exactly(text: str) -> None:
    table = parse_run(f"q Q0 d 1 {text} t\n".encode())
    assert table.scores[0] == float(text)
    assert math.copysign(1.0, table.scores[0]) == math.copysign(1.0, float(text))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=1, max_size=40),
    st.sampled_from(["{!r}", "{:.6f}", "{:.17g}", "{:.3e}", "{:.12f}"]),
)
def test_any_finite_score_in_any_spelling_reads_as_python_float(
    scores: list[float], spelling: str
) -> None:
    texts = [spelling.format(s) for s in scores]
    assume(all(math.isfinite(float(t)) for t in texts))  # '{:.3e}' can round up past DBL_MAX
    data = "".join(f"q Q0 d{i} {i} {t} tag\n" for i, t in enumerate(texts)).encode()
    table = parse_run(data)
    assert table.scores.tolist() == [float(t) for t in texts]


def test_large_file_parses_across_chunks_with_exact_values() -> None:
    rng = np.random.default_rng(1)
    n = 120_000
    scores = (rng.random(n) * 100).tolist()
    lines = [f"{i // 1000} Q0 doc{i} {i % 1000 + 1} {scores[i]!r} big\n" for i in range(n)]
    table = parse_run("".join(lines).encode())
    assert table.lines == n
    assert table.scores.tolist() == scores
    assert table.docids[-1] == f"doc{n - 1}"


# -- problems ------------------------------------------------------------------------------


def test_wrong_field_count_names_the_line_and_the_count() -> None:
    err = _errors(b"q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0\n")
    assert err.problems == [Problem(2, "expected 6 fields (qid Q0 docid rank score tag), found 5")]
    assert str(err) == "f.txt line 2: expected 6 fields (qid Q0 docid rank score tag), found 5"


def test_qrels_wrong_field_count_is_reported() -> None:
    err = _errors(b"q1 0 d1 1\nq1 0 d2\n", qrels=True)
    assert err.problems == [Problem(2, "expected 4 fields (qid iteration docid grade), found 3")]


def test_score_that_is_not_a_number_is_reported_with_its_text() -> None:
    err = _errors(b"q1 Q0 d1 1 abc t\n")
    assert err.problems == [Problem(1, "score 'abc' is not a number")]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("nan", math.nan),
        ("NaN", math.nan),
        ("inf", math.inf),
        ("-Infinity", -math.inf),
        ("1e999", math.inf),
        ("-1e309", -math.inf),
    ],
)
def test_non_finite_scores_are_read_as_strtod_reads_them(text: str, value: float) -> None:
    # accepted with a warning (tests/metrics/test_io_nonfinite.py)
    (got,) = parse_run(f"q1 Q0 d1 1 {text} t\n".encode()).scores.tolist()
    assert repr(got) == repr(value)


def test_score_with_underscores_is_not_a_number() -> None:
    err = _errors(b"q1 Q0 d1 1 1_000 t\n")
    assert err.problems == [Problem(1, "score '1_000' is not a number")]


def test_rank_that_is_not_an_integer_is_reported() -> None:
    err = _errors(b"q1 Q0 d1 1.5 2 t\nq1 Q0 d2 x 1 t\n")
    assert err.problems == [
        Problem(1, "rank '1.5' is not an integer"),
        Problem(2, "rank 'x' is not an integer"),
    ]


def test_grade_that_is_not_an_integer_is_reported() -> None:
    err = _errors(b"q1 0 d1 1\nq1 0 d2 high\n", qrels=True)
    assert err.problems == [Problem(2, "grade 'high' is not an integer")]


def test_negative_grades_are_allowed_in_qrels() -> None:
    qrels = read_qrels(b"q1 0 d1 -1\nq1 0 d2 3\n")
    assert qrels.judgments("q1") == {"d1": -1, "d2": 3}


def test_duplicate_docid_in_a_run_names_both_lines() -> None:
    err = _errors(b"q1 Q0 d1 1 2 t\nq2 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t\nq1 Q0 d1 3 0 t\n")
    assert err.problems == [Problem(4, "duplicate docid 'd1' for query 'q1' (first on line 1)")]


def test_duplicate_docid_in_qrels_names_both_lines() -> None:
    err = _errors(b"q1 0 d1 1\nq1 0 d1 0\n", qrels=True)
    assert err.problems == [Problem(2, "duplicate docid 'd1' for query 'q1' (first on line 1)")]


@pytest.mark.parametrize("data", [b"", b"\n\n  \n", b"# only a comment\n"])
def test_file_without_data_lines_is_an_error(data: bytes) -> None:
    err = _errors(data)
    assert err.problems == [Problem(0, "no data lines (empty file)")]
    assert str(err) == "f.txt: no data lines (empty file)"


def test_bad_utf8_is_a_problem_on_its_line() -> None:
    err = _errors(b"q1 Q0 d1 1 2 t\nq1 Q0 d\xff2 2 1 t\n")
    assert err.problems == [Problem(2, "not valid UTF-8 (byte 0xff at column 8)")]


def test_corrupt_gzip_is_a_whole_file_problem() -> None:
    err = _errors(gzip.compress(RUN)[:20])
    assert err.problems[0].line == 0
    assert "gzip" in err.problems[0].message


def test_every_problem_is_collected_and_the_list_is_capped_with_the_total() -> None:
    lines = [f"q1 Q0 d{i} {i} x{i} t\n" for i in range(1, 251)]
    err = _errors("".join(lines).encode(), max_problems=5)
    assert err.total == 250
    assert [p.line for p in err.problems] == [1, 2, 3, 4, 5]
    assert str(err) == "f.txt line 1: score 'x1' is not a number (and 249 more problems)"


def test_problem_deep_in_a_large_file_has_its_exact_line_number() -> None:
    lines = [f"q{i // 1000} Q0 d{i} {i} 1.0 t\n" for i in range(150_000)]
    lines[123_456] = "q123 Q0 dX 1 oops t\n"
    lines[140_000] = "# comment\n"
    lines[140_001] = "q140 Q0 d140001 1 1.0\n"
    err = _errors("".join(lines).encode())
    assert err.problems == [
        Problem(123_457, "score 'oops' is not a number"),
        Problem(140_002, "expected 6 fields (qid Q0 docid rank score tag), found 5"),
    ]


def test_problems_of_different_kinds_are_reported_together_in_line_order() -> None:
    data = b"q1 Q0 d1 1 2 t\nq1 Q0 d1 2 1 t\nq1 Q0 d3 3\nq1 Q0 d4 r 1 t\n"
    err = _errors(data)
    assert [p.line for p in err.problems] == [2, 3, 4]
    assert err.total == 3


# -- grouped types -------------------------------------------------------------------------


def test_read_run_groups_interleaved_queries_in_first_seen_order() -> None:
    run = read_run(b"q2 Q0 a 1 1 t\nq1 Q0 b 1 5 t\nq2 Q0 c 2 3 t\n")
    assert run.qids == ("q2", "q1")
    assert run.scores_of("q2") == {"a": 1.0, "c": 3.0}
    assert run.tag == "t"
    assert len(run) == 3


def test_ranking_is_score_descending_with_ties_by_docid_descending() -> None:
    run = Run.from_dict({"q": {"A": 1.0, "Z": 1.0, "10": 2.0, "9": 2.0, "m": 0.5}})
    assert run.ranking("q") == ["9", "10", "Z", "A", "m"]
    assert run.ranking("absent") == []


def test_ranking_ignores_the_rank_column() -> None:
    run = read_run(b"q Q0 low 1 0.1 t\nq Q0 high 2 0.9 t\n")
    assert run.ranking("q") == ["high", "low"]


def test_run_from_dict_and_to_dict_round_trip() -> None:
    data = {"q1": {"a": 2.0, "b": 1.5}, "q2": {"c": -1.0}}
    assert Run.from_dict(data).to_dict() == data


def test_qrels_from_dict_gives_judgments_per_query() -> None:
    qrels = Qrels.from_dict({"q1": {"b": 0, "a": 2}, "q2": {"x": -1}})
    assert qrels.judgments("q1") == {"a": 2, "b": 0}
    assert qrels.judgments("nope") == {}
    assert qrels.num_rel("q1") == 1
    assert "q2" in qrels and "q3" not in qrels


def test_written_run_reads_back_to_the_same_scores_and_order(tmp_path: Path) -> None:
    run = Run.from_dict({"q1": {"a": 0.1 + 0.2, "b": 1e-300, "c": 0.1 + 0.2}, "q2": {"x": 7.0}})
    for name in ("out.txt", "out.txt.gz"):
        write_run(run, tmp_path / name, tag="mine")
        back = read_run(tmp_path / name)
        assert back.to_dict() == run.to_dict()
        assert back.ranking("q1") == run.ranking("q1") == ["c", "a", "b"]
        assert back.tag == "mine"
    table = parse_run(tmp_path / "out.txt")
    assert table.ranks.tolist() == [1, 2, 3, 1]


def test_written_qrels_read_back_equal(tmp_path: Path) -> None:
    qrels = read_qrels(QRELS)
    buf = io.BytesIO()
    write_qrels(qrels, buf)
    assert read_qrels(buf.getvalue()).to_dict() == qrels.to_dict()
    assert read_qrels(QRELS).to_dict() == {
        "q1": {"d1": 2, "d3": 0},
        "q2": {"d9": -1, "d1": 1},
    }


def test_write_run_refuses_a_tag_with_spaces(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="tag"):
        write_run(Run.from_dict({"q": {"d": 1.0}}), tmp_path / "r.txt", tag="two words")


def test_adversarial_scores_read_exactly_like_python_float() -> None:
    # long mantissas, exponents, and decimal strings at or next to halfway points between two
    # doubles (where a naive or double-rounded conversion goes wrong)
    rnd = random.Random(5)
    spellings = ["{!r}", "{:.17g}", "{:.18e}", "{:.19g}", "{:.16f}", "{:.3e}", "{:.20f}", "{:.1E}"]
    texts = []
    for _ in range(20_000):
        x = struct.unpack("d", struct.pack("Q", rnd.getrandbits(64)))[0]
        if rnd.random() < 0.5:
            x = rnd.uniform(0, 1) * 10 ** rnd.randint(-25, 25)
        t = rnd.choice(spellings).format(x)
        if math.isfinite(x) and math.isfinite(float(t)) and len(t) < 60:
            texts.append(t)
    for k in range(1, 60):
        for m in range(1, 30):
            texts.append("%.25g" % ((2**53 + m) * 2.0**k + 2.0 ** (k - 1)))
            texts.append(repr((2**53 + 2 * m + 1) / 2 ** (53 - k)))
    data = "".join(f"q Q0 d{i} {i} {t} x\n" for i, t in enumerate(texts)).encode()
    table = parse_run(data)
    assert [repr(v) for v in table.scores.tolist()] == [repr(float(t)) for t in texts]


# -- the vectorised number reader against Python, token by token ---------------------------

_NUMBER_ALPHABET = "0123456789" * 3 + ".-+eE_xnaNAif"


def _python_score(text: str) -> float | None:
    # as strtod: decimals (overflow gives an infinity), NaN and infinity in any case
    if not re.fullmatch(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", text) and not (
        re.fullmatch(r"[+-]?(?:nan|inf|infinity)", text, re.IGNORECASE)
    ):
        return None
    return float(text)


def _python_int(text: str) -> int | None:
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


def _bad_lines(data: bytes, reader: object) -> list[int]:
    try:
        reader(data, max_problems=10**6)  # type: ignore[operator]
    except InvalidInput as exc:
        return [p.line for p in exc.problems]
    return []


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(_NUMBER_ALPHABET, min_size=1, max_size=26),
            st.from_regex(r"-?[0-9]{1,20}(\.[0-9]{0,20})?", fullmatch=True),
            st.from_regex(r"-?\.[0-9]{1,22}", fullmatch=True),
        ),
        min_size=1,
        max_size=60,
    ),
    st.sampled_from([" ", "\t"]),
)
def test_every_token_reads_as_python_reads_it(tokens: list[str], sep: str) -> None:
    # scores, ranks (read_run validates them, parse_run keeps their values) and grades: the
    # vectorised reader accepts exactly what float()/int() accept, with the same values
    def lines(fmt: str) -> bytes:
        return "".join(
            fmt.format(i=i, t=t).replace(" ", sep) for i, t in enumerate(tokens)
        ).encode()

    scores = [_python_score(t) for t in tokens]
    ints = [_python_int(t) for t in tokens]
    want_bad_scores = [i + 1 for i, v in enumerate(scores) if v is None]
    want_bad_ints = [i + 1 for i, v in enumerate(ints) if v is None]

    run_scores = lines("q Q0 d{i} 1 {t} tag\n")
    assert _bad_lines(run_scores, parse_run) == want_bad_scores
    assert _bad_lines(run_scores, read_run) == want_bad_scores
    run_ranks = lines("q Q0 d{i} {t} 1.5 tag\n")
    assert _bad_lines(run_ranks, parse_run) == want_bad_ints
    assert _bad_lines(run_ranks, read_run) == want_bad_ints
    qrels = lines("q 0 d{i} {t}\n")
    assert _bad_lines(qrels, read_qrels) == want_bad_ints

    good = [i for i, v in enumerate(scores) if v is not None]
    if good:
        data = "".join(f"q{sep}Q0{sep}d{i}{sep}1{sep}{tokens[i]}{sep}t\n" for i in good)
        got = parse_run(data.encode()).scores.tolist()
        assert [repr(v) for v in got] == [repr(scores[i]) for i in good]
    good = [i for i, v in enumerate(ints) if v is not None]
    if good:
        data = "".join(f"q{sep}Q0{sep}d{i}{sep}{tokens[i]}{sep}1{sep}t\n" for i in good)
        assert parse_run(data.encode()).ranks.tolist() == [ints[i] for i in good]
        data = "".join(f"q{sep}0{sep}d{i}{sep}{tokens[i]}\n" for i in good)
        assert read_qrels(data.encode()).judgments("q") == {f"d{i}": ints[i] for i in good}


def test_signed_decimals_of_every_width_read_exactly() -> None:
    # every digit count and point position up to the widest vectorised token (24 bytes)
    rnd = random.Random(11)
    texts = []
    for digits in range(1, 24):
        for point in range(digits + 1):
            for sign in ("", "-"):
                d = "".join(rnd.choice("0123456789") for _ in range(digits))
                texts.append(sign + d[:point] + "." + d[point:] if point < digits else sign + d)
    data = "".join(f"q Q0 d{i} {i} {t} x\n" for i, t in enumerate(texts)).encode()
    got = parse_run(data).scores.tolist()
    assert [repr(v) for v in got] == [repr(float(t)) for t in texts]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["q1", "q2", "q3"]), st.integers(0, 40), st.integers(0, 4)),
        min_size=1,
        max_size=80,
        unique_by=lambda t: (t[0], t[1]),
    ),
    st.sampled_from(["file", "score, ties ascending", "score, ties descending"]),
)
def test_trec_order_matches_a_plain_sort(rows: list[tuple[str, int, int]], layout: str) -> None:
    # the ordering takes shortcuts for runs already sorted by score (ties listed in ascending or
    # descending docid order); every layout must give score descending, ties docid descending
    if layout != "file":
        rows = sorted(rows, key=lambda r: (r[0], -r[2], f"d{r[1]:02d}"))
        if layout == "score, ties descending":
            rows = sorted(rows, key=lambda r: (r[0], -r[2], [-ord(c) for c in f"d{r[1]:02d}"]))
    data = "".join(f"{q} Q0 d{d:02d} 1 {s} t\n" for q, d, s in rows).encode()
    run = read_run(data)
    for q in run.qids:
        mine = [(f"d{d:02d}", s) for qq, d, s in rows if qq == q]
        want = [d for d, _ in sorted(mine, key=lambda m: (-m[1], [-ord(c) for c in m[0]]))]
        assert run.ranking(q) == want


def test_hashes_computed_while_reading_equal_docid_hashes() -> None:
    # read_run hashes docids chunk by chunk (from the words it gathers, whatever the chunk's
    # widest docid); evaluation matches them against docid_hashes of the qrels
    rnd = random.Random(3)
    lines = []
    for i in range(60_000):
        doc = "".join(rnd.choice("abcXYZ019-") for _ in range(rnd.choice([1, 7, 8, 9, 16, 23])))
        lines.append(f"q{i // 500} Q0 {doc}{i} 1 {rnd.random()!r} t\n")
    run = read_run("".join(lines).encode())
    assert np.array_equal(run.hashes, docid_hashes(run.docids))


# -- pieces -------------------------------------------------------------------------------


class _Trickle(io.RawIOBase):
    """A binary stream that hands out at most ``step`` bytes per read."""

    def __init__(self, data: bytes, step: int) -> None:
        self.data, self.pos, self.step = data, 0, step

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        n = self.step if n < 0 else min(n, self.step)
        out = self.data[self.pos : self.pos + n]
        self.pos += len(out)
        return out


@pytest.fixture
def small_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pieces of a few hundred bytes (the heap primed from the third kilobyte on)."""
    monkeypatch.setattr(_pieces, "_FIRST_CHUNK", 300)
    monkeypatch.setattr(_pieces, "_CHUNK", 700)
    monkeypatch.setattr(_tokenizer, "_PRIME_FROM", 2000)


@pytest.mark.usefixtures("small_pieces")
def test_many_pieces_keep_rows_lines_and_problems_in_order() -> None:
    lines = [f"q{i % 7} Q0 d{i} {i} {i / 8} t{i // 900}\n" for i in range(3000)]
    lines[10] = "# a comment\n"
    lines[2500] = "\n"
    good = "".join(lines).encode()
    run = read_run(good)
    want = [i for i in range(3000) if i not in (10, 2500)]
    assert len(run) == len(want)
    assert run.tags == ("t0", "t1", "t2", "t3")
    for q in run.qids:
        rows = [i for i in want if f"q{i % 7}" == q]
        assert run.scores_of(q) == {f"d{i}": i / 8 for i in rows}
    bad = list(lines)
    bad[5] = "q1 Q0 dA 1 x t\n"
    bad[2999] = "q1 Q0 dB 1 y t\n"
    bad[1777] = "q0 Q0 d7 1 1 t0\n"  # duplicate of line 8 (q0, d7)
    err = _errors("".join(bad).encode())
    assert [p.line for p in err.problems] == [6, 1778, 3000]
    assert "first on line 8" in err.problems[1].message


@pytest.mark.usefixtures("small_pieces")
def test_a_line_longer_than_a_piece_and_a_trickling_stream_read_whole() -> None:
    long_doc = "d" + "x" * 2000
    data = f"q1 Q0 {long_doc} 1 2.5 t\nq1 Q0 d2 2 1.5 t\n".encode()
    data += "".join(f"q2 Q0 e{i} {i} {i}.25 t\n" for i in range(400)).encode()
    for src in (data, _Trickle(data, 97), io.BytesIO(gzip.compress(data))):
        run = read_run(src)  # type: ignore[arg-type]
        assert run.ranking("q1") == [long_doc, "d2"]
        assert len(run) == 402
        assert run.scores_of("q2")["e399"] == 399.25
