"""Nothing of another researcher's runs leaks: their tags and groups appear in no API answer or
page a researcher reads (counts are fine), a 409 on submission says nothing about their tags;
admins see every name and annotators see no system at all."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from judging.campaigns.models import Campaign, Run
from judging.pools.models import PoolVersion
from judging.workflows.qrels import qrels_imported

pytestmark = [pytest.mark.django_db, pytest.mark.follow_ups]

SECRET_RUN = "dense-v1"  # the demo's one run of group vector-co
SECRET_GROUP = "vector-co"


@pytest.fixture
def oscar(make_user: Callable[..., Any]) -> Any:
    return make_user("oscar-researcher", "researcher")


@pytest.fixture
def shared(
    demo: Campaign, oscar: Any, admin_user: Any, api_client_for: Any, as_committed: Any
) -> Any:
    """The demo with its dense-v1 run (the only one of group vector-co) given to Oscar, and the
    group-level bias report computed too."""
    Run.objects.filter(campaign=demo, tag=SECRET_RUN).update(owner=oscar)
    with as_committed():
        r = api_client_for(admin_user).post(
            f"/api/v1/campaigns/{demo.pk}/bias/", {"kind": "loo_group"}, format="json"
        )
    assert r.status_code == 202, r.content
    return demo


def rita(demo: Campaign) -> Any:
    """The demo researcher, who keeps the other five runs."""
    return Run.objects.filter(campaign=demo).exclude(tag=SECRET_RUN).first().owner  # type: ignore[union-attr]


def api_urls(campaign: Campaign) -> list[str]:
    pool = PoolVersion.objects.filter(campaign=campaign).built().first()
    assert pool is not None
    c = campaign.pk
    return [
        "/api/v1/pools/",
        f"/api/v1/pools/{pool.pk}/",
        f"/api/v1/pools/{pool.pk}/documents/",
        f"/api/v1/pools/{pool.pk}/diff/",
        f"/api/v1/campaigns/{c}/pools/",
        f"/api/v1/campaigns/{c}/runs/",
        "/api/v1/runs/",
        f"/api/v1/campaigns/{c}/leaderboard/",
        f"/api/v1/campaigns/{c}/leaderboard/?format=csv",
        f"/api/v1/campaigns/{c}/significance/",
        f"/api/v1/campaigns/{c}/bias/",
        f"/api/v1/campaigns/{c}/bias/?kind=loo_group",
    ]


def page_urls(campaign: Campaign) -> list[str]:
    c = campaign.pk
    return [
        "/",
        f"/campaigns/{c}/leaderboard/",
        f"/campaigns/{c}/leaderboard/?format=csv",
        f"/campaigns/{c}/compare/",
        f"/campaigns/{c}/bias/",
        f"/campaigns/{c}/bias/?kind=loo_group&measure=AP",
        f"/campaigns/{c}/bias/scatter.svg",
        f"/campaigns/{c}/bias/deltas.svg?kind=loo_group&measure=AP",
        f"/campaigns/{c}/bias/scatter.svg?kind=loo_group&measure=AP",
        f"/campaigns/{c}/bias/efficiency.svg",
    ]


def body(response: Any) -> str:
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content).decode()
    return response.content.decode()


def test_the_pool_api_lists_only_the_researchers_own_run_tags(
    shared: Campaign, api_client_for: Any
) -> None:
    client = api_client_for(rita(shared))
    pool = PoolVersion.objects.filter(campaign=shared).built().get()
    for url in (
        "/api/v1/pools/",
        f"/api/v1/pools/{pool.pk}/",
        f"/api/v1/campaigns/{shared.pk}/pools/",
    ):
        r = client.get(url)
        assert r.status_code == 200, url
        data = r.json()
        tags = (data["results"][0] if "results" in data else data)["run_tags"]
        assert SECRET_RUN not in tags, url
        assert "bm25-baseline" in tags, url
        # the count of pooled runs is still there: others' runs under an anonymous label
        assert len(tags) == len(pool.run_tags), url
        assert sum(t.startswith("anonymous run") for t in tags) == 1, url


def test_no_api_answer_names_another_researchers_run_or_group(
    shared: Campaign, api_client_for: Any
) -> None:
    client = api_client_for(rita(shared))
    for url in api_urls(shared):
        r = client.get(url)
        assert r.status_code == 200, (url, r.status_code)
        text = body(r)
        assert SECRET_RUN not in text, url
        assert SECRET_GROUP not in text, url


def test_no_page_names_another_researchers_run_or_group(shared: Campaign, client: Client) -> None:
    client.force_login(rita(shared))
    for url in page_urls(shared):
        r = client.get(url)
        assert r.status_code == 200, (url, r.status_code)
        text = body(r)
        assert SECRET_RUN not in text, url
        assert SECRET_GROUP not in text, url


def test_the_group_level_bias_report_names_the_researchers_own_groups(
    shared: Campaign, api_client_for: Any, admin_user: Any
) -> None:
    url = f"/api/v1/campaigns/{shared.pk}/bias/?kind=loo_group"
    groups = api_client_for(rita(shared)).get(url).json()["result"]["loo"]["groups"]
    assert "lexical-lab" in groups and "student-team" in groups
    anonymous = [g for g in groups if g.startswith("anonymous group")]
    assert len(anonymous) == 1 and groups[anonymous[0]]["runs"][0].startswith("anonymous run")
    admin_groups = api_client_for(admin_user).get(url).json()["result"]["loo"]["groups"]
    assert SECRET_GROUP in admin_groups and admin_groups[SECRET_GROUP]["runs"] == [SECRET_RUN]


def test_admins_see_every_tag_and_group(
    shared: Campaign, api_client_for: Any, admin_user: Any
) -> None:
    client = api_client_for(admin_user)
    assert SECRET_RUN in client.get("/api/v1/pools/").json()["results"][0]["run_tags"]
    assert SECRET_RUN in body(client.get(f"/api/v1/campaigns/{shared.pk}/leaderboard/"))


def test_annotators_read_no_pool(shared: Campaign, api_client_for: Any, annotator: Any) -> None:
    client = api_client_for(annotator)
    assert client.get("/api/v1/pools/").status_code == 403
    assert client.get(f"/api/v1/campaigns/{shared.pk}/pools/").status_code == 403


# --- a 409 on submission says nothing about other researchers' tags ---------------------------


def submit(client: Any, campaign: Campaign, tag: str, doc: str = "d1") -> Any:
    return client.post(
        f"/api/v1/campaigns/{campaign.pk}/runs/",
        {"tag": tag, "results": {"401": {doc: 1.0, "d2": 0.5}}},
        format="json",
    )


def test_a_tag_another_researcher_uses_is_accepted_as_if_it_were_free(
    campaign: Campaign,
    researcher: Any,
    other_researcher: Any,
    api_client_for: Any,
    as_committed: Any,
) -> None:
    oscar, rita_ = api_client_for(other_researcher), api_client_for(researcher)
    assert submit(oscar, campaign, "r2-secret-run").status_code == 201
    with as_committed():  # a qrels version, so that runs are evaluated as they arrive
        qrels_imported(campaign=campaign, data=b"401 0 d1 1\n401 0 d2 0\n", source="q")
    # Rita's probes: a taken tag and a free one get the same answer, naming only her run
    with as_committed():
        taken = submit(rita_, campaign, "r2-secret-run")
        free = submit(rita_, campaign, "never-used")
    assert taken.status_code == free.status_code == 201, taken.content
    assert taken.json()["tag"] == "r2-secret-run" and free.json()["tag"] == "never-used"
    assert set(taken.json()) == set(free.json())
    # her own views name the run as she did, nowhere with the campaign's suffix
    for url in (
        f"/api/v1/runs/{taken.json()['id']}/",
        f"/api/v1/runs/{taken.json()['id']}/evaluations/",
        "/api/v1/runs/",
        f"/api/v1/campaigns/{campaign.pk}/runs/",
        f"/api/v1/campaigns/{campaign.pk}/leaderboard/",
    ):
        r = rita_.get(url)
        assert r.status_code == 200, url
        assert "r2-secret-run~" not in r.content.decode(), url
    evaluations = rita_.get(f"/api/v1/runs/{taken.json()['id']}/evaluations/").json()
    assert evaluations["run"] == "r2-secret-run"
    assert evaluations["evaluations"][0]["result"]["run"] == "r2-secret-run"
    download = rita_.get(f"/api/v1/runs/{taken.json()['id']}/download/")
    text = b"".join(download.streaming_content).decode()
    assert text.split()[5] == "r2-secret-run" and "~" not in download["Content-Disposition"]
    # a second run of hers with that tag is the only 409, and it says it is hers
    again = submit(rita_, campaign, "r2-secret-run", doc="d3")
    assert again.status_code == 409
    assert again.json()["detail"].startswith("you already have a run tagged 'r2-secret-run'")
    # Oscar's own second submission under his tag is a 409 too; nothing else changed for him
    assert submit(oscar, campaign, "r2-secret-run", doc="d3").status_code == 409
    assert [r["tag"] for r in oscar.get("/api/v1/runs/").json()["results"]] == ["r2-secret-run"]


def test_admins_see_tags_that_tell_the_two_runs_apart(
    campaign: Campaign,
    researcher: Any,
    other_researcher: Any,
    admin_user: Any,
    api_client_for: Any,
) -> None:
    assert submit(api_client_for(other_researcher), campaign, "bm25").status_code == 201
    assert submit(api_client_for(researcher), campaign, "bm25").status_code == 201
    runs = api_client_for(admin_user).get(f"/api/v1/campaigns/{campaign.pk}/runs/").json()
    tags = {r["owner"]: r["tag"] for r in runs["results"]}
    assert tags == {"oscar-researcher": "bm25", "rita-researcher": "bm25~2"}
    assert set(Run.objects.filter(campaign=campaign).values_list("name", flat=True)) == {"bm25"}
