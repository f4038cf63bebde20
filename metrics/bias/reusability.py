"""Is a test collection reusable for a system that did not build its pool? A report with a verdict.

:func:`reusability` rebuilds the depth-d pool of the pooled runs (as
:class:`metrics.bias.leaveout.LeaveOneOut` does: the union of their top d, ranked as trec_eval ranks
them, over the qrels topics after the ``topics`` filter) and reports, exactly:

- ``relevant``: ``total`` = relevant documents (grade >= the relevance level) in that pool, summed
  over topics; ``by_one_unit`` = those that only one unit (a group; a run when groups are unknown)
  put in its top d, and ``by_one_run`` = those only one run did, each with its share of ``total``.
  A large share found by one group alone means a new group would also find relevant documents
  nobody judged (Zobel 1998; the unique-relevant check of Voorhees 2018, "On building fair and
  reusable test collections using bandit techniques", CIKM).
- ``unique_relevant``: per unit, the relevant documents only it contributed.
- ``leave_one_out``: each unit left out of the pool in turn
  (:class:`metrics.bias.leaveout.LeaveOneOut`,
  ``leave_out="group"``, or ``"run"`` when ``groups`` is None). A unit's **drop** = the mean over
  its runs of ``score - score_without`` (what being in the pool was worth to it: what a new system
  like it loses). ``max_drop`` (and ``max_drop_unit``) and ``mean_drop`` (each unit weighs one)
  over the units; ``kendall_tau`` (tau-b) and ``tau_ap`` between the full-pool ranking of the
  pooled runs and the ranking with each run scored without its unit, as in LeaveOneOut.
- ``judged``: mean Judged@10 and Judged@100 (:func:`metrics.bias.judged.judged_at_k`, against the
  qrels given) of the pooled runs and of the others (None when every run is pooled).
- ``unjudged_in_pool``: documents of the depth-d pool with no judgment (grade >= 0) in the qrels
  (scored as not relevant, as everywhere); 0 when the qrels were made from this pool.
- ``efficiency``: for each depth j = 1..d, the documents (``pooled``), the judged ones (grade >=
  0: ``judged``) and the relevant ones of the depth-j pool, cumulative and summed over topics,
  and ``relevant_per_judgment[j]`` = the relevant documents that enter the pool at depth j per
  judged document that enters it there (None when none enters).
- ``per_topic``: ``pooled``, ``relevant``, ``judged`` (in the depth-d pool),
  ``judged_at_deepest`` and ``relevant_at_deepest`` (the judged and relevant documents entering
  the pool at the deepest ``shallow_window`` depths), ``rate`` = relevant / judged,
  ``rate_at_deepest`` = the same ratio at those depths (None when nothing is judged), and
  ``shallow``.
- The **shallow rule** (after Zobel 1998, who extrapolated the relevant documents still unfound
  from how fast each extra pool depth found new ones): a topic is shallow when the documents that
  entered the pool at its deepest ``shallow_window`` depths (default: the deepest fifth, at least
  one) still contain a relevant one, at a rate of at least ``shallow_ratio`` (default 0.75) times
  the topic's rate over the whole pool. A saturated pool finds fewer and fewer relevant documents
  per judgment as it deepens; one that still finds them at close to its overall rate has more to
  find below depth d. With a depth-1 pool the window is the whole pool: every topic with a
  relevant document is shallow (nothing shows otherwise).
- ``expected_underestimate`` = ``[lo, hi]``, the middle half (25th to 75th percentile, numpy's
  linear interpolation) of the units' drops, each end clipped at 0: how much a new system's score
  is likely to be underestimated. None with fewer than two units.
- **Reusable** when both hold (``reusable`` True; False when one fails; None when they cannot be
  measured): leave-one-out Kendall tau-b >= ``tau_threshold`` (default 0.9, the usual line for
  "the same ranking", Voorhees 2000), and the upper end of the expected underestimate <=
  ``drop_threshold`` (default 0.05, i.e. 5%) times the pooled runs' mean score.
- ``rules`` echoes the four parameters; ``verdict``: two sentences ("A new system's AP is
  likely underestimated by 0.0100-0.0300 (the middle half of the 16 groups' leave-one-group-out
  drops); the pool is shallow for topics 3 and 5. The collection ..."), and ``basis``: every
  figure it rests on, one plain sentence each.

All counts are vectorised from the contributor counts of every judgment
(:meth:`metrics.bias.leaveout.LeaveOneOut.contributions`), so 127 runs take a fraction of a second.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from metrics.bias.judged import judged_at_k
from metrics.bias.leaveout import LeaveOneOut, LeaveOut, LeaveOutUnit
from metrics.io import Qrels, Run

__all__ = ["ReusabilityReport", "reusability"]

JUDGED_AT = (10, 100)


def _num(x: float | None) -> float | None:
    return None if x is None or math.isnan(x) else float(x)


def _ids(ids: list[str]) -> str:
    if len(ids) > 8:
        return f"{', '.join(ids[:5])} and {len(ids) - 5} more"
    if len(ids) <= 1:
        return "".join(ids)
    return f"{', '.join(ids[:-1])} and {ids[-1]}"


def _pct(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.1f}%" if whole else "no"


@dataclass(frozen=True)
class ReusabilityReport:
    """The reusability report of one qrels version (see the module docstring)."""

    depth: int
    measure: str
    relevance_level: int
    mode: str
    topics: tuple[str, ...]
    n_runs: int
    n_pooled: int
    n_units: int
    leave_out: str
    relevant: dict[str, Any]
    unjudged_in_pool: int
    unique_relevant: dict[str, int]
    leave_one_out: dict[str, Any]
    judged: dict[str, dict[str, float | None]]
    efficiency: dict[str, list[Any]]
    per_topic: dict[str, dict[str, Any]]
    shallow_topics: tuple[str, ...]
    expected_underestimate: tuple[float, float] | None
    reusable: bool | None
    verdict: str
    basis: tuple[str, ...]
    rules: dict[str, float | int]

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form; floats are never NaN (None instead)."""
        return {
            "depth": self.depth,
            "measure": self.measure,
            "relevance_level": self.relevance_level,
            "mode": self.mode,
            "topics": list(self.topics),
            "n_runs": self.n_runs,
            "n_pooled": self.n_pooled,
            "n_units": self.n_units,
            "leave_out": self.leave_out,
            "relevant": dict(self.relevant),
            "unjudged_in_pool": self.unjudged_in_pool,
            "unique_relevant": dict(self.unique_relevant),
            "leave_one_out": {
                k: (_num(v) if isinstance(v, float) else v) for k, v in self.leave_one_out.items()
            },
            "judged": {k: dict(v) for k, v in self.judged.items()},
            "efficiency": {k: list(v) for k, v in self.efficiency.items()},
            "per_topic": {q: dict(v) for q, v in self.per_topic.items()},
            "shallow_topics": list(self.shallow_topics),
            "expected_underestimate": (
                None
                if self.expected_underestimate is None
                else [float(x) for x in self.expected_underestimate]
            ),
            "reusable": self.reusable,
            "rules": dict(self.rules),
            "verdict": self.verdict,
            "basis": list(self.basis),
        }


def reusability(
    qrels: Qrels,
    runs: Mapping[str, Run],
    leave: LeaveOut | None = None,
    *,
    measure: str = "AP",
    shallow_window: int | None = None,
    shallow_ratio: float = 0.75,
    tau_threshold: float = 0.9,
    drop_threshold: float = 0.05,
) -> ReusabilityReport:
    """Reusability of ``qrels`` for systems outside the depth-``depth`` pool of ``pooled``.

    ``runs`` maps tag -> run; ``leave`` the pool and scoring (:class:`LeaveOut`: ``pooled`` the
    tags that build the pool, default all; ``groups`` tag -> group: units are groups, runs when
    None, whatever ``leave.leave_out`` says). ``shallow_window`` (default
    ``max(1, round(depth / 5))``), ``shallow_ratio``, ``tau_threshold`` and ``drop_threshold``
    are the rules' parameters. Every figure and rule is defined in the module docstring.
    """
    leave = LeaveOut() if leave is None else leave
    depth, groups, relevance_level = leave.depth, leave.groups, leave.relevance_level
    if shallow_window is None:
        shallow_window = max(1, round(depth / 5))
    if not 1 <= shallow_window <= max(depth, 1):
        raise ValueError(
            f"shallow_window must be between 1 and the depth {depth}, got {shallow_window}"
        )
    if not shallow_ratio > 0.0:
        raise ValueError(f"shallow_ratio must be > 0, got {shallow_ratio}")
    if not -1.0 <= tau_threshold <= 1.0:
        raise ValueError(f"tau_threshold must be between -1 and 1, got {tau_threshold}")
    if not drop_threshold >= 0.0:
        raise ValueError(f"drop_threshold must be >= 0, got {drop_threshold}")
    leave_out: LeaveOutUnit = "run" if groups is None else "group"
    loo = LeaveOneOut(qrels, runs, replace(leave, leave_out=leave_out))
    res = loo.result(measure)
    con = loo.contributions()
    nt = len(con.topics)
    units = con.units

    judged_e = con.grade >= 0
    rel_e = con.grade >= relevance_level
    total = int(rel_e.sum())
    by_one_unit = int((rel_e & (con.n_units == 1)).sum())
    by_one_run = int((rel_e & (con.n_runs == 1)).sum())
    relevant: dict[str, Any] = {
        "total": total,
        "by_one_unit": by_one_unit,
        "by_one_unit_share": by_one_unit / total if total else None,
        "by_one_run": by_one_run,
        "by_one_run_share": by_one_run / total if total else None,
    }
    owned = rel_e & (con.owner >= 0)
    per_unit = np.bincount(con.owner[owned], minlength=len(units))
    unique_relevant = {u: int(n) for u, n in zip(units, per_unit.tolist(), strict=True)}

    # leave-one-unit-out drops: the mean delta of each unit's runs
    unit_of = {t: (groups[t] if groups is not None else t) for t in res.runs}
    unit_deltas: dict[str, list[float]] = {u: [] for u in units}
    for tag, r in res.runs.items():
        if not math.isnan(r.delta):
            unit_deltas[unit_of[tag]].append(r.delta)
    drops = {u: math.fsum(d) / len(d) for u, d in unit_deltas.items() if d}
    max_unit = max(drops, key=lambda u: drops[u]) if drops else None
    mean_drop = math.fsum(drops.values()) / len(drops) if drops else math.nan
    loo_out: dict[str, Any] = {
        "max_drop": drops[max_unit] if max_unit is not None else math.nan,
        "max_drop_unit": max_unit,
        "mean_drop": mean_drop,
        "kendall_tau": res.kendall_tau,
        "tau_ap": res.tau_ap,
    }
    expected: tuple[float, float] | None = None
    if len(drops) >= 2:
        lo, hi = np.percentile(np.array(list(drops.values())), [25.0, 75.0]).tolist()
        expected = (max(0.0, float(lo)), max(0.0, float(hi)))

    pooled_tags = loo.pooled
    judged: dict[str, dict[str, float | None]] = {}
    for k in JUDGED_AT:
        rep = judged_at_k(qrels, runs, k=k, topics=con.topics, pooled=pooled_tags)
        not_pooled = rep.mean_not_pooled if len(pooled_tags) < len(runs) else None
        judged[str(k)] = {"pooled": _num(rep.mean_pooled), "not_pooled": _num(not_pooled)}

    # every document of the pool, judged or not: what judging the pool at each depth costs
    pool_topic, pool_first = _pool_documents(runs, pooled_tags, con.topics, depth)
    pool_at = np.bincount(pool_first - 1, minlength=depth)
    t_pool = np.bincount(pool_topic, minlength=nt)
    unjudged = int(pool_topic.size - int(judged_e.sum()))

    # pooling efficiency: documents entering the pool at each depth
    first = np.clip(con.first_rank, 1, depth) - 1
    judged_at = np.bincount(first[judged_e], minlength=depth)
    rel_at = np.bincount(first[rel_e], minlength=depth)
    per_judgment = [
        (float(r) / float(j) if j else None)
        for r, j in zip(rel_at.tolist(), judged_at.tolist(), strict=True)
    ]
    efficiency: dict[str, list[Any]] = {
        "depths": list(range(1, depth + 1)),
        "pooled": np.cumsum(pool_at).tolist(),
        "judged": np.cumsum(judged_at).tolist(),
        "relevant": np.cumsum(rel_at).tolist(),
        "relevant_per_judgment": per_judgment,
    }

    # per topic, and the shallow rule
    deep = con.first_rank > depth - shallow_window
    t_judged = np.bincount(con.topic[judged_e], minlength=nt)
    t_rel = np.bincount(con.topic[rel_e], minlength=nt)
    t_deep_judged = np.bincount(con.topic[judged_e & deep], minlength=nt)
    t_deep_rel = np.bincount(con.topic[rel_e & deep], minlength=nt)
    per_topic: dict[str, dict[str, Any]] = {}
    shallow: list[str] = []
    for i, qid in enumerate(con.topics):
        nj, nrel, dj, dr = (int(x[i]) for x in (t_judged, t_rel, t_deep_judged, t_deep_rel))
        rate = nrel / nj if nj else None
        deep_rate = dr / dj if dj else None
        is_shallow = bool(
            dr > 0
            and rate is not None
            and deep_rate is not None
            and deep_rate >= shallow_ratio * rate
        )
        if is_shallow:
            shallow.append(qid)
        per_topic[qid] = {
            "pooled": int(t_pool[i]),
            "relevant": nrel,
            "judged": nj,
            "relevant_at_deepest": dr,
            "judged_at_deepest": dj,
            "rate": rate,
            "rate_at_deepest": deep_rate,
            "shallow": is_shallow,
        }

    scores = [res.runs[t].score for t in res.runs if not math.isnan(res.runs[t].score)]
    mean_score = math.fsum(scores) / len(scores) if scores else math.nan
    reusable: bool | None = None
    tau = res.kendall_tau
    if expected is not None and not math.isnan(tau) and not math.isnan(mean_score):
        reusable = bool(tau >= tau_threshold and expected[1] <= drop_threshold * mean_score)

    unit_word = "group" if leave_out == "group" else "run"
    verdict, basis = _words(
        measure=res.measure,
        depth=depth,
        level=relevance_level,
        unit=unit_word,
        n_units=len(units),
        relevant=relevant,
        unjudged=unjudged,
        pooled_docs=int(pool_topic.size),
        unique_relevant=unique_relevant,
        loo=loo_out,
        judged=judged,
        shallow=shallow,
        n_topics=nt,
        window=shallow_window,
        ratio=shallow_ratio,
        expected=expected,
        n_drops=len(drops),
        reusable=reusable,
        tau_threshold=tau_threshold,
        drop_threshold=drop_threshold,
        mean_score=mean_score,
    )
    return ReusabilityReport(
        depth=depth,
        measure=res.measure,
        relevance_level=relevance_level,
        mode=res.compat,
        topics=con.topics,
        n_runs=len(runs),
        n_pooled=len(pooled_tags),
        n_units=len(units),
        leave_out=leave_out,
        relevant=relevant,
        unjudged_in_pool=unjudged,
        unique_relevant=unique_relevant,
        leave_one_out=loo_out,
        judged=judged,
        efficiency=efficiency,
        per_topic=per_topic,
        shallow_topics=tuple(shallow),
        expected_underestimate=expected,
        reusable=reusable,
        verdict=verdict,
        basis=tuple(basis),
        rules={
            "shallow_window": shallow_window,
            "shallow_ratio": shallow_ratio,
            "tau_threshold": tau_threshold,
            "drop_threshold": drop_threshold,
        },
    )


def _pool_documents(
    runs: Mapping[str, Run], pooled: list[str], topics: tuple[str, ...], depth: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Every (topic, document) of the depth-``depth`` pool, judged or not: its topic index and
    the best rank at which a pooled run has it (runs ranked as trec_eval ranks them)."""
    t_parts: list[npt.NDArray[np.int64]] = []
    r_parts: list[npt.NDArray[np.int64]] = []
    d_parts: list[npt.NDArray[np.bytes_]] = []
    tindex = {q: i for i, q in enumerate(topics)}
    for tag in pooled:
        run = runs[tag]
        for qi, qid in enumerate(run.qids):
            t = tindex.get(qid)
            if t is None:
                continue
            a, b = int(run.offsets[qi]), int(run.offsets[qi + 1])
            rows = run.order[a : min(b, a + depth)]
            d_parts.append(run.docids[rows])
            r_parts.append(np.arange(1, rows.size + 1, dtype=np.int64))
            t_parts.append(np.full(rows.size, t, dtype=np.int64))
    if not d_parts:
        none = np.zeros(0, dtype=np.int64)
        return none, none
    topic, rank, doc = np.concatenate(t_parts), np.concatenate(r_parts), np.concatenate(d_parts)
    order = np.lexsort((rank, doc, topic))
    topic, rank, doc = topic[order], rank[order], doc[order]
    first = np.ones(topic.size, dtype=bool)
    first[1:] = (topic[1:] != topic[:-1]) | (doc[1:] != doc[:-1])
    return topic[first], rank[first]


def _words(
    *,
    measure: str,
    depth: int,
    level: int,
    unit: str,
    n_units: int,
    relevant: Mapping[str, Any],
    unjudged: int,
    pooled_docs: int,
    unique_relevant: Mapping[str, int],
    loo: Mapping[str, Any],
    judged: Mapping[str, Mapping[str, float | None]],
    shallow: list[str],
    n_topics: int,
    window: int,
    ratio: float,
    expected: tuple[float, float] | None,
    n_drops: int,
    reusable: bool | None,
    tau_threshold: float,
    drop_threshold: float,
    mean_score: float,
) -> tuple[str, list[str]]:
    """The verdict and its basis, in plain words."""
    units = f"{n_drops} {unit}s' leave-one-{unit}-out drops"
    if expected is None:
        first = (
            f"There are too few pooled {unit}s ({n_units}) to estimate how much a new system's "
            f"{measure} is underestimated: leaving one out needs at least two"
        )
    elif expected[1] == 0.0:
        first = (
            f"A new system's {measure} is unlikely to be underestimated (the middle half of the "
            f"{units} is 0)"
        )
    else:
        first = (
            f"A new system's {measure} is likely underestimated by "
            f"{expected[0]:.4f}-{expected[1]:.4f} (the middle half of the {units})"
        )
    if shallow:
        first += f"; the pool is shallow for topic{'' if len(shallow) == 1 else 's'} "
        first += f"{_ids(shallow)}."
    else:
        first += f"; the pool does not look shallow for any of the {n_topics} topics."
    tau = loo["kendall_tau"]
    limit = drop_threshold * mean_score
    test = (
        f"leave-one-{unit}-out Kendall tau-b >= {tau_threshold:g} and an expected underestimate "
        f"of at most {100 * drop_threshold:g}% of the pooled runs' mean {measure}"
    )
    if reusable is None:
        second = f"Reusability cannot be judged ({test}: not measurable here)."
    else:
        assert expected is not None  # reusable is measured only with a range
        got = f"tau-b {tau:.3f}, underestimate up to {expected[1]:.4f} against {limit:.4f}"
        word = "looks reusable" if reusable else "does not look reusable"
        second = f"The collection {word} for new systems by the test {test} ({got})."
    verdict = f"{first} {second}"

    basis: list[str] = []
    total = relevant["total"]
    basis.append(
        f"{total} relevant documents (grade >= {level}) are in the depth-{depth} pool of the "
        f"{n_topics} topics; {relevant['by_one_unit']} of them "
        f"({_pct(relevant['by_one_unit'], total)} of the relevant documents in the pool) "
        f"were found by only one {unit}"
        + (
            "."
            if unit == "run"
            else f", {relevant['by_one_run']} ({_pct(relevant['by_one_run'], total)} of them) by "
            "only one run."
        )
    )
    if unjudged:
        basis.append(
            f"{unjudged} of the {pooled_docs} documents of the depth-{depth} pool have no "
            "judgment in these qrels (scored as not relevant)."
        )
    if unique_relevant:
        top = max(unique_relevant, key=lambda u: unique_relevant[u])
        basis.append(
            f"The {unit} with the most relevant documents nobody else found is {top} "
            f"({unique_relevant[top]})."
        )
    if loo["max_drop_unit"] is not None:
        basis.append(
            f"Leaving each of the {n_units} {unit}s out of the pool in turn, its runs' {measure} "
            f"fell by {loo['mean_drop']:.4f} on average and by at most {loo['max_drop']:.4f} "
            f"({loo['max_drop_unit']})"
            + (
                f"; Kendall tau-b {tau:.3f} and tau_AP {loo['tau_ap']:.3f} between the rankings."
                if not math.isnan(tau) and not math.isnan(loo["tau_ap"])
                else "."
            )
        )
    for k, j in judged.items():
        pooled, other = j["pooled"], j["not_pooled"]
        if pooled is None:
            continue
        text = f"Mean Judged@{k} (the share of a run's top {k} that is judged): "
        text += f"pooled runs {pooled:.3f}"
        text += "." if other is None else f", the other runs {other:.3f}."
        basis.append(text)
    basis.append(
        f"Shallow rule: a topic is shallow when the documents entering its pool at the deepest "
        f"{window} of the {depth} depths still hold a relevant one, at a rate of at least "
        f"{ratio:g} times the topic's rate over the whole pool (after Zobel 1998)."
    )
    if not math.isnan(mean_score):
        basis.append(
            f"Reusability test: {test} ({100 * drop_threshold:g}% of {mean_score:.4f} is "
            f"{limit:.4f})."
        )
    return verdict, basis
