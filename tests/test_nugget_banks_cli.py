"""``manage.py nuggets``: import, extract, publish and export; what is exported imports again
as it was (a round trip), and a bad file or a missing version is a command error that names it."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from judging.assessments.models import NuggetBank
from judging.assessments.nugget_selectors import bank_topics
from judging.autojudge import nugget_drafts
from judging.campaigns.models import Campaign
from tests.test_nugget_banks import texts_and_qrels
from tests.test_nugget_banks_drafts import Lookup

pytestmark = pytest.mark.django_db

FILE = (
    '{"qid": "401", "nuggets": [{"text": "Honey never spoils", "importance": "vital", '
    '"sources": ["d401-1"]}, {"text": "Honey holds little water", "importance": "okay"}]}\n'
    '{"qid": "402", "nuggets": [{"text": "Bees make honey from nectar", "importance": "vital"}]}\n'
)


def run(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("nuggets", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_import_publish_export_and_import_again(
    campaign: Campaign, admin_user: Any, tmp_path: Path
) -> None:
    texts_and_qrels(campaign, admin_user)
    path = tmp_path / "bank.jsonl"
    path.write_text(FILE, encoding="utf-8")
    out, _ = run("import", str(path), "--campaign", campaign.name)
    assert out == "nugget bank v1 drafted (imported): 3 nuggets over 2 topic(s)\n"
    bank = NuggetBank.objects.get(number=1)
    assert (bank.qrels.number if bank.qrels else None, bank.created_by) == (1, None)
    out, err = run("publish", "--campaign", str(campaign.pk))
    assert out == f"nugget bank v1 published: 3 nuggets, sha256 {bank_hash(campaign)}\n"
    assert err == "topics without a nugget: 403\n"
    exported, _ = run("export", "--campaign", campaign.name)
    assert [json.loads(line) for line in exported.splitlines()] == [
        {
            "qid": "401",
            "nuggets": [
                {"text": "Honey never spoils", "importance": "vital", "sources": ["d401-1"],
                 "key": "n1"},
                {"text": "Honey holds little water", "importance": "okay", "key": "n2"},
            ],
        },
        {"qid": "402", "nuggets": [{"text": "Bees make honey from nectar", "importance": "vital",
                                    "key": "n1"}]},
    ]  # fmt: skip
    again = tmp_path / "again.jsonl"
    again.write_text(exported, encoding="utf-8")
    run("import", str(again), "--campaign", campaign.name)
    second = NuggetBank.objects.get(number=2)
    first = NuggetBank.objects.get(number=1)

    def content(b: NuggetBank) -> list[tuple[str, list[tuple[str, str, tuple[str, ...]]]]]:
        return [
            (t.qid, [(n.text, n.importance, n.sources) for n in t.nuggets]) for t in bank_topics(b)
        ]

    assert content(second) == content(first)  # texts, importance and sources as they were
    # an imported nugget is a new one: keys after those the topic has used
    assert [n.key for n in bank_topics(second, qid="401")[0].nuggets] == ["n3", "n4"]
    written = tmp_path / "out.jsonl"
    _, err = run("export", "--campaign", campaign.name, "--bank", "1", "-o", str(written))
    assert written.read_text(encoding="utf-8") == exported
    assert err == f"nugget bank v1: 2 topic(s) written to {written}\n"


def bank_hash(campaign: Campaign) -> str:
    return NuggetBank.objects.get(campaign=campaign, number=1).content_hash


def test_extract_drafts_from_the_relevant_segments(
    campaign: Campaign, admin_user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts_and_qrels(campaign, admin_user)
    monkeypatch.setattr(nugget_drafts, "_embedding_model", Lookup)
    out, err = run("extract", "--campaign", campaign.name, "--most", "1", "--vital", "1")
    assert out == "nugget bank v1 drafted (extracted): 2 nuggets over 2 topic(s)\n"
    assert err == "topic 403: no nugget (no relevant segment in qrels v1)\n"


def test_errors_name_the_problem(campaign: Campaign, tmp_path: Path) -> None:
    bad = tmp_path / "bad.tsv"
    bad.write_text("401\tvital\tok\n999\tokay\tx\n", encoding="utf-8")
    with pytest.raises(CommandError) as caught:
        run("import", str(bad), "--campaign", campaign.name)
    assert str(caught.value).splitlines() == [
        "the nugget file names topics the campaign does not have; nothing was stored",
        "  line 2: topic '999' is not a topic of campaign 'Test campaign'",
    ]
    with pytest.raises(CommandError, match="has no nugget bank v7"):
        run("publish", "--campaign", campaign.name, "--bank", "7")
    with pytest.raises(CommandError, match="no such file"):
        run("import", str(tmp_path / "missing.jsonl"), "--campaign", campaign.name)
    with pytest.raises(CommandError, match="nothing to draft from"):
        run("extract", "--campaign", campaign.name)
