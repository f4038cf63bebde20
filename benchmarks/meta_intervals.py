"""Coverage and width of the meta-evaluation's 95% bootstrap intervals over topics
(``metrics.judges.meta_labels.label_meta``, ``metrics.judges.meta.ranking_meta``) against the
population value, on a seeded simulation, for a few numbers of topics.

    .venv/bin/python benchmarks/meta_intervals.py [--reps 300] [--seed 0] [--jobs 1]
        [--topics 6,10,25,50] [--resamples 1000] [--population 100000] [--quick]

The topic population. A topic has a pool of 40-100 items (uniform). People's grades (0-3) are
0 with probability 1 - p and 1/2/3 with p times a topic's Dirichlet(5, 3, 2) mix, p ~ Beta(2, 5)
(about 29% relevant on average, varying by topic). Each item has an appeal a ~ N(0, 1). The
judge grades one step up (too generous) with probability 0.15 d 2 sigmoid(1.5 a) and one step down
(too strict) with probability 0.10 d, clipped to the scale, where d ~ Gamma(4, 1/4) is the
topic's difficulty (mean 1, sd 0.5): its errors vary between topics, and it favours appealing
items, which some systems retrieve more than others.

Systems. ``SYSTEMS`` (25) runs rank each topic's whole pool by q_st g + b_s a + e (g people's
grade, e ~ N(0, 1) per item), q_st = q_s exp(0.4 z_st): a quality varying by system (``q_s``
evenly spread over 0.3-1.5) and topic, and an affinity ``b_s`` = +-0.8 (half the systems seek the
items the judge is generous to, half avoid them). Which systems seek them is a shuffle with a
fixed seed (``SYSTEMS_SEED`` = 2, whatever ``--seed``): with seeds 0 and 1 two runs' population
means under the judge were within 1 standard error of each other at 40,000 topics, which leaves
the rank targets undetermined; the closest gaps are printed. Per-topic score: nDCG@10 (gain =
grade, log2 discount, ideal from every grade of the topic's pool, 0 when a topic has nothing
relevant: trec_eval's ``ndcg_cut.10``, the product's default measure), under people's grades and
under the judge's.

Targets (population values), from ``--population`` topics drawn once (seed + 1): each label
figure on their pooled confusion table; tau-b, tau_AP (people the reference), Spearman between
the runs' mean nDCG@10 under people and under the judge, and tau-b among people's 10 best runs
by that mean. Each target's Monte Carlo standard error is printed (the spread of the figure over
20 equal batches of the population topics, over sqrt(20)). The share of people's significant
pairs kept has no fixed population value: which pairs a t-test separates depends on the number of
topics (at many topics every pair is, and the share tends to the pairs' concordant share, also
printed). Its target is taken as its expected value at the same number of topics (the mean of
the replications' point values), a weaker check: the interval is compared with the centre of its
own sampling distribution, not with a population figure.

Each replication draws n topics afresh (seed, n, replication) and calls both functions as the
product does (threshold 1, top 10, 1000 resamples, a bootstrap seed per replication). Reported
per figure and n: coverage (the share of the given intervals that hold the target), mean width,
the share of replications with an interval given; then the point value's mean minus the target,
and how the misses split (interval above the target / below it). With R replications a coverage
near 95% has a standard error of sqrt(0.95 * 0.05 / R) (1.3 points at 300).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from metrics.judges.agreement import weight_matrix  # noqa: E402
from metrics.judges.meta import CORRELATIONS, Undefined, correlation, ranking_meta  # noqa: E402
from metrics.judges.meta_labels import alpha_rows, kappa_rows, label_meta  # noqa: E402

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

SCALE = (0, 1, 2, 3)
THRESHOLD = 1  # the campaign's default relevance_threshold
TOP_K = 10
MAX_ITEMS = 100
SYSTEMS = 25
DEPTH = 10
GENEROUS, STRICT = 0.15, 0.10
LABELS = ("kappa", "binary_kappa", "kappa_linear", "kappa_quadratic", "krippendorff_alpha")
RANKINGS = ("kendall_tau_b", "tau_ap", "spearman", "tau_top_k", "significant_kept")
FIGURES = LABELS + RANKINGS
BATCHES = 20
AFFINITY = 0.8
SYSTEMS_SEED = 2
CHUNK = 2000


@dataclass(frozen=True)
class Systems:
    """The simulated systems: quality ``q`` and affinity ``b`` for the judge's favoured items."""

    q: FloatArray
    b: FloatArray

    @property
    def names(self) -> list[str]:
        return [f"run{i:02d}" for i in range(len(self.q))]


def systems(count: int = SYSTEMS, seed: int = SYSTEMS_SEED) -> Systems:
    """``count`` systems: qualities evenly over 0.3-1.5; affinity +-``AFFINITY``, half each,
    shuffled with ``seed`` (module docstring: why this one)."""
    signs = np.where(np.arange(count) % 2 == 0, AFFINITY, -AFFINITY)
    return Systems(
        np.linspace(0.3, 1.5, count), np.random.default_rng([seed, 7]).permutation(signs)
    )


@dataclass(frozen=True)
class Topics:
    """n simulated topics, items padded to ``MAX_ITEMS`` (grades 0 beyond ``size``): people's
    and the judge's grades, every system's top ``DEPTH`` items in order (n x systems x DEPTH)
    and its nDCG@10 under each side's grades (n x systems)."""

    size: IntArray
    human: IntArray
    judge: IntArray
    top: IntArray
    ndcg_human: FloatArray
    ndcg_judge: FloatArray


def _ndcg(gains: FloatArray, top: IntArray, mask: npt.NDArray[np.bool_]) -> FloatArray:
    """nDCG@DEPTH per topic and system: ``top`` (n x systems x DEPTH) indexes the items."""
    discount = 1.0 / np.log2(np.arange(DEPTH) + 2.0)
    dcg = (np.take_along_axis(gains[:, None, :], top, axis=2) * discount).sum(axis=2)
    ideal = (-np.sort(-np.where(mask, gains, 0.0), axis=1)[:, :DEPTH] * discount).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(ideal[:, None] > 0, dcg / ideal[:, None], 0.0)


def draw_topics(rng: np.random.Generator, n: int, sys_: Systems) -> Topics:
    """n topics of the module docstring's population, and the systems' rankings of them."""
    size = rng.integers(40, MAX_ITEMS + 1, n)
    mask = np.arange(MAX_ITEMS)[None, :] < size[:, None]
    p = rng.beta(2.0, 5.0, n)
    probs = np.column_stack([1.0 - p, p[:, None] * rng.dirichlet((5.0, 3.0, 2.0), n)])
    cum = np.cumsum(probs, axis=1)
    human = (rng.random((n, MAX_ITEMS))[:, :, None] > cum[:, None, :3]).sum(axis=2)
    appeal = rng.standard_normal((n, MAX_ITEMS))
    difficulty = rng.gamma(4.0, 0.25, n)[:, None]
    up = np.minimum(0.9, GENEROUS * difficulty * 2.0 / (1.0 + np.exp(-1.5 * appeal)))
    down = np.minimum(0.9 - up, STRICT * difficulty)
    u = rng.random((n, MAX_ITEMS))
    judge = np.clip(human + (u < up) - ((u >= up) & (u < up + down)), 0, 3)
    human, judge = np.where(mask, human, 0), np.where(mask, judge, 0)

    quality = sys_.q[None, :] * np.exp(0.4 * rng.standard_normal((n, len(sys_.q))))
    score = (
        quality[:, :, None] * human[:, None, :]
        + sys_.b[None, :, None] * appeal[:, None, :]
        + rng.standard_normal((n, len(sys_.q), MAX_ITEMS))
    )
    score = np.where(mask[:, None, :], score, -np.inf)
    top = np.argpartition(-score, DEPTH, axis=2)[:, :, :DEPTH]
    top = np.take_along_axis(top, np.argsort(-np.take_along_axis(score, top, 2), axis=2), 2)
    return Topics(
        size.astype(np.int64),
        human.astype(np.int64),
        judge.astype(np.int64),
        top.astype(np.int64),
        _ndcg(human.astype(np.float64), top, mask),
        _ndcg(judge.astype(np.float64), top, mask),
    )


def confusion(t: Topics) -> FloatArray:
    """The pooled confusion table (rows people, columns the judge) of the topics' items."""
    mask = np.arange(MAX_ITEMS)[None, :] < t.size[:, None]
    cells = t.human[mask] * 4 + t.judge[mask]
    return np.bincount(cells, minlength=16).reshape(4, 4).astype(np.float64)


def label_figures(table: FloatArray) -> dict[str, float]:
    """The label figures of a confusion table, as :func:`label_meta` defines them."""
    rel = np.array([[g < THRESHOLD, g >= THRESHOLD] for g in SCALE], dtype=np.float64)
    binary = rel.T @ table @ rel
    stack = table[None]
    out = {
        "kappa": kappa_rows(stack, weight_matrix(4, "none")),
        "binary_kappa": kappa_rows(binary[None], weight_matrix(2, "none")),
        "kappa_linear": kappa_rows(stack, weight_matrix(4, "linear")),
        "kappa_quadratic": kappa_rows(stack, weight_matrix(4, "quadratic")),
        "krippendorff_alpha": alpha_rows(stack, SCALE, "ordinal"),
    }
    return {k: float(v[0]) for k, v in out.items()}


def ranking_figures(human: FloatArray, judge: FloatArray, names: list[str]) -> dict[str, float]:
    """The correlations of the runs' mean scores (``human``, ``judge``: one per run)."""
    x = dict(zip(names, human.tolist(), strict=True))
    y = dict(zip(names, judge.tolist(), strict=True))
    out: dict[str, float | Undefined] = {k: correlation(k, x, y) for k in CORRELATIONS}
    top = sorted(names, key=lambda r: (-x[r], r))[:TOP_K]
    out["tau_top_k"] = correlation("kendall_tau_b", {r: x[r] for r in top}, {r: y[r] for r in top})
    i, j = np.triu_indices(len(names), 1)
    dx, dy = human[i] - human[j], judge[i] - judge[j]
    out["concordant"] = float(np.mean(np.sign(dx) == np.sign(dy)))
    for k, v in out.items():
        if isinstance(v, Undefined):  # the population's runs never all tie: a broken simulation
            raise RuntimeError(f"the population's {k} is {v}")
    return {k: float(v) for k, v in out.items() if not isinstance(v, Undefined)}


@dataclass
class Population:
    """Every figure's target and its Monte Carlo standard error (module docstring)."""

    target: dict[str, float]
    se: dict[str, float]
    topics: int
    gap_human: float  # the closest two runs' mean difference in standard errors, under people
    gap_judge: float  # the same under the judge


def population(sys_: Systems, topics: int, seed: int) -> Population:
    """The targets from ``topics`` topics drawn in ``BATCHES`` batches (seed + 1)."""
    rng = np.random.default_rng([seed + 1, 0])
    sizes = [topics // BATCHES + (b < topics % BATCHES) for b in range(BATCHES)]
    tables: list[FloatArray] = []
    hs: list[FloatArray] = []
    js: list[FloatArray] = []
    counts: list[int] = []
    for n in sizes:
        table, h, j = np.zeros((4, 4)), np.zeros(len(sys_.q)), np.zeros(len(sys_.q))
        for a in range(0, n, CHUNK):  # in chunks: a chunk's scores are topics x systems x items
            t = draw_topics(rng, min(CHUNK, n - a), sys_)
            table += confusion(t)
            h += t.ndcg_human.sum(axis=0)
            j += t.ndcg_judge.sum(axis=0)
        tables.append(table)
        hs.append(h)
        js.append(j)
        counts.append(n)

    def figures(keep: Sequence[int]) -> dict[str, float]:
        n = sum(counts[b] for b in keep)
        h = np.sum([hs[b] for b in keep], axis=0) / n
        j = np.sum([js[b] for b in keep], axis=0) / n
        table = np.sum([tables[b] for b in keep], axis=0)
        return label_figures(table) | ranking_figures(h, j, sys_.names)

    whole = figures(range(BATCHES))
    per = [figures([b]) for b in range(BATCHES)]
    se = {k: float(np.std([f[k] for f in per], ddof=1) / np.sqrt(BATCHES)) for k in whole}
    gaps = []
    for sums in (hs, js):  # adjacent runs in the population's order: gap over its standard error
        means = np.array(sums) / np.array(counts)[:, None]  # batches x systems
        ordered = means[:, np.argsort(-means.mean(axis=0))]
        diffs = ordered[:, :-1] - ordered[:, 1:]
        gaps.append(float((diffs.mean(axis=0) / diffs.std(axis=0, ddof=1)).min() * BATCHES**0.5))
    return Population(whole, se, topics, gaps[0], gaps[1])


def replicate(sys_: Systems, n: int, rep: int, seed: int, resamples: int) -> FloatArray:
    """One replication at n topics: figures x (value, low, high), NaN where not given."""
    t = draw_topics(np.random.default_rng([seed, n, rep]), n, sys_)
    human, judge = {}, {}
    for q in range(n):
        for d in range(int(t.size[q])):
            human[(f"q{q}", f"d{d}")] = int(t.human[q, d])
            judge[(f"q{q}", f"d{d}")] = int(t.judge[q, d])
    labels = label_meta(human, judge, SCALE, threshold=THRESHOLD, resamples=resamples, seed=rep)
    names = sys_.names
    h = {r: {f"q{q}": float(t.ndcg_human[q, s]) for q in range(n)} for s, r in enumerate(names)}
    j = {r: {f"q{q}": float(t.ndcg_judge[q, s]) for q in range(n)} for s, r in enumerate(names)}
    ranks = ranking_meta(h, j, top_k=TOP_K, resamples=resamples, seed=rep)
    out = np.full((len(FIGURES), 3), np.nan)
    for i, name in enumerate(FIGURES):
        e = getattr(labels if name in LABELS else ranks, name)
        value = e.value if isinstance(e.value, float) else np.nan
        low, high = (e.low, e.high) if e.low is not None and e.high is not None else (np.nan,) * 2
        out[i] = value, low, high
    return out


def _chunk(args: tuple[Systems, int, range, int, int]) -> tuple[int, FloatArray]:
    sys_, n, reps, seed, resamples = args
    return n, np.stack([replicate(sys_, n, r, seed, resamples) for r in reps])


@dataclass
class Result:
    """Per n: reps x figures x (value, low, high); the population; the settings."""

    draws: dict[int, FloatArray]
    pop: Population
    resamples: int
    seconds: float = 0.0
    rows: list[Row] = field(default_factory=list)


def simulate(
    *,
    topics: Sequence[int],
    reps: int,
    seed: int = 0,
    resamples: int = 1000,
    pop_topics: int = 100_000,
    jobs: int = 1,
) -> Result:
    """Draw the population's targets, then ``reps`` replications at each n of ``topics``."""
    t0 = time.time()
    sys_ = systems()
    pop = population(sys_, pop_topics, seed)
    step = max(1, -(-reps // max(1, 2 * jobs)))
    tasks = [
        (sys_, n, range(a, min(a + step, reps)), seed, resamples)
        for n in topics
        for a in range(0, reps, step)
    ]
    if jobs > 1:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(jobs, mp_context=mp.get_context("fork")) as ex:
            parts = list(ex.map(_chunk, tasks))
    else:
        parts = [_chunk(task) for task in tasks]
    draws = {n: np.concatenate([d for m, d in parts if m == n]) for n in topics}
    result = Result(draws, pop, resamples)
    result.rows = summarise(result)
    result.seconds = time.time() - t0
    return result


@dataclass(frozen=True)
class Row:
    """One figure at n topics: its target; the share of replications with an interval
    (``given``); of those, the share holding the target (``coverage``), the mean width, the
    shares lying wholly above and wholly below it; the point value's mean minus the target."""

    figure: str
    n: int
    reps: int
    target: float
    given: float
    coverage: float
    width: float
    bias: float
    above: float
    below: float


def summarise(result: Result) -> list[Row]:
    """One :class:`Row` per figure and n (NaN where no interval was given)."""
    rows: list[Row] = []
    for i, name in enumerate(FIGURES):
        for n, d in result.draws.items():
            value, low, high = d[:, i, 0], d[:, i, 1], d[:, i, 2]
            given = np.isfinite(low) & np.isfinite(high)
            if name == "significant_kept":  # its mean at n (module docstring)
                target = float(np.nanmean(value)) if np.isfinite(value).any() else np.nan
            else:
                target = result.pop.target[name]
            above, below = low[given] > target, high[given] < target
            k = int(given.sum())
            nan = float("nan")
            rows.append(
                Row(
                    figure=name,
                    n=n,
                    reps=len(d),
                    target=target,
                    given=k / len(d),
                    coverage=1.0 - float(above.sum() + below.sum()) / k if k else nan,
                    width=float(np.mean(high[given] - low[given])) if k else nan,
                    bias=float(np.nanmean(value) - target) if np.isfinite(value).any() else nan,
                    above=float(above.mean()) if k else nan,
                    below=float(below.mean()) if k else nan,
                )
            )
    return rows


def _f(x: object, fmt: str = ".3f") -> str:
    return "-" if not isinstance(x, float) or not np.isfinite(x) else format(x, fmt)


def report(result: Result, out: IO[str]) -> None:
    """The two markdown tables and the targets (module docstring)."""
    ns = list(result.draws)
    by = {(r.figure, r.n): r for r in result.rows}
    pop = result.pop
    print(
        f"targets from {pop.topics} topics; {len(next(iter(result.draws.values())))} "
        f"replications per n, {result.resamples} resamples each; significant_kept's target is "
        f"its mean at the same n (its limit at many topics, the concordant share of all pairs: "
        f"{pop.target['concordant']:.3f}); the closest two runs' population means differ by "
        f"{pop.gap_human:.1f} standard errors under people, {pop.gap_judge:.1f} under the judge\n",
        file=out,
    )
    head = " | ".join(f"{n} topics: coverage | width | given" for n in ns)
    print(f"| figure | target (MC se) | {head} |", file=out)
    print("|---|---|" + "---|---|---|" * len(ns), file=out)
    for name in FIGURES:
        if name == "significant_kept":
            tgt = "mean at n: " + " / ".join(_f(by[(name, n)].target) for n in ns)
        else:
            tgt = f"{pop.target[name]:.3f} ({pop.se[name]:.4f})"
        cells = " | ".join(
            f"{_f(by[(name, n)].coverage)} | {_f(by[(name, n)].width)} | "
            f"{_f(by[(name, n)].given, '.2f')}"
            for n in ns
        )
        print(f"| {name} | {tgt} | {cells} |", file=out)
    print(
        "\nthe point value's mean minus the target; misses: interval above / below it\n", file=out
    )
    head = " | ".join(f"{n} topics: bias | above | below" for n in ns)
    print(f"| figure | {head} |", file=out)
    print("|---|" + "---|---|---|" * len(ns), file=out)
    for name in FIGURES:
        cells = " | ".join(
            f"{_f(by[(name, n)].bias, '+.3f')} | {_f(by[(name, n)].above)} | "
            f"{_f(by[(name, n)].below)}"
            for n in ns
        )
        print(f"| {name} | {cells} |", file=out)


def main(argv: Sequence[str] | None = None, out: IO[str] = sys.stdout) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--reps", type=int, default=None, help="replications per n (default 300)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--jobs", type=int, default=1, help="worker processes")
    p.add_argument("--topics", default=None, help="numbers of topics (default 6,10,25,50)")
    p.add_argument("--resamples", type=int, default=None, help="bootstrap resamples (1000)")
    p.add_argument("--population", type=int, default=None, help="population topics (100000)")
    p.add_argument(
        "--quick",
        action="store_true",
        help="a smoke run: 20 replications at 6 and 25 topics, 200 resamples, 2000 topics",
    )
    a = p.parse_args(argv)
    quick = (20, "6,25", 200, 2000)
    default = (300, "6,10,25,50", 1000, 100_000)
    base = quick if a.quick else default
    reps = a.reps if a.reps is not None else base[0]
    topics = [int(x) for x in (a.topics or base[1]).split(",")]
    resamples = a.resamples if a.resamples is not None else base[2]
    pop_topics = a.population if a.population is not None else base[3]
    result = simulate(
        topics=topics,
        reps=reps,
        seed=a.seed,
        resamples=resamples,
        pop_topics=pop_topics,
        jobs=a.jobs,
    )
    report(result, out)
    print(f"\ntotal {result.seconds:.1f} s wall, {a.jobs} worker process(es)", file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
