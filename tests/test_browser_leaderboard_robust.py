"""In a real browser, on real data: Robust 2003's 17 runs (the board users reported, where
Judged@10 hid behind a horizontal scroll at 1400 px) with the campaign's default seven measures
fit a 1400 px window, names on one line; sorting by a column reorders them by its values."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from judging.campaigns.models import Campaign
from tests._shared_data import needs_shared_data
from tests.test_browser_judging import page  # noqa: F401 (the browser fixture)
from tests.test_browser_leaderboard import login, run_names

pytestmark = [
    pytest.mark.browser,
    pytest.mark.data,
    pytest.mark.django_db(transaction=True),
    needs_shared_data("robust03"),
    pytest.mark.follow_ups,
]


def test_robust_2003_board_fits_1400_px_and_sorts_by_a_click(
    page: Any,  # noqa: F811
    live_server: Any,
    shared_data: Path,
    make_user: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the board needs the evaluations only: not the pooling-bias and reusability reports a new
    # qrels version also asks for (tens of seconds of leave-one-out on 17 runs)
    monkeypatch.setattr("judging.workflows.qrels.bias_report_request", lambda **kw: None)
    monkeypatch.setattr("judging.workflows.qrels.reusability_request", lambda **kw: None)
    root = shared_data / "robust03"
    call_command(
        "import_collection",
        "--campaign", "robust03",
        "--qrels", str(root / "qrels.txt"),
        "--runs", *sorted(str(p) for p in (root / "runs").glob("input.*.gz")),
        "--groups", str(root / "runs.tsv"),
        "--pooled-runs", "infer",
        "--infer-topics", "601-650",
        stdout=io.StringIO(),
    )  # fmt: skip
    campaign = Campaign.objects.get(name="robust03")
    make_user("board-admin", "admin", password="look-at-the-board")
    page.set_viewport_size({"width": 1400, "height": 900})
    login(page, live_server.url, f"/campaigns/{campaign.pk}/leaderboard/")
    assert page.locator("#leaderboard tbody tr").count() == 17
    widths = page.locator(".scroll.sticky").evaluate("b => [b.scrollWidth, b.clientWidth]")
    assert widths[0] <= widths[1], widths
    lines = page.locator("#leaderboard tbody td.run a").evaluate_all(
        "links => links.map(a => a.getClientRects().length)"
    )
    assert lines == [1] * 17
    with page.expect_navigation():
        page.click("#leaderboard thead th[data-measure=AP] a")
    assert "sort=AP" in page.url
    ap = [
        float(t.split()[0])
        for t in page.locator("#leaderboard tbody td:nth-child(7)").all_inner_texts()
    ]
    assert ap == sorted(ap, reverse=True), ap
    assert len(run_names(page)) == 17
