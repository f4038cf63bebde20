"""Evaluating stored runs against qrels versions (the reads built on them: ``selectors``).

``metrics`` does the science; this module moves data between the database and it. Evaluations
are computed once per (run, qrels version, mode, measures) and stored with their qrels version,
each by a job (``core.jobs``; the entries are in ``evaluation.jobs``): ``evaluation`` for one
row asked for, ``evaluations`` for runs evaluated together (their qrels prepared once), split in
parts of POOLJUDGE_EVAL_RUNS_PER_TASK runs when a qrels version arrives.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from django.conf import settings
from django.db import IntegrityError, transaction

from judging.assessments.models import QrelsEntry, QrelsVersion
from judging.assessments.sampled import sampled_qrels
from judging.assessments.selectors import qrels_version
from judging.campaigns.models import Campaign, RankedList, Run, ScorePrecision, Topic
from judging.core import jobs
from judging.core.errors import InvalidInput
from judging.core.models import Job, JobState
from judging.evaluation.models import EvalMode, Evaluation, measures_key
from judging.evaluation.results import EVALUATION_RESULT_VERSION
from metrics.evaluation.evaluator import Evaluator
from metrics.evaluation.sampled import evaluate_sampled
from metrics.io import Qrels
from metrics.io import Run as MetricsRun
from metrics.io.sampled import SampledQrels
from metrics.measures.curve import RecallCurve, recall_curve
from metrics.measures.names import parse_measures
from metrics.measures.sampled_registry import inferred_set
from metrics.problems import Problem
from metrics.stats.intervals import bootstrap_ci

CURVE_DEPTH = 100  # the depth of curves stored before full-depth curves (still read as such)
CURVE_DENSE = 100  # every k up to this is stored; beyond it a log-spaced subset
CURVE_STEPS_PER_DECADE = 40


def curve_depth(ranked: dict[str, list[str]]) -> int:
    """How deep a run's Recall@k curve goes: its longest ranking, capped by
    ``POOLJUDGE_CURVE_MAX_DEPTH`` (at least 1, so an empty run still has a curve)."""
    longest = max((len(docids) for docids in ranked.values()), default=0)
    return max(1, min(longest, settings.POOLJUDGE_EVALUATION.curve_max_depth))


def stored_ks(depth: int, keep: Iterable[int | None] = ()) -> list[int]:
    """The k of a curve to ``depth`` that are stored: every k up to ``CURVE_DENSE``, then
    ``CURVE_STEPS_PER_DECADE`` log-spaced k per decade, the depth itself and the ``keep`` ones
    (the elbow and the plateau), so that a 1000-deep curve stores about 140 points, not 1000."""
    ks = set(range(1, min(depth, CURVE_DENSE) + 1))
    i = 1
    while True:
        k = round(CURVE_DENSE * 10 ** (i / CURVE_STEPS_PER_DECADE))
        if k >= depth:
            break
        ks.add(k)
        i += 1
    ks.add(depth)
    ks.update(k for k in keep if k is not None and 1 <= k <= depth)
    return sorted(ks)


def curve_dict(curve: RecallCurve) -> dict[str, Any]:
    """The curve as stored on an evaluation: ``RecallCurve.to_dict`` without the per-query
    curves, ``k``/``recall``/``ceiling`` thinned to :func:`stored_ks` (the k are listed, so a
    reader pairs ``k[i]`` with ``recall[i]``), and ``depth`` (the deepest k; curves stored before
    have no ``depth`` and stop at k = 100)."""
    data = curve.to_dict(per_query=False)
    depth = int(curve.k[-1]) if len(curve.k) else 0
    keep = stored_ks(depth, (curve.elbow, curve.plateau)) if depth else []
    index = {k: i for i, k in enumerate(data["k"])}
    rows = [index[k] for k in keep if k in index]
    data["k"] = [data["k"][i] for i in rows]
    data["recall"] = [data["recall"][i] for i in rows]
    data["ceiling"] = [data["ceiling"][i] for i in rows]
    data["depth"] = depth
    data["k_sampling"] = (
        f"every k up to {CURVE_DENSE}, then {CURVE_STEPS_PER_DECADE} log-spaced k per decade"
    )
    return data


# --- loading ------------------------------------------------------------------------------


def metrics_run(run: Run, campaign: Campaign) -> MetricsRun:
    """A stored run of ``campaign`` as a ``metrics`` run (already in trec_eval order), its
    scores rounded to single precision, and the run ordered again, where the campaign says so
    (``Campaign.score_precision``; the caller's campaign, not one read again per run)."""
    rows = list(
        RankedList.objects.filter(run=run)
        .order_by("topic__qid")
        .values_list("topic__qid", "size", "docids", "scores")
    )
    qids = tuple(q for q, _, _, _ in rows)
    sizes = [n for _, n, _, _ in rows]
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    joined = "\n".join(d for _, _, d, _ in rows)
    docids = np.array(joined.encode().split(b"\n") if joined else [], dtype=np.bytes_)
    scores = np.frombuffer(b"".join(bytes(s) for _, _, _, s in rows), dtype="<f8").astype(
        np.float64
    )
    stored = MetricsRun(qids=qids, offsets=offsets, docids=docids, scores=scores, tag=run.tag)
    if campaign.score_precision == ScorePrecision.SINGLE:
        return stored.with_float32_scores()  # as trec_eval 9 and pytrec_eval read them
    return stored


def rankings(run: Run, depth: int | None = None) -> dict[str, list[str]]:
    return {
        qid: (docids.split("\n", depth)[:depth] if depth else docids.split("\n"))
        for qid, docids in RankedList.objects.filter(run=run).values_list("topic__qid", "docids")
    }


def qrels_dict(version: QrelsVersion) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for qid, docid, grade in (
        QrelsEntry.objects.filter(version=version)
        .values_list("topic__qid", "docid", "grade")
        .iterator(chunk_size=20_000)
    ):
        out.setdefault(qid, {})[docid] = grade
    # topics in one order whatever the database returns (the bootstrap resamples the topics in
    # the order it is given them: PostgreSQL and SQLite gave the demo intervals 0.001 apart)
    return {qid: out[qid] for qid in sorted(out)}


# --- computing ----------------------------------------------------------------------------


def _measures(campaign: Campaign, measures: Sequence[str] | None) -> list[str]:
    names = list(measures or campaign.measures)
    try:
        parse_measures(names)
    except ValueError as exc:
        raise InvalidInput("unknown measure", [Problem.at("measures", str(exc))]) from None
    return names


def _slices(
    campaign: Campaign, per_query: dict[str, dict[str, float]], measures: list[str]
) -> dict[str, Any]:
    """Aggregates per topic tag: mean over the tagged queries with a bootstrap CI."""
    tags: dict[str, list[str]] = {}
    for qid, topic_tags in Topic.objects.filter(campaign=campaign).values_list("qid", "tags"):
        for tag in topic_tags or []:
            tags.setdefault(str(tag), []).append(qid)
    out: dict[str, Any] = {}
    for tag, qids in sorted(tags.items()):
        entry: dict[str, Any] = {}
        for m in measures:
            vals = np.array(
                [v for q, v in per_query.get(m, {}).items() if q in set(qids) and v is not None],
                dtype=np.float64,
            )
            if vals.size == 0:
                continue
            low, high = bootstrap_ci(vals)
            entry[m] = {
                "value": float(vals.mean()),
                "ci_low": low,
                "ci_high": high,
                "n_queries": int(vals.size),
            }
        if entry:
            out[tag] = entry
    return out


def evaluate_runs(
    *,
    version: QrelsVersion,
    runs: Iterable[Run],
    mode: str = EvalMode.HONEST,
    measures: Sequence[str] | None = None,
    force: bool = False,
    keep: bool = True,
) -> list[Evaluation]:
    """Evaluate runs against one qrels version (qrels prepared once), storing each result.

    A (run, version, mode, measures) already evaluated is skipped unless ``force``. Without
    ``keep`` the rows answered hold their keys only (a batch of many runs does not hold every
    result in memory until its end). Each row's
    job is computed here (``core.jobs.computing``): a run that fails is stored failed and the
    others go on.
    """
    campaign = version.campaign
    names = _measures(campaign, measures)
    key = measures_key(names)
    qrels = qrels_dict(version)
    evaluator = evaluator_for(campaign, names, mode, qrels)
    sample = sampled_qrels(version) if version.design else None
    done = []
    for run in runs:
        evaluation, created = _claim(run, version, mode, names, key)
        if not created and evaluation.job.state == JobState.DONE and not force:
            done.append(evaluation)
            continue
        with jobs.computing(evaluation.job):  # a failure is stored; the other runs go on
            fields = evaluation_fields(evaluator, qrels, campaign, run, names, sample)
            store_evaluation(evaluation, fields)
        if not keep:  # a batch's rows are read again by their readers, not by the caller
            evaluation = Evaluation(pk=evaluation.pk, run_id=run.pk, job_id=evaluation.job_id)
        done.append(evaluation)
    return done


def evaluator_for(campaign: Campaign, names: list[str], mode: str, qrels: Any) -> Evaluator:
    """The evaluator of ``names`` in ``mode`` over a qrels dict (prepared once per job)."""
    return Evaluator(
        Qrels.from_dict(qrels),
        names,
        compat="trec_eval" if mode == EvalMode.TREC_EVAL else None,
        relevance_level=campaign.relevance_threshold,
        ci="bootstrap",
    )


def evaluation_fields(
    evaluator: Evaluator,
    qrels: dict[str, dict[str, int]],
    campaign: Campaign,
    run: Run,
    names: list[str],
    sample: SampledQrels | None = None,
) -> dict[str, Any]:
    """One run's evaluation as stored (``metrics.Evaluator`` and ``metrics.measures.curve``):
    result, leaderboard summary, slices per topic tag, Recall@k curve. On a sampled version
    (``sample``) the result also holds the inferred measures (``sampled``: xinfAP, infNDCG, iP@k
    for the campaign's P@k, inum_rel, with intervals over topics), which the board shows beside
    the measures of complete qrels (those read a document not sampled as unjudged)."""
    ranked_run = metrics_run(run, campaign)
    data = evaluator.evaluate(ranked_run).to_dict(per_query=True)
    data["version"] = EVALUATION_RESULT_VERSION  # of the stored format (``evaluation.results``)
    if sample is not None:
        inferred = inferred_set(parse_measures(names))
        data["sampled"] = evaluate_sampled(sample, ranked_run, inferred).to_dict(per_query=True)
    ranked = rankings(run, settings.POOLJUDGE_EVALUATION.curve_max_depth)
    curve = recall_curve(
        qrels,
        ranked,
        max_k=curve_depth(ranked),
        relevance_level=campaign.relevance_threshold,
    )
    return {
        "result": data,
        "summary": board_summary(data),
        "slices": _slices(campaign, data.get("per_query", {}), names),
        "curve": curve_dict(curve),
    }


def store_evaluation(evaluation: Evaluation, fields: dict[str, Any] | None) -> None:
    """Keep a computed evaluation in its row (None: its run or version is gone)."""
    if fields is None:
        return
    for name, value in fields.items():
        setattr(evaluation, name, value)
    evaluation.save(update_fields=list(fields))


SUMMARY_KEYS = ("measures", "n_queries", "excluded_summary", "version")


def board_summary(result: dict[str, Any]) -> dict[str, Any]:
    """The part of a stored result that a leaderboard shows (no per-topic values)."""
    out = {k: result[k] for k in SUMMARY_KEYS if k in result}
    if "sampled" in result:
        out["sampled"] = {"measures": result["sampled"]["measures"]}
    return out


def _claim(
    run: Run, version: QrelsVersion, mode: str, names: list[str], key: str
) -> tuple[Evaluation, bool]:
    """The row of this evaluation, made (with its pending job) if there is none."""
    where = {"run": run, "qrels": version, "mode": mode, "measures_key": key}
    found = Evaluation.objects.filter(**where).select_related("job").first()
    if found is not None:
        return found, False
    try:
        with transaction.atomic():
            job = jobs.new("evaluation", run_evaluation_key(run.pk, version.pk, mode))
            return Evaluation.objects.create(**where, measures=names, job=job), True
    except IntegrityError:  # made at the same time by another request or job
        return Evaluation.objects.select_related("job").get(**where), False


def check_mode(mode: str) -> str:
    """``mode`` if it is an evaluation mode (honest, trec_eval); else a 400 naming the field."""
    if mode not in EvalMode.values:
        raise InvalidInput(
            "unknown mode",
            [Problem.at("mode", f"mode {mode!r} is not one of {', '.join(EvalMode.values)}")],
        )
    return mode


def evaluation_request(
    *, run: Run, version: QrelsVersion, mode: str = EvalMode.HONEST
) -> Evaluation:
    """Ask for the run's evaluation against ``version`` in ``mode`` (campaign's measures): the
    stored row, or a pending one computed by its job after commit. A failed one is tried
    again."""
    check_mode(mode)
    names = _measures(version.campaign, None)
    evaluation, created = _claim(run, version, mode, names, measures_key(names))
    if created:
        jobs.enqueue(evaluation.job)
    else:
        jobs.again(evaluation.job)
    return evaluation


def run_evaluation_key(run_id: int, qrels_id: int, mode: str = EvalMode.HONEST) -> str:
    return f"evaluate_run:{run_id}:{qrels_id}:{mode}"


def qrels_evaluation_key(qrels_id: int, mode: str = EvalMode.HONEST) -> str:
    if mode == EvalMode.HONEST:
        return f"evaluate_qrels:{qrels_id}"
    return f"evaluate_qrels:{qrels_id}:{mode}"


def evaluations_after_run(run: Run) -> None:
    """A run arrived: evaluate it against the latest qrels version (a job recorded with it)."""
    version = qrels_version(run.campaign)
    if version is None:
        return
    jobs.ask(
        "evaluations",
        run_evaluation_key(run.pk, version.pk),
        args={"qrels": version.pk, "mode": EvalMode.HONEST.value, "runs": [run.pk]},
    )


def evaluations_after_qrels(version: QrelsVersion, mode: str = EvalMode.HONEST) -> Job:
    """A qrels version was published or imported: evaluate every run of the campaign (in
    ``mode``), by a job split into parts of POOLJUDGE_EVAL_RUNS_PER_TASK runs
    (``evaluation_batch``)."""
    return jobs.ask(
        "evaluations",
        qrels_evaluation_key(version.pk, mode),
        args={"qrels": version.pk, "mode": str(mode), "runs": None},
    )


def evaluation_batch(job: Job) -> jobs.Parts | None:
    """The computation of an ``evaluations`` job: its runs (``args["runs"]``; None: every run of
    the version's campaign) evaluated here when they are at most POOLJUDGE_EVAL_RUNS_PER_TASK or
    were named, else split into parts of that many runs (runs deleted since are skipped, runs
    already evaluated too: safe to run twice)."""
    version = (
        QrelsVersion.objects.filter(pk=job.args.get("qrels")).select_related("campaign").first()
    )
    if version is None:
        return None  # deleted since: nothing to do
    mode = job.args.get("mode") or EvalMode.HONEST
    run_ids = job.args.get("runs")
    if run_ids is None:
        run_ids = list(version.campaign.runs.order_by("pk").values_list("pk", flat=True))
        size = settings.POOLJUDGE_EVALUATION.eval_runs_per_task
        if len(run_ids) > size:
            chunks = {
                str(i): run_ids[start : start + size]
                for i, start in enumerate(range(0, len(run_ids), size))
            }

            def record(part: Job, name: str) -> None:
                args = {"qrels": version.pk, "mode": mode, "runs": chunks[name]}
                Job.objects.filter(pk=part.pk).update(args=args)

            return jobs.Parts(kind="evaluations", names=list(chunks), record=record)
    evaluate_runs(
        version=version,
        runs=Run.objects.filter(pk__in=run_ids).order_by("pk"),
        mode=mode,
        keep=False,
    )
    return None


def evaluation_compute(job: Job) -> dict[str, Any] | None:
    """The computation of an ``evaluation`` job: its row's run against its qrels version."""
    evaluation = Evaluation.objects.filter(job=job).select_related("run", "qrels__campaign").first()
    if evaluation is None:
        return None
    campaign = evaluation.qrels.campaign
    names = list(evaluation.measures)
    qrels = qrels_dict(evaluation.qrels)
    evaluator = evaluator_for(campaign, names, evaluation.mode, qrels)
    sample = sampled_qrels(evaluation.qrels) if evaluation.qrels.design else None
    return evaluation_fields(evaluator, qrels, campaign, evaluation.run, names, sample)


def evaluation_store(job: Job, fields: dict[str, Any] | None) -> None:
    evaluation = Evaluation.objects.filter(job=job).first()
    if evaluation is not None:
        store_evaluation(evaluation, fields)
