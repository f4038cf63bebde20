"""Answer runs scored from people's judgments (issue 34, point 4), worked by hand: nugget recall
under a published bank version, citation support of first citations, intervals, the bounds an
incomplete judging leaves, a shared answer judged once for two runs, and the board on the API and
the leaderboard page, naming its bank version and qrels version, other researchers' runs
anonymised."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from judging.assessments import queue, units
from judging.assessments.models import Adjudication, Nugget, NuggetBank, UnitKind
from judging.campaigns.models import Campaign
from judging.core.roles import account
from judging.evaluation.answer_board import answer_board_for
from judging.workflows.judgments import judgment_recorded
from tests._answer_runs import submit_answers

pytestmark = pytest.mark.django_db

X1, X2 = "Sails ride on light.", "The push adds up."
Y1 = "Nobody knows."
RUN_A = [
    {
        "run_id": "team-a",
        "topic_id": "401",
        "references": ["d1", "d2", "d3"],
        "answer": [{"text": X1, "citations": [0]}, {"text": X2, "citations": [1, 2]}],
    },
    {
        "run_id": "team-a",
        "topic_id": "402",
        "references": ["d4"],
        "answer": [{"text": Y1, "citations": []}],
    },
]
# team-b answers 401 with the same text (other white space, other references): the same items
RUN_B = [
    {
        "run_id": "team-b",
        "topic_id": "401",
        "references": ["d1", "d2"],
        "answer": [
            {"text": "Sails  ride on light.", "citations": [0]},
            {"text": X2, "citations": [1]},
        ],
    }
]


@pytest.fixture
def scored(
    campaign: Campaign,
    researcher: Any,
    other_researcher: Any,
    admin_user: Any,
    annotator: Any,
    api_client_for: Callable[[Any], Any],
) -> Campaign:
    """Bank v1: 401 has n1 (vital) and n2 (okay), 402 has n1 (vital). Judged: (X, n1) support,
    (X, n2) partial; (Y, n1) not yet. Citations: (X1, d1) full, (X2, d2) partial."""
    submit_answers(api_client_for(researcher), campaign, RUN_A)
    submit_answers(api_client_for(other_researcher), campaign, RUN_B)
    bank = NuggetBank.objects.create(
        campaign=campaign, number=1, state="published", source="imported", content_hash="ab" * 32
    )
    t401, t402 = campaign.topics.get(qid="401"), campaign.topics.get(qid="402")
    for topic, key, importance in [
        (t401, "n1", "vital"),
        (t401, "n2", "okay"),
        (t402, "n1", "vital"),
    ]:
        Nugget.objects.create(
            bank=bank, topic=topic, key=key, position=0, text=key, importance=importance
        )
    units.answer_items_queue(campaign=campaign, kind=UnitKind.NUGGET_ASSIGNMENT, bank=1)
    units.answer_items_queue(campaign=campaign, kind=UnitKind.CITATION_SUPPORT)
    x = units.answer_text([{"text": X1}, {"text": X2}])
    grades = {
        units.assignment_key(bank, "n1", x): 2,
        units.assignment_key(bank, "n2", x): 1,
        units.support_key(X1, "d1"): 2,
        units.support_key(X2, "d2"): 1,
    }
    who = account(annotator)
    skipped: set[str] = set()
    while (lease := queue.lease_next(campaign=campaign, annotator=who)) is not None:
        key = lease.slot.docid
        if key in skipped:
            break  # only the items left unjudged are served now
        if key not in grades:
            skipped.add(key)
            queue.lease_release(lease_id=lease.pk, annotator=who)  # left unjudged
            continue
        judgment_recorded(lease_id=lease.pk, annotator=who, grade=grades[key])
    return campaign


def _row(board: dict[str, Any], run: str) -> dict[str, Any]:
    found = [r for r in board["rows"] if r["run"] == run]
    assert len(found) == 1, board["rows"]
    return found[0]


def test_scores_worked_by_hand(scored: Campaign, admin_user: Any) -> None:
    board = answer_board_for(campaign=scored, user=admin_user, version=None)
    assert board is not None
    assert board["bank"] == {"number": 1, "content_hash": "ab" * 32, "topics": 2, "nuggets": 3}
    a, b = _row(board, "team-a"), _row(board, "team-b")
    # team-a, 401: n1 support, n2 partial; 402: its one vital nugget unjudged (counted 0)
    assert (a["nugget_pairs"], a["nugget_judged"]) == (3, 2)
    assert a["nuggets"]["strict_vital_score"]["mean"] == pytest.approx((1 + 0) / 2)
    assert a["nuggets"]["strict_vital_score"]["upper"] == pytest.approx((1 + 1) / 2)
    assert a["nuggets"]["all_score"]["mean"] == pytest.approx((0.75 + 0) / 2)
    assert a["nuggets"]["strict_all_score"]["mean"] == pytest.approx((0.5 + 0) / 2)
    # weighted: (vital 1 + 0.5 x okay 0.5) / (1 + 0.5) on 401
    assert a["nuggets"]["weighted_score"]["mean"] == pytest.approx((1.25 / 1.5 + 0) / 2)
    # team-b: the same answer text on 401, judged once for both; 402 unanswered scores 0 and
    # is no unjudged pair, so team-b's scores are complete (no upper bound)
    assert (b["nugget_pairs"], b["nugget_judged"]) == (2, 2)
    assert b["nuggets"]["strict_vital_score"]["mean"] == pytest.approx(0.5)
    assert b["nuggets"]["strict_vital_score"]["upper"] is None
    # support of first citations: 401 (X1,d1) full, (X2,d2) partial: precision = recall = 0.75;
    # 402's one sentence cites nothing: precision undefined, recall 0
    assert (a["support_pairs"], a["support_judged"]) == (2, 2)
    assert a["support"]["precision"]["mean"] == pytest.approx(0.75)
    assert (a["support"]["precision"]["topics"], a["support"]["precision"]["undefined"]) == (1, 1)
    assert a["support"]["recall"]["mean"] == pytest.approx((0.75 + 0) / 2)
    assert a["support"]["recall"]["upper"] is None
    assert b["support"]["precision"]["mean"] == pytest.approx(0.75)
    low, high = a["support"]["recall"]["low"], a["support"]["recall"]["high"]
    assert low <= 0.375 <= high
    assert a["support"]["words"]["upper"] is None
    assert a["retrieval"] is None and board["qrels_version"] is None


def test_an_adjudication_wins_and_a_draft_bank_is_refused(
    scored: Campaign, admin_user: Any
) -> None:
    Adjudication.objects.create(
        campaign=scored,
        topic=scored.topics.get(qid="401"),
        kind=UnitKind.CITATION_SUPPORT,
        docid=units.support_key(X2, "d2"),
        grade=0,
        decided_by=admin_user,
    )
    board = answer_board_for(campaign=scored, user=admin_user, version=None)
    assert board is not None
    assert _row(board, "team-a")["support"]["precision"]["mean"] == pytest.approx(0.5)
    NuggetBank.objects.create(campaign=scored, number=2, source="copied")
    from judging.core.errors import InvalidInput

    with pytest.raises(InvalidInput, match="v2 is a draft"):
        answer_board_for(campaign=scored, user=admin_user, version=None, bank=2)


def test_the_api_and_the_page_name_bank_and_anonymise_runs(
    scored: Campaign, researcher: Any, api_client_for: Callable[[Any], Any]
) -> None:
    got = api_client_for(researcher).get(f"/api/v1/campaigns/{scored.pk}/answer-board/")
    assert got.status_code == 200
    runs = [r["run"] for r in got.json()["rows"]]
    assert "team-a" in runs and "team-b" not in runs  # the other researcher's run, anonymised
    assert got.json()["bank"]["number"] == 1
    missing = api_client_for(researcher).get(f"/api/v1/campaigns/{scored.pk}/answer-board/?bank=9")
    assert missing.status_code == 404
    web = Client()
    web.force_login(researcher)
    page = web.get(f"/campaigns/{scored.pk}/leaderboard/").content.decode()
    # no qrels version yet: the retrieval scores wait for one, the answers are shown
    assert "No qrels version yet" in page and 'id="answers-board"' in page
    assert "nugget bank v1" in page and "team-a" in page and "team-b" not in page
