"""The top-up (``metrics.bias.topup``): designs and their inclusion probabilities, the exact
score once the hole is judged (checked against ``metrics.Evaluator``), and intervals that hold."""

from __future__ import annotations

import numpy as np
import pytest

from metrics import Evaluator, Qrels, Run
from metrics.bias.topup import DESIGNS, Hole, draw, estimate, hole_of

RANKED = {
    "1": ["a", "b", "c", "d", "e", "f"],  # b, d, e unjudged in the top 5; f judged relevant deeper
    "2": ["g", "h", "i", "j", "k"],  # h, j unjudged
    "3": ["m", "n"],  # a short run: n unjudged
}
QRELS = {
    "1": {"a": 1, "c": 0, "f": 1, "z": 1},  # z: relevant, not retrieved
    "2": {"g": 0, "i": 1, "k": 0},
    "3": {"m": 1},
}
TRUTH = {("1", "b"): 1, ("1", "d"): 0, ("1", "e"): 1, ("2", "h"): 0, ("2", "j"): 1, ("3", "n"): 0}


def _hole() -> Hole:
    return hole_of(QRELS, RANKED, 5)


def test_the_hole_is_the_unjudged_top_k() -> None:
    assert _hole().unjudged == [
        ("1", 2, "b"),
        ("1", 4, "d"),
        ("1", 5, "e"),
        ("2", 2, "h"),
        ("2", 4, "j"),
        ("3", 2, "n"),
    ]


def test_judged_whole_the_estimate_is_the_score_the_evaluator_gives() -> None:
    hole = _hole()
    whole = draw(hole, "uniform", 6, np.random.default_rng(1))
    assert set(whole.probabilities) == {1.0}
    got = estimate(hole, whole, TRUTH, ["P@5", "R@5", "AP"], draws=3)
    judged = {q: {**QRELS[q], **{d: g for (qq, d), g in TRUTH.items() if qq == q}} for q in QRELS}
    run = Run.from_dict(
        {q: {d: float(len(docs) - i) for i, d in enumerate(docs)} for q, docs in RANKED.items()}
    )
    ev = Evaluator(Qrels.from_dict(judged), ["P@5", "R@5", "AP"], compat="trec_eval", ci=None)
    want = ev.evaluate(run)
    for name in ("P@5", "R@5", "AP"):
        assert got[name].estimate == pytest.approx(want.aggregates[name].value, abs=1e-12)
        assert got[name].low == got[name].high == pytest.approx(got[name].estimate)
    # relevant in the top 5: a, b, e (topic 1), i, j (2), m (3); b, e, j only the run found
    unique = estimate(hole, whole, TRUTH, ["Unique@5"], draws=3)["Unique@5"]
    assert unique.estimate == pytest.approx(3 / 6)


def test_designs_draw_their_budget_with_their_inclusion_probabilities() -> None:
    hole = _hole()
    rng = np.random.default_rng(3)
    uniform = draw(hole, "uniform", 3, rng)
    assert len(uniform.documents) == 3 and set(uniform.probabilities) == {0.5}
    ranks = draw(hole, "rank", 3, rng)  # bands 1-2, 3-4, 5: 3, 2 and 1 unjudged
    assert ranks.population == {"ranks 1-2": 3, "ranks 3-4": 2, "rank 5": 1}
    assert sorted(ranks.strata) == ["rank 5", "ranks 1-2", "ranks 3-4"]  # one in each
    assert sorted(ranks.probabilities) == [pytest.approx(1 / 3), 0.5, 1.0]
    per_topic = draw(hole, "per_topic", 1, rng)
    assert sorted(q for q, _, _ in per_topic.documents) == ["1", "2", "3"]
    assert sorted(per_topic.probabilities) == [1 / 3, 0.5, 1.0]
    assert set(DESIGNS) == {"uniform", "rank", "per_topic"}
    with pytest.raises(ValueError, match="unknown design"):
        draw(hole, "snowball", 3, rng)


def test_nothing_judged_yet_gives_the_bounds_of_the_hole() -> None:
    hole = _hole()
    sample = draw(hole, "uniform", 2, np.random.default_rng(0))
    p5 = estimate(hole, sample, {}, ["P@5"], draws=4000)["P@5"]
    assert p5.judged == 0 and p5.sampled == 2 and p5.unjudged == 6
    # the judged relevant: a, i, m = 3 of 15; the hole's 6 could all be relevant: 9 of 15
    assert 3 / 15 - 1e-9 <= p5.low < p5.estimate < p5.high <= 9 / 15 + 1e-9


def test_the_interval_holds_the_hole_judged_whole_as_often_as_it_says() -> None:
    """200 topics, a hole of 4 documents each at a relevance rate of 0.3: 20 documents judged
    uniformly, 300 repetitions; the 95% interval holds the truth 92-98% of the time."""
    rng = np.random.default_rng(11)
    ranked = {str(t): [f"{t}-{i}" for i in range(10)] for t in range(200)}
    qrels = {q: {d: int(rng.random() < 0.5) for d in docs[:6]} for q, docs in ranked.items()}
    truth = {(q, d): int(rng.random() < 0.3) for q, docs in ranked.items() for d in docs[6:]}
    hole = hole_of(qrels, ranked, 10)
    full = {q: {**qrels[q], **{d: truth[(q, d)] for d in ranked[q][6:]}} for q in ranked}
    target = float(np.mean([sum(full[q][d] for d in ranked[q]) / 10 for q in ranked]))
    held = 0
    for _ in range(300):
        sample = draw(hole, "uniform", 20, rng)
        labels = {(q, d): truth[(q, d)] for q, _, d in sample.documents}
        held += estimate(hole, sample, labels, ["P@10"], draws=400, rng=rng)["P@10"].contains(
            target
        )
    assert 0.92 <= held / 300 <= 0.98


GRADED = {
    "1": {"a": 2, "c": 0, "f": 1, "z": 2},
    "2": {"g": 0, "i": 1, "k": 0},
    "3": {"m": 2},
}
GRADED_TRUTH = {
    ("1", "b"): 1,
    ("1", "d"): 0,
    ("1", "e"): 2,
    ("2", "h"): 0,
    ("2", "j"): 2,
    ("3", "n"): 0,
}


def test_graded_and_judged_whole_ndcg_and_the_ceiling_are_the_evaluators() -> None:
    hole = hole_of(GRADED, RANKED, 5)
    whole = draw(hole, "uniform", 6, np.random.default_rng(1))
    names = ["nDCG@5", "nDCG@3", "ceiling@5", "R@5"]
    got = estimate(hole, whole, GRADED_TRUTH, names, draws=3)
    judged = {
        q: {**GRADED[q], **{d: g for (qq, d), g in GRADED_TRUTH.items() if qq == q}} for q in GRADED
    }
    run = Run.from_dict(
        {q: {d: float(len(docs) - i) for i, d in enumerate(docs)} for q, docs in RANKED.items()}
    )
    want = Evaluator(Qrels.from_dict(judged), names, compat="trec_eval", ci=None).evaluate(run)
    for name in names:
        assert got[name].estimate == pytest.approx(want.aggregates[name].value, abs=1e-12), name
        assert got[name].low == got[name].high


def test_graded_holes_take_grades_from_the_sample_and_the_qrels_mix() -> None:
    """Nothing judged: nDCG@5's interval lies above the hole all non-relevant and holds both it
    and the hole all at the top grade (nDCG is not monotone in the hole's grades: they raise
    the ideal too); the hole's relevant documents take grades 1 or 2 (the qrels' grades)."""
    hole = hole_of(GRADED, RANKED, 5)
    sample = draw(hole, "uniform", 2, np.random.default_rng(0))
    none = {(q, d): 0 for q, _, d in hole.unjudged}
    top = {(q, d): 2 for q, _, d in hole.unjudged}
    whole = draw(hole, "uniform", 6, np.random.default_rng(0))
    low = estimate(hole, whole, none, ["nDCG@5"], draws=2)["nDCG@5"].estimate
    high = estimate(hole, whole, top, ["nDCG@5"], draws=2)["nDCG@5"].estimate
    got = estimate(hole, sample, {}, ["nDCG@5"], draws=4000)["nDCG@5"]
    assert low - 1e-9 <= got.low < got.estimate < got.high <= 1.0
    assert got.low <= high <= got.high
    with pytest.raises(ValueError, match="top 5 only"):
        estimate(hole, sample, {}, ["nDCG@10"], draws=2)


def test_the_rank_design_holds_its_interval_where_relevance_falls_with_rank() -> None:
    """100 topics, ranks 1-10 unjudged from rank 3 on, relevant with a chance falling from 0.6
    to 0.1 down the ranks; 12 documents judged by rank band (one band over-sampled at small
    budgets), 200 repetitions: the interval holds P@10 92-98% of the time and AP at least 92%
    (the bands collapsed, AP's interval is wide: honest, not tight); the estimate's mean error
    is small (Jeffreys' prior pulls a 12-document sample's rate a little towards 1/2)."""
    rng = np.random.default_rng(5)
    ranked = {str(t): [f"{t}-{i}" for i in range(10)] for t in range(100)}
    qrels = {q: {d: int(rng.random() < 0.6) for d in docs[:2]} for q, docs in ranked.items()}
    chance = np.linspace(0.6, 0.1, 8)
    truth = {
        (q, d): int(rng.random() < chance[i])
        for q, docs in ranked.items()
        for i, d in enumerate(docs[2:])
    }
    hole = hole_of(qrels, ranked, 10)
    whole = draw(hole, "uniform", len(hole.unjudged), rng)
    target = estimate(hole, whole, truth, ["P@10", "AP"], draws=2)
    held = {"P@10": 0, "AP": 0}
    errors = []
    for _ in range(200):
        sample = draw(hole, "rank", 12, rng)
        labels = {(q, d): truth[(q, d)] for q, _, d in sample.documents}
        got = estimate(hole, sample, labels, ["P@10", "AP"], draws=300, rng=rng)
        for name in held:
            held[name] += got[name].contains(target[name].estimate)
        errors.append(got["P@10"].estimate - target["P@10"].estimate)
    assert 0.92 <= held["P@10"] / 200 <= 0.98 and held["AP"] / 200 >= 0.92, held
    assert abs(float(np.mean(errors))) < 0.03


def test_a_judges_grades_corrected_by_the_sample_hold_and_a_right_judge_narrows() -> None:
    """100 topics, 4 unjudged documents each, relevant at 0.3; 15 judged uniformly, 150
    repetitions. A judge that is right everywhere narrows P@10's interval by a fifth or more; one
    that says
    relevant for a relevant document 80% of the time and for another 10% keeps it holding
    (the sample corrects it); a judge is refused for anything but a uniform sample."""
    rng = np.random.default_rng(21)
    ranked = {str(t): [f"{t}-{i}" for i in range(10)] for t in range(100)}
    qrels = {q: {d: int(rng.random() < 0.5) for d in docs[:6]} for q, docs in ranked.items()}
    truth = {(q, d): int(rng.random() < 0.3) for q, docs in ranked.items() for d in docs[6:]}
    noisy = {key: int(rng.random() < (0.8 if g else 0.1)) for key, g in truth.items()}
    hole = hole_of(qrels, ranked, 10)
    whole = draw(hole, "uniform", len(hole.unjudged), rng)
    target = estimate(hole, whole, truth, ["P@10"], draws=2)["P@10"].estimate
    held = {"none": 0, "right": 0, "noisy": 0}
    width = {"none": 0.0, "right": 0.0, "noisy": 0.0}
    for _ in range(150):
        sample = draw(hole, "uniform", 15, rng)
        labels = {(q, d): truth[(q, d)] for q, _, d in sample.documents}
        for name, auto in (("none", None), ("right", truth), ("noisy", noisy)):
            got = estimate(hole, sample, labels, ["P@10"], draws=300, rng=rng, auto=auto)
            held[name] += got["P@10"].contains(target)
            width[name] += (got["P@10"].high - got["P@10"].low) / 150
    assert held["none"] / 150 >= 0.9 and held["noisy"] / 150 >= 0.9, held
    assert held["right"] / 150 >= 0.9, held
    assert width["right"] < 0.8 * width["none"], width
    per_topic = draw(hole, "per_topic", 1, rng)
    with pytest.raises(ValueError, match="uniform sample only"):
        estimate(hole, per_topic, {}, ["P@10"], draws=2, auto=truth)
