"""Which judging design at a budget: depth-k, a stratified sample, statAP's sample or the hybrid
(PPI) estimate, forecast by simulation on a campaign's own runs and pilot topics (issue 32,
point 6).

The pilot: topics whose depth-``depth`` pool is judged in full; their judgments of the pool are
the truth here (a document the qrels lack counts as non-relevant).
A budget is a share of the pool's (topic, document) pairs. For each design, ``reps`` draws at
that share are judged from the pilot qrels, every run scored, and compared with the full pilot
figures: the mean Kendall tau-b and tau_AP of the run ranking by MAP, the RMSE of each run's MAP,
and, where the design gives one, the mean width of its MAP interval and how often it held the
full value.

- ``depth-k``: the largest k whose depth-k pool fits the budget, judged in full; MAP with
  documents below k unjudged (non-relevant), as the evaluator scores them (one draw: it is
  deterministic); no interval for the full-judgment value;
- ``stratified``: ranks 1-10 of every run judged in full, the rest of the pool at the one rate
  that spends the budget (the ``stratified`` pooling strategy's design; when the top stratum
  alone is over budget every rate is scaled down); scored by xinfAP (``sample_eval.pl``'s);
- ``statAP``: AP-prior Poisson sampling at the budget (:mod:`metrics.pooling.statap_design`),
  scored by statAP with statMAP's interval (its sampling error);
- ``hybrid``: a uniform sample scored by the prediction-powered estimate of AP with no automatic
  judge, calibrated per pool-popularity group (:mod:`metrics.sampling`), with its interval.

:func:`forecast` also says how many topics a target interval width takes
(:mod:`metrics.stats.topicset`, from the pilot's per-topic AP).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from metrics.evaluation.evaluator import Evaluator
from metrics.io.prels import Prels, PrelsDoc
from metrics.io.sampled import UNSAMPLED, SampledQrels
from metrics.io.tables import Qrels, Run
from metrics.measures.sample_eval import sample_eval
from metrics.measures.statap import Z95, statap
from metrics.pooling.statap_design import ap_prior, inclusion_probabilities
from metrics.stats.rank import kendall_tau_b, tau_ap
from metrics.stats.topicset import residual_variance, score_variance, topics_for_width

__all__ = ["DESIGNS", "DesignForecast", "Forecast", "forecast"]

DESIGNS = ("depth-k", "stratified", "statAP", "hybrid")
TOP = 10  # the stratified design's top stratum: ranks 1-10 judged in full


@dataclass(frozen=True)
class DesignForecast:
    """One design's simulated outcome at the budget."""

    design: str
    detail: str
    judged: float  # mean judgments per draw (pilot topics)
    tau: float
    tau_ap: float
    rmse: float
    width: float | None  # mean width of the MAP interval (None: the design gives none)
    coverage: float | None  # share of (draw, run) intervals holding the full MAP
    reps: int


@dataclass(frozen=True)
class Forecast:
    """The designs at a budget on the pilot, the recommendation and what it rests on, and the
    topics a target interval width takes."""

    pilot_topics: list[str]
    runs: int
    pool: int  # pilot pool documents
    share: float
    designs: list[DesignForecast]
    recommended: str
    basis: str
    topics_for_width: dict[str, int | None]


def _pools(runs: Mapping[str, Run], topics: Sequence[str], depth: int) -> dict[str, dict[str, int]]:
    """Per topic, each pooled document's best rank over the runs (to ``depth``)."""
    out: dict[str, dict[str, int]] = {}
    for q in topics:
        best: dict[str, int] = {}
        for run in runs.values():
            if q in run:
                for r, d in enumerate(run.ranking(q)[:depth], 1):
                    best[d] = min(best.get(d, r), r)
        out[q] = best
    return out


def _maps(ev: Evaluator, runs: Mapping[str, Run], topics: Sequence[str]) -> dict[str, float]:
    out = {}
    for tag, run in runs.items():
        res = ev.evaluate(run)
        out[tag] = float(np.mean([res.per_query["AP"].get(q, 0.0) for q in topics]))
    return out


def _ap_matrix(qrels: Qrels, runs: Mapping[str, Run], topics: Sequence[str]) -> np.ndarray:
    ev = Evaluator(qrels, ["AP"], compat="trec_eval", complete=True, ci=None)
    rows = []
    for run in runs.values():
        res = ev.evaluate(run)
        rows.append([res.per_query["AP"].get(q, 0.0) for q in topics])
    return np.array(rows)


@dataclass(frozen=True)
class _Pilot:
    """The pilot: its topics' grades and pools (best rank per document), the runs, the full
    MAP of each run, the pool depth."""

    grades: dict[str, dict[str, int]]
    pools: dict[str, dict[str, int]]
    runs: Mapping[str, Run]
    topics: Sequence[str]
    truth: dict[str, float]
    depth: int


class _Score:
    def __init__(self, truth: dict[str, float]) -> None:
        self.truth = truth
        self.taus: list[float] = []
        self.tau_aps: list[float] = []
        self.sq: list[float] = []
        self.widths: list[float] = []
        self.held: list[bool] = []
        self.judged: list[float] = []

    def add(
        self, maps: dict[str, float], judged: float, ci: dict[str, tuple[float, float]]
    ) -> None:
        self.taus.append(kendall_tau_b(self.truth, maps))
        self.tau_aps.append(tau_ap(self.truth, maps))
        self.sq += [(maps[t] - self.truth[t]) ** 2 for t in self.truth]
        self.judged.append(judged)
        for t, (lo, hi) in ci.items():
            self.widths.append(hi - lo)
            self.held.append(lo <= self.truth[t] <= hi)

    def result(self, design: str, detail: str) -> DesignForecast:
        return DesignForecast(
            design,
            detail,
            float(np.mean(self.judged)),
            float(np.mean(self.taus)),
            float(np.mean(self.tau_aps)),
            math.sqrt(float(np.mean(self.sq))),
            float(np.mean(self.widths)) if self.widths else None,
            float(np.mean(self.held)) if self.held else None,
            len(self.taus),
        )


def _depth_k(p: _Pilot, budget: float) -> DesignForecast:
    k = 0
    for k_try in range(1, p.depth + 1):
        if sum(sum(r <= k_try for r in pool.values()) for pool in p.pools.values()) > budget:
            break
        k = k_try
    judged = {
        q: {d: p.grades[q].get(d, 0) for d, r in p.pools[q].items() if r <= k} for q in p.topics
    }
    score = _Score(p.truth)
    if k == 0:
        score.add(dict.fromkeys(p.truth, 0.0), 0.0, {})
    else:
        ev = Evaluator(Qrels.from_dict(judged), ["AP"], compat="trec_eval", complete=True, ci=None)
        score.add(_maps(ev, p.runs, p.topics), float(sum(map(len, judged.values()))), {})
    return score.result("depth-k", f"depth {k}")


def _used(sizes: list[tuple[int, int]], top: float, rest: float) -> int:
    """Judgments of a stratified draw at these rates (max(1, round(rate N)) of each stratum)."""
    return sum(
        (min(n, max(1, round(top * n))) if n else 0) + (min(m, max(1, round(rest * m))) if m else 0)
        for n, m in sizes
    )


def _stratified_rates(p: _Pilot, budget: float) -> tuple[float, float]:
    """(top rate, rest rate) spending at most ``budget``: ranks 1-``TOP`` in full when they
    fit, else every rate scaled down by one factor (the rest at a tenth of the top)."""
    sizes = [
        (sum(r <= TOP for r in pool.values()), sum(r > TOP for r in pool.values()))
        for pool in p.pools.values()
    ]
    full_top = _used(sizes, 1.0, 1e-9) <= budget
    lo, hi = (1e-9, 1.0) if full_top else (1e-6, 1.0)
    for _ in range(50):  # bisection on the free rate
        mid = (lo + hi) / 2
        rates = (1.0, mid) if full_top else (mid, mid / 10)
        lo, hi = (mid, hi) if _used(sizes, *rates) <= budget else (lo, mid)
    return (1.0, lo) if full_top else (lo, lo / 10)


def _stratified(p: _Pilot, budget: float, reps: int, rng: np.random.Generator) -> DesignForecast:
    top, rest = _stratified_rates(p, budget)
    score = _Score(p.truth)
    for _ in range(reps):
        sample: dict[str, dict[str, tuple[str, int]]] = {}
        judged = 0
        for q in p.topics:
            docs: dict[str, tuple[str, int]] = {}
            for stratum, rate, low, high in (("1", top, 0, TOP), ("2", rest, TOP, p.depth)):
                members = sorted(d for d, r in p.pools[q].items() if low < r <= high)
                if not members:
                    continue
                m = min(len(members), max(1, round(rate * len(members))))
                drawn = set(rng.choice(len(members), size=m, replace=False).tolist())
                judged += m
                for i, d in enumerate(members):
                    docs[d] = (stratum, p.grades[q].get(d, 0) if i in drawn else UNSAMPLED)
            sample[q] = docs
        sq = SampledQrels(sample)
        maps = {}
        for tag, run in p.runs.items():
            got = sample_eval(sq, run).per_topic
            maps[tag] = float(np.mean([got.get(q, {}).get("infAP", 0.0) for q in p.topics]))
        score.add(maps, float(judged), {})
    return score.result("stratified", f"ranks 1-{TOP} at {top:.0%}, the rest at {rest:.1%}")


def _statap(p: _Pilot, share: float, reps: int, rng: np.random.Generator) -> DesignForecast:
    pis: dict[str, dict[str, float]] = {}
    for q in p.topics:
        prior = ap_prior({t: r.ranking(q) for t, r in p.runs.items() if q in r}, depth=p.depth)
        docs = sorted(p.pools[q])
        pi = inclusion_probabilities([prior.get(d, 0.0) for d in docs], share * len(docs))
        pis[q] = dict(zip(docs, pi.tolist(), strict=True))
    score = _Score(p.truth)
    for _ in range(reps):
        topics: dict[str, dict[str, PrelsDoc]] = {}
        judged = 0
        for q in p.topics:
            hits = rng.random(len(pis[q])) < np.fromiter(pis[q].values(), np.float64)
            judged += int(hits.sum())
            topics[q] = {
                d: PrelsDoc(pi, p.grades[q].get(d, 0) if hit else None)
                for (d, pi), hit in zip(pis[q].items(), hits.tolist(), strict=True)
            }
        prels = Prels(topics)
        maps: dict[str, float] = {}
        ci: dict[str, tuple[float, float]] = {}
        for tag, run in p.runs.items():
            got = statap(prels, run).per_topic  # a topic with no sampled relevant scores 0
            maps[tag] = sum(t.ap for t in got.values()) / len(p.topics)
            half = Z95 * math.sqrt(sum(t.variance for t in got.values())) / len(p.topics)
            ci[tag] = (maps[tag] - half, maps[tag] + half)
        score.add(maps, float(judged), ci)
    return score.result("statAP", f"AP-prior sampling, {share:.0%} of the pool expected")


def _hybrid(p: _Pilot, budget: float, reps: int, seed: int) -> DesignForecast:
    from metrics.sampling.designs import Design, sample
    from metrics.sampling.structure import PoolStructure

    ranked = {
        t: {q: r.ranking(q)[: p.depth] for q in p.topics if q in r} for t, r in p.runs.items()
    }
    st = PoolStructure(ranked, {q: sorted(p.pools[q]) for q in p.topics}, measures=("AP",))
    y = np.array([p.grades[q].get(d, 0) for q, d in st.items], dtype=np.int64)
    zero = np.zeros(st.n_items, dtype=np.int64)
    groups = st.popularity()
    row = {t: st.run_names.index(t) for t in p.runs}
    score = _Score(p.truth)
    for rep in range(reps):
        s = sample(zero, Design("uniform", max(2, int(budget)), seed=seed + rep), pilot_share=0.2)
        est = st.estimate(
            zero,
            y,
            s.sampled,
            s.pi,
            design="uniform",
            strata=s.strata,
            covariance=True,
            groups=groups,
            auto_value=False,
        )
        lo, hi = est.interval()
        maps = {t: float(est.value[i, 0]) for t, i in row.items()}
        ci = {t: (float(lo[i, 0]), float(hi[i, 0])) for t, i in row.items()}
        score.add(maps, float(int(s.sampled.sum())), ci)
    return score.result("hybrid", "a uniform sample, PPI with no automatic judge")


def forecast(
    qrels: Qrels,
    runs: Mapping[str, Run],
    *,
    topics: Sequence[str],
    depth: int,
    share: float,
    reps: int = 20,
    seed: int = 0,
    widths: Sequence[float] = (0.05, 0.1),
    designs: Sequence[str] = DESIGNS,
) -> Forecast:
    """The designs at ``share`` of the pool, simulated on the pilot ``topics`` (their
    depth-``depth`` pools judged in full in ``qrels``), and the topics each target MAP interval
    width takes (see the module docstring)."""
    if not 0.0 < share <= 1.0:
        raise ValueError(f"the budget must be a share of the pool in (0, 1], got {share}")
    if len(topics) < 2 or len(runs) < 2:
        raise ValueError("a forecast needs at least two pilot topics and two runs")
    unknown = [d for d in designs if d not in DESIGNS]
    if unknown:
        raise ValueError(f"unknown design(s) {unknown}: choose among {', '.join(DESIGNS)}")
    topics = list(topics)
    pools = _pools(runs, topics, depth)
    grades = {}  # the pilot's judgments of its pools: the truth (a relevant document outside
    for q in topics:  # the pool is invisible to every design alike)
        judged = qrels.judgments(q)
        grades[q] = {d: max(0, judged.get(d, 0)) for d in pools[q]}
    size = sum(map(len, pools.values()))
    budget = share * size
    truth_ev = Evaluator(
        Qrels.from_dict({q: grades[q] for q in topics}),
        ["AP"],
        compat="trec_eval",
        complete=True,
        ci=None,
    )
    truth = _maps(truth_ev, runs, topics)
    pilot = _Pilot(grades, pools, runs, topics, truth, depth)
    rng = np.random.default_rng(seed)
    out: list[DesignForecast] = []
    for name in designs:
        if name == "depth-k":
            out.append(_depth_k(pilot, budget))
        elif name == "stratified":
            out.append(_stratified(pilot, budget, reps, rng))
        elif name == "statAP":
            out.append(_statap(pilot, share, reps, rng))
        else:
            out.append(_hybrid(pilot, budget, reps, seed))
    best = max(out, key=lambda f: (round(f.tau, 3), -f.rmse))
    basis = (
        f"the highest mean Kendall tau of the MAP ranking (ties: the lower RMSE) over {reps} "
        f"simulated draws at {share:.0%} of the pool, on {len(topics)} pilot topics judged in "
        f"full at depth {depth} and this campaign's {len(runs)} runs; a forecast for topics like "
        "the pilot's"
    )
    ap = _ap_matrix(Qrels.from_dict({q: grades[q] for q in topics}), runs, topics)
    sizes: dict[str, int | None] = {}
    for w in widths:
        sizes[f"difference {w:g}"] = topics_for_width(residual_variance(ap), w)
        sizes[f"mean {w:g}"] = topics_for_width(score_variance(ap), w, what="mean")
    return Forecast(topics, len(runs), size, share, out, best.design, basis, sizes)
