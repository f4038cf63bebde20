"""trec_eval's preference measures (``m_prefs_*.c``), each a value of one topic's counts.

The counts (:mod:`metrics.prefs.counts`) are per judgment group g: F_ret / P_ret (preferences
fulfilled / possible with both documents retrieved), F_imp / P_imp (exactly one retrieved: it
is fulfilled when that one is the preferred document), P_none (neither retrieved, never
fulfilled); F = F_ret + F_imp and P = P_ret + P_imp + P_none. Sums over groups are written
without the g. A ratio with a zero denominator is 0.

- ``prefs_num_prefs_poss`` = P; ``prefs_num_prefs_ful`` = F; ``prefs_num_prefs_ful_ret`` = F_ret
  (counts: the summary is their sum over topics, not a mean);
- ``prefs_simp`` = F / P: every preference counts once, a pair judged by two groups twice;
- ``prefs_pair``: the mean over document pairs with a preference of the share of that pair's
  preferences (over all groups) that the ranking fulfils; pairs with neither document
  retrieved count with 0;
- ``prefs_avgjg`` = (sum over g with P_g > 0 of F_g / P_g) / (number of groups): each group
  (user) weighs the same, however many preferences it expressed;
- ``prefs_avgjg_Rnonrel``: prefs_avgjg with each group's non-relevant documents counted as
  many as its relevant ones (the counts' docstring; "akin to bpref" with one group of two
  classes); a group with no such preference at all makes the topic 0, as in trec_eval (its
  0 / 0 turns the sum into NaN, which is not above 0);
- ``*_ret``: the same over the preferences with both documents retrieved only (F_ret / P_ret;
  pairs with both retrieved);
- ``*_imp``: the same without the preferences of which neither document is retrieved
  ((F_ret + F_imp) / (P_ret + P_imp)).

The per-group sums are added in group order and a topic's value is 0 unless that sum is above
0 (m_prefs_avgjg.c), as trec_eval computes them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from metrics.prefs.counts import TopicCounts

__all__ = [
    "avgjg",
    "avgjg_imp",
    "avgjg_ret",
    "avgjg_rnonrel",
    "avgjg_rnonrel_ret",
    "num_prefs_ful",
    "num_prefs_ful_ret",
    "num_prefs_poss",
    "pair",
    "pair_imp",
    "pair_ret",
    "simp",
    "simp_imp",
    "simp_ret",
]


def _ratio(num: float, den: float) -> float:
    return num / den if den else 0.0


def _over_groups(shares: Iterable[float], n: int) -> float:
    """Shares summed in group order, over the number of groups; 0 unless the sum is > 0."""
    total = 0.0
    for share in shares:
        total += share
    return total / n if total > 0.0 else 0.0


def num_prefs_poss(c: TopicCounts) -> float:
    """P: every preference of every group."""
    return float(sum(g.possible for g in c.groups))


def num_prefs_ful(c: TopicCounts) -> float:
    """F: preferences fulfilled, both retrieved or implied."""
    return float(sum(g.fulfilled for g in c.groups))


def num_prefs_ful_ret(c: TopicCounts) -> float:
    """F_ret: preferences fulfilled with both documents retrieved."""
    return float(sum(g.fulfilled_ret for g in c.groups))


def simp(c: TopicCounts) -> float:
    """F / P."""
    return _ratio(num_prefs_ful(c), num_prefs_poss(c))


def simp_ret(c: TopicCounts) -> float:
    """F_ret / P_ret."""
    return _ratio(num_prefs_ful_ret(c), sum(g.possible_ret for g in c.groups))


def simp_imp(c: TopicCounts) -> float:
    """(F_ret + F_imp) / (P_ret + P_imp)."""
    return _ratio(num_prefs_ful(c), sum(g.possible_ret + g.possible_imp for g in c.groups))


def pair(c: TopicCounts) -> float:
    """Mean over pairs with a preference of the share fulfilled (unretrieved pairs: 0)."""
    return _ratio(c.pair_sum_imp, c.pairs_ret + c.pairs_imp + c.pairs_none)


def pair_ret(c: TopicCounts) -> float:
    """Mean over pairs of retrieved documents with a preference of the share fulfilled."""
    return _ratio(c.pair_sum_ret, c.pairs_ret)


def pair_imp(c: TopicCounts) -> float:
    """Mean over pairs with at least one document retrieved of the share fulfilled."""
    return _ratio(c.pair_sum_imp, c.pairs_ret + c.pairs_imp)


def avgjg(c: TopicCounts) -> float:
    """Mean over groups of F_g / P_g."""
    shares = (g.fulfilled / g.possible for g in c.groups if g.possible)
    return _over_groups(shares, len(c.groups))


def avgjg_ret(c: TopicCounts) -> float:
    """Mean over groups of F_ret,g / P_ret,g."""
    shares = (g.fulfilled_ret / g.possible_ret for g in c.groups if g.possible_ret)
    return _over_groups(shares, len(c.groups))


def avgjg_imp(c: TopicCounts) -> float:
    """Mean over groups of (F_ret,g + F_imp,g) / (P_ret,g + P_imp,g)."""
    shares = (
        g.fulfilled / (g.possible_ret + g.possible_imp)
        for g in c.groups
        if g.possible_ret + g.possible_imp
    )
    return _over_groups(shares, len(c.groups))


def _share(counts: tuple[int, int]) -> float:
    fulfilled, possible = counts
    return fulfilled / possible if possible else math.nan  # trec_eval divides regardless


def avgjg_rnonrel(c: TopicCounts) -> float:
    """Mean over groups of their share fulfilled with as many non-relevant as relevant."""
    return _over_groups((_share(g.rnonrel) for g in c.groups), len(c.groups))


def avgjg_rnonrel_ret(c: TopicCounts) -> float:
    """avgjg_rnonrel over the retrieved documents only."""
    return _over_groups((_share(g.rnonrel_ret) for g in c.groups), len(c.groups))
