"""Compare two runs: the topics sorted by A - B (each with a bar, its title and statement), and
one topic's two rankings side by side (``judging.evaluation.versus``). Every order and choice is
a link or a GET form: nothing needs JavaScript."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils.html import format_html
from django.utils.http import urlencode
from django.utils.safestring import SafeString

from judging.assessments.models import QrelsVersion
from judging.campaigns.models import Campaign
from judging.core.errors import InvalidInput
from judging.core.params import parse_int
from judging.core.roles import is_researcher
from judging.evaluation.versus import (
    TEST_NAMES,
    parse_tie,
    run_versus,
    topic_versus,
    versus_choices,
)
from judging.web.results import qrels_version_or_404
from judging.web.submit_pages import new_runs_note
from metrics.problems import Problem

BAR_WIDTH = 160
BAR_HEIGHT = 12
MAX_TEXT = 255


def _campaign(request: HttpRequest, campaign_id: int) -> Campaign:
    if not is_researcher(request.user):
        raise PermissionDenied("results are for researchers and admins")
    return get_object_or_404(Campaign.objects.visible_to(request.user), pk=campaign_id)


def _text(request: HttpRequest, name: str, default: str = "") -> str:
    raw = request.GET.get(name, "")
    if "\x00" in raw or len(raw) > MAX_TEXT:
        raise InvalidInput(
            f"{name}: not a usable value",
            [Problem.at(name, f"must be at most {MAX_TEXT} characters, without NUL")],
        )
    return raw or default


def _depth(request: HttpRequest) -> int | None:
    raw = request.GET.get("depth", "").strip()
    if not raw:
        return None
    try:
        return parse_int(raw, "depth", minimum=0, maximum=10**9 - 1)
    except InvalidInput:
        raise InvalidInput(
            "depth: not a whole number",
            [Problem.at("depth", f"must be a whole number, not {raw[:40]!r}")],
        ) from None


def diff_bar(diff: float, scale: float) -> SafeString:
    """A's gain (right, class ``gain``) or loss (left, ``loss``) on the topic, as a small SVG bar
    (no style attribute: the page's CSP allows none), ``scale`` the largest |A - B| shown."""
    half = BAR_WIDTH / 2
    length = 0.0 if scale <= 0 else min(1.0, abs(diff) / scale) * (half - 1)
    x = half if diff >= 0 else half - length
    kind = "gain" if diff > 0 else "loss" if diff < 0 else "even"
    return format_html(
        '<svg class="vs-bar" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" '
        'aria-label="A \u2212 B = {d}"><line class="axis" x1="{c}" y1="0" x2="{c}" y2="{h}"/>'
        '<rect class="{k}" x="{x}" y="2" width="{len}" height="{bh}"/></svg>',
        w=BAR_WIDTH,
        h=BAR_HEIGHT,
        c=f"{half:g}",
        d=f"{diff:+.4f}",
        k=kind,
        x=f"{x:.1f}",
        len=f"{length:.1f}",
        bh=BAR_HEIGHT - 4,
    )


def _query(**params: Any) -> str:
    return urlencode({k: v for k, v in params.items() if v not in (None, "")})


@login_required
def versus_page(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = _campaign(request, campaign_id)
    version = qrels_version_or_404(campaign, request.GET.get("qrels"))
    context: dict[str, Any] = {
        "campaign": campaign,
        "version": version,
        "versions": QrelsVersion.objects.filter(campaign=campaign).latest_first(),
        "measures": campaign.measures,
        "tests": list(TEST_NAMES.items()),
        "new_runs": new_runs_note(campaign),
    }
    if version is None:
        return render(request, "results/versus.html", context)
    choices = versus_choices(campaign=campaign, version=version, user=request.user)
    context["choices"] = choices
    status = 200
    try:
        a, b = _text(request, "a"), _text(request, "b")
        measure = _text(request, "measure")
        sort = _text(request, "sort", "diff")
        test = _text(request, "test", "t")
        tie = parse_tie(_text(request, "tie"))
        context.update(a=a, b=b, measure=measure, sort=sort, test=test, tie=tie)
        if len(choices) < 2 and not (a and b):
            context["too_few"] = True
        else:
            result = run_versus(
                campaign=campaign,
                version=version,
                a=a,
                b=b,
                measure=measure,
                user=request.user,
                sort=sort,
                test=test,
                tie=tie,
            )
            _decorate(result)
            context["result"] = result
            context.update(a=result["a"], b=result["b"], measure=result["measure"])
    except InvalidInput as exc:
        context["problems"] = [str(p) for p in exc.problems] or [exc.message]
        status = 400
    context["nav_keep"] = [
        (k, context.get(k))
        for k in ("a", "b", "measure", "sort", "test")
        if context.get(k) not in (None, "")
    ]
    return render(request, "results/versus.html", context, status=status)


def _decorate(result: dict[str, Any]) -> None:
    """Bars, topic links and the sort links of the table's headers."""
    scale = max((abs(r["diff"]) for r in result["topics"]), default=0.0)
    keep = {
        "a": result["a"],
        "b": result["b"],
        "measure": result["measure"],
        "qrels": result["qrels_version"],
        "test": result["test"],
        "tie": result["tie"] or "",
    }
    for r in result["topics"]:
        r["bar"] = diff_bar(r["diff"], scale)
        r["query"] = _query(**keep, sort=result["sort"])
    # a header sorts by its column, best first; clicked again, the reverse
    result["sort_links"] = {
        column: _query(**keep, sort=f"-{column}" if result["sort"] == column else column)
        for column in ("qid", "a", "b", "diff")
    }
    if result["sort"] == "-qid":
        result["sort_links"]["qid"] = _query(**keep, sort="qid")
    result["back_query"] = _query(**keep, sort=result["sort"])


@login_required
def versus_topic_page(request: HttpRequest, campaign_id: int, qid: str) -> HttpResponse:
    campaign = _campaign(request, campaign_id)
    version = qrels_version_or_404(campaign, request.GET.get("qrels"))
    context: dict[str, Any] = {
        "campaign": campaign,
        "version": version,
        "versions": QrelsVersion.objects.filter(campaign=campaign).latest_first(),
        "qid": qid,
        "new_runs": new_runs_note(campaign),
    }
    if version is None:
        return render(request, "results/versus_topic.html", context)
    status = 200
    try:
        result = topic_versus(
            campaign=campaign,
            version=version,
            a=_text(request, "a"),
            b=_text(request, "b"),
            qid=qid,
            depth=_depth(request),
            user=request.user,
            measure=_text(request, "measure"),
            sort=_text(request, "sort", "diff"),
        )
    except InvalidInput as exc:
        context["problems"] = [str(p) for p in exc.problems] or [exc.message]
        status = 400
    else:
        keep = {
            "a": result["a"],
            "b": result["b"],
            "measure": result["measure"],
            "qrels": result["qrels_version"],
            "sort": result["sort"],
        }
        depth = result["depth"] if request.GET.get("depth") else ""
        result["query"] = _query(**keep, depth=depth)
        result["back_query"] = _query(**keep)
        result["rows"] = _aligned(result["columns"])
        context["result"] = result
        context["nav_keep"] = [(k, v) for k, v in keep.items() if k != "qrels"]
    return render(request, "results/versus_topic.html", context, status=status)


def _aligned(columns: list[dict[str, Any]]) -> list[tuple[Any, Any]]:
    """The two columns' rows paired by rank (a shorter ranking leaves blanks)."""
    left, right = columns[0]["rows"], columns[1]["rows"]
    n = max(len(left), len(right))
    return [
        (left[i] if i < len(left) else None, right[i] if i < len(right) else None) for i in range(n)
    ]
