"""Reads about judgments that several apps and views need."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any, cast

from django.db import connection, transaction
from django.db.models import Count, Exists, OuterRef, Q, Sum
from django.utils import timezone

from judging.assessments import units
from judging.assessments.models import (
    Adjudication,
    JudgingSlot,
    Judgment,
    Lease,
    LeaseState,
    QrelsEntry,
    QrelsVersion,
    TopicAssignment,
    UnitKind,
)
from judging.campaigns.models import Campaign, Topic
from judging.core.roles import UserLike
from metrics.judges.agreement import agreement, agreement_by_topic, disagreements


def qrels_version(campaign: Campaign, number: str | int | None = None) -> QrelsVersion | None:
    """Qrels version ``number`` of the campaign (of any kind), or its latest *human* version when
    no number is given: automatic and hybrid versions are read only when asked for by number.

    None when the campaign has no such version (a number that is not a number included).
    """
    versions = QrelsVersion.objects.filter(campaign=campaign)
    if number is None or number == "":
        return versions.human().latest_first().first()
    if not str(number).isdigit():
        return None
    return versions.filter(number=int(number)).first()


def judged_documents(campaign: Campaign) -> dict[str, set[str]]:
    """qid -> docids that have ever been judged in the campaign (any qrels version, or an
    annotator's judgment not yet published).

    A negative grade means "pooled but not judged" and does not count.
    """
    out: dict[str, set[str]] = {}
    rows = (
        QrelsEntry.objects.filter(version__campaign=campaign, grade__gte=0)
        .values_list("topic__qid", "docid")
        .distinct()
    )
    for qid, docid in rows.iterator(chunk_size=10_000):
        out.setdefault(qid, set()).add(docid)
    judged = Judgment.objects.filter(
        campaign=campaign, kind=UnitKind.DOCUMENT, gold__isnull=True
    ).values_list("topic__qid", "docid")
    for qid, docid in judged.iterator(chunk_size=10_000):
        out.setdefault(qid, set()).add(docid)
    return out


def annotator_progress(
    campaign: Campaign, annotator: UserLike, *, qid: str | None = None
) -> list[dict[str, Any]]:
    """Per topic the annotator works on (or just topic ``qid``), in qid order: every topic they
    are assigned to or judged in (a topic is also judged without an assignment, when the queue
    serves whatever is left: so the rows' ``judged`` add up to all their judgments).

    - ``first``: their judgments of a first slot (or a judgment with no slot left; a gold item
      counts here too: the screen never says which items are gold), ``second``: of a second
      (overlap) slot, the "second opinions"; ``judged = first + second``; from the judgments'
      own slots, not from the assignment;
    - ``left``: items still open for them in the topic, by their role in it: first slots where
      they are the primary assessor or nobody is, second slots where somebody else is; only
      items they have not judged, with text loaded, not leased to somebody else now; plus the
      gold items queued for them;
    - ``total = judged + left``; ``primary``: whether they are the topic's primary assessor;
      ``assigned``: whether the topic was handed to them at all (as primary or for second
      opinions); ``role``: ``"primary"``, ``"other"`` (another assessor is the topic's
      primary) or ``"open"`` (nobody is).

    Only counts: no run, rank or other annotator's grade appears here.
    """
    mine = Judgment.objects.filter(campaign=campaign, annotator_id=annotator.pk)
    assignments = TopicAssignment.objects.filter(campaign=campaign, annotator_id=annotator.pk)
    if qid is not None:
        mine = mine.filter(topic__qid=qid)
        assignments = assignments.filter(topic__qid=qid)
    counted = {
        row["topic_id"]: row
        for row in mine.values("topic_id").annotate(
            first=Count("pk", filter=Q(slot__isnull=True) | Q(slot__slot__lte=1)),
            second=Count("pk", filter=Q(slot__slot__gte=2)),
        )
    }
    primary = dict(assignments.values_list("topic_id", "primary"))
    topic_ids = set(counted) | set(primary)
    if not topic_ids:
        return []
    owned_by_others = set(
        TopicAssignment.objects.filter(topic_id__in=topic_ids, primary=True)
        .exclude(annotator_id=annotator.pk)
        .values_list("topic_id", flat=True)
    )
    now = timezone.now()
    judged_by_them = Judgment.objects.filter(
        topic_id=OuterRef("topic_id"),
        kind=OuterRef("kind"),
        docid=OuterRef("docid"),
        annotator_id=annotator.pk,
    )
    open_slots = (
        JudgingSlot.objects.filter(topic_id__in=topic_ids, judged_at__isnull=True, has_text=True)
        .filter(Q(gold_for__isnull=True) | Q(gold_for_id=annotator.pk))
        .filter(
            Q(lease_expires_at__isnull=True)
            | Q(lease_expires_at__lte=now)
            | Q(lease__annotator_id=annotator.pk)
        )
        .exclude(Exists(judged_by_them))
    )
    open_by_topic: dict[int, Counter[str]] = {}
    for topic_id, slot, gold_for in open_slots.values_list("topic_id", "slot", "gold_for_id"):
        kind = "gold" if gold_for is not None else ("second" if slot >= 2 else "first")
        open_by_topic.setdefault(topic_id, Counter())[kind] += 1
    topics = {t.pk: t for t in Topic.objects.filter(pk__in=topic_ids).only("pk", "qid", "title")}
    out = []
    for topic_id in sorted(topic_ids, key=lambda pk: _qid_key(topics[pk].qid)):
        topic = topics[topic_id]
        row = counted.get(topic_id, {"first": 0, "second": 0})
        waiting = open_by_topic.get(topic_id, Counter())
        other = topic_id in owned_by_others
        left = waiting["second" if other else "first"] + waiting["gold"]
        judged = row["first"] + row["second"]
        out.append(
            {
                "qid": topic.qid,
                "title": topic.title,
                "primary": bool(primary.get(topic_id, False)),
                "assigned": topic_id in primary,
                "role": "primary" if primary.get(topic_id) else ("other" if other else "open"),
                "first": row["first"],
                "second": row["second"],
                "judged": judged,
                "left": left,
                "total": judged + left,
            }
        )
    return out


@contextmanager
def one_snapshot() -> Iterator[None]:
    """Several reads that must agree with each other see one state of the database.

    Under PostgreSQL's default (read committed) each statement sees what was committed before
    it, so a judgment committed between two counting statements is counted in neither or in
    both (its slot no longer open, its judgment not yet seen). Outside a transaction this opens
    one at ``REPEATABLE READ`` (one snapshot for all its statements); SQLite's read transaction
    is a snapshot already. Inside an outer transaction the caller's isolation holds."""
    if connection.in_atomic_block:
        yield
        return
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        yield


def annotator_position(
    campaign: Campaign,
    annotator: UserLike,
    topic: Topic,
    *,
    lease_pk: int | None = None,
    judged_before: Any = None,
) -> dict[str, int | None]:
    """``annotator_place`` without the topic's progress row."""
    return annotator_place(
        campaign, annotator, topic, lease_pk=lease_pk, judged_before=judged_before
    )[0]


def annotator_place(
    campaign: Campaign,
    annotator: UserLike,
    topic: Topic,
    *,
    lease_pk: int | None = None,
    judged_before: Any = None,
) -> tuple[dict[str, int | None], dict[str, Any] | None]:
    """Where an item stands among the annotator's items of its topic: ``n`` of ``of``.

    ``of`` is the topic's total for them (``annotator_progress``: what they judged there plus
    what is left for them, the items they hold included, so that the judging screen and *My
    work* give the same number and nothing of other annotators' work or of gold items shows in
    it). For a leased item (``lease_pk``), ``n`` counts their judgments in the topic and the
    live leases they hold there up to this one (the item being read comes before the one
    leased ahead); for an earlier judgment (``judged_before``: its time), their judgments in
    the topic made until then. All from one snapshot (``one_snapshot``). Returned with the
    topic's ``annotator_progress`` row it was counted from (None if it has none), which the
    pages show too: read once.

    ``of`` is None when ``n`` is past the total: the item was not among those counted as left
    for them (a first slot of a topic another assessor owns, served when nothing else was open:
    such items come one at a time, however many more there will be), so no total is known and
    the page says "N judged, more may come" instead of "N of N" item after item."""
    with one_snapshot():
        progress = next(iter(annotator_progress(campaign, annotator, qid=topic.qid)), None)
        judged = progress["judged"] if progress else 0
        if judged_before is not None:
            n = Judgment.objects.filter(
                topic=topic, annotator_id=annotator.pk, created_at__lte=judged_before
            ).count()
        else:
            n = judged
            if lease_pk is not None:
                n += Lease.objects.filter(
                    annotator_id=annotator.pk,
                    slot__topic=topic,
                    slot__judged_at__isnull=True,
                    state=LeaseState.ACTIVE,
                    expires_at__gt=timezone.now(),
                    pk__lte=lease_pk,
                ).count()
        total = progress["total"] if progress else 0
    n = max(n, 1)
    return {"n": n, "of": total if n <= total else None}, progress


def _qid_key(qid: str) -> tuple[int, int, str]:
    """Numeric topic ids in numeric order (2 before 10), the others after them by text."""
    return (0, int(qid), "") if qid.isdigit() else (1, 0, qid)


def annotator_work(annotator: UserLike) -> list[dict[str, Any]]:
    """The annotator's work per campaign they may judge in: ``judged`` (every judgment of
    theirs in it, gold items included) and its topics (``annotator_progress``), whose
    ``judged`` add up to it."""
    judged = dict(
        Judgment.objects.filter(annotator_id=annotator.pk)
        .values_list("campaign_id")
        .annotate(n=Count("pk"))
        .values_list("campaign_id", "n")
    )
    return [
        {
            "campaign": campaign,
            "judged": judged.get(campaign.pk, 0),
            "topics": annotator_progress(campaign, annotator),
        }
        for campaign in Campaign.objects.visible_to(annotator).order_by("pk")
    ]


# Judgments further apart than this belong to two sessions (the pace's wall-clock time).
SESSION_GAP = timedelta(minutes=15)


def annotator_pace(
    annotator: UserLike, *, campaign: Campaign | None = None, now: Any = None
) -> dict[str, Any]:
    """How fast the annotator judges (all campaigns, or one), from their current judgments
    (gold items included; undone ones are gone; a changed grade counts once, when first made):

    - ``judgments``; ``active_seconds``: the sum of the judgments' active time (the screen
      counts it only while the page is visible and the annotator active);
    - ``per_active_hour = judgments / (active_seconds / 3600)``;
    - ``sessions``: judgments split where two consecutive ones are more than ``SESSION_GAP``
      apart; a session's wall-clock time runs from the start of its first judgment (its time
      minus its active time) to its last one, and at least its judgments' active time;
      ``wall_seconds`` sums them and
      ``per_wall_hour = judgments / (wall_seconds / 3600)``;
    - ``last_hour``: judgments made in the last 60 minutes; ``today``: since local midnight.

    The rates are None while there is no time to divide by.
    """
    now = now or timezone.now()
    judgments = Judgment.objects.filter(annotator_id=annotator.pk)
    if campaign is not None:
        judgments = judgments.filter(campaign=campaign)
    rows = list(judgments.order_by("created_at", "pk").values_list("created_at", "active_seconds"))
    active = float(sum(seconds for _, seconds in rows))
    spans: list[list[Any]] = []  # per session: [start, end, active seconds in it]
    for at, seconds in rows:
        if not spans or at - spans[-1][1] > SESSION_GAP:
            spans.append([at - timedelta(seconds=seconds), at, 0.0])
        spans[-1][1] = at
        spans[-1][2] += seconds
    # a session lasts at least the active time recorded in it (a client may send judgments
    # made offline, or a queue of them, at once)
    wall = sum(max((end - start).total_seconds(), spent) for start, end, spent in spans)
    midnight = timezone.localtime(now).replace(hour=0, minute=0, second=0, microsecond=0)
    hour_ago = now - timedelta(hours=1)
    n = len(rows)
    return {
        "judgments": n,
        "active_seconds": active,
        "per_active_hour": n * 3600.0 / active if active > 0 else None,
        "sessions": len(spans),
        "wall_seconds": wall,
        "per_wall_hour": n * 3600.0 / wall if wall > 0 else None,
        "last_hour": sum(1 for at, _ in rows if hour_ago < at <= now),
        "today": sum(1 for at, _ in rows if midnight <= at <= now),
    }


def waiting_for_text(campaign: Campaign, annotator: UserLike | None = None) -> int:
    """Items (topic, document) queued for judging but not served because the document has no
    text yet; for an annotator, those they have not judged themselves. A count only: it says
    nothing about runs or ranks."""
    slots = JudgingSlot.objects.filter(
        campaign=campaign, judged_at__isnull=True, has_text=False, gold_for__isnull=True
    )
    if annotator is not None:
        judged_by_them = Judgment.objects.filter(
            topic_id=OuterRef("topic_id"),
            kind=OuterRef("kind"),
            docid=OuterRef("docid"),
            annotator_id=annotator.pk,
        )
        slots = slots.exclude(Exists(judged_by_them))
    return slots.values("topic_id", "docid").distinct().count()


def judging_progress(campaign: Campaign) -> dict[str, Any]:
    """Admin view: per topic and per annotator counts, lease states and throughput."""
    now = timezone.now()
    slots = JudgingSlot.objects.filter(campaign=campaign, gold_for__isnull=True)  # no gold
    per_topic = (
        slots.values("topic__qid", "topic__title")
        .annotate(
            total=Count("pk"),
            judged=Count("pk", filter=Q(judged_at__isnull=False)),
            waiting_text=Count("pk", filter=Q(has_text=False, judged_at__isnull=True)),
            leased=Count("pk", filter=Q(judged_at__isnull=True, lease_expires_at__gt=now)),
        )
        .order_by("topic__qid")
    )
    owners = {
        a.topic.qid: a.annotator.get_username()
        for a in TopicAssignment.objects.filter(campaign=campaign, primary=True).select_related(
            "topic", "annotator"
        )
    }
    topics = [{**row, "primary": owners.get(row["topic__qid"], "")} for row in per_topic]
    judgments = Judgment.objects.filter(campaign=campaign, gold__isnull=True)
    hour_ago = now - timedelta(hours=1)
    per_annotator = (
        judgments.values("annotator__username")
        .annotate(
            judged=Count("pk"),
            last_hour=Count("pk", filter=Q(created_at__gte=hour_ago)),
            active_seconds=Sum("active_seconds"),
        )
        .order_by("annotator__username")
    )
    annotators = [
        {
            **row,
            "seconds_per_judgment": (row["active_seconds"] or 0.0) / row["judged"]
            if row["judged"]
            else None,
        }
        for row in per_annotator
    ]
    lease_states = Counter(
        dict(
            Lease.objects.filter(slot__campaign=campaign)
            .values_list("state")
            .annotate(n=Count("pk"))
            .values_list("state", "n")
        )
    )
    expired_active = Lease.objects.filter(
        slot__campaign=campaign, state=LeaseState.ACTIVE, expires_at__lte=now
    ).count()
    lease_states[LeaseState.ACTIVE] -= expired_active
    lease_states[LeaseState.EXPIRED] += expired_active
    kinds = {
        kind: {"slots": n, "judged": done}
        for kind, n, done in slots.values_list("kind")
        .annotate(n=Count("pk"), done=Count("pk", filter=Q(judged_at__isnull=False)))
        .values_list("kind", "n", "done")
        .order_by("kind")
    }
    total = slots.count()
    judged = slots.filter(judged_at__isnull=False).count()
    waiting = slots.filter(judged_at__isnull=True, has_text=False)
    return {
        "slots": total,
        "judged": judged,
        "left": total - judged,
        "waiting_text": waiting.count(),
        "documents_waiting_text": waiting.values("docid").distinct().count(),
        "percent": round(100.0 * judged / total, 1) if total else 0.0,
        "judgments_last_hour": judgments.filter(created_at__gte=hour_ago).count(),
        "adjudications": Adjudication.objects.filter(campaign=campaign).count(),
        "lease_states": {state: lease_states.get(state, 0) for state in LeaseState.values},
        "topics": topics,
        "annotators": annotators,
        "kinds": kinds,
    }


def current_judgments(
    campaign: Campaign, kind: str = UnitKind.DOCUMENT
) -> list[tuple[tuple[str, str], str, int]]:
    """((qid, key), annotator, grade) of every current judgment of items of ``kind`` but those
    of gold items (quality control, see ``assessments.gold``): the agreement input."""
    return [
        ((qid, docid), user, grade)
        for qid, docid, user, grade in Judgment.objects.filter(
            campaign=campaign, kind=kind, gold__isnull=True
        )
        .values_list("topic__qid", "docid", "annotator__username", "grade")
        .iterator(chunk_size=10_000)
    ]


def _agreement(rows: list[tuple[tuple[str, str], str, int]], scale: list[int]) -> dict[str, Any]:
    by_topic = agreement_by_topic(
        rows, topic_of=lambda item: cast(tuple[str, str], item)[0], scale=scale
    )
    return {
        "overall": agreement(rows, scale=scale).to_dict(),
        "topics": {qid: a.to_dict() for qid, a in sorted(by_topic.items())},
    }


def agreement_report(campaign: Campaign) -> dict[str, Any]:
    """Agreement on the items judged by several annotators, overall and per topic (admins):
    on documents, and (``kinds``) on each other kind of item judged in the campaign, on its
    own scale (``assessments.units``)."""
    judged = set(
        Judgment.objects.filter(campaign=campaign)
        .exclude(kind=UnitKind.DOCUMENT)
        .values_list("kind", flat=True)
        .distinct()
    )
    return {
        **_agreement(current_judgments(campaign), campaign.grade_values()),
        "kinds": {
            kind: _agreement(current_judgments(campaign, kind), units.grade_values(campaign, kind))
            for kind in sorted(judged)
        },
    }


def disagreement_list(campaign: Campaign, *, relevance_only: bool = False) -> list[dict[str, Any]]:
    """Items whose annotators gave different grades (only relevant-vs-not ones if asked), each
    with the grades by annotator, their spread and the adjudicated grade if an admin set one."""
    adjudicated = {
        (q, d): g
        for q, d, g in Adjudication.objects.filter(campaign=campaign).values_list(
            "topic__qid", "docid", "grade"
        )
    }
    level = campaign.relevance_threshold if relevance_only else None
    items = disagreements(current_judgments(campaign), relevance_level=level)
    return [
        {
            "topic": item[0],
            "docid": item[1],
            "grades": d.grades,
            "spread": d.spread,
            "adjudicated": adjudicated.get(item),
        }
        for d in items
        for item in [cast(tuple[str, str], d.item)]
    ]
