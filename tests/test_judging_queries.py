"""The number of SQL statements per lease and per judgment, so that the judging hot path does not
regress (the load benchmark's throughput is bounded by them: each costs a round trip and, in the
ORM, more CPU to build than the database takes to run it).

Counted inside the test's transaction, so each service's own transaction shows as a SAVEPOINT
and its RELEASE (2 statements that a real request does not send; its BEGIN and COMMIT are not
counted either).
"""

from __future__ import annotations

from typing import Any

import pytest

from judging.campaigns.models import Campaign
from tests.test_judging_api import THREE_TOPICS, build_pool, judge, lease

pytestmark = pytest.mark.django_db

# token + user, the annotator's groups (role check), the campaign, [SAVEPOINT], the annotator's
# lock (PostgreSQL only), their latest leases, the pick (slot locked, topic and document
# joined), the lease insert, the slot update, [RELEASE]
LEASE_QUERIES = 10
# token + user, groups, [SAVEPOINT], the lease with its slot (locked), campaign, topic and own
# judgment, the judgment insert, its history row, the slot update, the lease update, [RELEASE]
JUDGMENT_QUERIES = 9


@pytest.fixture
def three_topics(campaign: Campaign, researcher: Any) -> Campaign:
    return build_pool(campaign, researcher, THREE_TOPICS)


def test_a_lease_and_a_judgment_take_a_fixed_small_number_of_queries(
    three_topics: Campaign,
    annotator: Any,
    api_client_for: Any,
    django_assert_max_num_queries: Any,
) -> None:
    client = api_client_for(annotator)
    # the first lease hands out a topic (more work, once per topic); then the steady state
    first = lease(client, three_topics).json()
    assert judge(client, first["id"], 1).status_code == 201
    for _ in range(2):
        with django_assert_max_num_queries(LEASE_QUERIES):
            r = lease(client, three_topics)
        assert r.status_code == 201
        assert r.json()["document"]["text"]  # the document came with the pick
        with django_assert_max_num_queries(JUDGMENT_QUERIES):
            assert judge(client, r.json()["id"], 2).status_code == 201
    # the idempotent retry is no dearer than the first submission
    with django_assert_max_num_queries(JUDGMENT_QUERIES):
        assert judge(client, r.json()["id"], 2).status_code == 200
