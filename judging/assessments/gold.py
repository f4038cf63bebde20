"""Quality control: gold items (import, sampling from qrels, serving) and exclusions.

A gold item is a (topic, document) of known grade. Admins import them (a TREC qrels file or
rows) or sample them from a published qrels version. The judging queue mixes them into each
assessor's items at the campaign's ``gold_rate``: a gold item is served as a per-assessor slot
(slot number 0, ``gold_for`` the assessor) created when it is first served, leased, judged,
skipped and undone exactly like a pooled item; its judgment carries ``gold`` and is left out of
consensus (qrels), agreement, pooling and progress counts.

An exclusion leaves an assessor's judgments out of the qrels versions published while it holds;
the judgments themselves stay stored, and lifting it brings them back.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Exists, OuterRef, Q
from django.utils import timezone

from judging.assessments.models import (
    Adjudication,
    AnnotatorExclusion,
    GoldItem,
    GoldSource,
    JudgingSlot,
    Judgment,
    Lease,
    LeaseState,
    QrelsEntry,
    QrelsVersion,
    UnitKind,
)
from judging.campaigns.models import Campaign
from judging.campaigns.passages import has_text, text_ids
from judging.core import uploads
from judging.core.errors import Conflict, InvalidInput, NotFound
from judging.core.roles import Account
from metrics.problems import Problem

# --- import ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class GoldRow:
    """One gold item as given: its topic, document and grade, and where it was given (a file's
    1-based line, or a field such as ``rows[3]``)."""

    qid: str
    docid: str
    grade: int
    line: int = 0
    location: str | None = None

    def problem(self, message: str) -> Problem:
        return Problem(self.line, message, self.location)


@dataclass(frozen=True)
class GoldImport:
    """What an import stored: items created and updated (a new grade for a known item), and how
    many of them are queued as pooled items still open (not served as gold until judged)."""

    created: int
    updated: int
    queued_as_pooled: int
    skipped: int = 0

    def to_dict(self) -> dict[str, int]:
        return {
            "created": self.created,
            "updated": self.updated,
            "queued_as_pooled": self.queued_as_pooled,
            "skipped": self.skipped,
        }


def _fail(message: str, problems: list[Problem], source: str | None) -> InvalidInput:
    cap = settings.POOLJUDGE_UPLOADS.max_problems
    return InvalidInput(
        f"{message}; nothing was stored", problems[:cap], total=len(problems), source=source
    )


def gold_rows_from_file(*, data: uploads.Source, source: str = "gold") -> list[GoldRow]:
    """The rows of a TREC qrels-format file (``qid iteration docid grade``), read and checked
    for form as qrels files are (``metrics.io.read_qrels``: field count, integer grades, a
    document given twice for a topic), each with its line. Problems name the file and line."""
    from metrics.io import read_qrels

    what = "the gold file"
    upload = uploads.read(
        data, what=what, limit=settings.POOLJUDGE_UPLOADS.max_upload_bytes, source=source
    )
    with uploads.reading(what):
        read_qrels(
            upload.data,
            source=upload.name,
            max_problems=settings.POOLJUDGE_UPLOADS.max_problems,
            limits=uploads.record_limits(),
        )
    rows = []
    # the reader accepted the file: every non-blank line has four fields and an integer grade
    for n, raw in enumerate(upload.data.decode("utf-8", "replace").splitlines(), start=1):
        fields = raw.split()
        if len(fields) >= 4:
            qid, _, docid, grade = fields[:4]
            rows.append(GoldRow(qid, docid, int(grade), line=n, location=upload.name))
    return rows


def gold_rows_from_data(rows: Any) -> list[GoldRow]:
    """Rows given as JSON (``[{"topic": ..., "docid": ..., "grade": ...}, ...]``), checked for
    form; problems name the row (``rows[3].grade``)."""
    if not isinstance(rows, list) or not rows:
        raise InvalidInput(
            "no gold items given", [Problem.at("rows", "a non-empty list of rows is needed")]
        )
    out: list[GoldRow] = []
    problems: list[Problem] = []
    for i, row in enumerate(rows):
        where = f"rows[{i}]"
        if not isinstance(row, Mapping):
            problems.append(Problem.at(where, "a row is an object with topic, docid and grade"))
            continue
        qid, docid, grade = row.get("topic"), row.get("docid"), row.get("grade")
        bad = False
        for name, value in (("topic", qid), ("docid", docid)):
            if not isinstance(value, str | int) or isinstance(value, bool) or str(value) == "":
                problems.append(Problem.at(f"{where}.{name}", f"{name} must be a non-empty string"))
                bad = True
        if isinstance(grade, bool) or not isinstance(grade, int):
            problems.append(Problem.at(f"{where}.grade", f"grade {grade!r} is not an integer"))
            bad = True
        if not bad:
            out.append(GoldRow(str(qid), str(docid), int(grade), location=where))  # type: ignore[arg-type]
    if problems:
        raise _fail(f"{len(problems)} problem(s) in the gold rows", problems, None)
    return out


def _open_pooled(campaign: Campaign) -> set[tuple[int, str]]:
    return set(
        JudgingSlot.objects.filter(
            campaign=campaign, gold_for__isnull=True, judged_at__isnull=True
        ).values_list("topic_id", "docid")
    )


def gold_import(
    *,
    campaign: Campaign,
    rows: list[GoldRow],
    created_by: Account | None = None,
    source: str | None = None,
    origin: str = GoldSource.IMPORTED,
    qrels_version: QrelsVersion | None = None,
) -> GoldImport:
    """Store gold items for the campaign, validated whole first: every topic a campaign topic,
    every grade on the campaign's scale, every document one of the campaign's documents, no
    item given twice. On any problem nothing is stored and every problem is listed with its
    line (or row). An item that is already gold gets the new grade (and is served again)."""
    topics = dict(campaign.topics.values_list("qid", "id"))
    scale = campaign.grade_values()
    docids = {r.docid for r in rows}
    known = text_ids(campaign, docids)  # documents and passages
    problems: list[Problem] = []
    seen: dict[tuple[str, str], GoldRow] = {}
    for r in rows:
        if r.qid not in topics:
            problems.append(r.problem(f"topic {r.qid!r} is not in campaign {campaign.name!r}"))
        if r.grade not in scale:
            problems.append(r.problem(f"grade {r.grade} is not one of the campaign's {scale}"))
        if r.docid not in known:
            problems.append(r.problem(f"document {r.docid!r} is not one of the campaign's"))
        first = seen.setdefault((r.qid, r.docid), r)
        if first is not r:
            where = f"line {first.line}" if first.line else (first.location or "")
            problems.append(r.problem(f"topic {r.qid} document {r.docid} given twice ({where})"))
    if not rows:
        problems.append(Problem(0, "no gold items in the input", source))
    if problems:
        raise _fail(f"{len(problems)} problem(s) in the gold items", problems, source)
    open_pooled = _open_pooled(campaign)
    created = updated = pooled = 0
    with transaction.atomic():
        existing = {
            (t, d): item
            for item in GoldItem.objects.select_for_update().filter(
                campaign=campaign, kind=UnitKind.DOCUMENT
            )
            for t, d in [(item.topic_id, item.docid)]
        }
        new = []
        for r in rows:
            key = (topics[r.qid], r.docid)
            pooled += key in open_pooled
            item = existing.get(key)
            if item is None:
                new.append(
                    GoldItem(
                        campaign=campaign,
                        topic_id=key[0],
                        docid=r.docid,
                        grade=r.grade,
                        source=origin,
                        qrels_version=qrels_version,
                        created_by=created_by,
                    )
                )
            else:
                item.grade, item.active, item.source = r.grade, True, origin
                item.qrels_version = qrels_version
                item.save(update_fields=["grade", "active", "source", "qrels_version"])
                updated += 1
        GoldItem.objects.bulk_create(new, batch_size=5000)
        created = len(new)
    return GoldImport(created=created, updated=updated, queued_as_pooled=pooled)


def gold_import_file(
    *,
    campaign: Campaign,
    data: uploads.Source,
    source: str = "gold",
    created_by: Account | None = None,
) -> GoldImport:
    """``gold_import`` of a TREC qrels-format file (plain or gzip)."""
    rows = gold_rows_from_file(data=data, source=source)
    return gold_import(campaign=campaign, rows=rows, created_by=created_by, source=source)


def gold_from_qrels(
    *,
    campaign: Campaign,
    number: int,
    per_topic: int,
    seed: int = 0,
    created_by: Account | None = None,
) -> GoldImport:
    """Sample ``per_topic`` gold items per topic from the campaign's qrels version ``number``,
    stratified by grade so that relevant documents are among them: the grades present in the
    topic take turns, highest first, each giving one document drawn at random (``seed``)
    until ``per_topic`` are drawn or the topic runs out. Only judged rows (grade >= 0) of
    documents the campaign has, and not already gold items, are drawn from."""
    if isinstance(per_topic, bool) or not isinstance(per_topic, int) or not 1 <= per_topic <= 1000:
        raise InvalidInput(
            "bad sample size",
            [Problem.at("per_topic", f"{per_topic!r} is not a whole number from 1 to 1000")],
        )
    version = QrelsVersion.objects.filter(campaign=campaign, number=number).first()
    if version is None:
        raise NotFound(f"campaign {campaign.name!r} has no qrels version {number}")
    already = set(
        GoldItem.objects.filter(campaign=campaign, kind=UnitKind.DOCUMENT).values_list(
            "topic__qid", "docid"
        )
    )
    entries = (
        QrelsEntry.objects.filter(version=version, grade__gte=0)
        .filter(has_text(campaign))
        .order_by("topic__qid", "docid")
        .values_list("topic__qid", "docid", "grade")
    )
    scale = set(campaign.grade_values())
    by_topic: dict[str, dict[int, list[str]]] = {}
    for qid, docid, grade in entries.iterator(chunk_size=10_000):
        if (qid, docid) not in already and grade in scale:
            by_topic.setdefault(qid, {}).setdefault(grade, []).append(docid)
    rng = random.Random(seed)
    rows: list[GoldRow] = []
    for qid in sorted(by_topic):
        strata = {g: rng.sample(ds, len(ds)) for g, ds in sorted(by_topic[qid].items())}
        drawn = 0
        while drawn < per_topic and any(strata.values()):
            for g in sorted(strata, reverse=True):
                if strata[g] and drawn < per_topic:
                    rows.append(GoldRow(qid, strata[g].pop(), g, location=f"qrels v{number} {qid}"))
                    drawn += 1
    if not rows:
        raise InvalidInput(
            "nothing to sample",
            [
                Problem.at(
                    f"qrels v{number}",
                    "no judged row of a known document that is not gold already",
                )
            ],
        )
    return gold_import(
        campaign=campaign,
        rows=rows,
        created_by=created_by,
        source=f"qrels v{number}",
        origin=GoldSource.QRELS,
        qrels_version=version,
    )


def gold_from_agreement(
    *,
    campaign: Campaign,
    kind: str,
    per_topic: int,
    seed: int = 0,
    created_by: Account | None = None,
) -> GoldImport:
    """Gold items of an answer kind (``nugget_assignment``, ``citation_support``): ``per_topic``
    per topic drawn from the items two or more assessors judged alike, or an admin adjudicated,
    stratified by label as ``gold_from_qrels`` draws them (highest first, ``seed``). They are
    served and scored like document gold items (quality control, never in scores)."""
    from judging.assessments import units

    if kind not in units.KINDS or kind == UnitKind.NUGGET_CREATION:
        raise InvalidInput(
            f"{kind!r} has no gold items",
            [Problem.at("kind", "must be nugget_assignment or citation_support")],
        )
    if isinstance(per_topic, bool) or not isinstance(per_topic, int) or not 1 <= per_topic <= 1000:
        raise InvalidInput(
            "bad sample size",
            [Problem.at("per_topic", f"{per_topic!r} is not a whole number from 1 to 1000")],
        )
    grades: dict[tuple[int, str], set[int]] = {}
    counts: dict[tuple[int, str], int] = {}
    for t, key, grade in Judgment.objects.filter(
        campaign=campaign, kind=kind, gold__isnull=True
    ).values_list("topic_id", "docid", "grade"):
        grades.setdefault((t, key), set()).add(grade)
        counts[(t, key)] = counts.get((t, key), 0) + 1
    agreed = {item: min(g) for item, g in grades.items() if len(g) == 1 and counts[item] >= 2}
    for t, key, grade in Adjudication.objects.filter(campaign=campaign, kind=kind).values_list(
        "topic_id", "docid", "grade"
    ):
        agreed[(t, key)] = grade
    already = set(
        GoldItem.objects.filter(campaign=campaign, kind=kind).values_list("topic_id", "docid")
    )
    by_topic: dict[int, dict[int, list[str]]] = {}
    for (t, key), grade in sorted(agreed.items()):
        if (t, key) not in already:
            by_topic.setdefault(t, {}).setdefault(grade, []).append(key)
    rng = random.Random(seed)
    new: list[GoldItem] = []
    for t in sorted(by_topic):
        strata = {g: rng.sample(ks, len(ks)) for g, ks in sorted(by_topic[t].items())}
        while sum(1 for item in new if item.topic_id == t) < per_topic and any(strata.values()):
            for g in sorted(strata, reverse=True):
                if strata[g] and sum(1 for item in new if item.topic_id == t) < per_topic:
                    new.append(
                        GoldItem(
                            campaign=campaign,
                            topic_id=t,
                            kind=kind,
                            docid=strata[g].pop(),
                            grade=g,
                            source=GoldSource.AGREED,
                            created_by=created_by,
                        )
                    )
    if not new:
        raise InvalidInput(
            "nothing to draw",
            [
                Problem.at(
                    "kind", f"no {kind} item agreed by two assessors that is not gold already"
                )
            ],
        )
    GoldItem.objects.bulk_create(new, batch_size=5000)
    return GoldImport(created=len(new), updated=0, queued_as_pooled=0)


# --- settings -------------------------------------------------------------------------------

QC_SETTINGS = {
    # field: (type, lowest, highest)
    "gold_rate": (float, 0.0, 0.5),
    "qc_min_accuracy": (float, 0.0, 1.0),
    "qc_min_gold": (int, 1, 100_000),
}


def qc_settings_update(*, campaign: Campaign, data: Mapping[str, Any]) -> Campaign:
    """Change the campaign's quality-control settings (any of ``QC_SETTINGS``), validated
    together: on any problem nothing is stored and each problem names its field."""
    problems = [
        Problem.at(k, f"{k!r} is not a quality setting") for k in data if k not in QC_SETTINGS
    ]
    values: dict[str, float | int] = {}
    for name, (kind, low, high) in QC_SETTINGS.items():
        if name not in data:
            continue
        raw = data[name]
        try:
            if isinstance(raw, bool):
                raise ValueError
            value = float(raw) if kind is float else int(str(raw).strip())
            if isinstance(raw, float) and kind is int:
                raise ValueError
        except (TypeError, ValueError):
            problems.append(
                Problem.at(
                    name, f"{raw!r} is not a {'number' if kind is float else 'whole number'}"
                )
            )
            continue
        if not (low <= value <= high) or value != value:  # NaN is never in range
            problems.append(Problem.at(name, f"{value} is not between {low} and {high}"))
            continue
        values[name] = value
    if problems:
        raise InvalidInput("the quality settings are not valid; nothing was changed", problems)
    with transaction.atomic():
        current = Campaign.objects.select_for_update().get(pk=campaign.pk)
        for name, value in values.items():
            setattr(current, name, value)
        current.save(update_fields=list(values))
    return current


# --- serving --------------------------------------------------------------------------------


def gold_due(*, campaign: Campaign, annotator: Account) -> bool:
    """Whether the annotator's next item should be gold. Deterministic, two conditions:

    - serving it keeps their share of gold items at or below the campaign's rate:
      ``gold + 1 <= rate * (judged + 1)``, so over N items at most ``rate * N`` (rounded down)
      are gold: with rate 0.25, items 4, 8, 12, ...;
    - none of their last ``round(1 / rate) - 1`` judgments was gold, so that gold items never
      come in a run: after a stretch without any (a topic with no gold items) the share is
      made up one gold item every ``round(1 / rate)`` items, not in a burst an assessor would
      notice.
    """
    rate = min(max(campaign.gold_rate, 0.0), 0.5)
    if rate <= 0:
        return False
    mine = Judgment.objects.filter(campaign=campaign, annotator=annotator)
    counts = mine.aggregate(judged=Count("pk"), gold=Count("pk", filter=Q(gold__isnull=False)))
    # The items they hold (the one being read and those leased ahead, POOLJUDGE_PREFETCH) come
    # before the next one: they count as judged already, and as the latest judgments.
    held = Lease.objects.filter(
        annotator=annotator,
        slot__campaign=campaign,
        state=LeaseState.ACTIVE,
        expires_at__gt=timezone.now(),
        slot__judged_at__isnull=True,
    ).aggregate(n=Count("pk"), gold=Count("pk", filter=Q(slot__gold__isnull=False)))
    if held["gold"]:
        return False
    judged, gold = counts["judged"] + held["n"], counts["gold"]
    if gold + 1 > rate * (judged + 1) + 1e-9:
        return False
    spacing = max(round(1 / rate) - 1 - held["n"], 0)
    recent = mine.order_by("-created_at", "-pk").values_list("gold_id", flat=True)[:spacing]
    return all(g is None for g in recent)


def gold_pick(
    *, campaign: Campaign, annotator: Account, now: Any, skipped: list[tuple[int, str, str]]
) -> JudgingSlot | None:
    """A gold slot for the annotator when one is due (``gold_due``), or None.

    Only a gold item of the topic the annotator is working on (that of their latest lease, so
    that the topic does not jump), active, not judged by them, not skipped recently, whose
    document has text and which is not waiting in the queue as a pooled item (whose judgment
    would collide with the gold one). The items' order is a hash of (annotator, document), so
    that assessors do not all meet the same gold items in the same order. Called inside
    ``lease_next``'s transaction, with the annotator's row locked."""
    if not gold_due(campaign=campaign, annotator=annotator):
        return None
    latest = (
        Lease.objects.filter(annotator=annotator, slot__campaign=campaign)
        .order_by("-created_at", "-pk")
        .values_list("slot__topic_id", "slot__pool_version_id")
        .first()
    )
    if latest is None:
        return None
    topic_id, pool_version_id = latest
    judged = Judgment.objects.filter(
        topic_id=OuterRef("topic_id"),
        kind=OuterRef("kind"),
        docid=OuterRef("docid"),
        annotator=annotator,
    )
    pooled_open = JudgingSlot.objects.filter(
        topic_id=OuterRef("topic_id"),
        kind=OuterRef("kind"),
        docid=OuterRef("docid"),
        gold_for__isnull=True,
        judged_at__isnull=True,
    )
    candidates = (
        GoldItem.objects.filter(campaign=campaign, topic_id=topic_id, active=True)
        .filter(has_text(campaign) | ~Q(kind=UnitKind.DOCUMENT))
        .exclude(Exists(judged))
        .exclude(Exists(pooled_open))
        .values_list("pk", "kind", "docid")
    )
    recent = {(k, d) for t, k, d in skipped if t == topic_id}
    options = sorted(
        ((pk, kind, docid) for pk, kind, docid in candidates if (kind, docid) not in recent),
        key=lambda c: (zlib.crc32(f"{annotator.pk}\0{c[2]}".encode()), c[0]),
    )
    for pk, kind, docid in options:
        slot, _ = JudgingSlot.objects.get_or_create(
            gold_id=pk,
            gold_for=annotator,
            defaults={
                "campaign": campaign,
                "topic_id": topic_id,
                "kind": kind,
                "docid": docid,
                "slot": 0,
                "position": 0,
                "pool_version_id": pool_version_id,
                "has_text": True,
            },
        )
        locked = (
            JudgingSlot.objects.select_for_update(of=("self",))
            .select_related("topic")
            .filter(pk=slot.pk, judged_at__isnull=True)
            .filter(Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lte=now))
            .first()
        )
        if locked is not None:
            return locked
    return None


# --- exclusions -----------------------------------------------------------------------------


def _annotator(campaign: Campaign, username: str) -> Account:
    from django.contrib.auth.models import User

    user = User.objects.filter(username=username).first()
    if user is None or not Judgment.objects.filter(campaign=campaign, annotator=user).exists():
        raise InvalidInput(
            "no such assessor",
            [Problem.at("annotator", f"{username!r} has no judgments in {campaign.name!r}")],
        )
    return user


def _reason(reason: Any, field: str = "reason") -> str:
    text = reason.strip() if isinstance(reason, str) else ""
    if not text:
        raise InvalidInput(
            "a reason is required", [Problem.at(field, "say why (it is kept with the decision)")]
        )
    return text


def annotator_exclude(
    *, campaign: Campaign, username: str, reason: Any, excluded_by: Account
) -> AnnotatorExclusion:
    """Leave the assessor's judgments out of the qrels versions published from now on (they
    stay stored), with the reason recorded. One active exclusion per assessor and campaign."""
    text = _reason(reason)
    annotator = _annotator(campaign, username)
    with transaction.atomic():
        Campaign.objects.select_for_update().filter(pk=campaign.pk).first()
        if AnnotatorExclusion.objects.filter(
            campaign=campaign, annotator=annotator, lifted_at__isnull=True
        ).exists():
            raise Conflict(f"{username} is already excluded from {campaign.name!r}")
        return AnnotatorExclusion.objects.create(
            campaign=campaign, annotator=annotator, reason=text, excluded_by=excluded_by
        )


def exclusion_lift(
    *, campaign: Campaign, exclusion_id: int, reason: Any, lifted_by: Account
) -> AnnotatorExclusion:
    """End an exclusion (the next version published includes the assessor again); the
    exclusion and the reason for lifting it are kept."""
    text = _reason(reason, "lift_reason")
    with transaction.atomic():
        exclusion = (
            AnnotatorExclusion.objects.select_for_update()
            .filter(campaign=campaign, pk=exclusion_id)
            .first()
        )
        if exclusion is None:
            raise NotFound(f"no exclusion {exclusion_id} in campaign {campaign.name!r}")
        if exclusion.lifted_at is not None:
            raise Conflict(f"exclusion {exclusion_id} was lifted already")
        exclusion.lifted_at = timezone.now()
        exclusion.lifted_by = lifted_by
        exclusion.lift_reason = text
        exclusion.save(update_fields=["lifted_at", "lifted_by", "lift_reason"])
        return exclusion


def active_exclusions(campaign: Campaign) -> list[AnnotatorExclusion]:
    return list(
        AnnotatorExclusion.objects.filter(campaign=campaign, lifted_at__isnull=True)
        .select_related("annotator", "excluded_by")
        .order_by("annotator__username")
    )


def exclusion_note(campaign: Campaign) -> str:
    """What a published version's note says about the exclusions in force ('' when none)."""
    held = active_exclusions(campaign)
    if not held:
        return ""
    parts = [
        f"{e.annotator.get_username()} (by {e.excluded_by.get_username()} on "
        f"{e.excluded_at:%Y-%m-%d}: {e.reason})"
        for e in held
    ]
    return "Judgments left out (assessors excluded): " + "; ".join(parts) + "."
