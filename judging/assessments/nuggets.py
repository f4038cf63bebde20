"""Nugget banks, versioned as qrels versions are: each version holds, per topic, the nuggets an
answer is scored against (``metrics.answers.nuggets``: ``vital`` or ``okay``).

A version begins as a **draft** (``bank_create``, here): its nuggets imported from a file,
extracted from the topic's relevant segments by the embedding judge or written by an automatic
judge (the drafting is ``autojudge.nugget_drafts``), or copied from an earlier version, keys
kept. Assessors edit a draft topic by topic (``assessments.nugget_edits``: add, reword, mark
vital or okay, delete, merge, split, move): each edit is one ``NuggetEdit`` row holding the
nuggets it touched before and after, so a topic's history says who changed what, and a drafted
topic's first row (``draft``) what it began with. An admin **publishes** a draft
(``bank_publish``): it is frozen from then on (every edit is refused with a ``Conflict``) and
its content is hashed (``nugget_selectors.content_hash``); assignments and scores name the
version they used. What is read of banks is ``assessments.nugget_selectors``.

Keys. A nugget's ``key`` (``n1``, ``n2``, ...) names one nugget of one topic across the
campaign's versions: a copy keeps it, a reword or a change of importance keeps it, and a new
nugget (an add, a merge's result, a split's parts, any drafted nugget) takes the next number
never used for the topic in any version of the campaign, so a key never names two different
nuggets. A file's own keys are not kept: an imported nugget is a new one.

Concurrency. An edit names the state it was made on: ``base``, the id of the topic's latest
edit as the editor saw it (0: none yet; ``nugget_selectors.bank_topics`` gives it as
``last_edit``). The bank's row is locked for the edit (``SELECT ... FOR UPDATE`` on PostgreSQL;
on SQLite every transaction takes the write lock at BEGIN), so the check and the write are one
step, and an edit whose base is not the topic's latest is refused with a ``Conflict`` naming the
edit it missed: an assessor never overwrites another's edit unseen; they reload and edit again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from judging.assessments.models import (
    Nugget,
    NuggetBank,
    NuggetBankState,
    NuggetEdit,
    NuggetImportance,
    QrelsVersion,
)
from judging.assessments.nugget_selectors import (
    bank_export,
    bank_rows,
    canonical_lines,
    content_hash,
)
from judging.campaigns.models import Campaign, Topic
from judging.core import uploads
from judging.core.errors import Conflict, InvalidInput
from judging.core.roles import UserLike, account
from metrics.io.nuggets import DraftNugget, read_nuggets
from metrics.problems import Problem

SOURCES = ("judge", "extracted", "imported", "copied")
IMPORTANCE = tuple(NuggetImportance.values)


# --- validation -----------------------------------------------------------------------------


def limits() -> tuple[int, int]:
    return (
        settings.POOLJUDGE_JUDGING.max_nuggets_per_topic,
        settings.POOLJUDGE_JUDGING.max_nugget_chars,
    )


def text_problem(text: Any, where: str) -> Problem | None:
    """Why ``text`` cannot be a nugget's text (a string, not blank, no NUL, at most
    ``POOLJUDGE_MAX_NUGGET_CHARS`` characters), or None."""
    if not isinstance(text, str):
        return Problem.at(where, "must be a string")
    if not text.strip():
        return Problem.at(where, "is blank")
    if "\x00" in text:
        return Problem.at(where, "holds a NUL character")
    limit = limits()[1]
    if len(text.strip()) > limit:
        return Problem.at(where, f"{len(text.strip()):,} characters; the limit is {limit:,}")
    return None


def importance_problem(value: Any, where: str) -> Problem | None:
    if value not in IMPORTANCE:
        return Problem.at(where, f"{str(value)[:40]!r} is neither 'vital' nor 'okay'")
    return None


def _fail(message: str, problems: list[Problem]) -> None:
    if problems:
        limit = settings.POOLJUDGE_UPLOADS.max_problems
        raise InvalidInput(message, problems[:limit], total=len(problems))


def _draft_problems(
    nuggets: Mapping[str, Sequence[DraftNugget]], topic_ids: Mapping[str, int]
) -> list[Problem]:
    most, _ = limits()
    problems: list[Problem] = []
    for qid, items in nuggets.items():
        if qid not in topic_ids:
            problems.append(Problem.at(qid, f"topic {qid!r} is not a topic of the campaign"))
            continue
        if len(items) > most:
            problems.append(Problem.at(qid, f"{len(items)} nuggets; the limit is {most}"))
        seen: set[str] = set()
        for i, n in enumerate(items):
            where = f"{qid}[{i}]"
            bad = text_problem(n.text, f"{where}.text") or importance_problem(
                n.importance, f"{where}.importance"
            )
            if bad is not None:
                problems.append(bad)
                continue
            normal = " ".join(n.text.split()).casefold()
            if normal in seen:
                problems.append(Problem.at(f"{where}.text", "the same nugget twice in the topic"))
            seen.add(normal)
    return problems


# --- keys -----------------------------------------------------------------------------------


def number_of(key: str) -> int:
    return int(key[1:]) if key[:1] == "n" and key[1:].isdigit() else 0


def keys_used(topic_ids: Iterable[int]) -> dict[int, int]:
    """Topic id -> the highest key number any version of its campaign has used for it (a
    nugget of any bank, or one an edit touched)."""
    ids = list(topic_ids)
    top: dict[int, int] = dict.fromkeys(ids, 0)
    for topic_id, key in Nugget.objects.filter(topic_id__in=ids).values_list("topic_id", "key"):
        top[topic_id] = max(top[topic_id], number_of(key))
    edits = NuggetEdit.objects.filter(topic_id__in=ids).values_list("topic_id", "before", "after")
    for topic_id, before, after in edits.iterator(chunk_size=2000):
        for item in [*before, *after]:
            top[topic_id] = max(top[topic_id], number_of(str(item.get("key", ""))))
    return top


def as_json(n: Nugget) -> dict[str, Any]:
    return {
        "key": n.key,
        "position": n.position,
        "text": n.text,
        "importance": n.importance,
        "sources": list(n.sources),
    }


# --- creating a version ---------------------------------------------------------------------


def bank_create(
    *,
    campaign: Campaign,
    by: UserLike | None,
    source: str,
    nuggets: Mapping[str, Sequence[DraftNugget]] | None = None,
    based_on: NuggetBank | None = None,
    qrels: QrelsVersion | None = None,
    note: str = "",
) -> NuggetBank:
    """A new draft, numbered after the campaign's latest version: ``nuggets`` by topic qid
    (a topic not given has none yet), or, for ``source`` ``copied``, ``based_on``'s nuggets
    with their keys (and its qrels version unless ``qrels`` is given). Validated whole
    (``InvalidInput`` listing every problem; nothing stored): the source, that ``based_on`` and
    ``qrels`` belong to the campaign, each topic, text and importance, at most
    ``POOLJUDGE_MAX_NUGGETS_PER_TOPIC`` nuggets a topic and no text twice in one. Each topic
    given nuggets gets one ``draft`` edit recording them. ``by`` None: the command line."""
    who = account(by) if by is not None else None
    problems: list[Problem] = []
    if source not in SOURCES:
        problems.append(Problem.at("source", f"{source!r} is not one of {', '.join(SOURCES)}"))
    if source == "copied" and based_on is None:
        problems.append(Problem.at("based_on", "a copy names the version it copies"))
    if source == "copied" and nuggets:
        problems.append(Problem.at("nuggets", "a copy takes its nuggets from based_on"))
    if source != "copied" and nuggets is None:
        problems.append(Problem.at("nuggets", "a draft that is not a copy needs its nuggets"))
    if based_on is not None and based_on.campaign_id != campaign.pk:
        problems.append(Problem.at("based_on", "a version of another campaign"))
    if qrels is not None and qrels.campaign_id != campaign.pk:
        problems.append(Problem.at("qrels", "a qrels version of another campaign"))
    if "\x00" in note:
        problems.append(Problem.at("note", "holds a NUL character"))
    topic_ids = dict(campaign.topics.values_list("qid", "id"))
    problems += _draft_problems(nuggets or {}, topic_ids)
    _fail("the nugget bank is not valid; nothing was stored", problems)
    with transaction.atomic():
        # the campaign's row, locked: two drafts created at once take different numbers
        Campaign.objects.select_for_update().filter(pk=campaign.pk).first()
        top = NuggetBank.objects.filter(campaign=campaign).aggregate(n=Max("number"))["n"]
        if source == "copied":
            assert based_on is not None
            content = {t.qid: list(t.nuggets) for t in bank_export(based_on)}
            qrels = qrels if qrels is not None else based_on.qrels
        else:
            content = {q: [_stripped(n) for n in items] for q, items in (nuggets or {}).items()}
        bank = NuggetBank.objects.create(
            campaign=campaign,
            number=(top or 0) + 1,
            source=source,
            based_on=based_on,
            qrels=qrels,
            note=note.strip(),
            created_by=who,
        )
        _store(bank, content, topic_ids, keep_keys=source == "copied", by=who)
    return bank


def bank_import(
    *,
    campaign: Campaign,
    by: UserLike | None,
    data: uploads.Source,
    source: str | None = None,
    qrels: QrelsVersion | None = None,
    note: str = "",
) -> NuggetBank:
    """A new draft of the nuggets in a file (``metrics.io.nuggets``: nuggetizer's JSON lines, or
    ``qid<TAB>importance<TAB>text``), read and validated whole under the upload limits and the
    nugget limits, every problem with its line, and every topic one of the campaign's; nothing
    is stored on a problem. The file's keys are not kept (an imported nugget is a new one)."""
    what = "the nugget file"
    upload = uploads.read(
        data, what=what, limit=settings.POOLJUDGE_UPLOADS.max_upload_bytes, source=source
    )
    most, chars = limits()
    with uploads.reading(what):
        table = read_nuggets(
            upload.data,
            uploads.record_limits(),
            source=upload.name,
            max_problems=settings.POOLJUDGE_UPLOADS.max_problems,
            max_nuggets=most,
            max_text_chars=chars,
        )
    known = set(campaign.topics.values_list("qid", flat=True))
    unknown = [
        Problem(t.line, f"topic {t.qid!r} is not a topic of campaign {campaign.name!r}")
        for t in table.topics
        if t.qid not in known
    ]
    _fail(f"{what} names topics the campaign does not have; nothing was stored", unknown)
    nuggets = {
        t.qid: [DraftNugget(n.text, n.importance, n.sources) for n in t.nuggets]
        for t in table.topics
    }
    return bank_create(
        campaign=campaign,
        by=by,
        source="imported",
        nuggets=nuggets,
        qrels=qrels,
        note=note or f"imported from {upload.name}",
    )


def _stripped(n: DraftNugget) -> DraftNugget:
    return DraftNugget(n.text.strip(), n.importance, tuple(dict.fromkeys(n.sources)), n.key)


def _store(
    bank: NuggetBank,
    content: Mapping[str, Sequence[DraftNugget]],
    topic_ids: Mapping[str, int],
    *,
    keep_keys: bool,
    by: Any,
) -> None:
    used = keys_used(topic_ids[q] for q in content) if not keep_keys else {}
    rows: list[Nugget] = []
    edits: list[NuggetEdit] = []
    for qid, items in sorted(content.items()):
        if not items:
            continue
        topic_id = topic_ids[qid]
        made = []
        for position, n in enumerate(items):
            if keep_keys:
                key = n.key
            else:
                used[topic_id] += 1
                key = f"n{used[topic_id]}"
            made.append(
                Nugget(
                    bank=bank,
                    topic_id=topic_id,
                    key=key,
                    position=position,
                    text=n.text,
                    importance=n.importance,
                    sources=list(n.sources),
                )
            )
        rows += made
        after = [as_json(n) for n in made]
        edits.append(NuggetEdit(bank=bank, topic_id=topic_id, op="draft", after=after, editor=by))
    Nugget.objects.bulk_create(rows)
    NuggetEdit.objects.bulk_create(edits)


# --- publishing -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Published:
    """A version just published: it, its nuggets' count, and the campaign's topics it holds
    no nugget for (published as they are: an answer on such a topic has no nugget score)."""

    bank: NuggetBank
    nuggets: int
    empty_topics: tuple[str, ...]


def bank_publish(*, bank: NuggetBank, by: UserLike | None) -> Published:
    """Freeze a draft: from now on every edit is refused; its content hash is set
    (:func:`content_hash` of :func:`canonical_lines`). A version published already is a
    ``Conflict``. A topic without nuggets does not stop it: it is listed. ``by`` None: the
    command line."""
    if by is not None:
        account(by)
    with transaction.atomic():
        locked = NuggetBank.objects.select_for_update().get(pk=bank.pk)
        if locked.state == NuggetBankState.PUBLISHED:
            raise Conflict(f"nugget bank v{locked.number} is published already")
        rows = bank_rows(locked)
        locked.content_hash = content_hash(canonical_lines(rows))
        locked.state = NuggetBankState.PUBLISHED
        locked.published_at = timezone.now()
        locked.save(update_fields=["content_hash", "state", "published_at"])
    with_nuggets = {q for q, *_ in rows}
    empty = tuple(
        q
        for q in Topic.objects.filter(campaign_id=locked.campaign_id)
        .order_by("qid")
        .values_list("qid", flat=True)
        if q not in with_nuggets
    )
    bank.refresh_from_db()
    return Published(bank, len(rows), empty)
