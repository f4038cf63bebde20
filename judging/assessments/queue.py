"""The judging queue: slots, leases and judgments.

Every pooled (topic, document) never judged before gets slot 1; a configured fraction of them
(the overlap) also gets slot 2, for a second annotator. An annotator asks for the next item and
gets a *lease* on one slot; it expires unless renewed, and an expired slot returns to the queue.

Picking a slot locks it with ``SELECT ... FOR UPDATE SKIP LOCKED`` on PostgreSQL, so concurrent
annotators never wait for each other and never get the same slot; on SQLite the transaction
takes the database write lock at BEGIN (``transaction_mode=IMMEDIATE``), which serialises
pickers and is just as correct.

Assignment is topic-centric (TREC practice): an annotator works through their own topics; when
those have nothing left, they are handed a topic nobody owns yet; then second slots of other
annotators' topics (agreement); last, to keep the queue moving, open first slots elsewhere.
"""

from __future__ import annotations

import operator
import zlib
from collections.abc import Iterable
from datetime import timedelta
from functools import reduce
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, F, Model, OuterRef, Q, QuerySet
from django.utils import timezone

from judging.assessments import spans as spans_
from judging.assessments import units
from judging.assessments.models import (
    JudgingSlot,
    Judgment,
    JudgmentChange,
    Lease,
    LeaseState,
    TopicAssignment,
    UnitKind,
)
from judging.campaigns.models import Campaign, Document, Topic
from judging.campaigns.passages import PassageText, passage_text
from judging.core.errors import Conflict, InvalidInput, NotFound
from judging.core.roles import Account, UserLike
from judging.pools.models import PoolDocument, PoolVersion
from judging.pools.services import pool_rankings, strategy_for_version
from metrics.problems import Problem

DOCUMENT = UnitKind.DOCUMENT
MAX_ACTIVE_SECONDS = 3600.0
# A skipped (released) item is not served again to the same annotator within their next
# SKIP_MEMORY leases, unless nothing else is open for them.
SKIP_MEMORY = 10


def in_overlap(qid: str, docid: str, fraction: float) -> bool:
    """Deterministic choice of the overlap items: a hash of (topic, document) below the fraction."""
    if fraction <= 0:
        return False
    return zlib.crc32(f"{qid}\0{docid}".encode()) / 2**32 < fraction


def slots_enqueue(*, version: PoolVersion) -> int:
    """Queue the never-judged documents of a newly built pool version (inside its transaction).

    Items already queued by an earlier version keep their slot. Returns the slots created.
    """
    campaign = version.campaign
    existing = set(
        JudgingSlot.objects.filter(campaign=campaign, kind=DOCUMENT).values_list(
            "topic_id", "docid", "slot"
        )
    )
    new: list[JudgingSlot] = []
    docs = PoolDocument.objects.filter(version=version, to_judge=True).values_list(
        "topic_id", "topic__qid", "docid", "position", "has_text"
    )
    for topic_id, qid, docid, position, has_text in docs.iterator(chunk_size=10_000):
        slots = (1, 2) if in_overlap(qid, docid, campaign.overlap) else (1,)
        for n in slots:
            if (topic_id, docid, n) not in existing:
                new.append(
                    JudgingSlot(
                        campaign=campaign,
                        topic_id=topic_id,
                        docid=docid,
                        slot=n,
                        position=position,
                        pool_version=version,
                        has_text=has_text,
                    )
                )
    JudgingSlot.objects.bulk_create(new, batch_size=5000)
    return len(new)


def slots_first(*, version: PoolVersion, items: Iterable[tuple[int, str]]) -> int:
    """Queue ``(topic_id, docid)`` items of a pool version ahead of everything else in their
    topics (a human sample chosen by the service): a slot is created where the item has none,
    and the open slots of these items move to position 0 (served first). Returns the slots
    created."""
    wanted = set(items)
    docs = {
        (t, d): has_text
        for t, d, has_text in PoolDocument.objects.filter(version=version).values_list(
            "topic_id", "docid", "has_text"
        )
        if (t, d) in wanted
    }
    return _queue_first(version.campaign, docs, version)


def slots_topup(*, campaign: Campaign, items: Iterable[tuple[int, str, bool]]) -> int:
    """Queue a top-up's ``(topic_id, docid, has_text)`` items first in their topics (position
    0: the topic's assessor meets them before the rest of its queue), with no pool version (a
    top-up is not a pool); an item already queued keeps its slot, moved to position 0. Returns
    the slots created."""
    return _queue_first(campaign, {(t, d): h for t, d, h in items}, None)


def _queue_first(
    campaign: Campaign, items: dict[tuple[int, str], bool], version: PoolVersion | None
) -> int:
    """A slot of ``version`` (None: a top-up's) for each ``(topic_id, docid) -> has_text`` item
    that has none, and the open slots of every item moved to position 0 (served first in their
    topics); the slots created."""
    existing = set(
        JudgingSlot.objects.filter(
            campaign=campaign, kind=DOCUMENT, gold_for__isnull=True
        ).values_list("topic_id", "docid")
    )
    new = [
        JudgingSlot(
            campaign=campaign,
            topic_id=t,
            docid=d,
            slot=1,
            position=0,
            pool_version=version,
            has_text=has_text,
        )
        for (t, d), has_text in items.items()
        if (t, d) not in existing
    ]
    JudgingSlot.objects.bulk_create(new, batch_size=5000)
    by_topic: dict[int, list[str]] = {}
    for t, d in items:
        by_topic.setdefault(t, []).append(d)
    for t, docids in by_topic.items():
        for i in range(0, len(docids), 5000):
            JudgingSlot.objects.filter(
                campaign=campaign,
                topic_id=t,
                kind=DOCUMENT,
                docid__in=docids[i : i + 5000],
                judged_at__isnull=True,
            ).update(position=0)
    return len(new)


def slots_text_loaded(*, campaign: Campaign, docids: Iterable[str]) -> None:
    """Documents were imported: their slots can now be served."""
    ids = list(docids)
    for i in range(0, len(ids), 5000):
        JudgingSlot.objects.filter(
            campaign=campaign, kind=DOCUMENT, has_text=False, docid__in=ids[i : i + 5000]
        ).update(has_text=True)


# --- leasing ------------------------------------------------------------------------------


def _open_slots(campaign: Campaign, annotator: Account, now: Any) -> QuerySet[JudgingSlot]:
    """Slots this annotator may take now: unjudged, servable, not leased, not judged by them,
    and not the other slot of an item they hold."""
    judged_by_me = Judgment.objects.filter(
        topic_id=OuterRef("topic_id"),
        kind=OuterRef("kind"),
        docid=OuterRef("docid"),
        annotator=annotator,
    )
    held_by_me = JudgingSlot.objects.filter(
        topic_id=OuterRef("topic_id"),
        kind=OuterRef("kind"),
        docid=OuterRef("docid"),
        lease__annotator=annotator,
        lease_expires_at__gt=now,
    )
    return (
        JudgingSlot.objects.filter(
            campaign=campaign, judged_at__isnull=True, has_text=True, gold_for__isnull=True
        )
        .filter(Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lte=now))
        .exclude(Exists(judged_by_me))
        .exclude(Exists(held_by_me))
    )


def _lock_first(qs: QuerySet[JudgingSlot]) -> JudgingSlot | None:
    return (
        qs.order_by("topic_id", "position", "slot", "pk")
        .select_for_update(skip_locked=True, of=("self",))[:1]
        .first()
    )


def _adaptive_pick(
    campaign: Campaign, topic: Topic, candidates: QuerySet[JudgingSlot], version: PoolVersion
) -> JudgingSlot | None:
    """Ask an adaptive strategy for the topic's next document, given its judgments so far."""
    judged = list(
        Judgment.objects.filter(topic=topic, kind=DOCUMENT, gold__isnull=True)  # gold: QC only
        .order_by("created_at", "pk")
        .values_list("docid", "grade")
    )
    if version.budget is not None and len({d for d, _ in judged}) >= version.budget:
        return None
    strategy = strategy_for_version(version)
    runs = {  # the lists the version was built from (cut to its depth, or its answers' segments)
        tag: by_topic[topic.qid]
        for tag, by_topic in pool_rankings(version, topic=topic).items()
        if by_topic.get(topic.qid)
    }
    history: dict[str, int] = {}
    for docid, grade in judged:
        history.setdefault(docid, grade)
    order = strategy.order(
        runs,
        judged=history,
        budget=None,
        topic=topic.qid,
        relevance_level=campaign.relevance_threshold,
    )
    rank = {docid: i for i, docid in enumerate(order)}
    open_docs = list(candidates.filter(topic=topic, kind=DOCUMENT).values_list("docid", flat=True))
    for docid in sorted(open_docs, key=lambda d: rank.get(d, len(rank))):
        slot = (
            candidates.filter(topic=topic, kind=DOCUMENT, docid=docid)
            .select_for_update(skip_locked=True, of=("self",))
            .first()
        )
        if slot is not None:
            return slot
    return None


def _columns(model: type[Model], alias: str) -> str:
    """The SQL selecting a model's concrete fields from ``alias`` (read back by ``_from_row``)."""
    cols = [f.column for f in model._meta.concrete_fields]
    return ", ".join(f"{alias}.{connection.ops.quote_name(c)}" for c in cols)


def _from_row(row: Any, models: list[type[Model]]) -> tuple[list[Any], Any]:
    """The model instances of a raw row that selected ``_columns`` of each of ``models`` in
    turn, as the ORM would load them, and the rest of the row."""
    objects: list[Any] = []
    start = 0
    for model in models:
        names = [f.attname for f in model._meta.concrete_fields]
        values = _converted(model, row[start : start + len(names)])
        objects.append(model.from_db(connection.alias, names, values))
        start += len(names)
    return objects, row[start:]


def _first_in_own_topics(
    campaign: Campaign, annotator: Account, now: Any, skipped: list[Item]
) -> tuple[JudgingSlot | None, bool]:
    """The common case of ``lease_next`` in one statement: the first open first slot of the
    annotator's current topic (their earliest handed-out topic with unjudged first slots),
    locked with ``SKIP LOCKED``, with its topic, pool version and document text, so that the
    answer needs nothing else.

    The conditions of ``_open_slots`` but one: "not the other slot of an item they hold" is
    left to the caller, who passes the items the annotator holds among ``skipped`` (the
    current one, when this leases ahead). Written as SQL because building and compiling that
    queryset (two correlated ``EXISTS``, a join to the assignments) cost a lease more time than
    the database took to run it. The flag returned beside the slot says that the ORM path must
    decide instead: nothing open in that topic for this annotator (it may be in a later one),
    or an adaptive pool version (its strategy chooses the document)."""
    q = connection.ops.quote_name
    slot_t, topic_t = q(JudgingSlot._meta.db_table), q(Topic._meta.db_table)
    slot_sql, topic_sql = _columns(JudgingSlot, "s"), _columns(Topic, "t")
    skip_sql = "".join(
        ' AND NOT (s."topic_id" = %s AND s."kind" = %s AND s."docid" = %s)' for _ in skipped
    )
    lock = " FOR UPDATE OF s SKIP LOCKED" if connection.features.has_select_for_update else ""
    # The pick (inner) touches only the serving index and the two anti-joins; topic, pool
    # version and document are joined to the one locked row.
    sql = f"""
        SELECT {slot_sql}, {topic_sql}, v."adaptive", d."title", d."text"
        FROM (
            SELECT s."id" FROM {slot_t} s
            WHERE s."topic_id" = (
                  SELECT a."topic_id" FROM {q(TopicAssignment._meta.db_table)} a
                  WHERE a."campaign_id" = %s AND a."annotator_id" = %s AND a."primary"
                    AND EXISTS (
                        SELECT 1 FROM {slot_t} u
                        WHERE u."campaign_id" = a."campaign_id" AND u."topic_id" = a."topic_id"
                          AND u."judged_at" IS NULL AND u."slot" = 1 AND u."has_text")
                  ORDER BY a."assigned_at", a."id"
                  LIMIT 1)
              AND s."campaign_id" = %s AND s."slot" = 1 AND s."judged_at" IS NULL
              AND s."has_text"
              AND (s."lease_expires_at" IS NULL OR s."lease_expires_at" <= %s)
              AND NOT EXISTS (
                  SELECT 1 FROM {q(Judgment._meta.db_table)} j
                  WHERE j."topic_id" = s."topic_id" AND j."kind" = s."kind"
                    AND j."docid" = s."docid" AND j."annotator_id" = %s){skip_sql}
            ORDER BY s."position", s."slot", s."id"
            LIMIT 1{lock}
        ) pick
        JOIN {slot_t} s ON s."id" = pick."id"
        JOIN {topic_t} t ON t."id" = s."topic_id"
        LEFT JOIN {q(PoolVersion._meta.db_table)} v ON v."id" = s."pool_version_id"
        LEFT JOIN {q(Document._meta.db_table)} d
            ON d."campaign_id" = s."campaign_id" AND d."docid" = s."docid"
            AND s."kind" = %s
    """
    params: list[Any] = [campaign.pk, annotator.pk, campaign.pk, now, annotator.pk]
    for item in skipped:
        params += list(item)
    params.append(DOCUMENT.value)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        return None, True
    (slot, topic), (adaptive, title, text) = _from_row(row, [JudgingSlot, Topic])
    if adaptive:
        return None, True
    slot.topic = topic
    slot.campaign = campaign
    if title is not None:
        slot._document = Document(campaign=campaign, docid=slot.docid, title=title, text=text)
    return slot, False


def _converted(model: type[Model], values: Any) -> list[Any]:
    """A raw row of ``_columns(model)`` as the ORM would give it (booleans and datetimes on
    SQLite, JSON on both)."""
    out = []
    for field, value in zip(model._meta.concrete_fields, values, strict=True):
        col = field.get_col(model._meta.db_table)
        for convert in [*connection.ops.get_db_converters(col), *col.get_db_converters(connection)]:
            value = convert(value, col, connection)
        out.append(value)
    return out


def _pick_in_topics(
    campaign: Campaign, candidates: QuerySet[JudgingSlot], topics: list[int]
) -> JudgingSlot | None:
    for topic_id in topics:
        in_topic = candidates.filter(topic_id=topic_id)
        # One query in the common (non-adaptive) case: lock the first open slot straight away.
        slot = _lock_first(in_topic.select_related("pool_version", "topic"))
        if slot is not None and slot.pool_version is not None and slot.pool_version.adaptive:
            slot = _adaptive_pick(campaign, slot.topic, in_topic, slot.pool_version)
        if slot is not None:
            return slot
    return None


def lease_current(*, campaign: Campaign, annotator: UserLike) -> Lease | None:
    """The annotator's current lease in the campaign, if any: a read, for the pages' GETs.

    The current lease is the oldest live one: an annotator may also hold the next item, leased
    ahead by the judging page (``lease_ahead``), and it comes after the one they are reading."""
    now = timezone.now()
    return (
        Lease.objects.filter(
            annotator_id=annotator.pk,
            slot__campaign=campaign,
            state=LeaseState.ACTIVE,
            expires_at__gt=now,
            slot__judged_at__isnull=True,
            slot__lease_id=F("pk"),
        )
        .select_related("slot__topic", "slot__campaign")
        .order_by("created_at", "pk")
        .first()
    )


def prefetch() -> int:
    """How many items the judging page leases ahead of the current one (POOLJUDGE_PREFETCH)."""
    return settings.POOLJUDGE_JUDGING.prefetch


# Judgments made on the page but not yet recorded (its queue of calls, while the network is
# slow or down): their leases stay held, so an annotator holds at most
# 1 + POOLJUDGE_PREFETCH + IN_FLIGHT live leases, however the page counts its own.
IN_FLIGHT = 2

_Recent = tuple[int, str, Any, Any, int, str, str]
Item = tuple[int, str, str]  # (topic id, kind, key)


def _lock_annotator(annotator: Account) -> None:
    """One annotator's requests one at a time (a double-clicked "next" gets one lease); other
    annotators are not held up.

    (SQL: the queryset's compilation cost more than the round trip; SQLite's write lock, taken
    at BEGIN, serialises the whole transaction anyway.)"""
    if connection.features.has_select_for_update:
        users = get_user_model()._meta
        table, key = (connection.ops.quote_name(n) for n in (users.db_table, users.pk.column))
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT 1 FROM {table} WHERE {key} = %s FOR UPDATE", [annotator.pk])


def _recent(campaign: Campaign, annotator: Account) -> list[_Recent]:
    """The annotator's latest leases, newest first, in one query: the live ones (the current
    item, the one leased ahead and any whose judgment is still on its way) and the items they
    skipped recently. Live leases are among the latest: a new lease is only made while fewer
    than the cap are live."""
    return list(
        Lease.objects.filter(annotator=annotator, slot__campaign=campaign)
        .order_by("-created_at", "-pk")
        .values_list(
            "pk",
            "state",
            "expires_at",
            "slot__judged_at",
            "slot__topic_id",
            "slot__kind",
            "slot__docid",
        )[: SKIP_MEMORY + 1 + prefetch() + IN_FLIGHT]
    )


def _live(recent: list[_Recent], now: Any) -> list[_Recent]:
    """The live leases among ``recent``, oldest first."""
    return [
        r for r in reversed(recent) if r[1] == LeaseState.ACTIVE and r[2] > now and r[3] is None
    ]


def _lease_new(
    campaign: Campaign, annotator: Account, now: Any, recent: list[_Recent]
) -> Lease | None:
    """Lease the next item for the annotator (inside ``_lock_annotator``'s transaction): not
    one they skipped lately unless nothing else is left, and never either slot of an item they
    hold (passed to ``_pick`` with the skipped ones, so its one-statement path excludes them
    too)."""
    held = [(t, k, d) for _, _, _, _, t, k, d in _live(recent, now)]
    skipped = [
        (t, k, d)
        for _, state, _, _, t, k, d in recent[:SKIP_MEMORY]
        if state == LeaseState.RELEASED
    ]
    slot = _pick(campaign, annotator, now, skipped + held)
    if slot is None and skipped:
        slot = _pick(campaign, annotator, now, held)
    if slot is None:
        return None
    lease = Lease.objects.create(
        slot=slot,
        annotator=annotator,
        expires_at=now + timedelta(seconds=campaign.lease_seconds),
    )
    slot.lease = lease
    slot.lease_expires_at = lease.expires_at
    slot.save(update_fields=["lease", "lease_expires_at"])
    slot.campaign = campaign
    return lease


def lease_next(*, campaign: Campaign, annotator: Account) -> Lease | None:
    """The annotator's current lease in the campaign (their oldest live one), or a new one on
    the next item; None when nothing is left for them."""
    now = timezone.now()
    with transaction.atomic():
        _lock_annotator(annotator)
        recent = _recent(campaign, annotator)
        live = _live(recent, now)
        if live:
            return Lease.objects.select_related("slot__topic", "slot__campaign").get(pk=live[0][0])
        return _lease_new(campaign, annotator, now, recent)


def lease_ahead(
    *,
    campaign: Campaign,
    annotator: Account,
    holding: Iterable[int] = (),
    pending: Iterable[int] = (),
) -> Lease | None:
    """The next item after those the judging page holds, leased ahead so that the page can show
    it the moment a grade key is pressed; None when nothing is left for the annotator, or when
    the page already holds ``POOLJUDGE_PREFETCH`` items ahead (with 0: always).

    ``holding`` are the leases the page shows or keeps ready (the current item first),
    ``pending`` those it judged or skipped whose call has not been answered yet (finished as far
    as the page is concerned). Idempotent: asked again, it returns the same lease (the oldest
    live one that is neither), so a retried request leases nothing more. A new lease is made
    only while the annotator holds fewer than ``1 + POOLJUDGE_PREFETCH`` live leases besides
    ``pending`` and fewer than ``1 + POOLJUDGE_PREFETCH + IN_FLIGHT`` in all: what the page
    claims cannot hoard items.
    """
    ahead = prefetch()
    if ahead <= 0:
        return None
    done, held = set(pending), set(holding)
    now = timezone.now()
    with transaction.atomic():
        _lock_annotator(annotator)
        recent = _recent(campaign, annotator)
        live = _live(recent, now)
        working = [r for r in live if r[0] not in done]
        others = [r for r in working if r[0] not in held]
        if others:
            return Lease.objects.select_related("slot__topic", "slot__campaign").get(
                pk=others[0][0]
            )
        if len(working) >= 1 + ahead or len(live) >= 1 + ahead + IN_FLIGHT:
            return None
        return _lease_new(campaign, annotator, now, recent)


def lease_renew_held(*, campaign: Campaign, annotator: Account) -> list[int]:
    """Extend every live lease of the annotator in the campaign (the page renews the item being
    read, the one leased ahead and those whose judgment is on its way); returns their ids.

    Slots are locked before leases, in one order, as everywhere else."""
    now = timezone.now()
    with transaction.atomic():
        held = dict(
            Lease.objects.filter(
                annotator=annotator,
                slot__campaign=campaign,
                state=LeaseState.ACTIVE,
                expires_at__gt=now,
            ).values_list("slot_id", "pk")
        )
        if not held:
            return []
        locked = list(
            JudgingSlot.objects.select_for_update(of=("self",))
            .filter(pk__in=held, judged_at__isnull=True, lease_expires_at__gt=now)
            .order_by("pk")
            .values_list("pk", "lease_id")
        )
        live = [(slot, lease) for slot, lease in locked if held.get(slot) == lease]
        if not live:
            return []
        expires = now + timedelta(seconds=campaign.lease_seconds)
        leases = [lease for _, lease in live]
        Lease.objects.filter(pk__in=leases).update(expires_at=expires)
        JudgingSlot.objects.filter(pk__in=[slot for slot, _ in live]).update(
            lease_expires_at=expires
        )
        return leases


class _NothingOpen(Exception):
    """Rolls back a topic assignment that brought the annotator nothing to judge."""


def _pick(
    campaign: Campaign, annotator: Account, now: Any, skipped: list[Item]
) -> JudgingSlot | None:
    if campaign.gold_rate > 0:
        # quality control: a gold item of the annotator's current topic when one is due
        from judging.assessments.gold import gold_pick

        gold = gold_pick(campaign=campaign, annotator=annotator, now=now, skipped=skipped)
        if gold is not None:
            return gold
    slot, undecided = _first_in_own_topics(campaign, annotator, now, skipped)
    if slot is not None:
        return slot
    candidates = _open_slots(campaign, annotator, now)
    if skipped:
        # both slots of a skipped item: it must not come straight back as the other slot
        candidates = candidates.exclude(
            reduce(operator.or_, (Q(topic_id=t, kind=k, docid=d) for t, k, d in skipped))
        )
    firsts = candidates.filter(slot=1)
    if undecided:
        # Own topics that still have unjudged first slots (one query on the serving index), in
        # the order they were handed out; finished topics are not visited one query at a time.
        unjudged_firsts = JudgingSlot.objects.filter(
            topic_id=OuterRef("topic_id"), slot=1, judged_at__isnull=True
        )
        mine = list(
            TopicAssignment.objects.filter(campaign=campaign, annotator=annotator, primary=True)
            .filter(Exists(unjudged_firsts))
            .order_by("assigned_at", "pk")
            .values_list("topic_id", flat=True)
        )
        slot = _pick_in_topics(campaign, firsts, mine)
        if slot is not None:
            return slot
    # Hand out a topic nobody owns yet that has unjudged first slots. Its row is locked first,
    # skipping topics being handed to somebody else right now (without this, annotators
    # arriving together all queue on the same assignment insert); if nothing in it is open
    # for this annotator after all, the assignment is rolled back and the next topic tried.
    owned = TopicAssignment.objects.filter(topic_id=OuterRef("pk"), primary=True)
    unjudged = JudgingSlot.objects.filter(
        topic_id=OuterRef("pk"), slot=1, judged_at__isnull=True, has_text=True
    )
    tried: list[int] = []
    while len(tried) < 20:
        topic_id = (
            Topic.objects.filter(campaign=campaign)
            .exclude(pk__in=tried)
            .exclude(Exists(owned))
            .filter(Exists(unjudged))
            .order_by("pk")
            .select_for_update(skip_locked=True, of=("self",))
            .values_list("pk", flat=True)
            .first()
        )
        if topic_id is None:
            break
        tried.append(topic_id)
        try:
            with transaction.atomic():
                TopicAssignment.objects.create(
                    campaign=campaign, topic_id=topic_id, annotator=annotator, primary=True
                )
                slot = _pick_in_topics(campaign, firsts, [topic_id])
                if slot is None:
                    raise _NothingOpen
        except (IntegrityError, _NothingOpen):
            continue  # someone else took it a moment ago, or nothing in it is for us
        return slot
    # Second slots (agreement) of topics where this annotator is not the primary assessor.
    primary_elsewhere = ~Exists(
        TopicAssignment.objects.filter(
            topic_id=OuterRef("topic_id"), annotator=annotator, primary=True
        )
    )
    seconds = candidates.filter(slot=2).filter(primary_elsewhere)
    slot = _lock_first(seconds)
    if slot is not None:
        TopicAssignment.objects.get_or_create(
            campaign=campaign,
            topic_id=slot.topic_id,
            annotator=annotator,
            defaults={"primary": False},
        )
        return slot
    # Last, so that no item waits forever: any open slot, including first slots of other
    # annotators' topics and second slots of this annotator's own topics (whose first slot
    # somebody else judged), or an overlap item could wait for a third annotator forever.
    return _lock_first(candidates)


def _own_lease(lease_id: int, annotator: Account) -> tuple[Lease, JudgingSlot]:
    """Lock the lease's slot, then the lease. Always slot before lease (as ``lease_next`` and
    ``judgment_record`` do), so that two requests never wait for each other in a cycle; and
    only those rows (``of``), not the campaign or topic they join."""
    slot = (
        JudgingSlot.objects.select_for_update(of=("self",))
        .select_related("campaign", "topic")
        .filter(leases__pk=lease_id, leases__annotator=annotator)
        .first()
    )
    if slot is None:
        raise NotFound(f"no lease {lease_id} of yours")
    lease = Lease.objects.select_for_update().get(pk=lease_id)
    lease.slot = slot
    return lease, slot


def lease_renew(*, lease_id: int, annotator: Account) -> Lease:
    """Extend a live lease while the annotator's page is open (409 once it was released or
    expired, whether or not the item went to someone else)."""
    now = timezone.now()
    with transaction.atomic():
        lease, slot = _own_lease(lease_id, annotator)
        why = _ended(lease, slot, now)
        if why is not None:
            # an ended lease stays ended: renewing it would let it record a judgment again
            raise Conflict(f"{why}; it cannot be renewed (ask for a new lease)")
        lease.expires_at = now + timedelta(seconds=slot.campaign.lease_seconds)
        lease.save(update_fields=["expires_at"])
        slot.lease_expires_at = lease.expires_at
        slot.save(update_fields=["lease_expires_at"])
        return lease


def lease_release(*, lease_id: int, annotator: Account) -> None:
    """Skip: give the item back to the queue now."""
    with transaction.atomic():
        lease, _ = _own_lease(lease_id, annotator)
        if lease.state != LeaseState.ACTIVE:
            return
        lease.state = LeaseState.RELEASED
        lease.ended_at = timezone.now()
        lease.save(update_fields=["state", "ended_at"])
        JudgingSlot.objects.filter(pk=lease.slot_id, lease=lease).update(lease_expires_at=None)


# --- judgments ----------------------------------------------------------------------------


def _check_grade(campaign: Campaign, kind: str, grade: Any) -> int:
    grades = units.grade_values(campaign, kind)
    if isinstance(grade, bool) or not isinstance(grade, int) or grade not in grades:
        scale = "the campaign's scale" if kind == DOCUMENT else f"the scale of a {kind} item"
        raise InvalidInput(
            f"the grade is not on {scale}",
            [Problem.at("grade", f"grade {grade!r} is not one of {grades}")],
        )
    return int(grade)


def _ended(lease: Lease, slot: JudgingSlot, now: Any) -> str | None:
    """Why this lease can no longer record a judgment, or None while it is live.

    Liveness is read from the slot row (locked by the caller): every change of who holds a slot
    happens under that lock, so the slot's ``lease``/``lease_expires_at`` are the truth even if
    the lease row was read a moment earlier."""
    if lease.state == LeaseState.RELEASED:
        return f"lease {lease.pk} was released (the item was skipped)"
    if lease.state != LeaseState.ACTIVE:
        return f"lease {lease.pk} has ended ({lease.state})"
    if lease.expires_at <= now:
        return f"lease {lease.pk} expired at {lease.expires_at.isoformat(timespec='seconds')}"
    if slot.lease_id != lease.pk or slot.lease_expires_at is None:
        return f"lease {lease.pk} has ended: the item was given back to the queue"
    if slot.judged_at is not None:
        return f"lease {lease.pk} has ended: the item was judged by someone else"
    return None


def _lease_for_judgment(lease_id: int, annotator: Account) -> tuple[Lease, int | None] | None:
    """One statement: the annotator's lease with its slot (locked: the slot's lock is what
    every change of its holder takes), campaign and topic, and the id of the annotator's
    judgment of the item if there is one. SQL for the reason given in ``_first_in_own_topics``.
    """
    q = connection.ops.quote_name
    models_: list[tuple[type[Model], str]] = [
        (Lease, "l"),
        (JudgingSlot, "s"),
        (Campaign, "c"),
        (Topic, "t"),
    ]
    selected = ", ".join(_columns(model, alias) for model, alias in models_)
    lock = " FOR UPDATE OF s" if connection.features.has_select_for_update else ""
    sql = f"""
        SELECT {selected}, (
            SELECT j."id" FROM {q(Judgment._meta.db_table)} j
            WHERE j."topic_id" = s."topic_id" AND j."kind" = s."kind"
              AND j."docid" = s."docid" AND j."annotator_id" = l."annotator_id"
        )
        FROM {q(Lease._meta.db_table)} l
        JOIN {q(JudgingSlot._meta.db_table)} s ON s."id" = l."slot_id"
        JOIN {q(Campaign._meta.db_table)} c ON c."id" = s."campaign_id"
        JOIN {q(Topic._meta.db_table)} t ON t."id" = s."topic_id"
        WHERE l."id" = %s AND l."annotator_id" = %s{lock}"""
    with connection.cursor() as cursor:
        cursor.execute(sql, [lease_id, annotator.pk])
        row = cursor.fetchone()
    if row is None:
        return None
    (lease, slot, campaign, topic), (judgment_id,) = _from_row(row, [m for m, _ in models_])
    slot.campaign, slot.topic = campaign, topic
    lease.slot = slot
    return lease, judgment_id


SUGGESTION_ARMS = ("", "shown", "hidden")


def judgment_record(
    *,
    lease_id: int,
    annotator: Account,
    grade: Any,
    active_seconds: float = 0.0,
    suggestion_arm: str = "",
    suggested_grade: int | None = None,
    answers: Any = None,
) -> tuple[Judgment, bool]:
    """Record the grade for a leased item; returns ``(judgment, changed)``.

    Only a live lease records a new judgment: one that was released (a skip), expired, or ended
    otherwise is refused with a conflict naming why, so that it can never take the item from
    whoever holds it now. Idempotent: submitting the same grade again (a retry, a double click)
    stores nothing new, even after the lease ended with that judgment. A different grade for an
    item the annotator already judged is refused too (a conflict saying what the judgment is):
    it comes from a page that is out of date (a second tab, a page restored by Back and Forward,
    another computer), and a judgment changes only when the annotator asks for that change
    (``judgment_change``, going back to it; ``judgment_undo``), never as a side effect of a key
    pressed on another document.

    ``suggestion_arm`` and ``suggested_grade``: the automatic grade suggested for the item and
    whether it was shown before judging (the anchoring control), as the caller computed them on
    the server (``judging.autojudge.suggestions``; this layer does not know judges). Stored with
    the judgment when it is created.

    ``answers``: the ``[start, end]`` spans of the document's text the assessor marked as
    answering (``assessments.spans``: checked, merged; only with a grade above 0), stored in
    ``spans`` with the passage's offsets when the item is a passage. Idempotency covers them:
    the same grade with the same answers (after merging; none given is none) stores nothing
    new, and the same grade with other answers is refused like another grade (a conflict: a
    page out of date marked other text; the answers change by going back, as the grade does).
    """
    given = spans_.answers_parsed(answers)
    if suggestion_arm not in SUGGESTION_ARMS:
        raise ValueError(f"suggestion_arm must be one of {SUGGESTION_ARMS}, not {suggestion_arm!r}")
    if (suggestion_arm == "") != (suggested_grade is None):
        raise ValueError("a suggestion has both an arm and a grade, or neither")
    now = timezone.now()
    with transaction.atomic():
        found = _lease_for_judgment(lease_id, annotator)
        if found is None:
            raise NotFound(f"no lease {lease_id} of yours")
        lease, judgment_id = found
        slot = lease.slot
        grade = _check_grade(slot.campaign, slot.kind, grade)
        if judgment_id is None and slot.judged_at is not None:
            # the slot lock may have been waited for: a judgment committed meanwhile (a
            # concurrent retry of this very submission) is visible to a new statement only
            judgment_id = (
                Judgment.objects.filter(
                    topic_id=slot.topic_id, kind=slot.kind, docid=slot.docid, annotator=annotator
                )
                .values_list("pk", flat=True)
                .first()
            )
        if judgment_id is not None:
            judgment = Judgment.objects.select_related("topic").get(pk=judgment_id)
            same_answers = spans_.merged(given or []) == spans_.answers_of(judgment.spans)
            if judgment.grade == grade and same_answers:
                return judgment, False
            if judgment.grade == grade:
                raise Conflict(_other_answers(judgment))
            raise Conflict(_already_judged(slot.campaign, judgment, grade))
        why = _ended(lease, slot, now)
        if why is not None:
            raise Conflict(f"{why}; it records no judgment (ask for a new lease)")
        spans = _spans(slot.campaign_id, slot.kind, slot.docid, grade, given)
        seconds = min(max(float(active_seconds or 0.0), 0.0), MAX_ACTIVE_SECONDS)
        judgment = Judgment.objects.create(
            campaign=slot.campaign,
            topic=slot.topic,
            kind=slot.kind,
            docid=slot.docid,
            annotator=annotator,
            grade=grade,
            slot=slot,
            active_seconds=seconds,
            gold_id=slot.gold_id,
            suggestion_arm=suggestion_arm,
            suggested_grade=suggested_grade,
            spans=spans,
        )
        _history(judgment, annotator, old_grade=None, new_grade=grade, spans=spans)
        JudgingSlot.objects.filter(pk=slot.pk).update(judged_by=annotator, judged_at=now)
        Lease.objects.filter(pk=lease.pk).update(state=LeaseState.JUDGED, ended_at=now)
        return judgment, True


def _spans(
    campaign_id: int, kind: str, key: str, grade: int, answers: list[Any] | None
) -> dict[str, Any] | None:
    """A judgment's spans: a document's (``assessments.spans``); other kinds have none."""
    if kind == DOCUMENT:
        return spans_.item_spans(campaign_id=campaign_id, item=key, grade=grade, answers=answers)
    if answers:
        raise InvalidInput(
            f"answer spans are marked in documents, not in a {kind} item; nothing was recorded",
            [Problem.at("answers", "must be empty for this item")],
        )
    return None


def _already_judged(campaign: Campaign, judgment: Judgment, grade: int) -> str:
    labels = units.grade_labels(campaign, judgment.kind)
    return (
        f"{judgment.docid} is already judged {labels.get(judgment.grade, judgment.grade)} "
        f"(judgment {judgment.pk}), from another tab or window or an earlier copy of the page; "
        f"{labels.get(grade, grade)} was not recorded. To change a judgment, go back to it "
        f"(b on the judging page; PATCH /api/v1/judgments/{judgment.pk}/ in the API)"
    )


def _other_answers(judgment: Judgment) -> str:
    marked = len(spans_.answers_of(judgment.spans))
    return (
        f"{judgment.docid} is already judged with the same grade and "
        f"{marked or 'no'} other answer span(s) (judgment {judgment.pk}), from another tab or "
        f"window or an earlier copy of the page; these answers were not recorded. To change "
        f"them, go back to the judgment (b on the judging page; PATCH "
        f"/api/v1/judgments/{judgment.pk}/ with answers in the API)"
    )


def _history(
    judgment: Judgment,
    annotator: Account,
    *,
    old_grade: int | None,
    new_grade: int | None,
    spans: dict[str, Any] | None = None,
    undoes: JudgmentChange | None = None,
    keep_link: bool = True,
) -> JudgmentChange:
    """Record one change of a judgment in its history, with the judgment's spans after it
    (``keep_link=False`` when the judgment is about to be deleted: the record keeps topic and
    document, not the row)."""
    return JudgmentChange.objects.create(
        judgment=judgment if keep_link else None,
        topic_id=judgment.topic_id,
        kind=judgment.kind,
        docid=judgment.docid,
        annotator=annotator,
        old_grade=old_grade,
        new_grade=new_grade,
        spans=spans,
        undoes=undoes,
    )


def _change(
    judgment: Judgment,
    grade: int,
    annotator: Account,
    spans: dict[str, Any] | None,
    undoes: JudgmentChange | None = None,
) -> None:
    """Change the grade and spans, with history."""
    _history(
        judgment, annotator, old_grade=judgment.grade, new_grade=grade, spans=spans, undoes=undoes
    )
    judgment.grade = grade
    judgment.spans = spans
    judgment.save(update_fields=["grade", "spans", "updated_at"])


def judgment_change(
    *, judgment_id: int, annotator: Account, grade: Any, answers: Any = None
) -> Judgment:
    """Change one of the annotator's own judgments (going back to an earlier item).

    ``answers``: the answer spans the judgment has from now on (``assessments.spans``; an empty
    list removes them); None keeps those it has, except that a grade of 0 (not relevant) has
    none. Nothing is recorded when grade and spans stay the same; otherwise one history row
    (a change of answers alone too, its old and new grade the same)."""
    given = spans_.answers_parsed(answers)
    with transaction.atomic():
        judgment = (
            Judgment.objects.select_for_update(of=("self",))
            .select_related("campaign")
            .filter(pk=judgment_id, annotator=annotator)
            .first()
        )
        if judgment is None:
            raise NotFound(f"no judgment {judgment_id} of yours")
        grade = _check_grade(judgment.campaign, judgment.kind, grade)
        if given is None:
            given = spans_.answers_of(judgment.spans) if grade > 0 else []
        spans = _spans(judgment.campaign_id, judgment.kind, judgment.docid, grade, given)
        if judgment.grade != grade or judgment.spans != spans:
            _change(judgment, grade, annotator, spans)
        return judgment


def judgment_undo(*, campaign: Campaign, annotator: Account) -> Lease | None:
    """Undo the annotator's latest action in the campaign that is not undone yet.

    Actions form a stack: a grade change is reverted to the previous grade; a first judgment is
    removed and its item leased back to the annotator, so that it is shown next (the new lease
    is returned). Every undo is kept in the history and points at the change it reverts, so a
    second undo goes one action further back instead of redoing the first.
    """
    now = timezone.now()
    with transaction.atomic():
        action = (
            JudgmentChange.objects.filter(
                topic__campaign=campaign,
                annotator=annotator,
                undoes__isnull=True,
                undone_by__isnull=True,
            )
            .exclude(judgment__isnull=True)
            .order_by("-changed_at", "-pk")
            .select_related("judgment")
            .first()
        )
        if action is None or action.judgment is None:
            return None
        judgment_id, slot_id = action.judgment.pk, action.judgment.slot_id
        held = list(
            Lease.objects.filter(
                annotator=annotator, slot__campaign=campaign, state=LeaseState.ACTIVE
            ).values_list("pk", flat=True)
        )
        # Slots before leases and judgments, in one order, as everywhere else (no deadlocks).
        slot_ids = set(Lease.objects.filter(pk__in=held).values_list("slot_id", flat=True))
        if slot_id is not None:
            slot_ids.add(slot_id)
        slots = {
            s.pk: s
            for s in JudgingSlot.objects.select_for_update().filter(pk__in=slot_ids).order_by("pk")
        }
        judgment = Judgment.objects.select_for_update().filter(pk=judgment_id).first()
        if judgment is None:
            return None  # undone by a concurrent request
        if action.old_grade is not None:
            # the action was a change (of grade, answers or both): restore the grade and the
            # spans the judgment had before it (its history row before the action's)
            before = (
                JudgmentChange.objects.filter(judgment_id=judgment.pk, pk__lt=action.pk)
                .order_by("-pk")
                .values_list("spans", flat=True)
                .first()
            )
            _change(judgment, action.old_grade, annotator, before, undoes=action)
            return None
        _history(
            judgment,
            annotator,
            old_grade=judgment.grade,
            new_grade=None,
            undoes=action,
            keep_link=False,
        )
        judgment.delete()
        # Give back whatever this annotator holds (ended, not a skip: it may be served again
        # right after), then lease the undone item back to them.
        for lease_id, held_slot in Lease.objects.filter(pk__in=held).values_list("pk", "slot_id"):
            Lease.objects.filter(pk=lease_id).update(state=LeaseState.EXPIRED, ended_at=now)
            JudgingSlot.objects.filter(pk=held_slot, lease_id=lease_id).update(
                lease_expires_at=None
            )
        if slot_id is None:
            return None
        slot = slots[slot_id]
        lease = Lease.objects.create(
            slot=slot,
            annotator=annotator,
            expires_at=now + timedelta(seconds=campaign.lease_seconds),
        )
        slot.judged_by = None
        slot.judged_at = None
        slot.lease = lease
        slot.lease_expires_at = lease.expires_at
        slot.save(update_fields=["judged_by", "judged_at", "lease", "lease_expires_at"])
        return lease


def item_text(slot: JudgingSlot) -> PassageText | None:
    """The text the slot's item shows: its document (read with the slot when it was just
    leased) and, when the item is a passage, the passage's offsets in the document's text."""
    read: Document | None = getattr(slot, "_document", None)
    if read is not None:
        return PassageText(read, None)
    if slot.kind != DOCUMENT:
        return None
    return passage_text(slot.campaign_id, slot.docid)
