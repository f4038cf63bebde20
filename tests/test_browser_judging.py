"""In a real browser (Debian's Chromium driven by Playwright): log in, judge with the keyboard,
undo, reload, and find the state persisted; no system information on the page."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from judging.assessments.models import Judgment
from judging.campaigns.models import Document
from judging.workflows.pools import pool_requested
from judging.workflows.runs import run_submitted
from tests.conftest import need_service

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.follow_ups]

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


@contextmanager
def _chromium_page(**context_options: Any) -> Iterator[Any]:
    """A page of Debian's Chromium, headless and offline (skipped without Chromium)."""
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
        context = browser.new_context(**context_options)
        yield context.new_page()
        context.close()
        browser.close()
    os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)


@pytest.fixture
def page() -> Iterator[Any]:
    with _chromium_page() as p:
        yield p


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


def _log_in(page: Any, url: str, path: str) -> None:
    page.goto(f"{url}/login/?next={path}")
    page.fill("#id_username", "browser-annotator")
    page.fill("#id_password", "judge-me-please")
    page.click("button[type=submit]")


def _ready(page: Any) -> None:
    """The page has leased the next item ahead (or knows there is none) and sent its queue."""
    page.wait_for_function(
        "() => window.__pjState && window.__pjState().queued === 0"
        " && (window.__pjState().ahead !== null || window.__pjState().nothingAhead)"
    )


def _judged(annotator: Any) -> list[tuple[str, int]]:
    return list(
        Judgment.objects.filter(annotator=annotator)
        .order_by("created_at")
        .values_list("docid", "grade")
    )


def test_an_annotator_judges_with_the_keyboard_undoes_and_the_state_survives_a_reload(
    page: Any, live_server: Any, judging_setup: tuple[Any, Any]
) -> None:
    campaign, annotator = judging_setup
    _log_in(page, live_server.url, f"/annotate/{campaign.pk}/")
    page.wait_for_selector("#docid")
    seen = [page.inner_text("#docid")]
    url = page.url

    for key in ("2", "0", "1"):  # one key judges and the next document is there at once
        _ready(page)
        page.keyboard.press(key)
        assert page.url == url  # no page load
        assert page.inner_text("#docid") not in seen
        seen.append(page.inner_text("#docid"))
    _ready(page)
    assert _judged(annotator) == [(seen[0], 2), (seen[1], 0), (seen[2], 1)]
    assert len(set(seen)) == 4
    latencies = page.evaluate("window.__pjLatencies")
    assert len(latencies) == 3 and all(ms >= 0 for ms in latencies)

    page.keyboard.press("u")  # undo the last judgment: its document comes back
    page.wait_for_function(f"() => document.getElementById('docid').textContent === {seen[2]!r}")
    page.wait_for_selector("#toast:has-text('Undone: document')")

    page.reload()
    page.wait_for_selector("#docid")
    assert page.inner_text("#docid") == seen[2]
    assert _judged(annotator) == [(seen[0], 2), (seen[1], 0)]

    page.keyboard.press("?")
    assert page.is_visible("#help")
    page.keyboard.press("Escape")
    assert not page.is_visible("#help")

    html = page.content().lower()
    for leak in ("hidden-system-tag", "score", "rank"):
        assert leak not in html, leak


def test_the_last_judgment_is_sent_before_the_page_says_nothing_is_left(
    page: Any, live_server: Any, judging_setup: tuple[Any, Any]
) -> None:
    campaign, annotator = judging_setup
    _log_in(page, live_server.url, f"/annotate/{campaign.pk}/")
    page.wait_for_selector("#docid")
    for _ in range(4):
        _ready(page)
        page.keyboard.press("1")
    _ready(page)
    assert page.evaluate("window.__pjState().nothingAhead")  # the fifth is the last
    with page.expect_navigation():
        page.keyboard.press("2")
    page.wait_for_selector("#done")
    judged = _judged(annotator)
    assert {d for d, _ in judged} == {f"DOC{i}" for i in range(1, 6)}
    assert [g for _, g in judged] == [1, 1, 1, 1, 2]


@pytest.fixture
def two_topics(campaign: Any, researcher: Any, make_user: Any) -> tuple[Any, Any]:
    """Topics 401 (three documents) and 402 (three), one annotator: the queue changes topic."""
    from judging.campaigns.models import Topic

    Topic.objects.filter(campaign=campaign, qid="401").update(
        title="solar sails", description="How do solar sails move?"
    )
    Topic.objects.filter(campaign=campaign, qid="402").update(
        title="tidal power", description="Electricity from the tides."
    )
    docs = {"401": ["S1", "S2", "S3"], "402": ["T1", "T2", "T3"]}
    run_submitted(
        campaign=campaign,
        owner=researcher,
        tag="hidden-system-tag",
        results={q: {d: 10.0 - i for i, d in enumerate(ds)} for q, ds in docs.items()},
    )
    for qid, ds in docs.items():
        for d in ds:
            Document.objects.create(
                campaign=campaign, docid=d, title=f"Document {d}", text=f"About {qid}: solar {d}."
            )
    pool_requested(campaign=campaign, strategy="depth", depth=5)
    annotator = make_user("browser-annotator", "annotator", password="judge-me-please")
    return campaign, annotator


def _docid(page: Any) -> str:
    return str(page.inner_text("#docid"))


def test_a_full_round_judge_topic_change_undo_change_skip_and_a_failed_call_retried(
    page: Any, live_server: Any, two_topics: tuple[Any, Any]
) -> None:
    campaign, annotator = two_topics
    _log_in(page, live_server.url, f"/annotate/{campaign.pk}/")
    page.wait_for_selector("#docid")
    assert _docid(page) == "S1"
    assert page.inner_text("#position") == "1 of 3"

    for key, then in (("2", "S2"), ("0", "S3")):
        _ready(page)
        page.keyboard.press(key)
        assert _docid(page) == then  # at once: read right after the key, no waiting
    assert page.inner_text("#position") == "3 of 3"
    assert page.is_hidden("#topic-notice")

    _ready(page)
    page.keyboard.press("1")  # the last of topic 401: the next document is topic 402's
    assert _docid(page) == "T1"
    assert page.is_visible("#topic-notice")
    notice = page.inner_text("#topic-notice")
    assert "New topic: 402 tidal power" in notice and "Electricity from the tides." in notice
    assert page.inner_text("#topic-title") == "tidal power"
    assert page.inner_text("#position") == "1 of 3"
    _ready(page)
    assert _judged(annotator) == [("S1", 2), ("S2", 0), ("S3", 1)]

    # undo: a toast, and the undone document is back (its topic's notice again)
    page.keyboard.press("u")
    page.wait_for_function("() => document.getElementById('docid').textContent === 'S3'")
    assert "Undone: document S3 is back to judge." in page.inner_text("#toast")
    assert _judged(annotator) == [("S1", 2), ("S2", 0)]
    _ready(page)
    page.keyboard.press("2")
    assert _docid(page) == "T1"
    _ready(page)

    # skip: a toast, the next document at once; the skipped one goes back to the queue
    page.keyboard.press("s")
    assert _docid(page) == "T2"
    assert "Skipped T1" in page.inner_text("#toast")
    _ready(page)

    # a failed call: the next judgment's attempts fail (at least twice, and until the test has
    # seen the retrying status: the backoff's first window is ~750 ms, too short to rely on
    # under a loaded CI machine), then it goes through
    failures: list[str] = []
    seen = {"retrying": False}

    def flaky(route: Any) -> None:
        if len(failures) < 2 or not seen["retrying"]:
            failures.append(route.request.url)
            route.abort("failed")
        else:
            route.continue_()

    page.route("**/api/v1/leases/*/judgment/", flaky)
    page.keyboard.press("1")
    assert _docid(page) == "T3"  # the page does not wait for the server
    page.wait_for_selector("#save-status.retrying")
    assert "1 judgment not yet saved, retrying" in page.inner_text("#save-status")
    seen["retrying"] = True
    _ready(page)
    assert len(failures) >= 2
    assert page.is_hidden("#save-status")
    assert Judgment.objects.filter(annotator=annotator, docid="T2").count() == 1
    page.unroute("**/api/v1/leases/*/judgment/")

    # every key that moved on measured its key-press-to-painted time (the benchmark reads it)
    assert len(page.evaluate("window.__pjLatencies")) == 6

    # back to an earlier judgment (a page of its own), change it: a toast on the judging page
    page.keyboard.press("b")
    page.wait_for_selector("#current-grade")
    assert _docid(page) == "T2"
    with page.expect_navigation():
        page.keyboard.press("2")
    page.wait_for_selector("#toast:not([hidden])")
    assert "Changed: T2 from Some to Yes." in page.inner_text("#toast")
    assert _docid(page) == "T3"
    assert Judgment.objects.get(annotator=annotator, docid="T2").grade == 2

    html = page.content().lower()
    for leak in ("hidden-system-tag", "score", "rank"):
        assert leak not in html, leak


def test_the_new_topic_banner_covers_none_of_the_document(
    page: Any, live_server: Any, two_topics: tuple[Any, Any]
) -> None:
    """Issue 29, point 5: the banner was fixed over the top of the page and hid the document's
    title and docid for 6 s after every change of topic; it now sits in the topic's box."""
    campaign, _ = two_topics
    page.set_viewport_size({"width": 1280, "height": 800})
    _log_in(page, live_server.url, f"/annotate/{campaign.pk}/")
    page.wait_for_selector("#docid")
    for _ in range(3):
        _ready(page)
        page.keyboard.press("1")
    assert _docid(page) == "T1"
    assert page.is_visible("#topic-notice")
    assert "New topic: 402 tidal power" in page.inner_text("#topic-notice")
    for width in (1280, 800, 420):  # side by side, and stacked on a narrow screen
        page.set_viewport_size({"width": width, "height": 800})
        for target in ("#docid", "#doc-title", "#doc-text", "#grade-form"):
            covered = page.evaluate(
                """(sel) => {
                    const notice = document.getElementById('topic-notice').getBoundingClientRect();
                    const box = document.querySelector(sel).getBoundingClientRect();
                    return !(notice.right <= box.left || box.right <= notice.left ||
                             notice.bottom <= box.top || box.bottom <= notice.top);
                }""",
                target,
            )
            assert not covered, (width, target)


def test_a_judgment_queued_while_offline_is_sent_after_a_reload(
    page: Any, live_server: Any, two_topics: tuple[Any, Any]
) -> None:
    campaign, annotator = two_topics
    _log_in(page, live_server.url, f"/annotate/{campaign.pk}/")
    page.wait_for_selector("#docid")
    _ready(page)
    page.route("**/api/v1/leases/*/judgment/", lambda route: route.abort("failed"))
    page.keyboard.press("2")
    assert _docid(page) == "S2"
    page.wait_for_selector("#save-status.retrying")
    assert page.evaluate("window.__pjState().queued") == 1
    page.reload()  # still offline for judgments: the queued one waits in localStorage
    page.wait_for_selector("#docid")
    page.wait_for_selector("#save-status.retrying")
    assert _docid(page) == "S2"  # S1 is not shown again: its judgment is queued
    assert not Judgment.objects.filter(annotator=annotator).exists()
    page.unroute("**/api/v1/leases/*/judgment/")
    page.wait_for_function("() => window.__pjState().queued === 0", timeout=20_000)
    assert _judged(annotator) == [("S1", 2)]
    assert page.is_hidden("#save-status")


def test_a_judgment_on_an_expired_lease_is_shown_as_not_saved_with_the_document(
    page: Any, live_server: Any, two_topics: tuple[Any, Any]
) -> None:
    """The honest answer to a 409: the lease ended (here it expired while the page was away)
    and the item went back to the queue, so nothing is recorded; the page lists the document,
    the grade and the server's reason until the annotator dismisses it, and moves on."""
    from datetime import timedelta

    from django.utils import timezone

    from judging.assessments.models import JudgingSlot, Lease

    campaign, annotator = two_topics
    _log_in(page, live_server.url, f"/annotate/{campaign.pk}/")
    page.wait_for_selector("#docid")
    _ready(page)
    lease_id = page.evaluate("window.__pjState().current")
    past = timezone.now() - timedelta(seconds=1)
    Lease.objects.filter(pk=lease_id).update(expires_at=past)
    JudgingSlot.objects.filter(lease_id=lease_id).update(lease_expires_at=past)
    page.keyboard.press("2")
    assert _docid(page) == "S2"
    page.wait_for_selector("#save-failed:not([hidden])")
    failed = page.inner_text("#save-failed")
    assert "document S1 (grade 2)" in failed and "expired" in failed
    assert not Judgment.objects.filter(annotator=annotator).exists()
    page.reload()  # kept until dismissed
    page.wait_for_selector("#save-failed:not([hidden])")
    page.click("#save-failed-dismiss")
    assert page.is_hidden("#save-failed")


def test_highlighting_is_switched_off_and_on_with_h_and_remembered(
    page: Any, live_server: Any, two_topics: tuple[Any, Any]
) -> None:
    campaign, _ = two_topics
    _log_in(page, live_server.url, f"/annotate/{campaign.pk}/")
    page.wait_for_selector("#doc-text mark")  # "solar" of the topic's title
    on = page.eval_on_selector("#doc-text mark", "m => getComputedStyle(m).backgroundColor")
    page.keyboard.press("h")
    # the key's handler sets the class; read the style once it has (under CI load the
    # style was read before the handler ran: the same colour twice)
    page.wait_for_function("document.body.classList.contains('no-highlight')")
    off = page.eval_on_selector("#doc-text mark", "m => getComputedStyle(m).backgroundColor")
    assert on != off and off in ("rgba(0, 0, 0, 0)", "transparent")
    assert "off" in page.inner_text("#highlight-toggle")
    page.reload()
    page.wait_for_selector("#doc-text mark")
    assert page.evaluate("document.body.classList.contains('no-highlight')")
    page.click("#highlight-toggle")
    assert not page.evaluate("document.body.classList.contains('no-highlight')")


@pytest.fixture
def page_without_script() -> Iterator[Any]:
    with _chromium_page(java_script_enabled=False) as p:
        yield p


def test_without_javascript_the_forms_judge_skip_and_undo(
    page_without_script: Any, live_server: Any, two_topics: tuple[Any, Any]
) -> None:
    page = page_without_script
    campaign, annotator = two_topics
    _log_in(page, live_server.url, f"/annotate/{campaign.pk}/")
    page.wait_for_selector("#next-form button")  # no script sends it: a button to press
    page.click("#next-form button")
    page.wait_for_selector("#docid")
    assert _docid(page) == "S1" and page.inner_text("#position") == "1 of 3"
    assert page.is_hidden("#highlight-toggle")  # a script's button, not shown without it
    with page.expect_navigation():
        page.click("#grade-form button[value='2']")
    assert _docid(page) == "S2" and page.inner_text("#position") == "2 of 3"
    with page.expect_navigation():
        page.click("#skip-form button")
    assert _docid(page) == "S3"
    with page.expect_navigation():
        page.click("#grade-form button[value='1']")
    with page.expect_navigation():
        page.click("#undo-form button")
    assert _docid(page) == "S3"
    assert "Undone: document S3 is back to judge." in page.inner_text(".messages")
    assert _judged(annotator) == [("S1", 2)]


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
    page.keyboard.press("1")  # annotate.js: one key judges and moves on, in the background
    page.wait_for_function("() => !window.__pjState || window.__pjState().queued === 0")
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
