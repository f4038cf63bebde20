"""A job's status as its readers see it: ``stale`` is read, never stored (``core.models.Job``)."""

from __future__ import annotations

from datetime import timedelta

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
