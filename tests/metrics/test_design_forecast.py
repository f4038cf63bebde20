"""The design forecast (``metrics.evaluation.design_forecast``): judging the whole pilot pool,
every design recovers the full figures; at a budget each spends it and says what it rests on."""

from __future__ import annotations

import numpy as np
import pytest

from metrics import Qrels, Run
from metrics.evaluation.design_forecast import forecast

TOPICS = [str(q) for q in range(1, 7)]


def _campaign() -> tuple[Qrels, dict[str, Run]]:
    rng = np.random.default_rng(5)
    qrels = {q: {f"d{q}-{i}": int(rng.random() < 0.25) for i in range(40)} for q in TOPICS}
    runs = {}
    for r in range(5):
        scores = {}
        for q in TOPICS:
            docs = sorted(qrels[q], key=lambda d: -(qrels[q][d] * (r + 1) * 0.3 + rng.random()))
            scores[q] = {d: float(30 - i) for i, d in enumerate(docs[:30])}
        runs[f"run{r}"] = Run.from_dict(scores)
    return Qrels.from_dict(qrels), runs


def test_judging_everything_recovers_the_full_figures() -> None:
    qrels, runs = _campaign()
    f = forecast(qrels, runs, topics=TOPICS, depth=30, share=1.0, reps=2)
    by = {d.design: d for d in f.designs}
    assert by["depth-k"].tau == 1.0 and by["depth-k"].rmse == 0.0
    assert by["statAP"].rmse == pytest.approx(0.0, abs=1e-12)  # every pi is 1: statAP is AP
    assert by["statAP"].coverage == 1.0
    assert by["stratified"].tau == 1.0 and by["stratified"].rmse < 1e-3  # xinfAP's smoothing
    assert by["depth-k"].judged == by["stratified"].judged == f.pool


def test_a_budget_is_spent_and_the_recommendation_says_what_it_rests_on() -> None:
    qrels, runs = _campaign()
    f = forecast(qrels, runs, topics=TOPICS, depth=30, share=0.3, reps=4, widths=(0.1,))
    for d in f.designs:
        assert d.judged <= 0.3 * f.pool * 1.1, d  # statAP's Poisson size is only expected
    assert f.recommended in {d.design for d in f.designs}
    assert "6 pilot topics" in f.basis and "4 simulated draws" in f.basis
    assert set(f.topics_for_width) == {"difference 0.1", "mean 0.1"}
    with pytest.raises(ValueError, match="share of the pool"):
        forecast(qrels, runs, topics=TOPICS, depth=30, share=0.0)
