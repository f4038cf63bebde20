"""Smoke test of ``benchmarks/sampled_validation.py`` on Robust 2003: its vectorised xinfAP,
infNDCG and statAP are the library's (``sample_eval``, ``statap``) on the same sample, depth-k at
the whole budget reproduces the frame's full-judgment ranking, and ``--quick`` prints its table."""

from __future__ import annotations

import io
import sys
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "robust03"
pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason="../shared/data (Robust 2003) is absent")
sys.path.insert(0, str(ROOT / "benchmarks"))


@pytest.fixture(scope="module")
def bench() -> Any:
    import sampled_validation

    return sampled_validation


@pytest.fixture(scope="module")
def robust(bench: Any) -> Any:
    return bench.load("robust03")


def test_the_vectorised_estimators_are_the_librarys(bench: Any, robust: Any) -> None:
    from metrics.io.prels import Prels, PrelsDoc
    from metrics.io.sampled import SampledQrels
    from metrics.measures.sample_eval import sample_eval
    from metrics.measures.statap import statap

    d = robust
    spec = bench.STRAT["strat A"]
    budget = int(0.2 * d.item_topic.size)
    rates = bench.fit_rates(d, spec, budget)
    stratum, sizes = bench.strata_sizes(d, (10, 30, 100))
    group = d.item_topic * 3 + stratum
    m = np.minimum(sizes, np.maximum(1, np.round(np.tile(rates, len(d.topics)) * sizes)))
    m = np.where(sizes > 0, m, 0).astype(np.int64)
    assert m.sum() <= budget
    draws = bench.stratified_draw(np.random.default_rng(0), group, m, 2)
    assert (np.stack([np.bincount(group, weights=x, minlength=m.size) for x in draws]) == m).all()
    ap, nd = bench.xinf(d, draws[0].astype(float), stratum, 3)
    topics: dict[str, dict[str, tuple[str, int]]] = {}
    for i, docid in enumerate(d.docids):
        grade = int(d.item_grade[i]) if draws[0, i] else -1
        topics.setdefault(d.topics[d.item_topic[i]], {})[docid] = (str(stratum[i]), grade)
    pi = (m / np.maximum(sizes, 1))[group]
    s_ap, s_var, _ = bench.statap_batch(d, draws, pi)
    prels = Prels(
        {
            q: {
                d.docids[i]: PrelsDoc(float(pi[i]), int(d.item_grade[i]) if draws[1, i] else None)
                for i in np.flatnonzero(d.item_topic == t)
            }
            for t, q in enumerate(d.topics)
        }
    )
    for r in (0, 7):
        se = sample_eval(SampledQrels(topics), d.runs[d.tags[r]])
        want = [[se.per_topic[q][k] for q in d.topics] for k in ("infAP", "infNDCG")]
        np.testing.assert_allclose(ap[r], want[0], atol=1e-12)
        np.testing.assert_allclose(nd[r], want[1], atol=1e-12)
        got = statap(prels, d.runs[d.tags[r]])
        np.testing.assert_allclose(s_ap[1, r], [got.per_topic[q].ap for q in d.topics], atol=1e-12)
        var = [got.per_topic[q].variance for q in d.topics]
        np.testing.assert_allclose(s_var[1, r], var, rtol=1e-9, atol=1e-15)
    # ebAP: the benchmark's vectorised form is the library's on the same sample
    from metrics.measures.ebap import ebap

    e_ap, e_var = bench.ebap_batch(d, draws, pi, group, m, sizes, s_ap, s_var)
    for r in (0, 7):
        got_eb = ebap(SampledQrels(topics), d.runs[d.tags[r]])
        np.testing.assert_allclose(e_ap[0, r], [got_eb.per_topic[q] for q in d.topics], atol=1e-12)
        want_var = [got_eb.variance[q] for q in d.topics]
        np.testing.assert_allclose(e_var[0, r], want_var, rtol=1e-9, atol=1e-15)


def test_depth_100_at_the_whole_budget_is_the_frames_full_ranking(bench: Any, robust: Any) -> None:
    from metrics.stats.rank import kendall_tau_b

    d = robust
    assert bench.depth_k(d, d.item_topic.size) == 100
    frame = d.truth["AP frame"].mean(axis=1)
    maps, _ = bench.depth_k_scores(d, 100)
    np.testing.assert_array_equal(maps, frame)  # the normal evaluator on the frame's qrels
    # every frame document judged: xinfAP is AP on the frame's qrels
    ap, _ = bench.xinf(d, np.ones(d.item_topic.size), np.zeros(d.item_topic.size, int), 1)
    np.testing.assert_allclose(ap.mean(axis=1), frame, atol=1e-4)  # the script's 1e-5 smoothing
    tags = d.tags
    tau = kendall_tau_b(
        dict(zip(tags, frame, strict=True)), dict(zip(tags, ap.mean(axis=1), strict=True))
    )
    assert tau == pytest.approx(1.0)


def test_the_quick_run_prints_every_design(bench: Any) -> None:
    out = io.StringIO()
    with redirect_stdout(out):
        assert bench.main(["--quick", "--collections", "robust03", "--reps", "2"]) == 0
    text = out.getvalue()
    for name in ("depth-", "strat A", "strat B", "statAP design", "PPI, no judge", "simulated"):
        assert name in text
    assert "ebAP" in text
    assert text.count("| Robust 2003 |") == 3 * 13
