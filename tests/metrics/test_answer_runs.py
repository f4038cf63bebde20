"""Answer runs, TREC RAG's generation output (issue 34, point 1): both years' layouts read into
the same answers, every problem named by line and field, the limits, the warnings, the references
as a ranked run that the evaluator scores, and a byte-stable round trip.

The examples follow the track guidelines' own (trec-rag.github.io, 2024 and 2025 guidelines),
shortened; word counts are counted by hand."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics import evaluate, read_run, write_run
from metrics.io import NO_LIMITS, InvalidInput, Limits
from metrics.io.answers import (
    DUPLICATE_CITATION,
    RESPONSE_LENGTH,
    UNCITED_REFERENCE,
    UNCITED_SENTENCE,
    UNKNOWN_FIELDS,
    AnswerRun,
    AnswerSentence,
    TopicAnswer,
    read_answer_run,
    references_run,
    word_count,
    write_answer_run,
)

POTTY = (
    "msmarco_v2.1_doc_51_766815931#2_1606878413",
    "msmarco_v2.1_doc_51_766815931#1_1606876582",
    "msmarco_v2.1_doc_37_463237391#10_984448281",
)
JAIL = (
    "msmarco_v2.1_doc_08_1372849014#4_2447063195",
    "msmarco_v2.1_doc_31_1164420236#2_2098839640",
)
S1 = "Take your toddler to the potty about three times a day."  # 11 words
S2 = "Most toddlers pee four to eight times per day."  # 9 words
S3 = "Money laundering can carry up to 20 years in federal prison."  # 11 words
Q1 = "how often should you take your toddler to the potty when potty training"
Q2 = "how many years in jail for money laundering"


def line(**fields: Any) -> str:
    return json.dumps(fields, ensure_ascii=False)


def jsonl(*records: dict[str, Any] | str) -> bytes:
    return "".join((r if isinstance(r, str) else line(**r)) + "\n" for r in records).encode()


RAG24 = jsonl(
    {
        "run_id": "h2oloo-ragnarok",
        "topic_id": "2027497",
        "topic": Q1,
        "references": list(POTTY),
        "response_length": 20,
        "answer": [{"text": S1, "citations": [2]}, {"text": S2, "citations": [0, 1]}],
    },
    {
        "run_id": "h2oloo-ragnarok",
        "topic_id": "300986",
        "topic": Q2,
        "references": list(JAIL),
        "response_length": 11,
        "answer": [{"text": S3, "citations": [1, 0]}],
    },
)

EXPECTED = AnswerRun(
    "h2oloo-ragnarok",
    (
        TopicAnswer(
            "2027497",
            POTTY,
            (AnswerSentence(S1, (2,)), AnswerSentence(S2, (0, 1))),
            20,
            1,
            Q1,
        ),
        TopicAnswer("300986", JAIL, (AnswerSentence(S3, (1, 0)),), 11, 2, Q2),
    ),
)


def rag25(citations: str) -> bytes:
    """The same answers in the 2025 layout, citations as indices ("index") or ids ("id")."""

    def cite(refs: tuple[str, ...], *idx: int) -> list[Any]:
        return list(idx) if citations == "index" else [refs[i] for i in idx]

    def meta(topic_id: Any, text: str) -> dict[str, Any]:
        return {
            "team_id": "h2oloo",
            "run_id": "h2oloo-ragnarok",
            "type": "automatic",
            "narrative_id": topic_id,
            "narrative": text,
            "prompt": f"Based on trusted sources, answer: {text}",
        }

    return jsonl(
        {
            "metadata": meta(2027497, Q1),  # a number, as the 2025 guidelines' example has it
            "references": list(POTTY),
            "answer": [
                {"text": S1, "citations": cite(POTTY, 2)},
                {"text": S2, "citations": cite(POTTY, 0, 1)},
            ],
        },
        {
            "metadata": meta("300986", Q2),
            "references": list(JAIL),
            "answer": [{"text": S3, "citations": cite(JAIL, 1, 0)}],
        },
    )


def problems_of(data: bytes, **kwargs: Any) -> dict[int, list[str]]:
    with pytest.raises(InvalidInput) as e:
        read_answer_run(data, source="answers.jsonl", **kwargs)
    out: dict[int, list[str]] = {}
    for p in e.value.problems:
        out.setdefault(p.line, []).append(p.message)
    return out


def written(run: AnswerRun) -> bytes:
    out = io.BytesIO()
    write_answer_run(run, out)
    return out.getvalue()


# --------------------------------------------------------------------------------------------
# The two layouts


def test_a_2024_answer_file_is_read_into_the_answers_exactly() -> None:
    run = read_answer_run(RAG24)
    assert run == EXPECTED
    assert run.warnings == ()
    assert len(run) == 2
    assert run.answers[0].words == 20 and run.answers[1].words == 11
    assert run.answers[0].cited == POTTY and run.answers[1].cited == JAIL


@pytest.mark.parametrize("citations", ["index", "id"])
def test_both_2025_citation_forms_read_into_the_same_answers(citations: str) -> None:
    run = read_answer_run(rag25(citations))
    # no response_length in the 2025 layout; team_id, type and prompt are checked, not kept
    want = [
        TopicAnswer(a.topic_id, a.references, a.sentences, None, a.line, a.topic)
        for a in EXPECTED.answers
    ]
    assert run == AnswerRun("h2oloo-ragnarok", tuple(want))


def test_a_bom_crlf_blank_lines_and_gzip_are_read_the_same() -> None:
    messy = b"\xef\xbb\xbf" + RAG24.replace(b"\n", b"\r\n", 1) + b"\n   \n"
    assert read_answer_run(messy).answers == EXPECTED.answers
    assert read_answer_run(gzip.compress(RAG24)).answers == EXPECTED.answers
    assert read_answer_run(io.BytesIO(RAG24)).answers == EXPECTED.answers


def test_a_path_is_read_and_named_in_errors(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(RAG24)
    assert read_answer_run(path) == EXPECTED
    path.write_bytes(b"{}\n")
    with pytest.raises(InvalidInput) as e:
        read_answer_run(str(path))
    assert str(e.value).startswith(f"{path} line 1: run_id: ")


# --------------------------------------------------------------------------------------------
# Errors


def test_every_problem_of_a_file_is_named_by_line_and_field() -> None:
    ok = {
        "run_id": "r",
        "references": ["s1", "s2"],
        "answer": [{"text": "A b.", "citations": [0, 1]}],
    }

    def rec(topic_id: str, **changes: Any) -> dict[str, Any]:
        return {**ok, "topic_id": topic_id, **changes}

    data = jsonl(
        rec("t1"),  # 1: fine
        "not json",  # 2
        "[1, 2]",  # 3
        {"run_id": "r", "topic_id": "t4", "answer": ok["answer"]},  # 4: no references
        rec("t5", references=[]),  # 5
        rec("t6", references=["s1", "s2", "s1"]),  # 6
        rec("t7", references=["s 1", "s2"]),  # 7
        rec("t8", answer=[{"text": "A b.", "citations": [5]}]),  # 8
        rec("t9", answer=[{"text": "A b.", "citations": [1.5, True, "zz", "s2"]}]),  # 9
        rec("t1"),  # 10: a topic again
        rec("t11", run_id="other"),  # 11
        rec("t12", response_length=-3),  # 12
        rec("t13", answer=[{"text": "  ", "citations": [0]}, {"text": "Fine."}]),  # 13
        '{"run_id": "r", "topic_id": "t14", "x": "\xff"}',  # 14: replaced below by a bad byte
        {
            "metadata": {"run_id": "r", "narrative_id": "t15", "type": "semi"},
            **{k: ok[k] for k in ("references", "answer")},
        },  # 15
        '{"run_id": "r", "run_id": "r", "topic_id": "t16", "references": ["s1"], '  # 16
        '"answer": [{"text": "A.", "citations": [0]}]}',
        rec("t\u000117"),  # 17
        rec("t18", answer=[]),  # 18
        rec("t19", response_length="12", topic=7),  # 19
    ).replace("\xff".encode(), b"\xff")
    got = problems_of(data)
    assert sorted(got) == list(range(2, 20))
    assert got[2] == ["not JSON: Expecting value (column 1)"]
    assert got[3] == ["expected a JSON object, found a list"]
    assert got[4] == ["references: must be a list of segment ids, not missing (or null)"]
    assert got[5] == ["references: is empty: an answer cites from at least one segment"]
    assert got[6] == ["references[2]: 's1' given twice (first at references[0])"]
    assert got[7] == ["references[0]: segment id 's 1' contains white space (no TREC id can)"]
    assert got[8] == ["answer[0].citations[0]: 5 is out of range (references 0 to 1)"]
    assert got[9] == [
        "answer[0].citations[0]: must be an index into references or a segment id, not the "
        "number 1.5",
        "answer[0].citations[1]: must be an index into references or a segment id, not true",
        "answer[0].citations[2]: 'zz' is not in references",
    ]
    assert got[10] == ["topic_id: topic 't1' answered twice (first on line 1)"]
    assert got[11] == ["run_id: 'other' differs from 'r' (line 1): one run a file"]
    assert got[12] == ["response_length: must be a non-negative integer, not -3"]
    assert got[13] == [
        "answer[0].text: is blank",
        "answer[1].citations: must be a list, not missing (or null)",
    ]
    assert got[14] == ["not UTF-8 (byte 42 of the line)"]
    assert got[15] == [
        "metadata.team_id: must be a string, not missing (or null)",
        "metadata.type: 'semi' is neither 'manual' nor 'automatic'",
    ]
    assert got[16] == ["run_id: given twice in one object"]
    assert got[17] == [
        "topic_id: topic id 't\\x0117' contains a control character (U+0001 at character 2)"
    ]
    assert got[18] == ["answer: has no sentences"]
    assert got[19] == [
        "topic: must be a string, not an integer",
        'response_length: must be a non-negative integer, not "12"',
    ]


def test_a_2025_file_names_the_fields_of_its_own_layout() -> None:
    lines = rag25("id").splitlines()
    second = json.loads(lines[1])
    second["metadata"].update(run_id="other", narrative_id=2027497)
    second["answer"][0]["text"] = "A NUL \x00 here."
    second["answer"].append({"text": "A lone \ud800 surrogate.", "citations": [0]})
    data = lines[0] + b"\n" + json.dumps(second).encode() + b"\n"
    assert problems_of(data) == {
        2: [
            "answer[0].text: holds a NUL character",
            "answer[1].text: holds a lone surrogate (not a character)",
            "metadata.run_id: 'other' differs from 'h2oloo-ragnarok' (line 1): one run a file",
            "metadata.narrative_id: topic '2027497' answered twice (first on line 1)",
        ]
    }


def test_the_error_names_the_source_the_first_problem_and_how_many_more() -> None:
    data = jsonl("nope", "[]", "3")
    with pytest.raises(InvalidInput) as e:
        read_answer_run(data, source="answers.jsonl", max_problems=2)
    assert [p.line for p in e.value.problems] == [1, 2]  # capped, counted in full
    assert e.value.total == 3
    assert str(e.value) == (
        "answers.jsonl line 1: not JSON: Expecting value (column 1) (and 2 more problems)"
    )
    assert e.value.problems[0].as_dict() == {
        "message": "not JSON: Expecting value (column 1)",
        "line": 1,
    }


def test_a_problem_in_a_field_carries_the_field_as_its_location() -> None:
    data = jsonl(
        {"run_id": "r", "topic_id": "t", "references": [3], "answer": []},
        # a bad run id does not stop the citations from being checked
        {
            "run_id": "r r",
            "topic_id": "u",
            "references": ["s"],
            "answer": [{"text": "x", "citations": [1]}],
        },
    )
    with pytest.raises(InvalidInput) as e:
        read_answer_run(data)
    assert [(p.line, p.location) for p in e.value.problems] == [
        (1, "references[0]"),
        (1, "answer"),
        (2, "run_id"),
        (2, "answer[0].citations[0]"),
    ]


def test_an_empty_file_and_pretty_printed_json_are_refused_once() -> None:
    assert problems_of(b"\n \n") == {0: ["no answers"]}
    pretty = json.dumps(json.loads(RAG24.splitlines()[0]), indent=2).encode()
    assert problems_of(pretty) == {1: ["not one JSON object a line (JSON lines)"]}


def test_a_number_too_long_for_python_or_json_nested_too_deeply_is_a_problem() -> None:
    got = problems_of(
        b'{"response_length": ' + b"9" * 5000 + b"}\n" + b"[" * 100_000 + b"\n", limits=NO_LIMITS
    )
    assert sorted(got) == [1, 2]
    assert got[1][0].startswith("not JSON: ") and "4300 digits" in got[1][0]  # Python's words
    assert got[2] == ["not JSON: nested too deeply"]


# --------------------------------------------------------------------------------------------
# Limits


def test_the_limits_on_references_sentences_and_characters_are_settings() -> None:
    data = RAG24
    assert problems_of(data, max_references=2) == {1: ["references: 3 segment ids; the limit is 2"]}
    assert problems_of(data, max_sentences=1) == {1: ["answer: 2 sentences; the limit is 1"]}
    assert problems_of(data, max_sentence_chars=50) == {
        1: ["answer[0].text: 55 characters; the limit is 50"],
        2: ["answer[0].text: 60 characters; the limit is 50"],
    }
    unbounded = read_answer_run(
        data, max_references=None, max_sentences=None, max_sentence_chars=None
    )
    assert unbounded == EXPECTED


def test_ids_over_the_limits_are_named() -> None:
    got = problems_of(RAG24, limits=Limits(docid_bytes=42, qid_bytes=6, tag_bytes=10))
    too_long = "run_id: run id 'h2oloo-ragnarok' is 15 bytes long (UTF-8); the limit is 10"
    assert got == {
        1: [too_long, "topic_id: topic id '2027497' is 7 bytes long (UTF-8); the limit is 6"],
        2: [
            too_long,
            "references[0]: segment id 'msmarco_v2.1_doc_08_1372849014#4_2447...' is 43 bytes "
            "long (UTF-8); the limit is 42",
            "references[1]: segment id 'msmarco_v2.1_doc_31_1164420236#2_2098...' is 43 bytes "
            "long (UTF-8); the limit is 42",
        ],
    }


def test_a_line_over_the_limit_is_named_with_its_length_among_the_others() -> None:
    long = line(
        run_id="h2oloo-ragnarok",
        topic_id="t2",
        references=["s"],
        answer=[{"text": "x" * 5000, "citations": [0]}],
    )
    data = jsonl(RAG24.splitlines()[0].decode(), long, "oops")
    got = problems_of(data, limits=Limits(line_bytes=1000))
    assert got == {
        2: [f"the line is {len(long):,} bytes long; the limit is 1,000"],
        3: ["not JSON: Expecting value (column 1)"],
    }
    run = read_answer_run(data.rsplit(b"oops", 1)[0], limits=NO_LIMITS, max_sentence_chars=None)
    assert run.answers[1].sentences[0].text == "x" * 5000


# --------------------------------------------------------------------------------------------
# Warnings


def test_unusual_answers_are_accepted_with_warnings_naming_their_lines() -> None:
    data = jsonl(
        {  # 1: a response_length that counts differently, an uncited reference
            "run_id": "r",
            "topic_id": "t1",
            "references": ["s1", "s2"],
            "response_length": 3,
            "answer": [{"text": "  Two\u00a0 words  ", "citations": [0]}],
        },
        {  # 2: a sentence without citations, one reference cited twice, an unknown field
            "run_id": "r",
            "topic_id": "t2",
            "references": ["s1"],
            "response_length": 4,
            "answer": [
                {"text": "No source here.", "citations": []},
                {"text": "Twice.", "citations": [0, "s1"], "score": 0.9},
            ],
        },
    )
    run = read_answer_run(data)
    assert run.answers[0].words == 2  # NBSP is white space; the ends are stripped
    assert run.answers[1].sentences[1] == AnswerSentence("Twice.", (0,))
    assert {w.message: (w.total, w.lines) for w in run.warnings} == {
        RESPONSE_LENGTH: (1, (1,)),
        UNCITED_REFERENCE: (1, (1,)),
        UNCITED_SENTENCE: (1, (2,)),
        DUPLICATE_CITATION: (1, (2,)),
        UNKNOWN_FIELDS: (1, (2,)),
    }
    assert str(run.warnings[0]) == f"1 line with {RESPONSE_LENGTH}: line 1"


def test_a_warning_counts_each_line_once_and_names_the_first_ten() -> None:
    records = [
        {
            "run_id": "r",
            "topic_id": f"t{i}",
            "references": ["a", "b"],
            "answer": [{"text": "x", "citations": []}, {"text": "y", "citations": []}],
        }
        for i in range(12)
    ]
    run = read_answer_run(jsonl(*records))
    uncited = next(w for w in run.warnings if w.message == UNCITED_SENTENCE)
    assert uncited.total == 12 and uncited.lines == tuple(range(1, 11))


def test_words_are_counted_as_the_track_checker_counts_them() -> None:
    # NFKC turns the ideographic space and the ligature into plain text before the split
    assert word_count([" one  two ", "three\u3000four", "\ufb01ve"]) == 5
    assert word_count([S1, S2]) == 20 and word_count([S3]) == 11


# --------------------------------------------------------------------------------------------
# The references as a run


def test_the_references_are_a_ranked_run_in_submitted_order() -> None:
    run = references_run(read_answer_run(RAG24))
    assert run.tag == "h2oloo-ragnarok"
    assert run.qids == ("2027497", "300986")
    assert run.ranking("2027497") == list(POTTY)
    assert run.scores_of("2027497") == {POTTY[0]: 3.0, POTTY[1]: 2.0, POTTY[2]: 1.0}
    assert run.scores_of("300986") == {JAIL[0]: 2.0, JAIL[1]: 1.0}
    out = io.BytesIO()
    write_run(run, out)
    assert out.getvalue().decode().splitlines()[0] == (
        f"2027497 Q0 {POTTY[0]} 1 3.0 h2oloo-ragnarok"
    )
    assert read_run(out.getvalue()).ranking("2027497") == list(POTTY)


def test_the_references_run_is_evaluated_like_any_run() -> None:
    qrels = {"2027497": {POTTY[1]: 1, POTTY[2]: 2, "other": 0}, "300986": {JAIL[0]: 1}}
    result = evaluate(
        qrels, references_run(read_answer_run(RAG24)), ["P@2", "AP"], compat="trec_eval"
    )
    # by hand: 2027497 relevant at ranks 2 and 3: P@2 = 1/2, AP = (1/2 + 2/3) / 2;
    # 300986 relevant at rank 1 of 2: P@2 = 1/2, AP = 1
    assert result.per_query["P@2"] == pytest.approx({"2027497": 0.5, "300986": 0.5})
    assert result.per_query["AP"] == pytest.approx({"2027497": 7 / 12, "300986": 1.0})
    assert result.run == "h2oloo-ragnarok"


# --------------------------------------------------------------------------------------------
# Writing


def test_a_run_is_written_in_the_2024_layout_with_its_keys_in_order() -> None:
    first = written(EXPECTED).splitlines()[0].decode()
    assert first == (
        '{"run_id": "h2oloo-ragnarok", "topic_id": "2027497", "topic": "' + Q1 + '", '
        '"references": ["' + '", "'.join(POTTY) + '"], "response_length": 20, '
        '"answer": [{"text": "' + S1 + '", "citations": [2]}, '
        '{"text": "' + S2 + '", "citations": [0, 1]}]}'
    )
    assert written(EXPECTED) == RAG24  # the example is already canonical


@pytest.mark.parametrize(
    "data", [RAG24, rag25("index"), rag25("id")], ids=["2024", "2025-index", "2025-id"]
)
def test_read_write_read_is_the_same_run_and_write_read_write_the_same_bytes(data: bytes) -> None:
    run = read_answer_run(data)
    once = written(run)
    again = read_answer_run(once)
    assert again == run
    assert written(again) == once


def test_a_gz_path_is_written_compressed(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl.gz"
    write_answer_run(EXPECTED, path)
    assert gzip.decompress(path.read_bytes()) == RAG24
    assert read_answer_run(path) == EXPECTED


def test_text_keeps_unicode_unescaped_and_reads_back() -> None:
    run = AnswerRun(
        "r",
        (TopicAnswer("t", ("s",), (AnswerSentence('Café "naïve"\n\u2028 ok', (0,)),), None, 1),),
    )
    data = written(run)
    assert "Café".encode() in data and data.count(b"\n") == 1
    assert read_answer_run(data) == run


_ID = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cc", "Cs", "Zs", "Zl", "Zp")),
    min_size=1,
    max_size=12,
).filter(lambda s: not any(c.isspace() for c in s))
_TEXT = st.text(
    st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=40
).filter(lambda s: bool(s.strip()))


@st.composite
def answer_runs(draw: st.DrawFn) -> AnswerRun:
    topics = draw(st.lists(_ID, min_size=1, max_size=4, unique=True))
    answers = []
    for n, topic in enumerate(topics, 1):
        refs = tuple(draw(st.lists(_ID, min_size=1, max_size=6, unique=True)))
        sentences = tuple(
            AnswerSentence(
                draw(_TEXT),
                tuple(draw(st.lists(st.integers(0, len(refs) - 1), max_size=3, unique=True))),
            )
            for _ in range(draw(st.integers(1, 4)))
        )
        length = draw(st.none() | st.integers(0, 10**6))
        answers.append(TopicAnswer(topic, refs, sentences, length, n, draw(st.none() | _TEXT)))
    return AnswerRun(draw(_ID), tuple(answers))


@settings(max_examples=60, deadline=None)
@given(answer_runs())
def test_any_valid_run_round_trips(run: AnswerRun) -> None:
    data = written(run)
    back = read_answer_run(data, limits=NO_LIMITS)
    assert (back.run_id, back.answers) == (run.run_id, run.answers)
    assert written(back) == data
    assert [references_run(back).ranking(a.topic_id) for a in back.answers] == [
        list(a.references) for a in run.answers
    ]


def test_an_answer_run_is_told_from_other_run_files_by_its_first_line() -> None:
    from metrics.io.answers import looks_like_answer_run

    assert looks_like_answer_run(
        b"\n\n" + jsonl({"references": [], "answer": [], "x": "y" * 99999})
    )
    assert not looks_like_answer_run(b'{"401": {"d1": 1.0}}\n')  # a JSON run
    assert not looks_like_answer_run(b"401 Q0 d1 1 2.0 tag\n")
    assert not looks_like_answer_run(b"")
