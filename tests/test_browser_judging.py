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


# Collects what the Content-Security-Policy refused, before any script of the page runs.
CSP_LISTENER = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", function (e) {
  window.__csp.push(e.violatedDirective + " " + (e.blockedURI || "inline") + " " + e.sourceFile);
});
"""


def test_no_page_violates_the_content_security_policy(page: Any, live_server: Any) -> None:
    """The pages, the judging screen, the API docs (Swagger UI) and the admin, in a browser
    that enforces the policy: nothing is refused (no console "Refused to ...", no
    securitypolicyviolation event), and the scripts did their work."""
    from django.test import TestCase

    from judging.assessments.models import Judgment
    from judging.demo.services import demo_judge, demo_load

    with TestCase.captureOnCommitCallbacks(execute=True):
        campaign = demo_load()
    assert campaign is not None
    with TestCase.captureOnCommitCallbacks(execute=True):
        demo_judge(campaign)
    refused: list[str] = []
    page.on(
        "console",
        lambda msg: (
            refused.append(msg.text)
            if "Refused to" in msg.text or "Content Security Policy" in msg.text
            else None
        ),
    )
    page.add_init_script(CSP_LISTENER)

    def visit(path: str, wait_for: str) -> None:
        page.goto(f"{live_server.url}{path}")
        page.wait_for_selector(wait_for)
        violations = page.evaluate("window.__csp || []")
        assert violations == [], (path, violations)

    def log_in(username: str, password: str) -> None:
        page.goto(f"{live_server.url}/login/")
        page.fill("#id_username", username)
        page.fill("#id_password", password)
        with page.expect_navigation():
            page.click("button[type=submit]")

    log_in("admin", "admin-demo")  # the demo users
    visit("/", "header.topbar")
    visit(f"/campaigns/{campaign.pk}/leaderboard/", "select[name=qrels]")
    # the qrels picker submits its form on change (a handler of site.js, not inline)
    with page.expect_navigation():
        page.select_option("select[name=qrels]", index=0)
    assert "qrels=" in page.url
    visit(f"/campaigns/{campaign.pk}/bias/", "main")
    visit(f"/manage/{campaign.pk}/", "main")
    visit("/api/v1/docs/", ".swagger-ui .info")  # Swagger UI rendered the schema
    visit("/admin/", "#content")
    visit("/admin/campaigns/campaign/", "#result_list")
    visit(f"/admin/campaigns/campaign/{campaign.pk}/change/", "#content-main form")
    visit("/admin/auth/user/add/", "#content-main form")

    page.context.clear_cookies()
    visit("/admin/login/", "#login-form")
    log_in("annotator", "annotator-demo")
    visit("/annotate/", "main")
    # the "next document" page posts its form at once (site.js): the judging screen follows
    page.goto(f"{live_server.url}/annotate/{campaign.pk}/")
    page.wait_for_selector("#docid")  # topic 6 of the demo is left to judge
    before = Judgment.objects.count()
    with page.expect_navigation():
        page.keyboard.press("1")  # annotate.js: one key judges and moves on
    page.wait_for_selector("#docid, main")
    assert Judgment.objects.count() == before + 1
    assert page.evaluate("window.__csp || []") == []
    assert refused == []
    # the policy is enforced and the listener hears it: an inline script is refused
    page.evaluate(
        "() => { const s = document.createElement('script');"
        " s.textContent = 'window.__ran = 1'; document.body.appendChild(s); }"
    )
    page.wait_for_function("window.__csp.length > 0")
    assert page.evaluate("window.__ran === undefined")
