"""A lease that ended (released by a skip, expired, or superseded) records nothing: the judgment
is refused with a 409 naming why, and whoever holds the item now judges it on their live lease.
"""

from __future__ import annotations

from typing import Any

import pytest

from judging.assessments.models import JudgingSlot, Judgment, JudgmentChange, Lease, LeaseState
from judging.campaigns.models import Campaign
from tests.test_judging_api import (
    ONE_TOPIC,
    after_expiry,
    build_pool,
    clock_at,
    item,
    judge,
    lease,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def one_topic(campaign: Campaign, researcher: Any) -> Campaign:
    return build_pool(campaign, researcher, ONE_TOPIC)


@pytest.fixture
def bob(make_user: Any) -> Any:
    return make_user("bob-annotator", "annotator")


def _only_judgment(body: dict[str, Any]) -> list[tuple[int, int]]:
    qid, docid = item(body)
    return list(
        Judgment.objects.filter(topic__qid=qid, docid=docid).values_list("annotator", "grade")
    )


def test_a_released_lease_records_nothing_and_the_new_holder_judges(
    one_topic: Campaign, annotator: Any, bob: Any, api_client_for: Any
) -> None:
    ann, bobs = api_client_for(annotator), api_client_for(bob)
    skipped = lease(ann, one_topic).json()
    assert ann.delete(f"/api/v1/leases/{skipped['id']}/").status_code == 204
    taken = lease(bobs, one_topic).json()
    assert item(taken) == item(skipped)

    late = judge(ann, skipped["id"], 2)
    assert late.status_code == 409
    body = late.json()
    assert body["error"] == "conflict"
    assert f"lease {skipped['id']}" in body["detail"] and "released" in body["detail"]
    assert _only_judgment(skipped) == []
    assert Lease.objects.get(pk=taken["id"]).state == LeaseState.ACTIVE

    mine = judge(bobs, taken["id"], 1)
    assert mine.status_code == 201, mine.content
    assert _only_judgment(taken) == [(bob.pk, 1)]
    assert JudgmentChange.objects.count() == 1


def test_an_expired_lease_records_nothing_once_someone_else_holds_the_item(
    one_topic: Campaign, annotator: Any, bob: Any, api_client_for: Any
) -> None:
    ann, bobs = api_client_for(annotator), api_client_for(bob)
    held = lease(ann, one_topic).json()
    with clock_at(after_expiry(one_topic)):
        taken = lease(bobs, one_topic).json()
        assert item(taken) == item(held)
        late = judge(ann, held["id"], 2)
        assert late.status_code == 409
        assert late.json()["error"] == "conflict"
        assert "expired" in late.json()["detail"]
        assert _only_judgment(held) == []
        assert judge(bobs, taken["id"], 0).status_code == 201
    assert _only_judgment(taken) == [(bob.pk, 0)]


def test_an_expired_lease_records_nothing_even_when_nobody_took_the_item(
    one_topic: Campaign, annotator: Any, api_client_for: Any
) -> None:
    ann = api_client_for(annotator)
    held = lease(ann, one_topic).json()
    with clock_at(after_expiry(one_topic)):
        late = judge(ann, held["id"], 2)
    assert late.status_code == 409
    assert "expired" in late.json()["detail"]
    assert not Judgment.objects.exists()
    slot = JudgingSlot.objects.get(leases__pk=held["id"])
    assert slot.judged_at is None


def test_a_retry_after_the_lease_ended_with_its_judgment_is_still_idempotent(
    one_topic: Campaign, annotator: Any, api_client_for: Any
) -> None:
    ann = api_client_for(annotator)
    held = lease(ann, one_topic).json()
    assert judge(ann, held["id"], 2).status_code == 201
    # the lease is 'judged' now, and even past its expiry the same grade is a 200 ...
    with clock_at(after_expiry(one_topic)):
        again = judge(ann, held["id"], 2)
    assert again.status_code == 200
    # ... while another grade on it is refused (a stale page), the judgment kept as it was
    changed = judge(ann, held["id"], 1)
    assert changed.status_code == 409 and "already judged Yes" in changed.json()["detail"]
    assert _only_judgment(held) == [(annotator.pk, 2)]
    assert JudgmentChange.objects.count() == 1


def test_an_expired_lease_cannot_be_renewed_back_to_life(
    one_topic: Campaign, annotator: Any, api_client_for: Any
) -> None:
    ann = api_client_for(annotator)
    held = lease(ann, one_topic).json()
    with clock_at(after_expiry(one_topic)):
        r = ann.post(f"/api/v1/leases/{held['id']}/renew/")
        assert r.status_code == 409 and "expired" in r.json()["detail"]
        assert judge(ann, held["id"], 1).status_code == 409
        # the annotator asks again and gets a new, live lease on the item
        again = lease(ann, one_topic).json()
        assert again["id"] != held["id"] and item(again) == item(held)
        assert judge(ann, again["id"], 1).status_code == 201
