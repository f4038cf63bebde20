"""Researchers' pages: leaderboard, run page, significance table (and their downloads).

Pages only read what is stored; the run page's Compute button POSTs a request to evaluate."""

from __future__ import annotations

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
from judging.assessments.selectors import qrels_version
from judging.campaigns.models import Campaign, Run
from judging.campaigns.selectors import run_label
from judging.campaigns.services import run_update
from judging.core.downloads import content_disposition
from judging.core.errors import DomainError, NotAllowed
from judging.core.roles import is_admin, is_researcher
from judging.evaluation.models import EvalMode, EvalState, Evaluation
from judging.evaluation.selectors import (
    latest_qrels_version,
    leaderboard,
    leaderboard_csv,
    run_evaluation,
    run_evaluation_status,
    significance,
)
from judging.evaluation.services import evaluation_request
from judging.pools.selectors import pool_versions_of_run
from judging.web import charts
from judging.web.flash import flash, flash_error
from judging.web.submit_pages import new_runs_note

STATE_TEXT = {
    "missing": "not evaluated",
    "pending": "being computed",
    "failed": "evaluation failed",
    "done": "no value",
}


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
        response["Content-Disposition"] = content_disposition(filename)
    return response


@login_required
def leaderboard_page(request: HttpRequest, campaign_id: int) -> HttpResponse:
    _researcher(request)
    campaign = get_object_or_404(Campaign.objects.visible_to(request.user), pk=campaign_id)
    version = qrels_version_or_404(campaign, request.GET.get("qrels"))
    versions = QrelsVersion.objects.filter(campaign=campaign).latest_first()
    if version is None:
        return render(
            request,
            "results/leaderboard.html",
            {"campaign": campaign, "versions": versions, "new_runs": new_runs_note(campaign)},
        )
    board = leaderboard(campaign=campaign, version=version, user=request.user)
    if request.GET.get("format") == "csv":
        response = HttpResponse(leaderboard_csv(board), content_type="text/csv")
        response["Content-Disposition"] = content_disposition(
            f"leaderboard-qrels-v{version.number}.csv"
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
                    "interval": [e.get("ci_low"), e.get("ci_high")],
                    "bar": charts.ci_bar(e["value"], e.get("ci_low"), e.get("ci_high")),
                    "ceiling": (e.get("ceiling") or {}).get("value"),
                    "judged": (e.get("judged") or {}).get("value"),
                    "upper": ((e.get("treatments") or {}).get("upper") or {}).get("value"),
                    "condensed": ((e.get("treatments") or {}).get("condensed") or {}).get("value"),
                }
            )
        row["cells"] = cells
        row["state_text"] = STATE_TEXT.get(row["state"], row["state"])
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
            "new_runs": new_runs_note(campaign),
        },
    )


def _visible_run(request: HttpRequest, run_id: int) -> Run:
    _researcher(request)
    run = Run.objects.visible_to(request.user).filter(pk=run_id).select_related("campaign").first()
    if run is None:
        raise Http404("no such run visible to you")
    return run


def _mode(value: str | None) -> str:
    return value if value in EvalMode.values else EvalMode.HONEST


def _run_evaluation(
    request: HttpRequest, run_id: int
) -> tuple[Run, QrelsVersion | None, str, Evaluation | None]:
    """The run, the asked-for qrels version and mode, and the stored evaluation (never computed
    here: a missing one is offered to compute, by POST)."""
    run = _visible_run(request, run_id)
    version = qrels_version_or_404(run.campaign, request.GET.get("qrels"))
    mode = _mode(request.GET.get("mode"))
    if version is None:
        return run, None, mode, None
    return run, version, mode, run_evaluation(run, version, mode)


@login_required
@require_POST
def run_evaluate(request: HttpRequest, run_id: int) -> HttpResponse:
    """The Compute button of the run page: request the evaluation, then show the page again."""
    run = _visible_run(request, run_id)
    version = qrels_version_or_404(run.campaign, request.POST.get("qrels"))
    mode = _mode(request.POST.get("mode"))
    url = reverse("run-page", args=[run.pk])
    if version is None:
        flash(request, messages.WARNING, "There is no qrels version to evaluate against yet.")
        return redirect(url)
    evaluation_request(run=run, version=version, mode=mode)
    flash(request, messages.INFO, f"Evaluation against qrels version {version.number} requested.")
    return redirect(f"{url}?{urlencode({'qrels': str(version.number), 'mode': mode})}")


def recall_scale(value: str | None) -> str:
    """The k axis of the recall chart: ``log`` when asked for, linear otherwise."""
    return "log" if value == "log" else "linear"


def curve_note(curve: dict[str, Any], run: Run | None = None) -> str:
    """How deep the stored curve goes, said on the chart; curves stored before full-depth curves
    (no ``depth``) stop at k = 100 whatever the run's depth, and a run deeper than
    ``POOLJUDGE_CURVE_MAX_DEPTH`` is cut there."""
    ks = curve.get("k") or []
    if "depth" not in curve:
        return (
            f"To depth {ks[-1] if ks else 0} (computed before full-depth curves; "
            "manage.py evaluate --force extends it)."
        )
    counts = (run.topic_counts or {}).values() if run is not None else ()
    longest = max((int(n) for n in counts), default=0)
    if longest > curve["depth"]:
        return (
            f"To depth {curve['depth']}, the cap (POOLJUDGE_CURVE_MAX_DEPTH); "
            f"the run ranks up to {longest}."
        )
    return f"To the run's full depth, k = 1..{curve['depth']}."


def _recall_svg(run: Run, evaluation: Evaluation, label: str, scale: str = "linear") -> str:
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
        title=f"Recall@k of {label} (qrels v{evaluation.qrels.number}, "
        f"{evaluation.qrels.content_hash[:12]}, macro over "
        f"{curve.get('num_queries', 0)} queries)",
        x_label="k (depth)",
        y_label="recall",
        y_range=(0.0, 1.0),
        markers=markers,
        x_log=scale == "log",
        note=curve_note(curve, run),
    )


def recall_filename(run: Run, evaluation: Evaluation, label: str, scale: str) -> str:
    """The download name of the recall chart, without extension (it carries the qrels version)."""
    log = "-log" if scale == "log" else ""
    return f"recall-{label}-qrels-v{evaluation.qrels.number}{log}"


LIVE_TASK = frozenset({"pending", "queued", "running"})


def run_pooling(run: Run, user: Any) -> dict[str, Any]:
    """Whether the run is pooled and why, in words, and whether the user may change it.

    Why a run was (not) pooled when it arrived is not stored; the words say what the campaign's
    setting means for runs submitted now (``pools.selectors.new_runs_pooled``), which is the
    reason for a run nobody decided about."""
    new_runs = new_runs_note(run.campaign)
    if run.pooled:
        text = "pooled: its documents go into the campaign's next pool version"
    elif new_runs["pooled"]:
        text = (
            f"not pooled: left out by an admin (new runs are pooled: {new_runs['reason']}); "
            "an admin can include it"
        )
    else:
        text = f"not pooled: {new_runs['reason']}; an admin can include it"
    return {
        "text": text,
        "history": _pool_history(run),
        "new_runs": new_runs,
        "can_change": is_admin(user),
    }


def _pool_history(run: Run) -> str:
    """Which built pool versions took the run's documents, and when the first was built."""
    versions = pool_versions_of_run(run)
    if not versions:
        return "In no pool version yet."
    numbers = ", ".join(str(v.number) for v in versions)
    first = versions[0]
    when = first.finished_at or first.created_at
    plural = "s" if len(versions) > 1 else ""
    return (
        f"In pool version{plural} {numbers} (version {first.number} built "
        f"{when:%Y-%m-%d %H:%M} UTC)."
    )


def _progress(
    run: Run, version: QrelsVersion | None, mode: str, evaluation: Evaluation | None
) -> dict[str, Any] | None:
    """The task computing the run's evaluation against the latest qrels version (honest mode,
    the one a submission asks for), while there is no finished evaluation to show."""
    if version is None or mode != EvalMode.HONEST:
        return None
    if evaluation is not None and evaluation.state != EvalState.PENDING:
        return None
    latest = latest_qrels_version(run.campaign_id)
    if latest is None or latest.pk != version.pk:
        return None
    status = run_evaluation_status(run, latest)
    return status if status.get("status") in LIVE_TASK else None


@login_required
@require_POST
def run_pooled(request: HttpRequest, run_id: int) -> HttpResponse:
    """Include the run in the next pools or leave it out (admins: ``run_update``)."""
    run = _visible_run(request, run_id)
    choice = request.POST.get("pooled", "")
    if choice not in ("yes", "no"):
        flash(request, messages.ERROR, f"pooled: {choice!r} is not yes or no; nothing changed.")
        return redirect("run-page", run_id=run.pk)
    try:
        run_update(run=run, by=request.user, data={"pooled": choice == "yes"})
    except NotAllowed as exc:
        raise PermissionDenied(exc.message) from None
    except DomainError as exc:
        flash_error(request, exc)
        return redirect("run-page", run_id=run.pk)
    flash(
        request,
        messages.SUCCESS,
        "The run is pooled: the next pool version includes its documents."
        if choice == "yes"
        else "The run is no longer pooled: the next pool versions leave it out.",
    )
    return redirect("run-page", run_id=run.pk)


@login_required
def run_page(request: HttpRequest, run_id: int) -> HttpResponse:
    run, version, mode, evaluation = _run_evaluation(request, run_id)
    progress = _progress(run, version, mode, evaluation)
    context: dict[str, Any] = {
        "run": run,
        "run_label": run_label(run, request.user),
        "version": version,
        "mode": mode,
        "evaluation": evaluation,
        "versions": QrelsVersion.objects.filter(campaign=run.campaign).latest_first(),
        "pooling": run_pooling(run, request.user),
        "progress": progress,
        "refresh": progress is not None
        or (evaluation is not None and evaluation.state == EvalState.PENDING),
    }
    if evaluation is not None and evaluation.state == EvalState.DONE:
        result = evaluation.result
        scale = recall_scale(request.GET.get("scale"))
        label = run_label(run, request.user)
        context["recall_svg"] = _recall_svg(run, evaluation, label, scale)
        context["scale"] = scale
        context["curve_before_full_depth"] = "depth" not in evaluation.curve
        context["recall_name"] = recall_filename(run, evaluation, label, scale)
        context["recall_query"] = urlencode(
            {"qrels": str(evaluation.qrels.number), "mode": mode, "scale": scale}
        )
        context["aggregates"] = [
            {
                "name": m,
                **result["measures"][m],
                "interval": [
                    result["measures"][m].get("ci_low"),
                    result["measures"][m].get("ci_high"),
                ],
            }
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
    run, _, _, evaluation = _run_evaluation(request, run_id)
    if evaluation is None or evaluation.state != EvalState.DONE:
        raise Http404("no evaluation yet")
    scale = recall_scale(request.GET.get("scale"))
    label = run_label(run, request.user)
    return _svg_response(
        _recall_svg(run, evaluation, label, scale),
        f"{recall_filename(run, evaluation, label, scale)}.svg",
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
            "nav_keep": [("measure", measure), ("test", test)],
            "new_runs": new_runs_note(campaign),
        },
    )
