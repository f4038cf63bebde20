"""Two qrels versions compared on the topics both can score
(metrics.bias.versions.compare_qrels_versions).

The hand-worked toy: three runs, three topics; qrels v1 judges topic 3 but finds nothing relevant
there, v2 adds relevant documents to topics 1 and 2 and finds one in topic 3 (so topic 3 is new in
v2: compared on topics 1 and 2 only). Runs (best first), relevant documents in capitals:

    v1   topic 1: D1 d2 D3          topic 2: E1 E2          topic 3: f1 (no relevant)
    v2   topic 1: D1 d2 D3 D4       topic 2: E1 E2 E3       topic 3: f1 F2

    A    1: d1 d2 d3    2: e1 e3 e2    3: f2 f1
    B    1: d2 d1 d4    2: e2 e1       3: f1 f2
    C    1: d4 d3 d1    2: e3 e1 e2    3: f2        (novel: its documents d4, e3, f2 were added)

AP by hand (R = relevant in the version; unjudged = not relevant):

    v1  A: t1 (1 + 2/3)/2 = 5/6    t2 (1 + 2/3)/2 = 5/6   -> 5/6
        B: t1 (1/2)/2 = 1/4        t2 (1 + 1)/2 = 1       -> 5/8
        C: t1 (1/2 + 2/3)/2 = 7/12 t2 (1/2 + 2/3)/2 = 7/12 -> 7/12
    v2  A: t1 (1 + 2/3)/3 = 5/9    t2 3/3 = 1             -> 7/9     topic 3: 1
        B: t1 (1/2 + 2/3)/3 = 7/18 t2 2/3                 -> 19/36   topic 3: 1/2
        C: t1 1                    t2 1                   -> 1       topic 3: 1

delta (v2 - v1): A -1/18 (per topic -5/18, +1/6), B -7/72 (+5/36, -1/3), C +5/12 (both topics).
Ranks v1: A 1, B 2, C 3; v2: C 1, A 2, B 3 (rank change A -1, B -1, C +2). Kendall tau-b: one
concordant pair (A, B), two discordant -> (1 - 2)/3 = -1/3. tau_AP (v1 as reference, v2's order
C, A, B): A has C above it, which v1 ranks below A (0/1); B has C and A above, v1 agrees on A
(1/2): 2/2 * (0 + 1/2) - 1 = -1/2. On topic 3 alone (v2): A 1, C 1 (both rank 1), B 1/2 (rank 3).

R@2 by hand: v1 A (1/2 + 1/2)/2 = 1/2, B (1/2 + 1)/2 = 3/4, C 1/2; v2 A (1/3 + 2/3)/2 = 1/2,
B (1/3 + 2/3)/2 = 1/2, C (2/3 + 2/3)/2 = 2/3. So A "no change", B "drop" (-1/4), C "gain".
"""

from __future__ import annotations

import io
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import pytrec_eval
import scipy.stats

from metrics import Qrels, Run
from metrics.bias.topics import TopicSplit, common_topics, scorable_topics
from metrics.bias.versions import compare_qrels_versions
from metrics.cli.bias_compare import run_compare

ROOT = Path(__file__).resolve().parents[2]


def _run(tag: str, docs: dict[str, list[str]]) -> Run:
    return Run.from_dict(
        {q: {d: float(len(ds) - i) for i, d in enumerate(ds)} for q, ds in docs.items()}, tag=tag
    )


V1 = Qrels.from_dict({"1": {"d1": 1, "d2": 0, "d3": 1}, "2": {"e1": 1, "e2": 1}, "3": {"f1": 0}})
V2 = Qrels.from_dict(
    {
        "1": {"d1": 1, "d2": 0, "d3": 1, "d4": 1},
        "2": {"e1": 1, "e2": 1, "e3": 1},
        "3": {"f1": 0, "f2": 1},
    }
)
RUNS = {
    "A": _run("A", {"1": ["d1", "d2", "d3"], "2": ["e1", "e3", "e2"], "3": ["f2", "f1"]}),
    "B": _run("B", {"1": ["d2", "d1", "d4"], "2": ["e2", "e1"], "3": ["f1", "f2"]}),
    "C": _run("C", {"1": ["d4", "d3", "d1"], "2": ["e3", "e1", "e2"], "3": ["f2"]}),
}


@pytest.fixture(scope="module")
def toy() -> dict[str, Any]:
    cmp = compare_qrels_versions(V1, V2, RUNS, "AP", novel=["C"], recall_k=2, labels=("v1", "v2"))
    return cmp.to_dict()


def test_only_the_topics_both_versions_can_score_are_compared(toy: dict[str, Any]) -> None:
    assert toy["topics"] == {"compared": ["1", "2"], "only_a": [], "only_b": ["3"], "neither": []}
    assert toy["topics_note"] == "compared on 2 topics; topic 3 is new in v2 (not in v1)"
    assert toy["labels"] == ["v1", "v2"]
    assert toy["measure"] == "AP" and toy["recall_measure"] == "R@2"
    assert toy["mode"] == "trec_eval" and toy["ci_level"] == 0.95


def test_scores_deltas_and_ranks_match_the_hand_worked_example(toy: dict[str, Any]) -> None:
    want = {
        "A": (5 / 6, 7 / 9, 1, 2, -1),
        "B": (5 / 8, 19 / 36, 2, 3, -1),
        "C": (7 / 12, 1.0, 3, 1, 2),
    }
    for tag, (a, b, rank_a, rank_b, change) in want.items():
        r = toy["runs"][tag]
        assert r["score_a"] == pytest.approx(a, abs=1e-12)
        assert r["score_b"] == pytest.approx(b, abs=1e-12)
        assert r["delta"] == pytest.approx(b - a, abs=1e-12)
        assert (r["rank_a"], r["rank_b"], r["rank_change"]) == (rank_a, rank_b, change)
        assert r["n_topics"] == 2
        assert r["novel"] is (tag == "C")
    assert toy["novel_gain"] == {"C": pytest.approx(5 / 12, abs=1e-12)}


def test_delta_interval_and_p_are_the_paired_t_ones_from_scipy(toy: dict[str, Any]) -> None:
    for tag, diffs in {"A": [-5 / 18, 1 / 6], "B": [5 / 36, -1 / 3]}.items():
        d = np.array(diffs)
        lo, hi = scipy.stats.t.interval(0.95, df=1, loc=d.mean(), scale=scipy.stats.sem(d))
        r = toy["runs"][tag]
        assert r["delta_ci"] == pytest.approx([lo, hi], abs=1e-9)
        t = d.mean() / scipy.stats.sem(d)
        assert r["delta_p"] == pytest.approx(2 * scipy.stats.t.sf(abs(t), df=1), abs=1e-12)
    # A: mean -1/18, sem 2/9 -> -1/18 +- 12.706 * 2/9
    assert toy["runs"]["A"]["delta_ci"][0] == pytest.approx(-1 / 18 - 12.7062 * 2 / 9, abs=1e-3)
    # C gains 5/12 on both topics: no spread, the interval is the point
    assert toy["runs"]["C"]["delta_ci"] == pytest.approx([5 / 12, 5 / 12])


def test_rank_correlations_match_the_hand_worked_example(toy: dict[str, Any]) -> None:
    assert toy["kendall_tau"] == pytest.approx(-1 / 3)
    a = [toy["runs"][t]["score_a"] for t in "ABC"]
    b = [toy["runs"][t]["score_b"] for t in "ABC"]
    assert toy["kendall_tau"] == pytest.approx(scipy.stats.kendalltau(a, b).statistic)
    assert toy["tau_ap"] == pytest.approx(-1 / 2)


def test_recall_changes_are_labelled_by_their_sign(toy: dict[str, Any]) -> None:
    runs = toy["runs"]
    assert (runs["A"]["recall_a"], runs["A"]["recall_b"]) == pytest.approx((1 / 2, 1 / 2))
    assert (runs["B"]["recall_a"], runs["B"]["recall_b"]) == pytest.approx((3 / 4, 1 / 2))
    assert (runs["C"]["recall_a"], runs["C"]["recall_b"]) == pytest.approx((1 / 2, 2 / 3))
    assert [runs[t]["recall_change"] for t in "ABC"] == ["no change", "drop", "gain"]
    d = np.array([1 / 3 - 1 / 2, 2 / 3 - 1.0])  # B per topic
    lo, hi = scipy.stats.t.interval(0.95, df=1, loc=d.mean(), scale=scipy.stats.sem(d))
    assert runs["B"]["recall_delta_ci"] == pytest.approx([lo, hi])
    others = toy["others_recall_change"]
    assert set(others) == {"A", "B"}
    assert others["B"] == {
        "a": pytest.approx(0.75),
        "b": pytest.approx(0.5),
        "delta": pytest.approx(-0.25),
        "change": "drop",
    }
    assert others["A"]["change"] == "no change"
    assert toy["mean_others_recall_change"] == pytest.approx(-0.125)
    assert toy["others_recall_summary"] == (
        "recall (R@2) fell for 1 and did not change for 1 of the 2 other runs on the "
        "2 compared topics (mean -0.1250)"
    )


def test_new_topics_are_scored_separately_under_the_second_version(toy: dict[str, Any]) -> None:
    new = {t: toy["runs"][t]["new_topics"] for t in "ABC"}
    assert new["A"] == {"score_b": 1.0, "rank_b": 1, "recall_b": 1.0}
    assert new["B"] == {"score_b": 0.5, "rank_b": 3, "recall_b": 1.0}
    assert new["C"] == {"score_b": 1.0, "rank_b": 1, "recall_b": 1.0}


def test_scores_on_the_compared_topics_agree_with_pytrec_eval() -> None:
    cmp = compare_qrels_versions(V1, V2, RUNS, "AP", recall_k=2)
    for q, field in ((V1, "score_a"), (V2, "score_b")):
        sub = {t: j for t, j in q.to_dict().items() if t in ("1", "2")}
        ev = pytrec_eval.RelevanceEvaluator(sub, {"map"})
        for tag, run in RUNS.items():
            res = ev.evaluate(run.to_dict())
            expect = np.mean([v["map"] for v in res.values()])
            assert getattr(cmp.runs[tag], field) == pytest.approx(expect, abs=1e-12)


def test_no_nan_reaches_the_json() -> None:
    runs = {**RUNS, "Z": _run("Z", {"3": ["f2"]})}  # answers no compared topic
    cmp = compare_qrels_versions(V1, V2, runs, "AP", recall_k=2)
    text = json.dumps(cmp.to_dict(), allow_nan=False)
    z = json.loads(text)["runs"]["Z"]
    assert z["score_a"] is None and z["rank_a"] is None and z["delta_ci"] is None
    assert z["recall_change"] is None and z["n_topics"] == 0
    assert json.loads(text)["runs"]["A"]["rank_a"] == 1  # Z does not take a rank
    assert "1 other run answers none of them" in cmp.others_recall_summary
    one = compare_qrels_versions(
        V1, V2, {"A": RUNS["A"]}, "AP", topics=["1"], recall_k=2, compat="honest"
    ).to_dict()
    json.dumps(one, allow_nan=False)
    assert one["kendall_tau"] is None and one["runs"]["A"]["delta_ci"] is None
    assert one["runs"]["A"]["delta_p"] is None  # one topic: no paired test


def test_honest_mode_scores_an_unanswered_compared_topic_zero() -> None:
    runs = {"A": RUNS["A"], "Y": _run("Y", {"1": ["d1"]})}
    trec = compare_qrels_versions(V1, V2, runs, "AP", recall_k=2).runs["Y"]
    honest = compare_qrels_versions(V1, V2, runs, "AP", recall_k=2, compat="honest").runs["Y"]
    assert trec.score_a == pytest.approx(1 / 2) and trec.n_topics == 1  # (1/1)/2 on topic 1
    assert honest.score_a == pytest.approx(1 / 4) and honest.n_topics == 2  # topic 2 scores 0


def test_the_topics_filter_comes_before_the_split() -> None:
    cmp = compare_qrels_versions(V1, V2, RUNS, "AP", topics=["2", "3"], recall_k=2)
    assert cmp.topics.compared == ("2",) and cmp.topics.only_b == ("3",)
    assert cmp.runs["A"].score_a == pytest.approx(5 / 6)
    assert cmp.topics_note == "compared on 1 topic; topic 3 is new in b (not in a)"


def test_a_topic_dropped_from_the_second_version_is_named() -> None:
    cmp = compare_qrels_versions(V2, V1, RUNS, "AP", recall_k=2, labels=("v2", "v1"))
    assert cmp.topics.only_a == ("3",) and cmp.topics.only_b == ()
    assert cmp.topics_note == "compared on 2 topics; topic 3 is in v2 only (not in v1)"
    assert all(r.new_topics is None for r in cmp.runs.values())


@pytest.mark.parametrize(
    ("split", "note"),
    [
        (TopicSplit(("1", "2", "3", "4", "5", "6"), (), (), ()), "compared on all 6 topics"),
        (
            TopicSplit(("1", "2", "3", "4", "5"), (), ("6", "7"), ()),
            "compared on 5 topics; topics 6 and 7 are new in v2 (not in v1)",
        ),
        (
            TopicSplit(("1",), ("2",), ("6", "7", "8"), ("9",)),
            "compared on 1 topic; topics 6, 7 and 8 are new in v2 (not in v1); "
            "topic 2 is in v1 only (not in v2); topic 9 is in neither",
        ),
        (
            TopicSplit(("1",), (), tuple(str(i) for i in range(601, 651)), ()),
            "compared on 1 topic; topics 601, 602, 603, 604, 605 and 45 more are new in v2 "
            "(not in v1)",
        ),
        (TopicSplit(("4",), (), (), ()), "compared on the one topic both can score (4)"),
    ],
)
def test_the_topics_note_says_what_differs_in_plain_words(split: TopicSplit, note: str) -> None:
    assert split.note(("v1", "v2")) == note


def test_common_topics_splits_and_orders_numerically() -> None:
    split = common_topics(["10", "2", "3"], ["3", "10", "11"], universe=["2", "3", "10", "11", "9"])
    assert split == TopicSplit(("3", "10"), ("2",), ("11",), ("9",))
    assert common_topics(["1", "2"], ["2", "5"], universe=["2"]).compared == ("2",)
    assert scorable_topics(V1) == ("1", "2")  # topic 3 has judgments but none relevant
    assert scorable_topics(V2, relevance_level=2) == ()


def test_bad_requests_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="no topic to compare: v1 and v2"):
        compare_qrels_versions(
            Qrels.from_dict({"1": {"d1": 1}}),
            Qrels.from_dict({"2": {"e1": 1}}),
            RUNS,
            "AP",
            labels=("v1", "v2"),
        )
    with pytest.raises(ValueError, match="no topic to compare"):
        compare_qrels_versions(V1, V2, RUNS, "AP", topics=["3"])
    with pytest.raises(ValueError, match="novel runs not among"):
        compare_qrels_versions(V1, V2, RUNS, "AP", novel=["nope"])
    with pytest.raises(ValueError, match="labels"):
        compare_qrels_versions(V1, V2, RUNS, "AP", labels=("v1", "v1"))
    with pytest.raises(ValueError, match="recall_k"):
        compare_qrels_versions(V1, V2, RUNS, "AP", recall_k=0)
    with pytest.raises(ValueError, match="ci_level"):
        compare_qrels_versions(V1, V2, RUNS, "AP", ci_level=1.0)
    with pytest.raises(ValueError, match="no runs"):
        compare_qrels_versions(V1, V2, {}, "AP")


# --------------------------------------------------------------------------------------------
# the demo's story: pool v1 = depth-10 union of the 5 pooled runs, judged with the truth except
# topic 6; v2 adds novel-neural's top 10 and topic 6. Numbers are the demo helper's to tune; the
# rule is what is checked here.


def test_the_demo_before_after_compares_topics_1_to_5_only() -> None:
    from judging.demo.data import build

    demo = build()
    runs = {r.tag: Run.from_dict(r.results, tag=r.tag) for r in demo.runs}
    pooled = [r.tag for r in demo.runs if r.pooled]
    novel = [r.tag for r in demo.runs if not r.pooled]
    assert novel == ["novel-neural"]

    def pool(tags: list[str]) -> dict[str, set[str]]:
        return {q: {d for t in tags for d in runs[t].ranking(q)[:10]} for q in demo.truth}

    p1, p2 = pool(pooled), pool(pooled + novel)
    truth = demo.truth
    v1 = {q: {d: truth[q].get(d, 0) for d in p1[q]} for q in truth if q != "6"}
    v2 = {q: {d: truth[q].get(d, 0) for d in p2[q]} for q in truth}
    cmp = compare_qrels_versions(
        Qrels.from_dict(v1),
        Qrels.from_dict(v2),
        runs,
        "AP",
        novel=novel,
        recall_k=50,
        labels=("v1", "v2"),
    )
    assert cmp.topics.compared == ("1", "2", "3", "4", "5")
    assert cmp.topics_note == "compared on 5 topics; topic 6 is new in v2 (not in v1)"
    # each side's score is the mean over topics 1-5, as pytrec_eval gives it on those topics
    for qrels, field in ((v1, "score_a"), (v2, "score_b")):
        sub = {q: j for q, j in qrels.items() if q != "6"}
        ev = pytrec_eval.RelevanceEvaluator(sub, {"map"})
        for tag, run in runs.items():
            per_q = ev.evaluate(run.to_dict())
            assert getattr(cmp.runs[tag], field) == pytest.approx(
                np.mean([v["map"] for v in per_q.values()]), abs=1e-12
            )
    # the mixed comparison (v2 on 6 topics against v1 on 5) would differ from this one
    six = pytrec_eval.RelevanceEvaluator(v2, {"map"}).evaluate(runs["novel-neural"].to_dict())
    mixed_gain = np.mean([v["map"] for v in six.values()]) - cmp.runs["novel-neural"].score_a
    assert mixed_gain != pytest.approx(cmp.novel_gain["novel-neural"], abs=1e-6)
    assert cmp.runs["novel-neural"].new_topics is not None
    # the novel run gains; every label follows the sign of its delta
    assert cmp.novel_gain["novel-neural"] > 0
    for tag, r in cmp.runs.items():
        want = "drop" if r.recall_delta < -1e-12 else "gain" if r.recall_delta > 1e-12 else None
        assert r.recall_change == (want or "no change"), tag
    for tag, c in cmp.others_recall_change.items():
        assert c["change"] == cmp.runs[tag].recall_change
    assert cmp.mean_others_recall_change is not None and cmp.mean_others_recall_change < 0
    fell = sum(c["change"] == "drop" for c in cmp.others_recall_change.values())
    assert cmp.others_recall_summary.startswith(f"recall (R@50) fell for {fell}")
    assert "on the 5 compared topics" in cmp.others_recall_summary


# --------------------------------------------------------------------------------------------
# CLI


def _qrels_text(q: Qrels) -> str:
    return "".join(f"{t} 0 {d} {g}\n" for t, j in q.to_dict().items() for d, g in j.items())


# written by conftest's ``files`` fixture
FILES = {
    "v1.txt": _qrels_text(V1),
    "v2.txt": _qrels_text(V2),
    **{
        f"{tag}.run": "".join(
            f"{q} Q0 {d} {i + 1} {s} {tag}\n"
            for q in run.qids
            for i, (d, s) in enumerate(run.scores_of(q).items())
        )
        for tag, run in RUNS.items()
    },
}


def _cli(files: dict[str, str], *extra: str) -> tuple[int, str]:
    buf = io.StringIO()
    code = run_compare([files["v1"], files["v2"], files["A"], files["B"], files["C"], *extra], buf)
    return code, buf.getvalue()


def test_cli_json_is_the_comparison(files: dict[str, str]) -> None:
    code, text = _cli(files, "--novel", "C", "--recall-k", "2", "--labels", "v1,v2")
    assert code == 0
    res = json.loads(text)
    assert res["topics_note"] == "compared on 2 topics; topic 3 is new in v2 (not in v1)"
    assert res["novel_gain"]["C"] == pytest.approx(5 / 12)
    assert res["runs"]["B"]["recall_change"] == "drop"


def test_cli_tsv_rows_are_sorted_by_rank_under_the_second_version(
    files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, text = _cli(
        files, "--novel", "C", "--recall-k", "2", "--labels", "v1,v2", "--format", "tsv"
    )
    assert code == 0
    lines = text.splitlines()
    head = lines[0].split("\t")
    assert head[:4] == ["run", "novel", "score_v1", "score_v2"]
    rows = [ln.split("\t") for ln in lines[1:]]
    assert [r[0] for r in rows] == ["C", "A", "B"]
    assert rows[0][head.index("delta")] == "0.4167"
    assert rows[0][head.index("delta_p")] == "<0.0001"  # constant gain: no '0.0000'
    err = capsys.readouterr().err
    assert "compared on 2 topics; topic 3 is new in v2 (not in v1)" in err
    assert "Kendall tau-b -0.333" in err and "recall (R@2) fell for 1" in err


def test_cli_exit_codes(files: dict[str, str], tmp_path: Path) -> None:
    assert _cli(files, "--labels", "v1")[0] == 2
    assert _cli(files, "--topics", "9-1")[0] == 2
    assert _cli(files, "--novel", "nope")[0] == 2
    assert _cli(files, "--recall-k", "0")[0] == 2
    assert _cli(files, "-m", "APX")[0] == 4
    assert _cli(files, "--topics", "3")[0] == 3  # no topic both can score
    bad = tmp_path / "bad.txt"
    bad.write_text("1 0 d1\n")
    buf = io.StringIO()
    assert run_compare([str(bad), files["v2"], files["A"]], buf) == 3
    assert run_compare([files["v1"]], buf) == 2


def test_cli_runs_in_a_fresh_process(files: dict[str, str]) -> None:
    code = (
        "import sys; from metrics.cli.bias_compare import run_compare; "
        "sys.exit(run_compare(sys.argv[1:], sys.stdout))"
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            files["v1"],
            files["v2"],
            files["A"],
            files["B"],
            "--recall-k",
            "2",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout)
    assert res["runs"]["A"]["score_a"] == pytest.approx(5 / 6)
    assert not math.isnan(res["kendall_tau"])
