"""A real Celery worker on the Redis broker runs a task end to end against the database."""

from __future__ import annotations

import uuid

import pytest

from judging.core.models import WorkerHeartbeat
from judging.core.tasks import heartbeat
from tests.workers import celery_worker, require_broker, wait_for


def test_tasks_run_inline_without_a_broker(db: object) -> None:
    token = uuid.uuid4().hex
    heartbeat.delay(token)  # eager in tests and in the embedded default
    assert WorkerHeartbeat.objects.filter(token=token).exists()


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_runs_a_task_sent_through_redis() -> None:
    require_broker()
    token = uuid.uuid4().hex
    with celery_worker() as (proc, queue):
        heartbeat.apply_async(args=(token,), queue=queue)
        seen = wait_for(lambda: WorkerHeartbeat.objects.filter(token=token).exists(), timeout=90)
        assert proc.poll() is None, "the worker died"
    assert seen, "the worker did not record the heartbeat within 90 s"
    assert WorkerHeartbeat.objects.get(token=token).hostname
