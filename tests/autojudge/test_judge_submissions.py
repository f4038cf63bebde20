"""Judges as submissions (issue 35, point 1): a participant submits a judge's labels for a pool
version, validated whole; declares what it is; never reads another participant's judge; and
may name only the endpoints the organisers opened to them."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from judging.autojudge import services
from judging.autojudge.models import AutoLabel, Judge, JudgeKind, JudgeRun
from judging.campaigns.models import Campaign
from judging.pools.models import PoolVersion
from tests.autojudge.judge_setup import FAKE_KEY, FAKE_URL, LABELS, Scripted, assert_no_secret
from tests.knobs import override_knobs

pytestmark = pytest.mark.django_db


def signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


ENDPOINTS = {
    "track-vllm": {"base_url": FAKE_URL, "api_key": FAKE_KEY, "participants": "rita-researcher"},
    "organisers": {"base_url": FAKE_URL, "api_key": FAKE_KEY},
}


def submit(client: Any, campaign: Campaign, **fields: Any) -> Any:
    body: dict[str, Any] = {
        "name": "rita-umbrela",
        "model": "llama-3.1-70b",
        "saw_human_qrels": "false",
        "family": "llama",
        "open_weights": "true",
        "prompt": "UMBRELA's, unchanged",
    }
    body.update(fields)
    if "file" not in fields and fields.get("kind") != "openai-compatible":
        body["file"] = SimpleUploadedFile("labels.txt", LABELS)
    return client.post(
        f"/api/v1/campaigns/{campaign.pk}/judge-submissions/", body, format="multipart"
    )


def test_a_participant_submits_labels_and_declares_the_judge(
    campaign: Campaign, pooled: PoolVersion, api_client_for: Any, researcher: Any
) -> None:
    api = api_client_for(researcher)
    made = submit(api, campaign, calls="11", cost="0.05", seconds="3.5")
    assert made.status_code == 201, made.content
    judge = made.json()["judge"]
    assert made.json()["run"] is None
    assert (judge["name"], judge["version"], judge["kind"], judge["labels"]) == (
        "rita-umbrela",
        1,
        "imported",
        11,
    )
    assert judge["owner"] == "rita-researcher" and judge["pool"] == pooled.number
    assert (judge["family"], judge["open_weights"], judge["saw_human_qrels"]) == (
        "llama",
        True,
        False,
    )
    stored = Judge.objects.get(pk=judge["id"])
    assert stored.params["declared"] == {"calls": 11.0, "cost": 0.05, "seconds": 3.5}
    assert stored.prompt == "UMBRELA's, unchanged"
    listed = api.get(f"/api/v1/campaigns/{campaign.pk}/judge-submissions/").json()
    assert [j["id"] for j in listed["results"]] == [judge["id"]]
    # the same name again, with other labels: the participant's next version, the first kept
    again = submit(api, campaign, file=SimpleUploadedFile("l.txt", b"401 0 d401-1 0\n"))
    assert again.status_code == 201, again.content
    assert again.json()["judge"]["version"] == 2
    assert AutoLabel.objects.filter(judge_id=judge["id"]).count() == 11


def test_labels_outside_the_pool_or_bad_lines_store_nothing(
    campaign: Campaign, pooled: PoolVersion, api_client_for: Any, researcher: Any
) -> None:
    api = api_client_for(researcher)
    outside = submit(api, campaign, file=SimpleUploadedFile("l.txt", LABELS + b"401 0 nope 1\n"))
    assert outside.status_code == 400, outside.content
    body = outside.json()
    assert "outside pool v1" in body["detail"]
    assert [p["location"] for p in body["problems"]] == ["401 nope"]
    bad = submit(api, campaign, file=SimpleUploadedFile("l.txt", b"401 0 d401-1 7\n"))
    assert bad.status_code == 400 and bad.json()["problems"][0]["line"] == 1
    missing = submit(api, campaign, saw_human_qrels="")
    assert missing.status_code == 400 and "saw_human_qrels" in missing.content.decode()
    no_pool = submit(api, campaign, pool="9")
    assert no_pool.status_code == 400 and "pool v9 is not built" in no_pool.content.decode()
    assert not Judge.objects.exists()


def test_another_participant_never_reads_the_judge_or_its_labels(
    campaign: Campaign,
    pooled: PoolVersion,
    api_client_for: Any,
    researcher: Any,
    other_researcher: Any,
    admin_user: Any,
) -> None:
    made = submit(api_client_for(researcher), campaign)
    judge_id = made.json()["judge"]["id"]
    other = api_client_for(other_researcher)
    assert other.get(f"/api/v1/judges/{judge_id}/").status_code == 404
    page = f"/campaigns/{campaign.pk}/judges/{judge_id}/"
    assert signed_in(other_researcher).get(page).status_code == 404
    own = signed_in(researcher).get(page)
    assert own.status_code == 200 and 'id="judge-submission"' in own.content.decode()
    assert "it saw none of people's judgments" in own.content.decode()
    assert other.get(f"/api/v1/campaigns/{campaign.pk}/judges/").json()["count"] == 0
    assert other.get(f"/api/v1/campaigns/{campaign.pk}/judge-submissions/").json()["count"] == 0
    # the name is the participant's: another cannot add a version to it
    taken = submit(other, campaign)
    assert taken.status_code == 409 and "taken" in taken.json()["detail"]
    # the organisers read it; so does its owner
    assert api_client_for(admin_user).get(f"/api/v1/judges/{judge_id}/").status_code == 200
    assert api_client_for(researcher).get(f"/api/v1/judges/{judge_id}/").status_code == 200


def test_a_participant_names_only_an_endpoint_opened_to_them(
    campaign: Campaign,
    pooled: PoolVersion,
    api_client_for: Any,
    researcher: Any,
    other_researcher: Any,
    as_committed: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the run is labelled by a scripted labeller: no request leaves the test
    monkeypatch.setitem(services._LABELLERS, JudgeKind.OPENAI, Scripted)
    with override_knobs(llm_endpoints=ENDPOINTS):
        listed = api_client_for(researcher).get(
            f"/api/v1/campaigns/{campaign.pk}/judge-submissions/"
        )
        assert listed.json()["endpoints"] == ["track-vllm"]
        closed = submit(
            api_client_for(researcher), campaign, kind="openai-compatible", endpoint="organisers"
        )
        assert closed.status_code == 400 and "track-vllm" in closed.json()["detail"]
        refused = submit(
            api_client_for(other_researcher),
            campaign,
            name="oscar",
            kind="openai-compatible",
            endpoint="track-vllm",
        )
        assert refused.status_code == 400 and "none is open to you" in refused.json()["detail"]
        with as_committed():
            made = submit(
                api_client_for(researcher),
                campaign,
                kind="openai-compatible",
                endpoint="track-vllm",
                prompt="",
            )
        assert made.status_code == 201, made.content
        assert_no_secret(made.content, "a submission's answer")
        run = JudgeRun.objects.get(pk=made.json()["run"])
        assert run.pool_id == pooled.pk and run.judge.owner == researcher
        assert run.state == "done" and run.ok == 12  # every pool document, by the labeller


def test_a_participant_submits_from_the_judges_page(
    campaign: Campaign, pooled: PoolVersion, researcher: Any
) -> None:
    client = signed_in(researcher)
    page = client.get(f"/campaigns/{campaign.pk}/judges/").content.decode()
    assert 'id="judge-submit"' in page
    url = f"/campaigns/{campaign.pk}/judges/submit/"
    form = {"name": "rita-page", "model": "m", "saw_human_qrels": "no", "open_weights": "yes"}
    refused = client.post(url, form | {"file": SimpleUploadedFile("l.txt", b"401 0 nope 1\n")})
    assert refused.status_code == 302 and refused["Location"].endswith("#submit")
    assert not Judge.objects.exists()
    made = client.post(url, form | {"file": SimpleUploadedFile("l.txt", LABELS), "cost": "0.2"})
    judge = Judge.objects.get(name="rita-page")
    assert made["Location"] == f"/campaigns/{campaign.pk}/judges/{judge.pk}/"
    assert (judge.owner, judge.open_weights, judge.saw_human_qrels) == (researcher, True, False)
    assert judge.params["declared"] == {"cost": 0.2}
    unsaid = client.post(url, form | {"saw_human_qrels": "", "name": "other"})
    assert unsaid.status_code == 302 and not Judge.objects.filter(name="other").exists()
