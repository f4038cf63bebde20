"""A job's status as its readers see it: ``stale`` is read, never stored (``core.models.Job``)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from judging.core.models import Job, JobState
from tests.knobs import override_knobs

pytestmark = pytest.mark.django_db


def _job(state: str, beat_seconds_ago: float | None) -> Job:
    beat = (
        None if beat_seconds_ago is None else timezone.now() - timedelta(seconds=beat_seconds_ago)
    )
    return Job.objects.create(kind="evaluation", key="k", state=state, heartbeat_at=beat)


def test_a_running_job_without_a_recent_beat_reads_stale_after_the_setting() -> None:
    with override_knobs(stale_seconds=60):
        assert _job(JobState.RUNNING, 5).status == JobState.RUNNING
        assert _job(JobState.RUNNING, 120).status == JobState.STALE
        assert _job(JobState.RUNNING, None).status == JobState.RUNNING  # not started beating
    with override_knobs(stale_seconds=600):
        assert _job(JobState.RUNNING, 120).status == JobState.RUNNING


def test_finished_jobs_never_read_stale_and_live_ones_read_pending_as_outcome() -> None:
    with override_knobs(stale_seconds=60):
        old_done = _job(JobState.DONE, 3600)
        assert old_done.status == JobState.DONE and old_done.outcome == JobState.DONE
        assert _job(JobState.FAILED, 3600).outcome == JobState.FAILED
        for live in (JobState.PENDING, JobState.QUEUED, JobState.RUNNING):
            assert _job(live, 3600).outcome == JobState.PENDING


def test_the_sweep_forgets_the_finished_jobs_whose_result_row_was_deleted(
    campaign: Any, researcher: Any, as_committed: Any
) -> None:
    """A run deleted takes its evaluations with it (a cascade that does not see jobs); the next
    sweep deletes their finished jobs, and keeps every job whose row is there, every job that is
    its own record (a batch of evaluations) and every job not finished."""
    from judging.evaluation.models import Evaluation
    from judging.workflows.qrels import qrels_imported
    from judging.workflows.runs import run_submitted
    from judging.workflows.sweep import sweep

    for tag in ("kept", "gone"):
        run_submitted(campaign=campaign, owner=researcher, tag=tag, results={"401": {"d1": 1.0}})
    with as_committed():
        qrels_imported(campaign=campaign, data=b"401 0 d1 1\n")
    evaluations = Evaluation.objects.filter(run__campaign=campaign)
    assert evaluations.count() == 2
    gone = evaluations.get(run__tag="gone")
    kept = evaluations.get(run__tag="kept")
    orphan, live = gone.job_id, _job(JobState.RUNNING, None)  # a live job of no row (yet)
    batches = set(Job.objects.filter(kind="evaluations").values_list("pk", flat=True))
    assert batches
    campaign.runs.get(tag="gone").delete()
    assert Job.objects.filter(pk=orphan).exists()  # the cascade left it
    assert sweep().forgotten == 1
    assert not Job.objects.filter(pk=orphan).exists()
    assert Job.objects.filter(pk__in=[kept.job_id, live.pk]).count() == 2
    assert set(Job.objects.filter(kind="evaluations").values_list("pk", flat=True)) == batches
    assert sweep().forgotten == 0


def test_a_database_connection_error_retries_the_job_instead_of_failing_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A connection error (the database restarted) is not the computation's fault: the job goes
    back to the queue and ``run_job`` tries again; any other error fails the job at once."""
    from django.db import OperationalError

    from judging.core import jobs
    from judging.core.tasks import run_job

    calls: list[int] = []
    stored: list[Any] = []

    def compute(job: Job) -> str:
        calls.append(job.pk)
        if len(calls) == 1:
            raise OperationalError("server closed the connection unexpectedly")
        if job.key == "broken":
            raise ValueError("a bad input")
        return "computed"

    jobs.register(
        jobs.Computation(
            kind="test_flaky",
            reads="nothing",
            compute=compute,
            store=lambda job, result: stored.append(result),
            stale="never",
        )
    )
    # what run_job retries, with backoff
    assert set(getattr(run_job, "autoretry_for", ())) >= set(jobs.RETRIED)
    try:
        job = Job.objects.create(kind="test_flaky", key="k")
        with pytest.raises(OperationalError):
            jobs.run(job.pk)  # raised for run_job to retry, the job queued again
        job.refresh_from_db()
        assert (job.state, job.error, stored) == (JobState.QUEUED, "", [])
        jobs.run(job.pk)  # the retry
        job.refresh_from_db()
        assert (job.state, job.error, len(calls), stored) == (JobState.DONE, "", 2, ["computed"])
        assert job.attempts == 2
        broken = Job.objects.create(kind="test_flaky", key="broken")
        jobs.run(broken.pk)  # not retried: failed at once, with its error
        broken.refresh_from_db()
        assert broken.state == JobState.FAILED and "a bad input" in broken.error
        assert len(calls) == 3
    finally:
        jobs.REGISTRY.pop("test_flaky")
