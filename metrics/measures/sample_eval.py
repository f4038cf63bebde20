r"""The inferred measures of NIST's ``sample_eval.pl`` (Yilmaz, Kanoulas & Aslam, SIGIR 2008),
computed as the script computes them, quirks included (issue 32, point 2).

Input: :class:`metrics.io.sampled.SampledQrels` (each pooled document's stratum and grade, -1:
pooled but not sampled) and a run. Per topic of the run that the qrels hold (the run's topic ids
with leading zeros removed, as the script does), ranked by score descending then docid
descending, to the first ``max_result_size`` (1000) documents:

- ``xinfAP`` (the script prints it as ``infAP``): at a relevant document (grade > 0) at rank k,
  with per stratum c the pooled documents n_c, sampled s_c and relevant r_c ranked above it and
  N = sum n_c, precision 1/k + (N/k) sum_c (n_c / N)(r_c + 1e-5)/(s_c + 3e-5); each stratum's
  sum of these over its relevant documents, divided by its sampled relevant count, weighted by
  its share of the estimated relevant count R = sum_c (sampled relevant * pooled / sampled);
- ``infNDCG``: sum_c n_c (the final counts) * DCG_c / s_c over the ideal DCG, whose relevant
  count per grade is estimated the same way and rounded to the nearest integer (gain = grade,
  discount log2(rank + 1); the grades in the *string* order the script sorts them; the ideal list
  stops after rank ``max_result_size`` in each grade, so a later grade still adds one term);
- ``iP@k`` (k = 10, 50, ``max_result_size``): the estimated relevant count in the top k,
  sum_c n_c (r_c + 1e-5)/(s_c + 3e-5), over k (with fewer than k ranked: the count at the last);
- ``inum_rel_ret`` (that count at the last rank), ``inum_rel`` (R), ``num_ret`` (the run's lines
  of the topic, uncapped);
- ``iprec@rec`` at recall 0, 0.1, ..., 1: interpolated on the estimated counts, walking the
  ranks from the last and consuming at most one recall level per rank, as the script does.

The mean of each is over the topics evaluated (the run's topics the qrels hold; a qrels topic the
run did not answer is not counted, unlike trec_eval's ``-c``); ``inum_rel_ret``, ``inum_rel`` and
``num_ret`` are summed. ``gains`` maps grades before anything else (the script's ``-G``).
Checked against ``sample_eval.pl`` run with Perl (``tests/metrics/test_sample_eval.py``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from metrics.io.sampled import UNSAMPLED, SampledQrels
from metrics.io.tables import Run

__all__ = ["CUTOFFS", "SampleEval", "sample_eval"]

EPS_REL, EPS_SAMPLED = 0.00001, 0.00003  # the script's smoothing constants
CUTOFFS = (10, 50)  # and max_result_size
RECALLS = tuple(i / 10 for i in range(11))


@dataclass(frozen=True)
class SampleEval:
    """Per topic and over all topics, each measure as ``sample_eval.pl`` prints it."""

    per_topic: dict[str, dict[str, float]]
    all: dict[str, float]


def sample_eval(
    qrels: SampledQrels,
    run: Run,
    *,
    gains: Mapping[int, int] | None = None,
    max_result_size: int = 1000,
    cutoffs: tuple[int, ...] = CUTOFFS,
) -> SampleEval:
    """``sample_eval.pl -q`` on ``qrels`` and ``run`` (see the module docstring); ``cutoffs``
    other than the script's 10 and 50 add their ``iP{k}`` (``max_result_size`` is always one)."""
    cutoffs = tuple(sorted({*cutoffs, max_result_size}))
    per_topic: dict[str, dict[str, float]] = {}
    curves: dict[str, tuple[list[float], float, float]] = {}
    by_stripped = {q.lstrip("0"): q for q in run.qids}
    for qid in sorted(by_stripped, key=_numeric):
        judged = qrels.topics.get(qid)
        if judged is None:
            continue
        docs = {d: (s, _mapped(g, gains)) for d, (s, g) in judged.items()}
        ranked = run.ranking(by_stripped[qid])
        values, curve = _topic(docs, ranked, cutoffs, max_result_size)
        per_topic[qid] = values
        curves[qid] = (curve, values["inum_rel"], values["inum_rel_ret"])
    n = len(per_topic)
    out: dict[str, float] = {}
    for name in ("infAP", "infNDCG", *(f"iP{k}" for k in cutoffs)):
        out[name] = sum(v[name] for v in per_topic.values()) / n if n else math.nan
    for name in ("inum_rel_ret", "inum_rel", "num_ret"):
        out[name] = sum(v[name] for v in per_topic.values())
    levels = [0.0] * len(RECALLS)
    for curve, rel, rel_ret in curves.values():
        for i, p in enumerate(_interpolated(curve, rel, rel_ret)):
            levels[i] += p
    for i, r in enumerate(RECALLS):
        out[f"iprec@rec{r:.2f}"] = levels[i] / n if n else math.nan
    return SampleEval(per_topic, out)


def _numeric(qid: str) -> tuple[float, str]:
    try:
        return float(qid), qid
    except ValueError:
        return 0.0, qid  # Perl's <=> takes a non-numeric id as 0


def _mapped(grade: int, gains: Mapping[int, int] | None) -> int:
    if gains is None or grade == UNSAMPLED:
        return grade
    return gains.get(grade, grade)


def _topic(
    docs: Mapping[str, tuple[str, int]],
    ranked: list[str],
    cutoffs: tuple[int, ...],
    max_result_size: int,
) -> tuple[dict[str, float], list[float]]:
    strata = sorted({s for s, _ in docs.values()})
    pooled = dict.fromkeys(strata, 0)
    sampled = dict.fromkeys(strata, 0)
    sampled_rel = dict.fromkeys(strata, 0)
    per_grade: dict[str, dict[int, int]] = {s: {} for s in strata}
    for s, g in docs.values():
        pooled[s] += 1
        if g >= 0:
            sampled[s] += 1
        if g > 0:
            sampled_rel[s] += 1
            per_grade[s][g] = per_grade[s].get(g, 0) + 1
    num_rels = sum(sampled_rel[s] * pooled[s] / sampled[s] for s in strata if sampled[s] != 0)
    grade_rels: dict[int, float] = {}
    for s in strata:
        for g, c in per_grade[s].items():
            grade_rels[g] = grade_rels.get(g, 0.0) + c * pooled[s] / sampled[s]
    ideal = _ideal_dcg(grade_rels, max_result_size)

    seen = dict.fromkeys(strata, 0)  # pooled documents ranked so far
    seen_sampled = dict.fromkeys(strata, 0)
    seen_rel = dict.fromkeys(strata, 0)
    sap = dict.fromkeys(strata, 0.0)
    gain = dict.fromkeys(strata, 0.0)
    depth = 0
    curve: list[float] = []
    precision: dict[int, float] = {}
    rel_ret = 0.0
    for rank, doc in enumerate(ranked[:max_result_size], start=1):
        stratum, grade = docs.get(doc, ("", -1))
        if grade > 0:
            above = 0.0
            if depth != 0:
                for s in strata:
                    share = seen[s] / depth
                    if share != 0:
                        above += share * (seen_rel[s] + EPS_REL) / (seen_sampled[s] + EPS_SAMPLED)
            sap[stratum] += 1 / rank + (depth / rank) * above
            seen_rel[stratum] += 1
            gain[stratum] += grade / (math.log(rank + 1) / math.log(2))
        if doc in docs:
            depth += 1
            seen[stratum] += 1
            if grade >= 0:
                seen_sampled[stratum] += 1
        rel_ret = 0.0
        for s in strata:
            rel_ret += seen[s] * (seen_rel[s] + EPS_REL) / (seen_sampled[s] + EPS_SAMPLED)
        curve.append(rel_ret)
        if rank in cutoffs:
            precision[rank] = rel_ret / rank
    for k in cutoffs:
        precision.setdefault(k, rel_ret / k)
    ap = 0.0
    for s in strata:
        if sampled[s] != 0 and num_rels != 0:
            estimated = sampled_rel[s] * pooled[s] / sampled[s]
            within = sap[s] / sampled_rel[s] if sampled_rel[s] != 0 else 0.0
            ap += estimated / num_rels * within
    dcg = 0.0
    for s in strata:
        if depth != 0 and seen_sampled[s] != 0:
            dcg += seen[s] / depth * gain[s] / seen_sampled[s]
    ndcg = depth * dcg / ideal if ideal != 0 else 0.0
    values = {
        "infAP": ap,
        "infNDCG": ndcg,
        **{f"iP{k}": precision[k] for k in cutoffs},
        "inum_rel_ret": rel_ret,
        "inum_rel": num_rels,
        "num_ret": float(len(ranked)),
    }
    return values, curve


def _ideal_dcg(grade_rels: Mapping[int, float], max_result_size: int) -> float:
    """The ideal DCG from the estimated relevant count per grade, each rounded to the nearest
    integer, the grades in decreasing *string* order (Perl's ``reverse sort keys``), the list
    of each grade stopping once a rank reaches ``max_result_size``."""
    total = 0.0
    start = 0
    for g in sorted(grade_rels, key=str, reverse=True):
        count = int(grade_rels[g] + 0.5)
        r = start + 1
        while r <= start + count:
            total += g / (math.log(r + 1) / math.log(2))
            if r >= max_result_size:
                break
            r += 1
        start += count
    return total


def _interpolated(curve: list[float], num_rels: float, rel_ret: float) -> list[float]:
    """Interpolated precision at the 11 recall levels, as the script walks the ranks."""
    cuts = [r * num_rels for r in RECALLS]
    out = [0.0] * len(cuts)
    current = len(cuts) - 1
    while current >= 0 and cuts[current] > rel_ret:
        current -= 1
    best = 0.0
    for rank in range(len(curve), 0, -1):
        prec = curve[rank - 1] / rank
        best = max(best, prec)
        if current >= 0 and cuts[current] > curve[rank - 1]:
            out[current] += best
            current -= 1
    while current >= 0:
        out[current] += best
        current -= 1
    return out
