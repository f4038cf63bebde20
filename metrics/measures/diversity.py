"""Novelty and diversity measures over subtopic qrels, as TREC Web track's ``ndeval`` has them.

Input
-----
Subtopic qrels (ndeval's format): one ``topic subtopic docno grade`` line per judgment,
whitespace separated, exactly 4 fields, ``grade`` an integer. Blank lines and lines whose first
field starts with ``#`` are skipped, as :mod:`metrics.io` skips them in qrels. A grade <= 0 means
"not relevant to that subtopic"; a grade >= 1 is relevant and every positive grade counts the
same (ndeval: ``if (judgment > 1) judgment = 1; /* binary assessment only */``). With the
ir_measures parameter ``rel=R`` a subtopic judgment is relevant when its grade is >= R.
:func:`read_subtopic_qrels` reports every bad line (wrong field count, a grade that is not an
integer, the same (topic, subtopic, docno) judged twice, bad UTF-8) with its line number in one
:class:`~metrics.problems.InvalidInput`. ndeval itself rejects negative grades and
non-numeric topic and subtopic ids; here they are accepted (a negative grade is not relevant,
ids are strings).

Runs are read with :func:`metrics.io.read_run` and ranked as trec_eval ranks them (score
descending, ties by docno descending), which is ndeval's ``-traditional`` order (ndeval's own
default ranks by the rank column).

Notation, for one topic: S is the set of the topic's subtopics that have at least one relevant
document in the qrels (ndeval's "actual subtopics": a subtopic that never received a positive
judgment is ignored); every subtopic weighs the same, 1/|S| (ndeval has no weights).
``J(d, s)`` is 1 when document d is relevant to subtopic s (0 when unjudged). For the document at
rank r of a ranking, ``c(r, s) = sum_{i<r} J(d_i, s)`` counts the documents above it relevant to
s, and its novelty gain is

    g(r) = sum_{s in S} J(d_r, s) * (1 - alpha)^c(r, s)            (alpha in [0, 1], default 0.5)

Measures at cutoff k (ranks 1..k; a ranking shorter than k just stops):

- ``alpha-DCG@k`` (Clarke et al. 2008) = DCG(k) / II_D(k), with DCG(k) = sum_{r<=k} g(r) /
  log2(r + 1) and the "ideal ideal" II_D(k) = |S| * sum_{r<=k} (1 - alpha)^(r-1) / log2(r + 1)
  (every document relevant to every subtopic): ndeval's collection-independent normalisation.
- ``alpha-nDCG@k`` = DCG(k) / DCG*(k), DCG* the DCG of ndeval's greedy ideal ranking (below).
- ``ERR-IA@k`` (Chapelle et al. 2009, intent-aware as Agrawal et al. 2009, with ndeval's
  stopping probability alpha for a relevant document) = ERR(k) / II_E(k), with ERR(k) =
  sum_{r<=k} g(r) / r and II_E(k) = |S| * sum_{r<=k} (1 - alpha)^(r-1) / r. (The mean over
  subtopics of per-subtopic ERR, sum_r alpha (1-alpha)^c(r,s) J(d_r,s) / r, is alpha/|S| * ERR(k);
  ndeval's normalisation by the ideal ideal divides that constant out.)
- ``nERR-IA@k`` = ERR(k) / ERR*(k) over the same greedy ideal ranking.
- ``P-IA@k`` (intent-aware precision, Agrawal et al. 2009) = sum_{r<=k} sum_{s in S} J(d_r, s)
  / (k * |S|): the divisor is k even when fewer than k documents are retrieved.
- ``StRecall@k`` (ndeval ``strec@k``, subtopic recall; Zhai et al. 2003) = |{s in S: J(d_r, s)
  = 1 for some r <= k}| / |S|.

ndeval's conventions, reproduced here:

- The ideal ranking is greedy (the exact ideal is NP-hard): over the topic's judged documents
  (every docno in the topic's qrels, relevant or not), repeatedly take the document of largest
  gain g given those already taken; a tie goes to the largest docno (byte order, ``strcmp``).
  It depends on alpha and on ``rel``, not on the run.
- At k = 1 ndeval does not apply the ideal-ideal normalisation to ``alpha-DCG@1`` and
  ``ERR-IA@1`` (its normalising loop starts at the second rank), so those two are g(1), which
  may exceed 1 (up to |S|). Kept, so that figures equal ndeval's; ``alpha-nDCG@1`` and
  ``nERR-IA@1`` are unaffected (both numerator and denominator are raw).
- A topic with no relevant document for any subtopic (|S| = 0) scores 0 on every measure and
  counts in the mean.
- ``judged_only`` (ir_measures' parameter, as its pyndeval provider does it): the run's documents
  that are not judged for the topic (no qrels line for that docno and topic, at any grade) are
  removed before ranking, so judged documents move up.
- Which topics the mean covers: ndeval by default averages over the topics in both the qrels
  and the run, and with ``-c`` over every topic of the qrels, a qrels topic the run lacks scoring
  0. :func:`evaluate_diversity` does the latter by default (``complete=True``) and says which
  topics scored 0 for being missing (``missing_from_run``); run topics that have no subtopic
  qrels are never averaged (ndeval prints them as rows of zeros but leaves them out of the
  mean) and are listed in ``excluded``.

Not computed: NRBP, nNRBP and MAP-IA (they need the whole ranking, not the top k).

Names: ir_measures style ``alpha_nDCG@20``, ``alpha_nDCG(alpha=0.5)@20``, ``alpha_DCG@20``,
``ERR_IA@20``, ``nERR_IA@20``, ``P_IA@20``, ``StRecall@20`` (parameters ``alpha``, ``rel``,
``judged_only``; the Greek letter alpha for ``alpha``) and ndeval's column names
``alpha-nDCG@20``, ``alpha-DCG@20``, ``ERR-IA@20``, ``nERR-IA@20``, ``P-IA@20``, ``strec@20``;
case-insensitive.
See :func:`parse_diversity_measure`.

References
----------
- C. L. A. Clarke, M. Kolla, G. V. Cormack, O. Vechtomova, A. Ashkan, S. Büttcher and
  I. MacKinnon (2008), "Novelty and diversity in information retrieval evaluation", SIGIR
  (alpha-nDCG).
- O. Chapelle, D. Metzler, Y. Zhang and P. Grinspan (2009), "Expected reciprocal rank for graded
  relevance", CIKM (ERR, and its intent-aware form).
- R. Agrawal, S. Gollapudi, A. Halverson and S. Ieong (2009), "Diversifying search results",
  WSDM (intent-aware measures).
- C. Zhai, W. W. Cohen and J. Lafferty (2003), "Beyond independent relevance", SIGIR (subtopic
  recall).
- ndeval, the TREC Web track diversity evaluation tool (version 4.5, 2013), whose definitions and
  conventions this module follows; cross-checked with pyndeval and ir_measures in the tests.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from metrics.io import Run
from metrics.measures.diversity_names import (
    _USES_ALPHA,
    DEFAULT_MEASURES,
    DiversityMeasure,
    UnknownDiversityMeasure,
    _known_names,
    parse_diversity_measure,
)
from metrics.measures.subtopic_qrels import topic_sort_key

if TYPE_CHECKING:
    from metrics.measures.subtopic_qrels import SubtopicQrels


__all__ = [
    "DiversityResult",
    "evaluate_diversity",
]

I64 = npt.NDArray[np.int64]


F64 = npt.NDArray[np.float64]


Bytes = npt.NDArray[np.bytes_]


Bool = npt.NDArray[np.bool_]


def _greedy_ideal(rel: Bool, k: int, alpha: float) -> F64:
    """Gains g(1..k) of ndeval's greedy ideal ranking of one topic's judged documents.

    ``rel`` is (documents sorted by docno, subtopics). At each rank the untaken document of
    largest gain sum_s J(d, s) * w_s is taken (ties: the largest docno, i.e. the last index),
    then w_s *= (1 - alpha) for its subtopics. Loops over ranks (k is small) and subtopics,
    vectorised over documents. Ranks past the number of documents have gain 0.
    """
    n = rel.shape[0]
    out = np.zeros(k, dtype=np.float64)
    weights = np.ones(rel.shape[1], dtype=np.float64)
    taken = np.zeros(n, dtype=bool)
    for r in range(min(k, n)):
        # summed subtopic by subtopic, in subtopic order, as ndeval sums: a tie that is exact in
        # arithmetic may not be in floating point (alpha other than 0.5), and ndeval's ideal
        # depends on which way its rounding goes
        scores = np.zeros(n, dtype=np.float64)
        for j in range(rel.shape[1]):
            scores += np.where(rel[:, j], weights[j], 0.0)
        scores[taken] = -1.0
        best = float(scores.max())
        where = int(np.flatnonzero(scores == best)[-1])  # tie: largest docno
        taken[where] = True
        out[r] = best
        weights = np.where(rel[where], weights * (1.0 - alpha), weights)
    return out


def _gains(rel: Bool, alpha: float) -> F64:
    """g(r) for a (topics, ranks, subtopics) boolean array: novelty-discounted gains."""
    before = np.cumsum(rel, axis=1, dtype=np.int64) - rel
    disc = np.power(1.0 - alpha, before.astype(np.float64))
    out: F64 = np.where(rel, disc, 0.0).sum(axis=2)
    return out


def _ideal_ideal(k: int, alpha: float, discount: F64) -> F64:
    """sum_{r<=k} (1 - alpha)^(r-1) * discount(r) for every k (to be multiplied by |S|)."""
    geo = np.power(1.0 - alpha, np.arange(k, dtype=np.float64))
    out: F64 = np.cumsum(geo * discount[:k])
    return out


def _topk_rel(
    run: Run, qrels: SubtopicQrels, topics: Sequence[str], k: int, rel: int, judged_only: bool
) -> tuple[Bool, F64]:
    """J of the run's top k documents per topic (topics the run lacks: all False)."""
    smax = max((len(qrels.topics[t].subtopics) for t in topics), default=0)
    out = np.zeros((len(topics), k, max(smax, 1)), dtype=bool)
    nsub = np.zeros(len(topics), dtype=np.float64)
    order = run.order
    qindex = {q: i for i, q in enumerate(run.qids)}
    for ti, topic in enumerate(topics):
        tj = qrels.topics[topic]
        J = tj.relevant(rel)
        nsub[ti] = float(J.any(axis=0).sum())
        qi = qindex.get(topic)
        if qi is None or nsub[ti] == 0:
            continue
        rows = order[run.offsets[qi] : run.offsets[qi + 1]]
        if not judged_only:
            rows = rows[:k]
        docs = run.docids[rows]
        n = tj.docids.size
        at = np.searchsorted(tj.docids, docs)
        atc = np.minimum(at, n - 1)
        found = (at < n) & (tj.docids[atc] == docs)
        if judged_only:
            atc, found = atc[found][:k], found[found][:k]
        m = atc.size
        out[ti, :m, : J.shape[1]] = J[atc] & found[:, None]
    return out, nsub


def _compute(
    run: Run, qrels: SubtopicQrels, topics: Sequence[str], measures: Sequence[DiversityMeasure]
) -> dict[DiversityMeasure, F64]:
    """Per-topic values (in ``topics`` order) of every measure."""
    values: dict[DiversityMeasure, F64] = {}
    groups: dict[tuple[float, int, bool], list[DiversityMeasure]] = {}
    for m in measures:
        alpha = m.alpha if m.kind in _USES_ALPHA else 0.5
        groups.setdefault((alpha, m.rel, m.judged_only), []).append(m)
    ideal_cache: dict[tuple[str, float, int, int], F64] = {}
    for (alpha, rel, judged_only), ms in groups.items():
        K = max(m.cutoff for m in ms)
        J, nsub = _topk_rel(run, qrels, topics, K, rel, judged_only)
        ranks = np.arange(1, K + 1, dtype=np.float64)
        g = _gains(J, alpha)  # (topics, K)
        need_ideal = any(m.kind in ("alpha_nDCG", "nERR_IA") for m in ms)
        ideal = np.zeros((len(topics), K), dtype=np.float64)
        if need_ideal:
            for ti, topic in enumerate(topics):
                if nsub[ti] == 0:
                    continue
                key = (topic, alpha, rel, K)
                if key not in ideal_cache:
                    ideal_cache[key] = _greedy_ideal(qrels.topics[topic].relevant(rel), K, alpha)
                ideal[ti] = ideal_cache[key]
        has = nsub > 0
        safe = np.where(has, nsub, 1.0)
        for m in ms:
            k = m.cutoff
            if m.kind in ("alpha_DCG", "alpha_nDCG", "ERR_IA", "nERR_IA"):
                disc = 1.0 / np.log2(ranks + 1.0) if "DCG" in m.kind else 1.0 / ranks
                raw = (g[:, :k] * disc[:k]).sum(axis=1)
                if m.kind in ("alpha_DCG", "ERR_IA"):
                    # ndeval leaves rank 1 un-normalised (see the module docstring)
                    v = raw / (safe * _ideal_ideal(k, alpha, disc)[-1]) if k > 1 else raw
                else:
                    best = (ideal[:, :k] * disc[:k]).sum(axis=1)
                    v = np.divide(raw, best, out=np.zeros_like(raw), where=best > 0)
            elif m.kind == "P_IA":
                v = J[:, :k].sum(axis=(1, 2)) / (k * safe)
            else:  # StRecall
                v = J[:, :k].any(axis=1).sum(axis=1) / safe
            values[m] = np.where(has, v, 0.0).astype(np.float64)
    return values


@dataclass(frozen=True)
class DiversityResult:
    """Per-topic values and means of one run.

    ``topics`` are the topics the mean covers (ndeval's topic order); ``per_query[topic][name]``
    the values, ``mean[name]`` their arithmetic mean (``amean``), ``ci[name]`` a bootstrap
    interval when asked for. ``missing_from_run``: covered topics the run has no document for,
    scored 0. ``excluded``: run topics with no subtopic qrels, not averaged.
    """

    run: str
    measures: tuple[DiversityMeasure, ...]
    topics: tuple[str, ...]
    per_query: dict[str, dict[str, float]]
    mean: dict[str, float]
    missing_from_run: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()
    no_relevant: tuple[str, ...] = ()  # covered topics with no relevant subtopic: 0 everywhere
    complete: bool = True
    ci: dict[str, tuple[float, float]] | None = None
    ci_level: float | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self, *, per_query: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "run": self.run,
            "measures": [m.name for m in self.measures],
            "topics_averaged": list(self.topics),
            "averaged_over": "qrels topics" if self.complete else "qrels topics in the run",
            "missing_from_run_scored_0": list(self.missing_from_run),
            "excluded_run_topics_without_qrels": list(self.excluded),
            "topics_without_relevant_subtopic": list(self.no_relevant),
            "mean": dict(self.mean),
        }
        if self.ci is not None:
            out["ci"] = {k: list(v) for k, v in self.ci.items()}
            out["ci_level"] = self.ci_level
        if per_query:
            out["per_query"] = {t: dict(v) for t, v in self.per_query.items()}
        return out


def _as_measures(measures: Iterable[str | DiversityMeasure] | None) -> tuple[DiversityMeasure, ...]:
    items = DEFAULT_MEASURES if measures is None else measures
    out: list[DiversityMeasure] = []
    for m in items:
        dm = m if isinstance(m, DiversityMeasure) else parse_diversity_measure(m)
        if dm not in out:
            out.append(dm)
    if not out:
        raise UnknownDiversityMeasure(f"no measure given; known: {_known_names()}")
    return tuple(out)


def evaluate_diversity(
    subtopic_qrels: SubtopicQrels,
    run: Run | Mapping[str, Mapping[str, float]],
    measures: Iterable[str | DiversityMeasure] | None = None,
    *,
    complete: bool = True,
    ci_level: float | None = None,
    ci_resamples: int = 2000,
    ci_seed: int = 0,
) -> DiversityResult:
    """Evaluate one run on subtopic qrels; see the module docstring for the definitions.

    ``measures``: names (either style) or :class:`DiversityMeasure`; default
    :data:`DEFAULT_MEASURES`. ``complete=True`` (ndeval ``-c``) averages over every qrels topic,
    a topic the run lacks scoring 0; ``complete=False`` (ndeval's default) over the qrels topics
    the run has. Run topics without qrels are excluded either way. ``ci_level`` (e.g. 0.95) adds
    a percentile bootstrap interval of each mean (:func:`metrics.stats.intervals.bootstrap_ci`).
    """
    if not isinstance(run, Run):
        run = Run.from_dict(run)
    ms = _as_measures(measures)
    in_run = set(run.qids)
    qtopics = sorted(subtopic_qrels.topics, key=topic_sort_key)
    missing = tuple(t for t in qtopics if t not in in_run)
    topics = qtopics if complete else [t for t in qtopics if t in in_run]
    excluded = tuple(
        sorted((q for q in run.qids if q not in subtopic_qrels.topics), key=topic_sort_key)
    )
    values = _compute(run, subtopic_qrels, topics, ms)
    per_query = {t: {m.name: float(values[m][i]) for m in ms} for i, t in enumerate(topics)}
    mean = {m.name: (float(values[m].mean()) if topics else math.nan) for m in ms}
    no_rel = tuple(t for t in topics if subtopic_qrels.topics[t].actual_subtopics(1) == 0)
    ci: dict[str, tuple[float, float]] | None = None
    if ci_level is not None:
        from metrics.stats.intervals import bootstrap_ci  # lazily: keeps import light

        ci = {
            m.name: bootstrap_ci(values[m], level=ci_level, n_resamples=ci_resamples, seed=ci_seed)
            for m in ms
        }
    notes: list[str] = []
    if complete and missing:
        notes.append(f"{len(missing)} qrels topic(s) not in the run scored 0: {', '.join(missing)}")
    if excluded:
        notes.append(
            f"{len(excluded)} run topic(s) without subtopic qrels not averaged: "
            + ", ".join(excluded)
        )
    return DiversityResult(
        run=run.tag,
        measures=ms,
        topics=tuple(topics),
        per_query=per_query,
        mean=mean,
        missing_from_run=missing if complete else (),
        excluded=excluded,
        no_relevant=no_rel,
        complete=complete,
        ci=ci,
        ci_level=ci_level,
        notes=notes,
    )
