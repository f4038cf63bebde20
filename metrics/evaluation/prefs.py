"""Preference judgments and trec_eval's preference measures (``-R prefs``, ``-R qrels_prefs``).

``read_prefs`` reads either file format (:mod:`metrics.io.prefs`) into judgment groups
(:mod:`metrics.prefs.groups`); ``evaluate_prefs`` counts each topic's preferences against a
run (:mod:`metrics.prefs.counts`) and computes the measures of the registry's
``PREFS_MEASURES`` (definitions in :mod:`metrics.measures.prefs`); ``format_trec`` prints
trec_eval 10.0's lines, byte for byte.

Measures are named as trec_eval's ``-m`` takes them: the 14 ``prefs_*`` names, ``runid``,
``num_q``, and the nicknames ``all_prefs`` (all of them) and ``prefs`` (runid, num_q and the
first six; measures.c). The topics evaluated are the judged topics (byte order) that the run
answers; with ``complete`` (``-c``) every judged topic, one the run does not answer being
ranked, as trec_eval ranks it, by a one-document dummy ranking (no judged document is retrieved:
its preferences all count as possible, none as fulfilled). Summaries: counts summed, the others
averaged over the topics evaluated (summed in topic order, as trec_eval sums).

Differences from the binary: trec_eval stops when a judged topic is missing from the run
without ``-c`` (exit 4); here it is left out, as :class:`~metrics.evaluation.evaluator.Evaluator`
does in trec_eval mode. ``-l``, ``-J`` and ``-N`` do not apply to preference measures (trec_eval
ignores them there too).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from metrics.evaluation.zscores import Kind, ZScores
from metrics.io import Run
from metrics.io.limits import DEFAULT_LIMITS, Limits
from metrics.io.prefs import Format, read_rows
from metrics.io.trec import Source
from metrics.measures.names import UnknownMeasureError, expand_groups
from metrics.measures.prefs_registry import PREFS_MEASURES
from metrics.prefs.counts import count_topic
from metrics.prefs.groups import JudgmentGroup, Prefs, TopicPrefs, build_prefs

__all__ = [
    "JudgmentGroup",
    "Prefs",
    "PrefsResult",
    "TopicPrefs",
    "evaluate_prefs",
    "format_trec",
    "read_prefs",
    "zscore_prefs",
]

DUMMY_RANKING = np.array([b"ceci_nest_pas_un_docno"], dtype=np.bytes_)  # trec_eval.c's, for -c


def read_prefs(
    src: Source,
    *,
    format: Format = "prefs",
    source: str | None = None,
    max_problems: int = 100,
    limits: Limits = DEFAULT_LIMITS,
) -> Prefs:
    """Read and validate preference judgments: ``format="prefs"`` (``qid jg jsg docno
    rel_level``) or ``"qrels_prefs"`` (a qrels file, ``qid jg docno rel_level``). Raises
    :class:`~metrics.problems.InvalidInput` listing every problem with its line, the
    inconsistent judgment groups' too (:mod:`metrics.prefs.groups`)."""
    rows, problems = read_rows(
        src, format=format, source=source, max_problems=max_problems, limits=limits
    )
    prefs = build_prefs(rows, problems)
    problems.raise_if_any(rows.source)
    return prefs


@dataclass(frozen=True)
class PrefsResult:
    """Preference measures of one run, keyed by trec_eval's names.

    ``measures``: the ``prefs_*`` measures computed, in trec_eval's order; ``runid`` and
    ``show_num_q``: whether those lines were asked for; ``queries``: the topics evaluated (byte
    order); ``per_query[name][qid]``; ``aggregates[name]`` (counts summed, others averaged;
    NaN when no topic was evaluated); ``zscores``: values are z-scores (``-Z``).
    """

    run: str
    measures: list[str]
    runid: bool
    show_num_q: bool
    complete: bool
    queries: list[str]
    per_query: dict[str, dict[str, float]]
    aggregates: dict[str, float]
    zscores: bool = False

    @property
    def num_q(self) -> int:
        """Topics evaluated."""
        return len(self.queries)

    def to_dict(self, *, per_query: bool = True) -> dict[str, Any]:
        """JSON-able dict (NaN becomes None)."""
        out: dict[str, Any] = {
            "run": self.run,
            "mode": "trec_eval",
            "complete": self.complete,
            "zscores": self.zscores,
            "num_q": self.num_q,
            "measures": {m: (None if math.isnan(v) else v) for m, v in self.aggregates.items()},
        }
        if per_query:
            out["per_query"] = {m: dict(v) for m, v in self.per_query.items()}
        return out


def _plan(measures: Sequence[str]) -> tuple[list[str], bool, bool]:
    """The ``prefs_*`` measures asked for (trec_eval's order), and runid, num_q."""
    chosen: set[str] = set()
    runid = num_q = False
    for text in expand_groups(measures):
        name = text.strip()
        if name == "runid":
            runid = True
        elif name == "num_q":
            num_q = True
        elif name in PREFS_MEASURES:
            chosen.add(name)
        elif name.split(".", 1)[0] in PREFS_MEASURES:
            raise UnknownMeasureError(
                f"invalid measure {name!r}: preference measures take no parameters"
            )
        else:
            raise UnknownMeasureError(
                f"{name!r} is not computed from preference judgments (-R prefs, -R qrels_prefs): "
                f"use all_prefs, prefs, runid, num_q or {', '.join(PREFS_MEASURES)}"
            )
    names = [m for m in PREFS_MEASURES if m in chosen]
    if not (names or runid or num_q):
        raise UnknownMeasureError("no measures requested")
    return names, runid, num_q


def _ranking(run: Run, at: int, depth: int | None) -> np.ndarray[Any, np.dtype[np.bytes_]]:
    """The run's docnos of its ``at``-th query in form_prefs_counts.c's order: score descending,
    ties by docno ascending, NaN last; the first ``depth`` of them."""
    a, b = int(run.offsets[at]), int(run.offsets[at + 1])
    scores = run.scores[a:b]
    docnos = run.docids[a:b]
    nan = np.isnan(scores)
    order = np.lexsort((docnos, np.where(nan, 0.0, -scores), nan))
    return docnos[order[:depth] if depth is not None else order]


def evaluate_prefs(
    prefs: Prefs,
    run: Run,
    measures: Sequence[str] = ("all_prefs",),
    *,
    complete: bool = False,
    depth: int | None = None,
) -> PrefsResult:
    """Evaluate ``run`` on the preference measures (module docstring), as trec_eval ``-R prefs
    -m <measures>`` does (``complete`` = its ``-c``, ``depth`` = ``-M``)."""
    if depth is not None and depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth}")
    names, runid, num_q = _plan(measures)
    where = {q: i for i, q in enumerate(run.qids)}
    per_query: dict[str, dict[str, float]] = {m: {} for m in names}
    queries: list[str] = []
    for topic in prefs.topics:
        if topic.qid not in where and not complete:
            continue
        ranking = _ranking(run, where[topic.qid], depth) if topic.qid in where else DUMMY_RANKING
        counts = count_topic(topic, ranking)
        queries.append(topic.qid)
        for m in names:
            per_query[m][topic.qid] = PREFS_MEASURES[m].compute(counts)
    aggregates = {m: _summary(m, list(per_query[m].values())) for m in names}
    return PrefsResult(run.tag, names, runid, num_q, complete, queries, per_query, aggregates)


def _summary(name: str, values: list[float]) -> float:
    total = 0.0
    for v in values:  # left to right, in topic order, as trec_eval accumulates
        total += v
    if PREFS_MEASURES[name].count:
        return total
    return total / len(values) if values else math.nan


def zscore_prefs(result: PrefsResult, zscores: ZScores) -> PrefsResult:
    """The result with every per-query value a z-score (``-Z``;
    :mod:`metrics.evaluation.zscores`)."""
    per_query: dict[str, dict[str, float]] = {}
    aggregates: dict[str, float] = {}
    for m in result.measures:
        kind: Kind = "sum" if PREFS_MEASURES[m].count else "mean"
        values = [result.per_query[m][q] for q in result.queries]
        z, summary = zscores.convert_all(result.queries, m, values, kind)
        per_query[m] = dict(zip(result.queries, z, strict=True))
        aggregates[m] = summary
    return replace(result, per_query=per_query, aggregates=aggregates, zscores=True)


def format_trec(
    result: PrefsResult, tag: str | None = None, per_query: bool = False, summary: bool = True
) -> str:
    """trec_eval's lines for the result: with ``per_query`` (``-q``) each topic's lines first,
    then, with ``summary`` (not ``-n``), ``runid`` and ``num_q`` (when asked for) and the
    summaries: ``%-22s\\t%s\\t%6.4f``, counts ``%ld``; z-scores ``Z%-22s\\t%s\\t%6.4f`` for every
    measure (meas_print_single.c, meas_print_final.c). ``tag`` defaults to the run's."""
    z = result.zscores
    name = result.run if tag is None else tag

    def line(measure: str, qid: str, value: float) -> str:
        if z:
            return f"Z{measure:<22}\t{qid}\t{value:6.4f}\n"
        if PREFS_MEASURES[measure].count:
            return f"{measure:<22}\t{qid}\t{int(value)}\n"
        return f"{measure:<22}\t{qid}\t{value:6.4f}\n"

    out: list[str] = []
    if per_query:
        for q in result.queries:
            out += [line(m, q, result.per_query[m][q]) for m in result.measures]
    if not summary:
        return "".join(out)
    if result.runid:
        out.append(f"{'runid':<22}\tall\t{name}\n")
    if result.show_num_q:
        n = result.num_q
        out.append(f"Z{'num_q':<22}\tall\t{n:6.4f}\n" if z else f"{'num_q':<22}\tall\t{n}\n")
    out += [line(m, "all", result.aggregates[m]) for m in result.measures]
    return "".join(out)
