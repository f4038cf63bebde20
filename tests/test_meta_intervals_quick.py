"""The meta-evaluation interval benchmark (benchmarks/meta_intervals.py) on a tiny setting: its
simulated scores are the product's nDCG@10, its targets are the figures as the product defines
them, and its table has one sane row per figure and number of topics. No coverage claim: a few
replications cannot make one; the measured coverage is in benchmarks/README.md."""

from __future__ import annotations

import io

import numpy as np
import pytest

from benchmarks.meta_intervals import (
    FIGURES,
    LABELS,
    THRESHOLD,
    confusion,
    draw_topics,
    label_figures,
    main,
    ranking_figures,
    simulate,
    systems,
)
from metrics.evaluation.evaluator import Evaluator
from metrics.judges.meta import ranking_meta
from metrics.judges.meta_labels import label_meta


@pytest.fixture(scope="module")
def topics():
    return draw_topics(np.random.default_rng(3), 8, systems())


def _qrels(topics, grades):
    return {
        f"q{q}": {f"d{d}": int(grades[q, d]) for d in range(int(topics.size[q]))}
        for q in range(len(topics.size))
    }


def _run(topics, s):
    return {
        f"q{q}": {f"d{d}": float(10 - rank) for rank, d in enumerate(topics.top[q, s])}
        for q in range(len(topics.size))
    }


def test_simulated_scores_are_the_products_ndcg_at_10(topics):
    for grades, ndcg in ((topics.human, topics.ndcg_human), (topics.judge, topics.ndcg_judge)):
        ev = Evaluator(_qrels(topics, grades), ["nDCG@10"], ci=None, complete=True)
        for s in (0, 12, 24):
            got = ev.evaluate(_run(topics, s)).per_query["nDCG@10"]
            want = ndcg[:, s]
            assert [got[f"q{q}"] for q in range(len(want))] == pytest.approx(want, abs=1e-12)


def _kappa(h, j, weight):
    """Cohen's (weighted) kappa from the items themselves: 1 - observed over chance-expected
    disagreement, chance pairing every people's grade with every judge's grade."""
    observed = weight(h, j).mean()
    expected = weight(h[:, None], j[None, :]).mean()
    return 1.0 - observed / expected


def test_label_targets_are_the_kappas_of_the_pooled_items(topics):
    mask = np.arange(topics.human.shape[1])[None, :] < topics.size[:, None]
    h, j = topics.human[mask], topics.judge[mask]
    got = label_figures(confusion(topics))
    assert got["kappa"] == pytest.approx(_kappa(h, j, np.not_equal), abs=1e-12)
    assert got["kappa_linear"] == pytest.approx(_kappa(h, j, lambda a, b: abs(a - b)), abs=1e-12)
    square = _kappa(h, j, lambda a, b: (a - b) ** 2)
    assert got["kappa_quadratic"] == pytest.approx(square, abs=1e-12)
    binary = _kappa(h >= THRESHOLD, j >= THRESHOLD, np.not_equal)
    assert got["binary_kappa"] == pytest.approx(binary, abs=1e-12)
    # and the same figures as label_meta's point values, Krippendorff's alpha included
    keys = [(f"q{q}", f"d{d}") for q in range(len(topics.size)) for d in range(topics.size[q])]
    meta = label_meta(
        dict(zip(keys, h.tolist(), strict=True)),
        dict(zip(keys, j.tolist(), strict=True)),
        (0, 1, 2, 3),
        threshold=THRESHOLD,
        resamples=0,
    )
    for name in LABELS:
        assert got[name] == pytest.approx(getattr(meta, name).value, abs=1e-12)


def test_ranking_targets_are_ranking_metas_figures_of_the_mean_scores(topics):
    names = systems().names
    got = ranking_figures(topics.ndcg_human.mean(axis=0), topics.ndcg_judge.mean(axis=0), names)

    def table(scores):
        return {r: {f"q{q}": float(scores[q, s]) for q in range(8)} for s, r in enumerate(names)}

    meta = ranking_meta(table(topics.ndcg_human), table(topics.ndcg_judge), resamples=0)
    for name in ("kendall_tau_b", "tau_ap", "spearman", "tau_top_k"):
        assert got[name] == pytest.approx(getattr(meta, name).value, abs=1e-12)


def test_quick_mode_gives_one_sane_row_per_figure_and_size():
    result = simulate(topics=(6, 10), reps=4, resamples=100, pop_topics=400)
    assert len(result.rows) == len(FIGURES) * 2
    assert {(r.figure, r.n) for r in result.rows} == {(f, n) for f in FIGURES for n in (6, 10)}
    for row in result.rows:
        assert 0.0 <= row.given <= 1.0
        if row.given:
            assert 0.0 <= row.coverage <= 1.0
            assert row.width > 0.0 or row.figure == "significant_kept"  # [1, 1] when all kept
            assert row.above + row.below == pytest.approx(1.0 - row.coverage)
    # the label figures are always given at these sizes (every topic has 40 items or more)
    assert all(r.given == 1.0 for r in result.rows if r.figure in LABELS)

    out = io.StringIO()
    assert main(["--quick", "--reps", "2", "--topics", "6", "--population", "200"], out) == 0
    text = out.getvalue()
    for name in FIGURES:
        assert sum(line.startswith(f"| {name} |") for line in text.splitlines()) == 2
    assert "s wall" in text
