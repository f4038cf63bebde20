"""Qrels versions: import from TREC files, export, content hashing."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable, Mapping
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Max

from judging.assessments.models import (
    Adjudication,
    AdjudicationChange,
    AnnotatorExclusion,
    Judgment,
    QrelsEntry,
    QrelsKind,
    QrelsSource,
    QrelsVersion,
    UnitKind,
)
from judging.campaigns.models import Campaign
from judging.core import uploads
from judging.core.bulk import insert_rows
from judging.core.errors import IntegrityFailure, InvalidInput
from judging.core.roles import Account, UserLike, account
from metrics.io import Qrels, read_qrels
from metrics.io.beir import looks_like_beir_qrels, read_beir_qrels
from metrics.problems import Problem

logger = logging.getLogger(__name__)


def canonical_lines(
    rows: Iterable[tuple[str, str, int]], strata: Mapping[tuple[str, str], str] | None = None
) -> list[str]:
    """TREC qrels lines sorted by (qid, docid): the form hashed and exported. A sampled
    version's (``strata``: each row's stratum) are ``sample_eval.pl``'s five columns."""
    if strata is not None:
        return [f"{q} 0 {d} {strata[(q, d)]} {g}\n" for q, d, g in sorted(rows)]
    return [f"{q} 0 {d} {g}\n" for q, d, g in sorted(rows)]


def content_hash(lines: Iterable[str]) -> str:
    h = hashlib.sha256()
    for line in lines:
        h.update(line.encode())
    return h.hexdigest()


_LOWEST_GRADE = -(2**31)  # the grade column is a 32-bit integer


def _next_number(campaign: Campaign) -> int:
    top = QrelsVersion.objects.filter(campaign=campaign).aggregate(n=Max("number"))["n"]
    return (top or 0) + 1


def qrels_read(
    *, campaign: Campaign, data: uploads.Source, source: str = "qrels"
) -> tuple[Qrels, bytes]:
    """A qrels file (TREC lines, or BEIR's ``query-id corpus-id score`` TSV) read and validated
    whole as ``qrels_import`` reads it (grades on the campaign's scale, or negative, none below
    the column's range), and its plain content;
    nothing stored. ``campaign`` may be one not saved yet (only its scale is read)."""
    what = "the qrels file"
    upload = uploads.read(
        data, what=what, limit=settings.POOLJUDGE_UPLOADS.max_upload_bytes, source=source
    )
    reader = read_beir_qrels if looks_like_beir_qrels(upload.data) else read_qrels
    with uploads.reading(what):
        table = reader(
            upload.data,
            source=upload.name,
            max_problems=settings.POOLJUDGE_UPLOADS.max_problems,
            limits=uploads.record_limits(),
            scale=campaign.grade_values() or None,
        )
    low = table.grades < _LOWEST_GRADE
    if low.any():
        rows = [(q, d, g) for q, judged in table.to_dict().items() for d, g in judged.items()]
        bad = [(q, d, g) for q, d, g in rows if g < _LOWEST_GRADE]
        raise InvalidInput(
            f"{len(bad)} grade(s) are below {_LOWEST_GRADE:,}; nothing was stored",
            [Problem.at(f"{q} {d}", f"grade {g} is out of range") for q, d, g in bad[:20]],
            total=len(bad),
            source=source,
        )
    return table, upload.data


def qrels_import(
    *,
    campaign: Campaign,
    data: uploads.Source,
    source: str = "qrels",
    note: str = "",
    created_by: Account | None = None,
) -> QrelsVersion:
    """Store a TREC qrels file as the campaign's next qrels version.

    Every qrels topic must be a campaign topic and every grade one of the campaign's scale, or
    negative (pooled, not sampled: below). Validated whole first; on any problem
    nothing is stored. A file in ``sample_eval.pl``'s five columns (``topic 0 docid stratum
    grade``) is stored as a sampled version (``assessments.sampled.sampled_read``), and so is a
    four-column file with a negative grade (trec_eval's -1: pooled, not sampled), as one uniform
    sample (stratum ``"1"``, grades below -1 read as -1): a -1 is never stored in a complete
    version, where a measure would read it as judged non-relevant.
    """
    from judging.assessments.sampled import sampled_read, sampled_version_parts
    from metrics.io.sampled import has_unsampled, sampled_from_qrels

    strata: dict[tuple[str, str], str] | None = None
    design: dict[str, Any] | None = None
    # read once: an uploaded file is a stream
    limit = settings.POOLJUDGE_UPLOADS.max_upload_bytes
    upload = uploads.read(data, what="the qrels file", limit=limit, source=source)
    sampled = sampled_read(campaign=campaign, data=upload.data, source=upload.name)
    if sampled is not None:  # sample_eval.pl's five columns: a sampled version
        rows, strata, design = sampled
        qids = sorted({q for q, _, _ in rows})
    else:
        table, _ = qrels_read(campaign=campaign, data=upload.data, source=upload.name)
        if has_unsampled(table):  # trec_eval's -1: one uniform sample, kept as one
            rows, strata, design = sampled_version_parts(
                sampled_from_qrels(table), "imported (trec_eval -1)"
            )
        else:
            rows = [
                (q, d, int(g)) for q, judged in table.to_dict().items() for d, g in judged.items()
            ]
        qids = list(table.qids)
    topic_ids = dict(campaign.topics.values_list("qid", "id"))
    unknown = [q for q in qids if q not in topic_ids]
    if unknown:
        problems = [
            Problem.at(q, f"topic {q!r} is not in campaign {campaign.name!r}") for q in unknown
        ]
        raise InvalidInput(
            f"the qrels name {len(unknown)} unknown topic(s); nothing was stored",
            problems[: settings.POOLJUDGE_UPLOADS.max_problems],
            total=len(problems),
            source=source,
        )
    with transaction.atomic():
        # Lock the campaign row so that two imports cannot take the same number.
        Campaign.objects.select_for_update().filter(pk=campaign.pk).first()
        return qrels_store(
            campaign=campaign,
            rows=rows,
            source=QrelsSource.IMPORTED,
            note=note,
            created_by=created_by,
            topic_ids=topic_ids,
            strata=strata,
            design=design,
        )


def qrels_store(
    *,
    campaign: Campaign,
    rows: Iterable[tuple[str, str, int]] | Iterable[tuple[str, str, int, int | None]],
    source: str,
    note: str = "",
    created_by: Account | None = None,
    kind: str = QrelsKind.HUMAN,
    judges: list[dict[str, Any]] | None = None,
    topic_ids: dict[str, int] | None = None,
    extends: QrelsVersion | None = None,
    purpose: str = "",
    strata: Mapping[tuple[str, str], str] | None = None,
    design: dict[str, Any] | None = None,
) -> QrelsVersion:
    """Store validated rows ``(qid, docid, grade)`` or ``(qid, docid, grade, judge_id)`` (the
    automatic judge version a grade came from; None for a human grade) as the campaign's next
    qrels version of ``kind``, in the caller's transaction, which must hold the campaign row
    locked (``select_for_update``) so that two writers cannot take the same number.

    A human version has no judge ids; an automatic one has one on every row; a hybrid one has
    both, and ``judges`` describes every judge version its rows name. The version is created
    unsealed, its rows written, then sealed: the database refuses any row added to it after
    (``immutability``).

    With ``extends``, the version is a minor version of that one (its rows and a few more, for
    ``purpose``): numbered as every version, and labelled ``<base>.<n>``.

    A sampled version (``strata``, every row's stratum, and ``design``) keeps grade -1 for a
    pooled document not sampled; its lines, hashed and exported, are ``sample_eval.pl``'s.
    """
    if (strata is None) != (design is None):
        raise ValueError("a sampled qrels version has both its strata and its design")
    if extends is not None and (extends.campaign_id != campaign.pk or not purpose):
        raise ValueError("a minor version extends a version of its campaign, for a purpose")
    full = [(r[0], r[1], int(r[2]), r[3] if len(r) > 3 else None) for r in rows]
    named = {j for *_, j in full if j is not None}
    if kind == QrelsKind.HUMAN and named:
        raise ValueError("a human qrels version has no automatic rows")
    if kind == QrelsKind.AUTOMATIC and any(j is None for *_, j in full):
        raise ValueError("every row of an automatic qrels version names its judge")
    described = {int(j["id"]) for j in judges or []}
    if kind != QrelsKind.HUMAN and not named <= described:
        raise ValueError("judges must describe every judge version the rows name")
    if topic_ids is None:
        topic_ids = dict(campaign.topics.values_list("qid", "id"))
    lines = canonical_lines(((q, d, g) for q, d, g, _ in full), strata)
    with transaction.atomic():  # never committed unsealed, whatever the caller's transaction
        version = QrelsVersion.objects.create(
            campaign=campaign,
            number=_next_number(campaign),
            source=source,
            kind=kind,
            judges=list(judges or []),
            content_hash=content_hash(lines),
            note=note,
            num_judgments=len(full),
            num_relevant=sum(1 for _, _, g, _ in full if g >= campaign.relevance_threshold),
            created_by=created_by,
            sealed=False,
            extends=extends,
            minor=(QrelsVersion.objects.filter(extends=extends).count() + 1 if extends else 0),
            purpose=purpose[:200],
            design=design or {},
        )
        insert_rows(
            QrelsEntry,
            ("version_id", "topic_id", "docid", "grade", "judge_id", "stratum"),
            (
                (version.pk, topic_ids[q], d, g, j, strata[(q, d)] if strata else "")
                for q, d, g, j in full
            ),
        )
        # sealed: the database refuses any row added to it from now on
        QrelsVersion.objects.filter(pk=version.pk).update(sealed=True)
        version.sealed = True
    return version


def qrels_rows(version: QrelsVersion) -> list[tuple[str, str, int]]:
    return list(
        QrelsEntry.objects.filter(version=version).values_list("topic__qid", "docid", "grade")
    )


def qrels_strata(version: QrelsVersion) -> dict[tuple[str, str], str]:
    """A sampled version's (qid, docid) -> stratum."""
    rows = QrelsEntry.objects.filter(version=version).values_list("topic__qid", "docid", "stratum")
    return {(q, d): s for q, d, s in rows}


def qrels_export_lines(version: QrelsVersion, fmt: str | None = None) -> list[str]:
    """The version in TREC qrels format (``qid 0 docid grade``; a sampled version in
    ``sample_eval.pl``'s ``qid 0 docid stratum grade``, -1: pooled, not sampled), sorted by qid
    and docid, after checking that the lines still hash to the version's stored hash. A sampled
    version also exports as ``fmt`` ``trec`` (trec_eval's -1 form, one stratum only) or
    ``prels`` (``assessments.sampled.sampled_export``); the hash is over the default form.

    Raises ``IntegrityFailure`` (and logs an error) when they do not: the rows were changed
    behind the database's back, and what would be served is not the version it claims to be.
    """
    strata = qrels_strata(version) if version.design else None
    lines = canonical_lines(qrels_rows(version), strata)
    digest = content_hash(lines)
    if digest != version.content_hash:
        logger.error(
            "qrels version %s (v%s of campaign %s) fails its hash check: stored %s, rows hash "
            "to %s (%d rows, %d recorded); export refused",
            version.pk,
            version.number,
            version.campaign_id,
            version.content_hash,
            digest,
            len(lines),
            version.num_judgments,
        )
        raise IntegrityFailure(
            f"qrels version {version.number} fails its integrity check: its {len(lines)} rows "
            f"(recorded: {version.num_judgments}) do not hash to its stored sha256 "
            f"{version.content_hash[:12]}; it is not exported. An administrator has been told "
            "(server log)."
        )
    return lines if fmt is None else _export_as(version, fmt, lines)


def _export_as(version: QrelsVersion, fmt: str, lines: list[str]) -> list[str]:
    from judging.assessments.sampled import EXPORT_FORMATS, sampled_export

    formats = EXPORT_FORMATS if version.design else {"trec": "TREC qrels, qid 0 docid grade"}
    if fmt not in formats:
        known = "; ".join(f"{k}: {v}" for k, v in formats.items())
        kind = "a sampled" if version.design else "a complete"
        raise InvalidInput(
            f"unknown qrels export format {fmt!r} for {kind} version (known: {known})",
            [Problem.at("format", f"{fmt!r} is not one of {sorted(formats)}")],
        )
    if not version.design or fmt == "sample_eval":
        return lines
    return sampled_export(version, fmt)


def consensus(campaign: Campaign) -> dict[tuple[str, str], int]:
    """(qid, docid) -> consensus grade of the annotators' current judgments.

    One annotator: their grade. Several: the adjudicated grade if an admin set one, else the
    campaign's rule (median by default: the lower median on ties, so an even split between
    relevant and not counts as the lower grade). Judgments of gold items (quality control) and
    of assessors an admin excluded (``AnnotatorExclusion`` in force) are left out.
    """
    from metrics.judges.agreement import consensus_grade

    excluded = AnnotatorExclusion.objects.filter(campaign=campaign, lifted_at__isnull=True)
    grades: dict[tuple[str, str], list[int]] = {}
    for qid, docid, grade in (
        Judgment.objects.filter(campaign=campaign, kind=UnitKind.DOCUMENT, gold__isnull=True)
        .exclude(annotator_id__in=excluded.values("annotator_id"))
        .values_list("topic__qid", "docid", "grade")
        .iterator(chunk_size=10_000)
    ):
        grades.setdefault((qid, docid), []).append(grade)
    adjudicated = {
        (qid, docid): grade
        for qid, docid, grade in Adjudication.objects.filter(campaign=campaign).values_list(
            "topic__qid", "docid", "grade"
        )
    }
    rule = campaign.consensus_rule
    out = {
        key: consensus_grade(gs, rule=rule) if len(gs) > 1 else gs[0]  # type: ignore[arg-type]
        for key, gs in grades.items()
    }
    out.update({k: g for k, g in adjudicated.items() if k in grades})
    return out


def current_human_grades(campaign: Campaign) -> dict[tuple[str, str], int]:
    """(qid, docid) -> grade as people grade them now: the latest imported human version's rows
    overlaid with the consensus of the annotators' current judgments (what the next published
    version will hold)."""
    imported = (
        QrelsVersion.objects.filter(campaign=campaign, source=QrelsSource.IMPORTED)
        .human()
        .latest_first()
        .first()
    )
    merged: dict[tuple[str, str], int] = {}
    if imported is not None:
        merged = {(q, d): g for q, d, g in qrels_rows(imported)}
    merged.update(consensus(campaign))
    return merged


def qrels_publish(
    *, campaign: Campaign, note: str = "", created_by: Account | None = None
) -> tuple[QrelsVersion, bool]:
    """Snapshot the judgments as the campaign's next qrels version; returns (version, created).

    A human version: the latest *imported* human version's rows (if any) overlaid with the
    consensus of the annotators' current judgments (a judgment replaces the imported grade of the
    same item). Not the latest version's rows: an item whose judgment was undone since the last
    publish must leave the next version, not live on from the last one. Publishing when nothing
    changed returns the latest human version instead of a duplicate. Automatic and hybrid
    versions never feed it. The note of a new version says which assessors' judgments were left
    out (exclusions in force) and why. When the campaign's latest pool is sampled, the version is
    sampled (``assessments.sampled``): every pooled document, -1 when not sampled.
    """
    from judging.assessments.gold import exclusion_note
    from judging.assessments.sampled import sampled_pool, sampled_rows

    with transaction.atomic():
        Campaign.objects.select_for_update().filter(pk=campaign.pk).first()
        latest = QrelsVersion.objects.filter(campaign=campaign).human().latest_first().first()
        grades = current_human_grades(campaign)
        pool = sampled_pool(campaign)
        strata: dict[tuple[str, str], str] | None = None
        design: dict[str, Any] | None = None
        if pool is not None:  # three states: judged, pooled but not sampled (-1), not pooled
            rows, strata, design = sampled_rows(pool, grades)
        else:
            rows = [(q, d, g) for (q, d), g in grades.items()]
        lines = canonical_lines(rows, strata)
        digest = content_hash(lines)
        if latest is not None and latest.content_hash == digest:
            return latest, False
        mixed = _mixed_note(campaign, rows)
        version = qrels_store(
            campaign=campaign,
            rows=rows,
            source=QrelsSource.PUBLISHED,
            note=" · ".join(part for part in (note, exclusion_note(campaign), mixed) if part),
            created_by=created_by,
            strata=strata,
            design=design,
        )
    return version, True


def _mixed_note(campaign: Campaign, rows: list[tuple[str, str, int]]) -> str:
    """A warning when the rows are items of several chunkings (or passages and documents): a
    run of one chunking cannot retrieve the others' ids, and its recall would count them."""
    from judging.campaigns.passages import items_by_chunking

    if not any("#" in d for _, d, _ in rows):
        return ""
    counts = items_by_chunking(campaign, (d for _, d, _ in rows))
    if len(counts) < 2:
        return ""
    parts = ", ".join(
        f"{n} {'documents or other ids' if name == '' else f'passages of {name!r}'}"
        for name, n in sorted(counts.items())
    )
    return (
        f"mixes the items of several chunkings ({parts}): score a chunking's runs against a "
        "version of its own (carry_qrels, then publish its judgments onto the carried version)"
    )


def qrels_diff(*, version: QrelsVersion, against: QrelsVersion) -> dict[str, Any]:
    """Judgments added, removed and regraded going from ``against`` to ``version``."""
    new = {(q, d): g for q, d, g in qrels_rows(version)}
    old = {(q, d): g for q, d, g in qrels_rows(against)}
    added = sorted((q, d, g) for (q, d), g in new.items() if (q, d) not in old)
    removed = sorted((q, d, g) for (q, d), g in old.items() if (q, d) not in new)
    changed = sorted(
        (q, d, old[(q, d)], g) for (q, d), g in new.items() if (q, d) in old and old[(q, d)] != g
    )
    return {
        "version": version.number,
        "against": against.number,
        "added": [{"topic": q, "docid": d, "grade": g} for q, d, g in added],
        "removed": [{"topic": q, "docid": d, "grade": g} for q, d, g in removed],
        "changed": [{"topic": q, "docid": d, "old": o, "new": g} for q, d, o, g in changed],
        "summary": {"added": len(added), "removed": len(removed), "changed": len(changed)},
    }


def adjudicate(
    *, campaign: Campaign, qid: str, docid: str, grade: int, decided_by: UserLike, note: str = ""
) -> Adjudication:
    """Set the final grade of an item (admins), replacing an earlier adjudication; every
    decision is kept in ``AdjudicationChange`` (old grade, new grade, reason, who, when).

    Only items an assessor judged (gold judgments do not count) can be adjudicated. Deciding
    again with the same grade and reason (a double submit) records nothing new.
    """
    nul = [
        name for name, text in (("topic", qid), ("docid", docid), ("note", note)) if "\x00" in text
    ]
    if nul:  # PostgreSQL refuses them in any query
        raise InvalidInput(
            "a NUL character in the decision",
            [Problem.at(name, "must not contain a NUL character") for name in nul],
        )
    if grade not in campaign.grade_values():
        raise InvalidInput(
            "the grade is not on the campaign's scale",
            [Problem.at("grade", f"grade {grade!r} is not one of {campaign.grade_values()}")],
        )
    topic = campaign.topics.filter(qid=qid).first()
    judged = Judgment.objects.filter(
        topic=topic, kind=UnitKind.DOCUMENT, docid=docid, gold__isnull=True
    )
    if topic is None or not judged.exists():
        raise InvalidInput(
            "nothing to adjudicate",
            [Problem.at("docid", f"no judgment of document {docid!r} for topic {qid!r}")],
        )
    with transaction.atomic():
        # the campaign's row, locked as publishing locks it: two admins deciding the same item
        # at once are serialised (the second sees the first's grade as the old one), and a
        # version being published sees a decision whole or not at all
        Campaign.objects.select_for_update().filter(pk=campaign.pk).first()
        earlier = Adjudication.objects.filter(topic=topic, docid=docid).first()
        if earlier is not None and earlier.grade == grade and earlier.note == note:
            return earlier
        adjudication, _ = Adjudication.objects.update_or_create(
            topic=topic,
            docid=docid,
            defaults={"campaign": campaign, "grade": grade, "note": note, "decided_by": decided_by},
        )
        AdjudicationChange.objects.create(
            campaign=campaign,
            topic=topic,
            docid=docid,
            old_grade=earlier.grade if earlier is not None else None,
            new_grade=grade,
            note=note,
            decided_by=account(decided_by),
        )
    return adjudication
