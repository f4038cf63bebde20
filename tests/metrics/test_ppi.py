"""Prediction-powered estimates of run measures (metrics.sampling.ppi): hand-worked values, exact
unbiasedness by enumerating every sample of small designs, coverage on synthetic pools, the
designs, and the errors."""

from __future__ import annotations

import itertools
import json
import math
from typing import Any

import numpy as np
import pytest
import pytrec_eval

from metrics.sampling.designs import Design, pilot, sample
from metrics.sampling.ppi import by_item, estimate_runs
from metrics.sampling.structure import PoolStructure
from metrics.sampling.variance import _floored

# one topic, pool a b c d with human grades 1 0 2 0; the run ranks a, x (outside the pool), c, b
POOL = {"q": ["a", "b", "c", "d"]}
RUN = {"q": ["a", "x", "c", "b"]}
HUMAN = {"a": 1, "b": 0, "c": 2, "d": 0}


def _structure(measures=("P@2", "R@2", "nDCG@2", "AP")) -> PoolStructure:
    return PoolStructure({"r": RUN}, POOL, measures=measures)


def test_full_judgment_values_match_the_hand_worked_example():
    st = _structure()
    got = st.values([HUMAN[d] for _, d in st.items])[0]
    # P@2: a relevant, x not; R@2: 1 of R = 2; nDCG@2: DCG 1/log2(2) = 1, ideal 2/1 + 1/log2(3);
    # AP: relevant at ranks 1 and 3, (1/1 + 2/3) / 2
    ideal = 2.0 + 1.0 / math.log2(3.0)
    assert got == pytest.approx([0.5, 0.5, 1.0 / ideal, (1.0 + 2.0 / 3.0) / 2.0])


def test_a_topic_without_relevant_items_scores_zero_as_in_trec_eval():
    st = PoolStructure({"r": {"q": ["a"], "z": ["e"]}}, {"q": ["a"], "z": ["e"]})
    got = st.values([1, 0])[0]  # topic q: a relevant; topic z: nothing relevant
    assert got == pytest.approx([0.05, 0.5, 0.5, 0.5])  # mean of (1 and 0) per measure; P@10 1/10


def test_values_agree_with_pytrec_eval_on_random_pools():
    rng = np.random.default_rng(3)
    for _ in range(5):
        pool = {f"q{t}": [f"d{i}" for i in range(rng.integers(5, 25))] for t in range(4)}
        runs = {}
        for r in range(3):
            runs[f"r{r}"] = {
                q: list(rng.permutation([*docs, "o1", "o2"])[: rng.integers(3, len(docs) + 2)])
                for q, docs in pool.items()
            }
        grades_map = {
            q: {d: int(rng.choice([0, 0, 1, 2])) for d in docs} for q, docs in pool.items()
        }
        for q in pool:  # every topic needs a relevant item for pytrec_eval's averages to match
            grades_map[q][pool[q][0]] = 1
        st = PoolStructure(runs, pool, measures=("P@5", "R@5", "nDCG@5", "AP"))
        got = st.values([grades_map[q][d] for q, d in st.items])
        ev = pytrec_eval.RelevanceEvaluator(grades_map, {"P_5", "recall_5", "ndcg_cut_5", "map"})
        for i, name in enumerate(st.run_names):
            # scores strictly decreasing with rank so pytrec_eval keeps the run's order
            res = ev.evaluate(
                {q: {d: 100.0 - j for j, d in enumerate(docs)} for q, docs in runs[name].items()}
            )
            want = [
                np.mean([res[q][m] for q in pool]) for m in ("P_5", "recall_5", "ndcg_cut_5", "map")
            ]
            assert got[i] == pytest.approx(want, abs=1e-12)


def test_uniform_estimate_matches_the_hand_worked_difference_estimator():
    # the run ranks a b c; auto grades 1 1 0 0; SRSWOR of 2 of 4 (pi = 1/2) drew b (human 0)
    # and c (human 1)
    st = PoolStructure({"r": {"q": ["a", "b", "c"]}}, POOL, measures=("P@2",))
    est = st.estimate(
        [1, 1, 0, 0],
        [0, 0, 1, 0],
        [False, True, True, False],
        [0.5] * 4,
        design="uniform",
        calibrate=False,
        variance_floor=False,
    )
    # corrected: a 1, b 1 + 2 (0 - 1) = -1, c 0 + 2 (1 - 0) = 2, d 0; P@2 = (1 - 1) / 2 = 0
    assert est.value[0, 0] == pytest.approx(0.0)
    # v = u * residual: b 1/2 * -1, c 0 (not in the top 2); s^2 = 0.125;
    # var = N^2 (1 - n/N) s^2 / n = 16 * 0.5 * 0.125 / 2 = 0.5
    assert est.se[0, 0] == pytest.approx(math.sqrt(0.5))


def test_judging_everything_gives_the_full_judgment_value_with_zero_width():
    st = _structure()
    truth = st.values([HUMAN[d] for _, d in st.items])
    est = st.estimate(
        [0, 2, 2, 1], [HUMAN[d] for _, d in st.items], [True] * 4, [1.0] * 4, design="uniform"
    )
    assert est.value == pytest.approx(truth)
    assert est.se == pytest.approx(np.zeros_like(truth))
    assert est.thin_topics == 0  # every topic is its own point: no bias left out


def _small_pool():
    """Two topics, 8 items, two runs: small enough to enumerate every sample."""
    pool = {"q1": ["a", "b", "c", "d"], "q2": ["e", "f", "g", "h"]}
    runs = {
        "r1": {"q1": ["a", "b", "c"], "q2": ["e", "g", "f", "h"]},
        "r2": {"q1": ["c", "d", "a", "b"], "q2": ["h", "e"]},
    }
    human = np.array([1, 0, 2, 0, 0, 1, 1, 0])
    auto = np.array([1, 1, 1, 0, 0, 0, 2, 1])
    return PoolStructure(runs, pool, measures=("P@2", "nDCG@2")), human, auto


def _check_linear_exactly(st, human, auto, samples, design, strata=None):
    """Over every (sample, probability): the P@2 estimate's mean is the truth and the variance
    estimator's mean is the true variance (both exact for a linear measure)."""
    truth = st.values(human)[:, 0]
    mean = np.zeros_like(truth)
    second = np.zeros_like(truth)
    var_hat = np.zeros_like(truth)
    total = 0.0
    for chosen, prob, pi in samples:
        s = np.zeros(auto.size, dtype=bool)
        s[list(chosen)] = True
        est = st.estimate(
            auto,
            human,
            s,
            pi,
            design=design,
            strata=strata,
            calibrate=False,
            variance_floor=False,
        )
        mean += prob * est.value[:, 0]
        second += prob * est.value[:, 0] ** 2
        var_hat += prob * est.se[:, 0] ** 2
        total += prob
    assert total == pytest.approx(1.0)
    assert mean == pytest.approx(truth, abs=1e-12)
    assert var_hat == pytest.approx(second - mean**2, abs=1e-12)


def test_uniform_design_is_exactly_unbiased_with_an_unbiased_variance_for_precision():
    st, human, auto = _small_pool()
    subsets = list(itertools.combinations(range(8), 3))
    pi = np.full(8, 3 / 8)
    _check_linear_exactly(st, human, auto, [(c, 1 / len(subsets), pi) for c in subsets], "uniform")


def test_stratified_design_is_exactly_unbiased_with_an_unbiased_variance_for_precision():
    st, human, auto = _small_pool()
    strata = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    first = list(itertools.combinations(range(4), 2))
    second = list(itertools.combinations(range(4, 8), 3))
    pi = np.array([0.5] * 4 + [0.75] * 4)
    samples = [(a + b, 1 / (len(first) * len(second)), pi) for a in first for b in second]
    _check_linear_exactly(st, human, auto, samples, "stratified", strata)


def test_poisson_design_is_exactly_unbiased_with_an_unbiased_variance_for_precision():
    st, human, auto = _small_pool()
    pi = np.array([0.9, 0.3, 0.5, 0.2, 0.6, 0.4, 0.7, 1.0])
    samples = []
    for bits in itertools.product([0, 1], repeat=8):
        if not any(bits):
            continue
        chosen = tuple(i for i, b in enumerate(bits) if b)
        prob = float(np.prod([p if b else 1 - p for p, b in zip(pi, bits, strict=True)]))
        samples.append((chosen, prob, pi))
    # item 7 has pi = 1, so every sample with positive probability is non-empty
    _check_linear_exactly(st, human, auto, samples, "active")


def test_the_ap_estimate_corrects_a_missed_relevant_item_by_hand():
    # the judge misses b; a and c are judged for certain, b with pi = 1/2
    pool = {"q": ["a", "b", "c"]}
    st = PoolStructure({"r": {"q": ["a", "b", "c"]}}, pool, measures=("AP",))
    human = np.array([1, 1, 0])
    auto = np.array([1, 0, 0])  # the judge misses b
    pi = np.array([1.0, 0.5, 1.0])
    values = []
    for take_b in (False, True):
        s = np.array([True, take_b, True])
        est = st.estimate(
            auto, human, s, pi, design="active", calibrate=False, variance_floor=False
        )
        values.append(est.value[0, 0])
    truth = st.values(human)[0, 0]  # (1/1 + 2/2) / 2 = 1
    assert truth == pytest.approx(1.0)
    # without b the estimate is AP under the auto labels (1 relevant at rank 1): 1.0; with b
    # corrected by 1/0.5 the numerator is 1 + 2 * (1 + 1) / 2 = 3 over R = 1 + 2 = 3: 1.0
    assert values == pytest.approx([1.0, 1.0])


def test_a_topic_with_few_expected_relevant_samples_is_estimated_by_its_expected_measure():
    # topic q1: six items, Poisson pi = 1/3, the judge misses d; expected relevant sampled
    # items sum pi f(a) = 2/3 < 1, so R@2 is not a ratio of two estimated totals there: it is
    # the measure expected under the predictions with the sampled labels in (uncalibrated, the
    # predictions are the judge's 0/1 labels, so that is the measure at those labels), plus the
    # sampled residuals times (1/pi - 1) along the gradient at the predictions (A_p = 1 of the
    # run's top 2 {a, b}, R_p = 2: d, outside the top 2, moves it by -A_p/R_p^2 = -1/4).
    # topic q2: both items judged for certain (pi = 1): the point is the truth, R@2 = 1.
    pool = {"q1": ["a", "b", "c", "d", "e", "f"], "q2": ["g", "h"]}
    st = PoolStructure({"r": {"q1": ["a", "b", "c"], "q2": ["g"]}}, pool, measures=("R@2",))
    human = np.array([1, 0, 1, 1, 0, 0, 1, 0])
    auto = np.array([1, 0, 1, 0, 0, 0, 0, 0])
    pi = np.array([1 / 3] * 6 + [1.0, 1.0])
    mean = second = var_hat = total = 0.0
    for bits in itertools.product([0, 1], repeat=6):
        prob = float(np.prod([1 / 3 if b else 2 / 3 for b in bits]))
        s = np.array([bool(b) for b in bits] + [True, True])
        est = st.estimate(
            auto, human, s, pi, design="active", calibrate=False, variance_floor=False
        )
        # with d sampled: R@2 at the sampled labels is 1/3 (a of a, c, d), corrected by
        # (3 - 1) x (-1/4): -1/6, so (-1/6 + 1) / 2 = 5/12; without it 1/2, so (1/2 + 1) / 2
        assert est.value[0, 0] == pytest.approx(5 / 12 if bits[3] else 0.75)
        assert est.thin_topics >= 1  # and it says so
        mean += prob * est.value[0, 0]
        second += prob * est.value[0, 0] ** 2
        var_hat += prob * est.se[0, 0] ** 2
        total += prob
    assert total == pytest.approx(1.0)
    # the truth is (1/3 + 1) / 2 = 2/3; the estimate's mean is 23/36, closer than the 0.625 of
    # the linearisation at the predictions alone (its remainder -1/24, now -1/36)
    assert st.values(human)[0, 0] == pytest.approx(2 / 3)
    assert mean == pytest.approx(23 / 36)
    # the variance estimator is that of the linear part, sum (1 - pi)/pi^2 v^2 with v = -1/8:
    # 6/64 when d is sampled, 1/32 on average, above the true variance (2/9)(1/3)^2 = 1/40.5
    assert var_hat == pytest.approx(1 / 32)
    assert second - mean**2 == pytest.approx((1 / 3) * (2 / 3) * (0.75 - 5 / 12) ** 2)
    assert var_hat >= second - mean**2


def test_the_expected_measure_of_a_thin_topic_is_the_mean_ratio_not_the_ratio_of_means(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # two items, each relevant with probability 1/2, the run ranks "a" first: R@1 is 1 (a only),
    # 1/2 (both), 0 (b only or neither), expected 3/8; the ratio of the expected totals says
    # 1/2, and a topic that may hold no relevant item is what separates them
    from metrics.sampling import estimator

    st = PoolStructure({"r": {"q": ["a", "b"]}}, {"q": ["a", "b"]}, measures=("R@1",))
    Fp = np.array([[0.5, 0.5]])
    args = (Fp, np.zeros((1, 2)), np.array([], dtype=np.int64), np.array([True]))
    got, _ = st._expected_cells(*args)
    assert got[0, 0, 0] == st._expected_cells(*args)[0][0, 0, 0]  # reproducible: a fixed seed
    monkeypatch.setattr(estimator, "_DRAWS", 20_000)
    many, spread = st._expected_cells(*args)
    assert many[0, 0, 0] == pytest.approx(3 / 8, abs=0.01)
    # and what the two unknown items leave open: R@1 is 1, 1/2 or 0 with probabilities 1/4,
    # 1/4, 1/2, so its variance is 1/4 + 1/16 - (3/8)^2 = 11/64 (one topic: Q^2 = 1)
    assert spread[0, 0, 0] == pytest.approx(11 / 64, abs=0.01)
    # a sampled item keeps its human label: b judged relevant leaves a's chance, 1/2 x 1/2
    fixed, _ = st._expected_cells(Fp, np.array([[0.0, 1.0]]), np.array([1]), np.array([True]))
    assert fixed[0, 0, 0] == pytest.approx(1 / 4, abs=0.01)


def test_a_perfect_judge_gives_the_full_judgment_values_and_a_floored_width():
    # the automatic grades are the human ones; a 2-item pilot that saw no relevant item must
    # not override the judge (the calibration's prior is the judge's own label). The design
    # variance is then 0 (every sampled residual is 0), but 4 agreeing labels do not prove the
    # other 6 right: the model-based floor keeps the interval open around the exact value
    pool = {"q1": ["a", "b", "c", "d", "e"], "q2": ["f", "g", "h", "i", "j"]}
    grades = {
        "q1": {"a": 2, "b": 1, "c": 0, "d": 0, "e": 0},
        "q2": {"f": 1, "g": 0, "h": 0, "i": 1, "j": 0},
    }
    runs = {
        "r1": {"q1": ["a", "b", "c", "d", "e"], "q2": ["f", "i", "g", "h", "j"]},
        "r2": {"q1": ["c", "a", "b"], "q2": ["g", "f"]},
    }
    st = PoolStructure(runs, pool)
    auto = [grades[q][d] for q, d in st.items]
    truth = st.values(auto)
    assert truth[0] == pytest.approx([0.2, 1.0, 1.0, 1.0])
    for seed in range(4):
        s = sample(auto, Design("uniform", 4, seed=seed))
        human = by_item([st.items[i] for i in s.indices], [auto[i] for i in s.indices])
        report = estimate_runs(runs, pool, grades, human, by_item(st.items, s.pi), design="uniform")
        for r, name in enumerate(st.run_names):
            for m, measure in enumerate(st.measures):
                e = report.estimates[name][measure]
                assert e.value == pytest.approx(truth[r, m])
                assert e.low <= truth[r, m] <= e.high
        arr = st.estimate(auto, auto, s.sampled, s.pi, design="uniform", variance_floor=False)
        assert np.all(arr.se == 0.0)
        floored = st.estimate(auto, auto, s.sampled, s.pi, design="uniform")
        assert floored.se.max() > 0
        assert np.array_equal(floored.value, arr.value)


def test_the_p_at_k_variance_is_the_mean_of_design_and_model_and_keeps_run_correlations():
    # with a second copy of run r0: a difference of two identical runs must stay exactly 0
    # with width 0, which holds only if the averaged covariances keep the runs' correlation
    st, human = _synthetic(3, copy_first=True)
    copy = st.run_names.index("r0-copy")
    p_at = [m for m, (kind, _) in enumerate(st._parsed) if kind == "P"]
    others = [m for m in range(len(st.measures)) if m not in p_at]
    assert p_at and others
    rng = np.random.default_rng(4)
    conf = np.array([[0.9, 0.08, 0.02], [0.2, 0.6, 0.2], [0.05, 0.25, 0.7]])
    for rep in range(5):
        auto = (rng.random(human.size)[:, None] > conf.cumsum(1)[human]).sum(1)
        d = Design("stratified", 120, seed=rep)
        s = sample(auto, d, pilot_grades=human[pilot(auto, d)])
        kw = {"design": "stratified", "strata": s.strata, "covariance": True}
        raw = st.estimate(auto, human, s.sampled, s.pi, variance_floor=False, **kw)
        got = st.estimate(auto, human, s.sampled, s.pi, **kw)
        assert np.array_equal(got.value, raw.value)  # the blend moves intervals, not estimates
        # the ratio measures keep the design variance; P@k takes its mean with the model's
        np.testing.assert_allclose(got.se[:, others], raw.se[:, others], rtol=1e-12)
        for m in range(len(st.measures)):
            assert np.all(np.linalg.eigvalsh(got.cov[m]) > -1e-12)  # a covariance matrix
            value, se = got.difference(0, copy, m)
            assert value == 0.0 and se == pytest.approx(0.0, abs=1e-9)
            assert got.se[0, m] > 0


def test_the_blend_lies_halfway_between_the_design_and_the_model_variance():
    design = np.array([[[4.0, 1.0], [1.0, 1.0]]])
    model = np.array([[[2.0, 1.0], [1.0, 2.0]]])
    got = _floored(design, model, True)
    np.testing.assert_allclose(np.diagonal(got[0]), [3.0, 1.5])
    # the model's correlation (1/2) is kept at the new variances
    assert got[0, 0, 1] == pytest.approx(0.5 * np.sqrt(3.0 * 1.5))
    np.testing.assert_allclose(
        _floored(np.array([[4.0, 1.0]]), np.array([[2.0, 0.0]]), False), [[3.0, 1.0]]
    )
    # a run the model gives no variance keeps the design's
    none = _floored(design, np.array([[[2.0, 0.0], [0.0, 0.0]]]), True)
    np.testing.assert_allclose(np.diagonal(none[0]), [3.0, 1.0])


def test_power_tuning_blends_with_the_judge_free_estimate_and_never_widens_its_design_variance():
    # the estimate is lam * (judge-assisted) + (1 - lam) * (judge-free: the pilot's rates), on
    # the same sample, lam per measure minimising the summed design variance: never above either
    st, human = _synthetic(5)
    rng = np.random.default_rng(6)
    conf = np.array([[0.9, 0.08, 0.02], [0.2, 0.6, 0.2], [0.05, 0.25, 0.7]])
    weights: dict[str, list[Any]] = {"useless": [], "good": []}
    for rep in range(6):
        good = (rng.random(human.size)[:, None] > conf.cumsum(1)[human]).sum(1)
        useless = rng.integers(0, 3, human.size)
        for name, auto in (("useless", useless), ("good", good)):
            s = sample(auto, Design("uniform", 200, seed=rep))
            kw: dict[str, Any] = {"design": "uniform", "variance_floor": False}
            tuned = st.estimate(auto, human, s.sampled, s.pi, **kw)
            judge = st.estimate(auto, human, s.sampled, s.pi, power=False, **kw)
            alone = st.estimate(np.zeros_like(auto), human, s.sampled, s.pi, **kw)
            lam = tuned.judge_weight
            assert lam is not None and np.all((lam >= 0) & (lam <= 1))
            blend = lam * judge.value + (1 - lam) * alone.value
            np.testing.assert_allclose(tuned.value, blend, atol=1e-12)
            var = tuned.se**2
            assert np.all(var.sum(axis=0) <= (judge.se**2).sum(axis=0) + 1e-12)
            assert np.all(var.sum(axis=0) <= (alone.se**2).sum(axis=0) + 1e-12)
            weights[name].append(lam)
    # a judge that tracks the people carries most of the weight; one whose grades are noise
    # calibrates to about the judge-free rates, so its weight is poorly determined but lower
    assert np.mean(weights["useless"]) < np.mean(weights["good"])
    assert np.mean(weights["good"], axis=0).min() > 0.6


def _synthetic(seed: int, *, copy_first: bool = False):
    rng = np.random.default_rng(seed)
    pool = {f"q{t}": [f"d{i}" for i in range(40)] for t in range(20)}
    human_map = {
        q: {d: int(rng.choice([0, 1, 2], p=[0.7, 0.2, 0.1])) for d in docs}
        for q, docs in pool.items()
    }
    runs = {f"r{r}": {q: list(rng.permutation(docs)) for q, docs in pool.items()} for r in range(4)}
    if copy_first:
        runs["r0-copy"] = runs["r0"]
    st = PoolStructure(runs, pool, measures=("P@10", "nDCG@10"))
    human = np.array([human_map[q][d] for q, d in st.items])
    return st, human


def test_uniform_intervals_cover_precision_on_a_synthetic_pool():
    st, human = _synthetic(0)
    truth = st.values(human)
    rng = np.random.default_rng(1)
    conf = np.array([[0.8, 0.15, 0.05], [0.3, 0.5, 0.2], [0.1, 0.3, 0.6]])
    covered = []
    ppi_w, ho_w = [], []
    for rep in range(150):
        auto = (rng.random(human.size)[:, None] > conf.cumsum(1)[human]).sum(1)
        s = sample(auto, Design("uniform", 160, seed=rep))
        est = st.estimate(auto, human, s.sampled, s.pi, design="uniform")
        lo, hi = est.interval()
        covered.append((lo <= truth) & (truth <= hi))
        ppi_w.append(hi - lo)
        zero = np.zeros_like(auto)
        lo, hi = st.estimate(zero, human, s.sampled, s.pi, design="uniform").interval()
        ho_w.append(hi - lo)
    coverage = np.mean(covered, axis=(0, 1))
    assert coverage[0] == pytest.approx(0.95, abs=0.04)
    # the judge helps: narrower than the human sample alone on the same samples
    assert np.mean(ppi_w, axis=(0, 1))[0] < np.mean(ho_w, axis=(0, 1))[0]


def test_differences_use_the_same_sample_and_a_run_minus_itself_is_exactly_zero():
    st, human = _synthetic(2)
    auto = np.minimum(human + 1, 2)
    s = sample(auto, Design("uniform", 200, seed=0))
    est = st.estimate(auto, human, s.sampled, s.pi, design="uniform", covariance=True)
    value, se = est.difference(0, 0, 0)
    assert (value, se) == (0.0, 0.0)
    value, se = est.difference(0, 1, 0)
    assert value == pytest.approx(est.value[0, 0] - est.value[1, 0])
    c = est.cov[0]
    assert se == pytest.approx(math.sqrt(c[0, 0] + c[1, 1] - 2 * c[0, 1]))


# -- designs ------------------------------------------------------------------------------------


def test_uniform_sample_is_reproducible_and_has_the_budget():
    auto = np.array([0, 1, 2] * 30)
    a = sample(auto, Design("uniform", 20, seed=4))
    b = sample(auto, Design("uniform", 20, seed=4))
    assert np.array_equal(a.indices, b.indices)
    assert a.indices.size == 20 and np.unique(a.indices).size == 20
    # the pilot (20% of the budget: 4 items) is certain, the other 16 of 86 items SRSWOR
    assert a.pi[a.pilot] == pytest.approx(np.ones(4))
    assert a.pi.sum() == pytest.approx(20.0)
    assert sorted(np.unique(a.pi)) == pytest.approx([16 / 86, 1.0])


def test_stratified_neyman_gives_more_to_the_grade_the_judge_gets_wrong():
    rng = np.random.default_rng(0)
    auto = np.repeat([0, 1], [300, 300])
    human = np.concatenate([np.zeros(300, int), rng.integers(0, 2, 300)])  # grade 1: coin flips
    design = Design("stratified", 100, seed=1)
    p_idx = pilot(auto, design)
    s = sample(auto, design, pilot_grades=human[p_idx])
    assert s.indices.size == 100
    in_1 = (auto[s.indices] == 1) & (s.strata[s.indices] != -1)
    in_0 = (auto[s.indices] == 0) & (s.strata[s.indices] != -1)
    # Neyman: S_0 from the smoothed rate 0.5/(n_0 + 1), S_1 ~ 1/2: about 2.5 times as many
    assert in_1.sum() > 2 * in_0.sum()
    # within a stratum (outside the pilot) pi = n_h / N_h
    for g in (0, 1):
        members = (auto == g) & (s.strata != -1)
        n_h = int((members[s.indices]).sum())
        assert s.pi[members] == pytest.approx(n_h / members.sum())


def test_active_sample_spends_the_budget_in_expectation_with_a_floor():
    auto = np.repeat([0, 1, 2], [500, 300, 200])
    human = np.repeat([0, 1, 2], [500, 300, 200])
    human[:50] = 1  # the judge's 0 is sometimes wrong
    infl = np.linspace(0.1, 2.0, 1000)
    design = Design("active", 200, seed=3, floor=0.1)
    p_idx = pilot(auto, design)
    s = sample(auto, design, influence=infl, pilot_grades=human[p_idx])
    assert s.pi.sum() == pytest.approx(200.0, rel=1e-6)
    assert s.pi.min() >= 0.1 * 200 / 1000 - 1e-12
    assert s.pi.max() <= 1.0
    # queue: the pilot first, then the most informative first (within a grade the error rate
    # is the same, so the order follows the influence)
    rest = s.indices[p_idx.size :]
    assert np.array_equal(s.indices[: p_idx.size], p_idx)
    for g in (0, 1, 2):
        of_g = rest[auto[rest] == g]
        assert np.all(np.diff(infl[of_g]) <= 0)


def test_a_defensive_active_design_predicts_no_measure_worse_than_the_uniform_design():
    from metrics.sampling.designs import _defensive

    auto = np.repeat([0, 1, 2], [500, 300, 200])
    human = np.repeat([0, 1, 2], [500, 300, 200])
    human[:50] = 1
    infl = np.linspace(0.1, 2.0, 1000)  # what the influence favours, measure 0 follows
    h = np.stack([infl**2, np.linspace(2.0, 0.1, 1000) ** 2])  # measure 1 needs the opposite
    design = Design("active", 200, seed=3, floor=0.1)
    p_idx = pilot(auto, design)
    plain = sample(auto, design, influence=infl, pilot_grades=human[p_idx])
    safe = sample(auto, design, influence=infl, pilot_grades=human[p_idx], variance_weights=h)
    rest = np.setdiff1d(np.arange(1000), p_idx)
    uniform = np.full(rest.size, (200 - p_idx.size) / rest.size)

    def predicted(pi):
        return ((1.0 / pi - 1.0) * h[:, rest]).sum(axis=1)

    assert predicted(plain.pi[rest])[1] > predicted(uniform)[1]  # pure active hurts measure 1
    assert np.all(predicted(safe.pi[rest]) <= predicted(uniform) * (1 + 1e-9))
    assert 0.0 < safe.mix <= 1.0 and plain.mix == 0.0
    assert safe.pi.sum() == pytest.approx(200.0, rel=1e-6)
    # with one measure only the influence's own probabilities are kept whole when they help it
    target = np.array([0.1, 0.3, 0.6])
    kept, mix = _defensive(target, np.array([[0.1, 0.3, 0.6]]) ** 2, 1)
    assert mix == 0.0 and np.allclose(kept, target)
    with pytest.raises(ValueError, match="variance_weights"):
        sample(auto, design, influence=infl, pilot_grades=human[p_idx], variance_weights=h[:, :5])


def test_designs_that_need_a_pilot_say_so():
    auto = np.zeros(50, dtype=int)
    with pytest.raises(ValueError, match="pilot_grades"):
        sample(auto, Design("active", 10))
    with pytest.raises(ValueError, match="pilot_grades"):
        sample(auto, Design("stratified", 10))
    with pytest.raises(ValueError, match="pilot slice"):
        sample(auto, Design("active", 10), pilot_share=0.0)
    s = sample(auto, Design("stratified", 10, allocation="proportional"), pilot_share=0.0)
    assert s.indices.size == 10


# -- the mapping API ----------------------------------------------------------------------------


def test_estimate_runs_reports_estimates_auto_only_human_only_and_differences():
    pool = {"q1": ["a", "b", "c", "d"], "q2": ["e", "f", "g", "h"]}
    runs = {"r1": {"q1": ["a", "b"], "q2": ["e", "f"]}, "r2": {"q1": ["c", "d"], "q2": ["g"]}}
    auto = {"q1": {"a": 1, "b": 0, "c": 0, "d": 1}, "q2": {"e": 1, "f": 1, "g": 0, "h": 0}}
    human = {"q1": {"a": 1, "c": 1}, "q2": {"e": 0, "g": 0}}
    pi = {q: {d: 0.5 for d in docs} for q, docs in pool.items()}
    rep = estimate_runs(runs, pool, auto, human, pi, design="uniform", measures=("P@2",))
    # auto-only P@2: r1 (1 + 0)/2 and (1 + 1)/2 -> 0.75; corrected without a pilot (no pi = 1
    # item, so the raw auto grades predict): r1 q1 a 1 + 2 (1 - 1) = 1, b 0 -> 1/2;
    # q2 e 1 + 2 (0 - 1) = -1, f 1 -> 0; mean 0.25
    assert rep.auto_only["r1"]["P@2"] == pytest.approx(0.75)
    assert rep.estimates["r1"]["P@2"].value == pytest.approx(0.25)
    assert rep.human_only is not None
    # human only: a 2, c 2, others 0 -> r1 q1 (2 + 0)/2 = 1, q2 0 -> 0.5
    assert rep.human_only["r1"]["P@2"].value == pytest.approx(0.5)
    diff = rep.differences("r1", "r2", "P@2")
    assert diff.value == pytest.approx(
        rep.estimates["r1"]["P@2"].value - rep.estimates["r2"]["P@2"].value
    )
    assert diff.low <= diff.value <= diff.high
    json.dumps(rep.to_dict())  # JSON-safe
    with pytest.raises(ValueError, match="unknown run"):
        rep.differences("r1", "nope", "P@2")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"measures": ("MAP",)}, "unknown measure"),
        ({"design": "bandit"}, "unknown design"),
        ({"auto": {"q1": {"a": 1}}}, "no automatic grade"),
        ({"pi": {"q1": {"a": 0.5}}}, "no inclusion probability"),
        ({"human": {}}, "human sample is empty"),
        ({"human": {"q1": {"zz": 1}}}, "not in the pool"),
        ({"design": "stratified"}, "stratum of every item"),
        ({"auto": {"q1": {"a": -1, "b": 0}}}, ">= 0"),
        ({"pi": {"q1": {"a": 0.0, "b": 0.5}}}, "inclusion probability 0"),
        ({"pi": {"q1": {"a": 1.5, "b": 0.5}}}, r"\(0, 1\]"),
        ({"level": 1.5}, "level"),
    ],
)
def test_bad_input_is_a_clear_value_error(kwargs, message):
    args: dict[str, Any] = {
        "runs": {"r": {"q1": ["a", "b"]}},
        "pool": {"q1": ["a", "b"]},
        "auto": {"q1": {"a": 1, "b": 0}},
        "human": {"q1": {"a": 1, "b": 0}},
        "pi": {"q1": {"a": 0.5, "b": 0.5}},
        "design": "uniform",
    }
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        estimate_runs(**args)


def test_duplicates_in_the_pool_or_a_run_are_errors():
    with pytest.raises(ValueError, match="twice in the pool"):
        PoolStructure({"r": {"q": ["a"]}}, {"q": ["a", "a"]})
    with pytest.raises(ValueError, match="twice"):
        PoolStructure({"r": {"q": ["a", "a"]}}, {"q": ["a"]})
    with pytest.raises(ValueError, match="budget"):
        sample([0, 1], Design("uniform", 5))
    with pytest.raises(ValueError, match="at least 2"):
        Design("uniform", 1)


def test_a_sample_drawn_over_the_pool_round_trips_through_the_mapping_api():
    st, human = _synthetic(5)
    auto = np.minimum(human, 1)  # the judge never says 2
    design = Design("stratified", 240, seed=9)
    p_idx = pilot(auto, design)
    s = sample(auto, design, pilot_grades=human[p_idx])
    pool = {q: [d for qq, d in st.items if qq == q] for q in st.topics}
    runs = {
        "r0": {q: [d for d in pool[q] if int(d[1:]) % 2 == 0] for q in pool},
        "r1": {q: pool[q][::-1] for q in pool},
    }
    rep = estimate_runs(
        runs,
        pool,
        by_item(st.items, auto),
        by_item([st.items[i] for i in s.indices], human[s.indices]),
        by_item(st.items, s.pi),
        design="stratified",
        strata=by_item(st.items, s.strata),
        measures=("P@10", "AP"),
    )
    truth = PoolStructure(runs, pool, measures=("P@10", "AP")).values(human)
    for i, run in enumerate(("r0", "r1")):
        for j, m in enumerate(("P@10", "AP")):
            e = rep.estimates[run][m]
            assert e.low <= e.value <= e.high
            assert abs(e.value - truth[i, j]) < 4 * e.se + 1e-9  # within four standard errors
    assert rep.n_sampled == 240


def test_judging_every_item_through_the_mapping_api_gives_the_hand_worked_values():
    rep = estimate_runs(
        {"r": RUN},
        POOL,
        {"q": {"a": 0, "b": 2, "c": 0, "d": 1}},
        {"q": HUMAN},
        {"q": dict.fromkeys(POOL["q"], 1.0)},
        design="uniform",
        measures=("P@2", "AP"),
    )
    assert rep.estimates["r"]["P@2"].value == pytest.approx(0.5)
    assert rep.estimates["r"]["AP"].value == pytest.approx((1 + 2 / 3) / 2)
    assert rep.estimates["r"]["AP"].se == 0.0
    # the judge alone: relevant b (rank 4) and d (not retrieved) -> P@2 0, AP (1/4) / 2
    assert rep.auto_only["r"]["P@2"] == pytest.approx(0.0)
    assert rep.auto_only["r"]["AP"] == pytest.approx(0.125)


def test_a_raw_score_calibrates_by_a_logistic_fit_monotone_in_the_score_and_the_grade_level():
    from metrics.sampling.calibration import _calibrated_scores

    rng = np.random.default_rng(5)
    n = 400
    score = rng.normal(size=n)
    human = (rng.random(n) < 1 / (1 + np.exp(-(2.0 * score - 1.0)))).astype(np.int64)
    human[(human == 1) & (score > 1.0)] = 2  # the highest scores are highly relevant
    auto = (score > 0.5).astype(np.int64)
    fy = np.stack([(human >= 1), (human >= 2)]).astype(np.float64)
    pilot_items = np.arange(0, n, 2)
    pred = _calibrated_scores(auto, score, fy, pilot_items)
    assert pred.shape == (2, n)
    order = np.argsort(score)
    assert np.all(np.diff(pred[0][order][auto[order] == 0]) >= -1e-12)  # rises with the score
    assert np.all(pred[1] <= pred[0] + 1e-12)  # P(y >= 2) <= P(y >= 1)
    # calibrated: the mean prediction over the pilot is its rate (the intercept is free)
    assert pred[0][pilot_items].mean() == pytest.approx(fy[0][pilot_items].mean(), abs=0.02)
    with pytest.raises(ValueError, match="finite"):
        _calibrated_scores(auto, np.where(score > 2, np.nan, score), fy, pilot_items)


def test_estimates_calibrated_on_scores_say_so_stay_unbiased_for_precision_and_name_gaps():
    rng = np.random.default_rng(11)
    pool = {f"q{t}": [f"d{t}-{i}" for i in range(12)] for t in range(6)}
    runs = {f"r{k}": {q: list(rng.permutation(ds))[:6] for q, ds in pool.items()} for k in range(3)}
    human = {q: {d: int(rng.random() < 0.3) for d in ds} for q, ds in pool.items()}
    score = {q: {d: human[q][d] + rng.normal(0, 0.8) for d in ds} for q, ds in pool.items()}
    auto = {q: {d: int(score[q][d] > 0.5) for d in ds} for q, ds in pool.items()}
    st = PoolStructure(runs, pool, measures=("P@5",))
    flat_auto = np.array(st.flat(auto, what="auto"), dtype=np.int64)
    flat_human = np.array(st.flat(human, what="human"), dtype=np.int64)
    truth = st.values(flat_human)[:, 0]
    # one fixed pilot (pi = 1), then every 10-of-60 uniform sample of the rest, on average
    pilot_idx = np.arange(0, st.n_items, 6)
    rest = np.setdiff1d(np.arange(st.n_items), pilot_idx)
    flat_score = np.array(st.flat(score, what="scores"), dtype=np.float64)
    mean = np.zeros_like(truth)
    draws = 400
    for seed in range(draws):
        chosen = np.random.default_rng(seed).choice(rest, size=10, replace=False)
        sampled = np.zeros(st.n_items, dtype=bool)
        sampled[pilot_idx] = sampled[chosen] = True
        pi = np.full(st.n_items, 10 / rest.size)
        pi[pilot_idx] = 1.0
        est = st.estimate(
            flat_auto,
            flat_human,
            sampled,
            pi,
            design="uniform",
            score=flat_score,
            variance_floor=False,
            power=False,
        )
        mean += est.value[:, 0] / draws
    # P@k is linear: unbiased for any predictor fixed by the pilot (Monte Carlo error ~0.01)
    assert mean == pytest.approx(truth, abs=0.03)
    pi_map = {q: {d: 12 / 72 for d in ds} for q, ds in pool.items()}
    some = {q: {ds[0]: human[q][ds[0]], ds[1]: human[q][ds[1]]} for q, ds in pool.items()}
    rep = estimate_runs(runs, pool, auto, some, pi_map, design="uniform", scores=score)
    assert rep.to_dict()["calibration"] == "score"
    assert estimate_runs(runs, pool, auto, some, pi_map, design="uniform").calibration == "grade"
    gap = {q: dict(ds) for q, ds in score.items()}
    del gap["q0"]["d0-0"]
    with pytest.raises(ValueError, match="1 pool items have no score"):
        estimate_runs(runs, pool, auto, some, pi_map, design="uniform", scores=gap)


def test_the_active_designs_influence_is_taken_at_the_pilots_calibrated_predictions():
    pool = {"q1": ["a", "b", "c", "d"], "q2": ["e", "f", "g", "h"]}
    runs = {"r": {"q1": ["a", "b"], "q2": ["e", "f"]}}
    st = PoolStructure(runs, pool, measures=("R@2",))
    auto = np.array([0, 0, 0, 0, 1, 0, 1, 0])  # the judge sees nothing relevant in q1
    raw = st.influence(auto)
    # at the raw labels q1 has no relevant item: R@2's denominator is 0, so is the influence,
    # and an active design would leave q1 to its floor
    assert np.all(raw[:4] == 0.0) and raw[4:].max() > 0
    # the pilot (c, e, h) finds the judge's 0s relevant a third of the time (c)
    pilot_idx = np.array([2, 4, 7])
    cal = st.influence(auto, pilot=pilot_idx, pilot_grades=[1, 1, 0])
    assert np.all(cal[:2] > 0)  # the run's retrieved q1 items now count
    with pytest.raises(ValueError, match="pilot_grades"):
        st.influence(auto, pilot=pilot_idx, pilot_grades=[1])


def test_intervals_take_students_t_at_the_design_variances_degrees_of_freedom():
    from scipy.stats import t as student_t

    from metrics.sampling.variance import _dof

    rng = np.random.default_rng(3)
    # Satterthwaite's count: about n for normal terms, about 2 when one term dominates
    assert float(_dof(rng.normal(size=4000))) == pytest.approx(4000, rel=0.1)
    assert float(_dof(np.array([1.0, -1.0, 1.0, -1.0]))) == 3.0  # even terms: n - 1
    assert float(_dof(np.array([10.0, 0.1, -0.1, 0.1]))) < 3  # 2 n / (n - 1) for one term
    assert math.isinf(float(_dof(np.zeros(5))))  # no variance: nothing to count
    st, human, auto = _small_pool()
    sampled = np.zeros(8, dtype=bool)
    sampled[[0, 2, 4, 5]] = True
    pi = np.full(8, 4 / 8)
    est = st.estimate(
        auto, human, sampled, pi, design="uniform", covariance=True, variance_floor=False
    )
    assert est.dof is not None and np.all(est.dof >= 1)
    lo, hi = est.interval(0.5)  # narrow enough not to be clipped to [0, 1]
    se = est.se
    checked = 0
    for r in range(se.shape[0]):
        for m in range(se.shape[1]):
            if se[r, m] > 0 and lo[r, m] > 0 and hi[r, m] < 1:  # not clipped
                q = student_t.ppf(0.75, est.dof[m, r])
                assert (hi[r, m] - lo[r, m]) / 2 == pytest.approx(q * se[r, m])
                assert q > 0.6745  # the normal's 75% quantile
                checked += 1
    assert checked > 0
    value, dse, dq = est.differences(np.array([0]), np.array([1]))
    assert dq.shape == value.shape == dse.shape and np.all(dq >= 1.959)
