"""Judging units: the kinds of item the one queue serves, and queuing those that are not
documents.

An item is ``(topic, kind, key)``. A document's key is its id (or a passage's, ``docid#pid``);
the other kinds' keys are built here from what they show, so that the same content is one item
whoever submitted it (two runs' identical answers are judged once, and the judgment serves both):

========================  ===============================================  ===================
kind                      key                                              grades
========================  ===============================================  ===================
``nugget_creation``       ``b<bank id>`` (a draft bank's nuggets of the    1 reviewed
                          topic, edited on the bank's screen)
``nugget_assignment``     ``b<bank id>:<nugget key>:<answer sha256[:24]>`` 0 none, 1 partial,
                                                                           2 support
``citation_support``      ``<sentence sha256[:24]>@<segment id>``          0 none, 1 partial,
                                                                           2 full
========================  ===============================================  ===================

What the screen shows is stored with the key (``JudgingUnit.payload``): the answer's sentences,
the nugget and its importance, or the sentence and the cited segment's id (its text is the
segment's, read like a document's). Nothing in a payload names a run: the screens stay blind.

The grade keys are the digits, as for documents: 2 is the strongest label of every kind.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import Max

from judging.assessments.models import (
    JudgingSlot,
    JudgingUnit,
    Nugget,
    NuggetBank,
    NuggetBankState,
    UnitKind,
)
from judging.campaigns.models import Campaign, RunAnswer
from judging.campaigns.passages import passage_text
from judging.core.errors import InvalidInput
from metrics.problems import Problem

DOCUMENT = UnitKind.DOCUMENT


@dataclass(frozen=True)
class KindSpec:
    """How a kind is judged: its grades (value -> label, ascending), the question its screen
    asks, and what one item is called in messages."""

    kind: str
    grades: dict[int, str]
    question: str
    noun: str


KINDS: dict[str, KindSpec] = {
    UnitKind.NUGGET_CREATION: KindSpec(
        UnitKind.NUGGET_CREATION,
        {1: "Reviewed"},
        "Are the topic's nuggets complete, atomic and correctly marked vital or okay?",
        "nugget list",
    ),
    UnitKind.NUGGET_ASSIGNMENT: KindSpec(
        UnitKind.NUGGET_ASSIGNMENT,
        {0: "Not supported", 1: "Partially supported", 2: "Supported"},
        "Does the answer contain this nugget?",
        "answer and nugget",
    ),
    UnitKind.CITATION_SUPPORT: KindSpec(
        UnitKind.CITATION_SUPPORT,
        {0: "No support", 1: "Partial support", 2: "Full support"},
        "Does the cited segment support the sentence?",
        "sentence and citation",
    ),
}


def grade_labels(campaign: Campaign, kind: str) -> dict[int, str]:
    """The grades of a kind: a document's are the campaign's scale, the others' fixed."""
    if kind == DOCUMENT:
        return campaign.grade_labels()
    return dict(KINDS[kind].grades)


def grade_values(campaign: Campaign, kind: str) -> list[int]:
    return campaign.grade_values() if kind == DOCUMENT else sorted(KINDS[kind].grades)


def noun(kind: str) -> str:
    """What one item of the kind is called in a message ("document", "answer and nugget")."""
    return "document" if kind == DOCUMENT else KINDS[kind].noun


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def collapsed(text: str) -> str:
    """White space collapsed to single spaces: how two answers' (or sentences') texts are
    compared, as ``metrics.answers.items`` compares them."""
    return " ".join(text.split())


def answer_text(sentences: Sequence[dict[str, Any]]) -> str:
    """An answer's text: its sentences' texts, white space collapsed, joined by one space
    (what a nugget is sought in; ``metrics.answers.items``' item text)."""
    return " ".join(collapsed(str(s.get("text", ""))) for s in sentences)


def creation_key(bank: NuggetBank) -> str:
    return f"b{bank.pk}"


def assignment_key(bank: NuggetBank, nugget_key: str, text: str) -> str:
    return f"b{bank.pk}:{nugget_key}:{_digest(text)}"


def support_key(sentence: str, segment: str) -> str:
    return f"{_digest(collapsed(sentence))}@{segment}"


@dataclass(frozen=True)
class Unit:
    """One item to queue: its topic (by id), key and payload."""

    topic_id: int
    key: str
    payload: dict[str, Any]


def creation_units(bank: NuggetBank, topic_ids: Iterable[int]) -> list[Unit]:
    """One nugget-creation item per topic of a draft bank."""
    return [
        Unit(t, creation_key(bank), {"bank": bank.pk, "bank_number": bank.number})
        for t in topic_ids
    ]


def assignment_units(bank: NuggetBank, answers: Iterable[RunAnswer]) -> list[Unit]:
    """One item per (answer, nugget of its topic in ``bank``); identical answers share items."""
    nuggets: dict[int, list[Nugget]] = {}
    for nugget in Nugget.objects.filter(bank=bank).order_by("topic_id", "position", "pk"):
        nuggets.setdefault(nugget.topic_id, []).append(nugget)
    units: dict[tuple[int, str], Unit] = {}
    for answer in answers:
        sentences = [str(s.get("text", "")) for s in answer.sentences]
        text = answer_text(answer.sentences)
        for nugget in nuggets.get(answer.topic_id, []):
            key = assignment_key(bank, nugget.key, text)
            units.setdefault(
                (answer.topic_id, key),
                Unit(
                    answer.topic_id,
                    key,
                    {
                        "bank": bank.pk,
                        "bank_number": bank.number,
                        "nugget": nugget.key,
                        "nugget_text": nugget.text,
                        "importance": nugget.importance,
                        "answer": sentences,
                    },
                ),
            )
    return list(units.values())


def support_units(answers: Iterable[RunAnswer], citations: str = "first") -> list[Unit]:
    """One item per (sentence, segment it cites) that the support measures score
    (``metrics.answers.support``): the first citation of each sentence, as TREC 2024 RAG
    judged (``citations="first"``), or every citation (``"all"``). The same sentence citing
    the same segment in several answers is one item."""
    if citations not in ("first", "all"):
        raise InvalidInput(
            f"citations must be 'first' or 'all', not {citations!r}",
            [Problem.at("citations", "must be 'first' or 'all'")],
        )
    units: dict[tuple[int, str], Unit] = {}
    for answer in answers:
        refs = list(answer.references)
        for sentence in answer.sentences:
            text = str(sentence.get("text", "")).strip()
            cited = list(sentence.get("citations") or [])
            for i in cited[:1] if citations == "first" else cited:
                if not isinstance(i, int) or not 0 <= i < len(refs) or not text:
                    continue
                key = support_key(text, refs[i])
                units.setdefault(
                    (answer.topic_id, key),
                    Unit(answer.topic_id, key, {"sentence": text, "segment": refs[i]}),
                )
    return list(units.values())


@dataclass(frozen=True)
class Queued:
    """What queuing a campaign's answer items did: the items of the kind it found, and the
    slots it created (0: all were queued before)."""

    kind: str
    items: int
    slots: int
    bank: int | None


def _bank(campaign: Campaign, number: int | None, kind: str) -> NuggetBank:
    if number is None:
        raise InvalidInput(
            f"a {kind} item names a nugget bank version",
            [Problem.at("bank", "required for this kind")],
        )
    bank = NuggetBank.objects.filter(campaign=campaign, number=number).first()
    if bank is None:
        raise InvalidInput(
            f"campaign {campaign.pk} has no nugget bank v{number}",
            [Problem.at("bank", f"no bank v{number}")],
        )
    wanted = (
        NuggetBankState.DRAFT if kind == UnitKind.NUGGET_CREATION else NuggetBankState.PUBLISHED
    )
    if bank.state != wanted:
        why = (
            "nuggets are created and edited in a draft"
            if kind == UnitKind.NUGGET_CREATION
            else "assignments refer to a frozen bank: publish it first"
        )
        raise InvalidInput(
            f"nugget bank v{number} is {bank.state}; {why}",
            [Problem.at("bank", f"must be a {wanted} bank")],
        )
    return bank


def answer_items_queue(
    *,
    campaign: Campaign,
    kind: str,
    bank: int | None = None,
    runs: Sequence[int] | None = None,
    citations: str = "first",
) -> Queued:
    """Queue every item of ``kind`` that the campaign's answer runs (``runs``: these run ids
    only) need judged: each (answer, nugget of published bank v``bank``), each cited
    (sentence, segment) pair, or (``nugget_creation``) each topic of draft bank v``bank``
    that has nuggets or answers. Items already queued keep their slots."""
    if kind not in KINDS:
        raise InvalidInput(
            f"{kind!r} is not a kind of answer item",
            [Problem.at("kind", f"must be one of {sorted(KINDS)}")],
        )
    answers = RunAnswer.objects.filter(run__campaign=campaign)
    if runs is not None:
        stray = sorted(
            set(runs) - set(campaign.runs.filter(pk__in=runs).values_list("pk", flat=True))
        )
        if stray:
            raise InvalidInput(
                f"runs {stray[:5]} are not runs of campaign {campaign.pk}",
                [Problem.at("runs", f"unknown run {r}") for r in stray[:20]],
            )
        answers = answers.filter(run_id__in=runs)
    found: NuggetBank | None = None
    if kind == UnitKind.CITATION_SUPPORT:
        items = support_units(answers, citations)
    else:
        found = _bank(campaign, bank, kind)
        if kind == UnitKind.NUGGET_ASSIGNMENT:
            items = assignment_units(found, answers)
        else:
            topics = set(answers.values_list("topic_id", flat=True))
            topics |= set(Nugget.objects.filter(bank=found).values_list("topic_id", flat=True))
            items = creation_units(found, sorted(topics))
    slots = units_enqueue(campaign=campaign, kind=kind, units=items)
    return Queued(kind, len(items), slots, found.number if found else None)


def _positions(campaign: Campaign, topic_id: int, count: int) -> list[int]:
    """Serving positions for ``count`` new items of a topic, interleaved with what the topic
    has open: the i-th new item takes the position of the i-th open slot (served right after
    it: ties go by slot, then id), and items beyond the open ones follow the topic's last."""
    open_positions = list(
        JudgingSlot.objects.filter(
            campaign=campaign, topic_id=topic_id, judged_at__isnull=True, gold_for__isnull=True
        )
        .order_by("position")
        .values_list("position", flat=True)
        .distinct()
    )
    last = (
        JudgingSlot.objects.filter(campaign=campaign, topic_id=topic_id).aggregate(
            m=Max("position")
        )["m"]
        or 0
    )
    return [
        open_positions[i] if i < len(open_positions) else last + 1 + i - len(open_positions)
        for i in range(count)
    ]


def units_enqueue(
    *, campaign: Campaign, kind: str, units: Sequence[Unit], first: bool = False
) -> int:
    """Queue items of ``kind`` (not documents: pools queue those) in the one queue: a
    ``JudgingUnit`` per new key, and slot 1 (slot 2 too for the campaign's overlap share, the
    agreement sample) per item not queued yet, interleaved with each topic's open items
    (``first``: ahead of them, position 0, as a human sample is). Returns the slots created;
    an item queued before keeps its slot."""
    from judging.assessments.queue import in_overlap

    if kind not in KINDS:
        raise InvalidInput(
            f"{kind!r} is not a kind of judging unit",
            [Problem.at("kind", f"must be one of {sorted(KINDS)}")],
        )
    with transaction.atomic():
        topic_ids = {u.topic_id for u in units}
        known = set(
            JudgingUnit.objects.filter(topic_id__in=topic_ids, kind=kind).values_list(
                "topic_id", "key"
            )
        )
        JudgingUnit.objects.bulk_create(
            [
                JudgingUnit(
                    campaign=campaign, topic_id=u.topic_id, kind=kind, key=u.key, payload=u.payload
                )
                for u in {(u.topic_id, u.key): u for u in units}.values()
                if (u.topic_id, u.key) not in known
            ],
            batch_size=2000,
        )
        queued = set(
            JudgingSlot.objects.filter(
                topic_id__in=topic_ids, kind=kind, gold_for__isnull=True
            ).values_list("topic_id", "docid")
        )
        qids = dict(campaign.topics.filter(pk__in=topic_ids).values_list("pk", "qid"))
        new: list[JudgingSlot] = []
        by_topic: dict[int, list[str]] = {}
        for u in units:
            if (u.topic_id, u.key) not in queued and u.key not in by_topic.get(u.topic_id, []):
                by_topic.setdefault(u.topic_id, []).append(u.key)
        for topic_id, keys in by_topic.items():
            positions = [0] * len(keys) if first else _positions(campaign, topic_id, len(keys))
            for key, position in zip(keys, positions, strict=True):
                overlap = in_overlap(qids[topic_id], f"{kind}:{key}", campaign.overlap)
                for n in (1, 2) if overlap else (1,):
                    new.append(
                        JudgingSlot(
                            campaign=campaign,
                            topic_id=topic_id,
                            kind=kind,
                            docid=key,
                            slot=n,
                            position=position,
                        )
                    )
        JudgingSlot.objects.bulk_create(new, batch_size=5000)
        if first:
            for topic_id in topic_ids:
                keys = [u.key for u in units if u.topic_id == topic_id]
                JudgingSlot.objects.filter(
                    topic_id=topic_id, kind=kind, docid__in=keys, judged_at__isnull=True
                ).update(position=0)
        return len(new)


def unit_payload(topic_id: int, kind: str, key: str) -> dict[str, Any] | None:
    """What an item of a kind other than a document shows (None: a document, or unknown)."""
    if kind == DOCUMENT:
        return None
    return (
        JudgingUnit.objects.filter(topic_id=topic_id, kind=kind, key=key)
        .values_list("payload", flat=True)
        .first()
    )


def unit_shown(campaign_id: int, topic_id: int, kind: str, key: str) -> dict[str, Any] | None:
    """What the screen shows for an item that is not a document (None for a document): the
    stored payload, with the kind's question and, for a citation, the cited segment's text
    (read like a document's: a passage's own text, or the whole document), and for nugget
    creation the draft's nuggets of the topic as they are now."""
    payload = unit_payload(topic_id, kind, key)
    if payload is None:
        return None
    shown: dict[str, Any] = {**payload, "question": KINDS[kind].question}
    if kind == UnitKind.CITATION_SUPPORT:
        found = passage_text(campaign_id, str(payload.get("segment", "")))
        text, title = "", ""
        if found is not None:
            doc = found.document
            start, end = found.passage or (0, len(doc.text))
            text, title = doc.text[start:end], doc.title if found.passage is None else ""
        shown["segment_text"], shown["segment_title"] = text, title
    elif kind == UnitKind.NUGGET_CREATION:
        shown["nuggets"] = [
            {"key": n.key, "text": n.text, "importance": n.importance}
            for n in Nugget.objects.filter(bank_id=payload.get("bank"), topic_id=topic_id)
        ]
    return shown
