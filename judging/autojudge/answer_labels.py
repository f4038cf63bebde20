"""An automatic judge over the items of a campaign's answer runs (issue 34, point 5): every
(answer, nugget) of a published bank and every (sentence, first cited segment), labelled 0/1/2
like people label them (``assessments.units``: 2 support / full support), through the judge-run
job lifecycle of pool runs.

- :func:`answer_items`: the items of a kind with what a labeller reads (the topic's query; the
  nugget and the answer's sentences; the sentence and the cited segment's text, read like a
  document's). A segment without text is an item whose ``problem`` says so: its label is an
  error, never a crash.
- :func:`answer_run_request`: a ``JudgeRun`` with neither pool nor top-up, of ``kind`` (and
  ``bank``), computed by the ``judge_run`` job (``services.judge_run_compute`` hands it to
  :func:`answer_run_compute`): items the judge version graded before are not asked again.
- :func:`answer_auto_labels`: what the corrected estimates read, (topic id, key) -> (grade,
  raw score).

Labels are ``AutoLabel`` rows of the item's ``kind``, ``docid`` holding the item's key; the
labellers (``autojudge.answer_labellers``: embedding and openai-compatible) are found by the
judge's kind in this module's registry (:func:`register_answer_labeller`). A run judges first
citations only, as TREC 2024 RAG did and ``metrics.answers.support`` scores by default.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from django.db import transaction
from django.utils import timezone

from judging.assessments import units
from judging.assessments.models import NuggetBank, NuggetBankState, UnitKind
from judging.autojudge.models import AutoLabel, Judge, JudgeKind, JudgeRun, LabelStatus
from judging.autojudge.services import (
    Label,
    invalid,
    judge_run_task_key,
    labels_saved,
    safe_message,
)
from judging.campaigns.models import Campaign, RunAnswer, Topic
from judging.campaigns.passages import passage_text
from judging.core import jobs
from judging.core.errors import Conflict
from judging.core.jobs import StageFailed
from judging.core.models import LIVE_STATES
from judging.core.roles import Account

ANSWER_KINDS = (UnitKind.NUGGET_ASSIGNMENT.value, UnitKind.CITATION_SUPPORT.value)


def answer_auto_labels(judge: Judge, kind: str) -> dict[tuple[int, str], tuple[int, float | None]]:
    """(topic id, unit key) -> (grade 0-2, the judge's raw score or None) of every item of
    ``kind`` (``nugget_assignment`` or ``citation_support``) the judge version graded. An item
    it could not grade (refused, malformed, an error) is left out."""
    rows = AutoLabel.objects.filter(judge=judge, kind=kind, grade__isnull=False).values_list(
        "topic_id", "docid", "grade", "score"
    )
    return {
        (t, key): (int(g), float(s) if s is not None else None)
        for t, key, g, s in rows.iterator(chunk_size=10_000)
        if g is not None
    }


# ---- the items ---------------------------------------------------------------------------


@dataclass(frozen=True)
class AnswerItem:
    """One item to label, with what a labeller reads.

    ``kind`` and ``key`` are the judging unit's (``assessments.units``); ``query`` the topic's
    (its title, else its description). For ``nugget_assignment``, ``claim`` is the nugget and
    ``evidence`` the answer's sentences; for ``citation_support``, ``claim`` is the sentence and
    ``evidence`` the cited segment's text (one string). ``problem`` says why the item cannot be
    labelled ("" when it can): its label is then an error saying so.
    """

    topic_id: int
    qid: str
    kind: str
    key: str
    query: str
    claim: str
    evidence: tuple[str, ...]
    problem: str = ""


def check_bank(campaign: Campaign, kind: str, bank: NuggetBank | None) -> NuggetBank | None:
    """The bank a kind needs: a published version of the campaign's for nugget assignment,
    none for citation support (errors name the field)."""
    if kind not in ANSWER_KINDS:
        raise invalid("kind", f"{kind!r}: an automatic judge labels {' or '.join(ANSWER_KINDS)}")
    if kind == UnitKind.CITATION_SUPPORT:
        if bank is not None:
            raise invalid("bank", "citation support is judged without a nugget bank")
        return None
    if bank is None:
        raise invalid("bank", "nugget assignment names a published nugget bank version")
    if bank.campaign_id != campaign.pk:
        raise invalid("bank", f"nugget bank {bank.pk} belongs to another campaign")
    if bank.state != NuggetBankState.PUBLISHED:
        raise invalid(
            "bank",
            f"nugget bank v{bank.number} is {bank.state}: assignments refer to a frozen bank, "
            "publish it first",
        )
    return bank


def bank_by_number(campaign: Campaign, number: int | None) -> NuggetBank | None:
    """The campaign's nugget bank version ``number`` (None for None); unknown: an error naming
    the field ``bank``."""
    if number is None:
        return None
    bank = NuggetBank.objects.filter(campaign=campaign, number=number).first()
    if bank is None:
        raise invalid("bank", f"the campaign has no nugget bank v{number}")
    return bank


def _units(
    campaign: Campaign, kind: str, bank: NuggetBank | None, citations: str
) -> list[units.Unit]:
    answers = RunAnswer.objects.filter(run__campaign=campaign).order_by("topic_id", "run_id")
    if kind == UnitKind.NUGGET_ASSIGNMENT:
        assert bank is not None
        return units.assignment_units(bank, answers)
    return units.support_units(answers, citations)


def segment_texts(campaign: Campaign, ids: Sequence[str]) -> dict[str, str]:
    """The text of each segment id, read as the judging screen reads it
    (``campaigns.passages.passage_text``): a document's title and text, or a passage's own
    text; ids with no text are left out."""
    out: dict[str, str] = {}
    for segment in dict.fromkeys(ids):
        found = passage_text(campaign.pk, segment)
        if found is None:
            continue
        doc = found.document
        if found.passage is None:
            text = f"{doc.title}\n{doc.text}".strip() if doc.title else doc.text
        else:
            start, end = found.passage
            text = doc.text[start:end]
        if text.strip():
            out[segment] = text
    return out


def answer_items(
    campaign: Campaign, kind: str, bank: NuggetBank | None = None, citations: str = "first"
) -> list[AnswerItem]:
    """Every item of ``kind`` of the campaign's answer runs (identical answers, and one
    sentence citing one segment in several answers, are one item), by topic, with what a
    labeller reads (:class:`AnswerItem`). ``bank``: the published bank whose nuggets are
    assigned (nugget assignment only); ``citations``: ``first`` (TREC 2024 RAG's protocol) or
    ``all`` cited segments of each sentence (citation support)."""
    bank = check_bank(campaign, kind, bank)
    found = _units(campaign, kind, bank, citations)
    topics = {
        t.pk: t for t in Topic.objects.filter(campaign=campaign, pk__in={u.topic_id for u in found})
    }
    texts: dict[str, str] = {}
    if kind == UnitKind.CITATION_SUPPORT:
        texts = segment_texts(campaign, [str(u.payload["segment"]) for u in found])
    out = []
    for u in found:
        topic = topics[u.topic_id]
        query = topic.title or topic.description or topic.qid
        if kind == UnitKind.NUGGET_ASSIGNMENT:
            sentences = tuple(s for s in u.payload["answer"] if s.strip())
            claim, evidence = str(u.payload["nugget_text"]), sentences
            problem = "" if sentences else "the answer has no sentence"
        else:
            segment = str(u.payload["segment"])
            claim, evidence = str(u.payload["sentence"]), (texts.get(segment, ""),)
            problem = "" if segment in texts else f"no text for segment {segment}"
        out.append(AnswerItem(u.topic_id, topic.qid, kind, u.key, query, claim, evidence, problem))
    return out


# ---- labellers of answer items: a registry by judge kind ----------------------------------


class AnswerLabeller(Protocol):
    """What grades answer items (``autojudge.answer_labellers``): one label per item given,
    ``docid`` the item's key, the grade 0-2 or None with its status."""

    def label_items(self, items: Sequence[AnswerItem]) -> Iterable[Label]: ...


AnswerLabellerFactory = Callable[[Judge], AnswerLabeller]
_LABELLERS: dict[str, AnswerLabellerFactory] = {}


def register_answer_labeller(kind: str, factory: AnswerLabellerFactory) -> None:
    _LABELLERS[kind] = factory


def answer_labeller_for(judge: Judge) -> AnswerLabeller:
    """The answer labeller of a judge version's kind, built now; raises when there is none for
    the kind or it cannot start (no endpoint, the embedding extra not installed)."""
    factory = _LABELLERS.get(judge.kind)
    if factory is None:
        raise RuntimeError(f"judge kind {judge.kind!r} does not label answer items")
    return factory(judge)


# ---- runs over answer items ----------------------------------------------------------------


def answer_run_request(
    *,
    judge: Judge,
    kind: str,
    bank: NuggetBank | None = None,
    by: Account | None = None,
) -> JudgeRun:
    """Queue ``judge`` over every item of ``kind`` of its campaign's answer runs (``bank``: the
    published bank for nugget assignment): a ``judge_run`` job after commit, as for a pool. A
    run of the same judge, kind and bank already queued or running is returned instead of a
    second. Refused: an imported judge (its labels come from a file), a campaign without
    answers, an unknown kind, a missing, draft or foreign bank."""
    campaign = judge.campaign
    bank = check_bank(campaign, kind, bank)
    if judge.kind == JudgeKind.IMPORTED:
        raise Conflict(f"judge {judge} is imported: its labels come from a file, it does not run")
    if judge.kind == JudgeKind.JURY:
        raise Conflict(f"judge {judge} is a jury: it combines its members' labels of documents")
    if not RunAnswer.objects.filter(run__campaign=campaign).exists():
        raise Conflict(
            f"campaign {campaign.name!r} has no answer runs: submit one (TREC RAG's answer "
            "format) before an automatic judge labels answers"
        )
    total = len(_units(campaign, kind, bank, "first"))
    with transaction.atomic():
        active = JudgeRun.objects.filter(
            judge=judge,
            pool__isnull=True,
            topup__isnull=True,
            kind=kind,
            bank=bank,
            job__state__in=LIVE_STATES,
        )
        found = active.select_related("job").first()
        if found is not None:
            return found
        job = jobs.new("judge_run", "")
        run = JudgeRun.objects.create(
            judge=judge, kind=kind, bank=bank, requested_by=by, total=total, job=job
        )
        job.key = judge_run_task_key(run.pk)
        job.save(update_fields=["key"])
        jobs.enqueue(job)
    return run


def _labels(labeller: AnswerLabeller, todo: Sequence[AnswerItem]) -> Iterator[Label]:
    """An item that cannot be labelled gets an error label saying why (asked again by the next
    run); the others go to the labeller."""
    for item in todo:
        if item.problem:
            yield Label(item.qid, item.key, None, status=LabelStatus.ERROR, answer=item.problem)
    yield from labeller.label_items([x for x in todo if not x.problem])


def answer_run_compute(run: JudgeRun) -> None:
    """Label every item of the run's kind its judge version has not graded yet (the judge's
    cache: graded items are counted as cached, never asked again), in batches saved with the
    run's counts, tokens and cost (``services.labels_saved``)."""
    judge = run.judge
    items = answer_items(judge.campaign, run.kind, run.bank)
    graded = set(
        AutoLabel.objects.filter(judge=judge, kind=run.kind, grade__isnull=False).values_list(
            "topic_id", "docid"
        )
    )
    todo = [x for x in items if (x.topic_id, x.key) not in graded]
    JudgeRun.objects.filter(pk=run.pk).update(
        started_at=timezone.now(),
        total=len(items),
        cached=len(items) - len(todo),
        done=len(items) - len(todo),
    )
    try:
        labeller = answer_labeller_for(judge)
    except Exception as exc:  # the labeller cannot start: the run fails, saying why
        raise StageFailed(safe_message(exc)) from exc
    labels_saved(run.pk, judge, lambda: _labels(labeller, todo), kind=run.kind)
