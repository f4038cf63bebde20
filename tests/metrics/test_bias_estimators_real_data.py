"""The estimators' validation on real TREC data (../shared/data; skipped when absent).

Leave one group out (groups from runs.tsv), the pool rebuilt from every run at depth 10 and
20, AP and P@10, trec_eval mode, every estimator: Robust 2003 on topics 601-650 (17 runs, 16
groups) and TREC 2011 Medical (127 runs, 29 groups, all 34 topics). The figures asserted below
(MAE and Kendall tau to 4 decimals, SRE and SRE* exactly) are the ones this implementation
measures; the closing note of issue 12 reports them. The runs are read unmodified (one Medical
run's three "NaN" scores ranked last, at ranks 998-1000, so no pool of depth <= 997 sees them;
the figures are those measured when those lines were dropped) and scores are rounded to float32,
as pytrec_eval stores them.

What they say: on both collections Webber & Park beats the uncorrected pool for AP at both
depths and for P@10 on Robust; on Medical at depth 20 no estimator beats the pool for P@10
(the pool's own MAE, 0.0082, is already small). Lipani's estimators are the best for P@10 on
Robust (2015 at depth 10, 2016 at depth 20). The condensed list and the upper bound are far
off: they are bounds, not estimators, and their MAE shows it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import pytrec_eval

from metrics import Qrels, Run, read_qrels
from metrics.bias.estimator_report import EstimatorReport
from metrics.bias.leaveout import LeaveOneOut, LeaveOut
from metrics.bias.nested import EstimatorAnalysis
from metrics.bias.topics import restrict_qrels
from metrics.pooling.runs import parse_topic_spec
from tests._shared_data import trec_groups, trec_runs

pytestmark = pytest.mark.data

ROBUST_TOPICS = parse_topic_spec("601-650")

# collection, depth, measure, estimator, MAE, SRE, SRE*, Kendall tau-b
FIGURES = [
    ("robust03", 10, "AP", "pool", 0.0091, 6, 0, 0.9265),
    ("robust03", 10, "AP", "webber_park", 0.0058, 8, 0, 0.9265),
    ("robust03", 10, "AP", "condensed", 0.0882, 67, 27, 0.8088),
    ("robust03", 10, "P@10", "pool", 0.0207, 24, 0, 0.8340),
    ("robust03", 10, "P@10", "webber_park", 0.0128, 20, 0, 0.8235),
    ("robust03", 10, "P@10", "lipani2015", 0.0116, 12, 0, 0.8529),
    ("robust03", 10, "P@10", "lipani2016", 0.0128, 13, 0, 0.8235),
    ("robust03", 10, "P@10", "condensed", 0.0399, 36, 2, 0.6864),
    ("robust03", 10, "P@10", "upper", 0.1659, 123, 58, -0.1255),
    ("robust03", 20, "AP", "pool", 0.0048, 4, 0, 0.9559),
    ("robust03", 20, "AP", "webber_park", 0.0037, 3, 0, 0.9559),
    ("robust03", 20, "AP", "condensed", 0.0580, 44, 11, 0.8382),
    ("robust03", 20, "P@10", "pool", 0.0075, 9, 0, 0.8930),
    ("robust03", 20, "P@10", "webber_park", 0.0064, 11, 0, 0.8971),
    ("robust03", 20, "P@10", "lipani2015", 0.0061, 2, 0, 0.9559),
    ("robust03", 20, "P@10", "lipani2016", 0.0055, 5, 0, 0.8971),
    ("robust03", 20, "P@10", "condensed", 0.0234, 25, 0, 0.8382),
    ("robust03", 20, "P@10", "upper", 0.1106, 101, 44, 0.2500),
    ("trec2011-medical", 10, "AP", "pool", 0.0050, 257, 1, 0.9750),
    ("trec2011-medical", 10, "AP", "webber_park", 0.0042, 191, 0, 0.9740),
    ("trec2011-medical", 10, "AP", "condensed", 0.1600, 6020, 3065, 0.7463),
    ("trec2011-medical", 10, "P@10", "pool", 0.0188, 733, 4, 0.8960),
    ("trec2011-medical", 10, "P@10", "webber_park", 0.0172, 659, 1, 0.8918),
    ("trec2011-medical", 10, "P@10", "lipani2015", 0.0219, 821, 2, 0.8644),
    ("trec2011-medical", 10, "P@10", "lipani2016", 0.0189, 692, 2, 0.8714),
    ("trec2011-medical", 10, "P@10", "condensed", 0.0804, 3291, 831, 0.6596),
    ("trec2011-medical", 10, "P@10", "upper", 0.2450, 7440, 3829, -0.1897),
    ("trec2011-medical", 20, "AP", "pool", 0.0022, 113, 0, 0.9847),
    ("trec2011-medical", 20, "AP", "webber_park", 0.0021, 98, 0, 0.9850),
    ("trec2011-medical", 20, "AP", "condensed", 0.1535, 5890, 2925, 0.7551),
    ("trec2011-medical", 20, "P@10", "pool", 0.0082, 292, 0, 0.9517),
    ("trec2011-medical", 20, "P@10", "webber_park", 0.0090, 337, 0, 0.9486),
    ("trec2011-medical", 20, "P@10", "lipani2015", 0.0133, 492, 0, 0.9096),
    ("trec2011-medical", 20, "P@10", "lipani2016", 0.0132, 479, 0, 0.9145),
    ("trec2011-medical", 20, "P@10", "condensed", 0.0722, 2889, 755, 0.6570),
    ("trec2011-medical", 20, "P@10", "upper", 0.2152, 6895, 3483, -0.1020),
]


Collection = tuple[Qrels, dict[str, Run], dict[str, str]]


@pytest.fixture(scope="module")
def collections(shared_data: Path) -> dict[str, Collection]:
    out = {}
    for name in ("robust03", "trec2011-medical"):
        root = shared_data / name
        out[name] = (read_qrels(root / "qrels.txt"), trec_runs(root), trec_groups(root))
    return out


@pytest.fixture(scope="module")
def reports(collections: dict[str, Collection]) -> dict[tuple[str, int, str], EstimatorReport]:
    out = {}
    for name, (qrels, runs, groups) in collections.items():
        topics = ROBUST_TOPICS if name == "robust03" else None
        for depth in (10, 20):
            an = EstimatorAnalysis(
                qrels, runs, LeaveOut(depth=depth, leave_out="group", groups=groups, topics=topics)
            )
            for m in ("AP", "P@10"):
                out[name, depth, m] = an.report(m)
    return out


@pytest.mark.parametrize(
    ("name", "depth", "measure", "estimator", "mae", "sre", "sre_star", "tau"), FIGURES
)
def test_measured_errors(
    reports: dict[tuple[str, int, str], EstimatorReport],
    name: str,
    depth: int,
    measure: str,
    estimator: str,
    mae: float,
    sre: int,
    sre_star: int,
    tau: float,
) -> None:
    e = reports[name, depth, measure].errors[estimator]
    assert e["mae"] == pytest.approx(mae, abs=5e-5)
    assert e["sre"] == sre
    assert e["sre_star"] == sre_star
    assert e["kendall_tau"] == pytest.approx(tau, abs=5e-5)
    assert e["n_runs"] == (17 if name == "robust03" else 127)


def test_shape_and_sanity(reports: dict[tuple[str, int, str], EstimatorReport]) -> None:
    for (name, depth, m), rep in reports.items():
        assert rep.n_units == (16 if name == "robust03" else 29)
        assert len(rep.topics) == (50 if name == "robust03" else 34)
        err = rep.errors
        # the bounds are not estimators: far off everywhere
        assert err["condensed"]["mae"] > err["pool"]["mae"]
        if m == "P@10":
            assert err["upper"]["mae"] > 5 * err["pool"]["mae"]
        # Webber & Park corrects the pool, except for P@10 on Medical at depth 20
        if (name, depth, m) != ("trec2011-medical", 20, "P@10"):
            assert err["webber_park"]["mae"] < err["pool"]["mae"], (name, depth, m)
        # the penalty is positive on average: the reduced pool underrates the left-out runs
        rows = rep.runs.values()
        assert np.mean([r["score_full_pool"] - r["score"] for r in rows]) > 0
    assert reports["robust03", 10, "P@10"].recommended == "lipani2015"
    assert reports["trec2011-medical", 20, "P@10"].recommended == "pool"


def test_robust_leave_one_run_out_matches_leave_one_out(
    collections: dict[str, Collection],
) -> None:
    # the harness in run mode is the leave-one-run-out of metrics.bias: uic0301 +0.0253
    qrels, runs, _ = collections["robust03"]
    rep = EstimatorAnalysis(qrels, runs, LeaveOut(depth=10, topics=ROBUST_TOPICS)).report(
        "AP", estimators=("pool", "webber_park")
    )
    loo = LeaveOneOut(qrels, runs, LeaveOut(depth=10, topics=ROBUST_TOPICS)).result("AP")
    row = rep.runs["uic0301"]
    assert row["score_full_pool"] - row["score"] == pytest.approx(0.0253, abs=5e-5)
    for tag, r in loo.runs.items():
        assert rep.runs[tag]["score"] == r.score_without
        assert rep.runs[tag]["score_full_pool"] == r.score
    assert rep.deltas["mean"] == pytest.approx(loo.mean_delta, abs=1e-15)


def test_robust_webber_park_of_one_group_matches_pytrec_eval(
    collections: dict[str, Collection], reports: dict[tuple[str, int, str], EstimatorReport]
) -> None:
    # uglasgow.ounis (two runs) left out; every other group's nested delta from explicit qrels
    qrels, runs, groups = collections["robust03"]
    gone = "uglasgow.ounis"

    def pool(*out: str) -> dict[str, set[str]]:
        tags = [t for t in runs if groups[t] not in out]
        return {q: {d for t in tags for d in runs[t].ranking(q)[:10]} for q in ROBUST_TOPICS}

    def ap(q: Qrels, tag: str) -> float:
        res = pytrec_eval.RelevanceEvaluator(q.to_dict(), {"map"}).evaluate(runs[tag].to_dict())
        return float(np.mean([v["map"] for v in res.values()]))

    sub = Qrels.from_dict({q: qrels.judgments(q) for q in ROBUST_TOPICS})
    reduced = restrict_qrels(sub, pool(gone))
    deltas = [
        ap(reduced, p) - ap(restrict_qrels(sub, pool(gone, groups[p])), p)
        for p in runs
        if groups[p] != gone
    ]
    rep = reports["robust03", 10, "AP"]
    for tag in (t for t in runs if groups[t] == gone):
        want = ap(reduced, tag) + float(np.mean(deltas))
        assert rep.runs[tag]["webber_park"] == pytest.approx(want, abs=1e-12)
