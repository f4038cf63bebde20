"""Stored evaluations: computed when runs and qrels arrive, once, named by qrels version."""

from __future__ import annotations

from typing import Any

import pytest
import pytrec_eval
from django.test import Client

from judging.campaigns.models import Topic
from judging.evaluation.models import Evaluation
from judging.evaluation.services import evaluate_runs
from judging.workflows.qrels import qrels_imported
from judging.workflows.runs import run_submitted

pytestmark = pytest.mark.django_db

RUNS = {
    "alpha": {
        "401": {"d1": 3.0, "d2": 2.0, "d3": 1.0},
        "402": {"d5": 2.0, "d4": 1.0},
        "403": {"d9": 1.0},
    },
    "beta": {
        "401": {"d3": 3.0, "d9": 2.0, "d1": 1.0},
        "402": {"d4": 2.0, "d8": 1.0},
        "403": {"d7": 2.0, "d9": 1.0},
    },
}
QRELS_V1 = "401 0 d1 1\n401 0 d2 0\n401 0 d3 2\n402 0 d4 1\n402 0 d5 0\n403 0 d9 0\n"
QRELS_V2 = QRELS_V1 + "403 0 d7 1\n402 0 d8 1\n"


def qrels_of(text: str) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for line in text.splitlines():
        q, _, d, g = line.split()
        out.setdefault(q, {})[d] = int(g)
    return out


@pytest.fixture
def scored(campaign: Any, researcher: Any, other_researcher: Any, as_committed: Any) -> Any:
    Topic.objects.filter(campaign=campaign, qid__in=["401", "402"]).update(tags=["easy"])
    run_submitted(campaign=campaign, owner=researcher, tag="alpha", results=RUNS["alpha"])
    run_submitted(campaign=campaign, owner=other_researcher, tag="beta", results=RUNS["beta"])
    with as_committed():  # the import evaluates both runs after commit
        qrels_imported(campaign=campaign, data=QRELS_V1.encode())
    return campaign


def test_importing_qrels_evaluates_every_run_against_that_version(scored: Any) -> None:
    rows = Evaluation.objects.filter(run__campaign=scored)
    assert sorted(rows.values_list("run__tag", "qrels__number", "job__state")) == [
        ("alpha", 1, "done"),
        ("beta", 1, "done"),
    ]


def test_honest_ap_excludes_zero_relevant_queries_and_says_so(scored: Any) -> None:
    ev = Evaluation.objects.get(run__tag="alpha")
    # 403 has judgments but no relevant document: excluded, not averaged as 0.
    assert ev.result["excluded_summary"] == ["1 of 3 queries excluded: no relevant documents"]
    expected = pytrec_eval.RelevanceEvaluator(qrels_of(QRELS_V1), {"map"}).evaluate(RUNS["alpha"])
    ap = (expected["401"]["map"] + expected["402"]["map"]) / 2
    assert ev.result["measures"]["AP"]["value"] == pytest.approx(ap, abs=1e-12)
    assert ev.result["measures"]["AP"]["ci_low"] <= ap <= ev.result["measures"]["AP"]["ci_high"]
    assert ev.result["measures"]["R@50"]["ceiling"]["value"] == 1.0


def test_trec_eval_mode_matches_pytrec_eval_on_request(
    scored: Any, api_client_for: Any, researcher: Any, as_committed: Any
) -> None:
    run = scored.runs.get(tag="alpha")
    client = api_client_for(researcher)
    url = f"/api/v1/runs/{run.pk}/evaluations/"
    with as_committed():  # the evaluation task runs after the request's commit
        asked = client.post(url, {"qrels": 1, "mode": "trec_eval"}, format="json")
    assert asked.status_code == 202
    body = client.get(f"{url}?qrels=1&mode=trec_eval").json()
    (trec,) = [e for e in body["evaluations"] if e["mode"] == "trec_eval"]
    assert trec["qrels_version"] == 1
    expected = pytrec_eval.RelevanceEvaluator(qrels_of(QRELS_V1), {"map", "P.10"}).evaluate(
        RUNS["alpha"]
    )
    for qid, values in expected.items():
        assert trec["result"]["per_query"]["AP"][qid] == pytest.approx(values["map"], abs=1e-12)
        assert trec["result"]["per_query"]["P@10"][qid] == pytest.approx(values["P_10"])


def test_a_run_arriving_after_the_qrels_is_evaluated_at_once(
    scored: Any, researcher: Any, as_committed: Any
) -> None:
    with as_committed():
        run_submitted(
            campaign=scored,
            owner=researcher,
            tag="gamma",
            results={"401": {"d2": 1.0}, "402": {"d4": 1.0}},
        )
    assert Evaluation.objects.get(run__tag="gamma").state == "done"


def test_evaluations_are_never_recomputed_needlessly(scored: Any) -> None:
    ev = Evaluation.objects.get(run__tag="alpha")
    again = evaluate_runs(version=ev.qrels, runs=[ev.run])
    assert again[0].pk == ev.pk and again[0].computed_at == ev.computed_at
    assert Evaluation.objects.filter(run__tag="alpha").count() == 1


def test_a_new_qrels_version_adds_evaluations_and_keeps_the_old_ones(
    scored: Any, as_committed: Any
) -> None:
    with as_committed():
        qrels_imported(campaign=scored, data=QRELS_V2.encode())
    alpha = {e.qrels.number: e for e in Evaluation.objects.filter(run__tag="alpha")}
    assert set(alpha) == {1, 2}
    # The known relevant set grew (d8, d7), so alpha's recall drops: 401 1, 402 1/2, 403 0.
    assert alpha[1].result["measures"]["R@50"]["value"] == 1.0
    assert alpha[2].result["measures"]["R@50"]["value"] == pytest.approx(0.5)
    assert alpha[2].result["excluded_summary"] == []


def test_the_leaderboard_names_its_qrels_version_and_anonymises_others_runs(
    scored: Any, api_client_for: Any, researcher: Any, admin_user: Any
) -> None:
    board = (
        api_client_for(researcher).get(f"/api/v1/campaigns/{scored.pk}/leaderboard/?qrels=1").json()
    )
    assert board["qrels_version"] == 1 and board["mode"] == "honest"
    labels = {r["run"] for r in board["runs"]}
    assert "alpha" in labels and "beta" not in labels
    assert any(label.startswith("anonymous run #") for label in labels)
    admin_board = (
        api_client_for(admin_user).get(f"/api/v1/campaigns/{scored.pk}/leaderboard/").json()
    )
    assert {r["run"] for r in admin_board["runs"]} == {"alpha", "beta"}
    first = admin_board["runs"][0]["measures"]
    assert set(first) == set(scored.measures)
    assert "ceiling" in first["R@50"] and "judged" in first["nDCG@5"]
    assert admin_board["runs"][0]["slices"]["easy"]["AP"]["n_queries"] == 2


def test_the_leaderboard_downloads_as_csv(
    scored: Any, api_client_for: Any, admin_user: Any
) -> None:
    r = api_client_for(admin_user).get(
        f"/api/v1/campaigns/{scored.pk}/leaderboard/?qrels=1&format=csv"
    )
    lines = r.getvalue().decode().splitlines()
    assert r["Content-Type"].startswith("text/csv")
    assert lines[0].startswith(  # text quoted, numbers bare (tests/test_csv_injection.py)
        '"qrels_version","qrels_kind","qrels_hash","mode","run","pooled","n_queries","R@50",'
        '"R@50 ci_low"'
    )
    hash_ = scored.qrels_versions.get().content_hash
    assert len(lines) == 3
    assert all(line.startswith(f'1,"human","{hash_}","honest",') for line in lines[1:])


def test_the_significance_table_is_holm_corrected(
    scored: Any, api_client_for: Any, admin_user: Any
) -> None:
    client = api_client_for(admin_user)
    body = client.get(f"/api/v1/campaigns/{scored.pk}/significance/?measure=AP&test=t").json()
    assert body["correction"] == "holm" and body["measure"] == "AP"
    (row,) = body["comparisons"]
    assert {row["run_a"], row["run_b"]} == {"alpha", "beta"}
    assert row["p_holm"] >= row["p_value"]
    bad = client.get(f"/api/v1/campaigns/{scored.pk}/significance/?test=magic")
    assert bad.status_code == 400


def test_annotators_cannot_read_results(scored: Any, api_client_for: Any, annotator: Any) -> None:
    client = api_client_for(annotator)
    assert client.get(f"/api/v1/campaigns/{scored.pk}/leaderboard/").status_code == 403
    run = scored.runs.get(tag="alpha")
    assert client.get(f"/api/v1/runs/{run.pk}/evaluations/").status_code == 403


def test_a_researcher_cannot_read_another_researchers_evaluations(
    scored: Any, api_client_for: Any, researcher: Any
) -> None:
    beta = scored.runs.get(tag="beta")
    assert api_client_for(researcher).get(f"/api/v1/runs/{beta.pk}/evaluations/").status_code == 404


def test_the_result_pages_render_for_researchers(scored: Any, researcher: Any) -> None:
    client = Client()
    client.force_login(researcher)
    alpha = scored.runs.get(tag="alpha")
    board = client.get(f"/campaigns/{scored.pk}/leaderboard/").content.decode()
    assert "qrels version 1" in board and "1 of 3 queries excluded" in board
    page = client.get(f"/runs/{alpha.pk}/").content.decode()
    assert "<svg" in page and "achievable ceiling" in page and 'id="per-query"' in page
    svg = client.get(f"/runs/{alpha.pk}/recall.svg?download=1")
    assert svg["Content-Type"] == "image/svg+xml" and "attachment" in svg["Content-Disposition"]
    assert client.get(f"/campaigns/{scored.pk}/compare/?measure=AP").status_code == 200
    beta = scored.runs.get(tag="beta")
    assert client.get(f"/runs/{beta.pk}/").status_code == 404


def test_an_unknown_or_malformed_qrels_version_is_404_not_an_error(
    scored: Any, api_client_for: Any, researcher: Any
) -> None:
    api = api_client_for(researcher)
    client = Client()
    client.force_login(researcher)
    # the API: a version the campaign lacks is 404, a parameter that is not a number is 400
    assert api.get(f"/api/v1/campaigns/{scored.pk}/leaderboard/?qrels=7").status_code == 404
    assert api.get(f"/api/v1/campaigns/{scored.pk}/leaderboard/?qrels=abc").status_code == 400
    for number in ("7", "abc"):
        assert client.get(f"/campaigns/{scored.pk}/leaderboard/?qrels={number}").status_code == 404
        assert client.get(f"/campaigns/{scored.pk}/bias/?qrels={number}").status_code == 404


def test_significance_of_runs_with_no_scored_topic_in_common_says_so(
    scored: Any, api_client_for: Any, admin_user: Any
) -> None:
    """Paired tests pair topics: runs with none in common get no test and a note, not a 500."""
    from judging.evaluation.models import Evaluation

    beta = Evaluation.objects.get(run__tag="beta", mode="honest")
    result = dict(beta.result)
    result["per_query"] = {m: {"999": 0.5} for m in result["per_query"]}
    Evaluation.objects.filter(pk=beta.pk).update(result=result)
    r = api_client_for(admin_user).get(f"/api/v1/campaigns/{scored.pk}/significance/?measure=AP")
    assert r.status_code == 200
    body = r.json()
    assert body["comparisons"] == [] and body["n_queries"] == 0
    assert "no scored topic in common" in body["note"]


@pytest.mark.parametrize(("precision", "rr"), [("double", 1.0), ("single", 0.5)])
def test_a_campaign_in_single_precision_ranks_scores_as_trec_eval_9_did(
    admin_user: Any, researcher: Any, precision: str, rr: float
) -> None:
    """1.00000001 and 1.0 differ as doubles (trec_eval 10) and tie as C floats (trec_eval 9,
    pytrec_eval), where the tie goes to the docid in descending order: "b" first."""
    from judging.campaigns.services import campaign_create

    campaign = campaign_create(
        name=f"scores as {precision}", score_precision=precision, created_by=admin_user
    )
    Topic.objects.create(campaign=campaign, qid="1", title="one")
    run = run_submitted(
        campaign=campaign, owner=researcher, tag="close", results={"1": {"a": 1.00000001, "b": 1.0}}
    )
    version = qrels_imported(campaign=campaign, data=b"1 0 a 1\n1 0 b 0\n")
    (evaluation,) = evaluate_runs(version=version, runs=[run], mode="trec_eval", measures=["RR"])
    assert evaluation.result["measures"]["RR"]["value"] == rr


def test_the_interval_does_not_depend_on_the_order_the_database_returns_the_qrels(
    admin_user: Any, researcher: Any
) -> None:
    """The bootstrap resamples the topics in the order it is given them; the stored qrels are
    read in one order (by qid) whatever order their rows come back in, so the same qrels give
    the same interval on SQLite and PostgreSQL (they gave the demo's 0.131 and 0.132)."""
    from judging.campaigns.services import campaign_create
    from judging.evaluation.services import qrels_dict
    from metrics import Evaluator

    campaign = campaign_create(name="order", created_by=admin_user)
    qids = ["1", "2", "3", "4", "5"]
    for qid in qids:
        Topic.objects.create(campaign=campaign, qid=qid, title=qid)
    results = {q: {f"d{q}{i}": 10.0 - i for i in range(10)} for q in qids}
    run = run_submitted(campaign=campaign, owner=researcher, tag="r", results=results)
    lines = [
        f"{q} 0 d{q}{i} {int(i < int(q))}" for q in ("4", "1", "5", "3", "2") for i in range(5)
    ]
    version = qrels_imported(campaign=campaign, data=("\n".join(lines) + "\n").encode())
    assert list(qrels_dict(version)) == qids
    (stored,) = evaluate_runs(version=version, runs=[run], mode="honest", measures=["nDCG@10"])
    got = stored.result["measures"]["nDCG@10"]
    in_qid_order = {q: {f"d{q}{i}": int(i < int(q)) for i in range(5)} for q in qids}
    want = Evaluator(in_qid_order, ["nDCG@10"]).evaluate(results).to_dict()["measures"]["nDCG@10"]
    assert (got["ci_low"], got["ci_high"]) == (want["ci_low"], want["ci_high"])


def test_a_stored_evaluation_is_typed_and_versioned_and_an_old_one_still_reads(
    scored: Any, api_client_for: Any, researcher: Any, other_researcher: Any, admin_user: Any
) -> None:
    """The stored result is an ``evaluation.results.EvaluationResult`` of a version; read back
    it is the stored JSON again, key for key, in both modes. One stored before versions (no
    ``version``) reads and answers as before; its run is named by the reader's rights (a
    ``RunLabel``), not by a key the selector knows."""
    from judging.evaluation.results import EVALUATION_RESULT_VERSION, read_evaluation_result
    from metrics.results import RunLabel, render

    evaluate_runs(
        version=scored.qrels_versions.get(number=1), runs=scored.runs.all(), mode="trec_eval"
    )
    rows = Evaluation.objects.filter(run__campaign=scored)
    assert {ev.mode for ev in rows} == {"honest", "trec_eval"}
    for ev in rows:
        assert ev.result["version"] == ev.summary["version"] == EVALUATION_RESULT_VERSION
        typed = read_evaluation_result(ev.result)
        assert typed.run == RunLabel(ev.run.tag)
        assert render(typed, stored=True) == ev.result
    honest = rows.get(run__tag="beta", mode="honest")
    url = f"/api/v1/runs/{honest.run.pk}/evaluations/?qrels=1"
    before = api_client_for(other_researcher).get(url).json()
    old = {k: v for k, v in honest.result.items() if k != "version"}  # stored before versions
    Evaluation.objects.filter(pk=honest.pk).update(
        result=old, summary={k: v for k, v in honest.summary.items() if k != "version"}
    )
    assert api_client_for(other_researcher).get(url).json() == before
    assert before["evaluations"][0]["result"]["run"] == "beta"  # its owner sees its name
    assert "version" not in before["evaluations"][0]["result"]
    assert api_client_for(admin_user).get(url).json()["evaluations"][0]["result"]["run"] == "beta"
    board = api_client_for(researcher).get(f"/api/v1/campaigns/{scored.pk}/leaderboard/?qrels=1")
    row = next(r for r in board.json()["runs"] if r["run_id"] is None)  # beta, anonymised
    assert row["measures"]["AP"]["value"] == honest.result["measures"]["AP"]["value"]
