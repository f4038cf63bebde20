"""The judging items of answer runs, and every run's nugget and support scores as linear
functions of their labels (what :mod:`metrics.answers.estimates` corrects from a human sample).

Items, labelled 2 / 1 / 0 (:data:`GRADES`):

- ``nugget``: (topic, answer text, nugget id), the nugget's assignment to the answer
  (``support``, ``partial_support``, ``not_support``). The answer text is its sentences' texts,
  white space collapsed, joined by one space: runs whose answers to a topic read the same share
  the item, and one human label serves all of them (citations do not change an assignment).
- ``support``: (topic, sentence text, cited segment id), the support of the sentence by the
  first segment it cites (``full``, ``partial``, ``none``: the track's protocol, ``citations=
  "first"`` in :mod:`metrics.answers.support`). The same sentence citing the same segment is one
  item, whichever run's or answer's it is.

Linearity. A run's score on a topic is a ratio whose denominator is fixed before any label is
seen: nugget recall divides by the bank's N_t nuggets, V_t vital ones or V_t + 0.5 O_t (weighted
forms); support precision by the answer's cited sentences (its judged pairs under ``"first"``),
recall by its sentences (an uncited sentence counts 0 and is no item). Only the numerators
depend on labels, as sums of per-item weights 1 (support) and 0.5 (partial; 0 in the strict
forms): linear in f_1 = [y >= 1] and f_2 = [y >= 2] (strict: f_2; partial counting 0.5:
0.5 f_1 + 0.5 f_2). The macro average over the Q_r topics where the run's score is defined is
linear too, Q_r known: the topics of the banks for nuggets (a topic the run did not answer
scores 0, as :func:`~metrics.answers.nuggets.run_nugget_scores` has it; the vital scores skip a
topic with no vital nugget), the answered topics for support (precision skips an answer that
cites nothing); ``undefined="zero"`` counts undefined topics as 0, as
:func:`~metrics.answers.averages.macro_average` does. So theta_r = sum_i c_r,i . f(y_i) with
known coefficients: nothing is estimated in a denominator.

The coefficients are not written here: they are read off the definitions
(:func:`~metrics.answers.nuggets.nugget_scores`, :func:`~metrics.answers.support.support_scores`)
by scoring a topic with one item moved from none to partial and from partial to full support,
and the topic's all-partial and all-full scores are checked to be the sums of those steps. A score
that is not linear fails the check: support recall under ``citations="all"``, a maximum over a
sentence's pairs, is why only ``"first"`` is offered.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from metrics.answers.nuggets import NUGGET_MEASURES, Nugget, nugget_scores
from metrics.answers.support import support_scores
from metrics.io.answers import TopicAnswer
from metrics.sampling.linear import LinearStructure

__all__ = [
    "GRADES",
    "SUPPORT_ESTIMATED",
    "AnswerItem",
    "AnswerItems",
    "nugget_items",
    "support_items",
]

ItemKind = Literal["nugget", "support"]
Undefined = Literal["skip", "zero"]
F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
# the integer label of every judgment an item takes, per kind
GRADES: dict[str, dict[str, int]] = {
    "nugget": {"support": 2, "partial_support": 1, "not_support": 0},
    "support": {"full": 2, "partial": 1, "none": 0},
}
SUPPORT_ESTIMATED = ("precision", "recall")  # words takes no label
_STEP = {"nugget": ("partial_support", "support"), "support": ("partial", "full")}
_TOLERANCE = 1e-9


@dataclass(frozen=True, slots=True, order=True)
class AnswerItem:
    """One judging unit: ``text`` is the answer's (``nugget``) or the sentence's (``support``),
    white space collapsed; ``target`` the nugget id or the cited segment id."""

    kind: ItemKind
    topic_id: str
    text: str
    target: str


@dataclass(frozen=True, eq=False)
class AnswerItems:
    """The items of one kind over a set of runs, in sorted order, and each run's measures as
    linear functions of their labels: ``coefficients`` (measures, 2, runs, items) of f_1 and
    f_2, each run's 1/Q_r in; ``counts`` (measures, runs) the Q_r topics averaged (0: the
    run's measure is undefined)."""

    kind: ItemKind
    items: tuple[AnswerItem, ...]
    runs: tuple[str, ...]
    measures: tuple[str, ...]
    coefficients: F64
    counts: I64
    _index: dict[AnswerItem, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", {it: i for i, it in enumerate(self.items)})

    @property
    def n_items(self) -> int:
        return len(self.items)

    def flat(self, mapping: Mapping[AnswerItem, Any], *, what: str) -> list[Any]:
        """The values of ``mapping`` in item order (None where absent); an item that is not one
        of these is an error (``what`` names the mapping)."""
        out: list[Any] = [None] * len(self.items)
        for item, value in mapping.items():
            i = self._index.get(item)
            if i is None:
                raise ValueError(f"{what} has {item!r}, which is not one of the items")
            out[i] = value
        return out

    def values(self, labels: Sequence[int] | I64) -> F64:
        """(runs, measures) every run's measures with ``labels`` (every item, item order, 0-2)
        as the truth: sum_i c_r,i . f(y_i); NaN where undefined."""
        y = _labels(labels, self.n_items, "labels")
        f = np.stack([y >= 1, y >= 2]).astype(np.float64)
        out = np.einsum("mhrn,hn->rm", self.coefficients, f)
        return np.asarray(np.where(self.counts.T > 0, out, np.nan), dtype=np.float64)

    @property
    def groups(self) -> I64:
        """(items,) the run whose measures read each item (its index in :attr:`runs`), or
        ``len(runs)`` for an item several runs share (or none): the estimate's calibration
        groups, for an assigner errs more on some systems' answers than on others'."""
        reads = np.abs(self.coefficients).sum(axis=(0, 1)) > 0  # (runs, items)
        alone = reads.sum(axis=0) == 1
        return np.asarray(np.where(alone, reads.argmax(axis=0), len(self.runs)), dtype=np.int64)

    def structure(self, *, threshold: int = 1) -> LinearStructure:
        """The estimator's view of these items (:class:`~metrics.sampling.linear.
        LinearStructure`): the coefficients times the number of topics the items span."""
        topics = [it.topic_id for it in self.items]
        scale = float(len(set(topics)))
        return LinearStructure(
            topics, self.runs, self.measures, self.coefficients * scale, threshold=threshold
        )


def _labels(labels: Sequence[int] | I64, n: int, what: str) -> I64:
    y = np.asarray(labels, dtype=np.int64)
    if y.shape != (n,):
        raise ValueError(f"{what}: expected {n} labels, got shape {y.shape}")
    if y.size and (int(y.min()) < 0 or int(y.max()) > 2):
        raise ValueError(f"{what}: labels are 0 (none), 1 (partial) or 2 (support)")
    return y


def _text(text: str) -> str:
    return " ".join(text.split())


def _answer_text(answer: TopicAnswer) -> str:
    return " ".join(_text(s.text) for s in answer.sentences)


class _Builder:
    """Items numbered as they come, each run's per-topic steps added to their coefficients."""

    def __init__(self, kind: ItemKind, runs: Sequence[str], measures: Sequence[str]) -> None:
        self.kind = kind
        self.runs = tuple(runs)
        self.measures = tuple(measures)
        self.index: dict[AnswerItem, int] = {}
        self.rows: list[tuple[int, int, int, F64]] = []  # (measure, run, item, step (2,))
        self.counts = np.zeros((len(measures), len(runs)), dtype=np.int64)

    def add(self, m: int, r: int, item: AnswerItem, step: F64) -> None:
        i = self.index.setdefault(item, len(self.index))
        self.rows.append((m, r, i, step))

    def items(self) -> AnswerItems:
        if not self.index:
            raise ValueError(f"no {self.kind} items: no run answers a topic it can be scored on")
        order = sorted(self.index)
        new = np.empty(len(order), dtype=np.int64)
        new[[self.index[it] for it in order]] = np.arange(len(order))
        coef = np.zeros((len(self.measures), 2, len(self.runs), len(order)))
        for m, r, i, step in self.rows:
            coef[m, :, r, new[i]] += step
        q = self.counts
        coef /= np.where(q > 0, q, 1)[:, None, :, None]
        return AnswerItems(self.kind, tuple(order), self.runs, self.measures, coef, q.copy())


def _one_per_topic(run: str, answers: Iterable[TopicAnswer]) -> dict[str, TopicAnswer]:
    out: dict[str, TopicAnswer] = {}
    for a in answers:
        if a.topic_id in out:
            raise ValueError(f"run {run!r} answers topic {a.topic_id!r} twice")
        out[a.topic_id] = a
    return out


def _steps(
    score: Any, keys: Sequence[Any], kind: ItemKind, measures: Sequence[str], where: str
) -> tuple[list[bool], F64]:
    """Which ``measures`` are defined, and (measures, 2, keys) each key's steps none -> partial
    -> full, from ``score(labels) -> scores``; checked to add up (module docstring)."""
    none = {k: "none" if kind == "support" else "not_support" for k in keys}
    partial, full = _STEP[kind]
    base = score(none)
    defined = [base.score(m) is not None for m in measures]
    steps = np.zeros((len(measures), 2, len(keys)))
    for j, k in enumerate(keys):
        lo, hi = score({**none, k: partial}), score({**none, k: full})
        for m, name in enumerate(measures):
            if defined[m]:
                steps[m, 0, j] = lo.score(name) - base.score(name)
                steps[m, 1, j] = hi.score(name) - lo.score(name)
    all_lo, all_hi = score(dict.fromkeys(keys, partial)), score(dict.fromkeys(keys, full))
    for m, name in enumerate(measures):
        if not defined[m]:
            continue
        want = (0.0, steps[m, 0].sum(), steps[m, :].sum())
        got = (base.score(name), all_lo.score(name), all_hi.score(name))
        if any(abs(g - w) > _TOLERANCE for g, w in zip(got, want, strict=True)):
            raise ValueError(f"{where}: {name} is not linear in the labels ({got} vs {want})")
    return defined, steps


def nugget_items(
    banks: Mapping[str, Sequence[Nugget]],
    runs: Mapping[str, Iterable[TopicAnswer]],
    *,
    measures: Sequence[str] = NUGGET_MEASURES,
    undefined: Undefined = "skip",
) -> AnswerItems:
    """Every (topic, answer text, nugget) item of ``runs`` (run -> its answers) on the topics of
    ``banks``, and every run's macro ``measures`` (of :data:`~metrics.answers.nuggets.
    NUGGET_MEASURES`) as linear functions of their labels (module docstring). An answer to a
    topic without a bank has no nugget item."""
    bad = [m for m in measures if m not in NUGGET_MEASURES]
    if bad or not measures:
        raise ValueError(f"nugget measures are some of {NUGGET_MEASURES}, got {list(measures)}")
    _undefined(undefined)
    b = _Builder("nugget", list(runs), measures)
    topics = sorted(banks)
    steps = {}
    for t in topics:
        ids = [n.id for n in banks[t]]

        def score(labels: Mapping[str, str], t: str = t) -> Any:
            return nugget_scores(banks[t], labels, topic_id=t)

        steps[t] = _steps(score, ids, "nugget", measures, f"topic {t!r}")
    for r, run in enumerate(b.runs):
        answers = _one_per_topic(run, runs[run])
        for t in topics:
            defined, step = steps[t]
            for m in range(len(measures)):
                b.counts[m, r] += defined[m] or undefined == "zero"
            answer = answers.get(t)
            if answer is None:  # not answered: 0 wherever defined
                continue
            text = _answer_text(answer)
            for j, n in enumerate(banks[t]):
                item = AnswerItem("nugget", t, text, n.id)
                for m in range(len(measures)):
                    if defined[m]:
                        b.add(m, r, item, step[m, :, j])
    return b.items()


def support_items(
    runs: Mapping[str, Iterable[TopicAnswer]],
    *,
    measures: Sequence[str] = SUPPORT_ESTIMATED,
    undefined: Undefined = "skip",
) -> AnswerItems:
    """Every (topic, sentence text, first cited segment) item of ``runs`` (run -> its answers),
    and every run's macro support ``measures`` (precision, recall; ``citations="first"``) over
    the topics it answered, as linear functions of their labels (module docstring)."""
    bad = [m for m in measures if m not in SUPPORT_ESTIMATED]
    if bad or not measures:
        raise ValueError(f"support measures are some of {SUPPORT_ESTIMATED}, got {list(measures)}")
    _undefined(undefined)
    b = _Builder("support", list(runs), measures)
    for r, run in enumerate(b.runs):
        for t, answer in sorted(_one_per_topic(run, runs[run]).items()):
            pairs = [
                (i, answer.references[s.citations[0]])
                for i, s in enumerate(answer.sentences)
                if s.citations
            ]

            def score(labels: Mapping[tuple[int, str], str], a: TopicAnswer = answer) -> Any:
                return support_scores(a, labels)

            where = f"run {run!r}, topic {t!r}"
            defined, step = _steps(score, pairs, "support", measures, where)
            for m in range(len(measures)):
                b.counts[m, r] += defined[m] or undefined == "zero"
            for j, (i, segment) in enumerate(pairs):
                item = AnswerItem("support", t, _text(answer.sentences[i].text), segment)
                for m in range(len(measures)):
                    if defined[m]:
                        b.add(m, r, item, step[m, :, j])
    return b.items()


def _undefined(undefined: str) -> None:
    if undefined not in ("skip", "zero"):
        raise ValueError(f"undefined must be 'skip' or 'zero', got {undefined!r}")
