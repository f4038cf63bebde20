"""Bad request parameters and bodies answer 400 in the one error shape, naming the parameter and
the problem; never a 500, and nothing is stored (issue 11)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from judging.assessments import queue
from judging.assessments.models import Judgment, QrelsVersion
from judging.campaigns.models import Document
from judging.evaluation.models import BiasReport
from judging.pools.models import PoolVersion
from judging.workflows.pools import pool_requested
from judging.workflows.qrels import qrels_imported
from judging.workflows.runs import run_submitted
from tests.knobs import override_knobs
from tests.test_annotator_pages import _lease, _page, judging_campaign  # noqa: F401
from tests.test_api_errors import assert_shape

# The tests of bias reports read qrels version 1's default report (``world``): they are marked
# ``follow_ups``; the others never read a report, and ``world`` computes none for them.
pytestmark = pytest.mark.django_db

RUNS = {
    "alpha": {"401": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "402": {"d5": 2.0, "d4": 1.0}},
    "beta": {"401": {"d3": 3.0, "d9": 2.0, "d1": 1.0}, "402": {"d4": 2.0, "d8": 1.0}},
}
QRELS = "401 0 d1 1\n401 0 d2 0\n401 0 d3 2\n402 0 d4 1\n402 0 d5 0\n402 0 d8 1\n"


@pytest.fixture
def world(campaign: Any, researcher: Any, as_committed: Any) -> Any:
    """Two runs, qrels version 1 (every run evaluated; its default bias report computed for
    the tests marked ``follow_ups``) and a built pool version 1."""
    for tag, results in RUNS.items():
        run_submitted(campaign=campaign, owner=researcher, tag=tag, results=results)
    docids = sorted({d for run in RUNS.values() for ranked in run.values() for d in ranked})
    Document.objects.bulk_create(Document(campaign=campaign, docid=d, text=d) for d in docids)
    with as_committed():
        qrels_imported(campaign=campaign, data=QRELS.encode())
    with as_committed():
        pool_requested(campaign=campaign)
    return campaign


def client_for(api_client_for: Any, user: Any) -> Any:
    client = api_client_for(user)
    client.raise_request_exception = False  # a 500 is answered, not raised, as in production
    return client


def problem_at(response: Any, location: str) -> str:
    body = assert_shape(response, 400, "invalid_input")
    messages = [p["message"] for p in body["problems"] if p.get("location") == location]
    assert messages, body
    return messages[0]


# --- paging ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "location"),
    [
        ("limit=1e20", "limit"),
        ("limit=99999999999999999999999", "limit"),
        ("limit=-1", "limit"),
        ("limit=0", "limit"),
        ("limit=abc", "limit"),
        ("offset=abc", "offset"),
        ("offset=-5", "offset"),
        ("offset=1.5", "offset"),
    ],
)
def test_a_bad_limit_or_offset_is_400_naming_it(
    campaign: Any, api_client_for: Any, researcher: Any, query: str, location: str
) -> None:
    r = client_for(api_client_for, researcher).get(f"/api/v1/campaigns/?{query}")
    assert problem_at(r, location)


@override_knobs(max_page_size=50)
def test_a_limit_over_the_maximum_page_size_is_400_saying_the_maximum(
    campaign: Any, api_client_for: Any, researcher: Any
) -> None:
    client = client_for(api_client_for, researcher)
    assert "at most 50" in problem_at(client.get("/api/v1/campaigns/?limit=51"), "limit")
    assert client.get("/api/v1/campaigns/?limit=50").status_code == 200


def test_a_good_limit_and_a_far_offset_page_as_before(
    campaign: Any, api_client_for: Any, researcher: Any
) -> None:
    client = client_for(api_client_for, researcher)
    body = client.get(f"/api/v1/campaigns/{campaign.pk}/topics/?limit=2&offset=1").json()
    assert [t["qid"] for t in body["results"]] == ["402", "403"] and body["count"] == 3
    far = client.get("/api/v1/campaigns/?offset=99999999999999999")
    assert far.status_code == 200 and far.json()["results"] == []
    assert client.get("/api/v1/campaigns/?limit=&offset=").status_code == 200  # empty: default


def test_the_schema_states_the_bounds_of_limit_and_offset(admin_user: Any) -> None:
    client = Client()
    client.force_login(admin_user)
    schema = client.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    params = {p["name"]: p for p in schema["paths"]["/api/v1/campaigns/"]["get"]["parameters"]}
    assert params["limit"]["schema"]["minimum"] == 1
    assert params["limit"]["schema"]["maximum"] == 1000
    assert params["offset"]["schema"]["minimum"] == 0


# --- query parameters -----------------------------------------------------------------------


def test_a_pool_diff_against_a_version_that_is_not_a_number_is_400(
    world: Any, api_client_for: Any, researcher: Any
) -> None:
    version = PoolVersion.objects.get(campaign=world)
    client = client_for(api_client_for, researcher)
    for against in ("null", "1.0", "99999999999999999999999"):
        r = client.get(f"/api/v1/pools/{version.pk}/diff/?against={against}")
        assert problem_at(r, "against"), against
    assert client.get(f"/api/v1/pools/{version.pk}/diff/?against=7").status_code == 404
    assert client.get(f"/api/v1/pools/{version.pk}/diff/?against=1").status_code == 200


def test_significance_of_an_unknown_measure_is_400_naming_the_known_ones(
    world: Any, api_client_for: Any, researcher: Any
) -> None:
    client = client_for(api_client_for, researcher)
    for measure in ("bogus", "P@20"):  # P@20 is a measure, not one this campaign computes
        r = client.get(f"/api/v1/campaigns/{world.pk}/significance/?measure={measure}")
        message = problem_at(r, "measure")
        assert "nDCG@5" in message and "AP" in message, message
    ok = client.get(f"/api/v1/campaigns/{world.pk}/significance/?measure=map")  # trec_eval name
    assert ok.status_code == 200 and ok.json()["measure"] == "AP"


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/campaigns/{c}/leaderboard/?qrels=abc",
        "/api/v1/campaigns/{c}/significance/?qrels=-1",
        "/api/v1/campaigns/{c}/bias/?qrels=1e3",
        "/api/v1/runs/{r}/evaluations/?qrels=x",
    ],
)
def test_a_qrels_version_that_is_not_a_number_is_400(
    world: Any, api_client_for: Any, admin_user: Any, url: str
) -> None:
    run = world.runs.get(tag="alpha")
    r = client_for(api_client_for, admin_user).get(url.format(c=world.pk, r=run.pk))
    assert problem_at(r, "qrels")


def test_a_qrels_version_the_campaign_does_not_have_is_still_404(
    world: Any, api_client_for: Any, researcher: Any
) -> None:
    r = client_for(api_client_for, researcher).get(
        f"/api/v1/campaigns/{world.pk}/leaderboard/?qrels=9"
    )
    assert_shape(r, 404, "not_found")


def test_an_unknown_leaderboard_format_is_400(
    world: Any, api_client_for: Any, researcher: Any
) -> None:
    r = client_for(api_client_for, researcher).get(
        f"/api/v1/campaigns/{world.pk}/leaderboard/?format=xml"
    )
    assert "json, csv" in problem_at(r, "format")


def test_the_judgments_list_filter_must_be_a_campaign_id(
    campaign: Any, api_client_for: Any, annotator: Any
) -> None:
    client = client_for(api_client_for, annotator)
    for value in ("abc", "99999999999999999999999", "-1"):
        assert problem_at(client.get(f"/api/v1/judgments/?campaign={value}"), "campaign")
    assert client.get(f"/api/v1/judgments/?campaign={campaign.pk}").status_code == 200


def test_the_relevance_filter_of_disagreements_reads_false_as_false(
    campaign: Any, api_client_for: Any, admin_user: Any
) -> None:
    client = client_for(api_client_for, admin_user)
    url = f"/api/v1/campaigns/{campaign.pk}/disagreements/"
    for value in ("false", "0", "true", "1", ""):
        assert client.get(f"{url}?relevance={value}").status_code == 200, value
    assert problem_at(client.get(f"{url}?relevance=maybe"), "relevance")


def test_a_qrels_diff_against_an_overflowing_number_is_400(
    world: Any, api_client_for: Any, researcher: Any
) -> None:
    version = QrelsVersion.objects.get(campaign=world)
    r = client_for(api_client_for, researcher).get(
        f"/api/v1/qrels/{version.pk}/diff/?against=99999999999999999999999"
    )
    assert problem_at(r, "against")


# --- ids in URLs ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "url", "body"),
    [
        ("post", "/api/v1/leases/abc/renew/", None),
        ("delete", "/api/v1/leases/abc/", None),
        ("post", "/api/v1/leases/abc/judgment/", {"grade": 1}),
        ("post", "/api/v1/leases/1e3/judgment/", {"grade": 1}),
        ("post", "/api/v1/leases/99999999999999999999999/judgment/", {"grade": 1}),
        ("get", "/api/v1/leases/abc/", None),
        ("patch", "/api/v1/judgments/abc/", {"grade": 1}),
        ("get", "/api/v1/judgments/abc/", None),
    ],
)
def test_a_lease_or_judgment_id_that_is_not_a_number_is_400(
    campaign: Any, api_client_for: Any, annotator: Any, method: str, url: str, body: Any
) -> None:
    client = client_for(api_client_for, annotator)
    r = getattr(client, method)(url, body, format="json")
    assert "id" in problem_at(r, "id")


@pytest.mark.parametrize(
    "url", ["/api/v1/campaigns/abc/", "/api/v1/runs/x/", "/api/v1/pools/1e3/", "/api/v1/qrels/-1/"]
)
def test_every_object_id_in_a_url_is_checked_the_same_way(
    campaign: Any, api_client_for: Any, admin_user: Any, url: str
) -> None:
    assert problem_at(client_for(api_client_for, admin_user).get(url), "id")


def test_an_id_is_checked_after_the_credentials(campaign: Any) -> None:
    r = Client().get("/api/v1/leases/abc/")
    assert r.status_code == 401


# --- bodies ---------------------------------------------------------------------------------


@pytest.mark.parametrize("body", [True, [], "x", 3])
def test_a_publish_body_that_is_not_an_object_is_400_and_publishes_nothing(
    world: Any, api_client_for: Any, admin_user: Any, body: Any
) -> None:
    before = QrelsVersion.objects.count()
    r = client_for(api_client_for, admin_user).post(
        f"/api/v1/campaigns/{world.pk}/qrels/publish/", body, format="json"
    )
    assert_shape(r, 400, "invalid_input")
    assert QrelsVersion.objects.count() == before


def test_a_publish_note_with_a_nul_byte_is_400(
    world: Any, api_client_for: Any, admin_user: Any
) -> None:
    r = client_for(api_client_for, admin_user).post(
        f"/api/v1/campaigns/{world.pk}/qrels/publish/", {"note": "a\x00b"}, format="json"
    )
    assert problem_at(r, "note")


@pytest.mark.parametrize("what", ["topics", "documents", "qrels"])
@pytest.mark.parametrize("body", [True, [], "x"])
def test_an_import_body_that_is_not_an_object_is_400(
    campaign: Any, api_client_for: Any, admin_user: Any, what: str, body: Any
) -> None:
    r = client_for(api_client_for, admin_user).post(
        f"/api/v1/campaigns/{campaign.pk}/{what}/", body, format="json"
    )
    assert problem_at(r, "body")


@pytest.mark.parametrize("body", [True, [], "x", {"grade": "abc"}, {"grade": 3_000_000_000}])
def test_a_bad_judgment_body_is_400_and_records_nothing(
    world: Any, api_client_for: Any, annotator: Any, body: Any
) -> None:
    lease = queue.lease_next(campaign=world, annotator=annotator)
    assert lease is not None
    r = client_for(api_client_for, annotator).post(
        f"/api/v1/leases/{lease.pk}/judgment/", body, format="json"
    )
    assert_shape(r, 400, "invalid_input")
    assert Judgment.objects.count() == 0


@pytest.mark.follow_ups
def test_no_get_of_a_bias_report_stores_one_or_queues_a_task(
    world: Any, api_client_for: Any, researcher: Any, django_capture_on_commit_callbacks: Any
) -> None:
    client = client_for(api_client_for, researcher)
    web = Client()
    web.force_login(researcher)
    before = BiasReport.objects.count()
    with django_capture_on_commit_callbacks() as callbacks:
        for query in ("depth=7", "depth=8&measure=P@5", "kind=loo_group", "measure=nDCG@10"):
            assert client.get(f"/api/v1/campaigns/{world.pk}/bias/?{query}").status_code == 404
            assert web.get(f"/campaigns/{world.pk}/bias/?{query}").status_code == 200
    assert BiasReport.objects.count() == before and callbacks == []


# --- bias-report parameters and the allowance of new reports --------------------------------

BAD_BIAS = [
    ({"depth": "-5"}, "depth"),
    ({"depth": "0"}, "depth"),
    ({"depth": "3000000000"}, "depth"),
    ({"depth": "1001"}, "depth"),  # over POOLJUDGE_BIAS_MAX_DEPTH (1000)
    ({"depth": "abc"}, "depth"),
    ({"measure": "bogus"}, "measure"),
    ({"measure": "P@3000000000"}, "measure"),
    ({"measure": "P@" + "9" * 60}, "measure"),
    ({"measure": "P_5,10"}, "measure"),  # a list of measures, not one
    ({"kind": "loo_topic"}, "kind"),
    ({"qrels": "0"}, "qrels"),
]


@pytest.mark.follow_ups
@pytest.mark.parametrize(("params", "location"), BAD_BIAS)
def test_a_bad_bias_parameter_is_400_naming_it_on_get_and_post(
    world: Any, api_client_for: Any, researcher: Any, params: dict[str, str], location: str
) -> None:
    client = client_for(api_client_for, researcher)
    url = f"/api/v1/campaigns/{world.pk}/bias/"
    before = BiasReport.objects.count()
    assert problem_at(client.get(url, params), location)
    assert problem_at(client.post(url, params, format="json"), location)
    assert BiasReport.objects.count() == before


@pytest.mark.follow_ups
def test_the_campaigns_own_pool_depth_is_allowed_above_the_maximum(
    world: Any, api_client_for: Any, researcher: Any
) -> None:
    world.pool_depth = 2000
    world.save()
    client = client_for(api_client_for, researcher)
    url = f"/api/v1/campaigns/{world.pk}/bias/"
    assert client.post(url, {"depth": 2000}, format="json").status_code == 202
    assert problem_at(client.post(url, {"depth": 2001}, format="json"), "depth")


@pytest.mark.follow_ups
@override_knobs(bias_reports_per_hour=2)
def test_new_bias_reports_per_user_and_hour_are_limited_with_retry_after(
    world: Any, api_client_for: Any, researcher: Any, other_researcher: Any
) -> None:
    client = client_for(api_client_for, researcher)
    url = f"/api/v1/campaigns/{world.pk}/bias/"
    assert client.post(url, {"depth": 5}, format="json").status_code == 202
    assert client.post(url, {"depth": 6}, format="json").status_code == 202
    refused = client.post(url, {"depth": 7}, format="json")
    body = assert_shape(refused, 429, "throttled")
    assert "POOLJUDGE_BIAS_REPORTS_PER_HOUR" in body["detail"]
    assert 3500 <= int(refused["Retry-After"]) <= 3600
    assert not BiasReport.objects.filter(depth=7).exists()
    # a report already stored is not new: asking again, or reading it, is not refused
    assert client.post(url, {"depth": 5}, format="json").status_code == 202
    assert client.get(url, {"depth": 6}).status_code in (200, 202)
    # the default report (computed after the import, asked for by nobody) does not count, and
    # another user has their own allowance
    other = client_for(api_client_for, other_researcher)
    assert other.post(url, {"depth": 7}, format="json").status_code == 202


@pytest.mark.follow_ups
@override_knobs(bias_reports_per_hour=1)
def test_the_allowance_frees_up_an_hour_after_a_request(
    world: Any, api_client_for: Any, researcher: Any
) -> None:
    from datetime import timedelta

    from django.utils import timezone

    client = client_for(api_client_for, researcher)
    url = f"/api/v1/campaigns/{world.pk}/bias/"
    assert client.post(url, {"depth": 5}, format="json").status_code == 202
    assert client.post(url, {"depth": 6}, format="json").status_code == 429
    BiasReport.objects.filter(depth=5).update(created_at=timezone.now() - timedelta(minutes=61))
    assert client.post(url, {"depth": 6}, format="json").status_code == 202


@pytest.mark.follow_ups
@override_knobs(bias_reports_per_hour=1)
def test_the_compute_button_is_limited_too_and_says_when_to_try_again(
    world: Any, researcher: Any
) -> None:
    web = Client()
    web.force_login(researcher)
    url = f"/campaigns/{world.pk}/bias/compute/"
    first = web.post(url, {"depth": "5", "measure": "AP", "kind": "loo_run"}, follow=True)
    assert first.status_code == 200 and BiasReport.objects.filter(depth=5).exists()
    second = web.post(url, {"depth": "6", "measure": "AP", "kind": "loo_run"}, follow=True)
    assert second.status_code == 200
    assert "Try again in" in second.content.decode()
    assert not BiasReport.objects.filter(depth=6).exists()


@pytest.mark.follow_ups
def test_the_compute_button_with_a_bad_depth_says_so_and_stores_nothing(
    world: Any, researcher: Any
) -> None:
    web = Client()
    web.force_login(researcher)
    before = BiasReport.objects.count()
    for depth in ("abc", "-5", "3000000000"):
        r = web.post(f"/campaigns/{world.pk}/bias/compute/", {"depth": depth}, follow=True)
        assert r.status_code == 200 and "whole number" in r.content.decode(), depth
    assert BiasReport.objects.count() == before


# --- pool strategy parameters ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("strategy", "params", "named"),
    [
        ("depth", {"per_group": "abc"}, "per_group"),
        ("depth", {"per_group": 0}, "per_group"),
        ("depth", {"per_group": True}, "per_group"),
        ("depth", {"per_group": 1.5}, "per_group"),
        ("depth", {"groups": "abc"}, "groups"),
        ("depth", {"nonsense": 1}, "nonsense"),
        ("rrf", {"k": "abc"}, "k"),
        ("rrf", {"k": -1}, "k"),
        ("thompson", {"seed": "x"}, "seed"),
        ("thompson", {"seed": -1}, "seed"),
        ("hedge", {"beta": "abc"}, "beta"),
        ("hedge", {"beta": 2}, "beta"),
        ("stratified", {"strata": "abc"}, "strata"),
        ("stratified", {"strata": [[10, "x"]]}, "rate"),
        ("stratified", {"strata": [[10]]}, "strata"),
        ("stratified", {"strata": [["a", 0.5]]}, "depth"),
        ("rank", {"k": 1}, "k"),
    ],
)
def test_bad_pool_strategy_parameters_are_400_naming_them_and_queue_nothing(
    world: Any, api_client_for: Any, admin_user: Any, strategy: str, params: Any, named: str
) -> None:
    before = PoolVersion.objects.count()
    r = client_for(api_client_for, admin_user).post(
        f"/api/v1/campaigns/{world.pk}/pools/",
        {"strategy": strategy, "params": params},
        format="json",
    )
    assert named in problem_at(r, "params")
    assert PoolVersion.objects.count() == before


def test_good_pool_strategy_parameters_are_still_accepted(
    world: Any, api_client_for: Any, admin_user: Any, as_committed: Any
) -> None:
    client = client_for(api_client_for, admin_user)
    url = f"/api/v1/campaigns/{world.pk}/pools/"
    with as_committed():
        r = client.post(url, {"strategy": "depth", "params": {"per_group": 1}}, format="json")
    assert r.status_code == 202, r.json()
    with as_committed():
        r = client.post(
            url,
            {"strategy": "stratified", "params": {"strata": [[2, 1.0], [5, 0.5]]}},
            format="json",
        )
    assert r.status_code == 202, r.json()
    assert PoolVersion.objects.filter(state="built").count() == 3


# --- campaign scale, threshold and name -----------------------------------------------------

OK_SCALE = [
    {"grade": 0, "label": "No"},
    {"grade": 1, "label": "Some"},
    {"grade": 2, "label": "Yes"},
]


@pytest.mark.parametrize(
    ("body", "location"),
    [
        ({"scale": [{"label": "x"}]}, "scale"),  # one grade (and that one without a grade)
        ({"scale": [{"label": "x"}, {"grade": 1, "label": "y"}]}, "scale[0].grade"),
        ({"scale": [{"grade": 0, "label": "x"}, {"grade": 1}]}, "scale[1].label"),
        ({"scale": [{"grade": 0, "label": "x"}, {"grade": "1", "label": "y"}]}, "scale[1].grade"),
        ({"scale": [{"grade": 0, "label": "x"}, {"grade": True, "label": "y"}]}, "scale[1].grade"),
        ({"scale": [{"grade": 0, "label": "x"}, {"grade": 1.5, "label": "y"}]}, "scale[1].grade"),
        ({"scale": [{"grade": 0, "label": "a"}, {"grade": 0, "label": "b"}]}, "scale[1].grade"),
        ({"scale": [{"grade": 0, "label": "a"}, {"grade": 1, "label": "A"}]}, "scale[1].label"),
        ({"scale": [{"grade": 0, "label": "a"}, {"grade": 1, "label": " "}]}, "scale[1].label"),
        (
            {"scale": [{"grade": 0, "label": "a"}, {"grade": 3_000_000_000, "label": "b"}]},
            "scale[1].grade",
        ),
        ({"scale": [{"grade": -1, "label": "a"}, {"grade": 1, "label": "b"}]}, "scale[0].grade"),
        ({"scale": [{"grade": 0, "label": "a"}, {"grade": 1, "label": "b\nc"}]}, "scale[1].label"),
        ({"scale": [{"grade": 0, "label": "a"}, {"grade": 1, "label": "b", "x": 1}]}, "scale[1].x"),
        ({"scale": [{"grade": 0, "label": "a"}, 3]}, "scale[1]"),
        ({"scale": {"grade": 0}}, "scale"),
        ({"relevance_threshold": 99}, "relevance_threshold"),
        ({"relevance_threshold": 0}, "relevance_threshold"),  # the lowest grade: all relevant
        ({"relevance_threshold": 3_000_000_000}, "relevance_threshold"),
        (
            {"scale": [{"grade": 0, "label": "a"}, {"grade": 5, "label": "b"}]},
            "relevance_threshold",
        ),
        ({"name": "bad\x07name"}, "name"),
        ({"name": "two\nlines"}, "name"),
        ({"name": "tab\there"}, "name"),
    ],
)
def test_a_bad_campaign_edit_is_400_naming_the_element_and_stores_nothing(
    campaign: Any, api_client_for: Any, admin_user: Any, body: dict[str, Any], location: str
) -> None:
    from judging.campaigns.models import Campaign

    before = Campaign.objects.values().get(pk=campaign.pk)
    client = client_for(api_client_for, admin_user)
    assert problem_at(
        client.patch(f"/api/v1/campaigns/{campaign.pk}/", body, format="json"), location
    )
    assert Campaign.objects.values().get(pk=campaign.pk) == before
    create = {"name": "new", "scale": OK_SCALE, **body}
    assert problem_at(client.post("/api/v1/campaigns/", create, format="json"), location)
    assert Campaign.objects.count() == 1


def test_the_services_check_the_scale_the_same_way(campaign: Any) -> None:
    from judging.campaigns.services import campaign_create, campaign_update
    from judging.core.errors import InvalidInput

    with pytest.raises(InvalidInput) as caught:
        campaign_update(campaign=campaign, data={"scale": [{"label": "x"}, {"grade": 1}]})
    assert {p.location for p in caught.value.problems} == {"scale[0].grade", "scale[1].label"}
    with pytest.raises(InvalidInput) as caught:
        campaign_create(name="c\x1b[31m", scale=OK_SCALE)
    assert [p.location for p in caught.value.problems] == ["name"]


def test_the_admin_form_refuses_a_bad_scale_and_a_control_character_in_the_name(
    campaign: Any, admin_user: Any
) -> None:
    from django.contrib.admin.sites import site
    from django.test import RequestFactory

    from judging.campaigns.models import Campaign

    admin = site._registry[Campaign]
    request = RequestFactory().post("/")
    request.user = admin_user
    form_class = admin.get_form(request, campaign)
    unbound = form_class(instance=campaign)
    data = {name: unbound[name].value() for name in form_class.base_fields}
    data["pool_budget"] = ""
    data["name"] = "x\x07y"
    data["scale"] = '[{"grade": 0, "label": "a"}, {"grade": 0, "label": "b"}]'
    form = form_class(data, instance=campaign)
    assert not form.is_valid()
    assert "scale[1].grade" in str(form.errors["scale"])
    assert "name" in form.errors


def test_a_valid_scale_change_is_saved(campaign: Any, api_client_for: Any, admin_user: Any) -> None:
    scale = [*OK_SCALE, {"grade": 3, "label": "Perfect"}]
    r = client_for(api_client_for, admin_user).patch(
        f"/api/v1/campaigns/{campaign.pk}/",
        {"scale": scale, "relevance_threshold": 2},
        format="json",
    )
    assert r.status_code == 200, r.json()
    campaign.refresh_from_db()
    assert campaign.grade_values() == [0, 1, 2, 3] and campaign.relevance_threshold == 2


def test_a_bad_scale_already_stored_does_not_break_reading_and_is_reported_by_check(
    campaign: Any, api_client_for: Any, admin_user: Any, researcher: Any, annotator: Any
) -> None:
    from django.core.management import call_command
    from django.core.management.base import SystemCheckError

    from judging.campaigns.checks import check_campaign_scales
    from judging.campaigns.models import Campaign

    Campaign.objects.filter(pk=campaign.pk).update(scale=[{"label": "x"}], relevance_threshold=99)
    for user in (admin_user, researcher, annotator):
        client = client_for(api_client_for, user)
        r = client.get("/api/v1/campaigns/")
        assert r.status_code == 200 and r.json()["results"][0]["scale"] == [{"label": "x"}]
        assert client.get(f"/api/v1/campaigns/{campaign.pk}/").status_code == 200
    web = Client()
    web.force_login(annotator)
    assert web.get("/annotate/").status_code == 200
    (warning,) = check_campaign_scales(databases=["default"])
    assert warning.id == "campaigns.W001" and "scale[0].grade" in warning.msg
    with pytest.raises(SystemCheckError):
        call_command("check", databases=["default"], fail_level="WARNING")
    Campaign.objects.filter(pk=campaign.pk).update(scale=OK_SCALE, relevance_threshold=1)
    assert check_campaign_scales(databases=["default"]) == []


# --- the web judging form -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("grade", "abc"),
        ("grade", ""),
        ("grade", "2.5"),
        ("grade", "99999999999999999999999999"),
        ("lease", "x"),
        ("active_seconds", "nan"),
        ("active_seconds", "abc"),
    ],
)
def test_a_bad_judging_form_shows_an_error_and_records_or_skips_nothing(
    judging_campaign: Any,  # noqa: F811  (the fixture of test_annotator_pages)
    annotator: Any,
    field: str,
    value: str,
) -> None:
    from judging.assessments.models import Lease

    web = Client()
    web.force_login(annotator)
    url = f"/annotate/{judging_campaign.pk}/"
    lease = _lease(_page(web, url))
    form = {"lease": lease, "grade": "2", "active_seconds": "1", field: value}
    r = web.post(f"{url}submit/", form, follow=True)
    page = r.content.decode()
    assert r.status_code == 200 and "nothing was recorded" in page and field in page
    assert 'id="docid">D1<' in page  # the same document, still leased to this annotator
    assert Judgment.objects.count() == 0
    assert Lease.objects.get(pk=lease).state == "active"


def test_skip_and_renew_with_a_bad_lease_say_so_and_release_nothing(
    judging_campaign: Any,  # noqa: F811
    annotator: Any,
) -> None:
    from judging.assessments.models import Lease

    web = Client()
    web.force_login(annotator)
    url = f"/annotate/{judging_campaign.pk}/"
    lease = _lease(_page(web, url))
    page = web.post(f"{url}skip/", {"lease": "abc"}, follow=True).content.decode()
    assert "lease must be a whole number" in page and 'id="docid">D1<' in page
    assert Lease.objects.get(pk=lease).state == "active"
    renew = web.post(f"{url}renew/", {"lease": "abc"})
    assert renew.status_code == 400 and "whole number" in renew.json()["detail"]


def test_changing_an_earlier_grade_to_a_non_number_shows_an_error(
    judging_campaign: Any,  # noqa: F811
    annotator: Any,
) -> None:
    web = Client()
    web.force_login(annotator)
    url = f"/annotate/{judging_campaign.pk}/"
    web.post(f"{url}submit/", {"lease": _lease(_page(web, url)), "grade": "0"})
    judgment = Judgment.objects.get(annotator=annotator)
    back = f"{url}judged/{judgment.pk}/"
    page = web.post(back, {"grade": "x"}, follow=True).content.decode()
    assert "grade must be a whole number" in page
    judgment.refresh_from_db()
    assert judgment.grade == 0


def test_a_topic_filter_with_a_nul_byte_or_over_long_is_400(
    world: Any, api_client_for: Any, researcher: Any
) -> None:
    version = PoolVersion.objects.get(campaign=world)
    client = client_for(api_client_for, researcher)
    url = f"/api/v1/pools/{version.pk}/documents/"
    assert problem_at(client.get(f"{url}?topic=4%0001"), "topic")  # PostgreSQL: a 500 before
    assert problem_at(client.get(url, {"topic": "4" * 300}), "topic")
    body = client.get(url, {"topic": "401"}).json()
    assert body["count"] > 0 and {d["topic"] for d in body["results"]} == {"401"}


@pytest.mark.follow_ups
def test_the_bias_report_command_names_a_bad_parameter_without_a_traceback(world: Any) -> None:
    from django.core.management import call_command
    from django.core.management.base import CommandError

    for args, named in ((["--depth", "5000"], "depth"), (["--measure", "bogus"], "measure")):
        with pytest.raises(CommandError, match=named):
            call_command("bias_report", "--campaign", str(world.pk), *args)


def test_a_pool_budget_beyond_what_the_database_stores_is_400(
    world: Any, api_client_for: Any, admin_user: Any
) -> None:
    before = PoolVersion.objects.count()
    r = client_for(api_client_for, admin_user).post(
        f"/api/v1/campaigns/{world.pk}/pools/", {"budget": 3_000_000_000}, format="json"
    )
    assert problem_at(r, "budget")
    assert PoolVersion.objects.count() == before
