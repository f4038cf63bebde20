"""The budget plan (hand-worked numbers on a small campaign), overlap slots nobody can fill, the
open items that publishing warns about (page and API), and who may see any of it."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.messages import get_messages
from django.utils import timezone

from judging.assessments import planning, queue
from judging.assessments.models import GoldItem, GoldSource, JudgingSlot, Judgment, QrelsVersion
from judging.campaigns.models import Campaign, Topic
from judging.pools.models import PoolVersion
from tests.knobs import set_knobs
from tests.test_judging_api import build_pool, judge_all

pytestmark = pytest.mark.django_db

# topic 401: 10 documents; topic 402: 60
SMALL = {
    "401": [f"d401-{i:02d}" for i in range(1, 11)],
    "402": [f"d402-{i:02d}" for i in range(1, 61)],
}


def judge_next(campaign: Campaign, who: Any, grade: int, seconds: float) -> tuple[str, str]:
    lease = queue.lease_next(campaign=campaign, annotator=who)
    assert lease is not None, "nothing left to lease"
    queue.judgment_record(lease_id=lease.pk, annotator=who, grade=grade, active_seconds=seconds)
    return lease.slot.topic.qid, lease.slot.docid


@pytest.fixture
def bob(make_user: Any) -> Any:
    return make_user("bob-annotator", "annotator")


@pytest.fixture
def judged(campaign: Campaign, researcher: Any, annotator: Any, bob: Any) -> Campaign:
    """Depth pool (docid order). The annotator judges 4 of topic 401's 10 items: grades 2, 0,
    1, 0 (threshold 1: 2 relevant) taking 10, 20, 40, 50 s. Bob judges 55 of topic 402's 60:
    5 relevant then 50 not, 30 s each."""
    build_pool(campaign, researcher, SMALL)
    for grade, seconds in ((2, 10.0), (0, 20.0), (1, 40.0), (0, 50.0)):
        assert judge_next(campaign, annotator, grade, seconds)[0] == "401"
    for i in range(55):
        assert judge_next(campaign, bob, 1 if i < 5 else 0, 30.0)[0] == "402"
    return campaign


def topic(plan: dict[str, Any], qid: str) -> dict[str, Any]:
    return next(t for t in plan["topics"] if t["qid"] == qid)


def test_the_plan_counts_judgments_and_relevant_and_estimates_what_is_left(judged: Campaign):
    plan = planning.budget_plan(judged)
    t401, t402 = topic(plan, "401"), topic(plan, "402")
    # 401: 2 of 4 relevant; docid order -> flat curve a = 2/4, 6 items left -> 3 expected
    assert (t401["judgments"], t401["items_judged"], t401["relevant"]) == (4, 4, 2)
    assert (t401["recent_found"], t401["recent_judged"], t401["recent_rate"]) == (2, 4, 0.5)
    assert t401["items_left"] == 6
    assert t401["model"]["shape"] == "flat"
    assert t401["expected_left"] == pytest.approx(3.0)
    assert t401["expected_left_recent_rate"] == pytest.approx(3.0)
    assert not t401["stop"] and "4 of the 50 judgments" in t401["suggestion"]
    # pace: fewer than 10 timed judgments in 401 -> the campaign median of
    # [10, 20, 40, 50] + 55 x [30] = 30 s; 6 slots left -> 180 s
    assert t401["pace_source"] == "campaign" and t401["seconds_per_judgment"] == 30.0
    assert t401["seconds_left"] == 180.0 and t401["time_left"] == "3 min"
    # 402: 5 of 55 relevant, 0 of the last 50; docid order: the rate is no guide, the flat
    # estimate is: a = 5/55, 5 left -> 0.45 expected, below one -> stop
    assert (t402["judgments"], t402["relevant"], t402["items_left"]) == (55, 5, 5)
    assert (t402["recent_found"], t402["recent_judged"]) == (0, 50)
    assert t402["expected_left"] == pytest.approx(5 * 5 / 55, abs=0.01)
    assert t402["stop"] and t402["suggestion"] == (
        "stop: about 0.5 relevant expected among the 5 left"
    )
    assert t402["pace_source"] == "topic" and t402["seconds_left"] == 150.0
    assert plan["topics_to_stop"] == ["402"]
    totals = plan["totals"]
    assert (totals["judgments"], totals["relevant"], totals["items_left"]) == (59, 7, 11)
    assert totals["slots_left"] == 11 and totals["seconds_left"] == 330.0
    assert plan["open"]["count"] == 11 and plan["open"]["first_slots"] == 11


def test_in_rank_order_a_window_without_relevant_suggests_stopping(
    campaign: Campaign, researcher: Any, annotator: Any
):
    campaign.pool_strategy = "rank"
    campaign.save()
    build_pool(campaign, researcher, {"401": SMALL["402"]})
    for i in range(55):
        judge_next(campaign, annotator, 1 if i < 5 else 0, 30.0)
    plan = planning.budget_plan(campaign)
    t = topic(plan, "401")
    assert plan["pool_strategy"] == "rank"
    assert t["model"]["shape"] in ("exponential", "power") and t["model"]["b"] > 0
    # the decaying curve expects fewer relevant among the 5 left than the flat share (0.45)
    assert 0 <= t["expected_left"] < 5 * 5 / 55
    assert t["stop"] and t["suggestion"].startswith(
        "stop: 0 relevant in the last 50 (rate 0.000 < 0.02, about "
    )
    assert plan["topics_to_stop"] == ["401"]


def test_relevance_follows_the_consensus_and_an_adjudication(
    campaign: Campaign, researcher: Any, annotator: Any, bob: Any
):
    build_pool(campaign, researcher, {"401": ["d1", "d2"]}, overlap=1.0)
    # both judge both items: d1 gets 1 and 0 (lower median: 0), d2 gets 2 and 2
    for who, grades in ((annotator, {"d1": 1, "d2": 2}), (bob, {"d1": 0, "d2": 2})):
        for _ in range(2):
            lease = queue.lease_next(campaign=campaign, annotator=who)
            assert lease is not None
            queue.judgment_record(lease_id=lease.pk, annotator=who, grade=grades[lease.slot.docid])
    t = topic(planning.budget_plan(campaign), "401")
    assert (t["judgments"], t["items_judged"], t["relevant"]) == (4, 2, 1)
    from judging.assessments.services import adjudicate

    adjudicate(campaign=campaign, qid="401", docid="d1", grade=1, note="", decided_by=researcher)
    assert topic(planning.budget_plan(campaign), "401")["relevant"] == 2


def test_an_excluded_assessors_grades_count_as_judged_but_not_as_relevant_found(
    judged: Campaign, bob: Any, admin_user: Any
):
    from judging.assessments.models import AnnotatorExclusion

    AnnotatorExclusion.objects.create(
        campaign=judged, annotator=bob, reason="below the gold threshold", excluded_by=admin_user
    )
    t = topic(planning.budget_plan(judged), "402")
    assert (t["judgments"], t["items_judged"], t["items_only_excluded"]) == (55, 55, 55)
    assert (t["relevant"], t["items_left"], t["expected_left"]) == (0, 5, None)


def test_gold_items_and_their_judgments_are_left_out(judged: Campaign, annotator: Any):
    t401 = Topic.objects.get(campaign=judged, qid="401")
    gold = GoldItem.objects.create(
        campaign=judged, topic=t401, docid="gold-doc", grade=2, source=GoldSource.IMPORTED
    )
    version = PoolVersion.objects.get(campaign=judged)
    slot = JudgingSlot.objects.create(
        campaign=judged,
        topic=t401,
        docid="gold-doc",
        slot=0,
        position=0,
        pool_version=version,
        gold=gold,
        gold_for=annotator,
        judged_by=annotator,
        judged_at=timezone.now(),
    )
    Judgment.objects.create(
        campaign=judged,
        topic=t401,
        docid="gold-doc",
        annotator=annotator,
        grade=2,
        slot=slot,
        gold=gold,
        active_seconds=500.0,
    )
    JudgingSlot.objects.create(
        campaign=judged,
        topic=t401,
        docid="gold-open",
        slot=0,
        position=0,
        pool_version=version,
        gold=GoldItem.objects.create(
            campaign=judged,
            topic=t401,
            docid="gold-open",
            grade=0,
            source=GoldSource.IMPORTED,
        ),
        gold_for=annotator,
    )
    plan = planning.budget_plan(judged)
    t = topic(plan, "401")
    assert (t["judgments"], t["relevant"], t["items_left"]) == (4, 2, 6)
    assert t["seconds_per_judgment"] == 30.0
    assert plan["open"]["count"] == 11
    assert all(i["docid"].startswith("d4") for i in plan["open"]["items"])


# --- overlap slots nobody can fill --------------------------------------------------------

THREE = {"401": ["d401-1", "d401-2", "d401-3"]}


@pytest.fixture
def alone(campaign: Campaign, researcher: Any, annotator: Any) -> Campaign:
    """Full overlap with a single annotator in the whole service (the admin and the
    researcher do not judge)."""
    return build_pool(campaign, researcher, THREE, overlap=1.0)


def test_with_one_annotator_every_overlap_slot_needs_a_second_assessor(
    alone: Campaign, annotator: Any, api_client_for: Any
):
    why = "needs a second assessor: only ann-annotator judges in this campaign"
    # before anything is judged: the second slots can already never be filled
    plan = planning.budget_plan(alone)
    assert plan["totals"]["unfillable_slots"] == 3
    assert topic(plan, "401")["unfillable_why"] == [why]
    assert plan["totals"]["slots_left"] == 3  # the first slots only
    # the annotator judges everything the queue gives them: the three first slots
    assert len(judge_all(api_client_for(annotator), alone)) == 3
    plan = planning.budget_plan(alone)
    open_ = plan["open"]
    assert open_["count"] == open_["needs_another_assessor"] == 3
    assert open_["complete_except_unfillable"]
    assert [(i["docid"], i["slot"], i["state"], i["why"]) for i in open_["items"]] == [
        (d, 2, "needs another assessor", why) for d in THREE["401"]
    ]
    assert plan["totals"]["slots_left"] == 0 and plan["totals"]["time_left"] == "nothing left"


def test_the_progress_page_explains_the_slots_nobody_can_fill(
    alone: Campaign, annotator: Any, admin_user: Any, api_client_for: Any, client: Any
):
    judge_all(api_client_for(annotator), alone)
    client.force_login(admin_user)
    page = client.get(f"/manage/{alone.pk}/").content.decode()
    assert "Complete except 3 overlap slots that need a second assessor" in page
    assert "only ann-annotator judges in this campaign" in page


def test_a_second_annotator_makes_the_overlap_slots_fillable(
    alone: Campaign, annotator: Any, make_user: Any, api_client_for: Any
):
    judge_all(api_client_for(annotator), alone)
    bob = make_user("bob-annotator", "annotator")
    plan = planning.budget_plan(alone)
    assert plan["totals"]["unfillable_slots"] == 0
    assert plan["open"]["overlap_slots"] == 3 and not plan["open"]["complete_except_unfillable"]
    # and the queue does serve them to bob
    assert len(judge_all(api_client_for(bob), alone)) == 3


def test_an_annotator_whose_account_is_deactivated_does_not_count_as_a_second_assessor(
    alone: Campaign, annotator: Any, make_user: Any, api_client_for: Any
):
    judge_all(api_client_for(annotator), alone)
    bob = make_user("bob-annotator", "annotator")
    bob.is_active = False
    bob.save()
    t = topic(planning.budget_plan(alone), "401")
    assert t["unfillable_slots"] == 3
    assert t["unfillable_why"] == [
        "needs a second assessor: only ann-annotator judges in this campaign"
    ]


# --- publishing with open items -----------------------------------------------------------


def test_the_publish_form_lists_the_open_items_and_asks_to_confirm(
    judged: Campaign, admin_user: Any, client: Any
):
    client.force_login(admin_user)
    page = client.get(f"/manage/{judged.pk}/").content.decode()
    assert 'id="publish-open"' in page
    assert "11 items still open" in page
    assert 'name="confirm_open"' in page and "required" in page
    assert "Publish with 11 open items" in page
    assert page.count("first slot</td>") == 11


def test_publishing_from_the_page_says_how_many_items_are_open(
    judged: Campaign, admin_user: Any, client: Any, as_committed: Any
):
    client.force_login(admin_user)
    with as_committed():
        r = client.post(f"/manage/{judged.pk}/publish/", {"note": "early"})
    assert r.status_code == 302
    assert QrelsVersion.objects.filter(campaign=judged).count() == 1  # still published
    said = [str(m) for m in get_messages(r.wsgi_request)]
    assert said == [
        "Published qrels version 1 (59 judgments) with 11 open items (11 unjudged first slots; "
        "none of their 11 documents is in the version)."
    ]


def test_publishing_through_the_api_answers_with_the_open_items(
    alone: Campaign, annotator: Any, admin_user: Any, api_client_for: Any, as_committed: Any
):
    judge_all(api_client_for(annotator), alone)
    with as_committed():
        r = api_client_for(admin_user).post(
            f"/api/v1/campaigns/{alone.pk}/qrels/publish/", {"note": ""}, format="json"
        )
    assert r.status_code == 201, r.content
    body = r.json()
    assert body["number"] == 1
    assert body["warning"] == (
        "published with 3 open items (3 overlap slots that need another assessor; all 3 of "
        "their documents are in the version)"
    )
    open_ = body["open_items"]
    assert (open_["count"], open_["needs_another_assessor"], open_["truncated"]) == (3, 3, False)
    assert {(i["topic"], i["docid"], i["slot"]) for i in open_["items"]} == {
        ("401", d, 2) for d in THREE["401"]
    }


def test_the_api_list_of_open_items_is_capped_by_the_setting(
    judged: Campaign, admin_user: Any, api_client_for: Any, as_committed: Any, settings: Any
):
    set_knobs(settings, open_items_listed=2)
    with as_committed():
        r = api_client_for(admin_user).post(
            f"/api/v1/campaigns/{judged.pk}/qrels/publish/", {}, format="json"
        )
    open_ = r.json()["open_items"]
    assert (open_["count"], open_["listed"], open_["truncated"]) == (11, 2, True)
    assert [i["docid"] for i in open_["items"]] == ["d401-05", "d401-06"]


def test_nothing_open_means_no_warning(
    campaign: Campaign,
    researcher: Any,
    annotator: Any,
    admin_user: Any,
    api_client_for: Any,
    as_committed: Any,
):
    build_pool(campaign, researcher, THREE)
    judge_all(api_client_for(annotator), campaign)
    with as_committed():
        body = (
            api_client_for(admin_user)
            .post(f"/api/v1/campaigns/{campaign.pk}/qrels/publish/", {}, format="json")
            .json()
        )
    assert body["warning"] == "" and body["open_items"]["count"] == 0


# --- the plan through the API, and who may see it -----------------------------------------


def test_the_plan_endpoint_answers_admins_with_the_plan(
    judged: Campaign, admin_user: Any, api_client_for: Any
):
    r = api_client_for(admin_user).get(f"/api/v1/campaigns/{judged.pk}/plan/")
    assert r.status_code == 200
    body = r.json()
    assert topic(body, "402")["suggestion"].startswith("stop: about 0.5 relevant expected")
    assert body["totals"]["relevant"] == 7 and body["open"]["count"] == 11


def test_annotators_researchers_and_strangers_are_refused_the_plan_and_publishing(
    judged: Campaign, annotator: Any, researcher: Any, api_client_for: Any, client: Any
):
    for user in (annotator, researcher):
        api = api_client_for(user)
        assert api.get(f"/api/v1/campaigns/{judged.pk}/plan/").status_code == 403
        r = api.post(f"/api/v1/campaigns/{judged.pk}/qrels/publish/", {}, format="json")
        assert r.status_code == 403
        client.force_login(user)
        for r in (
            client.get(f"/manage/{judged.pk}/"),
            client.post(f"/manage/{judged.pk}/publish/", {"note": "x"}),
        ):
            assert r.status_code == 403  # the site's own 403 page, not the admin's login
        client.logout()
    for r in (
        client.get(f"/manage/{judged.pk}/"),
        client.post(f"/manage/{judged.pk}/publish/", {"note": "x"}),
    ):
        assert r.status_code == 302 and "/login" in r["Location"]
    assert api_client_for(None).get(f"/api/v1/campaigns/{judged.pk}/plan/").status_code in (
        401,
        403,
    )
    assert not QrelsVersion.objects.filter(campaign=judged).exists()


def test_the_demo_campaigns_plan_is_served_and_says_what_topic_6_still_needs(
    demo: Campaign, api_client_for: Any, make_user: Any
):
    admin = make_user("plan-admin", "admin")
    r = api_client_for(admin).get(f"/api/v1/campaigns/{demo.pk}/plan/")
    assert r.status_code == 200
    body = r.json()
    by_qid = {t["qid"]: t for t in body["topics"]}
    # the demo judged pool v1 except topic 6
    six = by_qid["6"]
    assert six["judgments"] == 0 and six["items_left"] > 0
    assert six["expected_left"] is None and not six["stop"]
    judged = [t for q, t in by_qid.items() if q != "6"]
    assert judged and all(t["judgments"] > 0 and t["items_left"] == 0 for t in judged)
    assert all(t["suggestion"].startswith("done") for t in judged)
    assert body["totals"]["relevant"] == sum(t["relevant"] for t in body["topics"])
