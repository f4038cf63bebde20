"""Where the judgments are incomplete, per question (issue 33, point 6): unjudged items in each
run's top k, relevant items no run retrieved ("invisible"), zero-answer questions, and a way to
judge more. Worked by hand on a three-question campaign."""

from __future__ import annotations

from typing import Any

from django.test import Client

from judging.assessments.services import qrels_import
from judging.campaigns.models import Campaign
from judging.campaigns.services import run_submit
from judging.evaluation.incompleteness import incompleteness
from judging.pools.models import PoolVersion

RUN_A = b"401 Q0 d1 1 9 A\n401 Q0 d4 2 8 A\n401 Q0 d2 3 7 A\n402 Q0 d3 1 9 A\n402 Q0 d5 2 8 A\n"
RUN_B = b"401 Q0 d2 1 9 B\n401 Q0 d6 2 8 B\n401 Q0 d9 3 7 B\n"
# 401: d1 and d9 relevant, d2 not; 402: only d3, not relevant; 403: nothing judged
QRELS = b"401 0 d1 1\n401 0 d2 0\n401 0 d9 2\n402 0 d3 0\n"


def _setup(campaign: Campaign, researcher: Any) -> None:
    run_submit(campaign=campaign, owner=researcher, data=RUN_A, pooled=True)
    run_submit(campaign=campaign, owner=researcher, data=RUN_B, pooled=True)
    qrels_import(campaign=campaign, data=QRELS)


def test_each_question_says_what_is_unjudged_invisible_or_without_answer(
    campaign: Campaign, researcher: Any, admin_user: Any
) -> None:
    _setup(campaign, researcher)
    version = campaign.qrels_versions.get()
    answer = incompleteness(campaign=campaign, version=version, k=2, user=admin_user)
    rows = {q.qid: q for q in answer.questions}
    q401, q402, q403 = rows["401"], rows["402"], rows["403"]
    assert (q401.judged, q401.relevant, q401.zero_answer) == (3, 2, "")
    assert q401.unjudged == {"A": 1, "B": 1}  # d4; d6
    assert (q401.retrieved, q401.unjudged_union) == (4, 2)  # d1 d4 d2 d6; d4 d6
    assert (q401.invisible, q401.invisible_ids) == (1, ["d9"])  # B has it at rank 3 only
    assert q402.zero_answer == "judged, none relevant" and q402.unjudged == {"A": 1, "B": 0}
    assert q403.zero_answer == "not judged" and q403.retrieved == 0
    assert (answer.zero_answer, answer.with_unjudged, answer.with_invisible) == (2, 2, 1)
    assert (answer.unjudged_union, answer.relevant, answer.invisible) == (3, 2, 1)
    assert "in no run's top 2 (over all 2 runs" in answer.rule
    # at k = 3, B's d9 is retrieved: nothing is invisible
    deeper = incompleteness(campaign=campaign, version=version, k=3, user=admin_user)
    assert deeper.invisible == 0


def test_another_researcher_sees_the_same_counts_with_runs_anonymised(
    campaign: Campaign, researcher: Any, make_user: Any, api_client_for: Any
) -> None:
    _setup(campaign, researcher)
    other = make_user("other-researcher", "researcher")
    url = f"/api/v1/campaigns/{campaign.pk}/incompleteness/?k=2"
    mine = api_client_for(researcher).get(url).json()
    theirs = api_client_for(other).get(url).json()
    assert mine["runs"] == ["A", "B"]
    assert all(r.startswith("anonymous run #") for r in theirs["runs"])
    assert theirs["invisible"] == mine["invisible"] == 1
    bad = api_client_for(researcher).get(f"/api/v1/campaigns/{campaign.pk}/incompleteness/?k=0")
    assert bad.status_code == 400


def test_the_page_shows_it_and_an_admin_pools_every_runs_top_k(
    campaign: Campaign, researcher: Any, admin_user: Any
) -> None:
    _setup(campaign, researcher)
    page = Client()
    page.force_login(admin_user)
    html = page.get(f"/campaigns/{campaign.pk}/incompleteness/?k=2").content.decode()
    assert "zero-answer: judged, none relevant" in html and "zero-answer: not judged" in html
    assert "<strong>1</strong> with relevant items no run retrieved within 2" in html
    assert "Judge more: pool every run's top 2 (3 unjudged items)" in html
    done = page.post(f"/campaigns/{campaign.pk}/incompleteness/judge-more/", {"k": "2"})
    assert done.status_code == 302
    pool = PoolVersion.objects.get(campaign=campaign)
    assert (pool.strategy, pool.depth) == ("depth", 2)
    researcher_page = Client()
    researcher_page.force_login(researcher)
    html = researcher_page.get(f"/campaigns/{campaign.pk}/incompleteness/?k=2").content.decode()
    assert "Judge more" not in html and "An admin can queue" in html


def test_a_group_of_runs_narrows_the_union_and_a_hidden_group_is_not_echoed(
    campaign: Campaign, researcher: Any, make_user: Any, api_client_for: Any
) -> None:
    _setup(campaign, researcher)
    campaign.runs.filter(tag="B").update(group="windows")
    url = f"/api/v1/campaigns/{campaign.pk}/incompleteness/?k=3&group=windows"
    mine = api_client_for(researcher).get(url).json()
    assert mine["runs"] == ["B"] and mine["group"] == "windows"
    assert "over the 1 runs of group 'windows'" in mine["rule"]
    other = make_user("other-researcher", "researcher")
    refused = api_client_for(other).get(url)
    assert refused.status_code == 400 and "windows" not in refused.content.decode()
