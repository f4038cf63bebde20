"""In a real browser: the significance matrix renders with coloured cells and its legend, says
which test and correction it used, switches to a baseline through the form (``baseline=`` in
the URL) and downloads its pair list as CSV; a 30-run matrix is compact and keeps its header
row and run column in view when scrolled."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from judging.campaigns.models import Topic
from judging.workflows.qrels import qrels_imported
from judging.workflows.runs import run_submitted
from tests.test_browser_judging import page  # noqa: F401 (the browser fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TOPICS = [str(q) for q in range(401, 413)]


def submit_runs(campaign: Any, owner: Any, qualities: list[float]) -> None:
    for qid in TOPICS:
        Topic.objects.get_or_create(campaign=campaign, qid=qid, defaults={"title": f"t {qid}"})
    rng = np.random.default_rng(5)
    docs = [f"R{i}" for i in range(5)] + [f"N{i}" for i in range(10)]
    for n, quality in enumerate(qualities):
        results = {}
        for q in TOPICS:
            keys = {d: rng.normal() + (quality if d.startswith("R") else 0.0) for d in docs}
            order = sorted(docs, key=lambda d: -keys[d])
            results[q] = {d: float(len(order) - i) for i, d in enumerate(order)}
        run_submitted(campaign=campaign, owner=owner, tag=f"system-{n:02d}", results=results)
    qrels = "".join(f"{q} 0 {d} {1 if d.startswith('R') else 0}\n" for q in TOPICS for d in docs)
    qrels_imported(campaign=campaign, data=qrels.encode())  # evaluates every run (eagerly)


def log_in(page: Any, live_server: Any, make_user: Any, next_url: str) -> None:  # noqa: F811
    make_user("sig-admin", "admin", password="look-at-the-matrix")
    page.goto(f"{live_server.url}/login/?next={next_url}")
    page.fill("#id_username", "sig-admin")
    page.fill("#id_password", "look-at-the-matrix")
    with page.expect_navigation():
        page.click("button[type=submit]")


def test_the_matrix_is_coloured_explained_switches_to_a_baseline_and_downloads(
    page: Any,  # noqa: F811
    live_server: Any,
    campaign: Any,
    researcher: Any,
    make_user: Any,
) -> None:
    submit_runs(campaign, researcher, [3.0, 2.0, 1.0, 0.3, 0.0])
    log_in(page, live_server, make_user, f"/campaigns/{campaign.pk}/compare/?measure=AP")
    page.wait_for_selector("#significance-matrix")
    cells = page.locator("#significance-matrix tbody td")
    assert cells.count() == 25
    coloured = page.locator(
        "#significance-matrix td[class^='sig-up-'], #significance-matrix td[class^='sig-down-']"
    )
    assert coloured.count() >= 2
    background = coloured.first.evaluate("c => getComputedStyle(c).backgroundColor")
    assert background not in ("rgb(255, 255, 255)", "rgba(0, 0, 0, 0)"), background
    blue = page.locator("#significance-matrix td[class^='sig-up-']").first
    red = page.locator("#significance-matrix td[class^='sig-down-']").first
    b = blue.evaluate("c => getComputedStyle(c).backgroundColor")
    r = red.evaluate("c => getComputedStyle(c).backgroundColor")
    rb = [int(v) for v in b[b.index("(") + 1 : -1].split(",")[:3]]
    rr = [int(v) for v in r[r.index("(") + 1 : -1].split(",")[:3]]
    assert rb[2] > rb[0] and rr[0] > rr[2]  # blue where the row is better, red where worse
    assert "▲" in blue.inner_text() and "▼" in red.inner_text()
    assert "p adjusted" in (blue.get_attribute("title") or "")
    legend = page.locator("#significance-legend li")
    assert legend.count() == 9 and legend.first.is_visible()
    method = page.locator("#significance-method").inner_text()
    assert "paired t-test" in method and "Holm" in method and "qrels version 1" in method
    run_name = page.locator("#significance-matrix tbody th").first
    box = run_name.bounding_box()
    assert box is not None and box["height"] < 40  # a run name on one line

    with page.expect_download() as download_info:
        page.click("#download-csv")
    download = download_info.value
    assert download.suggested_filename.endswith(".csv")
    with open(download.path(), encoding="utf-8") as f:
        lines = f.read().splitlines()
    assert lines[0].startswith(  # text quoted (tests/test_csv_injection.py)
        '"run_a","run_b","mean_a","mean_b","diff","effect_dz","p_value","p_adjusted"'
    )
    assert len(lines) == 1 + 10

    page.select_option("#sig-baseline", "system-04")
    with page.expect_navigation():
        page.click("#significance-form button[type=submit]")
    assert "baseline=system-04" in page.url
    page.wait_for_selector("#baseline-table")
    assert page.locator("#baseline-table tbody tr").count() == 4
    assert "system-04" in page.locator("#significance-method").inner_text()


def test_a_30_run_matrix_is_compact_and_keeps_its_header_and_run_column_in_view(
    page: Any,  # noqa: F811
    live_server: Any,
    campaign: Any,
    researcher: Any,
    make_user: Any,
) -> None:
    submit_runs(campaign, researcher, [3.0 - 0.1 * n for n in range(30)])
    page.set_viewport_size({"width": 900, "height": 700})
    log_in(page, live_server, make_user, f"/campaigns/{campaign.pk}/compare/?measure=AP")
    page.wait_for_selector("#significance-matrix.compact")
    box = page.locator(".sig-scroll")
    frame = box.bounding_box()
    assert frame is not None and frame["height"] <= 700
    box.evaluate("b => { b.scrollTop = b.scrollHeight; b.scrollLeft = b.scrollWidth; }")
    page.wait_for_timeout(100)
    header = page.locator("#significance-matrix thead th").nth(5).bounding_box()
    assert abs(header["y"] - frame["y"]) < 3  # the header row stays at the box's top
    run_cell = page.locator("#significance-matrix tbody tr").last.locator("th").bounding_box()
    assert abs(run_cell["x"] - frame["x"]) < 3  # the run column stays at the left edge
    assert page.locator("#significance-matrix tbody tr").count() == 30
    assert page.locator("#pair-list").count() == 0  # 435 pairs: in the CSV, not the page
