"""The reusability report of a qrels version (issue 12): stored when a version is published,
read by researchers and admins (other researchers' runs and groups anonymised), computed on
request for a version stored before reports existed, a failure stored rather than a 500."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError

from judging.assessments.models import QrelsVersion
from judging.assessments.services import qrels_import
from judging.campaigns.models import Campaign, Run
from judging.core.models import Job, JobState
from judging.evaluation import reusability
from judging.evaluation.models import Reusability
from judging.evaluation.reusability import reusability_compute, reusability_request
from judging.evaluation.selectors import reusability_report
from judging.workflows.qrels import qrels_published
from tests.knobs import override_knobs
from tests.test_api_errors import assert_shape
from tests.test_demo_story import judge_everything_left
from tests.test_get_never_writes import writes_during

pytestmark = [pytest.mark.django_db, pytest.mark.follow_ups]

SECRET_RUN = "dense-v1"  # the demo's one run of group vector-co
SECRET_GROUP = "vector-co"


class Fake:
    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def to_dict(self) -> dict[str, Any]:
        return self.data


CALLS: list[dict[str, Any]] = []


def fake_reusability(qrels: Any, runs: Any, leave: Any, **kwargs: Any) -> Fake:
    """A report in metrics.bias.reusability's shape, naming the units it was given."""
    kwargs = {**vars(leave), **kwargs}
    CALLS.append({"runs": set(runs), "qrels_topics": set(qrels.qids), **kwargs})
    groups = kwargs["groups"] or {t: t for t in runs}
    units = sorted({groups[t] for t in kwargs["pooled"]})
    return Fake(
        {
            "depth": kwargs["depth"],
            "measure": kwargs["measure"],
            "relevance_level": kwargs["relevance_level"],
            "mode": "trec_eval",
            "topics": sorted(qrels.qids),
            "n_runs": len(runs),
            "n_pooled": len(kwargs["pooled"]),
            "n_units": len(units),
            "leave_out": "group" if kwargs["groups"] else "run",
            "relevant": {
                "total": 10,
                "by_one_unit": 2,
                "by_one_unit_share": 0.2,
                "by_one_run": 3,
                "by_one_run_share": 0.3,
            },
            "unique_relevant": {u: 1 for u in units},
            "leave_one_out": {
                "max_drop": 0.02,
                "max_drop_unit": SECRET_GROUP if SECRET_GROUP in units else units[0],
                "mean_drop": 0.01,
                "kendall_tau": 0.9,
                "tau_ap": 0.8,
            },
            "judged": {"10": {"pooled": 1.0, "not_pooled": 0.7}},
            "efficiency": {
                "depths": [1, 2],
                "judged": [5, 9],
                "relevant": [3, 4],
                "relevant_per_judgment": [0.6, 0.25],
            },
            "per_topic": {},
            "shallow_topics": [],
            "expected_underestimate": [0.01, 0.03],
            "verdict": "A new system's AP is likely underestimated by 0.010-0.030.",
            "basis": [f"leaving out {units[-1]} drops a run's AP by at most 0.020"],
        }
    )


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    CALLS.clear()
    monkeypatch.setattr(reusability, "compute_reusability", fake_reusability)
    return CALLS


@pytest.fixture
def v2(demo: Campaign, fake: list[dict[str, Any]], as_committed: Any) -> QrelsVersion:
    """The demo after its README step: topic 6 judged, qrels v2 published (its reusability
    report computed after the publish's commit)."""
    judge_everything_left(demo, "annotator")
    with as_committed():
        version, created = qrels_published(campaign=demo, note="topic 6 judged")
    assert created and version.number == 2
    return version


def user(name: str) -> Any:
    return get_user_model().objects.get(username=name)


def url(version: QrelsVersion) -> str:
    return f"/api/v1/qrels/{version.pk}/reusability/"


def test_publishing_a_version_stores_its_reusability_report(
    v2: QrelsVersion, fake: list[dict[str, Any]], demo: Campaign
) -> None:
    report = Reusability.objects.get(qrels=v2)
    assert report.state == JobState.DONE, report.error
    assert report.campaign == demo and report.requested_by is None
    assert report.computed_at is not None and report.seconds is not None
    (call,) = fake
    assert call["depth"] == demo.pool_depth and call["measure"] == "AP"
    assert call["relevance_level"] == demo.relevance_threshold
    assert call["qrels_topics"] == {"1", "2", "3", "4", "5", "6"}
    assert call["topics"] is None  # the demo's pooled topics are all of them
    # v2's pool was built from the five pooled runs (novel-neural came later)
    assert sorted(call["pooled"]) == sorted(
        Run.objects.filter(campaign=demo, pooled=True).values_list("tag", flat=True)
    )
    assert "novel-neural" not in call["pooled"] and "novel-neural" in call["runs"]
    assert call["groups"]["dense-v1"] == SECRET_GROUP  # every pooled run has a group
    assert report.result["unique_relevant"] == {
        "lexical-lab": 1,
        "student-team": 1,
        "vector-co": 1,
    }
    assert report.result["pooled"] == call["pooled"]


def test_researchers_and_admins_read_it_and_annotators_are_refused(
    v2: QrelsVersion, api_client_for: Any
) -> None:
    for name in ("researcher", "admin"):
        r = api_client_for(user(name)).get(url(v2))
        assert r.status_code == 200, (name, r.content)
        body = r.json()
        assert set(body) == {
            "qrels_version",
            "qrels_kind",
            "state",
            "error",
            "computed_at",
            "result",
        }
        assert body["qrels_kind"] == "human"
        assert body["qrels_version"] == 2 and body["state"] == "done"
        assert body["result"]["verdict"].startswith("A new system's AP")
    denied = api_client_for(user("annotator")).get(url(v2))
    assert_shape(denied, 403, "permission_denied")
    assert api_client_for(None).get(url(v2)).status_code == 401


def test_another_researchers_groups_and_runs_are_anonymised(
    v2: QrelsVersion, demo: Campaign, api_client_for: Any, make_user: Any
) -> None:
    oscar = make_user("oscar-researcher", "researcher")
    Run.objects.filter(campaign=demo, tag=SECRET_RUN).update(owner=oscar)
    rita = api_client_for(user("researcher")).get(url(v2))
    text = rita.content.decode()
    assert SECRET_GROUP not in text and SECRET_RUN not in text
    result = rita.json()["result"]
    assert set(result["unique_relevant"]) == {"lexical-lab", "student-team", "anonymous group #1"}
    assert result["leave_one_out"]["max_drop_unit"] == "anonymous group #1"
    assert result["basis"] == ["leaving out anonymous group #1 drops a run's AP by at most 0.020"]
    assert sum(p.startswith("anonymous run") for p in result["pooled"]) == 1
    # Oscar sees his own group by name, and the admin every name
    mine = api_client_for(oscar).get(url(v2)).json()["result"]
    assert SECRET_GROUP in mine["unique_relevant"] and SECRET_RUN in mine["pooled"]
    admin = api_client_for(user("admin")).get(url(v2)).json()["result"]
    assert admin["leave_one_out"]["max_drop_unit"] == SECRET_GROUP
    assert reusability_report(v2, user("admin"))["result"]["unique_relevant"][SECRET_GROUP] == 1  # type: ignore[index]


def test_a_version_stored_before_reports_existed_is_404_then_computed_by_post(
    demo: Campaign, fake: list[dict[str, Any]], api_client_for: Any, as_committed: Any
) -> None:
    v1 = QrelsVersion.objects.get(campaign=demo, number=1)
    Reusability.objects.filter(qrels=v1).delete()  # as before this change
    client = api_client_for(user("researcher"))
    missing = client.get(url(v1))
    body = assert_shape(missing, 404, "not_found")
    assert f"POST /api/v1/qrels/{v1.pk}/reusability/" in body["detail"]
    with as_committed():
        posted = client.post(url(v1))
    assert posted.status_code == 202, posted.content
    assert posted.json()["state"] == "pending"  # the task runs after the commit
    report = Reusability.objects.get(qrels=v1)
    assert report.state == "done" and report.requested_by == user("researcher")
    assert client.get(url(v1)).json()["state"] == "done"
    # asking again: the stored report, not computed again
    with as_committed():
        again = client.post(url(v1))
    assert again.status_code == 202 and again.json()["state"] == "done"
    assert len(fake) == 1 and Reusability.objects.filter(qrels=v1).count() == 1


def test_a_report_being_computed_answers_202(
    demo: Campaign, api_client_for: Any, as_committed: Any
) -> None:
    v1 = QrelsVersion.objects.get(campaign=demo, number=1)
    Reusability.objects.filter(qrels=v1).update(result={})
    Job.objects.filter(reusability__qrels=v1).update(state=JobState.PENDING)
    r = api_client_for(user("researcher")).get(url(v1))
    assert r.status_code == 202
    assert r.json()["state"] == "pending" and r.json()["result"] == {}


def test_reading_never_writes(v2: QrelsVersion, api_client_for: Any, demo: Campaign) -> None:
    client = api_client_for(user("researcher"))
    v1 = QrelsVersion.objects.get(campaign=demo, number=1)
    Reusability.objects.filter(qrels=v1).delete()
    for version, status in ((v2, 200), (v1, 404)):
        response, writes = writes_during(lambda: client.get(url(version)))  # noqa: B023
        assert response.status_code == status
        assert writes == []
    assert not Reusability.objects.filter(qrels=v1).exists()


def test_a_computation_that_raises_is_stored_as_failed_and_retried_on_post(
    demo: Campaign,
    api_client_for: Any,
    as_committed: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise ValueError("no pooled run")

    monkeypatch.setattr(reusability, "compute_reusability", broken)
    judge_everything_left(demo, "annotator")
    with as_committed():
        version, _ = qrels_published(campaign=demo, note="topic 6 judged")
    client = api_client_for(user("researcher"))
    client.raise_request_exception = False
    failed = client.get(url(version))
    assert failed.status_code == 200
    assert failed.json()["state"] == "failed" and failed.json()["result"] == {}
    assert failed.json()["error"] == "reusability: ValueError: no pooled run"
    monkeypatch.setattr(reusability, "compute_reusability", fake_reusability)
    with as_committed():
        assert client.post(url(version)).status_code == 202
    assert client.get(url(version)).json()["state"] == "done"


@override_knobs(bias_reports_per_hour=2)
def test_new_reports_asked_for_count_against_the_bias_reports_allowance(
    demo: Campaign, fake: list[dict[str, Any]], api_client_for: Any, as_committed: Any
) -> None:
    client = api_client_for(user("researcher"))
    client.raise_request_exception = False
    v1 = QrelsVersion.objects.get(campaign=demo, number=1)
    Reusability.objects.filter(qrels=v1).delete()
    with as_committed():
        bias = client.post(f"/api/v1/campaigns/{demo.pk}/bias/", {"depth": 3}, format="json")
        assert bias.status_code == 202
        assert client.post(url(v1)).status_code == 202  # the second new report this hour
    v2 = qrels_import(campaign=demo, data=b"1 0 d-x 1\n", source="old")  # no report made
    refused = client.post(url(v2))
    body = assert_shape(refused, 429, "throttled")
    assert "POOLJUDGE_BIAS_REPORTS_PER_HOUR" in body["detail"]
    assert 3500 <= int(refused["Retry-After"]) <= 3600
    assert not Reusability.objects.filter(qrels=v2).exists()
    # a stored report is not new: asking for it again is not refused
    assert client.post(url(v1)).status_code == 202
    # and the bias reports count the reusability reports too
    third = client.post(f"/api/v1/campaigns/{demo.pk}/bias/", {"depth": 4}, format="json")
    assert third.status_code == 429


def test_no_such_version_is_404(demo: Campaign, api_client_for: Any) -> None:
    client = api_client_for(user("researcher"))
    for pk in (999999, 2**63 - 1):
        assert_shape(client.get(f"/api/v1/qrels/{pk}/reusability/"), 404, "not_found")
        assert_shape(client.post(f"/api/v1/qrels/{pk}/reusability/"), 404, "not_found")


def test_the_command_computes_and_prints_the_verdict(
    demo: Campaign, fake: list[dict[str, Any]]
) -> None:
    v1 = QrelsVersion.objects.get(campaign=demo, number=1)
    Reusability.objects.filter(qrels=v1).delete()
    out = StringIO()
    call_command("reusability_report", "--campaign", demo.name, "--qrels", "1", stdout=out)
    text = out.getvalue()
    assert "qrels v1: 5 of 6 runs pooled" in text
    assert "found by one group only: 2 (20.0% of the relevant documents)" in text
    assert "A new system's AP is likely underestimated" in text
    assert Reusability.objects.get(qrels=v1).state == "done"
    with pytest.raises(CommandError, match="no such qrels version"):
        call_command("reusability_report", "--campaign", demo.name, "--qrels", "9")


def test_the_command_says_when_the_report_failed(
    demo: Campaign, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("out of memory")

    monkeypatch.setattr(reusability, "compute_reusability", broken)
    v1 = QrelsVersion.objects.get(campaign=demo, number=1)
    Reusability.objects.filter(qrels=v1).delete()
    with pytest.raises(CommandError, match="failed: reusability: RuntimeError"):
        call_command("reusability_report", "--campaign", demo.name)


def test_the_service_is_idempotent(demo: Campaign, fake: list[dict[str, Any]]) -> None:
    v1 = QrelsVersion.objects.get(campaign=demo, number=1)
    Reusability.objects.filter(qrels=v1).delete()
    report = reusability_request(version=v1)
    assert reusability_compute(report_id=report.pk) is not None
    done = Reusability.objects.get(pk=report.pk)
    assert reusability_compute(report_id=report.pk).computed_at == done.computed_at  # type: ignore[union-attr]
    assert reusability_compute(report_id=10**9) is None
    assert len(fake) == 1


def test_the_real_report_is_stored_on_publish_and_anonymised(
    demo: Campaign, api_client_for: Any, as_committed: Any, make_user: Any
) -> None:
    judge_everything_left(demo, "annotator")
    with as_committed():
        version, _ = qrels_published(campaign=demo, note="topic 6 judged")
    report = Reusability.objects.get(qrels=version)
    assert report.state == "done", report.error
    result = report.result
    assert result["leave_out"] == "group" and result["n_pooled"] == 5
    assert set(result["unique_relevant"]) == {"lexical-lab", "vector-co", "student-team"}
    assert result["verdict"]
    oscar = make_user("oscar-researcher", "researcher")
    Run.objects.filter(campaign=demo, tag=SECRET_RUN).update(owner=oscar)
    text = api_client_for(user("researcher")).get(url(version)).content.decode()
    assert SECRET_GROUP not in text and SECRET_RUN not in text


def test_the_api_guide_examples_answer_as_documented(
    demo: Campaign, api_client_for: Any, as_committed: Any
) -> None:
    """The API guide's curl lines for topic subsets and reusability (docs/guide/api.md), verbatim
    but for the address: on the demo (campaign 1 and qrels version 1 of a fresh `load_demo`; here
    their ids in the test database), at `$POOLJUDGE_URL` (here the test client)."""
    import json
    import re
    import shlex
    from pathlib import Path

    page = Path(__file__).resolve().parents[1] / "docs" / "guide" / "api.md"
    text = page.read_text().replace("\\\n", " ")
    commands = [
        shlex.split(line)
        for line in text.splitlines()
        if line.startswith("curl ")
        and (("/bias/" in line and "topics" in line) or "/reusability/" in line)
    ]
    assert len(commands) == 3, commands
    v1 = QrelsVersion.objects.get(campaign=demo, number=1)  # its report computed at load
    client = api_client_for(user("researcher"))
    statuses = []
    for argv in commands:
        data = argv[argv.index("-d") + 1] if "-d" in argv else None
        address = next(a for a in argv if a.startswith("$POOLJUDGE_URL/"))
        path = address.removeprefix("$POOLJUDGE_URL")
        path = re.sub(r"/campaigns/1/", f"/campaigns/{demo.pk}/", path)
        path = re.sub(r"/qrels/1/", f"/qrels/{v1.pk}/", path)
        with as_committed():
            if data is None:
                response = client.get(path)
            else:
                response = client.post(path, json.loads(data), format="json")
        statuses.append(response.status_code)
        if data is None:
            assert response.json()["state"] == "done", (path, response.json())
    assert statuses == [202, 200, 200]
