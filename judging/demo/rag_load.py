"""``manage.py load_demo --rag``: the retrieval team's story (``judging.demo.rag.story``),
played in-process through the Python client by the demo's admin and researcher, with a
simulated assessor judging the pool by the same service the judging screen records through; then
the team's answers (``judging.demo.rag.answer_story``), their items judged the same way."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.auth import get_user_model

from judging.assessments.queue import item_text, lease_next
from judging.assessments.units import unit_shown
from judging.autojudge.embedding import available
from judging.campaigns.models import Campaign
from judging.core.roles import ANNOTATOR, RESEARCHER, Account, grant
from judging.demo.inprocess import client_for
from judging.demo.rag.answer_story import UnitDecision, UnitJudging, play_answers
from judging.demo.rag.story import CAMPAIGN, Decision, Judging, StoryFigures, play
from judging.demo.services import (
    STATISTICS_EVERY,
    demo_users_ensure,
    judging_statistics_refresh,
)
from judging.workflows.judgments import judgment_recorded

__all__ = ["RAG_ASSESSOR", "demo_rag_load", "service_judging", "service_unit_judging"]

RAG_ASSESSOR = "assessor-rag"  # the simulated assessor (no password: it cannot log in)


def service_judging(annotator: Account) -> Judging:
    """Judging in-process, lease after lease, through the workflow the judging screen's POST
    and the API's take (``judgment_recorded``: the grade, the answer spans, the history)."""

    def judge_all(
        campaign_id: int, decision: Callable[[str, str, int, int], Decision]
    ) -> tuple[int, int]:
        campaign = Campaign.objects.get(pk=campaign_id)
        judged = marked = 0
        judging_statistics_refresh()
        while (lease := lease_next(campaign=campaign, annotator=annotator)) is not None:
            slot = lease.slot
            shown = item_text(slot)
            text = shown.document.text if shown else ""
            start, end = shown.passage if shown and shown.passage else (0, len(text))
            grade, answers = decision(slot.topic.qid, slot.docid, start, end)
            judgment_recorded(
                lease_id=lease.pk,
                annotator=annotator,
                grade=grade,
                active_seconds=12.0,
                answers=[list(a) for a in answers] or None,
            )
            judged, marked = judged + 1, marked + len(answers)
            if judged % STATISTICS_EVERY == 0:
                judging_statistics_refresh()
        return judged, marked

    return judge_all


def service_unit_judging(annotator: Account) -> UnitJudging:
    """Judging answer items in-process, lease after lease, through ``judgment_recorded``, each
    graded from what its screen shows (``assessments.units.unit_shown``)."""

    def judge_all(campaign_id: int, decision: UnitDecision) -> int:
        campaign = Campaign.objects.get(pk=campaign_id)
        judged = 0
        judging_statistics_refresh()
        while (lease := lease_next(campaign=campaign, annotator=annotator)) is not None:
            slot = lease.slot
            shown = unit_shown(slot.campaign_id, slot.topic_id, slot.kind, slot.docid) or {}
            judgment_recorded(
                lease_id=lease.pk,
                annotator=annotator,
                grade=decision(slot.kind, shown),
                active_seconds=20.0,
            )
            judged += 1
            if judged % STATISTICS_EVERY == 0:
                judging_statistics_refresh()
        return judged

    return judge_all


def rag_assessor() -> Account:
    user, _ = get_user_model().objects.get_or_create(username=RAG_ASSESSOR)
    user.set_unusable_password()
    user.save()
    grant(user, ANNOTATOR)
    return user


def demo_rag_load(say: Callable[[str], None] = print) -> StoryFigures | None:
    """Play the story once (None when its campaign exists already)."""
    if Campaign.objects.filter(name=CAMPAIGN).exists():
        return None
    users = demo_users_ensure()
    admin, team, assessor = (
        client_for(users["admin"]),
        client_for(users[RESEARCHER]),
        rag_assessor(),
    )
    figures = play(admin, team, service_judging(assessor), say=say)
    if not available():
        say("the embedding extra is not installed: no automatic assigner, every item judged")
    play_answers(
        admin,
        team,
        service_unit_judging(assessor),
        campaign=figures.campaign,
        automatic=available(),
        say=say,
    )
    return figures
