"""In a real browser (Debian's Chromium driven by Playwright): a passage shown in its document's
context (highlighted, the text around it folded), answer spans marked with the mouse and with
the keyboard alone, and the offsets stored with the judgment equal to those of the marked text
in the document (code points, astral characters included)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from judging.assessments.models import Judgment
from judging.campaigns.models import Document, Topic
from judging.workflows.passages import chunking_made
from judging.workflows.pools import pool_requested
from judging.workflows.runs import run_submitted
from tests.knobs import override_knobs
from tests.test_browser_judging import _chromium_page, _log_in, _ready

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# d1 in three paragraphs (the paragraph chunker makes d1#para-1 the middle one); an astral
# character before the passage and one inside it: JavaScript counts them twice (UTF-16), the
# stored offsets once (code points)
P1 = "Solar sails ride on light \U0001f680. They need no fuel."
P2 = "A sail \U0001f31e of one square kilometre feels a tiny push. The push adds up over months."
P3 = "Rockets burn fuel and are fast at first."
D1 = f"{P1}\n\n{P2}\n\n{P3}"
D2 = "Rockets are loud. Sails are quiet and slow. Both reach orbit."


def offsets(text: str, part: str) -> list[int]:
    """``[start, end]`` of ``part`` in ``text``, in Python's characters (code points)."""
    assert text.count(part) == 1, part
    return [text.index(part), text.index(part) + len(part)]


@pytest.fixture
def page() -> Iterator[Any]:
    with _chromium_page() as p:
        yield p


@pytest.fixture
def passages(campaign: Any, researcher: Any, make_user: Any) -> tuple[Any, Any]:
    """Topic 401 pools the passage d1#para-1, then the whole document d2."""
    Topic.objects.filter(campaign=campaign, qid="401").update(title="solar sails")
    Document.objects.create(campaign=campaign, docid="d1", title="Sails", text=D1)
    Document.objects.create(campaign=campaign, docid="d2", title="Loud and quiet", text=D2)
    chunking_made(campaign=campaign, name="para", spec="paragraph")
    run_submitted(
        campaign=campaign,
        owner=researcher,
        tag="hidden-system-tag",
        results={"401": {"d1#para-1": 2.0, "d2": 1.0}},
    )
    pool_requested(campaign=campaign, strategy="depth", depth=10)
    annotator = make_user("browser-annotator", "annotator", password="judge-me-please")
    return campaign, annotator


# Select ``part`` of the text under ``root`` as a user would: a DOM range from the text node
# and offset where it starts to those where it ends (across the term highlights' marks).
SELECT = """([selector, part]) => {
  const root = document.querySelector(selector);
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const nodes = []; let text = ""; let n;
  while ((n = walker.nextNode())) { nodes.push([n, text.length]); text += n.data; }
  const at = text.indexOf(part);
  if (at < 0 || text.indexOf(part, at + 1) >= 0) throw new Error("not found once: " + part);
  function point(i) {
    for (const [node, from] of nodes) if (i <= from + node.data.length) return [node, i - from];
    throw new Error("past the end");
  }
  const range = document.createRange();
  range.setStart(...point(at));
  range.setEnd(...point(at + part.length));
  return range;
}"""


def _drag_over(page: Any, selector: str, part: str) -> None:
    """Select ``part`` with the mouse: press on its first character, release on its last."""
    box = page.evaluate(
        f"""(args) => {{
          const range = ({SELECT})(args);
          const rects = range.getClientRects();
          const first = rects[0], last = rects[rects.length - 1];
          return {{x0: first.left + 1, y0: first.top + first.height / 2,
                   x1: last.right - 1, y1: last.top + last.height / 2}};
        }}""",
        [selector, part],
    )
    page.mouse.move(box["x0"], box["y0"])
    page.mouse.down()
    page.mouse.move(box["x1"], box["y1"], steps=5)
    page.mouse.up()
    assert page.evaluate("() => window.getSelection().toString()") == part


def _select(page: Any, selector: str, part: str) -> None:
    """Select ``part`` by script (a range set on the text nodes)."""
    page.evaluate(
        f"""(args) => {{
          const range = ({SELECT})(args);
          const sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(range);
        }}""",
        [selector, part],
    )


def _marked(page: Any, cls: str) -> str:
    """The text under the marks of class ``cls`` (a span crossing a term's highlight is marked
    in pieces)."""
    return str(
        page.evaluate(
            "(cls) => Array.from(document.querySelectorAll('#doc-text span.' + cls))"
            ".map(e => e.textContent).join('')",
            cls,
        )
    )


def test_a_passage_is_shown_in_context_and_answers_marked_with_the_mouse_are_stored_exactly(
    page: Any, live_server: Any, passages: tuple[Any, Any]
) -> None:
    campaign, annotator = passages
    _log_in(page, live_server.url, f"/annotate/{campaign.pk}/")
    page.wait_for_selector("#passage")
    assert page.inner_text("#docid") == "d1#para-1"
    assert page.inner_text("#item-kind") == "Passage"
    # the passage highlighted, the text before and after folded to one line each
    assert page.inner_text("#passage").strip() == P2
    tint = page.eval_on_selector("#passage", "e => getComputedStyle(e).backgroundColor")
    assert tint not in ("rgba(0, 0, 0, 0)", "rgb(255, 255, 255)")
    before, after = D1.index(P2), len(D1) - D1.index(P2) - len(P2)
    toggle = '.fold[data-region="before"] .fold-toggle'
    assert page.inner_text(toggle) == f"… {before} characters before — show"
    assert not page.is_visible('.fold[data-region="before"] .fold-text')
    assert page.inner_text('.fold[data-region="after"] .fold-toggle') == (
        f"… {after} characters after — show"
    )
    assert P1 not in page.inner_text("#doc-text") and P3 not in page.inner_text("#doc-text")
    page.click(toggle)  # a click shows the text before, c shows (or folds) both
    assert page.is_visible('.fold[data-region="before"] .fold-text')
    assert page.inner_text(toggle).endswith("— hide")
    page.keyboard.press("c")
    assert page.is_visible('.fold[data-region="after"] .fold-text')
    page.keyboard.press("c")
    assert not page.is_visible('.fold[data-region="before"] .fold-text')

    _ready(page)
    # the mouse: a drag over "tiny push", then m; then a selection across the term
    # highlight's mark ("sail" of the topic's title) and the astral character, with the button
    _drag_over(page, "#passage", "tiny push")
    page.keyboard.press("m")
    page.wait_for_selector("#answer-list li")
    assert _marked(page, "answer") == "tiny push"
    _select(page, "#passage", "sail \U0001f31e of one")
    page.click("#mark-answer")
    page.wait_for_function("() => document.querySelectorAll('#answer-list li').length === 2")
    assert page.locator("#answer-list .answer-remove").count() == 2
    assert page.evaluate("() => window.getSelection().isCollapsed")

    page.keyboard.press("2")  # the grade sends the answers with it; the next item is shown
    page.wait_for_function("() => document.getElementById('docid').textContent === 'd2'")
    _ready(page)
    judgment = Judgment.objects.get(annotator=annotator, docid="d1#para-1")
    assert judgment.grade == 2
    assert judgment.spans == {
        "passage": offsets(D1, P2),
        "answers": [offsets(D1, "sail \U0001f31e of one"), offsets(D1, "tiny push")],
    }
    assert [D1[s:e] for s, e in judgment.spans["answers"]] == [
        "sail \U0001f31e of one",
        "tiny push",
    ]
    # the next item, a whole document, starts with no answers and nothing folded
    assert page.inner_text("#item-kind") == "Document"
    assert page.locator("#answer-list li").count() == 0
    assert page.locator("#doc-text .fold").count() == 0
    assert "hidden-system-tag" not in page.content()


def test_answers_are_marked_and_removed_with_the_keyboard_alone(
    page: Any, live_server: Any, passages: tuple[Any, Any]
) -> None:
    campaign, annotator = passages
    _log_in(page, live_server.url, f"/annotate/{campaign.pk}/")
    page.wait_for_selector("#passage")
    _ready(page)
    # ] puts the cursor on the passage's first sentence, ] again on the next; m marks it
    page.keyboard.press("]")
    assert _marked(page, "cursor") == "A sail \U0001f31e of one square kilometre feels a tiny push."
    page.keyboard.press("]")
    assert _marked(page, "cursor") == "The push adds up over months."
    page.keyboard.press("m")
    page.keyboard.press("[")
    page.keyboard.press("m")
    # two answers, listed in the order of the text; x removes the last in the list
    first = "A sail \U0001f31e of one square kilometre feels a tiny push."
    assert page.locator("#answer-list li").count() == 2
    assert _marked(page, "answer") == first + "The push adds up over months."  # not the space
    page.keyboard.press("x")
    assert page.locator("#answer-list li").count() == 1
    assert _marked(page, "answer") == first

    # a grade of 0 cannot have answers: refused on the page, nothing queued
    page.keyboard.press("0")
    page.wait_for_selector("#toast:has-text('cannot have them')")
    assert page.inner_text("#docid") == "d1#para-1"
    assert page.evaluate("window.__pjState().queued") == 0
    page.keyboard.press("1")
    page.wait_for_function("() => document.getElementById('docid').textContent === 'd2'")

    # the whole document: the cursor starts at its first sentence
    page.keyboard.press("]")
    page.keyboard.press("]")
    assert _marked(page, "cursor") == "Sails are quiet and slow."
    page.keyboard.press("m")
    page.keyboard.press("2")
    _ready(page)
    judged = dict(Judgment.objects.filter(annotator=annotator).values_list("docid", "spans"))
    assert judged == {
        "d1#para-1": {
            "passage": offsets(D1, P2),
            "answers": [offsets(D1, first)],
        },
        "d2": {"answers": [offsets(D2, "Sails are quiet and slow.")]},
    }


def test_going_back_shows_the_answers_and_a_key_saves_them_changed(
    page: Any, live_server: Any, passages: tuple[Any, Any]
) -> None:
    campaign, annotator = passages
    _log_in(page, live_server.url, f"/annotate/{campaign.pk}/")
    page.wait_for_selector("#passage")
    _ready(page)
    _select(page, "#passage", "tiny push")
    page.keyboard.press("m")
    page.keyboard.press("2")
    page.wait_for_function("() => document.getElementById('docid').textContent === 'd2'")
    _ready(page)
    with page.expect_navigation():
        page.keyboard.press("b")
    page.wait_for_selector("#passage span.answer")
    assert _marked(page, "answer") == "tiny push"
    page.keyboard.press("x")  # removed, and "over months" marked instead
    _select(page, "#passage", "over months")
    page.keyboard.press("m")
    with page.expect_navigation():
        page.keyboard.press("2")
    judgment = Judgment.objects.get(annotator=annotator, docid="d1#para-1")
    assert judgment.spans == {"passage": offsets(D1, P2), "answers": [offsets(D1, "over months")]}


def test_the_page_marks_no_more_answers_than_the_setting_allows(
    page: Any, live_server: Any, passages: tuple[Any, Any]
) -> None:
    campaign, _ = passages
    with override_knobs(max_answer_spans=1):
        _log_in(page, live_server.url, f"/annotate/{campaign.pk}/")
        page.wait_for_selector("#passage")
        _ready(page)  # the page's scripts hold the keys from here (a loaded machine is slow)
        page.keyboard.press("]")
        page.keyboard.press("m")
        page.wait_for_selector("#answer-list li")
        page.keyboard.press("]")
        page.keyboard.press("m")
        page.wait_for_selector("#toast:has-text('At most 1 answer can')")
        assert page.locator("#answer-list li").count() == 1
