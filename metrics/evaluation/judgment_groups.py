"""Qrels with judgment groups (trec_eval ``-R qrels_jg``) and the measures averaged over them.

A *judgment group* is one assessor's (one user's) set of judgments of a topic; a topic may be
judged by several. The file is trec_eval's ``qrels_jg`` format (``get_qrels_jg.c``)::

    qid  jg  docid  grade

the usual four qrels columns, the second naming the group instead of being ignored. The same
docid may be judged by several groups of a topic, not twice by one group (an error).

Measures (trec_eval 10.0, nickname ``qrels_jg`` = runid, num_q and the three below; each is the
plain measure computed against every group of the topic separately, then averaged over the
topic's groups, then over topics):

- ``map_avgjg`` (``m_map_avgjg.c``): AP_g = sum over relevant retrieved docs of P@rank / R_g,
  0 when group g has no relevant document (R_g = 0);
- ``P_avgjg_k`` (``m_P_avgjg.c``, default k = 5, 10, 15, 20, 30, 100, 200, 500, 1000):
  P_g@k = |rel_g in top k| / k;
- ``Rprec_mult_avgjg_x`` (``m_Rprec_mult_avgjg.c``, default x = 0.2, 0.4, ..., 2.0): precision
  at c_g = (long)(x * R_g + 0.9) documents (C truncation), i.e. |rel_g in top c_g| / c_g, with
  nonrelevant documents filling the ranking past the last retrieved one (when c_g > retrieved,
  |rel_g retrieved| / c_g), and 0 when c_g = 0 (R_g = 0, or x * R_g < 0.1).

For a topic with groups g_1..g_n (in byte order of their names, as trec_eval sorts them) the
topic's value is (v_1 + ... + v_n) / n, summed left to right from 0 and divided only when n > 1,
as trec_eval does; a group without any relevant document counts with its 0 in n. R_g counts the
documents group g judged >= ``relevance_level``; a document g did not judge is not relevant for
g (``form_res_rels_jg.c``), a negative grade is "pooled, unjudged". The summary is the mean over
the topics evaluated (summed left to right in byte order of the qids): those in the qrels that
the run answers, or with ``complete`` (trec_eval ``-c``) every qrels topic, an unanswered one
scoring 0.

Each group's values come from :class:`metrics.evaluation.evaluator.Evaluator`
(``compat="trec_eval"``): evaluator j holds, for every topic with at least j + 1 groups, its
(j+1)-th group, so the number of evaluators is the largest number of groups of a topic. Rprec_mult
is computed here from that evaluator's ranking (trec_eval-ordered, judged rows), vectorised over
topics.

Difference from the binary: trec_eval 10.0 stops (exit 4, "result qid ... not found in qrels")
when a qrels topic is missing from the run without ``-c``; here such a topic is left out, as
:class:`~metrics.evaluation.evaluator.Evaluator` does in trec_eval mode.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from metrics.evaluation.evaluator import Evaluator
from metrics.io import Qrels, Run
from metrics.io._pieces import read_pieces
from metrics.io._tokenizer import Parser
from metrics.io.limits import DEFAULT_LIMITS, Limits, id_problem, show
from metrics.io.trec import Source, _open_source
from metrics.measures.names import UnknownMeasureError, parse_measures
from metrics.measures.ranked import Ranked
from metrics.problems import Problems

__all__ = [
    "JG_MEASURES",
    "JudgmentGroupResult",
    "JudgmentGroups",
    "evaluate_jg",
    "format_trec",
    "read_qrels_jg",
]

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]
Bytes = npt.NDArray[np.bytes_]

P_CUTOFFS: tuple[int, ...] = (5, 10, 15, 20, 30, 100, 200, 500, 1000)  # m_P_avgjg.c
RPREC_MULT_CUTOFFS: tuple[float, ...] = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)
JG_MEASURES: tuple[str, ...] = ("runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg")
"""What trec_eval's ``qrels_jg`` nickname stands for (measures.c), in its print order."""


# --------------------------------------------------------------------------------------------
# Qrels with judgment groups


@dataclass(frozen=True)
class JudgmentGroups:
    """Judgments of each topic by one or more judgment groups.

    ``qids`` are the topics in byte order (trec_eval's); ``groups[t]`` the group names of topic
    ``qids[t]`` in byte order; ``qrels[j]`` is a :class:`Qrels` of the (j+1)-th group of every
    topic that has at least j + 1 groups (topics in byte order).
    """

    qids: tuple[str, ...]
    groups: tuple[tuple[str, ...], ...]
    qrels: tuple[Qrels, ...]

    @classmethod
    def from_dict(cls, data: Mapping[str, Mapping[str, Mapping[str, int]]]) -> JudgmentGroups:
        """Build from ``{qid: {group: {docid: grade}}}`` (a topic needs at least one group)."""
        qids: list[bytes] = []
        jgs: list[bytes] = []
        docs: list[bytes] = []
        grades: list[int] = []
        for q, by_group in data.items():
            if not by_group:
                raise ValueError(f"topic {q!r} has no judgment group")
            for g, judged in by_group.items():
                if not judged:
                    raise ValueError(f"judgment group {g!r} of topic {q!r} judges no document")
                for d, grade in judged.items():
                    qids.append(str(q).encode())
                    jgs.append(str(g).encode())
                    docs.append(str(d).encode())
                    grades.append(int(grade))
        if not qids:
            raise ValueError("no judgments")
        return _build(
            np.array(qids, dtype=np.bytes_),
            np.array(jgs, dtype=np.bytes_),
            np.array(docs, dtype=np.bytes_),
            np.array(grades, dtype=np.int64),
        )

    @property
    def num_groups(self) -> dict[str, int]:
        """Number of judgment groups per topic."""
        return {q: len(g) for q, g in zip(self.qids, self.groups, strict=True)}

    def judgments(self, qid: str) -> dict[str, dict[str, int]]:
        """``{group: {docid: grade}}`` of one topic (empty if it is not in the qrels)."""
        if qid not in self.qids:
            return {}
        t = self.qids.index(qid)
        return {g: self.qrels[j].judgments(qid) for j, g in enumerate(self.groups[t])}

    def to_dict(self) -> dict[str, dict[str, dict[str, int]]]:
        """``{qid: {group: {docid: grade}}}``."""
        return {q: self.judgments(q) for q in self.qids}


def _build(qcol: Bytes, jcol: Bytes, dcol: Bytes, grades: I64) -> JudgmentGroups:
    """Group rows (no duplicate (qid, group, docid)) by topic, then group, docids sorted."""
    order = np.lexsort((dcol, jcol, qcol))
    qcol, jcol, dcol, grades = qcol[order], jcol[order], dcol[order], grades[order]
    n = qcol.size
    new_topic = np.ones(n, dtype=bool)
    new_topic[1:] = qcol[1:] != qcol[:-1]
    new_group = new_topic.copy()
    new_group[1:] |= jcol[1:] != jcol[:-1]
    group_id = np.cumsum(new_group) - 1  # running number of the (topic, group) of each row
    topic_id = np.cumsum(new_topic) - 1
    first_group = group_id[new_topic]  # the running number of each topic's first group
    within = group_id - first_group[topic_id]  # 0 for a topic's first group, 1 for its second
    topic_names = [q.decode() for q in qcol[new_topic].tolist()]
    group_heads = np.flatnonzero(new_group)
    group_names = [g.decode() for g in jcol[group_heads].tolist()]
    counts = np.diff(np.append(first_group, group_heads.size)).tolist()
    groups = []
    at = 0
    for c in counts:
        groups.append(tuple(group_names[at : at + c]))
        at += c
    qrels: list[Qrels] = []
    for j in range(int(within.max()) + 1):
        rows = np.flatnonzero(within == j)  # sorted by (topic, docid): a Qrels as it is
        tids = topic_id[rows]
        heads = np.flatnonzero(np.append(True, tids[1:] != tids[:-1]))
        offsets = np.append(heads, rows.size).astype(np.int64)
        qrels.append(
            Qrels(
                tuple(topic_names[t] for t in tids[heads].tolist()),
                offsets,
                dcol[rows],
                grades[rows],
            )
        )
    return JudgmentGroups(tuple(topic_names), tuple(groups), tuple(qrels))


def read_qrels_jg(
    src: Source,
    *,
    source: str | None = None,
    max_problems: int = 100,
    limits: Limits = DEFAULT_LIMITS,
) -> JudgmentGroups:
    """Read and validate qrels with judgment groups (``qid jg docid grade``, trec_eval's
    ``-R qrels_jg``).

    The lines are read and checked by the qrels tokenizer of :mod:`metrics.io.trec` (4
    fields, integer grade, UTF-8, ids without control characters, blank and ``#`` lines
    skipped, gzip recognised); the group is the second field (an id: no control character, at
    most ``limits.qid_bytes``). A docid judged twice by one group of a topic is an error; judged
    by several groups it is not. A line is at most 64 KiB unless ``limits`` says otherwise.
    Raises :class:`~metrics.problems.InvalidInput` listing every problem with its line.
    """
    stream, name, closer = _open_source(src, source)
    problems = Problems(max(1, max_problems))
    pieces: list[bytes] = []
    cut: dict[int, int] = {}

    def kept() -> Iterator[bytes]:
        for piece in read_pieces(stream, name, limits.line_bytes, cut):
            pieces.append(piece)
            yield piece

    try:
        cols = Parser(run=False, problems=problems, limits=limits).parse(kept(), cut)
    finally:
        if closer is not None:
            closer.close()
    n = int(cols.qids.size)
    if n == 0 and problems.total == 0:
        problems.add(0, "no data lines (empty file)")
    problems.raise_if_any(name)
    # the group column, which the tokenizer skips: the second field of each data line
    # (a loop over the qrels' lines: qrels with judgment groups are small next to runs)
    lines = b"".join(pieces).split(b"\n")
    linenos = [cols.line(i) for i in range(n)]
    jgs = [lines[ln - 1].split()[1] for ln in linenos]
    seen: dict[tuple[bytes, bytes, bytes], int] = {}
    qlist = cols.qids.tolist()
    dlist = cols.docids.tolist()
    for i, (ln, g) in enumerate(zip(linenos, jgs, strict=True)):
        bad = id_problem("judgment group", g, limits.qid_bytes)
        if bad is not None:
            problems.add(ln, bad)
            continue
        key = (qlist[i], g, dlist[i])
        first = seen.setdefault(key, ln)
        if first != ln:
            problems.add(
                ln,
                f"duplicate docid {show(dlist[i])} for query {show(qlist[i])} in judgment "
                f"group {show(g)} (first on line {first})",
            )
    problems.raise_if_any(name)
    return _build(
        cols.qids,
        np.array(jgs, dtype=np.bytes_),
        cols.docids,
        np.asarray(cols.nums, dtype=np.int64),
    )


# --------------------------------------------------------------------------------------------
# Measures


@dataclass(frozen=True)
class _Plan:
    runid: bool = False
    num_q: bool = False
    map: bool = False
    p_cutoffs: tuple[int, ...] = ()
    rprec_cutoffs: tuple[float, ...] = ()

    def labels(self) -> list[str]:
        """trec_eval's printed names, in its print order."""
        out = [n for n, on in (("runid", self.runid), ("num_q", self.num_q)) if on]
        if self.map:
            out.append("map_avgjg")
        out += [f"P_avgjg_{k}" for k in self.p_cutoffs]
        out += [_rprec_label(x) for x in self.rprec_cutoffs]
        return out


def _rprec_label(x: float) -> str:
    return f"Rprec_mult_avgjg_{x:3.2f}"


def _ints(text: str, what: str) -> tuple[int, ...]:
    try:
        values = sorted(int(t) for t in text.split(","))
    except ValueError:
        raise ValueError(f"{what}: cutoffs must be integers, got {text!r}") from None
    if values[0] <= 0:
        raise ValueError(f"{what}: cutoffs must be positive, got {text!r}")
    return tuple(values)


def _reals(text: str, what: str) -> tuple[float, ...]:
    try:
        values = sorted(float(t) for t in text.split(","))
    except ValueError:
        raise ValueError(f"{what}: cutoffs must be numbers, got {text!r}") from None
    if not all(0.0 <= v < math.inf for v in values):
        raise ValueError(f"{what}: cutoffs must be finite and >= 0, got {text!r}")
    return tuple(values)


def _plan(measures: Sequence[str]) -> _Plan:
    """The measures asked for, in trec_eval's ``-m`` syntax: ``qrels_jg`` (the nickname),
    ``runid``, ``num_q``, ``map_avgjg``, ``P_avgjg`` / ``P_avgjg.5,10`` / ``P_avgjg_10``,
    ``Rprec_mult_avgjg`` / ``Rprec_mult_avgjg.0.5,1`` / ``Rprec_mult_avgjg_0.50``."""
    runid = num_q = ap = False
    pk: set[int] = set()
    rx: set[float] = set()
    for text in measures:
        if text == "qrels_jg":
            runid = num_q = ap = True
            pk.update(P_CUTOFFS)
            rx.update(RPREC_MULT_CUTOFFS)
        elif text == "runid":
            runid = True
        elif text == "num_q":
            num_q = True
        elif text == "map_avgjg":
            ap = True
        elif text == "P_avgjg":
            pk.update(P_CUTOFFS)
        elif text.startswith(("P_avgjg.", "P_avgjg_")):
            cut = _ints(text[len("P_avgjg.") :], text)
            if text[7] == "." and len(set(cut)) != len(cut):
                raise ValueError(f"{text}: duplicate cutoffs")
            pk.update(cut)
        elif text == "Rprec_mult_avgjg":
            rx.update(RPREC_MULT_CUTOFFS)
        elif text.startswith(("Rprec_mult_avgjg.", "Rprec_mult_avgjg_")):
            cuts = _reals(text[len("Rprec_mult_avgjg.") :], text)
            if text[16] == "." and len(set(cuts)) != len(cuts):
                raise ValueError(f"{text}: duplicate cutoffs")
            rx.update(cuts)
        else:
            raise UnknownMeasureError(
                f"unknown judgment-group measure {text!r}: use qrels_jg, runid, num_q, "
                "map_avgjg, P_avgjg[.k,...], Rprec_mult_avgjg[.x,...]"
            )
    xs = tuple(sorted(rx))
    labels = [_rprec_label(x) for x in xs]
    if len(set(labels)) != len(labels):
        raise ValueError(
            f"Rprec_mult_avgjg cutoffs {list(xs)} print the same name (2 decimals): "
            "give cutoffs that differ in the first two decimals"
        )
    plan = _Plan(runid, num_q, ap, tuple(sorted(pk)), xs)
    if not plan.labels():
        raise ValueError("no measures requested")
    return plan


@dataclass(frozen=True)
class JudgmentGroupResult:
    """Values of the judgment-group measures for one run, keyed by trec_eval's names.

    ``measures`` are the names in trec_eval's print order (``runid`` and ``num_q`` when asked
    for: they have no values); ``queries`` the topics evaluated, in trec_eval's order (byte
    order); ``per_query[name][qid]`` the topic's value (the mean over its groups);
    ``aggregates[name]`` the mean over ``queries`` (NaN if none); ``num_groups[qid]`` how many
    groups judged the topic.
    """

    run: str
    relevance_level: int
    complete: bool
    measures: list[str]
    queries: list[str]
    per_query: dict[str, dict[str, float]]
    aggregates: dict[str, float]
    num_q: int
    num_groups: dict[str, int] = field(default_factory=dict)

    def to_dict(self, *, per_query: bool = True) -> dict[str, Any]:
        """JSON-able dict (NaN becomes None)."""
        out: dict[str, Any] = {
            "run": self.run,
            "mode": "trec_eval",
            "relevance_level": self.relevance_level,
            "complete": self.complete,
            "num_q": self.num_q,
            "measures": {m: (None if math.isnan(v) else v) for m, v in self.aggregates.items()},
            "num_groups": dict(self.num_groups),
        }
        if per_query:
            out["per_query"] = {m: dict(v) for m, v in self.per_query.items()}
        return out


class _GroupEvaluator(Evaluator):
    """An :class:`Evaluator` that also hands out its trec_eval-ordered ranking."""

    def ranked_for(self, run: Run, names: Sequence[str]) -> Ranked:
        """The judged ranking of the qrels topics ``names`` (as ``evaluate`` builds it)."""
        run_index = {qid: i for i, qid in enumerate(run.qids)}
        sel_q = np.array([self._qindex[q] for q in names], dtype=np.int64)
        return self._ranked(run, sel_q, [run_index.get(q, -1) for q in names])


def _rprec_mult(r: Ranked, x: float) -> F64:
    """Per topic: precision at c = (long)(x R + 0.9) (0 when c = 0), m_Rprec_mult_avgjg.c."""
    c = np.trunc(x * r.num_rel.astype(np.float64) + 0.9).astype(np.int64)
    hits = r.rel_sum(r.rel_pos <= c[r.rel_seg])
    out = np.zeros(r.nq)
    np.divide(hits, c.astype(np.float64), out=out, where=c > 0)
    return out


def evaluate_jg(
    qrels_jg: JudgmentGroups | Mapping[str, Mapping[str, Mapping[str, int]]],
    run: Run | Mapping[str, Mapping[str, float]],
    measures: Sequence[str],
    *,
    compat: Literal["trec_eval"] = "trec_eval",
    complete: bool = False,
    relevance_level: int = 1,
) -> JudgmentGroupResult:
    """Evaluate ``run`` on the judgment-group measures (module docstring), as trec_eval
    ``-R qrels_jg -m <measures>`` does (``complete`` = its ``-c``, ``relevance_level`` = ``-l``).

    ``measures`` in trec_eval's ``-m`` syntax: ``["qrels_jg"]`` is everything trec_eval prints
    for ``-m qrels_jg``. Only ``compat="trec_eval"`` is defined.
    """
    if compat != "trec_eval":
        raise ValueError(f"judgment-group measures have only compat='trec_eval', got {compat!r}")
    if relevance_level < 1:
        raise ValueError(f"relevance_level must be >= 1, got {relevance_level}")
    plan = _plan(measures)
    jg = qrels_jg if isinstance(qrels_jg, JudgmentGroups) else JudgmentGroups.from_dict(qrels_jg)
    if not isinstance(run, Run):
        run = Run.from_dict(run)
    answered = set(run.qids)
    topics = [q for q in jg.qids if complete or q in answered]
    where = {q: i for i, q in enumerate(topics)}
    n_groups = np.array([len(g) for q, g in zip(jg.qids, jg.groups, strict=True) if q in where])
    base = (["map"] if plan.map else []) + [f"P_{k}" for k in plan.p_cutoffs]
    parsed = parse_measures(base or ["num_rel"])
    value_labels = [lab for lab in plan.labels() if lab not in ("runid", "num_q")]
    sums = {lab: np.zeros(len(topics)) for lab in value_labels}
    for qrels in jg.qrels:  # the j-th group of every topic, j = 0, 1, ...
        ev = _GroupEvaluator(
            qrels,
            parsed,
            compat="trec_eval",
            complete=complete,
            relevance_level=relevance_level,
            ci=None,
        )
        res = ev.evaluate(run)
        at = np.array([where[q] for q in res.queries], dtype=np.int64)
        got: dict[str, list[float]] = {}
        if plan.map:
            got["map_avgjg"] = [res.per_query[parsed[0].name][q] for q in res.queries]
        for k, m in zip(plan.p_cutoffs, parsed[int(plan.map) :], strict=True):
            got[f"P_avgjg_{k}"] = [res.per_query[m.name][q] for q in res.queries]
        if plan.rprec_cutoffs and res.queries:
            ranked = ev.ranked_for(run, res.queries)
            for x in plan.rprec_cutoffs:
                got[_rprec_label(x)] = _rprec_mult(ranked, x).tolist()
        for lab, vals in got.items():
            v = np.zeros(len(topics))
            v[at] = vals
            sums[lab] = sums[lab] + v  # left to right over the groups, as trec_eval adds
    per_query: dict[str, dict[str, float]] = {}
    aggregates: dict[str, float] = {}
    many = n_groups > 1
    for lab in value_labels:
        summed = sums[lab]
        mean: list[float] = np.where(many, summed / np.maximum(n_groups, 1), summed).tolist()
        per_query[lab] = dict(zip(topics, mean, strict=True))
        total = 0.0
        for x in mean:  # trec_eval's accumulation: doubles, topics in order
            total += x
        aggregates[lab] = total / len(topics) if topics else math.nan
    return JudgmentGroupResult(
        run=run.tag,
        relevance_level=relevance_level,
        complete=complete,
        measures=plan.labels(),
        queries=topics,
        per_query=per_query,
        aggregates=aggregates,
        num_q=len(topics),
        num_groups={q: int(n) for q, n in zip(topics, n_groups.tolist(), strict=True)},
    )


def format_trec(
    result: JudgmentGroupResult,
    tag: str | None = None,
    per_query: bool = False,
    zscores: bool = False,
) -> str:
    """trec_eval's output for the result: with ``per_query`` (its ``-q``) each topic's lines
    first (measures in print order), then ``runid`` and ``num_q`` (when asked for) and the
    averages, ``%-22s\\t%s\\t%6.4f`` (``num_q`` an integer). ``tag`` defaults to the run's.
    ``zscores`` (``-Z``, :mod:`metrics.evaluation.zscores`): ``Z%-22s`` before every value,
    ``num_q``'s too, printed ``%6.4f``."""
    name = result.run if tag is None else tag
    z = "Z" if zscores else ""
    values = [m for m in result.measures if m not in ("runid", "num_q")]
    out: list[str] = []
    if per_query:
        for q in result.queries:
            out += [f"{z}{m:<22}\t{q}\t{result.per_query[m][q]:6.4f}\n" for m in values]
    if "runid" in result.measures:
        out.append(f"{'runid':<22}\tall\t{name}\n")
    if "num_q" in result.measures:
        n = f"{result.num_q:6.4f}" if zscores else str(result.num_q)
        out.append(f"{z}{'num_q':<22}\tall\t{n}\n")
    out += [f"{z}{m:<22}\tall\t{result.aggregates[m]:6.4f}\n" for m in values]
    return "".join(out)
