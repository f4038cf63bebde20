"""The bias report as the service stores it (issue 12): a topic subset and a measure chosen by
the researcher, before/after on the topics both qrels versions can score, the penalty
estimators with their measured error, and a failure stored rather than answered as a 500."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.management import call_command
from django.core.management.base import CommandError

from judging.assessments.models import QrelsVersion
from judging.campaigns.models import Campaign, Topic
from judging.core.errors import InvalidInput
from judging.evaluation import bias
from judging.evaluation.bias import bias_params, bias_report_request, topic_filter, topic_spec
from judging.evaluation.models import BiasReport
from judging.evaluation.selectors import bias_report
from judging.workflows.qrels import qrels_imported, qrels_published
from judging.workflows.runs import run_submitted
from tests._bias_reports import shown
from tests.knobs import override_knobs
from tests.test_api_errors import assert_shape
from tests.test_demo_story import judge_everything_left

pytestmark = [pytest.mark.django_db, pytest.mark.follow_ups]

TOPICS = ("401", "402", "403", "404", "405", "410", "LA-7")
TAGS = {"401": ["hard"], "402": ["hard", "long"], "404": ["long"], "LA-7": ["odd"]}
RUNS = {  # (group, pooled, results)
    "alpha": ("lab-a", True, {"401": ["d1", "d2", "d3"], "402": ["d4", "d5"], "403": ["d7"]}),
    "beta": ("lab-b", True, {"401": ["d3", "d9", "d1"], "402": ["d5", "d8"], "403": ["d6"]}),
    "gamma": ("lab-c", True, {"401": ["d2", "d1"], "402": ["d4"], "403": ["d6", "d7"]}),
    "novel": ("lab-n", False, {"401": ["d10", "d1"], "402": ["d11", "d4"], "403": ["d12"]}),
}
QRELS = (
    "401 0 d1 1\n401 0 d2 0\n401 0 d3 2\n401 0 d10 1\n"
    "402 0 d4 1\n402 0 d5 0\n402 0 d8 1\n"
    "403 0 d6 1\n403 0 d7 0\n"
)


@pytest.fixture
def tiny(campaign: Campaign, researcher: Any, as_committed: Any) -> Campaign:
    """Topics 401-405, 410 and LA-7 (some tagged), four runs in four groups (novel not
    pooled), qrels v1 judging 401-403 (the default report computed after the import)."""
    for qid in TOPICS:
        Topic.objects.update_or_create(
            campaign=campaign, qid=qid, defaults={"title": qid, "tags": TAGS.get(qid, [])}
        )
    for tag, (group, pooled, ranked) in RUNS.items():
        run = run_submitted(
            campaign=campaign,
            owner=researcher,
            tag=tag,
            group=group,
            results={q: {d: 10.0 - i for i, d in enumerate(docs)} for q, docs in ranked.items()},
        )
        run.pooled = pooled
        run.save()
    with as_committed():
        qrels_imported(campaign=campaign, data=QRELS.encode())
    return campaign


# --- the topic filter -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "normalised", "qids"),
    [
        ("", "", ["401", "402", "403", "404", "405", "410", "LA-7"]),
        ("  ", "", ["401", "402", "403", "404", "405", "410", "LA-7"]),
        ("401", "401", ["401"]),
        ("403, 401,402", "401-403", ["401", "402", "403"]),
        ("401-405", "401-405", ["401", "402", "403", "404", "405"]),
        # a range takes the campaign's topics in it (406-409 do not exist)
        ("400-420", "401-405,410", ["401", "402", "403", "404", "405", "410"]),
        ("tag:hard", "401-402", ["401", "402"]),
        ("tag:long,405", "402,404-405", ["402", "404", "405"]),
        ("TAG:odd", "LA-7", ["LA-7"]),  # an id with a dash, by tag
        ("LA-7,401", "401,LA-7", ["401", "LA-7"]),  # and by its id
        ("401,401,401-401", "401", ["401"]),
    ],
)
def test_a_topic_spec_names_the_campaigns_topics_and_is_normalised(
    tiny: Campaign, spec: str, normalised: str, qids: list[str]
) -> None:
    assert topic_filter(tiny, spec) == (normalised, qids)
    if normalised:  # the normalised spec names the same topics
        assert topic_filter(tiny, normalised) == (normalised, qids)


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("405-401", "is empty"),
        ("a-b", "two integers"),
        ("401,999", "no topic '999'"),
        ("999,998,401,997", "no topic '999', '998', '997'"),
        ("500-600", "no topic in '500-600'"),
        ("tag:missing", "tagged 'missing' (the tags are hard, long, odd)"),
        ("tag:", "needs a tag name"),
        (", ,", "no topics in"),
        ("401\x00", "NUL"),
        ("4" * 2100, "at most 2000 bytes"),
    ],
)
def test_a_bad_topic_spec_is_invalid_input_naming_topics(
    tiny: Campaign, spec: str, says: str
) -> None:
    with pytest.raises(InvalidInput) as caught:
        topic_filter(tiny, spec)
    (problem,) = caught.value.problems
    assert problem.location == "topics"
    assert says in problem.message, problem.message


@override_knobs(bias_max_topics=3)
def test_a_subset_over_the_bound_is_refused_before_any_range_is_written_out(
    tiny: Campaign,
) -> None:
    assert topic_filter(tiny, "401-403")[1] == ["401", "402", "403"]
    for spec in ("401-404", "tag:hard,tag:long,403", "1-99999999999999999999999999"):
        with pytest.raises(InvalidInput, match="POOLJUDGE_BIAS_MAX_TOPICS") as caught:
            topic_filter(tiny, spec)
        assert caught.value.problems[0].location == "topics"


def test_the_normalised_spec_writes_only_consecutive_plain_numbers_as_ranges() -> None:
    assert topic_spec(["1", "2", "3", "5", "7", "8", "x"]) == "1-3,5,7-8,x"
    assert topic_spec(["007", "8", "9"]) == "007,8-9"  # "007" is not the number 7 as written
    assert topic_spec([]) == ""


# --- the report's key and the API --------------------------------------------------------


def test_two_spellings_of_one_subset_share_a_report_and_the_default_is_all_topics(
    tiny: Campaign, as_committed: Any
) -> None:
    default = BiasReport.objects.get(campaign=tiny, measure="AP")
    assert default.topics == ""
    assert shown(default)["topics"] == {
        "spec": "",
        "analysed": ["401", "402", "403"],
        "without_judgments": [],
    }
    with as_committed():
        one = bias_report_request(campaign=tiny, topics="402, 401, tag:hard")
        two = bias_report_request(campaign=tiny, topics="401-402")
    assert one is not None and two is not None and one.pk == two.pk
    assert BiasReport.objects.filter(campaign=tiny).count() == 3  # AP, R@50 (headline), subset
    one.refresh_from_db()
    assert one.topics == "401-402" and one.state == "done", one.error
    assert shown(one)["topics"]["analysed"] == ["401", "402"]
    assert set(shown(one)["loo"]["runs"]) == {"alpha", "beta", "gamma"}
    assert shown(one)["loo"]["topics"] == ["401", "402"]
    assert set(shown(one)["coverage"]["runs"]["novel"]["per_query"]) == {"401", "402"}
    assert shown(one)["efficiency"]["topics"] == 2
    # topics without judgments are analysed as absent, and said to be
    with as_committed():
        three = bias_report_request(campaign=tiny, topics="401,404-405")
    assert three is not None
    three.refresh_from_db()
    assert three.state == "done", three.error
    assert shown(three)["topics"] == {
        "spec": "401,404-405",
        "analysed": ["401"],
        "without_judgments": ["404", "405"],
    }


def test_a_subset_without_any_judgment_fails_with_the_reason_stored(
    tiny: Campaign, as_committed: Any
) -> None:
    with as_committed():
        report = bias_report_request(campaign=tiny, topics="404-410")
    assert report is not None
    report.refresh_from_db()
    assert report.state == "failed"
    assert "has a judgment in qrels version 1" in report.error


def test_bias_params_returns_the_key_and_the_topics(tiny: Campaign) -> None:
    params = bias_params(tiny, measure="P_5", depth=None, kind="loo_group", topics="tag:hard")
    assert params == ("P@5", tiny.pool_depth, "loo_group", "401-402", ["401", "402"])
    assert params.topics == "401-402" and params.topic_ids == ["401", "402"]
    with pytest.raises(InvalidInput) as caught:
        bias_params(tiny, measure="bogus", depth=0, kind="loo_run", topics="999")
    assert {p.location for p in caught.value.problems} == {"measure", "depth", "topics"}


def test_the_api_takes_topics_and_a_measure_and_reads_the_subset_back(
    tiny: Campaign, api_client_for: Any, researcher: Any, as_committed: Any
) -> None:
    client = api_client_for(researcher)
    url = f"/api/v1/campaigns/{tiny.pk}/bias/"
    assert client.get(url, {"topics": "401-402", "measure": "P@2"}).status_code == 404
    with as_committed():
        posted = client.post(url, {"topics": "tag:hard", "measure": "P_2"}, format="json")
    assert posted.status_code == 202, posted.content
    assert posted.json()["topics"] == "401-402" and posted.json()["measure"] == "P@2"
    got = client.get(url, {"topics": "401,402", "measure": "P@2"})
    assert got.status_code == 200, got.content
    body = got.json()
    assert body["state"] == "done" and body["topics"] == "401-402"
    assert body["result"]["topics"]["analysed"] == ["401", "402"]
    assert body["result"]["loo"]["measure"] == "P@2"
    # the default report is still the one of every topic
    assert client.get(url).json()["topics"] == ""


@pytest.mark.parametrize(
    ("topics", "says"),
    [
        ("999", "no topic '999'"),
        ("tag:nope", "tagged 'nope'"),
        ("9-1", "is empty"),
        ("x" * 2001, "2000"),
        (",", "no topics"),
    ],
)
def test_a_bad_topics_parameter_is_400_naming_it_on_get_and_post(
    tiny: Campaign, api_client_for: Any, researcher: Any, topics: str, says: str
) -> None:
    client = api_client_for(researcher)
    url = f"/api/v1/campaigns/{tiny.pk}/bias/"
    before = BiasReport.objects.count()
    for response in (
        client.get(url, {"topics": topics}),
        client.post(url, {"topics": topics}, format="json"),
    ):
        body = assert_shape(response, 400, "invalid_input")
        messages = [p["message"] for p in body["problems"] if p.get("location") == "topics"]
        assert messages and says in messages[0], body
    assert BiasReport.objects.count() == before


def test_the_command_takes_topics_and_names_a_bad_spec(tiny: Campaign) -> None:
    from io import StringIO

    out = StringIO()
    call_command("bias_report", "--campaign", str(tiny.pk), "--topics", "401-402", stdout=out)
    assert "topics 401-402 (2 topics analysed)" in out.getvalue()
    assert BiasReport.objects.filter(campaign=tiny, topics="401-402").exists()
    with pytest.raises(CommandError, match="topics"):
        call_command("bias_report", "--campaign", str(tiny.pk), "--topics", "999")


# --- the estimators -------------------------------------------------------------------------

ESTIMATORS = {  # the shape of metrics.bias.estimators' EstimatorReport.to_dict()
    "measure": "AP",
    "depth": 10,
    "leave_out": "group",
    "mode": "trec_eval",
    "top75": False,
    "topics": ["401", "402", "403"],
    "n_units": 3,
    "estimators": {
        "webber_park": {
            "label": "Webber & Park 2009",
            "applicable": True,
            "mae": 0.01,
            "sre": 1,
            "sre_star": 0,
            "kendall_tau": 1.0,
            "n_runs": 3,
        },
        "lipani2015": {"label": "Lipani et al. 2015", "applicable": False, "why": "P@k only"},
    },
    "recommended": "webber_park",
    "recommended_why": "lowest mean absolute error (0.0100) of the 1 estimator that applies",
    "runs": {
        "alpha": {"unit": "lab-a", "score": 0.5, "score_full_pool": 0.6, "webber_park": 0.59},
        "beta": {"unit": "lab-b", "score": 0.4, "score_full_pool": 0.4, "webber_park": 0.41},
    },
    "not_pooled": {
        "novel": {
            "score": 0.3,
            "estimates": {
                "webber_park": {
                    "estimate": 0.32,
                    "penalty": 0.02,
                    "penalty_pct": 6.7,
                    "interval": [0.31, 0.33],
                }
            },
        }
    },
    "deltas": {"n": 3, "mean": 0.02, "ci": [0.01, 0.03]},
}


class Fake:
    """A metrics report: ``to_dict()`` gives back what it was made with."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def to_dict(self) -> dict[str, Any]:
        return self.data


def test_the_estimators_are_asked_for_the_non_pooled_runs_by_group_and_stored(
    tiny: Campaign, as_committed: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[Any, ...]] = []

    def fake(qrels: Any, runs: Any, measure: str, leave: Any, **kwargs: Any) -> Fake:
        calls.append((set(runs), measure, {**vars(leave), **kwargs}))
        return Fake(ESTIMATORS)

    monkeypatch.setattr(bias, "estimator_report", fake)
    with as_committed():
        report = bias_report_request(campaign=tiny, measure="AP", depth=5, topics="401-403")
    assert report is not None
    report.refresh_from_db()
    assert report.state == "done", report.error
    assert shown(report)["estimators"] == ESTIMATORS
    ((runs, measure, kwargs),) = calls
    assert runs == {"alpha", "beta", "gamma", "novel"} and measure == "AP"
    assert kwargs["depth"] == 5 and kwargs["pooled"] == ["alpha", "beta", "gamma"]
    assert kwargs["leave_out"] == "group"  # every pooled run has a group
    assert kwargs["groups"] == {
        "alpha": "lab-a",
        "beta": "lab-b",
        "gamma": "lab-c",
        "novel": "lab-n",
    }
    assert kwargs["topics"] == ["401", "402", "403"]
    assert kwargs["relevance_level"] == tiny.relevance_threshold


def test_without_groups_the_estimators_leave_out_runs(
    tiny: Campaign, as_committed: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: dict[str, Any] = {}

    def fake(qrels: Any, runs: Any, measure: str, leave: Any, **kwargs: Any) -> Fake:
        seen.update({**vars(leave), **kwargs})
        return Fake({**ESTIMATORS, "leave_out": "run"})

    monkeypatch.setattr(bias, "estimator_report", fake)
    tiny.runs.filter(tag="beta").update(group="")
    with as_committed():
        report = bias_report_request(campaign=tiny, depth=4)
    assert report is not None
    report.refresh_from_db()
    assert report.state == "done", report.error
    assert seen["leave_out"] == "run" and seen["groups"] is None and seen["topics"] is None


def test_with_fewer_than_two_pooled_units_the_report_says_why_there_are_no_estimators(
    tiny: Campaign, as_committed: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bias, "estimator_report", lambda *a, **k: pytest.fail("not called"))
    tiny.runs.filter(tag__in=["alpha", "beta", "gamma"]).update(group="one-lab")
    with as_committed():
        report = bias_report_request(campaign=tiny, depth=6)
    assert report is not None
    report.refresh_from_db()
    assert report.state == "done", report.error
    assert "estimators" not in shown(report)
    assert "at least two pooled groups (1 here)" in shown(report)["estimators_unavailable"]


def test_an_estimator_that_raises_fails_the_report_with_its_error_never_a_500(
    tiny: Campaign,
    as_committed: Any,
    monkeypatch: pytest.MonkeyPatch,
    api_client_for: Any,
    researcher: Any,
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise ValueError("the harness found no unit to leave out")

    monkeypatch.setattr(bias, "estimator_report", broken)
    client = api_client_for(researcher)
    client.raise_request_exception = False
    url = f"/api/v1/campaigns/{tiny.pk}/bias/"
    with as_committed():
        posted = client.post(url, {"depth": 7}, format="json")
    assert posted.status_code == 202
    got = client.get(url, {"depth": 7})
    assert got.status_code == 200
    body = got.json()
    assert body["state"] == "failed" and "result" not in body
    assert body["error"] == "estimators: ValueError: the harness found no unit to leave out"
    # asking again retries it (a failed report is computed again)
    monkeypatch.setattr(bias, "estimator_report", lambda *a, **k: Fake(ESTIMATORS))
    with as_committed():
        again = client.post(url, {"depth": 7}, format="json")
    assert again.status_code == 202
    assert client.get(url, {"depth": 7}).json()["state"] == "done"


def test_the_real_estimators_are_stored_for_the_non_pooled_run(
    tiny: Campaign, as_committed: Any
) -> None:
    with as_committed():
        report = bias_report_request(campaign=tiny, measure="P@2", depth=2)
    assert report is not None
    report.refresh_from_db()
    assert report.state == "done", report.error
    estimators = shown(report)["estimators"]
    assert estimators["measure"] == "P@2" and estimators["depth"] == 2
    assert estimators["leave_out"] == "group" and estimators["n_units"] == 3
    assert set(estimators["not_pooled"]) == {"novel"}
    score = estimators["not_pooled"]["novel"]["score"]
    webber_park = estimators["not_pooled"]["novel"]["estimates"]["webber_park"]
    assert webber_park["penalty"] == pytest.approx(webber_park["estimate"] - score)
    assert estimators["estimators"]["webber_park"]["applicable"] is True
    assert {r["unit"] for r in estimators["runs"].values()} <= {"lab-a", "lab-b", "lab-c"}


# --- before/after on the same topics (the demo's story) -------------------------------------

COMPARISON = {  # the shape of metrics.bias.versions.compare_qrels_versions(...).to_dict()
    "measure": "AP",
    "labels": ["v1", "v2"],
    "topics": {"compared": ["1", "2", "3", "4", "5"], "only_a": [], "only_b": ["6"]},
    "topics_note": "compared on 5 topics; topic 6 is new in v2 (not in v1)",
    "runs": {},
}


def _publish_v2(demo: Campaign, as_committed: Any) -> QrelsVersion:
    """The README's step: judge topic 6 (left by load_demo) and publish qrels v2."""
    judge_everything_left(demo, "annotator")
    with as_committed():
        v2, created = qrels_published(campaign=demo, note="topic 6 judged")
    assert created and v2.number == 2
    return v2


def test_before_after_is_asked_on_the_reports_topics_with_version_labels(
    demo: Campaign, as_committed: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[dict[str, Any]] = []

    def fake(qrels_a: Any, qrels_b: Any, runs: Any, measure: str, **kwargs: Any) -> Fake:
        calls.append({"a": set(qrels_a.qids), "b": set(qrels_b.qids), **kwargs})
        return Fake(COMPARISON)

    monkeypatch.setattr(bias, "compare_qrels_versions", fake)
    v2 = _publish_v2(demo, as_committed)
    with as_committed():
        subset = bias_report_request(campaign=demo, qrels=v2, topics="1-5")
    default = BiasReport.objects.get(campaign=demo, qrels=v2, topics="", measure="AP")
    assert default.state == "done", default.error
    assert shown(default)["before_after"] == {"from": 1, "to": 2, **COMPARISON}
    first, headline, second = calls  # AP, the headline P@10 (both on every topic), the subset
    assert headline["topics"] is None and headline["labels"] == ("v1", "v2")
    assert first["a"] == {"1", "2", "3", "4", "5"} and first["b"] == {"1", "2", "3", "4", "5", "6"}
    assert first["labels"] == ("v1", "v2") and first["topics"] is None
    assert first["novel"] == ["novel-neural"] and first["recall_k"] == 5 * default.depth
    assert second["topics"] == ["1", "2", "3", "4", "5"]
    assert subset is not None and subset.topics == "1-5"


def test_before_after_compares_the_demo_on_the_five_topics_v1_can_score(
    demo: Campaign, as_committed: Any, api_client_for: Any
) -> None:
    from django.contrib.auth import get_user_model

    v2 = _publish_v2(demo, as_committed)
    report = BiasReport.objects.get(campaign=demo, qrels=v2, topics="", measure="AP")
    assert report.state == "done", report.error
    before_after = shown(report)["before_after"]
    assert before_after["from"] == 1 and before_after["to"] == 2
    assert before_after["labels"] == ["v1", "v2"]
    assert before_after["topics"]["compared"] == ["1", "2", "3", "4", "5"]
    assert before_after["topics"]["only_b"] == ["6"] and before_after["topics"]["only_a"] == []
    assert "compared on 5 topics" in before_after["topics_note"]
    assert "topic 6 is new in v2" in before_after["topics_note"]
    assert before_after["runs"]["novel-neural"]["novel"] is True
    assert before_after["runs"]["novel-neural"]["new_topics"] is not None
    # the API answers the same, for a researcher
    researcher = get_user_model().objects.get(username="researcher")
    body = api_client_for(researcher).get(f"/api/v1/campaigns/{demo.pk}/bias/?qrels=2").json()
    assert body["result"]["before_after"]["topics"]["only_b"] == ["6"]
    # on topics 1-5 only, nothing is new in v2
    with as_committed():
        subset = bias_report_request(campaign=demo, qrels=v2, topics="1-5")
    assert subset is not None
    subset.refresh_from_db()
    assert subset.state == "done", subset.error
    assert shown(subset)["before_after"]["topics"]["compared"] == ["1", "2", "3", "4", "5"]
    assert shown(subset)["before_after"]["topics"]["only_b"] == []


def test_the_demo_topics_can_be_chosen_by_tag(demo: Campaign) -> None:
    tags = {t for topic in demo.topics.all() for t in topic.tags}
    assert "energy" in tags
    spec, qids = topic_filter(demo, "tag:energy")
    assert qids and set(qids) <= {t.qid for t in demo.topics.all()}
    assert spec == topic_spec(qids)
    with pytest.raises(InvalidInput, match="topics"):
        bias_report(
            campaign=demo, version=QrelsVersion.objects.get(), user=AnonymousUser(), topics="77"
        )


def test_before_after_on_topics_one_version_cannot_score_says_so_instead_of_failing(
    tiny: Campaign, as_committed: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[Any] = []

    def fake(*args: Any, **kwargs: Any) -> Fake:
        asked.append(kwargs["topics"])
        return Fake(COMPARISON)

    monkeypatch.setattr(bias, "compare_qrels_versions", fake)
    with as_committed():
        v2 = qrels_imported(campaign=tiny, data=(QRELS + "404 0 d1 1\n").encode())
        report = bias_report_request(campaign=tiny, qrels=v2, topics="404")
    # the default reports' (AP and the headline measure), on every topic; not the subset's
    assert asked == [None, None]
    assert report is not None
    report.refresh_from_db()
    assert report.state == "done", report.error
    assert "before_after" not in shown(report)
    # no run retrieved anything for topic 404: no delta, so no penalty, and the page is told
    assert "penalty" not in shown(report)
    assert shown(report)["penalty_unavailable"].startswith("no pooled run has a leave-one-out")
    assert shown(report)["before_after_unavailable"] == (
        "qrels versions 1 and 2 have no topic among the topics analysed that both can score "
        "(a relevant judgment in each): there is nothing to compare on"
    )


def test_the_headline_measure_is_the_campaigns_first_one_the_estimators_cover(
    demo: Campaign,
) -> None:
    """Publishing computes the AP report and the headline measure's (the one the leaderboard
    sorts by), and the bias page opens on the headline: the demo's story is on P@10."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    assert bias.headline_measure(demo) == "P@10"
    demo.measures = ["Judged@10", "NumRet", "nDCG@5", "AP"]  # no estimator for the first two
    assert bias.headline_measure(demo) == "nDCG@5"
    demo.measures = ["Judged@10"]
    assert bias.headline_measure(demo) == "AP"
    v1 = QrelsVersion.objects.get(campaign=demo)
    stored = set(
        BiasReport.objects.filter(campaign=demo, qrels=v1).values_list("measure", flat=True)
    )
    assert stored == {"AP", "P@10"}
    client = Client()
    client.force_login(get_user_model().objects.get(username="researcher"))
    page = client.get(f"/campaigns/{demo.pk}/bias/").content.decode()
    assert 'id="not-computed"' not in page and "P@10" in page


def test_a_measure_the_estimators_do_not_cover_stores_why_instead_of_failing(
    tiny: Campaign, as_committed: Any
) -> None:
    with as_committed():
        report = bias_report_request(campaign=tiny, measure="Judged@3")
    assert report is not None
    report.refresh_from_db()
    assert report.state == "done", report.error
    assert "estimators" not in shown(report)
    assert "not for Judged@3" in shown(report)["estimators_unavailable"]
    assert set(shown(report)["loo"]["runs"]) == {"alpha", "beta", "gamma"}


def test_the_page_says_why_a_report_has_no_estimators(tiny: Campaign, as_committed: Any) -> None:
    from django.contrib.auth import get_user_model
    from django.test import Client

    with as_committed():
        bias_report_request(campaign=tiny, measure="Judged@3")
    researcher = get_user_model().objects.filter(groups__name="researcher").first()
    assert researcher is not None
    client = Client()
    client.force_login(researcher)
    page = client.get(f"/campaigns/{tiny.pk}/bias/?measure=Judged@3").content.decode()
    assert 'id="estimators-unavailable"' in page and "not for Judged@3" in page
