"""Pool versions: strategies through the service, re-pooling with a diff, one build per trigger."""

from __future__ import annotations

from typing import Any

import pytest

from judging.campaigns.models import Document
from judging.pools.models import PoolDocument, PoolState, PoolVersion
from judging.workflows.pools import pool_built, pool_requested
from judging.workflows.qrels import qrels_imported
from judging.workflows.runs import run_submitted

pytestmark = pytest.mark.django_db

# Three pooled runs and one novel run over topics 401 and 402 (scores descending = rank order).
RUNS = {
    "sysA": {"401": ["a1", "a2", "x1", "a3"], "402": ["b1", "b2", "b3"]},
    "sysB": {"401": ["x1", "a1", "c1", "c2"], "402": ["b2", "c3", "b1"]},
    "sysC": {"401": ["c1", "d1", "d2", "d3"], "402": ["d4", "b1", "d5"]},
    "novel": {"401": ["n1", "n2", "a1", "n3"], "402": ["n4", "b1", "n5"]},
}


def as_results(ranked: dict[str, list[str]]) -> dict[str, dict[str, float]]:
    return {q: {d: float(len(ds) - i) for i, d in enumerate(ds)} for q, ds in ranked.items()}


@pytest.fixture
def pooled_campaign(campaign: Any, researcher: Any) -> Any:
    for tag, ranked in RUNS.items():
        run_submitted(
            campaign=campaign,
            owner=researcher,
            tag=tag,
            results=as_results(ranked),
            group=f"group-{tag}",
            pooled=tag != "novel",
        )
    # texts for every document except d3 (so one pooled document has no text)
    docs = {d for ranked in RUNS.values() for ds in ranked.values() for d in ds} - {"d3"}
    Document.objects.bulk_create(
        Document(campaign=campaign, docid=d, text=f"text of {d}") for d in sorted(docs)
    )
    campaign.pool_depth = 3
    campaign.save()
    return campaign


def pooled_docs(version: PoolVersion) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for qid, docid in (
        PoolDocument.objects.filter(version=version)
        .order_by("topic__qid", "position")
        .values_list("topic__qid", "docid")
    ):
        out.setdefault(qid, []).append(docid)
    return out


def union_at(depth: int, tags: list[str]) -> dict[str, set[str]]:
    """The depth-k pool computed by hand from RUNS (independent of the strategies)."""
    out: dict[str, set[str]] = {}
    for tag in tags:
        for qid, ds in RUNS[tag].items():
            out.setdefault(qid, set()).update(ds[:depth])
    return out


def test_a_depth_k_pool_is_the_union_of_the_pooled_runs_top_k(
    pooled_campaign: Any, as_committed: Any
) -> None:
    with as_committed():
        version, created = pool_requested(campaign=pooled_campaign)
    assert created
    version.refresh_from_db()
    assert version.state == PoolState.BUILT and version.number == 1
    assert sorted(version.run_tags) == ["sysA", "sysB", "sysC"]
    got = pooled_docs(version)
    expected = union_at(3, ["sysA", "sysB", "sysC"])
    assert {q: set(ds) for q, ds in got.items()} == expected
    # depth pooling lists documents in docid order: it reveals neither rank nor system
    assert got["401"] == sorted(expected["401"])
    assert version.num_documents == sum(len(s) for s in expected.values())
    assert version.num_added == version.num_documents == version.num_to_judge
    assert version.percent == 100.0


def test_pooled_documents_without_text_are_listed_for_the_admin(
    pooled_campaign: Any, api_client_for: Any, admin_user: Any, as_committed: Any
) -> None:
    pooled_campaign.pool_depth = 4
    pooled_campaign.save()
    with as_committed():
        version, _ = pool_requested(campaign=pooled_campaign)
    version.refresh_from_db()
    assert version.num_missing_text == 1
    body = api_client_for(admin_user).get(f"/api/v1/pools/{version.pk}/missing-text/").json()
    assert body["results"] == [{"docid": "d3", "topics": ["401"], "count": 1}]


def test_repooling_adds_the_novel_runs_documents_and_queues_only_unjudged_ones(
    pooled_campaign: Any, researcher: Any, api_client_for: Any, as_committed: Any
) -> None:
    with as_committed():
        v1, _ = pool_requested(campaign=pooled_campaign)
    # judge pool v1 (an imported qrels version stands in for the annotators here)
    lines = "".join(
        f"{q} 0 {d} {int(d.startswith('a'))}\n" for q, ds in pooled_docs(v1).items() for d in ds
    )
    with as_committed():
        qrels_imported(campaign=pooled_campaign, data=lines.encode())
    tags = ["sysA", "sysB", "sysC", "novel"]
    runs = list(pooled_campaign.runs.filter(tag__in=tags))
    with as_committed():
        v2, created = pool_requested(campaign=pooled_campaign, runs=runs)
    v2.refresh_from_db()
    assert created and v2.number == 2 and v2.base_id == v1.pk
    before, after = union_at(3, tags[:3]), union_at(3, tags)
    added = {q: after[q] - before[q] for q in after}
    assert v2.num_added == sum(len(s) for s in added.values()) == 4  # n1, n2 | n4, n5
    to_judge = set(
        PoolDocument.objects.filter(version=v2, to_judge=True).values_list("topic__qid", "docid")
    )
    assert to_judge == {(q, d) for q, ds in added.items() for d in ds}
    diff = api_client_for(researcher).get(f"/api/v1/pools/{v2.pk}/diff/").json()
    assert diff["against"] == 1 and diff["removed"] == 0
    assert {q: set(t["added"]) for q, t in diff["topics"].items()} == {
        q: s for q, s in added.items() if s
    }


def test_two_triggers_at_once_produce_one_build(pooled_campaign: Any, as_committed: Any) -> None:
    with as_committed() as queued:
        first, created_first = pool_requested(campaign=pooled_campaign)
        second, created_second = pool_requested(campaign=pooled_campaign, depth=2)
    assert created_first and not created_second
    assert first.pk == second.pk
    assert len(queued) == 1  # one build task after commit
    assert PoolVersion.objects.get().state == PoolState.BUILT


def test_a_build_run_twice_builds_once(
    pooled_campaign: Any, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks() as queued:  # queued, never run: no commit
        version, _ = pool_requested(campaign=pooled_campaign)
    assert len(queued) == 1
    built = pool_built(pool_id=version.pk)
    assert built is not None and built.state == PoolState.BUILT
    count = PoolDocument.objects.filter(version=version).count()
    assert pool_built(pool_id=version.pk) is None
    assert PoolDocument.objects.filter(version=version).count() == count
    assert PoolVersion.objects.get(pk=version.pk).number == 1


def test_a_queued_build_shows_no_documents_and_no_number(
    pooled_campaign: Any,
    api_client_for: Any,
    admin_user: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks() as queued:  # queued, never run: no commit
        version, _ = pool_requested(campaign=pooled_campaign)
    assert len(queued) == 1
    body = api_client_for(admin_user).get(f"/api/v1/pools/{version.pk}/").json()
    assert body["state"] == "queued" and body["number"] is None and body["percent"] == 0.0
    assert not PoolDocument.objects.filter(version=version).exists()


def test_per_group_priority_pools_only_each_groups_first_runs(
    campaign: Any, researcher: Any, as_committed: Any
) -> None:
    for tag, group, prio in (("g1-best", "g1", 1), ("g1-second", "g1", 2), ("g2-only", "g2", 1)):
        run_submitted(
            campaign=campaign,
            owner=researcher,
            tag=tag,
            group=group,
            priority=prio,
            results={"401": {f"{tag}-doc": 1.0}},
        )
    with as_committed():
        version, _ = pool_requested(campaign=campaign, depth=5, params={"per_group": 1})
    version.refresh_from_db()
    assert sorted(version.run_tags) == ["g1-best", "g2-only"]
    assert pooled_docs(version) == {"401": ["g1-best-doc", "g2-only-doc"]}


@pytest.mark.parametrize(
    "strategy", ["rank", "rrf", "borda", "mtf", "maxmean", "hedge", "thompson", "docid"]
)
def test_every_strategy_pools_the_same_depth_k_documents(
    pooled_campaign: Any, strategy: str, as_committed: Any
) -> None:
    with as_committed():
        version, _ = pool_requested(campaign=pooled_campaign, strategy=strategy)
    version.refresh_from_db()
    assert version.state == PoolState.BUILT, version.error
    assert {q: set(ds) for q, ds in pooled_docs(version).items()} == union_at(
        3, ["sysA", "sysB", "sysC"]
    )
    assert version.adaptive == (strategy in {"mtf", "maxmean", "hedge", "thompson"})


def test_rank_order_puts_documents_by_their_best_rank(
    pooled_campaign: Any, as_committed: Any
) -> None:
    with as_committed():
        version, _ = pool_requested(campaign=pooled_campaign, strategy="rank")
    order = pooled_docs(PoolVersion.objects.get(pk=version.pk))["401"]
    # best ranks over the top 3 of sysA, sysB, sysC: a1, x1, c1 at 1; a2, d1 at 2; d2 at 3
    assert set(order[:3]) == {"a1", "x1", "c1"}
    assert set(order[3:5]) == {"a2", "d1"}
    assert order[5:] == ["d2"]


def test_a_bad_request_is_refused_before_anything_is_queued(
    pooled_campaign: Any, api_client_for: Any, admin_user: Any
) -> None:
    client = api_client_for(admin_user)
    url = f"/api/v1/campaigns/{pooled_campaign.pk}/pools/"
    r = client.post(url, {"strategy": "magic"}, format="json")
    assert r.status_code == 400 and "unknown strategy 'magic'" in r.json()["problems"][0]["message"]
    r = client.post(url, {"runs": ["sysA", "nope"]}, format="json")
    assert (
        r.status_code == 400
        and r.json()["problems"][0]["message"] == "no run 'nope' in this campaign"
    )
    r = client.post(url, {"strategy": "hedge", "params": {"beta": "x", "bogus": 1}}, format="json")
    assert r.status_code == 400
    assert PoolVersion.objects.count() == 0


def test_admins_trigger_pools_through_the_api_and_follow_progress(
    pooled_campaign: Any, api_client_for: Any, admin_user: Any, as_committed: Any
) -> None:
    client = api_client_for(admin_user)
    with as_committed():
        r = client.post(
            f"/api/v1/campaigns/{pooled_campaign.pk}/pools/",
            {"strategy": "depth", "depth": 2, "runs": ["sysA", "sysB"]},
            format="json",
        )
    assert r.status_code == 202
    body = client.get(f"/api/v1/pools/{r.json()['id']}/").json()
    assert body["state"] == "built" and body["percent"] == 100.0
    assert body["num_documents"] == sum(len(s) for s in union_at(2, ["sysA", "sysB"]).values())
    assert body["processed_topics"] == body["total_topics"] == 2
    listed = client.get(f"/api/v1/campaigns/{pooled_campaign.pk}/pools/").json()["results"]
    assert [p["number"] for p in listed] == [1]


@pytest.mark.parametrize("who", ["researcher", "annotator"])
def test_researchers_and_annotators_cannot_trigger_pooling(
    pooled_campaign: Any, api_client_for: Any, request: Any, who: str
) -> None:
    client = api_client_for(request.getfixturevalue(who))
    r = client.post(f"/api/v1/campaigns/{pooled_campaign.pk}/pools/", {}, format="json")
    assert r.status_code == 403
    assert PoolVersion.objects.count() == 0


def test_annotators_cannot_read_pools(
    pooled_campaign: Any, api_client_for: Any, annotator: Any, as_committed: Any
) -> None:
    with as_committed():
        version, _ = pool_requested(campaign=pooled_campaign)
    client = api_client_for(annotator)
    assert client.get(f"/api/v1/pools/{version.pk}/").status_code == 403
    assert client.get(f"/api/v1/campaigns/{pooled_campaign.pk}/pools/").status_code == 403


# Real commits: the command reports after its request has committed and the build has run.
@pytest.mark.django_db(transaction=True)
def test_build_pool_command_builds_a_version(pooled_campaign: Any) -> None:
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("build_pool", campaign=pooled_campaign.name, strategy="depth", depth=1, stdout=out)
    assert "pool version 1 built" in out.getvalue()
    assert PoolVersion.objects.get().num_documents == sum(
        len(s) for s in union_at(1, ["sysA", "sysB", "sysC"]).values()
    )


def test_the_admin_action_queues_the_next_pool(
    pooled_campaign: Any, admin_user: Any, as_committed: Any
) -> None:
    from django.test import Client

    admin_user.is_superuser = True
    admin_user.save()
    client = Client()
    client.force_login(admin_user)
    with as_committed():
        r = client.post(
            "/admin/campaigns/campaign/",
            {"action": "build_next_pool", "_selected_action": [pooled_campaign.pk]},
        )
    assert r.status_code == 302
    assert PoolVersion.objects.get().state == PoolState.BUILT


@pytest.mark.parametrize("strategy", ["mtf", "hedge", "maxmean"])
def test_the_judging_queue_asks_an_adaptive_strategy_for_the_next_document(
    campaign: Any, researcher: Any, annotator: Any, strategy: str, as_committed: Any
) -> None:
    from judging.assessments.queue import judgment_record, lease_next
    from metrics.pooling.strategies import make_strategy

    runs = {
        "A": ["a1", "a2", "a3", "a4"],
        "B": ["b1", "b2", "b3", "b4"],
        "C": ["a1", "c2", "b2", "c4"],
    }
    oracle = {"a1": 0, "a2": 0, "b1": 2, "b2": 1, "b3": 2, "c2": 1}
    for tag, ranked in runs.items():
        run_submitted(
            campaign=campaign, owner=researcher, tag=tag, results=as_results({"401": ranked})
        )
    Document.objects.bulk_create(
        Document(campaign=campaign, docid=d, text=d)
        for d in sorted({d for r in runs.values() for d in r})
    )
    with as_committed():
        pool_requested(campaign=campaign, strategy=strategy, depth=4)

    served = []
    while (lease := lease_next(campaign=campaign, annotator=annotator)) is not None:
        served.append(lease.slot.docid)
        judgment_record(
            lease_id=lease.pk, annotator=annotator, grade=oracle.get(lease.slot.docid, 0)
        )

    # The same strategy driven directly with the same judgments, one document at a time.
    direct = make_strategy(strategy)
    state = direct.start(runs, topic="401", relevance_level=1)
    expected: list[str] = []
    feedback: dict[str, int] = {}
    while (doc := direct.next_document(state, feedback)) is not None:
        expected.append(doc)
        feedback = {doc: oracle.get(doc, 0)}
    assert served == expected
    assert len(served) == len({d for r in runs.values() for d in r})


@pytest.mark.django_db(transaction=True)
def test_the_admin_action_says_the_new_pool_versions_state_and_links_to_it(
    pooled_campaign: Any, admin_user: Any
) -> None:
    """With the build already done when the message is written (eager tasks here), the message
    says so, with the version's figures, and links to its page; not "queued ... see Pool
    versions for progress"."""
    from django.contrib.messages import get_messages
    from django.test import Client

    admin_user.is_superuser = True
    admin_user.save()
    client = Client()
    client.force_login(admin_user)
    r = client.post(
        "/admin/campaigns/campaign/",
        {"action": "build_next_pool", "_selected_action": [pooled_campaign.pk]},
    )
    assert r.status_code == 302
    version = PoolVersion.objects.get()
    assert version.state == PoolState.BUILT
    (message,) = [str(m) for m in get_messages(r.wsgi_request)]
    assert "queued" not in message and "see Pool versions for progress" not in message
    assert f"pool version {version.number} built" in message, message
    assert f"{version.num_documents} documents" in message
    assert f"{version.num_to_judge} to judge" in message
    link = f'href="/admin/pools/poolversion/{version.pk}/change/"'
    assert link in message, message
    # the change page it links to is the pool version's
    assert client.get(f"/admin/pools/poolversion/{version.pk}/change/").status_code == 200
