"""The pooling-bias page: the estimated penalty of the non-pooled runs (every estimator, with its
error measured on this campaign), before/after re-pooling on the topics both qrels versions can
score, the reusability verdict of the qrels version, leave-one-out scatter and deltas, Judged@10
coverage and pooling efficiency. Charts are server SVG.

The page shows the stored report; one never requested gets a Compute button (a POST). Its
filters (qrels version, measure, topics, depth, leave-out unit) are all in the URL, so a page is
shareable, and the chart links carry them too. A bad filter is a 400 page naming it. Without
filters it analyses the campaign's pooled topics at its pool depth (``evaluation.bias``'s
defaults), and it says which topics and depth it analyses."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_POST

from judging.assessments.models import QrelsVersion
from judging.autojudge.hybrid import hybrid_shift
from judging.campaigns.models import Campaign
from judging.campaigns.selectors import run_label, sees_run
from judging.core.downloads import content_disposition
from judging.core.errors import DomainError, InvalidInput, RateLimited
from judging.core.models import JobState
from judging.core.params import parse_int
from judging.core.roles import UserLike, account, is_researcher
from judging.evaluation.bias import (
    ALL_TOPICS,
    bias_params,
    bias_report_request,
    headline_measure,
)
from judging.evaluation.models import BiasKind
from judging.evaluation.penalty import interval_words
from judging.evaluation.selectors import bias_report, reusability_report
from judging.web import charts
from judging.web.flash import flash, flash_error
from judging.web.results import qrels_version_or_404
from judging.web.stored import stored_or_404
from metrics.problems import Problem

MEASURES = ("AP", "P@10", "R@100", "nDCG@10", "Bpref")
STRATEGY_LABELS = {
    "docid": "docid order (unordered depth-k judging)",
    "rank": "rank order",
    "mtf": "Move-to-Front",
    "hedge": "Hedge (beta 0.1)",
}
# the estimators in the order the page lists them (a report may name others: they follow)
ESTIMATOR_LABELS = {
    "pool": "No correction (the score the pool gives)",
    "webber_park": "Webber & Park 2009 (mean leave-one-out delta)",
    "lipani2015": "Lipani, Lupu & Hanbury 2015 (anti-precision)",
    "lipani2016": "Lipani et al. 2016 (per-topic refinement)",
    "condensed": "Condensed list (Sakai 2007, unjudged removed)",
    "upper": "Upper bound (unjudged in the top k counted relevant)",
}


@dataclass
class Filters:
    """What the page is asked for, as given (``raw_*``, shown again in the form) and as checked.
    ``error`` holds the first bad parameter's InvalidInput (then nothing else is looked up)."""

    version: QrelsVersion | None
    measure: str
    depth: int
    kind: str
    topics: str = ""  # the normalised spec ("" = every topic)
    topic_ids: list[str] = field(default_factory=list)
    raw_measure: str = ""
    raw_depth: str = ""
    raw_topics: str = ""
    error: InvalidInput | None = None
    pooled_topics: str = ""  # the campaign's (what no topics parameter means)
    pool_depth: int = 0  # the campaign's (what no depth parameter means)

    @property
    def topics_param(self) -> str:
        """The ``topics`` parameter that asks for these topics again ("": the default)."""
        if self.topics == self.pooled_topics:
            return self.topics
        return self.topics or ALL_TOPICS

    def query(self) -> dict[str, Any]:
        """The URL parameters that reproduce this page (topics only when filtered)."""
        out: dict[str, Any] = {
            "qrels": self.version.number if self.version else "",
            "measure": self.measure,
            "depth": self.depth,
            "kind": self.kind,
        }
        if self.topics_param:
            out["topics"] = self.topics_param
        return out


def _filters(campaign: Campaign, query: QueryDict) -> Filters:
    version = qrels_version_or_404(campaign, query.get("qrels"))
    raw_depth = (query.get("depth") or "").strip()
    raw_measure = (query.get("measure_other") or "").strip() or (query.get("measure") or "").strip()
    raw_topics = (query.get("topics") or "").strip()
    kind = query.get("kind") or BiasKind.LOO_RUN
    f = Filters(
        version=version,
        measure=raw_measure or headline_measure(campaign),
        depth=campaign.pool_depth,
        kind=kind,
        raw_measure=raw_measure,
        raw_depth=raw_depth,
        raw_topics=raw_topics,
        pooled_topics=campaign.pooled_topics,
        pool_depth=campaign.pool_depth,
    )
    try:
        depth: int | None = None
        if raw_depth:
            try:
                depth = parse_int(raw_depth, "depth")
            except InvalidInput:
                raise InvalidInput(
                    "depth must be a whole number",
                    [Problem.at("depth", f"must be a whole number, not {raw_depth[:40]!r}")],
                ) from None
        params = bias_params(campaign, measure=f.measure, depth=depth, kind=kind, topics=raw_topics)
        f.measure, f.depth, f.kind = params.measure, params.depth, params.kind
        f.topics, f.topic_ids = params.topics, params.topic_ids
    except InvalidInput as exc:
        f.error = exc
        if raw_depth.isdigit():
            f.depth = int(raw_depth)
    return f


def _campaign(request: HttpRequest, campaign_id: int) -> Campaign:
    if not is_researcher(request.user):
        raise PermissionDenied("results are for researchers and admins")
    campaign: Campaign = get_object_or_404(
        Campaign.objects.visible_to(request.user), pk=campaign_id
    )
    return campaign


def _stored_report(campaign: Campaign, f: Filters, user: UserLike) -> dict[str, Any] | None:
    """The stored report as the user may see it (None: never requested). Never computes."""
    if f.version is None or f.error is not None:
        return None
    try:
        return bias_report(
            campaign=campaign,
            version=f.version,
            user=user,
            measure=f.measure,
            depth=f.depth,
            kind=f.kind,
            topics=f.topics_param,
        )
    except DomainError as exc:
        raise Http404(exc.message) from None


@login_required
@require_POST
def bias_compute(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """The Compute button: request the report for the form's parameters, then show the page.
    A user's new reports per hour are limited (POOLJUDGE_BIAS_REPORTS_PER_HOUR): beyond, the page
    says so and when to try again."""
    url = reverse("bias", args=[campaign_id])
    campaign = _campaign(request, campaign_id)
    f = _filters(campaign, request.POST)
    if f.error is not None:
        flash_error(request, f.error)
        return redirect(url)
    version = f.version
    if version is None:
        flash(request, messages.WARNING, "There is no qrels version to analyse yet.")
        return redirect(url)
    try:
        bias_report_request(
            campaign=campaign,
            qrels=version,
            measure=f.measure,
            depth=f.depth,
            kind=f.kind,
            topics=f.topics_param,
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
    return redirect(f"{url}?{urlencode(f.query())}")


# --- charts -----------------------------------------------------------------------------------


def _title_suffix(report: dict[str, Any]) -> str:
    topics = (report["result"].get("topics") or {}).get("spec") or ""
    digest = str(report.get("qrels_hash") or "")[:12]
    return (
        f"qrels v{report['qrels_version']}"
        + (f" {digest}" if digest else "")
        + (f", topics {topics}" if topics else "")
    )


def _with_hash(report: dict[str, Any] | None, version: QrelsVersion | None) -> Any:
    """The report with its qrels version's content hash, which the charts' titles state."""
    if report is None or version is None or report.get("qrels_version") != version.number:
        return report
    return {**report, "qrels_hash": version.content_hash}


def _scatter_points(report: dict[str, Any]) -> tuple[list[charts.Point], str]:
    """Pooled runs: score with vs without them in the pool. Non-pooled runs: the recommended
    estimator's estimated score if pooled vs the score they get (the old report's Webber & Park
    estimate when there is no estimator section). Returns the points and how the estimate is
    made."""
    result = report["result"]
    loo = result.get("loo", {})
    points = [
        charts.Point(r["score"], r["score_without"], t)
        for t, r in loo.get("runs", {}).items()
        if r.get("score") is not None and r.get("score_without") is not None
    ]
    section = _estimator_section(result)
    if section is not None and section["scatter_estimator"]:
        name = section["scatter_estimator"]
        for run in section["runs"]:
            row = next((r for r in run["rows"] if r["name"] == name), None)
            if row and row.get("estimate") is not None and run.get("score") is not None:
                points.append(
                    charts.Point(row["estimate"], run["score"], f"{run['run']} (not pooled)", True)
                )
        how = section["scatter_label"]
        if name == "pool":
            how = f"{how}: the score as it is"
    else:
        for tag, p in (result.get("penalty") or {}).get("runs", {}).items():
            if p.get("estimated_score") is not None and p.get("score") is not None:
                points.append(
                    charts.Point(p["estimated_score"], p["score"], f"{tag} (not pooled)", True)
                )
        how = ESTIMATOR_LABELS["webber_park"]
    return points, how


def _scatter(report: dict[str, Any], *, key: bool = False) -> str:
    """The leave-one-out scatter; ``key``: with the numbers' key in the SVG (for a download)."""
    points, how = _scatter_points(report)
    return charts.scatter(
        points,
        title=f"Leave-one-out, {report['measure']} at depth {report['depth']} "
        f"({_title_suffix(report)})",
        x_label=f"{report['measure']} with the run in the pool",
        y_label=f"{report['measure']} with the run left out",
        point_label="pooled run: with vs without it in the pool",
        highlight_label=f"not pooled: estimate if pooled ({how}) vs as scored",
        key=key,
    )


def scatter_key(report: dict[str, Any]) -> list[charts.KeyRow]:
    """The scatter's numbered points and what they stand for (empty: labelled directly)."""
    return charts.scatter_key(_scatter_points(report)[0])


def _deltas(report: dict[str, Any]) -> str:
    runs = report["result"].get("loo", {}).get("runs", {})
    items = sorted(
        ((t, r.get("delta"), False) for t, r in runs.items()),
        key=lambda item: -(item[1] if item[1] is not None else -math.inf),
    )
    return charts.bars(
        items,
        title=f"What being in the pool is worth: {report['measure']} delta "
        f"per pooled run ({_title_suffix(report)})",
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
        f"({_title_suffix(report)} as oracle, depth {eff.get('depth')})",
        x_label="judgments made per topic",
        y_label="relevant found (mean per topic)",
    )


def _reusability_svg(version_number: int, result: dict[str, Any]) -> str:
    eff = result.get("efficiency") or {}
    return charts.line_chart(
        [
            charts.Series(
                "relevant found per judgment at this depth",
                eff.get("depths", []),
                eff.get("relevant_per_judgment", []),
            )
        ],
        title=f"Pooling efficiency by rank depth (qrels v{version_number}, "
        f"{result.get('n_pooled', '?')} pooled runs)",
        x_label="pool depth",
        y_label="relevant per judgment",
        size=(520, 320),
    )


def _scatter_download(report: dict[str, Any]) -> str:
    return _scatter(report, key=True)


CHARTS = {"scatter": _scatter_download, "deltas": _deltas}


def chart_name(chart: str, measure: str, version_number: int | str) -> str:
    """A chart's download name, without extension: the chart, the measure, the qrels version."""
    return f"{chart}-{measure}-qrels-v{version_number}"


# --- sections ---------------------------------------------------------------------------------


def _label(name: str, info: dict[str, Any]) -> str:
    return str(info.get("label") or ESTIMATOR_LABELS.get(name, name))


UNFOLDED_ESTIMATE_RUNS = 5


def _estimator_section(result: dict[str, Any]) -> dict[str, Any] | None:
    """The estimators of the penalty (``result["estimators"]``), laid out for the page: per
    non-pooled run one row per applicable estimator (estimate, penalty, its % of the run's own
    score, the interval it rests on, and the estimator's measured error), the recommended one
    first; the estimators that do not apply, with why."""
    est = result.get("estimators")
    if not isinstance(est, dict) or not isinstance(est.get("estimators"), dict):
        return None
    info: dict[str, dict[str, Any]] = est["estimators"]
    order = [n for n in ESTIMATOR_LABELS if n in info] + [
        n for n in info if n not in ESTIMATOR_LABELS
    ]
    applicable = [n for n in order if info[n].get("applicable", True)]
    # best measured first (the lowest MAE; one not measured last), the recommended one on top
    applicable.sort(key=lambda n: (info[n].get("mae") is None, info[n].get("mae") or 0.0))
    recommended = est.get("recommended") if est.get("recommended") in applicable else None
    if recommended:
        applicable.remove(recommended)
        applicable.insert(0, recommended)
    errors = [
        {"name": n, "label": _label(n, info[n]), "recommended": n == recommended, **info[n]}
        for n in applicable
    ]
    runs = []
    for tag, run in sorted((est.get("not_pooled") or {}).items()):
        estimates = run.get("estimates") or {}
        rows = []
        for n in applicable:
            e = estimates.get(n)
            if not isinstance(e, dict) or e.get("applicable") is False:
                continue
            rows.append(
                {
                    "name": n,
                    "label": _label(n, info[n]),
                    "recommended": n == recommended,
                    "error": info[n],
                    **e,
                }
            )
        # the estimator recommended for runs as novel as this one, else the one recommended
        # over every left-out run (the basis says which)
        mine = run.get("recommended")
        headline = next((r for r in rows if r["name"] == mine), None) or next(
            (r for r in rows if r["recommended"]), None
        )
        for r in rows:
            r["interval_words"] = interval_words(r, run.get("bounds"))
        # when no correction is recommended, the best-measured one is still worth a sentence
        corrections = sorted(
            (r for r in rows if r["name"] != "pool" and r["error"].get("mae") is not None),
            key=lambda r: r["error"]["mae"],
        )
        runs.append(
            {
                "run": tag,
                "score": run.get("score"),
                "judged": run.get("judged"),
                "unjudged": run.get("unjudged"),
                "top_k": run.get("top_k"),
                "n_topics": len(est.get("topics") or []),
                "bounds": run.get("bounds"),
                "bounds_exact": run.get("bounds_exact"),
                "for_this_run": bool(mine and headline and headline["name"] == mine),
                "recommended_why": run.get("recommended_why") or "",
                "rows": rows,
                "headline": headline,
                "best_correction": corrections[0] if corrections else None,
            }
        )
    scatter_estimator = recommended or ("webber_park" if "webber_park" in applicable else None)
    harness = [
        {
            "run": tag,
            "unit": r.get("unit", ""),
            "score": r.get("score"),
            "score_full_pool": r.get("score_full_pool"),
            "estimates": [r.get(n) for n in applicable],
        }
        for tag, r in sorted(
            (est.get("runs") or {}).items(),
            key=lambda item: -(item[1].get("score_full_pool") or 0.0),
        )
    ]
    unit = est.get("leave_out") or "run"
    return {
        "measure": est.get("measure"),
        "depth": est.get("depth"),
        "novelty_k": est.get("novelty_k"),
        "by_novelty": _novelty_table(est, applicable, info),
        "unit": unit,
        "n_units": est.get("n_units"),
        "top75": est.get("top75"),
        "recommended": recommended,
        "recommended_label": _label(recommended, info[recommended]) if recommended else "",
        "recommended_why": est.get("recommended_why") or "",
        "errors": errors,
        "not_applicable": [
            {
                "name": n,
                "label": _label(n, info[n]),
                "why": info[n].get("why") or "not defined for this measure",
            }
            for n in order
            if not info[n].get("applicable", True)
        ],
        "runs": runs,
        # many runs not pooled (TREC 2011 Medical: 86): one summary row each, the tables of every
        # estimator folded, or the page grows by a table a run
        "fold": len(runs) > UNFOLDED_ESTIMATE_RUNS,
        "deltas": est.get("deltas") or {},
        "harness": harness,
        "harness_names": [_label(n, info[n]) for n in applicable],
        "scatter_estimator": scatter_estimator,
        "scatter_label": _label(scatter_estimator, info[scatter_estimator])
        if scatter_estimator
        else "",
    }


def _link_runs(section: dict[str, Any], campaign: Campaign, user: UserLike) -> None:
    """Each not-pooled run the user may see by name gets its page's id (its top-up is there)."""
    ids = {
        run_label(r, user): r.pk
        for r in campaign.runs.only("pk", "campaign", "tag", "name", "owner")
        if sees_run(r, user)
    }
    for run in section["runs"]:
        run["run_id"] = ids.get(run["run"])


def _novelty_table(
    est: dict[str, Any], applicable: list[str], info: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    """Per estimator, its error on the left-out runs of each Judged@k bin."""
    by = est.get("by_novelty") or {}
    return [
        {"label": _label(n, info[n]), "bins": by[n]}
        for n in applicable
        if isinstance(by.get(n), list) and by[n]
    ]


def _penalty_fallback(result: dict[str, Any]) -> dict[str, Any] | None:
    """Old stored reports carry only Webber & Park's ``penalty``: its rows, each penalty also as
    a percentage of that run's own score (not the pooled runs' mean percentage delta)."""
    penalty = result.get("penalty")
    if not isinstance(penalty, dict) or not penalty.get("runs"):
        return None
    rows = []
    for tag, p in sorted(penalty["runs"].items()):
        score, pen = p.get("score"), p.get("estimated_penalty")
        pct = 100.0 * pen / score if score and pen is not None else None
        rows.append({"run": tag, **p, "penalty_pct": pct})
    return {"rows": rows, "basis": penalty.get("basis") or {}}


def _recall_words(delta: Any, change: str | None) -> tuple[str, float | None]:
    """What a run's recall did: ("drop" | "gain" | "no change", the size) from its signed
    change; the stored word is used only when it agrees with the sign."""
    if delta is None or not isinstance(delta, (int, float)) or not math.isfinite(delta):
        return (change or "not enough data"), None
    word = "drop" if delta < 0 else "gain" if delta > 0 else "no change"
    return word, abs(delta)


def _before_after_section(result: dict[str, Any]) -> dict[str, Any] | None:
    ba = result.get("before_after")
    if not isinstance(ba, dict) or not isinstance(ba.get("runs"), dict):
        return None
    labels = ba.get("labels") or [f"v{ba.get('from')}", f"v{ba.get('to')}"]
    rows = []
    for tag, r in ba["runs"].items():
        word, size = _recall_words(r.get("recall_delta"), r.get("recall_change"))
        rows.append({"run": tag, **r, "recall_word": word, "recall_size": size})
    rows.sort(key=lambda r: (r.get("rank_b") is None, r.get("rank_b") or 0, r["run"]))
    new_rows = sorted(
        (
            {"run": r["run"], "novel": r.get("novel"), **r["new_topics"]}
            for r in rows
            if isinstance(r.get("new_topics"), dict)
        ),
        key=lambda r: (r.get("rank_b") is None, r.get("rank_b") or 0, r["run"]),
    )
    novel = [
        {
            "run": tag,
            "gain": gain,
            "ci": (ba["runs"].get(tag) or {}).get("delta_ci"),
            "p": (ba["runs"].get(tag) or {}).get("delta_p"),
        }
        for tag, gain in (ba.get("novel_gain") or {}).items()
    ]
    topics = ba.get("topics") if isinstance(ba.get("topics"), dict) else None
    return {
        **{k: v for k, v in ba.items() if k != "runs"},
        "labels": labels,
        "rows": rows,
        "new_rows": new_rows,
        "novel": novel,
        "same_topics": topics is not None,
        "n_compared": len(topics.get("compared", [])) if topics else None,
        "new_topics": topics.get("only_b", []) if topics else [],
        "ci_pct": round(100 * float(ba.get("ci_level") or 0.95)),
    }


def _said_before(
    campaign: Campaign, before: dict[str, Any], f: Filters, user: UserLike
) -> list[dict[str, Any]]:
    """What each estimator had said, under the earlier version, of the runs it had not
    pooled, beside their score once judged (the later version, on the same topics): whether
    the 95% interval held it. Empty when the earlier report did not analyse the same topics."""
    earlier_version = QrelsVersion.objects.filter(campaign=campaign, number=before["from"]).first()
    if earlier_version is None or not before.get("same_topics"):
        return []
    earlier = bias_report(
        campaign=campaign,
        version=earlier_version,
        user=user,
        measure=f.measure,
        depth=f.depth,
        kind=f.kind,
        topics=f.topics_param,
    )
    est = ((earlier or {}).get("result") or {}).get("estimators") or {}
    compared = (before.get("topics") or {}).get("compared") or []
    if not est or sorted(est.get("topics") or []) != sorted(compared):
        return []
    info = est.get("estimators") or {}
    out = []
    for row in before["rows"]:
        entry = (est.get("not_pooled") or {}).get(row["run"])
        measured = row.get("score_b")
        if not entry or measured is None:
            continue
        for name, e in (entry.get("estimates") or {}).items():
            interval = e.get("interval")
            held = (
                None
                if not interval or None in interval or e.get("interval_method") is None
                else interval[0] - 1e-12 <= measured <= interval[1] + 1e-12
            )
            out.append(
                {
                    "run": row["run"],
                    "label": _label(name, info.get(name) or {}),
                    "estimate": e.get("estimate"),
                    "interval": interval,
                    "measured": measured,
                    "off": None if e.get("estimate") is None else measured - e["estimate"],
                    "held": held,
                }
            )
    return out


def _reusability_section(version: QrelsVersion | None, user: UserLike) -> dict[str, Any] | None:
    """The qrels version's stored reusability report (``evaluation.selectors``), laid out;
    ``{"state": "missing"}`` when never computed, None without a version or on a sampled one
    (the analysis does not apply: the page says so)."""
    if version is None or version.design:
        return None
    stored = reusability_report(version, user)
    if stored is None:
        return {"state": "missing", "version": version}
    out: dict[str, Any] = {**stored, "version": version}
    result = stored.get("result")
    if stored.get("state") == JobState.DONE and isinstance(result, dict):
        total = (result.get("relevant") or {}).get("total") or 0
        out["unique_rows"] = sorted(
            (
                {
                    "unit": unit,
                    "count": n,
                    "share_pct": (100.0 * n / total) if total else None,
                }
                for unit, n in (result.get("unique_relevant") or {}).items()
            ),
            key=lambda r: (-(r["count"] or 0), r["unit"]),
        )
        out["judged_rows"] = sorted(
            ({"k": k, **v} for k, v in (result.get("judged") or {}).items() if isinstance(v, dict)),
            key=lambda r: int(r["k"]) if str(r["k"]).isdigit() else 0,
        )
        per_topic = result.get("per_topic") or {}
        out["shallow_rows"] = [
            {"qid": q, **(per_topic.get(q) or {})} for q in result.get("shallow_topics") or []
        ]
        out["unit"] = result.get("leave_out") or "group"
        if (result.get("efficiency") or {}).get("depths"):
            out["svg"] = _reusability_svg(version.number, result)
            out["name"] = chart_name("reusability", "depth", version.number)
    return out


def _measure_options(campaign: Campaign, current: str) -> list[str]:
    seen: list[str] = []
    for m in [*campaign.measures, *MEASURES, current]:
        if m and m not in seen and not m.startswith(("Judged", "Unjudged", "NumR", "ceiling")):
            seen.append(m)
    return seen


@login_required
def bias_page(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = _campaign(request, campaign_id)
    f = _filters(campaign, request.GET)
    report = _with_hash(_stored_report(campaign, f, request.user), f.version)
    context: dict[str, Any] = {
        "campaign": campaign,
        "report": report,
        "f": f,
        "version": f.version,
        "measure": f.measure,
        "depth": f.depth,
        "kind": f.kind,
        "query_string": urlencode(f.query()),
        "nav_keep": [(k, v) for k, v in f.query().items() if k != "qrels"],
        "versions": QrelsVersion.objects.filter(campaign=campaign).latest_first(),
        "measures": _measure_options(campaign, f.measure),
        "kinds": BiasKind.choices,
    }
    if f.error is not None:
        context["problems"] = [str(p) for p in f.error.problems] or [f.error.message]
        return render(request, "results/bias.html", context, status=400)
    context["reuse"] = _reusability_section(f.version, request.user)
    if f.version is not None:
        context["hybrid"] = hybrid_shift(hybrid=f.version, user=request.user, measure=f.measure)
    if report is not None and report["state"] == JobState.DONE:
        # run tags in the result are already what this user may see of them
        result = report["result"]
        context["estimators"] = _estimator_section(result)
        if context["estimators"] is not None:
            _link_runs(context["estimators"], campaign, request.user)
        if context["estimators"] is None:
            context["penalty"] = _penalty_fallback(result)
        if "loo" in result:
            context["scatter_svg"] = _scatter(report)
            context["scatter_key"] = scatter_key(report)
            context["scatter_name"] = chart_name(
                "scatter", report["measure"], report["qrels_version"]
            )
            context["deltas_name"] = chart_name(
                "deltas", report["measure"], report["qrels_version"]
            )
            context["deltas_svg"] = _deltas(report)
            context["loo_rows"] = sorted(
                ({"run": t, **r} for t, r in result["loo"]["runs"].items()),
                key=lambda r: r["rank"],
            )
        if result.get("efficiency"):
            context["efficiency_svg"] = _efficiency(report)
            context["efficiency_name"] = chart_name(
                "efficiency", report["measure"], report["qrels_version"]
            )
        coverage = result.get("coverage", {})
        context["coverage_rows"] = sorted(
            (
                {"run": t, "mean": c["mean"], "pooled": c["pooled"]}
                for t, c in coverage.get("runs", {}).items()
            ),
            key=lambda r: (r["mean"] is None, -(r["mean"] or 0)),
        )
        context["before"] = _before_after_section(result)
        if context["before"] is not None:
            context["before"]["said"] = _said_before(campaign, context["before"], f, request.user)
        topics = result.get("topics")
        context["analysed_topics"] = topics.get("analysed") if isinstance(topics, dict) else None
    return render(request, "results/bias.html", context)


@login_required
def bias_chart(request: HttpRequest, campaign_id: int, chart: str) -> HttpResponse:
    campaign = _campaign(request, campaign_id)
    f = _filters(campaign, request.GET)
    if f.error is not None:
        return HttpResponse(
            f"{f.error.message}\n", status=400, content_type="text/plain; charset=utf-8"
        )
    if chart == "reusability":
        reuse = _reusability_section(f.version, request.user)
        if not reuse or "svg" not in reuse:
            raise Http404("no reusability report for this qrels version")
        svg, number, measure = reuse["svg"], reuse["version"].number, "depth"
    else:
        report = stored_or_404(
            _with_hash(_stored_report(campaign, f, request.user), f.version),
            "the report is not ready",
        )
        if chart == "efficiency":
            svg = _efficiency(report)
        elif chart in CHARTS and "loo" in report["result"]:
            svg = CHARTS[chart](report)
        else:
            raise Http404("no such chart")
        number, measure = report["qrels_version"], report["measure"]
    response = HttpResponse(svg, content_type="image/svg+xml")
    if request.GET.get("download") == "1":
        response["Content-Disposition"] = content_disposition(
            f"{chart_name(chart, measure, number)}.svg"
        )
    return response
