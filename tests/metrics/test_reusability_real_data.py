"""Reusability reports on real TREC data (../shared/data; skipped when absent).

Robust 2003, topics 601-650, 17 runs of 16 groups (runs.tsv), depth-10 pool rebuilt from all of
them, AP: the leave-one-run-out figures of the data README still hold through the report
(uic0301 +0.0253, tau-b 0.912). TREC 2011 Medical: 127 runs, of which the 41 with every top 10
judged are the pooled ones (as in test_bias_real_data), 21 groups among them.

The figures asserted are the ones this code measured (4 decimals); the relevant-document counts
are checked independently from explicit pools built with ``Run.ranking``. The runs are read
unmodified (one Medical run's three "NaN" scores are ranked last in their topic).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from metrics import read_qrels
from metrics.bias.judged import judged_at_k
from metrics.bias.leaveout import LeaveOut
from metrics.bias.reusability import ReusabilityReport, reusability
from metrics.pooling.runs import parse_topic_spec
from tests._shared_data import trec_groups, trec_runs
from tests.conftest import TrecData

pytestmark = pytest.mark.data

ROBUST_TOPICS = parse_topic_spec("601-650")


@pytest.fixture(scope="module")
def robust_groups(robust: TrecData) -> ReusabilityReport:
    qrels, runs, groups = robust
    return reusability(qrels, runs, LeaveOut(depth=10, groups=groups, topics=ROBUST_TOPICS))


def test_robust_leave_one_run_out_keeps_the_reference_figures(
    robust: TrecData,
) -> None:
    qrels, runs, _ = robust
    rep = reusability(qrels, runs, LeaveOut(depth=10, topics=ROBUST_TOPICS))
    loo = rep.leave_one_out
    assert rep.leave_out == "run" and rep.n_units == 17
    assert loo["max_drop_unit"] == "uic0301"
    assert loo["max_drop"] == pytest.approx(0.0253, abs=5e-5)
    assert loo["kendall_tau"] == pytest.approx(0.912, abs=5e-4)
    assert loo["mean_drop"] == pytest.approx(0.0089, abs=5e-5)
    assert rep.expected_underestimate == pytest.approx((0.0041, 0.0111), abs=5e-5)


def test_robust_unique_relevant_shares_match_explicit_pools(
    robust: TrecData, robust_groups: ReusabilityReport
) -> None:
    qrels, runs, groups = robust
    total = by_group = by_run = 0
    for q in ROBUST_TOPICS:
        relevant = {d for d, g in qrels.judgments(q).items() if g >= 1}
        who: dict[str, set[str]] = {}
        for tag, run in runs.items():
            for d in run.ranking(q)[:10]:
                who.setdefault(d, set()).add(tag)
        for d, tags in who.items():
            if d in relevant:
                total += 1
                by_run += len(tags) == 1
                by_group += len({groups[t] for t in tags}) == 1
    rel = robust_groups.relevant
    assert (rel["total"], rel["by_one_unit"], rel["by_one_run"]) == (total, by_group, by_run)
    assert (total, by_group, by_run) == (635, 174, 172)
    assert rel["by_one_unit_share"] == pytest.approx(0.2740, abs=5e-5)
    assert rel["by_one_run_share"] == pytest.approx(0.2709, abs=5e-5)


def test_robust_leave_one_group_out_report(robust_groups: ReusabilityReport) -> None:
    rep = robust_groups
    assert (rep.n_runs, rep.n_pooled, rep.n_units, rep.leave_out) == (17, 17, 16, "group")
    loo = rep.leave_one_out
    assert loo["max_drop_unit"] == "uillinois-chicago.yu"
    assert loo["max_drop"] == pytest.approx(0.0253, abs=5e-5)
    assert loo["mean_drop"] == pytest.approx(0.0095, abs=5e-5)
    assert loo["kendall_tau"] == pytest.approx(0.9265, abs=5e-5)
    assert loo["tau_ap"] == pytest.approx(0.8183, abs=5e-5)
    assert rep.expected_underestimate == pytest.approx((0.0051, 0.0113), abs=5e-5)
    assert rep.unique_relevant["cas.nlpr"] == 27 and rep.unique_relevant["uglasgow.ounis"] == 3
    assert rep.judged == {
        "10": {"pooled": 1.0, "not_pooled": None},
        "100": {"pooled": 1.0, "not_pooled": None},
    }  # official pool >= 125
    assert rep.efficiency["judged"][-1] == 2763 and rep.efficiency["relevant"][-1] == 635
    assert rep.efficiency["relevant_per_judgment"][0] == pytest.approx(0.4585, abs=5e-5)
    assert rep.efficiency["relevant_per_judgment"][-1] == pytest.approx(0.1331, abs=5e-5)
    assert rep.unjudged_in_pool == 0
    assert rep.shallow_topics == tuple(
        [
            "605",
            "606",
            "608",
            "610",
            "612",
            "614",
            "616",
            "621",
            "632",
            "638",
            "640",
            "641",
            "648",
            "650",
        ]
    )
    assert rep.reusable is True
    assert rep.verdict.startswith(
        "A new system's AP is likely underestimated by 0.0051-0.0113 (the middle half of the 16 "
        "groups' leave-one-group-out drops); the pool is shallow for topics 605, 606, 608, 610, "
        "612 and 9 more. The collection looks reusable"
    )


def test_medical_reusability_of_the_41_pooled_runs(shared_data: Path) -> None:
    root = shared_data / "trec2011-medical"
    qrels, runs, groups = read_qrels(root / "qrels.txt"), trec_runs(root), trec_groups(root)
    assert len(runs) == 127
    first = judged_at_k(qrels, runs, k=10)
    pooled = [t for t, per_q in first.per_query.items() if min(per_q.values()) == 1.0]
    rep = reusability(qrels, runs, LeaveOut(depth=10, groups=groups, pooled=pooled))
    assert (rep.n_runs, rep.n_pooled, rep.n_units, len(rep.topics)) == (127, 41, 21, 34)
    rel = rep.relevant
    assert (rel["total"], rel["by_one_unit"], rel["by_one_run"]) == (1437, 682, 545)
    assert rel["by_one_unit_share"] == pytest.approx(0.4746, abs=5e-5)
    assert rel["by_one_run_share"] == pytest.approx(0.3793, abs=5e-5)
    loo = rep.leave_one_out
    assert loo["max_drop_unit"] == "US National Library of Medicine"
    assert loo["max_drop"] == pytest.approx(0.0472, abs=5e-5)
    assert loo["mean_drop"] == pytest.approx(0.0175, abs=5e-5)
    assert loo["kendall_tau"] == pytest.approx(0.9486, abs=5e-5)
    assert loo["tau_ap"] == pytest.approx(0.9196, abs=5e-5)
    assert rep.expected_underestimate == pytest.approx((0.0091, 0.0256), abs=5e-5)
    assert rep.unique_relevant["US National Library of Medicine"] == 98
    assert rep.judged["10"] == {"pooled": 1.0, "not_pooled": pytest.approx(0.8139, abs=5e-5)}
    assert rep.judged["100"] == {
        "pooled": pytest.approx(0.4565, abs=5e-5),
        "not_pooled": pytest.approx(0.4274, abs=5e-5),
    }
    assert rep.efficiency["judged"][-1] == 5049 and rep.efficiency["relevant"][-1] == 1437
    assert rep.unjudged_in_pool == 0  # the 41 runs' depth-10 pool is the judged one
    assert rep.shallow_topics == tuple(
        ["102", "105", "106", "110", "115", "119", "120", "128", "129", "131"]
    )
    assert rep.reusable is False  # 0.0256 > 5% of the pooled runs' mean AP
    assert "does not look reusable" in rep.verdict and "against 0.0142" in rep.verdict
