"""The coverage benchmark's core (benchmarks/ppi_coverage.py) with few repetitions on Robust 2003:
the full-judgment target agrees with pytrec_eval, and the 95% intervals cover it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import pytrec_eval

from benchmarks.ppi_coverage import DESIGNS, MEASURES, _simulated, run_block, trec_collection
from metrics.sampling.structure import PoolStructure
from tests._shared_data import needs_shared_data, shared_data_path

pytestmark = [pytest.mark.data, needs_shared_data("robust03")]


@pytest.fixture(scope="module")
def robust_structure():
    shared_data_path("robust03")
    ranked, pool, judged = trec_collection("robust03", 20, [str(q) for q in range(601, 651)])
    st = PoolStructure(ranked, pool, measures=MEASURES)
    grades = np.array([max(0, judged[q].get(d, 0)) for q, d in st.items], dtype=np.int64)
    return ranked, pool, st, grades


def test_the_target_is_trec_evals_score_against_the_pools_qrels(robust_structure):
    ranked, pool, st, grades = robust_structure
    qrels: dict[str, dict[str, int]] = {q: {} for q in pool}
    for (q, d), g in zip(st.items, grades.tolist(), strict=True):
        qrels[q][d] = g
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"P_10", "recall_10", "ndcg_cut_10", "map"})
    truth = st.values(grades)
    for i, name in enumerate(st.run_names[:5]):
        res = ev.evaluate(
            {q: {d: 1000.0 - j for j, d in enumerate(docs)} for q, docs in ranked[name].items()}
        )
        want = [
            np.mean([res[q][m] for q in pool]) for m in ("P_10", "recall_10", "ndcg_cut_10", "map")
        ]
        assert truth[i] == pytest.approx(want, abs=1e-12)


def test_intervals_cover_and_beat_the_human_sample_alone_on_robust_2003(robust_structure):
    _, _, st, grades = robust_structure
    truth = st.values(grades)
    rows: list[tuple[Any, ...]] = []
    diff_rows: list[tuple[Any, ...]] = []
    pairs = [(a, b) for a in range(5) for b in range(a + 1, 5)]
    budget = round(0.2 * st.n_items)
    run_block(
        st,
        truth,
        grades,
        st.popularity(),
        None,
        _simulated(grades),
        30,
        budget,
        pairs,
        "robust",
        rows,
        diff_rows,
    )
    assert len(rows) == len(DESIGNS) * len(MEASURES)
    for row in rows:
        _, design, _, measure, coverage, _worst, width, _ho_w, ratio, _, _hp_w, plain, _ = row[:13]
        half_over_spread, human_half_over_spread = row[13], row[16]
        # calibrated intervals: about 1.96 spreads wide (30 repetitions: a loose band)
        assert 1.3 < half_over_spread < 3.0, (design, measure, half_over_spread)
        assert 1.3 < human_half_over_spread < 3.0, (design, measure, human_half_over_spread)
        # 30 repetitions x 17 runs: a coverage estimate good to a few points
        assert coverage >= 0.88, (design, measure, coverage)
        assert 0.0 < width < 1.0
        if measure == "P@10":  # the linear measure: the judge must help at 20% of the pool
            assert ratio < 0.9, (design, ratio)
        # against the human sample alone (no pool covariate either) on every measure
        assert plain < 1.0, (design, measure, plain)
    for _, design, _, measure, coverage, *_ in diff_rows:
        assert coverage >= 0.88, (design, measure, coverage)
