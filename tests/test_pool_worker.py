"""Pool builds on a real Celery worker over Redis, including a worker killed mid-build."""

from __future__ import annotations

import contextlib
import gzip
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from judging.campaigns.models import Campaign, Topic, UnknownTopicPolicy
from judging.campaigns.services import campaign_create
from judging.pools.models import PoolDocument, PoolState, PoolVersion
from judging.workflows.runs import run_submitted
from tests.knobs import override_knobs
from tests.workers import celery_worker, require_broker, wait_for

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

TOPICS = [str(q) for q in range(601, 651)]
STALE = 3  # a build with no heartbeat for 3 s has lost its worker
STALE_ENV = {
    "POOLJUDGE_STALE_SECONDS": str(STALE),
    "POOLJUDGE_HEARTBEAT_SECONDS": "1",
    "POOLJUDGE_SWEEP_SECONDS": "1",
}
HEDGE_DEPTH = 300


def independent_pool_size(root: Path, depth: int) -> int:
    """Depth-k union size over topics 601-650, straight from the gzipped files: each run ranked
    as trec_eval ranks it (score descending, ties by docid descending)."""
    union: dict[str, set[str]] = {}
    for path in sorted((root / "runs").glob("input.*.gz")):
        per_topic: dict[str, list[tuple[float, str]]] = {}
        with gzip.open(path, "rt") as fh:
            for line in fh:
                qid, _, docid, _, score, _ = line.split()
                if qid in TOPICS:
                    per_topic.setdefault(qid, []).append((float(score), docid))
        for qid, rows in per_topic.items():
            rows.sort(reverse=True)
            union.setdefault(qid, set()).update(d for _, d in rows[:depth])
    return sum(len(s) for s in union.values())


@pytest.fixture
def robust_campaign(shared_data: Path, make_user: Any) -> Campaign:
    require_broker()
    owner = make_user("robust-owner", "researcher")
    campaign = campaign_create(name="robust03-pool", unknown_topic_policy=UnknownTopicPolicy.IGNORE)
    Topic.objects.bulk_create(Topic(campaign=campaign, qid=q, title=q) for q in TOPICS)
    for path in sorted((shared_data / "robust03" / "runs").glob("input.*.gz")):
        run_submitted(campaign=campaign, owner=owner, data=path.read_bytes(), source=path.name)
    return campaign


def test_a_real_worker_builds_the_robust_pool_and_the_api_reports_it(
    robust_campaign: Campaign, shared_data: Path, api_client_for: Any, make_user: Any
) -> None:
    admin = make_user("pool-admin", "admin")
    client = api_client_for(admin)
    with celery_worker() as (proc, _queue):
        r = client.post(
            f"/api/v1/campaigns/{robust_campaign.pk}/pools/",
            {"strategy": "depth", "depth": 100},
            format="json",
        )
        assert r.status_code == 202
        url = f"/api/v1/pools/{r.json()['id']}/"
        done = wait_for(lambda: client.get(url).json()["state"] == "built", timeout=120)
        assert proc.poll() is None
    body = client.get(url).json()
    assert done, body
    expected = independent_pool_size(shared_data / "robust03", 100)
    assert body["num_documents"] == expected
    assert body["number"] == 1 and body["percent"] == 100.0
    assert body["processed_topics"] == body["total_topics"] == 50
    assert len(body["run_tags"]) == 17


def test_a_worker_killed_mid_build_shows_stale_and_the_sweep_takes_the_build_over(
    robust_campaign: Campaign, api_client_for: Any, make_user: Any
) -> None:
    """SIGKILL a worker mid-build: nothing partial is visible, the API says the build is stale
    once its heartbeat is older than POOLJUDGE_STALE_SECONDS, and another worker's sweep takes
    it over and builds it, with no admin and no second request."""
    admin = make_user("pool-admin", "admin")
    client = api_client_for(admin)
    url = f"/api/v1/campaigns/{robust_campaign.pk}/pools/"
    body = {"strategy": "hedge", "depth": HEDGE_DEPTH}  # slow enough to be caught mid-build
    with override_knobs(stale_seconds=STALE):
        with celery_worker(env=STALE_ENV) as (proc, _queue):
            version_id = client.post(url, body, format="json").json()["id"]
            started = wait_for(
                lambda: PoolVersion.objects.get(pk=version_id).processed_topics >= 2,
                timeout=60,
                interval=0.05,
            )
            assert started, "the build never started"
            _kill_tree(proc.pid)
            proc.wait(timeout=30)
        killed_at = time.monotonic()
        version = PoolVersion.objects.get(pk=version_id)
        assert version.state == PoolState.BUILDING and version.number is None
        assert 0 < version.processed_topics < 50
        assert not PoolDocument.objects.filter(version=version).exists()
        listed = client.get(url).json()["results"]
        assert [p["state"] for p in listed] == ["building"]  # nothing built is visible

        # No heartbeat since the kill: the API says so, honestly, with the time it was lost.
        def build() -> dict[str, Any]:
            return dict(client.get(f"/api/v1/pools/{version_id}/").json()["build"])

        assert wait_for(lambda: build()["status"] == "stale", timeout=STALE + 5)
        lost = build()
        assert lost["detail"].startswith("stale (worker lost since ") and lost["since"]

        # Another worker's sweep takes it over, no request needed.
        with celery_worker(env=STALE_ENV) as (proc, _queue):
            done = wait_for(
                lambda: PoolVersion.objects.get(pk=version_id).state == "built", timeout=90
            )
            assert proc.poll() is None
    version = PoolVersion.objects.get(pk=version_id)
    assert done, version.error
    assert version.number == 1 and version.attempts == 2
    assert PoolDocument.objects.filter(version=version).count() == version.num_documents > 0
    assert PoolVersion.objects.filter(campaign=robust_campaign).count() == 1
    print(f"taken over and built {time.monotonic() - killed_at:.1f} s after the kill")


def _kill_tree(pid: int) -> None:
    """SIGKILL a worker and its pool children (no chance to clean up, like a crashed machine)."""
    children = Path(f"/proc/{pid}/task/{pid}/children")
    kids = children.read_text().split() if children.exists() else []
    for kid in kids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(kid), signal.SIGKILL)
    os.kill(pid, signal.SIGKILL)
