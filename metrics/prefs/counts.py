"""Counting a topic's preferences against a ranking (trec_eval 10.0, ``form_prefs_counts.c``).

The ranking is the run's documents of the topic, score descending, ties by docno *ascending*
(form_prefs_counts.c's own order; the qrels measures break ties by docno descending), NaN scores
last, cut at ``-M``. The judged documents get places: those retrieved 0 .. njr - 1 in rank
order, the others njr .. in docno order.

For a preference A > B of a judgment group (:mod:`metrics.prefs.groups`):

- both retrieved: *possible_ret*; *fulfilled_ret* when A ranks above B;
- exactly one retrieved (*implied*): *possible_imp*; *fulfilled_imp* when it is A;
- neither retrieved: *not_retrieved*.

Per judgment group, beside those counts: relevant (rel_level > 0) and non-relevant documents,
all and retrieved, and the two (fulfilled, possible) pairs of the ``Rnonrel`` measures, whose
non-relevant documents count as many as the relevant ones, R (m_prefs_avgjg_Rnonrel.c):

- R >= N non-relevant: the counts above plus R - N imagined non-relevant documents, each below
  every relevant one: fulfilled + rel_ret (R - N), possible + R (R - N);
- R < N: counted again with only the first R non-relevant documents in place order. One
  sub-group: every pair of classes but the last, then every document of every class (the last
  one's included, itself too) against the last class's first R documents. Several: every
  preference between documents kept (a 0-level document after the R-th is dropped).

The ``_ret`` variant takes R and N among the retrieved documents and counts only pairs of
retrieved documents; its R >= N case adds rel_ret (R - N) fulfilled and num_rel (R - N)
possible, and its R < N case with several sub-groups drops the retrieved 0-level documents
after the num_rel-th (trec_eval's code, kept as it is). Where the last class has fewer than R
documents (several non-positive levels), trec_eval reads past it (undefined); the whole class
is used here.

Per topic: for every pair of documents with a preference in any group, the share of the
preferences (over all groups) that the ranking fulfils, summed as trec_eval sums them (pairs
with the first document retrieved, both retrieved first, row by row), and how many pairs there
are with both, one and no document retrieved (m_prefs_pair.c).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from metrics.prefs.groups import JudgmentGroup, TopicPrefs

__all__ = ["GroupCounts", "TopicCounts", "count_topic", "places"]

I64 = npt.NDArray[np.int64]
Bool = npt.NDArray[np.bool_]
Bytes = npt.NDArray[np.bytes_]
Counts = tuple[int, int, int, int, int]  # fulfilled_ret, possible_ret, ful_imp, poss_imp, none


@dataclass(frozen=True)
class GroupCounts:
    """One judgment group's counts (module docstring)."""

    fulfilled_ret: int
    possible_ret: int
    fulfilled_imp: int
    possible_imp: int
    not_retrieved: int
    num_rel: int
    num_rel_ret: int
    num_nonrel: int
    num_nonrel_ret: int
    rnonrel: tuple[int, int]  # (fulfilled, possible) of prefs_avgjg_Rnonrel
    rnonrel_ret: tuple[int, int]  # (fulfilled, possible) of prefs_avgjg_Rnonrel_ret

    @property
    def fulfilled(self) -> int:
        """Fulfilled, retrieved and implied."""
        return self.fulfilled_ret + self.fulfilled_imp

    @property
    def possible(self) -> int:
        """Every preference of the group."""
        return self.possible_ret + self.possible_imp + self.not_retrieved


@dataclass(frozen=True)
class TopicCounts:
    """A topic's counts: its judgment groups', and the document pairs' (module docstring)."""

    groups: tuple[GroupCounts, ...]
    pairs_ret: int
    pairs_imp: int
    pairs_none: int
    pair_sum_ret: float
    pair_sum_imp: float  # pair_sum_ret's terms, then the implied pairs'


def places(topic: TopicPrefs, ranking: Bytes) -> tuple[I64, int]:
    """Each judged document's place (module docstring) and how many of them are retrieved;
    ``ranking`` is the topic's docnos in rank order."""
    n = topic.docnos.size
    at = np.searchsorted(topic.docnos, ranking)
    clipped = np.minimum(at, n - 1)
    found = (at < n) & (topic.docnos[clipped] == ranking)
    retrieved = clipped[found]
    njr = int(retrieved.size)
    place = np.empty(n, dtype=np.int64)
    place[retrieved] = np.arange(njr)
    rest = np.ones(n, dtype=bool)
    rest[retrieved] = False
    place[rest] = njr + np.arange(n - njr)
    return place, njr


def count_topic(topic: TopicPrefs, ranking: Bytes) -> TopicCounts:
    """Count ``topic``'s preferences against ``ranking`` (its docnos in rank order)."""
    place, njr = places(topic, ranking)
    groups = tuple(_count_group(g, place[g.docs], njr) for g in topic.groups)
    if len(groups) == 1:  # each pair has one preference: its share is 0 or 1
        g = groups[0]
        return TopicCounts(
            groups,
            g.possible_ret,
            g.possible_imp,
            g.not_retrieved,
            float(g.fulfilled_ret),
            float(g.fulfilled),
        )
    return _pairs(topic, place, njr, groups)


def _count_group(g: JudgmentGroup, p: I64, njr: int) -> GroupCounts:
    ret = p < njr
    num = (
        int(g.rel.sum()),
        int((g.rel & ret).sum()),
        int(g.nonrel.sum()),
        int((g.nonrel & ret).sum()),
    )
    if g.classes is not None:
        base = _class_counts(p, g.classes, njr)
        rn, rn_ret = _rnonrel_classes(p, g.classes, njr, base, num)
    else:
        assert g.prefers is not None
        base = _preference_counts(p, g.prefers, njr)
        rn, rn_ret = _rnonrel_preferences(p, g, njr, base, num)
    return GroupCounts(*base, *num, rn, rn_ret)


def _class_counts(p: I64, classes: I64, njr: int) -> Counts:
    """Preferences between equivalence classes: every pair of documents in different classes,
    the one in the lower-numbered (higher rel_level) class preferred."""
    if p.size == 0:
        return 0, 0, 0, 0, 0
    m = int(classes.max()) + 1
    ret = p < njr
    n_c = np.bincount(classes, minlength=m)
    r_c = np.bincount(classes[ret], minlength=m)
    u_c = n_c - r_c
    r, u = int(r_c.sum()), int(u_c.sum())
    possible_ret = (r * r - int((r_c * r_c).sum())) // 2
    possible_imp = r * u - int((r_c * u_c).sum())
    fulfilled_imp = int((u_c * (np.cumsum(r_c) - r_c)).sum())  # retrieved in a higher class
    none = (u * u - int((u_c * u_c).sum())) // 2
    in_rank = classes[ret][np.argsort(p[ret])]
    return _rising(in_rank), possible_ret, fulfilled_imp, possible_imp, none


def _rising(s: I64) -> int:
    """Pairs i < j with s[i] < s[j]: retrieved pairs ranked in their classes' order. One pass
    per class present (qrels have a handful)."""
    total = 0
    for c in np.unique(s)[:-1].tolist():
        lower = s > c
        after = int(lower.sum()) - np.cumsum(lower)  # lower-class documents ranked after i
        total += int(after[s == c].sum())
    return total


def _preference_counts(p: I64, prefers: Bool, njr: int) -> Counts:
    i, j = np.nonzero(prefers)
    pi, pj = p[i], p[j]
    ri, rj = pi < njr, pj < njr
    both = ri & rj
    return (
        int((both & (pi < pj)).sum()),
        int(both.sum()),
        int((ri & ~rj).sum()),
        int((ri ^ rj).sum()),
        int((~ri & ~rj).sum()),
    )


def _ful(c: Counts) -> int:
    return c[0] + c[2]


def _total(c: Counts) -> int:
    return c[1] + c[3] + c[4]


def _padded(base: Counts, num: tuple[int, int, int, int], ret: bool) -> tuple[int, int]:
    """R >= N: the counts with R - N more non-relevant documents below every relevant one."""
    rel, rel_ret, nonrel, nonrel_ret = num
    if ret:
        return base[0] + rel_ret * (rel_ret - nonrel_ret), base[1] + rel * (rel_ret - nonrel_ret)
    return _ful(base) + rel_ret * (rel - nonrel), _total(base) + rel * (rel - nonrel)


def _rnonrel_classes(
    p: I64, classes: I64, njr: int, base: Counts, num: tuple[int, int, int, int]
) -> tuple[tuple[int, int], tuple[int, int]]:
    """The Rnonrel counts of a group of one sub-group (module docstring)."""
    rel, rel_ret, nonrel, nonrel_ret = num
    if rel >= nonrel and rel_ret >= nonrel_ret:
        return _padded(base, num, ret=False), _padded(base, num, ret=True)
    last = classes == classes.max()
    tail = np.sort(p[last])  # the last class, in place order
    first = _class_counts(p[~last], classes[~last], njr)  # the other classes' pairs
    mine = p[p < njr]  # the retrieved documents of every class
    if rel >= nonrel:
        all_ = _padded(base, num, ret=False)
    else:
        kept = tail[:rel]
        ful = int((kept.size - np.searchsorted(kept, mine, side="right")).sum())
        all_ = _ful(first) + ful, _total(first) + p.size * kept.size
    if rel_ret >= nonrel_ret:
        ret_ = _padded(base, num, ret=True)
    else:
        kept = tail[:rel_ret]
        kept = kept[kept < njr]
        ful = int((kept.size - np.searchsorted(kept, mine, side="right")).sum())
        ret_ = first[0] + ful, first[1] + mine.size * kept.size
    return all_, ret_


def _rnonrel_preferences(
    p: I64, g: JudgmentGroup, njr: int, base: Counts, num: tuple[int, int, int, int]
) -> tuple[tuple[int, int], tuple[int, int]]:
    """The Rnonrel counts of a group of several sub-groups (module docstring)."""
    assert g.prefers is not None
    rel, rel_ret, nonrel, nonrel_ret = num
    if rel >= nonrel:
        all_ = _padded(base, num, ret=False)
    else:
        keep = ~_after_first(p, g.nonrel, rel)
        c = _preference_counts(p[keep], g.prefers[np.ix_(keep, keep)], njr)
        all_ = _ful(c), _total(c)
    if rel_ret >= nonrel_ret:
        ret_ = _padded(base, num, ret=True)
    else:
        ret = p < njr
        keep = ret & ~_after_first(p, g.nonrel & ret, rel)  # num_rel, not rel_ret: trec_eval's
        c = _preference_counts(p[keep], g.prefers[np.ix_(keep, keep)], njr)
        ret_ = c[0], c[1]
    return all_, ret_


def _after_first(p: I64, mask: Bool, k: int) -> Bool:
    """The documents of ``mask`` after its first ``k`` in place order."""
    out = np.zeros(p.size, dtype=bool)
    members = np.flatnonzero(mask)
    out[members[np.argsort(p[members])][k:]] = True
    return out


def _pairs(topic: TopicPrefs, place: I64, njr: int, groups: tuple[GroupCounts, ...]) -> TopicCounts:
    """Several groups: the preferences of each document pair, counted over every group."""
    n = topic.docnos.size
    # count[i, j]: groups preferring place i to place j (unsigned short, as trec_eval keeps it:
    # a topic's n x n of them is trec_eval's memory too)
    count = np.zeros((n, n), dtype=np.uint16)
    for g in topic.groups:
        at = place[g.docs]
        if g.classes is not None:
            prefers = g.classes[:, None] < g.classes[None, :]
        else:
            assert g.prefers is not None
            prefers = g.prefers
        count[np.ix_(at, at)] += prefers
    ret = count[:njr, :njr].astype(np.int32)
    both = ret + ret.T
    a = np.triu(both > 0, 1)
    terms_ret = ret[a] / both[a]
    one = count[:njr, njr:].astype(np.int32)
    either = one + count[njr:, :njr].T
    b = either > 0
    terms = np.concatenate([terms_ret, one[b] / either[b]])
    rest = count[njr:, njr:]
    none = int(np.triu((rest > 0) | (rest.T > 0), 1).sum())
    sum_ret = float(np.cumsum(terms_ret)[-1]) if terms_ret.size else 0.0  # in trec_eval's order
    sum_imp = float(np.cumsum(terms)[-1]) if terms.size else 0.0
    return TopicCounts(groups, int(a.sum()), int(b.sum()), none, sum_ret, sum_imp)
