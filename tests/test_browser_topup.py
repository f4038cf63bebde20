"""In a real browser: an admin opens the novel run's page, queues a top-up of its unjudged top
10 corrected by an automatic judge from the form, and reads where it stands (n of m judged, the
sample's estimates and the judge's corrected ones) at 1400 px without horizontal overflow."""

from __future__ import annotations

from typing import Any

import pytest

from tests.test_browser_judging import page  # noqa: F401 (the browser fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_admin_queues_a_top_up_with_a_judge_from_the_run_page(
    page: Any,  # noqa: F811
    live_server: Any,
) -> None:
    from django.test import TestCase

    from judging.assessments.models import TopUp
    from judging.autojudge.models import JudgeKind
    from judging.autojudge.services import judge_create, labels_import
    from judging.demo.data import build
    from judging.demo.services import demo_judge, demo_load

    with TestCase.captureOnCommitCallbacks(execute=True):
        campaign = demo_load()
    assert campaign is not None
    with TestCase.captureOnCommitCallbacks(execute=True):
        demo_judge(campaign)
    novel = campaign.runs.get(tag="novel-neural")
    judge = judge_create(campaign=campaign, name="truth-file", kind=JudgeKind.IMPORTED, model="m")
    truth = build().truth
    # the judge's grades of every document of the run's top 10 (a file, as an imported judge's)
    lines = [
        f"{q} 0 {d} {truth[q].get(d, 0)}\n"
        for q, docids in novel.rankings.values_list("topic__qid", "docids")
        for d in docids.split("\n")[:10]
    ]
    labels_import(judge=judge, data="".join(lines).encode())

    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto(f"{live_server.url}/login/?next=/runs/{novel.pk}/")
    page.fill("#id_username", "admin")
    page.fill("#id_password", "admin-demo")
    with page.expect_navigation():
        page.click("button[type=submit]")
    page.wait_for_selector("#topup-form")
    designs = page.locator("#topup-form select[name=design] option").evaluate_all(
        "os => os.map(o => o.value)"
    )
    assert designs == ["uniform", "rank", "per_topic"]
    page.fill("#topup-form input[name=budget]", "4")
    page.select_option("#topup-form select[name=judge]", str(judge.pk))
    with page.expect_navigation():
        page.click("#topup-form button[type=submit]")
    topup = TopUp.objects.get(run=novel)
    paragraph = page.locator(f"#topup-{topup.pk}")
    paragraph.wait_for()
    text = " ".join(paragraph.inner_text().split())
    hole = topup.items.count()
    assert f"Top-up of 4 documents drawn at random from its {hole} unjudged" in text
    assert "0 of 4 judged" in text and "nDCG@10" in text
    correction = " ".join(page.inner_text(f"#topup-correction-{topup.pk}").split())
    assert correction.startswith(
        f"With truth-file v1's grades ({hole} of the {hole} graded) corrected by the 0 judged"
    )
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
