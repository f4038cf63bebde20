"""Judging units beyond documents (issue 34, point 2): nugget assignment, citation support and
nugget creation are items of the one queue (``JudgingSlot``), leased by the one ``Lease``
table, judged into the one ``Judgment`` table with its history; an assessor's queue interleaves
them with the documents of the same topic; each kind has its grades and its screen, blind to
runs; and a judgment of a unit never enters qrels, pooling or document agreement."""

from __future__ import annotations

import json
from collections.abc import Callable
from io import StringIO
from typing import Any

import pytest
from django.apps import apps
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import IntegrityError, transaction
from django.test import Client

from judging.assessments import queue, selectors, units
from judging.assessments.models import (
    GoldItem,
    JudgingSlot,
    Judgment,
    JudgmentChange,
    Lease,
    Nugget,
    NuggetBank,
    QrelsEntry,
    UnitKind,
)
from judging.campaigns.models import Campaign, Document, RunAnswer
from judging.core.errors import InvalidInput
from judging.core.roles import account
from judging.workflows.judgments import judgment_recorded
from judging.workflows.pools import pool_requested
from judging.workflows.qrels import qrels_published
from tests._answer_runs import submit_answers

pytestmark = pytest.mark.django_db

A1 = "Light pushes the sail."
A2 = "The push adds up over months."
ANSWER = {
    "run_id": "secret-system-x",
    "topic_id": "401",
    "references": ["d1", "d2", "d3"],
    "answer": [{"text": A1, "citations": [0, 2]}, {"text": A2, "citations": [1]}],
}
NUGGETS = [("n1", "vital", "Sunlight pushes a solar sail"), ("n2", "okay", "It takes months")]


@pytest.fixture
def rag(
    campaign: Campaign,
    researcher: Any,
    admin_user: Any,
    api_client_for: Callable[[Any], Any],
    as_committed: Callable[[], Any],
) -> tuple[Campaign, NuggetBank]:
    """Topic 401: an answer run whose references d1-d3 are pooled (document slots at positions
    0, 1, 2), a published bank of two nuggets, and the run's assignment and support items
    queued."""
    for docid, text in [("d1", "Sails ride on light."), ("d2", "Months."), ("d3", "Push.")]:
        Document.objects.create(campaign=campaign, docid=docid, title=docid, text=text)
    submit_answers(api_client_for(researcher), campaign, [ANSWER])
    with as_committed():
        version, _ = pool_requested(campaign=campaign, strategy="depth", depth=10)
    version.refresh_from_db()
    assert version.number == 1, version.error
    bank = NuggetBank.objects.create(
        campaign=campaign, number=1, state="published", source="imported", created_by=admin_user
    )
    topic = campaign.topics.get(qid="401")
    for i, (key, importance, text) in enumerate(NUGGETS):
        Nugget.objects.create(
            bank=bank, topic=topic, key=key, position=i, text=text, importance=importance
        )
    answers = list(RunAnswer.objects.all())
    made = units.units_enqueue(
        campaign=campaign,
        kind=UnitKind.NUGGET_ASSIGNMENT,
        units=units.assignment_units(bank, answers),
    )
    assert made == 2
    made = units.units_enqueue(
        campaign=campaign,
        kind=UnitKind.CITATION_SUPPORT,
        units=units.support_units(answers, citations="all"),
    )
    assert made == 3  # A1 cites d1 and d3, A2 cites d2
    return campaign, bank


GRADE = {"document": 2, "nugget_assignment": 2, "citation_support": 1, "nugget_creation": 1}


def _judge_all(campaign: Campaign, annotator: Any) -> list[tuple[str, str]]:
    """Lease and judge until nothing is left; the (kind, key) of each item in serving order."""
    who = account(annotator)
    served: list[tuple[str, str]] = []
    while (lease := queue.lease_next(campaign=campaign, annotator=who)) is not None:
        slot = lease.slot
        served.append((slot.kind, slot.docid))
        judgment_recorded(lease_id=lease.pk, annotator=who, grade=GRADE[slot.kind])
        assert len(served) < 50
    return served


def test_one_queue_interleaves_kinds_without_a_second_lease_table(
    rag: tuple[Campaign, NuggetBank], annotator: Any
) -> None:
    campaign, bank = rag
    served = _judge_all(campaign, annotator)
    kinds = [k for k, _ in served]
    # every item served once: 3 documents, 2 (answer, nugget) pairs, 3 (sentence, citation)
    assert sorted(kinds) == sorted(
        ["document"] * 3 + ["nugget_assignment"] * 2 + ["citation_support"] * 3
    )
    # interleaved: each new item took the place of an open one (positions 0, 1, 2 of topic
    # 401), so the documents d1-d3 alternate with the units, not one kind after the other
    assert kinds == [
        "document",
        "nugget_assignment",
        "citation_support",
        "document",
        "nugget_assignment",
        "citation_support",
        "document",
        "citation_support",
    ]
    assert [k for k, d in served if k == "document"] and served[0] == ("document", "d1")
    # one lease table: every item of every kind was leased through Lease, and no other model
    # points at a slot but the lease and the judgment
    leases = Lease.objects.filter(annotator=annotator).select_related("slot")
    assert sorted(lease.slot.kind for lease in leases) == sorted(kinds)
    pointing = {
        model.__name__
        for model in apps.get_models()
        for field in model._meta.get_fields()
        if field.is_relation
        and field.concrete
        and getattr(field, "related_model", None) is JudgingSlot
    }
    assert pointing == {"Lease", "Judgment"}
    # one judgment history: each judgment and its history row carry the kind
    assert set(Judgment.objects.values_list("kind", flat=True)) == set(kinds)
    assert sorted(JudgmentChange.objects.values_list("kind", flat=True)) == sorted(kinds)
    assert bank.pk  # the items name their bank in their keys
    assert all(key.startswith(f"b{bank.pk}:") for k, key in served if k == "nugget_assignment")


def test_each_kind_has_its_grades_and_no_answer_spans(
    rag: tuple[Campaign, NuggetBank], annotator: Any
) -> None:
    campaign, _ = rag
    who = account(annotator)
    lease = queue.lease_next(campaign=campaign, annotator=who)
    assert lease is not None and lease.slot.kind == "document"
    judgment_recorded(lease_id=lease.pk, annotator=who, grade=0)
    lease = queue.lease_next(campaign=campaign, annotator=who)
    assert lease is not None and lease.slot.kind == "nugget_assignment"
    with pytest.raises(InvalidInput, match="scale of a nugget_assignment item"):
        judgment_recorded(lease_id=lease.pk, annotator=who, grade=3)
    with pytest.raises(InvalidInput, match="answer spans are marked in documents"):
        judgment_recorded(lease_id=lease.pk, annotator=who, grade=2, answers=[[0, 4]])
    recorded = judgment_recorded(lease_id=lease.pk, annotator=who, grade=1)
    assert (recorded.judgment.kind, recorded.judgment.grade) == ("nugget_assignment", 1)
    assert recorded.judgment.spans is None and recorded.suggestion is None
    # changed by going back, undone like any judgment: the item is leased back
    queue.judgment_change(judgment_id=recorded.judgment.pk, annotator=who, grade=2)
    assert queue.judgment_undo(campaign=campaign, annotator=who) is None  # the change reverted
    back = queue.judgment_undo(campaign=campaign, annotator=who)
    assert back is not None and back.slot.kind == "nugget_assignment"
    history = list(
        JudgmentChange.objects.filter(kind="nugget_assignment").values_list(
            "old_grade", "new_grade"
        )
    )
    assert history == [(None, 1), (1, 2), (2, 1), (1, None)]


def test_units_stay_out_of_qrels_pools_and_document_agreement(
    rag: tuple[Campaign, NuggetBank], annotator: Any, admin_user: Any
) -> None:
    campaign, _ = rag
    _judge_all(campaign, annotator)
    version, created = qrels_published(campaign=campaign, created_by=admin_user)
    assert created
    assert sorted(QrelsEntry.objects.filter(version=version).values_list("docid", flat=True)) == [
        "d1",
        "d2",
        "d3",
    ]
    assert {key for (_, key), _, _ in selectors.current_judgments(campaign)} == {"d1", "d2", "d3"}
    support = selectors.current_judgments(campaign, UnitKind.CITATION_SUPPORT)
    assert len(support) == 3 and all("@d" in key for (_, key), _, _ in support)
    assert selectors.judged_documents(campaign)["401"] == {"d1", "d2", "d3"}


def test_identical_answers_of_two_runs_are_one_item(
    rag: tuple[Campaign, NuggetBank], researcher: Any, api_client_for: Callable[[Any], Any]
) -> None:
    campaign, bank = rag
    submit_answers(api_client_for(researcher), campaign, [{**ANSWER, "run_id": "another-system"}])
    answers = list(RunAnswer.objects.all())
    assert len(answers) == 2
    assert len(units.assignment_units(bank, answers)) == 2
    assert (
        units.units_enqueue(
            campaign=campaign,
            kind=UnitKind.NUGGET_ASSIGNMENT,
            units=units.assignment_units(bank, answers),
        )
        == 0
    )


def test_a_judgment_keeps_its_kind(rag: tuple[Campaign, NuggetBank], annotator: Any) -> None:
    campaign, _ = rag
    _judge_all(campaign, annotator)
    judgment = Judgment.objects.filter(kind="citation_support").first()
    assert judgment is not None
    with pytest.raises(IntegrityError, match="immutable:"), transaction.atomic():
        Judgment.objects.filter(pk=judgment.pk).update(kind="document")


def _api_lease_until(client: Any, campaign: Campaign, kind: str) -> dict[str, Any]:
    for _ in range(10):
        r = client.post(f"/api/v1/campaigns/{campaign.pk}/leases/")
        assert r.status_code == 201, r.content
        body: dict[str, Any] = r.json()
        if body["kind"] == kind:
            return body
        judged = client.post(
            f"/api/v1/leases/{body['id']}/judgment/", {"grade": GRADE[body["kind"]]}, format="json"
        )
        assert judged.status_code in (200, 201), judged.content
    raise AssertionError(f"no {kind} item served")


def test_the_api_serves_a_unit_with_its_scale_and_nothing_about_runs(
    rag: tuple[Campaign, NuggetBank], annotator: Any, api_client_for: Callable[[Any], Any]
) -> None:
    campaign, _ = rag
    client = api_client_for(annotator)
    body = _api_lease_until(client, campaign, "citation_support")
    assert body["unit"]["sentence"] == A1 and body["unit"]["segment"] == "d1"
    assert body["unit"]["segment_text"] == "Sails ride on light."
    assert [s["grade"] for s in body["scale"]] == [0, 1, 2]
    assert "secret-system-x" not in json.dumps(body)
    refused = client.post(f"/api/v1/leases/{body['id']}/judgment/", {"grade": 5}, format="json")
    assert refused.status_code == 400 and "citation_support" in refused.content.decode()
    made = client.post(f"/api/v1/leases/{body['id']}/judgment/", {"grade": 2}, format="json")
    assert made.status_code == 201 and made.json()["kind"] == "citation_support"


def test_the_judging_page_shows_each_kind(rag: tuple[Campaign, NuggetBank], annotator: Any) -> None:
    campaign, _ = rag
    web = Client()
    web.force_login(annotator)
    who = account(annotator)
    lease = queue.lease_next(campaign=campaign, annotator=who)
    assert lease is not None
    judgment_recorded(lease_id=lease.pk, annotator=who, grade=2)
    current = queue.lease_next(campaign=campaign, annotator=who)  # the first assignment
    assert current is not None
    page = web.get(f"/annotate/{campaign.pk}/").content.decode()
    assert "Does the answer contain this nugget?" in page
    assert "Sunlight pushes a solar sail" in page and A1 in page and A2 in page
    assert "secret-system-x" not in page
    assert 'value="2" data-label="Supported" class="grade" data-key="2"' in page
    assert '<article class="document card" aria-label="Document" hidden>' in page
    # the page's next items arrive as JSON with their kind, grades and unit
    ahead = web.post(
        f"/annotate/{campaign.pk}/ahead/",
        json.dumps({"current": current.pk, "count": 1}),
        content_type="application/json",
    ).json()
    item = ahead["ahead"]
    assert item["kind"] == "citation_support"
    assert [g["label"] for g in item["grades"]] == ["No support", "Partial support", "Full support"]
    assert item["unit"]["question"] == "Does the cited segment support the sentence?"
    assert "secret-system-x" not in json.dumps(ahead)


def test_queuing_answer_items_through_the_api_and_the_command(
    campaign: Campaign,
    researcher: Any,
    admin_user: Any,
    annotator: Any,
    api_client_for: Callable[[Any], Any],
) -> None:
    submit_answers(api_client_for(researcher), campaign, [ANSWER])
    topic = campaign.topics.get(qid="401")
    draft = NuggetBank.objects.create(campaign=campaign, number=1, source="imported")
    Nugget.objects.create(
        bank=draft, topic=topic, key="n1", position=0, text="x", importance="okay"
    )
    admin = api_client_for(admin_user)
    url = f"/api/v1/campaigns/{campaign.pk}/answer-items/"
    refused = admin.post(url, {"kind": "nugget_assignment", "bank": 1}, format="json")
    assert refused.status_code == 400
    assert "assignments refer to a frozen bank: publish it first" in refused.content.decode()
    assert admin.post(url, {"kind": "nugget_assignment"}, format="json").status_code == 400
    missing = admin.post(url, {"kind": "citation_support", "runs": [999]}, format="json")
    assert missing.status_code == 400 and "999" in missing.content.decode()
    # the first citation of each sentence (TREC 2024 RAG), then every citation: one more
    made = admin.post(url, {"kind": "citation_support"}, format="json")
    assert made.status_code == 201
    assert made.json() == {"kind": "citation_support", "items": 2, "slots": 2, "bank": None}
    again = admin.post(url, {"kind": "citation_support", "citations": "all"}, format="json")
    assert again.json()["items"] == 3 and again.json()["slots"] == 1
    # nugget creation: one item per topic of the draft, served and judged "reviewed"
    created = admin.post(url, {"kind": "nugget_creation", "bank": 1}, format="json")
    assert created.json() == {"kind": "nugget_creation", "items": 1, "slots": 1, "bank": 1}
    assert api_client_for(annotator).post(url, {"kind": "citation_support"}).status_code == 403
    out = StringIO()
    call_command(
        "queue_answer_items", campaign=str(campaign.pk), kind="citation_support", stdout=out
    )
    assert out.getvalue().strip() == "citation_support: 2 items, 0 slots queued now"
    with pytest.raises(CommandError, match="no nugget bank v7"):
        call_command(
            "queue_answer_items", campaign=str(campaign.pk), kind="nugget_assignment", bank=7
        )
    served = {k for k, _ in _judge_all(campaign, annotator)}
    assert served == {"citation_support", "nugget_creation"}  # no document pooled here


def test_agreement_and_progress_per_kind(
    rag: tuple[Campaign, NuggetBank], annotator: Any, make_user: Any, admin_user: Any
) -> None:
    campaign, _ = rag
    campaign.overlap = 1.0  # every item gets a second slot: both annotators judge it
    campaign.save(update_fields=["overlap"])
    JudgingSlot.objects.all().delete()
    answers = list(RunAnswer.objects.all())
    units.units_enqueue(
        campaign=campaign, kind=UnitKind.CITATION_SUPPORT, units=units.support_units(answers)
    )
    other = make_user("bob-annotator", "annotator")
    _judge_all(campaign, annotator)
    who = account(other)
    while (lease := queue.lease_next(campaign=campaign, annotator=who)) is not None:
        judgment_recorded(lease_id=lease.pk, annotator=who, grade=0)  # bob says none
    report = selectors.agreement_report(campaign)
    support = report["kinds"]["citation_support"]["overall"]
    assert support["n_items"] == 2 and support["percent_agreement"] == 0.0
    assert report["overall"]["n_items"] == 0  # no document judged twice
    progress = selectors.judging_progress(campaign)
    assert progress["kinds"] == {"citation_support": {"slots": 4, "judged": 4}}
    web = Client()
    web.force_login(admin_user)
    page = web.get(f"/manage/{campaign.pk}/agreement/").content.decode()
    assert 'id="agreement-citation_support"' in page and "Citation support" in page


def test_a_nugget_creation_item_links_to_its_topic_in_the_draft(
    campaign: Campaign, admin_user: Any, annotator: Any
) -> None:
    topic = campaign.topics.get(qid="401")
    draft = NuggetBank.objects.create(campaign=campaign, number=1, source="imported")
    Nugget.objects.create(
        bank=draft, topic=topic, key="n1", position=0, text="Sails need light", importance="vital"
    )
    units.answer_items_queue(campaign=campaign, kind=UnitKind.NUGGET_CREATION, bank=1)
    lease = queue.lease_next(campaign=campaign, annotator=account(annotator))
    assert lease is not None and lease.slot.kind == "nugget_creation"
    web = Client()
    web.force_login(annotator)
    page = web.get(f"/annotate/{campaign.pk}/").content.decode()
    editor = f"/campaigns/{campaign.pk}/nuggets/1/topics/401/"
    assert f'id="unit-editor" href="{editor}"' in page
    assert "Sails need light" in page
    assert web.get(editor).status_code == 200  # the assessor may edit the draft there
    recorded = judgment_recorded(lease_id=lease.pk, annotator=account(annotator), grade=1)
    assert (recorded.judgment.kind, recorded.judgment.grade) == ("nugget_creation", 1)


def test_gold_items_of_an_answer_kind_are_drawn_from_agreement_and_served(
    rag: tuple[Campaign, NuggetBank], annotator: Any, make_user: Any
) -> None:
    campaign, _ = rag
    campaign.overlap = 1.0
    campaign.save(update_fields=["overlap"])
    JudgingSlot.objects.all().delete()
    answers = list(RunAnswer.objects.all())
    units.units_enqueue(
        campaign=campaign, kind=UnitKind.CITATION_SUPPORT, units=units.support_units(answers)
    )
    bob = make_user("bob-annotator", "annotator")
    _judge_all(campaign, annotator)  # grade 1 each
    _judge_all(campaign, bob)  # grade 1 each: both items agreed
    out = StringIO()
    call_command("import_gold", campaign=str(campaign.pk), agreed="citation_support", stdout=out)
    assert out.getvalue().strip() == "gold items: 2 added, 0 updated"
    gold = list(GoldItem.objects.values_list("kind", "grade", "source"))
    assert gold == [("citation_support", 1, "agreed")] * 2
    # served to a third assessor as quality control, on the kind's screen and scale
    campaign.gold_rate = 0.5
    campaign.save(update_fields=["gold_rate"])
    carol = account(make_user("carol-annotator", "annotator"))
    units.units_enqueue(
        campaign=campaign,
        kind=UnitKind.CITATION_SUPPORT,
        units=units.support_units(answers, citations="all"),
    )
    served = []
    while (lease := queue.lease_next(campaign=campaign, annotator=carol)) is not None:
        served.append((lease.slot.kind, lease.slot.gold_id is not None))
        judgment_recorded(lease_id=lease.pk, annotator=carol, grade=2)
    assert ("citation_support", True) in served
    judged = Judgment.objects.filter(annotator=carol, gold__isnull=False)
    assert judged.exists() and all(j.kind == "citation_support" for j in judged)
    with pytest.raises(CommandError, match="one of a gold file"):
        call_command("import_gold", campaign=str(campaign.pk))
