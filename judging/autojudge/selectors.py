"""Reads of automatic judges that the judges' pages and the API share: the judges of a campaign,
one judge version in detail (its versions, runs with progress, label counts by status, tokens and
cost, grade distribution), and a run's progress for polling.

Everything returned is plain data (dicts, lists, numbers, strings). An endpoint is only ever
named: its URL and key live in settings and never reach these dicts, and any text that came
back from a worker (a run's error) has every configured URL and key blanked out here, whatever
the service already did, so that no page or API answer can carry one.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db.models import Count, QuerySet, Sum
from django.shortcuts import get_object_or_404

from judging.assessments.models import QrelsKind, QrelsVersion
from judging.autojudge.models import (
    AutoLabel,
    Judge,
    JudgeAudit,
    JudgeCalibration,
    JudgeKind,
    JudgeRun,
    LabelStatus,
)
from judging.autojudge.services import CALIBRATION_LIVE, invalid, scrub
from judging.campaigns.models import Campaign
from judging.core.models import LIVE_STATES, JobState
from judging.core.roles import UserLike
from judging.pools.models import PoolState, PoolVersion

# Parameters worth showing; anything else a judge's params hold is left out (endpoints and keys
# are refused by judge_create, and this keeps it so whatever a future kind stores).
SHOWN_PARAMS = (
    "endpoint",
    "mapping",
    "price_prompt_per_1k",
    "price_completion_per_1k",
    "max_tokens",
    "workers",
    "thresholds",
    "max_chars",
    "calibration",
    "t_partial",
    "t_support",
    "members",
    "method",
    "human",
    "deferred_judged",
    "declared",
)


# ---- judges --------------------------------------------------------------------------------


def judges_visible(user: UserLike) -> QuerySet[Judge]:
    """Judge versions the user may read (admins and researchers: all; annotators: none), in
    campaigns the user may see."""
    return Judge.objects.visible_to(user).filter(campaign__in=Campaign.objects.visible_to(user))


def judge_for(user: UserLike, judge_id: int) -> Judge:
    """Judge version ``judge_id`` if the user may read it, else 404."""
    judge: Judge = get_object_or_404(judges_visible(user).select_related("campaign"), pk=judge_id)
    return judge


def judge_run_for(user: UserLike, run_id: int) -> JudgeRun | None:
    """Judge run ``run_id`` if the user may read its judge, else None (a 404)."""
    return (
        JudgeRun.objects.filter(judge__in=judges_visible(user))
        .select_related("judge", "judge__campaign", "pool", "bank", "job")
        .filter(pk=run_id)
        .first()
    )


def _totals(judges: Iterable[int]) -> dict[int, dict[str, Any]]:
    """Per judge id: graded labels, runs, tokens and cost (spent by its runs)."""
    ids = list(judges)
    out: dict[int, dict[str, Any]] = {
        pk: {
            "labels": 0,
            "runs": 0,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "cost": 0.0,
        }
        for pk in ids
    }
    graded = (
        AutoLabel.objects.filter(judge_id__in=ids, grade__isnull=False)
        .values("judge_id")
        .annotate(n=Count("id"))
    )
    for row in graded:
        out[row["judge_id"]]["labels"] = row["n"]
    runs = (
        JudgeRun.objects.filter(judge_id__in=ids)
        .values("judge_id")
        .annotate(
            n=Count("id"),
            prompt=Sum("prompt_tokens"),
            completion=Sum("completion_tokens"),
            cost=Sum("cost"),
        )
    )
    for row in runs:
        out[row["judge_id"]].update(
            runs=row["n"],
            prompt_tokens=int(row["prompt"] or 0),
            completion_tokens=int(row["completion"] or 0),
            cost=float(row["cost"] or 0.0),
        )
    return out


def _summary(judge: Judge, totals: dict[str, Any]) -> dict[str, Any]:
    endpoint = judge.params.get("endpoint") if judge.kind == JudgeKind.OPENAI else None
    return {
        "id": judge.pk,
        "campaign": judge.campaign_id,
        "name": judge.name,
        "version": judge.version,
        "label": str(judge),
        "kind": judge.kind,
        "kind_label": JudgeKind(judge.kind).label,
        "model": judge.model,
        "endpoint": str(endpoint) if endpoint else None,
        "description": judge.description,
        "locked": judge.locked_at is not None,
        "locked_at": judge.locked_at,
        "created_at": judge.created_at,
        "labels": totals["labels"],
        "runs": totals["runs"],
        "prompt_tokens": totals["prompt_tokens"],
        "completion_tokens": totals["completion_tokens"],
        "cost": totals["cost"],
        "owner": judge.owner.get_username() if judge.owner_id and judge.owner else None,
        "pool": judge.pool.number if judge.pool_id and judge.pool else None,
        "family": judge.family,
        "open_weights": judge.open_weights,
        "saw_human_qrels": judge.saw_human_qrels,
    }


def judge_list(*, campaign: Campaign, user: UserLike) -> list[dict[str, Any]]:
    """The campaign's judge versions the user may read, by name then version, each with its
    graded labels, runs, tokens and cost."""
    judges = list(
        judges_visible(user)
        .filter(campaign=campaign)
        .select_related("owner", "pool")
        .order_by("name", "version")
    )
    totals = _totals(j.pk for j in judges)
    return [_summary(j, totals[j.pk]) for j in judges]


def judge_summary(judge: Judge) -> dict[str, Any]:
    """One judge version as the list shows it."""
    return _summary(judge, _totals([judge.pk])[judge.pk])


def _params(judge: Judge) -> dict[str, Any]:
    return {k: judge.params[k] for k in SHOWN_PARAMS if k in judge.params}


def _status_counts(judge: Judge) -> dict[str, int]:
    counts = dict.fromkeys(LabelStatus.values, 0)
    rows = AutoLabel.objects.filter(judge=judge).values("status").annotate(n=Count("id"))
    for row in rows:
        counts[row["status"]] = row["n"]
    return counts


def _grades(judge: Judge) -> list[dict[str, Any]]:
    """Every grade of the campaign's scale with its label and how many pairs the judge gave it."""
    labels = judge.campaign.grade_labels()
    rows = (
        AutoLabel.objects.filter(judge=judge, kind="document", grade__isnull=False)
        .values("grade")
        .annotate(n=Count("id"))
    )
    counts = {row["grade"]: row["n"] for row in rows}
    total = sum(counts.values())
    return [
        {
            "grade": g,
            "label": labels.get(g, str(g)),
            "count": counts.get(g, 0),
            "share": counts.get(g, 0) / total if total else None,
        }
        for g in sorted(set(labels) | set(counts))
    ]


def _qrels_of(judge: Judge) -> list[dict[str, Any]]:
    """The automatic and hybrid qrels versions whose rows name this judge version."""
    versions = QrelsVersion.objects.filter(campaign_id=judge.campaign_id).exclude(
        kind=QrelsKind.HUMAN
    )
    return [
        {
            "id": v.pk,
            "number": v.number,
            "kind": v.kind,
            "kind_label": v.kind_label,
            "num_judgments": v.num_judgments,
            "created_at": v.created_at,
        }
        for v in versions.order_by("-number")
        if any(j.get("id") == judge.pk for j in v.judges or [])
    ]


def judge_detail(judge: Judge) -> dict[str, Any]:
    """What a judge version says (prompt, shown parameters), its other versions, its runs with
    progress, its labels by status, its grade distribution, tokens and cost, and the qrels
    versions built from it."""
    versions = Judge.objects.filter(campaign_id=judge.campaign_id, name=judge.name).order_by(
        "version"
    )
    runs = JudgeRun.objects.filter(judge=judge).select_related(
        "judge", "pool", "bank", "job", "topup__run"
    )
    out = judge_summary(judge)
    out.update(
        prompt=judge.prompt,
        params=_params(judge),
        versions=[
            {
                "id": v.pk,
                "version": v.version,
                "model": v.model,
                "locked": v.locked_at is not None,
                "created_at": v.created_at,
                "current": v.pk == judge.pk,
            }
            for v in versions
        ],
        statuses=_status_counts(judge),
        grades=_grades(judge),
        judge_runs=[judge_run_progress(r) for r in runs],
        qrels=_qrels_of(judge),
        live=any(r.job.state in LIVE_STATES for r in runs),
    )
    return out


def judge_run_progress(run: JudgeRun) -> dict[str, Any]:
    """Where a judge run stands (for polling): state, documents done of total (cached ones
    included), counts by label status, tokens, cost, and why it stopped (URLs and keys
    blanked)."""
    return {
        "id": run.pk,
        "judge": run.judge_id,
        "judge_label": str(run.judge),
        "pool": run.pool.number if run.pool is not None else None,
        "kind": run.kind,
        "bank": run.bank.number if run.bank is not None else None,
        "over": run.over,
        "state": run.state,
        "live": run.job.state in LIVE_STATES,
        "total": run.total,
        "done": run.done,
        "cached": run.cached,
        "progress": round(run.progress, 4),
        "ok": run.ok,
        "refused": run.refused,
        "malformed": run.malformed,
        "errors": run.errors,
        "prompt_tokens": run.prompt_tokens,
        "completion_tokens": run.completion_tokens,
        "cost": run.cost,
        "error": scrub(run.error),
        "created_at": run.created_at,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
    }


# ---- calibrations of embedding judges ----------------------------------------------------


def calibration_for(user: UserLike, calibration_id: int) -> JudgeCalibration | None:
    """Calibration ``calibration_id`` if the user may read its judge, else None (a 404)."""
    return (
        JudgeCalibration.objects.filter(judge__in=judges_visible(user))
        .select_related("judge", "human", "pool", "calibrated", "job")
        .filter(pk=calibration_id)
        .first()
    )


def calibration_view(calibration: JudgeCalibration) -> dict[str, Any]:
    """Where a calibration stands (for polling): what it was asked (the judge version, the
    human qrels and pool versions by number, the sample and seed), its state, the version it
    made (done) or why it failed (URLs and keys blanked)."""
    made = calibration.calibrated
    return {
        "id": calibration.pk,
        "judge": calibration.judge_id,
        "judge_label": str(calibration.judge),
        "human": calibration.human.number,
        "pool": calibration.pool.number,
        "sample": calibration.sample,
        "seed": calibration.seed,
        "state": calibration.state,
        "live": calibration.job.state in CALIBRATION_LIVE,
        "calibrated": made.pk if made is not None else None,
        "calibrated_label": str(made) if made is not None else None,
        "error": scrub(calibration.error),
        "created_at": calibration.created_at,
        "finished_at": calibration.finished_at,
    }


def judge_calibrations(judge: Judge, limit: int = 5) -> list[dict[str, Any]]:
    """The judge version's latest calibrations, newest first."""
    rows = JudgeCalibration.objects.filter(judge=judge).select_related(
        "judge", "human", "pool", "calibrated", "job"
    )
    return [calibration_view(c) for c in rows.order_by("-created_at", "-pk")[:limit]]


def latest_audit(judge: Judge) -> JudgeAudit | None:
    """The audit of the judge version a page opens on: its latest computed one (done), else
    the latest asked for (being computed, or failed: the page says so); None without any."""
    audits = JudgeAudit.objects.filter(judge=judge).select_related("human", "pool", "job")
    done = audits.filter(job__state=JobState.DONE).order_by("-job__computed_at", "-pk").first()
    return done or audits.order_by("-created_at", "-pk").first()


# ---- what the forms offer, and the numbers they send ----------------------------------------


def built_pools(campaign: Campaign) -> QuerySet[PoolVersion]:
    """The campaign's built pool versions, newest first (what a judge runs over)."""
    return PoolVersion.objects.filter(campaign=campaign, state=PoolState.BUILT).order_by("-number")


def human_qrels(campaign: Campaign) -> QuerySet[QrelsVersion]:
    """The campaign's human qrels versions, newest first (calibration, hybrids)."""
    return QrelsVersion.objects.filter(campaign=campaign, kind=QrelsKind.HUMAN).order_by("-number")


def pool_by_number(campaign: Campaign, number: int | None, field: str = "pool") -> PoolVersion:
    """Pool version ``number`` of the campaign (None: its latest built one); an InvalidInput
    naming ``field`` when there is none."""
    if number is None:
        pool = built_pools(campaign).first()
        if pool is None:
            raise invalid(field, "the campaign has no built pool version yet")
        return pool
    found = PoolVersion.objects.filter(campaign=campaign, number=number).first()
    if found is None:
        raise invalid(field, f"the campaign has no pool version {number}")
    return found


def qrels_by_number(campaign: Campaign, number: int, field: str = "human") -> QrelsVersion:
    """Qrels version ``number`` of the campaign; an InvalidInput naming ``field`` when absent
    (whether it is human is the services' check)."""
    found = QrelsVersion.objects.filter(campaign=campaign, number=number).first()
    if found is None:
        raise invalid(field, f"the campaign has no qrels version {number}")
    return found
