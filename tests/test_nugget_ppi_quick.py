"""The answer-score coverage benchmark's core (benchmarks/nugget_ppi.py) with few repetitions on
its synthetic collection and the simulated assigner: the true scores are the definitions', and
the 95% intervals cover them, narrower than the human sample alone's."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks._answer_collection import build
from benchmarks.nugget_ppi import DESIGNS, MEASURES, rows_of, run_block, simulated, unit_items


@pytest.fixture(scope="module")
def collection():
    return build()


@pytest.mark.parametrize("unit", ["nugget", "support"])
def test_intervals_cover_and_beat_the_human_sample_alone(collection, unit):
    # unit_items checks the items' linear form against metrics.answers' own scores
    items, labels, truth = unit_items(collection, unit)
    assert truth.min() > 0.0 and truth.max() < 1.0
    st = items.structure()
    budget = round(0.2 * st.n_items)
    acc, _ = run_block(st, truth, labels, None, items.groups, simulated(labels), 30, budget)
    rows = rows_of("simulated", unit, 0.2, budget, acc, truth)
    assert len(rows) == len(DESIGNS) * len(MEASURES[unit])
    for row in rows:
        _, _, design, _, measure, coverage, _worst, width = row[:8]
        ratio, half, bias = row[12], row[14], row[15]
        # 30 repetitions x 8 runs: a coverage estimate good to a few points
        assert coverage >= 0.88, (design, measure, coverage)
        assert 0.0 < width < 1.0
        assert ratio < 1.0, (design, measure, ratio)  # narrower than the human sample alone
        assert 1.3 < half < 3.2, (design, measure, half)  # about 1.96 spreads wide
        assert abs(bias) < 0.5, (design, measure, bias)
    assert np.array(acc["human-alone"]["cov"]).mean() >= 0.88
    assert np.array(acc["human+runs"]["cov"]).mean() >= 0.88
