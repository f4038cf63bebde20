"""Stopping: recent rates, the fitted discovery curve and the relevant left, the stopping rule;
checked on hand-worked sequences, against scipy's optimiser, and replayed on real TREC pools."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize

from metrics.cli.pool import load_rankings
from metrics.pooling.runs import cut_runs, parse_topic_spec
from metrics.pooling.strategies import make_strategy
from metrics.sampling.stopping import (
    DecayFit,
    expected_left,
    fit_decay,
    recent_rate,
    stop_suggestion,
)
from tests._shared_data import SHARED_DATA, needs_shared_data

# --- recent rate --------------------------------------------------------------------------


def test_the_recent_rate_counts_only_the_last_window_of_judgments():
    # 10 relevant first, then 50 non-relevant: the last 50 hold none of them
    outcomes = [True] * 10 + [False] * 50
    r = recent_rate(outcomes)
    assert (r.found, r.judged, r.rate, r.full) == (0, 50, 0.0, True)
    # the last 4 of [T, F, T, T, F]: F T T F -> 2 of 4
    r = recent_rate([True, False, True, True, False], window=4)
    assert (r.found, r.judged, r.rate) == (2, 4, 0.5)


def test_a_short_history_gives_a_rate_over_what_there_is_and_says_the_window_is_not_full():
    r = recent_rate([True, False, False])
    assert (r.found, r.judged, r.full) == (1, 3, False)
    assert r.rate == pytest.approx(1 / 3)
    assert recent_rate([]).rate is None
    with pytest.raises(ValueError, match="window"):
        recent_rate([True], window=0)


# --- the discovery curve ------------------------------------------------------------------


def test_the_flat_curve_is_the_sampling_estimate():
    # 3 relevant of 12 judged: a = 1/4; 20 left -> 5 expected
    outcomes = [True, False, False, False] * 3
    fit = fit_decay(outcomes, shapes=("flat",))
    assert fit is not None and fit.shape == "flat"
    assert fit.a == pytest.approx(0.25, abs=1e-9)
    assert expected_left(fit, judged=12, left=20) == pytest.approx(5.0, abs=1e-6)


def test_the_expected_relevant_left_sums_the_curve_over_the_items_left():
    # p(t) = 0.5 * exp(-ln2 (t-1)) = 0.5, 0.25, 0.125, 0.0625, ...; after 2 judged, 2 left:
    # p(3) + p(4) = 0.125 + 0.0625
    fit = DecayFit(shape="exponential", a=0.5, b=math.log(2), log_likelihood=0.0, n=2)
    assert expected_left(fit, judged=2, left=2) == pytest.approx(0.1875)
    # power: p(t) = 0.6 t^-1; after 1 judged, 2 left: 0.6/2 + 0.6/3
    fit = DecayFit(shape="power", a=0.6, b=1.0, log_likelihood=0.0, n=1)
    assert expected_left(fit, judged=1, left=2) == pytest.approx(0.5)
    assert expected_left(fit, judged=1, left=0) == 0.0
    assert math.isnan(expected_left(None, judged=0, left=3))


def test_all_relevant_or_none_relevant_fit_the_obvious_curves():
    ones = fit_decay([True] * 20)
    assert ones is not None and ones.a == pytest.approx(1.0) and ones.b == pytest.approx(0.0)
    assert expected_left(ones, judged=20, left=7) == pytest.approx(7.0, abs=1e-6)
    zeros = fit_decay([False] * 20)
    assert zeros is not None and zeros.a == 0.0
    assert expected_left(zeros, judged=20, left=7) == 0.0
    assert fit_decay([]) is None


def _neg_log_likelihood(params, y, t, shape):
    a, b = params
    g = np.exp(-b * (t - 1)) if shape == "exponential" else t ** (-b)
    p = np.clip(a * g, 1e-12, 1 - 1e-12)
    return -float(np.sum(y * np.log(p) + (1 - y) * np.log1p(-p)))


@pytest.mark.parametrize("shape", ["exponential", "power"])
def test_the_fit_is_the_maximum_likelihood_that_scipy_finds(shape):
    rng = np.random.default_rng(7)
    t = np.arange(1, 251, dtype=float)  # <= 256: fitted exactly, not in blocks
    true_p = 0.8 * (np.exp(-0.02 * (t - 1)) if shape == "exponential" else t**-0.6)
    y = (rng.random(t.size) < true_p).astype(float)
    fit = fit_decay([bool(v) for v in y], shapes=(shape,))
    assert fit is not None
    best = min(
        (
            minimize(
                _neg_log_likelihood,
                x0=start,
                args=(y, t, shape),
                bounds=[(1e-9, 1.0), (0.0, 2.0)],
                method="L-BFGS-B",
            )
            for start in ([0.5, 0.01], [0.9, 0.1], [0.3, 0.5])
        ),
        key=lambda r: r.fun,
    )
    assert -fit.log_likelihood <= best.fun + 1e-4  # the grid finds b to ~0.1%
    assert fit.a == pytest.approx(best.x[0], abs=0.02)
    assert fit.b == pytest.approx(best.x[1], abs=0.01)


def test_the_better_shape_by_likelihood_is_chosen():
    # a steep power-law head with a long tail: t^-1 relevance
    rng = np.random.default_rng(3)
    t = np.arange(1, 2001, dtype=float)
    y = rng.random(t.size) < 1.0 / t
    fit = fit_decay(list(y))
    assert fit is not None and fit.shape == "power"


# --- the stopping rule --------------------------------------------------------------------


def test_stopping_is_suggested_once_a_full_window_has_too_few_relevant():
    recent = recent_rate([True] * 30 + [False] * 50)
    s = stop_suggestion(recent, stop_rate=0.02, left=100, expected=0.4)
    assert s.stop and s.reason.startswith("stop: 0 relevant in the last 50")
    assert "about 0.4 left" in s.reason
    # 1 of 50 = 0.02 is not below 0.02
    recent = recent_rate([False] * 49 + [True])
    s = stop_suggestion(recent, stop_rate=0.02, left=100)
    assert not s.stop and s.reason.startswith("continue: 1 relevant in the last 50")


def test_in_docid_order_only_the_estimate_of_relevant_left_suggests_stopping():
    recent = recent_rate([True] * 30 + [False] * 50)
    s = stop_suggestion(recent, stop_rate=0.02, left=100, expected=18.75, prioritised=False)
    assert not s.stop and s.reason.startswith("continue: docid order")
    s = stop_suggestion(recent, stop_rate=0.02, left=2, expected=0.75, prioritised=False)
    assert s.stop and s.reason == "stop: about 0.8 relevant expected among the 2 left"


def test_no_stopping_on_a_window_that_is_not_full_and_done_when_nothing_is_left():
    s = stop_suggestion(recent_rate([False] * 10), stop_rate=0.02, left=5)
    assert not s.stop and "10 of the 50 judgments" in s.reason
    s = stop_suggestion(recent_rate([True] * 10), stop_rate=0.02, left=0)
    assert s.stop and s.reason.startswith("done")


# --- real pools, judged in serving order by the qrels -------------------------------------


def _replay(collection: str, depth: int, strategy: str, topics: list[str] | None = None):
    """Per topic, the relevance outcomes of the whole depth-k pool in the strategy's serving
    order, the qrels as the oracle (a pooled document absent from them: not relevant)."""
    from metrics.io import read_qrels

    root = SHARED_DATA / collection
    runs = load_rankings(sorted(str(p) for p in (root / "runs").glob("input.*.gz")), depth)
    qrels = read_qrels(root / "qrels.txt").to_dict()
    out = {}
    for qid in topics if topics is not None else sorted(qrels):
        s = make_strategy(strategy)
        state = s.start(cut_runs(runs, qid, depth), topic=qid, relevance_level=1)
        seq: list[bool] = []
        feedback: dict[str, int] = {}
        while (doc := s.next_document(state, feedback)) is not None:
            grade = qrels.get(qid, {}).get(doc, 0)
            feedback = {doc: grade}
            seq.append(grade >= 1)
        out[qid] = seq
    return out


def _estimate_vs_truth(seqs, n, shapes):
    """Summed over topics with more than n items: (estimate of relevant left after n judged,
    the true relevant left, mean absolute error per topic, same for the recent-rate estimate)."""
    est = truth = err = err_recent = 0.0
    k = 0
    for seq in seqs.values():
        if len(seq) <= n:
            continue
        k += 1
        left = len(seq) - n
        e = expected_left(fit_decay(seq[:n], shapes=shapes), judged=n, left=left)
        r = (recent_rate(seq[:n]).rate or 0.0) * left
        true_left = sum(seq[n:])
        est, truth = est + e, truth + true_left
        err, err_recent = err + abs(e - true_left), err_recent + abs(r - true_left)
    return est, truth, err / k, err_recent / k


@pytest.mark.data
@needs_shared_data("robust03", "qrels.txt")
def test_robust03_rank_order_the_fitted_curve_tracks_the_relevant_left():
    seqs = _replay("robust03", 100, "rank", parse_topic_spec("601-650"))
    # measured: after 100 judged 681 estimated vs 571 true (MAE 10.8 per topic; the recent
    # rate's 25.6); after 200: 347 vs 308 (MAE 5.4 vs 7.8)
    for n, tolerance in ((100, 0.25), (200, 0.2)):
        est, truth, err, err_recent = _estimate_vs_truth(seqs, n, ("exponential", "power"))
        assert est == pytest.approx(truth, rel=tolerance), (n, est, truth)
        assert err < err_recent, (n, err, err_recent)


@pytest.mark.data
@needs_shared_data("trec2011-medical", "qrels.txt")
def test_trec2011_medical_docid_order_the_flat_estimate_tracks_the_relevant_left():
    seqs = _replay("trec2011-medical", 10, "depth")
    # measured: after 100 judged 1105 estimated vs 1067 true; after 200: 534 vs 484
    for n, tolerance in ((100, 0.1), (200, 0.15)):
        est, truth, _, _ = _estimate_vs_truth(seqs, n, ("flat",))
        assert est == pytest.approx(truth, rel=tolerance), (n, est, truth)
