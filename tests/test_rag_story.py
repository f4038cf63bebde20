"""The retrieval team's story, end to end through the Python client, from a fresh database
against a live server (issue 33, point 5): three setups on passages, pooled and judged with
answer spans marked, re-chunked with the judgments carried over, compared with intervals and
sliced by question type, and a regression check that fails the change that loses recall; then
(issue 34, point 7) the team's answers, when the embedding extra is installed: checked by
tests/_answer_story_checks.py in the same play, so that the retrieval story runs once."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from judging.autojudge.embedding import available
from judging.demo.rag.answer_story import play_answers
from judging.demo.rag.story import FIRST, JUDGED, SECOND, play
from judging.demo.rag_load import rag_assessor, service_judging, service_unit_judging
from pooljudge.client import Client
from tests._answer_story_checks import check_the_answers

PASSWORD = "pw-for-tests-only"

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def story(live_server: Any, admin_user: Any, researcher: Any) -> Any:
    """The admin and the team work through the client against the live server; the assessor
    judges in-process through the workflow the API's judgment POST takes (the API's own path,
    spans included, is tests/test_passage_judging.py's: 718 judgments over HTTP would take a
    minute of the suite)."""
    url = str(live_server.url)
    lines: list[str] = []
    start = time.perf_counter()
    with (
        Client.login(url, admin_user.username, PASSWORD) as admin,
        Client.login(url, researcher.username, PASSWORD) as team,
    ):
        assessor = rag_assessor()
        figures = play(
            admin,
            team,
            service_judging(assessor),
            say=lambda s: lines.append(f"{time.perf_counter() - start:5.1f} {s}"),
        )
        if available():
            figures.answers = play_answers(
                admin,
                team,
                service_unit_judging(assessor),
                campaign=figures.campaign,
                say=lambda s: lines.append(f"{time.perf_counter() - start:5.1f} {s}"),
            )
    print("\n".join(lines), f"\n({time.perf_counter() - start:.1f} s)")
    return figures


def _row(board: Any, tag: str) -> Any:
    return board.row(tag).raw["measures"]


def test_the_retrieval_teams_story(story: Any) -> None:
    assert story.passages == {FIRST: 333, SECOND: 370}
    assert story.judged > story.pool_size > 0 and story.answers_marked > 0
    assert story.first.num_judgments == story.pool_size
    derivation = story.carried.derivation
    assert derivation.lost_topics == () and derivation.overall["relevant"] > 0
    # the holes judged and published onto the carried version: its minor version
    completed = story.completed
    assert completed.raw["extends"] == story.carried.id and completed.raw["minor_label"] == "2.1"
    assert story.judged == story.pool_size + story.holes
    for name, chunking in ((FIRST, FIRST), (SECOND, SECOND), (JUDGED, SECOND)):
        board = story.boards[name]
        r5 = {s: _row(board, f"{s}-{chunking}")["R@5"] for s in ("bm25", "dense", "hybrid")}
        # hybrid is the best setup on R@5, with an interval and the ceiling beside
        assert max(r5, key=lambda s: r5[s]["value"]) == "hybrid", r5
        for summary in r5.values():
            assert summary["ci_low"] <= summary["value"] <= summary["ci_high"]
            assert summary["ceiling"] is not None
            assert summary["n_queries"] == 36  # the four questions with no answer are left out
    judged = {
        s: _row(story.boards[JUDGED], f"{s}-windows")["Judged@5"]["value"]
        for s in ["bm25", "dense", "hybrid", "bm25-nostem"]
    }
    assert set(judged.values()) == {1.0}  # every setup's top 5 judged once the holes are
    checks = story.checks
    assert checks["bm25-nostem-paragraphs"].verdict == "fail"
    assert not checks["bm25-nostem-paragraphs"].passed
    assert checks["bm25-nostem-windows"].verdict == "drop-not-significant"
    assert checks["hybrid-windows"].passed
    lexical, paraphrase = story.slices["lexical"], story.slices["paraphrase"]
    assert (
        _row(lexical, "bm25-windows")["R@5"]["value"]
        > _row(lexical, "dense-windows")["R@5"]["value"]
    )
    assert (
        _row(paraphrase, "dense-windows")["R@5"]["value"]
        > _row(paraphrase, "bm25-windows")["R@5"]["value"]
    )
    check_the_guide(story)
    if available():  # CI installs the extra: the answers' story is checked there
        check_the_answers(story.answers)


GUIDE = Path(__file__).resolve().parent.parent / "docs" / "guide" / "rag.md"


def _block(text: str, name: str) -> str:
    start = text.index(f"<!-- figures: {name} -->")
    return text[start : text.index("<!-- end figures -->", start)]


def _interval(summary: dict[str, Any]) -> str:
    return f"{summary['value']:.3f} [{summary['ci_low']:.3f}, {summary['ci_high']:.3f}]"


def check_the_guide(story: Any) -> None:
    """docs/guide/rag.md prints the figures the story gives (one story per test run: it takes
    several seconds)."""
    text = GUIDE.read_text(encoding="utf-8")
    for name, chunking, block in (
        (FIRST, FIRST, "paragraphs"),
        (SECOND, SECOND, "windows"),
        (JUDGED, SECOND, "windows-judged"),
    ):
        board = story.boards[name]
        expected = [
            "| setup | R@5 [95% CI] | ceiling | MRR@10 [95% CI] | nDCG@5 [95% CI] | Judged@5 |"
        ]
        for row in board.rows:
            setup = row.run.removesuffix(f"-{chunking}")
            if setup not in ("bm25", "dense", "hybrid"):
                continue
            m = row.raw["measures"]
            expected.append(
                f"| {setup} | {_interval(m['R@5'])} | {m['R@5']['ceiling']['value']:.3f} | "
                f"{_interval(m['RR@10'])} | {_interval(m['nDCG@5'])} | "
                f"{m['Judged@5']['value']:.3f} |"
            )
        found = _block(text, block)
        for line in expected:
            assert line in found, line
    slices = _block(text, "slices")
    for tag in ("lexical", "paraphrase"):
        values = {
            r.run.removesuffix(f"-{SECOND}"): r.raw["measures"]["R@5"]["value"]
            for r in story.slices[tag].rows
        }
        line = f"| {tag} | {values['bm25']:.3f} | {values['dense']:.3f} | {values['hybrid']:.3f} |"
        assert line in slices, line
    assert f"`{story.checks['bm25-nostem-paragraphs'].summary}`" in _block(text, "check")
    assert f"`{story.checks['bm25-nostem-windows'].summary}`" in _block(text, "check-windows")
    overall = story.carried.derivation.overall
    flat = " ".join(text.split())  # the page's prose, whatever its line breaks
    for figure in (
        f"{story.passages[FIRST]} passages",
        f"{story.passages[SECOND]} passages",
        f"is {story.pool_size}",
        f"marked {story.answers_marked} answer spans",
        f"{overall['documents']:,} judged",
        f"{overall['chunks']:,} (question, window)",
        f"{overall['relevant']} carried relevant, {overall['non_relevant']} non-relevant, "
        f"{overall['unknown']:,} left unjudged",
        f"none of the {overall['relevant_spans']} relevant spans",
        f"a setup's top 5 ({story.holes} windows)",
        f"{story.invisible[0]} questions have relevant windows none of the setups retrieved "
        f"within 5 ({story.invisible[1]} windows",
        f"the {story.holes} windows",
    ):
        assert figure in flat, figure
