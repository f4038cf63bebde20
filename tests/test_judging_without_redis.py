"""Judging goes on while Redis is down (issue 29, point 1).

The service's cache and broker point at a private ``redis-server`` of this test (on a free port;
the shared one is never touched), which the test stops while an annotator is judging: leasing,
recording judgments (API and the judging page's form) and leasing ahead still answer as before,
each lease is made once, and the automatic grade suggested with an item is still recorded (read
from the database: a cache that cannot be reached is a cache miss, never a failure). Beneath it,
``judging.core.cache``: an unreachable shared cache is tried once per retry period, and what is
cached meanwhile stays in the process's memory.
"""

from __future__ import annotations

import json
import time
from typing import Any
from unittest import mock

import pytest
from django.core.cache import cache
from django.test import Client, override_settings

from judging.assessments.models import Judgment, Lease
from judging.autojudge import services, suggestions
from judging.autojudge.models import JudgeKind
from judging.campaigns.models import Campaign
from judging.core import cache as resilient
from judging.env import cache_config
from tests.knobs import override_knobs
from tests.test_judging_api import THREE_TOPICS, build_pool, lease
from tests.workers import free_port, private_redis, sending_to

pytestmark = pytest.mark.django_db


def auto_grade(docid: str) -> int:
    return int(docid.rsplit("-", 1)[1]) % 3


@pytest.fixture
def suggesting(campaign: Campaign, researcher: Any, admin_user: Any) -> Campaign:
    """THREE_TOPICS pooled, an imported judge's grade for every document, every grade shown."""
    build_pool(campaign, researcher, THREE_TOPICS)
    judge = services.judge_create(
        campaign=campaign, name="zz-judge", kind=JudgeKind.IMPORTED, model="zz-model"
    )
    services.store_labels(
        judge,
        [services.Label(q, d, auto_grade(d)) for q, ds in THREE_TOPICS.items() for d in ds],
    )
    suggestions.suggestions_configure(
        campaign=campaign, judge=judge, hidden_share=0.0, by=admin_user
    )
    return campaign


def timed(call: Any) -> tuple[Any, float]:
    start = time.monotonic()
    answer = call()
    return answer, time.monotonic() - start


@pytest.mark.services
def test_an_annotator_judges_on_after_the_cache_and_broker_redis_stops(
    suggesting: Campaign, annotator: Any, api_client_for: Any
) -> None:
    campaign = suggesting
    api = api_client_for(annotator)
    web = Client()
    web.force_login(annotator)
    with (
        private_redis() as redis,
        override_settings(CACHES={"default": cache_config(redis.url)}),
        sending_to(redis.url),
    ):
        # judging with Redis up: the set of campaigns with suggestions is cached there
        held = lease(api, campaign)
        assert held.status_code == 201, held.content
        first = api.post(f"/api/v1/leases/{held.json()['id']}/judgment/", {"grade": 1})
        assert first.status_code == 201, first.content
        assert cache.get(suggestions.CACHE_KEY) == frozenset({campaign.pk})

        redis.stop()
        leases_before = Lease.objects.count()
        held, t_lease = timed(lambda: lease(api, campaign))
        assert held.status_code == 201, held.content  # was a 500, with the lease stored
        assert Lease.objects.count() == leases_before + 1
        lease_id = held.json()["id"]
        assert held.json()["suggestion"]["grade"] == auto_grade(held.json()["document"]["docid"])
        recorded, t_judge = timed(
            lambda: api.post(f"/api/v1/leases/{lease_id}/judgment/", {"grade": 2})
        )
        assert recorded.status_code == 201, recorded.content  # was a 500
        assert recorded.json()["grade"] == 2

        # the judging page: next item, the page itself, leasing ahead and the form's grade
        moved = web.post(f"/annotate/{campaign.pk}/next/")
        assert moved.status_code == 302
        page = web.get(f"/annotate/{campaign.pk}/")
        assert page.status_code == 200
        html = page.content.decode()
        assert 'id="suggestion-label">' in html and "Suggested:" in html
        current = Lease.objects.filter(annotator=annotator).order_by("-pk").first()
        assert current is not None
        ahead = web.post(
            f"/annotate/{campaign.pk}/ahead/",
            json.dumps({"current": current.pk}),
            content_type="application/json",
        )
        assert ahead.status_code == 200 and ahead.json()["ahead"] is not None
        submitted = web.post(
            f"/annotate/{campaign.pk}/submit/", {"lease": current.pk, "grade": "0"}
        )
        assert submitted.status_code == 302
        assert max(t_lease, t_judge) < 5, (t_lease, t_judge)

    judged = {
        j.docid: (j.grade, j.suggestion_arm, j.suggested_grade)
        for j in Judgment.objects.filter(annotator=annotator)
    }
    assert len(judged) == 3
    by_api = held.json()["document"]["docid"]
    assert judged[by_api] == (2, "shown", auto_grade(by_api))
    assert judged[current.slot.docid] == (0, "shown", auto_grade(current.slot.docid))


def test_an_unreachable_cache_is_a_miss_tried_again_after_the_retry_period() -> None:
    dead = cache_config(f"redis://127.0.0.1:{free_port()}/0")  # nobody listens: refused
    with override_settings(CACHES={"default": dead}), override_knobs(cache_retry_seconds=10):
        assert resilient.cache_get("zz-key") is None  # an error is a miss
        resilient.cache_set("zz-key", "kept here", 60)
        assert resilient.cache_get("zz-key") == "kept here"  # from this process's memory
        resilient.cache_delete("zz-key")
        assert resilient.cache_get("zz-key") is None

        shared = mock.Mock()
        shared.get.side_effect = ConnectionError("refused")
        now = time.monotonic()
        with (
            mock.patch.object(resilient, "cache", shared),
            mock.patch("time.monotonic", return_value=now + 60),
        ):
            for _ in range(3):
                resilient.cache_get("zz-other")
            assert shared.get.call_count == 1  # then left alone for the retry period
        with (
            mock.patch.object(resilient, "cache", shared),
            mock.patch("time.monotonic", return_value=now + 71),
        ):
            resilient.cache_get("zz-other")
            assert shared.get.call_count == 2  # tried again after it
    # the test settings' own cache was never thought down
    assert resilient._shared_usable()
