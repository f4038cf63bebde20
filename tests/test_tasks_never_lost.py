"""Tasks are never lost: a change and the task that must follow it are one outbox row, written in
the change's transaction. With the broker unreachable a submission, a publish and a re-pool still
succeed (201/202), show their work as pending, and the sweep sends it later; a build whose worker
stopped beating shows as stale and is taken over by the sweep.

These run without services: the unreachable broker is a port nobody listens on, and "the broker
is back" is the sweep with tasks inline. ``test_tasks_never_lost_services`` does the same with a
real worker and a real Redis that the test stops and starts.
"""

from __future__ import annotations

import time
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from django.db import transaction
from django.utils import timezone

from judging.assessments.models import Judgment
from judging.campaigns.models import Campaign, Document, Run
from judging.core import outbox
from judging.core.models import JobState, OutboxTask
from judging.evaluation.models import Evaluation
from judging.pools.models import PoolState, PoolVersion
from judging.workflows.qrels import qrels_imported
from judging.workflows.runs import run_submitted
from judging.workflows.sweep import sweep
from tests.knobs import override_knobs
from tests.workers import free_port, sending_to

pytestmark = pytest.mark.django_db

RUNS = {
    "sysA": {"401": ["a1", "a2", "x1"], "402": ["b1", "b2", "b3"]},
    "sysB": {"401": ["x1", "a1", "c1"], "402": ["b2", "c3", "b1"]},
}
QRELS = b"401 0 a1 1\n401 0 x1 2\n402 0 b2 1\n"


def results(ranked: dict[str, list[str]]) -> dict[str, dict[str, float]]:
    return {q: {d: float(len(ds) - i) for i, d in enumerate(ds)} for q, ds in ranked.items()}


def dead_broker() -> str:
    """A Redis URL on a port nobody listens on: every send fails at once (refused)."""
    return f"redis://127.0.0.1:{free_port()}/0"


@pytest.fixture
def evaluated_campaign(campaign: Campaign, researcher: Any, as_committed: Any) -> Campaign:
    """Two pooled runs, their documents, and qrels v1 (so a new run is evaluated on arrival)."""
    with as_committed():
        for tag, ranked in RUNS.items():
            run_submitted(
                campaign=campaign, owner=researcher, tag=tag, results=results(ranked), pooled=True
            )
        docs = {d for ranked in RUNS.values() for ds in ranked.values() for d in ds}
        Document.objects.bulk_create(Document(campaign=campaign, docid=d) for d in sorted(docs))
        qrels_imported(campaign=campaign, data=QRELS, source="qrels.txt")
    campaign.pool_depth = 2
    campaign.save()
    return campaign


def test_a_change_and_its_task_are_recorded_together_and_done_inline(
    evaluated_campaign: Campaign, researcher: Any, as_committed: Any
) -> None:
    with as_committed():
        run = run_submitted(
            campaign=evaluated_campaign, owner=researcher, tag="new", results=results(RUNS["sysA"])
        )
        row = OutboxTask.objects.get(key__startswith=f"evaluate_run:{run.pk}:")
        assert row.status == "pending"  # written in the run's transaction, sent on commit
    row.refresh_from_db()
    assert row.status == "done" and row.sends == 1
    assert Evaluation.objects.get(run=run).state == JobState.DONE

    # A change rolled back takes its task with it: nothing to send for a run that is not there.
    before = OutboxTask.objects.count()
    with pytest.raises(RuntimeError), transaction.atomic():
        run_submitted(
            campaign=evaluated_campaign, owner=researcher, tag="gone", results=results(RUNS["sysB"])
        )
        raise RuntimeError("the request failed after the run was stored")
    assert OutboxTask.objects.count() == before
    assert not Run.objects.filter(tag="gone").exists()


def test_with_the_broker_down_a_submission_answers_201_pending_and_runs_after_the_sweep(
    evaluated_campaign: Campaign, researcher: Any, api_client_for: Any, as_committed: Any
) -> None:
    client = api_client_for(researcher)
    url = f"/api/v1/campaigns/{evaluated_campaign.pk}/runs/"
    with sending_to(dead_broker()), as_committed():
        start = time.monotonic()
        r = client.post(url, {"tag": "late", "results": results(RUNS["sysA"])}, format="json")
        elapsed = time.monotonic() - start
    assert r.status_code == 201, r.content  # was a 500, with the run stored anyway
    assert elapsed < 5, f"a send to an unreachable broker held the request {elapsed:.1f} s"
    body = r.json()
    assert body["evaluation"]["status"] == "pending"
    assert body["evaluation"]["detail"].startswith("pending (not yet sent to a worker)")
    assert body["evaluation"]["qrels_version"] == 1
    run = Run.objects.get(pk=body["id"])
    assert not Evaluation.objects.filter(run=run).exists()
    # The client's retry is not needed; the run shows the same state when read again.
    assert client.get(f"/api/v1/runs/{run.pk}/").json()["evaluation"]["status"] == "pending"

    # The broker is back (tasks inline here): the sweep sends it, with no admin.
    with as_committed():
        result = sweep()
    assert result.sent == 1 and result.failed == 0
    assert Evaluation.objects.get(run=run).state == JobState.DONE
    assert client.get(f"/api/v1/runs/{run.pk}/").json()["evaluation"]["status"] == "done"


def test_with_the_broker_down_a_publish_answers_201_pending_and_is_evaluated_later(
    evaluated_campaign: Campaign,
    admin_user: Any,
    make_user: Any,
    api_client_for: Any,
    as_committed: Any,
) -> None:
    judge = make_user("judge-1", "annotator")
    Judgment.objects.create(
        campaign=evaluated_campaign,
        topic=evaluated_campaign.topics.get(qid="402"),
        docid="b3",
        annotator=judge,
        grade=2,
    )
    client = api_client_for(admin_user)
    with sending_to(dead_broker()), as_committed():
        r = client.post(f"/api/v1/campaigns/{evaluated_campaign.pk}/qrels/publish/", {})
    assert r.status_code == 201, r.content  # was a 500, with the version stored anyway
    version = r.json()
    assert version["number"] == 2
    assert version["evaluation"]["status"] == "pending"
    assert not Evaluation.objects.filter(qrels_id=version["id"]).exists()

    with as_committed():
        sweep()
    evaluations = Evaluation.objects.filter(qrels_id=version["id"])
    assert sorted(e.run.tag for e in evaluations) == ["sysA", "sysB"]
    assert {e.state for e in evaluations} == {JobState.DONE}
    listed = client.get(f"/api/v1/campaigns/{evaluated_campaign.pk}/qrels/").json()["results"]
    assert {v["number"]: v["evaluation"]["status"] for v in listed} == {2: "done", 1: "done"}


def test_with_the_broker_down_a_repool_answers_202_and_a_second_trigger_says_not_yet_sent(
    evaluated_campaign: Campaign, admin_user: Any, api_client_for: Any, as_committed: Any
) -> None:
    client = api_client_for(admin_user)
    url = f"/api/v1/campaigns/{evaluated_campaign.pk}/pools/"
    with sending_to(dead_broker()), as_committed():
        first = client.post(url, {}, format="json")
        again = client.post(url, {}, format="json")
    assert first.status_code == 202, first.content
    assert first.json()["state"] == "queued"
    assert first.json()["build"]["status"] == "pending"
    # The second trigger returns the same build, honestly: not alive, not yet sent.
    assert again.status_code == 200 and again.json()["id"] == first.json()["id"]
    assert again.json()["build"]["status"] == "pending"
    assert "not yet sent" in again.json()["build"]["detail"]
    assert OutboxTask.objects.filter(key=f"build_pool:{first.json()['id']}").count() == 1

    with as_committed():
        sweep()
    body = client.get(f"/api/v1/pools/{first.json()['id']}/").json()
    assert body["state"] == "built" and body["build"]["status"] == "built"


@override_knobs(stale_seconds=60)
def test_a_build_whose_worker_stopped_beating_shows_stale_and_the_sweep_takes_it_over(
    evaluated_campaign: Campaign, admin_user: Any, api_client_for: Any, as_committed: Any
) -> None:
    client = api_client_for(admin_user)
    with sending_to(dead_broker()), as_committed():
        pool_id = client.post(
            f"/api/v1/campaigns/{evaluated_campaign.pk}/pools/", {}, format="json"
        ).json()["id"]
    # A worker took it, beat, then died 90 s ago (as a SIGKILL leaves it).
    lost = timezone.now() - timedelta(seconds=90)
    PoolVersion.objects.filter(pk=pool_id).update(
        state=PoolState.BUILDING, attempts=1, started_at=lost, heartbeat_at=lost
    )
    OutboxTask.objects.filter(key=f"build_pool:{pool_id}").update(
        sent_at=lost, started_at=lost, heartbeat_at=lost
    )
    body = client.get(f"/api/v1/pools/{pool_id}/").json()
    assert body["state"] == "building"
    assert body["build"]["status"] == "stale"
    assert body["build"]["detail"].startswith("stale (worker lost since ")
    assert body["build"]["since"] is not None

    with as_committed():
        result = sweep()
    assert result.sent == 1
    version = PoolVersion.objects.get(pk=pool_id)
    assert version.state == PoolState.BUILT and version.attempts == 2


def test_a_build_beating_recently_is_not_stale_and_is_left_alone(
    evaluated_campaign: Campaign, admin_user: Any, api_client_for: Any, as_committed: Any
) -> None:
    client = api_client_for(admin_user)
    with sending_to(dead_broker()), as_committed():
        pool_id = client.post(
            f"/api/v1/campaigns/{evaluated_campaign.pk}/pools/", {}, format="json"
        ).json()["id"]
    now = timezone.now()
    PoolVersion.objects.filter(pk=pool_id).update(
        state=PoolState.BUILDING, attempts=1, started_at=now, heartbeat_at=now
    )
    OutboxTask.objects.filter(key=f"build_pool:{pool_id}").update(
        sent_at=now, started_at=now, heartbeat_at=now, next_attempt_at=now + timedelta(hours=1)
    )
    assert client.get(f"/api/v1/pools/{pool_id}/").json()["build"]["status"] == "building"
    with as_committed():
        result = sweep()
    assert result.sent == 0 and result.taken_over == 0
    assert PoolVersion.objects.get(pk=pool_id).attempts == 1


def test_a_queued_build_with_no_task_at_all_gets_one_from_the_sweep(
    evaluated_campaign: Campaign, admin_user: Any, as_committed: Any
) -> None:
    """A build left queued with no task (as before the outbox, or its tasks gave up) is not
    returned as alive forever: the sweep gives it a task."""
    version = PoolVersion.objects.create(
        campaign=evaluated_campaign, strategy="depth", depth=2, run_tags=["sysA", "sysB"]
    )
    version.runs.set(evaluated_campaign.runs.all())
    with as_committed():
        result = sweep()
    assert result.taken_over == 1
    assert PoolVersion.objects.get(pk=version.pk).state == PoolState.BUILT


def test_a_sent_task_never_started_is_sent_again_waiting_longer_each_time(
    evaluated_campaign: Campaign, researcher: Any, as_committed: Any
) -> None:
    with sending_to(dead_broker()), as_committed():
        run = run_submitted(
            campaign=evaluated_campaign, owner=researcher, tag="lost", results=results(RUNS["sysA"])
        )
    row = OutboxTask.objects.get(key__startswith=f"evaluate_run:{run.pk}:")
    # Sent once, then lost by the broker (Redis restarted without persistence).
    sent = timezone.now() - timedelta(seconds=10)
    OutboxTask.objects.filter(pk=row.pk).update(sent_at=sent, sends=1, next_attempt_at=sent)
    assert outbox.status(row.key)[0] == "queued"  # type: ignore[index]
    with sending_to(dead_broker()):
        assert sweep().failed == 1  # broker still down: logged, kept, tried at the next sweep
    assert list(outbox.due()) == [row]
    with as_committed():
        assert sweep().sent == 1
    assert Evaluation.objects.get(run=run).state == JobState.DONE
    assert outbox._resend_wait(3) == 4 * outbox._resend_wait(1)
    assert outbox._resend_wait(30) == outbox.MAX_RESEND_WAIT


def test_the_sweep_forgets_finished_rows_after_the_keep_setting(db: Any) -> None:
    old = timezone.now() - timedelta(days=30)
    OutboxTask.objects.create(task="judging.core.tasks.heartbeat", key="old", done_at=old)
    OutboxTask.objects.create(task="judging.core.tasks.heartbeat", key="recent")
    OutboxTask.objects.filter(key="recent").update(done_at=timezone.now())
    assert sweep().deleted == 1
    assert list(OutboxTask.objects.values_list("key", flat=True)) == ["recent"]


def test_by_default_a_dead_build_is_taken_over_within_two_minutes() -> None:
    """Stale after POOLJUDGE_STALE_SECONDS without a beat, seen by a sweep at most
    POOLJUDGE_SWEEP_SECONDS later; a live build beats several times within the stale limit."""
    from django.conf import settings

    assert settings.POOLJUDGE_TASKS.stale_seconds + settings.POOLJUDGE_TASKS.sweep_seconds < 120
    assert settings.POOLJUDGE_TASKS.heartbeat_seconds * 3 <= settings.POOLJUDGE_TASKS.stale_seconds


@pytest.mark.django_db(transaction=True)
def test_the_heartbeat_thread_beats_while_the_block_runs_and_stops_after() -> None:
    from django.db import connection

    beats: list[float] = []
    with outbox.beating(lambda: beats.append(time.monotonic()), every=0.05):
        time.sleep(0.5)
    after = len(beats)
    time.sleep(0.2)
    assert len(beats) == after  # stopped with the block
    if connection.vendor == "sqlite":
        assert beats == []  # one writer: no thread (the embedded default has no workers)
    else:
        assert after >= 4


WORKER_TASK = SimpleNamespace(request=SimpleNamespace(is_eager=False))  # as a worker runs it


def test_a_worker_marks_its_row_started_then_queued_on_retry_then_failed(db: Any) -> None:
    row = OutboxTask.objects.create(task="judging.core.tasks.heartbeat", key="k", sends=1)
    task_id = str(row.uuid)
    outbox._started(task_id=task_id, task=WORKER_TASK)
    assert outbox.status("k")[0] == "running"  # type: ignore[index]
    outbox._finished(task_id=task_id, state="RETRY")
    assert outbox.status("k")[0] == "queued"  # type: ignore[index]
    outbox._started(task_id=task_id, task=WORKER_TASK)
    outbox._finished(task_id=task_id, state="FAILURE", retval=ValueError("bad input"))
    view = outbox.task_view("k")
    assert view is not None
    assert view["status"] == "failed" and view["detail"] == "failed: ValueError: bad input"


def test_the_admin_shows_a_pending_task_and_a_stale_build_for_what_they_are(
    evaluated_campaign: Campaign, admin_user: Any, client: Any, as_committed: Any
) -> None:
    admin_user.is_superuser = True
    admin_user.save()
    client.force_login(admin_user)
    with sending_to(dead_broker()), as_committed():
        pending = PoolVersion.objects.create(
            campaign=evaluated_campaign, strategy="depth", depth=2, run_tags=["sysA"]
        )
        outbox.enqueue(
            "judging.workflows.tasks.build_pool", pending.pk, key=f"build_pool:{pending.pk}"
        )
    page = client.get("/admin/pools/poolversion/").content.decode()
    assert "pending (not yet sent to a worker)" in page
    tasks = client.get("/admin/core/outboxtask/").content.decode()
    assert f"build_pool:{pending.pk}" in tasks and "pending (not yet sent to a worker)" in tasks

    lost = timezone.now() - timedelta(minutes=5)
    PoolVersion.objects.filter(pk=pending.pk).update(
        state=PoolState.BUILDING, started_at=lost, heartbeat_at=lost
    )
    page = client.get("/admin/pools/poolversion/").content.decode()
    assert f"stale (worker lost since {lost:%Y-%m-%d %H:%M:%S} UTC)" in page


def test_manage_py_sweep_sends_what_is_pending_once(
    evaluated_campaign: Campaign, researcher: Any, as_committed: Any
) -> None:
    import io

    from django.core.management import call_command

    with sending_to(dead_broker()), as_committed():
        run = run_submitted(
            campaign=evaluated_campaign, owner=researcher, tag="cli", results=results(RUNS["sysA"])
        )
    out = io.StringIO()
    with as_committed():
        call_command("sweep", stdout=out)
    assert "sent=1" in out.getvalue()
    assert Evaluation.objects.get(run=run).state == JobState.DONE
