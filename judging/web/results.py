"""Researchers' pages: leaderboard, run page, significance table (and their downloads).

Pages only read what is stored; the run page's Compute button POSTs a request to evaluate."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_POST, require_safe

from judging.assessments.models import QrelsVersion
from judging.assessments.selectors import qrels_version
from judging.autojudge.answer_samples import latest_answer_reports
from judging.autojudge.selectors import judges_visible
from judging.campaigns.models import Campaign, Run
from judging.campaigns.selectors import run_label
from judging.campaigns.services import run_update
from judging.core import csvfiles
from judging.core.downloads import content_disposition, lines_download
from judging.core.errors import DomainError, InvalidInput, NotAllowed
from judging.core.models import JobState
from judging.core.params import MAX_ID, parse_int
from judging.core.roles import is_admin, is_researcher
from judging.evaluation import exports
from judging.evaluation.answer_board import NUGGET_MEASURES, SUPPORT_MEASURES, answer_board_for
from judging.evaluation.board import PARAMS as BOARD_PARAMS
from judging.evaluation.board import BoardQuery, board_query
from judging.evaluation.exports import ExportOptions, export_options
from judging.evaluation.models import EvalMode, Evaluation
from judging.evaluation.penalty import run_penalty
from judging.evaluation.results import upgraded_evaluation
from judging.evaluation.selectors import (
    baseline_comparisons,
    board_measures,
    latest_qrels_version,
    leaderboard,
    per_query_export_values,
    run_evaluation,
    run_evaluation_status,
    runs_without_evaluation,
)
from judging.evaluation.services import evaluation_request
from judging.pools.selectors import pool_versions_of_run
from judging.web import charts
from judging.web.flash import flash, flash_error
from judging.web.stored import stored_or_404
from judging.web.submit_pages import new_runs_note
from judging.workflows.topups import run_topups_corrected

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


def _board_params(version: QrelsVersion, query: BoardQuery, **extra: str) -> dict[str, str]:
    """The query string of a view of the board (qrels version, sort, filters, measures)."""
    return {"qrels": str(version.number), **query.params(), **{k: v for k, v in extra.items() if v}}


def _sort_header(
    key: str, text: str, board: dict[str, Any], base: dict[str, str]
) -> dict[str, Any]:
    """A header cell's sort link: the current sort flips its order, another starts at its own
    default (descending for measures, ascending for run and group); ``aria-sort`` and an arrow
    on the current one."""
    current = board["sorted_by"] == key
    natural = "asc" if key in ("run", "group") else "desc"
    order = ("asc" if board["order"] == "desc" else "desc") if current else natural
    params = {**base, "sort": key, "order": order}
    return {
        "key": key,
        "text": text,
        "href": "?" + urlencode(params),
        "current": current,
        "aria": ("descending" if board["order"] == "desc" else "ascending") if current else "none",
        "arrow": ("▼" if board["order"] == "desc" else "▲") if current else "",
        "next": "descending" if order == "desc" else "ascending",
    }


def _names(labels: list[str], limit: int = 5) -> str:
    shown = ", ".join(labels[:limit])
    return shown + (f" and {len(labels) - limit} more" if len(labels) > limit else "")


def excluded_lines(rows: list[dict[str, Any]]) -> list[str]:
    """The evaluations' notes on left-out and unanswered queries, each once, saying which runs
    it is about: "In 2 of 6 evaluated runs (a, b): 3 of 6 averaged queries are not in the run
    (scored 0)"; a note every evaluated run has is said once for all of them."""
    evaluated = [r for r in rows if r.get("state") == JobState.DONE]
    runs_of: dict[str, list[str]] = {}
    for row in evaluated:
        for line in row.get("excluded_summary") or []:
            runs_of.setdefault(line, []).append(str(row["run"]))
    out = []
    for line, labels in runs_of.items():
        if len(evaluated) == 1:
            out.append(line)
        elif len(labels) == len(evaluated):
            out.append(f"In all {len(evaluated)} evaluated runs: {line}")
        else:
            out.append(
                f"In {len(labels)} of {len(evaluated)} evaluated runs ({_names(labels)}): {line}"
            )
    return out


def _page_board(
    request: HttpRequest, campaign: Campaign, version: QrelsVersion
) -> tuple[BoardQuery, dict[str, Any], bool]:
    """The view the URL asks for; a bad parameter is said on the page (its message names it)
    and the default view shown instead."""
    try:
        query = board_query(request.GET, board_measures(campaign, version))
        return (
            query,
            leaderboard(campaign=campaign, version=version, user=request.user, query=query),
            True,
        )
    except InvalidInput as exc:
        flash_error(request, exc)
        query = BoardQuery()
        return query, leaderboard(campaign=campaign, version=version, user=request.user), False


def _answers(
    request: HttpRequest, campaign: Campaign, version: QrelsVersion | None
) -> dict[str, Any] | None:
    """The answer runs' scores for the page (``?bank=N``: that nugget bank version), with the
    measures in the order the table shows them; None without an answer run."""
    raw = request.GET.get("bank", "")
    try:
        bank = parse_int(raw, "bank", minimum=1, maximum=MAX_ID) if raw else None
        board = answer_board_for(campaign=campaign, user=request.user, version=version, bank=bank)
    except DomainError as exc:
        return {"error": exc.message}
    if board is None:
        return None
    board["nugget_measures"] = list(NUGGET_MEASURES)
    board["support_measures"] = list(SUPPORT_MEASURES)
    board["corrected"] = latest_answer_reports(campaign, request.user)
    return board


@login_required
def leaderboard_page(request: HttpRequest, campaign_id: int) -> HttpResponseBase:
    _researcher(request)
    campaign = get_object_or_404(Campaign.objects.visible_to(request.user), pk=campaign_id)
    version = qrels_version_or_404(campaign, request.GET.get("qrels"))
    versions = QrelsVersion.objects.filter(campaign=campaign).latest_first()
    if version is None:
        return render(
            request,
            "results/leaderboard.html",
            {
                "campaign": campaign,
                "versions": versions,
                "new_runs": new_runs_note(campaign),
                "answers": _answers(request, campaign, None),
            },
        )
    query, board, valid = _page_board(request, campaign, version)
    if request.GET.get("format") == "csv" and valid:
        return csvfiles.download(
            exports.leaderboard_rows(board), f"leaderboard-qrels-v{version.number}.csv"
        )
    details = request.GET.get("details") == "1"
    base = _board_params(version, query, details="1" if details else "")
    measures = board["measures"]
    digits = 2
    sampled = bool(board.get("sampled"))
    for row in board["runs"]:
        # marked: a score that counts unjudged documents as not relevant, of a run scored
        # against a pool it did not help build (not pooled, or unjudged within its depth)
        outside = bool((row.get("pool_standing") or {}).get("outside"))
        cells: list[dict[str, Any] | None] = []
        for m in measures:
            e = (row.get("measures") or {}).get(m)
            if not e:
                cells.append(None)
                continue
            judged = (e.get("judged") or {}).get("value")
            ceiling = (e.get("ceiling") or {}).get("value")
            upper = ((e.get("treatments") or {}).get("upper") or {}).get("value")
            tip = [f"{m} {e['value']:.4f}"]
            if e.get("ci_low") is not None and e.get("ci_high") is not None:
                tip.append(f"95% CI [{e['ci_low']:.4f}, {e['ci_high']:.4f}]")
            if judged is not None:
                tip.append(f"judged {judged:.2f}")
            # an inferred measure (a sampled version's: no Judged@k) estimates judging the whole
            # pool; what a run outside the pool retrieved beyond it counts as not relevant
            marked = outside and (judged < 1.0 if judged is not None else sampled)
            if marked:
                tip.append(
                    f"scored against a pool it did not help build: {row['pool_standing']['why']}"
                )
            if ceiling is not None:
                tip.append(f"ceiling {ceiling:.3f}")
            if upper is not None and upper != e["value"]:
                tip.append(f"upper bound {upper:.3f}")
            cells.append(
                {
                    "value": e["value"],
                    "interval": [e.get("ci_low"), e.get("ci_high")],
                    "ceiling": ceiling,
                    "judged": judged,
                    "upper": upper,
                    "outside_pool": marked,
                    "title": " · ".join(tip),
                }
            )
        row["cells"] = cells
        row["state_text"] = STATE_TEXT.get(row["state"], row["state"])
    excluded = excluded_lines(board["runs"])
    headers = {
        "run": _sort_header("run", "Run", board, base),
        "group": _sort_header("group", "Group", board, base),
        "pooled": _sort_header("pooled", "Pooled", board, base),
        "measures": [
            {
                **_sort_header(m, m, board, base),
                "judged": _sort_header(f"{m}:judged", "judged", board, base),
            }
            for m in measures
        ],
    }
    toggle = {k: v for k, v in base.items() if k != "details"}
    if not details:
        toggle["details"] = "1"
    keep = [(k, v) for k, v in base.items() if k != "qrels"]
    honest = query.mode == EvalMode.HONEST
    # the other mode, same view: trec_eval's official figures or honest mode's
    other = {k: v for k, v in base.items() if k not in ("mode", "details")}
    if honest:
        other["mode"] = EvalMode.TREC_EVAL.value
    export_keep = [(k, v) for k, v in base.items() if k != "details"]
    return render(
        request,
        "results/leaderboard.html",
        {
            "answers": _answers(request, campaign, version),
            "campaign": campaign,
            "version": version,
            "versions": versions,
            "board": board,
            "measures": measures,
            "all_measures": list(campaign.measures),
            "query": query,
            "headers": headers,
            "details": details,
            "digits": digits,
            "details_href": "?" + urlencode(toggle),
            "csv_href": "?" + urlencode({**base, "format": "csv"}),
            "json_href": f"/api/v1/campaigns/{campaign.pk}/leaderboard/?"
            + urlencode({k: v for k, v in base.items() if k != "details"}),
            "export_keep": export_keep,
            # per-query values are stored in honest mode only: that form never asks for another
            "per_query_keep": [(k, v) for k, v in export_keep if k != "mode"],
            "nav_keep": keep,
            "honest": honest,
            "mode_switch_href": "?" + urlencode(other),
            "not_evaluated": sum(1 for r in board["runs"] if r["state"] == "missing"),
            # what the Compute button of trec_eval mode would ask for (honest mode is computed
            # when runs and qrels arrive; trec_eval mode on request)
            "computable": 0
            if honest
            else runs_without_evaluation(campaign, version, board["mode"], request.user).count(),
            "is_admin": is_admin(request.user),
            "show_group": bool(board["groups"]),
            "tests": [
                ("t", "paired t-test"),
                ("randomization", "randomization"),
                ("bootstrap", "bootstrap"),
            ],
            "corrections": [
                ("holm", "Holm"),
                ("bonferroni", "Bonferroni"),
                ("bh", "Benjamini-Hochberg"),
                ("none", "none"),
            ],
            "excluded": excluded,
            "new_runs": new_runs_note(campaign),
            "pool_depth": campaign.pool_depth,
            "depth_k": next(
                (r["pool_standing"]["k"] for r in board["runs"] if r.get("pool_standing")), None
            ),
        },
        status=200 if valid else 400,
    )


def _export_board(
    request: HttpRequest, campaign_id: int, formats: tuple[str, ...]
) -> tuple[Campaign, QrelsVersion, ExportOptions, dict[str, Any]]:
    _researcher(request)
    campaign = get_object_or_404(Campaign.objects.visible_to(request.user), pk=campaign_id)
    version = qrels_version_or_404(campaign, request.GET.get("qrels"))
    if version is None:
        raise Http404("no qrels version yet")
    options = export_options(request.GET, formats=formats)
    query = board_query(request.GET, board_measures(campaign, version))
    board = leaderboard(campaign=campaign, version=version, user=request.user, query=query)
    return campaign, version, options, board


def _back_to_board(request: HttpRequest, campaign_id: int, exc: InvalidInput) -> HttpResponse:
    """A bad export parameter: back to the leaderboard (same view) with the message naming it."""
    flash_error(request, exc)
    keep = {k: request.GET.get(k, "") for k in ("qrels", *BOARD_PARAMS) if request.GET.get(k)}
    url = reverse("leaderboard", args=[campaign_id])
    return redirect(f"{url}?{urlencode(keep)}" if keep else url)


def _download(text: str, fmt: str, name: str) -> HttpResponse:
    response = HttpResponse(text, content_type=exports.CONTENT_TYPES[fmt])
    response["Content-Disposition"] = content_disposition(name)
    return response


@login_required
@require_safe
def leaderboard_export_page(request: HttpRequest, campaign_id: int) -> HttpResponseBase:
    """The leaderboard as a file for a paper (CSV, LaTeX, Markdown), the page's view."""
    try:
        campaign, version, options, board = _export_board(request, campaign_id, exports.FORMATS)
        comparisons = baseline_comparisons(
            campaign=campaign, version=version, user=request.user, board=board, options=options
        )
    except InvalidInput as exc:
        return _back_to_board(request, campaign_id, exc)
    name = exports.filename(board, "leaderboard", options.format)
    if options.format == "csv":
        return csvfiles.download(exports.leaderboard_rows(board, options, comparisons), name)
    return _download(exports.leaderboard_export(board, options, comparisons), options.format, name)


@login_required
@require_safe
def per_query_page(request: HttpRequest, campaign_id: int) -> HttpResponseBase:
    """Per-query values of the runs the page's view shows, as CSV or trec_eval -q lines."""
    try:
        campaign, version, options, board = _export_board(
            request, campaign_id, exports.PER_QUERY_FORMATS
        )
        values = per_query_export_values(
            campaign=campaign,
            version=version,
            user=request.user,
            board=board,
            runs=[r for r in request.GET.getlist("run") if r],
        )
    except InvalidInput as exc:
        return _back_to_board(request, campaign_id, exc)
    name = exports.filename(board, "per-query", options.format)
    shape = (version.number, version.content_hash, values, version.kind_label)
    if options.format == "trec":
        return lines_download(exports.per_query_trec(*shape), name)
    return csvfiles.download(exports.per_query_rows(*shape), name)


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


@login_required
@require_POST
def leaderboard_evaluate(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """The board's Compute button in trec_eval mode: ask for the evaluation of every run of the
    user's (an admin's: every run) that has none in that mode, then show the board again."""
    _researcher(request)
    campaign = get_object_or_404(Campaign.objects.visible_to(request.user), pk=campaign_id)
    version = qrels_version_or_404(campaign, request.POST.get("qrels"))
    mode = _mode(request.POST.get("mode"))
    url = reverse("leaderboard", args=[campaign.pk])
    if version is None:
        flash(request, messages.WARNING, "There is no qrels version to evaluate against yet.")
        return redirect(url)
    with transaction.atomic():
        runs = list(runs_without_evaluation(campaign, version, mode, request.user))
        for run in runs:
            evaluation_request(run=run, version=version, mode=mode)
    left = runs_without_evaluation(campaign, version, mode).count()
    said = (
        f"{mode} mode asked for {len(runs)} run{'s' if len(runs) != 1 else ''}"
        f"{'' if is_admin(request.user) else ' of yours'} against qrels version {version.number}"
        " (the board shows each once computed)."
    )
    if left:
        said += (
            f" {left} other run{'s' if left != 1 else ''} ha{'s' if left == 1 else 've'} none:"
            " their owners or an admin ask for them."
        )
    flash(request, messages.INFO, said)
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
    if evaluation is not None and evaluation.state != JobState.PENDING:
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
        "penalty": None if run.pooled else run_penalty(run, request.user),
        "topups": run_topups_corrected(run) if not run.pooled or run.topups.exists() else None,
        "can_topup": is_admin(request.user),
        "topup_judges": judges_visible(request.user)
        .filter(campaign=run.campaign)
        .order_by("name", "-version"),
        "progress": progress,
        "refresh": progress is not None
        or (evaluation is not None and evaluation.state == JobState.PENDING),
    }
    if context["penalty"] is not None and context["penalty"]["status"] == "pending":
        context["refresh"] = True  # a late run's estimate is being computed
    if evaluation is not None and evaluation.state == JobState.DONE:
        result = upgraded_evaluation(evaluation.result)
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
    stored_or_404(None if evaluation is None else {"state": evaluation.state}, "no evaluation yet")
    assert evaluation is not None
    scale = recall_scale(request.GET.get("scale"))
    label = run_label(run, request.user)
    return _svg_response(
        _recall_svg(run, evaluation, label, scale),
        f"{recall_filename(run, evaluation, label, scale)}.svg",
        request.GET.get("download") == "1",
    )
