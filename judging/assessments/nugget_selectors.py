"""What the API, the pages and the commands read of nugget banks (``assessments.nuggets``):
who may read, edit and manage them, a bank's topics with their nuggets, a topic's edit history,
the relevant segments a topic was drafted from, a bank as a file, and the content hash a
published bank keeps."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db.models import Count, Max, QuerySet

from judging.assessments.models import (
    Nugget,
    NuggetBank,
    NuggetBankState,
    NuggetEdit,
    QrelsEntry,
    QrelsVersion,
)
from judging.campaigns.models import Campaign, Document, Passage, Topic
from judging.core.errors import IntegrityFailure, NotFound
from judging.core.roles import UserLike, is_admin, is_annotator, is_researcher
from metrics.io.nuggets import DraftNugget, TopicNuggets

# --- who may do what ----------------------------------------------------------------------


def may_edit(user: UserLike) -> bool:
    """Annotators (of any campaign they see: every one) and admins edit drafts."""
    return is_admin(user) or is_annotator(user)


def may_manage(user: UserLike) -> bool:
    """Admins create and publish versions."""
    return is_admin(user)


def banks_visible(user: UserLike, campaign: Campaign) -> QuerySet[NuggetBank]:
    """The campaign's versions the user may read, newest first: every one for admins and
    annotators, the published ones for researchers, none for anybody else."""
    banks = NuggetBank.objects.filter(campaign=campaign).order_by("-number")
    if may_edit(user):
        return banks
    if is_researcher(user):
        return banks.filter(state=NuggetBankState.PUBLISHED)
    return banks.none()


def campaign_bank(user: UserLike, campaign: Campaign, number: int | None = None) -> NuggetBank:
    """Version ``number`` of the campaign's banks (None: the latest the user sees), if the user
    may read it; else ``NotFound``."""
    banks = banks_visible(user, campaign)
    bank = banks.first() if number is None else banks.filter(number=number).first()
    if bank is None:
        what = "no nugget bank" if number is None else f"no nugget bank v{number}"
        raise NotFound(f"{what} in campaign {campaign.name!r}")
    return bank


# --- what a bank holds ----------------------------------------------------------------------


@dataclass(frozen=True)
class NuggetView:
    key: str
    position: int
    text: str
    importance: str
    sources: tuple[str, ...]


@dataclass(frozen=True)
class TopicView:
    """One topic of a bank: its nuggets in order, and the id of its latest edit (0: none),
    which an edit names as its ``base``."""

    qid: str
    title: str
    nuggets: tuple[NuggetView, ...]
    last_edit: int


@dataclass(frozen=True)
class EditView:
    id: int
    op: str
    before: tuple[dict[str, Any], ...]
    after: tuple[dict[str, Any], ...]
    editor: str
    edited_at: Any


@dataclass(frozen=True)
class Segment:
    """A segment (document or passage) judged relevant in the bank's qrels version: its id,
    title and text, and the keys of the nuggets that name it as a source."""

    id: str
    title: str
    text: str
    cited_by: tuple[str, ...] = ()


def _view(n: Nugget) -> NuggetView:
    return NuggetView(n.key, n.position, n.text, n.importance, tuple(n.sources))


def bank_topics(bank: NuggetBank, *, qid: str | None = None) -> list[TopicView]:
    """Every topic of the bank's campaign (or only ``qid``) in qid order, with its nuggets
    (a topic without any: an empty tuple)."""
    topics = Topic.objects.filter(campaign_id=bank.campaign_id).order_by("qid")
    if qid is not None:
        topics = topics.filter(qid=qid)
    by_topic: dict[int, list[NuggetView]] = {}
    for n in Nugget.objects.filter(bank=bank, topic__in=topics).order_by("position", "pk"):
        by_topic.setdefault(n.topic_id, []).append(_view(n))
    last = dict(
        NuggetEdit.objects.filter(bank=bank, topic__in=topics)
        .values("topic_id")
        .annotate(last=Max("pk"))
        .values_list("topic_id", "last")
    )
    return [
        TopicView(t.qid, t.title, tuple(by_topic.get(t.pk, ())), int(last.get(t.pk) or 0))
        for t in topics
    ]


def bank_counts(banks: Iterable[NuggetBank]) -> dict[int, tuple[int, int]]:
    """Bank id -> (topics with nuggets, nuggets)."""
    rows = (
        Nugget.objects.filter(bank__in=list(banks))
        .values("bank_id")
        .annotate(topics=Count("topic_id", distinct=True), nuggets=Count("pk"))
    )
    return {r["bank_id"]: (r["topics"], r["nuggets"]) for r in rows}


def topic_of(bank: NuggetBank, qid: str) -> Topic:
    """The topic ``qid`` of the bank's campaign, else ``NotFound``."""
    topic = Topic.objects.filter(campaign_id=bank.campaign_id, qid=qid).first()
    if topic is None:
        raise NotFound(f"no topic {qid!r} in the campaign of nugget bank v{bank.number}")
    return topic


def topic_history(bank: NuggetBank, topic: Topic) -> list[EditView]:
    """The topic's edits in this version, oldest first (a drafted topic's first: ``draft``)."""
    edits = NuggetEdit.objects.filter(bank=bank, topic=topic).select_related("editor")
    return [
        EditView(
            e.pk,
            e.op,
            tuple(e.before),
            tuple(e.after),
            e.editor.get_username() if e.editor else "",
            e.edited_at,
        )
        for e in edits.order_by("pk")
    ]


def relevant_segments(qrels: QrelsVersion | None, topic: Topic) -> list[Segment]:
    """The segments judged relevant (grade at least the campaign's threshold) for ``topic`` in
    ``qrels``, by segment id, with their text: a document's title and text, a passage's span of
    its document. A segment the campaign has no text for has an empty text."""
    if qrels is None:
        return []
    threshold = topic.campaign.relevance_threshold
    ids = sorted(
        QrelsEntry.objects.filter(version=qrels, topic=topic, grade__gte=threshold).values_list(
            "docid", flat=True
        )
    )
    docs = {
        d.docid: d for d in Document.objects.filter(campaign_id=topic.campaign_id, docid__in=ids)
    }
    passages = {
        p.passage_id: p
        for p in Passage.objects.filter(
            campaign_id=topic.campaign_id, passage_id__in=[i for i in ids if i not in docs]
        ).select_related("document")
    }
    out = []
    for sid in ids:
        if sid in docs:
            out.append(Segment(sid, docs[sid].title, docs[sid].text))
        elif sid in passages:
            p = passages[sid]
            out.append(Segment(sid, p.document.title, p.document.text[p.start : p.end]))
        else:
            out.append(Segment(sid, "", ""))
    return out


def bank_segments(bank: NuggetBank, topic: Topic) -> list[Segment]:
    """The relevant segments the bank's topic was drafted from (its qrels version's), each
    with the keys of the bank's nuggets that name it as a source."""
    cites: dict[str, list[str]] = {}
    for key, sources in Nugget.objects.filter(bank=bank, topic=topic).values_list("key", "sources"):
        for sid in sources:
            cites.setdefault(sid, []).append(key)
    return [
        Segment(s.id, s.title, s.text, tuple(cites.get(s.id, ())))
        for s in relevant_segments(bank.qrels, topic)
    ]


def bank_export(bank: NuggetBank) -> list[TopicNuggets]:
    """The bank's topics that have nuggets, in qid order, as ``metrics.io.nuggets`` writes
    them (keys and sources included). A published bank is checked against its hash first
    (``IntegrityFailure`` when its nuggets no longer hash to it)."""
    if bank.state == NuggetBankState.PUBLISHED:
        _check(bank)
    return [
        TopicNuggets(
            t.qid,
            tuple(
                DraftNugget(n.text, n.importance, n.sources, n.key)  # type: ignore[arg-type]
                for n in t.nuggets
            ),
        )
        for t in bank_topics(bank)
        if t.nuggets
    ]


# --- the content hash -----------------------------------------------------------------------


def canonical_lines(rows: Iterable[tuple[str, str, int, str, str]]) -> list[str]:
    """``(qid, key, position, importance, text)`` rows as the hashed form: sorted by topic
    then position, each the JSON array ``[qid, key, position, importance, text]`` (no spaces,
    UTF-8 as is) and a new line. Sources are provenance, not content: not hashed."""
    return [
        json.dumps([q, k, p, i, t], ensure_ascii=False, separators=(",", ":")) + "\n"
        for q, k, p, i, t in sorted(rows, key=lambda r: (r[0], r[2], r[1]))
    ]


def content_hash(lines: Iterable[str]) -> str:
    """SHA-256 (hex) of the lines' UTF-8 bytes, one after the other."""
    h = hashlib.sha256()
    for line in lines:
        h.update(line.encode("utf-8"))
    return h.hexdigest()


def bank_rows(bank: NuggetBank) -> list[tuple[str, str, int, str, str]]:
    return list(
        Nugget.objects.filter(bank=bank).values_list(
            "topic__qid", "key", "position", "importance", "text"
        )
    )


def _check(bank: NuggetBank) -> None:
    if content_hash(canonical_lines(bank_rows(bank))) != bank.content_hash:
        raise IntegrityFailure(
            f"nugget bank v{bank.number} fails its integrity check: its nuggets do not hash to "
            f"its stored sha256 {bank.content_hash[:12]}; it is not exported"
        )
