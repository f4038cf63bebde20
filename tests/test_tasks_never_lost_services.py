"""Tasks are never lost, with a real Celery worker and a real Redis that the test stops and
starts (a private ``redis-server`` on a free port; the shared one is never touched).

With Redis stopped, a run submission, a qrels publish and a re-pool answer 201/202 with their work
pending; when Redis is back the worker's own sweep sends it and the work is done, with no admin
and no second request.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from judging.assessments.models import Judgment
from judging.campaigns.models import Campaign, Document
from judging.core.models import JobState, WorkerHeartbeat
from judging.core.tasks import heartbeat
from judging.evaluation.models import Evaluation
from judging.pools.models import PoolState, PoolVersion
from judging.workflows.qrels import qrels_imported
from judging.workflows.runs import run_submitted
from tests.workers import celery_worker, private_redis, sending_to, wait_for

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

# Fast clocks for the worker: sweep every second, resend a lost message after 3 s.
WORKER_ENV = {
    "POOLJUDGE_SWEEP_SECONDS": "1",
    "POOLJUDGE_RESEND_SECONDS": "3",
    "POOLJUDGE_STALE_SECONDS": "5",
    "POOLJUDGE_HEARTBEAT_SECONDS": "1",
}
RUNS = {
    "sysA": {"401": ["a1", "a2", "x1"], "402": ["b1", "b2", "b3"]},
    "sysB": {"401": ["x1", "a1", "c1"], "402": ["b2", "c3", "b1"]},
}


def results(ranked: dict[str, list[str]]) -> dict[str, dict[str, float]]:
    return {q: {d: float(len(ds) - i) for i, d in enumerate(ds)} for q, ds in ranked.items()}


@pytest.fixture
def evaluated_campaign(campaign: Campaign, researcher: Any, make_user: Any) -> Campaign:
    for tag, ranked in RUNS.items():
        run_submitted(
            campaign=campaign, owner=researcher, tag=tag, results=results(ranked), pooled=True
        )
    docs = {d for ranked in RUNS.values() for ds in ranked.values() for d in ds}
    Document.objects.bulk_create(Document(campaign=campaign, docid=d) for d in sorted(docs))
    qrels_imported(campaign=campaign, data=b"401 0 a1 1\n401 0 x1 2\n402 0 b2 1\n", source="q")
    Judgment.objects.create(
        campaign=campaign,
        topic=campaign.topics.get(qid="402"),
        docid="b3",
        annotator=make_user("judge-1", "annotator"),
        grade=2,
    )
    campaign.pool_depth = 2
    campaign.save()
    return campaign


def timed(call: Any) -> tuple[Any, float]:
    start = time.monotonic()
    response = call()
    return response, time.monotonic() - start


def test_with_redis_stopped_the_work_is_accepted_and_done_when_redis_is_back(
    evaluated_campaign: Campaign, researcher: Any, admin_user: Any, api_client_for: Any
) -> None:
    campaign = evaluated_campaign
    research, admin = api_client_for(researcher), api_client_for(admin_user)
    with (
        private_redis() as redis,
        celery_worker(broker_url=redis.url, env=WORKER_ENV) as (proc, queue),
        sending_to(redis.url),
    ):
        token = uuid.uuid4().hex  # the worker is up and consuming before Redis goes
        heartbeat.apply_async(args=(token,), queue=queue)
        assert wait_for(lambda: WorkerHeartbeat.objects.filter(token=token).exists(), timeout=30)

        redis.stop()
        run, t_run = timed(
            lambda: research.post(
                f"/api/v1/campaigns/{campaign.pk}/runs/",
                {"tag": "late", "results": results(RUNS["sysA"])},
                format="json",
            )
        )
        qrels, t_qrels = timed(
            lambda: admin.post(f"/api/v1/campaigns/{campaign.pk}/qrels/publish/", {})
        )
        pool, t_pool = timed(
            lambda: admin.post(f"/api/v1/campaigns/{campaign.pk}/pools/", {}, format="json")
        )
        again = admin.post(f"/api/v1/campaigns/{campaign.pk}/pools/", {}, format="json")

        # Success, with the work honestly pending (each of these was a 500 with Redis down).
        assert run.status_code == 201, run.content
        assert run.json()["evaluation"]["status"] == "pending"
        assert qrels.status_code == 201, qrels.content
        assert qrels.json()["evaluation"]["status"] == "pending"
        assert pool.status_code == 202, pool.content
        assert pool.json()["build"]["status"] == "pending"
        assert again.status_code == 200 and again.json()["id"] == pool.json()["id"]
        assert again.json()["build"]["status"] == "pending"
        assert max(t_run, t_qrels, t_pool) < 5, (t_run, t_qrels, t_pool)

        run_id, qrels_id, pool_id = run.json()["id"], qrels.json()["id"], pool.json()["id"]

        def all_done() -> bool:
            return (
                Evaluation.objects.filter(run_id=run_id, job__state=JobState.DONE).count() == 2
                and Evaluation.objects.filter(qrels_id=qrels_id, job__state=JobState.DONE).count()
                == 3
                and PoolVersion.objects.get(pk=pool_id).state == PoolState.BUILT
            )

        time.sleep(2)  # down for a while: the worker's sweep fails and keeps the rows
        assert not all_done()
        redis.start()  # same port, empty (no persistence): only the outbox remembers
        back = time.monotonic()
        done = wait_for(all_done, timeout=50, interval=0.5)
        print(
            f"with Redis down: submit {t_run:.2f} s, publish {t_qrels:.2f} s, re-pool "
            f"{t_pool:.2f} s; all done {time.monotonic() - back:.1f} s after Redis was back"
        )
        assert proc.poll() is None, "the worker died"
    assert done, {
        "run": list(Evaluation.objects.filter(run_id=run_id).values_list("job__state", flat=True)),
        "qrels": list(
            Evaluation.objects.filter(qrels_id=qrels_id).values_list("job__state", flat=True)
        ),
        "pool": PoolVersion.objects.get(pk=pool_id).state,
    }
    assert research.get(f"/api/v1/runs/{run_id}/").json()["evaluation"]["status"] == "done"
    assert admin.get(f"/api/v1/pools/{pool_id}/").json()["build"]["status"] == "built"
    assert PoolVersion.objects.filter(campaign=campaign).count() == 1  # two triggers, one build
