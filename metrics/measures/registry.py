"""The measure registry: one entry per measure family, read by every part of ``metrics``.

An entry (:class:`Family`) declares everything the package needs to know about a family:

- its names: the canonical ir_measures spelling (``nDCG``; with a cutoff ``nDCG@10``), other
  accepted ir_measures-style spellings (``aliases``, lower case), and trec_eval's names without
  and with a cutoff (``trec="ndcg"``, ``trec_cut="ndcg_cut"`` for ``ndcg_cut_10``);
- its parameters: the cutoff k (``cutoff`` is "required" (P@k), "optional" (AP, AP@k) or "none"
  (Rprec); an integer rank, or a real for ``cutoff_kind="float"`` (IPrec@0.5)); ``params``, the
  family's own (:class:`Param`: ``nDCG(dcg='exp-log2')``, ``SetF(beta=0.5)``), passed to its
  function as keyword arguments; and, when ``uses_level``, ``rel=`` (``P(rel=2)@10``), the
  measure's own relevance level instead of the evaluator's, applied by the evaluator;
- trec_eval's view: ``trec_raw`` names the parameter that the text after trec_eval's root sets
  (``ndcg.1=3,2=9``), ``trec_default_cutoffs`` the cutoffs a bare root stands for (``P``), and
  :data:`TREC_ORDER` the order trec_eval prints its measures in;
- how it aggregates: ``micro`` (a ratio of per-query counts, so micro-averaging is defined and
  the upper treatment keeps the optimistic ranking's numerator and denominator), ``count``
  (summed, like trec_eval's num_* measures) and ``geometric`` (the geometric mean of
  max(value, 0.00001), trec_eval's gm_map); ``per_query`` False: trec_eval prints no per-query
  line for it (gm_map, num_q);
- ``treatments``: at a cutoff, honest mode reports it under the three treatments of unjudged
  documents (lower bound, condensed ranking, upper bound; :mod:`metrics.evaluation.evaluator`);
- ``companions``: ``(role, family)`` pairs that honest mode adds at the same cutoff (Judged@k
  beside every top-k measure, ceiling@k beside R@k);
- for leave-one-out (:mod:`metrics.bias`), which scores rankings that keep only the rows found in
  the qrels, with their true ranks and retrieved counts: ``cuttable`` (the value at cutoff k
  ignores rows ranked below k, so those rows are dropped first), ``reads_ideal`` (the ideal
  gains are built for it) and ``loo_complement`` (computed there as 1 - that family's value,
  because the rows it counts are the ones not kept);
- ``compute``: the function of :mod:`metrics.measures`, ``(ranked, k, **params) -> (value, num,
  den)``;
- ``treat_full``: without a cutoff, honest mode still reports Judged at the run's depth beside
  it and its condensed and upper treatments over the whole ranking (AP, RR, nDCG, Rprec, bpref);
- ``loo``: False for a family that leave-one-out cannot score (it reads unjudged rows in a way
  the kept rows do not show); the analyses there refuse it;
- ``graded_unless_rel``: ir_measures' convention for RBP: graded (gain = grade) as named, binary
  at the level when ``rel=`` is given; its function takes ``binary`` (set from ``rel=``), and
  :attr:`metrics.measures.names.Measure.relevance` says which;
- ``coverage``: the family describes the judgments (how much of a ranking is judged, what recall
  the qrels allow, what unjudged rows could add), not the ranking's effectiveness: Judged,
  Unjudged, Unj, NumNonrelJudgedRet, ceiling, RBPResid. It is never tested for significance
  against a baseline nor marked "best" in an export.

Adding a measure family:

1. Write its function in :mod:`metrics.measures`: ``def name(r: Ranked, k: int | None) ->
   Result``, vectorised over all queries, with a docstring giving its formula and reference.
   Read relevant rows through ``r.rel_*`` (most measures need nothing else). A measure reading
   unjudged rows other than through ``r.pos``, ``r.num_ret`` or ``r.top`` cannot be scored by
   leave-one-out: give it a ``loo_complement`` or leave it out of the analyses there.
2. Add one :class:`Family` entry to ``FAMILIES`` below (order: the order measures are listed in
   error messages). Name parsing (:func:`metrics.measures.names.parse_measure`, both styles, the
   did-you-mean message), the Evaluator, honest mode and leave-one-out read it from here; the
   module checks the entries' consistency on import.
3. Add tests: a hand-worked example in ``tests/metrics/test_measures.py``, a cross-check against
   pytrec_eval if trec_eval has the measure (``tests/metrics/test_pytrec_eval_property.py``), and
   for a cuttable or treated family a leave-one-out check (``tests/metrics/test_bias.py``).

Where else a measure is defined, and why:

- **PPI's forms** (:mod:`metrics.sampling.forms` and :mod:`metrics.sampling.gradients`): P@k,
  R@k, nDCG@k and AP once more, as functions of every pool item's (corrected, fractional) label
  functionals f_h(y) = [y >= h], with their derivative per item. Prediction-powered inference
  needs per-document gradients: its variance is that of a linearisation (the sum over sampled
  items of the gradient times the residual), its model-assisted correction is taken along the
  gradient, and its ``active`` design samples items by their influence. The functions here
  compute values over one qrels, vectorised over queries, and give no derivative; so PPI keeps
  its own forms, which must agree with trec_eval on integer labels
  (``tests/metrics/test_ppi.py`` checks the full-judgment values against pytrec_eval).
- **Diversity measures** (:mod:`metrics.measures.diversity`): alpha-nDCG, ERR-IA, P-IA and
  StRecall read subtopic qrels, which a :class:`~metrics.measures.ranked.Ranked` does not
  hold; they are parsed by the same name grammar (:mod:`metrics.measures.grammar`).
- **Preference measures** (:data:`metrics.measures.prefs_registry.PREFS_MEASURES`, functions
  in :mod:`metrics.measures.prefs`): they read preference judgments, not grades.
- **Inferred measures** (:data:`metrics.measures.sampled_registry.SAMPLED_MEASURES`, computed
  by :mod:`metrics.measures.sample_eval`): xinfAP, infNDCG, iP@k and the estimated counts read
  sampled qrels' strata (pooled, sampled and relevant counts per stratum above each rank),
  which a :class:`~metrics.measures.ranked.Ranked` does not hold. trec_eval's ``infAP`` (one
  uniform sample, the -1 grades) is a family here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from metrics.measures import basic as ms
from metrics.measures import gain as mg
from metrics.measures import trec as mt
from metrics.measures.ranked import Ranked, Result


class MeasureLike(Protocol):
    """What :func:`compute` reads of a parsed measure (:class:`metrics.measures.names.Measure`;
    named by its attributes here, since the names module reads this registry)."""

    @property
    def family(self) -> str: ...

    @property
    def cutoff(self) -> int | float | None: ...

    @property
    def kwargs(self) -> dict[str, Any]: ...


__all__ = [
    "FAMILIES",
    "TREC_ORDER",
    "Cutoff",
    "Family",
    "MeasureFn",
    "MeasureLike",
    "Param",
    "compute",
]

Cutoff = Literal["required", "optional", "none"]
MeasureFn = Callable[..., Result]
"""``(ranked, k, **params) -> Result``: k is the cutoff (None: none), params the family's own."""

# trec_eval's measure table (measures.c), the order it prints measures in; roots of trec_eval
# measures we do not have are listed too, so the order stays trec_eval's as families are added.
TREC_ORDER: tuple[str, ...] = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
    "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref",
    "Rprec_mult", "utility", "11pt_avg", "binG", "G", "dcg", "ideal_dcg", "ndcg", "ndcg_rel",
    "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success", "set_P", "set_relative_P",
    "set_recall", "set_map", "set_F", "num_nonrel_judged_ret", "prefs_num_prefs_poss",
    "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair", "prefs_avgjg",
    "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret",
    "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp",
    "map_avgjg", "P_avgjg",
    "Rprec_mult_avgjg", "yaap", "rbp", "rbp_resid", "unj",
)  # fmt: skip
TREC_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)  # trec_eval's default cutoffs


@dataclass(frozen=True)
class Param:
    """A family's own parameter: ``parse`` reads its text (raising ``ValueError`` with the
    reason) into a hashable value; a measure keeps only the parameters that differ from
    ``default``."""

    name: str
    parse: Callable[[str], Any]
    default: Any
    doc: str


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
    params: tuple[Param, ...] = ()
    uses_level: bool = True
    cutoff_kind: Literal["int", "float"] = "int"
    trec_raw: str | None = None
    trec_default_cutoffs: tuple[int | float, ...] = ()
    geometric: bool = False
    per_query: bool = True
    loo: bool = True
    treat_full: bool = False
    graded_unless_rel: bool = False
    coverage: bool = False


_JUDGED = ("judged", "Judged")
_GAINS = Param("gains", mg.parse_gains, "", "trec_eval gain map level=gain,... (1=3,2=9)")
_RBP_PARAMS = Param(
    "params", mg.parse_rbp_params, "", "trec_eval p=0.9,level=gain,... (p: persistence)"
)


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
        assert f.trec_raw is None or f.trec_raw in {p.name for p in f.params}, f.name
        assert not f.trec_default_cutoffs or f.trec_cut, f.name
        assert "rel" not in {p.name for p in f.params}, f"{f.name}: rel is the evaluator's"
        assert not f.graded_unless_rel or f.uses_level, f"{f.name}: binary needs rel="
        for root in (f.trec, f.trec_cut):
            assert root is None or root in TREC_ORDER, f"{f.name}: {root} not in TREC_ORDER"
    return out


FAMILIES: dict[str, Family] = _registry(
    Family(
        "P",
        ms.precision,
        "required",
        "precision at k: rel in top k / k",
        trec_cut="P",
        trec_default_cutoffs=TREC_CUTOFFS,
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
        trec_default_cutoffs=TREC_CUTOFFS,
        aliases=("recall",),
        micro=True,
        treatments=True,
        companions=(_JUDGED, ("ceiling", "ceiling")),
        cuttable=True,
    ),
    Family(
        "ceiling",
        ms.ceiling,
        "required",
        "achievable recall: min(k,R)/R",
        micro=True,
        coverage=True,
    ),
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
        treat_full=True,
    ),
    Family(
        "AP",
        ms.average_precision,
        "optional",
        "average precision",
        trec="map",
        trec_cut="map_cut",
        trec_default_cutoffs=TREC_CUTOFFS,
        aliases=("map",),
        treatments=True,
        companions=(_JUDGED,),
        cuttable=True,
        treat_full=True,
    ),
    Family(
        "Rprec",
        ms.r_precision,
        "none",
        "precision at rank R",
        trec="Rprec",
        aliases=("r-prec", "rprecision", "r-precision"),
        micro=True,
        treat_full=True,
    ),
    Family(
        "nDCG",
        ms.ndcg,
        "optional",
        "normalised DCG",
        trec="ndcg",
        trec_cut="ndcg_cut",
        trec_default_cutoffs=TREC_CUTOFFS,
        uses_level=False,
        treatments=True,
        companions=(_JUDGED,),
        cuttable=True,
        reads_ideal=True,
        treat_full=True,
        params=(
            Param("dcg", mg.parse_dcg, "log2", "log2: gain = grade; exp-log2: 2^grade-1"),
            _GAINS,
        ),
        trec_raw="gains",
    ),
    Family("Bpref", ms.bpref, "none", "binary preference", trec="bpref", treat_full=True),
    Family(
        "Judged",
        ms.judged,
        "optional",
        "judged fraction of top k",
        micro=True,
        cuttable=True,
        uses_level=False,
        coverage=True,
    ),
    Family(
        "Unjudged",
        ms.unjudged,
        "optional",
        "unjudged fraction of top k: unjudged in top k / min(k, retrieved) (Unj@k divides by k)",
        micro=True,
        cuttable=True,
        loo_complement="Judged",
        uses_level=False,
        coverage=True,
    ),
    Family("infAP", ms.infap, "none", "inferred AP (Yilmaz & Aslam)", trec="infAP"),
    Family(
        "Success",
        ms.success,
        "required",
        "1 if a rel doc in top k",
        trec_cut="success",
        trec_default_cutoffs=(1, 5, 10),
        micro=True,
        treatments=True,
        companions=(_JUDGED,),
        cuttable=True,
        aliases=("hit_rate",),
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
        uses_level=False,
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
    Family(
        "NumQ",
        ms.num_q,
        "none",
        "queries evaluated",
        trec="num_q",
        count=True,
        uses_level=False,
        per_query=False,
    ),
    Family(
        "GMAP",
        ms.average_precision,
        "none",
        "geometric mean of AP over queries",
        trec="gm_map",
        geometric=True,
        per_query=False,
    ),
    Family(
        "GMBpref",
        ms.bpref,
        "none",
        "geometric mean of bpref over queries",
        trec="gm_bpref",
        geometric=True,
        per_query=False,
    ),
    # trec_eval's set and trec-only measures (measures_trec.py)
    Family("SetP", mt.set_precision, "none", "set precision: rr / ret", trec="set_P", micro=True),
    Family("SetR", mt.set_recall, "none", "set recall: rr / R", trec="set_recall", micro=True),
    Family(
        "SetRelP",
        mt.set_relative_precision,
        "none",
        "relative set precision: rr / min(ret, R)",
        trec="set_relative_P",
        micro=True,
    ),
    Family("SetAP", mt.set_average_precision, "none", "set AP: rr^2 / (ret R)", trec="set_map"),
    Family(
        "SetF",
        mt.set_f,
        "none",
        "set F: (beta + 1) P R / (beta P + R), P = SetP, R = SetR",
        trec="set_F",
        params=(Param("beta", mt.parse_beta, 1.0, "weight of R against P (unsquared)"),),
        trec_raw="beta",
    ),
    Family(
        "RelP",
        mt.relative_precision,
        "required",
        "relative precision at k: rel in top k / min(k, R)",
        trec_cut="relative_P",
        trec_default_cutoffs=TREC_CUTOFFS,
        micro=True,
        cuttable=True,
    ),
    Family(
        "RprecMult",
        mt.rprec_mult,
        "required",
        "precision at rank (long)(x R + 0.9)",
        trec_cut="Rprec_mult",
        cutoff_kind="float",
        trec_default_cutoffs=mt.RPREC_MULT_CUTOFFS,
        micro=True,
    ),
    Family(
        "IPrec",
        mt.iprec,
        "required",
        "interpolated precision at recall x",
        trec_cut="iprec_at_recall",
        cutoff_kind="float",
        trec_default_cutoffs=mt.IPREC_CUTOFFS,
    ),
    Family(
        "IPrec11pt",
        mt.iprec_11pt,
        "none",
        "mean interpolated precision over recall levels (default 0, 0.1, ..., 1)",
        trec="11pt_avg",
        params=(Param("levels", mt.parse_levels, mt.DEFAULT_11PT_LEVELS, "recall levels"),),
        trec_raw="levels",
    ),
    Family(
        "Utility",
        mt.utility,
        "none",
        "a rr + b (ret - rr) + c (R - rr) + d (N + rr - ret - R)",
        trec="utility",
        params=(Param("coeffs", mt.parse_coeffs, mt.DEFAULT_UTILITY, "a,b,c,d"),),
        trec_raw="coeffs",
    ),
    Family(
        "NumNonrelJudgedRet",
        mt.num_nonrel_judged_ret,
        "none",
        "judged non-relevant retrieved",
        trec="num_nonrel_judged_ret",
        micro=True,
        count=True,
        coverage=True,
    ),
    Family(
        "Unj",
        mt.unj,
        "required",
        "unjudged in top k / k (trec_eval unj; Unjudged@k divides by min(k, retrieved))",
        trec_cut="unj",
        trec_default_cutoffs=(5, 10, 20),
        micro=True,
        cuttable=True,
        uses_level=False,
        coverage=True,
    ),
    # graded-gain measures (measures_gain.py)
    Family(
        "nDCGRel",
        mg.ndcg_rel,
        "none",
        "nDCG averaged over the positive-gain documents (trec_eval ndcg_rel)",
        trec="ndcg_rel",
        params=(_GAINS,),
        trec_raw="gains",
        uses_level=False,
        reads_ideal=True,
    ),
    Family(
        "RnDCG",
        mg.rndcg,
        "none",
        "nDCG averaged at the ideal gain changes (trec_eval Rndcg)",
        trec="Rndcg",
        params=(_GAINS,),
        trec_raw="gains",
        reads_ideal=True,
    ),
    Family(
        "G",
        mg.g_measure,
        "none",
        "normalised gain G (trec_eval G)",
        trec="G",
        params=(_GAINS,),
        trec_raw="gains",
        uses_level=False,
        reads_ideal=True,
    ),
    Family("binG", mg.bin_g, "none", "binary G (trec_eval binG)", trec="binG"),
    Family(
        "ERR",
        mg.err,
        "optional",
        "expected reciprocal rank (Chapelle et al. 2009; gdeval)",
        params=(Param("max_grade", mg.parse_max_grade, 4, "highest grade (gdeval: 4)"),),
        uses_level=False,
        treatments=True,
        companions=(_JUDGED,),
        cuttable=True,
    ),
    Family(
        "RBP",
        mg.rbp,
        "optional",
        "rank-biased precision (ir_measures RBP): graded, binary with rel=",
        params=(Param("p", mg.parse_p, 0.8, "persistence"),),
        graded_unless_rel=True,
        treatments=True,
        companions=(_JUDGED,),
        cuttable=True,
    ),
    Family(
        "RBPTrec",
        mg.rbp_trec,
        "none",
        "rank-biased precision with trec_eval's gains (trec_eval rbp)",
        trec="rbp",
        params=(_RBP_PARAMS,),
        trec_raw="params",
        uses_level=False,
        reads_ideal=True,  # the highest grade scales the gains
    ),
    Family(
        "RBPResid",
        mg.rbp_resid,
        "none",
        "RBP residual: the most unjudged rows could add (trec_eval rbp_resid)",
        trec="rbp_resid",
        params=(_RBP_PARAMS,),
        trec_raw="params",
        uses_level=False,
        coverage=True,
    ),
)


def compute(measure: MeasureLike, r: Ranked) -> Result:
    """Per-query ``(value, numerator, denominator)`` of ``measure`` over ``r``.

    For ratio-of-counts measures (``micro`` families: P, R, ceiling, Rprec, Judged, Unjudged,
    Success, Num*) the value is numerator / denominator (0 when the denominator is 0) and
    micro-averaging is sum(numerator) / sum(denominator). For the others numerator = value,
    denominator = 1.
    """
    return FAMILIES[measure.family].compute(r, measure.cutoff, **measure.kwargs)
