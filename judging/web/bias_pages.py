"""The pooling-bias page: leave-one-out scatter and deltas, estimated penalty of non-pooled runs,
judged@10 coverage, before/after re-pooling, and pooling efficiency. Charts are server SVG.

The page shows the stored report; one never requested gets a Compute button (a POST)."""

from __future__ import annotations

import math
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_POST

from judging.assessments.models import QrelsVersion
from judging.campaigns.models import Campaign
from judging.core.downloads import content_disposition
from judging.core.errors import DomainError, InvalidInput, RateLimited
from judging.core.roles import account, is_researcher
from judging.evaluation.bias import bias_report_request
from judging.evaluation.models import BiasKind, EvalState
from judging.evaluation.selectors import bias_report
from judging.web import charts
from judging.web.flash import flash, flash_error
from judging.web.results import qrels_version_or_404
from metrics.problems import Problem

MEASURES = ("AP", "P@10", "nDCG@10", "R@100", "Bpref")
STRATEGY_LABELS = {
    "docid": "docid order (unordered depth-k judging)",
    "rank": "rank order",
    "mtf": "Move-to-Front",
    "hedge": "Hedge (beta 0.1)",
}


def _params(request: HttpRequest, campaign_id: int, query: Any) -> tuple[Campaign, dict[str, Any]]:
    """The campaign and the report's parameters (from the query string or the Compute form)."""
    if not is_researcher(request.user):
        raise PermissionDenied("results are for researchers and admins")
    campaign = get_object_or_404(Campaign.objects.visible_to(request.user), pk=campaign_id)
    version = qrels_version_or_404(campaign, query.get("qrels"))
    raw_depth = query.get("depth") or ""
    try:
        depth = int(raw_depth) if raw_depth else campaign.pool_depth
    except ValueError:
        raise InvalidInput(
            "depth must be a whole number",
            [Problem.at("depth", f"must be a whole number, not {raw_depth[:40]!r}")],
        ) from None
    params = {
        "version": version,
        "measure": query.get("measure") or "AP",
        "kind": query.get("kind") or BiasKind.LOO_RUN,
        "depth": depth,
    }
    return campaign, params


def _report(
    request: HttpRequest, campaign_id: int
) -> tuple[Campaign, dict[str, Any] | None, dict[str, Any]]:
    """The stored report as the user may see it (None: never requested). Never computes."""
    try:
        campaign, params = _params(request, campaign_id, request.GET)
    except DomainError as exc:
        raise Http404(exc.message) from None
    if params["version"] is None:
        return campaign, None, params
    try:
        report = bias_report(
            campaign=campaign,
            version=params["version"],
            user=request.user,
            measure=params["measure"],
            depth=params["depth"],
            kind=params["kind"],
        )
    except DomainError as exc:
        raise Http404(exc.message) from None
    return campaign, report, params


@login_required
@require_POST
def bias_compute(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """The Compute button: request the report for the form's parameters, then show the page.
    A user's new reports per hour are limited (POOLJUDGE_BIAS_REPORTS_PER_HOUR): beyond, the page
    says so and when to try again."""
    url = reverse("bias", args=[campaign_id])
    try:
        campaign, params = _params(request, campaign_id, request.POST)
    except DomainError as exc:
        flash_error(request, exc)
        return redirect(url)
    version = params["version"]
    if version is None:
        flash(request, messages.WARNING, "There is no qrels version to analyse yet.")
        return redirect(url)
    try:
        bias_report_request(
            campaign=campaign,
            qrels=version,
            measure=params["measure"],
            depth=params["depth"],
            kind=params["kind"],
            requested_by=account(request.user),
        )
    except RateLimited as exc:
        minutes = math.ceil(exc.retry_after / 60)
        flash(request, messages.WARNING, f"{exc.message}. Try again in {minutes} minute(s).")
        return redirect(url)
    except DomainError as exc:
        flash_error(request, exc)
        return redirect(url)
    flash(request, messages.INFO, f"Bias analysis on qrels version {version.number} requested.")
    query = {
        "qrels": version.number,
        "measure": params["measure"],
        "depth": params["depth"],
        "kind": params["kind"],
    }
    return redirect(f"{url}?{urlencode(query)}")


def _scatter(report: dict[str, Any]) -> str:
    loo = report["result"].get("loo", {})
    points = [
        charts.Point(r["score"], r["score_without"], t)
        for t, r in loo.get("runs", {}).items()
        if r["score"] is not None and r["score_without"] is not None
    ]
    for tag, p in (report["result"].get("penalty") or {}).get("runs", {}).items():
        if p.get("estimated_score") is not None and p.get("score") is not None:
            points.append(
                charts.Point(
                    p["estimated_score"],
                    p["score"],
                    f"{tag} (not pooled, estimated)",
                    True,
                )
            )
    return charts.scatter(
        points,
        title=f"Leave-one-out, {report['measure']} at depth {report['depth']} "
        f"(qrels v{report['qrels_version']})",
        x_label=f"{report['measure']} with the run in the pool",
        y_label=f"{report['measure']} with the run left out",
        highlight_label="not pooled: estimated pooled score vs actual score",
    )


def _deltas(report: dict[str, Any]) -> str:
    runs = report["result"].get("loo", {}).get("runs", {})
    items = sorted(
        ((t, r["delta"] or 0.0, False) for t, r in runs.items()),
        key=lambda item: -item[1],
    )
    return charts.bars(
        items,
        title=f"What being in the pool is worth: {report['measure']} delta "
        f"per pooled run (qrels v{report['qrels_version']})",
        value_label=f"{report['measure']} with minus without the run in the pool",
    )


def _efficiency(report: dict[str, Any]) -> str:
    eff = report["result"].get("efficiency") or {}
    budgets = eff.get("budgets", [])
    series = [
        charts.Series(STRATEGY_LABELS.get(name, name), budgets, values)
        for name, values in (eff.get("curves") or {}).items()
    ]
    return charts.line_chart(
        series,
        title=f"Pooling efficiency: relevant documents found per topic "
        f"(qrels v{report['qrels_version']} as oracle, depth {eff.get('depth')})",
        x_label="judgments made per topic",
        y_label="relevant found (mean per topic)",
    )


CHARTS = {"scatter": _scatter, "deltas": _deltas}


@login_required
def bias_page(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign, report, params = _report(request, campaign_id)
    context: dict[str, Any] = {
        "campaign": campaign,
        "report": report,
        **params,
        "versions": QrelsVersion.objects.filter(campaign=campaign).latest_first(),
        "measures": MEASURES,
        "kinds": BiasKind.choices,
    }
    if report is not None and report["state"] == EvalState.DONE:
        # run tags in the result are already what this user may see of them
        result = report["result"]
        if "loo" in result:
            context["scatter_svg"] = _scatter(report)
            context["deltas_svg"] = _deltas(report)
            context["loo_rows"] = sorted(
                ({"run": t, **r} for t, r in result["loo"]["runs"].items()),
                key=lambda r: r["rank"],
            )
        if result.get("efficiency"):
            context["efficiency_svg"] = _efficiency(report)
        penalty = result.get("penalty")
        if penalty:
            context["penalty_rows"] = [{"run": t, **p} for t, p in penalty["runs"].items()]
        coverage = result.get("coverage", {})
        context["coverage_rows"] = sorted(
            (
                {"run": t, "mean": c["mean"], "pooled": c["pooled"]}
                for t, c in coverage.get("runs", {}).items()
            ),
            key=lambda r: (r["mean"] is None, -(r["mean"] or 0)),
        )
        before = result.get("before_after")
        if before:
            context["before_rows"] = sorted(
                ({"run": t, **r} for t, r in before["runs"].items()),
                key=lambda r: r["rank_b"],
            )
    return render(request, "results/bias.html", context)


@login_required
def bias_chart(request: HttpRequest, campaign_id: int, chart: str) -> HttpResponse:
    _, report, _ = _report(request, campaign_id)
    if report is None or report["state"] != EvalState.DONE:
        raise Http404("the report is not ready")
    if chart == "efficiency":
        svg = _efficiency(report)
    elif chart in CHARTS and "loo" in report["result"]:
        svg = CHARTS[chart](report)
    else:
        raise Http404("no such chart")
    response = HttpResponse(svg, content_type="image/svg+xml")
    if request.GET.get("download") == "1":
        response["Content-Disposition"] = content_disposition(
            f"{chart}-{report['measure']}-qrels-v{report['qrels_version']}.svg"
        )
    return response
