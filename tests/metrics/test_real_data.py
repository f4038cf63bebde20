"""Real TREC runs reproduce the official trec_eval figures and pytrec_eval's per-query values.

Collections (../shared/data, see its README): TREC 2003 Robust (17 runs, 100 topics) and TREC
2011 Medical Records (127 runs, 34 topics). The official figures were produced by a trec_eval
that stored scores in single precision (C ``float``), as pytrec_eval still does, so runs are
compared with their scores rounded to float32 (``Run.with_float32_scores``): run WWOCorrect only
matches that way, because rounding makes ties that change its order.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval

from metrics import Evaluator, Qrels, ReadWarning, Run, read_qrels, read_run

pytestmark = pytest.mark.data

# official column -> our measure; Robust 2003's "P_10" column is really P@15 (data README)
OFFICIAL = {
    "map": "AP",
    "bpref": "Bpref",
    "recip_rank": "RR",
    "P_10": "P@10",
    "P_100": "P@100",
    "P_1000": "P@1000",
    "Rprec": "Rprec",
}
PER_QUERY = {
    "P_10": "P@10",
    "recall_100": "R@100",
    "ndcg_cut_10": "nDCG@10",
    "map": "AP",
    "recip_rank": "RR",
    "Rprec": "Rprec",
    "bpref": "Bpref",
}
# Printed to 4 decimals; a value within 1e-5 of a rounding boundary may print either way,
# depending on whether the figure was accumulated in float or double.
TOLERANCE = 0.5e-4 + 1e-5

NAN_RUN = "uogTrDeNsEc"  # three lines score "NaN": ranked last, with a warning (see the test)


def _official(path: Path) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    with path.open() as f:
        for row in csv.DictReader(f, delimiter="\t"):
            out.setdefault(row["run"], {})[row["measure"]] = float(row["value"])
    return out


class Collection:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.qrels: Qrels = read_qrels(root / "qrels.txt")
        self.official = _official(root / "official_trec_eval.tsv")
        self.names = dict(OFFICIAL)
        if root.name == "robust03":
            self.names["P_10"] = "P@15"
        wanted = {self.names[m] for figures in self.official.values() for m in figures}
        self.official_eval = Evaluator(self.qrels, sorted(wanted), compat="trec_eval", ci=None)
        self.per_query_eval = Evaluator(
            self.qrels, list(PER_QUERY.values()), compat="trec_eval", ci=None
        )
        self.pytrec = pytrec_eval.RelevanceEvaluator(self.qrels.to_dict(), set(PER_QUERY))

    def runs(self) -> Iterator[tuple[str, Run]]:
        for path in sorted((self.root / "runs").glob("input.*.gz")):
            yield path.name[len("input.") : -len(".gz")], read_run(path).with_float32_scores()


@pytest.fixture(scope="module")
def robust_official(shared_data: Path) -> Collection:
    return Collection(shared_data / "robust03")


@pytest.fixture(scope="module")
def medical(shared_data: Path) -> Collection:
    return Collection(shared_data / "trec2011-medical")


def _nan_last(run: Run) -> dict[str, dict[str, float]]:
    """The run for pytrec_eval, NaN scores replaced by one value below every other score: its
    sort treats NaN as equal to everything, so where a NaN lands is its qsort's doing, while
    ours (NaN last, tied among themselves) is this order."""
    scores = run.scores[~np.isnan(run.scores)]
    assert np.all(np.isfinite(scores))
    below = float(scores.min()) - 1.0 if scores.size else 0.0
    return {
        q: {d: below if s != s else s for d, s in docs.items()} for q, docs in run.to_dict().items()
    }


def _check_collection(c: Collection, expected_runs: int) -> None:
    seen = set()
    for tag, run in c.runs():
        seen.add(tag)
        result = c.official_eval.evaluate(run)
        for measure, figure in c.official[tag].items():
            ours = result.value(c.names[measure])
            assert abs(ours - figure) <= TOLERANCE, (tag, measure, figure, ours)
        mine = c.per_query_eval.evaluate(run)
        ref = c.pytrec.evaluate(_nan_last(run))
        assert sorted(ref) == sorted(mine.queries), tag
        for qid, values in ref.items():
            for trec, name in PER_QUERY.items():
                assert abs(mine.per_query[name][qid] - values[trec]) <= 1e-9, (tag, qid, trec)
    assert len(seen) == expected_runs
    assert seen == set(c.official)


def test_all_17_robust_2003_runs_reproduce_official_figures_and_pytrec_eval(
    robust_official: Collection,
) -> None:
    _check_collection(robust_official, 17)


def test_all_127_medical_2011_runs_reproduce_official_figures_and_pytrec_eval(
    medical: Collection,
) -> None:
    _check_collection(medical, 127)


def test_the_run_with_nan_scores_reproduces_its_official_figures_exactly_unmodified(
    medical: Collection,
) -> None:
    # the file as published: three "NaN" scores (topic 106), read with a warning naming their
    # lines, ranked after every other document of the topic; every official figure, to its
    # 4 printed decimals (map 0.2841, bpref 0.4536, P_10 0.4294, ...)
    run = read_run(medical.root / "runs" / f"input.{NAN_RUN}.gz")
    assert run.warnings == (
        ReadWarning(
            "a NaN score (ranked after every other document of its query)", 3, (5998, 5999, 6000)
        ),
    )
    official = medical.official[NAN_RUN]
    assert (official["map"], official["bpref"], official["P_10"]) == (0.2841, 0.4536, 0.4294)
    for f32 in (True, False):
        result = medical.official_eval.evaluate(run.with_float32_scores() if f32 else run)
        for measure, figure in official.items():
            assert f"{result.value(medical.names[measure]):.4f}" == f"{figure:.4f}", measure


def test_robust_pool_facts_show_in_judged_at_k(robust_official: Collection) -> None:
    # data README: topics 601-650 are judged to rank 125 or deeper for every run; the 50 old
    # topics were not pooled, and judged@100 there ranges from about 0.54 to 0.96
    ev = Evaluator(robust_official.qrels, ["Judged@100", "Judged@125"], ci=None)
    old_means = []
    for _, run in robust_official.runs():
        res = ev.evaluate(run)
        new = [v for q, v in res.per_query["Judged@125"].items() if int(q) > 600]
        old = [v for q, v in res.per_query["Judged@100"].items() if int(q) < 600]
        assert len(new) == 50 and min(new) == 1.0
        old_means.append(sum(old) / len(old))
    assert min(old_means) == pytest.approx(0.54, abs=0.01)
    assert max(old_means) == pytest.approx(0.96, abs=0.01)
