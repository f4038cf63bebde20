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


@pytest.fixture
def hybrid_board() -> Any:
    """The demo after `load_demo` with the annotator's topic-6 share of the human sample judged:
    the sample's page is the hybrid leaderboard (6 runs, P@10, R@10, nDCG@10 and AP)."""
    from django.contrib.auth import get_user_model

    from judging.assessments.queue import judgment_record, lease_next
    from judging.autojudge.models import HumanSample
    from judging.demo.data import build
    from judging.demo.services import LEFT_FOR_THE_ANNOTATOR, demo_judge, demo_load

    campaign = demo_load()
    assert campaign is not None
    demo_judge(campaign)
    sample = HumanSample.objects.get(judge__campaign=campaign)
    annotator = get_user_model().objects.get(username="annotator")
    truth = build().truth[LEFT_FOR_THE_ANNOTATOR]
    for _ in range(sample.items.filter(topic__qid=LEFT_FOR_THE_ANNOTATOR).count()):
        lease = lease_next(campaign=campaign, annotator=annotator)
        assert lease is not None
        judgment_record(
            lease_id=lease.pk, annotator=annotator, grade=truth.get(lease.slot.docid, 0)
        )
    return campaign, sample


def test_the_hybrid_leaderboard_fits_1400_px_with_every_column_and_names_on_one_line(
    page: Any,  # noqa: F811
    live_server: Any,
    hybrid_board: Any,
) -> None:
    """The main leaderboard's layout rules on the hybrid one (`/campaigns/{id}/samples/{n}/`):
    no horizontal scroll at 1400 px, the last column (AP) in view, each run name on one line."""
    campaign, sample = hybrid_board
    page.set_viewport_size({"width": 1400, "height": 900})
    path = f"/campaigns/{campaign.pk}/samples/{sample.pk}/"
    page.goto(f"{live_server.url}/login/?next={path}")
    page.fill("#id_username", "researcher")
    page.fill("#id_password", "researcher-demo")
    with page.expect_navigation():
        page.click("button[type=submit]")
    page.wait_for_selector("#hybrid-board tbody tr")
    assert page.locator("#hybrid-board tbody tr").count() == 6
    box = page.locator(".scroll.sticky")
    widths = box.evaluate("b => [b.scrollWidth, b.clientWidth]")
    assert widths[0] <= widths[1], widths  # no horizontal scroll
    last = page.locator("#hybrid-board thead th").last
    assert last.inner_text().startswith("AP")
    frame, edge = box.bounding_box(), last.bounding_box()
    assert edge["x"] + edge["width"] <= frame["x"] + frame["width"] + 1  # AP in view
    lines = page.locator("#hybrid-board tbody td.run").evaluate_all(
        "cells => cells.map(c => { const r = document.createRange(); r.selectNodeContents(c);"
        " return r.getClientRects().length; })"
    )
    assert lines == [1] * 6, lines  # "novel-neural", not "novel-" / "neural"
    # the cell's second line (judge only, people only) never widens the table
    heights = page.locator("#hybrid-board tbody td.run").evaluate_all(
        "cells => cells.map(c => [c.getBoundingClientRect().height,"
        " parseFloat(getComputedStyle(c).lineHeight) || 20])"
    )
    assert all(h < 3 * lh for h, lh in heights), heights
