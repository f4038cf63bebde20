"""The budget plan of a campaign's judging: per topic, what was found and what is left; and the
items still open when qrels are published.

Everything here is for admins (it names assessors). Gold items (slots served to one assessor for
quality control, ``JudgingSlot.gold_for``) and gold judgments (``Judgment.gold``) are left out
everywhere: they are not pooled documents and say nothing about the pool.

Definitions (the page and the API answer say them too):

- *judgments*: the topic's human judgments of pooled items (an overlap item judged twice counts
  twice); *items judged*: its pooled documents with at least one judgment.
- *relevant*: items whose consensus grade is at least the campaign's relevance threshold; the
  consensus is the one qrels are published with (the adjudicated grade when an admin set one,
  else the campaign's rule over the assessors' grades; one assessor: their grade), without the
  grades of assessors an admin excluded from the qrels (``AnnotatorExclusion``). An item judged
  only by excluded assessors counts as judged (nobody is served it again) but stays out of the
  relevant found and the discovery curve (``items_only_excluded``).
- *recent rate*: relevant among the topic's last 50 items judged, in the order of each item's
  first judgment (``metrics.sampling.stopping.recent_rate``).
- *relevant left*: the expected relevant among the items nobody has judged yet, from the topic's
  discovery curve (``metrics.sampling.stopping.fit_decay``): a decaying curve for orders that put
  likely relevant documents first (rank, fusion and adaptive strategies), a flat one (the sampling
  estimate) for docid order (the ``depth`` and ``docid`` strategies), whose order says nothing
  about relevance. The recent rate times the items left is shown beside it.
- *time left*: the open slots that can be filled times the median active seconds per judgment,
  the topic's own when it has ``PACE_MIN_JUDGMENTS`` timed judgments, else the campaign's.
- *needs another assessor*: an overlap slot (slot 2) that nobody can fill: every annotator who
  could take it already judged the item (only one annotator in the campaign, or all judged it).
  Annotators are the active accounts with the annotator role (the queue serves any of them any
  campaign's items).
- *in the version*: an open slot's document is in the qrels version a publish would store when
  ``assessments.services.current_human_grades`` (what ``qrels_publish`` stores) holds it: it has
  a judgment that counts (through another slot: the open one would add a second opinion) or an
  imported grade. The publish form's sentence and the open items' ``in_version`` are read from
  that, so they say what the exported file holds.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from statistics import median
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model

from judging.assessments.models import (
    Adjudication,
    AnnotatorExclusion,
    JudgingSlot,
    Judgment,
    UnitKind,
)
from judging.assessments.services import current_human_grades
from judging.campaigns.models import Campaign
from judging.core.roles import ANNOTATOR
from judging.pools.models import PoolVersion
from metrics.judges.agreement import consensus_grade
from metrics.pooling.runs import topic_sort_key
from metrics.sampling.stopping import (
    DEFAULT_WINDOW,
    expected_left,
    fit_decay,
    recent_rate,
    stop_suggestion,
)

WINDOW = DEFAULT_WINDOW
PACE_MIN_JUDGMENTS = 10
# Strategies whose judging order is the docid order: relevance does not thin out along it.
DOCID_ORDERED = frozenset({"depth", "docid"})

RELEVANCE_RULE = (
    "an item is relevant when its consensus grade (the adjudicated grade, else the campaign's "
    "rule over its assessors' grades) is at least the relevance threshold"
)


@dataclass
class _Slot:
    topic_id: int
    docid: str
    slot: int
    position: int
    judged: bool
    has_text: bool


@dataclass
class _Item:
    grades: list[int] = field(default_factory=list)  # of assessors not excluded
    judgments: int = 0  # all, excluded assessors' too
    annotators: set[int] = field(default_factory=set)
    first: tuple[datetime, int] | None = None


@dataclass
class _Campaign:
    """One read of everything the plan and the open items need."""

    topics: dict[int, tuple[str, str]]
    slots: list[_Slot]
    items: dict[tuple[int, str], _Item]
    seconds: dict[int, list[float]]
    adjudicated: dict[tuple[int, str], int]
    annotators: dict[int, str]
    strategy: str
    in_version: set[tuple[int, str]]  # (topic_id, docid) a publish would store


def _read(campaign: Campaign) -> _Campaign:
    topics = {
        pk: (qid, title) for pk, qid, title in campaign.topics.values_list("pk", "qid", "title")
    }
    slots = [
        _Slot(t, d, s, p, j is not None, h)
        for t, d, s, p, j, h in JudgingSlot.objects.filter(
            campaign=campaign, kind=UnitKind.DOCUMENT, gold_for__isnull=True
        )
        .values_list("topic_id", "docid", "slot", "position", "judged_at", "has_text")
        .iterator(chunk_size=10_000)
    ]
    items: dict[tuple[int, str], _Item] = defaultdict(_Item)
    seconds: dict[int, list[float]] = defaultdict(list)
    excluded = set(
        AnnotatorExclusion.objects.filter(campaign=campaign, lifted_at__isnull=True).values_list(
            "annotator_id", flat=True
        )
    )
    for pk, topic_id, docid, who, grade, at, active in (
        Judgment.objects.filter(campaign=campaign, kind=UnitKind.DOCUMENT, gold__isnull=True)
        .values_list(
            "pk", "topic_id", "docid", "annotator_id", "grade", "created_at", "active_seconds"
        )
        .iterator(chunk_size=10_000)
    ):
        item = items[(topic_id, docid)]
        item.judgments += 1
        if who not in excluded:
            item.grades.append(grade)
        item.annotators.add(who)
        if item.first is None or (at, pk) < item.first:
            item.first = (at, pk)
        if active and active > 0:
            seconds[topic_id].append(float(active))
    adjudicated = {
        (t, d): g
        for t, d, g in Adjudication.objects.filter(campaign=campaign).values_list(
            "topic_id", "docid", "grade"
        )
    }
    annotators = dict(
        get_user_model()
        .objects.filter(groups__name=ANNOTATOR, is_active=True)
        .order_by("username")
        .values_list("pk", "username")
    )
    latest = PoolVersion.objects.built().filter(campaign=campaign).order_by("-number").first()
    topic_of = {qid: pk for pk, (qid, _) in topics.items()}
    in_version = {
        (topic_of[qid], docid) for qid, docid in current_human_grades(campaign) if qid in topic_of
    }
    return _Campaign(
        topics=topics,
        slots=slots,
        items=dict(items),
        seconds=dict(seconds),
        adjudicated=adjudicated,
        annotators=annotators,
        strategy=latest.strategy if latest is not None else "",
        in_version=in_version,
    )


def _names(names: list[str], limit: int = 5) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _unfillable(data: _Campaign) -> dict[tuple[int, str, int], str]:
    """(topic_id, docid, slot) -> why, for the overlap slots nobody can fill.

    An item with ``u`` unjudged slots needs ``u`` more distinct assessors; ``A`` annotators have
    not judged it yet. When ``A < u`` the item's last ``u - A`` unjudged overlap slots can never
    be served to anyone (the queue never gives one person two slots of an item)."""
    open_slots: dict[tuple[int, str], list[int]] = defaultdict(list)
    for s in data.slots:
        if not s.judged:
            open_slots[(s.topic_id, s.docid)].append(s.slot)
    everyone = list(data.annotators.values())
    out: dict[tuple[int, str, int], str] = {}
    for key, numbers in open_slots.items():
        item = data.items.get(key)
        judged_by = item.annotators if item is not None else set()
        available = [pk for pk in data.annotators if pk not in judged_by]
        overlap = sorted(n for n in numbers if n >= 2)
        missing = min(len(numbers) - len(available), len(overlap))
        if missing <= 0:
            continue
        if not everyone:
            why = "needs a second assessor: nobody has the annotator role"
        elif len(everyone) == 1:
            why = f"needs a second assessor: only {everyone[0]} judges in this campaign"
        else:
            done = sorted(data.annotators[pk] for pk in judged_by if pk in data.annotators)
            why = (
                f"needs another assessor: {_names(done)} already judged it and no other "
                f"annotator is left (annotators: {_names(everyone)})"
            )
        for n in overlap[-missing:]:
            out[(key[0], key[1], n)] = why
    return out


def _relevant(data: _Campaign, key: tuple[int, str], rule: str, threshold: int) -> bool:
    grades = data.items[key].grades
    if key in data.adjudicated:
        grade = data.adjudicated[key]
    elif len(grades) == 1:
        grade = grades[0]
    else:
        grade = consensus_grade(grades, rule=rule)  # type: ignore[arg-type]
    return grade >= threshold


def _second_opinions(fillable: int, stuck: int) -> str:
    """The open slots of a topic whose every item has a judgment, in words."""
    parts = []
    if fillable:
        parts.append(
            "1 open slot would add a second opinion"
            if fillable == 1
            else f"{fillable} open slots would add second opinions"
        )
    if stuck:
        parts.append(f"{stuck} need{'s' if stuck == 1 else ''} another assessor")
    return " and ".join(parts)


def duration(seconds: float | None) -> str:
    """Seconds as an admin reads a time left: "40 s", "12 min", "3 h 05 min"."""
    if seconds is None:
        return "unknown (no timed judgments yet)"
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60:02d} min"


def _or_none(value: float) -> float | None:
    return None if value != value else round(value, 2)  # NaN is not JSON


def open_items(campaign: Campaign, *, limit: int | None = None) -> dict[str, Any]:
    """The campaign's unjudged pooled slots, counted by state and listed (the first ``limit``,
    default ``POOLJUDGE_OPEN_ITEMS_LISTED``, in topic and serving order).

    States: ``first slot`` (an item nobody judged yet), ``overlap slot`` (a second judgment,
    for agreement), ``needs another assessor`` (an overlap slot nobody can fill, with why), and
    ``waiting for text`` (not served until its document's text is imported)."""
    return _open_items(_read(campaign), limit=limit)


def _open_items(
    data: _Campaign,
    *,
    limit: int | None = None,
    unfillable: dict[tuple[int, str, int], str] | None = None,
) -> dict[str, Any]:
    cap = settings.POOLJUDGE_JUDGING.open_items_listed if limit is None else limit
    if unfillable is None:
        unfillable = _unfillable(data)
    counts = {"first_slots": 0, "overlap_slots": 0, "needs_another_assessor": 0, "waiting_text": 0}
    documents_in: set[tuple[int, str]] = set()
    documents_out: set[tuple[int, str]] = set()
    rows: list[tuple[Any, int, int, dict[str, Any]]] = []
    for s in data.slots:
        if s.judged:
            continue
        why = unfillable.get((s.topic_id, s.docid, s.slot), "")
        if not s.has_text:
            state, counts["waiting_text"] = "waiting for text", counts["waiting_text"] + 1
        elif why:
            state = "needs another assessor"
            counts["needs_another_assessor"] += 1
        elif s.slot == 1:
            state, counts["first_slots"] = "first slot", counts["first_slots"] + 1
        else:
            state, counts["overlap_slots"] = "overlap slot", counts["overlap_slots"] + 1
        qid = data.topics[s.topic_id][0]
        key = (s.topic_id, s.docid)
        (documents_in if key in data.in_version else documents_out).add(key)
        row = {
            "topic": qid,
            "docid": s.docid,
            "slot": s.slot,
            "state": state,
            "why": why,
            "in_version": key in data.in_version,
        }
        rows.append((topic_sort_key(qid), s.position, s.slot, row))
    rows.sort(key=lambda r: (r[0], r[1], r[2], r[3]["docid"]))
    total = sum(counts.values())
    # judged, but only by assessors excluded from the qrels: out of the version all the same
    excluded_only = sum(1 for k in documents_out if k in data.items)
    out = {
        "count": total,
        **counts,
        "documents_in_version": len(documents_in),
        "documents_not_in_version": len(documents_out),
        "documents_excluded_only": excluded_only,
        "items": [r[3] for r in rows[:cap]],
        "listed": min(cap, total),
        "truncated": total > cap,
        "complete_except_unfillable": total > 0 and total == counts["needs_another_assessor"],
    }
    out["sentence"] = open_items_sentence(out)
    return out


def open_items_sentence(open_: dict[str, Any]) -> str:
    """What publishing now does with the open items' documents, for the publish form: those
    without a judgment that counts are not in the version; the others are, with the judgments
    they have (their open slots would add second opinions)."""
    n_in, n_out = open_["documents_in_version"], open_["documents_not_in_version"]
    total = n_in + n_out
    if not total:
        return ""
    excluded = open_["documents_excluded_only"]
    why = f" ({excluded} judged only by assessors excluded from the qrels)" if excluded else ""
    judgment = "judgment that counts" if excluded else "judgment"
    kept = "with the judgments they have: their open slots would add second opinions"
    if total == 1 and n_out:
        return f"Their document has no {judgment} yet{why}: it is not in the version you publish."
    if total == 1:
        return (
            "Their document already has a judgment and is in the version you publish, with the "
            "judgments it has: its open slots would add second opinions."
        )
    if not n_in:
        return (
            f"Not one of their {total} documents has a {judgment} yet{why}: they are not in the "
            "version you publish."
        )
    if not n_out:
        return (
            f"All {total} of their documents already have a judgment and are in the version "
            f"you publish, {kept}."
        )
    has, is_ = ("has", "is") if n_out == 1 else ("have", "are")
    has_in, is_in = ("has", "is") if n_in == 1 else ("have", "are")
    return (
        f"{n_out} of their {total} documents {has} no {judgment} yet{why} and {is_} not in the "
        f"version you publish; the other {n_in} already {has_in} a judgment and {is_in} in it, "
        f"{kept}."
    )


def open_items_summary(open_: dict[str, Any]) -> str:
    """One sentence for a flash or an answer: "published with 5 open items (...)"."""
    if not open_["count"]:
        return "no open items"
    parts = [
        (open_["first_slots"], "unjudged first slot", "unjudged first slots"),
        (open_["overlap_slots"], "unjudged overlap slot", "unjudged overlap slots"),
        (
            open_["needs_another_assessor"],
            "overlap slot that needs another assessor",
            "overlap slots that need another assessor",
        ),
        (open_["waiting_text"], "slot waiting for text", "slots waiting for text"),
    ]
    said = ", ".join(f"{n} {one if n == 1 else many}" for n, one, many in parts if n)
    n_in, n_out = open_["documents_in_version"], open_["documents_not_in_version"]
    total = n_in + n_out
    if total == 1:
        where = f"its document is {'not ' if n_out else ''}in the version"
    elif not n_in:
        where = f"none of their {total} documents is in the version"
    elif not n_out:
        where = f"all {total} of their documents are in the version"
    else:
        where = f"{n_out} of their {total} documents {'is' if n_out == 1 else 'are'} not in it"
    return f"{open_['count']} open item{'s' if open_['count'] != 1 else ''} ({said}; {where})"


def budget_plan(campaign: Campaign) -> dict[str, Any]:
    """Per topic: judgments, relevant found, the recent rate, relevant left with how it is
    estimated, a stopping suggestion, the time left, the unfillable overlap slots; and the
    campaign's totals and open items. Plain data (JSON-ready) for the page and the API."""
    data = _read(campaign)
    unfillable = _unfillable(data)
    rule, threshold = campaign.consensus_rule, campaign.relevance_threshold
    docid_order = data.strategy in DOCID_ORDERED
    shapes: tuple[Any, ...] = ("flat",) if docid_order else ("exponential", "power")
    all_seconds = [s for ss in data.seconds.values() for s in ss]
    campaign_pace = median(all_seconds) if all_seconds else None

    per_topic_slots: dict[int, list[_Slot]] = defaultdict(list)
    for s in data.slots:
        per_topic_slots[s.topic_id].append(s)
    judgments_of: dict[int, int] = defaultdict(int)
    judged_items: dict[int, list[tuple[tuple[datetime, int], str]]] = defaultdict(list)
    only_excluded: dict[int, int] = defaultdict(int)
    for (topic_id, docid), item in data.items.items():
        judgments_of[topic_id] += item.judgments
        if not item.grades:
            # judged only by assessors excluded from the qrels: judged, but of unknown
            # relevance for the next version; left out of the discovery curve
            only_excluded[topic_id] += 1
        elif item.first is not None:
            judged_items[topic_id].append((item.first, docid))

    topics = []
    totals: dict[str, Any] = {
        "judgments": 0,
        "relevant": 0,
        "items_left": 0,
        "expected_left": 0.0,
        "slots_left": 0,
        "unfillable_slots": 0,
        "seconds_left": 0.0,
    }
    seconds_unknown = False
    for topic_id in sorted(data.topics, key=lambda pk: topic_sort_key(data.topics[pk][0])):
        slots = per_topic_slots.get(topic_id, [])
        if not slots and topic_id not in judged_items and topic_id not in only_excluded:
            continue
        qid, title = data.topics[topic_id]
        order = [d for _, d in sorted(judged_items.get(topic_id, []))]
        outcomes = [_relevant(data, (topic_id, d), rule, threshold) for d in order]
        queued = {s.docid for s in slots}
        items_left = sum(1 for d in queued if (topic_id, d) not in data.items)
        recent = recent_rate(outcomes, window=WINDOW)
        fit = fit_decay(outcomes, shapes=shapes)
        expected = expected_left(fit, judged=len(outcomes), left=items_left)
        suggestion = stop_suggestion(
            recent,
            stop_rate=campaign.stop_rate,
            left=items_left,
            expected=expected,
            prioritised=not docid_order,
        )
        open_slots = [s for s in slots if not s.judged]
        stuck = [s for s in open_slots if (s.topic_id, s.docid, s.slot) in unfillable]
        slots_left = len(open_slots) - len(stuck)
        own = data.seconds.get(topic_id, [])
        pace: float | None
        if len(own) >= PACE_MIN_JUDGMENTS:
            pace, pace_source = median(own), "topic"
        else:
            pace, pace_source = campaign_pace, "campaign" if campaign_pace is not None else "none"
        seconds_left = slots_left * pace if pace is not None else None
        reason = suggestion.reason
        if not items_left and open_slots:
            # "done" would read as nothing left to do beside the slots still open
            reason = "every item has a judgment; " + _second_opinions(slots_left, len(stuck))
        if seconds_left is None and slots_left:
            seconds_unknown = True
        relevant = sum(outcomes)
        topics.append(
            {
                "qid": qid,
                "title": title,
                "judgments": judgments_of.get(topic_id, 0),
                "items_judged": len(outcomes) + only_excluded.get(topic_id, 0),
                "items_only_excluded": only_excluded.get(topic_id, 0),
                "relevant": relevant,
                "recent_found": recent.found,
                "recent_judged": recent.judged,
                "recent_rate": _or_none(recent.rate) if recent.rate is not None else None,
                "items_left": items_left,
                "expected_left": _or_none(expected),
                "expected_left_recent_rate": (
                    round(recent.rate * items_left, 2) if recent.rate is not None else None
                ),
                "model": (
                    {"shape": fit.shape, "a": round(fit.a, 6), "b": round(fit.b, 6)}
                    if fit is not None
                    else None
                ),
                "stop": suggestion.stop,
                "suggestion": reason,
                "slots_left": slots_left,
                "unfillable_slots": len(stuck),
                "unfillable_why": sorted(
                    {unfillable[(s.topic_id, s.docid, s.slot)] for s in stuck}
                ),
                "seconds_per_judgment": _or_none(pace) if pace is not None else None,
                "pace_source": pace_source,
                "seconds_left": _or_none(seconds_left) if seconds_left is not None else None,
                "time_left": duration(seconds_left) if slots_left else "nothing left",
            }
        )
        totals["judgments"] += judgments_of.get(topic_id, 0)
        totals["relevant"] += relevant
        totals["items_left"] += items_left
        totals["expected_left"] += 0.0 if expected != expected else expected
        totals["slots_left"] += slots_left
        totals["unfillable_slots"] += len(stuck)
        totals["seconds_left"] += seconds_left or 0.0
    totals["expected_left"] = round(totals["expected_left"], 2)
    totals["seconds_left"] = None if seconds_unknown else round(totals["seconds_left"], 2)
    totals["time_left"] = (
        duration(totals["seconds_left"]) if totals["slots_left"] else "nothing left"
    )
    open_ = _open_items(data, unfillable=unfillable)
    return {
        "window": WINDOW,
        "stop_rate": campaign.stop_rate,
        "relevance": RELEVANCE_RULE,
        "estimator": (
            "flat: the topic's relevant share so far times the items left (docid order says "
            "nothing about relevance)"
            if docid_order
            else "the topic's discovery curve p(t) = a*exp(-b(t-1)) or a*t^-b, fitted by "
            "maximum likelihood to its items in judging order, summed over the items left"
        ),
        "stopping": (
            "docid order: stopping is suggested when the relevant expected among the items "
            "left is below one (a run of non-relevant documents in docid order says little: "
            "documents that sort together often share a source)"
            if docid_order
            else f"stopping is suggested once fewer than {campaign.stop_rate:g} of the last "
            f"{WINDOW} items judged were relevant (the campaign's stop rate)"
        ),
        "pool_strategy": data.strategy,
        "pace": {
            "seconds_per_judgment": _or_none(campaign_pace) if campaign_pace is not None else None,
            "judgments": len(all_seconds),
            "rule": f"median active seconds per judgment: the topic's own once it has "
            f"{PACE_MIN_JUDGMENTS} timed judgments, else the campaign's",
        },
        "topics": topics,
        "totals": totals,
        "open": open_,
        "topics_to_stop": [t["qid"] for t in topics if t["stop"] and t["items_left"]],
    }
