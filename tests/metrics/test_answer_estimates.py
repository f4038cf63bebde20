"""Answer runs' nugget and support scores estimated from a human sample (issue 34, point 5):
the items and the scores' linear form (``metrics.answers.items``), and the prediction-powered
estimate (``metrics.answers.estimates``, ``metrics.sampling.linear``).

Every number is worked by hand in the comments, or is the support paper's worked example
(Thakur et al., arXiv 2504.15205, section 3.4); unbiasedness is checked by enumerating every
sample of a tiny design."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from metrics.answers import (
    Nugget,
    nugget_averages,
    run_nugget_scores,
    run_support_scores,
    support_averages,
)
from metrics.answers.estimates import estimate_answers
from metrics.answers.items import GRADES, AnswerItem, nugget_items, support_items
from metrics.io.answers import AnswerSentence, TopicAnswer

BANKS = {
    # t1: N = 3 nuggets, V = 2 vital; t2: no vital nugget (its vital scores are undefined)
    "t1": [
        Nugget("v1", "first", "vital"),
        Nugget("v2", "second", "vital"),
        Nugget("o1", "x", "okay"),
    ],
    "t2": [Nugget("a", "alpha", "okay"), Nugget("b", "beta", "okay")],
}


def answer(topic: str, *sentences: tuple[str, str | None]) -> TopicAnswer:
    """An answer whose sentences each cite one segment (None: no citation)."""
    refs = tuple(dict.fromkeys(seg for _, seg in sentences if seg))
    return TopicAnswer(
        topic,
        refs,
        tuple(AnswerSentence(text, (refs.index(seg),) if seg else ()) for text, seg in sentences),
        None,
        1,
    )


# r1 and r2 answer t1 with the same text (r2's spacing differs); only r1 answers t2
RUNS = {
    "r1": [answer("t1", ("A one.", "s1"), ("B two.", "s2")), answer("t2", ("C three.", "s1"))],
    "r2": [answer("t1", ("A one.", "s1"), ("B   two.", "s2"))],
}
T1 = "A one. B two."


def item(topic: str, text: str, target: str, kind: str = "nugget") -> AnswerItem:
    return AnswerItem(kind, topic, text, target)  # type: ignore[arg-type]


def test_runs_with_the_same_answer_text_share_the_nugget_items() -> None:
    items = nugget_items(BANKS, RUNS)
    # t1's three nuggets once for both runs' identical text, t2's two for r1: 5 items, not 8
    assert items.items == (
        item("t1", T1, "o1"),
        item("t1", T1, "v1"),
        item("t1", T1, "v2"),
        item("t2", "C three.", "a"),
        item("t2", "C three.", "b"),
    )


def test_nugget_coefficients_hold_the_known_denominators() -> None:
    items = nugget_items(BANKS, RUNS)
    m = {name: j for j, name in enumerate(items.measures)}
    # topics averaged: both bank topics for All (r2's unanswered t2 scores 0 and counts), only
    # t1 for Vital (t2 has no vital nugget)
    assert items.counts[m["strict_all_score"]].tolist() == [2, 2]
    assert items.counts[m["strict_vital_score"]].tolist() == [1, 1]
    c = items.coefficients  # (measures, f_1 / f_2, runs, items); items as in the test above
    # strict All: support counts 1 of N = 3 nuggets in t1 (1/3), 1 of 2 in t2, / Q_r = 2
    assert c[m["strict_all_score"], 1, 0].tolist() == pytest.approx([1 / 6] * 3 + [1 / 4] * 2)
    assert c[m["strict_all_score"], 0].tolist() == [[0.0] * 5, [0.0] * 5]
    assert c[m["strict_all_score"], 1, 1].tolist() == pytest.approx([1 / 6] * 3 + [0.0] * 2)
    # All: partial counts 0.5, support 1: 0.5 on f_1 and 0.5 on f_2, over 3 nuggets and Q_r = 2
    assert c[m["all_score"], :, 0, 0].tolist() == pytest.approx([1 / 12, 1 / 12])
    # strict Vital: V = 2 in t1, Q_r = 1; the okay nugget o1 has no weight
    assert c[m["strict_vital_score"], 1, 0].tolist() == pytest.approx([0.0, 0.5, 0.5, 0.0, 0.0])
    assert c[m["vital_score"], :, 1, 1].tolist() == pytest.approx([0.25, 0.25])
    # weighted: vital 1, okay 0.5, over V + 0.5 O = 2.5 in t1 (and 0.5 O = 1 in t2), Q_r = 2
    assert c[m["strict_weighted_score"], 1, 0].tolist() == pytest.approx(
        [0.5 / 2.5 / 2, 1 / 2.5 / 2, 1 / 2.5 / 2, 0.5 / 1 / 2, 0.5 / 1 / 2]
    )


def test_the_linear_form_equals_the_definitions_on_random_labels() -> None:
    items = nugget_items(BANKS, RUNS)
    name = {v: k for k, v in GRADES["nugget"].items()}
    rng = np.random.default_rng(5)
    for _ in range(20):
        y = rng.integers(0, 3, items.n_items)
        label = {it: name[int(g)] for it, g in zip(items.items, y, strict=True)}
        assignments = {
            "r1": {
                "t1": {n: label[item("t1", T1, n)] for n in ("v1", "v2", "o1")},
                "t2": {n: label[item("t2", "C three.", n)] for n in ("a", "b")},
            },
            "r2": {"t1": {n: label[item("t1", T1, n)] for n in ("v1", "v2", "o1")}},
        }
        scores = run_nugget_scores(BANKS, assignments)
        want = [
            [nugget_averages(scores[r], interval="t")[m].mean for m in items.measures]
            for r in items.runs
        ]
        assert items.values(y) == pytest.approx(np.array(want), abs=1e-12)


def test_a_full_human_sample_gives_the_definitions_value_with_zero_width() -> None:
    items = nugget_items(BANKS, RUNS)
    # people: v1 support, v2 partial, o1 none; a support, b partial. The assigner differs.
    human = {
        item("t1", T1, "v1"): 2,
        item("t1", T1, "v2"): 1,
        item("t1", T1, "o1"): 0,
        item("t2", "C three.", "a"): 2,
        item("t2", "C three.", "b"): 1,
    }
    auto = {it: 2 - g for it, g in human.items()}
    report = estimate_answers(items, auto, human, dict.fromkeys(items.items, 1.0), design="uniform")
    want = {
        # r1: t1 strict 1/3, t2 1/2; All t1 (1 + 0.5) / 3 = 1/2, t2 (1 + 0.5) / 2 = 3/4;
        # Vital t1 only: strict 1/2, (1 + 0.5) / 2 = 3/4
        "r1": {"strict_all_score": 5 / 12, "all_score": 5 / 8},
        # r2: t2 unanswered scores 0 and counts: (1/3 + 0) / 2, (1/2 + 0) / 2
        "r2": {"strict_all_score": 1 / 6, "all_score": 1 / 4},
    }
    for run in ("r1", "r2"):
        want[run] |= {"strict_vital_score": 0.5, "vital_score": 0.75}
        for measure, value in want[run].items():
            e = report.estimates[run][measure]
            assert e.value == pytest.approx(value, abs=1e-12)
            assert e.low == pytest.approx(value, abs=1e-12)
            assert e.high == pytest.approx(value, abs=1e-12)
            assert e.se == pytest.approx(0.0, abs=1e-12)
    assert report.n_sampled == 5 and report.n_items == 5


def test_a_sampled_estimate_divides_by_the_known_counts() -> None:
    """One topic, V = 2 of N = 4; a uniform sample of 2 of the 4 items (pi = 1/2, no pilot, so
    the prediction is the assigner's own label): the difference estimator, worked by hand."""
    bank = {"t": [Nugget("v1", "", "vital"), Nugget("v2", "", "vital")]}
    bank["t"] += [Nugget("o1", "", "okay"), Nugget("o2", "", "okay")]
    items = nugget_items(bank, {"r": [answer("t", ("Some answer.", "s"))]})
    key = {it.target: it for it in items.items}
    auto = {key["v1"]: 2, key["v2"]: 0, key["o1"]: 2, key["o2"]: 0}
    human = {key["v1"]: 2, key["o1"]: 0}  # sampled: v1 (the assigner right), o1 (wrong)
    report = estimate_answers(items, auto, human, dict.fromkeys(items.items, 0.5), design="uniform")
    e = report.estimates["r"]
    # strict Vital: (1/V) (f2(a_v1) + f2(a_v2) + (f2(y_v1) - f2(a_v1)) / pi) = (1 + 0 + 0) / 2
    assert e["strict_vital_score"].value == pytest.approx(0.5)
    # strict All: (1/N) (2 + (1 - 1) / 0.5 + (0 - 1) / 0.5) = (2 - 2) / 4: N = 4, not the 2 sampled
    assert e["strict_all_score"].value == pytest.approx(0.0)
    # All, s = (f1 + f2) / 2: auto sum 2, o1's correction (0 - 1) / 0.5 = -2: 0 / 4
    assert e["all_score"].value == pytest.approx(0.0)
    assert e["vital_score"].value == pytest.approx(0.5)
    assert report.auto_only["r"]["strict_all_score"] == pytest.approx(0.5)  # 2 supported of 4


def test_support_precision_divides_by_cited_sentences_and_recall_by_all() -> None:
    # the paper's example: a1 cites p1 (partial), a2 cites p2 (full), a3 cites nothing
    runs = {"r": [answer("t", ("a1.", "p1"), ("a2.", "p2"), ("a3.", None))]}
    items = support_items(runs)
    assert items.items == (item("t", "a1.", "p1", "support"), item("t", "a2.", "p2", "support"))
    precision, recall = items.values([1, 2])[0]
    assert (precision, recall) == pytest.approx((0.75, 0.5))  # (0.5 + 1) / 2, (0.5 + 1) / 3
    judged = {"t": {(0, "p1"): "partial", (1, "p2"): "full"}}
    avg = support_averages(run_support_scores(runs["r"], judged), interval="t")
    assert (avg["precision"].mean, avg["recall"].mean) == pytest.approx((precision, recall))


def test_a_shared_sentence_is_one_support_item_whose_label_serves_every_run() -> None:
    runs = {
        "r1": [answer("t", ("Same claim.", "p1"), ("Other.", "p2"))],
        "r2": [answer("t", ("Same  claim.", "p1"))],
        "r3": [answer("t", ("Same claim.", "p9"))],  # another segment: another item
    }
    items = support_items(runs)
    assert [(it.text, it.target) for it in items.items] == [
        ("Other.", "p2"),
        ("Same claim.", "p1"),
        ("Same claim.", "p9"),
    ]
    human = {items.items[1]: 0}  # people: the shared pair is not supported
    auto = dict.fromkeys(items.items, 2)
    pi = dict.fromkeys(items.items, 1.0)
    report = estimate_answers(
        items, auto, human | {items.items[0]: 2, items.items[2]: 2}, pi, design="uniform"
    )
    assert report.estimates["r1"]["precision"].value == pytest.approx(0.5)  # (0 + 1) / 2
    assert report.estimates["r2"]["precision"].value == pytest.approx(0.0)
    assert report.estimates["r3"]["precision"].value == pytest.approx(1.0)


def test_an_answer_that_cites_nothing_has_no_precision() -> None:
    runs = {"r": [answer("t", ("Uncited.", None))], "s": [answer("t", ("Cited.", "p"))]}
    items = support_items(runs)
    assert items.counts.tolist() == [[0, 1], [1, 1]]  # precision: r has no topic; recall: 1 each
    report = estimate_answers(
        items, {items.items[0]: 2}, {items.items[0]: 2}, {items.items[0]: 1.0}, design="uniform"
    )
    assert math.isnan(report.estimates["r"]["precision"].value)
    assert report.estimates["r"]["recall"].value == pytest.approx(0.0)
    zero = support_items(runs, undefined="zero")
    assert zero.counts.tolist() == [[1, 1], [1, 1]]


def _enumerate(items, auto, labels, design, pi, samples):
    """Each (probability, estimate) over ``samples`` (index tuples) of the array estimator with
    the assigner's labels as the fixed prediction (no pilot: nothing is calibrated)."""
    st = items.structure()
    out = []
    for prob, chosen in samples:
        s = np.zeros(items.n_items, dtype=bool)
        s[list(chosen)] = True
        if not s.any():  # the difference estimator on an empty sample: the predictions' total
            out.append((prob, items.values(auto)[:, :], np.zeros(items.values(auto).shape)))
            continue
        e = st.estimate(auto, labels, s, pi, design=design, variance_floor=False, auto_value=False)
        out.append((prob, e.value, e.se**2))
    probs = np.array([p for p, _, _ in out])
    values = np.array([v for _, v, _ in out])
    variances = np.array([v for _, _, v in out])
    mean = np.tensordot(probs, values, axes=1)
    spread = np.tensordot(probs, (values - mean) ** 2, axes=1)
    return mean, spread, np.tensordot(probs, variances, axes=1)


TINY_RUNS = {
    "r1": [answer("t1", ("A one.", "s1"), ("B two.", "s2")), answer("t2", ("C three.", "s1"))],
    "r2": [answer("t1", ("A one.", "s1")), answer("t2", ("D four.", "s3"), ("C three.", "s1"))],
}


def test_every_sample_of_a_tiny_uniform_design_averages_to_the_truth() -> None:
    items = support_items(TINY_RUNS)
    n_items = items.n_items  # A, B, C shared, D: 4 items
    assert n_items == 4
    labels = np.array([2, 1, 0, 2])
    auto = np.array([2, 2, 1, 0])
    n = 2
    pi = np.full(n_items, n / n_items)
    samples = [(1 / math.comb(n_items, n), c) for c in itertools.combinations(range(n_items), n)]
    mean, spread, mean_var = _enumerate(items, auto, labels, "uniform", pi, samples)
    truth = items.values(labels)
    assert mean == pytest.approx(truth, abs=1e-12)  # unbiased
    assert spread.max() > 0
    # the design's variance estimate N^2 (1 - n/N) s_v^2 / n is unbiased for the estimate's
    assert mean_var == pytest.approx(spread, abs=1e-12)


def test_every_sample_of_a_tiny_poisson_design_averages_to_the_truth() -> None:
    items = nugget_items(BANKS, RUNS)  # 5 items, unequal inclusion probabilities
    labels = np.array([0, 2, 1, 2, 1])
    auto = np.array([1, 2, 0, 0, 2])
    pi = np.array([0.3, 0.5, 0.7, 0.4, 0.6])
    samples = []
    for mask in itertools.product((0, 1), repeat=items.n_items):
        prob = float(np.prod(np.where(mask, pi, 1.0 - pi)))
        samples.append((prob, tuple(np.flatnonzero(mask))))
    mean, spread, mean_var = _enumerate(items, auto, labels, "active", pi, samples)
    assert mean == pytest.approx(items.values(labels), abs=1e-12)
    # sum over the sample of (1 - pi) / pi^2 v^2 is unbiased for Poisson sampling's variance
    assert mean_var == pytest.approx(spread, abs=1e-12)


def test_measures_outside_the_definitions_are_refused() -> None:
    with pytest.raises(ValueError, match="nugget measures"):
        nugget_items(BANKS, RUNS, measures=("recall",))
    with pytest.raises(ValueError, match="support measures"):
        support_items(RUNS, measures=("words",))
    with pytest.raises(ValueError, match="labels are 0"):
        items = nugget_items(BANKS, RUNS)
        estimate_answers(
            items,
            dict.fromkeys(items.items, 3),
            dict.fromkeys(items.items, 2),
            dict.fromkeys(items.items, 1.0),
            design="uniform",
        )
