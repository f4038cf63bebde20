r"""statAP's sampling design: unequal-probability Poisson sampling of the pool with AP-prior
weights (Aslam, Pavlu & Yilmaz, SIGIR 2006; issue 32), giving what a ``prels`` file holds.

Weights (the AP prior of Aslam, Pavlu & Savell, SIGIR 2003, as the Million Query track used it):
a run of length N (cut at ``depth``) gives its document at rank r

    p(r) = (1 / 2N) (1 + H_N - H_{r-1}) = (1 / 2N) (1 + 1/r + 1/(r+1) + ... + 1/N),

which sums to 1 over r = 1..N and is steep at the top (each rank's share of average precision);
a document's weight is the mean of p over the runs (0 from a run that does not rank it).

Inclusion probabilities for an expected sample size n (:func:`inclusion_probabilities`):
pi_d = min(1, c w_d), c such that sum_d pi_d = n (the documents capped at 1 are always judged).
Sampling is Poisson (:func:`draw`): each document in independently with probability pi_d, so the
sample size is n in expectation, not exactly, and statAP's numerator and R-hat are exactly
unbiased (:mod:`metrics.measures.statap`). The track drew with replacement instead and converted
the draws to inclusion probabilities; Poisson keeps the estimator's expectation exact and its
variance a sum over documents.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from metrics.io.prels import Prels, PrelsDoc

__all__ = ["ap_prior", "draw", "inclusion_probabilities", "statap_design"]


def ap_prior(rankings: Mapping[str, Sequence[str]], *, depth: int = 100) -> dict[str, float]:
    """Each document's AP-prior weight: the mean over the runs of p(rank) (module docstring)."""
    weights: dict[str, float] = {}
    for ranking in rankings.values():
        docs = list(ranking)[:depth]
        n = len(docs)
        if n == 0:
            continue
        h = np.cumsum(1.0 / np.arange(1, n + 1))
        p = (1.0 + h[-1] - h + 1.0 / np.arange(1, n + 1)) / (2 * n)  # H_N - H_{r-1}
        for d, x in zip(docs, p.tolist(), strict=True):
            weights[d] = weights.get(d, 0.0) + x / len(rankings)
    return weights


def inclusion_probabilities(weights: Sequence[float], expected: float) -> np.ndarray:
    """pi_d = min(1, c w_d) with sum pi = ``expected`` (all 1 when it is at least the number of
    documents with a positive weight)."""
    w = np.asarray(weights, dtype=np.float64)
    positive = int((w > 0).sum())
    if expected >= positive:
        return (w > 0).astype(np.float64)
    order = np.argsort(-w, kind="stable")
    ws = w[order]
    rest = np.cumsum(ws[::-1])[::-1]  # rest[k]: sum of weights from the k-th largest on
    pi = np.empty_like(w)
    for k in range(positive):  # k documents capped at 1, the rest scaled
        c = (expected - k) / rest[k]
        if ws[k] * c <= 1.0:
            pi[order] = np.minimum(1.0, ws * c)
            pi[order[:k]] = 1.0
            return pi
    raise AssertionError("unreachable: expected < positive always leaves a scaled document")


def statap_design(
    topic_runs: Mapping[str, Mapping[str, Sequence[str]]], *, share: float, depth: int = 100
) -> dict[str, dict[str, float]]:
    """Per topic, each document of the depth-``depth`` pool's inclusion probability, the expected
    sample ``share`` of that topic's pool (topics judged in proportion to their pool's size)."""
    if not 0.0 < share <= 1.0:
        raise ValueError(f"share must be in (0, 1], got {share}")
    out: dict[str, dict[str, float]] = {}
    for qid, rankings in topic_runs.items():
        weights = ap_prior(rankings, depth=depth)
        pi = inclusion_probabilities(list(weights.values()), share * len(weights))
        out[qid] = dict(zip(weights, pi.tolist(), strict=True))
    return out


def draw(
    design: Mapping[str, Mapping[str, float]], judge: Callable[[str, str], int], *, seed: int
) -> Prels:
    """A Poisson sample of ``design`` (topic -> docid -> pi), each sampled document's grade from
    ``judge(qid, docid)``; the others pooled, not sampled. Seeded per call."""
    rng = np.random.default_rng(seed)
    topics: dict[str, dict[str, PrelsDoc]] = {}
    for qid, probs in design.items():
        u = rng.random(len(probs))
        topics[qid] = {
            d: PrelsDoc(pi, judge(qid, d) if x < pi else None)
            for (d, pi), x in zip(probs.items(), u.tolist(), strict=True)
        }
    return Prels(topics)
