"""In Debian's Chromium: nothing an annotator did is changed behind their back (issue 29).

- Back then Forward brings the judging page back as it is now on the server, never an old copy
  whose first document a key would silently regrade.
- Two tabs of one annotator do not judge the same document: the second is told it is open in the
  other one; a grade from a page that is out of date (another browser, say) that would change a
  judgment is refused and listed as not saved with the reason, never applied.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from judging.assessments.models import Judgment, JudgmentChange
from tests.test_browser_judging import (  # noqa: F401
    _docid,
    _judged,
    _log_in,
    _ready,
    judging_setup,
    page,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_back_then_forward_shows_the_current_document_and_regrades_nothing(
    page: Any,  # noqa: F811
    live_server: Any,
    judging_setup: tuple[Any, Any],  # noqa: F811
) -> None:
    campaign, annotator = judging_setup
    _log_in(page, live_server.url, "/annotate/")
    page.click(f"#start-{campaign.pk}")  # "Start judging"
    page.wait_for_selector("#docid")
    seen = []
    for _ in range(3):
        _ready(page)
        seen.append(_docid(page))
        page.keyboard.press("0")
    _ready(page)
    fourth = _docid(page)
    assert _judged(annotator) == [(d, 0) for d in seen]

    page.go_back()
    page.wait_for_load_state()
    page.go_forward()
    page.wait_for_selector("#docid")
    _ready(page)
    assert _docid(page) == fourth  # what the server holds now, not the page as first loaded
    page.keyboard.press("2")
    page.wait_for_function("() => window.__pjState().queued === 0")
    assert _judged(annotator) == [*((d, 0) for d in seen), (fourth, 2)]
    assert not JudgmentChange.objects.filter(old_grade__isnull=False).exists()


@pytest.fixture
def second_device(page: Any) -> Iterator[Any]:  # noqa: F811
    """Another browser context (its own cookies and storage, no channel to the first page's
    tabs): the annotator on a second computer."""
    context = page.context.browser.new_context()
    yield context.new_page()
    context.close()


def test_a_second_tab_is_told_the_document_is_open_in_the_first(
    page: Any,  # noqa: F811
    live_server: Any,
    judging_setup: tuple[Any, Any],  # noqa: F811
) -> None:
    campaign, annotator = judging_setup
    _log_in(page, live_server.url, f"/annotate/{campaign.pk}/")
    page.wait_for_selector("#docid")
    _ready(page)
    first = _docid(page)

    tab = page.context.new_page()  # same browser, same sign-in
    tab.goto(f"{live_server.url}/annotate/{campaign.pk}/")
    tab.wait_for_selector("#elsewhere:not([hidden])")
    assert "open in another tab" in tab.inner_text("#elsewhere")
    tab.keyboard.press("1")  # refused here, in so many words
    assert "open in another tab" in tab.inner_text("#toast")

    page.bring_to_front()
    page.keyboard.press("2")
    page.wait_for_function("() => window.__pjState().queued === 0")
    assert _judged(annotator) == [(first, 2)]
    assert tab.evaluate("window.__pjState().queued") == 0

    # the second tab may take over: it shows what the server holds now, the first is told
    tab.bring_to_front()
    with tab.expect_navigation():
        tab.click("#elsewhere-take")
    tab.wait_for_selector("#docid")
    _ready(tab)
    assert tab.is_hidden("#elsewhere")
    assert _docid(tab) != first
    page.wait_for_selector("#elsewhere:not([hidden])")
    tab.keyboard.press("1")
    tab.wait_for_function("() => window.__pjState().queued === 0")
    judged = _judged(annotator)
    assert len(judged) == 2 and judged[0] == (first, 2) and judged[1][1] == 1
    assert Judgment.objects.get(annotator=annotator, docid=first).grade == 2

    # the tab that judged is closed: the first one says so, and takes over when asked
    tab.close(run_before_unload=True)
    page.wait_for_selector("#elsewhere-text:has-text('has closed or left the judging page')")
    with page.expect_navigation():
        page.click("#elsewhere-take")
    page.wait_for_selector("#docid")
    _ready(page)
    assert page.is_hidden("#elsewhere") and not page.evaluate("window.__pjState().paused")


def test_a_grade_from_another_browser_on_a_judged_document_is_refused_and_said(
    page: Any,  # noqa: F811
    second_device: Any,
    live_server: Any,
    judging_setup: tuple[Any, Any],  # noqa: F811
) -> None:
    campaign, annotator = judging_setup
    for p in (page, second_device):
        _log_in(p, live_server.url, f"/annotate/{campaign.pk}/")
        p.wait_for_selector("#docid")
        _ready(p)
    first = _docid(page)
    assert _docid(second_device) == first  # the same lease: the annotator's current item

    page.keyboard.press("2")  # "tab A grades 2"
    page.wait_for_function("() => window.__pjState().queued === 0")
    second_device.keyboard.press("1")  # "tab B grades 1"
    second_device.wait_for_selector("#save-failed:not([hidden])")
    failed = second_device.inner_text("#save-failed")
    assert f"document {first} (grade 1)" in failed
    assert "already judged Yes" in failed and "not recorded" in failed
    assert Judgment.objects.get(annotator=annotator, docid=first).grade == 2
    assert not JudgmentChange.objects.filter(old_grade__isnull=False).exists()
