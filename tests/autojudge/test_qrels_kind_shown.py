"""Every page and export that shows a number computed against an automatic or hybrid qrels version
says so: the leaderboard, a run's page, the significance page, the exports (CSV, LaTeX, per
query), the TREC file and the API's qrels versions."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest

from judging.assessments.models import QrelsKind
from judging.autojudge import services
from judging.autojudge.models import Judge, JudgeKind
from judging.campaigns.models import Campaign, Run
from judging.pools.models import PoolVersion
from judging.workflows.autojudge import automatic_qrels_built, hybrid_qrels_built
from judging.workflows.qrels import qrels_imported
from tests.test_judging_api import THREE_TOPICS, build_pool

pytestmark = pytest.mark.django_db


@pytest.fixture
def versions(campaign: Campaign, researcher: Any, as_committed: Any) -> dict[str, Any]:
    build_pool(campaign, researcher, THREE_TOPICS)
    pool = PoolVersion.objects.get(campaign=campaign)
    judge = services.judge_create(
        campaign=campaign, name="umbrela", kind=JudgeKind.IMPORTED, model="gpt-4o"
    )
    services.store_labels(
        judge,
        [
            services.Label(q, d, 2 if d.endswith("1") else 0)
            for q, ds in THREE_TOPICS.items()
            for d in ds
        ],
    )
    with as_committed():
        human = qrels_imported(campaign=campaign, data=b"401 0 d401-1 2\n402 0 d402-2 1\n")
        automatic = automatic_qrels_built(judge=judge, pool=pool)
        hybrid = hybrid_qrels_built(judge=judge, pool=pool, human=human)
    return {"human": human, "automatic": automatic, "hybrid": hybrid, "campaign": campaign}


def test_pages_name_the_kind_of_qrels_their_numbers_rest_on(
    client: Any, researcher: Any, versions: dict[str, Any]
) -> None:
    client.force_login(researcher)
    campaign = versions["campaign"]
    automatic, hybrid = versions["automatic"], versions["hybrid"]
    page = client.get(f"/campaigns/{campaign.pk}/leaderboard/?qrels={automatic.number}")
    text = page.content.decode()
    assert page.status_code == 200
    assert 'data-kind="automatic">automatic (umbrela v1)</span>' in text
    # the version picker names every version's kind
    assert f"v{hybrid.number} · hybrid (human + umbrela v1)" in text
    default = client.get(f"/campaigns/{campaign.pk}/leaderboard/").content.decode()
    assert 'data-kind="human">human</span>' in default  # the default is the human version
    run = Run.objects.filter(campaign=campaign).first()
    assert run is not None
    page = client.get(f"/runs/{run.pk}/?qrels={hybrid.number}").content.decode()
    assert 'data-kind="hybrid">hybrid (human + umbrela v1)</span>' in page
    compare = client.get(f"/campaigns/{campaign.pk}/compare/?qrels={automatic.number}")
    assert "automatic (umbrela v1)" in compare.content.decode()


def test_exports_and_the_api_name_the_kind(
    api_client_for: Any, researcher: Any, versions: dict[str, Any]
) -> None:
    api = api_client_for(researcher)
    campaign, automatic = versions["campaign"], versions["automatic"]
    r = api.get(
        f"/api/v1/campaigns/{campaign.pk}/leaderboard/export/?format=csv&qrels={automatic.number}"
    )
    rows = list(csv.DictReader(io.StringIO(r.getvalue().decode())))
    assert rows and {row["qrels_kind"] for row in rows} == {"automatic (umbrela v1)"}
    r = api.get(
        f"/api/v1/campaigns/{campaign.pk}/leaderboard/export/?format=latex&qrels={automatic.number}"
    )
    assert f"% qrels version {automatic.number} (automatic (umbrela v1))" in r.content.decode()
    r = api.get(f"/api/v1/campaigns/{campaign.pk}/per-query/?format=csv&qrels={automatic.number}")
    rows = list(csv.DictReader(io.StringIO(r.getvalue().decode())))
    assert rows and {row["qrels_kind"] for row in rows} == {"automatic (umbrela v1)"}
    board = api.get(f"/api/v1/campaigns/{campaign.pk}/leaderboard/?qrels={automatic.number}")
    assert board.json()["qrels_kind"] == "automatic (umbrela v1)"

    listed = api.get(f"/api/v1/qrels/?campaign={campaign.pk}").json()
    items = listed["results"] if isinstance(listed, dict) else listed
    kinds = {v["number"]: (v["kind"], v["kind_label"], v["judges"]) for v in items}
    judge = Judge.objects.get()
    assert kinds[versions["human"].number] == ("human", "human", [])
    assert kinds[automatic.number] == (
        QrelsKind.AUTOMATIC,
        "automatic (umbrela v1)",
        [{"id": judge.pk, "name": "umbrela", "version": 1, "kind": "imported", "model": "gpt-4o"}],
    )
    export = api.get(f"/api/v1/qrels/{automatic.pk}/export/")
    assert export["X-Qrels-Kind"] == "automatic (umbrela v1)"
    assert f"qrels-v{automatic.number}-automatic.txt" in export["Content-Disposition"]
    human_export = api.get(f"/api/v1/qrels/{versions['human'].pk}/export/")
    assert human_export["X-Qrels-Kind"] == "human"
