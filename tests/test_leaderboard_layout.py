"""In a real browser: a 127-run leaderboard (TREC 2011 Medical's size) stays readable: its table
scrolls inside a box at most a screen tall, with the header row and the run column in view."""

from __future__ import annotations

from typing import Any

import pytest

from judging.campaigns.models import Topic
from judging.workflows.qrels import qrels_imported
from judging.workflows.runs import run_submitted
from tests.test_browser_judging import page  # noqa: F401 (the browser fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

RUNS = 127


@pytest.fixture
def big_board(campaign: Any, researcher: Any) -> Any:
    qids = list(Topic.objects.filter(campaign=campaign).values_list("qid", flat=True))
    for n in range(RUNS):
        results = {q: {f"D{(n + i) % 40}": 40.0 - i for i in range(20)} for q in qids}
        run_submitted(campaign=campaign, owner=researcher, tag=f"system-{n:03d}", results=results)
    qrels = "".join(f"{q} 0 D{d} {d % 3}\n" for q in qids for d in range(40))
    qrels_imported(campaign=campaign, data=qrels.encode())  # evaluates every run (eagerly)
    return campaign


def test_a_127_run_leaderboard_keeps_its_header_and_run_column_in_view_when_scrolled(
    page: Any,  # noqa: F811
    live_server: Any,
    big_board: Any,
    make_user: Any,
) -> None:
    make_user("board-admin", "admin", password="look-at-the-board")
    page.set_viewport_size({"width": 900, "height": 700})
    page.goto(f"{live_server.url}/login/?next=/campaigns/{big_board.pk}/leaderboard/")
    page.fill("#id_username", "board-admin")
    page.fill("#id_password", "look-at-the-board")
    with page.expect_navigation():
        page.click("button[type=submit]")
    page.wait_for_selector("#leaderboard tbody tr")
    assert page.locator("#leaderboard tbody tr").count() == RUNS
    box = page.locator(".scroll.sticky")
    assert box.bounding_box()["height"] <= 700  # at most a screen tall: it scrolls inside

    box.evaluate("b => { b.scrollTop = b.scrollHeight; b.scrollLeft = b.scrollWidth; }")
    page.wait_for_timeout(100)
    frame = box.bounding_box()
    header = page.locator("#leaderboard thead th").nth(3).bounding_box()
    assert abs(header["y"] - frame["y"]) < 3  # the header row is still at the box's top
    last = page.locator("#leaderboard tbody tr").last
    run_cell = last.locator("td").first.bounding_box()
    assert abs(run_cell["x"] - frame["x"]) < 3  # the run column stays at the left edge
    assert run_cell["y"] < frame["y"] + frame["height"]  # the last run is reachable, in view
    assert last.locator("td").first.inner_text().startswith("system-")  # a run name, readable
