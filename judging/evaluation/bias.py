"""Pool-bias reports: leave-one-out, coverage, estimated penalty, pooling efficiency and the
before/after comparison of two qrels versions. Computed by a task, stored, shown on the bias page.
"""

from __future__ import annotations

import math
import time
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from judging.assessments.models import QrelsVersion
from judging.assessments.selectors import qrels_version
from judging.campaigns.models import Campaign, Run
from judging.core import outbox
from judging.core.errors import InvalidInput, RateLimited
from judging.core.roles import Account
from judging.evaluation.models import BiasKind, BiasReport, EvalState
from judging.evaluation.services import metrics_run, qrels_dict, rankings
from judging.pools.models import PoolState, PoolVersion
from metrics.bias import LeaveOneOut, compare_qrels_versions, estimate_penalty, judged_at_k
from metrics.io import Qrels
from metrics.names import parse_measure
from metrics.pooling import make_strategy, simulate
from metrics.problems import Problem

EFFICIENCY_STRATEGIES = ("docid", "rank", "mtf", "hedge")
RATE_WINDOW = timedelta(hours=1)


BIAS_MEASURE_MAX_LENGTH = BiasReport._meta.get_field("measure").max_length or 40


def bias_params(
    campaign: Campaign, *, measure: str, depth: int | None, kind: str
) -> tuple[str, int, str]:
    """The report's key as stored: (canonical measure name, depth, kind), checked; the depth
    defaults to the campaign's pool depth.

    Bounded, so that a request cannot ask for an arbitrarily deep (costly) analysis: ``depth``
    from 1 to POOLJUDGE_BIAS_MAX_DEPTH (or the campaign's pool depth when that is larger), one
    measure whose cut-off (``P@k``) is at most POOLJUDGE_BIAS_MAX_CUTOFF. Every problem is a 400
    naming its parameter."""
    problems: list[Problem] = []
    canonical = ""
    if not isinstance(measure, str) or not 0 < len(measure) <= BIAS_MEASURE_MAX_LENGTH:
        problems.append(
            Problem.at("measure", f"a measure name of at most {BIAS_MEASURE_MAX_LENGTH} characters")
        )
    else:
        try:
            parsed = parse_measure(measure)
        except ValueError as exc:
            problems.append(Problem.at("measure", str(exc)))
        else:
            cutoff_max = settings.POOLJUDGE_BIAS_MAX_CUTOFF
            if parsed.cutoff is not None and not 1 <= parsed.cutoff <= cutoff_max:
                problems.append(
                    Problem.at(
                        "measure",
                        f"the cut-off of {measure!r} must be from 1 to {cutoff_max}",
                    )
                )
            canonical = parsed.name
    if depth is not None:
        depth_max = max(settings.POOLJUDGE_BIAS_MAX_DEPTH, campaign.pool_depth)
        if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= depth_max:
            problems.append(Problem.at("depth", f"must be a whole number from 1 to {depth_max}"))
    if kind not in BiasKind.values:
        problems.append(
            Problem.at("kind", f"kind {kind!r} is not one of {', '.join(BiasKind.values)}")
        )
    if problems:
        detail = (
            str(problems[0]) if len(problems) == 1 else "the bias report parameters are not valid"
        )
        raise InvalidInput(detail, problems)
    return canonical, depth or campaign.pool_depth, kind


def _check_rate(requested_by: Account) -> None:
    """At most POOLJUDGE_BIAS_REPORTS_PER_HOUR new reports per user per hour (a 429 beyond,
    with the seconds until the oldest of them leaves the hour)."""
    limit = settings.POOLJUDGE_BIAS_REPORTS_PER_HOUR
    since = timezone.now() - RATE_WINDOW
    recent = list(
        BiasReport.objects.filter(requested_by=requested_by, created_at__gt=since)
        .order_by("-created_at")
        .values_list("created_at", flat=True)[:limit]
    )
    if len(recent) < limit:
        return
    wait = (recent[-1] + RATE_WINDOW - timezone.now()).total_seconds()
    raise RateLimited(
        f"you asked for {limit} new bias reports in the last hour, the most allowed "
        f"(POOLJUDGE_BIAS_REPORTS_PER_HOUR); reports already computed can still be read",
        retry_after=math.ceil(wait),
    )


def bias_report_request(
    *,
    campaign: Campaign,
    qrels: QrelsVersion | None = None,
    measure: str = "AP",
    depth: int | None = None,
    kind: str = BiasKind.LOO_RUN,
    requested_by: Account | None = None,
) -> BiasReport | None:
    """The stored report for these inputs, computing it (as a task, after commit) if needed.

    A report asked for by a user (``requested_by``: the API and the page; not the events and
    commands) that is not stored yet counts against that user's hourly allowance
    (POOLJUDGE_BIAS_REPORTS_PER_HOUR; ``RateLimited`` beyond it)."""
    version = qrels or qrels_version(campaign)
    if version is None:
        return None
    canonical, depth, kind = bias_params(campaign, measure=measure, depth=depth, kind=kind)
    key = {
        "campaign": campaign,
        "qrels": version,
        "kind": kind,
        "measure": canonical,
        "depth": depth,
    }
    if requested_by is not None and not BiasReport.objects.filter(**key).exists():
        _check_rate(requested_by)
    try:
        with transaction.atomic():
            report, created = BiasReport.objects.get_or_create(
                **key, defaults={"requested_by": requested_by}
            )
    except IntegrityError:
        report, created = (
            BiasReport.objects.get(
                campaign=campaign, qrels=version, kind=kind, measure=canonical, depth=depth
            ),
            False,
        )
    if created or report.state == EvalState.FAILED:
        outbox.enqueue(
            "judging.evaluation.tasks.compute_bias_report", report.pk, key=f"bias:{report.pk}"
        )
    return report


def _novel_at(campaign: Campaign, version: QrelsVersion) -> set[str]:
    """Runs that contributed to no pool version built before this qrels version was made."""
    contributed: set[str] = set()
    for tags in PoolVersion.objects.filter(
        campaign=campaign, state=PoolState.BUILT, finished_at__lte=version.created_at
    ).values_list("run_tags", flat=True):
        contributed.update(tags)
    return {tag for tag in campaign.runs.values_list("tag", flat=True) if tag not in contributed}


def bias_report_compute(*, report_id: int) -> BiasReport | None:
    """Compute a stored report (the task body); safe to run twice."""
    report = BiasReport.objects.select_related("campaign", "qrels").filter(pk=report_id).first()
    if report is None or report.state == EvalState.DONE:
        return report
    start = time.perf_counter()
    campaign = report.campaign
    try:
        report.result = _compute(campaign, report)
        report.state = EvalState.DONE
        report.error = ""
    except Exception as exc:  # stored for the page to show
        report.state = EvalState.FAILED
        report.error = f"{type(exc).__name__}: {exc}"
    report.computed_at = timezone.now()
    report.seconds = time.perf_counter() - start
    report.save()
    return report


def _compute(campaign: Campaign, report: BiasReport) -> dict[str, Any]:
    runs_models = list(campaign.runs.order_by("tag"))
    runs = {r.tag: metrics_run(r) for r in runs_models}
    pooled = [r.tag for r in runs_models if r.pooled]
    groups = {r.tag: r.group or r.tag for r in runs_models}
    qrels_map = qrels_dict(report.qrels)
    qrels = Qrels.from_dict(qrels_map)
    level = campaign.relevance_threshold
    out: dict[str, Any] = {"qrels_version": report.qrels.number, "pooled": pooled}
    if len(pooled) >= 2:
        loo = LeaveOneOut(
            qrels,
            runs,
            depth=report.depth,
            leave_out="group" if report.kind == BiasKind.LOO_GROUP else "run",
            groups=groups,
            pooled=pooled,
            relevance_level=level,
        ).result(report.measure)
        out["loo"] = loo.to_dict()
        if loo.not_pooled:
            out["penalty"] = estimate_penalty(loo).to_dict()
    else:
        out["loo_unavailable"] = "leave-one-out needs at least two pooled runs"
    out["coverage"] = judged_at_k(qrels, runs, k=10, pooled=pooled).to_dict()
    out["efficiency"] = _efficiency(campaign, runs_models, pooled, qrels_map, report.depth, level)
    previous = (
        QrelsVersion.objects.filter(campaign=campaign, number__lt=report.qrels.number)
        .latest_first()
        .first()
    )
    if previous is not None:
        novel = sorted(_novel_at(campaign, previous))
        comparison = compare_qrels_versions(
            Qrels.from_dict(qrels_dict(previous)),
            qrels,
            runs,
            report.measure,
            novel=novel,
            recall_k=report.depth * 5,
            relevance_level=level,
        )
        out["before_after"] = {
            "from": previous.number,
            "to": report.qrels.number,
            **comparison.to_dict(),
        }
    return out


def _efficiency(
    campaign: Campaign,
    runs_models: list[Run],
    pooled: list[str],
    qrels: dict[str, dict[str, int]],
    depth: int,
    level: int,
) -> dict[str, Any]:
    """Relevant documents found against judgments made, per pooling strategy, with the
    current qrels as the oracle over the depth-k pool of the pooled runs (mean per topic)."""
    ranked = {r.tag: rankings(r, depth) for r in runs_models if r.tag in set(pooled)}
    if not ranked:
        return {}
    pool_sizes = [
        len({d for r in ranked.values() for d in r.get(q, [])})
        for q in {q for r in ranked.values() for q in r}
    ]
    limit = max(pool_sizes, default=0)
    step = max(1, limit // 40)
    budgets = list(range(0, limit + step, step))
    curves = {}
    for name in EFFICIENCY_STRATEGIES:
        result = simulate(
            ranked, qrels, make_strategy(name), depth=depth, budgets=budgets, relevance_level=level
        )
        curves[name] = list(result.mean_found)
    return {
        "budgets": budgets,
        "curves": curves,
        "depth": depth,
        "topics": len([q for q in qrels if any(q in r for r in ranked.values())]),
    }
