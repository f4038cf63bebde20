"""Passages: chunkers with offsets, chunkings named and parsed, judgments carried to new chunks.

Every expected offset and label below is worked out by hand in the comments beside it (string
indices counted on the text shown; shares as overlap / span length).
"""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics.passages import (
    CarryRule,
    Chunk,
    Chunking,
    JudgedSpan,
    carry_judgments,
    document_qrels,
    judged_spans,
    make_chunking,
    passage_id,
    split_passage_id,
)
from metrics.passages.chunkers import fixed_spans, paragraph_spans, snap_window
from metrics.passages.sentences import sentence_spans, sentence_window_spans
from metrics.problems import InvalidInput

FOX = "the quick brown fox jumps over the lazy dog again"
#      0123456789012345678901234567890123456789012345678
#      spaces at 3, 9, 15, 19, 25, 30, 34, 39, 43; len 49


def texts(text: str, spans: list[tuple[int, int]]) -> list[str]:
    return [text[s:e] for s, e in spans]


# --- fixed ----------------------------------------------------------------------------------


def test_fixed_snaps_cuts_back_to_whitespace_and_overlaps() -> None:
    # size 20, overlap 5, window min(20 // 10, (20 - 5 - 1) // 2) = 2. Chunk 1: cut at 20 is next
    # to the space at 19 -> [0, 20) trimmed to [0, 19). Next start 20 - 5 = 15 is a space ->
    # skipped to 16. Chunk 2: nominal end 36 (between "l" and "a"), 35 is after the space at 34
    # -> [16, 35) trimmed to [16, 34). Next start 30 (a space) -> 31; 31 + 20 >= 49: last chunk.
    assert fixed_spans(FOX, size=20, overlap=5) == [(0, 19), (16, 34), (31, 49)]
    expected = ["the quick brown fox", "fox jumps over the", "the lazy dog again"]
    assert texts(FOX, fixed_spans(FOX, 20, 5)) == expected


def test_fixed_moves_a_cut_back_up_to_the_window() -> None:
    # size 22, no overlap: window 2. Nominal cut 22 is inside "jumps" (20-24); 21 is too; 20
    # follows the space at 19: cut there. Next start 20; nominal cut 42 inside "dog" (40-42),
    # 41 too, 40 follows the space at 39. Then 40 + 22 >= 49.
    assert fixed_spans(FOX, size=22, overlap=0) == [(0, 19), (20, 39), (40, 49)]
    # size 23: window still 2, nominal cut 23; 23, 22, 21 are all inside "jumps": the word is cut
    assert fixed_spans(FOX, size=23, overlap=0)[0] == (0, 23)


def test_fixed_chunks_are_at_most_size_long_and_without_overlap_they_do_not_overlap() -> None:
    spans = fixed_spans(FOX, size=12, overlap=0)  # window 1: "the quick br" is cut mid-word
    assert spans[0] == (0, 12)
    assert all(e - s <= 12 for s, e in spans)
    assert all(a[1] <= b[0] for a, b in pairwise(spans))
    assert spans[-1][1] == 49


def test_fixed_trims_the_text_and_gives_nothing_for_blank_text() -> None:
    assert fixed_spans("  ab cd \n", size=500, overlap=100) == [(2, 7)]
    assert fixed_spans("", 500, 100) == []
    assert fixed_spans(" \n\t ", 500, 100) == []


def test_snap_window_is_a_tenth_of_the_size_bounded_by_the_step() -> None:
    assert snap_window(500, 100) == 50  # min(50, 199)
    assert snap_window(300, 250) == 24  # min(30, 24)
    assert snap_window(10, 9) == 0  # a one-character step leaves no room to snap


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(alphabet="ab \n", max_size=120),
    size=st.integers(1, 30),
    data=st.data(),
)
def test_fixed_chunks_cover_every_non_whitespace_character(
    text: str, size: int, data: st.DataObject
) -> None:
    overlap = data.draw(st.integers(0, size - 1))
    spans = fixed_spans(text, size, overlap)
    covered = {i for s, e in spans for i in range(s, e)}
    assert {i for i, ch in enumerate(text) if not ch.isspace()} <= covered
    for s, e in spans:
        assert 0 <= s < e <= s + size
        assert not text[s].isspace() and not text[e - 1].isspace()
    assert all(a[0] < b[0] for a, b in pairwise(spans))
    if overlap == 0:
        assert all(a[1] <= b[0] for a, b in pairwise(spans))


# --- paragraph ------------------------------------------------------------------------------

PARAS = "First para\nline two.\n\n \n\nSecond.\n   \nThird one here\n"
# "First para\nline two." is 0-20; blank lines 20-25; "Second." 25-32; "\n   \n" 32-37;
# "Third one here" 37-51; a final newline at 51.


def test_paragraphs_split_on_blank_lines_only() -> None:
    assert paragraph_spans(PARAS) == [(0, 20), (25, 32), (37, 51)]
    assert texts(PARAS, paragraph_spans(PARAS))[0] == "First para\nline two."  # one newline
    assert paragraph_spans("a\r\n\r\nb") == [(0, 1), (5, 6)]
    assert paragraph_spans("\n\n  \n") == []


def test_short_paragraphs_merge_with_the_next() -> None:
    # "Second." is 7 < 10 characters: it takes in "Third one here"; the first is 20 long
    assert paragraph_spans(PARAS, min_chars=10) == [(0, 20), (25, 51)]
    assert paragraph_spans(PARAS, min_chars=100) == [(0, 51)]
    # a short last paragraph has no next one to merge with and stays alone
    assert paragraph_spans("long enough\n\nab", min_chars=5) == [(0, 11), (13, 15)]


# --- sentences ------------------------------------------------------------------------------


def test_sentences_end_before_a_capital_or_a_digit() -> None:
    text = "Hi there. Bye now! Ok? yes. 3 left.\n\nnext para"
    # "Hi there." 0-9, "Bye now!" 10-18, "Ok? yes." 19-27 ("yes" is lower case),
    # "3 left." 28-35, and the blank line ends a sentence: "next para" 37-46
    assert sentence_spans(text) == [(0, 9), (10, 18), (19, 27), (28, 35), (37, 46)]


def test_abbreviations_and_initials_do_not_end_sentences() -> None:
    text = (
        "Dr. Smith saw Fig. 2 here. It was fine (e.g. Paris) and i.e. Rome. "
        "J. Doe came. The U.S. Army came at 2.30 today."
    )
    assert texts(text, sentence_spans(text)) == [
        "Dr. Smith saw Fig. 2 here.",
        "It was fine (e.g. Paris) and i.e. Rome.",
        "J. Doe came.",
        "The U.S. Army came at 2.30 today.",  # "U.S." is dotted letters; "2.30" has no space
    ]


def test_sentence_windows_move_by_the_stride() -> None:
    text = "Hi there. Bye now! Ok?"  # sentences 0-9, 10-18, 19-22
    assert sentence_window_spans(text, window=2) == [(0, 18), (19, 22)]
    assert sentence_window_spans(text, window=2, stride=1) == [(0, 18), (10, 22)]
    assert sentence_window_spans(text, window=3) == [(0, 22)]
    assert sentence_window_spans(text, window=5, stride=2) == [(0, 22)]
    assert sentence_window_spans("   ", window=2) == []


# --- chunkings ------------------------------------------------------------------------------


def test_a_chunking_numbers_its_chunks_in_order_of_start() -> None:
    chunks = Chunking.parse("fixed(size=20,overlap=5)").chunk(FOX)
    assert chunks == [Chunk("p0", 0, 19), Chunk("p1", 16, 34), Chunk("p2", 31, 49)]
    assert [FOX[c.start : c.end] for c in chunks][1] == "fox jumps over the"
    assert Chunking("paragraph").chunk(" \n ") == []


def test_canonical_strings_list_every_parameter_with_defaults() -> None:
    assert str(Chunking("fixed")) == "fixed(size=500,overlap=100)"
    assert str(Chunking("paragraph")) == "paragraph(min_chars=0)"
    assert str(Chunking("sentence_window")) == "sentence_window(window=3,stride=3)"
    # stride defaults to the window
    assert str(make_chunking("sentence_window", window=2)) == "sentence_window(window=2,stride=2)"


def test_parsing_accepts_spaces_any_order_and_left_out_parameters() -> None:
    c = Chunking.parse(" fixed( overlap = 50, size=300 ) ")
    assert c == make_chunking("fixed", size=300, overlap=50)
    assert str(c) == "fixed(size=300,overlap=50)"
    assert Chunking.parse("paragraph") == Chunking.parse("paragraph()") == Chunking("paragraph")
    assert c.param("overlap") == 50


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_the_canonical_string_reads_back_as_the_same_chunking(data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(["fixed", "paragraph", "sentence_window"]))
    if name == "fixed":
        size = data.draw(st.integers(1, 2000))
        chunking = make_chunking(name, size=size, overlap=data.draw(st.integers(0, size - 1)))
    elif name == "paragraph":
        chunking = make_chunking(name, min_chars=data.draw(st.integers(0, 5000)))
    else:
        window = data.draw(st.integers(1, 20))
        chunking = make_chunking(name, window=window, stride=data.draw(st.integers(1, window)))
    assert Chunking.parse(str(chunking)) == chunking


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "fixed(size=500,overlap=500)",
            "fixed.overlap: must be an integer with 0 <= overlap < size (500), got 500",
        ),
        ("fixed(size=0)", "fixed.size: must be an integer with 1 <= size, got 0"),
        ("fixed(size=ten)", "fixed.size: must be an integer with 1 <= size, got 'ten'"),
        (
            "fixed(overlap=-1)",
            "fixed.overlap: must be an integer with 0 <= overlap < size (500), got -1",
        ),
        (
            "sentence_window(window=2,stride=3)",
            "sentence_window.stride: must be an integer with 1 <= stride <= window (2), got 3",
        ),
        (
            "sentence_window(window=0)",
            "sentence_window.window: must be an integer with 1 <= window, got 0",
        ),
        (
            "paragraph(min_chars=-5)",
            "paragraph.min_chars: must be an integer with 0 <= min_chars, got -5",
        ),
        ("fixed(sise=300)", "fixed has no parameter 'sise'; its parameters: size, overlap"),
        (
            "chapters(n=2)",
            "unknown chunker 'chapters'; known: fixed, paragraph, line, sentence_window",
        ),
        ("fixed(size=3,size=4)", "size is given twice"),
        ("fixed(size)", "expected param=value, got 'size'"),
        ("fixed size", "expected name(param=value,...), got 'fixed size'"),
    ],
)
def test_bad_chunkings_name_the_parameter_and_its_range(spec: str, message: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        Chunking.parse(spec)
    assert [str(p) for p in caught.value.problems] == [message]
    assert isinstance(caught.value, ValueError)


def test_every_bad_parameter_is_reported_at_once() -> None:
    with pytest.raises(InvalidInput) as caught:
        make_chunking("fixed", size=0, overlap=-1, extra=2)
    # overlap's range depends on size, which is bad itself: only size and the unknown name
    assert [str(p) for p in caught.value.problems] == [
        "fixed has no parameter 'extra'; its parameters: size, overlap",
        "fixed.size: must be an integer with 1 <= size, got 0",
    ]


def test_passage_ids_split_at_the_last_hash() -> None:
    assert passage_id("doc#1", "p3") == "doc#1#p3"
    assert split_passage_id("web#2024#p3") == ("web#2024", "p3")
    assert split_passage_id(passage_id("a#b#", "p0")) == ("a#b#", "p0")
    for bad in ("nohash", "#p1", "doc#"):
        with pytest.raises(ValueError, match="docid#pid"):
            split_passage_id(bad)


# --- carrying judgments ---------------------------------------------------------------------


def chunks_of(*spans: tuple[int, int]) -> list[Chunk]:
    return [Chunk(f"p{i}", s, e) for i, (s, e) in enumerate(spans)]


def carried(spans: list[JudgedSpan], chunks: list[Chunk], rule: CarryRule | None = None):
    """The one topic's labels for one document ``d``, by pid (absent: unjudged)."""
    result = carry_judgments({"t": {"d": spans}}, {"d": chunks}, rule=rule)
    return {split_passage_id(full)[1]: g for full, g in result.labels["t"].items()}


def test_a_chunk_holding_half_of_a_relevant_passage_is_relevant() -> None:
    spans = [JudgedSpan(0, 100, 2)]
    # [0, 50) holds 50/100 = 0.5: relevant; [50, 99) holds 49/100 and touches the relevant
    # passage: unjudged; [100, 200) touches nothing judged: unjudged
    assert carried(spans, chunks_of((0, 50), (50, 99), (100, 200))) == {"p0": 2}


def test_an_answer_span_makes_a_chunk_relevant_below_half_of_its_passage() -> None:
    spans = [JudgedSpan(0, 200, 1), JudgedSpan(120, 140, 1, "answer")]
    # [100, 150): 50/200 of the passage, 20/20 of the answer -> 1
    # [130, 180): 50/200 of the passage, 10/20 of the answer -> 1
    # [135, 190): 55/200 and 5/20 -> unjudged (it touches relevant spans)
    assert carried(spans, chunks_of((100, 150), (130, 180), (135, 190))) == {"p0": 1, "p1": 1}
    # at min_share 0.25, 55/200 = 0.275 of the passage is enough
    loose = carried(spans, chunks_of((100, 150), (130, 180), (135, 190)), CarryRule(0.25))
    assert loose == {"p0": 1, "p1": 1, "p2": 1}


def test_the_highest_qualifying_grade_wins() -> None:
    spans = [JudgedSpan(0, 100, 1), JudgedSpan(100, 200, 3)]
    # [40, 160): 60/100 of both -> 3; [0, 120): 100/100 of the grade-1 passage but only 20/100
    # of the grade-3 one, which does not qualify -> 1
    assert carried(spans, chunks_of((0, 120), (40, 160))) == {"p0": 1, "p1": 3}


NON_RELEVANT_DOC = [
    JudgedSpan(0, 100, 0),
    JudgedSpan(100, 200, 0),  # touches the first: their union is [0, 200)
    JudgedSpan(200, 300, 2),
    JudgedSpan(310, 400, 0),
]
NON_RELEVANT_CHUNKS = chunks_of(
    (20, 180), (150, 250), (160, 240), (305, 350), (320, 400), (390, 450)
)


def test_non_relevant_only_wholly_inside_non_relevant_passages_and_away_from_relevant_ones() -> (
    None
):
    assert carried(NON_RELEVANT_DOC, NON_RELEVANT_CHUNKS) == {
        "p0": 0,  # [20, 180) lies across two judged-0 passages, inside their union [0, 200)
        "p1": 2,  # [150, 250) straddles: holds 50/100 of the relevant [200, 300)
        # p2 [160, 240) straddles with 40/100 of the relevant passage: it touches it, unjudged
        # p3 [305, 350) starts in the unjudged gap [300, 310): unjudged
        "p4": 0,  # [320, 400) inside [310, 400)
        # p5 [390, 450) runs past the judged text: unjudged
    }


def test_min_share_one_needs_the_whole_span() -> None:
    spans = [JudgedSpan(10, 20, 2)]
    assert carried(spans, chunks_of((0, 19), (10, 20)), CarryRule(1.0)) == {"p1": 2}
    # 3 characters of 10 are at least 30%, floating point notwithstanding (0.3 * 10 > 3)
    assert carried(spans, chunks_of((17, 30)), CarryRule(0.3)) == {"p0": 2}


def test_the_rule_describes_itself_with_its_threshold() -> None:
    assert CarryRule().describe() == (
        "A new chunk gets grade g if it contains at least 50% of a passage or answer span judged "
        "g > 0 (the highest such g), else grade 0 if it lies wholly inside passages judged "
        "non-relevant (white space between them counts as inside) and overlaps no span judged "
        "relevant, else it stays unjudged."
    )
    assert "at least 25% of" in CarryRule(0.25).describe()
    for bad in (0.0, -0.5, 1.5):
        with pytest.raises(ValueError, match="min_share"):
            CarryRule(bad)


@pytest.mark.parametrize(
    ("span", "message"),
    [
        (JudgedSpan(5, 5, 1), "0 <= start < end"),
        (JudgedSpan(-1, 5, 1), "0 <= start < end"),
        (JudgedSpan(0, 5, 0, "answer"), "an answer span's grade must be > 0"),
        (JudgedSpan(0, 5, -1), "grade >= 0"),
        (JudgedSpan(0, 5, 1, "sentence"), "kind must be"),  # type: ignore[arg-type]
    ],
)
def test_malformed_spans_are_refused(span: JudgedSpan, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        carry_judgments({"t": {"d": [span]}}, {"d": chunks_of((0, 5))})


def test_coverage_counts_per_topic_overall_and_lost_topics() -> None:
    judged = {
        # d1 as above; "d2#x" (a docid with #) with one relevant passage its chunk holds wholly
        "t1": {"d1": NON_RELEVANT_DOC, "d2#x": [JudgedSpan(0, 50, 1)]},
        # one relevant passage [0, 400): no chunk of d1 holds 200 of it (the longest holds 160),
        # and none is non-relevant (no span judged 0): 6 unjudged, the span lost, the topic too
        "t2": {"d1": [JudgedSpan(0, 400, 1)]},
        # judged only non-relevant: nothing relevant to lose
        "t3": {"d3": [JudgedSpan(0, 10, 0)]},
    }
    chunks = {
        "d1": NON_RELEVANT_CHUNKS,
        "d2#x": chunks_of((0, 60)),
        "d3": chunks_of((0, 10)),
        "d4": chunks_of((0, 10)),  # judged for no topic
    }
    result = carry_judgments(judged, chunks)
    assert result.labels == {
        "t1": {"d1#p0": 0, "d1#p1": 2, "d1#p4": 0, "d2#x#p0": 1},
        "t2": {},
        "t3": {"d3#p0": 0},
    }
    report = result.report.as_dict()
    assert report["topics"] == {
        # d1's 6 chunks as in the test above (p1 relevant; p0, p4 non-relevant; p2, p3, p5
        # unjudged) and d2#x's one, relevant; relevant spans d1's [200, 300) (kept by p1) and
        # d2#x's [0, 50) (kept by its chunk)
        "t1": {"documents": 2, "chunks": 7, "relevant": 2, "non_relevant": 2, "unknown": 3,
               "relevant_spans": 2, "lost_spans": 0},
        "t2": {"documents": 1, "chunks": 6, "relevant": 0, "non_relevant": 0, "unknown": 6,
               "relevant_spans": 1, "lost_spans": 1},
        "t3": {"documents": 1, "chunks": 1, "relevant": 0, "non_relevant": 1, "unknown": 0,
               "relevant_spans": 0, "lost_spans": 0},
    }  # fmt: skip
    assert report["overall"] == {
        "documents": 4, "chunks": 14, "relevant": 2, "non_relevant": 3, "unknown": 9,
        "relevant_spans": 3, "lost_spans": 1,
    }  # fmt: skip
    assert report["lost_topics"] == ["t2"]
    assert report["unjudged_documents"] == 1  # d4
    assert report["min_share"] == 0.5 and report["version"] == 1
    assert report["rule"] == CarryRule().describe()


def test_a_kept_answer_does_not_keep_the_passage_around_it() -> None:
    spans = [JudgedSpan(0, 200, 1), JudgedSpan(120, 140, 1, "answer")]
    result = carry_judgments({"t": {"d": spans}}, {"d": chunks_of((100, 150), (150, 199))})
    # [100, 150) holds the answer; no chunk holds 100 of the passage: it is the one lost span,
    # yet the topic is not lost (a chunk was carried as relevant)
    topic = result.report.topics["t"]
    assert (topic.relevant_spans, topic.lost_spans, topic.relevant) == (2, 1, 1)
    assert result.report.lost_topics == ()


def test_a_judged_document_without_chunks_loses_its_relevant_spans() -> None:
    result = carry_judgments({"t": {"gone": [JudgedSpan(0, 10, 2)]}}, {})
    assert result.labels == {"t": {}}
    assert result.report.lost_topics == ("t",)
    assert result.report.topics["t"].lost_spans == 1


def test_document_qrels_take_the_highest_passage_grade() -> None:
    labels = {
        "t1": {"a#p0": 0, "a#p1": 2, "a#p2": 1, "b#x#p0": 0, "b#x#p1": 0},
        "t2": {"a#p3": 3},
    }
    assert document_qrels(labels) == {"t1": {"a": 2, "b#x": 0}, "t2": {"a": 3}}


def test_judged_spans_turn_passage_labels_into_spans() -> None:
    chunks = {"d#1": chunks_of((0, 5), (6, 9))}
    assert judged_spans({"t": {"d#1#p1": 2}}, chunks) == {"t": {"d#1": [JudgedSpan(6, 9, 2)]}}


CHUNKINGS_WITHOUT_OVERLAP = st.sampled_from(
    ["fixed(size=7,overlap=0)", "fixed(size=20,overlap=0)", "paragraph(min_chars=5)",
     "sentence_window(window=2)", "sentence_window(window=1)"]
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(
    text=st.text(alphabet="ab. A\n", max_size=150),
    spec=CHUNKINGS_WITHOUT_OVERLAP,
    data=st.data(),
)
def test_carrying_to_the_same_chunking_keeps_every_label(
    text: str, spec: str, data: st.DataObject
) -> None:
    # chunks that do not overlap: each holds all of its own passage and nothing of another's,
    # so rule 1 gives a relevant chunk its own grade and rule 2 a non-relevant one 0. (With
    # overlapping chunks this fails, rightly: a chunk may hold half of its neighbour.)
    chunks = {"d": Chunking.parse(spec).chunk(text)}
    grades = data.draw(
        st.lists(st.integers(0, 3), min_size=len(chunks["d"]), max_size=len(chunks["d"]))
    )
    labels = {"t": {passage_id("d", c.pid): g for c, g in zip(chunks["d"], grades, strict=True)}}
    result = carry_judgments(judged_spans(labels, chunks), chunks)
    assert result.labels == labels
    coverage = result.report.overall
    assert (coverage.unknown, coverage.lost_spans) == (0, 0)
    assert coverage.relevant == sum(1 for g in grades if g > 0)


def test_white_space_between_non_relevant_paragraphs_counts_as_inside_them() -> None:
    text = "Alpha beta gamma.\n\nDelta epsilon.\n\nZeta is the answer."
    first, second = (0, 17), (19, 33)  # the two paragraphs judged 0; the third relevant
    answer = (35, len(text))
    assert text[slice(*second)] == "Delta epsilon." and text[answer[0] :].startswith("Zeta")
    spans = [JudgedSpan(*first, 0), JudgedSpan(*second, 0), JudgedSpan(*answer, 2)]
    across = Chunk("p0", 10, 25)  # the first's end, the blank line, the second's start
    edge = Chunk("p1", 25, 35)  # the second's end and the blank line before the relevant one
    into = Chunk("p2", 25, 38)  # ... and the relevant paragraph's first characters
    judged = {"q": {"d": spans}}
    chunks = {"d": [across, edge, into]}
    without = carry_judgments(judged, chunks).labels["q"]
    assert without == {}  # without the text, the blank lines are not inside anything judged
    with_text = carry_judgments(judged, chunks, texts={"d": text}).labels["q"]
    assert with_text == {"d#p0": 0, "d#p1": 0}  # into touches the relevant span: unjudged


def test_a_text_stored_a_paragraph_a_line_is_cut_by_line() -> None:
    text = "First paragraph here.\nSecond one.\n  \nThird, after a blank line.\n"
    assert Chunking.parse("paragraph").chunk(text) == [
        Chunk("p0", 0, 33),  # one paragraph: a single line break does not part paragraphs
        Chunk("p1", 37, 63),
    ]
    lines = Chunking.parse("line").chunk(text)
    assert [text[c.start : c.end] for c in lines] == [
        "First paragraph here.",
        "Second one.",
        "Third, after a blank line.",
    ]
    merged = Chunking.parse("line(min_chars=25)").chunk(text)
    assert [text[c.start : c.end] for c in merged] == [
        "First paragraph here.\nSecond one.",
        "Third, after a blank line.",
    ]
    assert str(Chunking.parse("line")) == "line(min_chars=0)"
