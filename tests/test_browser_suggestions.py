"""In Debian's Chromium: the automatic grade is a hint on the judging screen in the shown arm,
and in the hidden arm nothing of it is on the page until the key press has recorded the
judgment; then the page tells it. The keys judge as always."""

from __future__ import annotations

from typing import Any

import pytest

from judging.assessments.models import JudgingSlot, Judgment
from judging.autojudge import services, suggestions
from tests.autojudge.test_suggestions import u_of
from tests.test_browser_judging import _log_in, _ready, judging_setup, page  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

GRADES = {"DOC1": 2, "DOC2": 0, "DOC3": 1, "DOC4": 2, "DOC5": 1}  # the judge's
LABELS = {0: "No", 1: "Some", 2: "Yes"}


def test_the_shown_arm_is_a_hint_and_the_hidden_arm_is_told_after_the_key_commits(
    page: Any,  # noqa: F811
    live_server: Any,
    judging_setup: tuple[Any, Any],  # noqa: F811
    admin_user: Any,
) -> None:
    campaign, annotator = judging_setup
    judge = services.judge_create(
        campaign=campaign, name="zz-browser-judge", kind="imported", model="zz-browser-model"
    )
    services.store_labels(judge, [services.Label("401", d, g) for d, g in GRADES.items()])
    # a share between the 2nd and 3rd smallest draws: exactly two of the five slots hidden
    slots = dict(JudgingSlot.objects.values_list("docid", "pk"))
    draws = sorted(u_of(campaign.pk, pk) for pk in slots.values())
    share = (draws[1] + draws[2]) / 2
    suggestions.suggestions_configure(
        campaign=campaign, judge=judge, hidden_share=share, by=admin_user
    )
    arm = {d: "hidden" if u_of(campaign.pk, pk) < share else "shown" for d, pk in slots.items()}
    assert sorted(arm.values()).count("hidden") == 2

    _log_in(page, live_server.url, f"/annotate/{campaign.pk}/")
    page.wait_for_selector("#docid")
    seen: list[str] = []
    for key in ("0", "1", "2", "0", "1"):
        _ready(page)
        docid = page.inner_text("#docid")
        seen.append(docid)
        label = LABELS[GRADES[docid]]
        html = page.content()
        assert "zz-browser-judge" not in html and "zz-browser-model" not in html
        if arm[docid] == "shown":
            assert page.is_visible("#suggestion"), docid
            assert page.inner_text("#suggestion-label") == label
        else:
            # nothing of the grade on the page before the judgment is committed
            assert not page.is_visible("#suggestion"), docid
            assert page.inner_text("#suggestion-label") == ""
            assert f"(document {docid})" not in page.inner_text("body")
        # a hint only: no grade button is marked because of it (".chosen" is the flash of the
        # key just pressed, for the previous item)
        assert page.locator("button.grade.current").count() == 0
        page.keyboard.press(key)
        if arm[docid] == "hidden":
            told = f"The automatic judge said: {label} (document {docid})."
            page.wait_for_selector(f"#suggestion-reveal:has-text('{told}')")
            assert Judgment.objects.filter(docid=docid).exists()  # said once it was recorded
        elif len(seen) < 5:  # (after the last one the page leaves for the done page)
            page.wait_for_function("() => window.__pjState().queued === 0")  # recorded
            assert f"(document {docid})" not in page.inner_text("#suggestion-reveal")
    page.wait_for_selector("#done", timeout=10_000)  # after the last reveal has been read
    judged = {
        j.docid: (j.grade, j.suggestion_arm, j.suggested_grade)
        for j in Judgment.objects.filter(annotator=annotator)
    }
    assert judged == {
        d: (int(k), arm[d], GRADES[d]) for d, k in zip(seen, ("0", "1", "2", "0", "1"), strict=True)
    }
