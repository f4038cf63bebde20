"""Coverage of the prediction-powered intervals of answer runs' nugget and support scores
(issue 34, point 5), on a synthetic answer collection over the RAG demo's help centre.

    .venv/bin/python benchmarks/nugget_ppi.py [--reps 500] [--quick] [--jobs 2]
        [--assigners simulated,embedding]

The collection (``benchmarks/_answer_collection.py``): 8 systems x 36 topics = 288 answers with
every nugget assignment and (sentence, first cited segment) support label known. Items are
(topic, answer text, nugget) and (topic, sentence, segment) pairs, one label serving every run
that holds the item (``metrics.answers.items``); the true scores are ``metrics.answers``' own
(checked against the items' linear form). For each assigner x unit (nugget, support) x design x
budget x measure: the share of (repetition, run) 95% intervals that contain the run's true
score, the worst run's coverage, the mean width, and the same for two judge-free estimates from
a uniform sample of the same budget (the same estimator with f(a) = 0), each with the width
ratio (below 1: the assigner narrows the interval): "human+runs", the pilot's rate per run as
the prediction (what ``metrics.answers.estimates`` reports beside each estimate), and
"human-alone", the pilot's one rate and the design variance alone (the design-based estimate
from the human sample alone, as in ``benchmarks/ppi_coverage.py``); then half-width / spread
(each run's mean unclipped half-width over the standard deviation of its estimate across
repetitions, averaged over runs; 1.96 is calibrated) and bias / spread. A coverage below 93% is
flagged, and so is a ratio of 1 or more.

Assigners: ``simulated`` draws each item's automatic label from the confusion matrix
``CONFUSION`` (printed) given its true label, anew every repetition; ``embedding`` is the real
local judge (``judging.autojudge.embedding``: all-MiniLM-L6-v2, shipped in a PyPI package): the
cosine of a nugget and the answer's closest sentence, or of a sentence and its cited segment, cut
into labels 0/1/2 by ``metrics.judges.calibration.calibrate_thresholds`` fitted on each
repetition's pilot slice, the estimate calibrating on the cosines themselves (``score=``), as in
``benchmarks/ppi_coverage.py``. Every design judges a uniform pilot slice (20% of the budget)
first, with pi = 1; it calibrates the predictor per (automatic label, run: the item's run, one
group for the items runs share, ``AnswerItems.groups``) and sets the stratified (Neyman by the
automatic label, mixed with 10% of the proportional allocation) and active (floor 0.1) designs'
probabilities. Timings are printed.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._answer_collection import AnswerCollection, build  # noqa: E402
from metrics.answers import (  # noqa: E402
    nugget_averages,
    run_nugget_scores,
    run_support_scores,
    support_averages,
)
from metrics.answers.items import (  # noqa: E402
    GRADES,
    AnswerItem,
    AnswerItems,
    nugget_items,
    support_items,
)
from metrics.io.answers import TopicAnswer  # noqa: E402
from metrics.sampling.designs import Design, pilot, sample  # noqa: E402
from metrics.sampling.linear import LinearStructure  # noqa: E402

UNITS = ("nugget", "support")
MEASURES = {
    "nugget": ("strict_all_score", "all_score", "strict_vital_score", "vital_score"),
    "support": ("precision", "recall"),
}
# P(automatic label | true label): rows true 0/1/2 (none, partial, support), columns automatic
CONFUSION = np.array([[0.85, 0.10, 0.05], [0.20, 0.55, 0.25], [0.05, 0.15, 0.80]])
Kind = Literal["uniform", "stratified", "active"]
DESIGNS: tuple[Kind, ...] = ("uniform", "stratified", "active")
ALONE = ("human+runs", "human-alone")  # the judge-free estimates (module docstring)
BUDGETS = (0.10, 0.20, 0.40)
QUICK_BUDGETS = (0.20,)
PILOT_SHARE = 0.2
SCALE = [0, 1, 2]
AutoFor = Callable[[np.random.Generator, np.ndarray], np.ndarray]


def simulated(labels: np.ndarray) -> AutoFor:
    """Automatic labels drawn from :data:`CONFUSION` given the true ``labels``."""
    cum = CONFUSION.cumsum(axis=1)[labels]

    def auto_for(rng: np.random.Generator, _pilot: np.ndarray) -> np.ndarray:
        return np.asarray((rng.random(labels.size)[:, None] > cum).sum(axis=1), dtype=np.int64)

    return auto_for


def calibrated(labels: np.ndarray, scores: np.ndarray) -> AutoFor:
    """The judge's scores cut into labels at thresholds fitted on the pilot's true labels."""
    from metrics.judges.calibration import calibrate_thresholds, grades_from_thresholds

    def auto_for(_rng: np.random.Generator, p_idx: np.ndarray) -> np.ndarray:
        thr = calibrate_thresholds(scores[p_idx], labels[p_idx], SCALE)
        return np.asarray(grades_from_thresholds(scores, thr, SCALE), dtype=np.int64)

    return auto_for


# -- the truth ------------------------------------------------------------------------------------


def _text(s: str) -> str:
    return " ".join(s.split())


def _nugget_item(answer: TopicAnswer, nugget_id: str) -> AnswerItem:
    text = " ".join(_text(s.text) for s in answer.sentences)
    return AnswerItem("nugget", answer.topic_id, text, nugget_id)


def _support_item(answer: TopicAnswer, j: int) -> AnswerItem:
    s = answer.sentences[j]
    return AnswerItem("support", answer.topic_id, _text(s.text), answer.references[s.citations[0]])


def true_scores(c: AnswerCollection, unit: str, runs: tuple[str, ...]) -> np.ndarray:
    """(runs, measures) every run's true macro scores, by ``metrics.answers``' own functions
    from the collection's true labels."""
    out = []
    if unit == "nugget":
        name = {v: k for k, v in GRADES["nugget"].items()}
        assignments = {
            r: {
                a.topic_id: {
                    n.id: name[c.nugget_label(_nugget_item(a, n.id))] for n in c.banks[a.topic_id]
                }
                for a in c.runs[r]
            }
            for r in runs
        }
        scores = run_nugget_scores(c.banks, assignments)
        for r in runs:
            avg = nugget_averages(scores[r], interval="t")
            out.append([avg[m].mean for m in MEASURES[unit]])
        return np.array(out)
    name = {v: k for k, v in GRADES["support"].items()}
    for r in runs:
        judged = {
            a.topic_id: {
                (j, a.references[s.citations[0]]): name[c.support_label(_support_item(a, j))]
                for j, s in enumerate(a.sentences)
                if s.citations
            }
            for a in c.runs[r]
        }
        avg = support_averages(run_support_scores(c.runs[r], judged), interval="t")
        out.append([avg[m].mean for m in MEASURES[unit]])
    return np.array(out)


def unit_items(c: AnswerCollection, unit: str) -> tuple[AnswerItems, np.ndarray, np.ndarray]:
    """The unit's items, their true labels and the runs' true scores; the scores by the items'
    linear form must be the definitions' (else the estimator would aim elsewhere)."""
    if unit == "nugget":
        items = nugget_items(c.banks, c.runs, measures=MEASURES[unit])
        labels = np.array([c.nugget_label(i) for i in items.items], dtype=np.int64)
    else:
        items = support_items(c.runs, measures=MEASURES[unit])
        labels = np.array([c.support_label(i) for i in items.items], dtype=np.int64)
    truth = true_scores(c, unit, items.runs)
    gap = float(np.abs(items.values(labels) - truth).max())
    if gap > 1e-12:
        raise AssertionError(f"{unit}: the items' linear form is {gap} off the definitions")
    return items, labels, truth


def embedding_scores(c: AnswerCollection, units: dict[str, AnswerItems]) -> dict[str, np.ndarray]:
    """The embedding judge's cosine of every item: a nugget and the answer's closest sentence;
    a sentence and the segment it cites."""
    from judging.autojudge.embedding import EmbeddingScorer

    scorer = EmbeddingScorer(device="cpu")
    nugget_text = {(t, n.id): n.text for t, bank in c.banks.items() for n in bank}
    texts = sorted(
        set(nugget_text.values())
        | {s for said in c.sentences.values() for s in said}
        | set(c.segments.values())
    )
    vec = dict(zip(texts, scorer.encode(texts), strict=True))
    nug = units["nugget"].items
    sup = units["support"].items
    return {
        "nugget": np.array(
            [
                max(
                    float(vec[nugget_text[(i.topic_id, i.target)]] @ vec[s])
                    for s in c.sentences[i.text]
                )
                for i in nug
            ]
        ),
        "support": np.array([float(vec[i.text] @ vec[c.segments[i.target]]) for i in sup]),
    }


# -- the coverage loop ----------------------------------------------------------------------------


def run_block(
    st: LinearStructure,
    truth: np.ndarray,
    labels: np.ndarray,
    scores: np.ndarray | None,
    groups: np.ndarray,
    auto_for: AutoFor,
    reps: int,
    budget: int,
) -> tuple[dict[str, dict[str, list[Any]]], float]:
    """``reps`` repetitions of every design and of the two judge-free estimates at ``budget``
    items: per design, per repetition, the (runs, measures) coverage, width, estimate and
    unclipped half-width; and the seconds taken. ``groups``: the calibration group of every
    item (its run)."""
    zero = np.zeros(st.n_items, dtype=np.int64)
    acc: dict[str, dict[str, list[Any]]] = {
        name: {"cov": [], "w": [], "v": [], "hw": []} for name in (*DESIGNS, *ALONE)
    }
    t0 = time.time()
    rng = np.random.default_rng(12345)
    for rep in range(reps):
        auto_seed = rng.integers(1 << 31)
        for kind in DESIGNS:
            design = Design(kind, budget, seed=rep)
            p_idx = pilot(zero, design, pilot_share=PILOT_SHARE)
            a = auto_for(np.random.default_rng(auto_seed), p_idx)
            infl = weights = None
            if kind == "active":  # at the predictions the pilot calibrates
                infl, weights = st.active_weights(
                    a, pilot=p_idx, pilot_grades=labels[p_idx], groups=groups, score=scores
                )
            s = sample(
                a,
                design,
                influence=infl,
                pilot_share=PILOT_SHARE,
                pilot_grades=labels[p_idx],
                variance_weights=weights,
            )
            est = st.estimate(
                a,
                labels,
                s.sampled,
                s.pi,
                design=kind,
                strata=s.strata,
                groups=groups,
                auto_value=False,
                score=scores,
            )
            _collect(acc[kind], est, truth)
        s = sample(zero, Design("uniform", budget, seed=100000 + rep), pilot_share=PILOT_SHARE)
        est = st.estimate(
            zero, labels, s.sampled, s.pi, design="uniform", groups=groups, auto_value=False
        )
        _collect(acc["human+runs"], est, truth)
        est = st.estimate(
            zero, labels, s.sampled, s.pi, design="uniform", auto_value=False, variance_floor=False
        )
        _collect(acc["human-alone"], est, truth)
    return acc, time.time() - t0


def _collect(acc: dict[str, list[Any]], est: Any, truth: np.ndarray) -> None:
    lo, hi = est.interval()
    acc["cov"].append((lo <= truth + 1e-12) & (truth - 1e-12 <= hi))
    acc["w"].append(hi - lo)
    acc["v"].append(est.value)
    acc["hw"].append(est.quantile() * est.se)


def _calibration(acc: dict[str, list[Any]], truth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per measure: half-width over spread and bias over spread, each averaged over runs."""
    v, hw = np.array(acc["v"]), np.array(acc["hw"])  # (reps, runs, measures)
    sd = v.std(axis=0, ddof=1)
    sd = np.where(sd > 1e-12, sd, np.nan)
    bias = v.mean(axis=0) - truth
    return np.nanmean(hw.mean(axis=0) / sd, axis=0), np.nanmean(bias / sd, axis=0)


def rows_of(
    label: str,
    unit: str,
    share: float,
    budget: int,
    acc: dict[str, dict[str, list[Any]]],
    truth: np.ndarray,
) -> list[tuple[Any, ...]]:
    """The table's rows of one block (module docstring)."""
    alone = {name: acc[name] for name in ALONE}
    h_cov = {k: np.array(a["cov"]).mean(axis=(0, 1)) for k, a in alone.items()}
    h_w = {k: np.array(a["w"]).mean(axis=(0, 1)) for k, a in alone.items()}
    out = []
    for kind in DESIGNS:
        cov = np.array(acc[kind]["cov"])  # (reps, runs, measures)
        w = np.array(acc[kind]["w"]).mean(axis=(0, 1))
        ratio, rel_bias = _calibration(acc[kind], truth)
        for m, measure in enumerate(MEASURES[unit]):
            out.append(
                (
                    label,
                    unit,
                    kind,
                    f"{budget} ({share:.0%})",
                    measure,
                    cov[:, :, m].mean(),
                    cov[:, :, m].mean(axis=0).min(),
                    w[m],
                    h_w["human+runs"][m],
                    w[m] / h_w["human+runs"][m],
                    h_cov["human+runs"][m],
                    h_w["human-alone"][m],
                    w[m] / h_w["human-alone"][m],
                    h_cov["human-alone"][m],
                    ratio[m],
                    rel_bias[m],
                )
            )
    return out


def table(rows: list[tuple[Any, ...]], out: Any) -> None:
    head = (
        "| assigner | unit | design | budget (items, share) | measure | coverage | worst run | "
        "width | human+runs width | ratio | human+runs coverage | human-alone width | ratio | "
        "human-alone coverage | half-width / spread | bias / spread |"
    )
    print(head, file=out)
    print("|---" * (head.count(" | ") + 1) + "|", file=out)

    def covered(x: float) -> str:
        return f"{x:.3f}" + ("" if x >= 0.93 else " (below 93%)")

    def ratio(x: float) -> str:
        return f"{x:.2f}" + ("" if x < 1.0 else " (not narrower)")

    for r in rows:
        print(
            f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]} | {covered(r[5])} | {r[6]:.3f} | "
            f"{r[7]:.4f} | {r[8]:.4f} | {ratio(r[9])} | {covered(r[10])} | {r[11]:.4f} | "
            f"{ratio(r[12])} | {covered(r[13])} | {r[14]:.2f} | {r[15]:+.2f} |",
            file=out,
        )


# -- main -----------------------------------------------------------------------------------------

# label -> unit -> (structure, truth, labels, scores or None, groups, auto_for); filled before
# forking
_LOADED: dict[str, dict[str, tuple[Any, ...]]] = {}


def _block(label: str, unit: str, share: float, reps: int) -> tuple[Any, ...]:
    st, truth, labels, scores, groups, auto_for = _LOADED[label][unit]
    budget = round(share * st.n_items)
    acc, elapsed = run_block(st, truth, labels, scores, groups, auto_for, reps, budget)
    return label, unit, share, budget, elapsed, rows_of(label, unit, share, budget, acc, truth)


def _agreement(labels: np.ndarray, auto: np.ndarray) -> str:
    confusion = np.zeros((3, 3), dtype=np.int64)
    np.add.at(confusion, (labels, auto), 1)
    rows = "; ".join(f"true {g}: " + " ".join(str(x) for x in confusion[g]) for g in range(3))
    return f"exact {np.mean(labels == auto):.3f}; counts (auto 0/1/2) {rows}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--reps", type=int, default=500)
    p.add_argument("--quick", action="store_true", help="a smoke run: 20 repetitions, one budget")
    p.add_argument("--assigners", default="simulated,embedding")
    p.add_argument("--jobs", type=int, default=2, help="worker processes (one block each)")
    args = p.parse_args(argv)
    reps = 20 if args.quick else args.reps
    budgets = QUICK_BUDGETS if args.quick else BUDGETS
    wanted = args.assigners.split(",")
    out = sys.stdout
    t_all = time.time()
    print(
        f"repetitions: {reps}; nominal level 95%; pilot {PILOT_SHARE:.0%} of the budget", file=out
    )
    print("confusion matrix P(auto | true), rows true 0/1/2, columns auto 0/1/2:", file=out)
    for g, row in enumerate(CONFUSION):
        print(f"  true {g}: " + "  ".join(f"{x:.2f}" for x in row), file=out)
    t0 = time.time()
    c = build()
    units: dict[str, AnswerItems] = {}
    known: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # unit -> (true labels, true scores)
    for unit in UNITS:
        items, labels, truth = unit_items(c, unit)
        units[unit] = items
        known[unit] = labels, truth
        serving = (np.abs(items.coefficients).sum(axis=(0, 1)) > 0).sum(axis=0)
        print(
            f"{unit}: {len(items.runs)} runs, {items.n_items} items ({int((serving > 1).sum())} "
            f"shared by several runs), true labels 0/1/2: "
            + "/".join(str(int((labels == g).sum())) for g in range(3)),
            file=out,
        )
        print(
            "  true scores: "
            + "; ".join(
                f"{r} " + " ".join(f"{x:.3f}" for x in truth[i]) for i, r in enumerate(items.runs)
            )
            + f" ({', '.join(MEASURES[unit])})",
            file=out,
        )
        if "simulated" in wanted:
            _LOADED.setdefault("simulated", {})[unit] = (
                items.structure(),
                truth,
                labels,
                None,
                items.groups,
                simulated(labels),
            )
    print(f"collection built and checked in {time.time() - t0:.1f} s", file=out)
    if "embedding" in wanted:
        from judging.autojudge.embedding import available

        if not available():
            print("embedding judge: not installed (pip install '.[autojudge]'); skipped", file=out)
        else:
            t0 = time.time()
            scores = embedding_scores(c, units)
            print(f"embedding judge: every item's cosine in {time.time() - t0:.1f} s", file=out)
            from metrics.judges.calibration import calibrate_thresholds, grades_from_thresholds

            for unit in UNITS:
                items = units[unit]
                labels, truth = known[unit]
                thr = calibrate_thresholds(scores[unit], labels, SCALE)
                auto = grades_from_thresholds(scores[unit], thr, SCALE)
                cuts = ", ".join(f"{t:.3f}" for t in thr)
                print(
                    f"  {unit}: thresholds fitted on every item {cuts}: {_agreement(labels, auto)}",
                    file=out,
                )
                _LOADED.setdefault("embedding", {})[unit] = (
                    items.structure(),
                    truth,
                    labels,
                    scores[unit],
                    items.groups,
                    calibrated(labels, scores[unit]),
                )
    jobs = [(label, unit, share) for label in _LOADED for unit in UNITS for share in budgets]
    if args.jobs > 1:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(args.jobs, mp_context=mp.get_context("fork")) as ex:
            futures = [ex.submit(_block, label, unit, share, reps) for label, unit, share in jobs]
            results = [f.result() for f in futures]
    else:
        results = [_block(label, unit, share, reps) for label, unit, share in jobs]
    rows: list[tuple[Any, ...]] = []
    print("\ntimings (worker seconds per block):", file=out)
    for label, unit, share, budget, elapsed, r in results:
        print(f"  {label}, {unit}, budget {budget} ({share:.0%}): {elapsed:.1f} s", file=out)
        rows += r
    print("\n### Answer runs' scores: coverage of the 95% intervals\n", file=out)
    table(rows, out)
    cov, alone, runs = [r[5] for r in rows], [r[12] for r in rows], [r[9] for r in rows]
    print(
        f"\ncells: {len(rows)}; coverage {min(cov):.3f}-{max(cov):.3f} "
        f"({sum(x < 0.93 for x in cov)} below 93%); width / human-alone {min(alone):.2f}-"
        f"{max(alone):.2f} ({sum(x >= 1.0 for x in alone)} not narrower); width / human+runs "
        f"{min(runs):.2f}-{max(runs):.2f} ({sum(x >= 1.0 for x in runs)} not narrower)",
        file=out,
    )
    print(f"total {time.time() - t_all:.1f} s wall, {args.jobs} worker process(es)", file=out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
