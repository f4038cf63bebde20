"""Preference judgments (trec_eval ``-R prefs``, ``-R qrels_prefs``) and the 14 prefs measures.

Every figure below is worked out by hand from the definitions in trec_eval 10.0's
``form_prefs_counts.c`` and ``m_prefs_*.c`` (the comments beside each test show the counting);
``tests/metrics/test_trec_eval_prefs.py`` compares the same code with the binary.
"""

from __future__ import annotations

import gzip
import io
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics import Run
from metrics.cli import app as cli
from metrics.evaluation.prefs import evaluate_prefs, format_trec, read_prefs
from metrics.io.limits import NO_LIMITS
from metrics.io.prefs import _LAYOUT, _by_line, _whole, split_lines
from metrics.measures.names import UnknownMeasureError, parse_measures
from metrics.problems import InvalidInput, Problems

ALL = [
    "prefs_num_prefs_poss",
    "prefs_num_prefs_ful",
    "prefs_num_prefs_ful_ret",
    "prefs_simp",
    "prefs_pair",
    "prefs_avgjg",
    "prefs_avgjg_Rnonrel",
    "prefs_simp_ret",
    "prefs_pair_ret",
    "prefs_avgjg_ret",
    "prefs_avgjg_Rnonrel_ret",
    "prefs_simp_imp",
    "prefs_pair_imp",
    "prefs_avgjg_imp",
]


def _values(
    prefs: bytes, run: dict[str, list[str]], qid: str, depth: int | None = None
) -> dict[str, float]:
    """Per-query values of every prefs measure; the run lists docnos best first."""
    scored = {q: {d: float(len(docs) - i) for i, d in enumerate(docs)} for q, docs in run.items()}
    res = evaluate_prefs(
        read_prefs(prefs), Run.from_dict(scored, tag="t"), ["all_prefs"], depth=depth
    )
    return {m: res.per_query[m][qid] for m in ALL}


def _approx(values: dict[str, float]) -> dict[str, object]:
    return {k: pytest.approx(v, abs=5e-5) for k, v in values.items()}


# get_prefs.c's first example: one user ranks six documents (13 preferences)
SIX = b"""q1 u1 s1 d1 3.0
q1 u1 s1 d2 2.0
q1 u1 s1 d3 0.0
q1 u1 s1 d4 6.0
q1 u1 s1 d5 0.0
q1 u1 s1 d6 2.0
"""


def test_one_group_of_equivalence_classes() -> None:
    """Classes 6 {d4} > 3 {d1} > 2 {d2, d6} > 0 {d3, d5}: 13 preferences. Ranked d2, d1, d3, d5
    (d4, d6 not retrieved): both retrieved, d1>d2 fails, d1>d3 d1>d5 d2>d3 d2>d5 hold (4 of 5);
    one retrieved: d4 over the four retrieved fail, d1>d6 holds, d6>d3 d6>d5 fail (1 of 7);
    neither: d4>d6 (1). Rnonrel: R = 4 >= N = 2, so (5 + rel_ret 2 * 2) / (13 + R 4 * 2) = 9/21;
    the _ret variant with R = N = 2 retrieved is 4/5."""
    got = _values(SIX, {"q1": ["d2", "d1", "d3", "d5"]}, "q1")
    assert got == _approx(
        {
            "prefs_num_prefs_poss": 13,
            "prefs_num_prefs_ful": 5,
            "prefs_num_prefs_ful_ret": 4,
            "prefs_simp": 5 / 13,
            "prefs_pair": 5 / 13,
            "prefs_avgjg": 5 / 13,
            "prefs_avgjg_Rnonrel": 9 / 21,
            "prefs_simp_ret": 4 / 5,
            "prefs_pair_ret": 4 / 5,
            "prefs_avgjg_ret": 4 / 5,
            "prefs_avgjg_Rnonrel_ret": 4 / 5,
            "prefs_simp_imp": 5 / 12,
            "prefs_pair_imp": 5 / 12,
            "prefs_avgjg_imp": 5 / 12,
        }
    )


TWO_USERS = b"""q u1 s d1 2
q u1 s d2 1
q u1 s d3 0
q u2 s d2 2
q u2 s d1 1
"""


def test_two_users_who_disagree_all_retrieved() -> None:
    """u1: d1 > d2 > d3; u2: d2 > d1. Ranked d1, d2, d3: u1 3 of 3, u2 0 of 1. simp 3/4; avgjg
    (1 + 0) / 2; pair: (d1, d2) 1 of 2 users, (d1, d3) and (d2, d3) 1 of 1: (1/2 + 1 + 1) / 3.
    Rnonrel: u1 R = 2 >= N = 1: (3 + 2 * 1) / (3 + 2 * 1) = 1; u2 R = 2, N = 0:
    (0 + 2 * 2) / (1 + 2 * 2) = 4/5; mean 0.9."""
    got = _values(TWO_USERS, {"q": ["d1", "d2", "d3"]}, "q")
    assert got["prefs_simp"] == pytest.approx(3 / 4)
    assert got["prefs_avgjg"] == pytest.approx(1 / 2)
    assert got["prefs_pair"] == pytest.approx(2.5 / 3)
    assert got["prefs_avgjg_Rnonrel"] == pytest.approx(0.9)
    assert got["prefs_pair_ret"] == got["prefs_pair_imp"] == got["prefs_pair"]


def test_two_users_who_disagree_one_document_not_retrieved() -> None:
    """Ranked d2, d1 (d3 not retrieved). u1: d1>d2 fails (both retrieved), d1>d3 and d2>d3 hold
    (implied); u2: d2>d1 holds. pair: (d2, d1) 1 of 2, (d2, d3) 1, (d1, d3) 1: 2.5 / 3; its _ret
    variant only (d2, d1): 1/2. Rnonrel_ret: u1 R = 2 retrieved, N = 0:
    (0 + 2 * 2) / (1 + R_all 2 * 2) = 4/5; u2 (1 + 4) / (1 + 4) = 1."""
    got = _values(TWO_USERS, {"q": ["d2", "d1"]}, "q")
    assert got == _approx(
        {
            "prefs_num_prefs_poss": 4,
            "prefs_num_prefs_ful": 3,
            "prefs_num_prefs_ful_ret": 1,
            "prefs_simp": 3 / 4,
            "prefs_pair": 2.5 / 3,
            "prefs_avgjg": (2 / 3 + 1) / 2,
            "prefs_avgjg_Rnonrel": (4 / 5 + 1) / 2,
            "prefs_simp_ret": 1 / 2,
            "prefs_pair_ret": 1 / 2,
            "prefs_avgjg_ret": (0 + 1) / 2,
            "prefs_avgjg_Rnonrel_ret": (4 / 5 + 1) / 2,
            "prefs_simp_imp": 3 / 4,
            "prefs_pair_imp": 2.5 / 3,
            "prefs_avgjg_imp": (2 / 3 + 1) / 2,
        }
    )


# get_prefs.c's transitivity example: two sub-groups of one group, 5 preferences
TRANSITIVE = b"""q1 u1 s1 d1 3
q1 u1 s1 d2 2
q1 u1 s1 d3 1
q1 u1 s2 d2 5
q1 u1 s2 d4 4
"""


def test_sub_groups_add_transitive_preferences() -> None:
    """1>2, 1>3, 2>3 (s1), 2>4 (s2) and 1>4 (transitivity); none between 3 and 4. Ranked d1, d4,
    d2: 1>2 and 1>4 hold, 2>4 fails (3 retrieved pairs); 1>3 and 2>3 hold implied. All four
    documents relevant (d2's last level, 5): Rnonrel (4 + 3 * 4) / (5 + 4 * 4) = 16/21;
    Rnonrel_ret (2 + 3 * 3) / (3 + 4 * 3) = 11/15."""
    got = _values(TRANSITIVE, {"q1": ["d1", "d4", "d2"]}, "q1")
    assert got["prefs_num_prefs_poss"] == 5
    assert got["prefs_num_prefs_ful_ret"] == 2
    assert got["prefs_simp"] == pytest.approx(4 / 5)
    assert got["prefs_simp_ret"] == pytest.approx(2 / 3)
    assert got["prefs_avgjg_Rnonrel"] == pytest.approx(16 / 21)
    assert got["prefs_avgjg_Rnonrel_ret"] == pytest.approx(11 / 15)


@pytest.mark.parametrize(
    ("data", "rnonrel"),
    [
        (b"q u s1 a -1\nq u s1 b -2\nq u s2 a 2\nq u s2 c 1\n", 4 / 6),
        (b"q u s1 a 2\nq u s1 c 1\nq u s2 a -1\nq u s2 b -2\n", 1 / 3),
    ],
)
def test_a_documents_level_in_a_group_is_its_last_sub_groups(data: bytes, rnonrel: float) -> None:
    """a > b (s1 or s2) and a > c; ranked c, b, a, both fail. a is relevant when its last
    sub-group (s2) puts it above 0: R = 2, (0 + 2 * 2) / (2 + 2 * 2); at -1 there, a is
    neither relevant nor not: R = 1, (0 + 1) / (2 + 1) (the binary prints 0.6667 and 0.3333)."""
    got = _values(data, {"q": ["c", "b", "a"]}, "q")
    assert got["prefs_avgjg_Rnonrel"] == pytest.approx(rnonrel)


def test_more_non_relevant_than_relevant_recounts_against_the_first_r() -> None:
    """One relevant a, non-relevant b, c, d; ranked a, c, b. R = 1 < N = 3: the non-relevant
    class is cut to its first R documents in rank order, {c}, and every document of every class
    is compared with it, the last class's own documents too (m_prefs_avgjg_Rnonrel.c): a>c
    holds; c>c, b>c, d>c do not: 1/4. Retrieved only: a>c holds, c>c and b>c do not: 1/3."""
    got = _values(b"q u s a 1\nq u s b 0\nq u s c 0\nq u s d 0\n", {"q": ["a", "c", "b"]}, "q")
    assert got["prefs_simp"] == 1.0
    assert got["prefs_avgjg_Rnonrel"] == pytest.approx(1 / 4)
    assert got["prefs_avgjg_Rnonrel_ret"] == pytest.approx(1 / 3)


def test_ties_in_score_rank_by_docno_ascending() -> None:
    """form_prefs_counts.c breaks score ties by docno ascending (form_res_rels.c, for the other
    measures, by docno descending): a and b tied, a > b preferred, holds."""
    prefs = read_prefs(b"q u s a 2\nq u s b 1\n")
    run = Run.from_dict({"q": {"b": 1.0, "a": 1.0}})
    assert evaluate_prefs(prefs, run, ["prefs_simp"]).per_query["prefs_simp"]["q"] == 1.0


def test_qrels_read_as_prefs_judge_by_grade() -> None:
    """-R qrels_prefs: qid, judgment group (the qrels' second column), docno, rel_level; one
    sub-group. Grades 2 > 1 > 0: d1 > d2 > d3 and d1 > d3; ranked d3, d1: d1>d3 fails, d1>d2
    holds (implied), d2>d3 fails (implied)."""
    prefs = read_prefs(b"7 0 d1 2\n7 0 d2 1\n7 0 d3 0\n", format="qrels_prefs")
    got = evaluate_prefs(prefs, Run.from_dict({"7": {"d3": 2.0, "d1": 1.0}}), ["prefs_simp"])
    assert got.per_query["prefs_simp"]["7"] == pytest.approx(1 / 3)


def test_a_missing_topic_with_complete_counts_its_preferences() -> None:
    """-c: a topic the run does not answer is scored against trec_eval's one-document dummy
    ranking: no preference holds, all are possible."""
    prefs = read_prefs(SIX + b"q2 u s x 1\nq2 u s y 0\n")
    run = Run.from_dict({"q2": {"x": 1.0}}, tag="t")
    res = evaluate_prefs(prefs, run, ["all_prefs"], complete=True)
    assert res.queries == ["q1", "q2"]
    assert res.per_query["prefs_num_prefs_poss"]["q1"] == 13
    assert res.per_query["prefs_simp"]["q1"] == 0.0
    assert res.aggregates["prefs_num_prefs_poss"] == 14  # counts are summed
    assert res.aggregates["prefs_simp"] == pytest.approx((0 + 1) / 2)


def test_depth_cuts_the_ranking() -> None:
    """-M 1: only d2 is retrieved; d1 > d2 then fails implied instead of as a retrieved pair."""
    got = _values(SIX, {"q1": ["d2", "d1", "d3", "d5"]}, "q1", depth=1)
    assert got["prefs_num_prefs_ful_ret"] == 0
    assert got["prefs_simp_ret"] == 0.0


def test_format_is_trec_evals() -> None:
    """Ranked d2, d1: d1>d2 fails (the one retrieved pair); d1 and d2 over the four documents not
    retrieved below them hold (5, implied): 5 of 13. The ``prefs`` nickname: runid, num_q and
    the first six measures (measures.c)."""
    res = evaluate_prefs(
        read_prefs(SIX), Run.from_dict({"q1": {"d2": 2.0, "d1": 1.0}}, tag="t"), ["prefs"]
    )
    assert format_trec(res, per_query=True).splitlines() == [
        "prefs_num_prefs_poss  \tq1\t13",
        "prefs_num_prefs_ful   \tq1\t5",
        "prefs_num_prefs_ful_ret\tq1\t0",
        "prefs_simp            \tq1\t0.3846",
        "prefs_pair            \tq1\t0.3846",
        "prefs_avgjg           \tq1\t0.3846",
        "runid                 \tall\tt",
        "num_q                 \tall\t1",
        "prefs_num_prefs_poss  \tall\t13",
        "prefs_num_prefs_ful   \tall\t5",
        "prefs_num_prefs_ful_ret\tall\t0",
        "prefs_simp            \tall\t0.3846",
        "prefs_pair            \tall\t0.3846",
        "prefs_avgjg           \tall\t0.3846",
    ]


# --------------------------------------------------------------------------------------------
# Reading, and what a file may not say


def test_comment_and_blank_lines_are_skipped_and_gzip_is_read() -> None:
    data = b"# comment\n\n" + SIX
    assert read_prefs(gzip.compress(data)).to_dict() == read_prefs(SIX).to_dict()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"q u s d1\n", "line 1: expected 5 fields (qid jg jsg docno rel_level), got 4"),
        (b"q u s d1 2\nq u s d2 high\n", "line 2: rel_level 'high' is not a number"),
        (b"q u s d1 nan\n", "line 1: rel_level 'nan' is not a finite number"),
        (b"q u s d1 2\nq u s d1 2\n", "line 2: docno 'd1' is listed twice in judgment sub-group"),
        (b"", "no data lines (empty file)"),
        (b"q u\x01 s d1 2\n", "line 1: judgment group 'u\\x01' contains a control character"),
    ],
)
def test_bad_lines_are_errors_naming_the_line(data: bytes, message: str) -> None:
    with pytest.raises(InvalidInput) as err:
        read_prefs(data, source="p.txt")
    assert message in str(err.value)


def test_qrels_prefs_lines_have_four_fields() -> None:
    with pytest.raises(InvalidInput, match=r"expected 4 fields \(qid jg docno rel_level\)"):
        read_prefs(b"1 0 d1 1 extra\n", format="qrels_prefs")


def test_zero_and_positive_level_of_one_document_in_one_group_is_an_error() -> None:
    """get_prefs.c: 0 means non-relevant, so within a judgment group a document that is 0 in one
    sub-group may not be above 0 in another (trec_eval: 'has both 0 and non-0 rel_level')."""
    with pytest.raises(InvalidInput, match="line 4: document 'd1' has rel_level 2 in judgment"):
        read_prefs(b"q u s1 d1 0\nq u s1 d2 1\nq u s2 d3 3\nq u s2 d1 2\n", source="p")


def test_contradicting_sub_groups_are_an_error() -> None:
    """A judgment group must be consistent: a > b in one sub-group and b > a in another (through
    transitivity here: a > b, b > c, c > a) is an error (trec_eval aborts)."""
    data = b"q u s1 a 2\nq u s1 b 1\nq u s2 b 2\nq u s2 c 1\nq u s3 c 2\nq u s3 a 1\n"
    with pytest.raises(
        InvalidInput,
        match="judgment group 'u' of topic 'q' contradicts itself: documents 'a' and 'b' are each",
    ):
        read_prefs(data, source="p")


def test_other_groups_may_disagree() -> None:
    # within one group a contradiction is an error; two groups may prefer opposite documents,
    # each counted on its own: ranked a, b, u1's a > b holds and u2's b > a does not
    prefs = read_prefs(b"q u1 s a 2\nq u1 s b 1\nq u2 s a 1\nq u2 s b 2\n")
    assert [g.name for g in prefs.topics[0].groups] == ["u1", "u2"]
    got = evaluate_prefs(prefs, Run.from_dict({"q": {"a": 2.0, "b": 1.0}}), ["prefs_simp"])
    assert got.per_query["prefs_simp"]["q"] == 0.5


# --------------------------------------------------------------------------------------------
# The command line


def _cli(args: list[str]) -> tuple[int, str]:
    buf = io.StringIO()
    code = cli.main(["evaluate", "--compat", "trec_eval", *args], out=buf)
    return code, buf.getvalue()


def test_cli_reads_prefs_and_prints_all_prefs(tmp_path: Path) -> None:
    """Ranked d2, d1, d3: retrieved pairs d1>d2 fails, d1>d3 and d2>d3 hold; implied d1>d5,
    d1>d6, d2>d5 hold, d4 over d1 d2 d3 and d6>d3 fail; d4>d5, d4>d6, d6>d5 neither retrieved:
    5 of 13 (2 of 3 retrieved, 5 of 10 with one retrieved)."""
    (tmp_path / "prefs").write_bytes(SIX)
    (tmp_path / "run").write_text("q1 Q0 d2 1 5 tag\nq1 Q0 d1 2 4 tag\nq1 Q0 d3 3 3 tag\n")
    code, out = _cli(["-m", "all_prefs", "-q", "-R", "prefs", *_paths(tmp_path)])
    assert code == 0, out
    lines = out.splitlines()
    assert len(lines) == 14 + 2 + 14
    assert lines[:4] == [
        "prefs_num_prefs_poss  \tq1\t13",
        "prefs_num_prefs_ful   \tq1\t5",
        "prefs_num_prefs_ful_ret\tq1\t2",
        "prefs_simp            \tq1\t0.3846",
    ]
    assert lines[14:16] == ["runid                 \tall\ttag", "num_q                 \tall\t1"]
    assert lines[-7] == "prefs_simp_ret        \tall\t0.6667"
    assert lines[-1] == "prefs_avgjg_imp       \tall\t0.5000"


def _paths(folder: Path) -> list[str]:
    return [str(folder / "prefs"), str(folder / "run")]


def test_cli_refuses_a_qrels_measure_on_prefs(tmp_path: Path) -> None:
    (tmp_path / "prefs").write_bytes(SIX)
    (tmp_path / "run").write_text("q1 Q0 d2 1 5 tag\n")
    code, _ = _cli(["-m", "map", "-R", "prefs", *_paths(tmp_path)])
    assert code == 4


def test_a_prefs_measure_on_plain_qrels_says_which_flag_it_needs() -> None:
    with pytest.raises(UnknownMeasureError, match="-R prefs or -R qrels_prefs"):
        parse_measures(["all_prefs"])


# --------------------------------------------------------------------------------------------
# Properties


@st.composite
def prefs_files(draw: st.DrawFn) -> bytes:
    """Valid preference files: 1-2 topics, 1-3 groups of 1-2 sub-groups, levels from a small
    set (ties), comment and blank lines, spaces or tabs. Groups of several sub-groups take
    each document's level from one hidden level per group (consistent)."""
    lines: list[str] = []
    for t in draw(
        st.lists(st.sampled_from(["1", "10", "2.x"]), min_size=1, max_size=2, unique=True)
    ):
        for g in draw(
            st.lists(st.sampled_from(["u", "v", "0"]), min_size=1, max_size=3, unique=True)
        ):
            docs = draw(
                st.lists(st.sampled_from(list("abcdefgh")), min_size=1, max_size=6, unique=True)
            )
            hidden = {d: draw(st.sampled_from([0.0, 1.0, 2.0, 2.5])) for d in docs}
            for s in ["s1", "s2"][: draw(st.integers(1, 2))]:
                for d in draw(st.lists(st.sampled_from(docs), min_size=1, unique=True)):
                    sep = draw(st.sampled_from([" ", "\t", "  "]))
                    lines.append(sep.join([t, g, s, d, f"{hidden[d]:g}"]))
                if draw(st.booleans()):
                    lines.append(draw(st.sampled_from(["", "# a comment", "   "])))
    return ("\n".join(lines) + draw(st.sampled_from(["", "\n"]))).encode()


@settings(max_examples=60, deadline=None)
@given(prefs_files())
def test_the_whole_file_and_line_by_line_readings_agree(data: bytes) -> None:
    whole = _whole("p", data, _LAYOUT["prefs"])
    problems = Problems()
    by_line = _by_line("p", split_lines(data), _LAYOUT["prefs"], NO_LIMITS, problems)
    assert whole is not None and not problems
    for field in ("qids", "jgs", "jsgs", "docnos", "levels", "lines"):
        assert getattr(whole, field).tolist() == getattr(by_line, field).tolist(), field


@pytest.mark.parametrize(
    "data",
    [
        b"q u s d 1\nq u s d 2\n",
        b"q u s d x\n",
        b"q u s d\n",
        b"q u s d 1\x01\n",
        b"q u s d\xff 1\n",
    ],
)
def test_a_file_with_a_problem_is_read_line_by_line(data: bytes) -> None:
    assert _whole("p", data, _LAYOUT["prefs"]) is None
    problems = Problems()
    _by_line("p", split_lines(data), _LAYOUT["prefs"], NO_LIMITS, problems)
    assert problems


@settings(max_examples=40, deadline=None)
@given(prefs_files(), st.randoms(use_true_random=False))
def test_what_does_not_depend_on_the_ranking(data: bytes, rng: random.Random) -> None:
    """The preferences expressed (prefs_num_prefs_poss) do not depend on the ranking; with one
    judgment group, prefs_pair is prefs_simp; a ranking by decreasing rel_level of a topic's
    only group of one sub-group fulfils every retrieved preference."""
    prefs = read_prefs(data)
    orders = []
    for topic in prefs.topics:
        docs = [d.decode() for d in topic.docnos.tolist()]
        rng.shuffle(docs)
        orders.append((topic.qid, docs))
    shuffled = Run.from_dict({q: {d: float(-i) for i, d in enumerate(ds)} for q, ds in orders})
    empty = Run.from_dict({q: {"unjudged": 1.0} for q, _ in orders})
    a = evaluate_prefs(prefs, shuffled, ["all_prefs"])
    b = evaluate_prefs(prefs, empty, ["all_prefs"])
    assert a.per_query["prefs_num_prefs_poss"] == b.per_query["prefs_num_prefs_poss"]
    for topic in prefs.topics:
        q = topic.qid
        assert b.per_query["prefs_num_prefs_ful"][q] == 0
        if len(topic.groups) == 1:
            assert a.per_query["prefs_pair"][q] == a.per_query["prefs_simp"][q]
        g = topic.groups[0]
        if len(topic.groups) == 1 and g.classes is not None:
            level = {d: -int(c) for d, c in zip(g.docs.tolist(), g.classes.tolist(), strict=True)}
            ranked = Run.from_dict(
                {q: {topic.docnos[d].decode(): float(v) for d, v in level.items()}}
            )
            one = evaluate_prefs(prefs, ranked, ["prefs_simp_ret", "prefs_simp"])
            if a.per_query["prefs_num_prefs_poss"][q]:
                assert one.per_query["prefs_simp_ret"][q] == 1.0
                assert one.per_query["prefs_simp"][q] == 1.0
