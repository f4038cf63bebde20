"""``metrics.evaluation.check``: the regression check of a run against a baseline, on hand-built
runs whose drops are known (significant or not), relative thresholds, the judged@k flag and the
query set. The figures are checked against scipy's paired t test and hand-worked values."""

from __future__ import annotations

import math

import pytest
import scipy.stats

from metrics.evaluation.check import (
    FAIL,
    PASS,
    WARN,
    check_values,
    judged_measure,
    parse_max_drop,
    regression_check,
)
from metrics.measures.names import parse_measure
from metrics.stats.intervals import bootstrap_ci
from metrics.stats.multiple import holm

QIDS = [f"q{i:02d}" for i in range(1, 21)]
# one relevant and one non-relevant document per query; q99 has no relevant document
QRELS = {q: {f"r{q}": 1, f"n{q}": 0} for q in QIDS} | {"q99": {"x": 0}}
BASE = {q: {f"r{q}": 2.0, f"n{q}": 1.0} for q in QIDS}


def worse_on(k: int) -> dict[str, dict[str, float]]:
    """The baseline with the non-relevant document first on the first k queries."""
    return {
        q: ({f"n{q}": 2.0, f"r{q}": 1.0} if i < k else {f"r{q}": 2.0, f"n{q}": 1.0})
        for i, q in enumerate(QIDS)
    }


def test_a_significant_drop_beyond_the_threshold_fails() -> None:
    res = regression_check(QRELS, worse_on(10), BASE, ["P@1"], 0.01)
    (row,) = res.measures
    # by hand: P@1 is 0 instead of 1 on 10 of 20 queries
    assert (row.baseline, row.run, row.delta) == (1.0, 0.5, -0.5)
    d = [-1.0] * 10 + [0.0] * 10
    expected = scipy.stats.ttest_rel([1 + x for x in d], [1.0] * 20)
    assert row.p_value == pytest.approx(float(expected.pvalue), rel=1e-12)
    assert (row.ci_low, row.ci_high) == pytest.approx(bootstrap_ci(d, n_resamples=10_000))
    assert (row.wins, row.ties, row.losses) == (0, 10, 10)
    assert row.verdict == FAIL and res.verdict == FAIL and not res.passed
    assert res.summary == f"FAIL: P@1 dropped 0.5 (p = {row.p_value:.2g})"
    assert res.n_queries == 20  # q99 (no relevant document) is not compared


def test_a_drop_within_the_threshold_passes() -> None:
    res = regression_check(QRELS, worse_on(1), BASE, ["P@1"], 0.1)
    assert res.measures[0].delta == pytest.approx(-0.05)
    assert res.verdict == PASS and res.passed and res.summary == "PASS"


def test_a_drop_beyond_the_threshold_that_is_not_significant_warns_and_passes() -> None:
    res = regression_check(QRELS, worse_on(1), BASE, ["P@1"], 0.01)
    (row,) = res.measures
    # one difference of -1 among 20: t = -1, p = 0.33 with 19 degrees of freedom
    assert row.p_value == pytest.approx(2 * scipy.stats.t.sf(1.0, 19), rel=1e-9)
    assert row.verdict == WARN and res.verdict == WARN and res.passed
    assert res.summary.startswith("PASS (warning: P@1 dropped 0.05 (p = 0.33")
    assert res.summary.endswith("not significant))")
    assert res.notes == ["1 of 21 queries excluded: no relevant documents"]  # said once


def test_a_gain_passes() -> None:
    res = regression_check(QRELS, BASE, worse_on(10), ["P@1", "nDCG@5"], 0.0)
    assert [m.verdict for m in res.measures] == [PASS, PASS]
    assert res.measures[0].delta == 0.5


def test_a_relative_threshold_is_a_share_of_the_baseline_score() -> None:
    # the baseline's P@2 is 0.5: 10% of it allows a drop of 0.05, 2% one of 0.01
    base = regression_check(QRELS, worse_on(1), BASE, ["P@2", "P@1"], "10%")
    p2, p1 = base.measures
    assert base.relative and p2.threshold == pytest.approx(0.05) and p1.threshold == 0.1
    assert p1.delta == pytest.approx(-0.05) and p1.verdict == PASS
    strict = regression_check(QRELS, worse_on(1), BASE, ["P@1"], "2%")
    assert strict.measures[0].verdict == WARN
    flagged = regression_check(QRELS, worse_on(1), BASE, ["P@1"], 0.1, relative=True)
    assert flagged.measures[0].threshold == pytest.approx(0.1)
    assert "of the baseline's score (10%)" in flagged.method


def test_a_drop_on_unjudged_documents_is_flagged_and_a_fail_stays_a_fail() -> None:
    # an unjudged document first on 10 queries: P@1 drops, and so does Judged@1
    run = {
        q: ({f"new{q}": 3.0} if i < 10 else {}) | {f"r{q}": 2.0, f"n{q}": 1.0}
        for i, q in enumerate(QIDS)
    }
    res = regression_check(QRELS, run, BASE, ["P@1", "AP"], 0.01)
    p1, ap = res.measures
    assert p1.judged_measure == "Judged@1" and (p1.judged_run, p1.judged_baseline) == (0.5, 1.0)
    assert p1.unjudged and p1.verdict == FAIL
    assert "may come from unjudged documents: Judged@1 0.50 (run) vs 1.00" in p1.unjudged_note
    # AP: the whole ranking, 2 of 3 documents judged on 10 queries: (10 * 2/3 + 10) / 20
    assert ap.judged_measure == "Judged" and ap.judged_run == pytest.approx(5 / 6)
    assert ap.unjudged
    assert "[the drop may come from unjudged documents" in res.summary


def test_the_judged_flag_needs_a_drop_and_a_judged_shortfall() -> None:
    def flagged(run_a: float, judged: tuple[str, float, float]) -> tuple[bool, str]:
        res = check_values(
            {"P@1": {"a": run_a, "b": 1}},
            {"P@1": {"a": 0.5, "b": 1}},
            queries=["a", "b"],
            max_drop=0.01,
            judged={"P@1": judged},
        )
        return res.measures[0].unjudged, res.measures[0].unjudged_note

    assert flagged(1.0, ("Judged@1", 0.5, 1.0)) == (False, "")  # a gain is no drop to explain
    # within the tolerance, above the minimum
    assert flagged(0.0, ("Judged@1", 0.96, 0.99)) == (False, "")
    unjudged, note = flagged(0.0, ("Judged@1", 0.85, 0.86))
    assert unjudged and note.endswith("below 0.9")
    unjudged, note = flagged(0.0, ("Judged@1", 0.91, 0.99))
    assert unjudged and note.endswith("0.08 below the baseline's")
    # below the minimum, but judged as the baseline is: the drop is not the judgments' doing
    assert flagged(0.0, ("Judged@1", 0.43, 0.43)) == (False, "")
    assert flagged(0.0, ("Judged@1", 0.855, 0.86)) == (False, "")  # less than 0.01 apart
    assert flagged(0.0, ("Judged@1", 0.86, 0.80)) == (False, "")  # the run better judged
    unjudged, note = flagged(0.0, ("Judged@1", 0.42, 0.43))  # 0.01 apart: coverage differs
    assert unjudged and note.endswith("0.42 (run) vs 0.43 (baseline), below 0.9")


def test_no_unjudged_note_when_run_and_baseline_are_judged_alike() -> None:
    # both rank the same three documents, one unjudged: Judged = 2/3 for both, below 0.9. The
    # run puts the relevant one last, so AP drops; its unjudged document goes first, so P@1
    # drops with Judged@1 0 against the baseline's 1
    base = {q: {f"r{q}": 3.0, f"u{q}": 2.0, f"n{q}": 1.0} for q in QIDS}
    run = {q: {f"u{q}": 3.0, f"n{q}": 2.0, f"r{q}": 1.0} for q in QIDS}
    res = regression_check(QRELS, run, base, ["AP", "P@1"], 0.01)
    ap, p1 = res.measures
    assert ap.verdict == FAIL and ap.judged_run == pytest.approx(2 / 3)
    assert ap.judged_baseline == pytest.approx(2 / 3)
    assert not ap.unjudged and ap.unjudged_note == ""
    assert p1.verdict == FAIL and (p1.judged_run, p1.judged_baseline) == (0.0, 1.0)
    assert p1.unjudged and "Judged@1 0.00 (run) vs 1.00 (baseline)" in p1.unjudged_note
    assert res.summary.count("unjudged documents") == 1  # P@1's alone


def test_a_query_the_run_does_not_answer_scores_zero_and_both_are_compared_on_the_same() -> None:
    run = {q: v for q, v in BASE.items() if q not in ("q01", "q02")}
    res = regression_check(QRELS, run, BASE, ["P@1"], 0.01)
    assert res.n_queries == 20 and res.unanswered_run == 2 and res.unanswered_baseline == 0
    assert res.measures[0].delta == pytest.approx(-0.1)
    assert any("not in the run" in n for n in res.notes)
    assert res.to_dict()["unanswered"] == {"run": 2, "baseline": 0}


def test_the_same_tag_on_both_runs_is_no_confusion() -> None:
    from metrics.io import Run

    new = Run.from_dict(worse_on(10), tag="bm25")
    old = Run.from_dict(BASE, tag="bm25")
    res = regression_check(QRELS, new, old, ["P@1"], 0.01)
    assert (res.run, res.baseline) == ("bm25", "bm25")
    assert res.measures[0].delta == -0.5


def test_no_correction_by_default_and_holm_when_asked() -> None:
    res = regression_check(QRELS, worse_on(3), BASE, ["P@1", "nDCG@5", "AP"], 0.01)
    assert res.correction == "none" and "no correction across the 3 measures" in res.method
    assert [m.p_adjusted for m in res.measures] == [m.p_value for m in res.measures]
    corrected = regression_check(
        QRELS, worse_on(3), BASE, ["P@1", "nDCG@5", "AP"], 0.01, correction="holm"
    )
    assert [m.p_adjusted for m in corrected.measures] == pytest.approx(
        holm([m.p_value for m in res.measures])
    )
    assert "holm correction across the 3 measures" in corrected.method


def test_the_randomization_and_bootstrap_tests_are_named_and_deterministic() -> None:
    a = regression_check(QRELS, worse_on(10), BASE, ["P@1"], 0.01, test="randomization")
    b = regression_check(QRELS, worse_on(10), BASE, ["P@1"], 0.01, test="randomization")
    assert a.measures == b.measures and a.test == "randomization"
    assert a.measures[0].p_value < 0.01 and a.verdict == FAIL
    boot = regression_check(QRELS, worse_on(10), BASE, ["P@1"], 0.01, test="bootstrap")
    assert boot.measures[0].p_value == 0.0  # read as below 1/B
    assert "(p < 0.0001)" in boot.summary


def test_the_json_form_has_every_figure_and_no_nan() -> None:
    doc = regression_check(QRELS, BASE, BASE, ["P@1"], 0.01).to_dict()
    assert doc["passed"] is True and doc["verdict"] == PASS and doc["average"] == "macro"
    row = doc["measures"][0]
    assert row["delta"] == 0.0 and row["p_value"] == 1.0
    assert row["effect"] == 0.0
    assert set(row) >= {"baseline", "run", "ci_low", "ci_high", "judged_run", "threshold"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [("0.01", (0.01, False)), ("2%", (0.02, True)), (" 0.5 % ", (0.005, True)), ("0", (0, False))],
)
def test_max_drop_is_absolute_or_a_percentage(text: str, expected: tuple[float, bool]) -> None:
    value, relative = parse_max_drop(text)
    assert value == pytest.approx(expected[0]) and relative is expected[1]


@pytest.mark.parametrize("text", ["-0.01", "lots", "100%", "nan", "inf", "1e999", ""])
def test_a_bad_max_drop_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_max_drop(text)


def test_the_judged_fraction_is_at_the_cutoff_or_over_the_whole_ranking() -> None:
    assert judged_measure(parse_measure("nDCG@5")).name == "Judged@5"  # type: ignore[union-attr]
    assert judged_measure(parse_measure("R@100")).name == "Judged@100"  # type: ignore[union-attr]
    assert judged_measure(parse_measure("AP")).name == "Judged"  # type: ignore[union-attr]
    assert judged_measure(parse_measure("NumRel")) is None
    assert judged_measure(parse_measure("Judged@10")) is None


@pytest.mark.parametrize(
    "kwargs",
    [{"test": "wilcoxon"}, {"alpha": 0.0}, {"alpha": 1.5}, {"correction": "magic"}],
)
def test_bad_settings_are_value_errors(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        regression_check(QRELS, BASE, BASE, ["P@1"], 0.01, **kwargs)  # type: ignore[arg-type]


def test_no_queries_or_one_query_for_the_t_test_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="no queries"):
        check_values({"P@1": {}}, {"P@1": {}}, queries=[], max_drop=0.01)
    with pytest.raises(ValueError, match="at least two queries"):
        check_values({"P@1": {"a": 1}}, {"P@1": {"a": 0}}, queries=["a"], max_drop=0.01)
    one = check_values(
        {"P@1": {"a": 0}}, {"P@1": {"a": 1}}, queries=["a"], max_drop=0.01, test="randomization"
    )
    assert one.measures[0].p_value == 1.0 and one.verdict == WARN
    assert math.isnan(one.measures[0].effect)
