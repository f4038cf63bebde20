"""In a real browser (Debian's Chromium driven by Playwright): a gold item comes up among the
pooled ones and is judged from the keyboard like them; the admin excludes the assessor from the
quality page's form."""

from __future__ import annotations

from typing import Any

import pytest

from judging.assessments.gold import GoldRow, gold_import
from judging.assessments.models import AnnotatorExclusion, Judgment
from judging.campaigns.models import Document
from judging.workflows.pools import pool_requested
from judging.workflows.runs import run_submitted
from tests.test_browser_judging import _ready, page  # noqa: F401  (the browser fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_gold_judged_from_the_keyboard_then_the_admin_excludes_the_assessor(
    page: Any,  # noqa: F811
    live_server: Any,
    campaign: Any,
    researcher: Any,
    admin_user: Any,
    make_user: Any,
) -> None:
    run_submitted(
        campaign=campaign,
        owner=researcher,
        tag="hidden-system-tag",
        results={"401": {f"DOC{i}": float(10 - i) for i in range(1, 9)}},
    )
    for docid in [f"DOC{i}" for i in range(1, 9)] + ["GOLD1", "GOLD2"]:
        Document.objects.create(
            campaign=campaign, docid=docid, title=f"Title {docid}", text=f"Text of {docid}."
        )
    pool_requested(campaign=campaign, strategy="depth", depth=8)
    gold_import(
        campaign=campaign,
        rows=[GoldRow("401", "GOLD1", 2), GoldRow("401", "GOLD2", 2)],
        created_by=admin_user,
    )
    campaign.gold_rate = 0.25
    campaign.save()
    annotator = make_user("browser-annotator", "annotator", password="judge-me-please")

    page.goto(f"{live_server.url}/login/?next=/annotate/{campaign.pk}/")
    page.fill("#id_username", "browser-annotator")
    page.fill("#id_password", "judge-me-please")
    page.click("button[type=submit]")
    page.wait_for_selector("#docid")
    seen = []
    for _ in range(4):
        # the judging screen has leased the next item ahead and sent what was judged
        _ready(page)
        seen.append(page.inner_text("#docid"))
        if seen[-1].startswith("GOLD"):
            assert "gold" not in page.content().lower().replace(seen[-1].lower(), "")
        page.keyboard.press("0")  # a wrong grade for the gold item
        page.wait_for_function(
            "d => document.getElementById('docid').textContent !== d", arg=seen[-1]
        )
    _ready(page)
    assert seen[3].startswith("GOLD") and not any(d.startswith("GOLD") for d in seen[:3])
    gold = Judgment.objects.get(annotator=annotator, docid=seen[3])
    assert gold.gold is not None and gold.grade == 0

    admin_context = page.context.browser.new_context()
    admin_page = admin_context.new_page()
    admin_page.goto(f"{live_server.url}/admin/login/?next=/manage/{campaign.pk}/quality/")
    admin_page.fill("#id_username", admin_user.username)
    admin_page.fill("#id_password", "pw-for-tests-only")
    with admin_page.expect_navigation():
        admin_page.click("input[type=submit], button[type=submit]")
    row = admin_page.locator('tr[data-annotator="browser-annotator"]')
    assert "0.000" in row.inner_text()  # accuracy on its one gold item
    row.locator('input[name="reason"]').fill("wrong on gold")
    with admin_page.expect_navigation():
        row.locator("button[type=submit]").click()
    assert "excluded" in admin_page.locator('tr[data-annotator="browser-annotator"]').inner_text()
    assert AnnotatorExclusion.objects.get().reason == "wrong on gold"
    admin_context.close()
