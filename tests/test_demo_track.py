"""The demo's judges' track (issue 35, ``judging.demo.track``): three judges (the organisers'
and two participants') and a jury on the meta-evaluation with intervals where they are
validated (30 topics: label agreement and tau-b), the other participant's judge anonymised to
the demo researcher, and no interval where the benchmark found none holds."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client, TestCase

from judging.autojudge.meta_board import meta_view
from judging.autojudge.models import MetaEvaluation
from judging.campaigns.models import Campaign
from judging.demo import track
from tests.conftest import built_for_the_module

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def track_data(django_db_setup: None, django_db_blocker: Any) -> Iterator[None]:
    from judging.demo.services import demo_users_ensure

    def build() -> None:
        users = demo_users_ensure()
        with TestCase.captureOnCommitCallbacks(execute=True):
            campaign = track.track_load(users)
        assert campaign is not None
        with TestCase.captureOnCommitCallbacks(execute=True):
            assert track.track_judge(campaign, users), "pool v1 was not built"

    yield from built_for_the_module(django_db_blocker, build)


def test_three_judges_and_a_jury_with_validated_intervals(track_data: None) -> None:
    meta = MetaEvaluation.objects.get(campaign__name=track.CAMPAIGN)
    assert meta.state == "done", meta.job.error
    researcher = get_user_model().objects.get(username="researcher")
    rows = meta_view(meta, researcher, sort="kappa")["result"]["judges"]
    names = [r["judge"]["name"] for r in rows]
    assert sorted(names) == sorted(
        [track.ORGANISERS_JUDGE, "qwen-strict", "anonymous judge #1", track.JURY]
    )
    assert names[-1] == "anonymous judge #1"  # the term-overlap baseline agrees least
    for row in rows:
        assert row["labels"]["n_topics"] == row["ranking"]["n_topics"] == 30
        for name in ("kappa", "kappa_linear", "krippendorff_alpha"):
            f = row["labels"][name]
            assert f["low"] <= f["value"] <= f["high"], (row["judge"]["name"], name)
        tau = row["ranking"]["kendall_tau_b"]
        assert tau["low"] is not None and tau["low"] <= tau["value"] <= tau["high"]
        for name in ("tau_ap", "spearman", "significant_kept"):
            f = row["ranking"][name]
            assert f["value"] is not None and f["low"] is None, name
            assert "not validated" in f["no_interval"]
    jury = next(r for r in rows if r["judge"]["name"] == track.JURY)
    assert jury["jury"]["method"] == "majority" and len(jury["jury"]["members"]) == 3
    assert jury["ledger"]["source"] == "members"
    hidden = next(r for r in rows if r["judge"]["id"] is None)
    assert hidden["judge"]["model"] == "" and hidden["ledger"]["source"] == "declared"


def test_the_researcher_reads_the_page_with_the_other_participant_hidden(
    track_data: None,
) -> None:
    campaign = Campaign.objects.get(name=track.CAMPAIGN)
    client = Client()
    client.force_login(get_user_model().objects.get(username="researcher"))
    page = client.get(f"/campaigns/{campaign.pk}/judges/meta-evaluation/").content.decode()
    assert "anonymous judge #1" in page and "overlap-baseline" not in page
    assert "qwen-strict v1" in page and f"{track.JURY} v1" in page
    assert "no interval" in page and 'id="validated"' in page


def test_the_guides_demo_table_is_the_export_the_researcher_gets(track_data: None) -> None:
    """docs/guide/judges-track.md prints the track's meta-evaluation (Markdown export, sorted by
    kappa, as the researcher) and the Dawid-Skene jury's kappa: both are what the service gives."""
    from pathlib import Path

    from judging.autojudge.juries import jury_request
    from judging.autojudge.meta_board import export
    from judging.autojudge.meta_eval import meta_request
    from judging.autojudge.models import Judge, JuryMethod
    from judging.core.jobs import compute_here

    guide = (Path(__file__).parents[1] / "docs" / "guide" / "judges-track.md").read_text()
    meta = MetaEvaluation.objects.get(campaign__name=track.CAMPAIGN)
    researcher = get_user_model().objects.get(username="researcher")
    text, _, _ = export(meta_view(meta, researcher, sort="kappa"), "markdown")
    rows = [line for line in text.splitlines() if line.startswith("|")]
    shown = [line for line in guide.splitlines() if line.startswith("| ") and " v1 |" in line]
    assert rows[2:] and shown == [r for r in rows[2:] if " v1 |" in r]
    assert next(r for r in rows[2:] if "anonymous judge #1" in r) in guide
    # section 3's Dawid-Skene jury of the track's three judges
    campaign = meta.campaign
    members = list(Judge.objects.filter(campaign=campaign).exclude(kind="jury").order_by("pk"))
    _, run = jury_request(
        campaign=campaign,
        name="three-way",
        members=members,
        method=JuryMethod.DAWID_SKENE,
        pool=meta.pool,
    )
    compute_here(run.job)
    again = meta_request(
        campaign=campaign, human=meta.human, pool=meta.pool, measure=meta.measure, again=True
    )
    compute_here(again.job)
    again.refresh_from_db()
    row = next(r for r in again.result["judges"] if r["judge"]["name"] == "three-way")
    kappa = row["labels"]["kappa"]
    shown_kappa = f"{kappa['value']:.3f} [{kappa['low']:.3f}, {kappa['high']:.3f}]"
    assert shown_kappa == "0.776 [0.727, 0.824]" and shown_kappa in guide
