"""A judge audit and a hybrid estimate are read into their types (``autojudge.answers``) and
rendered for the reader: another researcher sees the same answer as the runs' owner, every run
the answer names anonymised (its scores, rankings, family gaps, estimates and board rows), and
nothing else changed."""

from __future__ import annotations

import json
from typing import Any

import pytest

from judging.autojudge.answers import AUDIT_RESULT_VERSION, read_audit_result
from judging.autojudge.models import JudgeAudit
from judging.campaigns.models import Run
from tests.autojudge.test_samples import make_judge, people_grade_everything, world  # noqa: F401

pytestmark = pytest.mark.django_db


def as_seen_by_another(answer: Any, labels: dict[str, str]) -> str:
    text = json.dumps(answer)
    for tag, label in labels.items():
        text = text.replace(json.dumps(tag), json.dumps(label))
    return text


def test_another_researcher_sees_the_audit_and_estimate_with_every_run_anonymised(
    world: dict[str, Any],  # noqa: F811
    as_committed: Any,
    admin_user: Any,
    researcher: Any,
    other_researcher: Any,
    api_client_for: Any,
) -> None:
    campaign, pool = world["campaign"], world["pool"]
    judge = make_judge(campaign, perfect=False)
    people_grade_everything(campaign, as_committed)
    admin = api_client_for(admin_user)
    sample = admin.post(
        f"/api/v1/judges/{judge.pk}/samples/",
        {"pool": pool.number, "design": "uniform", "budget": 6},
        format="json",
    ).json()["id"]
    with as_committed():
        audit = admin.post(
            f"/api/v1/judges/{judge.pk}/audits/", {"human": 1, "pool": pool.number}, format="json"
        ).json()["id"]
    assert JudgeAudit.objects.get(pk=audit).state == "done"
    runs = list(Run.objects.filter(campaign=campaign))
    assert runs and all(r.owner == researcher for r in runs)
    labels = {r.tag: f"anonymous run #{r.pk}" for r in runs}
    for url in (f"/api/v1/audits/{audit}/", f"/api/v1/samples/{sample}/"):
        mine = api_client_for(researcher).get(url).json()
        theirs = api_client_for(other_researcher).get(url)
        assert theirs.status_code == 200, url
        text = theirs.content.decode()
        assert not any(tag in text for tag in labels), url
        assert json.dumps(theirs.json()) == as_seen_by_another(mine, labels), url
    # the runs are named where they are: in the scores, rankings, estimates and board rows
    result = api_client_for(other_researcher).get(f"/api/v1/audits/{audit}/").json()["result"]
    assert set(result["scores"]["human"]["AP"]) == set(labels.values())
    assert set(result["rankings"]["AP"]["top_runs"]) <= set(labels.values())
    estimate = api_client_for(other_researcher).get(f"/api/v1/samples/{sample}/").json()
    assert {row["run"] for row in estimate["estimate"]["rows"]} == set(labels.values())


def test_an_audit_stored_before_versions_reads_as_before(
    world: dict[str, Any],  # noqa: F811
    as_committed: Any,
    admin_user: Any,
    researcher: Any,
    api_client_for: Any,
) -> None:
    campaign, pool = world["campaign"], world["pool"]
    judge = make_judge(campaign, perfect=False)
    people_grade_everything(campaign, as_committed)
    with as_committed():
        audit_id = (
            api_client_for(admin_user)
            .post(f"/api/v1/judges/{judge.pk}/audits/", {"human": 1, "pool": pool.number})
            .json()["id"]
        )
    audit = JudgeAudit.objects.get(pk=audit_id)
    assert audit.result["version"] == AUDIT_RESULT_VERSION
    url = f"/api/v1/audits/{audit_id}/"
    now = api_client_for(researcher).get(url).json()
    assert "version" not in now["result"]  # readers are not shown the storage format
    JudgeAudit.objects.filter(pk=audit_id).update(
        result={k: v for k, v in audit.result.items() if k != "version"}
    )
    assert api_client_for(researcher).get(url).json() == now
    assert read_audit_result(JudgeAudit.objects.get(pk=audit_id).result).version == 2
