"""Topic and document file parsers: every format, every problem kind, and the Cranfield files."""

from __future__ import annotations

import gzip
import io
import json
import pickle
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judging.campaigns.formats import (
    DOCUMENT_FORMATS,
    TOPIC_FORMATS,
    DocumentRecord,
    TopicRecord,
    detect_document_format,
    detect_topic_format,
    iter_documents,
    parse_documents,
    parse_topics,
)
from metrics.problems import InvalidInput, Problem
from tests._shared_data import SHARED_DATA, needs_shared_data


def problems_of(excinfo: pytest.ExceptionInfo[InvalidInput]) -> list[tuple[int, str]]:
    return [(p.line, p.message) for p in excinfo.value.problems]


# --------------------------------------------------------------------------- TREC topics

ROBUST_TOPICS = """\
<top>
<num> Number: 601
<title> Turkey Iraq water

<desc> Description:
Identify any attempts by Turkey
to limit water flow to Iraq.

<narr> Narrative:
A relevant document will discuss
the Ataturk dam.
</top>

<top>
<num> Number: 602
<title> Czech, Slovak sovereignty
<desc> Description:
Who is sovereign?
</top>
"""


def test_trec_topics_strip_labels_and_collapse_whitespace() -> None:
    topics = parse_topics(ROBUST_TOPICS)

    assert topics == [
        TopicRecord(
            qid="601",
            title="Turkey Iraq water",
            description="Identify any attempts by Turkey to limit water flow to Iraq.",
            narrative="A relevant document will discuss the Ataturk dam.",
        ),
        TopicRecord(qid="602", title="Czech, Slovak sovereignty", description="Who is sovereign?"),
    ]


def test_trec_topic_numbers_lose_leading_zeros_like_the_qrels() -> None:
    text = "<top>\n<num> Number:  051\n<title> Topic:  Airbus Subsidies\n</top>\n"

    assert parse_topics(text) == [TopicRecord(qid="51", title="Airbus Subsidies")]


def test_trec_topics_ignore_fields_that_are_not_imported() -> None:
    text = (
        "<top>\n<head> Tipster Topic Description\n<num> Number: 051\n"
        "<dom> Domain: International Economics\n<title> Topic: Airbus Subsidies\n"
        "<desc> Description:\nDocument will discuss subsidies.\n"
        "<con> Concept(s):\n1. Airbus Industrie\n<fac> Factor(s):\n</top>\n"
    )

    (topic,) = parse_topics(text)

    assert topic.title == "Airbus Subsidies"
    assert topic.description == "Document will discuss subsidies."
    assert topic.narrative == ""


def test_xml_topics_map_query_and_question_to_title_and_description() -> None:
    text = """<?xml version="1.0"?>
<topics>
  <topic number="101" type="faceted">
    <query>ritz carlton lake las vegas</query>
    <description>Find information on the Ritz Carlton &amp; its lake.</description>
    <subtopic number="1" type="nav">Find the homepage.</subtopic>
  </topic>
  <topic number='7'>
    <query>heart attack</query>
    <question>What causes a heart attack?</question>
    <narrative>Any cause is relevant.</narrative>
  </topic>
</topics>
"""

    assert parse_topics(text) == [
        TopicRecord(
            qid="101",
            title="ritz carlton lake las vegas",
            description="Find information on the Ritz Carlton & its lake.",
        ),
        TopicRecord(
            qid="7",
            title="heart attack",
            description="What causes a heart attack?",
            narrative="Any cause is relevant.",
        ),
    ]


def test_trec_topics_with_closed_num_and_title_tags_are_read() -> None:
    text = "<top>\n<num>101</num>\n<title>Patients with hearing loss</title>\n</top>\n"

    assert parse_topics(text) == [TopicRecord(qid="101", title="Patients with hearing loss")]


def test_trec_topic_with_an_empty_num_is_reported_with_the_file_name_and_line() -> None:
    text = (
        "<top>\n<num> Number: 1\n<title> one\n</top>\n\n"  # lines 1-5
        "<top>\n<num> Number:\n<title> two\n</top>\n"  # lines 6-9
        "<top>\n<num> Number: 1\n<title> three\n</top>\n"  # lines 10-13
        "<top>\n<num> Number: 3\n</top>\n"  # lines 14-16
    )

    with pytest.raises(InvalidInput) as excinfo:
        parse_topics(text, source="topics.txt")

    assert problems_of(excinfo) == [
        (7, "<num> without a number"),
        (11, "duplicate qid 1 (first on line 2)"),
        (15, "topic 3 has no title"),
    ]
    assert excinfo.value.source == "topics.txt"
    assert excinfo.value.total == 3
    assert str(excinfo.value) == ("topics.txt line 7: <num> without a number (and 2 more problems)")


def test_error_message_names_the_first_problem_and_counts_the_rest() -> None:
    text = (
        "<top>\n<num> Number: 1\n<title> one\n</top>\n"  # 1-4
        "<top>\n<title> no number\n</top>\n"  # 5-7
        "<top>\n<num>\n<title> empty\n</top>\n"  # 8-11
        "<top>\n<num> 2\n</top>\n"  # 12-14
        "<top>\n<num> 1\n<title> again\n</top>\n"  # 15-18
    )

    with pytest.raises(InvalidInput) as excinfo:
        parse_topics(text, source="topics.txt")

    assert problems_of(excinfo) == [
        (5, "<top> without a <num>"),
        (9, "<num> without a number"),
        (13, "topic 2 has no title"),
        (16, "duplicate qid 1 (first on line 2)"),
    ]
    assert str(excinfo.value) == "topics.txt line 5: <top> without a <num> (and 3 more problems)"


def test_trec_topic_that_is_never_closed_is_a_problem() -> None:
    text = "<top>\n<num> 1\n<title> one\n</top>\n<top>\n<num> 2\n<title> cut off"

    with pytest.raises(InvalidInput) as excinfo:
        parse_topics(text)

    assert problems_of(excinfo) == [(5, "<top> is never closed")]


def test_trec_topic_closing_tag_without_opening_is_a_problem() -> None:
    text = "<top>\n<num> 1\n<title> one\n</top>\n</top>\n"

    with pytest.raises(InvalidInput) as excinfo:
        parse_topics(text)

    assert problems_of(excinfo) == [(5, "</top> without an opening <top>")]


# --------------------------------------------------------------------------- JSONL topics


def test_jsonl_topics_accept_id_and_title_aliases_and_both_tag_forms() -> None:
    text = "\n".join(
        [
            json.dumps({"qid": "q1", "title": "first", "tags": ["a", " b "]}),
            "",
            json.dumps({"id": 2, "query": "second", "description": "d", "tags": "x, y,,"}),
            json.dumps({"query_id": "q3", "text": "third  query", "narrative": "n"}),
        ]
    )

    assert parse_topics(text) == [
        TopicRecord(qid="q1", title="first", tags=("a", "b")),
        TopicRecord(qid="2", title="second", description="d", tags=("x", "y")),
        TopicRecord(qid="q3", title="third query", narrative="n"),
    ]


def test_jsonl_topic_problems_are_reported_per_line() -> None:
    lines = [
        '{"qid": "1", "title": "ok"}',  # 1
        '{"qid": "2", "title": "broken"',  # 2
        '["not", "an", "object"]',  # 3
        '{"title": "no id"}',  # 4
        '{"qid": "5", "title": "  "}',  # 5
        '{"qid": "1", "title": "again"}',  # 6
        '{"qid": "7", "title": "t", "tags": 3}',  # 7
        '{"qid": 8.5, "title": "float id"}',  # 8
        '{"qid": "9", "title": ["list"]}',  # 9
        '{"qid": "a b", "title": "spaced id"}',  # 10
    ]

    with pytest.raises(InvalidInput) as excinfo:
        parse_topics("\n".join(lines))

    assert problems_of(excinfo) == [
        (2, "malformed JSON: Expecting ',' delimiter (column 31)"),
        (3, "expected a JSON object, found list"),
        (4, "missing qid (expected one of qid, id, query_id, _id)"),
        (5, "topic 5 has no title"),
        (6, "duplicate qid 1 (first on line 1)"),
        (7, "tags must be a list of strings or a comma-separated string"),
        (8, "qid must be a string or an integer"),
        (9, "title must be a string"),
        (10, "qid 'a b' contains whitespace"),
    ]


# --------------------------------------------------------------------------- SMART topics

SMART_QUERIES = (
    ".I 001\n.W\nwhat similarity laws\nmust be obeyed .\n"
    ".I 002\n.W\nsecond .\n"
    ".I 004\n.W\nthird .\n"
)


def test_smart_topics_are_numbered_in_file_order_by_default() -> None:
    topics = parse_topics(SMART_QUERIES)

    assert topics == [
        TopicRecord(qid="1", title="what similarity laws must be obeyed ."),
        TopicRecord(qid="2", title="second ."),
        TopicRecord(qid="3", title="third ."),
    ]


def test_smart_topics_can_keep_their_dot_i_numbers() -> None:
    topics = parse_topics(SMART_QUERIES, smart_numbering="id")

    assert [t.qid for t in topics] == ["1", "2", "4"]


def test_smart_topics_read_cisi_queries_with_title_and_author_sections() -> None:
    text = ".I 1\n.W\nWhat problems arise?\n.I 2\n.T\nA paper\n.A\nSmith, J.\n.W\nThe query text\n"

    topics = parse_topics(text)

    assert [t.title for t in topics] == ["What problems arise?", "The query text"]


def test_smart_topic_problems_are_reported_with_lines() -> None:
    text = "stray\n.I 1\n.W\none\n.I\n.W\ntwo\n.I 01\n.W\nthree\n.I 4\n.W\n"

    with pytest.raises(InvalidInput) as excinfo:
        parse_topics(text, fmt="smart")

    assert problems_of(excinfo) == [
        (1, "text before the first .I"),
        (5, ".I without a number"),
        (8, "duplicate .I 1 (first on line 2)"),
        (11, "topic 4 has no title"),
    ]


def test_unknown_smart_numbering_is_refused() -> None:
    with pytest.raises(ValueError, match="smart_numbering"):
        parse_topics(SMART_QUERIES, smart_numbering="file")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- input handling


def test_gzip_crlf_and_bom_are_tolerated() -> None:
    raw = ("\ufeff" + ROBUST_TOPICS).replace("\n", "\r\n").encode("utf-8")

    assert parse_topics(gzip.compress(raw)) == parse_topics(ROBUST_TOPICS)


def test_a_path_is_read_and_named_after_its_file(tmp_path: Path) -> None:
    path = tmp_path / "queries.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"qid": "1", "title": "t"}\n{"qid": "1", "title": "u"}\n'))

    with pytest.raises(InvalidInput) as excinfo:
        parse_topics(path)

    assert str(excinfo.value) == "queries.jsonl.gz line 2: duplicate qid 1 (first on line 1)"


def test_bad_utf8_is_a_problem_on_its_line() -> None:
    data = b'{"qid": "1", "title": "ok"}\n{"qid": "2", "title": "caf\xe9"}\n'

    with pytest.raises(InvalidInput) as excinfo:
        parse_topics(data)

    assert problems_of(excinfo) == [(2, "not valid UTF-8 (byte 0xe9 at column 27)")]


@pytest.mark.parametrize("data", [b"", b"  \r\n\n", "\ufeff", gzip.compress(b"", mtime=0)])
def test_empty_input_has_no_topics(data: bytes | str) -> None:
    with pytest.raises(InvalidInput) as excinfo:
        parse_topics(data)

    assert problems_of(excinfo) == [(0, "no topics found")]
    assert str(excinfo.value) == "input: no topics found"


def test_explicit_format_with_nothing_in_it_has_no_topics() -> None:
    with pytest.raises(InvalidInput) as excinfo:
        parse_topics("<topics></topics>\n", fmt="trec")

    assert problems_of(excinfo) == [(0, "no topics found")]


def test_unknown_format_name_is_refused() -> None:
    with pytest.raises(InvalidInput) as excinfo:
        parse_topics(ROBUST_TOPICS, fmt="xml")

    assert problems_of(excinfo) == [
        (0, "unknown format 'xml' (expected one of trec, jsonl, smart)")
    ]


def test_unrecognisable_topics_are_refused() -> None:
    with pytest.raises(InvalidInput) as excinfo:
        parse_topics("601 turkey iraq water\n")

    assert excinfo.value.problems[0].line == 0
    assert excinfo.value.problems[0].message.startswith("unrecognised topic format")


def test_corrupt_gzip_is_a_whole_file_problem() -> None:
    data = gzip.compress(ROBUST_TOPICS.encode())

    with pytest.raises(InvalidInput) as truncated:
        parse_topics(data[:-12])
    with pytest.raises(InvalidInput) as corrupt:
        parse_topics(data[:10] + b"\x00" * 40)

    assert problems_of(truncated) == [(0, "gzip data is truncated")]
    assert corrupt.value.problems[0].line == 0
    assert corrupt.value.problems[0].message.startswith("corrupt gzip data")


def test_problems_are_capped_but_all_counted() -> None:
    text = "\n".join("{broken" for _ in range(250))

    with pytest.raises(InvalidInput) as excinfo:
        parse_topics(text, max_problems=5)

    assert [p.line for p in excinfo.value.problems] == [1, 2, 3, 4, 5]
    assert excinfo.value.total == 250
    assert str(excinfo.value).endswith("(and 249 more problems)")


def test_default_cap_is_one_hundred_problems() -> None:
    with pytest.raises(InvalidInput) as excinfo:
        parse_topics("\n".join("{broken" for _ in range(150)))

    assert len(excinfo.value.problems) == 100
    assert excinfo.value.total == 150


def test_document_records_are_hashable_although_metadata_is_a_dict() -> None:
    record = DocumentRecord(docid="d1", title="", text="x", metadata={"lang": "en"})

    assert record in {record}
    assert record != DocumentRecord(docid="d1", title="", text="x")


def test_import_error_survives_pickling_for_task_results() -> None:
    error = InvalidInput("t.txt", [Problem(3, "bad")], 4)

    copy = pickle.loads(pickle.dumps(error))

    assert (copy.source, copy.problems, copy.total) == ("t.txt", [Problem(3, "bad")], 4)
    assert str(copy) == "t.txt line 3: bad (and 3 more problems)"


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (b"<top>\n<num> Number: 601", "trec"),
        (b'<?xml version="1.0"?>\n<topics><topic number="1">', "trec"),
        (b'\xef\xbb\xbf  {"qid": "1"}', "jsonl"),
        (b".I 001\r\n.W\r\n", "smart"),
        (gzip.compress(b".I 1\n.W\nx\n", mtime=0), "smart"),
    ],
)
def test_topic_format_is_detected_from_the_head(head: bytes, expected: str) -> None:
    assert detect_topic_format(head) == expected
    assert expected in TOPIC_FORMATS


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (b'{"docid": "d1", "text": "x"}\n', "jsonl"),
        (b"<DOC>\n<DOCNO> AP880212-0001 </DOCNO>", "trec"),
        (b"<doc>\n<docno>x</docno>", "trec"),
        (b"d1\tsome text\n", "tsv"),
        (b"docid\ttitle\ttext\n", "tsv"),
        (b"d1\ta <doc> inside the text\n", "tsv"),
        (b'<doc id="1">\n<docno>1</docno>', "trec"),
        (b".I 1\r\n.T\r\n", "smart"),
        (gzip.compress(b"<DOC>\n", mtime=0), "trec"),
    ],
)
def test_document_format_is_detected_from_the_head(head: bytes, expected: str) -> None:
    assert detect_document_format(head) == expected
    assert expected in DOCUMENT_FORMATS


def test_corrupt_gzip_head_is_refused_by_detection() -> None:
    with pytest.raises(InvalidInput) as excinfo:
        detect_document_format(b"\x1f\x8b" + b"\x00" * 30, source="docs.gz")

    assert str(excinfo.value).startswith("docs.gz: corrupt gzip data")


def test_undetectable_document_format_is_refused() -> None:
    with pytest.raises(InvalidInput) as excinfo:
        detect_document_format(b"just some words\n", source="docs.txt")

    assert str(excinfo.value).startswith("docs.txt: unrecognised document format")


# --------------------------------------------------------------------------- JSONL documents


def test_jsonl_documents_use_aliases_and_keep_other_scalars_as_metadata() -> None:
    text = "\n".join(
        [
            json.dumps({"docid": "d1", "title": " A  title ", "text": "Body\ntext", "url": "u"}),
            json.dumps(
                {"id": 2, "contents": "c", "year": 1999, "score": 0.5, "ok": True, "lang": "en"}
            ),
            json.dumps({"_id": "d3", "body": "", "nested": {"a": 1}, "list": [1], "none": None}),
        ]
    )

    assert parse_documents(text) == [
        DocumentRecord(docid="d1", title="A title", text="Body\ntext", url="u"),
        DocumentRecord(
            docid="2",
            title="",
            text="c",
            metadata={"year": "1999", "score": "0.5", "ok": "true", "lang": "en"},
        ),
        DocumentRecord(docid="d3", title="", text=""),
    ]


def test_jsonl_document_problems_are_reported_per_line() -> None:
    lines = [
        '{"docid": "d1", "text": "x"}',  # 1
        '{"docid": "d2", "txt": "typo"}',  # 2
        '{"text": "no id"}',  # 3
        '{"docid": "d1", "text": "again"}',  # 4
        "{oops}",  # 5
        '{"docid": "d6", "text": 6}',  # 6
    ]

    with pytest.raises(InvalidInput) as excinfo:
        parse_documents("\n".join(lines))

    assert problems_of(excinfo) == [
        (2, "missing text (expected one of text, contents, body)"),
        (3, "missing docid (expected one of docid, id, doc_id, _id)"),
        (4, "duplicate docid d1 (first on line 1)"),
        (5, "malformed JSON: Expecting property name enclosed in double quotes (column 2)"),
        (6, "text must be a string"),
    ]


# --------------------------------------------------------------------------- TREC documents

TREC_DOCS = """\
<DOC>
<DOCNO> LA010189-0001 </DOCNO>
<HEADLINE>
<P>
Budget  talks resume
</P>
</HEADLINE>
<TEXT>
<P>
First paragraph of the
story, hard wrapped.
</P>
<P>
Second &amp; last.
</P>
</TEXT>
<TEXT>
   Another block, indented.
   A new paragraph.
</TEXT>
</DOC>
<DOC><DOCNO>AP880212-0001</DOCNO>
<FILEID>AP-NR-02-12-88 2344EST</FILEID>
<TEXT>
   Jordan's King Hussein said
the talks were useful.
   Hussein <I>added</I> more.
</TEXT>
</DOC>
"""


def test_trec_documents_take_headline_and_all_text_blocks_as_paragraphs() -> None:
    docs = parse_documents(TREC_DOCS)

    assert docs == [
        DocumentRecord(
            docid="LA010189-0001",
            title="Budget talks resume",
            text=(
                "First paragraph of the story, hard wrapped.\nSecond & last.\n"
                "Another block, indented.\nA new paragraph."
            ),
        ),
        DocumentRecord(
            docid="AP880212-0001",
            title="",
            text="Jordan's King Hussein said the talks were useful.\nHussein added more.",
        ),
    ]


def test_trec_document_without_text_falls_back_to_its_body() -> None:
    text = (
        "<DOC>\n<DOCNO>GX000-00-0000000</DOCNO>\n<DOCHDR>\nhttp://example.gov/\n</DOCHDR>\n"
        "<html><head><title>Home  page</title></head>\n<body><p>Hello</p><p>World</p></body>"
        "</html>\n</DOC>\n"
    )

    assert parse_documents(text) == [
        DocumentRecord(docid="GX000-00-0000000", title="Home page", text="Hello\nWorld")
    ]


def test_trec_document_tags_may_be_lower_case_and_carry_attributes() -> None:
    text = '<doc id="ignored">\n<docno>d1</docno>\n<title>T</title>\n<text>body</text>\n</doc>\n'

    assert parse_documents(text) == [DocumentRecord(docid="d1", title="T", text="body")]


def test_trec_document_url_element_is_kept() -> None:
    text = "<DOC>\n<DOCNO>w1</DOCNO>\n<URL> http://a.example/x </URL>\n<TEXT>t</TEXT>\n</DOC>\n"

    assert parse_documents(text) == [
        DocumentRecord(docid="w1", title="", text="t", url="http://a.example/x")
    ]


def test_trec_document_problems_are_reported_with_lines() -> None:
    text = (
        "<DOC>\n<DOCNO> D1 </DOCNO>\n<TEXT>one</TEXT>\n</DOC>\n"  # 1-4
        "<DOC>\n<TEXT>no number</TEXT>\n</DOC>\n"  # 5-7
        "<DOC>\n<TEXT>x</TEXT>\n<DOCNO>D1</DOCNO>\n</DOC>\n"  # 8-11
        "stray words\n"  # 12
        "</DOC>\n"  # 13
        "<DOC>\n<DOCNO> </DOCNO>\n</DOC>\n"  # 14-16
        "<DOC>\n<DOCNO>D 2</DOCNO>\n</DOC>\n"  # 17-19
        "<DOC>\n<DOCNO>D3</DOCNO>\n"  # 20-21
    )

    with pytest.raises(InvalidInput) as excinfo:
        parse_documents(text)

    assert problems_of(excinfo) == [
        (5, "<DOC> without a <DOCNO>"),
        (10, "duplicate docid D1 (first on line 2)"),
        (12, "text outside <DOC> ... </DOC>"),
        (13, "</DOC> without an opening <DOC>"),
        (15, "<DOCNO> without a document number"),
        (18, "docid 'D 2' contains whitespace"),
        (20, "<DOC> is never closed"),
    ]


# --------------------------------------------------------------------------- TSV documents


def test_tsv_documents_with_two_or_three_columns() -> None:
    two = "d1\tfirst text\r\nd2\tsecond\r\n"
    three = "d1\tTitle one\tfirst text\n\nd2\t\tsecond\n"

    assert parse_documents(two) == [
        DocumentRecord(docid="d1", title="", text="first text"),
        DocumentRecord(docid="d2", title="", text="second"),
    ]
    assert parse_documents(three) == [
        DocumentRecord(docid="d1", title="Title one", text="first text"),
        DocumentRecord(docid="d2", title="", text="second"),
    ]


def test_tsv_header_names_the_columns_and_extra_ones_become_metadata() -> None:
    text = "id\turl\ttext\tlang\nd1\thttp://x\thello\ten\n"

    assert parse_documents(text) == [
        DocumentRecord(docid="d1", title="", text="hello", url="http://x", metadata={"lang": "en"})
    ]


def test_tsv_header_only_has_no_documents() -> None:
    with pytest.raises(InvalidInput) as excinfo:
        parse_documents("docid\ttitle\ttext\n")

    assert problems_of(excinfo) == [(0, "no documents found")]


def test_tsv_problems_are_reported_with_lines() -> None:
    text = "docid\ttitle\ttext\nd1\tt\tx\nd2\tonly two\n\tt\tx\nd1\tt\tagain\nd5\ta\tb\tc\n"

    with pytest.raises(InvalidInput) as excinfo:
        parse_documents(text)

    assert problems_of(excinfo) == [
        (3, "expected 3 tab-separated fields, found 2"),
        (4, "missing docid"),
        (5, "duplicate docid d1 (first on line 2)"),
        (6, "expected 3 tab-separated fields, found 4"),
    ]


def test_tsv_without_header_needs_two_or_three_fields() -> None:
    with pytest.raises(InvalidInput) as excinfo:
        parse_documents("a\tb\tc\td\n", fmt="tsv")

    assert problems_of(excinfo) == [
        (1, "expected 2 or 3 tab-separated fields (docid, [title,] text), found 4")
    ]


# --------------------------------------------------------------------------- SMART documents

CISI_DOCS = """\
.I 1
.T
18 Editions of the Dewey Decimal Classifications
.A
Comaromi, J.P.
.W
   The present study is a history of the DEWEY Decimal
Classification.
.X
92\t1\t1
.I 2
.T
Use Made of Technical Libraries
.A
Slater, M.
.A
Keenan, S.
.B
1961
.W
This report is an analysis of 6300 acts of use.
.X
2\t1\t2
.I 3
.T
An empty one
.W
"""


def test_smart_documents_collect_authors_and_source_and_ignore_cross_references() -> None:
    assert parse_documents(CISI_DOCS) == [
        DocumentRecord(
            docid="1",
            title="18 Editions of the Dewey Decimal Classifications",
            text="The present study is a history of the DEWEY Decimal Classification.",
            metadata={"authors": "Comaromi, J.P."},
        ),
        DocumentRecord(
            docid="2",
            title="Use Made of Technical Libraries",
            text="This report is an analysis of 6300 acts of use.",
            metadata={"authors": "Slater, M.; Keenan, S.", "source": "1961"},
        ),
        DocumentRecord(docid="3", title="An empty one", text=""),
    ]


def test_smart_document_problems_are_reported_with_lines() -> None:
    text = ".I 01\n.W\na\n.I\n.W\nb\n.I 1\n.W\nc\n"

    with pytest.raises(InvalidInput) as excinfo:
        parse_documents(text)

    assert problems_of(excinfo) == [
        (4, ".I without a number"),
        (7, "duplicate docid 1 (first on line 1)"),
    ]


# --------------------------------------------------------------------------- streaming


def test_documents_stream_from_a_binary_file_object() -> None:
    stream = io.BytesIO(gzip.compress(b"d1\tx\n") + gzip.compress(b"d2\ty\n"))

    assert [d.docid for d in iter_documents(stream)] == ["d1", "d2"]


def test_valid_documents_are_yielded_before_the_error_at_the_end() -> None:
    documents = iter_documents("d1\tx\nd1\ty\nd3\tz\n")
    seen = []

    with pytest.raises(InvalidInput) as excinfo:
        for document in documents:
            seen.append(document.docid)

    assert seen == ["d1", "d3"]
    assert problems_of(excinfo) == [(2, "duplicate docid d1 (first on line 1)")]


def test_unknown_document_format_is_refused_before_iterating() -> None:
    with pytest.raises(InvalidInput) as excinfo:
        iter_documents("d1\tx\n", fmt="csv")

    assert problems_of(excinfo) == [
        (0, "unknown format 'csv' (expected one of jsonl, trec, tsv, smart)")
    ]


def test_empty_document_input_has_no_documents() -> None:
    with pytest.raises(InvalidInput) as excinfo:
        parse_documents(b"\n\n", fmt="jsonl", source="docs.jsonl")

    assert str(excinfo.value) == "docs.jsonl: no documents found"


def test_a_document_file_is_closed_after_iteration(tmp_path: Path) -> None:
    path = tmp_path / "docs.tsv"
    path.write_text("d1\tx\n")
    opened: list[io.BufferedReader] = []
    original_open = open

    def tracking_open(*args: object, **kwargs: object) -> io.BufferedReader:
        handle = original_open(*args, **kwargs)  # type: ignore[call-overload]
        opened.append(handle)
        return handle

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("builtins.open", tracking_open)
        documents = list(iter_documents(path))

    assert [d.docid for d in documents] == ["d1"]
    assert opened and all(handle.closed for handle in opened)


# --------------------------------------------------------------------------- properties

_ids = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_.", min_size=1, max_size=12)
# (a NUL is refused in any stored text: see test_hostile_input.py)
_texts = st.text(st.characters(codec="utf-8", exclude_characters="\t\r\n\x00"))
_titles = _texts.map(lambda s: " ".join(s.split()))


@settings(max_examples=50, deadline=None)
@given(
    st.dictionaries(
        _ids,
        st.tuples(_titles, st.text(st.characters(exclude_characters="\x00"))),
        min_size=1,
        max_size=20,
    )
)
def test_jsonl_documents_round_trip(rows: dict[str, tuple[str, str]]) -> None:
    text = "\n".join(
        json.dumps({"docid": docid, "title": title, "text": body})
        for docid, (title, body) in rows.items()
    )

    documents = parse_documents(gzip.compress(text.encode()))

    assert [(d.docid, d.title, d.text) for d in documents] == [
        (docid, title, body) for docid, (title, body) in rows.items()
    ]


@settings(max_examples=50, deadline=None)
@given(st.dictionaries(_ids, _texts, min_size=1, max_size=20))
def test_tsv_documents_round_trip(rows: dict[str, str]) -> None:
    text = "".join(f"{docid}\t{body}\r\n" for docid, body in rows.items())

    documents = parse_documents(text, fmt="tsv")

    assert [(d.docid, d.text) for d in documents] == list(rows.items())


# --------------------------------------------------------------------------- real data

CRANFIELD = SHARED_DATA / "cranfield"
needs_cranfield = needs_shared_data("cranfield", "cran.all.1400")


def cranqrel_pairs() -> list[tuple[str, str]]:
    lines = (CRANFIELD / "cranqrel").read_text().split("\n")
    return [(fields[0], fields[1]) for fields in (line.split() for line in lines) if fields]


@pytest.mark.data
@needs_cranfield
def test_cranfield_documents_are_all_read() -> None:
    documents = list(iter_documents(CRANFIELD / "cran.all.1400"))
    by_id = {d.docid: d for d in documents}

    assert len(documents) == 1400
    assert [d.docid for d in documents] == [str(n) for n in range(1, 1401)]
    assert by_id["1"].title.startswith("experimental investigation of the aerodynamics")
    assert by_id["1"].metadata == {
        "authors": "brenckman,m.",
        "source": "j. ae. scs. 25, 1958, 324.",
    }
    assert by_id["471"].text == ""
    assert by_id["995"].text == ""
    assert all(d.text for d in documents if d.docid not in {"471", "995"})


@pytest.mark.data
@needs_cranfield
def test_cranfield_queries_are_numbered_one_to_225_in_file_order() -> None:
    topics = parse_topics(CRANFIELD / "cran.qry")

    assert [t.qid for t in topics] == [str(n) for n in range(1, 226)]
    # The third query in the file is ".I 004".
    assert topics[2] == TopicRecord(
        qid="3",
        title="what problems of heat conduction in composite slabs have been solved so far .",
    )


@pytest.mark.data
@needs_cranfield
def test_cranfield_qrels_refer_only_to_parsed_queries_and_documents() -> None:
    qids = {t.qid for t in parse_topics(CRANFIELD / "cran.qry")}
    docids = {d.docid for d in iter_documents(CRANFIELD / "cran.all.1400")}
    pairs = cranqrel_pairs()

    assert len(pairs) > 1800
    assert {qid for qid, _ in pairs} <= qids
    assert {docid for _, docid in pairs} <= docids
