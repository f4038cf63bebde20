"""Reads about judgments that several apps and views need."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from typing import Any, cast

from django.db.models import Count, Exists, OuterRef, Q, Sum
from django.utils import timezone

from judging.assessments.models import (
    Adjudication,
    JudgingSlot,
    Judgment,
    Lease,
    LeaseState,
    QrelsEntry,
    QrelsVersion,
    TopicAssignment,
)
from judging.campaigns.models import Campaign
from judging.core.roles import UserLike
from metrics.agreement import agreement, agreement_by_topic, disagreements


def qrels_version(campaign: Campaign, number: str | int | None = None) -> QrelsVersion | None:
    """Qrels version ``number`` of the campaign, or its latest when no number is given.

    None when the campaign has no such version (a number that is not a number included).
    """
    versions = QrelsVersion.objects.filter(campaign=campaign)
    if number is None or number == "":
        return versions.latest_first().first()
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
    judged = Judgment.objects.filter(campaign=campaign).values_list("topic__qid", "docid")
    for qid, docid in judged.iterator(chunk_size=10_000):
        out.setdefault(qid, set()).add(docid)
    return out


def annotator_progress(
    campaign: Campaign, annotator: UserLike, *, qid: str | None = None
) -> list[dict[str, Any]]:
    """Per topic the annotator works on (or just topic ``qid``): items judged by them and items
    left for them.

    Only counts: no run, rank or other annotator's grade appears here.
    """
    assignments = TopicAssignment.objects.filter(campaign=campaign, annotator_id=annotator.pk)
    if qid is not None:
        assignments = assignments.filter(topic__qid=qid)
    topics = assignments.select_related("topic").order_by("topic__qid")
    out = []
    for a in topics:
        slot_n = 1 if a.primary else 2
        slots = JudgingSlot.objects.filter(topic=a.topic, slot=slot_n)
        total = slots.count()
        mine = Judgment.objects.filter(topic=a.topic, annotator_id=annotator.pk).count()
        left = slots.filter(judged_at__isnull=True, has_text=True).count()
        out.append(
            {
                "qid": a.topic.qid,
                "title": a.topic.title,
                "primary": a.primary,
                "judged": mine,
                "left": left,
                "total": total,
            }
        )
    return out


def waiting_for_text(campaign: Campaign, annotator: UserLike | None = None) -> int:
    """Items (topic, document) queued for judging but not served because the document has no
    text yet; for an annotator, those they have not judged themselves. A count only: it says
    nothing about runs or ranks."""
    slots = JudgingSlot.objects.filter(campaign=campaign, judged_at__isnull=True, has_text=False)
    if annotator is not None:
        judged_by_them = Judgment.objects.filter(
            topic_id=OuterRef("topic_id"), docid=OuterRef("docid"), annotator_id=annotator.pk
        )
        slots = slots.exclude(Exists(judged_by_them))
    return slots.values("topic_id", "docid").distinct().count()


def judging_progress(campaign: Campaign) -> dict[str, Any]:
    """Admin view: per topic and per annotator counts, lease states and throughput."""
    now = timezone.now()
    slots = JudgingSlot.objects.filter(campaign=campaign)
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
    judgments = Judgment.objects.filter(campaign=campaign)
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
    }


def current_judgments(campaign: Campaign) -> list[tuple[tuple[str, str], str, int]]:
    """((qid, docid), annotator, grade) of every current judgment: the agreement input."""
    return [
        ((qid, docid), user, grade)
        for qid, docid, user, grade in Judgment.objects.filter(campaign=campaign, gold__isnull=True)
        .values_list("topic__qid", "docid", "annotator__username", "grade")
        .iterator(chunk_size=10_000)
    ]


def agreement_report(campaign: Campaign) -> dict[str, Any]:
    """Agreement on the items judged by several annotators, overall and per topic (admins)."""
    rows = current_judgments(campaign)
    scale = campaign.grade_values()
    by_topic = agreement_by_topic(
        rows, topic_of=lambda item: cast(tuple[str, str], item)[0], scale=scale
    )
    return {
        "overall": agreement(rows, scale=scale).to_dict(),
        "topics": {qid: a.to_dict() for qid, a in sorted(by_topic.items())},
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
