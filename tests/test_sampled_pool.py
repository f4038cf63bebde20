"""A sampled campaign end to end (issue 32, point 3): a stratified pool stores every pooled
document with its stratum and inclusion probability and queues only the drawn ones; the
published qrels keep the three states (judged, -1 for pooled but not sampled, absent for not
pooled) and export as ``sample_eval.pl``'s five columns; the leaderboard shows the inferred
measures with intervals, says the qrels are sampled and how, and its xinfAP equals the metrics
library's on the exported file. A re-pool keeps what was judged as a certainty stratum."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client, TestCase

from judging.assessments.models import JudgingSlot, QrelsEntry
from judging.campaigns.models import Campaign, Document
from judging.evaluation.selectors import leaderboard
from judging.pools.models import PoolDocument, PoolVersion
from judging.workflows.pools import pool_requested
from judging.workflows.qrels import qrels_published
from judging.workflows.runs import run_submitted
from metrics import read_run
from metrics.evaluation.sampled import evaluate_sampled
from metrics.io.sampled import DocState, read_sampled_qrels
from metrics.measures.sampled_registry import SAMPLED_MEASURES
from tests.test_judging_api import judge, lease

pytestmark = pytest.mark.django_db

STRATA = [[3, 1.0], [20, 0.25]]
TOPICS = ("401", "402", "403")


def _relevant(docid: str) -> int:
    return 2 if docid.endswith(("-1", "-4")) else 1 if docid.endswith("7") else 0


def _sampled_campaign(campaign: Campaign, owner: Any) -> PoolVersion:
    """Three runs over 20 documents per topic (shifted orders), texts for all, and a built
    stratified pool: ranks 1-3 at 100%, 4-20 at 25%."""
    for n, tag in enumerate(("runA", "runB", "runC")):
        results = {
            q: {f"d{q}-{(i + 3 * n) % 24 + 1}": 100.0 - i for i in range(20)} for q in TOPICS
        }
        run_submitted(campaign=campaign, owner=owner, tag=tag, results=results, pooled=True)
    Document.objects.bulk_create(
        Document(campaign=campaign, docid=f"d{q}-{i}", title="t", text=f"text {q} {i}")
        for q in TOPICS
        for i in range(1, 25)
    )
    campaign.pool_depth = 20
    campaign.measures = ["P@10", "AP", "nDCG@10"]
    campaign.save()
    with TestCase.captureOnCommitCallbacks(execute=True):
        version, _ = pool_requested(
            campaign=campaign, strategy="stratified", params={"strata": STRATA, "seed": 7}
        )
    version.refresh_from_db()
    assert version.state == "built", version.error
    return version


def _judge_everything(client: Any, campaign: Campaign) -> list[str]:
    seen: list[str] = []
    for _ in range(200):
        r = lease(client, campaign)
        if r.status_code == 204:
            return seen
        docid = r.json()["document"]["docid"]
        seen.append(docid)
        assert judge(client, r.json()["id"], _relevant(docid)).status_code == 201
    raise AssertionError("the queue never ran dry")


def test_a_sampled_campaign_from_pool_to_leaderboard(
    campaign, researcher, annotator, admin_user, api_client_for, tmp_path
) -> None:
    pool = _sampled_campaign(campaign, researcher)
    docs = PoolDocument.objects.filter(version=pool)
    drawn = docs.filter(sampled=True)
    not_drawn = docs.filter(sampled=False)
    assert drawn.count() and not_drawn.count()
    assert set(docs.values_list("stratum", flat=True)) == {"1", "2"}
    assert not not_drawn.filter(to_judge=True).exists()  # only the drawn are queued
    assert set(docs.filter(stratum="1").values_list("inclusion", flat=True)) == {1.0}
    for qid in TOPICS:  # per topic, m_h / N_h of its stratum 2, drawn or not
        rows = docs.filter(stratum="2", topic__qid=qid)
        n, m = rows.count(), rows.filter(sampled=True).count()
        assert m == max(1, round(0.25 * n))
        assert set(rows.values_list("inclusion", flat=True)) == {m / n}
    queued = JudgingSlot.objects.filter(campaign=campaign).values("topic", "docid").distinct()
    assert queued.count() == drawn.count()

    judged = _judge_everything(api_client_for(annotator), campaign)
    assert sorted(judged) == sorted(drawn.values_list("docid", flat=True))

    with TestCase.captureOnCommitCallbacks(execute=True):
        version, created = qrels_published(campaign=campaign, created_by=admin_user)
    assert created and version.design["strategy"] == "stratified"
    entries = QrelsEntry.objects.filter(version=version)
    assert entries.count() == docs.count()  # every pooled document, no other
    assert entries.filter(grade=-1).count() == not_drawn.count()
    assert version.design["awaiting"] == 0

    # the export is sample_eval.pl's five columns, and reads back with the three states
    client = api_client_for(admin_user)
    r = client.get(f"/api/v1/qrels/{version.pk}/export/")
    assert r.status_code == 200, r.content
    text = b"".join(r.streaming_content) if r.streaming else r.content
    (tmp_path / "q").write_bytes(text)
    sample = read_sampled_qrels(tmp_path / "q")
    first = not_drawn.values_list("topic__qid", "docid").first()
    assert first is not None
    qid, docid = first
    assert sample.state(qid, docid) is DocState.UNSAMPLED
    assert sample.state("401", "d401-999") is DocState.NOT_POOLED

    board = leaderboard(campaign=campaign, version=version, user=admin_user)
    assert board["measures"][:6] == ["xinfAP", "statAP", "ebAP", "infNDCG", "iP@10", "inum_rel"]
    stat = next(r for r in board["runs"] if r["run"] == "runA")["measures"]["statAP"]
    assert stat["ci_low"] is None and "shown without one" in board["sampled"]["sentence"]
    eb = next(r for r in board["runs"] if r["run"] == "runA")["measures"]["ebAP"]
    assert eb["ci_low"] <= eb["value"] <= eb["ci_high"]
    assert "ebAP's interval" in board["sampled"]["sentence"]
    assert "Sampled qrels (pool v1, stratified)" in board["sampled"]["sentence"]
    assert "lower bounds" in board["sampled"]["sentence"]
    row = next(r for r in board["runs"] if r["run"] == "runA")
    cell = row["measures"]["xinfAP"]
    assert cell["ci_low"] <= cell["value"] <= cell["ci_high"]
    # the same figure as the metrics library on the exported file
    lines = "".join(
        f"{q} Q0 d{q}-{i % 24 + 1} {i + 1} {100.0 - i} runA\n" for q in TOPICS for i in range(20)
    )
    mine = evaluate_sampled(sample, read_run(lines.encode()), [SAMPLED_MEASURES["xinfAP"]])
    assert cell["value"] == pytest.approx(mine.aggregates["xinfAP"].value)

    web = Client()
    web.force_login(researcher)
    page = web.get(f"/campaigns/{campaign.pk}/leaderboard/")
    assert page.status_code == 200
    assert "Sampled qrels (pool v1, stratified)" in page.content.decode()
    # a run outside the pool is marked on the inferred measures too
    from judging.campaigns.models import Run

    novel = {q: {f"d{q}-{i}": 10.0 - i for i in range(1, 8)} for q in TOPICS}
    with TestCase.captureOnCommitCallbacks(execute=True):
        run_submitted(campaign=campaign, owner=researcher, tag="late", results=novel, pooled=False)
    page = web.get(f"/campaigns/{campaign.pk}/leaderboard/?qrels={version.number}")
    html = page.content.decode()
    late = html[html.index(">late<") :].split("</tr>")[0]
    assert Run.objects.get(tag="late").pooled is False
    assert late.count("outside-pool") >= 6, late  # xinfAP, statAP, ebAP, infNDCG, iP@10, inum_rel
    # the version picker counts the judged documents, not the rows (-1 included)
    assert f"sampled: {drawn.count()} of {docs.count()} pooled judged" in page.content.decode()


def test_a_re_pool_keeps_what_was_judged_as_a_certainty_stratum(
    campaign, researcher, annotator, api_client_for
) -> None:
    pool = _sampled_campaign(campaign, researcher)
    judged = set(_judge_everything(api_client_for(annotator), campaign))
    with TestCase.captureOnCommitCallbacks(execute=True):
        again, _ = pool_requested(
            campaign=campaign, strategy="stratified", params={"strata": STRATA, "seed": 8}
        )
    again.refresh_from_db()
    docs = PoolDocument.objects.filter(version=again)
    certain = docs.filter(stratum="0")
    assert set(certain.values_list("docid", flat=True)) == judged
    assert set(certain.values_list("inclusion", flat=True)) == {1.0}
    assert not certain.filter(to_judge=True).exists()
    # the new draw is among the documents not judged yet
    new = docs.filter(sampled=True).exclude(stratum="0")
    assert not set(new.values_list("docid", flat=True)) & judged
    assert pool.number == 1 and again.number == 2


def test_the_bias_analyses_say_they_do_not_apply_to_a_sampled_version(
    campaign, researcher, annotator, admin_user, api_client_for
) -> None:
    from judging.core.errors import InvalidInput
    from judging.evaluation.bias import bias_report_request
    from judging.evaluation.models import BiasReport
    from judging.evaluation.reusability import reusability_request

    _sampled_campaign(campaign, researcher)
    _judge_everything(api_client_for(annotator), campaign)
    with TestCase.captureOnCommitCallbacks(execute=True):
        version, _ = qrels_published(campaign=campaign, created_by=admin_user)
    assert not BiasReport.objects.filter(qrels=version).exists()  # none computed on publish
    for ask in (
        lambda: bias_report_request(campaign=campaign, qrels=version),
        lambda: reusability_request(version=version),
    ):
        with pytest.raises(InvalidInput, match=r"sampled .* do not apply"):
            ask()


def test_sampled_qrels_import_as_a_sampled_version_and_export_the_same_bytes(
    campaign, admin_user, api_client_for
) -> None:
    from judging.workflows.qrels import qrels_imported

    text = "401 0 a 1 2\n401 0 b 2 -1\n401 0 c 2 0\n402 0 d 1 1\n"
    version = qrels_imported(campaign=campaign, data=text.encode())
    assert version.design["strategy"] == "imported" and version.design["pool"] is None
    assert version.design["strata"]["2"] == {"pooled": 2, "judged": 1, "rate": 0.5}
    r = api_client_for(admin_user).get(f"/api/v1/qrels/{version.pk}/export/")
    got = b"".join(r.streaming_content) if r.streaming else r.content
    assert got.decode() == text
    body = api_client_for(admin_user).get(f"/api/v1/qrels/{version.pk}/").json()
    assert body["sampled"]["strata"]["1"] == {"pooled": 2, "judged": 2, "rate": 1.0}
    board = leaderboard(campaign=campaign, version=version, user=admin_user)
    assert board["sampled"]["sentence"].startswith("Sampled qrels (imported from a file)")
    # a grade off the campaign's scale names the row; nothing stored
    from judging.core.errors import InvalidInput

    with pytest.raises(InvalidInput, match="not on the campaign's scale"):
        qrels_imported(campaign=campaign, data=b"401 0 a 1 7\n")


def test_trec_eval_minus_one_qrels_import_as_one_uniform_sample(
    campaign, admin_user, api_client_for, tmp_path
) -> None:
    """A four-column file with -1 (trec_eval's pooled, not sampled) is a sampled version: the
    -1 rows never sit in a complete version, where AP would read them as non-relevant."""
    from judging.workflows.qrels import qrels_imported

    text = "401 0 a 2\n401 0 b -1\n401 0 c 0\n402 0 d 1\n402 0 e -1\n"
    version = qrels_imported(campaign=campaign, data=text.encode())
    assert version.design["strategy"] == "imported (trec_eval -1)"
    assert version.design["strata"] == {"1": {"pooled": 5, "judged": 3, "rate": 0.6}}
    assert set(QrelsEntry.objects.filter(version=version).values_list("stratum", flat=True)) == {
        "1"
    }
    client = api_client_for(admin_user)

    def export(fmt: str | None) -> Any:
        r = client.get(f"/api/v1/qrels/{version.pk}/export/" + (f"?format={fmt}" if fmt else ""))
        body = b"".join(r.streaming_content) if r.streaming else r.content
        return r, body.decode()

    r, got = export("trec")  # the same bytes back in trec_eval's form
    assert r.status_code == 200 and got == text
    assert "-trec.txt" not in r["Content-Disposition"]
    r, got = export(None)  # the default: five columns, the stratum "1"
    assert got.splitlines()[1] == "401 0 b 1 -1"
    r, got = export("prels")  # each topic's judged share as pi, -999 where not sampled
    assert r.status_code == 200 and "-prels.txt" in r["Content-Disposition"]
    assert got.splitlines() == [
        "401 a 2 1 0.6666666666666666",
        "401 b -999 1 0.6666666666666666",
        "401 c 0 1 0.6666666666666666",
        "402 d 1 1 0.5",
        "402 e -999 1 0.5",
    ]
    from django.core.management import call_command

    out = tmp_path / "q.prels"
    call_command("export_qrels", campaign=campaign.name, format="prels", output=str(out))
    assert out.read_text() == got
    r, _ = export("excel")
    assert r.status_code == 400 and "unknown qrels export format 'excel'" in r.json()["detail"]
    board = leaderboard(campaign=campaign, version=version, user=admin_user)
    assert "trec_eval's -1 form, one uniform sample" in board["sampled"]["sentence"]
    assert board["measures"][0] == "xinfAP"
    # a file without -1 stays a complete version, exported only as TREC qrels
    complete = qrels_imported(campaign=campaign, data=b"401 0 a 2\n401 0 c 0\n")
    assert complete.design is None or complete.design == {}
    r = client.get(f"/api/v1/qrels/{complete.pk}/export/?format=prels")
    assert r.status_code == 400 and "for a complete version" in r.json()["detail"]


def test_a_version_of_several_strata_refuses_trec_eval_s_one_sample_form(
    campaign, admin_user, api_client_for
) -> None:
    from judging.workflows.qrels import qrels_imported

    version = qrels_imported(campaign=campaign, data=b"401 0 a 1 2\n401 0 b 2 -1\n401 0 c 2 0\n")
    r = api_client_for(admin_user).get(f"/api/v1/qrels/{version.pk}/export/?format=trec")
    assert r.status_code == 400
    assert "2 strata" in r.json()["detail"] and "five columns" in r.json()["detail"]


def test_a_sampled_board_exports_and_compares_with_its_inferred_measures(
    campaign, researcher, annotator, admin_user, api_client_for
) -> None:
    _sampled_campaign(campaign, researcher)
    _judge_everything(api_client_for(annotator), campaign)
    with TestCase.captureOnCommitCallbacks(execute=True):
        qrels_published(campaign=campaign, created_by=admin_user)
    api = api_client_for(researcher)
    url = f"/api/v1/campaigns/{campaign.pk}/leaderboard/export/"
    for fmt in ("csv", "latex", "markdown"):
        r = api.get(f"{url}?format={fmt}&baseline=runA")
        assert r.status_code == 200, (fmt, r.content[:300])
        text = (b"".join(r.streaming_content) if r.streaming else r.content).decode()
        assert "xinfAP" in text and "statAP" in text, fmt
    r = api.get(f"/api/v1/campaigns/{campaign.pk}/leaderboard/?sort=xinfAP&order=asc")
    assert r.status_code == 200 and r.json()["sorted_by"] == "xinfAP"
    r = api.get(f"/api/v1/campaigns/{campaign.pk}/per-query/?run=runA&measure=xinfAP")
    assert r.status_code == 200, r.content[:300]
    # the run page, the bias page and the significance page of a sampled version answer
    from judging.campaigns.models import Run

    web = Client()
    web.force_login(researcher)
    run = Run.objects.get(campaign=campaign, tag="runA")
    for path in (
        f"/runs/{run.pk}/",
        f"/campaigns/{campaign.pk}/bias/",
        f"/campaigns/{campaign.pk}/compare/?measure=xinfAP",
    ):
        page = web.get(path)
        assert page.status_code == 200, (path, page.content[:300])
    bias = web.get(f"/campaigns/{campaign.pk}/bias/").content.decode()
    assert "do not apply" in bias
