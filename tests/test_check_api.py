"""``GET /api/v1/runs/<id>/check/``: the regression check of a run against a baseline run from
their stored evaluations (never computed on reading), with who may ask, the states of
evaluations not done, and bad parameters; on Robust 2003 a run passes against a weaker baseline
and fails against a stronger one."""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from judging.assessments.models import QrelsVersion
from judging.campaigns.models import Campaign, Topic
from judging.core.models import Job, JobState
from judging.evaluation.models import Evaluation
from judging.workflows.qrels import qrels_imported
from judging.workflows.runs import run_submitted
from metrics.stats.intervals import bootstrap_ci
from metrics.stats.paired import paired_test
from tests._shared_data import needs_shared_data
from tests.knobs import override_knobs

pytestmark = pytest.mark.django_db

TOPICS = [str(q) for q in range(401, 421)]  # 20 topics, one relevant document each
QRELS = "".join(f"{q} 0 rel{q} 1\n{q} 0 non{q} 0\n" for q in TOPICS)
WORSE = set(TOPICS[:10])  # where "worse" ranks the relevant document second


def _results(kind: str) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for q in TOPICS:
        if kind == "worse" and q in WORSE:
            out[q] = {f"non{q}": 2.0, f"rel{q}": 1.0}
        elif kind == "unjudged" and q in WORSE:  # unjudged documents above the relevant one
            out[q] = {f"new{q}a": 4.0, f"new{q}b": 3.0, f"rel{q}": 2.0, f"non{q}": 1.0}
        elif kind == "partial" and q in TOPICS[:2]:  # two topics not answered
            continue
        elif kind == "slightly":  # one topic worse: a drop, not significant
            out[q] = {f"non{q}": 2.0, f"rel{q}": 1.0} if q == TOPICS[0] else {f"rel{q}": 2.0}
        else:
            out[q] = {f"rel{q}": 2.0, f"non{q}": 1.0}
    return out


@pytest.fixture
def checked(campaign: Any, researcher: Any, other_researcher: Any) -> Any:
    from judging.core.jobs import compute_here
    from judging.evaluation.services import evaluations_after_qrels

    for q in TOPICS[3:]:
        Topic.objects.create(campaign=campaign, qid=q, title=f"topic {q}")
    for tag in ("base", "worse", "unjudged", "slightly", "partial"):
        run_submitted(campaign=campaign, owner=researcher, tag=tag, results=_results(tag))
    run_submitted(campaign=campaign, owner=other_researcher, tag="theirs", results=_results("base"))
    version = qrels_imported(campaign=campaign, data=QRELS.encode())
    # the honest evaluations the import recorded, here (its bias and reusability reports,
    # sent after a commit that a test's transaction never makes, are not needed)
    compute_here(evaluations_after_qrels(version))
    return campaign


def _url(campaign: Campaign, tag: str, query: str) -> str:
    return f"/api/v1/runs/{campaign.runs.get(tag=tag).pk}/check/?{query}"


def test_a_significant_drop_fails_with_delta_ci_and_p_of_the_paired_test(
    checked: Any, api_client_for: Any, researcher: Any
) -> None:
    base = checked.runs.get(tag="base")
    r = api_client_for(researcher).get(
        _url(checked, "worse", f"baseline={base.pk}&measure=nDCG@5&measure=P@10&max_drop=0.01")
    )
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["passed"] is False and body["verdict"] == "fail"
    version = QrelsVersion.objects.get(campaign=checked)
    assert (body["qrels_version"], body["qrels_hash"]) == (1, version.content_hash)
    assert body["n_queries"] == 20 and body["test"] == "t" and body["correction"] == "none"
    assert body["unanswered"] == {"run": 0, "baseline": 0} and body["notes"] == []
    rows = {m["measure"]: m for m in body["measures"]}
    # by hand: the relevant document at rank 2 instead of 1 on 10 of 20 topics
    d = [1 / math.log2(3) - 1.0] * 10 + [0.0] * 10
    ndcg = rows["nDCG@5"]
    assert ndcg["baseline"] == pytest.approx(1.0)
    assert ndcg["delta"] == pytest.approx(sum(d) / 20)
    expected = paired_test([x + 1.0 for x in d], [1.0] * 20, test="t")
    assert ndcg["p_value"] == pytest.approx(expected.p_value, rel=1e-12)
    low, high = bootstrap_ci(d, n_resamples=10_000)
    assert (ndcg["ci_low"], ndcg["ci_high"]) == pytest.approx((low, high))
    assert ndcg["verdict"] == "fail" and ndcg["judged_measure"] == "Judged@5"
    assert (ndcg["judged_run"], ndcg["judged_baseline"]) == (1.0, 1.0)
    assert ndcg["unjudged"] is False
    # P@10 counts the same relevant document either way: no drop
    assert rows["P@10"]["delta"] == 0.0 and rows["P@10"]["verdict"] == "pass"
    assert body["summary"].startswith("FAIL: nDCG@5 dropped 0.185 (p = ")


def test_a_stronger_run_against_a_weaker_baseline_passes(
    checked: Any, api_client_for: Any, researcher: Any
) -> None:
    r = api_client_for(researcher).get(
        _url(checked, "base", "baseline=worse&measure=nDCG@5&max_drop=0.01&test=randomization")
    )
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["passed"] is True and body["verdict"] == "pass" and body["summary"] == "PASS"
    assert body["baseline"] == "worse"  # named by the researcher's name of their run
    assert body["measures"][0]["delta"] > 0 and body["test"] == "randomization"


def test_a_drop_without_significance_warns_and_passes(
    checked: Any, api_client_for: Any, researcher: Any
) -> None:
    r = api_client_for(researcher).get(
        _url(checked, "slightly", "baseline=base&measure=nDCG@5&max_drop=0.01")
    )
    body = r.json()
    assert body["passed"] is True and body["verdict"] == "drop-not-significant"
    assert body["measures"][0]["delta"] < -0.01 and body["measures"][0]["p_value"] > 0.05
    assert body["summary"].startswith("PASS (warning: nDCG@5 dropped")


def test_a_relative_threshold_is_a_share_of_the_baseline_score(
    checked: Any, api_client_for: Any, researcher: Any
) -> None:
    client = api_client_for(researcher)
    # one topic of 20 worse: nDCG@5 drops 0.0185, 1.85 % of the baseline's 1.0
    url = _url(checked, "slightly", "baseline=base&measure=nDCG@5&max_drop=")
    within = client.get(url + "2%25").json()["measures"][0]
    assert within["threshold"] == pytest.approx(0.02) and within["verdict"] == "pass"
    beyond = client.get(url + "1%25").json()["measures"][0]
    assert beyond["verdict"] == "drop-not-significant"


def test_a_drop_on_unjudged_documents_is_flagged_and_still_fails(
    checked: Any, api_client_for: Any, researcher: Any
) -> None:
    r = api_client_for(researcher).get(
        _url(checked, "unjudged", "baseline=base&measure=nDCG@5&measure=AP&max_drop=0.01")
    )
    body = r.json()
    rows = {m["measure"]: m for m in body["measures"]}
    ndcg = rows["nDCG@5"]
    # 10 of 20 topics retrieve 2 unjudged documents in their top 4: Judged@5 = 0.5 there
    assert ndcg["judged_run"] == pytest.approx(0.75) and ndcg["judged_baseline"] == 1.0
    assert ndcg["unjudged"] is True and ndcg["verdict"] == "fail"
    assert "may come from unjudged documents" in ndcg["unjudged_note"]
    assert rows["AP"]["judged_measure"] == "Judged"  # no cut-off: the whole ranking
    assert "unjudged documents" in body["summary"]


def test_no_unjudged_note_where_run_and_baseline_are_judged_alike(
    checked: Any, api_client_for: Any, researcher: Any
) -> None:
    from judging.core.jobs import compute_here
    from judging.evaluation.services import evaluations_after_qrels

    # the same three documents (one unjudged) on every topic: Judged@5 = Judged = 2/3 for both,
    # below min_judged; on 10 topics the run ranks the relevant one last, so nDCG@5 and AP drop
    alike = {q: {f"rel{q}": 3.0, f"new{q}": 2.0, f"non{q}": 1.0} for q in TOPICS}
    last = {q: {f"new{q}": 3.0, f"non{q}": 2.0, f"rel{q}": 1.0} for q in WORSE}
    run_submitted(campaign=checked, owner=researcher, tag="alike", results=alike)
    run_submitted(campaign=checked, owner=researcher, tag="last", results=alike | last)
    compute_here(evaluations_after_qrels(QrelsVersion.objects.get(campaign=checked)))
    r = api_client_for(researcher).get(
        _url(checked, "last", "baseline=alike&measure=nDCG@5&measure=AP&max_drop=0.01")
    )
    assert r.status_code == 200, r.content
    body = r.json()
    for row in body["measures"]:
        assert row["verdict"] == "fail" and row["judged_run"] == pytest.approx(2 / 3)
        assert row["judged_baseline"] == pytest.approx(2 / 3)
        assert row["unjudged"] is False and row["unjudged_note"] == ""
    assert "unjudged" not in body["summary"]


def test_unanswered_topics_score_zero_and_are_counted(
    checked: Any, api_client_for: Any, researcher: Any
) -> None:
    r = api_client_for(researcher).get(
        _url(checked, "partial", "baseline=base&measure=P@10&max_drop=0.01")
    )
    body = r.json()
    assert body["n_queries"] == 20 and body["unanswered"] == {"run": 2, "baseline": 0}
    assert body["notes"] == ["run: 2 of 20 averaged queries are not in the run (scored 0)"]
    assert body["measures"][0]["delta"] == pytest.approx(-2 * 0.1 / 20)


def test_the_default_measures_are_the_campaigns_but_counts_and_judged(
    checked: Any, api_client_for: Any, researcher: Any
) -> None:
    r = api_client_for(researcher).get(_url(checked, "worse", "baseline=base&max_drop=0.01"))
    names = [m["measure"] for m in r.json()["measures"]]
    assert names == ["R@50", "nDCG@5", "RR@10", "AP", "P@10", "Bpref"]


def test_a_measure_the_campaign_does_not_evaluate_is_400_naming_its_measures(
    checked: Any, api_client_for: Any, researcher: Any
) -> None:
    r = api_client_for(researcher).get(
        _url(checked, "worse", "baseline=base&measure=nDCG@10&max_drop=0.01")
    )
    assert r.status_code == 400
    assert "R@50, nDCG@5, RR@10, AP, P@10, Bpref, Judged@10" in r.content.decode()


@pytest.mark.parametrize(
    "query",
    [
        "measure=AP&max_drop=0.01",  # no baseline
        "baseline=base&measure=AP",  # no max_drop
        "baseline=base&max_drop=-0.01",
        "baseline=base&max_drop=lots",
        "baseline=base&max_drop=150%25",
        "baseline=base&max_drop=0.01&test=wilcoxon",
        "baseline=base&max_drop=0.01&alpha=1",
        "baseline=base&max_drop=0.01&alpha=x",
        "baseline=base&max_drop=0.01&correction=magic",
        "baseline=base&max_drop=0.01&min_judged=2",
        "baseline=worse&max_drop=0.01",  # the run itself
        "baseline=ba%00se&max_drop=0.01",
        f"baseline={'x' * 300}&max_drop=0.01",
        "baseline=base&max_drop=0.01&qrels=x",
    ],
)
def test_bad_parameters_are_400(
    checked: Any, api_client_for: Any, researcher: Any, query: str
) -> None:
    r = api_client_for(researcher).get(_url(checked, "worse", query))
    assert r.status_code == 400, (query, r.content)
    assert r.json()["problems"]


def test_pending_is_202_and_missing_is_409_saying_how_to_compute_it(
    checked: Any, api_client_for: Any, researcher: Any
) -> None:
    client = api_client_for(researcher)
    base = checked.runs.get(tag="base")
    url = _url(checked, "worse", f"baseline={base.pk}&measure=AP&max_drop=0.01")
    Job.objects.filter(evaluation__run=base).update(state=JobState.PENDING)
    pending = client.get(url)
    assert pending.status_code == 202
    assert pending.json()["state"] == "pending" and pending.json()["passed"] is None
    Evaluation.objects.filter(run=base).delete()
    missing = client.get(url)
    assert missing.status_code == 409
    body = missing.json()
    assert body["state"] == "missing" and body["qrels_version"] == 1
    row = next(e for e in body["evaluations"] if e["run_id"] == base.pk)
    assert row["request"]["url"] == f"/api/v1/runs/{base.pk}/evaluations/"
    assert Evaluation.objects.filter(run=base).count() == 0  # reading never computes


def test_annotators_are_refused_and_anonymous_callers_must_authenticate(
    checked: Any, api_client_for: Any, annotator: Any
) -> None:
    url = _url(checked, "worse", "baseline=base&max_drop=0.01")
    assert api_client_for(annotator).get(url).status_code == 403
    assert api_client_for(None).get(url).status_code == 401


def test_another_researchers_run_is_not_found_as_run_or_baseline(
    checked: Any, api_client_for: Any, researcher: Any, other_researcher: Any
) -> None:
    theirs = checked.runs.get(tag="theirs")
    mine = api_client_for(researcher)
    by_id = mine.get(_url(checked, "worse", f"baseline={theirs.pk}&max_drop=0.01"))
    by_name = mine.get(_url(checked, "worse", "baseline=theirs&max_drop=0.01"))
    assert by_id.status_code == 404 and by_name.status_code == 404
    assert "theirs" not in by_id.content.decode().replace(f"{theirs.pk}", "")
    other = api_client_for(other_researcher)
    url = _url(checked, "worse", f"baseline={theirs.pk}&max_drop=0.01")
    assert other.get(url).status_code == 404


def test_an_admin_checks_any_two_runs_by_tag(
    checked: Any, api_client_for: Any, admin_user: Any
) -> None:
    r = api_client_for(admin_user).get(
        _url(checked, "theirs", "baseline=worse&measure=AP&max_drop=0.01")
    )
    assert r.status_code == 200 and r.json()["baseline"] == "worse" and r.json()["passed"]


def test_a_baseline_of_another_campaign_is_400(
    checked: Any, api_client_for: Any, admin_user: Any, researcher: Any
) -> None:
    other = Campaign.objects.create(name="Other", created_by=admin_user)
    Topic.objects.create(campaign=other, qid="401", title="t")
    results = {"401": {"rel401": 1.0}}
    elsewhere = run_submitted(campaign=other, owner=researcher, tag="x", results=results)
    r = api_client_for(researcher).get(
        _url(checked, "worse", f"baseline={elsewhere.pk}&max_drop=0.01")
    )
    assert r.status_code == 400 and "not in campaign" in r.content.decode()


# --------------------------------------------------------------------------------------------
# Robust 2003 (official MAP: pircRBa1 0.3101 > uic0301 0.2404 > humR03dc 0.1248)


@pytest.mark.data
@needs_shared_data("robust03")
def test_robust_2003_a_run_passes_against_a_weaker_baseline_and_fails_against_a_stronger(
    shared_data: Path, researcher: Any, api_client_for: Any
) -> None:
    from judging.core.jobs import compute_here
    from judging.evaluation.services import evaluations_after_qrels

    root = shared_data / "robust03"
    tags = ("uic0301", "humR03dc", "pircRBa1")
    call_command(
        "import_collection",
        "--campaign", "robust03",
        "--qrels", str(root / "qrels.txt"),
        "--runs", *(str(root / "runs" / f"input.{t}.gz") for t in tags),
        "--measures", "AP", "nDCG@10", "P@10",
        "--pooled-runs", "all",
        "--owner", researcher.username,
        stdout=io.StringIO(),
    )  # fmt: skip
    campaign = Campaign.objects.get(name="robust03")
    version = QrelsVersion.objects.get(campaign=campaign)
    with override_knobs(eval_runs_per_task=10_000):
        compute_here(evaluations_after_qrels(version))  # the honest evaluations, as recorded
    client = api_client_for(researcher)
    query = "measure=AP&measure=nDCG@10&measure=P@10&max_drop=0.01"
    weaker = client.get(_url(campaign, "uic0301", f"baseline=humR03dc&{query}"))
    assert weaker.status_code == 200, weaker.content
    assert weaker.json()["passed"] is True
    stronger = client.get(_url(campaign, "uic0301", f"baseline=pircRBa1&{query}")).json()
    assert stronger["passed"] is False and stronger["verdict"] == "fail"
    rows = {m["measure"]: m for m in stronger["measures"]}
    assert rows["AP"]["baseline"] == pytest.approx(0.3101, abs=1e-4)  # the official MAP
    assert rows["AP"]["run"] == pytest.approx(0.2404, abs=1e-4)
    assert rows["AP"]["verdict"] == "fail" and rows["AP"]["p_value"] < 0.001
    assert stronger["n_queries"] == 100


def test_reading_a_check_never_writes(checked: Any, api_client_for: Any, researcher: Any) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client = api_client_for(researcher)
    base = checked.runs.get(tag="base")
    url = _url(checked, "worse", f"baseline={base.pk}&max_drop=0.01")
    for status in (200, 202, 409):
        if status == 202:
            Job.objects.filter(evaluation__run=base).update(state=JobState.PENDING)
        if status == 409:
            Evaluation.objects.filter(run=base).delete()
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(url).status_code == status
        verbs = {q["sql"].lstrip().split(" ", 1)[0].upper() for q in ctx.captured_queries}
        assert not verbs & {"INSERT", "UPDATE", "DELETE", "REPLACE"}, status
