"""The segments an answer contributes to a pool (received: its references; cited: those some
sentence cites, in reference order), on hand-worked answers and against the answer reader."""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from metrics.io.answers import read_answer_run
from metrics.pooling.answers import answer_segments, cited_segments

REFS = ["s1", "s2", "s3", "s4", "s5"]


def test_cited_keeps_the_cited_references_in_reference_order_each_once() -> None:
    # sentence 1 cites s4 then s1, sentence 2 cites s1 again and s2: reference order, no repeat
    assert cited_segments(REFS, [[3, 0], [0, 1]]) == ["s1", "s2", "s4"]


def test_an_answer_that_cites_nothing_contributes_nothing_when_cited() -> None:
    assert cited_segments(REFS, [[], []]) == []
    assert cited_segments(REFS, []) == []


def test_received_is_every_reference_as_ranked_whatever_is_cited() -> None:
    assert answer_segments("received", REFS, [[4]]) == REFS
    assert answer_segments("received", REFS, []) == REFS


def test_cited_by_name_is_cited_segments() -> None:
    assert answer_segments("cited", REFS, [[4], [2]]) == ["s3", "s5"]


@pytest.mark.parametrize("bad", [5, -1, True, "0"])
def test_a_citation_outside_the_references_is_an_error(bad: object) -> None:
    with pytest.raises(ValueError, match="not an index into the 5 references"):
        cited_segments(REFS, [[0, bad]])  # type: ignore[list-item]


def test_an_unknown_restriction_is_an_error_naming_the_known_ones() -> None:
    with pytest.raises(ValueError, match="known: received, cited"):
        answer_segments("ranked", REFS, [])


@given(
    st.lists(st.lists(st.integers(min_value=0, max_value=7), max_size=4), min_size=1, max_size=5)
)
def test_cited_agrees_with_the_readers_cited_references(sentences: list[list[int]]) -> None:
    refs = [f"d{i}" for i in range(8)]
    line = {
        "run_id": "r",
        "topic_id": "1",
        "references": refs,
        "answer": [{"text": f"sentence {n}.", "citations": c} for n, c in enumerate(sentences)],
    }
    run = read_answer_run(io.BytesIO((json.dumps(line) + "\n").encode()))
    (answer,) = run.answers
    assert cited_segments(refs, [s.citations for s in answer.sentences]) == list(answer.cited)
