"""In a real browser: a researcher picks two of their runs, reads the topics sorted by A - B,
opens one topic and sees both rankings side by side with a relevant, an unjudged and an
"only in" marker, at 1400 px without horizontal overflow (a long docid is cut with an
ellipsis, whole in its title)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.test_browser_judging import page  # noqa: F401 (the browser fixture)
from tests.test_versus import A_TAG, C_TAG, LONG_DOCID, world  # noqa: F401 (the campaign)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_researcher_compares_two_runs_and_opens_a_topic(
    page: Any,  # noqa: F811
    live_server: Any,
    world: dict[str, Any],  # noqa: F811
) -> None:
    c = world["campaign"].pk
    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto(f"{live_server.url}/login/?next=/campaigns/{c}/versus/")
    page.fill("#id_username", "rita-researcher")
    page.fill("#id_password", "pw-for-tests-only")
    with page.expect_navigation():
        page.click("button[type=submit]")
    page.wait_for_selector("#versus-form")
    page.select_option("#versus-a", A_TAG)
    page.select_option("#versus-b", C_TAG)
    with page.expect_navigation():
        page.click("#versus-form button[type=submit]")
    page.wait_for_selector("#versus-topics tbody tr")
    assert "wins 2, ties 2, loses 0" in page.inner_text("#versus-summary")
    qids = page.locator("#versus-topics tbody tr").evaluate_all(
        "rows => rows.map(r => r.dataset.qid)"
    )
    assert qids == ["403", "402", "401", "404"]  # A - B: +1, +0.5, 0, 0 (ties by topic id)
    diffs = [float(t) for t in page.locator("#versus-topics .vs-diff").all_inner_texts()]
    assert diffs == sorted(diffs, reverse=True)

    with page.expect_navigation():
        page.click("#versus-topics tr[data-qid='401'] a.vs-qid")
    page.wait_for_selector("#versus-rankings tbody tr")
    table = page.locator("#versus-rankings")
    assert table.locator(".vs-grade.rel").count() >= 1
    assert table.locator(".vs-grade.unjudged").count() == 1
    assert table.locator(".vs-only").all_inner_texts() == ["only in A", "only in B"]
    assert page.inner_text("#versus-topic h2") == "oil spills"
    # readable at 1400 px: nothing overflows, the long docid is cut and whole in its title
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    long = table.locator(f"span[title='{LONG_DOCID}']")
    assert long.evaluate("s => s.scrollWidth > s.clientWidth")
    with page.expect_navigation():
        page.click("#versus-back")
    page.wait_for_selector("#versus-topics tbody tr")
