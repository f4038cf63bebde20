"""The preference measures of trec_eval (``-R prefs`` / ``-R qrels_prefs``), in trec_eval's
order: their names, functions (:mod:`metrics.measures.prefs`) and descriptions. They read
preference judgments, not qrels, so they are not families of rankings in
:mod:`metrics.measures.registry` (:mod:`metrics.evaluation.prefs` evaluates them)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from metrics.measures import prefs as mp
from metrics.measures.registry import FAMILIES, TREC_ORDER
from metrics.prefs.counts import TopicCounts

__all__ = ["PREFS_MEASURES", "PrefsMeasure"]


@dataclass(frozen=True)
class PrefsMeasure:
    """A preference measure of trec_eval (``-R prefs`` / ``-R qrels_prefs``): its name, its
    value from a topic's preference counts (:mod:`metrics.measures.prefs`), a one-line
    description, and ``count`` when the summary is the sum over topics, not the mean."""

    name: str
    compute: Callable[[TopicCounts], float]
    doc: str
    count: bool = False


def _prefs_registry(*measures: PrefsMeasure) -> dict[str, PrefsMeasure]:
    out = {m.name: m for m in measures}
    assert len(out) == len(measures), "two preference measures share a name"
    assert list(out) == [n for n in TREC_ORDER if n in out], "not in trec_eval's order"
    assert not {n.lower() for n in out} & {f.name.lower() for f in FAMILIES.values()}
    return out


# The preference measures, in trec_eval's order; they read preference judgments, not qrels, so
# they are not families of rankings (``metrics.prefs`` evaluates them).
PREFS_MEASURES: dict[str, PrefsMeasure] = _prefs_registry(
    PrefsMeasure("prefs_num_prefs_poss", mp.num_prefs_poss, "preferences expressed", count=True),
    PrefsMeasure("prefs_num_prefs_ful", mp.num_prefs_ful, "preferences fulfilled", count=True),
    PrefsMeasure(
        "prefs_num_prefs_ful_ret",
        mp.num_prefs_ful_ret,
        "preferences fulfilled, both documents retrieved",
        count=True,
    ),
    PrefsMeasure("prefs_simp", mp.simp, "fulfilled / possible preferences"),
    PrefsMeasure("prefs_pair", mp.pair, "mean over document pairs of the share fulfilled"),
    PrefsMeasure("prefs_avgjg", mp.avgjg, "mean over judgment groups of fulfilled / possible"),
    PrefsMeasure(
        "prefs_avgjg_Rnonrel",
        mp.avgjg_rnonrel,
        "prefs_avgjg with as many non-relevant documents as relevant ones",
    ),
    PrefsMeasure("prefs_simp_ret", mp.simp_ret, "prefs_simp, both documents retrieved"),
    PrefsMeasure("prefs_pair_ret", mp.pair_ret, "prefs_pair, both documents retrieved"),
    PrefsMeasure("prefs_avgjg_ret", mp.avgjg_ret, "prefs_avgjg, both documents retrieved"),
    PrefsMeasure(
        "prefs_avgjg_Rnonrel_ret",
        mp.avgjg_rnonrel_ret,
        "prefs_avgjg_Rnonrel, both documents retrieved",
    ),
    PrefsMeasure("prefs_simp_imp", mp.simp_imp, "prefs_simp, at least one document retrieved"),
    PrefsMeasure("prefs_pair_imp", mp.pair_imp, "prefs_pair, at least one document retrieved"),
    PrefsMeasure("prefs_avgjg_imp", mp.avgjg_imp, "prefs_avgjg, at least one document retrieved"),
)
