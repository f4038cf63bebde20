"""In a real browser (Debian's Chromium driven by Playwright): log in, judge with the keyboard,
undo, reload, and find the state persisted; no system information on the page."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from judging.assessments.models import Judgment
from judging.campaigns.models import Document
from judging.workflows.pools import pool_requested
from judging.workflows.runs import run_submitted
from tests.conftest import need_service

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# Chromium must not try to reach the network (this machine has none): no background services.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


@pytest.fixture
def page() -> Iterator[Any]:
    need_service(
        os.path.exists(CHROMIUM),
        f"no Chromium at {CHROMIUM} (apt-get install chromium) for the browser tests",
    )
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread; the ORM calls of the test itself
    # are still plain synchronous code.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        context = browser.new_context()
        yield context.new_page()
        context.close()
        browser.close()
    os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)


@pytest.fixture
def judging_setup(campaign: Any, researcher: Any, make_user: Any) -> tuple[Any, Any]:
    run_submitted(
        campaign=campaign,
        owner=researcher,
        tag="hidden-system-tag",
        results={"401": {f"DOC{i}": float(10 - i) for i in range(1, 6)}},
    )
    for i in range(1, 6):
        Document.objects.create(
            campaign=campaign,
            docid=f"DOC{i}",
            title=f"Document {i}",
            text=f"Text number {i} about topic 401.",
        )
    pool_requested(campaign=campaign, strategy="depth", depth=5)
    annotator = make_user("browser-annotator", "annotator", password="judge-me-please")
    return campaign, annotator


def test_an_annotator_judges_with_the_keyboard_undoes_and_the_state_survives_a_reload(
    page: Any, live_server: Any, judging_setup: tuple[Any, Any]
) -> None:
    campaign, annotator = judging_setup
    page.goto(f"{live_server.url}/login/?next=/annotate/{campaign.pk}/")
    page.fill("#id_username", "browser-annotator")
    page.fill("#id_password", "judge-me-please")
    page.click("button[type=submit]")
    page.wait_for_selector("#docid")
    seen = [page.inner_text("#docid")]

    for key in ("2", "0", "1"):  # one key judges and moves on
        with page.expect_navigation():
            page.keyboard.press(key)
        page.wait_for_selector("#docid")
        seen.append(page.inner_text("#docid"))
    judged = list(
        Judgment.objects.filter(annotator=annotator)
        .order_by("created_at")
        .values_list("docid", "grade")
    )
    assert judged == [(seen[0], 2), (seen[1], 0), (seen[2], 1)]
    assert len(set(seen)) == 4

    with page.expect_navigation():
        page.keyboard.press("u")  # undo the last judgment: its document comes back
    page.wait_for_selector("#docid")
    assert page.inner_text("#docid") == seen[2]

    page.reload()
    page.wait_for_selector("#docid")
    assert page.inner_text("#docid") == seen[2]
    assert list(
        Judgment.objects.filter(annotator=annotator)
        .order_by("created_at")
        .values_list("docid", "grade")
    ) == [(seen[0], 2), (seen[1], 0)]

    page.keyboard.press("?")
    assert page.is_visible("#help")
    page.keyboard.press("Escape")
    assert not page.is_visible("#help")

    html = page.content().lower()
    for leak in ("hidden-system-tag", "score", "rank"):
        assert leak not in html, leak
