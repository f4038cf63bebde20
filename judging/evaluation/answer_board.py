"""The answers of a campaign's answer runs scored from people's judgments (issue 34, point 4):
per run, macro-averaged nugget recall (``metrics.answers.nuggets``: All, Vital, strict and
partial-0.5 forms, weighted) against one published nugget bank version, citation support
(``metrics.answers.support``: weighted precision and recall of each sentence's first citation,
as TREC 2024 RAG judged) and answer length, each with its 95% interval over topics, beside the
same run's retrieval measure under a named qrels version.

A label is the consensus of the item's judgments (the campaign's consensus rule; an admin's
adjudication wins; excluded assessors left out), as for qrels. Honest about gaps: a pair nobody
judged yet is counted as not supported (the score shown), and the score it would have were
every unjudged pair supported is given beside it (``upper``), with the judged and total pairs,
so that an incomplete score reads as the bounds it is. Computed on read (a GET never writes);
nothing about runs reaches an assessor from here.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from judging.assessments import units
from judging.assessments.models import (
    Adjudication,
    AnnotatorExclusion,
    Judgment,
    Nugget,
    NuggetBank,
    NuggetBankState,
    QrelsVersion,
    UnitKind,
)
from judging.campaigns.models import Campaign, Run, RunAnswer
from judging.core.errors import InvalidInput, NotFound
from judging.evaluation.models import EvalMode, Evaluation, measures_key
from judging.evaluation.results import upgraded_evaluation
from judging.evaluation.selectors import report_viewer
from metrics.answers import NUGGET_MEASURES, SUPPORT_MEASURES, MacroAverage
from metrics.answers import Nugget as BankNugget
from metrics.answers.nuggets import nugget_averages, nugget_scores
from metrics.answers.support import support_averages, support_scores
from metrics.io.answers.model import AnswerSentence, TopicAnswer
from metrics.judges.agreement import consensus_grade
from metrics.problems import Problem
from metrics.results import RunLabel, render

NUGGET_LABELS = {2: "support", 1: "partial_support", 0: "not_support"}
SUPPORT_LABELS = {2: "full", 1: "partial", 0: "none"}


@dataclass(frozen=True)
class AnswerScore:
    """One measure's macro average over the topics where it is defined, with its 95% interval
    (``low``, ``high``; a seeded bootstrap over topics); ``upper``: the mean were every unjudged
    pair supported (None when every pair is judged, or for length, which takes no label)."""

    mean: float | None
    low: float | None
    high: float | None
    topics: int
    undefined: int
    upper: float | None


@dataclass(frozen=True)
class AnswerRow:
    run: RunLabel
    answered: int
    nuggets: dict[str, AnswerScore]
    support: dict[str, AnswerScore]
    nugget_pairs: int
    nugget_judged: int
    support_pairs: int
    support_judged: int
    retrieval: float | None


@dataclass(frozen=True)
class BankRef:
    number: int
    content_hash: str
    topics: int
    nuggets: int


@dataclass(frozen=True)
class AnswerBoard:
    """Every answer run's scores under one bank version, with what they rest on: the bank
    (its version and hash), the qrels version of the retrieval measure shown beside them, and
    the notes a careful reader needs."""

    campaign: int
    bank: BankRef | None
    retrieval_measure: str
    qrels_version: str | None
    rows: list[AnswerRow]
    notes: list[str]


def _bank(campaign: Campaign, number: int | None) -> NuggetBank | None:
    banks = NuggetBank.objects.filter(campaign=campaign, state=NuggetBankState.PUBLISHED)
    if number is None:
        return banks.order_by("-number").first()
    found = NuggetBank.objects.filter(campaign=campaign, number=number).first()
    if found is None:
        raise NotFound(f"campaign {campaign.pk} has no nugget bank v{number}")
    if found.state != NuggetBankState.PUBLISHED:
        raise InvalidInput(
            f"nugget bank v{number} is a draft; scores use a published (frozen) bank",
            [Problem.at("bank", "must be a published bank")],
        )
    return found


def consensus_labels(campaign: Campaign, kind: str) -> dict[tuple[int, str], int]:
    """(topic id, item key) -> the consensus grade of the item's judgments of ``kind`` (gold
    items and excluded assessors left out; an adjudication wins)."""
    excluded = AnnotatorExclusion.objects.filter(campaign=campaign, lifted_at__isnull=True)
    grades: dict[tuple[int, str], list[int]] = defaultdict(list)
    for topic_id, key, grade in (
        Judgment.objects.filter(campaign=campaign, kind=kind, gold__isnull=True)
        .exclude(annotator_id__in=excluded.values("annotator_id"))
        .values_list("topic_id", "docid", "grade")
        .iterator(chunk_size=10_000)
    ):
        grades[(topic_id, key)].append(grade)
    rule = campaign.consensus_rule
    out = {item: consensus_grade(g, rule=rule) for item, g in grades.items()}  # type: ignore[arg-type]
    for topic_id, key, grade in Adjudication.objects.filter(
        campaign=campaign, kind=kind
    ).values_list("topic_id", "docid", "grade"):
        out[(topic_id, key)] = grade
    return out


def topic_answer(answer: RunAnswer, qid: str) -> TopicAnswer:
    """A stored answer as ``metrics.io.answers`` reads one."""
    return TopicAnswer(
        qid,
        tuple(answer.references),
        tuple(
            AnswerSentence(str(s.get("text", "")), tuple(s.get("citations") or []))
            for s in answer.sentences
        ),
        answer.response_length,
        0,
    )


def _score(
    averages: Mapping[str, MacroAverage], upper: Mapping[str, MacroAverage] | None
) -> dict[str, AnswerScore]:
    def num(x: float) -> float | None:
        return None if x != x else float(x)  # NaN: no topic defined

    return {
        m: AnswerScore(
            num(a.mean),
            num(a.low),
            num(a.high),
            a.topics,
            a.undefined,
            num(upper[m].mean) if upper is not None and m in upper else None,
        )
        for m, a in averages.items()
    }


def _nugget_row(
    bank: NuggetBank,
    nuggets: Mapping[int, list[Nugget]],
    answers: Iterable[RunAnswer],
    labels: Mapping[tuple[int, str], int],
    qids: Mapping[int, str],
) -> tuple[dict[str, AnswerScore], int, int]:
    by_topic = {a.topic_id: a for a in answers}
    low: dict[str, Any] = {}
    high: dict[str, Any] = {}
    pairs = judged = 0
    for topic_id, bank_nuggets in nuggets.items():
        qid = qids[topic_id]
        listed = [BankNugget(n.key, n.text, n.importance) for n in bank_nuggets]  # type: ignore[arg-type]
        answer = by_topic.get(topic_id)
        seen: dict[str, str] = {}
        if answer is not None:
            text = units.answer_text(answer.sentences)
            for n in bank_nuggets:
                pairs += 1
                grade = labels.get((topic_id, units.assignment_key(bank, n.key, text)))
                if grade is not None:
                    judged += 1
                    seen[n.key] = NUGGET_LABELS[grade]
        low[qid] = nugget_scores(listed, seen, topic_id=qid)
        filled = {n.key: seen.get(n.key, "support") for n in bank_nuggets} if answer else seen
        high[qid] = nugget_scores(listed, filled, topic_id=qid)
    averages = nugget_averages(low)
    upper = nugget_averages(high, n_resamples=1) if judged < pairs else None
    return _score(averages, upper), pairs, judged


def _support_row(
    answers: Iterable[RunAnswer], labels: Mapping[tuple[int, str], int], qids: Mapping[int, str]
) -> tuple[dict[str, AnswerScore], int, int]:
    low: dict[str, Any] = {}
    high: dict[str, Any] = {}
    pairs = judged = 0
    for answer in answers:
        qid = qids[answer.topic_id]
        read = topic_answer(answer, qid)
        seen: dict[tuple[int, str], str] = {}
        every: dict[tuple[int, str], str] = {}
        for i, sentence in enumerate(read.sentences):
            if not sentence.citations:
                continue
            segment = read.references[sentence.citations[0]]
            pairs += 1
            grade = labels.get((answer.topic_id, units.support_key(sentence.text, segment)))
            every[(i, segment)] = "full" if grade is None else SUPPORT_LABELS[grade]
            seen[(i, segment)] = "none" if grade is None else SUPPORT_LABELS[grade]
            judged += grade is not None
        low[qid] = support_scores(read, seen)
        high[qid] = support_scores(read, every)
    averages = support_averages(low)
    upper = support_averages(high, n_resamples=1) if judged < pairs else None
    scores = _score(averages, upper)
    if "words" in scores:  # length takes no label: no upper bound
        w = scores["words"]
        scores["words"] = AnswerScore(w.mean, w.low, w.high, w.topics, w.undefined, None)
    return scores, pairs, judged


def answer_board(
    *,
    campaign: Campaign,
    bank: int | None = None,
    retrieval: dict[int, float | None] | None = None,
    retrieval_measure: str = "",
    qrels_version: str | None = None,
) -> AnswerBoard:
    """Every answer run of ``campaign`` scored under bank v``bank`` (default: the latest
    published; none: the nugget scores are left out, support is still shown), with each run's
    ``retrieval`` value (run id -> value of ``retrieval_measure`` under ``qrels_version``)."""
    found = _bank(campaign, bank)
    qids = dict(campaign.topics.values_list("pk", "qid"))
    answers: dict[int, list[RunAnswer]] = defaultdict(list)
    for a in RunAnswer.objects.filter(run__campaign=campaign).order_by("run_id", "topic_id"):
        answers[a.run_id].append(a)
    runs = Run.objects.filter(pk__in=list(answers)).order_by("tag")
    nuggets: dict[int, list[Nugget]] = defaultdict(list)
    if found is not None:
        for n in Nugget.objects.filter(bank=found).order_by("topic_id", "position", "pk"):
            nuggets[n.topic_id].append(n)
    nugget_labels = consensus_labels(campaign, UnitKind.NUGGET_ASSIGNMENT) if found else {}
    support_labels = consensus_labels(campaign, UnitKind.CITATION_SUPPORT)
    rows = []
    for run in runs:
        if found is not None:
            scored, n_pairs, n_judged = _nugget_row(
                found, nuggets, answers[run.pk], nugget_labels, qids
            )
        else:
            scored, n_pairs, n_judged = {}, 0, 0
        support, s_pairs, s_judged = _support_row(answers[run.pk], support_labels, qids)
        rows.append(
            AnswerRow(
                RunLabel(run.tag),
                len(answers[run.pk]),
                scored,
                support,
                n_pairs,
                n_judged,
                s_pairs,
                s_judged,
                (retrieval or {}).get(run.pk),
            )
        )
    notes = [
        "Nugget recall is averaged over the bank's topics (an unanswered topic scores 0; the "
        "vital scores skip a topic with no vital nugget); support over the answered topics "
        "(precision skips an answer that cites nothing). Intervals: 95%, bootstrap over topics.",
        "A pair nobody judged yet counts as not supported; 'upper' is the score were every "
        "unjudged pair supported.",
    ]
    if found is None:
        notes.append("No published nugget bank: nugget recall is not shown.")
    return AnswerBoard(
        campaign.pk,
        BankRef(found.number, found.content_hash, len(nuggets), sum(map(len, nuggets.values())))
        if found
        else None,
        retrieval_measure,
        qrels_version,
        rows,
        notes,
    )


def answer_board_for(
    *, campaign: Campaign, user: Any, version: QrelsVersion | None, bank: int | None = None
) -> dict[str, Any] | None:
    """The answer board as ``user`` reads it (other researchers' runs anonymised, as on the
    leaderboard), with each run's first campaign measure under qrels ``version`` (honest
    mode) beside its answer scores; None when the campaign has no answer run."""
    if not RunAnswer.objects.filter(run__campaign=campaign).exists():
        return None
    measure = campaign.measures[0] if campaign.measures else ""
    values: dict[int, float | None] = {}
    if version is not None and measure:
        for run_id, summary in Evaluation.objects.filter(
            qrels=version,
            mode=EvalMode.HONEST,
            measures_key=measures_key(list(campaign.measures)),
            run__campaign=campaign,
            run__answers__isnull=False,
        ).values_list("run_id", "summary"):
            found = (upgraded_evaluation(summary or {}).get("measures") or {}).get(measure)
            values[run_id] = found.get("value") if isinstance(found, dict) else None
    board = answer_board(
        campaign=campaign,
        bank=bank,
        retrieval=values,
        retrieval_measure=measure,
        qrels_version=version.label if version is not None else None,
    )
    rendered: dict[str, Any] = render(board, report_viewer(campaign, user))
    return rendered


__all__ = ["NUGGET_MEASURES", "SUPPORT_MEASURES", "AnswerBoard", "answer_board", "answer_board_for"]
