"""Preference judgments grouped for counting: topics, judgment groups and their preferences.

Definitions (trec_eval 10.0, ``get_prefs.c`` and ``form_prefs_counts.c``), for the documents
of one topic:

- Within a judgment sub-group (JSG), document d is preferred to e (d > e) when
  rel_level(d) > rel_level(e).
- A judgment group (JG) of **one** sub-group is a list of *equivalence classes*: its documents
  grouped by rel_level, classes in decreasing rel_level; every document of a class is preferred
  to every document of each later class. Relevant: rel_level > 0; non-relevant: the others
  (rel_level <= 0).
- A JG of **several** sub-groups holds the preferences of all of them and every preference they
  imply by transitivity (d > e in one and e > f in another give d > f; get_prefs.c). It must be
  consistent: d > e and e > d together is an error (trec_eval aborts). A document's rel_level
  in the JG is the one of the last sub-group (byte order) that lists it; relevant when it is
  > 0, non-relevant when it is exactly 0 (a negative rel_level is neither). Taking a document's
  sub-groups in that order, it may not go from 0 to above 0 or back (an error: 0 means
  non-relevant, whatever the sub-group).
- JGs of a topic may disagree with each other: each is counted on its own.

The transitive closure is computed by boolean matrix squaring (``log2`` of the longest chain of
float32 products of an n x n matrix, n the JG's documents): JGs with sub-groups are small
(preference judgments are costly to collect); a one-sub-group JG, the qrels' case, needs none.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from metrics.io.limits import show
from metrics.io.prefs import PrefsRows
from metrics.problems import Problems

__all__ = ["JudgmentGroup", "Prefs", "TopicPrefs", "build_prefs"]

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]
Bool = npt.NDArray[np.bool_]
Bytes = npt.NDArray[np.bytes_]


@dataclass(frozen=True, eq=False)
class JudgmentGroup:
    """One judgment group of a topic, ready to be counted against any ranking.

    ``docs``: its documents, as indices into the topic's ``docnos`` (ascending); ``rel`` and
    ``nonrel`` per document (module docstring). One sub-group: ``classes[i]`` is the
    equivalence class of ``docs[i]`` (0: the highest rel_level) and ``prefers`` is None. Several:
    ``prefers[i, j]`` says ``docs[i] > docs[j]`` (transitively closed) and ``classes`` is None.
    """

    name: str
    docs: I64
    rel: Bool
    nonrel: Bool
    classes: I64 | None
    prefers: Bool | None


@dataclass(frozen=True, eq=False)
class TopicPrefs:
    """A topic's judged documents (distinct ``docnos``, byte order) and its judgment groups
    (byte order of their names)."""

    qid: str
    docnos: Bytes
    groups: tuple[JudgmentGroup, ...]


@dataclass(frozen=True, eq=False)
class Prefs:
    """Preference judgments of every topic (byte order of the qids), and the rows read."""

    rows: PrefsRows
    topics: tuple[TopicPrefs, ...]

    @classmethod
    def from_dict(
        cls, data: Mapping[str, Mapping[str, Mapping[str, Mapping[str, float]]]]
    ) -> Prefs:
        """Build from ``{qid: {jg: {jsg: {docno: rel_level}}}}`` (raises ``InvalidInput``)."""
        cols: list[tuple[bytes, bytes, bytes, bytes, float]] = [
            (q.encode(), g.encode(), s.encode(), d.encode(), float(v))
            for q, jgs in data.items()
            for g, jsgs in jgs.items()
            for s, docs in jsgs.items()
            for d, v in docs.items()
        ]
        rows = PrefsRows(
            source="<dict>",
            qids=np.array([c[0] for c in cols], dtype=np.bytes_),
            jgs=np.array([c[1] for c in cols], dtype=np.bytes_),
            jsgs=np.array([c[2] for c in cols], dtype=np.bytes_),
            docnos=np.array([c[3] for c in cols], dtype=np.bytes_),
            levels=np.array([c[4] for c in cols], dtype=np.float64),
            lines=np.zeros(len(cols), dtype=np.int64),
        )
        problems = Problems()
        prefs = build_prefs(rows, problems)
        problems.raise_if_any(rows.source)
        return prefs

    def to_dict(self) -> dict[str, dict[str, dict[str, dict[str, float]]]]:
        """``{qid: {jg: {jsg: {docno: rel_level}}}}`` of every row read."""
        out: dict[str, dict[str, dict[str, dict[str, float]]]] = {}
        r = self.rows
        columns = (r.qids, r.jgs, r.jsgs, r.docnos)
        for (q, g, s, d), v in zip(
            zip(*(c.tolist() for c in columns), strict=True), r.levels.tolist(), strict=True
        ):
            out.setdefault(q.decode(), {}).setdefault(g.decode(), {}).setdefault(s.decode(), {})[
                d.decode()
            ] = v
        return out


def build_prefs(rows: PrefsRows, problems: Problems) -> Prefs:
    """Group ``rows`` into topics and judgment groups, adding each inconsistency (module
    docstring) to ``problems`` with its line."""
    order = np.lexsort((rows.docnos, -rows.levels, rows.jsgs, rows.jgs, rows.qids))
    q, g = rows.qids[order], rows.jgs[order]
    n = order.size
    new_topic = np.ones(n, dtype=bool)
    new_topic[1:] = q[1:] != q[:-1]
    new_group = new_topic.copy()
    new_group[1:] |= g[1:] != g[:-1]
    topic_heads = np.append(np.flatnonzero(new_topic), n).tolist()
    group_heads = np.flatnonzero(new_group).tolist()
    topics: list[TopicPrefs] = []
    gi = 0
    for a, b in itertools.pairwise(topic_heads):
        rows_t = order[a:b]
        docnos, doc_of = np.unique(rows.docnos[rows_t], return_inverse=True)
        qid = rows.qids[rows_t[0]].decode()
        groups: list[JudgmentGroup] = []
        while gi < len(group_heads) and group_heads[gi] < b:
            start = group_heads[gi] - a
            stop = (group_heads[gi + 1] if gi + 1 < len(group_heads) else n) - a
            docs = doc_of[start:stop].astype(np.int64)
            groups.append(_group(rows, rows_t[start:stop], docs, docnos, problems))
            gi += 1
        topics.append(TopicPrefs(qid, docnos, tuple(groups)))
    return Prefs(rows, tuple(topics))


def _group(rows: PrefsRows, at: I64, docs: I64, docnos: Bytes, problems: Problems) -> JudgmentGroup:
    """One judgment group: ``at`` its rows (sorted by sub-group, then rel_level descending),
    ``docs`` their indices into the topic's ``docnos``."""
    name = rows.jgs[at[0]].decode()
    levels = rows.levels[at]
    jsgs = rows.jsgs[at]
    if bool(np.all(jsgs == jsgs[0])):  # one sub-group: equivalence classes
        by_doc = np.argsort(docs, kind="stable")
        _, classes = np.unique(-levels[by_doc], return_inverse=True)
        rel = levels[by_doc] > 0.0
        return JudgmentGroup(name, docs[by_doc], rel, ~rel, classes.astype(np.int64), None)
    members, local = np.unique(docs, return_inverse=True)
    final = _final_levels(rows, at, local.astype(np.int64), members.size, problems)
    prefers = _closure(_direct(jsgs, levels, local.astype(np.int64), members.size))
    conflict = np.argwhere(np.triu(prefers & prefers.T, 1))
    if conflict.size:
        d = docnos[members[conflict[0]]]
        problems.add(
            int(rows.lines[at].min()),
            f"judgment group {show(rows.jgs[at[0]])} of topic {show(rows.qids[at[0]])} "
            f"contradicts itself: documents {show(d[0])} and {show(d[1])} are each preferred to "
            "the other (through its sub-groups' preferences); put contradicting judgments in "
            "different judgment groups",
        )
    return JudgmentGroup(name, members.astype(np.int64), final > 0.0, final == 0.0, None, prefers)


def _final_levels(rows: PrefsRows, at: I64, local: I64, n: int, problems: Problems) -> F64:
    """Each document's rel_level in the group: its last, taking the rows in sub-group order
    (``at`` is); a document that goes from 0 to above 0 or back is a problem."""
    by_doc = np.argsort(local, kind="stable")  # each document's rows, in sub-group order
    lv = rows.levels[at][by_doc]
    same = local[by_doc][1:] == local[by_doc][:-1]
    flips = same & (((lv[:-1] > 0) & (lv[1:] == 0)) | ((lv[:-1] == 0) & (lv[1:] > 0)))
    for k in np.flatnonzero(flips).tolist():
        prev, cur = at[by_doc[k]], at[by_doc[k + 1]]
        problems.add(
            int(rows.lines[cur]),
            f"document {show(rows.docnos[cur])} has rel_level {rows.levels[cur]:g} in judgment "
            f"sub-group {show(rows.jsgs[cur])} and {rows.levels[prev]:g} in "
            f"{show(rows.jsgs[prev])} (line {int(rows.lines[prev])}) of judgment group "
            f"{show(rows.jgs[cur])}, topic {show(rows.qids[cur])}: 0 is non-relevant, above 0 "
            "relevant, in every sub-group of a group",
        )
    last = np.append(~same, True)  # each document's last row
    final = np.full(n, -1.0)
    final[local[by_doc][last]] = lv[last]
    return final


def _direct(jsgs: Bytes, levels: F64, local: I64, n: int) -> Bool:
    """The sub-groups' own preferences: each rel_level class of a sub-group over the next
    (the rest follows by transitivity)."""
    k = levels.size
    new_class = np.ones(k, dtype=bool)
    new_class[1:] = (jsgs[1:] != jsgs[:-1]) | (levels[1:] != levels[:-1])
    heads = np.flatnonzero(new_class)
    cls = np.cumsum(new_class) - 1
    bounds = np.append(heads, k)
    size = np.diff(bounds)
    # class c's next class in the same sub-group is c + 1, when there is one
    has_next = np.zeros(heads.size, dtype=bool)
    has_next[:-1] = jsgs[heads[1:]] == jsgs[heads[:-1]]
    take = np.where(has_next[cls], np.append(size[1:], 0)[cls], 0)
    src = np.repeat(np.arange(k), take)
    offset = np.arange(int(take.sum())) - np.repeat(np.cumsum(take) - take, take)
    dst = bounds[cls[src] + 1] + offset
    direct = np.zeros((n, n), dtype=bool)
    direct[local[src], local[dst]] = True
    return direct


def _closure(direct: Bool) -> Bool:
    """The transitive closure of a preference relation (boolean matrix squaring)."""
    reach = direct
    while True:
        f = reach.astype(np.float32)
        more = reach | ((f @ f) > 0)
        if np.array_equal(more, reach):
            return reach
        reach = more
