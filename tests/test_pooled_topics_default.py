"""A collection imported with inferred pooling remembers what was pooled (issue 29, point 9): the
topics the pooling was inferred on and the depth it found. The bias page, the bias API and the
reusability report then analyse those topics at that depth by default (explicit parameters still
win: ``topics=all`` for every topic), and the page says which topics and depth it uses.

A synthetic collection: topics 1-4, pooled at depth 2 from runs a and b on topics 3 and 4 only;
topics 1 and 2 were judged elsewhere (documents none of the runs retrieved, and a deep one), as
Robust 2003's 50 old topics were judged in earlier years. Robust 2003 itself when
``../shared/data`` is there."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from judging.campaigns.models import Campaign
from judging.core.errors import InvalidInput
from judging.evaluation.bias import bias_params, topic_filter
from judging.evaluation.models import BiasReport, Reusability
from judging.evaluation.reusability import reusability_compute
from judging.workflows.collections import NamedFile, collection_imported
from tests._shared_data import needs_shared_data

pytestmark = [pytest.mark.django_db, pytest.mark.follow_ups]

TOPICS = ("1", "2", "3", "4")


def _run(tag: str) -> bytes:
    return "".join(
        f"{q} Q0 {tag}{q}-{i} {i + 1} {10 - i} {tag}\n" for q in TOPICS for i in range(5)
    ).encode()


def _qrels() -> bytes:
    lines = []
    for q in ("3", "4"):  # pooled here: the top 2 of a and b judged (the first relevant)
        for tag in ("a", "b"):
            lines += [f"{q} 0 {tag}{q}-0 1", f"{q} 0 {tag}{q}-1 0"]
    for q in ("1", "2"):  # judged elsewhere: documents no run retrieved, and a's fourth
        lines += [f"{q} 0 old{q}-0 1", f"{q} 0 old{q}-1 0", f"{q} 0 a{q}-3 1"]
    return ("\n".join(lines) + "\n").encode()


def _import(**extra: Any) -> Campaign:
    collection_imported(
        name="pooled-subset",
        measures=["AP", "P@10"],
        qrels=NamedFile("qrels.txt", _qrels()),
        runs=[NamedFile(f"input.{t}", _run(t)) for t in ("a", "b", "c")],
        **extra,
    )
    return Campaign.objects.get(name="pooled-subset")


@pytest.fixture
def imported(as_committed: Callable[[], Any]) -> Campaign:
    """The collection, its pooling inferred on topics 3-4, and what the import computes after
    commit (evaluations, the default bias and reusability reports)."""
    with as_committed():
        return _import(infer_topics=["3", "4"])


def _signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _scope(html: str) -> str:
    found = re.search(r'<p[^>]*id="analysis-scope"[^>]*>(.*?)</p>', html, re.S)
    assert found is not None, "the page does not say what it analyses"
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", found.group(1))).strip()


def test_the_import_stores_the_pooled_topics_and_the_inferred_depth(imported: Campaign) -> None:
    assert imported.pooled_topics == "3-4" and imported.pool_depth == 2
    assert set(imported.runs.values_list("tag", "pooled")) == {
        ("a", True),
        ("b", True),
        ("c", False),
    }
    # without --infer-topics the pooling is inferred on every topic: nothing to restrict
    other = _import_plan_of_every_topic()
    assert other.pooled_topics == ""


def _import_plan_of_every_topic() -> Any:
    plan = collection_imported(
        name="every-topic",
        qrels=NamedFile("qrels.txt", _qrels()),
        runs=[NamedFile(f"input.{t}", _run(t)) for t in ("a", "b")],
        dry_run=True,
    )
    return plan


def test_the_default_bias_report_analyses_the_pooled_topics_at_the_pool_depth(
    imported: Campaign,
) -> None:
    keys = set(BiasReport.objects.filter(campaign=imported).values_list("topics", "depth"))
    assert keys == {("3-4", 2)}  # AP and the headline P@10, each once
    for report in BiasReport.objects.filter(campaign=imported):
        assert report.state == "done", report.error
        assert report.result["topics"]["analysed"] == ["3", "4"]
        assert report.result["loo"]["topics"] == ["3", "4"]
    params = bias_params(imported, measure="AP", depth=None, kind="loo_run", topics=None)
    assert (params.topics, params.depth, params.topic_ids) == ("3-4", 2, ["3", "4"])
    # explicit parameters win; "all" is every topic (stored as the empty spec)
    assert topic_filter(imported, "all") == ("", list(TOPICS))
    params = bias_params(imported, measure="AP", depth=5, kind="loo_run", topics="all")
    assert (params.topics, params.depth) == ("", 5)


def test_the_reusability_verdict_is_on_the_pooled_topics_at_the_pool_depth(
    imported: Campaign, researcher: Any
) -> None:
    report = Reusability.objects.get(campaign=imported)
    assert report.state == "done", report.error
    result = report.result
    assert result["topics"] == ["3", "4"] and result["depth"] == 2
    assert result["topics_spec"] == "3-4"
    assert set(result["per_topic"]) <= {"3", "4"}
    assert set(result["shallow_topics"]) <= {"3", "4"}
    html = _signed_in(researcher).get(f"/campaigns/{imported.pk}/bias/").content.decode()
    verdict = re.search(r'<section id="reusability">.*?</section>', html, re.S)
    assert verdict is not None
    assert "AP at depth 2 over 2 topics (3-4, the campaign's pooled topics)" in verdict.group(0)


def test_the_page_opens_on_the_pooled_topics_and_depth_and_says_so(
    imported: Campaign, researcher: Any, as_committed: Callable[[], Any]
) -> None:
    client = _signed_in(researcher)
    url = f"/campaigns/{imported.pk}/bias/"
    html = client.get(url).content.decode()
    assert _scope(html) == (
        "Analysed: topics 3-4 (the campaign's pooled topics; all for every topic) "
        "at depth 2 (the campaign's pool depth)."
    )
    assert 'name="topics" value="3-4"' in html and 'name="depth" value="2"' in html
    assert 'id="not-computed"' not in html  # the default report is the one computed
    assert "<strong>topics 3-4</strong> (2 topics analysed)" in html
    # every topic, asked for: said so, and kept by the links and the Compute form
    html = client.get(url, {"topics": "all", "depth": "3"}).content.decode()
    assert _scope(html) == "Analysed: every topic at depth 3."
    assert 'id="not-computed"' in html
    assert '<input type="hidden" name="topics" value="all">' in html
    assert "topics=all" in html  # the links to the charts and the other pages keep it
    # computed from the page: the report of every topic, shown on the page of every topic
    with as_committed():
        posted = client.post(f"{url}compute/", {"measure": "AP", "topics": "all", "depth": "3"})
    assert posted.status_code == 302 and "topics=all" in posted["Location"]
    assert BiasReport.objects.filter(campaign=imported, topics="", depth=3).exists()
    assert not BiasReport.objects.filter(campaign=imported, topics="3-4", depth=3).exists()
    html = client.get(url, {"measure": "AP", "topics": "all", "depth": "3"}).content.decode()
    assert 'id="not-computed"' not in html and "every topic (4)" in html


def test_the_bias_api_defaults_to_the_pooled_topics_and_depth(
    imported: Campaign, api_client_for: Callable[[Any], Any], researcher: Any
) -> None:
    client = api_client_for(researcher)
    url = f"/api/v1/campaigns/{imported.pk}/bias/"
    body = client.get(url, {"measure": "AP"}).json()
    assert (body["topics"], body["depth"]) == ("3-4", 2)
    assert body["result"]["topics"]["analysed"] == ["3", "4"]
    # every topic, asked for: not computed yet (404), then computed by a POST
    assert client.get(url, {"measure": "AP", "topics": "all"}).status_code == 404
    posted = client.post(url, {"measure": "AP", "topics": "all"}, format="json")
    assert posted.status_code == 202 and posted.json()["topics"] == ""


def test_a_stored_pooled_topics_spec_that_no_longer_fits_is_a_400_naming_it(
    imported: Campaign,
) -> None:
    imported.pooled_topics = "3-4,77"
    imported.save(update_fields=["pooled_topics"])
    with pytest.raises(InvalidInput) as caught:
        bias_params(imported, measure="AP", depth=None, kind="loo_run", topics="")
    [problem] = caught.value.problems
    assert problem.location == "topics"
    assert "the campaign's pooled topics '3-4,77'" in problem.message
    assert "no topic '77'" in problem.message


@pytest.mark.data
@needs_shared_data("robust03")
def test_robust_2003_is_analysed_on_topics_601_650_at_depth_125(
    shared_data: Path, researcher: Any
) -> None:
    root = shared_data / "robust03"
    runs = sorted((root / "runs").glob("input.*.gz"))
    collection_imported(
        name="robust03",
        qrels=NamedFile("qrels.txt", root / "qrels.txt"),
        runs=[NamedFile(p.name, p) for p in runs],
        groups=NamedFile("runs.tsv", root / "runs.tsv"),
        measures=["AP", "P@10"],
        infer_topics=[str(q) for q in range(601, 651)],
        score_precision="single",
    )
    campaign = Campaign.objects.get(name="robust03")
    assert (campaign.pooled_topics, campaign.pool_depth) == ("601-650", 125)
    assert campaign.topics.count() == 100
    html = _signed_in(researcher).get(f"/campaigns/{campaign.pk}/bias/").content.decode()
    assert _scope(html).startswith("Analysed: topics 601-650 (the campaign's pooled topics;")
    assert "at depth 125 (the campaign's pool depth)" in _scope(html)
    # the reusability report (recorded by the import; computed here, as its task would)
    report = reusability_compute(report_id=Reusability.objects.get(campaign=campaign).pk)
    assert report is not None and report.state == "done", report and report.error
    result = report.result
    assert result["depth"] == 125 and len(result["topics"]) == 50
    assert all(601 <= int(q) <= 650 for q in result["per_topic"])
    assert all(601 <= int(q) <= 650 for q in result["shallow_topics"])


def test_an_admin_sets_the_pooled_topics_of_a_campaign_checked_and_normalised(
    campaign: Campaign, admin_user: Any
) -> None:
    """A campaign imported before its pooled topics were stored gets them in the admin; a spec
    naming no topic of the campaign is refused there, not on every bias page it would open."""
    import json

    from django.contrib import admin
    from django.forms.models import model_to_dict
    from django.test import RequestFactory

    request = RequestFactory().get("/")
    request.user = admin_user
    form_class = admin.site._registry[Campaign].get_form(request, obj=campaign)

    def submitted(spec: str) -> Any:
        data = {k: v for k, v in model_to_dict(campaign).items() if v is not None}
        data.update(
            scale=json.dumps(campaign.scale),
            measures=json.dumps(campaign.measures),
            highlight_terms="",
            pooled_topics=spec,
        )
        return form_class(data=data, instance=campaign)

    form = submitted(" 403, 401-402 ")
    assert form.is_valid(), form.errors
    assert form.cleaned_data["pooled_topics"] == "401-403"
    every = submitted("all")
    assert every.is_valid() and every.cleaned_data["pooled_topics"] == ""
    refused = submitted("401,999")
    assert not refused.is_valid()
    assert "no topic '999'" in " ".join(refused.errors["pooled_topics"])
