"""Quality control with gold items: importing and sampling them, serving them at the campaign's
rate through the normal judging path, keeping their judgments out of qrels, agreement, pooling
and progress, the per-assessor report (numbers worked by hand), alerts, and excluding an
assessor's judgments from publishing (and lifting it)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from judging.assessments import gold as gold_services
from judging.assessments import quality, selectors
from judging.assessments.models import (
    AnnotatorExclusion,
    GoldItem,
    JudgingSlot,
    Judgment,
    Lease,
    QrelsEntry,
    QrelsVersion,
)
from judging.assessments.services import qrels_import
from judging.campaigns.models import Campaign, Document, Topic
from judging.core.errors import InvalidInput
from tests.test_judging_api import build_pool

pytestmark = pytest.mark.django_db

POOLED = {"401": [f"d401-{i}" for i in range(1, 51)]}
GOLD = [f"g401-{i}" for i in range(1, 16)]


def add_documents(campaign: Campaign, docids: list[str]) -> None:
    Document.objects.bulk_create(
        Document(campaign=campaign, docid=d, title=f"title of {d}", text=f"text of {d}")
        for d in docids
    )


def gold_file(tmp_path: Path, text: str, name: str = "gold.txt") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.fixture
def with_gold(campaign: Campaign, researcher: Any, admin_user: Any) -> Campaign:
    """Topic 401 with 50 pooled documents; 15 gold documents for it (grade 2 for the odd ones,
    0 for the even), plus one gold item that is also a pooled document still in the queue;
    gold rate 0.25."""
    build_pool(campaign, researcher, POOLED)
    add_documents(campaign, GOLD)
    rows = [
        gold_services.GoldRow("401", d, 2 if i % 2 else 0, location=f"rows[{i}]")
        for i, d in enumerate(GOLD, start=1)
    ] + [gold_services.GoldRow("401", "d401-50", 1, location="rows[16]")]
    result = gold_services.gold_import(campaign=campaign, rows=rows, created_by=admin_user)
    assert (result.created, result.queued_as_pooled) == (16, 1)
    campaign.gold_rate = 0.25
    campaign.save()
    return campaign


def judge(client: Any, campaign: Campaign, grade: int = 1, seconds: float = 5.0) -> dict[str, Any]:
    """Lease the next item through the API and judge it; the lease as the annotator saw it."""
    r = client.post(f"/api/v1/campaigns/{campaign.pk}/leases/")
    assert r.status_code == 201, r.content
    lease = r.json()
    j = client.post(
        f"/api/v1/leases/{lease['id']}/judgment/",
        {"grade": grade, "active_seconds": seconds},
        format="json",
    )
    assert j.status_code == 201, j.content
    return dict(lease)


# --- serving --------------------------------------------------------------------------------


def test_gold_is_mixed_in_at_the_rate_through_the_normal_api_path(
    with_gold: Campaign, annotator: Any, api_client_for: Callable[[Any], Any]
) -> None:
    client = api_client_for(annotator)
    seen = [judge(client, with_gold) for _ in range(40)]
    served_gold = [i for i, lease in enumerate(seen, start=1) if lease["document"]["docid"] in GOLD]
    # rate 0.25, served when gold + 1 <= rate * (judged + 1): items 4, 8, ..., 40
    assert served_gold == list(range(4, 41, 4))
    assert len(served_gold) / 40 == pytest.approx(0.25, abs=0.03)
    # on the screen (the API's answer) a gold item is like any other: same fields, same topic
    pooled = seen[0]
    for i in served_gold:
        lease = seen[i - 1]
        assert set(lease) == set(pooled)
        assert set(lease["document"]) == set(pooled["document"])
        assert lease["topic"] == pooled["topic"]
        assert "gold" not in str(lease).lower()
    # their judgments were recorded on the same path, marked gold
    mine = Judgment.objects.filter(annotator=annotator)
    assert mine.count() == 40
    assert set(mine.filter(gold__isnull=False).values_list("docid", flat=True)) == {
        seen[i - 1]["document"]["docid"] for i in served_gold
    }
    # the gold item still queued as a pooled item was never served as gold
    assert not JudgingSlot.objects.filter(gold__docid="d401-50").exists()


def test_with_items_leased_ahead_gold_keeps_its_rate_and_never_comes_twice_in_a_row(
    with_gold: Campaign, annotator: Any
) -> None:
    """The judging page holds the item being read and one leased ahead (POOLJUDGE_PREFETCH):
    the item held counts as the latest one, so the one leased ahead is not gold right after a
    gold one and the share stays at the rate."""
    from judging.assessments import queue

    with_gold.gold_rate = 0.5
    with_gold.save()
    served: list[bool] = []
    current = queue.lease_next(campaign=with_gold, annotator=annotator)
    assert current is not None
    for _ in range(20):
        ahead = queue.lease_ahead(campaign=with_gold, annotator=annotator, holding=[current.pk])
        assert ahead is not None and ahead.pk != current.pk
        served.append(current.slot.gold_id is not None)
        queue.judgment_record(lease_id=current.pk, annotator=annotator, grade=1)
        current = ahead
    assert not any(a and b for a, b in itertools.pairwise(served))
    assert sum(served) == 10  # every second item, as at the rate without prefetch


def test_a_gold_slot_is_never_served_to_another_assessor(
    with_gold: Campaign,
    annotator: Any,
    make_user: Callable[..., Any],
    api_client_for: Callable[[Any], Any],
) -> None:
    bob = make_user("bob-annotator", "annotator")
    first = api_client_for(annotator)
    for _ in range(3):
        judge(first, with_gold)
    # the 4th item is gold; the annotator skips it: their gold slot is open again
    r = first.post(f"/api/v1/campaigns/{with_gold.pk}/leases/")
    assert r.json()["document"]["docid"] in GOLD
    assert first.delete(f"/api/v1/leases/{r.json()['id']}/").status_code == 204
    theirs = JudgingSlot.objects.get(gold_for=annotator)
    assert theirs.judged_at is None and theirs.lease_expires_at is None
    second = api_client_for(bob)
    for _ in range(12):
        lease = judge(second, with_gold)
        slot = JudgingSlot.objects.get(leases__pk=lease["id"])
        assert slot.gold_for_id in (None, bob.pk)
    assert not theirs.leases.filter(annotator=bob).exists()
    # bob met gold items too, in slots of his own
    assert JudgingSlot.objects.filter(gold_for=bob).count() == 3


def test_undo_of_a_gold_judgment_leases_it_back_and_it_is_judged_again(
    with_gold: Campaign, annotator: Any, api_client_for: Callable[[Any], Any]
) -> None:
    client = api_client_for(annotator)
    for _ in range(3):
        judge(client, with_gold)
    lease = judge(client, with_gold, grade=0)
    docid = lease["document"]["docid"]
    assert Judgment.objects.get(annotator=annotator, docid=docid).gold is not None
    r = client.post(f"/api/v1/campaigns/{with_gold.pk}/undo/")
    assert r.status_code == 201
    assert r.json()["document"]["docid"] == docid
    assert not Judgment.objects.filter(annotator=annotator, docid=docid).exists()
    j = client.post(f"/api/v1/leases/{r.json()['id']}/judgment/", {"grade": 2}, format="json")
    assert j.status_code == 201
    again = Judgment.objects.get(annotator=annotator, docid=docid)
    assert again.gold is not None and again.grade == 2


def test_gold_judgments_stay_out_of_qrels_agreement_pooling_and_progress(
    with_gold: Campaign,
    annotator: Any,
    admin_user: Any,
    api_client_for: Callable[[Any], Any],
) -> None:
    client = api_client_for(annotator)
    for _ in range(20):
        judge(client, with_gold, grade=2)
    gold_judged = set(Judgment.objects.filter(gold__isnull=False).values_list("docid", flat=True))
    assert len(gold_judged) == 5
    r = api_client_for(admin_user).post(
        f"/api/v1/campaigns/{with_gold.pk}/qrels/publish/", {}, format="json"
    )
    assert r.status_code == 201, r.content
    version = QrelsVersion.objects.get(campaign=with_gold)
    published = set(QrelsEntry.objects.filter(version=version).values_list("docid", flat=True))
    assert len(published) == 15 and not published & gold_judged
    assert not {d for (_, d), _, _ in selectors.current_judgments(with_gold)} & gold_judged
    assert not selectors.judged_documents(with_gold)["401"] & gold_judged
    progress = selectors.judging_progress(with_gold)
    assert (progress["slots"], progress["judged"]) == (50, 15)
    assert progress["topics"][0]["total"] == 50


def test_gold_of_another_topic_or_already_judged_is_not_served(
    with_gold: Campaign, annotator: Any, admin_user: Any
) -> None:
    # every gold item of 401 is judged by the annotator already (directly, for the test)
    topic = Topic.objects.get(campaign=with_gold, qid="401")
    for item in GoldItem.objects.filter(topic=topic):
        Judgment.objects.create(
            campaign=with_gold,
            topic=topic,
            docid=item.docid,
            annotator=annotator,
            grade=0,
            gold=item,
        )
    add_documents(with_gold, ["g402-1"])
    gold_services.gold_import(
        campaign=with_gold, rows=[gold_services.GoldRow("402", "g402-1", 2)], created_by=admin_user
    )
    from judging.assessments.queue import lease_next

    docids = []
    for _ in range(6):
        lease = lease_next(campaign=with_gold, annotator=annotator)
        assert lease is not None
        docids.append(lease.slot.docid)
        from judging.assessments.queue import judgment_record

        judgment_record(lease_id=lease.pk, annotator=annotator, grade=1)
    assert all(d.startswith("d401-") for d in docids)


# --- the report, by hand ----------------------------------------------------------------


def _gold_judgments(
    campaign: Campaign, who: Any, pairs: list[tuple[int, int]], prefix: str
) -> None:
    """Gold items of grade ``t`` judged ``g`` by ``who``, for each (g, t)."""
    topic = Topic.objects.get(campaign=campaign, qid="401")
    for i, (g, t) in enumerate(pairs):
        docid = f"{prefix}-{i}"
        item = GoldItem.objects.create(
            campaign=campaign, topic=topic, docid=docid, grade=t, source="imported"
        )
        Judgment.objects.create(
            campaign=campaign,
            topic=topic,
            docid=docid,
            annotator=who,
            grade=g,
            gold=item,
            active_seconds=10.0 + i,
        )


def test_accuracy_on_gold_as_worked_by_hand(campaign: Campaign, annotator: Any) -> None:
    from statsmodels.stats.proportion import proportion_confint

    # given (g) vs known (t): exact 2 of 5; relevant (>= 1) or not agrees on 3 of 5;
    # |g - t| = 0, 1, 0, 1, 2: mean 0.8
    _gold_judgments(campaign, annotator, [(2, 2), (2, 1), (0, 0), (1, 0), (0, 2)], "x")
    report = quality.quality_report(campaign)
    (row,) = report["assessors"]
    g = row["gold"]
    assert g["n"] == 5
    assert g["exact"] == pytest.approx(0.4)
    assert g["binary"] == pytest.approx(0.6)
    assert g["mean_abs_error"] == pytest.approx(0.8)
    # Wilson 2/5 by hand: centre 0.44345, half-width 0.32584
    assert g["exact_interval"] == pytest.approx([0.1176, 0.7693], abs=1e-4)
    assert g["exact_interval"] == pytest.approx(proportion_confint(2, 5, method="wilson"))
    assert g["binary_interval"] == pytest.approx(proportion_confint(3, 5, method="wilson"))
    assert row["median_seconds"] == pytest.approx(12.0)  # 10, 11, 12, 13, 14
    # gold judgments are not the assessor's grade distribution
    assert row["grades"] == {"0": 0, "1": 0, "2": 0}
    items = {g["docid"]: (g["judged"], g["right"]) for g in quality.gold_items(campaign)}
    assert items == {"x-0": (1, 1), "x-1": (1, 0), "x-2": (1, 1), "x-3": (1, 0), "x-4": (1, 0)}


def test_agreement_with_others_as_worked_by_hand(
    campaign: Campaign, annotator: Any, make_user: Callable[..., Any]
) -> None:
    from tests.metrics.test_quality_metrics import cohen_kappa_score

    bob = make_user("bob-annotator", "annotator")
    topic = Topic.objects.get(campaign=campaign, qid="401")
    a, b = [0, 0, 1, 1], [0, 1, 1, 1]
    for i, (ga, gb) in enumerate(zip(a, b, strict=True)):
        for who, g in ((annotator, ga), (bob, gb)):
            Judgment.objects.create(
                campaign=campaign, topic=topic, docid=f"p{i}", annotator=who, grade=g
            )
    # a gold item both judged differently does not count as a disagreement
    item = GoldItem.objects.create(
        campaign=campaign, topic=topic, docid="gold-x", grade=2, source="imported"
    )
    for who, g in ((annotator, 0), (bob, 2)):
        Judgment.objects.create(
            campaign=campaign, topic=topic, docid="gold-x", annotator=who, grade=g, gold=item
        )
    rows = {r["annotator"]: r for r in quality.quality_report(campaign)["assessors"]}
    # p_o = 3/4; marginals (1/2, 1/2) and (1/4, 3/4): p_e = 1/2; kappa = (3/4 - 1/2) / (1/2)
    for who in (annotator.username, bob.username):
        assert rows[who]["agreement"]["kappa"] == pytest.approx(0.5)
        assert rows[who]["agreement"]["kappa"] == pytest.approx(cohen_kappa_score(a, b))
        assert rows[who]["agreement"]["exact"] == pytest.approx(0.75)
        assert rows[who]["agreement"]["n_items"] == 4
    assert rows[annotator.username]["grades"] == {"0": 2, "1": 2, "2": 0}


def test_alerts_flag_assessors_below_the_threshold_after_enough_gold(
    campaign: Campaign,
    make_user: Callable[..., Any],
    admin_user: Any,
    client: Any,
) -> None:
    campaign.qc_min_gold, campaign.qc_min_accuracy = 4, 0.6
    campaign.save()
    bad, good, new = (make_user(n, "annotator") for n in ("bad-ann", "good-ann", "new-ann"))
    _gold_judgments(campaign, bad, [(0, 2), (0, 2), (2, 0), (2, 0), (1, 1)], "b")  # 1/5 right
    _gold_judgments(campaign, good, [(2, 2), (1, 2), (0, 0), (0, 0), (2, 1)], "g")  # 5/5
    _gold_judgments(campaign, new, [(0, 2), (0, 2), (0, 2)], "n")  # 0/3: too few to judge
    found = quality.alerts(campaign)
    assert [(a["annotator"], a["kind"]) for a in found] == [("bad-ann", "gold")]
    assert "20%" in found[0]["message"] and "5 gold items" in found[0]["message"]
    client.force_login(admin_user)
    page = client.get(f"/manage/{campaign.pk}/").content.decode()
    assert 'id="quality-alerts"' in page and "bad-ann: accuracy 20%" in page
    assert f"/manage/{campaign.pk}/quality/" in page
    assert "good-ann" not in page.split('id="quality-alerts"')[1].split("</div>")[0]
    quality_page = client.get(f"/manage/{campaign.pk}/quality/").content.decode()
    assert "bad-ann" in quality_page and "good-ann" in quality_page


def test_fast_and_one_grade_assessors_get_warnings(campaign: Campaign, annotator: Any) -> None:
    topic = Topic.objects.get(campaign=campaign, qid="401")
    for i in range(quality.MIN_JUDGMENTS):
        Judgment.objects.create(
            campaign=campaign,
            topic=topic,
            docid=f"f{i}",
            annotator=annotator,
            grade=0,
            active_seconds=0.8,
        )
    kinds = {a["kind"] for a in quality.alerts(campaign)}
    assert kinds == {"fast", "one_grade"}


def test_drift_shows_accuracy_and_pace_per_block(campaign: Campaign, annotator: Any) -> None:
    # 20 gold judgments right, then 20 wrong: the blocks of 20 show 1.0 then 0.0
    _gold_judgments(campaign, annotator, [(2, 2)] * 20 + [(0, 2)] * 20, "d")
    (row,) = quality.quality_report(campaign)["assessors"]
    blocks = row["drift"]["blocks"]
    assert [b["label"] for b in blocks] == ["1-20", "21-40"]
    assert [b["gold"]["exact"] for b in blocks] == [1.0, 0.0]
    # active seconds 10..29 then 30..49: medians 19.5 and 39.5
    assert [b["median_seconds"] for b in blocks] == [19.5, 39.5]
    assert len(row["drift"]["days"]) == 1 and row["drift"]["days"][0]["n"] == 40


# --- exclusion ------------------------------------------------------------------------------


def test_exclusion_round_trip_through_the_api(
    campaign: Campaign,
    annotator: Any,
    make_user: Callable[..., Any],
    admin_user: Any,
    api_client_for: Callable[[Any], Any],
) -> None:
    bob = make_user("bob-annotator", "annotator")
    topic = Topic.objects.get(campaign=campaign, qid="401")
    for who, docid, g in (
        (annotator, "only-ann", 2),
        (annotator, "both", 0),
        (bob, "both", 2),
        (bob, "only-bob", 1),
    ):
        Judgment.objects.create(campaign=campaign, topic=topic, docid=docid, annotator=who, grade=g)
    admin = api_client_for(admin_user)
    base = f"/api/v1/campaigns/{campaign.pk}"
    r = admin.post(
        f"{base}/exclusions/",
        {"annotator": annotator.username, "reason": "failed 8 of 10 gold items"},
        format="json",
    )
    assert r.status_code == 201, r.content
    exclusion_id = r.json()["id"]
    again = admin.post(
        f"{base}/exclusions/", {"annotator": annotator.username, "reason": "x"}, format="json"
    )
    assert again.status_code == 409
    r = admin.post(f"{base}/qrels/publish/", {"note": "round 1"}, format="json")
    assert r.status_code == 201, r.content
    v1 = QrelsVersion.objects.get(pk=r.json()["id"])
    rows = dict(QrelsEntry.objects.filter(version=v1).values_list("docid", "grade"))
    assert rows == {"both": 2, "only-bob": 1}  # none of the excluded assessor's grades
    assert v1.note.startswith("round 1 · Judgments left out (assessors excluded): ann-annotator")
    assert "failed 8 of 10 gold items" in v1.note
    # never deleted
    assert Judgment.objects.filter(annotator=annotator).count() == 2
    # the report shows the exclusion
    report = admin.get(f"{base}/quality/").json()
    (row,) = [a for a in report["assessors"] if a["annotator"] == annotator.username]
    assert row["excluded"]["reason"] == "failed 8 of 10 gold items"
    # lifted (with a reason): the next version has their grades again
    r = admin.post(
        f"{base}/exclusions/{exclusion_id}/lift/", {"reason": "retrained"}, format="json"
    )
    assert r.status_code == 200 and r.json()["lift_reason"] == "retrained"
    r = admin.post(f"{base}/qrels/publish/", {}, format="json")
    assert r.status_code == 201
    v2 = QrelsVersion.objects.get(pk=r.json()["id"])
    rows = dict(QrelsEntry.objects.filter(version=v2).values_list("docid", "grade"))
    assert rows == {"only-ann": 2, "both": 0, "only-bob": 1}  # lower median of 0 and 2
    assert "excluded" not in v2.note
    # the history keeps both decisions and reasons
    history = admin.get(f"{base}/exclusions/").json()["results"]
    assert [(h["reason"], h["lift_reason"]) for h in history] == [
        ("failed 8 of 10 gold items", "retrained")
    ]
    assert AnnotatorExclusion.objects.get().lifted_by == admin_user


def test_exclusion_needs_a_reason_and_an_assessor_of_the_campaign(
    campaign: Campaign, annotator: Any, admin_user: Any, api_client_for: Callable[[Any], Any]
) -> None:
    topic = Topic.objects.get(campaign=campaign, qid="401")
    Judgment.objects.create(campaign=campaign, topic=topic, docid="d", annotator=annotator, grade=1)
    admin = api_client_for(admin_user)
    base = f"/api/v1/campaigns/{campaign.pk}/exclusions/"
    blank = admin.post(base, {"annotator": annotator.username, "reason": "  "}, format="json")
    assert blank.status_code == 400
    nobody = admin.post(base, {"annotator": "nobody", "reason": "x"}, format="json")
    assert nobody.status_code == 400 and "nobody" in str(nobody.json())
    assert not AnnotatorExclusion.objects.exists()


def test_exclusion_from_the_quality_page(
    campaign: Campaign, annotator: Any, admin_user: Any, client: Any
) -> None:
    topic = Topic.objects.get(campaign=campaign, qid="401")
    Judgment.objects.create(campaign=campaign, topic=topic, docid="d", annotator=annotator, grade=1)
    client.force_login(admin_user)
    r = client.post(
        f"/manage/{campaign.pk}/quality/exclude/",
        {"annotator": annotator.username, "reason": "clicks through"},
        follow=True,
    )
    assert "left out of the next qrels versions" in r.content.decode()
    exclusion = AnnotatorExclusion.objects.get()
    assert exclusion.reason == "clicks through" and exclusion.excluded_by == admin_user
    r = client.post(
        f"/manage/{campaign.pk}/quality/exclusions/{exclusion.pk}/lift/",
        {"reason": "talked it over"},
        follow=True,
    )
    assert "included again" in r.content.decode()
    exclusion.refresh_from_db()
    assert exclusion.lift_reason == "talked it over" and exclusion.lifted_at is not None


# --- import ---------------------------------------------------------------------------------


def test_import_gold_command_stores_a_file(campaign: Campaign, tmp_path: Path, capsys: Any) -> None:
    add_documents(campaign, ["a", "b"])
    path = gold_file(tmp_path, "401 0 a 2\n402 0 b 0\n")
    call_command("import_gold", "--campaign", campaign.name, str(path))
    assert "2 added" in capsys.readouterr().out
    assert sorted(GoldItem.objects.values_list("topic__qid", "docid", "grade", "source")) == [
        ("401", "a", 2, "imported"),
        ("402", "b", 0, "imported"),
    ]


def test_import_errors_name_file_and_line_and_store_nothing(
    campaign: Campaign, tmp_path: Path
) -> None:
    add_documents(campaign, ["a", "b", "c"])
    path = gold_file(tmp_path, "401 0 a 2\n999 0 b 1\n401 0 c 7\n401 0 nosuchdoc 1\n")
    with pytest.raises(CommandError) as err:
        call_command("import_gold", "--campaign", campaign.name, str(path))
    text = str(err.value)
    assert f"{path}: line 2: topic '999' is not in campaign" in text
    assert f"{path}: line 3: grade 7 is not one of the campaign's [0, 1, 2]" in text
    assert f"{path}: line 4: document 'nosuchdoc' is not one of the campaign's" in text
    assert "line 1" not in text
    assert not GoldItem.objects.exists()
    # a malformed file is refused by the qrels reader, with its line too
    bad = gold_file(tmp_path, "401 0 a 2\n401 0 b\n", "bad.txt")
    with pytest.raises(CommandError, match="line 2"):
        call_command("import_gold", "--campaign", campaign.name, str(bad))
    assert not GoldItem.objects.exists()


def test_import_through_the_api_file_and_rows(
    campaign: Campaign, admin_user: Any, api_client_for: Callable[[Any], Any]
) -> None:
    add_documents(campaign, ["a", "b"])
    admin = api_client_for(admin_user)
    url = f"/api/v1/campaigns/{campaign.pk}/gold/"
    r = admin.post(
        url, {"file": SimpleUploadedFile("g.txt", b"401 0 a 2\n401 0 zz 1\n")}, format="multipart"
    )
    assert r.status_code == 400
    problem = r.json()["problems"][0]
    assert (problem["line"], problem["location"]) == (2, "g.txt")
    assert not GoldItem.objects.exists()
    r = admin.post(
        url,
        {
            "rows": [
                {"topic": "401", "docid": "a", "grade": 2},
                {"topic": "401", "docid": "b", "grade": 5},
            ]
        },
        format="json",
    )
    assert r.status_code == 400
    assert r.json()["problems"][0]["location"] == "rows[1]"
    r = admin.post(url, {"rows": [{"topic": "401", "docid": "a", "grade": 2}]}, format="json")
    assert r.status_code == 201 and r.json()["created"] == 1
    listed = admin.get(url).json()
    assert listed["count"] == 1 and listed["results"][0]["docid"] == "a"
    neither = admin.post(url, {}, format="json")
    assert neither.status_code == 400


def test_gold_sampled_from_a_qrels_version_includes_relevant_ones(
    campaign: Campaign, admin_user: Any, api_client_for: Callable[[Any], Any]
) -> None:
    docs = [f"q{i}" for i in range(10)]
    add_documents(campaign, docs)
    lines = "".join(f"401 0 q{i} {2 if i == 0 else 1 if i == 1 else 0}\n" for i in range(10))
    lines += "402 0 q5 0\n401 0 unknown-doc 2\n"
    version = qrels_import(campaign=campaign, data=lines.encode(), created_by=admin_user)
    r = api_client_for(admin_user).post(
        f"/api/v1/campaigns/{campaign.pk}/gold/",
        {"from_qrels": version.number, "per_topic": 3, "seed": 7},
        format="json",
    )
    assert r.status_code == 201, r.content
    items = sorted(GoldItem.objects.values_list("topic__qid", "docid", "grade"))
    by_topic = {q: [(d, g) for qq, d, g in items if qq == q] for q in ("401", "402")}
    # 401: one of each grade (strata take turns, highest first); the unknown document is not
    # drawn; 402 has one row only
    assert sorted(g for _, g in by_topic["401"]) == [0, 1, 2]
    assert ("q0", 2) in by_topic["401"] and ("q1", 1) in by_topic["401"]
    assert by_topic["402"] == [("q5", 0)]
    assert set(GoldItem.objects.values_list("source", flat=True)) == {"qrels"}
    with pytest.raises(InvalidInput):
        gold_services.gold_from_qrels(campaign=campaign, number=version.number, per_topic=0)


# --- who may ------------------------------------------------------------------------------


def test_only_admins_reach_quality_control(
    campaign: Campaign,
    annotator: Any,
    researcher: Any,
    api_client_for: Callable[[Any], Any],
    client: Any,
) -> None:
    base = f"/api/v1/campaigns/{campaign.pk}"
    for user in (annotator, researcher):
        api = api_client_for(user)
        assert api.get(f"{base}/quality/").status_code == 403
        assert api.get(f"{base}/gold/").status_code == 403
        rows = {"rows": [{"topic": "401", "docid": "a", "grade": 2}]}
        assert api.post(f"{base}/gold/", rows, format="json").status_code == 403
        body = {"annotator": annotator.username, "reason": "x"}
        assert api.post(f"{base}/exclusions/", body, format="json").status_code == 403
        client.force_login(user)
        assert client.get(f"/manage/{campaign.pk}/quality/").status_code == 403
        assert client.post(f"/manage/{campaign.pk}/quality/exclude/", body).status_code == 403
    assert not GoldItem.objects.exists() and not AnnotatorExclusion.objects.exists()


def test_report_without_judgments_is_empty(campaign: Campaign) -> None:
    report = quality.quality_report(campaign)
    assert report["assessors"] == [] and report["alerts"] == []
    assert quality.alerts(campaign) == []
    assert math.isclose(report["qc_min_accuracy"], 0.6)


def test_gold_from_the_quality_page_file_and_sample(
    campaign: Campaign, admin_user: Any, client: Any
) -> None:
    add_documents(campaign, ["a", "b"])
    client.force_login(admin_user)
    url = f"/manage/{campaign.pk}/quality/gold/"
    bad = SimpleUploadedFile("page-gold.txt", b"401 0 a 2\n401 0 b 9\n")
    page = client.post(url, {"file": bad}, follow=True).content.decode()
    assert "Nothing was stored" in page and "page-gold.txt line 2: grade 9" in page
    assert not GoldItem.objects.exists()
    good = SimpleUploadedFile("page-gold.txt", b"401 0 a 2\n401 0 b 0\n")
    page = client.post(url, {"file": good}, follow=True).content.decode()
    assert "Gold items: 2 added, 0 updated." in page
    assert '<td><code>a</code></td><td class="num">2</td>' in page
    version = qrels_import(campaign=campaign, data=b"402 0 a 1\n402 0 b 0\n")
    page = client.post(
        url, {"from_qrels": str(version.number), "per_topic": "1", "seed": "3"}, follow=True
    ).content.decode()
    assert "Gold items: 1 added" in page
    assert GoldItem.objects.filter(topic__qid="402", docid="a", grade=1, source="qrels").exists()
    page = client.post(url, {"from_qrels": "x"}, follow=True).content.decode()
    assert "must be a whole number" in page


def test_quality_settings_through_the_api_and_the_page(
    campaign: Campaign, admin_user: Any, api_client_for: Callable[[Any], Any], client: Any
) -> None:
    url = f"/api/v1/campaigns/{campaign.pk}/quality/"
    admin = api_client_for(admin_user)
    r = admin.patch(url, {"gold_rate": 0.9, "qc_min_gold": "x", "name": "n"}, format="json")
    assert r.status_code == 400
    assert {p["location"] for p in r.json()["problems"]} == {"gold_rate", "qc_min_gold", "name"}
    campaign.refresh_from_db()
    assert campaign.gold_rate == 0.0
    r = admin.patch(url, {"gold_rate": 0.2, "qc_min_accuracy": 0.7}, format="json")
    assert r.status_code == 200
    assert r.json() == {"gold_rate": 0.2, "qc_min_accuracy": 0.7, "qc_min_gold": 10}
    client.force_login(admin_user)
    page = client.post(
        f"/manage/{campaign.pk}/quality/settings/",
        {"gold_rate": "0.1", "qc_min_accuracy": "0.5", "qc_min_gold": "4"},
        follow=True,
    ).content.decode()
    assert "Quality settings saved." in page and 'name="gold_rate" value="0.1"' in page
    campaign.refresh_from_db()
    assert (campaign.gold_rate, campaign.qc_min_accuracy, campaign.qc_min_gold) == (0.1, 0.5, 4)


def test_gold_is_not_served_in_a_burst_after_a_topic_without_gold(
    with_gold: Campaign, annotator: Any, api_client_for: Callable[[Any], Any]
) -> None:
    # 12 items judged while no gold item was servable (they were inactive): the share is 0
    GoldItem.objects.filter(campaign=with_gold).update(active=False)
    client = api_client_for(annotator)
    for _ in range(12):
        judge(client, with_gold)
    GoldItem.objects.filter(campaign=with_gold).update(active=True)
    seen = [judge(client, with_gold)["document"]["docid"] in GOLD for _ in range(12)]
    # made up one every 4 items (rate 0.25), never two within 4
    assert seen == [True, False, False, False] * 3


def test_gold_on_the_judging_pages_is_like_any_item(
    with_gold: Campaign, annotator: Any, client: Any
) -> None:
    client.force_login(annotator)
    pages = []
    for _ in range(4):
        client.post(f"/annotate/{with_gold.pk}/next/")
        lease = Lease.objects.filter(annotator=annotator, state="active").latest("pk")
        page = client.get(f"/annotate/{with_gold.pk}/").content.decode()
        pages.append((lease.slot.docid, page))
        r = client.post(f"/annotate/{with_gold.pk}/submit/", {"lease": str(lease.pk), "grade": "1"})
        assert r.status_code == 302
    docid, gold_page = pages[3]
    assert docid in GOLD and f"text of {docid}" in gold_page
    assert "gold" not in gold_page.lower().replace(docid, "")
    # the same page as a pooled item's, but for the document
    pooled_docid, pooled_page = pages[2]
    strip = lambda html, d: html.replace(d, "DOC")  # noqa: E731
    assert len(strip(gold_page, docid).splitlines()) == len(
        strip(pooled_page, pooled_docid).splitlines()
    )
    assert Judgment.objects.get(annotator=annotator, docid=docid).gold is not None
