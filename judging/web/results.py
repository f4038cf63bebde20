"""Researchers' pages: leaderboard, run page, significance table (and their downloads)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from judging.assessments.models import QrelsVersion
from judging.assessments.selectors import qrels_version
from judging.campaigns.models import Campaign, Run
from judging.core.roles import is_researcher
from judging.evaluation.models import EvalMode, EvalState, Evaluation, measures_key
from judging.evaluation.selectors import leaderboard, leaderboard_csv, significance
from judging.evaluation.services import evaluate_runs
from judging.web import charts


def _researcher(request: HttpRequest) -> None:
    if not is_researcher(request.user):
        raise PermissionDenied("results are for researchers and admins")


def qrels_version_or_404(campaign: Campaign, number: str | None) -> QrelsVersion | None:
    """The asked-for (or latest) qrels version; 404 for a version the campaign does not have."""
    version = qrels_version(campaign, number)
    if version is None and number:
        raise Http404(f"no qrels version {number!r}")
    return version


def _svg_response(svg: str, filename: str, download: bool) -> HttpResponse:
    response = HttpResponse(svg, content_type="image/svg+xml")
    if download:
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@login_required
def leaderboard_page(request: HttpRequest, campaign_id: int) -> HttpResponse:
    _researcher(request)
    campaign = get_object_or_404(Campaign.objects.visible_to(request.user), pk=campaign_id)
    version = qrels_version_or_404(campaign, request.GET.get("qrels"))
    versions = QrelsVersion.objects.filter(campaign=campaign).latest_first()
    if version is None:
        return render(
            request, "results/leaderboard.html", {"campaign": campaign, "versions": versions}
        )
    board = leaderboard(campaign=campaign, version=version, user=request.user)
    if request.GET.get("format") == "csv":
        response = HttpResponse(leaderboard_csv(board), content_type="text/csv")
        response["Content-Disposition"] = (
            f'attachment; filename="leaderboard-qrels-v{version.number}.csv"'
        )
        return response
    measures = board["measures"]
    for row in board["runs"]:
        cells: list[dict[str, Any] | None] = []
        for m in measures:
            e = (row.get("measures") or {}).get(m)
            if not e:
                cells.append(None)
                continue
            cells.append(
                {
                    "value": e["value"],
                    "low": e.get("ci_low"),
                    "high": e.get("ci_high"),
                    "bar": charts.ci_bar(e["value"], e.get("ci_low"), e.get("ci_high")),
                    "ceiling": (e.get("ceiling") or {}).get("value"),
                    "judged": (e.get("judged") or {}).get("value"),
                    "upper": ((e.get("treatments") or {}).get("upper") or {}).get("value"),
                    "condensed": ((e.get("treatments") or {}).get("condensed") or {}).get("value"),
                }
            )
        row["cells"] = cells
        row["judged10"] = ((row.get("measures") or {}).get("Judged@10") or {}).get("value")
    excluded: list[str] = next(
        (r.get("excluded_summary") for r in board["runs"] if r.get("excluded_summary")), []
    )
    return render(
        request,
        "results/leaderboard.html",
        {
            "campaign": campaign,
            "version": version,
            "versions": versions,
            "board": board,
            "measures": measures,
            "excluded": excluded,
        },
    )


def _run_evaluation(request: HttpRequest, run_id: int) -> tuple[Run, Evaluation | None]:
    _researcher(request)
    run = Run.objects.visible_to(request.user).filter(pk=run_id).select_related("campaign").first()
    if run is None:
        raise Http404("no such run visible to you")
    version = qrels_version_or_404(run.campaign, request.GET.get("qrels"))
    if version is None:
        return run, None
    mode = request.GET.get("mode", EvalMode.HONEST)
    if mode not in EvalMode.values:
        mode = EvalMode.HONEST
    evaluate_runs(version=version, runs=[run], mode=mode)  # no-op when already stored
    key = measures_key(run.campaign.measures)
    evaluation = (
        Evaluation.objects.filter(run=run, qrels=version, mode=mode, measures_key=key)
        .select_related("qrels")
        .first()
    )
    return run, evaluation


def _recall_svg(run: Run, evaluation: Evaluation) -> str:
    curve = evaluation.curve
    ks = curve.get("k", [])
    markers = []
    if curve.get("elbow"):
        markers.append((curve["elbow"], f"elbow k={curve['elbow']}"))
    if curve.get("plateau") and curve.get("plateau") != curve.get("elbow"):
        markers.append((curve["plateau"], f"plateau k={curve['plateau']}"))
    return charts.line_chart(
        [
            charts.Series("R@k", ks, curve.get("recall", [])),
            charts.Series(
                "achievable ceiling min(k,R)/R",
                ks,
                curve.get("ceiling", []),
                color="#7f8c8d",
                dashed=True,
            ),
        ],
        title=f"Recall@k of {run.tag} (qrels v{evaluation.qrels.number}, macro over "
        f"{curve.get('num_queries', 0)} queries)",
        x_label="k (depth)",
        y_label="recall",
        y_range=(0.0, 1.0),
        markers=markers,
    )


@login_required
def run_page(request: HttpRequest, run_id: int) -> HttpResponse:
    run, evaluation = _run_evaluation(request, run_id)
    context: dict[str, Any] = {
        "run": run,
        "evaluation": evaluation,
        "versions": QrelsVersion.objects.filter(campaign=run.campaign).latest_first(),
    }
    if evaluation is not None and evaluation.state == EvalState.DONE:
        result = evaluation.result
        context["recall_svg"] = _recall_svg(run, evaluation)
        context["aggregates"] = [
            {"name": m, **result["measures"][m]}
            for m in evaluation.measures
            if m in result.get("measures", {})
        ]
        per_query = result.get("per_query", {})
        qids = sorted({q for vals in per_query.values() for q in vals}, key=lambda q: (len(q), q))
        shown = [m for m in evaluation.measures if m in per_query]
        context["per_query_measures"] = shown
        never = evaluation.curve.get("never_retrieved", {})
        context["per_query_rows"] = [
            {
                "qid": q,
                "values": [per_query[m].get(q) for m in shown],
                "never": len(never.get(q, [])),
            }
            for q in qids
        ]
    return render(request, "results/run.html", context)


@login_required
def run_recall_svg(request: HttpRequest, run_id: int) -> HttpResponse:
    run, evaluation = _run_evaluation(request, run_id)
    if evaluation is None or evaluation.state != EvalState.DONE:
        raise Http404("no evaluation yet")
    return _svg_response(
        _recall_svg(run, evaluation),
        f"recall-{run.tag}-qrels-v{evaluation.qrels.number}.svg",
        request.GET.get("download") == "1",
    )


@login_required
def compare_page(request: HttpRequest, campaign_id: int) -> HttpResponse:
    _researcher(request)
    campaign = get_object_or_404(Campaign.objects.visible_to(request.user), pk=campaign_id)
    version = qrels_version_or_404(campaign, request.GET.get("qrels"))
    test = request.GET.get("test", "t")
    measure = request.GET.get("measure") or (campaign.measures[0] if campaign.measures else "")
    table = None
    if version is not None and test in ("t", "randomization", "bootstrap"):
        table = significance(
            campaign=campaign, version=version, measure=measure, test=test, user=request.user
        )
    return render(
        request,
        "results/compare.html",
        {
            "campaign": campaign,
            "version": version,
            "table": table,
            "test": test,
            "measure": measure,
            "measures": campaign.measures,
            "versions": QrelsVersion.objects.filter(campaign=campaign).latest_first(),
        },
    )
