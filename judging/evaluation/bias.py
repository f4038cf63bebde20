"""Pool-bias reports: leave-one-out, coverage, estimated penalty, the penalty estimators with
their error measured on the campaign, pooling efficiency and the before/after comparison of two
qrels versions on the same topics. Computed by a task, stored, shown on the bias page.

A report is about a subset of the campaign's topics (``topic_filter``: ids, numeric ranges and
``tag:NAME``; by default the campaign's pooled topics, ``Campaign.pooled_topics``, all unless a
collection import inferred its pooling on a subset) and one measure, at a depth (by default the
campaign's pool depth).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta
from functools import cached_property
from typing import Any, NamedTuple, TypeVar

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from judging.assessments.models import QrelsVersion
from judging.assessments.selectors import qrels_version
from judging.campaigns.models import Campaign, Run, Topic
from judging.core import jobs
from judging.core.errors import InvalidInput, RateLimited
from judging.core.jobs import StageFailed
from judging.core.models import Job
from judging.core.roles import Account
from judging.evaluation.models import (
    TOPICS_MAX_LENGTH,
    BiasKind,
    BiasPart,
    BiasReport,
    Reusability,
    RunPenalty,
)
from judging.evaluation.results import BIAS_RESULT_VERSION, BiasResult, stored_report
from judging.evaluation.services import metrics_run, qrels_dict, rankings
from judging.pools.models import PoolState, PoolVersion
from metrics.bias.estimator_report import FAMILIES as ESTIMATED_FAMILIES
from metrics.bias.estimators import estimator_report
from metrics.bias.judged import judged_at_k
from metrics.bias.leaveout import LeaveOneOut, LeaveOut, LeaveOutUnit
from metrics.bias.penalty import estimate_penalty
from metrics.bias.versions import compare_qrels_versions
from metrics.io import Qrels
from metrics.io import Run as MetricsRun
from metrics.measures.names import parse_measure
from metrics.pooling.runs import parse_topic_spec, topic_sort_key
from metrics.pooling.simulation import simulate
from metrics.pooling.strategies import make_strategy
from metrics.problems import Problem

EFFICIENCY_STRATEGIES = ("docid", "rank", "mtf", "hedge")
RATE_WINDOW = timedelta(hours=1)


BIAS_MEASURE_MAX_LENGTH = BiasReport._meta.get_field("measure").max_length or 40


TAG_PREFIX = "tag:"
ALL_TOPICS = "all"  # a topic spec naming every topic


def _topics_problem(message: str) -> InvalidInput:
    return InvalidInput(f"topics: {message}", [Problem.at("topics", message)])


def _listed(items: Sequence[str], most: int = 5) -> str:
    shown = ", ".join(items[:most])
    return shown if len(items) <= most else f"{shown} and {len(items) - most} more"


def topic_filter(campaign: Campaign, spec: str | None) -> tuple[str, list[str]]:
    """The campaign's topics a topic spec names, and the spec normalised (the report's key).

    The spec is comma-separated parts: topic ids (``401``), numeric ranges (``601-650``: the
    campaign's topics with a numeric id in it, as ``metrics.pooling.runs.parse_topic_spec``
    reads them) and ``tag:NAME`` (the campaign's topics tagged NAME). Empty: every topic, normalised
    to ``""``. Otherwise the normalised spec lists the topics found, sorted, consecutive numeric
    ids as ranges (``"1-5,9"``), so that two spellings of one subset share a report.

    ``all`` (the whole spec, any case) is every topic too, unless the campaign has a topic of
    that id: it names every topic where an empty spec means a default (``bias_params``).

    An ``InvalidInput`` naming ``topics`` (a 400) for a malformed part, an unknown tag, an id
    the campaign does not have (named), a range with none of its topics, an empty subset, more
    than POOLJUDGE_BIAS_MAX_TOPICS topics, or a spec longer than can be stored."""
    if spec is None:
        spec = ""
    if not isinstance(spec, str):
        raise _topics_problem("must be text: ids, ranges (601-650) or tag:NAME, comma-separated")
    text = spec.strip()
    known: dict[str, list[str]] = {
        qid: [str(t) for t in (tags or [])]
        for qid, tags in Topic.objects.filter(campaign=campaign).values_list("qid", "tags")
    }
    if not text or (text.lower() == ALL_TOPICS and text not in known):
        return "", sorted(known, key=topic_sort_key)
    if "\x00" in text:
        raise _topics_problem("must not contain a NUL character")
    if len(text.encode()) > TOPICS_MAX_LENGTH:
        raise _topics_problem(f"must be at most {TOPICS_MAX_LENGTH} bytes long")
    limit = settings.POOLJUDGE_EVALUATION.bias_max_topics
    wanted: dict[str, None] = {}
    missing: list[str] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if part[: len(TAG_PREFIX)].lower() == TAG_PREFIX:
            name = part[len(TAG_PREFIX) :].strip()
            tagged = [q for q, tags in known.items() if name in tags]
            if not name:
                raise _topics_problem("tag: needs a tag name, as in tag:hard")
            if not tagged:
                tags = sorted({t for ts in known.values() for t in ts})
                have = f"the tags are {_listed(tags, 10)}" if tags else "no topic has a tag"
                raise _topics_problem(f"no topic of the campaign is tagged {name[:40]!r} ({have})")
            wanted.update(dict.fromkeys(tagged))
        elif part in known:  # an id as it is stored (ids with a dash included)
            wanted[part] = None
        else:
            low, dash, high = (x.strip() for x in part.partition("-"))
            if dash and low.isdigit() and high.isdigit():  # checked here: never expanded
                a, b = int(low), int(high)
                if a > b:
                    raise _topics_problem(f"the range {part[:40]!r} is empty (its start is larger)")
                inside = [q for q in known if q.isdigit() and a <= int(q) <= b]
                if not inside:
                    raise _topics_problem(f"the campaign has no topic in {part[:40]!r}")
                wanted.update(dict.fromkeys(inside))
            else:
                try:
                    ids = parse_topic_spec(part)
                except ValueError as exc:
                    raise _topics_problem(str(exc)[:200]) from None
                missing += [q for q in ids if q not in known]
        if len(wanted) > limit:
            raise _topics_problem(
                f"names more than {limit} topics, the most a report analyses "
                "(POOLJUDGE_BIAS_MAX_TOPICS)"
            )
    if missing:
        shown = [repr(q[:40]) for q in missing]
        raise _topics_problem(f"the campaign has no topic {_listed(shown)}")
    if not wanted:
        raise _topics_problem(f"no topics in {text[:40]!r}")
    qids = sorted(wanted, key=topic_sort_key)
    normalised = topic_spec(qids)
    if any("," in q for q in qids):
        raise _topics_problem("a topic id with a comma cannot be named in a topic spec")
    if len(normalised.encode()) > TOPICS_MAX_LENGTH:
        raise _topics_problem(
            f"the {len(qids)} topics are too scattered to store as one subset "
            f"(over {TOPICS_MAX_LENGTH} bytes written out); use fewer or consecutive topics"
        )
    return normalised, qids


def topic_spec(qids: Sequence[str]) -> str:
    """Sorted topic ids written as a spec: runs of consecutive numeric ids as ranges."""
    parts: list[str] = []
    i = 0
    while i < len(qids):
        q = qids[i]
        j = i
        if q.isdigit() and str(int(q)) == q:
            while (
                j + 1 < len(qids)
                and qids[j + 1].isdigit()
                and str(int(qids[j + 1])) == qids[j + 1]
                and int(qids[j + 1]) == int(qids[j]) + 1
            ):
                j += 1
        parts.append(q if j == i else f"{q}-{qids[j]}")
        i = j + 1
    return ",".join(parts)


class BiasParams(NamedTuple):
    """A report's key as stored, and the topics its spec names (``topic_filter``)."""

    measure: str
    depth: int
    kind: str
    topics: str
    topic_ids: list[str]


def bias_params(
    campaign: Campaign,
    *,
    measure: str,
    depth: int | None,
    kind: str,
    topics: str | None = "",
) -> BiasParams:
    """The report's key as stored: canonical measure name, depth, kind and normalised topic
    spec, checked. The depth defaults to the campaign's pool depth and the topics (None or
    blank) to its pooled topics (``Campaign.pooled_topics``: every topic unless the campaign
    was imported with its pooling inferred on a subset); ``all`` asks for every topic.

    Bounded, so that a request cannot ask for an arbitrarily deep (costly) analysis: ``depth``
    from 1 to POOLJUDGE_BIAS_MAX_DEPTH (or the campaign's pool depth when that is larger), one
    measure whose cut-off (``P@k``) is at most POOLJUDGE_BIAS_MAX_CUTOFF, at most
    POOLJUDGE_BIAS_MAX_TOPICS topics. Every problem is a 400 naming its parameter."""
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
            cutoff_max = settings.POOLJUDGE_EVALUATION.bias_max_cutoff
            if parsed.cutoff is not None and not 1 <= parsed.cutoff <= cutoff_max:
                problems.append(
                    Problem.at(
                        "measure",
                        f"the cut-off of {measure!r} must be from 1 to {cutoff_max}",
                    )
                )
            canonical = parsed.name
    if depth is not None:
        depth_max = max(settings.POOLJUDGE_EVALUATION.bias_max_depth, campaign.pool_depth)
        if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= depth_max:
            problems.append(Problem.at("depth", f"must be a whole number from 1 to {depth_max}"))
    if kind not in BiasKind.values:
        problems.append(
            Problem.at("kind", f"kind {kind!r} is not one of {', '.join(BiasKind.values)}")
        )
    spec = ""
    topic_ids: list[str] = []
    defaulted = topics is None or (isinstance(topics, str) and not topics.strip())
    try:
        spec, topic_ids = topic_filter(campaign, campaign.pooled_topics if defaulted else topics)
    except InvalidInput as exc:
        if defaulted:  # not what the user typed: say where it comes from
            problems += [
                Problem.at(
                    "topics",
                    f"the campaign's pooled topics {campaign.pooled_topics!r} (the default): "
                    f"{p.message}",
                )
                for p in exc.problems
            ]
        else:
            problems += exc.problems
    if problems:
        detail = (
            str(problems[0]) if len(problems) == 1 else "the bias report parameters are not valid"
        )
        raise InvalidInput(detail, problems)
    return BiasParams(canonical, depth or campaign.pool_depth, kind, spec, topic_ids)


def headline_measure(campaign: Campaign) -> str:
    """The measure a campaign's bias analysis opens on: its first measure that a bias report
    can be computed for with every estimator family defined (P@10 for the demo), else AP."""
    for name in campaign.measures:
        try:
            parsed = parse_measure(name)
        except ValueError:
            continue
        cutoff_ok = (
            parsed.cutoff is None or parsed.cutoff <= settings.POOLJUDGE_EVALUATION.bias_max_cutoff
        )
        if parsed.family in ESTIMATED_FAMILIES and cutoff_ok:
            return parsed.name
    return "AP"


def check_rate(requested_by: Account) -> None:
    """At most POOLJUDGE_BIAS_REPORTS_PER_HOUR new reports per user per hour, bias and
    reusability reports together (a 429 beyond, with the seconds until the oldest of them
    leaves the hour)."""
    limit = settings.POOLJUDGE_EVALUATION.bias_reports_per_hour
    since = timezone.now() - RATE_WINDOW
    recent = sorted(
        [
            *BiasReport.objects.filter(requested_by=requested_by, created_at__gt=since)
            .order_by("-created_at")
            .values_list("created_at", flat=True)[:limit],
            *Reusability.objects.filter(requested_by=requested_by, created_at__gt=since)
            .order_by("-created_at")
            .values_list("created_at", flat=True)[:limit],
        ],
        reverse=True,
    )[:limit]
    if len(recent) < limit:
        return
    wait = (recent[-1] + RATE_WINDOW - timezone.now()).total_seconds()
    raise RateLimited(
        f"you asked for {limit} new bias or reusability reports in the last hour, the most "
        f"allowed (POOLJUDGE_BIAS_REPORTS_PER_HOUR); reports already computed can still be read",
        retry_after=max(1, math.ceil(wait)),
    )


def refuse_sampled(version: QrelsVersion) -> None:
    """The pool-bias and reusability analyses read complete judgments of the pool (a run left
    out meets the documents only it found, judged or not): on a sampled version a document not
    sampled would count as non-relevant, so they do not apply (a 400 saying so)."""
    if version.design:
        message = (
            f"qrels version {version.number} is sampled (a judged sample of pool "
            f"v{version.design.get('pool')}): the leave-out bias and reusability analyses read "
            "complete judgments and do not apply to it; its leaderboard's inferred measures "
            "(xinfAP, infNDCG, iP@k) estimate full judging instead"
        )
        raise InvalidInput(message, [Problem.at("qrels", message)])


def bias_report_request(
    *,
    campaign: Campaign,
    qrels: QrelsVersion | None = None,
    measure: str = "AP",
    depth: int | None = None,
    kind: str = BiasKind.LOO_RUN,
    topics: str | None = "",
    requested_by: Account | None = None,
) -> BiasReport | None:
    """The stored report for these inputs, computing it (as a task, after commit) if needed.

    ``topics`` is a topic spec (``topic_filter``; empty: the campaign's pooled topics, ``all``:
    every topic). A report asked for by a user (``requested_by``: the API and the page; not the
    events and commands) that is not stored yet counts against that user's hourly allowance
    (POOLJUDGE_BIAS_REPORTS_PER_HOUR; ``RateLimited`` beyond it)."""
    version = qrels or qrels_version(campaign)
    if version is None:
        return None
    refuse_sampled(version)
    params = bias_params(campaign, measure=measure, depth=depth, kind=kind, topics=topics)
    key = {
        "campaign": campaign,
        "qrels": version,
        "kind": params.kind,
        "measure": params.measure,
        "depth": params.depth,
        "topics": params.topics,
    }
    if requested_by is not None and not BiasReport.objects.filter(**key).exists():
        check_rate(requested_by)
    report, created = claim_report(
        BiasReport, key, "bias_report", "bias", requested_by=requested_by
    )
    if created:
        jobs.enqueue(report.job)
    else:
        jobs.again(report.job)  # a failed report: its failed parts computed again
    return report


ReportT = TypeVar("ReportT", BiasReport, Reusability, RunPenalty)


def claim_report(
    model: type[ReportT], key: dict[str, Any], kind: str, prefix: str, **defaults: Any
) -> tuple[ReportT, bool]:
    """The report row for ``key``, made with its pending job (key ``PREFIX:ID``) if there is
    none; asked for twice at once, the other request's."""
    found = model.objects.filter(**key).select_related("job").first()
    if found is not None:
        return found, False
    try:
        with transaction.atomic():
            job = jobs.new(kind, "")
            report = model.objects.create(**key, **defaults, job=job)
            job.key = f"{prefix}:{report.pk}"
            job.save(update_fields=["key"])
            return report, True
    except IntegrityError:
        return model.objects.select_related("job").get(**key), False


def _novel_at(campaign: Campaign, version: QrelsVersion) -> set[str]:
    """Runs that contributed to no pool version built before this qrels version was made."""
    contributed: set[str] = set()
    for tags in PoolVersion.objects.filter(
        campaign=campaign, state=PoolState.BUILT, finished_at__lte=version.created_at
    ).values_list("run_tags", flat=True):
        contributed.update(tags)
    return {tag for tag in campaign.runs.values_list("tag", flat=True) if tag not in contributed}


@contextmanager
def stage(name: str) -> Iterator[None]:
    """Failures inside are stored as "NAME: Error: message" (the part that failed named)."""
    try:
        yield
    except StageFailed:
        raise
    except Exception as exc:
        raise StageFailed(f"{name}: {type(exc).__name__}: {exc}") from exc


def campaign_runs(
    campaign: Campaign,
) -> tuple[list[Run], dict[str, MetricsRun]]:
    """The campaign's runs (by tag) and the same as ``metrics`` runs."""
    runs_models = list(campaign.runs.order_by("tag"))
    return runs_models, {r.tag: metrics_run(r, campaign) for r in runs_models}


def units(
    runs_models: Sequence[Run], pooled: Sequence[str]
) -> tuple[LeaveOutUnit, dict[str, str] | None]:
    """What the estimators and the reusability report leave out: groups when every pooled run
    has one (``leave_out="group"``, every run mapped to its group or, without one, its tag),
    else runs (no groups)."""
    pooled_set = set(pooled)
    if pooled_set and all(r.group for r in runs_models if r.tag in pooled_set):
        return "group", {r.tag: r.group or r.tag for r in runs_models}
    return "run", None


def _analysed_topics(
    campaign: Campaign, report: BiasReport, qrels_map: dict[str, dict[str, int]]
) -> tuple[list[str] | None, dict[str, Any]]:
    """The topic filter of the report (None: all) and what the result says about it."""
    wanted: list[str] | None = None
    if report.topics:
        _, wanted = topic_filter(campaign, report.topics)
    chosen = set(qrels_map) if wanted is None else set(wanted)
    analysed = sorted((q for q in qrels_map if q in chosen), key=topic_sort_key)
    if not analysed:
        raise ValueError(
            f"none of the topics {report.topics or ''} has a judgment in qrels version "
            f"{report.qrels.number}: nothing to analyse"
        )
    info = {
        "spec": report.topics,
        "analysed": analysed,
        "without_judgments": sorted(
            (q for q in (wanted or []) if q not in qrels_map), key=topic_sort_key
        ),
    }
    return wanted, info


class _Inputs:
    """What a report's analyses read, each loaded when first needed: a part that needs only the
    qrels (coverage of nothing, the header) does not read every run."""

    def __init__(self, report: BiasReport, run_ids: Sequence[int] | None = None) -> None:
        self.report = report
        self.campaign = report.campaign
        self.level = report.campaign.relevance_threshold
        self.run_ids = run_ids  # None: every run of the campaign now

    @cached_property
    def runs_models(self) -> list[Run]:
        runs = self.campaign.runs.order_by("tag")
        return list(runs if self.run_ids is None else runs.filter(pk__in=self.run_ids))

    @cached_property
    def runs(self) -> dict[str, MetricsRun]:
        return {r.tag: metrics_run(r, self.campaign) for r in self.runs_models}

    @cached_property
    def pooled(self) -> list[str]:
        return [r.tag for r in self.runs_models if r.pooled]

    @cached_property
    def qrels_map(self) -> dict[str, dict[str, int]]:
        return qrels_dict(self.report.qrels)

    @cached_property
    def qrels(self) -> Qrels:
        return Qrels.from_dict(self.qrels_map)

    @cached_property
    def analysed(self) -> tuple[list[str] | None, dict[str, Any]]:
        return _analysed_topics(self.campaign, self.report, self.qrels_map)

    @property
    def topics(self) -> list[str] | None:
        return self.analysed[0]


# The analyses of a report, in the order the result lists them (and a failure names the first
# that failed): each is computed by ``_part`` on its own (one task each when split).
BIAS_PARTS = (
    "loo",
    "estimators",
    "coverage",
    *(f"efficiency:{name}" for name in EFFICIENCY_STRATEGIES),
    "before_after",
)


def run_names(runs: Iterable[Run]) -> set[str]:
    """The tags and group names of ``runs``: the names a report on them may mention."""
    names: set[str] = set()
    for run in runs:
        names.add(run.tag)
        if run.group:
            names.add(run.group)
    return names


def _header(inputs: _Inputs) -> dict[str, Any]:
    return {
        "qrels_version": inputs.report.qrels.number,
        "qrels_kind": inputs.report.qrels.kind_label,
        "pooled": inputs.pooled,
        "topics": inputs.analysed[1],
    }


def _part(name: str, inputs: _Inputs) -> dict[str, Any]:
    """One analysis of the report (a name of ``BIAS_PARTS``), as its piece of the result."""
    report, level = inputs.report, inputs.level
    inputs.analysed  # noqa: B018 (a report's topic problem fails every part, outside a stage)
    topics = inputs.topics
    out: dict[str, Any] = {}
    if name == "loo":
        pooled = inputs.pooled
        if len(pooled) < 2:
            return {"loo_unavailable": "leave-one-out needs at least two pooled runs"}
        with stage("leave-one-out"):
            loo = LeaveOneOut(
                inputs.qrels,
                inputs.runs,
                LeaveOut(
                    depth=report.depth,
                    leave_out="group" if report.kind == BiasKind.LOO_GROUP else "run",
                    groups={r.tag: r.group or r.tag for r in inputs.runs_models},
                    pooled=pooled,
                    topics=topics,
                    relevance_level=level,
                ),
            ).result(report.measure)
            out["loo"] = loo.to_dict()
            if loo.not_pooled and any(not math.isnan(r.delta) for r in loo.runs.values()):
                out["penalty"] = estimate_penalty(loo).to_dict()
            elif loo.not_pooled:
                out["penalty_unavailable"] = (
                    "no pooled run has a leave-one-out delta on these topics (none of them "
                    "retrieved anything there): there is no penalty to estimate"
                )
        return out
    if name == "estimators":
        with stage("estimators"):
            return _estimators(
                inputs.qrels, inputs.runs, inputs.runs_models, inputs.pooled, report, topics, level
            )
    if name == "coverage":
        with stage("coverage"):
            coverage = judged_at_k(
                inputs.qrels, inputs.runs, k=10, topics=topics, pooled=inputs.pooled
            )
            return {"coverage": coverage.to_dict()}
    if name.startswith("efficiency:"):
        with stage("efficiency"):
            return _efficiency(
                inputs.campaign,
                inputs.runs_models,
                inputs.pooled,
                inputs.qrels_map,
                report.depth,
                level,
                topics=None if topics is None else set(inputs.analysed[1]["analysed"]),
                strategies=(name.partition(":")[2],),
            )
    if name == "before_after":
        previous = (
            QrelsVersion.objects.filter(
                campaign=inputs.campaign, number__lt=report.qrels.number, kind=report.qrels.kind
            )
            .latest_first()
            .first()
        )
        if previous is None:
            return {}
        with stage("before/after"):
            return _before_after(
                inputs.campaign,
                report,
                previous,
                inputs.qrels,
                inputs.qrels_map,
                inputs.runs,
                topics,
                level,
            )
    raise ValueError(f"no bias report part {name!r}")


def _assemble(header: dict[str, Any], parts: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The report's result from its parts (every name of ``BIAS_PARTS``), as one computation of
    them all would give it."""
    out = dict(header)
    curves: dict[str, Any] = {}
    efficiency: dict[str, Any] = {}
    for name in BIAS_PARTS:
        piece = parts[name]
        if not name.startswith("efficiency:"):
            out.update(piece)
            continue
        found = piece.get("efficiency", {})
        if found:
            efficiency = {**found, "curves": {}}
            curves.update(found["curves"])
        if name == f"efficiency:{EFFICIENCY_STRATEGIES[-1]}":
            out["efficiency"] = {**efficiency, "curves": curves} if efficiency else {}
    return out


# --- computing a report: one job per analysis ------------------------------------------------
#
# A report's job (``bias_report``, the one every request and event sends) fans out: one part job
# (``bias_part``) and one ``BiasPart`` row per analysis, recorded in one transaction with the
# runs they all analyse pinned; each part's job stores its piece (or its failure), and the last
# one stored records the report's assembly, which stores the report from the parts
# (``core.jobs``: the sweep re-sends a lost part or assembly, every step is safe twice).


def part_key(report_id: int, name: str) -> str:
    return f"bias:{report_id}:part:{name}"


def assemble_key(report_id: int) -> str:
    return f"bias:{report_id}:assemble"


def report_parts(job: Job) -> jobs.Parts | None:
    """The computation of a ``bias_report`` job: a part per analysis (``BIAS_PARTS``), every
    one analysing the campaign's runs of now."""
    report = BiasReport.objects.select_related("campaign").filter(job=job).first()
    if report is None:
        return None
    pinned = list(report.campaign.runs.order_by("pk").values_list("pk", flat=True))

    def record(part: Job, name: str) -> None:
        BiasPart.objects.create(report=report, name=name, runs=pinned, job=part)

    return jobs.Parts(kind="bias_part", names=BIAS_PARTS, record=record)


def report_assemble(job: Job, parts: dict[str, Job]) -> dict[str, Any] | None:
    """The report's result from its stored parts, as one computation of them all would give
    it."""
    report = BiasReport.objects.select_related("campaign", "qrels").filter(job=job).first()
    if report is None:
        return None
    stored = {p.name: p for p in BiasPart.objects.filter(report=report)}
    inputs = _Inputs(report, stored[BIAS_PARTS[0]].runs)
    return stored_result(inputs, {n: stored[n].result for n in BIAS_PARTS})


def stored_result(inputs: _Inputs, parts: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The report's result as stored (``evaluation.results.BiasResult``), from its parts: the
    names in its sentences are found among the runs it was computed over."""
    result = _assemble(_header(inputs), parts)
    return stored_report(BiasResult, result, BIAS_RESULT_VERSION, run_names(inputs.runs_models))


def report_store(job: Job, result: dict[str, Any] | None) -> None:
    if result is not None:
        BiasReport.objects.filter(job=job).update(result=result)


def part_compute(job: Job) -> dict[str, Any] | None:
    """The computation of a ``bias_part`` job: its analysis of the report, on the pinned runs."""
    part = (
        BiasPart.objects.select_related("report__campaign", "report__qrels").filter(job=job).first()
    )
    if part is None:
        return None
    return _part(part.name, _Inputs(part.report, part.runs))


def part_store(job: Job, result: dict[str, Any] | None) -> None:
    if result is not None:
        BiasPart.objects.filter(job=job).update(result=result)


def bias_report_compute(*, report_id: int) -> BiasReport | None:
    """Compute a stored report here, in this process, its parts one after another
    (``manage.py bias_report``; ``core.jobs.compute_here``); safe to run twice. Any failure is
    stored with the report's job (failed, the error naming the part that failed)."""
    report = BiasReport.objects.select_related("job").filter(pk=report_id).first()
    if report is None:
        return None
    jobs.compute_here(report.job)
    report.refresh_from_db()
    return report


def _scorable(qrels: dict[str, dict[str, int]], level: int, topics: list[str] | None) -> set[str]:
    """The topics a qrels version can score: a relevant judgment (grade >= level) in it."""
    wanted = None if topics is None else set(topics)
    return {
        q
        for q, judged in qrels.items()
        if (wanted is None or q in wanted) and any(g >= level for g in judged.values())
    }


def _before_after(
    campaign: Campaign,
    report: BiasReport,
    previous: QrelsVersion,
    qrels: Qrels,
    qrels_map: dict[str, dict[str, int]],
    runs: dict[str, MetricsRun],
    topics: list[str] | None,
    level: int,
) -> dict[str, Any]:
    """``{"before_after": ...}``: every run under the previous version and this one, on the
    topics both can score (``metrics.bias.versions.compare_qrels_versions``); or why there is
    none."""
    before = qrels_dict(previous)
    if not _scorable(before, level, topics) & _scorable(qrels_map, level, topics):
        where = " among the topics analysed" if topics is not None else ""
        return {
            "before_after_unavailable": f"qrels versions {previous.number} and "
            f"{report.qrels.number} have no topic{where} that both can score (a relevant "
            "judgment in each): there is nothing to compare on"
        }
    novel = sorted(_novel_at(campaign, previous))
    comparison = compare_qrels_versions(
        Qrels.from_dict(before),
        qrels,
        runs,
        report.measure,
        novel=novel,
        recall_k=report.depth * 5,
        topics=topics,
        relevance_level=level,
        labels=(f"v{previous.number}", f"v{report.qrels.number}"),
    )
    return {
        "before_after": {
            "from": previous.number,
            "to": report.qrels.number,
            **comparison.to_dict(),
        }
    }


def _estimators(
    qrels: Qrels,
    runs: dict[str, MetricsRun],
    runs_models: list[Run],
    pooled: list[str],
    report: BiasReport,
    topics: list[str] | None,
    level: int,
) -> dict[str, Any]:
    """``{"estimators": EstimatorReport dict}`` (Webber & Park, Lipani 2015/2016, condensed,
    upper, each validated on the campaign's pooled units), or why there is none."""
    family = parse_measure(report.measure).family
    if family not in ESTIMATED_FAMILIES:
        return {
            "estimators_unavailable": f"the penalty estimators are defined for "
            f"{', '.join(ESTIMATED_FAMILIES)} (with their cut-offs), not for {report.measure}"
        }
    leave_out, groups = units(runs_models, pooled)
    n_units = len({groups[t] for t in pooled}) if groups else len(pooled)
    if n_units < 2:
        what = "groups" if leave_out == "group" else "runs"
        return {
            "estimators_unavailable": "the estimators are validated by leaving out one pooled "
            f"unit at a time: that needs at least two pooled {what} ({n_units} here)"
        }
    result = estimator_report(
        qrels,
        runs,
        report.measure,
        LeaveOut(
            depth=report.depth,
            pooled=pooled,
            groups=groups,
            leave_out=leave_out,
            topics=topics,
            relevance_level=level,
        ),
    )
    return {"estimators": result.to_dict()}


def _efficiency(
    campaign: Campaign,
    runs_models: list[Run],
    pooled: list[str],
    qrels: dict[str, dict[str, int]],
    depth: int,
    level: int,
    *,
    topics: set[str] | None = None,
    strategies: Sequence[str] = EFFICIENCY_STRATEGIES,
) -> dict[str, Any]:
    """Relevant documents found against judgments made, per pooling strategy, with the
    current qrels as the oracle over the depth-k pool of the pooled runs (mean per topic), on
    ``topics`` only when given."""
    ranked = {r.tag: rankings(r, depth) for r in runs_models if r.tag in set(pooled)}
    if topics is not None:
        qrels = {q: j for q, j in qrels.items() if q in topics}
        ranked = {t: {q: d for q, d in r.items() if q in topics} for t, r in ranked.items()}
    if not ranked:
        return {"efficiency": {}}
    pool_sizes = [
        len({d for r in ranked.values() for d in r.get(q, [])})
        for q in {q for r in ranked.values() for q in r}
    ]
    limit = max(pool_sizes, default=0)
    step = max(1, limit // 40)
    budgets = list(range(0, limit + step, step))
    curves = {}
    for name in strategies:
        result = simulate(
            ranked, qrels, make_strategy(name), depth=depth, budgets=budgets, relevance_level=level
        )
        curves[name] = list(result.mean_found)
    return {
        "efficiency": {
            "budgets": budgets,
            "curves": curves,
            "depth": depth,
            "topics": len([q for q in qrels if any(q in r for r in ranked.values())]),
        }
    }
