"""In a real browser: an admin creates an imported judge with its label file through the judges'
form (the browser itself refuses a name the service would refuse), lands on the judge's page,
reads its grade distribution, and builds an automatic qrels version with the page's button; the
pages fit 1400 px without scrolling sideways (a screenshot is kept for a look)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from judging.assessments.models import QrelsKind, QrelsVersion
from judging.autojudge.models import Judge
from tests.autojudge.judge_setup import LABELS
from tests.test_browser_judging import page  # noqa: F401 (the browser fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def judges_admin(make_user: Any) -> Any:
    return make_user("judges-admin", "admin", password="look-at-the-judges")


def fits(page: Any) -> bool:  # noqa: F811
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"))


def test_an_admin_creates_an_imported_judge_and_builds_automatic_qrels_in_the_browser(
    page: Any,  # noqa: F811
    live_server: Any,
    campaign: Any,
    pooled: Any,
    judges_admin: Any,
    tmp_path: Path,
) -> None:
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.goto(f"{live_server.url}/login/?next=/campaigns/{campaign.pk}/judges/")
    page.fill("#id_username", "judges-admin")
    page.fill("#id_password", "look-at-the-judges")
    with page.expect_navigation():
        page.click("button[type=submit]")
    page.wait_for_selector("#judge-create")
    assert fits(page)

    form = "#judge-create"
    page.select_option(f"{form} select[name=kind]", "imported")
    page.fill(f"{form} input[name=name]", "Bad Name")
    page.fill(f"{form} input[name=model]", "gpt-4o")
    # the browser refuses the name before anything is sent (the service would too)
    assert page.eval_on_selector(f"{form} input[name=name]", "e => e.validity.patternMismatch")
    page.fill(f"{form} input[name=name]", "umbrela-file")
    labels = tmp_path / "labels.txt"
    labels.write_bytes(LABELS)
    page.set_input_files(f"{form} input[name=file]", str(labels))
    with page.expect_navigation():
        page.click(f"{form} button[type=submit]")
    judge = Judge.objects.get()
    assert page.url == f"{live_server.url}/campaigns/{campaign.pk}/judges/{judge.pk}/"
    assert "11 label(s) imported" in page.inner_text(".messages")
    counts = page.locator("#judge-grades tbody tr td:nth-child(2)").all_inner_texts()
    assert counts == ["6", "3", "2"]
    assert fits(page)

    with page.expect_navigation():
        page.click("#judge-automatic-form button[type=submit]")
    version = QrelsVersion.objects.get(kind=QrelsKind.AUTOMATIC)
    assert f"Qrels version {version.number} (automatic (umbrela-file v1))" in page.inner_text(
        ".messages"
    )
    assert page.locator("#judge-qrels li").all_inner_texts() == [
        f"qrels v{version.number} · automatic (umbrela-file v1) · 11 grades"
    ]
    page.screenshot(path=str(tmp_path / "judge.png"), full_page=True)
