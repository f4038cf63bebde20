"""Pool-bias analyses on hand-worked toys, cross-checked against pytrec_eval on explicit qrels.

The toy (one topic, pool depth 2; qrels a, b, d, e, g relevant, c judged non-relevant, x unjudged):

    run A: a b c      top 2 {a, b}
    run B: b d a      top 2 {b, d}
    run C: d x e      top 2 {d, x}

Pool {a, b, d, x}; restricted qrels a, b, d (R = 3; c, e, g fall outside the pool). Only A
contributes a (b is shared with B, d with C); x is C's alone but unjudged. By hand:

    full AP:    A (1 + 2/2)/3 = 2/3     B (1 + 1 + 1)/3 = 1     C 1/3
    without A:  a leaves, R = 2: A = (1/2)/2 = 1/4      delta 5/12, delta% 166.7
    without B:  nothing of B's alone is judged: 1       delta 0
    without C:  only x leaves (unjudged): 1/3           delta 0

Full ranking B, A, C; leave-out ranking B, C, A: tau-b = (2 - 1)/3 = 1/3; tau_AP (full as
reference) = 2/2 * (1/1 + 1/2) - 1 = 1/2.
"""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics import Qrels, Run, evaluate
from metrics.bias.judged import judged_at_k
from metrics.bias.leaveout import LeaveOneOut, LeaveOut, leave_one_out
from metrics.bias.penalty import estimate_penalty
from metrics.bias.topics import restrict_qrels
from metrics.bias.versions import compare_qrels_versions
from metrics.cli.app import main
from metrics.pooling.runs import parse_topic_spec
from tests.metrics.strategies import collections


def _run(tag: str, docs: dict[str, list[str]]) -> Run:
    return Run.from_dict(
        {q: {d: float(len(ds) - i) for i, d in enumerate(ds)} for q, ds in docs.items()}, tag=tag
    )


QRELS = Qrels.from_dict({"1": {"a": 1, "b": 1, "c": 0, "d": 1, "e": 1, "g": 1, "x": -1}})
RUNS = {
    "A": _run("A", {"1": ["a", "b", "c"]}),
    "B": _run("B", {"1": ["b", "d", "a"]}),
    "C": _run("C", {"1": ["d", "x", "e"]}),
}


def test_leave_one_run_out_matches_the_hand_worked_toy() -> None:
    res = leave_one_out(QRELS, RUNS, "AP", LeaveOut(depth=2))
    a, b, c = res.runs["A"], res.runs["B"], res.runs["C"]
    assert a.score == pytest.approx(2 / 3)
    assert a.score_without == pytest.approx(1 / 4)
    assert a.delta == pytest.approx(5 / 12)
    assert a.delta_pct == pytest.approx(100 * (5 / 12) / (1 / 4))
    assert (b.score, b.score_without, b.delta) == pytest.approx((1.0, 1.0, 0.0))
    assert (c.score, c.score_without, c.delta) == pytest.approx((1 / 3, 1 / 3, 0.0))
    assert [a.rank, b.rank, c.rank] == [2, 1, 3]
    # A without its pool documents (1/4) is below both others' full scores (1, 1/3)
    assert [a.rank_without, b.rank_without, c.rank_without] == [3, 1, 3]
    assert [a.unique_relevant, b.unique_relevant, c.unique_relevant] == [1, 0, 0]
    assert res.kendall_tau == pytest.approx(1 / 3)
    assert res.tau_ap == pytest.approx(1 / 2)
    assert res.max_delta_run == "A"
    assert res.max_delta == pytest.approx(5 / 12)
    assert res.mean_delta == pytest.approx(5 / 36)


def test_json_has_exactly_the_documented_run_keys() -> None:
    doc = leave_one_out(QRELS, RUNS, "AP", LeaveOut(depth=2)).to_dict()
    assert {"measure", "depth", "kendall_tau", "tau_ap", "runs"} <= set(doc)
    assert doc["measure"] == "AP" and doc["depth"] == 2 and doc["leave_out"] == "run"
    assert set(doc["runs"]["A"]) == {
        "score",
        "score_without",
        "delta",
        "delta_pct",
        "rank",
        "rank_without",
        "unique_relevant",
    }
    json.dumps(doc)  # JSON-able


def test_delta_pct_is_none_when_the_score_without_is_zero() -> None:
    # Groups: A and B together contribute a and b alone, so without them A finds nothing.
    res = leave_one_out(
        QRELS,
        RUNS,
        "AP",
        LeaveOut(depth=2, leave_out="group", groups={"A": "g1", "B": "g1", "C": "g2"}),
    )
    a, b, c = res.runs["A"], res.runs["B"], res.runs["C"]
    assert (a.score_without, a.delta_pct) == (0.0, None)
    # without g1 the pool is {d, x}: R = 1, B finds d at rank 2
    assert b.score_without == pytest.approx(1 / 2)
    assert b.delta_pct == pytest.approx(100.0)
    assert c.delta == pytest.approx(0.0)
    assert a.unique_relevant == b.unique_relevant == 2  # a and b; d is shared with C
    assert res.groups["g1"] == {"runs": ["A", "B"], "unique_relevant": 2}
    assert res.to_dict()["runs"]["A"]["delta_pct"] is None


def test_group_mode_needs_a_group_for_every_pooled_run() -> None:
    with pytest.raises(ValueError, match="no group for run"):
        leave_one_out(QRELS, RUNS, "AP", LeaveOut(depth=2, leave_out="group", groups={"A": "g"}))
    with pytest.raises(ValueError, match="needs the run -> group mapping"):
        leave_one_out(QRELS, RUNS, "AP", LeaveOut(depth=2, leave_out="group"))


def test_precision_and_ndcg_on_the_toy() -> None:
    loo = LeaveOneOut(QRELS, RUNS, LeaveOut(depth=2))
    p2 = loo.result("P@2")
    assert p2.runs["A"].score == pytest.approx(1.0)
    assert p2.runs["A"].score_without == pytest.approx(0.5)  # a is unjudged without A
    nd = loo.result("nDCG@2")
    # A without: b at rank 2 -> (1/log2 3) / (1 + 1/log2 3), ideal from b, d
    ideal = 1 + 1 / math.log2(3)
    assert nd.runs["A"].score_without == pytest.approx((1 / math.log2(3)) / ideal)
    assert nd.runs["A"].score == pytest.approx(1.0)


def test_pooled_subset_scores_the_others_without_pooling_them() -> None:
    runs = {**RUNS, "D": _run("D", {"1": ["g", "a", "z"]})}
    loo = LeaveOneOut(QRELS, runs, LeaveOut(depth=2, pooled=["A", "B", "C"]))
    res = loo.result("AP")
    assert set(res.runs) == {"A", "B", "C"}
    # D against the pool of A, B, C: g is unjudged there, a relevant at rank 2, R = 3
    assert res.not_pooled["D"] == pytest.approx((1 / 2) / 3)
    est = estimate_penalty(res)
    assert est.to_dict()["estimate"] is True
    assert est.basis["n_runs"] == 3 and est.basis["depth"] == 2
    assert est.penalty == pytest.approx(5 / 36)  # mean delta of A, B, C
    assert est.runs["D"]["estimated_score"] == pytest.approx(1 / 6 + 5 / 36)
    rel = estimate_penalty(res, relative=True)
    mean_pct = (100 * (5 / 12) / (1 / 4)) / 3
    assert rel.runs["D"]["estimated_penalty"] == pytest.approx((1 / 6) * mean_pct / 100)


def test_judged_at_k_counts_negative_grades_as_unjudged() -> None:
    rep = judged_at_k(QRELS, RUNS, k=2, pooled=["A", "B"])
    assert rep.per_query["A"]["1"] == 1.0
    assert rep.per_query["C"]["1"] == 0.5  # x has grade -1
    assert rep.mean_pooled == pytest.approx(1.0)
    assert rep.mean_not_pooled == pytest.approx(0.5)
    assert judged_at_k(QRELS, RUNS, k=3).means["C"] == pytest.approx(2 / 3)


def test_compare_qrels_versions_shows_novel_gain_and_recall_drop() -> None:
    before = Qrels.from_dict({"1": {"a": 1, "b": 1, "d": 1}})
    after = Qrels.from_dict({"1": {"a": 1, "b": 1, "d": 1, "e": 1}})
    cmp = compare_qrels_versions(before, after, RUNS, "AP", novel=["C"], recall_k=3)
    assert cmp.runs["A"].score_a == pytest.approx(2 / 3)
    assert cmp.runs["A"].score_b == pytest.approx(2 / 4)
    assert cmp.novel_gain["C"] == pytest.approx(5 / 12 - 1 / 3)
    b = cmp.others_recall_change["B"]
    assert (b["a"], b["b"], b["delta"]) == pytest.approx((1.0, 0.75, -0.25))
    assert b["change"] == "drop"
    assert cmp.topics_note == "compared on the one topic both can score (1)"
    assert cmp.runs["C"].recall_delta == pytest.approx(2 / 4 - 1 / 3)
    assert [cmp.runs[t].rank_b for t in "ABC"] == [2, 1, 3]
    assert cmp.kendall_tau == pytest.approx(1.0)
    assert "C" not in cmp.others_recall_change


def test_parse_topic_spec_reads_ranges_and_lists() -> None:
    assert parse_topic_spec("601-603,700") == ["601", "602", "603", "700"]
    with pytest.raises(ValueError):
        parse_topic_spec("650-601")


def test_topics_filter_limits_the_pool_and_the_average() -> None:
    qrels = Qrels.from_dict({**QRELS.to_dict(), "2": {"a": 1}})
    runs = {t: _run(t, {**{"1": r.ranking("1")}, "2": ["z", "a"]}) for t, r in RUNS.items()}
    only1 = leave_one_out(qrels, runs, "AP", LeaveOut(depth=2, topics=["1"]))
    assert only1.topics == ("1",)
    assert only1.runs["A"].score == pytest.approx(2 / 3)
    both = leave_one_out(qrels, runs, "AP", LeaveOut(depth=2))
    assert both.runs["A"].score == pytest.approx((2 / 3 + 1 / 2) / 2)


# --------------------------------------------------------------------------------------------
# Property: the vectorised leave-one-out equals pytrec_eval on explicitly restricted qrels


def _pool(runs: dict[str, Run], tags: list[str], depth: int) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for t in tags:
        for q in runs[t].qids:
            out.setdefault(q, set()).update(runs[t].ranking(q)[:depth])
    return out


def _pytrec_mean(qrels: Qrels, run: Run, measure: str) -> float:
    qd = qrels.to_dict()
    if not qd:
        return math.nan
    res = pytrec_eval.RelevanceEvaluator(qd, {measure}).evaluate(run.to_dict())
    vals = [v[measure] for v in res.values()]
    return sum(vals) / len(vals) if vals else math.nan


@settings(max_examples=150, deadline=None)
@given(collections(), st.integers(1, 4))
def test_vectorised_loo_equals_pytrec_eval_on_explicit_qrels(
    data: tuple[Qrels, dict[str, Run]], depth: int
) -> None:
    qrels, runs = data
    loo = LeaveOneOut(qrels, runs, LeaveOut(depth=depth))
    tags = list(runs)
    for ours, theirs in (("AP", "map"), ("P@3", "P_3"), ("nDCG@3", "ndcg_cut_3")):
        res = loo.result(ours)
        full_qrels = restrict_qrels(qrels, _pool(runs, tags, depth))
        for tag in tags:
            others = restrict_qrels(qrels, _pool(runs, [t for t in tags if t != tag], depth))
            expect = (
                _pytrec_mean(full_qrels, runs[tag], theirs),
                _pytrec_mean(others, runs[tag], theirs),
            )
            got = (res.runs[tag].score, res.runs[tag].score_without)
            assert got == pytest.approx(expect, abs=1e-12, nan_ok=True), (ours, tag)


@settings(max_examples=60, deadline=None)
@given(collections(), st.integers(1, 4))
def test_honest_mode_loo_equals_evaluate_on_explicit_qrels(
    data: tuple[Qrels, dict[str, Run]], depth: int
) -> None:
    # The honest mode has no external peer: check it against metrics.evaluate (same definitions:
    # zero-relevant topics excluded, unanswered topics score 0) on explicitly restricted qrels.
    qrels, runs = data
    res = leave_one_out(qrels, runs, "AP", LeaveOut(depth=depth, compat=None))
    tags = list(runs)
    for tag in tags:
        others = restrict_qrels(qrels, _pool(runs, [t for t in tags if t != tag], depth))
        full = restrict_qrels(qrels, _pool(runs, tags, depth))
        for q, got in ((full, res.runs[tag].score), (others, res.runs[tag].score_without)):
            expect = evaluate(q, runs[tag], ["AP"], ci=None).value("AP") if len(q) else math.nan
            assert got == pytest.approx(expect, abs=1e-12, nan_ok=True), tag


# --------------------------------------------------------------------------------------------
# CLI


def _write(tmp: Path, name: str, lines: list[str]) -> str:
    path = tmp / name
    path.write_text("\n".join(lines) + "\n")
    return str(path)


# written by conftest's ``files`` fixture (``files["groups"]`` is groups.tsv)
FILES = {
    "qrels.txt": "".join(f"1 0 {d} {g}\n" for d, g in QRELS.judgments("1").items()),
    **{
        f"{tag}.run": "".join(
            f"1 Q0 {d} {i + 1} {10 - i} {tag}\n" for i, d in enumerate(run.ranking("1"))
        )
        for tag, run in RUNS.items()
    },
    "groups.tsv": "run\tgroup\nA\tg1\nB\tg1\nC\tg2\n",
}


def _cli(argv: list[str]) -> tuple[int, str]:
    buf = io.StringIO()
    code = main(["bias", *argv], out=buf)
    return code, buf.getvalue()


def test_cli_json_reports_the_toy(files: dict[str, str]) -> None:
    code, text = _cli([files["qrels"], files["A"], files["B"], files["C"], "--depth", "2"])
    assert code == 0
    doc = json.loads(text)
    assert doc["runs"]["A"]["delta"] == pytest.approx(5 / 12)
    assert doc["kendall_tau"] == pytest.approx(1 / 3)


def test_cli_tsv_and_group_mode(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    argv = [files["qrels"], files["A"], files["B"], files["C"], "--depth", "2", "-m", "AP"]
    code, text = _cli([*argv, "--leave-one-out", "group", "--groups", files["groups"]])
    assert code == 0
    code, text = _cli([*argv, "--format", "tsv"])
    assert code == 0
    lines = text.splitlines()
    assert lines[0].split("\t")[:4] == ["run", "score", "score_without", "delta"]
    assert lines[1].startswith("B\t1.0000\t1.0000")
    assert "kendall_tau=0.3333" in capsys.readouterr().err


def test_cli_errors_have_clear_exit_codes(files: dict[str, str], tmp_path: Path) -> None:
    base = [files["qrels"], files["A"], files["B"]]
    assert _cli([*base, "--leave-one-out", "group"])[0] == 2  # no --groups
    assert _cli([*base, "--topics", "9-1"])[0] == 2
    assert _cli([*base, "--depth", "0"])[0] == 2
    bad = _write(tmp_path, "bad.run", ["1 Q0 a 1 notanumber A"])
    assert _cli([files["qrels"], bad])[0] == 3
    nogroup = _write(tmp_path, "g.tsv", ["run\tgroup", "A\tg1"])
    assert _cli([*base, "--leave-one-out", "group", "--groups", nogroup])[0] == 3
    noheader = _write(tmp_path, "h.tsv", ["A\tg1", "B"])
    assert _cli([*base, "--leave-one-out", "group", "--groups", noheader])[0] == 3
    assert _cli([*base, "--topics", "999"])[0] == 3
    assert _cli([*base, "-m", "NotAMeasure"])[0] == 4
    assert _cli([files["qrels"], files["A"], files["A"]])[0] == 3  # same tag twice
