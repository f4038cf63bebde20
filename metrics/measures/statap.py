r"""statAP and statMAP: average precision estimated from a sample of judgments drawn with known
inclusion probabilities (Aslam, Pavlu & Yilmaz, SIGIR 2006, "A statistical method for system
evaluation using incomplete judgments"; the TREC Million Query track's statMAP; issue 32).

Input: :class:`metrics.io.prels.Prels` (each sampled document's inclusion probability pi and
grade; relevant: grade > 0) and a run, ranked by score descending then docid descending (the
script breaks ties as Perl's sort happens to), every line of a topic (no cut at 1000). With
w_d = 1/pi_d for a sampled relevant document and 0 otherwise, and r_d its rank in the run:

- R-hat = sum of w_d over the topic's sampled relevant documents, retrieved or not;
- prec-hat(d) = (1 + sum_{j ranked above d} w_j) / r_d: the document itself counts 1, being in
  the sample (so rank 1 gives 1 exactly), those above it 1/pi;
- statAP = (1/R-hat) sum_{d retrieved} w_d prec-hat(d),

exactly as Pavlu's ``statAP_MQ_eval_v3.pl`` computes it (a document MTC picked, method 0 or 2,
weighs 1: :meth:`metrics.io.prels.PrelsDoc.effective_pi`). Under Poisson sampling (independent
inclusions, as :mod:`metrics.pooling.statap_design` draws them) the numerator is unbiased for AP's
numerator sum_{relevant d retrieved} prec(d), since E[w_d w_j] = 1 for d != j, and R-hat for R,
the relevant documents of the sampling frame (the pool): statAP is a ratio of unbiased
estimators, consistent, not unbiased. Relevant documents outside the frame are invisible to it.

Variance (ours, not the script's, whose versions 3 and 4 print two different formulas): the
ratio's first-order linearisation under Poisson sampling. The numerator minus theta R-hat has
per-document influence z_d = prec(d) + tail(d) - theta (retrieved; tail(d) = sum_{relevant k
ranked below d} 1/r_k) or -theta (not retrieved), so
Var ~ (1/R^2) sum_{relevant d} (1 - pi_d)/pi_d z_d^2, estimated by its Horvitz-Thompson form
over the sample, (1/R-hat^2) sum_{sampled relevant} (w_d^2 - w_d) z-hat_d^2 with prec, tail and
theta replaced by their sample estimates; plus the numerator's second-order term, exact for its
pairwise products w_j w_d / r_d: (1/R-hat^2) sum_{j above d, both sampled relevant retrieved}
(w_j^2 - w_j)(w_d^2 - w_d) / r_d^2. Documents judged with pi = 1 add nothing. Poisson
rather than with-replacement because the design is Poisson (the track drew with replacement);
for a fixed-size design (the stratified ones) it ignores the finite-population term of each
stratum, which the benchmark's SE / SD column measures.

Bias (ours, optional: ``correct_bias``): the ratio's second-order bias, E[statAP] - AP ~
(AP Var(R-hat) - Cov(numerator, R-hat)) / R^2 = -(1/R^2) sum_d (1 - pi_d)/pi_d z_d, estimated as
-(1/R-hat^2) sum_{sampled relevant} (w_d^2 - w_d) z-hat_d and subtracted. It is small for one
topic beside its noise, but has the same sign on every topic, so it does not average away over
topics as the noise does: statMAP's interval, whose width shrinks as 1/sqrt(T), misses the
truth for it (measured in ``benchmarks/README.md``).

statMAP is the mean over the run's topics that have a sampled relevant document (the script's
"valid topics"). Its 95% interval, statMAP +- 1.96 sqrt(sum_t Var_t) / T (topics sampled
independently), covers the *sampling* error for these topics: the full-judgment MAP of the same
topics, not the MAP of a population of topics (add the topic variance for that).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from metrics.io.prels import Prels
from metrics.io.tables import Run

__all__ = ["StatAP", "StatMAP", "statap", "statap_ragged"]

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
Z95 = 1.959963984540054


@dataclass(frozen=True)
class StatAP:
    """One topic's estimate: statAP, its estimated variance, R-hat, and the script's counts."""

    ap: float
    variance: float
    r_hat: float
    sampled: int
    sampled_relevant: int
    sampled_in_list: int
    sampled_relevant_in_list: int


@dataclass(frozen=True)
class StatMAP:
    """statAP per valid topic, statMAP, its variance and 95% interval; topics left out (no sampled
    relevant document)."""

    per_topic: dict[str, StatAP]
    mean: float
    variance: float
    interval: tuple[float, float]
    excluded: tuple[str, ...]


def _segment_cumsum(x: F64, starts: I64) -> tuple[F64, F64]:
    """Inclusive cumulative sums of ``x`` (last axis) restarting at each segment, and each
    segment's total."""
    c = np.concatenate([np.zeros((*x.shape[:-1], 1)), np.cumsum(x, axis=-1)], axis=-1)
    length = np.diff(starts)
    base = np.repeat(c[..., starts[:-1]], length, axis=-1)
    return c[..., 1:] - base, c[..., starts[1:]] - c[..., starts[:-1]]


def statap_ragged(rank: I64, starts: I64, w: F64, r_hat: F64, q: F64) -> tuple[F64, F64, F64]:
    """statAP and its variance for many (run, topic) segments at once (see the module docstring).

    ``rank``: the 1-based ranks of the frame's relevant documents retrieved, segment by segment
    in rank order, ``starts`` the segments' offsets (S + 1); ``w`` (..., L): 1/pi where that
    document is sampled, else 0 (any leading axes: repetitions); ``r_hat``, ``q`` (..., S): the
    segment's topic's R-hat and sum of (w^2 - w) over all its sampled relevant documents.
    Returns (statAP, variance, estimated bias), each (..., S), NaN where R-hat is 0.
    """
    inc, _ = _segment_cumsum(w, starts)
    prec = (1.0 + inc - w) / rank
    num = _segment_cumsum(w * prec, starts)[1]
    # theta 0 where R-hat is 0 while summing: a NaN would run on through the cumulative sums
    # into every later segment
    valid = r_hat > 0
    theta = np.where(valid, num / np.where(valid, r_hat, 1.0), 0.0)
    inc_r, tot_r = _segment_cumsum(w / rank, starts)
    tail = np.repeat(tot_r, np.diff(starts), axis=-1) - inc_r
    z = prec + tail - np.repeat(theta, np.diff(starts), axis=-1)
    v2 = w * w - w
    in_sum = _segment_cumsum(v2 * z * z, starts)[1]
    in_q = _segment_cumsum(v2, starts)[1]
    r2 = np.where(valid, r_hat * r_hat, 1.0)
    # the numerator's pairwise term: sum_{j above d} Var(w_j) Var(w_d) / r_d^2, unbiased
    pairs = _segment_cumsum(v2 / (rank * rank) * (_segment_cumsum(v2, starts)[0] - v2), starts)[1]
    var = (in_sum + theta * theta * (q - in_q) + pairs) / r2
    bias = -(_segment_cumsum(v2 * z, starts)[1] - theta * (q - in_q)) / r2
    nan = np.full_like(theta, np.nan)
    return np.where(valid, theta, nan), np.where(valid, var, nan), np.where(valid, bias, nan)


def _topic(
    sample: dict[str, tuple[float, int]], ranking: list[str], correct_bias: bool
) -> StatAP | None:
    rel = {d: 1.0 / pi for d, (pi, g) in sample.items() if g > 0}
    r_hat = sum(rel.values())
    if r_hat <= 0:
        return None
    ranks = np.array([r for r, d in enumerate(ranking, 1) if d in rel], dtype=np.int64)
    w = np.array([rel[ranking[r - 1]] for r in ranks], dtype=np.float64)
    q = sum(x * x - x for x in rel.values())
    ap, var, bias = statap_ragged(
        ranks, np.array([0, ranks.size]), w, np.array([r_hat]), np.array([q])
    )
    return StatAP(
        float(ap[0] - bias[0]) if correct_bias else float(ap[0]),
        float(var[0]),
        r_hat,
        len(sample),
        len(rel),
        sum(d in sample for d in ranking),
        int(ranks.size),
    )


def statap(prels: Prels, run: Run, *, correct_bias: bool = False) -> StatMAP:
    """statAP of every topic that ``prels`` and ``run`` share, and statMAP with its interval;
    ``correct_bias``: each topic's statAP minus its estimated ratio bias (module docstring)."""
    per_topic: dict[str, StatAP] = {}
    excluded: list[str] = []
    for qid in prels.topics:
        if qid not in run:
            continue
        found = _topic(prels.sample(qid), run.ranking(qid), correct_bias)
        if found is None:
            excluded.append(qid)
        else:
            per_topic[qid] = found
    n = len(per_topic)
    if n == 0:
        return StatMAP({}, math.nan, math.nan, (math.nan, math.nan), tuple(excluded))
    mean = sum(t.ap for t in per_topic.values()) / n
    var = sum(t.variance for t in per_topic.values()) / (n * n)
    half = Z95 * math.sqrt(max(var, 0.0))
    return StatMAP(per_topic, mean, var, (mean - half, mean + half), tuple(excluded))
