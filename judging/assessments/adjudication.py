"""Reads for adjudicating one item (admins): its assessors' grades and time, the final grade,
the history of decisions, and the next disagreement still undecided.

Gold judgments (quality control) are never part of an item's assessors here.
"""

from __future__ import annotations

import string
from typing import Any

from judging.assessments.models import Adjudication, AdjudicationChange, Judgment, UnitKind
from judging.assessments.selectors import disagreement_list
from judging.campaigns.models import Campaign, Topic


def assessor_label(index: int) -> str:
    """The anonymous name of an item's ``index``-th assessor: A, B, ..., Z, AA, AB, ..."""
    letters = string.ascii_uppercase
    name = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        name = letters[rest] + name
    return f"Assessor {name}"


def item_judgments(campaign: Campaign, topic: Topic, docid: str) -> list[dict[str, Any]]:
    """The current (non-gold) judgments of an item, first judged first: who (their name, or
    "Assessor A", "Assessor B", ... in that order when ``campaign.show_assessor_names`` is off),
    the grade and its label, the time spent (active seconds) and when."""
    labels = campaign.grade_labels()
    rows = (
        Judgment.objects.filter(
            campaign=campaign, topic=topic, kind=UnitKind.DOCUMENT, docid=docid, gold__isnull=True
        )
        .order_by("created_at", "pk")
        .values_list("annotator__username", "grade", "active_seconds", "created_at", "updated_at")
    )
    return [
        {
            "assessor": name if campaign.show_assessor_names else assessor_label(i),
            "grade": grade,
            "label": labels.get(grade, ""),
            "active_seconds": active,
            "judged_at": created,
            "changed_at": updated,
        }
        for i, (name, grade, active, created, updated) in enumerate(rows)
    ]


def decisions(
    campaign: Campaign, *, qid: str | None = None, docid: str | None = None
) -> list[dict[str, Any]]:
    """The history of final-grade decisions, oldest first (of one topic, one document, or one
    item when given): topic, document, old grade (None: the first decision), new grade, the
    reason given, who decided and when."""
    rows = AdjudicationChange.objects.filter(campaign=campaign)
    if qid is not None:
        rows = rows.filter(topic__qid=qid)
    if docid is not None:
        rows = rows.filter(docid=docid)
    return [
        {
            "topic": q,
            "docid": d,
            "old_grade": old,
            "new_grade": new,
            "note": note,
            "decided_by": who,
            "decided_at": at,
        }
        for q, d, old, new, note, who, at in rows.order_by("decided_at", "pk").values_list(
            "topic__qid",
            "docid",
            "old_grade",
            "new_grade",
            "note",
            "decided_by__username",
            "decided_at",
        )
    ]


def final_grade(campaign: Campaign, topic: Topic, docid: str) -> int | None:
    """The adjudicated grade of an item, None when nobody decided it."""
    return (
        Adjudication.objects.filter(campaign=campaign, topic=topic, docid=docid)
        .values_list("grade", flat=True)
        .first()
    )


def next_undecided(
    campaign: Campaign,
    *,
    after: tuple[str, str] | None = None,
    relevance_only: bool = False,
) -> tuple[tuple[str, str] | None, int]:
    """The undecided disagreement (no final grade) to look at after the item ``after``: the
    first one following it in the adjudication list's order (largest spread first), wrapping
    round, never ``after`` itself; and how many are undecided in all."""
    items = disagreement_list(campaign, relevance_only=relevance_only)
    order = [(d["topic"], d["docid"]) for d in items]
    pending = {key for d, key in zip(items, order, strict=True) if d["adjudicated"] is None}
    if after in order:
        i = order.index(after)
        order = order[i + 1 :] + order[:i]
    return next((key for key in order if key in pending and key != after), None), len(pending)


def adjudication_item(
    campaign: Campaign, topic: Topic, docid: str, *, relevance_only: bool = False
) -> dict[str, Any]:
    """Everything the adjudication of one item shows, but the document itself."""
    nxt, left = next_undecided(campaign, after=(topic.qid, docid), relevance_only=relevance_only)
    return {
        "topic": topic.qid,
        "docid": docid,
        "judgments": item_judgments(campaign, topic, docid),
        "adjudicated": final_grade(campaign, topic, docid),
        "history": decisions(campaign, qid=topic.qid, docid=docid),
        "next": {"topic": nxt[0], "docid": nxt[1]} if nxt else None,
        "undecided": left,
    }
