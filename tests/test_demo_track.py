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
