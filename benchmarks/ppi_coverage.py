"""Coverage of the prediction-powered intervals (issue 17, point 4), on real collections.

    .venv/bin/python benchmarks/ppi_coverage.py [--reps 500] [--quick] [--jobs 2]
        [--collections robust03,medical,cranfield]

For each collection x design x budget x measure: the share of (repetition, run) 95% intervals
that contain the full-judgment value, the worst run's coverage, the mean width, and the mean
width of two judge-free intervals at the same budget (a uniform sample, same estimator with
f(a) = 0) with their own coverage: "human+pool", calibrated per pool-popularity group (how many
runs rank the item in their top 10: what the service reports beside each estimate), and
"human-alone", the pilot's one rate as the only predictor and the design variance alone, no
model floor (the design-based estimate from the human sample alone). Calibration: for each
run the mean half-width t * se (unclipped) over the empirical standard deviation of its
estimate across repetitions ("half-width / spread", 1.96 is calibrated), averaged over runs;
the bias (mean estimate minus the full-judgment value, averaged over runs) and bias / spread
(per run, averaged over runs); the human-alone estimate's half-width / spread and bias /
spread. A coverage below 93% is flagged in the table (the human-alone one too). Then the same
for differences between runs (all pairs on Robust 2003 and Cranfield, a fixed random 300 pairs
on TREC 2011 Medical).

- Robust 2003 (topics 601-650, pool depth 20 of the 17 runs) and TREC 2011 Medical (34 topics,
  depth 10 of the 127 runs): humans = qrels grades (missing = 0); automatic grades simulated
  from the confusion matrix ``CONFUSION`` (printed), redrawn every repetition.
- Cranfield (225 queries, pool depth 10 of runs built here: three BM25 variants, TF-IDF and a
  dense run): humans = cranqrel (binary); automatic = the real embedding judge
  (``judging.autojudge.embedding``), cosines mapped to grades by
  ``metrics.judges.calibration.calibrate_thresholds`` fitted on the pilot slice (part of the budget,
  judged first, pi = 1: apart from the correction sample, so the predictor is fixed given it);
  the estimate calibrates on the cosines themselves (``score=``, as the service does when every
  pool document has the judge's score).

Every design judges a uniform pilot slice (20% of the budget) first; it calibrates the predictor
per (automatic grade, how many runs rank the item in their top 10) and sets the stratified
(Neyman, mixed with 10% of the proportional allocation) and active (floor 0.1) designs'
probabilities. Timings are printed.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Literal

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from metrics import read_qrels, read_run  # noqa: E402
from metrics.sampling.designs import Design, pilot, sample  # noqa: E402
from metrics.sampling.structure import PoolStructure  # noqa: E402

DATA = Path(os.environ.get("POOLJUDGE_SHARED_DATA") or ROOT.parent / "shared" / "data")
MEASURES = ("P@10", "R@10", "nDCG@10", "AP")
# P(automatic grade | human grade): rows human 0, 1, 2; columns automatic 0, 1, 2
CONFUSION = np.array([[0.90, 0.08, 0.02], [0.20, 0.60, 0.20], [0.05, 0.25, 0.70]])
Kind = Literal["uniform", "stratified", "active"]
Allocation = Literal["neyman", "proportional"]
DESIGNS: tuple[tuple[Kind, Allocation], ...] = (
    ("uniform", "neyman"),  # (the allocation is not used by uniform and active)
    ("stratified", "proportional"),
    ("stratified", "neyman"),
    ("active", "neyman"),
)
BUDGETS = (0.10, 0.20)
PILOT_SHARE = 0.2


def depth_pool(ranked: dict[str, dict[str, list[str]]], topics: list[str], depth: int):
    pool: dict[str, list[str]] = {}
    for q in topics:
        seen: dict[str, None] = {}
        for tag in ranked:
            for d in ranked[tag].get(q, [])[:depth]:
                seen.setdefault(d, None)
        pool[q] = list(seen)
    return pool


def trec_collection(name: str, depth: int, topics: list[str] | None):
    root = DATA / name
    runs = {}
    for path in sorted((root / "runs").glob("input.*.gz")):
        run = read_run(path).with_float32_scores()
        runs[run.tag] = run
    qrels = read_qrels(root / "qrels.txt")
    if topics is None:
        topics = sorted(qrels.qids, key=lambda q: (len(q), q))
    ranked = {tag: {q: run.ranking(q) for q in topics if q in run} for tag, run in runs.items()}
    pool = depth_pool(ranked, topics, depth)
    judged = {q: qrels.judgments(q) for q in topics}
    return ranked, pool, judged


def simulated_judge(grades: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    cum = CONFUSION.cumsum(axis=1)[np.minimum(grades, 2)]
    return (rng.random(grades.size)[:, None] > cum).sum(axis=1)


# -- Cranfield: runs built here, the real embedding judge -----------------------------------------

_STOPWORDS = (
    "a an and are as at be by for from has have in is it its of on or that the this to was "
    "were with which what how can there any been not do does if into such these than their "
    "then also may our over under between"
)
STOP = frozenset(_STOPWORDS.split())


def _sections(text: str) -> list[tuple[str, dict[str, str]]]:
    out: list[tuple[str, dict[str, str]]] = []
    field = None
    for line in text.replace("\r\n", "\n").split("\n"):
        if line.startswith(".I "):
            out.append((line[3:].strip(), {}))
            field = None
        elif len(line) >= 2 and line[0] == "." and line[1] in "TABW" and line[2:].strip() == "":
            field = line[1]
        elif out and field:
            out[-1][1][field] = (out[-1][1].get(field, "") + " " + line).strip()
    return out


def _tokens(text: str) -> list[str]:
    return [t for t in re.findall(r"[a-z0-9]+", text.lower()) if t not in STOP and len(t) > 1]


def _bm25(docs: dict[str, list[str]], queries: dict[str, list[str]], k1: float, b: float):
    df: Counter[str] = Counter()
    for toks in docs.values():
        df.update(set(toks))
    n = len(docs)
    avg = sum(len(t) for t in docs.values()) / n
    tf = {d: Counter(t) for d, t in docs.items()}
    out: dict[str, list[str]] = {}
    for q, qt in queries.items():
        scores = {}
        for d, c in tf.items():
            s = 0.0
            for t in set(qt):
                f = c.get(t, 0)
                if f:
                    idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                    s += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * len(docs[d]) / avg))
            if s > 0:
                scores[d] = s
        out[q] = sorted(scores, key=lambda d: (-scores[d], d))[:100]
    return out


def _tfidf(docs: dict[str, list[str]], queries: dict[str, list[str]]):
    df: Counter[str] = Counter()
    for toks in docs.values():
        df.update(set(toks))
    n = len(docs)
    vec = {}
    for d, toks in docs.items():
        c = Counter(toks)
        w = {t: (1 + math.log(f)) * math.log(n / df[t]) for t, f in c.items()}
        norm = math.sqrt(sum(x * x for x in w.values())) or 1.0
        vec[d] = {t: x / norm for t, x in w.items()}
    out = {}
    for q, qt in queries.items():
        qw = {t: math.log(n / df[t]) for t in set(qt) if t in df}
        scores = {d: sum(v.get(t, 0.0) * x for t, x in qw.items()) for d, v in vec.items()}
        scores = {d: s for d, s in scores.items() if s > 0}
        out[q] = sorted(scores, key=lambda d: (-scores[d], d))[:100]
    return out


def cranfield():
    from judging.autojudge.embedding import EmbeddingScorer

    root = DATA / "cranfield"
    docs_raw = _sections((root / "cran.all.1400").read_text(errors="replace"))
    doc_text = {i: (f.get("T", "") + " " + f.get("W", "")).strip() for i, f in docs_raw}
    qry_raw = _sections((root / "cran.qry").read_text(errors="replace"))
    # the qrels number the queries 1..225 in file order (their .I numbers skip values)
    qry_text = {str(n): f.get("W", "") for n, (_, f) in enumerate(qry_raw, start=1)}
    rel: dict[str, dict[str, int]] = {}
    for line in (root / "cranqrel").read_text().split("\n"):
        parts = line.split()
        if len(parts) >= 3:
            rel.setdefault(parts[0], {})[parts[1]] = 0 if int(parts[2]) < 0 else 1
    docs = {d: _tokens(t) for d, t in doc_text.items()}
    queries = {q: _tokens(t) for q, t in qry_text.items()}
    runs = {
        "bm25": _bm25(docs, queries, 1.2, 0.75),
        "bm25-b03": _bm25(docs, queries, 1.2, 0.3),
        "bm25-k2": _bm25(docs, queries, 2.0, 0.75),
        "tfidf": _tfidf(docs, queries),
    }
    scorer = EmbeddingScorer(device="cpu")
    dvec = scorer.encode([doc_text[d] for d in doc_text])
    qvec = scorer.encode([qry_text[q] for q in qry_text])
    dids = list(doc_text)
    sims = qvec @ dvec.T
    runs["dense-minilm"] = {
        q: [dids[j] for j in np.argsort(-sims[i], kind="stable")[:100]]
        for i, q in enumerate(qry_text)
    }
    topics = list(qry_text)
    pool = depth_pool(runs, topics, 10)
    pairs = [(q, d) for q in topics for d in pool[q]]
    scores = scorer.similarities(qry_text, doc_text, pairs)
    return runs, pool, rel, scores


# -- the coverage loop ----------------------------------------------------------------------------


def run_block(
    st, truth, grades, pop, scores, auto_for, reps, budget, pairs, label, rows, diff_rows
):
    n = st.n_items
    zero = np.zeros(n, dtype=np.int64)
    ia, ib = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    d_truth = truth[ia] - truth[ib]
    # human sample alone: a uniform sample of the same budget, f(a) = 0; calibrated per pool
    # popularity group (ho, what the service reports beside each estimate) and plain (hp: no
    # covariate at all, the pilot's one rate: the classical estimate from the sample alone)
    keys = ("cov", "w", "v", "hw", "dcov", "dw")
    ho: dict[str, list[Any]] = {k: [] for k in keys}
    hp: dict[str, list[Any]] = {k: [] for k in keys}
    res: dict[str, dict[str, list[Any]]] = {_name(d, a): {k: [] for k in keys} for d, a in DESIGNS}
    t0 = time.time()
    rng = np.random.default_rng(12345)
    for rep in range(reps):
        auto_seed = rng.integers(1 << 31)
        for kind, alloc in DESIGNS:
            design = Design(kind, budget, seed=rep, allocation=alloc)
            p_idx = pilot(zero, design, pilot_share=PILOT_SHARE)
            a = auto_for(np.random.default_rng(auto_seed), p_idx)
            infl = weights = None
            if kind == "active":  # at the predictions the pilot calibrates, as the service does
                infl, weights = st.active_weights(
                    a, pilot=p_idx, pilot_grades=grades[p_idx], groups=pop, score=scores
                )
            s = sample(
                a, design, influence=infl, pilot_grades=grades[p_idx], variance_weights=weights
            )
            est = st.estimate(
                a,
                grades,
                s.sampled,
                s.pi,
                design=kind,
                strata=s.strata,
                covariance=True,
                groups=pop,
                auto_value=False,
                score=scores,
            )
            _collect(res[_name(kind, alloc)], est, truth, ia, ib, d_truth)
        design = Design("uniform", budget, seed=100000 + rep)
        s = sample(zero, design, pilot_share=PILOT_SHARE)
        est = st.estimate(
            zero,
            grades,
            s.sampled,
            s.pi,
            design="uniform",
            covariance=True,
            groups=pop,
            auto_value=False,
        )
        _collect(ho, est, truth, ia, ib, d_truth)
        # the human sample alone: the same design-based estimator with no judge and no pool
        # covariate, and its own design variance only (no model floor)
        est = st.estimate(
            zero,
            grades,
            s.sampled,
            s.pi,
            design="uniform",
            covariance=True,
            auto_value=False,
            variance_floor=False,
        )
        _collect(hp, est, truth, ia, ib, d_truth)
    elapsed = time.time() - t0
    hw = np.mean(ho["w"], axis=(0, 1))
    hc = np.mean(ho["cov"], axis=(0, 1))
    hdw = np.mean(ho["dw"], axis=(0, 1))
    hdc = np.mean(ho["dcov"], axis=(0, 1))
    pw, pcov = np.mean(hp["w"], axis=(0, 1)), np.mean(hp["cov"], axis=(0, 1))
    pdw, pdc = np.mean(hp["dw"], axis=(0, 1)), np.mean(hp["dcov"], axis=(0, 1))
    h_ratio, _, h_rel_bias = _calibration(hp, truth)
    for kind, alloc in DESIGNS:
        design_name = _name(kind, alloc)
        cov = np.array(res[design_name]["cov"])  # (reps, runs, measures)
        w = np.mean(res[design_name]["w"], axis=(0, 1))
        dcov = np.array(res[design_name]["dcov"])
        dw = np.mean(res[design_name]["dw"], axis=(0, 1))
        ratio, bias, rel_bias = _calibration(res[design_name], truth)
        for m, measure in enumerate(st.measures):
            rows.append(
                (
                    label,
                    design_name,
                    f"{budget} ({budget / n:.0%})",
                    measure,
                    cov[:, :, m].mean(),
                    cov[:, :, m].mean(axis=0).min(),
                    w[m],
                    hw[m],
                    w[m] / hw[m],
                    hc[m],
                    pw[m],
                    w[m] / pw[m],
                    pcov[m],
                    ratio[m],
                    bias[m],
                    rel_bias[m],
                    h_ratio[m],
                    h_rel_bias[m],
                )
            )
            diff_rows.append(
                (
                    label,
                    design_name,
                    f"{budget} ({budget / n:.0%})",
                    measure,
                    dcov[:, :, m].mean(),
                    dcov[:, :, m].mean(axis=0).min(),
                    dw[m],
                    hdw[m],
                    dw[m] / hdw[m],
                    hdc[m],
                    pdw[m],
                    dw[m] / pdw[m],
                    pdc[m],
                )
            )
    return elapsed


def _calibration(acc, truth):
    """Per measure: the half-width over the spread (each run's mean unclipped half-width
    t * se over the empirical standard deviation of its estimate across repetitions, averaged
    over runs; 1.96 is calibrated), the bias (the mean over runs of the mean estimate minus
    the full-judgment value) and the bias over the spread (averaged over runs)."""
    v, hw = np.array(acc["v"]), np.array(acc["hw"])  # (reps, runs, measures)
    sd = v.std(axis=0, ddof=1)
    ok = sd > 1e-12
    sd_safe = np.where(ok, sd, np.nan)
    bias = v.mean(axis=0) - truth
    ratio = np.nanmean(hw.mean(axis=0) / sd_safe, axis=0)
    return ratio, bias.mean(axis=0), np.nanmean(bias / sd_safe, axis=0)


def _name(kind: str, allocation: str) -> str:
    return f"stratified ({allocation})" if kind == "stratified" else kind


def _collect(acc, est, truth, ia, ib, d_truth):
    lo, hi = est.interval()
    acc["cov"].append((lo <= truth + 1e-12) & (truth - 1e-12 <= hi))
    acc["w"].append(hi - lo)
    acc["v"].append(est.value)
    acc["hw"].append(est.quantile() * est.se)  # unclipped half-width
    dv, se, q = est.differences(ia, ib)  # q: Student's t at each difference's dof
    dlo, dhi = np.maximum(dv - q * se, -1), np.minimum(dv + q * se, 1)
    acc["dcov"].append((dlo <= d_truth + 1e-12) & (d_truth - 1e-12 <= dhi))
    acc["dw"].append(dhi - dlo)


def table(rows, title, out, unit="run"):
    calibration = len(rows[0]) > 13 if rows else False
    print(f"\n### {title}\n", file=out)
    head = (
        f"| collection | design | budget (items, share) | measure | coverage | worst {unit} | "
        "width | human+pool width | ratio | human+pool coverage | human-alone width | ratio | "
        "human-alone coverage |"
    )
    if calibration:
        head += (
            " half-width / spread | bias | bias / spread | human-alone half-width / spread |"
            " human-alone bias / spread |"
        )
    print(head, file=out)
    print("|---" * (head.count(" | ") + 1) + "|", file=out)
    for r in rows:
        flag = "" if r[4] >= 0.93 else " (below 93%)"
        h_flag = "" if r[12] >= 0.93 else " (below 93%)"
        line = (
            f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]:.3f}{flag} | {r[5]:.3f} | {r[6]:.4f} | "
            f"{r[7]:.4f} | {r[8]:.2f} | {r[9]:.3f} | {r[10]:.4f} | {r[11]:.2f} | "
            f"{r[12]:.3f}{h_flag} |"
        )
        if calibration:
            line += f" {r[13]:.2f} | {r[14]:+.4f} | {r[15]:+.2f} | {r[16]:.2f} | {r[17]:+.2f} |"
        print(line, file=out)


_LOADED: dict[
    str, tuple[Any, ...]
] = {}  # label -> (structure, truth, grades, groups, scores or None, auto_for, pairs)


def _block(label: str, share: float, reps: int):
    st, truth, grades, pop, scores, auto_for, pairs = _LOADED[label]
    budget = round(share * st.n_items)
    rows: list[tuple[Any, ...]] = []
    diff_rows: list[tuple[Any, ...]] = []
    el = run_block(
        st, truth, grades, pop, scores, auto_for, reps, budget, pairs, label, rows, diff_rows
    )
    return label, share, budget, el, rows, diff_rows


def _simulated(grades):
    def auto_for(rng, _pilot):
        return simulated_judge(grades, rng)

    return auto_for


def _calibrated_judge(grades, scores):
    from metrics.judges.calibration import calibrate_thresholds, grades_from_thresholds

    def auto_for(_rng, p_idx):
        thr = calibrate_thresholds(scores[p_idx], grades[p_idx], [0, 1])
        return np.asarray(grades_from_thresholds(scores, thr, [0, 1]), dtype=np.int64)

    return auto_for


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--reps", type=int, default=500)
    p.add_argument("--quick", action="store_true", help="a smoke run: 20 repetitions")
    p.add_argument("--collections", default="robust03,medical,cranfield")
    p.add_argument("--jobs", type=int, default=2, help="worker processes (one block each)")
    args = p.parse_args(argv)
    reps = 20 if args.quick else args.reps
    wanted = args.collections.split(",")
    out = sys.stdout
    print(f"repetitions: {reps}; measures {', '.join(MEASURES)}; nominal level 95%", file=out)
    print("confusion matrix P(auto | human), rows human 0/1/2, columns auto 0/1/2:", file=out)
    for g, row in enumerate(CONFUSION):
        print(f"  human {g}: " + "  ".join(f"{x:.2f}" for x in row), file=out)
    t_all = time.time()
    specs: list[tuple[str, str, int, list[str] | None]] = []
    if "robust03" in wanted:
        specs.append(("robust03", "Robust 2003 (depth 20)", 20, [str(q) for q in range(601, 651)]))
    if "medical" in wanted:
        specs.append(("trec2011-medical", "TREC 2011 Medical (depth 10)", 10, None))
    for name, label, depth, topics in specs:
        t0 = time.time()
        ranked, pool, judged = trec_collection(name, depth, topics)
        st = PoolStructure(ranked, pool, measures=MEASURES)
        grades = np.array([max(0, judged[q].get(d, 0)) for q, d in st.items], dtype=np.int64)
        pairs = _pairs(len(st.run_names), 300)
        _LOADED[label] = (
            st,
            st.values(grades),
            grades,
            st.popularity(),
            None,
            _simulated(grades),
            pairs,
        )
        print(
            f"\n{label}: {len(st.run_names)} runs, {len(st.topics)} topics, {st.n_items} pool "
            f"items, {int((grades >= 1).sum())} relevant; {len(pairs)} run pairs; loaded in "
            f"{time.time() - t0:.1f} s",
            file=out,
        )
    if "cranfield" in wanted:
        t0 = time.time()
        runs, pool, rel, scores = cranfield()
        st = PoolStructure(runs, pool, measures=MEASURES)
        grades = np.array([rel.get(q, {}).get(d, 0) for q, d in st.items], dtype=np.int64)
        pairs = _pairs(len(st.run_names), 300)
        label = "Cranfield (depth 10, embedding judge)"
        truth = st.values(grades)
        _LOADED[label] = (
            st,
            truth,
            grades,
            st.popularity(),
            np.asarray(scores, dtype=np.float64),
            _calibrated_judge(grades, scores),
            pairs,
        )
        print(
            f"\n{label}: {len(st.run_names)} runs ({', '.join(st.run_names)}), {len(st.topics)} "
            f"topics, {st.n_items} pool items, {int(grades.sum())} relevant; runs built and pool "
            f"embedded in {time.time() - t0:.1f} s; full-judgment MAP "
            + ", ".join(f"{r} {truth[i, 3]:.3f}" for i, r in enumerate(st.run_names)),
            file=out,
        )
        # diagnostic: the same without the topics whose pool holds no relevant document, where
        # trec_eval's 0 for R@k, nDCG@k and AP is a jump no small per-topic sample can see
        relevant = np.bincount(st.topic_of, grades, minlength=len(st.topics))
        keep = [q for t, q in enumerate(st.topics) if relevant[t] > 0]
        sub_pool = {q: pool[q] for q in keep}
        sub = PoolStructure(runs, sub_pool, measures=MEASURES)
        where = {item: i for i, item in enumerate(st.items)}
        rows_of = np.array([where[item] for item in sub.items])
        sub_grades = grades[rows_of]
        label2 = f"Cranfield, the {len(keep)} topics with a relevant pooled document"
        _LOADED[label2] = (
            sub,
            sub.values(sub_grades),
            sub_grades,
            sub.popularity(),
            np.asarray(scores, dtype=np.float64)[rows_of],
            _calibrated_judge(sub_grades, scores[rows_of]),
            _pairs(len(sub.run_names), 300),
        )
        print(f"{label2}: {sub.n_items} pool items", file=out)
    jobs = [(label, share) for label in _LOADED for share in BUDGETS]
    results = []
    if args.jobs > 1:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(args.jobs, mp_context=mp.get_context("fork")) as ex:
            futures = [ex.submit(_block, label, share, reps) for label, share in jobs]
            results = [f.result() for f in futures]
    else:
        results = [_block(label, share, reps) for label, share in jobs]
    rows: list[tuple[Any, ...]] = []
    diff_rows: list[tuple[Any, ...]] = []
    print("\ntimings (worker seconds per block):", file=out)
    for label, share, budget, el, r, d in results:
        print(f"  {label}, budget {budget} ({share:.0%}): {el:.1f} s", file=out)
        rows += r
        diff_rows += d
    table(rows, "Run measures: coverage of the 95% intervals", out)
    table(diff_rows, "Differences between runs: coverage of the 95% intervals", out, "pair")
    print(f"\ntotal {time.time() - t_all:.1f} s wall, {args.jobs} worker process(es)", file=out)
    return 0


def _pairs(n_runs: int, cap: int) -> list[tuple[int, int]]:
    allp = [(a, b) for a in range(n_runs) for b in range(a + 1, n_runs)]
    if len(allp) <= cap:
        return allp
    pick = np.random.default_rng(7).choice(len(allp), size=cap, replace=False)
    return [allp[i] for i in sorted(pick)]


if __name__ == "__main__":
    raise SystemExit(main())
