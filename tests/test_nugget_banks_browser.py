"""The nugget editing screen's keys in a real browser (Chromium through Playwright): select with
j/k (the selected nugget's sources marked), toggle with v, reword with e, merge with x and m,
split with s, move with ], add with a, delete with d; every edit stored, no script error."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from judging.assessments.models import NuggetBank
from judging.assessments.nugget_selectors import bank_topics
from judging.campaigns.models import Campaign
from tests.test_browser_judging import _chromium_page
from tests.test_nugget_banks import draft, texts_and_qrels

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def page() -> Iterator[Any]:
    with _chromium_page() as p:
        yield p


def nuggets(bank: NuggetBank) -> list[tuple[str, str, str]]:
    return [(n.key, n.importance, n.text) for n in bank_topics(bank, qid="401")[0].nuggets]


def test_a_draft_is_edited_with_the_keyboard(
    page: Any, live_server: Any, campaign: Campaign, admin_user: Any, make_user: Any
) -> None:
    bank = draft(campaign, admin_user, qrels=texts_and_qrels(campaign, admin_user))
    make_user("nugget-editor", "annotator", password="edit-them-please")
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    url = f"/campaigns/{campaign.pk}/nuggets/{bank.number}/topics/401/"
    page.goto(f"{live_server.url}/login/?next={url}")
    page.fill("#id_username", "nugget-editor")
    page.fill("#id_password", "edit-them-please")
    page.click("button[type=submit]")
    page.wait_for_selector(".nugget-row.selected")

    def selected() -> str:
        return str(page.eval_on_selector(".nugget-row.selected", "e => e.dataset.key"))

    def cited() -> list[str]:
        return list(page.eval_on_selector_all(".segment.cited", "es => es.map(e => e.dataset.id)"))

    assert (selected(), cited()) == ("n1", ["d401-1"])
    page.keyboard.press("j")
    page.keyboard.press("j")
    assert (selected(), cited()) == ("n3", ["d401-2"])
    page.keyboard.press("k")
    with page.expect_navigation():
        page.keyboard.press("v")  # n2 okay -> vital
    assert selected() == "n2"  # the page comes back on the nugget edited
    page.keyboard.press("e")
    page.keyboard.type(", Egypt")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert nuggets(bank)[1] == ("n2", "vital", "Edible honey was found in Egyptian tombs, Egypt")
    page.keyboard.press("x")
    page.keyboard.press("j")
    page.keyboard.press("x")
    with page.expect_navigation():
        page.keyboard.press("m")  # n2 and n3 into n4
    page.once("dialog", lambda d: d.accept("; "))
    with page.expect_navigation():
        page.keyboard.press("s")  # n4 split back at "; ": n5 and n6, n5 selected
    with page.expect_navigation():
        page.keyboard.press("]")  # n5 below n6
    page.keyboard.press("a")
    page.keyboard.type("Honey is sweet")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    page.keyboard.press("k")  # from the new n7 to n5
    page.once("dialog", lambda d: d.accept())
    with page.expect_navigation():
        page.keyboard.press("d")
    assert nuggets(bank) == [
        ("n1", "vital", "Honey never spoils"),
        ("n6", "vital", "Honey holds little water"),
        ("n7", "vital", "Honey is sweet"),
    ]
    page.keyboard.press("?")
    assert page.is_visible("#help")
    page.keyboard.press("Escape")
    assert not page.is_visible("#help")
    assert errors == []
