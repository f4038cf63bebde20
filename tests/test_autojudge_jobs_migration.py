"""The autojudge migrations that move a stored computation's lifecycle (state, error, when it
finished) to its job (``core.Job``): judge audits (0004-0006), calibrations (0007-0009) and
judge runs (0010-0012). Stored rows keep what they said both ways, and tasks recorded under the
old task names run as jobs (and back).

Its own module: a transactional test cannot share one with the module-scoped demo fixture."""

from __future__ import annotations

from typing import Any

import pytest

from judging.autojudge import services
from judging.autojudge.audit import audit_request
from judging.autojudge.models import JudgeAudit, JudgeCalibration, JudgeKind, JudgeRun
from judging.core import jobs
from judging.core.models import Job, JobState, OutboxTask
from tests.autojudge.test_audit import AUTO, setup  # noqa: F401

BEFORE = [("autojudge", "0003_judgecalibration")]
OLD_AUDIT_TASK = "judging.autojudge.tasks.compute_audit"
OLD_CALIBRATION_TASK = "judging.autojudge.tasks.calibrate_judge"
OLD_RUN_TASK = "judging.autojudge.tasks.run_judge"


def _migrate(target: list[tuple[str, str]] | None) -> Any:
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    executor.migrate(target or executor.loader.graph.leaf_nodes())
    return MigrationExecutor(connection).loader.project_state(target).apps if target else None


@pytest.mark.django_db(transaction=True)
def test_audits_get_jobs_with_their_states_and_old_tasks_run_as_jobs(
    setup: dict[str, Any],  # noqa: F811
    as_committed: Any,
) -> None:
    human, pool = setup["human"], setup["pool"]
    with as_committed():
        done = audit_request(judge=setup["judge"], human=human, pool=pool)
    assert done.state == "done", done.error
    result, finished = done.result, done.finished_at
    # asked for, not computed yet: its job's task still in the outbox
    waiting_judge = services.judge_create(
        campaign=human.campaign, name="waiting", kind=JudgeKind.IMPORTED, model="m"
    )
    services.store_labels(waiting_judge, [services.Label(q, d, g) for (q, d), g in AUTO.items()])
    job = Job.objects.create(kind="judge_audit", key="judge-audit:waiting")
    waiting = JudgeAudit.objects.create(judge=waiting_judge, human=human, pool=pool, job=job)
    waiting_row = OutboxTask.objects.create(task=jobs.RUN_TASK, args=[job.pk], key=job.key, job=job)
    lost_judge = services.judge_create(
        campaign=human.campaign, name="lost", kind=JudgeKind.IMPORTED, model="m"
    )

    old = _migrate(BEFORE)
    try:
        OldAudit = old.get_model("autojudge", "JudgeAudit")
        row = OldAudit.objects.get(pk=done.pk)
        assert (row.state, row.error, row.finished_at, row.result) == ("done", "", finished, result)
        assert OldAudit.objects.get(pk=waiting.pk).state == "queued"
        back = OutboxTask.objects.get(pk=waiting_row.pk)
        assert (back.task, back.args, back.job_id) == (OLD_AUDIT_TASK, [waiting.pk], None)
        assert not Job.objects.filter(kind="judge_audit").exists()
        failed = OldAudit.objects.create(
            judge_id=lost_judge.pk,
            human_id=human.pk,
            pool_id=pool.pk,
            state="failed",
            error="ValueError: x",
        )
        gone_row = OutboxTask.objects.create(task=OLD_AUDIT_TASK, args=[10**9], key="gone")
    finally:
        _migrate(None)

    row = JudgeAudit.objects.select_related("job").get(pk=done.pk)
    assert (row.job.kind, row.job.key) == ("judge_audit", f"judge-audit:{done.pk}")
    assert (row.state, row.error, row.finished_at, row.result) == ("done", "", finished, result)
    lost = JudgeAudit.objects.get(pk=failed.pk)
    assert (lost.state, lost.job.state, lost.error) == ("failed", "failed", "ValueError: x")
    waiting = JudgeAudit.objects.select_related("job").get(pk=waiting.pk)
    assert (waiting.state, waiting.job.state) == ("queued", JobState.PENDING)
    row_now = OutboxTask.objects.get(pk=waiting_row.pk)
    assert (row_now.task, row_now.args, row_now.job_id) == (
        jobs.RUN_TASK,
        [waiting.job.pk],
        waiting.job.pk,
    )
    gone = OutboxTask.objects.get(pk=gone_row.pk)
    assert gone.done_at is not None and gone.task == OLD_AUDIT_TASK
    # and it runs: the waiting audit is computed by the one job task
    assert jobs.run(waiting.job.pk).state == JobState.DONE  # type: ignore[union-attr]
    assert JudgeAudit.objects.get(pk=waiting.pk).result["pool"] == pool.number


@pytest.mark.django_db(transaction=True)
def test_calibrations_get_jobs_with_their_states_and_old_tasks_run_as_jobs(
    setup: dict[str, Any],  # noqa: F811
) -> None:
    judge, human, pool = setup["judge"], setup["human"], setup["pool"]
    asked = {"judge": judge, "human": human, "pool": pool}
    made = services.judge_create(
        campaign=human.campaign, name="calibrated", kind=JudgeKind.IMPORTED, model="m"
    )
    done_job = Job.objects.create(kind="judge_calibration", key="c:done", state=JobState.DONE)
    Job.objects.filter(pk=done_job.pk).update(computed_at=done_job.since)
    done = JudgeCalibration.objects.create(**asked, seed=1, job=done_job, calibrated=made)
    finished = JudgeCalibration.objects.get(pk=done.pk).finished_at
    assert finished is not None
    live_job = Job.objects.create(kind="judge_calibration", key="c:live", state=JobState.RUNNING)
    live = JudgeCalibration.objects.create(**asked, seed=2, job=live_job)
    live_row = OutboxTask.objects.create(
        task=jobs.RUN_TASK, args=[live_job.pk], key=live_job.key, job=live_job
    )

    old = _migrate([("autojudge", "0006_audit_job_lifecycle")])
    try:
        Old = old.get_model("autojudge", "JudgeCalibration")
        row = Old.objects.get(pk=done.pk)
        assert (row.state, row.error, row.finished_at, row.calibrated_id) == (
            "done",
            "",
            finished,
            made.pk,
        )
        assert Old.objects.get(pk=live.pk).state == "running"
        back = OutboxTask.objects.get(pk=live_row.pk)
        assert (back.task, back.args, back.job_id) == (OLD_CALIBRATION_TASK, [live.pk], None)
        assert not Job.objects.filter(kind="judge_calibration").exists()
        failed = Old.objects.create(
            judge_id=judge.pk, human_id=human.pk, pool_id=pool.pk, state="failed", error="E: x"
        )
        queued = Old.objects.create(judge_id=judge.pk, human_id=human.pk, pool_id=pool.pk)
        queued_row = OutboxTask.objects.create(task=OLD_CALIBRATION_TASK, args=[queued.pk], key="q")
        gone_row = OutboxTask.objects.create(task=OLD_CALIBRATION_TASK, args=[10**9], key="gone")
    finally:
        _migrate(None)

    row = JudgeCalibration.objects.select_related("job").get(pk=done.pk)
    assert (row.job.kind, row.job.key) == ("judge_calibration", f"judge-calibration:{done.pk}")
    assert (row.state, row.error, row.finished_at, row.calibrated_id) == (
        "done",
        "",
        finished,
        made.pk,
    )
    assert JudgeCalibration.objects.get(pk=live.pk).state == "running"
    lost = JudgeCalibration.objects.get(pk=failed.pk)
    assert (lost.state, lost.job.state, lost.error) == ("failed", "failed", "E: x")
    for pk, row_pk in ((live.pk, live_row.pk), (queued.pk, queued_row.pk)):
        calibration = JudgeCalibration.objects.get(pk=pk)
        task = OutboxTask.objects.get(pk=row_pk)
        assert (task.task, task.args, task.job_id) == (
            jobs.RUN_TASK,
            [calibration.job_id],
            calibration.job_id,
        )
    assert JudgeCalibration.objects.get(pk=queued.pk).state == "queued"
    gone = OutboxTask.objects.get(pk=gone_row.pk)
    assert gone.done_at is not None and gone.task == OLD_CALIBRATION_TASK


@pytest.mark.django_db(transaction=True)
def test_judge_runs_get_jobs_with_their_states_and_old_tasks_run_as_jobs(
    setup: dict[str, Any],  # noqa: F811
) -> None:
    from django.utils import timezone

    judge, pool = setup["judge"], setup["pool"]
    now = timezone.now()
    done_job = Job.objects.create(
        kind="judge_run", key="r:done", state=JobState.DONE, computed_at=now, heartbeat_at=now
    )
    done = JudgeRun.objects.create(
        judge=judge, pool=pool, job=done_job, total=12, done=12, ok=11, errors=1, cost=0.5
    )
    live_job = Job.objects.create(kind="judge_run", key="r:live")
    live = JudgeRun.objects.create(judge=judge, pool=pool, job=live_job, total=12)
    live_row = OutboxTask.objects.create(
        task=jobs.RUN_TASK, args=[live_job.pk], key=live_job.key, job=live_job
    )

    old = _migrate([("autojudge", "0009_calibration_job_lifecycle")])
    try:
        Old = old.get_model("autojudge", "JudgeRun")
        row = Old.objects.get(pk=done.pk)
        assert (row.state, row.error, row.finished_at, row.heartbeat_at) == ("done", "", now, now)
        assert (row.total, row.done, row.ok, row.errors, row.cost) == (12, 12, 11, 1, 0.5)
        assert Old.objects.get(pk=live.pk).state == "queued"
        back = OutboxTask.objects.get(pk=live_row.pk)
        assert (back.task, back.args, back.job_id) == (OLD_RUN_TASK, [live.pk], None)
        assert not Job.objects.filter(kind="judge_run").exists()
        failed = Old.objects.create(
            judge_id=judge.pk, pool_id=pool.pk, state="failed", error="E: x", total=12, done=3
        )
        running = Old.objects.create(
            judge_id=judge.pk, pool_id=pool.pk, state="running", started_at=now, heartbeat_at=now
        )
        running_row = OutboxTask.objects.create(task=OLD_RUN_TASK, args=[running.pk], key="r")
        gone_row = OutboxTask.objects.create(task=OLD_RUN_TASK, args=[10**9], key="gone")
    finally:
        _migrate(None)

    row = JudgeRun.objects.select_related("job").get(pk=done.pk)
    assert (row.job.kind, row.job.key) == ("judge_run", f"judge-run:{done.pk}")
    assert (row.state, row.error, row.finished_at, row.heartbeat_at) == ("done", "", now, now)
    assert (row.total, row.done, row.ok, row.errors, row.cost) == (12, 12, 11, 1, 0.5)
    lost = JudgeRun.objects.get(pk=failed.pk)
    assert (lost.state, lost.job.state, lost.error) == ("failed", "failed", "E: x")
    assert lost.done == 3
    still = JudgeRun.objects.get(pk=running.pk)
    assert (still.state, still.heartbeat_at, still.started_at) == ("running", now, now)
    assert JudgeRun.objects.get(pk=live.pk).state == "queued"
    for pk, row_pk in ((live.pk, live_row.pk), (running.pk, running_row.pk)):
        run = JudgeRun.objects.get(pk=pk)
        task = OutboxTask.objects.get(pk=row_pk)
        assert (task.task, task.args, task.job_id) == (jobs.RUN_TASK, [run.job_id], run.job_id)
    gone = OutboxTask.objects.get(pk=gone_row.pk)
    assert gone.done_at is not None and gone.task == OLD_RUN_TASK
    # and it runs: the imported judge cannot start, so the run fails saying why
    live = JudgeRun.objects.get(pk=live.pk)
    assert jobs.run(live.job_id).state == JobState.FAILED  # type: ignore[union-attr]
    assert "imported" in JudgeRun.objects.get(pk=live.pk).error
