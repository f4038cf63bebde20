"""My work: every topic the annotator judged in, counted by the slot each judgment took (first
assessor or second opinion), rows that add up to "You have judged N documents", what is left for
them, and their pace (judgments per hour of active and of session time, last hour, today).

The two-round test follows the demo's story (judging/demo/): pool v1 judged by the two simulated
assessors (topics 1-5, a quarter of the items twice) with topic 6 left to the demo annotator;
novel-neural pooled, pool v2; then the annotator and one simulated assessor judge pool v2 side by
side. The expected counts come from a ledger the test keeps of every lease it judged (topic, slot
number), and for the demo's own round from the slots' ``judged_by`` column, never from the
selector's queries.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from judging.assessments.models import JudgingSlot, Judgment, TopicAssignment
from judging.assessments.queue import judgment_record, lease_next, lease_release
from judging.assessments.selectors import annotator_pace, annotator_progress
from judging.campaigns.models import Campaign, Document, Topic
from judging.demo.data import build
from judging.web.my_work import duration_text
from judging.workflows.pools import pool_requested
from judging.workflows.runs import run_submitted
from tests._page_checks import wording_problems

pytestmark = pytest.mark.django_db

ROW = re.compile(
    r'<tr data-qid="(?P<qid>[^"]+)">.*?<td class="muted">(?P<label>[^<]*)</td>\s*'
    r'<td class="num first">(?P<first>\d+)</td><td class="num second">(?P<second>\d+)</td>'
    r'<td class="num left">(?P<left>\d+)</td>',
    re.S,
)
JUDGED = re.compile(r"You have judged (\d+) documents? in this campaign")

Ledger = dict[str, Counter[tuple[str, int]]]


def page_rows(client: Client, campaign: Campaign) -> tuple[int, dict[str, dict[str, Any]]]:
    """My work as the page shows it for the campaign: the "You have judged" figure and the rows
    by topic."""
    r = client.get("/annotate/")
    assert r.status_code == 200
    html = r.content.decode()
    assert not wording_problems(html)
    section = html.split(f'id="campaign-{campaign.pk}"', 1)[1].split("</section>", 1)[0]
    judged = JUDGED.search(section)
    assert judged is not None, section
    rows = {
        m["qid"]: {
            "label": m["label"],
            "first": int(m["first"]),
            "second": int(m["second"]),
            "left": int(m["left"]),
        }
        for m in ROW.finditer(section)
    }
    return int(judged.group(1)), rows


def judge(campaign: Campaign, user: Any, ledger: Ledger, *, limit: int | None = None) -> int:
    """Judge what the queue serves ``user`` (at most ``limit`` items) with the demo generator's
    true grades (0 outside the demo), writing down the topic and slot number of each item."""
    truth = build().truth
    made = 0
    while limit is None or made < limit:
        lease = lease_next(campaign=campaign, annotator=user)
        if lease is None:
            break
        slot = lease.slot
        judgment_record(
            lease_id=lease.pk,
            annotator=user,
            grade=truth.get(slot.topic.qid, {}).get(slot.docid, 0),
        )
        ledger.setdefault(user.get_username(), Counter())[(slot.topic.qid, slot.slot)] += 1
        made += 1
    return made


def demo_round_ledger(campaign: Campaign) -> Ledger:
    """Who judged which slot so far, from the slots' own record (``judged_by``)."""
    ledger: Ledger = {}
    for username, qid, slot in JudgingSlot.objects.filter(
        campaign=campaign, judged_by__isnull=False
    ).values_list("judged_by__username", "topic__qid", "slot"):
        ledger.setdefault(username, Counter())[(qid, slot)] += 1
    return ledger


def add(ledger: Ledger, more: Ledger) -> None:
    for user, counts in more.items():
        ledger.setdefault(user, Counter()).update(counts)


def test_two_rounds_with_overlap_list_every_topic_with_slot_labels_that_add_up(
    demo: Campaign, as_committed: Any, client: Client
) -> None:
    User = get_user_model()
    annotator = User.objects.get(username="annotator")
    assessor_b = User.objects.get(username="assessor-b")
    ledger = demo_round_ledger(demo)  # round 1 of the demo: assessor-a and -b, topics 1-5
    assert set(ledger) == {"assessor-a", "assessor-b"}
    assert any(slot == 2 for counts in ledger.values() for _, slot in counts), "no overlap"
    # round 1, the annotator's part: topic 6, which the demo leaves to them
    judge(demo, annotator, ledger)
    # round 2: novel-neural pooled, pool v2; the annotator and assessor-b judge it side by side
    demo.runs.filter(tag="novel-neural").update(pooled=True)
    with as_committed():
        pool_v2, created = pool_requested(campaign=demo)
    pool_v2.refresh_from_db()
    assert created and pool_v2.number == 2 and pool_v2.num_to_judge > 0
    while judge(demo, annotator, ledger, limit=3) + judge(demo, assessor_b, ledger, limit=2):
        pass
    assert not JudgingSlot.objects.filter(campaign=demo, judged_at__isnull=True).exists()

    mine = ledger["annotator"]
    topics_judged = {qid for qid, _ in mine}
    # the case: first judgments in topics the annotator is not the primary assessor of
    # (assessor-a stopped after round 1), some without any assignment there
    owned = set(
        TopicAssignment.objects.filter(annotator=annotator, primary=True).values_list(
            "topic__qid", flat=True
        )
    )
    assert owned == {"6"}
    elsewhere = {qid for (qid, slot), n in mine.items() if slot == 1 and qid not in owned}
    assert elsewhere, "the scenario should make the annotator judge outside their topic"
    client.force_login(annotator)
    total, rows = page_rows(client, demo)
    assert total == sum(mine.values()) == Judgment.objects.filter(annotator=annotator).count()
    assert set(rows) == topics_judged  # every topic judged in, 2 and 3 included
    assert sum(r["first"] + r["second"] for r in rows.values()) == total
    for qid, row in rows.items():
        assert row["first"] == mine[(qid, 1)], qid
        assert row["second"] == mine[(qid, 2)], qid
        assert row["left"] == 0, qid  # everything is judged
    assert rows["6"]["label"] == "your topic"
    for qid in elsewhere:
        assert rows[qid]["label"] == "another assessor's topic", qid
        assert rows[qid]["first"] > 0, qid  # not labelled "second opinion"

    # the simulated assessor's rows (both rounds) add up as well, from the same ledger
    client.force_login(assessor_b)
    total_b, rows_b = page_rows(client, demo)
    expected_b = ledger["assessor-b"]
    assert total_b == sum(expected_b.values())
    assert sum(r["first"] + r["second"] for r in rows_b.values()) == total_b
    for qid, row in rows_b.items():
        assert (row["first"], row["second"]) == (expected_b[(qid, 1)], expected_b[(qid, 2)]), qid
    assert {r["label"] for q, r in rows_b.items() if q in ("4", "5")} == {"your topic"}
    assert {r["label"] for q, r in rows_b.items() if q not in ("4", "5")} <= {
        "another assessor's topic"
    }
    assert any(r["second"] for r in rows_b.values()), "assessor-b gave second opinions"


@pytest.fixture
def queued(campaign: Campaign, researcher: Any, as_committed: Any) -> Any:
    """Topics 401 and 402 with five pooled documents each, every second one in the overlap."""
    for qid in ("401", "402"):
        for i in range(1, 6):
            Document.objects.create(campaign=campaign, docid=f"{qid}-D{i}", text="some text")
    Campaign.objects.filter(pk=campaign.pk).update(overlap=1.0)
    campaign.refresh_from_db()
    run_submitted(
        campaign=campaign,
        owner=researcher,
        tag="quiet-run",
        results={q: {f"{q}-D{i}": 10.0 - i for i in range(1, 6)} for q in ("401", "402")},
    )
    with as_committed():
        pool_requested(campaign=campaign, strategy="depth", depth=5)
    assert JudgingSlot.objects.filter(campaign=campaign).count() == 20  # 2 topics x 5 x 2 slots
    return campaign


def test_left_counts_the_items_the_queue_still_holds_for_them_by_their_role(
    queued: Campaign, make_user: Callable[..., Any]
) -> None:
    first = make_user("first-assessor", "annotator")
    second = make_user("second-assessor", "annotator")
    ledger: Ledger = {}
    judge(queued, first, ledger, limit=2)  # topic 401 is handed to `first`
    lease = lease_next(campaign=queued, annotator=first)
    assert lease is not None  # held, not judged: still left for them
    rows = {r["qid"]: r for r in annotator_progress(queued, first)}
    assert list(rows) == ["401"]
    assert rows["401"] == {
        "qid": "401",
        "title": "topic 401",
        "primary": True,
        "assigned": True,
        "role": "primary",
        "first": 2,
        "second": 0,
        "judged": 2,
        "left": 3,  # five first slots, two judged
        "total": 5,
    }
    # `second` takes topic 402 as its primary assessor first (nobody owns it), and the second
    # slots of 401 once 402 has nothing left for them
    judge(queued, second, ledger, limit=5)
    judge(queued, second, ledger, limit=1)
    rows2 = {r["qid"]: r for r in annotator_progress(queued, second)}
    assert rows2["402"]["primary"] and rows2["402"]["first"] == 5 and rows2["402"]["left"] == 0
    assert not rows2["401"]["primary"] and rows2["401"]["assigned"]
    # 401's second slots: five, one judged by `second`; the one whose first slot `first` holds
    # is open for `second` as well (a second opinion needs no first judgment)
    assert rows2["401"]["second"] == 1 and rows2["401"]["left"] == 4
    # and `first`'s own count of 401 is untouched by the second opinions
    assert annotator_progress(queued, first, qid="401")[0]["left"] == 3
    lease_release(lease_id=lease.pk, annotator=first)
    assert annotator_progress(queued, first, qid="401")[0]["left"] == 3  # released, still theirs


def test_my_work_shows_the_guidelines_and_never_the_description(
    campaign: Campaign, annotator: Any, client: Client
) -> None:
    Campaign.objects.filter(pk=campaign.pk).update(
        description="RESEARCHER-ONLY-DESCRIPTION", guidelines="Grade 2: <b>fully</b> on topic."
    )
    client.force_login(annotator)
    for url in ("/annotate/", "/"):
        html = client.get(url).content.decode()
        assert "RESEARCHER-ONLY-DESCRIPTION" not in html, url
        assert "Grade 2: &lt;b&gt;fully&lt;/b&gt; on topic." in html, url  # escaped


# --- pace -------------------------------------------------------------------------------------

LOCAL = ZoneInfo("UTC")


def _judgment(campaign: Campaign, user: Any, n: int, at: datetime, active: float) -> None:
    topic = Topic.objects.get(campaign=campaign, qid="401")
    j = Judgment.objects.create(
        campaign=campaign,
        topic=topic,
        docid=f"PACE{n}",
        annotator=user,
        grade=1,
        active_seconds=active,
    )
    Judgment.objects.filter(pk=j.pk).update(created_at=at)


def test_pace_per_active_and_per_session_hour_last_hour_and_today(
    campaign: Campaign, annotator: Any, settings: Any
) -> None:
    settings.TIME_ZONE = "UTC"
    timezone.deactivate()
    noon = datetime(2026, 3, 10, 12, 0, tzinfo=LOCAL)
    # yesterday, 23:50: a session of its own (more than 15 minutes before the next)
    _judgment(campaign, annotator, 0, noon - timedelta(hours=12, minutes=10), 40.0)
    # today: three a minute apart (20 s active each), then one two hours later (30 s active)
    for i, minute in enumerate((0, 1, 2), start=1):
        _judgment(campaign, annotator, i, noon + timedelta(minutes=minute), 20.0)
    _judgment(campaign, annotator, 4, noon + timedelta(hours=2), 30.0)
    pace = annotator_pace(annotator, now=noon + timedelta(hours=2, minutes=1))
    # by hand: active 40 + 3 x 20 + 30 = 130 s for 5 judgments -> 5 x 3600 / 130
    assert pace["judgments"] == 5
    assert pace["active_seconds"] == pytest.approx(130.0)
    assert pace["per_active_hour"] == pytest.approx(5 * 3600 / 130)
    # sessions: [23:50 (40 s)], [12:00-12:02, starting 20 s before 12:00], [14:00 (30 s)]
    assert pace["sessions"] == 3
    assert pace["wall_seconds"] == pytest.approx(40 + (120 + 20) + 30)
    assert pace["per_wall_hour"] == pytest.approx(5 * 3600 / 210)
    assert pace["last_hour"] == 1
    assert pace["today"] == 4
    # three sent at once (a queue flushed after a lost connection): the session lasts at least
    # their 3 x 100 active seconds
    for i in (5, 6, 7):
        _judgment(campaign, annotator, i, noon + timedelta(hours=5), 100.0)
    later = annotator_pace(annotator, now=noon + timedelta(hours=5))
    assert later["sessions"] == 4
    assert later["wall_seconds"] == pytest.approx(210 + 300)
    # one campaign only: none in another campaign
    other = Campaign.objects.create(name="Other")
    assert annotator_pace(annotator, campaign=other)["judgments"] == 0
    assert annotator_pace(annotator, campaign=other)["per_active_hour"] is None


def test_pace_on_the_annotators_pages(campaign: Campaign, annotator: Any, client: Client) -> None:
    client.force_login(annotator)
    assert "No judgments yet" in client.get("/annotate/").content.decode()
    now = timezone.now()
    for i in range(3):
        _judgment(campaign, annotator, i, now - timedelta(minutes=3 - i), 40.0)
    html = client.get("/annotate/").content.decode()
    # 3 judgments in 120 active seconds: 90 an hour
    assert 'id="pace-active-rate">90<' in html, html
    assert 'id="pace-active-time">2 min<' in html
    assert 'id="pace-last-hour">3<' in html
    home = client.get("/").content.decode()
    assert "Your pace: <strong>90</strong> judgments per hour of active time" in home


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0 s"),
        (59.4, "59 s"),
        (90, "2 min"),
        (3599, "1 h 00 min"),
        (3600, "1 h 00 min"),
        (7500, "2 h 05 min"),
    ],
)
def test_durations_read_as_people_say_them(seconds: float, text: str) -> None:
    assert duration_text(seconds) == text


def test_gold_judgments_count_like_the_others_and_are_not_named(
    queued: Campaign, annotator: Any, client: Client
) -> None:
    from judging.assessments.models import GoldItem, GoldSource
    from judging.pools.models import PoolVersion

    ledger: Ledger = {}
    judge(queued, annotator, ledger, limit=2)  # topic 401, first slots
    topic = Topic.objects.get(campaign=queued, qid="401")
    pool = PoolVersion.objects.get(campaign=queued)
    gold, gold2 = (
        GoldItem.objects.create(
            campaign=queued, topic=topic, docid=docid, grade=2, source=GoldSource.IMPORTED
        )
        for docid in ("401-GOLD", "401-GOLD2")
    )
    judged_slot, open_slot = (
        JudgingSlot.objects.create(
            campaign=queued,
            topic=topic,
            docid=docid,
            slot=0,
            position=100 + i,
            pool_version=pool,
            gold=g,
            gold_for=annotator,
        )
        for i, (docid, g) in enumerate([("401-GOLD", gold), ("401-GOLD2", gold2)])
    )
    Judgment.objects.create(
        campaign=queued,
        topic=topic,
        docid="401-GOLD",
        annotator=annotator,
        grade=2,
        slot=judged_slot,
        gold=gold,
    )
    JudgingSlot.objects.filter(pk=judged_slot.pk).update(judged_at=timezone.now())
    client.force_login(annotator)
    total, rows = page_rows(client, queued)
    assert total == 3
    # two pooled first judgments and the gold one; left: three first slots and the open gold
    assert (rows["401"]["first"], rows["401"]["second"], rows["401"]["left"]) == (3, 0, 4)
    assert open_slot.gold_for_id == annotator.pk
    assert "gold" not in client.get("/annotate/").content.decode().lower()
