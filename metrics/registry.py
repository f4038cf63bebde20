"""The measure registry: one entry per measure family, read by every part of ``metrics``.

An entry (:class:`Family`) declares everything the package needs to know about a family:

- its names: the canonical ir_measures spelling (``nDCG``; with a cutoff ``nDCG@10``), other
  accepted ir_measures-style spellings (``aliases``, lower case), and trec_eval's names without
  and with a cutoff (``trec="ndcg"``, ``trec_cut="ndcg_cut"`` for ``ndcg_cut_10``);
- its parameter, the cutoff k: ``cutoff`` is "required" (P@k), "optional" (AP, AP@k) or "none"
  (Rprec). The relevance level is the evaluator's setting, shared by every measure;
- how it aggregates: ``micro`` (a ratio of per-query counts, so micro-averaging is defined and
  the upper treatment keeps the optimistic ranking's numerator and denominator) and ``count``
  (summed, like trec_eval's num_* measures);
- ``treatments``: at a cutoff, honest mode reports it under the three treatments of unjudged
  documents (lower bound, condensed ranking, upper bound; :mod:`metrics.evaluator`);
- ``companions``: ``(role, family)`` pairs that honest mode adds at the same cutoff (Judged@k
  beside every top-k measure, ceiling@k beside R@k);
- for leave-one-out (:mod:`metrics.bias`), which scores rankings that keep only the rows found in
  the qrels, with their true ranks and retrieved counts: ``cuttable`` (the value at cutoff k
  ignores rows ranked below k, so those rows are dropped first), ``reads_ideal`` (the ideal
  gains are built for it) and ``loo_complement`` (computed there as 1 - that family's value,
  because the rows it counts are the ones not kept);
- ``compute``: the function of :mod:`metrics.measures`, ``(ranked, k) -> (value, num, den)``.

Adding a measure family:

1. Write its function in :mod:`metrics.measures`: ``def name(r: Ranked, k: int | None) ->
   Result``, vectorised over all queries, with a docstring giving its formula and reference.
   Read relevant rows through ``r.rel_*`` (most measures need nothing else). A measure reading
   unjudged rows other than through ``r.pos``, ``r.num_ret`` or ``r.top`` cannot be scored by
   leave-one-out: give it a ``loo_complement`` or leave it out of the analyses there.
2. Add one :class:`Family` entry to ``FAMILIES`` below (order: the order measures are listed in
   error messages). Name parsing (:func:`metrics.names.parse_measure`, both styles, the
   did-you-mean message), the Evaluator, honest mode and leave-one-out read it from here; the
   module checks the entries' consistency on import.
3. Add tests: a hand-worked example in ``tests/metrics/test_measures.py``, a cross-check against
   pytrec_eval if trec_eval has the measure (``tests/metrics/test_pytrec_eval_property.py``), and
   for a cuttable or treated family a leave-one-out check (``tests/metrics/test_bias.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from metrics import measures as ms
from metrics.measures import Ranked, Result

if TYPE_CHECKING:
    from metrics.names import Measure

__all__ = ["FAMILIES", "Cutoff", "Family", "MeasureFn", "compute"]

Cutoff = Literal["required", "optional", "none"]
MeasureFn = Callable[[Ranked, "int | None"], Result]


@dataclass(frozen=True)
class Family:
    """One measure family; see the module docstring for what each field means."""

    name: str
    compute: MeasureFn
    cutoff: Cutoff
    doc: str
    trec: str | None = None
    trec_cut: str | None = None
    aliases: tuple[str, ...] = ()
    micro: bool = False
    count: bool = False
    treatments: bool = False
    companions: tuple[tuple[str, str], ...] = ()
    cuttable: bool = False
    reads_ideal: bool = False
    loo_complement: str | None = None


_JUDGED = ("judged", "Judged")


def _registry(*families: Family) -> dict[str, Family]:
    """The families by canonical name, after checking that the entries fit together."""
    out = {f.name: f for f in families}
    assert len(out) == len(families), "two families share a name"
    spellings = [f.name.lower() for f in families] + [a for f in families for a in f.aliases]
    assert len(set(spellings)) == len(spellings), "two families share a spelling"
    assert all(a == a.lower() for a in spellings), "aliases are lower case"
    trec = [t.lower() for f in families for t in (f.trec, f.trec_cut) if t]
    assert len(set(trec)) == len(trec), "two families share a trec_eval name"
    for f in families:
        takes_k = f.cutoff != "none"
        assert takes_k or not (f.trec_cut or f.treatments or f.companions or f.cuttable), f.name
        assert f.cutoff != "required" or f.trec is None, f.name
        assert not f.treatments or f.cuttable, f"{f.name}: treatments cut the ranking at k"
        for _, comp in f.companions:
            assert out[comp].cutoff != "none", f"{f.name}: companion {comp} takes the cutoff"
        assert f.loo_complement is None or f.loo_complement in out, f.name
    return out


FAMILIES: dict[str, Family] = _registry(
    Family(
        "P",
        ms.precision,
        "required",
        "precision at k: rel in top k / k",
        trec_cut="P",
        aliases=("precision",),
        micro=True,
        treatments=True,
        companions=(_JUDGED,),
        cuttable=True,
    ),
    Family(
        "R",
        ms.recall,
        "required",
        "recall at k: rel in top k / R",
        trec_cut="recall",
        aliases=("recall",),
        micro=True,
        treatments=True,
        companions=(_JUDGED, ("ceiling", "ceiling")),
        cuttable=True,
    ),
    Family("ceiling", ms.ceiling, "required", "achievable recall: min(k,R)/R", micro=True),
    Family(
        "RR",
        ms.reciprocal_rank,
        "optional",
        "1 / rank of first rel",
        trec="recip_rank",
        aliases=("mrr",),
        treatments=True,
        companions=(_JUDGED,),
        cuttable=True,
    ),
    Family(
        "AP",
        ms.average_precision,
        "optional",
        "average precision",
        trec="map",
        trec_cut="map_cut",
        aliases=("map",),
        treatments=True,
        companions=(_JUDGED,),
        cuttable=True,
    ),
    Family(
        "Rprec",
        ms.r_precision,
        "none",
        "precision at rank R",
        trec="Rprec",
        aliases=("r-prec", "rprecision"),
        micro=True,
    ),
    Family(
        "nDCG",
        ms.ndcg,
        "optional",
        "normalised DCG",
        trec="ndcg",
        trec_cut="ndcg_cut",
        treatments=True,
        companions=(_JUDGED,),
        cuttable=True,
        reads_ideal=True,
    ),
    Family("Bpref", ms.bpref, "none", "binary preference", trec="bpref"),
    Family("Judged", ms.judged, "optional", "judged fraction of top k", micro=True, cuttable=True),
    Family(
        "Unjudged",
        ms.unjudged,
        "optional",
        "unjudged fraction of top k",
        micro=True,
        cuttable=True,
        loo_complement="Judged",
    ),
    Family("infAP", ms.infap, "none", "inferred AP (Yilmaz & Aslam)", trec="infAP"),
    Family(
        "Success",
        ms.success,
        "required",
        "1 if a rel doc in top k",
        trec_cut="success",
        micro=True,
        treatments=True,
        companions=(_JUDGED,),
        cuttable=True,
    ),
    Family(
        "NumRel",
        ms.num_rel,
        "none",
        "relevant documents, R",
        trec="num_rel",
        micro=True,
        count=True,
    ),
    Family(
        "NumRet",
        ms.num_ret,
        "none",
        "retrieved documents",
        trec="num_ret",
        micro=True,
        count=True,
    ),
    Family(
        "NumRelRet",
        ms.num_rel_ret,
        "none",
        "relevant retrieved",
        trec="num_rel_ret",
        micro=True,
        count=True,
    ),
)


def compute(measure: Measure, r: Ranked) -> Result:
    """Per-query ``(value, numerator, denominator)`` of ``measure`` over ``r``.

    For ratio-of-counts measures (``micro`` families: P, R, ceiling, Rprec, Judged, Unjudged,
    Success, Num*) the value is numerator / denominator (0 when the denominator is 0) and
    micro-averaging is sum(numerator) / sum(denominator). For the others numerator = value,
    denominator = 1.
    """
    return FAMILIES[measure.family].compute(r, measure.cutoff)
