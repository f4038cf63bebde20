"""The automatic judges' API: admins create judges, import labels, run them over pool versions
and build automatic and hybrid qrels versions; researchers read; annotators are refused; a bad
field is a 400 naming it; no answer ever carries an endpoint's address or key."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from judging.assessments.models import QrelsEntry, QrelsVersion
from judging.autojudge import services
from judging.autojudge.models import AutoLabel, Judge, JudgeCalibration, JudgeKind, JudgeRun
from judging.campaigns.models import Campaign
from judging.core import jobs
from judging.core.models import Job
from judging.core.tasks import run_job
from judging.pools.models import PoolVersion
from judging.workflows.qrels import qrels_imported
from tests.autojudge.judge_setup import (
    ENDPOINTS,
    FAKE_KEY,
    FAKE_URL,
    HUMAN,
    LABELS,
    Scripted,
    assert_no_secret,
    chat_judge,
    imported_judge,
)
from tests.knobs import override_knobs

pytestmark = pytest.mark.django_db


@pytest.fixture
def endpoints() -> Any:
    with override_knobs(llm_endpoints=ENDPOINTS):
        yield ENDPOINTS


@pytest.fixture
def admin_api(api_client_for: Any, admin_user: Any) -> Any:
    return api_client_for(admin_user)


def problems_at(response: Any) -> list[str]:
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["error"] == "invalid_input"
    return [p.get("location", "") for p in body["problems"]]


def upload(data: bytes, name: str = "labels.txt") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data)


def test_an_admin_creates_an_imported_judge_imports_its_labels_and_reads_their_summary(
    campaign: Campaign, pooled: PoolVersion, admin_api: Any, api_client_for: Any, researcher: Any
) -> None:
    url = f"/api/v1/campaigns/{campaign.pk}/judges/"
    body = {"kind": "imported", "name": "umbrela-file", "model": "gpt-4o", "description": "TREC"}
    created = admin_api.post(url, body, format="json")
    assert created.status_code == 201, created.content
    judge = created.json()
    assert (judge["name"], judge["version"], judge["kind"], judge["locked"]) == (
        "umbrela-file",
        1,
        "imported",
        False,
    )
    # the same again: the unused version is reused, not duplicated
    again = admin_api.post(url, body, format="json")
    assert again.status_code == 200 and again.json()["id"] == judge["id"]

    imported = admin_api.post(
        f"/api/v1/judges/{judge['id']}/labels/",
        {"file": upload(LABELS), "format": "trec"},
        format="multipart",
    )
    assert imported.status_code == 201, imported.content
    assert imported.json()["stored"] == 11
    assert imported.json()["judge"]["labels"] == 11

    detail = api_client_for(researcher).get(f"/api/v1/judges/{judge['id']}/")
    assert detail.status_code == 200
    d = detail.json()
    assert d["locked"] is True and d["labels"] == 11 and d["runs"] == 0
    assert d["statuses"] == {"ok": 11, "refused": 0, "malformed": 0, "error": 0, "deferred": 0}
    # hand-counted from LABELS: six 0s, three 1s, two 2s
    assert [(g["grade"], g["label"], g["count"]) for g in d["grades"]] == [
        (0, "No", 6),
        (1, "Some", 3),
        (2, "Yes", 2),
    ]
    assert d["grades"][0]["share"] == pytest.approx(6 / 11)
    assert [v["version"] for v in d["versions"]] == [1]

    listed = api_client_for(researcher).get(url).json()
    assert listed["count"] == 1
    assert listed["results"][0]["labels"] == 11


def test_automatic_and_hybrid_qrels_versions_from_the_api_keep_their_kind(
    campaign: Campaign, pooled: PoolVersion, admin_api: Any, as_committed: Any
) -> None:
    with as_committed():
        human = qrels_imported(campaign=campaign, data=HUMAN)
    judge = imported_judge(campaign)
    services.labels_import(judge=judge, data=LABELS)
    url = f"/api/v1/judges/{judge.pk}/qrels/"

    automatic = admin_api.post(url, {"kind": "automatic", "pool": 1}, format="json")
    assert automatic.status_code == 201, automatic.content
    a = automatic.json()
    assert a["kind"] == "automatic" and a["kind_label"] == "automatic (umbrela-file v1)"
    assert a["num_judgments"] == 11  # every label over the pool
    assert a["judges"][0]["id"] == judge.pk

    hybrid = admin_api.post(url, {"kind": "hybrid", "human": human.number}, format="json")
    assert hybrid.status_code == 201, hybrid.content
    h = hybrid.json()
    assert h["kind"] == "hybrid"
    # the 3 human grades as they are, plus the judge's for the 8 graded documents no one judged
    assert h["num_judgments"] == 3 + 8
    rows = dict(QrelsEntry.objects.filter(version_id=h["id"]).values_list("docid", "judge_id"))
    assert rows["d401-2"] is None and rows["d401-3"] == judge.pk
    assert QrelsEntry.objects.get(version_id=h["id"], docid="d401-2").grade == 0  # the person's

    # the judge's page lists both versions, newest first
    detail = admin_api.get(f"/api/v1/judges/{judge.pk}/").json()
    assert [(q["number"], q["kind"]) for q in detail["qrels"]] == [
        (h["number"], "hybrid"),
        (a["number"], "automatic"),
    ]


def test_a_run_is_accepted_then_its_progress_counts_and_cost_read_back(
    campaign: Campaign,
    pooled: PoolVersion,
    admin_api: Any,
    endpoints: Any,
    monkeypatch: pytest.MonkeyPatch,
    as_committed: Any,
) -> None:
    judge = chat_judge(campaign)
    queued = admin_api.post(f"/api/v1/judges/{judge.pk}/runs/", {"pool": 1}, format="json")
    assert queued.status_code == 202, queued.content
    q = queued.json()
    assert (q["state"], q["total"], q["done"], q["pool"], q["live"]) == ("queued", 12, 0, 1, True)
    # the same again while it is queued: the same run
    assert (
        admin_api.post(f"/api/v1/judges/{judge.pk}/runs/", {}, format="json").json()["id"]
        == (q["id"])
    )

    monkeypatch.setitem(
        services._LABELLERS, JudgeKind.OPENAI, lambda j: Scripted(j, failing=("d402-2",))
    )
    with as_committed():
        JudgeRun.objects.filter(pk=q["id"]).delete()
        run = services.judge_run_request(judge=judge, pool=pooled)
    progress = admin_api.get(f"/api/v1/judge-runs/{run.pk}/")
    assert progress.status_code == 200
    p = progress.json()
    assert (p["state"], p["live"], p["total"], p["done"], p["progress"]) == (
        "done",
        False,
        12,
        12,
        1.0,
    )
    assert (p["ok"], p["errors"], p["refused"], p["malformed"], p["cached"]) == (11, 1, 0, 0, 0)
    assert (p["prompt_tokens"], p["completion_tokens"]) == (1100, 55)
    assert p["cost"] == pytest.approx(0.11)
    detail = admin_api.get(f"/api/v1/judges/{judge.pk}/").json()
    assert detail["endpoint"] == "local-vllm"
    assert detail["statuses"]["error"] == 1 and detail["labels"] == 11
    assert detail["cost"] == pytest.approx(0.11) and detail["runs"] == 1
    # by the last digit mod 3 over d*-1..4 (d402-2 failed): 1,2,0,1 / 1,0,1 / 1,2,0,1
    assert [g["count"] for g in detail["grades"]] == [3, 6, 2]


def test_no_answer_carries_the_endpoint_address_or_key(
    campaign: Campaign,
    pooled: PoolVersion,
    admin_api: Any,
    api_client_for: Any,
    researcher: Any,
    endpoints: Any,
) -> None:
    created = admin_api.post(
        f"/api/v1/campaigns/{campaign.pk}/judges/",
        {"kind": "openai-compatible", "name": "chat", "model": "m", "endpoint": "local-vllm"},
        format="json",
    )
    assert created.status_code == 201, created.content
    judge_id = created.json()["id"]
    run = admin_api.post(f"/api/v1/judges/{judge_id}/runs/", {}, format="json").json()
    # a worker wrote back an error naming the endpoint (as a connection error would)
    Job.objects.filter(judgerun=run["id"]).update(
        state="failed", error=f"URLError: <urlopen {FAKE_URL}/chat/completions> key {FAKE_KEY}"
    )
    AutoLabel.objects.create(
        judge_id=judge_id,
        topic=campaign.topics.get(qid="401"),
        docid="d401-1",
        status="error",
        answer=f"connection refused by {FAKE_URL}",
    )
    for client in (admin_api, api_client_for(researcher)):
        for url in (
            f"/api/v1/campaigns/{campaign.pk}/judges/",
            f"/api/v1/judges/{judge_id}/",
            f"/api/v1/judge-runs/{run['id']}/",
        ):
            response = client.get(url)
            assert response.status_code == 200
            assert_no_secret(response.content, url)
    failed = admin_api.get(f"/api/v1/judge-runs/{run['id']}/").json()
    assert failed["error"] == "URLError: <urlopen ***/chat/completions> key ***"
    # the schema documents no field that could carry one either
    assert_no_secret(admin_api.get("/api/v1/schema/").content, "the schema")


def test_annotators_are_refused_everything_and_researchers_every_change(
    campaign: Campaign,
    pooled: PoolVersion,
    api_client_for: Any,
    annotator: Any,
    researcher: Any,
) -> None:
    judge = imported_judge(campaign)
    services.labels_import(judge=judge, data=LABELS)
    run = JudgeRun.objects.create(
        judge=judge,
        pool=pooled,
        job=Job.objects.create(kind="judge_run", key="judge-run:test", state="done"),
    )
    reads = [
        f"/api/v1/campaigns/{campaign.pk}/judges/",
        f"/api/v1/judges/{judge.pk}/",
        f"/api/v1/judge-runs/{run.pk}/",
    ]
    writes = [
        (
            f"/api/v1/campaigns/{campaign.pk}/judges/",
            {"kind": "imported", "name": "x", "model": "m"},
        ),
        (f"/api/v1/judges/{judge.pk}/runs/", {"pool": 1}),
        (f"/api/v1/judges/{judge.pk}/calibrate/", {"human": 1}),
        (f"/api/v1/judges/{judge.pk}/qrels/", {"kind": "automatic"}),
    ]
    ann = api_client_for(annotator)
    res = api_client_for(researcher)
    anonymous = api_client_for(None)
    for url in reads:
        assert ann.get(url).status_code == 403, url
        assert "umbrela" not in ann.get(url).content.decode()
        assert anonymous.get(url).status_code == 401, url
        assert res.get(url).status_code == 200, url
    for url, body in writes:
        assert ann.post(url, body, format="json").status_code == 403, url
        assert res.post(url, body, format="json").status_code == 403, url
    labels = res.post(
        f"/api/v1/judges/{judge.pk}/labels/", {"file": upload(LABELS)}, format="multipart"
    )
    assert labels.status_code == 403
    assert Judge.objects.count() == 1 and QrelsVersion.objects.count() == 0
    assert JudgeRun.objects.count() == 1
    # a judge of a campaign that does not exist, or no judge at all: 404
    assert res.get("/api/v1/judges/999999/").status_code == 404
    assert res.get("/api/v1/campaigns/999999/judges/").status_code == 404


def test_bad_input_is_a_400_naming_the_field(
    campaign: Campaign, pooled: PoolVersion, admin_api: Any, endpoints: Any
) -> None:
    url = f"/api/v1/campaigns/{campaign.pk}/judges/"

    def create(**fields: Any) -> Any:
        body = {"kind": "openai-compatible", "name": "chat", "model": "m"} | fields
        return admin_api.post(url, body, format="json")

    assert problems_at(create(kind="oracle")) == ["kind"]
    assert problems_at(create(name="Bad Name")) == ["name"]
    assert problems_at(create(model="x" * 201)) == ["model"]
    assert problems_at(create(endpoint="nowhere")) == ["params.endpoint"]
    assert problems_at(create(endpoint="local-vllm", price_prompt_per_1k="nan")) == [
        "price_prompt_per_1k"
    ]
    assert problems_at(create(endpoint="local-vllm", price_prompt_per_1k=-1)) == [
        "price_prompt_per_1k"
    ]
    assert problems_at(create(endpoint="local-vllm", mapping={"0": 0, "1": 7})) == [
        "params.mapping"
    ]
    assert problems_at(create(endpoint="local-vllm", prompt="no placeholders")) == ["prompt"]
    assert not Judge.objects.exists()

    chat = chat_judge(campaign)
    assert problems_at(
        admin_api.post(f"/api/v1/judges/{chat.pk}/runs/", {"pool": 9}, format="json")
    ) == ["pool"]
    assert problems_at(
        admin_api.post(f"/api/v1/judges/{chat.pk}/runs/", {"pool": "one"}, format="json")
    ) == ["pool"]

    judge = imported_judge(campaign)
    labels = f"/api/v1/judges/{judge.pk}/labels/"
    assert problems_at(
        admin_api.post(labels, {"file": upload(LABELS), "format": "xml"}, format="multipart")
    ) == ["format"]
    assert problems_at(admin_api.post(labels, {"format": "trec"}, format="multipart")) == ["file"]
    bad = admin_api.post(
        labels, {"file": upload(b"401 0 d401-1 2\n401 0 d401-2 9\n")}, format="multipart"
    )
    assert bad.status_code == 400
    assert [p.get("line") for p in bad.json()["problems"]] == [2]  # grade 9 is off the scale
    assert not AutoLabel.objects.exists()

    qrels = f"/api/v1/judges/{judge.pk}/qrels/"
    assert problems_at(admin_api.post(qrels, {"kind": "mixed"}, format="json")) == ["kind"]
    assert problems_at(admin_api.post(qrels, {"kind": "hybrid"}, format="json")) == ["human"]
    assert problems_at(admin_api.post(qrels, {"kind": "hybrid", "human": 5}, format="json")) == [
        "human"
    ]
    # an imported judge neither runs nor calibrates: 409 saying why
    ran = admin_api.post(f"/api/v1/judges/{judge.pk}/runs/", {}, format="json")
    assert ran.status_code == 409 and "imported" in ran.json()["detail"]


class LinearScorer:
    """Scores a pair by the grade hidden in its document: d*-1 -> 0.8, -2 -> 0.1, -3 -> 0.45."""

    SCORES = {"1": 0.8, "2": 0.1, "3": 0.45, "4": 0.2}

    def __init__(self, **_: Any) -> None:
        pass

    def similarities(
        self, queries: dict[str, str], texts: dict[str, str], items: list[tuple[str, str]]
    ) -> Any:
        return np.array([self.SCORES[d[-1]] for _, d in items])


PEOPLE = b"".join(  # d*-1 highly relevant, d*-3 somewhat, d*-2 not (topics 401 and 402)
    f"{q} 0 d{q}-{i} {g}\n".encode() for q in ("401", "402") for i, g in ((1, 2), (2, 0), (3, 1))
)


@pytest.fixture
def linear_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """The embedding judge scores with LinearScorer, as if the extra were installed."""
    import judging.autojudge.embedding as embedding

    monkeypatch.setattr(embedding, "EmbeddingScorer", LinearScorer)
    monkeypatch.setattr(embedding, "available", lambda: True)


def minilm(campaign: Campaign) -> Judge:
    return services.judge_create(
        campaign=campaign, name="minilm", kind=JudgeKind.EMBEDDING, model="all-MiniLM-L6-v2"
    )


def test_calibrating_an_embedding_judge_is_accepted_then_reads_done_with_its_next_version(
    campaign: Campaign,
    pooled: PoolVersion,
    admin_api: Any,
    api_client_for: Any,
    researcher: Any,
    linear_model: None,
    as_committed: Any,
) -> None:
    with as_committed():
        human = qrels_imported(campaign=campaign, data=PEOPLE)
    judge = minilm(campaign)
    with as_committed():
        response = admin_api.post(
            f"/api/v1/judges/{judge.pk}/calibrate/",
            {"human": human.number, "pool": 1, "sample": 6, "seed": 3},
            format="json",
        )
    assert response.status_code == 202, response.content
    accepted = response.json()
    calibration = JudgeCalibration.objects.get()
    assert response["Location"] == f"/api/v1/calibrations/{calibration.pk}/"
    assert (accepted["id"], accepted["judge"], accepted["human"], accepted["pool"]) == (
        calibration.pk,
        judge.pk,
        human.number,
        1,
    )
    assert (accepted["sample"], accepted["seed"]) == (6, 3)

    # a researcher polls it: done, naming the version it made
    polled = api_client_for(researcher).get(response["Location"])
    assert polled.status_code == 200, polled.content
    body = polled.json()
    new = Judge.objects.get(name="minilm", version=2)
    assert (body["state"], body["calibrated"], body["error"]) == ("done", new.pk, "")
    assert body["live"] is False and body["finished_at"] is not None
    detail = admin_api.get(f"/api/v1/judges/{new.pk}/").json()
    t = detail["params"]["thresholds"]
    # the scores separate the grades: one cut between 0.1 and 0.45, one between 0.45 and 0.8
    assert len(t) == 2 and 0.1 < t[0] <= 0.45 < t[1] <= 0.8
    info = detail["params"]["calibration"]
    assert (info["items"], info["qrels"], info["pool"], info["seed"]) == (6, 1, 1, 3)
    assert info["exact"] == 1.0 and info["kappa_linear"] == pytest.approx(1.0)


def test_what_needs_no_model_is_refused_before_anything_is_queued(
    campaign: Campaign, pooled: PoolVersion, admin_api: Any, linear_model: None, as_committed: Any
) -> None:
    with as_committed():
        human = qrels_imported(campaign=campaign, data=PEOPLE)
    judge = minilm(campaign)
    url = f"/api/v1/judges/{judge.pk}/calibrate/"
    other = imported_judge(campaign)
    refused = admin_api.post(
        f"/api/v1/judges/{other.pk}/calibrate/", {"human": human.number}, format="json"
    )
    assert refused.status_code == 409 and "only an embedding judge" in refused.json()["detail"]
    assert problems_at(admin_api.post(url, {}, format="json")) == ["human"]
    assert problems_at(admin_api.post(url, {"human": 1, "sample": 1}, format="json")) == ["sample"]
    assert problems_at(admin_api.post(url, {"human": 1, "pool": 9}, format="json")) == ["pool"]
    assert not JudgeCalibration.objects.exists()


def test_without_the_extra_calibrating_is_refused_saying_how_to_install_it(
    campaign: Campaign,
    pooled: PoolVersion,
    admin_api: Any,
    monkeypatch: pytest.MonkeyPatch,
    as_committed: Any,
) -> None:
    import judging.autojudge.embedding as embedding

    monkeypatch.setattr(embedding, "available", lambda: False)
    with as_committed():
        human = qrels_imported(campaign=campaign, data=PEOPLE)
    judge = minilm(campaign)
    refused = admin_api.post(
        f"/api/v1/judges/{judge.pk}/calibrate/", {"human": human.number}, format="json"
    )
    assert refused.status_code == 409
    assert "pip install '.[autojudge]'" in refused.json()["detail"]
    assert not JudgeCalibration.objects.exists()


def test_a_calibration_that_cannot_fit_is_stored_as_failed_saying_why(
    campaign: Campaign, pooled: PoolVersion, admin_api: Any, linear_model: None, as_committed: Any
) -> None:
    with as_committed():  # one grade only: nothing to cut between
        human = qrels_imported(campaign=campaign, data=b"401 0 d401-1 2\n401 0 d401-3 2\n")
    judge = minilm(campaign)
    with as_committed():
        response = admin_api.post(
            f"/api/v1/judges/{judge.pk}/calibrate/", {"human": human.number}, format="json"
        )
    assert response.status_code == 202, response.content
    body = admin_api.get(response["Location"]).json()
    assert body["state"] == "failed" and body["calibrated"] is None
    assert body["error"] == (
        "Conflict: qrels v1 grades 2 pool document(s) with text, with fewer than two different "
        "grades: nothing to calibrate on"
    )
    assert Judge.objects.filter(name="minilm").count() == 1


def test_a_model_that_cannot_load_fails_the_calibration_with_the_install_hint(
    campaign: Campaign,
    pooled: PoolVersion,
    admin_api: Any,
    monkeypatch: pytest.MonkeyPatch,
    as_committed: Any,
) -> None:
    import judging.autojudge.embedding as embedding

    def unavailable(**_: Any) -> Any:
        raise embedding.EmbeddingUnavailable("the model cannot load; install the extra: hint")

    monkeypatch.setattr(embedding, "available", lambda: True)
    monkeypatch.setattr(embedding, "EmbeddingScorer", unavailable)
    with as_committed():
        human = qrels_imported(campaign=campaign, data=PEOPLE)
    judge = minilm(campaign)
    with as_committed():
        response = admin_api.post(
            f"/api/v1/judges/{judge.pk}/calibrate/", {"human": human.number}, format="json"
        )
    body = admin_api.get(response["Location"]).json()
    assert body["state"] == "failed"
    assert body["error"] == "EmbeddingUnavailable: the model cannot load; install the extra: hint"


def test_running_a_done_calibration_again_makes_no_second_version(
    campaign: Campaign, pooled: PoolVersion, linear_model: None, as_committed: Any
) -> None:
    with as_committed():
        human = qrels_imported(campaign=campaign, data=PEOPLE)
    judge = minilm(campaign)
    with as_committed():
        calibration = services.calibration_request(judge=judge, human=human, pool=pooled)
    calibration.refresh_from_db()
    assert calibration.state == "done" and calibration.calibrated is not None
    made, finished = calibration.calibrated_id, calibration.finished_at
    versions = Judge.objects.filter(name="minilm").count()
    assert versions == 2

    jobs.run(calibration.job_id)
    run_job(calibration.job_id)
    calibration.refresh_from_db()
    assert Judge.objects.filter(name="minilm").count() == versions
    assert (calibration.state, calibration.calibrated_id) == ("done", made)
    assert calibration.finished_at == finished


def test_the_same_calibration_asked_twice_while_queued_is_one(
    campaign: Campaign, pooled: PoolVersion, linear_model: None, as_committed: Any
) -> None:
    with as_committed():
        human = qrels_imported(campaign=campaign, data=PEOPLE)
    judge = minilm(campaign)
    # no commit: the task has not run, the first one is still queued
    first = services.calibration_request(judge=judge, human=human, pool=pooled, seed=1)
    again = services.calibration_request(judge=judge, human=human, pool=pooled, seed=1)
    other = services.calibration_request(judge=judge, human=human, pool=pooled, seed=2)
    assert again.pk == first.pk and other.pk != first.pk
    assert first.state == "queued"


def test_annotators_and_researchers_may_not_calibrate_and_only_researchers_read_one(
    campaign: Campaign,
    pooled: PoolVersion,
    admin_api: Any,
    api_client_for: Any,
    annotator: Any,
    researcher: Any,
    linear_model: None,
    as_committed: Any,
) -> None:
    with as_committed():
        human = qrels_imported(campaign=campaign, data=PEOPLE)
    judge = minilm(campaign)
    calibration = services.calibration_request(judge=judge, human=human, pool=pooled)
    post = f"/api/v1/judges/{judge.pk}/calibrate/"
    get = f"/api/v1/calibrations/{calibration.pk}/"
    ann, res, anonymous = (api_client_for(u) for u in (annotator, researcher, None))
    for client, code in ((ann, 403), (res, 403), (anonymous, 401)):
        assert client.post(post, {"human": human.number}, format="json").status_code == code
    assert JudgeCalibration.objects.count() == 1
    refused = ann.get(get)
    assert refused.status_code == 403 and "minilm" not in refused.content.decode()
    assert anonymous.get(get).status_code == 401
    assert res.get(get).status_code == 200
    # no such calibration, and no such judge: 404
    assert res.get(f"/api/v1/calibrations/{calibration.pk + 1}/").status_code == 404
    assert admin_api.post("/api/v1/judges/999999/calibrate/", {"human": 1}).status_code == 404
