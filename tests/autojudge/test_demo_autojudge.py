"""The demo's automatic judge: an imported UMBRELA-format label file over pool v1, its audit
against qrels v1, and a human sample whose topic-6 documents the demo annotator judges first;
once they are judged, the hybrid leaderboard shows every run's corrected estimate."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from judging.assessments.queue import judgment_record, lease_next
from judging.autojudge.estimates import estimate
from judging.autojudge.models import HumanSample, Judge, JudgeAudit
from judging.autojudge.services import labels, pool_pairs
from judging.campaigns.models import Campaign
from judging.demo.data import build
from judging.demo.services import DEMO_JUDGE, DEMO_SAMPLE_BUDGET, LEFT_FOR_THE_ANNOTATOR

pytestmark = pytest.mark.django_db


def test_the_demo_judge_is_imported_audited_and_sampled(demo: Campaign) -> None:
    judge = Judge.objects.get(campaign=demo, name=DEMO_JUDGE)
    assert judge.kind == "imported" and judge.locked_at is not None
    pool = demo.pools.get(number=1)
    assert set(labels(judge)) == set(pool_pairs(pool))  # the whole pool, and nothing else
    audit = JudgeAudit.objects.get(judge=judge)
    assert audit.state == "done", audit.error
    agreement = audit.result["agreement"]
    # simulated: right on 27 of 40 documents, so exact agreement near 2/3, kappa well above 0
    assert 0.55 < agreement["exact"] < 0.8
    assert 0.3 < agreement["kappa_linear"] < 0.9
    assert audit.result["probes"]["available"] is False  # an imported judge cannot be re-asked
    hs = HumanSample.objects.get(judge=judge)
    progress = estimate(hs)["progress"]
    assert progress["queued"] == DEMO_SAMPLE_BUDGET
    assert 0 < progress["graded"] < DEMO_SAMPLE_BUDGET  # topic 6 is left for the annotator


def test_the_annotator_judges_the_sample_first_then_the_hybrid_board_appears(
    demo: Campaign,
) -> None:
    annotator = get_user_model().objects.get(username="annotator")
    hs = HumanSample.objects.get(judge__campaign=demo)
    left = set(hs.items.filter(topic__qid=LEFT_FOR_THE_ANNOTATOR).values_list("docid", flat=True))
    assert left
    truth = build().truth[LEFT_FOR_THE_ANNOTATOR]
    first: list[str] = []
    for _ in range(len(left)):
        lease = lease_next(campaign=demo, annotator=annotator)
        assert lease is not None
        first.append(lease.slot.docid)
        judgment_record(
            lease_id=lease.pk, annotator=annotator, grade=truth.get(lease.slot.docid, 0)
        )
    assert set(first) == left  # the sampled documents came first
    report = estimate(hs)
    assert report["ready"], report["progress"]
    researcher = get_user_model().objects.get(username="researcher")
    client = Client()
    client.force_login(researcher)
    page = client.get(f"/campaigns/{demo.pk}/samples/{hs.pk}/").content.decode()
    assert 'id="hybrid-board"' in page and "novel-neural" in page
    audit = client.get(f"/campaigns/{demo.pk}/judges/{hs.judge_id}/audit/").content.decode()
    assert 'id="confusion"' in audit and 'id="rankings-table"' in audit
    assert all(
        cell["ppi"]["low"] <= cell["ppi"]["value"] <= cell["ppi"]["high"]
        for by_m in report["runs"].values()
        for cell in by_m.values()
    )
