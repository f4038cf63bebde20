"""`manage.py load_demo`: deterministic demo campaign and demo users, idempotent."""

from __future__ import annotations

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command

from judging.campaigns.models import Campaign, Run
from judging.core.roles import is_admin, is_annotator, is_researcher
from judging.demo.data import build
from judging.demo.services import DEMO_CAMPAIGN, DEMO_SAMPLED_CAMPAIGN
from judging.pools.models import PoolVersion

pytestmark = pytest.mark.django_db


def test_the_demo_is_the_same_on_every_call() -> None:
    a, b = build(), build()
    assert [d.text for d in a.documents] == [d.text for d in b.documents]
    assert [r.results for r in a.runs] == [r.results for r in b.runs]


# Real commits, as from a shell: the pool is built when demo_load commits, before demo_judge.
@pytest.mark.django_db(transaction=True)
def test_load_demo_creates_users_campaign_and_runs_once(capsys: pytest.CaptureFixture[str]) -> None:
    call_command("load_demo", force=True)  # the test runner turns DEBUG off
    out = capsys.readouterr().out
    assert "username admin" in out and "password annotator-demo" in out
    assert "Simulated assessors made" in out  # pool v1 was built after commit, then judged
    campaign = Campaign.objects.get(name=DEMO_CAMPAIGN)
    assert campaign.topics.count() == 6
    assert 250 <= campaign.documents.count() <= 500
    runs = Run.objects.filter(campaign=campaign)
    assert runs.count() >= 5
    assert runs.filter(pooled=False).exists()
    pool = PoolVersion.objects.get(campaign=campaign)
    assert pool.state == "built" and pool.number == 1 and pool.depth == 10
    assert sorted(pool.run_tags) == sorted(runs.filter(pooled=True).values_list("tag", flat=True))
    assert pool.num_missing_text == 0 and pool.num_to_judge == pool.num_documents > 0
    admin = authenticate(username="admin", password="admin-demo")
    researcher = authenticate(username="researcher", password="researcher-demo")
    annotator = authenticate(username="annotator", password="annotator-demo")
    assert admin is not None and is_admin(admin)
    assert researcher is not None and is_researcher(researcher) and not is_admin(researcher)
    assert annotator is not None and is_annotator(annotator) and not is_researcher(annotator)

    _the_sampled_campaign_shows_inferred_measures(out)
    assert "Loaded the judges' track demo" in out and "three judges and a jury" in out

    n_runs = Run.objects.count()
    call_command("load_demo", force=True)
    assert Campaign.objects.count() == 3 and Run.objects.count() == n_runs
    assert "already has campaigns" in capsys.readouterr().out


def test_load_demo_refuses_to_create_public_passwords_outside_debug() -> None:
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="refuses to run with DJANGO_DEBUG off"):
        call_command("load_demo")
    assert Campaign.objects.count() == 0


def test_the_demo_runs_differ_in_quality() -> None:
    demo = build()

    def relevant_retrieved(tag: str) -> int:
        run = next(r for r in demo.runs if r.tag == tag)
        return sum(demo.truth[q].get(d, 0) > 0 for q in run.results for d in run.results[q])

    assert (
        relevant_retrieved("random-walk")
        < relevant_retrieved("keyword-weak")
        < relevant_retrieved("bm25-baseline")
        < relevant_retrieved("novel-neural")
    )


def _the_sampled_campaign_shows_inferred_measures(out: str) -> None:
    """The second demo campaign: a stratified pool, only its sample judged, sampled qrels v1,
    a leaderboard of inferred measures."""
    from judging.assessments.models import QrelsEntry, QrelsVersion
    from judging.evaluation.selectors import leaderboard
    from judging.pools.models import PoolDocument

    sampled = Campaign.objects.get(name=DEMO_SAMPLED_CAMPAIGN)
    assert "published sampled qrels version 1" in out
    pool = PoolVersion.objects.get(campaign=sampled)
    assert pool.strategy == "stratified" and pool.state == "built"
    docs = PoolDocument.objects.filter(version=pool)
    assert 0 < docs.filter(sampled=True).count() < docs.count()
    version = QrelsVersion.objects.get(campaign=sampled)
    assert version.design and version.design["strategy"] == "stratified"
    unsampled = QrelsEntry.objects.filter(version=version, grade=-1).count()
    assert unsampled == docs.filter(sampled=False).count()
    admin = authenticate(username="admin", password="admin-demo")
    assert admin is not None
    board = leaderboard(campaign=sampled, version=version, user=admin)
    assert board["measures"][0] == "xinfAP"
    assert board["sampled"]["sentence"].startswith("Sampled qrels (pool v1, stratified)")
