"""Two runs compared topic by topic, and one topic's rankings side by side, on a hand-built
campaign whose per-topic values and rankings are worked out below (P@2, qrels v1).

Qrels: 401 d1=2 d2=0 d3=1 · 402 d4=1 d5=0 d10=1 · 403 d6=1 d7=1 · 404 d8=1 · 405 d9=0 (no
relevant document: excluded in honest mode).

=====  ===============  =====  ==============  =====  =====
topic  A (rita-alpha)   P@2    B (oscar-beta)  P@2    A - B
=====  ===============  =====  ==============  =====  =====
401    d1 d2 d3         0.5    d3 zz           0.5    0
402    d4 x1            0.5    d5 x2           0.0    +0.5
403    d6 d7            1.0    d6 d2           0.5    +0.5
404    (nothing)        0.0    d8 q8           0.5    -0.5
=====  ===============  =====  ==============  =====  =====

A wins 2 (402, 403), ties 1 (401), loses 1 (404); mean A 0.5, B 0.375.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any, cast

import pytest
import pytrec_eval
import scipy.stats
from django.core.management import call_command
from django.test import Client

from judging.assessments.models import QrelsVersion
from judging.campaigns.models import Campaign, Document, Run, Topic
from judging.core.jobs import compute_here
from judging.evaluation.models import Evaluation
from judging.evaluation.services import evaluations_after_qrels
from judging.evaluation.versus import run_versus, topic_versus
from judging.workflows.qrels import qrels_imported
from judging.workflows.runs import run_submitted
from metrics import read_qrels, read_run
from metrics.stats.paired import TestName, paired_test
from tests._shared_data import needs_shared_data
from tests.knobs import override_knobs

pytestmark = pytest.mark.django_db

A_TAG, B_TAG, C_TAG = "rita-alpha", "oscar-secret-beta", "rita-gamma"
B_ONLY = ("zz", "x2", "q8")
LONG_DOCID = (
    "u9-" + "long" * 40
)  # unjudged, retrieved by rita-gamma only  # documents only the other researcher's run retrieved
RUNS: dict[str, dict[str, dict[str, float]]] = {
    A_TAG: {
        "401": {"d1": 3.0, "d2": 2.0, "d3": 1.0},
        "402": {"d4": 2.0, "x1": 1.0},
        "403": {"d6": 2.0, "d7": 1.0},
        "405": {"d9": 1.0},
    },
    B_TAG: {
        "401": {"d3": 2.0, "zz": 1.0},
        "402": {"d5": 2.0, "x2": 1.0},
        "403": {"d6": 2.0, "d2": 1.0},
        "404": {"d8": 2.0, "q8": 1.0},
    },
    C_TAG: {"401": {"d2": 3.0, "d1": 2.0, LONG_DOCID: 1.0}},
}
QRELS = (
    "401 0 d1 2\n401 0 d2 0\n401 0 d3 1\n402 0 d4 1\n402 0 d5 0\n402 0 d10 1\n"
    "403 0 d6 1\n403 0 d7 1\n404 0 d8 1\n405 0 d9 0\n"
)
A_VALUES = {"401": 0.5, "402": 0.5, "403": 1.0, "404": 0.0}
B_VALUES = {"401": 0.5, "402": 0.0, "403": 0.5, "404": 0.5}


@pytest.fixture
def world(
    campaign: Any, researcher: Any, other_researcher: Any, as_committed: Any
) -> dict[str, Any]:
    campaign.measures = ["P@2", "AP"]
    campaign.save()
    Topic.objects.filter(campaign=campaign, qid="401").update(
        title="oil spills", description="Find oil spills.", narrative="Spills at sea count."
    )
    for qid in ("404", "405"):
        Topic.objects.create(campaign=campaign, qid=qid, title=f"topic {qid}")
    Document.objects.create(campaign=campaign, docid="d1", title="North Sea oil spill")
    runs = {
        A_TAG: run_submitted(campaign=campaign, owner=researcher, tag=A_TAG, results=RUNS[A_TAG]),
        B_TAG: run_submitted(
            campaign=campaign, owner=other_researcher, tag=B_TAG, results=RUNS[B_TAG]
        ),
        C_TAG: run_submitted(campaign=campaign, owner=researcher, tag=C_TAG, results=RUNS[C_TAG]),
    }
    with as_committed():  # the import evaluates every run after commit
        version = qrels_imported(campaign=campaign, data=QRELS.encode())
    return {"campaign": campaign, "version": version, "runs": runs}


def _client(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _label(world: dict[str, Any], tag: str, user: Any) -> str:
    from judging.campaigns.selectors import run_label

    return run_label(world["runs"][tag], user)


# --- the topic list -------------------------------------------------------------------------


def test_the_topics_are_sorted_by_a_minus_b_with_wins_ties_and_losses(
    world: dict[str, Any], admin_user: Any
) -> None:
    out = run_versus(
        campaign=world["campaign"],
        version=world["version"],
        a=A_TAG,
        b=B_TAG,
        measure="P@2",
        user=admin_user,
    )
    assert [t["qid"] for t in out["topics"]] == ["402", "403", "401", "404"]
    assert [t["diff"] for t in out["topics"]] == [0.5, 0.5, 0.0, -0.5]
    assert {t["qid"]: t["a"] for t in out["topics"]} == A_VALUES
    assert {t["qid"]: t["b"] for t in out["topics"]} == B_VALUES
    assert (out["wins"], out["ties"], out["losses"], out["n_topics"]) == (2, 1, 1, 4)
    assert out["mean_a"] == pytest.approx(0.5)
    assert out["mean_b"] == pytest.approx(0.375)
    assert out["mean_diff"] == pytest.approx(0.125)
    assert out["difference"] == "A \u2212 B"
    assert out["qrels_version"] == 1 and out["qrels_hash"] == world["version"].content_hash
    assert out["missing"] == []
    assert "405" not in {t["qid"] for t in out["topics"]}  # no relevant document: excluded
    t401 = next(t for t in out["topics"] if t["qid"] == "401")
    assert (t401["title"], t401["description"]) == ("oil spills", "Find oil spills.")


@pytest.mark.parametrize("test", ["t", "randomization", "bootstrap"])
def test_the_p_value_is_the_paired_test_over_the_same_topics(
    world: dict[str, Any], admin_user: Any, test: str
) -> None:
    out = run_versus(
        campaign=world["campaign"],
        version=world["version"],
        a=A_TAG,
        b=B_TAG,
        measure="P@2",
        user=admin_user,
        test=test,
    )
    qids = sorted(A_VALUES)
    a, b = [A_VALUES[q] for q in qids], [B_VALUES[q] for q in qids]
    expected = paired_test(a, b, test=cast(TestName, test))
    assert out["p_value"] == pytest.approx(expected.p_value)
    assert (out["test"], out["correction"]) == (test, "none (one comparison)")
    if test == "t":  # and independently of our code
        assert out["p_value"] == pytest.approx(scipy.stats.ttest_rel(a, b).pvalue)
    if test == "randomization":  # exact: every sign pattern of (0, .5, .5, -.5) has
        assert out["p_value"] == 1.0  # |mean| >= .125 (|sum| is .5 or 1.5)


def test_the_tie_tolerance_turns_small_differences_into_ties(
    world: dict[str, Any], admin_user: Any
) -> None:
    out = run_versus(
        campaign=world["campaign"],
        version=world["version"],
        a=A_TAG,
        b=B_TAG,
        measure="P@2",
        user=admin_user,
        tie=0.5,
    )
    assert (out["wins"], out["ties"], out["losses"]) == (0, 4, 0)
    assert "|A \u2212 B| <= tie" in out["tie_rule"]


@pytest.mark.parametrize(
    ("sort", "order"),
    [
        ("-diff", ["404", "401", "402", "403"]),
        ("qid", ["401", "402", "403", "404"]),
        ("-qid", ["404", "403", "402", "401"]),
        ("a", ["403", "401", "402", "404"]),
        ("b", ["401", "403", "404", "402"]),
        ("-b", ["402", "401", "403", "404"]),
    ],
)
def test_the_topics_sort_by_each_column(
    world: dict[str, Any], admin_user: Any, sort: str, order: list[str]
) -> None:
    out = run_versus(
        campaign=world["campaign"],
        version=world["version"],
        a=A_TAG,
        b=B_TAG,
        measure="P@2",
        user=admin_user,
        sort=sort,
    )
    assert [t["qid"] for t in out["topics"]] == order


def test_a_topic_one_run_has_no_value_for_is_scored_zero_and_listed(
    world: dict[str, Any], admin_user: Any
) -> None:
    ev = Evaluation.objects.get(run=world["runs"][B_TAG], qrels=world["version"])
    del ev.result["per_query"]["P@2"]["403"]
    ev.save()
    out = run_versus(
        campaign=world["campaign"],
        version=world["version"],
        a=A_TAG,
        b=B_TAG,
        measure="P@2",
        user=admin_user,
    )
    t403 = next(t for t in out["topics"] if t["qid"] == "403")
    assert (t403["b"], t403["b_missing"], t403["diff"]) == (0.0, True, 1.0)
    assert out["missing"] == [{"qid": "403", "run": "B", "scored": 0.0}]
    assert out["n_topics"] == 4


def test_the_best_two_runs_are_compared_by_default(world: dict[str, Any], admin_user: Any) -> None:
    out = run_versus(campaign=world["campaign"], version=world["version"], user=admin_user)
    # P@2 means: alpha 0.5, beta 0.375 (gamma 0.125): the campaign's first measure
    assert (out["a"], out["b"], out["measure"]) == (A_TAG, B_TAG, "P@2")


# --- one topic ------------------------------------------------------------------------------


def test_both_rankings_mark_grades_unjudged_and_only_in(
    world: dict[str, Any], admin_user: Any
) -> None:
    out = topic_versus(
        campaign=world["campaign"],
        version=world["version"],
        a=A_TAG,
        b=B_TAG,
        qid="401",
        user=admin_user,
    )
    a, b = out["columns"]
    assert [
        (r["rank"], r["docid"], r["grade"], r["relevant"], r["in_other"]) for r in a["rows"]
    ] == [
        (1, "d1", 2, True, None),
        (2, "d2", 0, False, None),
        (3, "d3", 1, True, 1),
    ]
    assert [(r["docid"], r["grade"], r["judged"], r["in_other"]) for r in b["rows"]] == [
        ("d3", 1, True, 3),
        ("zz", None, False, None),
    ]
    assert a["rows"][0]["title"] == "North Sea oil spill"
    assert (out["score_a"], out["score_b"], out["diff"]) == (0.5, 0.5, 0.0)
    assert (out["num_relevant"], out["num_judged"], out["relevant_missed_by_both"]) == (2, 3, 0)
    assert out["depth"] == 20
    assert (out["title"], out["narrative"]) == ("oil spills", "Spills at sea count.")


def test_a_document_the_other_run_has_deeper_is_marked_with_its_rank(
    world: dict[str, Any], admin_user: Any
) -> None:
    out = topic_versus(
        campaign=world["campaign"],
        version=world["version"],
        a=A_TAG,
        b=B_TAG,
        qid="401",
        depth=1,
        user=admin_user,
    )
    a, b = out["columns"]
    assert [(r["docid"], r["in_other"], r["in_other_top"]) for r in a["rows"]] == [
        ("d1", None, False)
    ]
    assert [(r["docid"], r["in_other"], r["in_other_top"]) for r in b["rows"]] == [("d3", 3, False)]
    html = _client(admin_user).get(
        f"/campaigns/{world['campaign'].pk}/versus/401/?a={A_TAG}&b={B_TAG}&depth=1"
    )
    assert html.status_code == 200
    text = html.content.decode()
    assert 'class="vs-deeper">A: rank 3<' in text and 'class="vs-only">only in A<' in text


def test_relevant_documents_neither_run_retrieved_are_counted(
    world: dict[str, Any], admin_user: Any
) -> None:
    out = topic_versus(
        campaign=world["campaign"],
        version=world["version"],
        a=A_TAG,
        b=B_TAG,
        qid="402",
        user=admin_user,
    )
    assert (out["num_relevant"], out["relevant_missed_by_both"]) == (2, 1)  # d10


def test_the_depth_defaults_to_the_setting_and_is_bounded(
    world: dict[str, Any], admin_user: Any
) -> None:
    client = _client(admin_user)
    url = f"/api/v1/campaigns/{world['campaign'].pk}/versus/401/?a={A_TAG}&b={B_TAG}"
    with override_knobs(versus_depth=2, versus_max_depth=5):
        r = client.get(url)
        assert r.status_code == 200
        assert r.json()["depth"] == 2
        assert [row["docid"] for row in r.json()["columns"][0]["rows"]] == ["d1", "d2"]
        for bad in ("0", "6", "x"):
            r = client.get(f"{url}&depth={bad}")
            assert r.status_code == 400, bad
            assert [p["location"] for p in r.json()["problems"]] == ["depth"]
    assert client.get(f"{url}&depth=100").status_code == 200
    assert client.get(f"{url}&depth=101").status_code == 400


def test_prev_and_next_follow_the_list_order(world: dict[str, Any], admin_user: Any) -> None:
    out = topic_versus(
        campaign=world["campaign"],
        version=world["version"],
        a=A_TAG,
        b=B_TAG,
        qid="403",
        user=admin_user,
    )
    assert (out["prev"], out["next"], out["position"], out["n_topics"]) == ("402", "401", 2, 4)
    first = topic_versus(
        campaign=world["campaign"],
        version=world["version"],
        a=A_TAG,
        b=B_TAG,
        qid="402",
        user=admin_user,
        sort="qid",
    )
    assert (first["prev"], first["next"]) == ("401", "403")


# --- bad parameters -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("a=nope&b=" + B_TAG, "a"),
        (f"a={A_TAG}&b=nope", "b"),
        (f"a={A_TAG}&b={A_TAG}", "b"),
        (f"a={A_TAG}&b={B_TAG}&measure=P@7", "measure"),
        (f"a={A_TAG}&b={B_TAG}&test=wilcoxon", "test"),
        (f"a={A_TAG}&b={B_TAG}&sort=title", "sort"),
        (f"a={A_TAG}&b={B_TAG}&tie=x", "tie"),
        (f"a={A_TAG}&b={B_TAG}&tie=2", "tie"),
        (f"a={A_TAG}&b={B_TAG}&tie=nan", "tie"),
        (f"a={A_TAG}&b={B_TAG}&qrels=x", "qrels"),
    ],
)
def test_a_bad_parameter_is_a_400_naming_it(
    world: dict[str, Any], admin_user: Any, query: str, field: str
) -> None:
    client = _client(admin_user)
    c = world["campaign"].pk
    r = client.get(f"/api/v1/campaigns/{c}/versus/?{query}")
    assert r.status_code == 400, r.content
    assert [p["location"] for p in r.json()["problems"]] == [field]
    if field != "qrels":  # the pages' qrels version is a 404 when it is not one
        page = client.get(f"/campaigns/{c}/versus/?{query}")
        assert page.status_code == 400
        assert b'id="versus-error"' in page.content


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("999/", "qid"),
        ("401/?b=nope", "b"),
        (f"401/?a={A_TAG}&b={A_TAG}", "b"),
        ("401/?depth=-1", "depth"),
        ("401/?measure=nDCG@1000", "measure"),
    ],
)
def test_a_bad_topic_parameter_is_a_400_naming_it(
    world: dict[str, Any], admin_user: Any, path: str, field: str
) -> None:
    client = _client(admin_user)
    c = world["campaign"].pk
    r = client.get(f"/api/v1/campaigns/{c}/versus/{path}")
    assert r.status_code == 400, r.content
    assert [p["location"] for p in r.json()["problems"]] == [field]
    page = client.get(f"/campaigns/{c}/versus/{path}")
    assert page.status_code == 400 and b'id="versus-error"' in page.content


def test_a_run_without_an_evaluation_is_named(
    world: dict[str, Any], admin_user: Any, researcher: Any
) -> None:
    Evaluation.objects.filter(run=world["runs"][C_TAG]).delete()
    r = _client(admin_user).get(
        f"/api/v1/campaigns/{world['campaign'].pk}/versus/?a={A_TAG}&b={C_TAG}"
    )
    assert r.status_code == 400
    assert [p["location"] for p in r.json()["problems"]] == ["b"]
    assert "no finished evaluation" in r.json()["problems"][0]["message"]


# --- who may see what -----------------------------------------------------------------------


def test_annotators_are_refused_and_anonymous_users_sent_to_login(
    world: dict[str, Any], annotator: Any
) -> None:
    c = world["campaign"].pk
    for path in (f"/campaigns/{c}/versus/", f"/campaigns/{c}/versus/401/"):
        assert _client(annotator).get(path).status_code == 403
        r = Client().get(path)
        assert r.status_code == 302 and "/login/" in r["Location"]
    for path in (f"/api/v1/campaigns/{c}/versus/", f"/api/v1/campaigns/{c}/versus/401/"):
        assert _client(annotator).get(path).status_code == 403
        assert Client().get(path).status_code in (401, 403)
        assert Client().get(path).status_code == 401


def test_another_researchers_run_is_scored_under_its_label_and_its_ranking_not_shown(
    world: dict[str, Any], researcher: Any
) -> None:
    client = _client(researcher)
    c = world["campaign"].pk
    other = _label(world, B_TAG, researcher)
    assert other.startswith("anonymous run #")
    q = f"a={A_TAG}&b={other.replace('#', '%23').replace(' ', '+')}"
    r = client.get(f"/api/v1/campaigns/{c}/versus/?{q}")
    assert r.status_code == 200, r.content
    body = r.json()
    assert (body["a"], body["b"]) == (A_TAG, other)
    assert {t["qid"]: t["b"] for t in body["topics"]} == B_VALUES
    topic = client.get(f"/api/v1/campaigns/{c}/versus/401/?{q}").json()
    hidden = topic["columns"][1]
    assert (hidden["shown"], hidden["rows"]) == (False, [])
    assert hidden["note"] == "rankings of other researchers' runs are not shown"
    # nor where it ranked our documents: that is its ranking too
    assert all(row["in_other"] is None for row in topic["columns"][0]["rows"])
    answers = [
        r.content,
        client.get(f"/api/v1/campaigns/{c}/versus/404/?{q}").content,
        client.get(f"/campaigns/{c}/versus/?{q}").content,
        client.get(f"/campaigns/{c}/versus/?{q}&sort=b").content,
        client.get(f"/campaigns/{c}/versus/").content,
    ]
    for qid in ("401", "402", "403", "404"):
        answers.append(client.get(f"/campaigns/{c}/versus/{qid}/?{q}").content)
        answers.append(client.get(f"/api/v1/campaigns/{c}/versus/{qid}/?{q}").content)
    for content in answers:
        text = content.decode()
        assert B_TAG not in text
        assert "oscar" not in text
        for docid in B_ONLY:
            assert f'"{docid}"' not in text and f">{docid}<" not in text, docid
    page = client.get(f"/campaigns/{c}/versus/401/?{q}").content.decode()
    assert "Rankings of other researchers" in page
    assert "only in" not in page.split('id="versus-rankings"')[1].split("</table>")[0]


def test_a_researcher_compares_two_own_runs_with_both_rankings(
    world: dict[str, Any], researcher: Any
) -> None:
    client = _client(researcher)
    c = world["campaign"].pk
    r = client.get(f"/campaigns/{c}/versus/401/?a={A_TAG}&b={C_TAG}")
    assert r.status_code == 200
    html = r.content.decode()
    # A: d1 (B rank 2), d2 (B rank 1), d3 only in A; B: d2, d1
    assert 'class="vs-only">only in A<' in html
    assert "B: rank 2" in html and "A: rank 2" in html and "A: rank 1" in html
    assert 'class="vs-grade rel">rel 2<' in html and 'class="vs-grade notrel">not rel<' in html
    assert 'title="d1 · North Sea oil spill"' in html


def test_the_comparison_page_states_the_summary_and_links_each_topic(
    world: dict[str, Any], admin_user: Any
) -> None:
    client = _client(admin_user)
    c = world["campaign"].pk
    html = client.get(f"/campaigns/{c}/versus/?a={A_TAG}&b={B_TAG}&measure=P@2").content.decode()
    summary = html.split('id="versus-summary"')[1].split("</p>")[0]
    assert "wins 2, ties 1, loses 1</strong> of 4 topics" in summary
    assert "qrels v1" in summary and world["version"].content_hash[:12] in summary
    assert "mean A 0.5000, B 0.3750, A \u2212 B +0.1250" in summary
    assert "paired t-test, p = " in summary and "macro" in summary
    table = html.split('id="versus-topics"')[1].split("</table>")[0]
    assert [row.split('"')[0] for row in table.split('data-qid="')[1:]] == [
        "402",
        "403",
        "401",
        "404",
    ]
    assert table.count('<svg class="vs-bar"') == 4
    assert 'class="gain"' in table and 'class="loss"' in table
    assert "<details" in table and "Find oil spills." in table
    assert f"/campaigns/{c}/versus/402/?a={A_TAG}" in table
    assert "sort=-diff" in table  # the A - B header reverses the order
    assert 'id="nav-versus"' in html
    assert 'name="tie"' in html.split('id="versus-form"')[1].split("</form>")[0]
    tied = client.get(f"/campaigns/{c}/versus/?a={A_TAG}&b={B_TAG}&tie=0.5").content.decode()
    assert "wins 0, ties 4, loses 0</strong>" in tied
    assert (
        f"/versus/402/?a={A_TAG}&amp;b={B_TAG}&amp;measure=P%402&amp;qrels=1&amp;test=t&amp;tie=0.5"
        in tied
    )
    assert 'style="' not in table  # the CSP allows no inline style


def test_the_pages_say_so_when_there_is_nothing_to_compare(
    campaign: Any, admin_user: Any, researcher: Any
) -> None:
    client = _client(admin_user)
    r = client.get(f"/campaigns/{campaign.pk}/versus/")
    assert r.status_code == 200 and b"No qrels version yet" in r.content
    for qid in ("404", "405"):
        Topic.objects.create(campaign=campaign, qid=qid)
    run_submitted(campaign=campaign, owner=researcher, tag="solo", results=RUNS[C_TAG])
    qrels_imported(campaign=campaign, data=QRELS.encode())
    r = client.get(f"/campaigns/{campaign.pk}/versus/")
    assert r.status_code == 200 and b'id="versus-too-few"' in r.content
    assert Run.objects.filter(campaign=campaign).count() == 1


def test_a_topic_id_with_a_slash_or_a_space_has_its_page(
    world: dict[str, Any], admin_user: Any
) -> None:
    from django.urls import reverse

    Topic.objects.create(campaign=world["campaign"], qid="q/1 b", title="odd id")
    client = _client(admin_user)
    page = reverse("versus-topic", args=[world["campaign"].pk, "q/1 b"])
    r = client.get(f"{page}?a={A_TAG}&b={B_TAG}")
    assert r.status_code == 200 and b"odd id" in r.content
    api = reverse("api-versus-topic", args=[world["campaign"].pk, "q/1 b"])
    body = client.get(f"{api}?a={A_TAG}&b={B_TAG}").json()
    assert (body["qid"], body["score_a"], body["columns"][0]["rows"]) == ("q/1 b", None, [])


def test_reading_a_comparison_never_writes(world: dict[str, Any], researcher: Any) -> None:
    from tests.test_get_never_writes import writes_during

    client = _client(researcher)
    c = world["campaign"].pk
    q = f"a={A_TAG}&b={C_TAG}"
    for url in (
        f"/campaigns/{c}/versus/",
        f"/campaigns/{c}/versus/?{q}&sort=qid",
        f"/campaigns/{c}/versus/401/?{q}",
        f"/api/v1/campaigns/{c}/versus/?{q}",
        f"/api/v1/campaigns/{c}/versus/401/?{q}&depth=5",
    ):
        response, writes = writes_during(lambda: client.get(url))  # noqa: B023
        assert response.status_code == 200, url
        assert writes == [], url


# --- real data ------------------------------------------------------------------------------


@pytest.mark.data
@needs_shared_data("robust03")
def test_two_robust_2003_runs_compare_as_pytrec_eval_scores_them(
    shared_data: Path, admin_user: Any
) -> None:
    root = shared_data / "robust03"
    tags = ("uic0301", "InexpC2")
    call_command(
        "import_collection",
        "--campaign", "robust03-versus",
        "--qrels", str(root / "qrels.txt"),
        "--runs", *(str(root / "runs" / f"input.{t}.gz") for t in tags),
        "--measures", "AP", "P@10",
        "--pooled-runs", "all",
        "--score-precision", "single",
        stdout=io.StringIO(),
    )  # fmt: skip
    campaign = Campaign.objects.get(name="robust03-versus")
    version = QrelsVersion.objects.get(campaign=campaign)
    with override_knobs(eval_runs_per_task=10_000):
        compute_here(evaluations_after_qrels(version))  # as the import's job, here
    out = run_versus(campaign=campaign, version=version, a=tags[0], b=tags[1], user=admin_user)

    # independently: pytrec_eval's AP per topic of the files as read (single precision)
    qrels = read_qrels(root / "qrels.txt").to_dict()
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"map"})
    ref = [
        evaluator.evaluate(
            read_run(root / "runs" / f"input.{t}.gz").with_float32_scores().to_dict()
        )
        for t in tags
    ]
    scored = sorted(q for q, docs in qrels.items() if any(g >= 1 for g in docs.values()))
    assert sorted(t["qid"] for t in out["topics"]) == scored and out["n_topics"] == 100
    a = [ref[0].get(q, {}).get("map", 0.0) for q in scored]
    b = [ref[1].get(q, {}).get("map", 0.0) for q in scored]
    got = {t["qid"]: t for t in out["topics"]}
    for q, va, vb in zip(scored, a, b, strict=True):
        assert got[q]["a"] == pytest.approx(va, abs=1e-9)
        assert got[q]["diff"] == pytest.approx(va - vb, abs=1e-9)
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    assert (out["wins"], out["losses"]) == (
        sum(1 for d in diffs if d > 1e-12),
        sum(1 for d in diffs if d < -1e-12),
    )
    assert out["p_value"] == pytest.approx(scipy.stats.ttest_rel(a, b).pvalue, rel=1e-6)
    ordered = [t["diff"] for t in out["topics"]]
    assert ordered == sorted(ordered, reverse=True)

    first = out["topics"][0]["qid"]
    topic = topic_versus(
        campaign=campaign, version=version, a=tags[0], b=tags[1], qid=first, user=admin_user
    )
    for column in topic["columns"]:
        assert len(column["rows"]) == 20
        for row in column["rows"]:
            grade = qrels[first].get(row["docid"])
            assert row["grade"] == grade and row["relevant"] == (grade is not None and grade >= 1)
