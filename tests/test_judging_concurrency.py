"""32 annotators judging at once on PostgreSQL: no slot is ever held by two annotators at once,
every item is judged exactly as often as configured by distinct annotators, no judgment is lost
or doubled, and nothing fails unexpectedly.

The clients skip some items, submit some judgments twice (a retry) and let a few leases expire
before judging (which then is refused with 409: an expired lease records nothing, and the item
goes to whoever leases it next).
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from itertools import pairwise
from typing import Any

import pytest
from django.db import connection

from judging.assessments.models import JudgingSlot, Judgment, JudgmentChange, Lease
from judging.assessments.queue import in_overlap
from judging.campaigns.models import Campaign, Document, Topic
from judging.workflows.pools import pool_requested
from judging.workflows.runs import run_submitted
from tests.conftest import need_service

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

CLIENTS = 32
TOPICS = 40
DOCS_PER_TOPIC = 8  # 320 items
OVERLAP = 0.25
# Long enough that no lease runs out between its answer and its judgment even on a loaded
# 2-core CI machine (with 2 s leases, a slow round trip let every lease expire and the clients
# re-leased the same items until the deadline); the few late clients wait it out on purpose.
LEASE_SECONDS = 8
DEADLINE_SECONDS = 150.0


@dataclass
class Held:
    lease_id: int
    got: float  # monotonic time the lease answer arrived
    done: float = 0.0  # monotonic time the judgment or release was sent
    late: bool = False  # let the lease expire before judging


@dataclass
class Client:
    name: str
    held: list[Held] = field(default_factory=list)
    statuses: Counter[str] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)


@pytest.fixture
def busy_campaign(make_user: Callable[..., Any], admin_user: Any) -> Campaign:
    need_service(connection.vendor == "postgresql", "the concurrency test needs PostgreSQL")
    from judging.campaigns.services import campaign_create

    campaign = campaign_create(name="Busy campaign", created_by=admin_user)
    qids = [str(300 + n) for n in range(TOPICS)]
    Topic.objects.bulk_create(Topic(campaign=campaign, qid=q, title=f"topic {q}") for q in qids)
    docs = {q: [f"{q}-doc{i}" for i in range(DOCS_PER_TOPIC)] for q in qids}
    owner = make_user("rob-researcher", "researcher")
    for n in range(2):
        results = {
            q: {d: 100.0 - i for i, d in enumerate(ds if n == 0 else ds[::-1])}
            for q, ds in docs.items()
        }
        run_submitted(campaign=campaign, owner=owner, tag=f"sys{n}", results=results, pooled=True)
    Document.objects.bulk_create(
        Document(campaign=campaign, docid=d, text=f"text {d}") for ds in docs.values() for d in ds
    )
    campaign.pool_depth = DOCS_PER_TOPIC
    campaign.overlap = OVERLAP
    campaign.lease_seconds = LEASE_SECONDS
    campaign.save()
    version, _ = pool_requested(campaign=campaign)  # built by the eager task after commit
    version.refresh_from_db()
    assert version.num_to_judge == TOPICS * DOCS_PER_TOPIC, version.error
    return campaign


def annotate(
    campaign: Campaign, client: Any, me: Client, seed: int, start: threading.Barrier
) -> None:
    rng = random.Random(seed)
    url = f"/api/v1/campaigns/{campaign.pk}/leases/"
    start.wait()
    deadline = time.monotonic() + DEADLINE_SECONDS
    try:
        while time.monotonic() < deadline:
            r = client.post(url)
            me.statuses[f"lease {r.status_code}"] += 1
            if r.status_code == 204:
                if not JudgingSlot.objects.filter(
                    campaign=campaign, judged_at__isnull=True
                ).exists():
                    return
                time.sleep(0.05)  # others hold the rest; some may come back
                continue
            if r.status_code != 201:
                me.errors.append(f"lease: {r.status_code} {r.content[:200]!r}")
                continue
            lease_id = r.json()["id"]
            if me.held and me.held[-1].lease_id == lease_id:
                held = me.held[-1]  # the same lease again (it is still ours)
            else:
                held = Held(lease_id, time.monotonic(), late=rng.random() < 0.01)
                me.held.append(held)
            if rng.random() < 0.08 and not held.late:
                held.done = time.monotonic()
                r = client.delete(f"/api/v1/leases/{lease_id}/")
                me.statuses[f"release {r.status_code}"] += 1
                if r.status_code != 204:
                    me.errors.append(f"release: {r.status_code} {r.content[:200]!r}")
                continue
            if held.late:
                time.sleep(LEASE_SECONDS + 0.2)
            held.done = time.monotonic()
            grade = rng.choice([0, 1, 2, 3])
            for attempt in range(2 if rng.random() < 0.1 else 1):  # sometimes a retry
                r = client.post(
                    f"/api/v1/leases/{lease_id}/judgment/", {"grade": grade}, format="json"
                )
                me.statuses[f"judge {r.status_code}"] += 1
                # 201 first, 200 for the retry; 409 on a lease left to expire (or one that
                # ran out on a very slow machine), never a grade on it
                ok = {409} if held.late else ({201, 409} if attempt == 0 else {200, 409})
                if r.status_code not in ok:
                    me.errors.append(f"judge: {r.status_code} {r.content[:200]!r}")
        me.errors.append("deadline reached with items left")
    except Exception as exc:  # recorded, reported by the test
        me.errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        connection.close()


def test_32_annotators_at_once_judge_every_item_as_often_as_configured(
    busy_campaign: Campaign, make_user: Callable[..., Any], api_client_for: Any
) -> None:
    campaign = busy_campaign
    users = [make_user(f"annotator-{n:02d}", "annotator") for n in range(CLIENTS)]
    clients = [Client(u.username) for u in users]
    api_clients = [api_client_for(u) for u in users]
    start = threading.Barrier(CLIENTS)
    threads = [
        threading.Thread(target=annotate, args=(campaign, api, me, n, start))
        for n, (api, me) in enumerate(zip(api_clients, clients, strict=True))
    ]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=DEADLINE_SECONDS + 15)
    elapsed = time.monotonic() - t0
    assert not any(t.is_alive() for t in threads)
    errors = [f"{c.name}: {e}" for c in clients for e in c.errors]
    assert errors == []

    items = {(q, d) for q in range(300, 300 + TOPICS) for d in range(DOCS_PER_TOPIC)}
    wanted = {
        (str(q), f"{q}-doc{d}"): 2 if in_overlap(str(q), f"{q}-doc{d}", OVERLAP) else 1
        for q, d in items
    }
    assert 1 in wanted.values() and 2 in wanted.values()
    expected_judgments = sum(wanted.values())

    # every slot judged; every item by as many distinct annotators as it has slots
    assert JudgingSlot.objects.filter(campaign=campaign).count() == expected_judgments
    assert not JudgingSlot.objects.filter(campaign=campaign, judged_at__isnull=True).exists()
    judged_by: dict[tuple[str, str], list[int]] = defaultdict(list)
    for qid, docid, who in Judgment.objects.filter(campaign=campaign).values_list(
        "topic__qid", "docid", "annotator"
    ):
        judged_by[(qid, docid)].append(who)
    assert {k: len(v) for k, v in judged_by.items()} == wanted
    assert all(len(set(who)) == len(who) for who in judged_by.values())
    # no judgment lost or doubled: one Judgment and one history row per accepted submit
    accepted = sum(c.statuses["judge 201"] for c in clients)
    assert Judgment.objects.filter(campaign=campaign).count() == expected_judgments == accepted
    assert JudgmentChange.objects.filter(topic__campaign=campaign).count() == expected_judgments

    # no slot ever held by two annotators at once: per slot, each lease (as the server
    # recorded it) ended or expired before the next one began ...
    leases = list(
        Lease.objects.filter(slot__campaign=campaign).values_list(
            "pk", "slot_id", "annotator_id", "created_at", "ended_at", "expires_at"
        )
    )
    by_slot: dict[int, list[tuple[datetime, datetime]]] = defaultdict(list)
    slot_of = {}
    for pk, slot_id, _, created, ended, expires in leases:
        end = min(ended, expires) if ended is not None else expires
        by_slot[slot_id].append((created, end))
        slot_of[pk] = slot_id
    for intervals in by_slot.values():
        intervals.sort()
        for (_, end), (begin, _) in pairwise(intervals):
            assert begin >= end
    # ... and as the clients saw it: nobody got a slot before its previous holder let it go
    # or its lease ran out (the late ones)
    seen: dict[int, list[Held]] = defaultdict(list)
    for c in clients:
        for h in c.held:
            seen[slot_of[h.lease_id]].append(h)
    for hs in seen.values():
        hs.sort(key=lambda h: h.got)
        for a, b in pairwise(hs):
            assert a.late or (a.done and a.done < b.got)
    assert sum(c.statuses["release 204"] for c in clients) > 0
    assert elapsed < 120
