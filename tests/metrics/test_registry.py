"""The measure registry: every entry's declarations hold, checked on the measures themselves.

A family's names must parse in both styles; "cuttable" must mean that rows below k cannot change
the value at k; leave-one-out (which scores sparse rankings using ``cuttable``, ``reads_ideal``
and ``loo_complement``) must agree with the Evaluator on explicitly restricted qrels for every
family; honest mode must add treatments and companions exactly as declared.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics import Evaluator, Qrels, Run, evaluate
from metrics.bias.leaveout import LeaveOneOut, LeaveOut
from metrics.bias.topics import restrict_qrels
from metrics.measures.names import Measure, parse_measure
from metrics.measures.registry import FAMILIES, Family
from tests.metrics.strategies import collections as shared_collections


def _measures(k: int = 3) -> list[Measure]:
    """One measure per family: at cutoff k where it takes one (0.5 for a real cutoff), and
    without where it may."""
    out: list[Measure] = []
    for f in FAMILIES.values():
        if f.cutoff != "none":
            out.append(Measure(f.name, 0.5 if f.cutoff_kind == "float" else k))
        if f.cutoff != "required":
            out.append(Measure(f.name))
    return out


@pytest.mark.parametrize("family", list(FAMILIES.values()), ids=list(FAMILIES))
def test_every_spelling_of_a_family_parses_to_it(family: Family) -> None:
    real = family.cutoff_kind == "float"
    k = None if family.cutoff == "none" else 0.5 if real else 7
    # ir_measures-style names without a cutoff are read by the trec_eval pattern, which has no
    # "-": Rprec's alias "r-prec" parses only where a cutoff could follow (never, for Rprec)
    ir = [family.name, *(a for a in family.aliases if k is not None or "-" not in a)]
    for spelling in ir:
        text = spelling if k is None else f"{spelling}@{k}"
        assert parse_measure(text) == Measure(family.name, k)
        assert parse_measure(text.upper()) == Measure(family.name, k)
    if family.trec_cut:
        cut, shown = (0.5, "0.50") if real else (7, "7")  # trec_eval prints reals %3.2f
        assert parse_measure(f"{family.trec_cut}_{shown}") == Measure(family.name, cut)
        assert Measure(family.name, cut).trec_name == f"{family.trec_cut}_{shown}"
    if family.trec:
        assert parse_measure(family.trec) == Measure(family.name)
        assert Measure(family.name).trec_name == family.trec
    if family.trec_raw:  # root.TEXT sets that parameter; printed root_TEXT verbatim
        default = next(p.default for p in family.params if p.name == family.trec_raw)
        text = default if isinstance(default, str) else f"{default:g}"
        m = parse_measure(f"{family.trec}.{text}")
        assert m == Measure(family.name) and m.trec_name == f"{family.trec}_{text}"


def collections() -> st.SearchStrategy[tuple[Qrels, dict[str, Run]]]:
    return shared_collections(docs=tuple("abcdefghij"), max_grade=3, max_runs=4)


@settings(max_examples=60, deadline=None)
@given(collections(), st.integers(1, 3))
def test_leave_one_out_scores_every_family_as_the_evaluator_does(
    data: tuple[Qrels, dict[str, Run]], depth: int
) -> None:
    qrels, runs = data
    loo = LeaveOneOut(qrels, runs, LeaveOut(depth=depth))
    full = restrict_qrels(qrels, loo.pools())
    for m in _measures():
        scores = loo.scores(m)
        for tag, run in runs.items():
            # leave-one-out reports means over topics, also for the counts (which evaluate sums)
            values = (
                list(
                    evaluate(full, run, [m], compat="trec_eval", ci=None).per_query[m.name].values()
                )
                if len(full)
                else []
            )
            expect = math.fsum(values) / len(values) if values else math.nan
            assert scores[tag] == pytest.approx(expect, abs=1e-12, nan_ok=True), (m.name, tag)


@settings(max_examples=80, deadline=None)
@given(collections(), st.integers(1, 4))
def test_rows_below_k_do_not_change_a_cuttable_family_at_k(
    data: tuple[Qrels, dict[str, Run]], k: int
) -> None:
    qrels, runs = data
    cuttable = [Measure(f.name, k) for f in FAMILIES.values() if f.cuttable]
    ev = Evaluator(qrels, cuttable, compat="trec_eval", ci=None)
    for run in runs.values():
        cut = {q: {d: float(-i) for i, d in enumerate(run.ranking(q)[:k])} for q in run.qids}
        whole, top = ev.evaluate(run), ev.evaluate(cut)
        assert whole.per_query == top.per_query


def test_honest_mode_adds_the_declared_treatments_and_companions() -> None:
    qrels = {"q": {"a": 1, "b": 0, "c": 2}}
    run = {"q": {"a": 3.0, "x": 2.0, "c": 1.0}}
    res = Evaluator(qrels, _measures(2), ci=None).evaluate(run)
    for m in _measures(2):
        full = m.spec.treat_full and m.cutoff is None  # AP, bpref: over the whole ranking
        treated = (m.spec.treatments and m.cutoff is not None) or full
        assert (m.name in res.treatments) == treated, m.name
        if treated:
            assert set(res.treatments[m.name]) == {"lower", "condensed", "upper"}
            lower, upper = res.treatments[m.name]["lower"], res.treatments[m.name]["upper"]
            assert upper.value >= lower.value, m.name
        expect = {role: f"{fam}@2" for role, fam in m.spec.companions} if m.cutoff else {}
        if full:
            expect = {"judged": "Judged"}
        assert res.companions.get(m.name, {}) == expect, m.name
