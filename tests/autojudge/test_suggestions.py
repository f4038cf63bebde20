"""Automatic grades suggested to assessors, with the anchoring control (issue 17, point 5): arms
drawn by a hash of the slot, the suggestion looked up and recorded on the server (API and form),
the hidden arm's grade nowhere before the judgment is committed, the anchoring report checked by
hand, and who may set it up."""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

import numpy as np
import pytest
from django.test import Client
from statsmodels.stats.inter_rater import cohens_kappa

from judging.assessments.models import GoldItem, JudgingSlot, Judgment, JudgmentChange
from judging.autojudge import services, suggestions
from judging.autojudge.models import Judge, JudgeKind, Suggestions
from judging.campaigns.models import Campaign, Topic
from judging.campaigns.services import campaign_create
from judging.core.errors import InvalidInput, NotAllowed
from judging.pools.models import PoolVersion
from tests.test_judging_api import THREE_TOPICS, lease
from tests.test_judging_queries import JUDGMENT_QUERIES, LEASE_QUERIES

pytestmark = pytest.mark.django_db

LABELS = {0: "No", 1: "Some", 2: "Yes"}  # the campaign fixture's scale
JUDGE_NAME, JUDGE_MODEL = "zz-suggesting-judge", "zz-model-of-the-judge"


def auto_grade(docid: str) -> int:
    """The imported judge's grade of every pool document: d401-1 -> 1, d401-2 -> 2, d401-3 -> 0."""
    return int(docid.rsplit("-", 1)[1]) % 3


def u_of(campaign_id: int, slot_id: int) -> float:
    """The arm draw, as the module docstring of suggestions defines it (computed here apart)."""
    text = f"pooljudge-suggestions:{campaign_id}:{slot_id}".encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big") / 2**64


@pytest.fixture
def judge(campaign: Campaign, pooled: PoolVersion) -> Judge:
    made = services.judge_create(
        campaign=campaign, name=JUDGE_NAME, kind=JudgeKind.IMPORTED, model=JUDGE_MODEL
    )
    labels = [
        services.Label(qid, docid, auto_grade(docid))
        for qid, docids in THREE_TOPICS.items()
        for docid in docids
        if docid != "d403-4"  # one pair the judge did not grade
    ]
    services.store_labels(made, labels)
    return made


def configure(campaign: Campaign, judge: Judge, share: float, admin: Any) -> Suggestions:
    return suggestions.suggestions_configure(
        campaign=campaign, judge=judge, hidden_share=share, by=admin
    )


def slot_of(qid: str, docid: str) -> JudgingSlot:
    return JudgingSlot.objects.get(topic__qid=qid, docid=docid, slot=1)


# --- arms -----------------------------------------------------------------------------------


def test_arms_are_a_deterministic_hash_split_at_the_share() -> None:
    ids = range(1, 1001)
    arms = [suggestions.arm_of(7, i, 0.3) for i in ids]
    assert arms == [suggestions.arm_of(7, i, 0.3) for i in ids]  # the same every time
    # the documented draw, recomputed apart: hidden exactly when u < share
    assert arms == ["hidden" if u_of(7, i) < 0.3 else "shown" for i in ids]
    hidden = arms.count("hidden")
    # Binomial(1000, 0.3): sd 14.5; 4.5 sd either side
    assert 235 <= hidden <= 365, hidden
    assert {suggestions.arm_of(7, i, 0.0) for i in ids} == {"shown"}
    assert {suggestions.arm_of(7, i, 1.0) for i in ids} == {"hidden"}
    # a larger share hides a superset of the slots (one draw per slot, thresholded)
    wider = {i for i in ids if suggestions.arm_of(7, i, 0.5) == "hidden"}
    assert {i for i, a in zip(ids, arms, strict=True) if a == "hidden"} <= wider
    # each campaign draws its own split
    other = [suggestions.arm_of(8, i, 0.3) for i in ids]
    assert other != arms and 235 <= other.count("hidden") <= 365


# --- setting it up --------------------------------------------------------------------------


def test_configuring_checks_the_judge_the_share_and_who_asks(
    judge: Judge, admin_user: Any, researcher: Any, annotator: Any
) -> None:
    campaign = judge.campaign
    other = campaign_create(name="Other", created_by=admin_user)
    foreign = services.judge_create(campaign=other, name="x", kind=JudgeKind.IMPORTED, model="m")
    with pytest.raises(InvalidInput, match="judge") as info:
        configure(campaign, foreign, 0.2, admin_user)
    assert info.value.problems[0].location == "judge"
    for bad in (-0.1, 1.5, math.nan, math.inf, "0.5", True, None):
        with pytest.raises(InvalidInput, match="hidden_share"):
            configure(campaign, judge, bad, admin_user)  # type: ignore[arg-type]
    for who in (researcher, annotator):
        with pytest.raises(NotAllowed):
            configure(campaign, judge, 0.2, who)
    assert not Suggestions.objects.exists()
    setting = configure(campaign, judge, 0.25, admin_user)
    assert (setting.judge_id, setting.hidden_share, setting.enabled) == (judge.pk, 0.25, True)
    again = configure(campaign, judge, 1.0, admin_user)  # replaces, never a second row
    assert again.pk == setting.pk and Suggestions.objects.get().hidden_share == 1.0
    assert suggestions.suggestions_off(campaign) is True
    assert suggestions.suggestions_off(campaign) is False
    assert Suggestions.objects.get().enabled is False


def test_a_suggestion_is_a_grade_its_label_and_the_arm_and_nothing_else(
    judge: Judge, admin_user: Any
) -> None:
    campaign = judge.campaign
    slot = slot_of("401", "d401-2")
    topic = slot.topic
    assert suggestions.suggestion_for(campaign, topic, slot.docid, slot.pk) is None  # never set
    configure(campaign, judge, 0.0, admin_user)
    found = suggestions.suggestion_for(campaign, topic, slot.docid, slot.pk)
    assert found == {"grade": 2, "label": "Yes", "arm": "shown"}
    configure(campaign, judge, 1.0, admin_user)
    assert suggestions.suggestion_for(campaign, topic.pk, slot.docid, slot.pk) == {
        "grade": 2,
        "label": "Yes",
        "arm": "hidden",
    }
    # the pair the judge did not grade: no suggestion
    missing = slot_of("403", "d403-4")
    assert suggestions.suggestion_for(campaign, missing.topic, missing.docid, missing.pk) is None
    # off: none at once, although the set of campaigns with suggestions was just cached
    suggestions.suggestions_off(campaign)
    assert suggestions.suggestion_for(campaign, topic, slot.docid, slot.pk) is None


def test_a_gold_item_is_always_in_the_hidden_arm(
    judge: Judge, admin_user: Any, annotator: Any
) -> None:
    # a gold item measures the assessor: the judge's grade never shows before the commit (and
    # the item is not the one document without a suggestion, which would give it away)
    from datetime import timedelta

    from django.utils import timezone

    from judging.assessments.models import Lease

    campaign = judge.campaign
    configure(campaign, judge, 0.0, admin_user)  # every pooled item in the shown arm
    slot = slot_of("401", "d401-2")
    plain = suggestions.suggestion_for(campaign, slot.topic, slot.docid, slot.pk)
    assert plain is not None and plain["arm"] == "shown"
    found = suggestions.suggestion_for(campaign, slot.topic, slot.docid, slot.pk, gold=True)
    assert found == {"grade": 2, "label": "Yes", "arm": "hidden"}
    # served to an assessor as a gold slot: the lease's suggestion is hidden too
    gold = GoldItem.objects.create(
        campaign=campaign, topic=slot.topic, docid="d401-2", grade=2, source="imported"
    )
    gold_slot = JudgingSlot.objects.create(
        campaign=campaign,
        topic=slot.topic,
        docid="d401-2",
        slot=0,
        position=0,
        pool_version_id=slot.pool_version_id,
        has_text=True,
        gold=gold,
        gold_for=annotator,
    )
    held = Lease.objects.create(
        slot=gold_slot, annotator=annotator, expires_at=timezone.now() + timedelta(minutes=5)
    )
    got = suggestions.suggestion_for_lease(lease_id=held.pk, annotator=annotator)
    assert got is not None and got["arm"] == "hidden"
    pooled = Lease.objects.create(
        slot=slot, annotator=annotator, expires_at=timezone.now() + timedelta(minutes=5)
    )
    got = suggestions.suggestion_for_lease(lease_id=pooled.pk, annotator=annotator)
    assert got is not None and got["arm"] == "shown"


# --- recorded on the server -----------------------------------------------------------------


def _half_hidden(campaign: Campaign) -> float:
    """A share that hides exactly half of the campaign's first slots (the median draw)."""
    draws = sorted(u_of(campaign.pk, pk) for pk in JudgingSlot.objects.values_list("pk", flat=True))
    return (draws[len(draws) // 2 - 1] + draws[len(draws) // 2]) / 2


def test_the_api_records_the_arm_and_grade_computed_on_the_server(
    judge: Judge, admin_user: Any, annotator: Any, api_client_for: Any
) -> None:
    campaign = judge.campaign
    share = _half_hidden(campaign)
    configure(campaign, judge, share, admin_user)
    client = api_client_for(annotator)
    arms: dict[str, int] = {"shown": 0, "hidden": 0}
    while (r := lease(client, campaign)).status_code == 201:
        body = r.json()
        qid, docid = body["topic"]["qid"], body["document"]["docid"]
        slot = slot_of(qid, docid)
        arm = "hidden" if u_of(campaign.pk, slot.pk) < share else "shown"
        expected = None if docid == "d403-4" else auto_grade(docid)
        # before judging: the grade in the shown arm only, never the judge
        if expected is not None and arm == "shown":
            assert body["suggestion"] == {"grade": expected, "label": LABELS[expected]}
        else:
            assert body["suggestion"] is None
        assert JUDGE_NAME not in r.content.decode() and JUDGE_MODEL not in r.content.decode()
        # the client claims another arm and grade: ignored, the server's are recorded
        posted = client.post(
            f"/api/v1/leases/{body['id']}/judgment/",
            {"grade": 1, "suggestion_arm": "shown", "suggested_grade": 0},
            format="json",
        )
        assert posted.status_code == 201, posted.content
        j = Judgment.objects.get(pk=posted.json()["id"])
        if expected is None:
            assert (j.suggestion_arm, j.suggested_grade) == ("", None)
            assert posted.json()["suggestion"] is None
            continue
        arms[arm] += 1
        assert (j.suggestion_arm, j.suggested_grade) == (arm, expected)
        # after recording: told in either arm (the page reveals the hidden one)
        assert posted.json()["suggestion"] == {
            "grade": expected,
            "label": LABELS[expected],
            "arm": arm,
        }
    assert r.status_code == 204
    assert sum(arms.values()) == 11 and min(arms.values()) >= 5, arms


def test_a_retry_keeps_the_recorded_suggestion_and_another_grade_is_refused(
    judge: Judge, admin_user: Any, annotator: Any, api_client_for: Any
) -> None:
    campaign = judge.campaign
    configure(campaign, judge, 1.0, admin_user)
    client = api_client_for(annotator)
    body = lease(client, campaign).json()
    url = f"/api/v1/leases/{body['id']}/judgment/"
    expected = auto_grade(body["document"]["docid"])
    assert client.post(url, {"grade": 0}, format="json").status_code == 201
    suggestions.suggestions_off(campaign)
    retry = client.post(url, {"grade": 0}, format="json")  # the same grade: nothing stored
    assert retry.status_code == 200
    j = Judgment.objects.get()
    assert (j.suggestion_arm, j.suggested_grade) == ("hidden", expected)
    # another grade for the judged lease (a stale page): refused, the judgment as it was
    assert client.post(url, {"grade": 2}, format="json").status_code == 409
    j.refresh_from_db()
    assert (j.grade, j.suggestion_arm, j.suggested_grade) == (0, "hidden", expected)


@pytest.fixture
def web(annotator: Any) -> Client:
    client = Client()
    client.force_login(annotator)
    return client


def _hint(html: str) -> tuple[bool, str]:
    """(whether the hint is visible, its label) on a judging page."""
    m = re.search(
        r'<p id="suggestion" class="suggestion-hint"( hidden)?>Suggested: '
        r'<strong id="suggestion-label">([^<]*)</strong>',
        html,
    )
    assert m is not None, "the page has no suggestion element"
    return m.group(1) is None, m.group(2)


def test_the_form_shows_the_shown_arm_and_reveals_the_hidden_one_only_after_commit(
    judge: Judge, admin_user: Any, annotator: Any, web: Client
) -> None:
    campaign = judge.campaign
    c = campaign.pk
    configure(campaign, judge, 1.0, admin_user)  # every item hidden
    page = web.post(f"/annotate/{c}/next/", follow=True)
    html = page.content.decode()
    docid = re.search(r'id="docid">([^<]+)<', html).group(1)  # type: ignore[union-attr]
    label = LABELS[auto_grade(docid)]
    assert _hint(html) == (False, "")  # hidden: the grade is nowhere in the hint
    assert "automatic judge said" not in html and JUDGE_NAME not in html
    assert JUDGE_MODEL not in html
    lease_id = re.search(r'name="lease" value="(\d+)"', html).group(1)  # type: ignore[union-attr]
    # the judging page's JSON for the item leased ahead says nothing in the hidden arm either
    ahead = web.post(
        f"/annotate/{c}/ahead/",
        json.dumps({"current": int(lease_id)}),
        content_type="application/json",
    ).json()["ahead"]
    assert ahead["suggestion"] is None
    # the form posts forged suggestion fields: the server's are recorded
    after = web.post(
        f"/annotate/{c}/submit/",
        {"lease": lease_id, "grade": "0", "suggestion_arm": "shown", "suggested_grade": "1"},
        follow=True,
    )
    j = Judgment.objects.get(docid=docid)
    assert (j.suggestion_arm, j.suggested_grade) == ("hidden", auto_grade(docid))
    told = after.content.decode()
    assert f"The automatic judge said: {label} (document {docid})." in told
    assert 'class="suggestion-reveal info"' in told  # the page's script shows it briefly
    assert JUDGE_NAME not in told and JUDGE_MODEL not in told

    configure(campaign, judge, 0.0, admin_user)  # now every item shown
    html = web.get(f"/annotate/{c}/").content.decode()
    docid = re.search(r'id="docid">([^<]+)<', html).group(1)  # type: ignore[union-attr]
    assert _hint(html) == (True, LABELS[auto_grade(docid)])
    # a hint, not a choice: no grade button is preselected and the keys are the usual ones
    assert "grade current" not in html and "chosen" not in html
    keys = re.findall(r'class="grade" data-key="(\d)"><kbd>\d</kbd> (\w+)', html)
    assert keys == [("0", "No"), ("1", "Some"), ("2", "Yes")]
    lease_id = re.search(r'name="lease" value="(\d+)"', html).group(1)  # type: ignore[union-attr]
    ahead = web.post(
        f"/annotate/{c}/ahead/",
        json.dumps({"current": int(lease_id)}),
        content_type="application/json",
    ).json()["ahead"]
    assert ahead["suggestion"] == {"label": LABELS[auto_grade(ahead["docid"])]}
    after = web.post(f"/annotate/{c}/submit/", {"lease": lease_id, "grade": "2"}, follow=True)
    assert "automatic judge said" not in after.content.decode()  # seen already: nothing told
    j = Judgment.objects.get(docid=docid)
    assert (j.suggestion_arm, j.suggested_grade) == ("shown", auto_grade(docid))


def test_suggestions_cost_one_statement_per_lease_and_per_judgment(
    judge: Judge,
    admin_user: Any,
    annotator: Any,
    api_client_for: Any,
    django_assert_max_num_queries: Any,
) -> None:
    configure(judge.campaign, judge, 0.5, admin_user)
    client = api_client_for(annotator)
    first = lease(client, judge.campaign).json()
    assert client.post(f"/api/v1/leases/{first['id']}/judgment/", {"grade": 1}).status_code == 201
    with django_assert_max_num_queries(LEASE_QUERIES + 1):
        r = lease(client, judge.campaign)
    with django_assert_max_num_queries(JUDGMENT_QUERIES + 1):
        assert (
            client.post(f"/api/v1/leases/{r.json()['id']}/judgment/", {"grade": 1}).status_code
            == 201
        )


# --- the anchoring report -------------------------------------------------------------------

# (docid, human grade, automatic grade): shown arm 3 of 4 exact, hidden arm 2 of 4
SHOWN = [("s1", 2, 2), ("s2", 1, 1), ("s3", 0, 0), ("s4", 0, 1)]
HIDDEN = [("h1", 2, 2), ("h2", 0, 2), ("h3", 1, 0), ("h4", 1, 1)]


def _record(campaign: Campaign, annotator: Any, rows: list[tuple[str, int, int]], arm: str) -> None:
    topic = Topic.objects.get(campaign=campaign, qid="401")
    for docid, human, automatic in rows:
        Judgment.objects.create(
            campaign=campaign,
            topic=topic,
            docid=docid,
            annotator=annotator,
            grade=human,
            suggestion_arm=arm,
            suggested_grade=automatic,
        )


def test_the_anchoring_report_matches_a_hand_worked_example(
    campaign: Campaign, annotator: Any, admin_user: Any
) -> None:
    _record(campaign, annotator, SHOWN, "shown")
    _record(campaign, annotator, HIDDEN, "hidden")
    topic = Topic.objects.get(campaign=campaign, qid="401")
    # left out: a gold item's judgment (quality control) and one recorded without a suggestion
    gold = GoldItem.objects.create(
        campaign=campaign, topic=topic, docid="g1", grade=0, source="imported"
    )
    Judgment.objects.create(
        campaign=campaign,
        topic=topic,
        docid="g1",
        annotator=annotator,
        grade=2,
        gold=gold,
        suggestion_arm="shown",
        suggested_grade=0,
    )
    Judgment.objects.create(
        campaign=campaign, topic=topic, docid="n1", annotator=annotator, grade=1
    )
    # a hidden-arm grade changed after the reveal
    h2 = Judgment.objects.get(docid="h2")
    JudgmentChange.objects.create(
        judgment=h2, topic=topic, docid="h2", annotator=annotator, old_grade=1, new_grade=0
    )
    # and a shown-arm judgment that was undone once and given again (its history keeps the undo)
    JudgmentChange.objects.create(
        judgment=None, topic=topic, docid="s3", annotator=annotator, old_grade=2, new_grade=None
    )
    report = suggestions.anchoring_report(campaign)
    assert report["excluded"] == {"gold": 1, "without_suggestion": 1, "not_graded_by_judge": 0}
    assert report["changed_after_commit"] == {"shown": 1, "hidden": 1}
    shown, hidden = report["shown"], report["hidden"]
    assert (shown["n"], shown["exact"], shown["within_one"]) == (4, 0.75, 1.0)
    assert (hidden["n"], hidden["exact"], hidden["within_one"]) == (4, 0.5, 0.75)
    # linear weights |i - j| / 2: shown D_o = 0.5/4, D_e = 0.4375 -> 1 - 0.125/0.4375 = 5/7;
    # hidden D_o = 1.5/4, D_e = 0.4375 -> 1/7
    assert shown["kappa_linear"] == pytest.approx(5 / 7)
    assert hidden["kappa_linear"] == pytest.approx(1 / 7)
    for rows, arm in ((SHOWN, shown), (HIDDEN, hidden)):  # and statsmodels agrees
        table = np.zeros((3, 3))
        for _, h, a in rows:
            table[h, a] += 1
        assert arm["kappa_linear"] == pytest.approx(cohens_kappa(table, wt="linear").kappa)
    d = report["difference"]
    assert d["exact"] == pytest.approx(0.25)
    assert d["kappa_linear"] == pytest.approx(4 / 7)
    # Wald: 0.25 +- 1.959964 sqrt(.75 .25 / 4 + .5 .5 / 4) = 0.25 +- 0.648197
    assert d["exact_interval"] == pytest.approx([0.25 - 0.648197, 0.25 + 0.648197], abs=1e-6)
    lo, hi = d["kappa_linear_interval"]
    assert lo < 4 / 7 < hi
    assert report["level"] == 0.95 and report["setting"] is None


def test_the_kappa_bootstrap_is_bounded_for_large_campaigns() -> None:
    assert suggestions.bootstrap_resamples(8) == 2000
    assert suggestions.bootstrap_resamples(2000) == 2000
    assert suggestions.bootstrap_resamples(4000) == 1000  # 4 million codes per arm at most
    assert suggestions.bootstrap_resamples(10**6) == 100


def test_the_report_against_another_judge_uses_its_labels(
    campaign: Campaign, annotator: Any, admin_user: Any, api_client_for: Any
) -> None:
    _record(campaign, annotator, SHOWN, "shown")
    _record(campaign, annotator, HIDDEN, "hidden")
    other = services.judge_create(campaign=campaign, name="other", kind="imported", model="m")
    # it agrees with every human grade but one, and has no label for s4 and h4
    grades = {d: h for d, h, _ in SHOWN + HIDDEN if d not in ("s4", "h4")}
    grades["h1"] = 0
    services.store_labels(other, [services.Label("401", d, g) for d, g in grades.items()])
    report = suggestions.anchoring_report(campaign, other)
    assert report["excluded"]["not_graded_by_judge"] == 2
    assert (report["shown"]["n"], report["shown"]["exact"]) == (3, 1.0)
    assert (report["hidden"]["n"], report["hidden"]["exact"]) == (3, pytest.approx(2 / 3))
    assert report["judge"]["name"] == "other"
    # the same through the API and the page (?judge=)
    url = f"/api/v1/campaigns/{campaign.pk}/suggestions/"
    api = api_client_for(admin_user)
    assert api.get(f"{url}?judge={other.pk}").json()["report"]["shown"]["n"] == 3
    assert api.get(url).json()["report"]["shown"]["n"] == 4
    elsewhere = campaign_create(name="Elsewhere", created_by=admin_user)
    foreign = services.judge_create(campaign=elsewhere, name="x", kind="imported", model="m")
    for bad in (str(foreign.pk), "abc", "0"):
        r = api.get(f"{url}?judge={bad}")
        assert r.status_code == 400 and r.json()["problems"][0]["location"] == "judge", bad
    client = Client()
    client.force_login(admin_user)
    page = f"/campaigns/{campaign.pk}/suggestions/"
    html = client.get(f"{page}?judge={other.pk}").content.decode()
    assert "the labels of other v1" in html
    assert re.search(r'<tr data-arm="shown"><td>[^<]*</td><td class="num">3<', html)
    refused = client.get(f"{page}?judge={foreign.pk}")
    assert refused.status_code == 400
    assert f"no judge {foreign.pk} in campaign {campaign.pk}" in refused.content.decode()


# --- pages and API: who may do what ---------------------------------------------------------


def test_only_admins_set_up_suggestions_and_researchers_read_the_report(
    judge: Judge,
    admin_user: Any,
    researcher: Any,
    annotator: Any,
    api_client_for: Any,
) -> None:
    c = judge.campaign.pk
    url = f"/api/v1/campaigns/{c}/suggestions/"
    body = {"judge": judge.pk, "hidden_share": 0.4}
    for who in (annotator, researcher):
        assert api_client_for(who).put(url, body, format="json").status_code == 403
    assert api_client_for(annotator).get(url).status_code == 403
    assert not Suggestions.objects.exists()
    admin = api_client_for(admin_user)
    r = admin.put(url, body, format="json")
    assert r.status_code == 200, r.content
    assert r.json()["setting"]["hidden_share"] == 0.4
    assert r.json()["setting"]["judge"]["name"] == JUDGE_NAME
    read = api_client_for(researcher).get(url)
    assert read.status_code == 200
    assert read.json()["setting"]["enabled"] is True
    assert read.json()["report"]["shown"]["n"] == 0
    bad = admin.put(url, {"judge": judge.pk, "hidden_share": 2}, format="json")
    assert bad.status_code == 400 and "hidden_share" in bad.content.decode()
    other = campaign_create(name="Elsewhere", created_by=admin_user)
    foreign = services.judge_create(campaign=other, name="x", kind="imported", model="m")
    bad = admin.put(url, {"judge": foreign.pk}, format="json")
    assert bad.status_code == 400 and bad.json()["problems"][0]["location"] == "judge"
    assert admin.put(url, {"hidden_share": 0.1}, format="json").status_code == 400  # no judge
    off = admin.put(url, {"enabled": False}, format="json")
    assert off.status_code == 200 and off.json()["setting"]["enabled"] is False
    assert off.json()["setting"]["hidden_share"] == 0.4  # kept for turning it on again

    # the page: annotators refused, researchers read it without the form, admins save
    page = f"/campaigns/{c}/suggestions/"
    clients = {}
    for who in (annotator, researcher, admin_user):
        clients[who.username] = Client()
        clients[who.username].force_login(who)
    assert clients[annotator.username].get(page).status_code == 403
    assert clients[annotator.username].post(page, {"off": "1"}).status_code == 403
    seen = clients[researcher.username].get(page)
    assert seen.status_code == 200
    assert 'id="suggestion-settings"' not in seen.content.decode()
    assert (
        clients[researcher.username]
        .post(page, {"judge": judge.pk, "hidden_share": "0.5", "enabled": "1"})
        .status_code
        == 403
    )
    assert Suggestions.objects.get().enabled is False
    admin_page = clients[admin_user.username]
    saved = admin_page.post(
        page, {"judge": str(judge.pk), "hidden_share": "0.5", "enabled": "1"}, follow=True
    )
    html = saved.content.decode()
    assert "Saved: " in html and 'id="suggestion-settings"' in html
    assert Suggestions.objects.get().hidden_share == 0.5 and Suggestions.objects.get().enabled
    refused = admin_page.post(page, {"judge": str(judge.pk), "hidden_share": "half"}, follow=True)
    assert "the hidden share must be a number" in refused.content.decode()
    assert Suggestions.objects.get().hidden_share == 0.5


def test_the_page_shows_both_arms_and_the_effect_with_its_interval(
    campaign: Campaign, annotator: Any, admin_user: Any
) -> None:
    _record(campaign, annotator, SHOWN, "shown")
    _record(campaign, annotator, HIDDEN, "hidden")
    client = Client()
    client.force_login(admin_user)
    html = client.get(f"/campaigns/{campaign.pk}/suggestions/").content.decode()
    shown = re.search(r'<tr data-arm="shown">(.*?)</tr>', html, re.S).group(1)  # type: ignore[union-attr]
    hidden = re.search(r'<tr data-arm="hidden">(.*?)</tr>', html, re.S).group(1)  # type: ignore[union-attr]
    assert re.findall(r'class="num">([^<]+)<', shown) == ["4", "0.750", "1.000", "0.714", "0"]
    assert re.findall(r'class="num">([^<]+)<', hidden) == ["4", "0.500", "0.750", "0.143", "0"]
    effect = re.search(r'<tr id="anchoring-effect">(.*?)</tr>', html, re.S).group(1)  # type: ignore[union-attr]
    text = re.sub(r"<[^>]+>", " ", effect)
    assert "+0.250" in text and "[-0.398, +0.898]" in text and "+0.571" in text
    assert "create one first" in html  # no judge in this campaign: nothing to choose from
