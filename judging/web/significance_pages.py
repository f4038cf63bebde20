"""The significance page: every pair of runs as a matrix (coloured by corrected significance and
effect size), or every run against one baseline; both download as CSV.

The page only translates the query string and renders: the tests are the selectors'
(``judging.evaluation.significance``). Bad parameters are a 400 with the problems listed."""

from __future__ import annotations

import math
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404, render
from django.utils.html import escape
from django.utils.http import urlencode
from django.utils.safestring import SafeString, mark_safe

from judging.assessments.models import QrelsVersion
from judging.campaigns.models import Campaign
from judging.core import csvfiles
from judging.core.errors import InvalidInput
from judging.core.roles import is_researcher
from judging.evaluation.exports import is_coverage
from judging.evaluation.significance import (
    CORRECTION_NAMES,
    TEST_NAMES,
    baseline_comparison,
    baseline_rows,
    pairs_rows,
    parse_runs,
    parse_top,
    significance_matrix,
)
from judging.web.results import qrels_version_or_404
from judging.web.submit_pages import new_runs_note
from judging.web.templatetags.pj_format import number, pvalue
from metrics.problems import Problem

# Above this many runs the matrix is compact (shorter numbers, smaller font, vertical headers).
COMPACT_ABOVE = 12
# The pair list is also shown on the page up to this many pairs (20 runs); beyond, the CSV.
PAIR_TABLE_MAX = 190
# |d_z| bounds of the colour shades: Cohen's small, medium, large.
EFFECT_STEPS = (0.2, 0.5, 0.8)
LEGEND = [
    ("sig-up-4", "row better, large effect (|d_z| ≥ 0.8)"),
    ("sig-up-3", "row better, medium (0.5 ≤ |d_z| < 0.8)"),
    ("sig-up-2", "row better, small (0.2 ≤ |d_z| < 0.5)"),
    ("sig-up-1", "row better, negligible (|d_z| < 0.2)"),
    ("sig-ns", "not significant"),
    ("sig-down-1", "row worse, negligible (|d_z| < 0.2)"),
    ("sig-down-2", "row worse, small"),
    ("sig-down-3", "row worse, medium"),
    ("sig-down-4", "row worse, large"),
]


def _researcher(request: HttpRequest) -> None:
    if not is_researcher(request.user):
        raise PermissionDenied("results are for researchers and admins")


def _shade(effect: float) -> int:
    size = abs(effect) if not math.isnan(effect) else 0.0
    return 1 + sum(size >= step for step in EFFECT_STEPS)


def _effect_text(effect: float) -> str:
    v = number(effect)
    if v is not None:
        return f"{v:+.2f}"
    if math.isnan(effect):
        return "not enough data"
    return "unbounded (every topic differs by the same amount)"


def _diff_text(diff: float, compact: bool) -> str:
    text = f"{diff:+.3f}"
    if float(text) == 0:
        text = "0.000"
    if compact:
        text = text.replace("0.", ".", 1)
    return text


def _matrix_body(matrix: dict[str, Any], compact: bool) -> SafeString:
    """The matrix's ``<tbody>`` rows, every cell with its text, title and colour class.

    Written here rather than by the template: a 127-run matrix has 16,129 cells, which the
    template engine takes seconds to render and this loop a fraction of one (every value
    escaped all the same)."""
    runs = matrix["runs"]
    corrected = f"p adjusted ({matrix['correction_name']})"
    alpha = matrix["alpha"]
    names = [escape(r["run"]) for r in runs]
    means = [f"{r['mean']:.4f}" for r in runs]
    parts: list[str] = []
    for i, row in enumerate(matrix["cells"]):
        parts.append(
            f'<tr><th scope="row" class="sig-run">{names[i]} '
            f'<span class="small muted">{runs[i]["mean"]:.3f}</span></th>'
        )
        for j, c in enumerate(row):
            if c is None:
                parts.append(f'<td class="sig-diag" title="{names[i]}">—</td>')
                continue
            better = c["diff"] > 0
            if c["significant"]:
                cls = f"sig-{'up' if better else 'down'}-{_shade(c['effect'])}"
                mark = " ▲" if better else " ▼"
                verdict = f"significant at alpha {alpha}"
            else:
                cls, mark, verdict = "sig-ns", "", f"not significant at alpha {alpha}"
            title = escape(
                f"{runs[i]['run']} ({means[i]}) vs {runs[j]['run']} ({means[j]}): difference "
                f"{_diff_text(c['diff'], False)}, p {pvalue(c['p'])}, {corrected} "
                f"{pvalue(c['p_adjusted'])}, effect d_z {_effect_text(c['effect'])}; {verdict}"
            )
            parts.append(
                f'<td class="{cls}" title="{title}" tabindex="0">'
                f"{_diff_text(c['diff'], compact)}{mark}</td>"
            )
        parts.append("</tr>")
    return mark_safe("".join(parts))


def _query(request: HttpRequest, **extra: str) -> str:
    params = [(k, v) for k, v in request.GET.lists() if k not in ("format", *extra)]
    flat = [(k, x) for k, vs in params for x in vs]
    flat += list(extra.items())
    return urlencode(flat)


@login_required
def compare_page(request: HttpRequest, campaign_id: int) -> HttpResponseBase:
    """``/campaigns/<id>/compare/``: the matrix (default) or, with ``baseline=``, the baseline
    table; ``format=csv`` downloads the pair list or the baseline table."""
    _researcher(request)
    campaign = get_object_or_404(Campaign.objects.visible_to(request.user), pk=campaign_id)
    version = qrels_version_or_404(campaign, request.GET.get("qrels"))
    q = request.GET
    test = q.get("test") or "t"
    correction = q.get("correction") or "holm"
    # coverage figures (Judged@k, ...) describe the judgments, not the runs: not offered here
    offered = [m for m in campaign.measures if not is_coverage(m)]
    measure = q.get("measure") or (offered[0] if offered else "")
    baseline = (q.get("baseline") or "").strip()
    fmt = q.get("format") or "html"
    context: dict[str, Any] = {
        "campaign": campaign,
        "version": version,
        "test": test,
        "correction": correction,
        "measure": measure,
        "baseline": baseline,
        "top": q.get("top") or "",
        "measures": offered,
        "tests": list(TEST_NAMES.items()),
        "corrections": [(k, v) for k, v in CORRECTION_NAMES.items() if k != "tukey"],
        "versions": QrelsVersion.objects.filter(campaign=campaign).latest_first(),
        "nav_keep": [
            (k, v)
            for k, v in (
                ("measure", measure),
                ("test", test),
                ("correction", correction),
                ("baseline", baseline),
                ("top", q.get("top") or ""),
            )
            if v
        ]
        + [("runs", r) for r in q.getlist("runs") if r],
        "new_runs": new_runs_note(campaign),
        "legend": LEGEND,
    }
    if version is None:
        return render(request, "results/compare.html", context)
    try:
        if fmt not in ("html", "csv"):
            raise InvalidInput(
                f"format: {fmt[:20]!r} is not one of html, csv",
                [Problem.at("format", f"{fmt[:20]!r} is not one of html, csv")],
            )
        runs = parse_runs(q.getlist("runs"))
        top = parse_top(q.get("top"))
        args: dict[str, Any] = {
            "campaign": campaign,
            "version": version,
            "measure": measure,
            "test": test,
            "correction": correction,
            "user": request.user,
            "runs": runs,
            "top": top,
        }
        if baseline:
            table = baseline_comparison(**args, baseline=baseline)
        else:
            matrix = significance_matrix(**args)
    except InvalidInput as exc:
        context["problems"] = [str(p) for p in exc.problems] or [exc.message]
        return render(request, "results/compare.html", context, status=400)
    if fmt == "csv":
        name = (
            f"significance-baseline-{version.number}.csv"
            if baseline
            else f"significance-pairs-qrels-v{version.number}.csv"
        )
        return csvfiles.download(baseline_rows(table) if baseline else pairs_rows(matrix), name)
    context["csv_query"] = _query(request, format="csv")
    if baseline:
        context["table"] = table
        context["selection"] = table["selection"]
        context["chosen"] = [r["run"] for r in table["rows"]] + [baseline]
        context["correction"] = table["correction"]
        context["api_query"] = _query(request, view="baseline")
        context["matrix_query"] = urlencode(
            {"qrels": version.number, "measure": measure, "test": test, "correction": correction}
        )
    else:
        compact = len(matrix["runs"]) > COMPACT_ABOVE
        context["matrix"] = matrix
        context["selection"] = matrix["selection"]
        context["chosen"] = [r["run"] for r in matrix["runs"]]
        context["correction"] = matrix["correction"]
        context["compact"] = compact
        context["matrix_body"] = _matrix_body(matrix, compact)
        context["pair_table"] = len(matrix["pairs"]) <= PAIR_TABLE_MAX
        context["api_query"] = _query(request, view="matrix")
    context["given"] = context["selection"]["how"] == "given"
    return render(request, "results/compare.html", context)
