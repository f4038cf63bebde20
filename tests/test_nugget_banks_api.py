"""Nugget banks over the API: drafting (an upload validated whole, a copy, an extraction, a
judge's draft), reading, every kind of edit with its history, stale and frozen edits refused,
publishing, and who may do what (another role's request refused, a draft invisible to
researchers)."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from judging.assessments.models import NuggetBank, NuggetEdit
from judging.assessments.nuggets import bank_publish
from judging.autojudge import nugget_drafts
from judging.campaigns.models import Campaign
from judging.campaigns.services import campaign_create
from tests.autojudge import protocol_server as ps
from tests.test_nugget_banks import draft, texts_and_qrels
from tests.test_nugget_banks_drafts import KEY, Lookup, chat_judge, endpoint_knobs

pytestmark = pytest.mark.django_db

NUGGETS = (
    b'{"qid": "401", "query": "does honey spoil", "nuggets": ['
    b'{"text": "Honey never spoils", "importance": "vital"}, '
    b'{"text": "It was found in tombs", "importance": "okay"}]}\n'
)


def banks_url(campaign: Campaign) -> str:
    return f"/api/v1/campaigns/{campaign.pk}/nugget-banks/"


def bank_url(bank: NuggetBank, tail: str = "") -> str:
    return f"/api/v1/campaigns/{bank.campaign_id}/nugget-banks/{bank.number}/{tail}"


def test_an_admin_imports_a_file_and_everyone_reads_what_they_may(
    campaign: Campaign, admin_user: Any, annotator: Any, researcher: Any, api_client_for: Any
) -> None:
    admin = api_client_for(admin_user)
    upload = SimpleUploadedFile("bank.jsonl", NUGGETS)
    made = admin.post(
        banks_url(campaign), {"source": "imported", "file": upload}, format="multipart"
    )
    assert made.status_code == 201, made.content
    body = made.json()
    assert (body["number"], body["state"], body["source"], body["topics"], body["nuggets"]) == (
        1, "draft", "imported", 1, 2,
    )  # fmt: skip
    assert body["note"] == "imported from bank.jsonl" and body["skipped"] == []
    made_bank = NuggetBank.objects.get(pk=body["id"])
    detail = api_client_for(annotator).get(bank_url(made_bank)).json()
    (t401,) = [t for t in detail["by_topic"] if t["qid"] == "401"]
    assert [(n["key"], n["importance"], n["text"]) for n in t401["nuggets"]] == [
        ("n1", "vital", "Honey never spoils"),
        ("n2", "okay", "It was found in tombs"),
    ]
    assert [t["qid"] for t in detail["by_topic"]] == ["401", "402", "403"]
    # a researcher does not see a draft: not listed, not found
    reader = api_client_for(researcher)
    assert reader.get(banks_url(campaign)).json() == []
    assert reader.get(bank_url(made_bank)).status_code == 404
    bank_publish(bank=NuggetBank.objects.get(pk=body["id"]), by=admin_user)
    assert [b["number"] for b in reader.get(banks_url(campaign)).json()] == [1]
    assert reader.get(bank_url(made_bank)).status_code == 200


def test_a_bad_file_is_refused_whole_with_its_lines(
    campaign: Campaign, admin_user: Any, api_client_for: Any
) -> None:
    data = NUGGETS + b'{"qid": "999", "nuggets": []}\n' + b'{"qid": "402", "nuggets": [{}]}\n'
    upload = SimpleUploadedFile("bad.jsonl", data)
    answer = api_client_for(admin_user).post(
        banks_url(campaign), {"source": "imported", "file": upload}, format="multipart"
    )
    assert answer.status_code == 400
    assert [(p["line"], p["message"]) for p in answer.json()["problems"]] == [
        (3, "nuggets[0].text: must be a string, not missing (or null)"),
        (3, "nuggets[0].importance: missing: 'vital' or 'okay'"),
    ]
    # the file read, its topics are checked against the campaign's
    upload = SimpleUploadedFile("bad.jsonl", NUGGETS + b'{"qid": "999", "nuggets": []}\n')
    answer = api_client_for(admin_user).post(
        banks_url(campaign), {"source": "imported", "file": upload}, format="multipart"
    )
    assert answer.status_code == 400
    assert answer.json()["problems"] == [
        {"line": 2, "message": "topic '999' is not a topic of campaign 'Test campaign'"}
    ]
    assert not NuggetBank.objects.exists()


def test_a_copy_and_an_extraction_are_drafted_by_request(
    campaign: Campaign, admin_user: Any, api_client_for: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts_and_qrels(campaign, admin_user)
    admin = api_client_for(admin_user)
    monkeypatch.setattr(nugget_drafts, "_embedding_model", Lookup)
    extracted = admin.post(
        banks_url(campaign), {"source": "extracted", "most": 2, "vital": 1}, format="json"
    )
    assert extracted.status_code == 201, extracted.content
    body = extracted.json()
    assert (body["source"], body["qrels"], body["nuggets"]) == ("extracted", 1, 4)
    assert body["skipped"] == [{"topic": "403", "reason": "no relevant segment in qrels v1"}]
    copied = admin.post(banks_url(campaign), {"source": "copied", "based_on": 1}, format="json")
    assert copied.status_code == 201
    assert (copied.json()["based_on"], copied.json()["qrels"], copied.json()["nuggets"]) == (
        1,
        1,
        4,
    )
    missing = admin.post(banks_url(campaign), {"source": "copied"}, format="json")
    assert missing.status_code == 400 and missing.json()["problems"] == [
        {"location": "based_on", "message": "required for copied"}
    ]


def test_only_admins_draft_and_publish(
    campaign: Campaign, admin_user: Any, annotator: Any, researcher: Any, api_client_for: Any
) -> None:
    bank = draft(campaign, admin_user)
    for user in (annotator, researcher):
        client = api_client_for(user)
        made = client.post(banks_url(campaign), {"source": "copied", "based_on": 1}, format="json")
        assert made.status_code == 403
        assert client.post(bank_url(bank, "publish/")).status_code == 403
    assert api_client_for(None).get(banks_url(campaign)).status_code == 401
    published = api_client_for(admin_user).post(bank_url(bank, "publish/"))
    assert published.status_code == 200
    assert (
        published.json()["empty_topics"] == ["403"] and len(published.json()["content_hash"]) == 64
    )
    again = api_client_for(admin_user).post(bank_url(bank, "publish/"))
    assert again.status_code == 409
    assert NuggetBank.objects.count() == 1


def test_another_campaigns_bank_is_not_found_by_a_campaign_url(
    campaign: Campaign, admin_user: Any, api_client_for: Any
) -> None:
    scale = [{"grade": 0, "label": "No"}, {"grade": 1, "label": "Yes"}]
    other = campaign_create(name="Other", scale=scale, created_by=admin_user)
    draft(campaign, admin_user)
    assert api_client_for(admin_user).get(banks_url(other)).json() == []
    assert api_client_for(admin_user).get(f"{banks_url(other)}1/").status_code == 404
    assert api_client_for(admin_user).get(f"{banks_url(campaign)}1/").status_code == 200


def _edit(client: Any, bank: NuggetBank, **body: Any) -> Any:
    return client.post(bank_url(bank, "edits/"), body, format="json")


def test_every_edit_through_the_api_with_its_history(
    campaign: Campaign, admin_user: Any, annotator: Any, api_client_for: Any
) -> None:
    bank = draft(campaign, admin_user)
    client = api_client_for(annotator)
    base = client.get(bank_url(bank)).json()["by_topic"][0]["last_edit"]
    steps: list[dict[str, Any]] = [
        {"op": "add", "text": "Honey is sweet", "importance": "okay", "position": 0},
        {"op": "reword", "key": "n4", "text": "Honey tastes sweet"},
        {"op": "importance", "key": "n4", "importance": "vital"},
        {"op": "merge", "keys": ["n1", "n2"], "text": "Honey never spoils, even in tombs"},
        {"op": "split", "key": "n3", "parts": ["Honey holds", "little water"]},
        {"op": "move", "key": "n4", "to": 3},
        {"op": "delete", "key": "n6"},
    ]
    for step in steps:
        answer = _edit(client, bank, topic="401", base=base, **step)
        assert answer.status_code == 201, (step, answer.content)
        base = answer.json()["topic"]["last_edit"]
        assert answer.json()["edit"]["id"] == base
    nuggets = answer.json()["topic"]["nuggets"]
    # add n4 at 0 -> n4 n1 n2 n3; merge n1 n2 -> n5 (at n1's place); split n3 -> n6 n7;
    # move n4 to the end; delete n6
    assert [(n["key"], n["importance"], n["text"]) for n in nuggets] == [
        ("n5", "vital", "Honey never spoils, even in tombs"),
        ("n7", "vital", "little water"),
        ("n4", "vital", "Honey tastes sweet"),
    ]
    history = client.get(bank_url(bank, "edits/?topic=401")).json()
    assert [h["op"] for h in history] == [
        "draft", "add", "reword", "importance", "merge", "split", "move", "delete",
    ]  # fmt: skip
    merge = history[4]
    assert [b["key"] for b in merge["before"]] == ["n1", "n2"]
    assert merge["after"][0]["sources"] == ["d401-1"] and merge["editor"] == "ann-annotator"
    assert client.get(bank_url(bank, "edits/")).status_code == 400  # no topic


def test_stale_frozen_and_incomplete_edits_are_refused(
    campaign: Campaign, admin_user: Any, annotator: Any, researcher: Any, api_client_for: Any
) -> None:
    bank = draft(campaign, admin_user)
    client = api_client_for(annotator)
    base = NuggetEdit.objects.get(bank=bank, topic__qid="401").pk
    first = _edit(client, bank, topic="401", base=base, op="delete", key="n1")
    assert first.status_code == 201
    stale = _edit(client, bank, topic="401", base=base, op="reword", key="n2", text="x")
    assert stale.status_code == 409 and "changed since you loaded it" in stale.json()["detail"]
    incomplete = _edit(client, bank, topic="401", base=first.json()["edit"]["id"], op="reword")
    assert incomplete.status_code == 400
    assert {p["location"] for p in incomplete.json()["problems"]} == {"key", "text"}
    assert (
        _edit(api_client_for(researcher), bank, topic="401", base=0, op="delete").status_code == 403
    )
    bank_publish(bank=bank, by=admin_user)
    frozen = _edit(client, bank, topic="402", base=0, op="delete", key="n1")
    assert frozen.status_code == 409 and "frozen" in frozen.json()["detail"]


def test_a_judge_drafts_through_the_api(
    campaign: Campaign, admin_user: Any, api_client_for: Any
) -> None:
    texts_and_qrels(campaign, admin_user)
    admin = api_client_for(admin_user)
    with ps.ProtocolServer(KEY) as server, endpoint_knobs(server):
        server.responder = lambda body: ps.ok("vital | Honey never spoils | 1")
        judge = chat_judge(campaign, server)
        answer = admin.post(
            banks_url(campaign), {"source": "judge", "judge": judge.pk, "most": 3}, format="json"
        )
    assert answer.status_code == 201, answer.content
    body = answer.json()
    assert (body["source"], body["topics"], body["nuggets"]) == ("judge", 2, 2)
    assert body["skipped"] == [
        {"topic": "403", "reason": "no relevant segment with text in qrels v1"}
    ]
    unknown = admin.post(banks_url(campaign), {"source": "judge", "judge": 999999}, format="json")
    assert unknown.status_code == 400
    assert unknown.json()["problems"] == [
        {"location": "judge", "message": "campaign has no judge 999999"}
    ]
