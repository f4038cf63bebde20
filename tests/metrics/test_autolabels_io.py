"""Imported automatic labels: TREC qrels and UMBRELA's JSONL (metrics/io/autolabels.py).

The UMBRELA records follow castorini/umbrela's documented output (``prepare_judgments``: model,
query, passage, prompt, prediction, judgment, result_status) and its batch input (query
{text, qid}, candidates [{docid, doc: {segment}}]).
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from typing import Any

import pytest

from metrics.io import InvalidInput, Limits, read_qrels
from metrics.io.autolabels import (
    NEGATIVE_GRADE,
    UNPARSED,
    AutoLabel,
    read_trec_labels,
    read_umbrela_jsonl,
)
from tests._shared_data import needs_shared_data, shared_data_path


def jsonl(*records: Any) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def problems_of(info: pytest.ExceptionInfo[InvalidInput]) -> list[tuple[int, str]]:
    return [(p.line, p.message) for p in info.value.problems]


# --------------------------------------------------------------------------------------------
# TREC qrels


def test_trec_labels_are_rows_without_extras():
    labels = read_trec_labels(b"601 0 d2 0\n601 0 d1 2\n602 0 d3 1\n", source="auto.qrels")
    assert labels.format == "trec"
    assert set(labels) == {
        AutoLabel("601", "d1", 2),
        AutoLabel("601", "d2", 0),
        AutoLabel("602", "d3", 1),
    }
    assert labels.warnings == () and labels.models() == set()


def test_trec_negative_grades_are_left_out_with_a_warning():
    labels = read_trec_labels(b"601 0 d1 -1\n601 0 d2 1\n")
    assert [(r.docid, r.grade) for r in labels] == [("d2", 1)]
    (warning,) = labels.warnings
    assert warning.message == NEGATIVE_GRADE and warning.total == 1
    assert str(warning) == f"1 entry with {NEGATIVE_GRADE}"


def test_trec_problems_have_line_numbers():
    with pytest.raises(InvalidInput) as info:
        read_trec_labels(b"601 0 d1 1\n601 0 d2\n601 0 d1 2\n", source="auto.qrels")
    lines = [p.line for p in info.value.problems]
    assert lines == [2, 3]  # too few fields; d1 judged twice
    assert str(info.value).startswith("auto.qrels line 2:")


def test_trec_labels_outside_the_scale_are_refused():
    with pytest.raises(InvalidInput) as info:
        read_trec_labels(b"601 0 d1 3\n", scale=[0, 1, 2])
    assert info.value.problems[0].line == 1


def test_trec_to_qrels_round_trips():
    data = b"601 0 d1 2\n601 0 d2 0\n602 0 d3 1\n"
    assert read_trec_labels(data).to_qrels().to_dict() == read_qrels(data).to_dict()


@needs_shared_data("robust03", "qrels.txt")
def test_robust03_qrels_read_as_automatic_labels():
    path = shared_data_path("robust03", "qrels.txt")
    labels = read_trec_labels(path)
    # an independent count: split every line by hand
    by_hand = Counter(int(line.split()[3]) for line in path.read_text().splitlines() if line)
    assert len(labels) == 128_796 == sum(by_hand.values())
    assert Counter(r.grade for r in labels) == by_hand
    assert len({r.qid for r in labels}) == 100


# --------------------------------------------------------------------------------------------
# UMBRELA JSONL

REQUESTS = jsonl(
    {
        "query": {"text": "international organized crime", "qid": "301"},
        "candidates": [
            {"docid": "FBIS3-10082", "doc": {"segment": "Police arrested  the smugglers."}},
            {"docid": "FT921-5", "doc": {"segment": "Stock prices rose."}},
        ],
    },
    {
        "query": {"text": "hubble telescope achievements", "qid": "303"},
        "candidates": [{"docid": "LA0101-1", "doc": {"segment": "Hubble saw a galaxy."}}],
    },
)


def judgment(query: str, passage: str, grade: Any, status: Any = 1, **extra: Any) -> dict[str, Any]:
    out = {
        "model": "gpt-4o",
        "query": query,
        "passage": passage,
        "prompt": f"Given a query and a passage ... Query: {query}\nPassage: {passage}\n...",
        "prediction": f"##final score: {grade}",
        "judgment": grade,
        "result_status": status,
    }
    out.update(extra)
    return out


OUTPUT = [
    judgment("international organized crime", "Police arrested the smugglers.", 3),
    judgment("international organized crime", "Stock prices rose.", 0, status=0),
    judgment("hubble telescope achievements", "Hubble saw a galaxy.", 2),
]


def test_umbrela_output_is_tied_to_ids_by_the_requests_file():
    labels = read_umbrela_jsonl(jsonl(*OUTPUT), source="judgments.jsonl", requests=REQUESTS)
    assert labels.format == "umbrela"
    assert [(r.qid, r.docid, r.grade, r.line, r.parsed) for r in labels] == [
        ("301", "FBIS3-10082", 3, 1, True),
        ("301", "FT921-5", 0, 2, False),
        ("303", "LA0101-1", 2, 3, True),
    ]
    assert labels.rows[0].answer == "##final score: 3"
    assert labels.models() == {"gpt-4o"}


def test_unparsed_answers_are_kept_flagged_and_can_be_dropped():
    labels = read_umbrela_jsonl(jsonl(*OUTPUT), requests=REQUESTS)
    (warning,) = labels.warnings
    assert (warning.message, warning.total, warning.lines) == (UNPARSED, 1, (2,))
    assert labels.to_qrels().to_dict() == {
        "301": {"FBIS3-10082": 3, "FT921-5": 0},
        "303": {"LA0101-1": 2},
    }
    assert labels.to_qrels(parsed_only=True).to_dict() == {
        "301": {"FBIS3-10082": 3},
        "303": {"LA0101-1": 2},
    }


def test_records_with_their_own_ids_need_nothing_else():
    data = jsonl(
        {"qid": "601", "docid": "d1", "judgment": 1},
        {"query": {"qid": 602, "text": "t"}, "docid": 7, "judgment": 0, "model": "llama"},
    )
    labels = read_umbrela_jsonl(data)
    assert [(r.qid, r.docid, r.grade, r.parsed, r.model) for r in labels] == [
        ("601", "d1", 1, None, None),
        ("602", "7", 0, None, "llama"),
    ]


def test_records_are_found_by_their_texts():
    queries = {"301": "international organized crime", "303": "hubble telescope achievements"}
    passages = {
        "FBIS3-10082": "Police arrested the smugglers.",
        "FT921-5": "Stock   prices rose.",  # white space is collapsed before matching
        "LA0101-1": "Hubble saw a galaxy.",
    }
    labels = read_umbrela_jsonl(jsonl(*OUTPUT), queries=queries, passages=passages)
    assert [(r.qid, r.docid) for r in labels] == [
        ("301", "FBIS3-10082"),
        ("301", "FT921-5"),
        ("303", "LA0101-1"),
    ]


def test_ambiguous_or_unknown_texts_are_problems():
    queries = {"301": "international organized crime"}
    passages = {"a": "Stock prices rose.", "b": "Stock prices rose.", "c": "other"}
    data = jsonl(OUTPUT[1], OUTPUT[0])
    with pytest.raises(InvalidInput) as info:
        read_umbrela_jsonl(data, queries=queries, passages=passages)
    assert problems_of(info) == [
        (1, "the passage text 'Stock prices rose.' matches 2 passages ('a', 'b'): give ids"),
        (2, "the passage text 'Police arrested the smugglers.' matches no given passage"),
    ]


def test_without_any_way_to_find_ids_the_reader_says_what_to_give():
    with pytest.raises(InvalidInput) as info:
        read_umbrela_jsonl(jsonl(OUTPUT[0]), source="j.jsonl")
    assert str(info.value) == (
        "j.jsonl line 1: no qid and docid: give the requests file UMBRELA judged, or the "
        "topics' and documents' texts"
    )


def test_files_from_different_runs_are_not_paired():
    other = [OUTPUT[0], judgment("international organized crime", "Something else.", 1)]
    with pytest.raises(InvalidInput) as info:
        read_umbrela_jsonl(jsonl(*other), requests=REQUESTS)
    assert problems_of(info) == [
        (
            2,
            "the passage differs from the requests file's candidate 2 (docid 'FT921-5', line 1):"
            " are these files from one run?",
        )
    ]


def test_a_judgment_count_that_differs_from_the_requests_is_a_problem():
    with pytest.raises(InvalidInput) as info:
        read_umbrela_jsonl(jsonl(*OUTPUT[:2]), source="j.jsonl", requests=REQUESTS)
    assert problems_of(info) == [
        (0, "the requests file has 3 candidates but j.jsonl only 2 judgments")
    ]
    with pytest.raises(InvalidInput) as info:
        read_umbrela_jsonl(jsonl(*OUTPUT, OUTPUT[2]), requests=REQUESTS)
    assert problems_of(info) == [(4, "record 4 has no candidate in the requests file (it has 3)")]


def test_a_bad_requests_file_is_reported():
    bad = jsonl({"query": "no ids", "candidates": ["text"]})
    with pytest.raises(InvalidInput) as info:
        read_umbrela_jsonl(jsonl(*OUTPUT), requests=bad)
    assert info.value.problems[0].line == 0
    assert "the requests file is invalid:" in info.value.problems[0].message
    assert "line 1: a request needs query.qid and query.text" in info.value.problems[0].message


def test_every_bad_line_is_reported_at_once_in_line_order():
    data = b"\n".join(
        [
            json.dumps({"qid": "1", "docid": "a", "judgment": 2}).encode(),
            b'{"qid": "1", "docid": "b", "judgment": ',
            json.dumps({"qid": "1", "docid": "c", "judgment": 4}).encode(),
            json.dumps({"qid": "1", "docid": "d", "judgment": "2"}).encode(),
            json.dumps({"qid": "1", "docid": "e"}).encode(),
            json.dumps({"qid": "1", "docid": "f", "judgment": 1, "result_status": 2}).encode(),
            b"[1, 2]",
            json.dumps({"qid": "1", "docid": "a", "judgment": 0}).encode(),
            json.dumps({"qid": "1", "docid": "g h", "judgment": 0}).encode(),
            b"\xff\xfe",
            b"",
        ]
    )
    with pytest.raises(InvalidInput) as info:
        read_umbrela_jsonl(data, source="bad.jsonl")
    assert problems_of(info) == [
        (2, "not JSON (Expecting value at column 40)"),
        (3, "judgment 4 is outside UMBRELA's 0..3"),
        (4, "judgment '2' is not an integer"),
        (5, "no judgment"),
        (6, "result_status 2 is neither 0 nor 1"),
        (7, "expected a JSON object, found list"),
        (8, "duplicate label of docid 'a' for query '1' (first on line 1)"),
        (9, "docid 'g h' contains white space (no qrels id can)"),
        (10, "not valid UTF-8"),
    ]
    assert info.value.total == 9


def test_id_limits_apply():
    with pytest.raises(InvalidInput) as info:
        read_umbrela_jsonl(
            jsonl({"qid": "1", "docid": "LONGDOCID", "judgment": 1}), limits=Limits(docid_bytes=5)
        )
    assert problems_of(info) == [(1, "docid 'LONGDOCID' is 9 bytes long (UTF-8); the limit is 5")]


def test_umbrelas_json_envelope_is_refused_with_a_pointer():
    envelope = {
        "schema_version": "castorini.cli.v1",
        "repo": "umbrela",
        "command": "judge",
        "artifacts": [{"name": "judgments", "kind": "data", "data": OUTPUT}],
    }
    for text in (json.dumps(envelope), json.dumps(envelope, indent=2)):
        with pytest.raises(InvalidInput) as info:
            read_umbrela_jsonl(text.encode(), source="out.json")
        (problem,) = info.value.problems
        assert problem.line == 1 and "--output json envelope" in problem.message
        assert "--output-file" in problem.message


def test_empty_file():
    with pytest.raises(InvalidInput) as info:
        read_umbrela_jsonl(b"\n  \n")
    assert problems_of(info) == [(0, "no data lines (empty file)")]


def test_gzip_bom_crlf_and_long_answers():
    record = {"qid": "1", "docid": "a", "judgment": 3, "prediction": "x" * 3000}
    data = b"\xef\xbb\xbf" + json.dumps(record).encode() + b"\r\n"
    labels = read_umbrela_jsonl(gzip.compress(data))
    (row,) = labels
    assert (row.qid, row.docid, row.grade) == ("1", "a", 3)
    assert row.answer is not None and len(row.answer) == 2000 and row.answer.endswith("…")


def test_long_lines_are_read_whole():
    # a line longer than the reader's 1 MB chunk, as a long document's prompt would make
    record = {"qid": "1", "docid": "a", "judgment": 1, "prompt": "p" * (3 << 20)}
    labels = read_umbrela_jsonl(jsonl(record, {"qid": "1", "docid": "b", "judgment": 0}))
    assert [(r.docid, r.line) for r in labels] == [("a", 1), ("b", 2)]
    with pytest.raises(InvalidInput) as info:
        read_umbrela_jsonl(jsonl(record), limits=Limits(line_bytes=1 << 20))
    assert info.value.problems[0].line == 1
    assert "the limit is 1,048,576" in info.value.problems[0].message
