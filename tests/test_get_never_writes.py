"""Reading results never computes them: GET shows what is stored (or says it is not there yet),
and an explicit POST asks for a trec_eval evaluation or a bias report to be computed."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from judging.core.models import Job
from judging.evaluation.models import BiasReport, Evaluation, Reusability, measures_key
from judging.workflows.qrels import qrels_imported
from judging.workflows.runs import run_submitted

pytestmark = [pytest.mark.django_db, pytest.mark.follow_ups]

RUNS = {
    "alpha": {"401": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "402": {"d5": 2.0, "d4": 1.0}},
    "beta": {"401": {"d3": 3.0, "d9": 2.0, "d1": 1.0}, "402": {"d4": 2.0, "d8": 1.0}},
}
QRELS = "401 0 d1 1\n401 0 d2 0\n401 0 d3 2\n402 0 d4 1\n402 0 d5 0\n402 0 d8 1\n"


@pytest.fixture
def scored(campaign: Any, researcher: Any, other_researcher: Any, as_committed: Any) -> Any:
    """Two runs (alpha is rita's, beta oscar's) evaluated in honest mode on qrels version 1, and
    the default bias report of that version (AP, the campaign's pool depth, leave-one-run-out),
    all computed by the tasks the import sends after commit."""
    run_submitted(campaign=campaign, owner=researcher, tag="alpha", results=RUNS["alpha"])
    run_submitted(campaign=campaign, owner=other_researcher, tag="beta", results=RUNS["beta"])
    with as_committed():
        qrels_imported(campaign=campaign, data=QRELS.encode())
    return campaign


def web_client(user: Any, **kwargs: Any) -> Client:
    client = Client(**kwargs)
    client.force_login(user)
    return client


def writes_during(get: Any) -> tuple[Any, list[str]]:
    """The response of ``get()`` and the INSERT/UPDATE/DELETE statements it ran."""
    with CaptureQueriesContext(connection) as ctx:
        response = get()
    statements = [q["sql"] for q in ctx.captured_queries]
    return response, [
        sql for sql in statements if sql.lstrip().split(" ", 1)[0].upper() in WRITE_VERBS
    ]


WRITE_VERBS = {"INSERT", "UPDATE", "DELETE", "REPLACE"}


def stored() -> tuple[int, int, int]:
    return Evaluation.objects.count(), BiasReport.objects.count(), Reusability.objects.count()


def test_every_result_get_leaves_the_database_unchanged(
    scored: Any, api_client_for: Any, researcher: Any
) -> None:
    alpha = scored.runs.get(tag="alpha")
    version = scored.qrels_versions.get()
    api = api_client_for(researcher)
    web = web_client(researcher)
    gets = [
        (api, f"/api/v1/runs/{alpha.pk}/evaluations/", 200),
        (api, f"/api/v1/runs/{alpha.pk}/evaluations/?qrels=1&mode=trec_eval", 404),
        (api, f"/api/v1/campaigns/{scored.pk}/leaderboard/?mode=trec_eval", 200),
        (api, f"/api/v1/campaigns/{scored.pk}/leaderboard/?format=csv", 200),
        (api, f"/api/v1/campaigns/{scored.pk}/leaderboard/?sort=AP:judged&pooled=no", 200),
        (api, f"/api/v1/campaigns/{scored.pk}/leaderboard/export/?format=latex", 200),
        (api, f"/api/v1/campaigns/{scored.pk}/per-query/?format=trec", 200),
        (api, f"/api/v1/campaigns/{scored.pk}/significance/", 200),
        (api, f"/api/v1/campaigns/{scored.pk}/bias/", 200),
        (api, f"/api/v1/campaigns/{scored.pk}/bias/?measure=P@10&depth=5&kind=loo_group", 404),
        (api, f"/api/v1/campaigns/{scored.pk}/bias/?topics=401&measure=P@2", 404),
        (api, f"/api/v1/qrels/{version.pk}/reusability/", 200),
        (web, f"/runs/{alpha.pk}/", 200),
        (web, f"/runs/{alpha.pk}/?qrels=1&mode=trec_eval", 200),
        (web, f"/runs/{alpha.pk}/recall.svg?mode=trec_eval", 404),
        (web, f"/campaigns/{scored.pk}/leaderboard/", 200),
        (web, f"/campaigns/{scored.pk}/leaderboard/?sort=run&details=1", 200),
        (web, f"/campaigns/{scored.pk}/leaderboard/export/?format=markdown", 200),
        (web, f"/campaigns/{scored.pk}/per-query/?format=csv", 200),
        (web, f"/campaigns/{scored.pk}/compare/", 200),
        (web, f"/campaigns/{scored.pk}/bias/", 200),
        (web, f"/campaigns/{scored.pk}/bias/?measure=P@10&depth=5", 200),
        (web, f"/campaigns/{scored.pk}/bias/scatter.svg", 200),
        (web, f"/campaigns/{scored.pk}/bias/scatter.svg?measure=P@10", 404),
    ]
    before = stored()
    for client, url, status in gets:
        response, writes = writes_during(lambda: client.get(url))  # noqa: B023
        assert response.status_code == status, url
        assert writes == [], url
    assert stored() == before


def test_a_never_computed_evaluation_is_404_saying_how_to_compute_it(
    scored: Any, api_client_for: Any, researcher: Any
) -> None:
    alpha = scored.runs.get(tag="alpha")
    r = api_client_for(researcher).get(f"/api/v1/runs/{alpha.pk}/evaluations/?mode=trec_eval")
    assert r.status_code == 404
    detail = r.json()["detail"]
    assert "not computed yet" in detail and f"POST /api/v1/runs/{alpha.pk}/evaluations/" in detail


def test_posting_computes_the_trec_eval_evaluation_once(
    scored: Any, api_client_for: Any, researcher: Any, as_committed: Any
) -> None:
    alpha = scored.runs.get(tag="alpha")
    client = api_client_for(researcher)
    url = f"/api/v1/runs/{alpha.pk}/evaluations/"
    with as_committed():  # the task runs when the request's transaction commits
        r = client.post(url, {"qrels": 1, "mode": "trec_eval"}, format="json")
    assert r.status_code == 202
    assert r.json()["state"] == "pending" and r.json()["mode"] == "trec_eval"
    done = Evaluation.objects.get(run=alpha, mode="trec_eval")
    assert done.state == "done"
    with as_committed():
        again = client.post(url, {"mode": "trec_eval"}, format="json")  # latest = version 1
    assert again.status_code == 202 and again.json()["state"] == "done"
    assert Evaluation.objects.filter(run=alpha, mode="trec_eval").count() == 1
    assert Evaluation.objects.get(run=alpha, mode="trec_eval").computed_at == done.computed_at
    body = client.get(f"{url}?qrels=1&mode=trec_eval").json()
    (evaluation,) = body["evaluations"]
    assert evaluation["mode"] == "trec_eval" and evaluation["state"] == "done"


def test_an_evaluation_being_computed_answers_202_with_its_state(
    scored: Any, api_client_for: Any, researcher: Any
) -> None:
    alpha = scored.runs.get(tag="alpha")
    Evaluation.objects.create(
        run=alpha,
        qrels=scored.qrels_versions.get(),
        mode="trec_eval",
        measures=scored.measures,
        measures_key=measures_key(scored.measures),
        job=Job.objects.create(kind="evaluation", key="evaluate_run"),
    )
    r = api_client_for(researcher).get(f"/api/v1/runs/{alpha.pk}/evaluations/?mode=trec_eval")
    assert r.status_code == 202
    assert r.json() == {"state": "pending", "qrels_version": 1, "mode": "trec_eval"}


def test_posting_computes_a_bias_report_and_get_reads_it_anonymised(
    scored: Any, api_client_for: Any, researcher: Any, as_committed: Any
) -> None:
    client = api_client_for(researcher)
    url = f"/api/v1/campaigns/{scored.pk}/bias/"
    missing = client.get(f"{url}?measure=P@10&depth=5")
    assert missing.status_code == 404 and f"POST {url}" in missing.json()["detail"]
    with as_committed():
        r = client.post(url, {"measure": "P@10", "depth": 5}, format="json")
    assert r.status_code == 202
    assert (r.json()["measure"], r.json()["depth"], r.json()["kind"]) == ("P@10", 5, "loo_run")
    assert BiasReport.objects.filter(campaign=scored, measure="P@10").count() == 1
    body = client.get(f"{url}?measure=P@10&depth=5").json()
    assert body["state"] == "done"
    text = json.dumps(body["result"])
    assert "alpha" in text and "beta" not in text
    assert f"anonymous run #{scored.runs.get(tag='beta').pk}" in text


def test_a_bias_report_being_computed_answers_202_with_its_state(
    scored: Any, api_client_for: Any, researcher: Any
) -> None:
    BiasReport.objects.create(
        campaign=scored,
        qrels=scored.qrels_versions.get(),
        measure="P@10",
        depth=scored.pool_depth,
        job=Job.objects.create(kind="bias_report", key="bias"),
    )
    r = api_client_for(researcher).get(f"/api/v1/campaigns/{scored.pk}/bias/?measure=P@10")
    assert r.status_code == 202 and r.json()["state"] == "pending"
    assert "result" not in r.json()


def test_bad_parameters_of_a_compute_request_are_400(
    scored: Any, api_client_for: Any, researcher: Any
) -> None:
    client = api_client_for(researcher)
    alpha = scored.runs.get(tag="alpha")
    assert client.post(f"/api/v1/runs/{alpha.pk}/evaluations/", {"mode": "x"}).status_code == 400
    bias = f"/api/v1/campaigns/{scored.pk}/bias/"
    assert client.post(bias, {"measure": "nonsense"}, format="json").status_code == 400
    assert client.post(bias, {"qrels": 9}, format="json").status_code == 404
    assert stored() == (2, 2, 1)  # AP and the headline measure's bias reports, from publishing


def test_annotators_may_not_ask_for_computations(
    scored: Any, api_client_for: Any, annotator: Any
) -> None:
    client = api_client_for(annotator)
    alpha = scored.runs.get(tag="alpha")
    before = stored()
    assert client.post(f"/api/v1/runs/{alpha.pk}/evaluations/", {}).status_code == 403
    assert client.post(f"/api/v1/campaigns/{scored.pk}/bias/", {}).status_code == 403
    web = web_client(annotator)
    assert web.post(f"/runs/{alpha.pk}/evaluate/", {"mode": "trec_eval"}).status_code == 403
    assert web.post(f"/campaigns/{scored.pk}/bias/compute/", {}).status_code == 403
    assert stored() == before


def test_a_researcher_cannot_compute_on_a_run_they_cannot_see(
    scored: Any, api_client_for: Any, researcher: Any
) -> None:
    beta = scored.runs.get(tag="beta")
    before = stored()
    r = api_client_for(researcher).post(
        f"/api/v1/runs/{beta.pk}/evaluations/", {"mode": "trec_eval"}, format="json"
    )
    assert r.status_code == 404
    web = web_client(researcher)
    assert web.post(f"/runs/{beta.pk}/evaluate/", {"mode": "trec_eval"}).status_code == 404
    assert stored() == before


def test_the_run_page_offers_to_compute_and_its_button_computes(
    scored: Any, researcher: Any, as_committed: Any
) -> None:
    alpha = scored.runs.get(tag="alpha")
    web = web_client(researcher)
    page = web.get(f"/runs/{alpha.pk}/?qrels=1&mode=trec_eval").content.decode()
    assert "is not computed yet" in page and 'action="/runs/' in page and "Compute" in page
    with as_committed():
        r = web.post(f"/runs/{alpha.pk}/evaluate/", {"qrels": "1", "mode": "trec_eval"})
    assert r.status_code == 302 and r["Location"] == f"/runs/{alpha.pk}/?qrels=1&mode=trec_eval"
    assert Evaluation.objects.get(run=alpha, mode="trec_eval").state == "done"
    page = web.get(r["Location"]).content.decode()
    assert 'id="aggregates"' in page and "trec_eval mode" in page


def test_the_bias_page_offers_to_compute_and_its_button_computes(
    scored: Any, researcher: Any, as_committed: Any
) -> None:
    web = web_client(researcher)
    page = web.get(f"/campaigns/{scored.pk}/bias/?measure=P@10&depth=3").content.decode()
    assert 'id="not-computed"' in page and "Compute" in page
    with as_committed():
        r = web.post(
            f"/campaigns/{scored.pk}/bias/compute/",
            {"qrels": "1", "measure": "P@10", "depth": "3", "kind": "loo_run"},
        )
    assert r.status_code == 302
    assert r["Location"] == (
        f"/campaigns/{scored.pk}/bias/?qrels=1&measure=P%4010&depth=3&kind=loo_run"
    )
    assert BiasReport.objects.get(campaign=scored, measure="P@10").state == "done"
    page = web.get(r["Location"]).content.decode()
    beta = scored.runs.get(tag="beta")
    assert 'id="coverage"' in page and f"anonymous run #{beta.pk}" in page
    assert "<td>beta</td>" not in page


def test_the_compute_buttons_need_the_csrf_token(scored: Any, researcher: Any) -> None:
    alpha = scored.runs.get(tag="alpha")
    web = web_client(researcher, enforce_csrf_checks=True)
    assert web.post(f"/runs/{alpha.pk}/evaluate/", {"mode": "trec_eval"}).status_code == 403
    assert web.post(f"/campaigns/{scored.pk}/bias/compute/", {}).status_code == 403
    assert stored() == (2, 2, 1)  # AP and the headline measure's bias reports, from publishing
