"""Reads of stored evaluations and bias reports that the API and the pages share: a run's
evaluations, leaderboards (and their CSV), significance tables, bias reports with other
researchers' runs anonymised. Nothing here computes anything or writes a row: evaluations and
reports are computed by tasks, on events or on an explicit request (a POST)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from django.conf import settings
from django.db.models import QuerySet
from django.db.models.fields.json import KeyTransform

from judging.assessments.models import QrelsVersion
from judging.campaigns.models import Campaign, Run, Topic
from judging.campaigns.selectors import (
    group_labels,
    run_label,
    run_labels,
    sees_run,
    visible_tags,
)
from judging.core import jobs
from judging.core.errors import InvalidInput
from judging.core.models import JobState
from judging.core.roles import UserLike
from judging.evaluation import exports
from judging.evaluation.bias import bias_params, run_names
from judging.evaluation.board import BoardQuery, apply_query, check_filters, describe
from judging.evaluation.models import (
    BiasReport,
    EvalMode,
    Evaluation,
    Reusability,
    measures_key,
)
from judging.evaluation.results import (
    SENTENCES_AS_PARTS,
    read_bias_result,
    read_evaluation_result,
    read_reusability_result,
    upgraded_evaluation,
)
from judging.evaluation.services import qrels_evaluation_key, run_evaluation_key
from judging.evaluation.standing import pool_standing
from metrics.measures.names import parse_measure, parse_measures
from metrics.measures.sampled_registry import inferred_set
from metrics.problems import Problem
from metrics.results import render
from metrics.stats.paired import BaselineComparison, compare_runs, compare_to_baseline


def run_evaluations(run: Run) -> QuerySet[Evaluation]:
    """Every stored evaluation of the run, by qrels version and mode."""
    return (
        Evaluation.objects.filter(run=run)
        .select_related("qrels", "run", "job")
        .order_by("qrels__number", "mode")
    )


def run_evaluation(run: Run, version: QrelsVersion, mode: str) -> Evaluation | None:
    """The run's evaluation on the campaign's measures against ``version`` in ``mode``, if it
    was ever requested (it may still be pending, or have failed)."""
    return (
        Evaluation.objects.filter(
            run=run, qrels=version, mode=mode, measures_key=measures_key(run.campaign.measures)
        )
        .select_related("qrels", "job")
        .first()
    )


def runs_without_evaluation(
    campaign: Campaign, version: QrelsVersion, mode: str, user: UserLike | None = None
) -> QuerySet[Run]:
    """The campaign's runs that have no evaluation against ``version`` in ``mode``, or only a
    failed one: those ``user`` may ask evaluations for (their own; an admin every one), or every
    one without a user."""
    asked = Evaluation.objects.filter(qrels=version, mode=mode).exclude(job__state=JobState.FAILED)
    runs = Run.objects.all() if user is None else Run.objects.visible_to(user)
    return runs.filter(campaign=campaign).exclude(pk__in=asked.values("run_id")).order_by("pk")


def evaluation_as_dict(evaluation: Evaluation, user: UserLike) -> dict[str, Any]:
    """The stored evaluation (``evaluation.results.EvaluationResult``; empty until done), its
    run named as the user may see it (``run_label``)."""
    result: dict[str, Any] = {}
    if evaluation.result:
        viewer = ReportViewer({evaluation.run.tag: run_label(evaluation.run, user)}, set(), {})
        result = render(read_evaluation_result(evaluation.result), viewer)
    return {
        "qrels_version": evaluation.qrels.number,
        "qrels_kind": evaluation.qrels.kind_label,
        "qrels_hash": evaluation.qrels.content_hash,
        "mode": evaluation.mode,
        "state": evaluation.state,
        "error": evaluation.error,
        "measures": evaluation.measures,
        "computed_at": evaluation.computed_at,
        "result": result,
        "slices": evaluation.slices,
        "recall_curve": evaluation.curve,
    }


def leaderboard(
    *,
    campaign: Campaign,
    version: QrelsVersion,
    user: UserLike,
    query: BoardQuery | None = None,
) -> dict[str, Any]:
    """Every run's aggregates under one qrels version (never mixed with another version), in
    the view ``query`` asks for (``evaluation.board``: its mode, sort and filters; None: honest
    mode, every run, every measure, sorted by the first measure, best first). With a topic
    slice the scores are that slice's stored aggregates (``Evaluation.slices``: mean and CI
    over the topics carrying the tag). The answer says what it is sorted and filtered by
    (``sorted_by``, ``order``, ``filters``, ``view``) and how many runs it shows of how many
    (``shown``, ``total``). Each evaluated run says whether it is scored against a pool it did
    not help build (``pool_standing``, ``evaluation.standing``: not pooled, or unjudged
    documents within the campaign's pool depth)."""
    query = query or BoardQuery()
    mode = query.mode
    key = measures_key(list(campaign.measures))
    names = board_measures(campaign, version)
    # only the aggregates (``Evaluation.summary``): a stored result also holds every topic's
    # values, most of its bytes, which the board never shows and the database would read whole
    evaluations = {
        e["run_id"]: e
        for e in Evaluation.objects.filter(
            qrels=version, mode=mode, measures_key=key, run__campaign=campaign
        ).values("run_id", "slices", "summary", outcome=jobs.outcome_of())
    }
    shown_measures = query.shown_measures(names)
    topic_tags = _topic_tags(campaign)
    rows = []
    for run in campaign.runs.select_related("owner").order_by("tag"):
        ev = evaluations.get(run.pk)
        label = run_label(run, user)
        own = sees_run(run, user)  # visible by name: id and group shown too
        row: dict[str, Any] = {
            "run_id": run.pk if own else None,
            "run": label,
            "pooled": run.pooled,
            "group": run.group if own else "",
            "state": ev["outcome"] if ev else "missing",
        }
        if ev is not None and ev["outcome"] == JobState.DONE:
            summary = upgraded_evaluation(ev["summary"])
            # a sampled version's inferred measures beside those of complete qrels
            measures = {
                **summary.get("sampled", {}).get("measures", {}),
                **summary.get("measures", {}),
            }
            row["n_queries"] = summary.get("n_queries")
            row["excluded_summary"] = summary.get("excluded_summary", [])
            row["slices"] = ev["slices"]
            if query.slice:
                measures = (ev["slices"] or {}).get(query.slice, {})
                counts = {e.get("n_queries") for e in measures.values()}
                row["n_queries"] = counts.pop() if len(counts) == 1 else None
            row["measures"] = {m: measures[m] for m in shown_measures if m in measures}
            row["pool_standing"] = pool_standing(
                pooled=run.pooled, measures=measures, depth=campaign.pool_depth
            ).as_dict()
        rows.append(row)
    groups = sorted({r["group"] for r in rows if r["group"]})
    check_filters(query, groups=groups, tags=topic_tags)
    total = len(rows)
    rows = apply_query(rows, query, names)
    slice_topics = len(topic_tags.get(query.slice, [])) if query.slice else None
    return {
        "campaign": campaign.pk,
        "qrels_version": version.number,
        "qrels_kind": version.kind_label,
        "qrels_hash": version.content_hash,
        "sampled": sampled_design(version),
        "mode": mode,
        "measures": shown_measures,
        "campaign_measures": names,
        "sorted_by": query.sort_key(names),
        "order": query.direction(names),
        "filters": {"pooled": query.pooled, "group": query.group, "slice": query.slice},
        "slice": {"tag": query.slice, "n_topics": slice_topics} if query.slice else None,
        "view": describe(query, names, shown=len(rows), total=total, slice_topics=slice_topics),
        "shown": len(rows),
        "total": total,
        "groups": groups,
        "slices": sorted(topic_tags),
        "runs": rows,
    }


def board_measures(campaign: Campaign, version: QrelsVersion) -> list[str]:
    """The measures a board of ``version`` shows: a sampled version's inferred ones first
    (``metrics.measures.sampled_registry.inferred_set``), then the campaign's."""
    names = list(campaign.measures)
    if not version.design:
        return names
    return [m.name for m in inferred_set(parse_measures(names))] + names


def sampled_design(version: QrelsVersion) -> dict[str, Any] | None:
    """What a board says of a sampled version (None: complete judgments): its design, per
    stratum the pooled and judged documents and the sampling rate, and a sentence."""
    design = version.design
    if not design:
        return None
    strata = design.get("strata", {})
    parts = [
        f"stratum {s}: {c['judged']} of {c['pooled']} judged"
        + (
            " (judged before the draw or outside it)"
            if s == "0" and design.get("pool") is not None
            else f" (rate {c['rate']:.0%})"
            if c.get("rate") is not None
            else ""
        )
        for s, c in strata.items()
    ]
    awaiting = design.get("awaiting", 0)
    source = (
        f"pool v{design['pool']}, {design.get('strategy')}"
        if design.get("pool") is not None
        else "imported from a file"
        + (
            " in trec_eval's -1 form, one uniform sample"
            if design.get("strategy") == "imported (trec_eval -1)"
            else ""
        )
    )
    sentence = (
        f"Sampled qrels ({source}): "
        + "; ".join(parts)
        + ". xinfAP, statAP, ebAP, infNDCG and iP@k estimate full judging from the sample. "
        "ebAP's interval is its judging error for these topics, model-assisted (an "
        "empirical-Bayes count of each stratum's relevant documents): in our validation it held "
        "the pool's full-judgment MAP in 91-100% of draws, and is wide rather than short. "
        "statAP is shown without one (the interval of its sampling error held it in only 6-89% "
        "of draws); the others' intervals are over topics. The other measures read a document "
        "not sampled as unjudged, so they are lower bounds."
    )
    if awaiting:
        sentence += f" {awaiting} drawn documents are not judged yet (read as not sampled)."
    return {**design, "sentence": sentence}


def _topic_tags(campaign: Campaign) -> dict[str, list[str]]:
    """Topic tag -> the qids of the campaign's topics carrying it (a board slice's topics)."""
    tags: dict[str, list[str]] = {}
    for qid, topic_tags in Topic.objects.filter(campaign=campaign).values_list("qid", "tags"):
        for tag in topic_tags or []:
            tags.setdefault(str(tag), []).append(qid)
    return tags


def topic_tags(campaign: Campaign) -> list[str]:
    """The campaign's topic tags, sorted (the board's slices)."""
    return sorted(_topic_tags(campaign))


def baseline_comparisons(
    *,
    campaign: Campaign,
    version: QrelsVersion,
    user: UserLike,
    board: dict[str, Any],
    options: exports.ExportOptions,
) -> dict[str, dict[str, BaselineComparison]]:
    """Each effectiveness measure of the board (coverage figures such as Judged@k are not
    tested: ``exports.is_coverage``): every run it shows (with per-query values) against the
    baseline (a label as the user sees it), ``metrics.stats.paired.compare_to_baseline`` on the
    stored per-query values (``per_query_values``), paired on the topics every compared run has a
    value for (with a slice: those of the slice); {} without a baseline. A baseline the board
    does not show, or a board in trec_eval mode (per-query values are honest), is a 400."""
    if not options.baseline:
        return {}
    labels = [r["run"] for r in board["runs"]]
    if options.baseline not in labels:
        raise InvalidInput(
            f"baseline: {options.baseline[:40]!r} is not a run on this leaderboard",
            [Problem.at("baseline", "give a run label as the leaderboard shows it")],
        )
    if board["mode"] != EvalMode.HONEST:
        raise InvalidInput(
            "baseline: significance is computed in honest mode only",
            [Problem.at("baseline", "significance against a baseline needs mode=honest")],
        )
    # coverage figures (Judged@k, ceiling@k) describe the judgments: never tested
    tested = [m for m in board["measures"] if not exports.is_coverage(m)]
    limit = settings.POOLJUDGE_EVALUATION.export_max_comparisons
    asked = (len(labels) - 1) * len(tested)
    if asked > limit:
        raise InvalidInput(
            f"baseline: {len(labels) - 1} runs x {len(tested)} measures = {asked} "
            f"paired tests, more than {limit}",
            [
                Problem.at(
                    "baseline",
                    f"at most {limit} tests (POOLJUDGE_EXPORT_MAX_COMPARISONS): choose fewer "
                    "measures (measures=) or runs (pooled=, group=)",
                )
            ],
        )
    sliced = set(_topic_tags(campaign).get(board["slice"]["tag"], [])) if board["slice"] else None
    out: dict[str, dict[str, BaselineComparison]] = {}
    for m in tested:
        _, per_query, _ = per_query_values(campaign=campaign, version=version, measure=m, user=user)
        chosen = {label: per_query[label] for label in labels if label in per_query}
        if options.baseline not in chosen or len(chosen) < 2:
            continue
        queries = common_queries(chosen)
        if sliced is not None:
            queries = [q for q in queries if q in sliced]
        if not queries:
            continue
        rows = compare_to_baseline(
            chosen,
            options.baseline,
            test=options.test,
            correction=options.correction,
            alpha=options.alpha,
            queries=queries,
        )
        out[m] = {c.run: c for c in rows}
    return out


def per_query_export_values(
    *,
    campaign: Campaign,
    version: QrelsVersion,
    user: UserLike,
    board: dict[str, Any],
    runs: Sequence[str] = (),
) -> dict[str, dict[str, dict[str, float]]]:
    """Stored per-query values (honest mode) of the runs the board shows (``runs``: those
    labels only, each one the board shows, else a 400) on the board's measures: ``{label:
    {measure: {qid: value}}}``, runs in board order; with a slice, the slice's topics only. A
    board in trec_eval mode is a 400: the per-query values stored are honest mode's."""
    if board["mode"] != EvalMode.HONEST:
        raise InvalidInput(
            "mode: per-query values are exported in honest mode only",
            [Problem.at("mode", "per-query exports are honest mode only")],
        )
    labels = [r["run"] for r in board["runs"]]
    for label in runs:
        if label not in labels:
            raise InvalidInput(
                f"run: {label[:40]!r} is not a run on this leaderboard",
                [Problem.at("run", f"{label[:40]!r} is not a run label the leaderboard shows")],
            )
    chosen = [label for label in labels if label in set(runs)] if runs else labels
    limit = settings.POOLJUDGE_EVALUATION.export_max_runs
    if len(chosen) > limit:
        raise InvalidInput(
            f"run: {len(chosen)} runs, more than {limit}",
            [Problem.at("run", f"at most {limit} runs (POOLJUDGE_EXPORT_MAX_RUNS)")],
        )
    sliced = set(_topic_tags(campaign).get(board["slice"]["tag"], [])) if board["slice"] else None
    out: dict[str, dict[str, dict[str, float]]] = {label: {} for label in chosen}
    for m in board["measures"]:
        _, per_query, _ = per_query_values(campaign=campaign, version=version, measure=m, user=user)
        for label in chosen:
            values = per_query.get(label)
            if values is None:
                continue
            if sliced is not None:
                values = {q: v for q, v in values.items() if q in sliced}
            out[label][m] = values
    return {label: v for label, v in out.items() if v}


def _stored_measure(measure: str, names: list[str], inferred: list[str]) -> str:
    """``measure`` as stored: one of the campaign's measures (per-query values exist only for
    those), in either naming style, or a sampled version's inferred measure; else a 400 naming
    the known ones."""
    if measure in inferred:
        return measure
    known = {m.name for m in parse_measures(names)}
    try:
        canonical = parse_measure(measure).name
    except ValueError:
        canonical = ""
    if canonical not in known:
        raise InvalidInput(
            f"measure: {measure[:40]!r} is not one of the campaign's measures",
            [
                Problem.at(
                    "measure", f"{measure[:40]!r} is not one of {', '.join(inferred + names)}"
                )
            ],
        )
    return canonical


def per_query_values(
    *,
    campaign: Campaign,
    version: QrelsVersion,
    measure: str,
    user: UserLike,
    runs: Sequence[Run] | None = None,
) -> tuple[str, dict[str, dict[str, float]], dict[str, Run]]:
    """One measure's stored per-query values (honest mode) of the campaign's evaluated runs
    (``runs``: those only), for paired comparisons: ``(measure as stored, {label: {qid: value}},
    {label: run})``, labels as the user may see them (``run_label``), runs in tag order. Runs
    without a finished evaluation under ``version`` are left out. ``measure`` empty: the
    campaign's first; one the campaign does not measure is a 400 naming those it does."""
    names = list(campaign.measures)
    key = measures_key(names)
    chosen = list(runs) if runs is not None else list(campaign.runs.order_by("tag"))
    inferred = board_measures(campaign, version)[: -len(names) or None] if version.design else []
    canonical = _stored_measure(measure, names, inferred) if measure else names[0]
    # only this measure's per-query values (``result -> per_query -> measure`` in the database;
    # an inferred one's under ``result -> sampled``): a stored result holds every measure's,
    # its companions' and the curve's, most of its bytes
    where: Any = KeyTransform("sampled", "result") if canonical in inferred else "result"
    evaluations: dict[int, Any] = dict(
        Evaluation.objects.filter(
            qrels=version,
            mode=EvalMode.HONEST,
            measures_key=key,
            job__state=JobState.DONE,
            run__in=chosen,
        )
        .annotate(values=KeyTransform(canonical, KeyTransform("per_query", where)))
        .values_list("run_id", "values")
    )
    per_query: dict[str, dict[str, float]] = {}
    by_label: dict[str, Run] = {}
    for run in chosen:
        values = evaluations.get(run.pk)
        if not isinstance(values, dict):
            continue
        label = run_label(run, user)
        per_query[label] = {q: float(v) for q, v in values.items() if v is not None}
        by_label[label] = run
    return canonical, per_query, by_label


def common_queries(per_query: dict[str, dict[str, float]]) -> list[str]:
    """The topics every run has a value for (paired tests pair on these), sorted."""
    return sorted(set.intersection(*(set(v) for v in per_query.values()))) if per_query else []


def significance(
    *,
    campaign: Campaign,
    version: QrelsVersion,
    measure: str,
    test: str,
    user: UserLike,
    runs: Sequence[Run] | None = None,
) -> dict[str, Any]:
    """Paired tests between runs on one measure (Holm-corrected), from stored per-query values."""
    if test not in ("t", "randomization", "bootstrap"):
        raise InvalidInput(
            "unknown test",
            [Problem.at("test", f"test {test!r} is not one of t, randomization, bootstrap")],
        )
    canonical, per_query, _ = per_query_values(
        campaign=campaign, version=version, measure=measure, user=user, runs=runs
    )
    queries = common_queries(per_query)
    # paired tests are on the topics every run has a value for; none in common: nothing to test
    comparable = len(per_query) > 1 and bool(queries)
    rows = compare_runs(per_query, test=test, queries=queries) if comparable else []
    out: dict[str, Any] = {
        "qrels_version": version.number,
        "qrels_kind": version.kind_label,
        "measure": canonical,
        "test": test,
        "correction": "holm",
        "n_queries": len(queries),
        "comparisons": [asdict(c) for c in rows],
    }
    if len(per_query) > 1 and not queries:
        out["note"] = "the runs have no scored topic in common: there is nothing to pair"
    return out


def bias_report(
    *,
    campaign: Campaign,
    version: QrelsVersion,
    user: UserLike,
    measure: str = "AP",
    depth: int | None = None,
    kind: str = "loo_run",
    topics: str | None = "",
) -> dict[str, Any] | None:
    """The stored bias report for these parameters as the user may see it (other researchers'
    runs and groups anonymised), with its state; None when it was never requested. ``topics``
    is a topic spec (``evaluation.bias.topic_filter``; empty: the campaign's pooled topics,
    ``all``: every topic)."""
    params = bias_params(campaign, measure=measure, depth=depth, kind=kind, topics=topics)
    report = (
        BiasReport.objects.filter(
            campaign=campaign,
            qrels=version,
            kind=params.kind,
            measure=params.measure,
            depth=params.depth,
            topics=params.topics,
        )
        .select_related("job")
        .first()
    )
    if report is None:
        return None
    out: dict[str, Any] = {
        "qrels_version": version.number,
        "qrels_kind": version.kind_label,
        "measure": report.measure,
        "depth": report.depth,
        "kind": report.kind,
        "topics": report.topics,
        "state": report.state,
        "error": report.error,
        "computed_at": report.computed_at,
    }
    if report.state == JobState.DONE:
        out["result"] = bias_result_for(campaign, report.result, user)
    return out


def reusability_report(version: QrelsVersion, user: UserLike) -> dict[str, Any] | None:
    """The stored reusability report of a qrels version as the user may see it (other
    researchers' runs and groups anonymised): ``{"qrels_version", "state", "error",
    "computed_at", "result"}`` (``result`` empty unless done); None when it was never
    computed (versions stored before reports existed: POST, or ``manage.py
    reusability_report``)."""
    report = Reusability.objects.filter(qrels=version).select_related("campaign", "job").first()
    if report is None:
        return None
    result: dict[str, Any] = {}
    if report.state == JobState.DONE:
        result = reusability_result_for(report.campaign, report.result, user)
    return {
        "qrels_version": version.number,
        "qrels_kind": version.kind_label,
        "state": report.state,
        "error": report.error,
        "computed_at": report.computed_at,
        "result": result,
    }


class ReportViewer:
    """How one user sees the runs and groups a stored report of a campaign names (a
    ``metrics.results.Viewer``): runs as ``campaigns.selectors.run_labels`` shows them, and a
    group by name only to a user who may see one of its runs, else as "anonymous group #n" (n
    counting the hidden groups, by name, from 1; ``group_labels``). ``groups`` are the
    campaign's groups with their runs' tags and those the report was computed with."""

    def __init__(
        self, labels: dict[str, str], visible: set[str], groups: dict[str, list[str]]
    ) -> None:
        self.labels = labels
        names = group_labels(dict(sorted(groups.items())), visible)
        self.hidden = {g: label for g, label in names.items() if g != label}
        # a unit named by a run's tag (a run without a group) is shown as that run, but in the
        # leave-one-group-out table, where every unit is a group
        self.hidden_units = {g: label for g, label in self.hidden.items() if g not in labels}

    def run(self, tag: str) -> str:
        return self.labels.get(tag, tag)

    def group(self, name: str) -> str:
        return self.run(self.hidden.get(name, name))

    def unit(self, name: str) -> str:
        return self.run(self.hidden_units.get(name, name))


def report_viewer(
    campaign: Campaign, user: UserLike, computed_groups: dict[str, list[str]] | None = None
) -> ReportViewer:
    """The viewer of ``user`` for a report of ``campaign`` whose leave-one-group-out table had
    ``computed_groups`` (group -> its runs' tags; a group of the campaign keeps its runs)."""
    groups = campaign_groups(campaign)
    for name, tags in (computed_groups or {}).items():
        groups.setdefault(name, list(tags))
    return ReportViewer(run_labels(campaign, user), visible_tags(campaign, user), groups)


def campaign_names(campaign: Campaign, stored: dict[str, Any]) -> set[str]:
    """The tags and group names of the campaign's runs: the names the sentences of a report
    stored before version 3 may mention (from 3, its sentences are stored as parts)."""
    version = stored.get("version", 1)
    if isinstance(version, int) and version >= SENTENCES_AS_PARTS:
        return set()
    return run_names(campaign.runs.only("pk", "tag", "group"))


def bias_result_for(campaign: Campaign, stored: dict[str, Any], user: UserLike) -> dict[str, Any]:
    """A stored bias report's result as ``user`` may see it (``evaluation.results.BiasResult``
    rendered for the user's ``ReportViewer``)."""
    result = read_bias_result(stored, campaign_names(campaign, stored))
    viewer = report_viewer(campaign, user, result.group_runs())
    rendered: dict[str, Any] = render(result, viewer)
    return rendered


def reusability_result_for(
    campaign: Campaign, stored: dict[str, Any], user: UserLike
) -> dict[str, Any]:
    """A stored reusability report's result as ``user`` may see it."""
    result = read_reusability_result(stored, campaign_names(campaign, stored))
    rendered: dict[str, Any] = render(result, report_viewer(campaign, user))
    return rendered


def campaign_groups(campaign: Campaign) -> dict[str, list[str]]:
    """Group name -> the tags of the campaign's runs in it (runs without a group left out)."""
    groups: dict[str, list[str]] = {}
    for tag, group in campaign.runs.order_by("tag").values_list("tag", "group"):
        if group:
            groups.setdefault(group, []).append(tag)
    return groups


def latest_qrels_version(campaign_id: int) -> QrelsVersion | None:
    """The campaign's latest human qrels version, with its campaign (for
    ``run_evaluation_status``)."""
    return (
        QrelsVersion.objects.filter(campaign_id=campaign_id)
        .human()
        .latest_first()
        .select_related("campaign")
        .first()
    )


_LATEST: Any = object()


def run_evaluation_status(run: Run, latest: QrelsVersion | None = _LATEST) -> dict[str, Any]:
    """Where the run's evaluation against the campaign's latest qrels version (``latest``, read
    when not given) stands: done or failed (stored), else its task's state (pending: not yet
    sent to a worker, queued, running, stale: its worker was lost since ``since``), or None when
    nothing was asked."""
    version = latest_qrels_version(run.campaign_id) if latest is _LATEST else latest
    if version is None:
        return {"qrels_version": None, "status": None, "detail": "no qrels version yet"}
    out: dict[str, Any] = {"qrels_version": version.number, "qrels_kind": version.kind_label}
    evaluation = (
        Evaluation.objects.filter(
            run=run,
            qrels=version,
            mode=EvalMode.HONEST,
            measures_key=measures_key(version.campaign.measures),
        )
        .select_related("job")
        .first()
    )
    if evaluation is not None and evaluation.state != JobState.PENDING:
        detail = evaluation.state if not evaluation.error else f"failed: {evaluation.error}"
        return {**out, "status": evaluation.state, "detail": detail}
    job = evaluation.job if evaluation is not None else None
    if job is None or job.state in (JobState.DONE, JobState.FAILED):
        job = jobs.latest(run_evaluation_key(run.pk, version.pk), qrels_evaluation_key(version.pk))
    if job is None or job.state in (JobState.DONE, JobState.FAILED):
        return {**out, "status": None, "detail": "not evaluated"}
    return {**out, **jobs.view(job)}


def qrels_evaluation_status(version: QrelsVersion) -> dict[str, Any]:
    """The state of the job that evaluates every run against ``version``."""
    job = jobs.latest(qrels_evaluation_key(version.pk))
    if job is None:
        return {"status": None, "detail": "no evaluation was asked"}
    return jobs.view(job)
