"""Scores of answer runs (issue 34, point 4): nugget recall as castorini/nuggetizer and the TREC
2024 RAG Track define it, citation support as the track's support evaluation defines it, answer
length, and macro averages with intervals.

Every number is worked by hand in the comments, or taken from a source: nuggetizer's own
regression example (``tests/test_integration_pipeline.py``, its metrics step) and the support
paper's worked example (Thakur et al., arXiv 2504.15205, section 3.4). nuggetizer is not
installed here, so its example is ported as data, not imported."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics.answers import (
    NUGGET_MEASURES,
    MacroAverage,
    Nugget,
    macro_average,
    nugget_averages,
    nugget_scores,
    run_nugget_scores,
    run_support_scores,
    support_averages,
    support_scores,
)
from metrics.io.answers import AnswerSentence, TopicAnswer, word_count

# Topic t1: three vital nuggets and three okay ones.
BANK_T1 = (
    Nugget("v1", "African rulers sold captives to Europeans", "vital"),
    Nugget("v2", "Rulers exchanged slaves for firearms", "vital"),
    Nugget("v3", "Rulers waged wars to capture slaves", "vital"),
    Nugget("o1", "The trade increased internal slavery", "okay"),
    Nugget("o2", "Rulers encouraged traders to their ports", "okay"),
    Nugget("o3", "The trade had a lasting impact", "okay"),
)
ASSIGN_T1 = {
    "v1": "support",
    "v2": "partial_support",
    "v3": "not_support",
    "o1": "support",
    "o2": "not_support",
    # o3 unassigned: not supported, as in nuggetizer
}
# Topic t2: okay nuggets only.
BANK_T2 = (Nugget("a", "first", "okay"), Nugget("b", "second", "okay"))
ASSIGN_T2 = {"a": "support", "b": "partial_support"}


def test_hand_worked_topic_gives_every_nugget_score() -> None:
    s = nugget_scores(BANK_T1, ASSIGN_T1, topic_id="t1")
    # supported: v1, o1 (2); partial: v2 (1); of 6 nuggets, 3 vital
    assert (s.nuggets, s.vital, s.support, s.partial) == (6, 3, 2, 1)
    assert (s.vital_support, s.vital_partial, s.unassigned) == (1, 1, 1)
    assert s.strict_all_score == pytest.approx(2 / 6)  # A_strict: v1, o1
    assert s.all_score == pytest.approx((2 + 0.5) / 6)  # A: + 0.5 for v2 = 5/12
    assert s.strict_vital_score == pytest.approx(1 / 3)  # V_strict: v1 of v1..v3
    assert s.vital_score == pytest.approx((1 + 0.5) / 3)  # V: v1 + 0.5 v2 = 0.5
    # W: vital weight 1, okay 0.5: (1 + 0.5 + 0.5 * 1) / (3 + 0.5 * 3) = 2 / 4.5
    assert s.weighted_score == pytest.approx(4 / 9)
    # W_strict: (1 + 0.5 * 1) / 4.5 = 1/3
    assert s.strict_weighted_score == pytest.approx(1 / 3)


def test_okay_only_topic_has_no_vital_score() -> None:
    s = nugget_scores(BANK_T2, ASSIGN_T2, topic_id="t2")
    assert s.vital_score is None and s.strict_vital_score is None  # undefined, not 0
    assert s.strict_all_score == pytest.approx(1 / 2)
    assert s.all_score == pytest.approx((1 + 0.5) / 2)
    # W with no vital nugget: 0.5 * 1.5 / (0.5 * 2) = 0.75; W_strict: 0.5 * 1 / 1 = 0.5
    assert s.weighted_score == pytest.approx(0.75)
    assert s.strict_weighted_score == pytest.approx(0.5)


def test_topic_without_nuggets_has_no_score() -> None:
    s = nugget_scores((), {}, topic_id="t3")
    assert all(s.score(m) is None for m in NUGGET_MEASURES)


def test_nuggetizer_regression_example_gives_its_scores() -> None:
    # nuggetizer's tests/test_integration_pipeline.py: a vital nugget assigned "support" and an
    # okay one "partial_support" score strict_vital 1.0, strict_all 0.5, vital 1.0, all 0.75.
    bank = (
        Nugget("0", "Python is used for web development.", "vital"),
        Nugget("1", "Python is used for data analysis.", "okay"),
    )
    s = nugget_scores(bank, {"0": "support", "1": "partial_support"}, topic_id="q1")
    assert (s.strict_vital_score, s.strict_all_score) == (1.0, 0.5)
    assert (s.vital_score, s.all_score) == (1.0, 0.75)
    # its global line ("qid": "all") over the one record: the same all_score
    assert nugget_averages({"q1": s})["all_score"].mean == 0.75


def test_labels_are_read_as_nuggetizer_writes_them() -> None:
    upper = nugget_scores(BANK_T2, {"a": "SUPPORT", "b": " Partial Support "}, topic_id="t2")
    assert upper == nugget_scores(BANK_T2, ASSIGN_T2, topic_id="t2")
    # nuggetizer's "failed" (its assigner gave up) is not supported and counted as unassigned
    failed = nugget_scores(BANK_T2, {"a": "failed", "b": "support"}, topic_id="t2")
    assert (failed.support, failed.unassigned, failed.all_score) == (1, 1, 0.5)


@pytest.mark.parametrize(
    ("bank", "assignments", "message"),
    [
        (BANK_T2, {"a": "maybe"}, "unknown assignment"),
        (BANK_T2, {"zz": "support"}, "not in the bank"),
        ((Nugget("a", "x", "vital"), Nugget("a", "y", "okay")), {}, "listed twice"),
    ],
)
def test_bad_assignments_are_errors(
    bank: tuple[Nugget, ...], assignments: dict[str, str], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        nugget_scores(bank, assignments, topic_id="t")


def test_importance_must_be_vital_or_okay() -> None:
    with pytest.raises(ValueError, match="importance"):
        Nugget("x", "text", "failed")  # type: ignore[arg-type]


def test_runs_are_scored_on_every_banked_topic() -> None:
    banks = {"t1": BANK_T1, "t2": BANK_T2}
    scores = run_nugget_scores(banks, {"r1": {"t1": ASSIGN_T1}, "r2": {"t1": {}, "t2": ASSIGN_T2}})
    assert set(scores["r1"]) == {"t1", "t2"}
    # r1 has no assignments for t2: both nuggets unassigned, A = 0
    assert (scores["r1"]["t2"].unassigned, scores["r1"]["t2"].all_score) == (2, 0.0)
    assert scores["r2"]["t1"].all_score == 0.0
    with pytest.raises(ValueError, match="no nugget bank"):
        run_nugget_scores(banks, {"r": {"t9": {}}})


def test_macro_average_leaves_undefined_topics_out_or_counts_them_zero() -> None:
    values = {"a": 0.2, "b": 0.4, "c": None, "d": 0.9}
    skip = macro_average(values)
    assert skip.mean == pytest.approx(0.5)
    assert (skip.topics, skip.undefined) == (3, 1)
    zero = macro_average(values, undefined="zero")  # nuggetizer's global mean: (0.2+0.4+0+0.9)/4
    assert zero.mean == pytest.approx(0.375)
    assert (zero.topics, zero.undefined) == (4, 1)


def test_nuggetizer_global_mean_counts_a_topic_without_vital_nuggets_as_zero() -> None:
    t1 = nugget_scores(BANK_T1, ASSIGN_T1, topic_id="t1")
    t2 = nugget_scores(BANK_T2, ASSIGN_T2, topic_id="t2")
    scores = {"t1": t1, "t2": t2}
    # vital_score: t1 0.5, t2 undefined; here 0.5 over one topic, nuggetizer (0.5 + 0.0) / 2
    assert nugget_averages(scores)["vital_score"].mean == pytest.approx(0.5)
    assert nugget_averages(scores, undefined="zero")["vital_score"].mean == pytest.approx(0.25)
    # all_score is defined on both: (5/12 + 3/4) / 2 = 7/12
    assert nugget_averages(scores)["all_score"].mean == pytest.approx(7 / 12)


def test_bootstrap_interval_is_seeded_and_contains_the_mean() -> None:
    values = {f"t{i}": v for i, v in enumerate([0.1, 0.5, 0.3, 0.9, 0.7, 0.2, 0.4, 0.8])}
    a = macro_average(values, seed=7)
    assert a == macro_average(dict(reversed(values.items())), seed=7)  # order does not matter
    assert a.low < a.mean < a.high
    assert (a.level, a.interval) == (0.95, "bootstrap")
    assert macro_average(values, seed=8) != a


def test_t_interval_matches_hand_computation() -> None:
    # 0.2, 0.4, 0.9: mean 0.5, s = sqrt((0.09 + 0.01 + 0.16) / 2) = sqrt(0.13), se = s / sqrt(3),
    # t(0.975, 2 df) = 4.302653 -> half width 0.895684
    a = macro_average({"a": 0.2, "b": 0.4, "c": 0.9}, interval="t")
    half = 4.302652729911275 * math.sqrt(0.13) / math.sqrt(3)
    assert a.low == pytest.approx(0.5 - half)
    assert a.high == pytest.approx(0.5 + half)


def test_no_defined_value_averages_to_nan() -> None:
    a = macro_average({"a": None})
    assert math.isnan(a.mean) and math.isnan(a.low) and (a.topics, a.undefined) == (0, 1)


def test_bad_aggregation_options_are_errors() -> None:
    with pytest.raises(ValueError, match="undefined"):
        macro_average({"a": 1.0}, undefined="drop")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="interval"):
        macro_average({"a": 1.0}, interval="bca")  # type: ignore[arg-type]


# --- citation support -------------------------------------------------------------------------


def _answer(*sentences: tuple[str, tuple[int, ...]], topic: str = "t") -> TopicAnswer:
    return TopicAnswer(
        topic_id=topic,
        references=("p1", "p2", "p3"),
        sentences=tuple(AnswerSentence(text, cites) for text, cites in sentences),
        response_length=None,
        line=1,
    )


def test_paper_example_gives_its_weighted_precision_and_recall() -> None:
    # Thakur et al. 2025, section 3.4: p1 partially supports a1, p2 fully supports a2, a3 cites
    # nothing -> precision (0.5 + 1) / 2 = 0.75, recall (0.5 + 1) / 3 = 0.5
    answer = _answer(("One two.", (0,)), ("Three four five.", (1,)), ("Six.", ()))
    s = support_scores(answer, {(0, "p1"): "partial", (1, "p2"): "full"})
    assert (s.precision, s.recall) == (0.75, 0.5)
    assert (s.sentences, s.cited, s.pairs, s.words) == (3, 2, 2, 6)


# Sentence 0 cites p1, p2; sentence 1 cites p2; sentence 2 nothing; sentence 3 cites p3, p1.
SEVERAL = _answer(
    ("Alpha beta.", (0, 1)), ("Gamma.", (1,)), ("Delta epsilon zeta.", ()), ("Eta.", (2, 0))
)
SEVERAL_JUDGED = {
    (0, "p1"): "partial",
    (0, "p2"): "full",
    (1, "p2"): "none",
    (3, "p3"): "full",
    (3, "p1"): "partial",
}


def test_first_citation_only_is_the_track_protocol() -> None:
    s = support_scores(SEVERAL, SEVERAL_JUDGED)
    # first pairs: (0, p1) 0.5, (1, p2) 0, (3, p3) 1 -> precision 1.5 / 3 = 0.5
    # recall: 0.5 + 0 + 0 (uncited) + 1 over 4 sentences = 0.375
    assert (s.precision, s.recall, s.pairs) == (0.5, 0.375, 3)


def test_all_citations_average_pairs_and_take_each_sentences_best() -> None:
    s = support_scores(SEVERAL, SEVERAL_JUDGED, citations="all")
    # pairs: 0.5, 1, 0, 1, 0.5 -> precision 3 / 5 = 0.6
    # sentences' best: 1 (p2 full), 0, 0 (uncited), 1 (p3 full) -> recall 2 / 4 = 0.5
    assert (s.precision, s.recall, s.pairs) == (0.6, 0.5, 5)


def test_answer_without_citations_has_recall_zero_and_no_precision() -> None:
    s = support_scores(_answer(("Nothing cited here.", ()), ("Nor here.", ())), {})
    assert (s.precision, s.recall, s.words) == (None, 0.0, 5)


def test_support_labels_in_the_papers_spellings() -> None:
    answer = _answer(("A.", (0,)), ("B.", (1,)), ("C.", (2,)))
    short = support_scores(answer, {(0, "p1"): "FS", (1, "p2"): "PS", (2, "p3"): "NS"})
    long = {(0, "p1"): "Full Support", (1, "p2"): "partial_support", (2, "p3"): "no-support"}
    assert support_scores(answer, long) == short
    assert short.precision == pytest.approx(1.5 / 3)


@pytest.mark.parametrize(
    ("judgments", "message"),
    [
        ({(0, "p1"): "partial", (1, "p2"): "full"}, "unjudged"),  # (3, p3) missing
        ({**SEVERAL_JUDGED, (1, "p3"): "full"}, "does not cite"),  # sentence 1 cites p2 only
        ({**SEVERAL_JUDGED, (9, "p1"): "full"}, "does not cite"),  # no sentence 9
        ({**SEVERAL_JUDGED, (0, "p1"): "mostly"}, "unknown support label"),
    ],
)
def test_bad_support_judgments_are_errors(
    judgments: dict[tuple[int, str], str], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        support_scores(SEVERAL, judgments)


def test_run_support_scores_only_the_asked_topics() -> None:
    a = _answer(("One two.", (0,)), topic="t1")
    b = _answer(("Three.", ()), topic="t2")
    c = _answer(("Four.", (1,)), topic="t3")  # unjudged, and not asked for
    scores = run_support_scores([a, b, c], {"t1": {(0, "p1"): "full"}}, topics={"t1", "t2", "t9"})
    assert set(scores) == {"t1", "t2"}  # t9 was not answered: left out
    assert (scores["t1"].precision, scores["t2"].recall) == (1.0, 0.0)
    avg = support_averages(scores)
    # precision: t1 only (t2 cites nothing); recall (1 + 0) / 2; words (2 + 1) / 2
    assert (avg["precision"].mean, avg["precision"].undefined) == (1.0, 1)
    assert (avg["recall"].mean, avg["words"].mean) == (0.5, 1.5)
    assert isinstance(avg["words"], MacroAverage)


def test_words_are_the_checkers_word_count() -> None:
    # NFKC makes the full-width "Full" plain; white space of any kind splits: 3 + 2 words
    first = "  \uff26\uff55\uff4c\uff4c-width  words\there. "
    s = support_scores(_answer((first, (0,)), ("Two more.", ())), {(0, "p1"): "full"})
    assert s.words == word_count([first, "Two more."]) == 5


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["full", "partial", "none"]), min_size=1, max_size=8))
def test_first_citation_precision_equals_recall_when_every_sentence_cites(
    labels: list[str],
) -> None:
    # the paper (section 3.4): with the first citation only, the two are identical when every
    # sentence has at least one citation
    answer = _answer(*((f"S{i}.", (i % 3,)) for i in range(len(labels))))
    judged = {(i, ("p1", "p2", "p3")[i % 3]): label for i, label in enumerate(labels)}
    s = support_scores(answer, judged)
    assert s.precision == pytest.approx(s.recall)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["support", "partial_support", "not_support", "failed"])))
def test_strict_scores_never_exceed_partial_credit_ones(labels: list[str]) -> None:
    bank = tuple(Nugget(str(i), "n", "vital" if i % 2 else "okay") for i in range(len(labels)))
    s = nugget_scores(bank, {str(i): label for i, label in enumerate(labels)})
    for strict, lenient in [
        ("strict_all_score", "all_score"),
        ("strict_vital_score", "vital_score"),
    ]:
        if s.score(lenient) is not None:
            assert s.score(strict) <= s.score(lenient)  # type: ignore[operator]
