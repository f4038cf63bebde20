"""Input as trec_eval reads it: NaN and infinite scores, fields after the sixth (issue 13).

Accepted with a warning naming the lines; NaN ranked after every other document of its query,
NaNs among themselves by docid descending; infinities ordered as numbers. What stays an error
(a score that is not a number, a duplicate, too few fields) stays one, with its line.
"""

from __future__ import annotations

import io
import math
from pathlib import Path

import pytest

from metrics import Evaluator, Qrels, ReadWarning, Run, parse_run, read_qrels, read_run
from metrics.cli.app import main
from metrics.io import InvalidInput, _pieces
from metrics.io._reference import read_reference

NAN = "a NaN score (ranked after every other document of its query)"
INF = "an infinite score (out of range or inf, ordered as a number)"
EXTRA = "more than 6 fields (the fields after the sixth are ignored)"


def _run(rows: list[tuple[str, str, str]], extra: str = "") -> bytes:
    return "".join(f"{q} Q0 {d} {i} {s} t{extra}\n" for i, (q, d, s) in enumerate(rows)).encode()


# -- NaN -------------------------------------------------------------------------------------


def test_nan_scores_rank_after_every_other_document_and_among_themselves_by_docid_desc() -> None:
    data = _run(
        [
            ("1", "b", "NaN"),
            ("1", "a", "0.5"),
            ("1", "d", "nan"),
            ("1", "e", "-inf"),
            ("1", "c", "-NAN"),
            ("1", "f", "+nan"),
            ("1", "g", "-1e300"),
        ]
    )
    run = read_run(data)
    assert run.ranking("1") == ["a", "g", "e", "f", "d", "c", "b"]
    assert [math.isnan(s) for s in run.scores.tolist()] == [1, 0, 1, 0, 1, 1, 0]


@pytest.mark.parametrize(
    "rows",
    [
        # already score-descending, NaNs at the end, docids ascending (the file order shortcuts)
        [("1", "a", "2"), ("1", "b", "1"), ("1", "c", "NaN"), ("1", "d", "NaN")],
        # NaN first and in between
        [("1", "c", "NaN"), ("1", "a", "2"), ("1", "d", "NaN"), ("1", "b", "1")],
        # NaNs listed descending already
        [("1", "a", "2"), ("1", "b", "1"), ("1", "d", "NaN"), ("1", "c", "NaN")],
    ],
)
def test_nan_order_is_the_same_whatever_the_file_order(rows: list[tuple[str, str, str]]) -> None:
    run = read_run(_run([*rows, ("2", "z", "NaN"), ("2", "y", "1")]))
    assert run.ranking("1") == ["a", "b", "d", "c"]
    assert run.ranking("2") == ["y", "z"]


def test_nan_placement_counts_in_the_measures() -> None:
    # d (relevant) scores NaN: ranked 3rd, after the -inf document, so P@2 = 0.5 and RR = 1
    run = read_run(_run([("1", "d", "NaN"), ("1", "a", "1"), ("1", "b", "-inf")]))
    qrels = Qrels.from_dict({"1": {"a": 1, "b": 0, "d": 1}})
    res = Evaluator(qrels, ["P@2", "P@3", "AP"], compat="trec_eval", ci=None).evaluate(run)
    assert res.value("P@2") == 0.5
    assert res.value("P@3") == pytest.approx(2 / 3)
    assert res.value("AP") == pytest.approx((1 + 2 / 3) / 2)


# -- infinities ------------------------------------------------------------------------------


def test_infinities_and_overflow_read_as_strtod_and_order_as_numbers() -> None:
    data = _run(
        [
            ("1", "a", "1e308"),
            ("1", "b", "inf"),
            ("1", "c", "-Infinity"),
            ("1", "d", "1e309"),
            ("1", "e", "-1e999"),
            ("1", "f", "0"),
            ("1", "g", "INF"),
        ]
    )
    table = parse_run(data)
    assert table.scores.tolist() == [1e308, math.inf, -math.inf, math.inf, -math.inf, 0, math.inf]
    run = read_run(data)
    # ties at +inf and at -inf broken by docid descending, as any tie
    assert run.ranking("1") == ["g", "d", "b", "a", "f", "e", "c"]
    assert run.warnings == (ReadWarning(INF, 5, (2, 3, 4, 5, 7)),)


def test_float32_scores_keep_nan_and_turn_doubles_beyond_float_into_infinities() -> None:
    run = read_run(_run([("1", "a", "1e300"), ("1", "b", "NaN"), ("1", "c", "-1e300")]))
    f32 = run.with_float32_scores()
    assert f32.scores[0] == math.inf and math.isnan(f32.scores[1]) and f32.scores[2] == -math.inf
    assert f32.ranking("1") == ["a", "c", "b"]
    assert f32.warnings == run.warnings


def test_from_dict_accepts_nan_and_infinite_scores() -> None:
    run = Run.from_dict({"1": {"a": math.nan, "b": -math.inf, "c": 1.0}})
    assert run.ranking("1") == ["c", "b", "a"]


# -- fields after the sixth ------------------------------------------------------------------


def test_fields_after_the_sixth_are_ignored_as_trec_eval_does() -> None:
    # trec_eval's results.trunc: text after the tag, "reserved for future expansion"
    rows = [("1", "a", "2.5"), ("1", "b", "3.5"), ("2", "c", "1")]
    plain = read_run(_run(rows))
    longer = read_run(_run(rows, " extra text\twith  tabs"))
    assert longer.to_dict() == plain.to_dict()
    assert longer.tags == ("t",)
    assert plain.warnings == ()
    assert longer.warnings == (ReadWarning(EXTRA, 3, (1, 2, 3)),)
    table = parse_run(_run(rows, " x"))
    assert table.tags == ["t"] and table.ranks.tolist() == [0, 1, 2]
    assert table.warnings == (ReadWarning(EXTRA, 3, (1, 2, 3)),)


def test_qrels_still_need_exactly_four_fields() -> None:
    with pytest.raises(InvalidInput) as info:
        read_qrels(b"1 0 a 1\n1 0 b 1 extra\n")
    assert [(p.line, p.message) for p in info.value.problems] == [
        (2, "expected 4 fields (qid iteration docid grade), found 5")
    ]


# -- warnings --------------------------------------------------------------------------------


def test_warnings_name_each_kind_with_its_count_and_first_ten_lines() -> None:
    lines = [f"1 Q0 d{i} {i} {'NaN' if i % 2 else '1'} t\n" for i in range(30)]
    lines[4] = "1 Q0 d4 4 -inf t more\n"
    lines.insert(0, "# a comment\n")
    run = read_run("".join(lines).encode())
    nan, inf, extra = run.warnings
    assert nan == ReadWarning(NAN, 15, (3, 5, 7, 9, 11, 13, 15, 17, 19, 21))
    assert inf == ReadWarning(INF, 1, (6,)) and extra == ReadWarning(EXTRA, 1, (6,))
    assert str(nan) == (f"15 lines with {NAN}: lines 3, 5, 7, 9, 11, 13, 15, 17, 19, 21 and 5 more")
    assert str(inf) == f"1 line with {INF}: line 6"
    assert nan.as_dict() == {"message": NAN, "count": 15, "lines": list(nan.lines)}


def test_warning_lines_are_the_files_across_many_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_pieces, "_FIRST_CHUNK", 64)
    monkeypatch.setattr(_pieces, "_CHUNK", 160)
    lines = [f"q{i // 7} Q0 d{i} 1 {i}.5 t\n" for i in range(400)]
    for at in (17, 150, 151, 398):
        lines[at] = f"q{at // 7} Q0 d{at} 1 nan t\n"
    lines[200] = f"q{200 // 7}  Q0 d200 1 inf t x\n"  # a layout for the general whitespace pass
    lines[300] = "q42 Q0 d300 1 1 t x\n"
    lines[301] = "q43 Q0 d301\n"  # too few fields: this piece is read line by line
    data = "".join(lines).encode()
    with pytest.raises(InvalidInput) as info:
        read_run(data)
    assert [p.line for p in info.value.problems] == [302]
    lines[301] = "q43 Q0 d301 1 -1e999 t x y\n"
    run = read_run("".join(lines).encode())
    assert run.warnings == (
        ReadWarning(NAN, 4, (18, 151, 152, 399)),
        ReadWarning(INF, 2, (201, 302)),
        ReadWarning(EXTRA, 3, (201, 301, 302)),
    )
    ref = read_reference("".join(lines).encode(), run=True)
    assert ref.warnings == {"nan": [18, 151, 152, 399], "inf": [201, 302], "extra": [201, 301, 302]}


def test_a_clean_run_has_no_warnings() -> None:
    assert read_run(_run([("1", "a", "1.5"), ("1", "b", "-2e5")])).warnings == ()


# -- what stays an error ---------------------------------------------------------------------


@pytest.mark.parametrize("bad", [b"abc", b"nan(1)", b"0x1p3", b"infinit", b"n", b"1_0", b"--1"])
def test_scores_that_are_not_numbers_stay_errors_with_their_line(bad: bytes) -> None:
    with pytest.raises(InvalidInput) as info:
        read_run(b"1 Q0 a 1 NaN t\n1 Q0 b 2 " + bad + b" t\n")
    assert [(p.line, p.message) for p in info.value.problems] == [
        (2, f"score {bad.decode()!r} is not a number")
    ]


def test_duplicates_and_short_lines_stay_errors_even_with_nan_or_extra_fields() -> None:
    data = b"1 Q0 a 1 NaN t x\n1 Q0 a 2 nan t\n1 Q0 b 3 inf\n"
    with pytest.raises(InvalidInput) as info:
        read_run(data)
    assert [(p.line, p.message) for p in info.value.problems] == [
        (2, "duplicate docid 'a' for query '1' (first on line 1)"),
        (3, "expected 6 fields (qid Q0 docid rank score tag), found 5"),
    ]


# -- the command line ------------------------------------------------------------------------


def test_cli_prints_the_warnings_on_stderr_and_evaluates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 a 1\n1 0 b 1\n")
    run = tmp_path / "run.txt"
    run.write_text("1 Q0 a 1 NaN t\n1 Q0 b 2 1 t extra\n1 Q0 c 3 0 t\n")
    out = io.StringIO()
    assert main(["evaluate", str(qrels), str(run), "-m", "P@1", "--compat", "trec_eval"], out) == 0
    assert out.getvalue().split() == ["P@1", "all", "1.0000"]
    err = capsys.readouterr().err
    assert f"{run}: warning: 1 line with {NAN}: line 1" in err
    assert f"{run}: warning: 1 line with {EXTRA}: line 2" in err


@pytest.mark.parametrize(
    "command",
    [
        ["bias", "--depth", "1"],
        ["bias", "estimators", "--depth", "1", "-m", "P@1"],
        ["pool", "build", "--depth", "1"],
    ],
)
def test_every_command_that_reads_runs_says_what_it_accepted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    """Not only ``evaluate``: the bias and pool commands read runs through the same helper."""
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 a 1\n1 0 b 1\n1 0 c 0\n")
    odd = tmp_path / "odd.txt"
    odd.write_text("1 Q0 a 1 NaN odd\n1 Q0 b 2 1 odd\n")
    plain = tmp_path / "plain.txt"
    plain.write_text("1 Q0 c 1 2 plain\n1 Q0 b 2 1 plain\n")
    runs = [str(odd), str(plain)]
    if command[0] == "pool":
        argv = [*command, "--runs", *runs, "-o", str(tmp_path / "pool.txt")]
    else:
        argv = (
            [*command[:2], str(qrels), *runs, *command[2:]]
            if command[1] == "estimators"
            else [command[0], str(qrels), *runs, *command[1:]]
        )
    assert main(argv, io.StringIO()) == 0
    assert f"{odd}: warning: 1 line with {NAN}: line 1" in capsys.readouterr().err


@pytest.mark.parametrize("sub", [[], ["estimators"], ["reusability"]])
def test_two_run_files_with_one_tag_are_refused_by_every_bias_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], sub: list[str]
) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 a 1\n1 0 b 0\n")
    first, second = tmp_path / "one.txt", tmp_path / "two.txt"
    for path in (first, second):
        path.write_text("1 Q0 a 1 2 same\n1 Q0 b 2 1 same\n")
    argv = ["bias", *sub, str(qrels), str(first), str(second)]
    assert main(argv, io.StringIO()) == 3
    assert f"run tag 'same' appears in two files (the second: {second})" in capsys.readouterr().err
