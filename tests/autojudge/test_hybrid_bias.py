"""Pooling-bias analyses on automatic and hybrid qrels (issue 17, point 6): the bias and
reusability reports compute on them like on human ones, and the bias page shows where automatic
judging of a novel run's unjudged documents moves its score."""

from __future__ import annotations

from typing import Any

import pytest

from judging.autojudge import services
from judging.autojudge.models import JudgeKind
from judging.campaigns.models import Campaign, Run
from judging.core.models import JobState
from judging.evaluation.models import BiasReport, Reusability
from judging.pools.models import PoolVersion
from judging.workflows.autojudge import hybrid_qrels_built
from judging.workflows.pools import pool_requested
from judging.workflows.qrels import qrels_imported
from judging.workflows.runs import run_submitted
from tests.test_judging_api import THREE_TOPICS, build_pool

pytestmark = [pytest.mark.django_db, pytest.mark.follow_ups]


@pytest.fixture
def hybrid(campaign: Campaign, researcher: Any, as_committed: Any) -> dict[str, Any]:
    build_pool(campaign, researcher, THREE_TOPICS)  # pool v1: two pooled runs
    people = "".join(
        f"{q} 0 {d} {1 if d.endswith('-1') else 0}\n" for q, ds in THREE_TOPICS.items() for d in ds
    )
    with as_committed():
        human = qrels_imported(campaign=campaign, data=people.encode())
        # a novel system: its top documents are new ones nobody judged
        novel = {
            q: {f"new-{q}-{i}": 10.0 - i for i in range(3)} | {ds[0]: 1.0}
            for q, ds in THREE_TOPICS.items()
        }
        run_submitted(campaign=campaign, owner=researcher, tag="novel", results=novel, pooled=False)
        # pool v2 over every run; only the judge labels it
        pool2, _ = pool_requested(
            campaign=campaign, runs=list(Run.objects.filter(campaign=campaign))
        )
    pool2.refresh_from_db()
    assert pool2.number == 2 and pool2.state == "built", pool2.error
    judge = services.judge_create(
        campaign=campaign, name="judge", kind=JudgeKind.IMPORTED, model="m"
    )
    # the judge finds the novel run's first new document of each topic relevant
    grades = [
        services.Label(
            q, d, 1 if (d.startswith("d") and d.endswith("-1")) or d == f"new-{q}-0" else 0
        )
        for q, d in services.pool_pairs(pool2)
    ]
    services.store_labels(judge, grades)
    with as_committed():
        version = hybrid_qrels_built(judge=judge, pool=pool2, human=human)
    return {"human": human, "hybrid": version, "campaign": campaign}


def test_bias_and_reusability_reports_compute_on_a_hybrid_version(hybrid: dict[str, Any]) -> None:
    version = hybrid["hybrid"]
    reports = BiasReport.objects.filter(qrels=version)
    assert reports.exists()
    assert {r.state for r in reports} == {JobState.DONE}, [r.error for r in reports]
    reuse = Reusability.objects.get(qrels=version)
    assert reuse.state == JobState.DONE, reuse.error


def test_the_bias_page_shows_where_the_judge_moves_the_novel_run(
    hybrid: dict[str, Any], client: Any, admin_user: Any
) -> None:
    from judging.autojudge.hybrid import hybrid_shift

    shift = hybrid_shift(hybrid=hybrid["hybrid"], user=admin_user, measure="P@10")
    assert shift is not None
    rows = {r["run"]: r for r in shift["runs"]}
    # under people's qrels the novel run has 1 relevant (ds[0]) in 4 retrieved per topic:
    # P@10 = 1/10; the judge adds its new-*-0 document: 2/10
    assert rows["novel"]["human"] == pytest.approx(0.1)
    assert rows["novel"]["hybrid"] == pytest.approx(0.2)
    assert rows["novel"]["judged_human"] == pytest.approx(0.25)  # 1 of its 4 documents
    assert rows["novel"]["judged_hybrid"] == pytest.approx(1.0)
    assert shift["runs"][0]["run"] == "novel"  # novel runs first
    assert shift["mean_delta_pooled"] == pytest.approx(0.0)
    client.force_login(admin_user)
    page = client.get(
        f"/campaigns/{hybrid['campaign'].pk}/bias/?qrels={hybrid['hybrid'].number}&measure=P@10"
    ).content.decode()
    assert 'id="hybrid-shift-table"' in page
    assert "qrels v1 (human) → v" in page
    human_page = client.get(f"/campaigns/{hybrid['campaign'].pk}/bias/").content.decode()
    assert 'id="hybrid-shift"' not in human_page
    assert PoolVersion.objects.filter(campaign=hybrid["campaign"]).count() == 2
