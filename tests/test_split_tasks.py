"""Evaluation and bias work split across workers (issue 14, point 6): a qrels version's runs are
evaluated in parts of POOLJUDGE_EVAL_RUNS_PER_TASK runs, a bias report is one task per analysis
assembled from the stored parts. The split result equals the one-process computation; a lost or
dead part is sent again by the sweep and the report still completes; two real workers share the
parts."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.db import transaction
from django.utils import timezone

from judging.campaigns.models import Campaign, Topic
from judging.core import jobs, outbox
from judging.core.models import Job, JobState, OutboxTask
from judging.evaluation import bias
from judging.evaluation.bias import BIAS_PARTS, bias_report_request
from judging.evaluation.models import BiasPart, BiasReport, Evaluation
from judging.evaluation.services import evaluate_runs
from judging.workflows.qrels import qrels_imported
from judging.workflows.runs import run_submitted
from judging.workflows.sweep import sweep
from tests.knobs import override_knobs
from tests.workers import ROOT, celery_worker, require_broker, wait_for

pytestmark = pytest.mark.follow_ups

TOPICS = [str(q) for q in range(1, 9)]
GROUPS = ["lab-a", "lab-a", "lab-b", "lab-c", "lab-c", "lab-d"]


def _docs(run: int, qid: str) -> list[str]:
    """A deterministic ranking: documents shared between runs and some of each run's own."""
    shared = [f"d{qid}-{(run * 3 + i) % 15}" for i in range(12)]
    own = [f"r{run}-{qid}-{i}" for i in range(3)]
    return shared[:6] + own + shared[6:]


def _qrels() -> str:
    lines = []
    for qid in TOPICS:
        for i in range(0, 15, 2):
            lines.append(f"{qid} 0 d{qid}-{i} {1 + (i % 3 == 0)}")
        lines.append(f"{qid} 0 d{qid}-1 0")
        lines.append(f"{qid} 0 r2-{qid}-0 1")  # found by run 2 only
    return "\n".join(lines) + "\n"


def build(campaign: Campaign, researcher: Any, *, second_version: bool = True) -> Campaign:
    """Eight topics, six runs in four groups (the last not pooled), two qrels versions (so the
    report has before/after); tasks inline, as the tests run them."""
    for qid in TOPICS:
        Topic.objects.update_or_create(campaign=campaign, qid=qid, defaults={"title": qid})
    for i, group in enumerate(GROUPS):
        run = run_submitted(
            campaign=campaign,
            owner=researcher,
            tag=f"run{i}",
            group=group,
            results={q: {d: 20.0 - k for k, d in enumerate(_docs(i, q))} for q in TOPICS},
        )
        run.pooled = i < len(GROUPS) - 1
        run.save()
    with transaction.atomic():
        qrels_imported(campaign=campaign, data=_qrels().encode())
    if second_version:
        more = _qrels() + "".join(f"{q} 0 r5-{q}-1 1\n" for q in TOPICS)
        with transaction.atomic():
            qrels_imported(campaign=campaign, data=more.encode())
    return campaign


def unsplit(report: BiasReport) -> dict[str, Any]:
    """The report computed in one process, as stored (JSON): every part on the campaign's runs
    of now, then the same assembly (the reference the split computation is tested against)."""
    report = BiasReport.objects.select_related("campaign", "qrels").get(pk=report.pk)
    inputs = bias._Inputs(report)
    inputs.analysed  # noqa: B018 (the topic problem first, as every part meets it)
    parts = {name: bias._part(name, inputs) for name in BIAS_PARTS}
    return json.loads(json.dumps(bias.stored_result(inputs, parts)))


@pytest.fixture
def split_campaign(campaign: Campaign, researcher: Any, as_committed: Any) -> Campaign:
    with as_committed():
        return build(campaign, researcher)


# --- the split result is the unsplit one ------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("kind", "measure", "depth", "topics"),
    [("loo_run", "AP", 5, ""), ("loo_group", "P@5", 3, "2-6"), ("loo_run", "nDCG@10", 10, "")],
)
def test_a_split_report_is_the_one_process_report(
    split_campaign: Campaign, as_committed: Any, kind: str, measure: str, depth: int, topics: str
) -> None:
    with as_committed():
        report = bias_report_request(
            campaign=split_campaign, kind=kind, measure=measure, depth=depth, topics=topics
        )
    assert report is not None
    report.refresh_from_db()
    assert report.state == JobState.DONE, report.error
    parts = BiasPart.objects.filter(report=report)
    assert sorted(parts.values_list("name", flat=True)) == sorted(BIAS_PARTS)
    assert set(parts.values_list("job__state", flat=True)) == {JobState.DONE}
    assert {"loo", "penalty", "estimators", "coverage", "efficiency", "before_after"} <= set(
        report.result
    )
    assert set(report.result["efficiency"]["curves"]) == set(bias.EFFICIENCY_STRATEGIES)
    assert report.result == unsplit(report)
    assert report.seconds is not None
    assert report.seconds >= sum(p.seconds or 0.0 for p in parts)
    # one outbox row per part and one assembly (or more: safe twice), all finished
    rows = OutboxTask.objects.filter(key__startswith=f"bias:{report.pk}:")
    assert rows.filter(key__contains=":part:").count() == len(BIAS_PARTS)
    assert rows.filter(key=bias.assemble_key(report.pk)).exists()
    assert set(rows.values_list("task", flat=True)) == {jobs.RUN_TASK}
    assert not rows.filter(done_at__isnull=True).exists()


@pytest.mark.django_db
def test_a_failed_part_fails_the_report_naming_it_and_asking_again_recomputes_only_it(
    split_campaign: Campaign, as_committed: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise ValueError("no judged document")

    monkeypatch.setattr(bias, "judged_at_k", broken)
    with as_committed():
        report = bias_report_request(campaign=split_campaign, measure="AP", depth=6)
    assert report is not None
    report.refresh_from_db()
    assert report.state == JobState.FAILED
    assert report.error == "coverage: ValueError: no judged document"
    assert BiasPart.objects.get(report=report, name="coverage").state == JobState.FAILED
    done_before = dict(
        BiasPart.objects.filter(report=report, job__state=JobState.DONE).values_list("name", "pk")
    )
    assert len(done_before) == len(BIAS_PARTS) - 1
    monkeypatch.undo()
    with as_committed():
        bias_report_request(campaign=split_campaign, measure="AP", depth=6)
    report.refresh_from_db()
    assert report.state == JobState.DONE, report.error
    assert report.result == unsplit(report)
    # the other parts were kept, not computed again
    recomputed = OutboxTask.objects.filter(key=bias.part_key(report.pk, "loo")).count()
    assert recomputed == 1
    assert OutboxTask.objects.filter(key=bias.part_key(report.pk, "coverage")).count() == 2


@pytest.mark.django_db
def test_the_tasks_run_twice_change_nothing(split_campaign: Campaign, as_committed: Any) -> None:
    with as_committed():
        report = bias_report_request(campaign=split_campaign, measure="AP", depth=5)
    assert report is not None
    report.refresh_from_db()
    stored = (report.result, report.computed_at)
    with as_committed():
        jobs.run(report.job.pk)  # the report, its part, its assembly: sent again
        jobs.run(BiasPart.objects.get(report=report, name="loo").job.pk)
        jobs.run(report.job.pk)
    report.refresh_from_db()
    assert (report.result, report.computed_at) == stored


# --- lost and dead parts: the sweep finishes the report -----------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("how", ["message lost", "worker died", "assembly lost"])
def test_a_lost_part_is_sent_again_by_the_sweep_and_the_report_completes(
    split_campaign: Campaign, as_committed: Any, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    lost = ":assemble" if how == "assembly lost" else ":part:efficiency:mtf"
    real_send = outbox.send
    dropped: list[int] = []

    def losing_send(row_id: int) -> bool:
        row = OutboxTask.objects.get(pk=row_id)
        if row.key.endswith(lost) and not dropped:
            dropped.append(row_id)  # handed to a broker that loses it (or a worker that dies)
            now = timezone.now()
            OutboxTask.objects.filter(pk=row_id).update(
                sent_at=now, sends=1, next_attempt_at=now + timedelta(seconds=60)
            )
            if how == "worker died":
                OutboxTask.objects.filter(pk=row_id).update(started_at=now, heartbeat_at=now)
            return True
        return real_send(row_id)

    monkeypatch.setattr(outbox, "send", losing_send)
    with as_committed():
        report = bias_report_request(campaign=split_campaign, measure="AP", depth=5)
    assert report is not None and dropped
    report.refresh_from_db()
    assert report.state == JobState.PENDING
    monkeypatch.setattr(outbox, "send", real_send)
    with as_committed():
        assert sweep().sent == 0  # not due yet: nothing is sent twice early
    # later: the resend wait has passed (message lost) or the heartbeat is stale (worker died)
    later = timezone.now() + timedelta(hours=2)
    monkeypatch.setattr(timezone, "now", lambda: later)
    with as_committed():
        assert sweep().sent >= 1
    report.refresh_from_db()
    assert report.state == JobState.DONE, report.error
    assert report.result == unsplit(report)


@pytest.mark.django_db
def test_a_run_submitted_while_the_parts_run_is_in_none_of_them(
    split_campaign: Campaign,
    as_committed: Any,
    monkeypatch: pytest.MonkeyPatch,
    researcher: Any,
) -> None:
    real_send = outbox.send
    held: list[int] = []

    def holding_send(row_id: int) -> bool:
        row = OutboxTask.objects.get(pk=row_id)
        if row.key.endswith(":part:coverage"):
            held.append(row_id)  # queued behind other work
            return True
        return real_send(row_id)

    monkeypatch.setattr(outbox, "send", holding_send)
    with as_committed():
        report = bias_report_request(campaign=split_campaign, measure="AP", depth=5)
    assert report is not None and held
    expected = unsplit(report)  # the campaign's runs when the parts were recorded
    with as_committed():
        late = run_submitted(
            campaign=split_campaign,
            owner=researcher,
            tag="late",
            group="lab-late",
            results={q: {f"d{q}-{i}": 9.0 - i for i in range(8)} for q in TOPICS},
        )
    assert late.pooled
    monkeypatch.setattr(outbox, "send", real_send)
    with as_committed():
        real_send(held[0])
    report.refresh_from_db()
    assert report.state == JobState.DONE, report.error
    assert "late" not in report.result["pooled"]
    assert "late" not in json.dumps(report.result)
    assert report.result == expected


# --- evaluation in parts ----------------------------------------------------------------------


@pytest.mark.django_db
def test_a_qrels_version_evaluates_its_runs_in_parts_with_the_same_results(
    campaign: Campaign, researcher: Any, as_committed: Any
) -> None:
    with override_knobs(eval_runs_per_task=4), as_committed():
        build(campaign, researcher, second_version=False)
    version = campaign.qrels_versions.get()
    parts = Job.objects.filter(kind="evaluations", parent__isnull=False)
    assert sorted(len(job.args["runs"]) for job in parts) == [2, 4]  # six runs, 4 per part
    assert set(parts.values_list("state", flat=True)) == {JobState.DONE}
    rows = OutboxTask.objects.filter(job__in=parts)
    assert rows.count() == 2 and not rows.filter(done_at__isnull=True).exists()
    stored = {
        e.run.tag: e.result
        for e in Evaluation.objects.filter(qrels=version, job__state=JobState.DONE)
    }
    assert sorted(stored) == [f"run{i}" for i in range(len(GROUPS))]
    again = evaluate_runs(version=version, runs=campaign.runs.all(), force=True)
    assert {e.run.tag: json.loads(json.dumps(e.result)) for e in again} == stored


# --- two real workers share the parts -----------------------------------------------------


def outbox_idle() -> bool:
    return not OutboxTask.objects.filter(done_at__isnull=True).exists()


def _tasks_in(log: Path) -> list[str]:
    """The jobs a worker's log says it ran, as KIND (a part: KIND_part; an assembly:
    KIND_assemble), read from the outbox rows of the task ids."""
    ids = re.findall(r"Task judging\.core\.tasks\.run_job\[([^]]+)\] succeeded", log.read_text())
    rows = {str(r.uuid): r for r in OutboxTask.objects.filter(uuid__in=ids).select_related("job")}
    names = []
    for task_id in ids:
        row = rows.get(task_id)
        if row is None or row.job is None:
            continue
        suffix = "_part" if row.job.parent_id else ("_assemble" if ":assemble" in row.key else "")
        names.append(f"{row.job.kind}{suffix}")
    return names


def _newest_logs(n: int) -> list[Path]:
    logs = sorted((ROOT / "var").glob("worker-*.log"), key=lambda p: p.stat().st_mtime)
    return logs[-n:]


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_two_real_workers_share_the_parts_and_the_report_is_the_one_process_report(
    campaign: Campaign, researcher: Any, as_committed: Any
) -> None:
    require_broker()
    with as_committed():
        build(campaign, researcher, second_version=False)
    env = {"POOLJUDGE_EVAL_RUNS_PER_TASK": "1"}
    with celery_worker(env=env) as (first, _), celery_worker(env=env) as (second, _):
        with transaction.atomic():  # sent to Redis when this commits
            more = _qrels() + "".join(f"{q} 0 r5-{q}-1 1\n" for q in TOPICS)
            version = qrels_imported(campaign=campaign, data=more.encode())
        report = BiasReport.objects.get(campaign=campaign, qrels=version, measure="AP")

        def finished() -> bool:
            report.refresh_from_db()
            evaluated = Evaluation.objects.filter(qrels=version, job__state=JobState.DONE).count()
            reports = BiasReport.objects.filter(qrels=version).exclude(
                job__state__in=(JobState.DONE, JobState.FAILED)
            )
            return not reports.exists() and evaluated == len(GROUPS) and outbox_idle()

        assert wait_for(finished, timeout=180), "the workers did not finish within 180 s"
        assert first.poll() is None and second.poll() is None, "a worker died"
        logs = _newest_logs(2)
    assert report.state == JobState.DONE, report.error
    assert report.result == unsplit(report)
    ran = [_tasks_in(log) for log in logs]
    parts = [[t for t in tasks if t.endswith(("_part", "bias_report_assemble"))] for tasks in ran]
    assert all(parts), f"each worker ran a part: {ran}"
    everything = [t for tasks in ran for t in tasks]
    assert everything.count("bias_part_part") >= len(BIAS_PARTS)
    assert everything.count("evaluations_part") == len(GROUPS)
