"""The nugget file reader (``metrics.io.nuggets``): nuggetizer's JSON lines and the TSV, every
problem named with its line (and field), nothing returned on error, and what it writes read
back as it was."""

from __future__ import annotations

import gzip
import io
import json

import pytest

from metrics.io.limits import Limits
from metrics.io.nuggets import DraftNugget, TopicNuggets, read_nuggets, write_nuggets
from metrics.problems import InvalidInput

# castorini/nuggetizer's create output (cli/adapters.py create_output_record), with the extra
# fields it may carry: the query, reasoning traces, a nugget's reasoning and trace
NUGGETIZER = (
    '{"query": "What is Python?", "qid": "q1", "nuggets": ['
    '{"text": "Python is a high-level programming language", "importance": "vital"}, '
    '{"text": "Python was created by Guido van Rossum", "importance": "vital", "reasoning": "r"}, '
    '{"text": "Python is used for web development", "importance": "okay", "trace": {}}], '
    '"creator_reasoning_traces": ["..."]}\n'
    '{"query": "Why?", "qid": 2, "nuggets": []}\n'
)


def problems(data: bytes, **kwargs: object) -> list[str]:
    with pytest.raises(InvalidInput) as caught:
        read_nuggets(data, source="bank.jsonl", **kwargs)  # type: ignore[arg-type]
    return [str(p) for p in caught.value.problems]


def test_nuggetizers_output_is_read_with_its_field_names() -> None:
    got = read_nuggets(NUGGETIZER.encode())
    assert got.layout == "jsonl"
    assert got.topics == (
        TopicNuggets(
            "q1",
            (
                DraftNugget("Python is a high-level programming language", "vital"),
                DraftNugget("Python was created by Guido van Rossum", "vital"),
                DraftNugget("Python is used for web development", "okay"),
            ),
            1,
        ),
        TopicNuggets("2", (), 2),  # a number is read as its decimal string
    )


def test_the_tsv_groups_a_topics_lines_in_file_order() -> None:
    data = (
        b"qid\timportance\ttext\n"
        b"401\tVITAL\tHoney never spoils\n"
        b"402\tokay\tBees make honey\n"
        b"\n"
        b"401\tokay\tIt was found\tin tombs\n"  # the text is the rest of the line, tab and all
    )
    got = read_nuggets(gzip.compress(data))
    assert got.layout == "tsv"
    assert got.topics == (
        TopicNuggets(
            "401",
            (
                DraftNugget("Honey never spoils", "vital"),
                DraftNugget("It was found\tin tombs", "okay"),
            ),
            2,
        ),
        TopicNuggets("402", (DraftNugget("Bees make honey", "okay"),), 3),
    )


def test_every_json_problem_is_named_with_its_line_and_field() -> None:
    data = (
        b'{"qid": "q 1", "nuggets": [{"text": " ", "importance": "failed"}]}\n'
        b'{"qid": "a", "nuggets": [{"text": "x"}, {"text": "X ", "importance": "vital"}, '
        b'{"text": "x", "importance": "okay"}, "y", {"text": 3, "importance": "ok"}]}\n'
        b"not json\n"
        b"[1]\n"
        b'{"qid": "a", "nuggets": {}}\n'
        b'{"qid": "b", "qid": "c", "nuggets": [{"text": "t", "importance": "vital", '
        b'"sources": ["d 1"], "key": "k 1"}]}\n'
    )
    assert problems(data) == [
        "line 1: qid: topic id 'q 1' contains white space",
        "line 1: nuggets[0].text: is blank",
        "line 1: nuggets[0].importance: 'failed' (nuggetizer could not label it): vital or okay",
        "line 2: nuggets[0].importance: missing: 'vital' or 'okay'",
        "line 2: nuggets[2]: the same nugget twice in topic 'a' (first: line 2, nuggets[1])",
        "line 2: nuggets[3]: must be an object {text, importance}, not a string",
        "line 2: nuggets[4].text: must be a string, not an integer",
        "line 2: nuggets[4].importance: 'ok' is neither 'vital' nor 'okay'",
        "line 3: not JSON: Expecting value (column 1)",
        "line 4: expected a JSON object, found a list",
        "line 5: qid: topic 'a' is on two lines (first on line 2)",
        "line 5: nuggets: must be a list of nuggets, not an object",
        "line 6: qid: given twice in one object",
        "line 6: nuggets[0].sources[0]: must be a segment id (a string without white space)",
        "line 6: nuggets[0].key: 'k 1' holds white space or a control character",
    ]


def test_every_tsv_problem_is_named_with_its_line() -> None:
    data = b"401\tvital\tok\n402\tmaybe\tx\n403\tvital\n\tokay\tx\n401\tokay\t\xff\n404\tokay\t \n"
    assert problems(data) == [
        "line 2: importance: 'maybe' is neither 'vital' nor 'okay'",
        "line 3: 2 tab-separated field(s); qid, importance, text",
        "line 4: qid: the topic id is empty",
        "line 5: not UTF-8 (byte 10 of the line)",
        "line 6: text: is blank",
    ]


def test_the_limits_are_checked_where_they_are_broken() -> None:
    data = b"401\tvital\ta\n401\tvital\tb\n401\tvital\tc\n" + b"402\tvital\t" + b"x" * 60 + b"\n"
    assert problems(data, max_nuggets=2, max_text_chars=4, limits=Limits(line_bytes=40)) == [
        "line 3: topic '401' has more than 2 nuggets",
        "line 4: the line is 70 bytes long; the limit is 40",  # 3 + 1 + 5 + 1 + 60
    ]
    assert problems(b"401\tvital\tabcde\n", max_text_chars=4) == [
        "line 1: text: 5 characters; the limit is 4"
    ]
    long_qid = b"x" * 5 + b"\tvital\tt\n"
    assert problems(long_qid, limits=Limits(qid_bytes=4)) == [
        "line 1: qid: topic id 'xxxxx' is 5 bytes long (UTF-8); the limit is 4"
    ]


def test_an_empty_file_is_a_problem() -> None:
    assert problems(b"\n\n") == ["no topic's nuggets in the file"]
    with pytest.raises(InvalidInput, match=r"^bank.jsonl line 1: qid: the topic id is empty"):
        read_nuggets(b'{"qid": "", "nuggets": []}\n', source="bank.jsonl")


def test_what_is_written_reads_back_the_same_and_writes_the_same_bytes() -> None:
    topics = (
        TopicNuggets(
            "401",
            (
                DraftNugget("Honey never spoils", "vital", ("d401-1", "d401-2"), "n1"),
                DraftNugget("Miel: é, 漢字 and a\ttab", "okay", (), "n7"),
            ),
            1,
        ),
        TopicNuggets("402", (DraftNugget("Bees", "okay"),), 2),
    )
    out = io.BytesIO()
    write_nuggets(topics, out)
    written = out.getvalue()
    assert json.loads(written.splitlines()[0]) == {
        "qid": "401",
        "nuggets": [
            {"text": "Honey never spoils", "importance": "vital", "sources": ["d401-1", "d401-2"],
             "key": "n1"},
            {"text": "Miel: é, 漢字 and a\ttab", "importance": "okay", "key": "n7"},
        ],
    }  # fmt: skip
    assert "漢字".encode() in written  # UTF-8 as is, not escaped
    back = read_nuggets(written)
    assert back.topics == topics
    again = io.BytesIO()
    write_nuggets(back.topics, again)
    assert again.getvalue() == written
