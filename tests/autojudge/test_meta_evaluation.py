"""The meta-evaluation of a campaign's judges (issue 35, point 2) through the service: every
judge with labels on the pool against people's qrels, hand-worked kappas, figures that cannot
be computed stored as undefined with their reason, and each judge's cost."""

from __future__ import annotations

from typing import Any

import pytest

from judging.autojudge import services
from judging.autojudge.meta_eval import meta_request
from judging.autojudge.models import JudgeKind, JudgeRun, MetaEvaluation
from judging.campaigns.models import Campaign
from judging.core.models import Job
from judging.pools.models import PoolVersion
from judging.workflows.qrels import qrels_imported
from tests.autojudge.judge_setup import LABELS, imported_judge

pytestmark = pytest.mark.django_db

# People's grades of all 12 pool documents. Against LABELS (11 labels, d403-4 left out) they
# differ only on d403-3 (people 1, the judge 0): rows people, columns the judge, grades 0-2:
# [[5, 0, 0], [1, 3, 0], [0, 0, 2]], n = 11. p_o = 10/11; margins 5, 4, 2 and 6, 3, 2, so
# p_e = (30 + 12 + 4) / 121 = 46/121 and kappa = (110 - 46) / (121 - 46) = 64/75.
HUMAN_ALL = b"""401 0 d401-1 2
401 0 d401-2 1
401 0 d401-3 0
401 0 d401-4 0
402 0 d402-1 1
402 0 d402-2 1
402 0 d402-3 0
402 0 d402-4 2
403 0 d403-1 0
403 0 d403-2 0
403 0 d403-3 1
403 0 d403-4 0
"""


def test_every_judge_against_people_with_hand_worked_kappas_and_its_cost(
    campaign: Campaign, pooled: PoolVersion, as_committed: Any
) -> None:
    with as_committed():
        human = qrels_imported(campaign=campaign, data=HUMAN_ALL)
    judge = imported_judge(campaign)
    services.labels_import(judge=judge, data=LABELS)
    perfect = services.judge_create(
        campaign=campaign,
        name="copy",
        kind=JudgeKind.IMPORTED,
        model="m",
        params={"declared": {"calls": 12, "cost": 0.6}},
    )
    services.labels_import(judge=perfect, data=HUMAN_ALL)
    chat = services.judge_create(
        campaign=campaign, name="tied", kind=JudgeKind.EMBEDDING, model="all-MiniLM-L6-v2"
    )
    # a judge that calls every document non-relevant: every run ties under it
    services.store_labels(chat, [services.Label(q, d, 0) for q, d in services.pool_pairs(pooled)])
    job = Job.objects.create(kind="judge_run", key="judge-run:x", state="done", seconds=6.0)
    JudgeRun.objects.create(
        judge=chat, pool=pooled, job=job, total=12, done=12, cost=0.3, prompt_tokens=1200
    )
    with as_committed():
        meta = meta_request(campaign=campaign, human=human, pool=pooled)
    meta = MetaEvaluation.objects.get(pk=meta.pk)
    assert meta.state == "done", meta.job.error
    result = meta.result
    assert (result["pool_documents"], result["human_graded"], result["runs"]) == (12, 12, 2)
    rows = {r["judge"]["name"]: r for r in result["judges"]}
    assert set(rows) == {"umbrela-file", "copy", "tied"}

    file = rows["umbrela-file"]
    assert file["labelled"] == 11
    assert file["labels"]["confusion"] == [[5, 0, 0], [1, 3, 0], [0, 0, 2]]
    assert file["labels"]["kappa"]["value"] == pytest.approx(64 / 75)
    # three topics: below the ten its interval is validated from (benchmarks/meta_intervals.py)
    kappa = file["labels"]["kappa"]
    assert kappa["low"] is None and kappa["high"] is None
    assert kappa["no_interval"].startswith("3 topics: its bootstrap interval is validated from 10")
    assert file["ledger"]["source"] == "not declared"
    assert file["ledger"]["cost_per_1k"] is None  # unknown, not free
    assert file["agreement_per_cost"]["undefined"] == "no cost recorded or declared"

    copy = rows["copy"]
    assert copy["labels"]["kappa"]["value"] == pytest.approx(1.0)
    assert copy["ranking"]["kendall_tau_b"]["value"] == pytest.approx(1.0)
    assert copy["ledger"]["source"] == "declared"
    assert copy["ledger"]["cost_per_1k"] == pytest.approx(0.6 / 12 * 1000)

    tied = rows["tied"]
    # every run scores 0 under it: the correlations are undefined with the reason, never 0.0
    tau = tied["ranking"]["kendall_tau_b"]
    assert tau["value"] is None and "same score" in tau["undefined"]
    assert tied["labels"]["kappa"]["value"] is not None  # the labels still agree in part
    assert (tied["ledger"]["calls"], tied["ledger"]["seconds"]) == (12.0, 6.0)
    assert tied["ledger"]["seconds_per_label"] == pytest.approx(0.5)

    # asked again for the same: the stored row, not a second one
    with as_committed():
        again = meta_request(campaign=campaign, human=human, pool=pooled)
    assert again.pk == meta.pk and MetaEvaluation.objects.count() == 1


def test_a_bad_request_names_its_field(
    campaign: Campaign, pooled: PoolVersion, as_committed: Any
) -> None:
    from judging.core.errors import InvalidInput

    with as_committed():
        human = qrels_imported(campaign=campaign, data=HUMAN_ALL)
    with pytest.raises(InvalidInput, match="measure"):
        meta_request(campaign=campaign, human=human, pool=pooled, measure="nope@x")


def test_the_api_reads_sorts_exports_and_anonymises_another_participants_judge(
    campaign: Campaign,
    pooled: PoolVersion,
    as_committed: Any,
    api_client_for: Any,
    researcher: Any,
    other_researcher: Any,
    admin_user: Any,
) -> None:
    from judging.autojudge.submissions import judge_submit

    with as_committed():
        qrels_imported(campaign=campaign, data=HUMAN_ALL)
    judge_submit(
        campaign=campaign,
        owner=researcher,
        name="ritas",
        model="secret-model",
        family="secret-family",
        saw_human_qrels=False,
        data=LABELS,
    )
    services.labels_import(judge=imported_judge(campaign), data=HUMAN_ALL)
    url = f"/api/v1/campaigns/{campaign.pk}/meta-evaluation/"
    other = api_client_for(other_researcher)
    assert other.get(url).status_code == 404  # nothing computed yet: POST to compute
    with as_committed():
        asked = other.post(url, {"measure": "P@2"}, format="json")
    assert asked.status_code == 202, asked.content
    body = other.get(url + "?sort=kappa").json()
    assert body["state"] == "done" and body["measure"] == "P@2"
    names = [r["judge"]["name"] for r in body["result"]["judges"]]
    assert names == ["umbrela-file", "anonymous judge #1"]  # kappa 1 first, then 64/75
    hidden = body["result"]["judges"][1]["judge"]
    assert (hidden["id"], hidden["model"], hidden["family"], hidden["owner"]) == (
        None,
        "",
        "",
        None,
    )
    for fmt in ("csv", "markdown", "latex"):
        exported = other.get(url + f"?format={fmt}")
        assert exported.status_code == 200, exported.content
        text = exported.content.decode()
        assert "qrels v1" in text and "anonymous judge" in text
        assert "ritas" not in text and "secret" not in text
    # the owner and the organisers see the judge by name
    own = api_client_for(researcher).get(url).json()
    assert "ritas" in {r["judge"]["name"] for r in own["result"]["judges"]}
    admin = api_client_for(admin_user).get(url + "?format=csv").content.decode()
    assert "ritas v1" in admin
    bad = other.get(url + "?sort=nope")
    assert bad.status_code == 400 and "sort" in bad.content.decode()


def test_the_page_shows_the_table_sorted_and_asks_for_a_computation(
    campaign: Campaign, pooled: PoolVersion, as_committed: Any, researcher: Any
) -> None:
    from django.test import Client

    with as_committed():
        human = qrels_imported(campaign=campaign, data=HUMAN_ALL)
    services.labels_import(judge=imported_judge(campaign), data=LABELS)
    client = Client()
    client.force_login(researcher)
    url = f"/campaigns/{campaign.pk}/judges/meta-evaluation/"
    assert 'id="meta-none"' in client.get(url).content.decode()
    with as_committed():
        asked = client.post(
            url + "compute/", {"qrels": human.number, "pool": pooled.number, "measure": "P@2"}
        )
    assert asked.status_code == 302
    page = client.get(asked["Location"]).content.decode()
    assert 'id="meta-table"' in page and "umbrela-file v1" in page
    assert "0.853" in page  # kappa 64/75
    assert "undefined: " in page  # two runs, three topics: no significant pair
    assert 'href="/api/v1/campaigns/' in page and "format=latex" in page
