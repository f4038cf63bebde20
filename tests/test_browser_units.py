"""In a real browser (Debian's Chromium driven by Playwright): one judging page serves a queue
that interleaves documents, nugget assignments and citation supports; each kind is shown with
its own screen and grade keys, judged by keyboard alone with the next item already there, and
stored with its kind; nothing on the page names the run."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from judging.assessments import units
from judging.assessments.models import Judgment, Nugget, NuggetBank, UnitKind
from judging.campaigns.models import Document, RunAnswer, Topic
from judging.workflows.pools import pool_requested
from judging.workflows.runs import run_submitted
from tests.test_browser_judging import _chromium_page, _log_in, _ready

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

A1 = "Sunlight pushes the sail."
A2 = "It takes months to speed up."


@pytest.fixture
def page() -> Iterator[Any]:
    with _chromium_page() as p:
        yield p


@pytest.fixture
def mixed(campaign: Any, researcher: Any, admin_user: Any, make_user: Any) -> tuple[Any, Any]:
    """Topic 401: documents d1, d2 pooled; one answer citing them, a bank of one nugget; its
    assignment and the answer's two citations queued between the documents."""
    Topic.objects.filter(campaign=campaign, qid="401").update(title="solar sails")
    Document.objects.create(campaign=campaign, docid="d1", title="Sails", text="Light pushes.")
    Document.objects.create(campaign=campaign, docid="d2", title="Slow", text="Months pass.")
    run = run_submitted(
        campaign=campaign,
        owner=researcher,
        tag="hidden-system-tag",
        results={"401": {"d1": 2.0, "d2": 1.0}},
    )
    pool_requested(campaign=campaign, strategy="depth", depth=10)
    topic = campaign.topics.get(qid="401")
    answer = RunAnswer.objects.create(
        run=run,
        topic=topic,
        sentences=[{"text": A1, "citations": [0]}, {"text": A2, "citations": [1]}],
        references=["d1", "d2"],
        words=10,
    )
    bank = NuggetBank.objects.create(
        campaign=campaign, number=1, state="published", source="imported", created_by=admin_user
    )
    Nugget.objects.create(
        bank=bank, topic=topic, key="n1", position=0, text="Light pushes sails", importance="vital"
    )
    units.units_enqueue(
        campaign=campaign,
        kind=UnitKind.NUGGET_ASSIGNMENT,
        units=units.assignment_units(bank, [answer]),
    )
    units.units_enqueue(
        campaign=campaign, kind=UnitKind.CITATION_SUPPORT, units=units.support_units([answer])
    )
    annotator = make_user("browser-annotator", "annotator", password="judge-me-please")
    return campaign, annotator


def _grade_labels(page: Any) -> list[str]:
    return [
        str(t).strip()
        for t in page.eval_on_selector_all(
            "#grade-form button.grade", "bs => bs.map(b => b.dataset.label)"
        )
    ]


def _unit_shown(page: Any, kind: str, more: str = "") -> None:
    """Wait until the page shows an item of ``kind`` (and ``more``, a JavaScript condition)."""
    page.wait_for_function(
        "() => { const u = document.getElementById('unit');"
        f" return !u.hidden && u.dataset.kind === '{kind}'{more}; }}"
    )


def test_a_mixed_queue_is_judged_by_keyboard_on_one_page(
    page: Any, live_server: Any, mixed: tuple[Any, Any]
) -> None:
    campaign, annotator = mixed
    _log_in(page, live_server.url, f"/annotate/{campaign.pk}/")
    page.wait_for_selector("#docid")
    _ready(page)
    # 1. a document: its text, the campaign's scale
    assert page.is_visible(".document") and not page.is_visible("#unit")
    assert page.inner_text("#docid") == "d1"
    assert _grade_labels(page) == ["No", "Some", "Yes"]
    page.keyboard.press("2")
    # 2. the nugget assignment, shown at once from what was leased ahead
    _unit_shown(page, "nugget_assignment")
    assert not page.is_visible(".document")
    assert page.inner_text("#unit-question") == "Does the answer contain this nugget?"
    assert page.inner_text("#unit-nugget-text") == "Light pushes sails"
    assert page.inner_text("#unit-importance") == "vital"
    assert page.inner_text("#unit-answer") == f"{A1}\n{A2}"
    assert _grade_labels(page) == ["Not supported", "Partially supported", "Supported"]
    assert not page.is_visible("#answers")  # no answer spans to mark in a unit
    _ready(page)
    page.keyboard.press("1")
    # 3. a citation: the sentence and the cited segment's text
    _unit_shown(page, "citation_support")
    assert page.inner_text("#unit-sentence") == A1
    assert page.inner_text("#unit-segment") == "d1"
    assert page.inner_text("#unit-segment-text") == "Light pushes."
    assert _grade_labels(page) == ["No support", "Partial support", "Full support"]
    _ready(page)
    page.keyboard.press("2")
    # 4. back to a document, with the document's scale again
    page.wait_for_function(
        "() => document.getElementById('docid').textContent === 'd2'"
        " && !document.querySelector('.document').hidden"
    )
    assert not page.is_visible("#unit")
    assert _grade_labels(page) == ["No", "Some", "Yes"]
    _ready(page)
    page.keyboard.press("0")
    _unit_shown(
        page, "citation_support", f" && u.querySelector('#unit-sentence').textContent === {A2!r}"
    )
    _ready(page)
    page.keyboard.press("0")
    page.wait_for_url(f"**/annotate/{campaign.pk}/done/", timeout=15_000)
    stored = list(
        Judgment.objects.filter(annotator=annotator)
        .order_by("created_at", "pk")
        .values_list("kind", "grade")
    )
    assert stored == [
        ("document", 2),
        ("nugget_assignment", 1),
        ("citation_support", 2),
        ("document", 0),
        ("citation_support", 0),
    ]
    assert "hidden-system-tag" not in page.content()
