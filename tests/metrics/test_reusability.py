"""The reusability report (metrics.bias.reusability) on a hand-worked tiny pool.

Depth 2, two topics; runs A and B are group g1, C is group g2, D is not pooled. Relevant
documents in capitals, u is in no qrels (unjudged), x and c are retrieved but outside the pool:

    qrels  topic 1: A B d E F (F retrieved by nobody)      topic 2: P Q r S T (T by nobody)
    A      1: a b c          2: p q
    B      1: a d e          2: q r
    C      1: e a c          2: s u p
    D      1: f x           2: t u            (not pooled)

Depth-2 pool: topic 1 {a (A, B at 1; C at 2), b (A), d (B), e (C at 1)}, topic 2 {p (A at 1),
q (B at 1, A at 2), r (B), s (C at 1), u (C at 2)}. Relevant in the pool: a, b, e, p, q, s = 6.
Found by one group: b, e, p, q, s = 5 (a is g1's and g2's); by one run: b, e, p, s = 4 (q is A's
and B's). Unique relevant: g1 {b, p, q} = 3, g2 {e, s} = 2; per run A {b, p} = 2, B 0, C 2.

Efficiency: depth 1 brings a, e, p, q, s (5 judged, 5 relevant); depth 2 brings b, d (topic 1)
and r, u (topic 2): 3 judged (u is not), 1 relevant -> pooled [5, 9], judged [5, 8], relevant
[5, 6], relevant per judgment [1, 1/3]. Per topic: 1 has 4 judged, 3 relevant, and at the
deepest depth (window 1 for depth 2) 2 judged, 1 relevant: rate 1/2 against 3/4 overall, shallow
for a ratio of 0.5 but not for the default 0.75; topic 2's deepest depth adds r only: not shallow.

AP (trec_eval mode) on the full pool: A 2/3, B 4/9, C 11/18. Leaving g1 out (the pool is C's
top 2) A scores 1/4, B 5/12: drops 5/12 and 1/36, g1's drop their mean 2/9; leaving g2 out C
scores 5/24: drop 29/72. Middle half of [16/72, 29/72]: [77/288, 103/288]. Rankings A, C, B
against B, A, C: tau-b -1/3, tau_AP -1/2. Leaving runs out instead: A 3/8 (drop 7/24), B
unchanged (its only own documents d, r are not relevant), C 29/72.
"""

from __future__ import annotations

import io
import json
from typing import Any

import numpy as np
import pytest
import pytrec_eval

from metrics import Qrels, Run
from metrics.bias.leaveout import LeaveOut
from metrics.bias.reusability import reusability
from metrics.bias.topics import restrict_qrels
from metrics.cli.bias_compare import run_reusability


def _run(tag: str, docs: dict[str, list[str]]) -> Run:
    return Run.from_dict(
        {q: {d: float(len(ds) - i) for i, d in enumerate(ds)} for q, ds in docs.items()}, tag=tag
    )


QRELS = Qrels.from_dict(
    {
        "1": {"a": 1, "b": 1, "d": 0, "e": 1, "f": 1},
        "2": {"p": 1, "q": 1, "r": 0, "s": 1, "t": 1},
    }
)
RUNS = {
    "A": _run("A", {"1": ["a", "b", "c"], "2": ["p", "q"]}),
    "B": _run("B", {"1": ["a", "d", "e"], "2": ["q", "r"]}),
    "C": _run("C", {"1": ["e", "a", "c"], "2": ["s", "u", "p"]}),
    "D": _run("D", {"1": ["f", "x"], "2": ["t", "u"]}),
}
GROUPS = {"A": "g1", "B": "g1", "C": "g2"}
POOLED = ["A", "B", "C"]


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    rep = reusability(QRELS, RUNS, LeaveOut(depth=2, pooled=POOLED, groups=GROUPS))
    return json.loads(json.dumps(rep.to_dict(), allow_nan=False))


def test_counts_and_units(report: dict[str, Any]) -> None:
    assert report["depth"] == 2 and report["measure"] == "AP" and report["mode"] == "trec_eval"
    assert report["topics"] == ["1", "2"] and report["relevance_level"] == 1
    assert (report["n_runs"], report["n_pooled"], report["n_units"]) == (4, 3, 2)
    assert report["leave_out"] == "group"


def test_relevant_found_by_only_one_group_or_run(report: dict[str, Any]) -> None:
    assert report["relevant"] == {
        "total": 6,
        "by_one_unit": 5,
        "by_one_unit_share": pytest.approx(5 / 6),
        "by_one_run": 4,
        "by_one_run_share": pytest.approx(4 / 6),
    }
    assert report["unique_relevant"] == {"g1": 3, "g2": 2}
    assert report["unjudged_in_pool"] == 1


def test_units_are_runs_when_groups_are_unknown() -> None:
    rep = reusability(QRELS, RUNS, LeaveOut(depth=2, pooled=POOLED))
    assert rep.leave_out == "run" and rep.n_units == 3
    assert rep.unique_relevant == {"A": 2, "B": 0, "C": 2}
    assert rep.relevant["by_one_unit"] == rep.relevant["by_one_run"] == 4
    loo = rep.leave_one_out
    assert loo["max_drop_unit"] == "C" and loo["max_drop"] == pytest.approx(29 / 72)
    assert loo["mean_drop"] == pytest.approx((7 / 24 + 0 + 29 / 72) / 3)
    assert rep.expected_underestimate == pytest.approx((21 / 144, 25 / 72))


def test_efficiency_by_depth(report: dict[str, Any]) -> None:
    assert report["efficiency"] == {
        "depths": [1, 2],
        "pooled": [5, 9],
        "judged": [5, 8],
        "relevant": [5, 6],
        "relevant_per_judgment": [1.0, pytest.approx(1 / 3)],
    }


def test_per_topic_counts_and_the_shallow_rule(report: dict[str, Any]) -> None:
    assert report["per_topic"]["1"] == {
        "pooled": 4,
        "relevant": 3,
        "judged": 4,
        "relevant_at_deepest": 1,
        "judged_at_deepest": 2,
        "rate": 0.75,
        "rate_at_deepest": 0.5,
        "shallow": False,  # 1/2 < 0.75 * 3/4
    }
    assert report["per_topic"]["2"]["relevant_at_deepest"] == 0
    assert report["per_topic"]["2"]["pooled"] == 5 and report["per_topic"]["2"]["judged"] == 4
    assert report["shallow_topics"] == []
    assert report["rules"]["shallow_window"] == 1 and report["rules"]["shallow_ratio"] == 0.75
    lenient = reusability(
        QRELS, RUNS, LeaveOut(depth=2, pooled=POOLED, groups=GROUPS), shallow_ratio=0.5
    )
    assert lenient.shallow_topics == ("1",)  # 1/2 >= 0.5 * 3/4
    assert "the pool is shallow for topic 1." in lenient.verdict


def _pytrec_ap(qrels: Qrels, run: Run) -> float:
    per_q = pytrec_eval.RelevanceEvaluator(qrels.to_dict(), {"map"}).evaluate(run.to_dict())
    return float(np.mean([v["map"] for v in per_q.values()]))


def test_leave_one_group_out_drops_match_explicit_pools_and_pytrec_eval(
    report: dict[str, Any],
) -> None:
    def pool(tags: list[str]) -> dict[str, set[str]]:
        return {q: {d for t in tags for d in RUNS[t].ranking(q)[:2]} for q in ("1", "2")}

    full = restrict_qrels(QRELS, pool(POOLED))
    no_g1 = restrict_qrels(QRELS, pool(["C"]))
    no_g2 = restrict_qrels(QRELS, pool(["A", "B"]))
    drop_g1 = np.mean([_pytrec_ap(full, RUNS[t]) - _pytrec_ap(no_g1, RUNS[t]) for t in "AB"])
    drop_g2 = _pytrec_ap(full, RUNS["C"]) - _pytrec_ap(no_g2, RUNS["C"])
    assert (drop_g1, drop_g2) == pytest.approx((2 / 9, 29 / 72))  # the hand-worked values
    loo = report["leave_one_out"]
    assert loo["max_drop"] == pytest.approx(drop_g2) and loo["max_drop_unit"] == "g2"
    assert loo["mean_drop"] == pytest.approx((drop_g1 + drop_g2) / 2)
    assert loo["kendall_tau"] == pytest.approx(-1 / 3)
    assert loo["tau_ap"] == pytest.approx(-1 / 2)
    assert report["expected_underestimate"] == pytest.approx([77 / 288, 103 / 288])


def test_judged_at_k_of_pooled_and_other_runs(report: dict[str, Any]) -> None:
    # c and u are in no qrels: A (2/3 + 1)/2, B 1, C (2/3 + 2/3)/2; D has f and t judged, x and
    # u not: 1/2
    want = {"pooled": pytest.approx((5 / 6 + 1 + 2 / 3) / 3), "not_pooled": 0.5}
    assert report["judged"] == {"10": want, "100": want}
    everyone = reusability(QRELS, RUNS, LeaveOut(depth=2, groups={**GROUPS, "D": "g3"}))
    assert everyone.judged["10"]["not_pooled"] is None


def test_the_verdict_states_the_range_the_shallow_topics_and_the_threshold(
    report: dict[str, Any],
) -> None:
    assert report["reusable"] is False
    assert report["verdict"] == (
        "A new system's AP is likely underestimated by 0.2674-0.3576 (the middle half of the 2 "
        "groups' leave-one-group-out drops); the pool does not look shallow for any of the 2 "
        "topics. The collection does not look reusable for new systems by the test "
        "leave-one-group-out Kendall tau-b >= 0.9 and an expected underestimate of at most 5% of "
        "the pooled runs' mean AP (tau-b -0.333, underestimate up to 0.3576 against 0.0287)."
    )
    basis = report["basis"]
    assert basis[0] == (
        "6 relevant documents (grade >= 1) are in the depth-2 pool of the 2 topics; 5 of them "
        "(83.3% of the relevant documents in the pool) were found by only one group, "
        "4 (66.7% of them) by only one run."
    )
    assert "1 of the 9 documents of the depth-2 pool have no judgment" in basis[1]
    assert any("pooled runs 0.833, the other runs 0.500" in b for b in basis)
    assert any(b.startswith("Shallow rule:") for b in basis)
    assert basis[-1].endswith("(5% of 0.5741 is 0.0287).")  # mean of 2/3, 4/9, 11/18 = 31/54


def test_identical_groups_cannot_be_judged_and_say_so() -> None:
    runs = {"A": RUNS["A"], "A2": _run("A2", {"1": ["a", "b", "c"], "2": ["p", "q"]})}
    rep = reusability(QRELS, runs, LeaveOut(depth=2, groups={"A": "g1", "A2": "g2"}))
    assert rep.expected_underestimate == (0.0, 0.0)
    assert rep.reusable is None  # every score tied: no tau-b
    assert rep.verdict.startswith("A new system's AP is unlikely to be underestimated")
    assert "Reusability cannot be judged" in rep.verdict
    json.dumps(rep.to_dict(), allow_nan=False)
    one = reusability(QRELS, runs, LeaveOut(depth=2, groups={"A": "g1", "A2": "g1"}))
    assert one.expected_underestimate is None and one.reusable is None
    assert one.verdict.startswith("There are too few pooled groups (1)")
    json.dumps(one.to_dict(), allow_nan=False)


def test_bad_parameters_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="shallow_window"):
        reusability(QRELS, RUNS, LeaveOut(depth=2), shallow_window=3)
    with pytest.raises(ValueError, match="shallow_ratio"):
        reusability(QRELS, RUNS, LeaveOut(depth=2), shallow_ratio=0)
    with pytest.raises(ValueError, match="depth"):
        reusability(QRELS, RUNS, LeaveOut(depth=0))
    with pytest.raises(ValueError, match="no group"):
        reusability(QRELS, RUNS, LeaveOut(depth=2, groups={"A": "g1"}))
    with pytest.raises(ValueError, match="no topic"):
        reusability(QRELS, RUNS, LeaveOut(depth=2, topics=["9"]))


# --------------------------------------------------------------------------------------------
# CLI


# written by conftest's ``files`` fixture (``files["groups"]`` is groups.tsv)
FILES = {
    "qrels.txt": "".join(
        f"{q} 0 {d} {g}\n" for q, j in QRELS.to_dict().items() for d, g in j.items()
    ),
    **{
        f"{tag}.run": "".join(
            f"{q} Q0 {d} {i + 1} {s} {tag}\n"
            for q in run.qids
            for i, (d, s) in enumerate(run.scores_of(q).items())
        )
        for tag, run in RUNS.items()
    },
    "groups.tsv": "run\tgroup\n" + "".join(f"{t}\t{g}\n" for t, g in GROUPS.items()),
}


def _cli(files: dict[str, str], *extra: str) -> tuple[int, str]:
    buf = io.StringIO()
    argv = [files["qrels"], *(files[t] for t in "ABCD"), "--depth", "2", *extra]
    return run_reusability(argv, buf), buf.getvalue()


def test_cli_json_is_the_report(files: dict[str, str]) -> None:
    code, text = _cli(files, "--groups", files["groups"], "--pooled", "A,B,C")
    assert code == 0
    res = json.loads(text)
    assert res["unique_relevant"] == {"g1": 3, "g2": 2}
    assert res["expected_underestimate"] == pytest.approx([77 / 288, 103 / 288])
    assert res["n_pooled"] == 3 and res["leave_out"] == "group"


def test_cli_text_leads_with_the_verdict(files: dict[str, str]) -> None:
    code, text = _cli(files, "--groups", files["groups"], "--pooled", "A,B,C", "--format", "text")
    assert code == 0
    assert text.startswith("A new system's AP is likely underestimated by 0.2674-0.3576")
    assert "\nBasis:\n- 6 relevant documents" in text
    assert "2\t9\t8\t6\t0.3333\n" in text  # depth 2: pooled, judged, relevant, per judgment
    assert "1\t4\t4\t3\t1\tno\n" in text  # topic 1


def test_cli_exit_codes(files: dict[str, str]) -> None:
    assert _cli(files, "--depth", "0")[0] == 2
    assert _cli(files, "--topics", "x-")[0] == 2
    assert _cli(files, "--pooled", "A,nope")[0] == 2
    assert _cli(files, "-m", "NOPE")[0] == 4
    assert _cli(files, "--groups", files["groups"])[0] == 3  # D is pooled and has no group
    assert _cli(files, "--topics", "9")[0] == 3
    assert _cli(files, "--groups", files["qrels"])[0] == 3  # not a run<TAB>group file
