"""Juries: several judges' labels combined per item (majority, mean grade, Dawid-Skene, defer to
people), each jury a judge of its own that runs over a pool; the defer method queues what its
members disagree on and people have not judged. Expected labels are worked by hand from the
table below (Dawid-Skene: the library's on the same input)."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command

from judging.assessments.models import JudgingSlot, QrelsVersion
from judging.autojudge import juries, services
from judging.autojudge.models import AutoLabel, Judge, JudgeKind, JudgeRun, LabelStatus
from judging.campaigns.models import Campaign
from judging.campaigns.services import campaign_create
from judging.core import jobs
from judging.core.errors import InvalidInput
from judging.pools.models import PoolVersion
from judging.workflows.qrels import qrels_imported
from metrics.judges.juries import dawid_skene

pytestmark = pytest.mark.django_db

Key = tuple[str, str]
SCALE = [0, 1, 2]
NAMES = ("judge-a", "judge-b", "judge-c")
# The three members' grades of the 12 pool documents (None: no label).
Row = tuple[int | None, int | None, int | None]
TABLE: dict[Key, Row] = {
    ("401", "d401-1"): (2, 2, 2),
    ("401", "d401-2"): (1, 0, 0),
    ("401", "d401-3"): (0, 1, 2),
    ("401", "d401-4"): (1, 1, None),
    ("402", "d402-1"): (2, 1, 1),
    ("402", "d402-2"): (0, 2, None),
    ("402", "d402-3"): (None, None, None),
    ("402", "d402-4"): (2, 2, 1),
    ("403", "d403-1"): (0, 0, 0),
    ("403", "d403-2"): (1, 2, None),
    ("403", "d403-3"): (None, None, 1),
    ("403", "d403-4"): (0, None, None),
}
# the most frequent grade, the lower on a tie (d401-3: 0/1/2, d402-2: 0/2, d403-2: 1/2)
MAJORITY = {
    ("401", "d401-1"): 2,
    ("401", "d401-2"): 0,
    ("401", "d401-3"): 0,
    ("401", "d401-4"): 1,
    ("402", "d402-1"): 1,
    ("402", "d402-2"): 0,
    ("402", "d402-4"): 2,
    ("403", "d403-1"): 0,
    ("403", "d403-2"): 1,
    ("403", "d403-3"): 1,
    ("403", "d403-4"): 0,
}
# the mean rounded to the scale: 1/3 -> 0, 4/3 -> 1, 5/3 -> 2, 1.5 -> 2 (half to even)
MEAN = {
    **MAJORITY,
    ("401", "d401-3"): 1,
    ("402", "d402-2"): 1,
    ("403", "d403-2"): 2,
}
# People's grades: d401-1 differs from the members' agreed 2 (the agreed grade stands),
# d401-2 and d402-1 settle two disagreements.
PEOPLE = b"401 0 d401-1 1\n401 0 d401-2 0\n402 0 d402-1 2\n"
DEFERRED = {
    ("401", "d401-1"): 2,
    ("401", "d401-2"): 0,  # people's
    ("401", "d401-4"): 1,
    ("402", "d402-1"): 2,  # people's
    ("403", "d403-1"): 0,
    ("403", "d403-3"): 1,  # one member agrees with itself
    ("403", "d403-4"): 0,
}
PENDING = {("401", "d401-3"), ("402", "d402-2"), ("402", "d402-4"), ("403", "d403-2")}


def votes(table: dict[Key, Row]) -> dict[str, dict[Key, int]]:
    """The table as the library takes it, judges named as the jury names its members."""
    out: dict[str, dict[Key, int]] = {f"{name} v1": {} for name in NAMES}
    for key, row in table.items():
        for name, grade in zip(NAMES, row, strict=True):
            if grade is not None:
                out[f"{name} v1"][key] = grade
    return out


@pytest.fixture
def members(campaign: Campaign, pooled: PoolVersion) -> list[Judge]:
    out = []
    for i, name in enumerate(NAMES):
        judge = services.judge_create(
            campaign=campaign,
            name=name,
            kind=JudgeKind.IMPORTED,
            model=f"model-{name}",
            saw_human_qrels=False,
        )
        rows = [services.Label(q, d, g[i]) for (q, d), g in TABLE.items() if g[i] is not None]
        services.store_labels(judge, rows)
        out.append(judge)
    return out


@pytest.fixture
def human(campaign: Campaign) -> QrelsVersion:
    return qrels_imported(campaign=campaign, data=PEOPLE)


def run(jury: Judge, pool: PoolVersion) -> JudgeRun:
    """The jury's run over the pool, computed here."""
    done = services.judge_run_request(judge=jury, pool=pool)
    jobs.compute_here(done.job)
    done.refresh_from_db()
    assert done.state == "done", done.error
    return done


def make(campaign: Campaign, members: list[Judge], method: str, **kw: Any) -> Judge:
    return juries.jury_create(
        campaign=campaign, name=f"jury-{method}", members=members, method=method, **kw
    )


def stored(jury: Judge) -> set[tuple[str, str, int | None, str]]:
    rows = AutoLabel.objects.filter(judge=jury).values_list(
        "topic__qid", "docid", "grade", "status"
    )
    return set(rows)


# ---- labels ------------------------------------------------------------------------------


def test_a_majority_jury_labels_each_item_with_its_most_frequent_grade_the_lower_on_a_tie(
    campaign: Campaign, pooled: PoolVersion, members: list[Judge]
) -> None:
    jury = make(campaign, members, "majority")
    assert (jury.kind, jury.model, jury.owner_id) == (JudgeKind.JURY, "jury:majority(3)", None)
    assert jury.params == {"members": sorted(m.pk for m in members), "method": "majority"}
    done = run(jury, pooled)
    assert services.labels(jury) == MAJORITY
    # a tie of 0, 1 and 2 goes to 0; two 2s against a 1 make 2
    assert services.labels(jury)[("401", "d401-3")] == 0
    assert services.labels(jury)[("402", "d402-4")] == 2
    # d402-3, which no member graded, has no label: the run's done stays one short
    assert not AutoLabel.objects.filter(judge=jury, docid="d402-3").exists()
    assert (done.total, done.done, done.ok) == (12, 11, 11)
    assert jury.saw_human_qrels is False  # no member saw people's judgments


def test_a_mean_grade_jury_rounds_the_mean_to_the_scale_half_to_even(
    campaign: Campaign, pooled: PoolVersion, members: list[Judge]
) -> None:
    jury = make(campaign, members, "mean")
    run(jury, pooled)
    assert services.labels(jury) == MEAN
    score = AutoLabel.objects.get(judge=jury, docid="d402-1").score
    assert score == pytest.approx(4 / 3)  # the raw mean is kept as the label's score


def test_a_dawid_skene_jury_labels_as_the_library_does_over_the_whole_pool(
    campaign: Campaign, pooled: PoolVersion, members: list[Judge]
) -> None:
    jury = make(campaign, members, "dawid-skene")
    run(jury, pooled)
    expected = dawid_skene(votes(TABLE), SCALE).labels
    assert services.labels(jury) == expected
    assert len(expected) == 11


def test_a_later_dawid_skene_run_fits_on_the_earlier_pairs_and_keeps_their_labels(
    campaign: Campaign, pooled: PoolVersion, members: list[Judge]
) -> None:
    jury = make(campaign, members, "dawid-skene")
    run(jury, pooled)
    before = services.labels(jury)
    services.store_labels(members[2], [services.Label("402", "d402-3", 1)])
    later = run(jury, pooled)
    table = {**TABLE, ("402", "d402-3"): (None, None, 1)}
    assert services.labels(jury) == {**before, ("402", "d402-3"): 1}
    assert dawid_skene(votes(table), SCALE).labels[("402", "d402-3")] == 1
    assert (later.cached, later.done) == (11, 12)


def test_a_deferring_jury_takes_agreed_grades_people_s_grades_and_defers_the_rest(
    campaign: Campaign, pooled: PoolVersion, members: list[Judge], human: QrelsVersion
) -> None:
    jury = make(campaign, members, "defer", human=human)
    assert jury.params["human"] == human.number
    assert jury.saw_human_qrels is True
    run(jury, pooled)
    assert services.labels(jury) == DEFERRED
    deferred = AutoLabel.objects.filter(judge=jury, status=LabelStatus.DEFERRED)
    assert set(deferred.values_list("topic__qid", "docid")) == PENDING
    assert set(deferred.values_list("grade", flat=True)) == {None}
    jury.refresh_from_db()
    assert jury.params["deferred_judged"] == 2  # d401-2 and d402-1
    assert juries.jury_tally(jury) == juries.JuryTally(graded=7, people=2, deferred=4)
    # the tally is no identity: the same jury again is the same (locked) version
    assert make(campaign, members, "defer", human=human).pk == jury.pk


def test_the_items_a_jury_defers_are_served_first_in_their_topics(
    campaign: Campaign, pooled: PoolVersion, members: list[Judge], human: QrelsVersion
) -> None:
    run(make(campaign, members, "defer", human=human), pooled)
    first = JudgingSlot.objects.filter(campaign=campaign, position=0, judged_at__isnull=True)
    assert set(first.values_list("topic__qid", "docid")) == PENDING


def test_items_a_jury_defers_are_queued_for_people_when_nothing_queued_them(
    campaign: Campaign, pooled: PoolVersion, members: list[Judge], human: QrelsVersion
) -> None:
    JudgingSlot.objects.filter(campaign=campaign).delete()
    run(make(campaign, members, "defer", human=human), pooled)
    slots = JudgingSlot.objects.filter(campaign=campaign)
    assert set(slots.values_list("topic__qid", "docid")) == PENDING
    assert set(slots.values_list("pool_version", flat=True)) == {pooled.pk}


def test_running_a_jury_twice_adds_nothing(
    campaign: Campaign, pooled: PoolVersion, members: list[Judge], human: QrelsVersion
) -> None:
    jury = make(campaign, members, "defer", human=human)
    run(jury, pooled)
    labels, slots = stored(jury), JudgingSlot.objects.count()
    again = run(jury, pooled)
    assert stored(jury) == labels and AutoLabel.objects.filter(judge=jury).count() == 11
    assert JudgingSlot.objects.count() == slots
    jury.refresh_from_db()
    assert jury.params["deferred_judged"] == 2
    # the graded pairs are cached; the deferred ones are asked again and deferred again
    assert (again.cached, again.done, again.ok) == (7, 11, 0)


# ---- what a jury may be -------------------------------------------------------------------


def test_a_jury_is_reused_when_it_says_the_same_and_versioned_when_it_does_not(
    campaign: Campaign, pooled: PoolVersion, members: list[Judge]
) -> None:
    jury = juries.jury_create(campaign=campaign, name="panel", members=members, method="majority")
    same = juries.jury_create(
        campaign=campaign, name="panel", members=members[::-1], method="majority"
    )
    assert same.pk == jury.pk
    run(jury, pooled)
    other = juries.jury_create(campaign=campaign, name="panel", members=members, method="mean")
    assert (other.version, other.model) == (2, "jury:mean(3)")


def test_a_jury_saw_people_s_judgments_when_a_member_did(
    campaign: Campaign, pooled: PoolVersion, members: list[Judge]
) -> None:
    Judge.objects.filter(pk=members[0].pk).update(saw_human_qrels=True)
    members[0].refresh_from_db()
    assert make(campaign, members, "majority").saw_human_qrels is True


def problem_at(exc: pytest.ExceptionInfo[InvalidInput]) -> str | None:
    return exc.value.problems[0].location


def test_a_jury_is_refused_naming_the_field_at_fault(
    campaign: Campaign, pooled: PoolVersion, members: list[Judge], human: QrelsVersion
) -> None:
    jury = make(campaign, members[:2], "majority")
    automatic = services.automatic_qrels(judge=members[0], pool=pooled)
    cases: list[tuple[dict[str, Any], str]] = [
        ({"members": members[:1], "method": "majority"}, "members"),
        ({"members": [members[0], members[0]], "method": "majority"}, "members"),
        ({"members": [members[0], jury], "method": "majority"}, "members"),
        ({"members": members, "method": "vote"}, "method"),
        ({"members": members, "method": "defer"}, "human"),
        ({"members": members, "method": "defer", "human": automatic}, "human"),
        ({"members": members, "method": "mean", "human": human}, "human"),
    ]
    for kwargs, field in cases:
        with pytest.raises(InvalidInput) as exc:
            juries.jury_create(campaign=campaign, name="refused", **kwargs)
        assert problem_at(exc) == field, kwargs
    with pytest.raises(InvalidInput) as exc:  # a name an imported judge has
        juries.jury_create(campaign=campaign, name="judge-a", members=members, method="mean")
    assert problem_at(exc) == "name"
    assert not Judge.objects.filter(name="refused").exists()


# ---- the API and the command ---------------------------------------------------------------


def test_an_admin_makes_a_jury_and_its_run_labels_the_pool(
    campaign: Campaign,
    pooled: PoolVersion,
    members: list[Judge],
    api_client_for: Any,
    admin_user: Any,
    researcher: Any,
    as_committed: Any,
) -> None:
    url = f"/api/v1/campaigns/{campaign.pk}/juries/"
    body = {"name": "panel", "members": [m.pk for m in members], "method": "majority"}
    assert api_client_for(researcher).post(url, body, format="json").status_code == 403
    with as_committed():
        response = api_client_for(admin_user).post(url, body, format="json")
    assert response.status_code == 201, response.content
    answer = response.json()
    assert (answer["judge"]["name"], answer["judge"]["kind"]) == ("panel", "jury")
    done = JudgeRun.objects.get(pk=answer["run"])
    assert (done.state, done.pool_id) == ("done", pooled.pk)
    assert services.labels(Judge.objects.get(pk=answer["judge"]["id"])) == MAJORITY


def test_a_bad_jury_request_is_a_400_naming_the_field(
    campaign: Campaign,
    pooled: PoolVersion,
    members: list[Judge],
    api_client_for: Any,
    admin_user: Any,
) -> None:
    elsewhere = campaign_create(name="Another campaign", scale=campaign.scale)
    stranger = services.judge_create(
        campaign=elsewhere, name="stranger", kind=JudgeKind.IMPORTED, model="m"
    )
    ids = [m.pk for m in members]
    url = f"/api/v1/campaigns/{campaign.pk}/juries/"
    cases: list[tuple[dict[str, Any], str]] = [
        ({"members": ids[:1], "method": "majority"}, "members"),
        ({"members": ids, "method": "vote"}, "method"),
        ({"members": ids, "method": "defer"}, "human"),
        ({"members": [*ids, stranger.pk], "method": "majority"}, "members"),
        ({"members": [*ids, 999_999], "method": "majority"}, "members"),
        ({"members": ids, "method": "defer", "human": 7}, "human"),
        ({"members": ids, "method": "majority", "pool": 9}, "pool"),
    ]
    client = api_client_for(admin_user)
    for extra, field in cases:
        response = client.post(url, {"name": "panel", **extra}, format="json")
        assert response.status_code == 400, (extra, response.content)
        assert [p.get("location") for p in response.json()["problems"]] == [field], extra
    assert not Judge.objects.filter(name="panel").exists()


def test_the_jury_command_makes_a_jury_and_runs_it_here(
    campaign: Campaign, pooled: PoolVersion, members: list[Judge], human: QrelsVersion
) -> None:
    out = StringIO()
    ids = ",".join(str(m.pk) for m in members)
    call_command(
        "jury",
        str(campaign.pk),
        "panel",
        "--members",
        ids,
        "--method",
        "defer",
        "--human",
        str(human.number),
        stdout=out,
    )
    jury = Judge.objects.get(campaign=campaign, name="panel")
    assert services.labels(jury) == DEFERRED
    text = out.getvalue()
    assert "panel v1 (jury:defer(3)) over pool v1: 7 of 12 documents graded" in text
    assert "4 deferred to people" in text and "2 of the jury's labels are people's" in text
    assert "1 no member has graded yet" in text
