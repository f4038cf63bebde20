"""The judging queue through the API: leases, skips, expiry, idempotent judgments with history,
undo, topic-centric assignment with overlap, blindness and permissions."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any
from unittest import mock

import pytest
from django.test import TestCase
from django.utils import timezone

from judging.assessments.models import JudgingSlot, Judgment, JudgmentChange, Lease, LeaseState
from judging.campaigns.models import Campaign, Document
from judging.workflows.documents import documents_imported
from judging.workflows.pools import pool_requested
from judging.workflows.runs import run_submitted

pytestmark = pytest.mark.django_db

# Run tags, scores and ranks that must never reach an annotator.
RUN_TAGS = ("tagAlphaSecret", "tagBetaSecret")
THREE_TOPICS = {q: [f"d{q}-{i}" for i in range(1, 5)] for q in ("401", "402", "403")}
ONE_TOPIC = {"401": ["d401-1", "d401-2", "d401-3"]}


def build_pool(
    campaign: Campaign,
    owner: Any,
    docs: dict[str, list[str]],
    *,
    without_text: tuple[str, ...] = (),
    overlap: float = 0.0,
) -> Campaign:
    """Two runs retrieving ``docs`` (the second in reverse order), texts for every document except
    ``without_text``, and a built depth pool holding every document."""
    for n, tag in enumerate(RUN_TAGS):
        results = {
            q: {d: 1000.0 - i for i, d in enumerate(ds if n == 0 else ds[::-1])}
            for q, ds in docs.items()
        }
        run_submitted(campaign=campaign, owner=owner, tag=tag, results=results, pooled=True)
    Document.objects.bulk_create(
        Document(campaign=campaign, docid=d, title=f"title of {d}", text=f"text of {d}")
        for ds in docs.values()
        for d in ds
        if d not in without_text
    )
    campaign.pool_depth = max(len(ds) for ds in docs.values())
    campaign.overlap = overlap
    campaign.save()
    # pytest-django's django_capture_on_commit_callbacks is this; the build runs after commit.
    with TestCase.captureOnCommitCallbacks(execute=True):
        version, _ = pool_requested(campaign=campaign)
    version.refresh_from_db()
    assert version.number == 1, version.error
    return campaign


@pytest.fixture
def three_topics(campaign: Campaign, researcher: Any) -> Campaign:
    return build_pool(campaign, researcher, THREE_TOPICS)


@pytest.fixture
def one_topic(campaign: Campaign, researcher: Any) -> Campaign:
    return build_pool(campaign, researcher, ONE_TOPIC)


@pytest.fixture
def bob(make_user: Callable[..., Any]) -> Any:
    return make_user("bob-annotator", "annotator")


def lease(client: Any, campaign: Campaign) -> Any:
    return client.post(f"/api/v1/campaigns/{campaign.pk}/leases/")


def judge(client: Any, lease_id: int, grade: Any) -> Any:
    return client.post(f"/api/v1/leases/{lease_id}/judgment/", {"grade": grade}, format="json")


def item(body: dict[str, Any]) -> tuple[str, str]:
    return body["topic"]["qid"], body["document"]["docid"]


@contextmanager
def clock_at(moment: datetime) -> Iterator[None]:
    """Move the service's clock (``timezone.now``) to ``moment``."""
    with mock.patch("django.utils.timezone.now", return_value=moment):
        yield


def after_expiry(campaign: Campaign) -> datetime:
    return timezone.now() + timedelta(seconds=campaign.lease_seconds + 1)


def judge_all(client: Any, campaign: Campaign, grade: int = 1) -> list[tuple[str, str]]:
    """Lease and judge until the queue has nothing left for this client; the items judged."""
    done: list[tuple[str, str]] = []
    for _ in range(100):
        r = lease(client, campaign)
        if r.status_code == 204:
            return done
        assert r.status_code == 201, r.content
        assert judge(client, r.json()["id"], grade).status_code == 201
        done.append(item(r.json()))
    raise AssertionError("the queue never ran dry")


def walk(value: Any) -> Iterator[tuple[str, Any]]:
    """Every (key, leaf value) of a JSON document."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield str(k), v
            yield from walk(v)
    elif isinstance(value, list):
        for v in value:
            yield from walk(v)


# --- leases -------------------------------------------------------------------------------


def test_a_lease_shows_topic_document_and_expiry_but_nothing_about_systems_or_others(
    campaign: Campaign, researcher: Any, annotator: Any, bob: Any, api_client_for: Any
) -> None:
    three_topics = build_pool(campaign, researcher, THREE_TOPICS, overlap=1.0)
    # bob judges first, so that other annotators' labels exist and could leak
    judge_all(api_client_for(bob), three_topics, grade=2)
    before = timezone.now()
    r = lease(api_client_for(annotator), three_topics)
    assert r.status_code == 201
    body = r.json()
    qid, docid = item(body)
    assert docid in THREE_TOPICS[qid]
    assert body["topic"]["title"] == f"topic {qid}"
    assert body["document"]["text"] == f"text of {docid}"
    expires = datetime.fromisoformat(body["expires_at"].replace("Z", "+00:00"))
    lease_time = timedelta(seconds=three_topics.lease_seconds)
    assert before + lease_time <= expires <= timezone.now() + lease_time
    # the grade buttons: the campaign's own scale, not anybody's label
    assert body.pop("scale") == three_topics.scale
    forbidden_keys = ("rank", "score", "system", "run", "annotator", "judg", "grade", "user")
    for key, value in walk(body):
        assert not any(word in key.lower() for word in forbidden_keys), key
        if isinstance(value, str):
            assert not any(tag.lower() in value.lower() for tag in RUN_TAGS), value
            assert bob.username not in value and "rank" not in value.lower(), value


def test_nothing_left_for_the_annotator_gives_204(
    one_topic: Campaign, annotator: Any, api_client_for: Any
) -> None:
    client = api_client_for(annotator)
    assert sorted(judge_all(client, one_topic)) == [("401", d) for d in ONE_TOPIC["401"]]
    r = lease(client, one_topic)
    assert r.status_code == 204 and r.content == b""


def test_asking_again_while_the_lease_is_active_returns_the_same_lease(
    three_topics: Campaign, annotator: Any, api_client_for: Any
) -> None:
    client = api_client_for(annotator)
    first = lease(client, three_topics).json()
    again = lease(client, three_topics)
    assert again.status_code == 201
    assert again.json()["id"] == first["id"] and item(again.json()) == item(first)
    assert Lease.objects.filter(annotator=annotator).count() == 1


def test_an_expired_lease_returns_the_item_to_the_queue(
    one_topic: Campaign, annotator: Any, bob: Any, api_client_for: Any
) -> None:
    held = lease(api_client_for(annotator), one_topic).json()
    # while the lease runs, bob is served something else
    other = lease(api_client_for(bob), one_topic).json()
    assert item(other) != item(held)
    api_client_for(bob).delete(f"/api/v1/leases/{other['id']}/")
    with clock_at(after_expiry(one_topic)):
        again = lease(api_client_for(bob), one_topic)
    assert again.status_code == 201
    assert item(again.json()) == item(held)
    assert again.json()["id"] != held["id"]


def test_renewing_a_lease_extends_its_expiry(
    three_topics: Campaign, annotator: Any, api_client_for: Any
) -> None:
    client = api_client_for(annotator)
    held = lease(client, three_topics).json()
    later = timezone.now() + timedelta(seconds=three_topics.lease_seconds - 5)
    with clock_at(later):
        r = client.post(f"/api/v1/leases/{held['id']}/renew/")
    assert r.status_code == 200
    renewed = datetime.fromisoformat(r.json()["expires_at"].replace("Z", "+00:00"))
    assert renewed == later + timedelta(seconds=three_topics.lease_seconds)
    # the renewed lease still holds the item past its first expiry
    with clock_at(later + timedelta(seconds=10)):
        assert lease(client, three_topics).json()["id"] == held["id"]


def test_renewing_after_someone_else_took_the_expired_item_is_a_conflict(
    one_topic: Campaign, annotator: Any, bob: Any, api_client_for: Any
) -> None:
    ann = api_client_for(annotator)
    held = lease(ann, one_topic).json()
    with clock_at(after_expiry(one_topic)):
        taken = lease(api_client_for(bob), one_topic).json()
        assert item(taken) == item(held)
        r = ann.post(f"/api/v1/leases/{held['id']}/renew/")
    assert r.status_code == 409
    assert r.json()["error"] == "conflict"


def test_a_skipped_item_goes_back_to_the_queue_but_not_straight_back_to_its_skipper(
    one_topic: Campaign, annotator: Any, bob: Any, api_client_for: Any
) -> None:
    ann = api_client_for(annotator)
    skipped = lease(ann, one_topic).json()
    assert ann.delete(f"/api/v1/leases/{skipped['id']}/").status_code == 204
    assert Lease.objects.get(pk=skipped["id"]).state == LeaseState.RELEASED
    nxt = lease(ann, one_topic).json()
    assert item(nxt) != item(skipped)
    # the item is open again for somebody else at once
    assert item(lease(api_client_for(bob), one_topic).json()) == item(skipped)


def test_a_skipped_item_comes_back_when_nothing_else_is_left(
    one_topic: Campaign, annotator: Any, api_client_for: Any
) -> None:
    ann = api_client_for(annotator)
    skipped = lease(ann, one_topic).json()
    ann.delete(f"/api/v1/leases/{skipped['id']}/")
    rest = judge_all(ann, one_topic)
    assert rest[-1] == item(skipped)
    assert sorted(rest) == [("401", d) for d in ONE_TOPIC["401"]]


# --- judgments ----------------------------------------------------------------------------


def test_submitting_the_same_grade_twice_stores_one_judgment(
    three_topics: Campaign, annotator: Any, api_client_for: Any
) -> None:
    client = api_client_for(annotator)
    held = lease(client, three_topics).json()
    first = judge(client, held["id"], 2)
    second = judge(client, held["id"], 2)
    assert (first.status_code, second.status_code) == (201, 200)
    assert first.json()["id"] == second.json()["id"]
    assert Judgment.objects.filter(annotator=annotator).count() == 1
    assert JudgmentChange.objects.filter(annotator=annotator).count() == 1


def test_another_grade_for_a_judged_lease_is_refused_and_changes_nothing(
    three_topics: Campaign, annotator: Any, api_client_for: Any
) -> None:
    """Issue 29, point 3: two tabs (or a page restored by Back and Forward) send grades for the
    same lease; the second, different one must not overwrite the first behind its back."""
    client = api_client_for(annotator)
    held = lease(client, three_topics).json()
    first = judge(client, held["id"], 2)  # tab A
    assert first.status_code == 201
    r = judge(client, held["id"], 0)  # tab B, on the same document
    assert r.status_code == 409
    body = r.json()
    qid, docid = item(held)
    judgment_id = first.json()["id"]
    assert body["error"] == "conflict"
    assert body["detail"].startswith(f"{docid} is already judged Yes (judgment {judgment_id})")
    assert "No was not recorded" in body["detail"]
    assert f"PATCH /api/v1/judgments/{judgment_id}/" in body["detail"]
    judgment = Judgment.objects.get(annotator=annotator, topic__qid=qid, docid=docid)
    assert judgment.grade == 2
    history = [(h.annotator_id, h.old_grade, h.new_grade) for h in judgment.history.all()]
    assert history == [(annotator.pk, None, 2)]
    assert judge(client, held["id"], 2).status_code == 200  # the same grade: a retry, fine


def test_a_judgment_on_an_expired_lease_is_refused_and_the_new_holder_judges(
    one_topic: Campaign, annotator: Any, bob: Any, api_client_for: Any
) -> None:
    held = lease(api_client_for(annotator), one_topic).json()
    with clock_at(after_expiry(one_topic)):
        taken = lease(api_client_for(bob), one_topic).json()  # bob holds it, has not judged
        assert item(taken) == item(held)
        r = judge(api_client_for(annotator), held["id"], 1)
        assert r.status_code == 409 and r.json()["error"] == "conflict"
        # bob's lease is untouched and records bob's grade
        assert Lease.objects.get(pk=taken["id"]).state == LeaseState.ACTIVE
        assert judge(api_client_for(bob), taken["id"], 2).status_code == 201
    qid, docid = item(held)
    assert list(
        Judgment.objects.filter(topic__qid=qid, docid=docid).values_list("annotator", "grade")
    ) == [(bob.pk, 2)]


def test_a_judgment_on_an_expired_lease_is_refused_when_somebody_judged_since(
    one_topic: Campaign, annotator: Any, bob: Any, api_client_for: Any
) -> None:
    held = lease(api_client_for(annotator), one_topic).json()
    with clock_at(after_expiry(one_topic)):
        taken = lease(api_client_for(bob), one_topic).json()
        assert judge(api_client_for(bob), taken["id"], 0).status_code == 201
        r = judge(api_client_for(annotator), held["id"], 2)
    assert r.status_code == 409
    qid, docid = item(held)
    assert list(
        Judgment.objects.filter(topic__qid=qid, docid=docid).values_list("annotator", "grade")
    ) == [(bob.pk, 0)]


def test_a_grade_off_the_scale_is_rejected_listing_the_problem(
    three_topics: Campaign, annotator: Any, api_client_for: Any
) -> None:
    client = api_client_for(annotator)
    held = lease(client, three_topics).json()
    r = judge(client, held["id"], 7)
    assert r.status_code == 400
    problems = r.json()["problems"]
    assert problems[0]["location"] == "grade"
    assert "7" in problems[0]["message"] and "[0, 1, 2]" in problems[0]["message"]
    r = judge(client, held["id"], "very")
    assert r.status_code == 400 and r.json()["problems"][0]["location"] == "grade"
    assert not Judgment.objects.exists()


def test_two_annotators_are_given_different_topics(
    three_topics: Campaign, annotator: Any, bob: Any, api_client_for: Any
) -> None:
    ann, b = api_client_for(annotator), api_client_for(bob)
    ann_topics: set[str] = set()
    bob_topics: set[str] = set()
    for _ in range(3):  # several items each, in turns
        for client, topics in ((ann, ann_topics), (b, bob_topics)):
            held = lease(client, three_topics).json()
            topics.add(held["topic"]["qid"])
            judge(client, held["id"], 1)
    assert len(ann_topics) == len(bob_topics) == 1
    assert ann_topics != bob_topics


def test_with_full_overlap_every_item_is_judged_by_two_different_annotators(
    campaign: Campaign, researcher: Any, annotator: Any, bob: Any, api_client_for: Any
) -> None:
    build_pool(campaign, researcher, THREE_TOPICS, overlap=1.0)
    clients = [api_client_for(annotator), api_client_for(bob)]
    done = [False, False]
    for _ in range(100):
        for n, client in enumerate(clients):
            r = lease(client, campaign)
            if r.status_code == 204:
                done[n] = True
                continue
            assert judge(client, r.json()["id"], n + 1).status_code == 201
        if all(done):
            break
    judges: dict[tuple[str, str], list[int]] = {}
    for qid, docid, who in Judgment.objects.values_list("topic__qid", "docid", "annotator"):
        judges.setdefault((qid, docid), []).append(who)
    expected = {(q, d) for q, ds in THREE_TOPICS.items() for d in ds}
    assert set(judges) == expected
    assert all(sorted(who) == sorted([annotator.pk, bob.pk]) for who in judges.values())
    assert not JudgingSlot.objects.filter(judged_at__isnull=True).exists()


def test_undo_removes_the_latest_judgment_and_leases_the_item_back(
    three_topics: Campaign, annotator: Any, api_client_for: Any
) -> None:
    client = api_client_for(annotator)
    first = lease(client, three_topics).json()
    judge(client, first["id"], 0)
    second = lease(client, three_topics).json()
    judge(client, second["id"], 2)
    lease(client, three_topics)  # looking at a third item when pressing back
    r = client.post(f"/api/v1/campaigns/{three_topics.pk}/undo/")
    assert r.status_code == 201
    assert item(r.json()) == item(second)
    qid, docid = item(second)
    assert not Judgment.objects.filter(topic__qid=qid, docid=docid).exists()
    assert JudgmentChange.objects.filter(docid=docid).last().new_grade is None  # type: ignore[union-attr]
    # the undone item is the annotator's current lease, and can be judged again
    assert lease(client, three_topics).json()["id"] == r.json()["id"]
    assert judge(client, r.json()["id"], 1).status_code == 201
    assert Judgment.objects.get(topic__qid=qid, docid=docid).grade == 1


def test_successive_undos_walk_back_through_the_actions(
    three_topics: Campaign, annotator: Any, api_client_for: Any
) -> None:
    client = api_client_for(annotator)
    first = lease(client, three_topics).json()
    judge(client, first["id"], 0)
    second = lease(client, three_topics).json()
    changed = judge(client, second["id"], 1).json()["id"]
    # a change of mind on the same item: 1 -> 2 (asked for, not a grade sent with the lease)
    r = client.patch(f"/api/v1/judgments/{changed}/", {"grade": 2}, format="json")
    assert r.status_code == 200
    qid, docid = item(second)
    undo = f"/api/v1/campaigns/{three_topics.pk}/undo/"
    assert client.post(undo).status_code == 204  # undoes the change: back to 1
    assert Judgment.objects.get(topic__qid=qid, docid=docid).grade == 1
    r = client.post(undo)  # undoes the judgment of the second item: it comes back
    assert r.status_code == 201 and item(r.json()) == item(second)
    assert not Judgment.objects.filter(topic__qid=qid, docid=docid).exists()
    r = client.post(undo)  # then the first item's judgment
    assert r.status_code == 201 and item(r.json()) == item(first)
    assert not Judgment.objects.exists()
    assert client.post(undo).status_code == 204  # nothing left to undo
    history = [(c.old_grade, c.new_grade) for c in JudgmentChange.objects.order_by("pk")]
    assert history == [(None, 0), (None, 1), (1, 2), (2, 1), (1, None), (0, None)]


def test_undo_with_nothing_judged_gives_204(
    three_topics: Campaign, annotator: Any, api_client_for: Any
) -> None:
    r = api_client_for(annotator).post(f"/api/v1/campaigns/{three_topics.pk}/undo/")
    assert r.status_code == 204


def test_an_annotator_changes_their_own_judgment_with_patch(
    three_topics: Campaign, annotator: Any, api_client_for: Any
) -> None:
    client = api_client_for(annotator)
    held = lease(client, three_topics).json()
    judgment_id = judge(client, held["id"], 0).json()["id"]
    r = client.patch(f"/api/v1/judgments/{judgment_id}/", {"grade": 2}, format="json")
    assert r.status_code == 200 and r.json()["grade"] == 2
    assert Judgment.objects.get(pk=judgment_id).grade == 2
    assert [(h.old_grade, h.new_grade) for h in JudgmentChange.objects.all()] == [
        (None, 0),
        (0, 2),
    ]


def test_patching_someone_elses_judgment_is_not_found(
    three_topics: Campaign, annotator: Any, bob: Any, api_client_for: Any
) -> None:
    held = lease(api_client_for(bob), three_topics).json()
    judgment_id = judge(api_client_for(bob), held["id"], 0).json()["id"]
    client = api_client_for(annotator)
    r = client.patch(f"/api/v1/judgments/{judgment_id}/", {"grade": 2}, format="json")
    assert r.status_code == 404
    assert client.get(f"/api/v1/judgments/{judgment_id}/").status_code == 404
    assert Judgment.objects.get(pk=judgment_id).grade == 0


# --- permissions --------------------------------------------------------------------------


def test_annotators_cannot_read_runs(
    three_topics: Campaign, annotator: Any, api_client_for: Any
) -> None:
    client = api_client_for(annotator)
    assert client.get("/api/v1/runs/").status_code == 403
    assert client.get(f"/api/v1/runs/{three_topics.runs.first().pk}/").status_code == 403  # type: ignore[union-attr]


def test_annotators_list_only_their_own_judgments(
    three_topics: Campaign, annotator: Any, bob: Any, api_client_for: Any
) -> None:
    ann, b = api_client_for(annotator), api_client_for(bob)
    for client, grade in ((ann, 1), (b, 2), (ann, 1), (b, 2)):
        held = lease(client, three_topics).json()
        judge(client, held["id"], grade)
    for client, user in ((ann, annotator), (b, bob)):
        for query in ("", f"?campaign={three_topics.pk}"):
            body = client.get(f"/api/v1/judgments/{query}").json()
            rows = body["results"] if isinstance(body, dict) else body
            expected = set(Judgment.objects.filter(annotator=user).values_list("pk", flat=True))
            assert {row["id"] for row in rows} == expected and len(expected) == 2
    assert ann.get("/api/v1/judgments/?campaign=x").status_code == 400


def test_researchers_without_the_annotator_role_cannot_lease(
    three_topics: Campaign,
    researcher: Any,
    make_user: Callable[..., Any],
    api_client_for: Any,
) -> None:
    r = lease(api_client_for(researcher), three_topics)
    assert r.status_code == 403
    both = make_user("rhea-both", "researcher", "annotator")
    assert lease(api_client_for(both), three_topics).status_code == 201


ADMIN_ONLY = [
    ("get", "judging-progress/", None, 200),
    ("get", "agreement/", None, 200),
    ("get", "disagreements/", None, 200),
    ("post", "adjudications/", {"topic": "401", "docid": "d401-1", "grade": 2}, 201),
    ("post", "qrels/publish/", {"note": "first"}, 201),
]


@pytest.mark.parametrize(("method", "path", "data", "admin_status"), ADMIN_ONLY)
def test_admin_only_endpoints_deny_researchers_and_annotators(
    three_topics: Campaign,
    admin_user: Any,
    researcher: Any,
    annotator: Any,
    api_client_for: Any,
    method: str,
    path: str,
    data: dict[str, Any] | None,
    admin_status: int,
    as_committed: Any,
) -> None:
    judge_all(api_client_for(annotator), three_topics)
    url = f"/api/v1/campaigns/{three_topics.pk}/{path}"
    for user in (researcher, annotator):
        r = getattr(api_client_for(user), method)(url, data, format="json")
        assert r.status_code == 403, (user, r.content)
    with as_committed():  # publishing evaluates after commit
        r = getattr(api_client_for(admin_user), method)(url, data, format="json")
    assert r.status_code == admin_status, r.content


def test_judging_progress_counts_what_the_annotators_did(
    three_topics: Campaign, admin_user: Any, annotator: Any, api_client_for: Any
) -> None:
    done = judge_all(api_client_for(annotator), three_topics)
    body = api_client_for(admin_user).get(f"/api/v1/campaigns/{three_topics.pk}/judging-progress/")
    progress = body.json()
    assert progress["slots"] == progress["judged"] == len(done) == 12
    assert progress["left"] == 0 and progress["percent"] == 100.0
    assert [a["annotator__username"] for a in progress["annotators"]] == [annotator.username]


# --- documents without text ---------------------------------------------------------------


def test_pooled_documents_without_text_are_served_once_their_text_is_imported(
    campaign: Campaign, researcher: Any, annotator: Any, api_client_for: Any
) -> None:
    build_pool(campaign, researcher, ONE_TOPIC, without_text=("d401-2",))
    client = api_client_for(annotator)
    assert sorted(judge_all(client, campaign)) == [("401", "d401-1"), ("401", "d401-3")]
    documents_imported(
        campaign=campaign,
        data=b'{"docid": "d401-2", "title": "late", "text": "the text came late"}\n',
        fmt="jsonl",
    )
    r = lease(client, campaign)
    assert r.status_code == 201
    assert item(r.json()) == ("401", "d401-2")
    assert r.json()["document"]["text"] == "the text came late"
