"""In a real browser: the leaderboard sorts by a click on a column's name, filters through its
form (both kept in the URL, so a reload or a shared link shows the same view), downloads its
exports, and a 17-run board with the campaign's seven measures fits 1400 px: no horizontal
scroll, no run name wrapped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from judging.campaigns.models import Topic
from judging.workflows.qrels import qrels_imported
from judging.workflows.runs import run_submitted
from tests.test_browser_judging import page  # noqa: F401 (the browser fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

RUNS = 17


@pytest.fixture
def board(campaign: Any, researcher: Any, make_user: Any) -> Any:
    qids = list(Topic.objects.filter(campaign=campaign).values_list("qid", flat=True))
    for n in range(RUNS):
        results = {q: {f"D{(n * 3 + i) % 40}": 40.0 - i for i in range(20)} for q in qids}
        run_submitted(
            campaign=campaign,
            owner=researcher,
            # long names with hyphens: the names users saw wrap ("novel-/neural")
            tag=f"novel-neural-reranker-{n:02d}",
            group=f"lab-{n % 3}",
            pooled=n % 2 == 0,
            results=results,
        )
    qrels = "".join(f"{q} 0 D{d} {d % 3}\n" for q in qids for d in range(40))
    qrels_imported(campaign=campaign, data=qrels.encode())  # evaluates every run (eagerly)
    make_user("board-admin", "admin", password="look-at-the-board")
    return campaign


def login(page: Any, server: str, path: str) -> None:  # noqa: F811
    page.goto(f"{server}/login/?next={path}")
    page.fill("#id_username", "board-admin")
    page.fill("#id_password", "look-at-the-board")
    with page.expect_navigation():
        page.click("button[type=submit]")
    page.wait_for_selector("#leaderboard tbody tr")


def run_names(page: Any) -> list[str]:  # noqa: F811
    return [t.strip() for t in page.locator("#leaderboard tbody td.run").all_inner_texts()]


def test_17_runs_fit_1400_px_without_scrolling_sideways_or_wrapping_names(
    page: Any,  # noqa: F811
    live_server: Any,
    board: Any,
) -> None:
    page.set_viewport_size({"width": 1400, "height": 900})
    login(page, live_server.url, f"/campaigns/{board.pk}/leaderboard/")
    assert page.locator("#leaderboard tbody tr").count() == RUNS
    box = page.locator(".scroll.sticky")
    widths = box.evaluate("b => [b.scrollWidth, b.clientWidth]")
    assert widths[0] <= widths[1], widths  # no horizontal scroll
    # every measure column is in view, the last one (Judged@10) included
    last = page.locator("#leaderboard thead th").last.bounding_box()
    frame = box.bounding_box()
    assert last["x"] + last["width"] <= frame["x"] + frame["width"] + 1
    # each run name on one line: one line box per name, rows of one line's height
    lines = page.locator("#leaderboard tbody td.run a").evaluate_all(
        "links => links.map(a => a.getClientRects().length)"
    )
    assert lines == [1] * RUNS
    heights = page.locator("#leaderboard tbody td.run").evaluate_all(
        "cells => cells.map(c => [c.getBoundingClientRect().height,"
        " parseFloat(getComputedStyle(c).lineHeight) || 20])"
    )
    assert all(h < 2 * lh for h, lh in heights), heights
    # Judged@k and bounds on demand: a second small line in each cell, the table no wider
    page.goto(f"{live_server.url}/campaigns/{board.pk}/leaderboard/?details=1")
    assert page.locator(".cell-details").count() == RUNS * 7
    widths = page.locator(".scroll.sticky").evaluate("b => [b.scrollWidth, b.clientWidth]")
    assert widths[0] <= widths[1], widths


def test_a_click_on_a_header_sorts_and_a_filter_stays_in_the_url(
    page: Any,  # noqa: F811
    live_server: Any,
    board: Any,
    tmp_path: Path,
) -> None:
    page.set_viewport_size({"width": 1400, "height": 900})
    login(page, live_server.url, f"/campaigns/{board.pk}/leaderboard/")
    with page.expect_navigation():
        page.click("#leaderboard thead th.run a")
    assert "sort=run" in page.url and "order=asc" in page.url
    ascending = run_names(page)
    assert ascending == sorted(ascending)
    assert page.locator("#leaderboard thead th.run").get_attribute("aria-sort") == "ascending"
    with page.expect_navigation():
        page.click("#leaderboard thead th.run a")  # again: the other order
    assert "order=desc" in page.url and run_names(page) == ascending[::-1]

    page.select_option("#filter-pooled", "no")
    with page.expect_navigation():
        page.click("#filter-apply")
    assert "pooled=no" in page.url and "sort=run" in page.url  # the sort is kept
    assert page.locator("#leaderboard tbody tr").count() == RUNS // 2
    assert "not pooled runs only" in page.locator("#board-view").inner_text()
    page.reload()
    assert page.locator("#filter-pooled").input_value() == "no"
    assert page.locator("#leaderboard tbody tr").count() == RUNS // 2

    page.select_option("#export-format", "latex")
    with page.expect_download() as info:
        page.click("#export-download")
    download = info.value
    assert download.suggested_filename.endswith("-qrels-v1.tex")
    target = tmp_path / download.suggested_filename
    download.save_as(target)
    tex = target.read_text()
    assert r"\toprule" in tex and "% qrels version 1 (human), hash" in tex
    assert tex.count(r"novel-neural-reranker") == RUNS // 2  # the filtered view only
