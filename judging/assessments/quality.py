"""Quality control of assessors: gold accuracy, agreement, grade distribution, pace, drift.

Reads for admins (the quality page, the API's quality report and the progress page's alerts);
the statistics are ``metrics.judges.quality``'s. Writes (gold items, exclusions) are in
``assessments.gold``.

Alerts, per assessor:

- ``gold``: accuracy on gold items below the campaign's ``qc_min_accuracy`` once they judged at
  least ``qc_min_gold`` gold items. The accuracy compared is the *binary* one (relevant vs not at
  the campaign's relevance threshold): neighbouring grades of a graded scale are disputed even
  among careful assessors, the relevant/not line is what the qrels' users rely on. The exact
  accuracy and the 95% interval are shown beside it.
- ``fast`` (a warning): a median active time per judgment under ``FAST_SECONDS`` over at least
  ``MIN_JUDGMENTS`` timed judgments; reading a document takes longer than that (TREC assessors
  spend tens of seconds per document), so the grades are likely given without reading.
- ``one_grade`` (a warning): at least ``MIN_JUDGMENTS`` judgments (gold left out), all with one
  grade: possible on a topic with nothing relevant, but worth a look.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from django.db.models import Count, F, Q

from judging.assessments.models import AnnotatorExclusion, GoldItem, Judgment
from judging.assessments.selectors import current_judgments
from judging.campaigns.models import Campaign
from metrics.judges.quality import (
    Block,
    agreement_with_others,
    drift,
    gold_accuracy,
    grade_distribution,
    median,
    summarise,
)

FAST_SECONDS = 2.0
MIN_JUDGMENTS = 20
DRIFT_BLOCK = 20


def _rows(campaign: Campaign) -> dict[str, list[tuple[Any, ...]]]:
    """Per assessor, their current judgments in the order made: (created_at, grade, gold grade
    or None, active seconds)."""
    out: dict[str, list[tuple[Any, ...]]] = {}
    rows = (
        Judgment.objects.filter(campaign=campaign)
        .order_by("created_at", "pk")
        .values_list("annotator__username", "created_at", "grade", "gold__grade", "active_seconds")
    )
    for who, at, grade, gold, seconds in rows.iterator(chunk_size=10_000):
        out.setdefault(who, []).append((at, grade, gold, seconds))
    return out


def _timed(seconds: Iterable[float]) -> list[float]:
    # 0 is "not measured" (an API client that sends no active time), not "no time spent"
    return [s for s in seconds if s > 0]


def _alerts_for(
    campaign: Campaign, who: str, gold: dict[str, Any], timed: list[float], grades: dict[int, int]
) -> list[dict[str, Any]]:
    out = []
    n, binary, exact = gold["n"], gold["binary"], gold["exact"]
    enough = n >= max(campaign.qc_min_gold, 1)
    if enough and binary is not None and binary < campaign.qc_min_accuracy:
        lo, hi = gold["binary_interval"]
        out.append(
            {
                "annotator": who,
                "level": "alert",
                "kind": "gold",
                "message": f"{who}: accuracy {binary:.0%} on {n} gold items (relevant or not; "
                f"95% interval {lo:.0%}-{hi:.0%}, exact grade {exact:.0%}), below the "
                f"threshold {campaign.qc_min_accuracy:.0%}",
            }
        )
    seconds = median(timed)
    if len(timed) >= MIN_JUDGMENTS and seconds < FAST_SECONDS:
        out.append(
            {
                "annotator": who,
                "level": "warning",
                "kind": "fast",
                "message": f"{who}: median {seconds:.1f} s per judgment over {len(timed)} "
                f"timed judgments (under {FAST_SECONDS:.0f} s: too fast to read a document)",
            }
        )
    used = [g for g, k in grades.items() if k]
    total = sum(grades.values())
    if total >= MIN_JUDGMENTS and len(used) == 1:
        out.append(
            {
                "annotator": who,
                "level": "warning",
                "kind": "one_grade",
                "message": f"{who}: all {total} judgments are grade {used[0]}",
            }
        )
    return out


def quality_report(
    campaign: Campaign, *, block: int = DRIFT_BLOCK, with_agreement: bool = True
) -> dict[str, Any]:
    """Per assessor (admins): accuracy on gold items (exact and binary, with 95% Wilson
    intervals), agreement with the other assessors on shared items (Cohen's kappa, exact
    agreement; gold items left out), grade distribution (gold left out), median active seconds
    per judgment, drift (the same per block of ``block`` judgments and per day), whether they
    are excluded, and the alerts. ``with_agreement=False`` skips the agreement (the alerts do
    not need it), leaving it empty."""
    scale = campaign.grade_values()
    level = campaign.relevance_threshold
    agreement = (
        agreement_with_others(current_judgments(campaign), scale=scale) if with_agreement else {}
    )
    exclusions = {
        e.annotator.get_username(): e
        for e in AnnotatorExclusion.objects.filter(
            campaign=campaign, lifted_at__isnull=True
        ).select_related("annotator", "excluded_by")
    }
    assessors = []
    alerts: list[dict[str, Any]] = []
    for who, rows in sorted(_rows(campaign).items()):
        grades = [g for _, g, _, _ in rows]
        golds = [t for _, _, t, _ in rows]
        seconds = [s for _, _, _, s in rows]
        pairs = [(g, t) for g, t in zip(grades, golds, strict=True) if t is not None]
        accuracy = gold_accuracy(
            [g for g, _ in pairs], [t for _, t in pairs], relevance_level=level
        ).to_dict()
        timed = _timed(seconds)
        distribution = grade_distribution(
            (g for g, t in zip(grades, golds, strict=True) if t is None), scale=scale
        )
        by_day: dict[str, list[int]] = {}
        for i, (at, _, _, _) in enumerate(rows):
            by_day.setdefault(at.date().isoformat(), []).append(i)
        per_day = [
            _block(
                summarise(
                    day,
                    [seconds[i] for i in idx],
                    [grades[i] for i in idx],
                    [golds[i] for i in idx],
                    relevance_level=level,
                ),
                [seconds[i] for i in idx],
            )
            for day, idx in sorted(by_day.items())
        ]
        blocks = [
            _block(b, seconds[start : start + block])
            for b, start in zip(
                drift(seconds, grades, golds, size=block, relevance_level=level),
                range(0, len(rows), block),
                strict=True,
            )
        ]
        mine_alerts = _alerts_for(campaign, who, accuracy, timed, distribution)
        alerts.extend(mine_alerts)
        with_others = agreement.get(who)
        excluded = exclusions.get(who)
        assessors.append(
            {
                "annotator": who,
                "judgments": len(rows),
                "gold": accuracy,
                "agreement": with_others.to_dict()
                if with_others is not None
                else {"n_items": 0, "n_pairs": 0, "exact": None, "kappa": None},
                "grades": {str(g): k for g, k in distribution.items()},
                "timed_judgments": len(timed),
                "median_seconds": _nan_none(median(timed)),
                "drift": {"block": block, "blocks": blocks, "days": per_day},
                "excluded": None
                if excluded is None
                else {
                    "id": excluded.pk,
                    "reason": excluded.reason,
                    "by": excluded.excluded_by.get_username(),
                    "at": excluded.excluded_at.isoformat(timespec="seconds"),
                },
                "alerts": mine_alerts,
            }
        )
    return {
        "campaign": campaign.pk,
        "gold_rate": campaign.gold_rate,
        "qc_min_accuracy": campaign.qc_min_accuracy,
        "qc_min_gold": campaign.qc_min_gold,
        "relevance_threshold": level,
        "gold_items": gold_counts(campaign),
        "assessors": assessors,
        "alerts": alerts,
    }


def _nan_none(x: float) -> float | None:
    return None if math.isnan(x) else x


def _block(b: Block, seconds: list[float]) -> dict[str, Any]:
    """A drift block as shown, its median over the timed judgments only (as the overall one)."""
    return {**b.to_dict(), "median_seconds": _nan_none(median(_timed(seconds)))}


def gold_counts(campaign: Campaign) -> dict[str, int]:
    """How many gold items the campaign has, served (active) and not."""
    items = GoldItem.objects.filter(campaign=campaign)
    return {"total": items.count(), "active": items.filter(active=True).count()}


def gold_items(campaign: Campaign) -> list[dict[str, Any]]:
    """The campaign's gold items with how often they were judged and judged right (admins)."""
    items = (
        GoldItem.objects.filter(campaign=campaign)
        .select_related("topic", "qrels_version")
        .annotate(
            judged=Count("judgments"),
            right=Count("judgments", filter=Q(judgments__grade=F("grade"))),
        )
        .order_by("topic__qid", "docid")
    )
    return [
        {
            "id": item.pk,
            "topic": item.topic.qid,
            "docid": item.docid,
            "grade": item.grade,
            "source": item.source,
            "qrels_version": item.qrels_version.number if item.qrels_version else None,
            "active": item.active,
            "judged": item.judged,
            "right": item.right,
        }
        for item in items
    ]


def exclusion_history(campaign: Campaign) -> list[dict[str, Any]]:
    """Every exclusion of the campaign, in force or lifted, with both reasons (admins)."""
    return [
        {
            "id": e.pk,
            "annotator": e.annotator.get_username(),
            "reason": e.reason,
            "excluded_by": e.excluded_by.get_username(),
            "excluded_at": e.excluded_at.isoformat(timespec="seconds"),
            "lifted_at": e.lifted_at.isoformat(timespec="seconds") if e.lifted_at else None,
            "lifted_by": e.lifted_by.get_username() if e.lifted_by else None,
            "lift_reason": e.lift_reason,
        }
        for e in AnnotatorExclusion.objects.filter(campaign=campaign)
        .select_related("annotator", "excluded_by", "lifted_by")
        .order_by("excluded_at", "pk")
    ]


def alerts(campaign: Campaign) -> list[dict[str, Any]]:
    """The assessors who need an admin's look (module docstring): the progress page's alerts."""
    if not Judgment.objects.filter(campaign=campaign).exists():
        return []
    report: list[dict[str, Any]] = quality_report(campaign, with_agreement=False)["alerts"]
    return report
