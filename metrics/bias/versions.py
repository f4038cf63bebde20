"""Two qrels versions compared on the topics both can score (:func:`compare_qrels_versions`).

Comparisons of two sides (two qrels versions, two pools, two runs), exactly:

1. A side **can score** a topic when it has at least one relevant judgment (grade >= the relevance
   level) for it (:func:`scorable_topics`); for a run, when it also answers the topic. Only the
   topics of the ``topics`` filter count.
2. Every figure that compares the sides is computed on the topics **both** can score
   (:func:`common_topics`: ``compared``); the others are listed (``only_a``, ``only_b``: "new in
   b", ``neither``) and stated in plain words with the sides' labels (:meth:`TopicSplit.note`:
   "compared on 5 topics; topic 6 is new in v2 (not in v1)"). Two means over different topics
   mix the change of interest with the change of topics, so no comparison is made across them.
   No common topic is an error, not an empty comparison.
3. :func:`compare_qrels_versions`, per run: ``score_a``, ``score_b`` (the measure's mean on the
   compared topics), ``rank`` = 1 + the number of runs with a strictly higher score (a run with
   no score has no rank), ``rank_change = rank_a - rank_b`` (positive = rose), ``delta = score_b
   - score_a`` with the Student-t interval of the per-topic differences b - a (``ci_level``,
   default 95%) and the paired t-test p (both None with fewer than two topics), the same for
   R@k (``recall_change`` = "drop" below -1e-12, "gain" above 1e-12, else "no change"), and,
   separately, score, rank and recall under b on the ``only_b`` topics. Kendall tau-b and
   tau_AP (a as reference) compare the rankings by ``score_a`` and ``score_b``. The novel runs'
   ``delta`` is their gain; the other runs' recall change is expected to be a drop (the known
   relevant set of the compared topics grew), and is labelled by its sign either way.

Measures are evaluated with :mod:`metrics.measures`, by default in trec_eval-compatible mode
(``compat="trec_eval"``): topics averaged = those in both the restricted qrels and the run. With
``compat=None`` (the honest mode) topics with no relevant document in the restricted qrels are
excluded and unanswered topics score 0.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from metrics.bias.topics import (
    TopicSplit,
    _id_list,
    _num,
    common_topics,
    scorable_topics,
    subset_qrels,
)
from metrics.evaluation.evaluator import Evaluator
from metrics.io import Qrels, Run
from metrics.measures.names import Measure, parse_measure
from metrics.pooling.runs import topic_sort_key
from metrics.stats.intervals import t_ci
from metrics.stats.paired import paired_test
from metrics.stats.rank import kendall_tau_b, tau_ap

if TYPE_CHECKING:
    from metrics.bias.leaveout import Compat


__all__ = [
    "CHANGE_TOLERANCE",
    "NewTopicScores",
    "RunComparison",
    "VersionComparison",
    "compare_qrels_versions",
]

Change = Literal["drop", "gain", "no change"]


CHANGE_TOLERANCE = 1e-12  # a difference within this counts as "no change" (rounding noise)


def _change(delta: float) -> Change | None:
    if math.isnan(delta):
        return None
    if delta < -CHANGE_TOLERANCE:
        return "drop"
    if delta > CHANGE_TOLERANCE:
        return "gain"
    return "no change"


def _interval(ci: tuple[float, float] | None) -> list[float] | None:
    if ci is None or math.isnan(ci[0]) or math.isnan(ci[1]):
        return None
    return [float(ci[0]), float(ci[1])]


@dataclass(frozen=True)
class NewTopicScores:
    """A run's figures under version b on the topics only b can score (``only_b``)."""

    score_b: float
    rank_b: int | None
    recall_b: float

    def to_dict(self) -> dict[str, Any]:
        """``{"score_b", "rank_b", "recall_b"}`` (NaN becomes None)."""
        return {
            "score_b": _num(self.score_b),
            "rank_b": self.rank_b,
            "recall_b": _num(self.recall_b),
        }


@dataclass(frozen=True)
class RunComparison:
    """One run under qrels versions a and b, on the compared topics (see
    :func:`compare_qrels_versions`). ``n_topics`` is the number of paired topics (in trec_eval
    mode a run that does not answer a compared topic has no pair for it)."""

    score_a: float
    score_b: float
    delta: float
    rank_a: int | None
    rank_b: int | None
    recall_a: float
    recall_b: float
    recall_delta: float
    novel: bool
    n_topics: int = 0
    delta_ci: tuple[float, float] | None = None
    delta_p: float | None = None
    recall_delta_ci: tuple[float, float] | None = None
    recall_change: Change | None = None
    new_topics: NewTopicScores | None = None

    @property
    def rank_change(self) -> int | None:
        """rank_a - rank_b: positive when the run rose under b."""
        if self.rank_a is None or self.rank_b is None:
            return None
        return self.rank_a - self.rank_b

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (NaN becomes None)."""
        return {
            "novel": self.novel,
            "n_topics": self.n_topics,
            "score_a": _num(self.score_a),
            "score_b": _num(self.score_b),
            "rank_a": self.rank_a,
            "rank_b": self.rank_b,
            "rank_change": self.rank_change,
            "delta": _num(self.delta),
            "delta_ci": _interval(self.delta_ci),
            "delta_p": _num(self.delta_p),
            "recall_a": _num(self.recall_a),
            "recall_b": _num(self.recall_b),
            "recall_delta": _num(self.recall_delta),
            "recall_delta_ci": _interval(self.recall_delta_ci),
            "recall_change": self.recall_change,
            "new_topics": None if self.new_topics is None else self.new_topics.to_dict(),
        }


@dataclass(frozen=True)
class VersionComparison:
    """Every run's score and rank under qrels a and b; see :func:`compare_qrels_versions`."""

    measure: str
    recall_measure: str
    compat: str
    runs: dict[str, RunComparison]
    kendall_tau: float
    tau_ap: float
    novel_gain: dict[str, float]
    others_recall_change: dict[str, dict[str, Any]]
    mean_others_recall_change: float | None
    labels: tuple[str, str] = ("a", "b")
    ci_level: float = 0.95
    topics: TopicSplit = field(default_factory=lambda: TopicSplit((), (), (), ()))
    topics_note: str = ""
    others_recall_summary: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (the shape in the module docstring; NaN becomes None)."""
        return {
            "measure": self.measure,
            "recall_measure": self.recall_measure,
            "mode": self.compat,
            "labels": list(self.labels),
            "ci_level": self.ci_level,
            "topics": self.topics.to_dict(),
            "topics_note": self.topics_note,
            "kendall_tau": _num(self.kendall_tau),
            "tau_ap": _num(self.tau_ap),
            "runs": {t: r.to_dict() for t, r in self.runs.items()},
            "novel_gain": {t: _num(v) for t, v in self.novel_gain.items()},
            "others_recall_change": {
                t: {k: (_num(v) if isinstance(v, float) else v) for k, v in c.items()}
                for t, c in self.others_recall_change.items()
            },
            "mean_others_recall_change": _num(self.mean_others_recall_change),
            "others_recall_summary": self.others_recall_summary,
        }


def _ranks(scores: Mapping[str, float]) -> dict[str, int | None]:
    """1 + the number of runs with a strictly higher score (ties share the better rank).

    A run without a score (NaN: it answers none of the topics) has no rank and does not count.
    """
    vals = np.array([s for s in scores.values() if not math.isnan(s)])
    return {
        t: None if math.isnan(s) else 1 + int(np.count_nonzero(vals > s)) for t, s in scores.items()
    }


def _paired(
    per_a: Mapping[str, float], per_b: Mapping[str, float], level: float
) -> tuple[int, tuple[float, float] | None, float | None]:
    """Number of pairs, t interval of the mean of b - a, and the paired t-test p (None < 2)."""
    qids = sorted(set(per_a) & set(per_b), key=topic_sort_key)
    va = np.array([per_a[q] for q in qids], dtype=np.float64)
    vb = np.array([per_b[q] for q in qids], dtype=np.float64)
    if len(qids) < 2:
        return len(qids), None, None
    ci = t_ci(vb - va, level=level)
    p = paired_test(vb, va, test="t").p_value
    return len(qids), ci, p


def _recall_summary(
    others: Mapping[str, Mapping[str, Any]], recall: str, n_topics: int, mean: float | None
) -> str:
    """'recall (R@50) fell for 4 and rose for 1 of the 5 other runs on the 5 compared topics
    (mean -0.0310)'."""
    if not others:
        return "every run is novel: there is no other run whose recall could change"
    changes = [c["change"] for c in others.values() if c["change"] is not None]
    topics = f"the {n_topics} compared topic{'' if n_topics == 1 else 's'}"
    if not changes:
        return f"no other run answers any of {topics}: no recall change to report"
    counts = [(changes.count(c), w) for c, w in (("drop", "fell"), ("gain", "rose"))]
    words = [f"{w} for {k}" for k, w in counts if k]
    same = changes.count("no change")
    if same:
        words.append(f"did not change for {same}")
    said = words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"
    n = len(changes)
    text = f"recall ({recall}) {said} of the {n} other run{'' if n == 1 else 's'} on {topics}"
    if mean is not None:
        text += f" (mean {mean:+.4f})"
    missing = len(others) - n
    if missing:
        text += f"; {missing} other run{' answers' if missing == 1 else 's answer'} none of them"
    return text


def compare_qrels_versions(
    qrels_a: Qrels,
    qrels_b: Qrels,
    runs: Mapping[str, Run],
    measure: str | Measure,
    *,
    novel: Sequence[str] = (),
    recall_k: int = 1000,
    topics: Iterable[str] | None = None,
    relevance_level: int = 1,
    compat: Compat | Literal["honest"] = "trec_eval",
    labels: tuple[str, str] = ("a", "b"),
    ci_level: float = 0.95,
) -> VersionComparison:
    """Every run under qrels versions a (before) and b (after re-pooling), on the same topics.

    The rule (module docstring): both versions are scored on the topics both can score
    (``compared``: a relevant judgment at ``relevance_level`` in each, after the ``topics``
    filter); ``topics_note`` says what differs, with ``labels`` ("compared on 5 topics; topic 6 is
    new in v2 (not in v1)"). No common topic is a ``ValueError``.

    Per run, on the compared topics: score and rank (1 + runs strictly better) under a and b,
    ``delta = score_b - score_a`` with the ``ci_level`` Student-t interval of the per-topic
    differences b - a (:func:`metrics.stats.intervals.t_ci`) and the paired t-test p
    (:func:`metrics.stats.paired.paired_test`; both None with fewer than two paired topics), and
    R@``recall_k`` under both with its change ("drop" / "gain" / "no change", within
    ``CHANGE_TOLERANCE``) and interval. ``new_topics``: the run's score, rank and recall under b on
    the ``only_b`` topics (None when there are none). Kendall tau-b and tau_AP (a as reference)
    compare the two rankings on the compared topics. ``novel_gain[tag]`` = delta of each novel
    run (whose documents were added to the pool); ``others_recall_change[tag]`` = {"a", "b",
    "delta", "change"} of R@k of the other runs, with their mean and a sentence
    (``others_recall_summary``).
    """
    m = measure if isinstance(measure, Measure) else parse_measure(measure)
    if recall_k < 1:
        raise ValueError(f"recall_k must be >= 1, got {recall_k}")
    rk = Measure("R", recall_k)
    mode: Compat = None if compat == "honest" else compat
    if mode not in (None, "trec_eval"):
        raise ValueError(f"compat must be 'trec_eval', 'honest' or None, got {compat!r}")
    if (
        len(labels) != 2
        or not all(isinstance(x, str) and x.strip() for x in labels)
        or labels[0] == labels[1]
    ):
        raise ValueError(f"labels must be two different non-empty names, got {labels!r}")
    if not 0.0 < ci_level < 1.0:
        raise ValueError(f"ci_level must be strictly between 0 and 1, got {ci_level}")
    if not runs:
        raise ValueError("no runs given")
    unknown = sorted(set(novel) - set(runs))
    if unknown:
        raise ValueError(f"novel runs not among the runs given: {', '.join(unknown[:5])}")
    la, lb = labels
    wanted = None if topics is None else set(topics)
    universe = [q for q in (*qrels_a.qids, *qrels_b.qids) if wanted is None or q in wanted]
    split = common_topics(
        scorable_topics(qrels_a, relevance_level=relevance_level, topics=wanted),
        scorable_topics(qrels_b, relevance_level=relevance_level, topics=wanted),
        universe=universe,
    )
    if not split.compared:
        raise ValueError(
            f"no topic to compare: {la} and {lb} have no topic with a relevant judgment "
            f"(grade >= {relevance_level}) in common ({la} can score "
            f"{_id_list(split.only_a) or 'none'}; "
            f"{lb} can score {_id_list(split.only_b) or 'none'})"
        )

    def evaluator(q: Qrels, ids: tuple[str, ...]) -> Evaluator:
        return Evaluator(
            subset_qrels(q, ids), [m, rk], compat=mode, relevance_level=relevance_level, ci=None
        )

    ev_a, ev_b = evaluator(qrels_a, split.compared), evaluator(qrels_b, split.compared)
    ev_new = evaluator(qrels_b, split.only_b) if split.only_b else None
    res = {tag: (ev_a.evaluate(run), ev_b.evaluate(run)) for tag, run in runs.items()}
    sa = {t: a.aggregates[m.name].value for t, (a, _) in res.items()}
    sb = {t: b.aggregates[m.name].value for t, (_, b) in res.items()}
    ra, rb = _ranks(sa), _ranks(sb)
    new: dict[str, NewTopicScores] = {}
    if ev_new is not None:
        new_res = {tag: ev_new.evaluate(run) for tag, run in runs.items()}
        sn = {t: r.aggregates[m.name].value for t, r in new_res.items()}
        rn = _ranks(sn)
        new = {
            t: NewTopicScores(sn[t], rn[t], r.aggregates[rk.name].value) for t, r in new_res.items()
        }
    out: dict[str, RunComparison] = {}
    for tag, (a, b) in res.items():
        n, ci, p = _paired(a.per_query[m.name], b.per_query[m.name], ci_level)
        _, rci, _ = _paired(a.per_query[rk.name], b.per_query[rk.name], ci_level)
        rec_a, rec_b = a.aggregates[rk.name].value, b.aggregates[rk.name].value
        out[tag] = RunComparison(
            score_a=sa[tag],
            score_b=sb[tag],
            delta=sb[tag] - sa[tag],
            rank_a=ra[tag],
            rank_b=rb[tag],
            recall_a=rec_a,
            recall_b=rec_b,
            recall_delta=rec_b - rec_a,
            novel=tag in novel,
            n_topics=n,
            delta_ci=ci,
            delta_p=p,
            recall_delta_ci=rci,
            recall_change=_change(rec_b - rec_a),
            new_topics=new.get(tag),
        )
    others: dict[str, dict[str, Any]] = {
        t: {
            "a": _num(r.recall_a),
            "b": _num(r.recall_b),
            "delta": _num(r.recall_delta),
            "change": r.recall_change,
        }
        for t, r in out.items()
        if not r.novel
    }
    changes = [v["delta"] for v in others.values() if v["delta"] is not None]
    mean_change = math.fsum(changes) / len(changes) if changes else None
    both = [t for t in runs if not (math.isnan(sa[t]) or math.isnan(sb[t]))]
    x, y = {t: sa[t] for t in both}, {t: sb[t] for t in both}
    ok = len(both) >= 2
    return VersionComparison(
        measure=m.name,
        recall_measure=rk.name,
        compat="trec_eval" if mode == "trec_eval" else "honest",
        runs=out,
        kendall_tau=kendall_tau_b(x, y) if ok else math.nan,
        tau_ap=tau_ap(x, y) if ok else math.nan,
        novel_gain={t: out[t].delta for t in novel},
        others_recall_change=others,
        mean_others_recall_change=mean_change,
        labels=(la, lb),
        ci_level=ci_level,
        topics=split,
        topics_note=split.note((la, lb)),
        others_recall_summary=_recall_summary(others, rk.name, len(split.compared), mean_change),
    )
