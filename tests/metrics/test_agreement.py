"""Agreement statistics, the adjudication list and consensus grades against independent sources.

Independent sources: examples worked by hand in the comments below, published examples (Fleiss
1971 as tabulated on Wikipedia; Krippendorff 2011), a peer library on random data (statsmodels'
cohens_kappa and fleiss_kappa) and a from-the-definition implementation of ordinal alpha written
here, separately from the krippendorff package that the module calls.
"""

from __future__ import annotations

import json
import math
from collections.abc import Hashable
from typing import cast

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa, fleiss_kappa

from metrics.judges.agreement import (
    Agreement,
    Disagreement,
    PairKappa,
    agreement,
    agreement_by_topic,
    consensus_grade,
    disagreements,
)

SCALE = [0, 1, 2, 3]
Triple = tuple[Hashable, str, int]


def two_annotators(a: list[int], b: list[int]) -> list[Triple]:
    """Items 1..n judged by annotators "a" and "b"."""
    out: list[Triple] = [(i, "a", g) for i, g in enumerate(a, 1)]
    return out + [(i, "b", g) for i, g in enumerate(b, 1)]


# --- Cohen's kappa, hand-worked -------------------------------------------------------------
#
# Ten items, scale 0..3:
#   item  1  2  3  4  5  6  7  8  9  10
#   a     0  0  1  1  2  2  3  3  1  0
#   b     0  1  1  2  2  3  3  2  0  0
#
# Confusion table O (rows a, columns b), with margins:
#          b=0 b=1 b=2 b=3 | a
#   a=0     2   1   0   0  | 3
#   a=1     1   1   1   0  | 3
#   a=2     0   0   1   1  | 2
#   a=3     0   0   1   1  | 2
#   b       3   2   3   2  | 10
#
# Linear weights w_ij = |i - j| / 3. The five off-diagonal items are each one grade apart, so the
# observed disagreement is sum(w * O) / n = 5 * (1/3) / 10 = 1/6.
# Expected disagreement sum_ij w_ij * r_i * c_j / n^2, with sum_j |i - j| c_j for each row i:
#   i=0: 0*3 + 1*2 + 2*3 + 3*2 = 14, times r_0 = 3 -> 42
#   i=1: 1*3 + 0*2 + 1*3 + 2*2 = 10, times r_1 = 3 -> 30
#   i=2: 2*3 + 1*2 + 0*3 + 1*2 = 10, times r_2 = 2 -> 20
#   i=3: 3*3 + 2*2 + 1*3 + 0*2 = 16, times r_3 = 2 -> 32
#   total 124, so expected disagreement = 124 / 3 / 100 = 124/300.
# kappa_linear = 1 - (50/300) / (124/300) = 74/124 = 37/62 = 0.596774...
#
# Quadratic weights (i - j)^2 / 9: observed 5 * (1/9) / 10 = 50/900; expected rows
#   i=0: 0 + 2 + 12 + 18 = 32 -> 96; i=1: 3 + 0 + 3 + 8 = 14 -> 42;
#   i=2: 12 + 2 + 0 + 2 = 16 -> 32; i=3: 27 + 8 + 3 + 0 = 38 -> 76; total 246 -> 246/900.
# kappa_quadratic = 1 - 50/246 = 98/123 = 0.796747...
#
# Unweighted: p_o = 5/10; p_e = (3*3 + 3*2 + 2*3 + 2*2) / 100 = 25/100;
# kappa = (0.5 - 0.25) / 0.75 = 1/3.
TEN_A = [0, 0, 1, 1, 2, 2, 3, 3, 1, 0]
TEN_B = [0, 1, 1, 2, 2, 3, 3, 2, 0, 0]


@pytest.mark.parametrize(
    ("weights", "expected"),
    [("linear", 37 / 62), ("quadratic", 98 / 123), ("none", 1 / 3)],
)
def test_cohens_kappa_matches_the_hand_worked_ten_item_example(
    weights: str, expected: float
) -> None:
    result = agreement(two_annotators(TEN_A, TEN_B), scale=SCALE, weights=weights)  # type: ignore[arg-type]
    [pair] = result.pairs
    assert (pair.annotator_a, pair.annotator_b, pair.n_items) == ("a", "b", 10)
    assert pair.kappa == pytest.approx(expected, abs=1e-12)


def test_linear_weights_are_the_default() -> None:
    result = agreement(two_annotators(TEN_A, TEN_B), scale=SCALE)
    assert result.pairs[0].kappa == pytest.approx(37 / 62, abs=1e-12)


def test_cohens_kappa_is_the_same_whichever_annotator_comes_first() -> None:
    swapped = agreement(two_annotators(TEN_B, TEN_A), scale=SCALE)
    assert swapped.pairs[0].kappa == pytest.approx(37 / 62, abs=1e-12)


def test_weights_use_grade_positions_so_an_unused_middle_grade_widens_distances() -> None:
    # Grades 0, 1 and 3 used. On the scale [0, 1, 3] grade 1 sits midway; on [0, 1, 2, 3] it sits
    # a third of the way. statsmodels with wt="linear" weights by position 0..k-1 as well.
    a, b = [0, 1, 3, 1, 0, 3], [1, 1, 3, 3, 0, 1]
    narrow = agreement(two_annotators(a, b), scale=[0, 1, 3]).pairs[0].kappa
    wide = agreement(two_annotators(a, b), scale=SCALE).pairs[0].kappa
    table3 = np.zeros((3, 3))
    table4 = np.zeros((4, 4))
    pos3 = {0: 0, 1: 1, 3: 2}
    for ga, gb in zip(a, b, strict=True):
        table3[pos3[ga], pos3[gb]] += 1
        table4[ga, gb] += 1
    assert narrow == pytest.approx(cohens_kappa(table3, wt="linear", return_results=False))
    assert wide == pytest.approx(cohens_kappa(table4, wt="linear", return_results=False))
    assert narrow != pytest.approx(wide)


def test_every_pair_sharing_an_item_is_listed_in_name_order() -> None:
    judgments: list[Triple] = [
        ("d1", "carol", 1),
        ("d1", "alice", 1),
        ("d2", "alice", 0),
        ("d2", "bob", 2),
        ("d3", "alice", 2),
        ("d3", "bob", 2),
        ("d4", "dave", 3),
    ]
    result = agreement(judgments, scale=SCALE)
    assert [(p.annotator_a, p.annotator_b, p.n_items) for p in result.pairs] == [
        ("alice", "bob", 2),
        ("alice", "carol", 1),
    ]
    # alice-bob: (0, 2) and (2, 2). Linear w(0,2) = 2/3; observed 1/2 * 2/3 = 1/3; margins
    # alice (1/2 at 0, 1/2 at 2), bob (all at 2): expected 1/2 * 1 * 2/3 = 1/3; kappa = 1 - 1 = 0.
    assert result.pairs[0] == PairKappa("alice", "bob", 2, 0.0)
    assert result.n_annotators == 3
    assert any("dave" in note for note in result.notes)


def test_a_pair_sharing_one_item_has_undefined_kappa_and_a_note() -> None:
    result = agreement([("d1", "a", 0), ("d1", "b", 3)], scale=SCALE)
    assert result.pairs[0].n_items == 1
    assert math.isnan(result.pairs[0].kappa)
    assert any("fewer than 2 items" in note for note in result.notes)


def test_a_pair_that_always_gave_one_same_grade_has_undefined_kappa_and_a_note() -> None:
    # a and b both always say 1: expected disagreement is 0. c varies, so alpha is defined.
    judgments: list[Triple] = [
        ("d1", "a", 1),
        ("d1", "b", 1),
        ("d2", "a", 1),
        ("d2", "b", 1),
        ("d3", "a", 0),
        ("d3", "c", 2),
    ]
    result = agreement(judgments, scale=SCALE)
    ab = next(p for p in result.pairs if (p.annotator_a, p.annotator_b) == ("a", "b"))
    assert ab.n_items == 2
    assert math.isnan(ab.kappa)
    assert any("one and the same grade" in note for note in result.notes)
    assert not math.isnan(result.krippendorff_alpha)


def cohen_reference(table: np.ndarray, weights: str) -> float:
    if weights == "none":
        return float(cohens_kappa(table, return_results=False))
    # statsmodels: with wt given and weights=None, the category scores are 0..k-1 and wt says
    # whether the disagreement weight is |i - j| (linear) or (i - j)^2 (quadratic), rescaled.
    return float(cohens_kappa(table, wt=weights, return_results=False))


# Random campaigns: up to 12 items, each judged by a random subset of up to 5 annotators.
ANNOTATORS = ["ann", "ben", "cat", "dan", "eve"]
campaigns = st.lists(
    st.dictionaries(st.sampled_from(ANNOTATORS), st.sampled_from(SCALE), min_size=1, max_size=5),
    min_size=1,
    max_size=12,
)


def triples(campaign: list[dict[str, int]]) -> list[Triple]:
    return [(i, a, g) for i, grades in enumerate(campaign) for a, g in grades.items()]


@settings(max_examples=150, deadline=None)
@given(campaign=campaigns, weights=st.sampled_from(["linear", "quadratic", "none"]))
def test_cohens_kappa_matches_statsmodels_on_random_campaigns(
    campaign: list[dict[str, int]], weights: str
) -> None:
    result = agreement(triples(campaign), scale=SCALE, weights=weights)  # type: ignore[arg-type]
    for pair in result.pairs:
        table = np.zeros((4, 4))
        for grades in campaign:
            if pair.annotator_a in grades and pair.annotator_b in grades:
                table[grades[pair.annotator_a], grades[pair.annotator_b]] += 1
        assert pair.n_items == table.sum() >= 1
        rows, cols = table.sum(axis=1), table.sum(axis=0)
        one_same_grade = np.count_nonzero(rows) == 1 and np.array_equal(rows, cols)
        if pair.n_items < 2 or one_same_grade:
            assert math.isnan(pair.kappa)
        else:
            assert pair.kappa == pytest.approx(cohen_reference(table, weights), abs=1e-9)


# --- Fleiss' kappa --------------------------------------------------------------------------

# Fleiss (1971) as tabulated on https://en.wikipedia.org/wiki/Fleiss%27_kappa: 10 subjects,
# 14 raters each, 5 categories; P_bar = 0.378, P_e = 0.213, kappa = (0.378 - 0.213) / (1 - 0.213)
# = 0.210.
FLEISS_TABLE = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def from_counts(table: list[list[int]], grades: list[int]) -> list[Triple]:
    """Judgments with these per-item category counts; rater names r00, r01, ... per item."""
    out: list[Triple] = []
    for item, row in enumerate(table):
        ratings = [g for g, n in zip(grades, row, strict=True) for _ in range(n)]
        out += [(item, f"r{rater:02d}", g) for rater, g in enumerate(ratings)]
    return out


def test_fleiss_kappa_matches_the_fleiss_1971_wikipedia_example() -> None:
    result = agreement(from_counts(FLEISS_TABLE, [1, 2, 3, 4, 5]), scale=[1, 2, 3, 4, 5])
    assert result.fleiss_kappa == pytest.approx(0.210, abs=5e-4)
    assert result.n_items == 10
    assert result.n_annotators == 14
    assert result.percent_agreement == pytest.approx(0.1)  # only subject 1 is unanimous
    assert not any("Fleiss" in note for note in result.notes)  # every item has 14 ratings


def test_fleiss_kappa_uses_the_items_with_the_most_common_rater_count_and_says_so() -> None:
    # Three items judged twice: (0, 0), (1, 1), (0, 1); one judged three times: (0, 1, 1).
    # Fleiss on the three: P_i = 1, 1, 0 -> P_bar = 2/3; p_0 = p_1 = 3/6 -> P_e = 1/2;
    # kappa = (2/3 - 1/2) / (1/2) = 1/3.
    table = [[2, 0], [0, 2], [1, 1], [1, 2]]
    result = agreement(from_counts(table, [0, 1]), scale=[0, 1])
    assert result.fleiss_kappa == pytest.approx(1 / 3)
    assert "Fleiss' kappa uses 3 of 4 items: those judged by exactly 2 annotators" in " ".join(
        result.notes
    )


def test_fleiss_kappa_breaks_a_tie_in_rater_counts_towards_more_raters() -> None:
    # Two items judged twice (disagreeing) and two judged three times: (0,0,0) and (1,1,1).
    # On the three-rater items everyone agrees and both grades occur, so kappa = 1.
    table = [[1, 1], [1, 1], [3, 0], [0, 3]]
    result = agreement(from_counts(table, [0, 1]), scale=[0, 1])
    assert result.fleiss_kappa == pytest.approx(1.0)
    assert any("exactly 3 annotators" in note for note in result.notes)


def test_fleiss_kappa_is_undefined_when_its_items_carry_a_single_grade() -> None:
    # The two-rater items (the modal count) are all grade 2; the three-rater one varies.
    table = [[0, 0, 2, 0], [0, 0, 2, 0], [1, 0, 1, 1]]
    result = agreement(from_counts(table, SCALE), scale=SCALE)
    assert math.isnan(result.fleiss_kappa)
    assert any("Fleiss' kappa is undefined" in note for note in result.notes)
    assert not math.isnan(result.krippendorff_alpha)


fleiss_matrices = st.integers(min_value=2, max_value=6).flatmap(
    lambda raters: st.lists(
        st.lists(st.sampled_from(SCALE), min_size=raters, max_size=raters),
        min_size=1,
        max_size=15,
    )
)


@settings(max_examples=150, deadline=None)
@given(ratings=fleiss_matrices)
def test_fleiss_kappa_matches_statsmodels_on_random_complete_data(
    ratings: list[list[int]],
) -> None:
    judgments = [(i, f"r{j}", g) for i, row in enumerate(ratings) for j, g in enumerate(row)]
    result = agreement(judgments, scale=SCALE)
    counts, _ = aggregate_raters(np.array(ratings), n_cat=4)
    if len({g for row in ratings for g in row}) == 1:
        assert math.isnan(result.fleiss_kappa)
    else:
        assert result.fleiss_kappa == pytest.approx(float(fleiss_kappa(counts)), abs=1e-9)


# --- Krippendorff's alpha -------------------------------------------------------------------


def test_alpha_matches_krippendorffs_published_ordinal_example() -> None:
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability", sec. C: 4 observers,
    # 12 units, values 1..5, missing data; published ordinal alpha = 0.815. Unit 12 has one
    # value only, so 11 items are pairable.
    none = None
    observers = {
        "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, none, none, none],
        "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, none, 3],
        "C": [none, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, none],
        "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, none],
    }
    judgments = [
        (unit, name, value)
        for name, values in observers.items()
        for unit, value in enumerate(values, 1)
        if value is not None
    ]
    result = agreement(judgments, scale=[1, 2, 3, 4, 5])
    assert result.krippendorff_alpha == pytest.approx(0.815, abs=5e-4)
    assert result.n_items == 11
    assert any("1 item judged by a single annotator is left out" in n for n in result.notes)


def test_alpha_matches_a_hand_worked_ordinal_example() -> None:
    # Two coders, four units: (0,0), (1,1), (1,2), (2,2). Pairable values n = 8 with
    # n_0 = 2, n_1 = 3, n_2 = 3. Coincidences (each unit has m_u = 2, weight 1/(m_u - 1) = 1):
    # o_00 = 2, o_11 = 2, o_22 = 2, o_12 = o_21 = 1.
    # Ordinal distance delta^2(c, k) = (sum_{g=c..k} n_g - (n_c + n_k) / 2)^2:
    #   delta^2(0,1) = (5 - 2.5)^2 = 6.25; delta^2(1,2) = (6 - 3)^2 = 9;
    #   delta^2(0,2) = (8 - 2.5)^2 = 30.25.
    # sum o * delta^2 = 2 * 1 * 9 = 18 (ordered pairs).
    # sum n_c n_k delta^2 = 2 * (2*3*6.25 + 3*3*9 + 2*3*30.25) = 2 * 300 = 600.
    # alpha = 1 - (n - 1) * 18 / 600 = 1 - 7 * 18 / 600 = 0.79.
    result = agreement(two_annotators([0, 1, 1, 2], [0, 1, 2, 2]), scale=[0, 1, 2, 3])
    assert result.krippendorff_alpha == pytest.approx(0.79, abs=1e-12)


def alpha_ordinal_reference(units: list[list[int]], domain: list[int]) -> float:
    """Ordinal alpha straight from Krippendorff (2011), in plain Python loops."""
    pos = {v: i for i, v in enumerate(domain)}
    k = len(domain)
    o = [[0.0] * k for _ in range(k)]
    for values in units:
        m = len(values)
        if m < 2:
            continue
        for x in range(m):
            for y in range(m):
                if x != y:
                    o[pos[values[x]]][pos[values[y]]] += 1 / (m - 1)
    n_c = [sum(row) for row in o]
    n = sum(n_c)

    def delta2(c: int, d: int) -> float:
        lo, hi = min(c, d), max(c, d)
        return (sum(n_c[lo : hi + 1]) - (n_c[c] + n_c[d]) / 2) ** 2

    d_o = sum(o[c][d] * delta2(c, d) for c in range(k) for d in range(k))
    d_e = sum(n_c[c] * n_c[d] * delta2(c, d) for c in range(k) for d in range(k)) / (n - 1)
    return 1 - d_o / d_e


@settings(max_examples=150, deadline=None)
@given(campaign=campaigns)
def test_alpha_matches_a_from_the_definition_implementation_on_random_campaigns(
    campaign: list[dict[str, int]],
) -> None:
    result = agreement(triples(campaign), scale=SCALE)
    units = [list(grades.values()) for grades in campaign if len(grades) >= 2]
    if not units or len({g for u in units for g in u}) == 1:
        assert math.isnan(result.krippendorff_alpha)
    else:
        expected = alpha_ordinal_reference(units, SCALE)
        assert result.krippendorff_alpha == pytest.approx(expected, abs=1e-9)


# --- overall figures and degenerate cases ---------------------------------------------------


def test_percent_agreement_is_the_share_of_items_where_all_annotators_agree() -> None:
    # Of the ten items above, 1, 3, 5, 7 and 10 are agreed on.
    result = agreement(two_annotators(TEN_A, TEN_B), scale=SCALE)
    assert result.percent_agreement == pytest.approx(0.5)
    assert result.n_items == 10
    assert result.n_annotators == 2


def test_an_item_counts_as_agreed_only_if_all_its_annotators_agree() -> None:
    judgments: list[Triple] = [
        ("d1", "a", 2),
        ("d1", "b", 2),
        ("d1", "c", 2),
        ("d2", "a", 2),
        ("d2", "b", 2),
        ("d2", "c", 1),
    ]
    assert agreement(judgments, scale=SCALE).percent_agreement == pytest.approx(0.5)


def test_no_item_judged_twice_makes_every_statistic_undefined_and_says_why() -> None:
    result = agreement([("d1", "a", 1), ("d2", "b", 2)], scale=SCALE)
    assert result.n_items == 0
    assert result.n_annotators == 0
    assert math.isnan(result.percent_agreement)
    assert math.isnan(result.fleiss_kappa)
    assert math.isnan(result.krippendorff_alpha)
    assert result.pairs == []
    assert any("No item was judged by two or more annotators" in n for n in result.notes)


def test_no_judgments_at_all_make_every_statistic_undefined() -> None:
    result = agreement([], scale=SCALE)
    assert result.n_items == 0
    assert math.isnan(result.fleiss_kappa)
    assert result.notes


def test_full_agreement_with_varied_grades_gives_kappa_and_alpha_of_one() -> None:
    grades = [0, 1, 2, 3, 3, 1]
    judgments = two_annotators(grades, grades) + [(i, "c", g) for i, g in enumerate(grades, 1)]
    result = agreement(judgments, scale=SCALE)
    assert result.percent_agreement == 1.0
    assert result.fleiss_kappa == pytest.approx(1.0)
    assert result.krippendorff_alpha == pytest.approx(1.0)
    assert [p.kappa for p in result.pairs] == pytest.approx([1.0, 1.0, 1.0])


def test_a_single_grade_used_throughout_leaves_kappa_and_alpha_undefined_with_a_note() -> None:
    result = agreement(two_annotators([2] * 5, [2] * 5), scale=SCALE)
    assert result.percent_agreement == 1.0
    assert math.isnan(result.fleiss_kappa)
    assert math.isnan(result.krippendorff_alpha)
    assert math.isnan(result.pairs[0].kappa)
    assert any("Every rating is grade 2" in note for note in result.notes)


def test_to_dict_is_json_serialisable_with_undefined_values_as_null() -> None:
    result = agreement([("d1", "a", 2), ("d1", "b", 2)], scale=SCALE)
    data = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert data["fleiss_kappa"] is None
    assert data["krippendorff_alpha"] is None
    assert data["percent_agreement"] == 1.0
    assert data["pairs"] == [{"annotator_a": "a", "annotator_b": "b", "n_items": 1, "kappa": None}]
    assert data["n_items"] == 1
    assert isinstance(data["notes"], list)


def test_a_grade_outside_the_scale_is_rejected() -> None:
    with pytest.raises(ValueError, match="not in the scale"):
        agreement([("d1", "a", 4), ("d1", "b", 1)], scale=SCALE)


def test_an_annotator_judging_an_item_twice_is_rejected() -> None:
    with pytest.raises(ValueError, match="more than once"):
        agreement([("d1", "a", 1), ("d1", "a", 1), ("d1", "b", 1)], scale=SCALE)


@pytest.mark.parametrize("scale", [[1], [0, 2, 1], [0, 1, 1]])
def test_a_scale_that_is_too_short_or_not_increasing_is_rejected(scale: list[int]) -> None:
    with pytest.raises(ValueError, match="scale"):
        agreement([("d1", "a", 1), ("d1", "b", 1)], scale=scale)


def test_an_unknown_weighting_is_rejected() -> None:
    with pytest.raises(ValueError, match="weights"):
        agreement([], scale=SCALE, weights="cubic")  # type: ignore[arg-type]


# --- per topic ------------------------------------------------------------------------------


def test_agreement_by_topic_computes_each_topic_on_its_own_items() -> None:
    judgments = [((401, i), a, g) for i, a, g in two_annotators(TEN_A, TEN_B)] + [
        ((402, "x"), "a", 3),
        ((402, "x"), "b", 3),
        ((402, "y"), "a", 0),
        ((402, "y"), "b", 0),
    ]

    def qid(item: Hashable) -> str:
        return str(cast(tuple[int, object], item)[0])

    by_topic = agreement_by_topic(judgments, topic_of=qid, scale=SCALE)
    assert list(by_topic) == ["401", "402"]
    assert by_topic["401"].pairs[0].kappa == pytest.approx(37 / 62)
    assert by_topic["402"].pairs[0].kappa == pytest.approx(1.0)
    assert by_topic["402"].n_items == 2
    assert by_topic["401"] == agreement(judgments[:20], scale=SCALE)


def test_agreement_by_topic_accepts_a_mapping_and_keeps_topics_without_overlap() -> None:
    judgments: list[Triple] = [("d1", "a", 1), ("d1", "b", 2), ("d2", "a", 0)]
    by_topic = agreement_by_topic(judgments, topic_of={"d1": "t1", "d2": "t2"}, scale=SCALE)
    assert by_topic["t1"].n_items == 1
    assert isinstance(by_topic["t2"], Agreement)
    assert by_topic["t2"].n_items == 0
    assert math.isnan(by_topic["t2"].krippendorff_alpha)


# --- disagreements --------------------------------------------------------------------------

ADJUDICATION: list[Triple] = [
    ("d1", "a", 0),
    ("d1", "b", 3),  # spread 3, relevant vs not at level 1
    ("d2", "a", 2),
    ("d2", "b", 3),  # spread 1, both relevant
    ("d3", "a", 1),
    ("d3", "b", 1),  # agreed
    ("d4", "a", 0),
    ("d4", "b", 1),
    ("d4", "c", 0),  # spread 1, relevant vs not at level 1
    ("d5", "a", 3),  # judged once
    ("d0", "a", 1),
    ("d0", "b", 3),  # spread 2, both relevant at level 1; split at level 2
]


def test_disagreements_list_items_with_different_grades_by_spread_then_item() -> None:
    found = disagreements(ADJUDICATION)
    assert [(d.item, d.spread) for d in found] == [("d1", 3), ("d0", 2), ("d2", 1), ("d4", 1)]
    assert found[3] == Disagreement(item="d4", grades={"a": 0, "b": 1, "c": 0})


def test_relevance_level_keeps_only_relevant_versus_not_relevant_splits() -> None:
    assert [d.item for d in disagreements(ADJUDICATION, relevance_level=1)] == ["d1", "d4"]
    assert [d.item for d in disagreements(ADJUDICATION, relevance_level=2)] == ["d1", "d0"]


def test_no_disagreements_when_everyone_agrees_or_judged_alone() -> None:
    assert disagreements([("d1", "a", 2), ("d1", "b", 2), ("d2", "a", 0)]) == []


def test_disagreements_sort_items_of_mixed_types_without_error() -> None:
    found = disagreements([(1, "a", 0), (1, "b", 1), ("x", "a", 0), ("x", "b", 1)])
    assert sorted(d.item for d in found if isinstance(d.item, int)) == [1]
    assert len(found) == 2


def test_a_disagreement_spread_is_the_highest_minus_the_lowest_grade() -> None:
    assert Disagreement(item="d", grades={"a": 1, "b": 3, "c": 0}).spread == 3


# --- consensus grade ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("grades", "rule", "expected"),
    [
        ([0, 2, 3], "median", 2),
        ([3], "median", 3),
        ([1, 2], "median", 1),  # even count: the lower median
        ([0, 0, 3, 3], "median", 0),  # an even relevant/not split counts as not relevant
        ([3, 0, 2, 1], "median", 1),  # order of input does not matter
        ([1, 2, 2, 3], "majority", 2),
        ([3, 1, 3, 1], "majority", 1),  # tie between grades: the lower
        ([0, 3, 2], "majority", 0),  # all tied: the lowest
        ([0, 3, 2], "max", 3),
        ([1, 3, 2], "min", 1),
    ],
)
def test_consensus_grade_follows_its_rule(grades: list[int], rule: str, expected: int) -> None:
    assert consensus_grade(grades, rule=rule) == expected  # type: ignore[arg-type]


def test_median_is_the_default_consensus_rule() -> None:
    assert consensus_grade([0, 1, 3, 3]) == 1


def test_consensus_of_no_grades_is_rejected() -> None:
    with pytest.raises(ValueError, match="at least one grade"):
        consensus_grade([])


def test_an_unknown_consensus_rule_is_rejected() -> None:
    with pytest.raises(ValueError, match="rule"):
        consensus_grade([1, 2], rule="mean")  # type: ignore[arg-type]
