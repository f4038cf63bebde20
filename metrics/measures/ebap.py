r"""ebAP and ebMAP: AP from a stratified sample of judgments, its count of relevant documents
estimated by empirical Bayes, with an interval for the full-judgment MAP that the validation
found to hold where statMAP's and the xinfAP bootstrap's did not (issue 32, point 4).

Why. statAP (:mod:`metrics.measures.statap`) divides a Horvitz-Thompson numerator by R-hat, the
Horvitz-Thompson count of the relevant documents. Where a deep stratum is sampled at 1-10%, R-hat
is skewed: most draws find none of its few relevant documents (R-hat too small, statAP too
high), a few find one and weigh it 10-100 times. Per topic the error is small beside the noise;
over 50 topics it adds up with one sign while the interval shrinks as 1/sqrt(T), and the
variance estimate is smallest exactly when a stratum's relevant documents were missed. Measured
(``benchmarks/sampled_validation.py``): statMAP's interval held the frame's full-judgment MAP in
3-93% of draws.

What. Per topic t and stratum h (the stratum labels shared across topics, as a pooling strategy
or ``sample_eval.pl``'s file gives them): N_th pooled, n_th judged, k_th relevant among them.

- the stratum's rate over all topics, p_h = sum_t k_th / sum_t n_th, scaled for the topic by
  how many relevant documents its sample found against that rate,
  phi_t = (sum_h k_th + 1) / (sum_h n_th p_h + 1): the prior mean m_th = p_h phi_t (clipped to
  [1e-4, 0.95]) with the weight of ``A_PRIOR`` = 2 documents, Beta(2 m, 2 (1 - m));
- the relevant documents among the U_th = N_th - n_th not judged: beta-binomial, mean U p-tilde
  with p-tilde = (k + 2 m) / (n + 2), variance U a b (a + b + U) / ((a + b)^2 (a + b + 1)),
  a = k + 2 m, b = n - k + 2 (1 - m);
- R-tilde_t = sum_h (k_th + U_th p-tilde_th): every judged relevant document counted once, the
  unjudged ones by their posterior mean (a stratum judged in full adds exactly its k);
- ebAP = statAP's numerator / R-tilde = statAP R-hat / R-tilde, at most 1, and 0 for a topic
  whose sample holds no relevant document (statAP is undefined there);
- its variance: statAP's (design) variance rescaled to the new denominator, (R-hat / R-tilde)^2
  Var(statAP), plus what the unjudged documents leave unknown, (ebAP / R-tilde)^2 sum_h
  Var(U_th) (an unjudged relevant document is most likely deep or unretrieved, where it moves AP
  by about -AP/R);
- ebMAP: the mean over the qrels' topics the run answered, 95% interval
  ebMAP +- 1.96 sqrt(sum_t Var_t) / T (clipped to [0, 1]): the judging error for *these* topics
  (add the topic variance for a population of topics).

What it rests on. A model, not the design alone: documents of one stratum are exchangeable
within a topic, and a topic's deep strata are as rich, relative to the other topics, as its
sample says (phi_t). The prior's weight (2) and the topic factor were chosen among three variants
on the two collections the validation measures (Robust 2003 and TREC 2011 Medical), with no
held-out collection; the interval is conservative there (its standard error 1.2-1.7 times the
estimate's spread). Its coverage, bias and width per design and budget are in
``benchmarks/README.md`` ("sampled judging"): an estimate from a design or budget outside those
is outside what was validated.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from metrics.io.prels import prels_of
from metrics.io.sampled import UNSAMPLED, SampledQrels
from metrics.io.tables import Run
from metrics.measures.statap import StatMAP, statap

__all__ = ["A_PRIOR", "EbMAP", "eb_counts", "ebap", "ebap_from_statap"]

F64 = npt.NDArray[np.float64]
A_PRIOR = 2.0
Z95 = 1.959963984540054


@dataclass(frozen=True)
class EbMAP:
    """ebAP per topic (the qrels' topics the run answered), its variance, ebMAP and its 95%
    interval."""

    per_topic: dict[str, float]
    variance: dict[str, float]
    mean: float
    interval: tuple[float, float]


def eb_counts(k: F64, n: F64, big_n: F64, a: float = A_PRIOR) -> tuple[F64, F64]:
    """R-tilde and the variance of the unjudged relevant count per topic (module docstring)
    from the (..., topics, strata) relevant, judged and pooled counts; (..., topics) each."""
    judged = n.sum(axis=-2)
    rate = np.where(judged > 0, k.sum(axis=-2) / np.where(judged > 0, judged, 1.0), 0.0)
    expected = (n * rate[..., None, :]).sum(axis=-1)
    phi = (k.sum(axis=-1) + 1.0) / (expected + 1.0)
    m = np.clip(rate[..., None, :] * phi[..., :, None], 1e-4, 0.95)
    alpha = k + a * m
    beta = n - k + a * (1.0 - m)
    unseen = np.maximum(big_n - n, 0.0)
    s = alpha + beta
    r_tilde = (k + unseen * alpha / s).sum(axis=-1)
    var_u = (unseen * alpha * beta * (s + unseen) / (s * s * (s + 1.0))).sum(axis=-1)
    return r_tilde, var_u


def ebap_from_statap(ap: F64, var: F64, r_hat: F64, r_tilde: F64, var_u: F64) -> tuple[F64, F64]:
    """ebAP and its variance from statAP, its variance and R-hat (NaN or R-hat 0: no sampled
    relevant document: 0 and 0), and :func:`eb_counts`; arrays that broadcast."""
    ok = np.isfinite(ap) & (r_hat > 0) & (r_tilde > 0)
    rt = np.where(ok, r_tilde, 1.0)
    scale = np.where(ok, r_hat, 0.0) / rt
    # at most 1, as AP is (statAP's numerator can pass R-tilde on a small sample)
    eb = np.where(ok, np.minimum(np.where(ok, ap, 0.0) * scale, 1.0), 0.0)
    v = np.where(ok, np.where(ok, var, 0.0) * scale**2 + (eb / rt) ** 2 * var_u, 0.0)
    return eb, v


def _strata_counts(qrels: SampledQrels) -> tuple[list[str], F64, F64, F64]:
    topics = list(qrels.topics)
    labels = sorted({s for docs in qrels.topics.values() for s, _ in docs.values()})
    col = {s: i for i, s in enumerate(labels)}
    k, n, big_n = (np.zeros((len(topics), len(labels))) for _ in range(3))
    for t, qid in enumerate(topics):
        for stratum, grade in qrels.topics[qid].values():
            h = col[stratum]
            big_n[t, h] += 1
            if grade != UNSAMPLED:
                n[t, h] += 1
                k[t, h] += grade > 0
    return topics, k, n, big_n


def ebap(qrels: SampledQrels, run: Run, *, stat: StatMAP | None = None) -> EbMAP:
    """ebAP of ``run`` on the topics of ``qrels`` it answered (0 where its sample holds no
    relevant document) and ebMAP with its 95% interval; the strata's rates are over every
    topic of ``qrels``. ``stat``: statAP of the same run on ``prels_of(qrels)``, when the caller
    has it already."""
    topics, k, n, big_n = _strata_counts(qrels)
    r_tilde, var_u = eb_counts(k, n, big_n)
    per_topic = (stat if stat is not None else statap(prels_of(qrels), run)).per_topic
    values: dict[str, float] = {}
    variances: dict[str, float] = {}
    for t, qid in enumerate(topics):
        if qid not in run:  # not averaged, as sample_eval.pl does not
            continue
        found = per_topic.get(qid)
        if found is None:
            values[qid], variances[qid] = 0.0, 0.0
            continue
        eb, v = ebap_from_statap(
            np.array(found.ap),
            np.array(found.variance),
            np.array(found.r_hat),
            r_tilde[t],
            var_u[t],
        )
        values[qid], variances[qid] = float(eb), float(v)
    if not values:
        return EbMAP({}, {}, math.nan, (math.nan, math.nan))
    mean = sum(values.values()) / len(values)
    half = Z95 * math.sqrt(max(sum(variances.values()), 0.0)) / len(values)
    return EbMAP(values, variances, mean, (max(0.0, mean - half), min(1.0, mean + half)))
