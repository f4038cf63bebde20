"""Evaluating stored runs against qrels versions, and the reads built on the results.

``metrics`` does the science; this module moves data between the database and it. Evaluations
are computed once per (run, qrels version, mode, measures) and stored with their qrels version.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from typing import Any

import numpy as np
from django.db import IntegrityError, transaction
from django.utils import timezone

from judging.assessments.models import QrelsEntry, QrelsVersion
from judging.campaigns.models import Campaign, RankedList, Run, Topic
from judging.core.errors import InputProblem, InvalidInput
from judging.core.roles import is_admin
from judging.evaluation.models import EvalMode, EvalState, Evaluation
from metrics.curve import recall_curve
from metrics.evaluator import Evaluator
from metrics.io import Qrels
from metrics.io import Run as MetricsRun
from metrics.names import parse_measures
from metrics.stats import bootstrap_ci, compare_runs

CURVE_DEPTH = 100


# --- loading ------------------------------------------------------------------------------


def metrics_run(run: Run) -> MetricsRun:
    """A stored run as a ``metrics`` run (already in trec_eval order)."""
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
    return MetricsRun(qids=qids, offsets=offsets, docids=docids, scores=scores, tag=run.tag)


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
    return out


def latest_qrels(campaign: Campaign) -> QrelsVersion | None:
    return QrelsVersion.objects.filter(campaign=campaign).order_by("-number").first()


def qrels_version(campaign: Campaign, number: str | int | None) -> QrelsVersion | None:
    """Qrels version ``number`` of the campaign, or its latest when no number is given.

    None when the campaign has no such version (a number that is not a number included).
    """
    if number is None or number == "":
        return latest_qrels(campaign)
    if not str(number).isdigit():
        return None
    return QrelsVersion.objects.filter(campaign=campaign, number=int(number)).first()


# --- computing ----------------------------------------------------------------------------


def _measures(campaign: Campaign, measures: Sequence[str] | None) -> list[str]:
    names = list(measures or campaign.measures)
    try:
        parse_measures(names)
    except ValueError as exc:
        raise InvalidInput(
            "unknown measure", [InputProblem(str(exc), location="measures")]
        ) from None
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
) -> list[Evaluation]:
    """Evaluate runs against one qrels version (qrels prepared once), storing each result.

    A (run, version, mode, measures) already evaluated is skipped unless ``force``.
    """
    campaign = version.campaign
    names = _measures(campaign, measures)
    key = ",".join(sorted(names))
    qrels = qrels_dict(version)
    evaluator = Evaluator(
        Qrels.from_dict(qrels),
        names,
        compat="trec_eval" if mode == EvalMode.TREC_EVAL else None,
        relevance_level=campaign.relevance_threshold,
        ci="bootstrap",
    )
    done = []
    for run in runs:
        evaluation, created = _claim(run, version, mode, names, key)
        if not created and evaluation.state == EvalState.DONE and not force:
            done.append(evaluation)
            continue
        start = time.perf_counter()
        try:
            result = evaluator.evaluate(metrics_run(run))
            data = result.to_dict(per_query=True)
            curve = recall_curve(
                qrels,
                rankings(run, CURVE_DEPTH),
                max_k=CURVE_DEPTH,
                relevance_level=campaign.relevance_threshold,
            )
            evaluation.result = data
            evaluation.slices = _slices(campaign, data.get("per_query", {}), names)
            evaluation.curve = curve.to_dict(per_query=False)
            evaluation.state = EvalState.DONE
            evaluation.error = ""
        except Exception as exc:  # stored for the user to see; the other runs go on
            evaluation.state = EvalState.FAILED
            evaluation.error = f"{type(exc).__name__}: {exc}"
        evaluation.computed_at = timezone.now()
        evaluation.seconds = time.perf_counter() - start
        evaluation.save()
        done.append(evaluation)
    return done


def _claim(
    run: Run, version: QrelsVersion, mode: str, names: list[str], key: str
) -> tuple[Evaluation, bool]:
    try:
        with transaction.atomic():
            return Evaluation.objects.get_or_create(
                run=run,
                qrels=version,
                mode=mode,
                measures_key=key,
                defaults={"measures": names},
            )
    except IntegrityError:
        return Evaluation.objects.get(run=run, qrels=version, mode=mode, measures_key=key), False


def evaluations_after_run(run: Run) -> None:
    """A run arrived: evaluate it against the latest qrels version (after commit, as a task)."""
    version = latest_qrels(run.campaign)
    if version is None:
        return
    run_id, version_id = run.pk, version.pk

    def send() -> None:
        from judging.evaluation.tasks import evaluate_run

        evaluate_run.delay(run_id, version_id)

    transaction.on_commit(send)


def evaluations_after_qrels(version: QrelsVersion) -> None:
    """A qrels version was published or imported: evaluate every run of the campaign."""
    version_id = version.pk

    def send() -> None:
        from judging.evaluation.tasks import evaluate_qrels_version

        evaluate_qrels_version.delay(version_id)

    transaction.on_commit(send)


# --- reading ------------------------------------------------------------------------------


def run_label(run: Run, user: Any) -> str:
    """Researchers see their own runs by tag and other people's runs anonymised."""
    if is_admin(user) or run.owner_id == getattr(user, "pk", None):
        return run.tag
    return f"anonymous run #{run.pk}"


def leaderboard(
    *, campaign: Campaign, version: QrelsVersion, user: Any, mode: str = EvalMode.HONEST
) -> dict[str, Any]:
    """Every run's aggregates under one qrels version (never mixed with another version)."""
    names = list(campaign.measures)
    key = ",".join(sorted(names))
    evaluations = {
        e.run_id: e
        for e in Evaluation.objects.filter(
            qrels=version, mode=mode, measures_key=key, run__campaign=campaign
        )
    }
    rows = []
    for run in campaign.runs.select_related("owner").order_by("tag"):
        ev = evaluations.get(run.pk)
        row: dict[str, Any] = {
            "run_id": run.pk if run_label(run, user) == run.tag else None,
            "run": run_label(run, user),
            "pooled": run.pooled,
            "group": run.group if run_label(run, user) == run.tag else "",
            "state": ev.state if ev else "missing",
        }
        if ev is not None and ev.state == EvalState.DONE:
            row["measures"] = ev.result.get("measures", {})
            row["n_queries"] = ev.result.get("n_queries")
            row["excluded_summary"] = ev.result.get("excluded_summary", [])
            row["slices"] = ev.slices
        rows.append(row)
    primary = names[0] if names else None

    def sort_key(r: dict[str, Any]) -> float:
        v = (r.get("measures") or {}).get(primary or "", {}).get("value")
        return -(v if v is not None else -1.0)

    rows.sort(key=sort_key)
    return {
        "campaign": campaign.pk,
        "qrels_version": version.number,
        "qrels_hash": version.content_hash,
        "mode": mode,
        "measures": names,
        "sorted_by": primary,
        "runs": rows,
    }


def significance(
    *,
    campaign: Campaign,
    version: QrelsVersion,
    measure: str,
    test: str,
    user: Any,
    runs: Sequence[Run] | None = None,
) -> dict[str, Any]:
    """Paired tests between runs on one measure (Holm-corrected), from stored per-query values."""
    if test not in ("t", "randomization", "bootstrap"):
        raise InvalidInput(
            "unknown test",
            [
                InputProblem(
                    f"test {test!r} is not one of t, randomization, bootstrap", location="test"
                )
            ],
        )
    names = list(campaign.measures)
    key = ",".join(sorted(names))
    chosen = list(runs) if runs is not None else list(campaign.runs.order_by("tag"))
    evaluations = {
        e.run_id: e
        for e in Evaluation.objects.filter(
            qrels=version,
            mode=EvalMode.HONEST,
            measures_key=key,
            state=EvalState.DONE,
            run__in=chosen,
        )
    }
    canonical = parse_measures([measure])[0].name if measure else names[0]
    per_query: dict[str, dict[str, float]] = {}
    for run in chosen:
        ev = evaluations.get(run.pk)
        values = ev.result.get("per_query", {}).get(canonical) if ev else None
        if values is None:
            continue
        per_query[run_label(run, user)] = {q: float(v) for q, v in values.items() if v is not None}
    queries = sorted(set.intersection(*(set(v) for v in per_query.values()))) if per_query else []
    rows = compare_runs(per_query, test=test, queries=queries) if len(per_query) > 1 else []
    return {
        "qrels_version": version.number,
        "measure": canonical,
        "test": test,
        "correction": "holm",
        "n_queries": len(queries),
        "comparisons": [asdict(c) for c in rows],
    }
