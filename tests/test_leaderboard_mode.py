"""The leaderboard page in trec_eval mode (issue 29, point 7): ``?mode=trec_eval`` shows the
official figures, the API's, says which mode the numbers are in, and offers the other mode; a
mode that is neither is a 400 naming the parameter, on the page as in the API.

Hand-worked: qrels with d0, d3, d6 and d9 relevant on each of topics 401-403; every run ranks
d0..d9 (some order), so P@10 is 0.4 on every topic it answers. ``partial`` answers 401 and 402
only: honest mode scores 403 as 0 (mean 0.8 / 3 = 0.267), trec_eval averages over the topics the
run answers (0.400)."""

from __future__ import annotations

import csv
import io
import re
from typing import Any

import pytest
from django.test import Client

from judging.evaluation.models import EvalMode
from judging.evaluation.services import evaluation_request
from judging.workflows.qrels import qrels_imported
from judging.workflows.runs import run_submitted
from tests._page_checks import body_text

pytestmark = pytest.mark.django_db

QIDS = ("401", "402", "403")
QRELS = "".join(f"{q} 0 d{d} {1 if d % 3 == 0 else 0}\n" for q in QIDS for d in range(10))


def ranking(qids: tuple[str, ...], shift: int) -> dict[str, dict[str, float]]:
    return {q: {f"d{(i + shift) % 10}": 10.0 - i for i in range(10)} for q in qids}


@pytest.fixture
def scored(campaign: Any, researcher: Any, as_committed: Any) -> Any:
    run_submitted(
        campaign=campaign, owner=researcher, tag="full", pooled=True, results=ranking(QIDS, 0)
    )
    run_submitted(
        campaign=campaign,
        owner=researcher,
        tag="partial",
        pooled=True,
        results=ranking(QIDS[:2], 1),
    )
    with as_committed():
        qrels_imported(campaign=campaign, data=QRELS.encode())
    return campaign


def evaluate_in_trec_eval_mode(campaign: Any, as_committed: Any, *tags: str) -> None:
    version = campaign.qrels_versions.get()
    with as_committed():
        for run in campaign.runs.filter(tag__in=tags):
            evaluation_request(run=run, version=version, mode=EvalMode.TREC_EVAL)


def p10_cells(page: str) -> dict[str, str]:
    """Run -> the P@10 score its row shows (the first measure shown: ?measures=P@10)."""
    rows = re.findall(
        r'<td class="run"[^>]*>(?:<a[^>]*>)?([^<]+)(?:</a>)?</td>(.*?)</tr>', page, re.S
    )
    out = {}
    for run, rest in rows:
        cell = re.search(r'<td class="num[^"]*"[^>]*>(.*?)</td>', rest, re.S)
        assert cell, rest
        score = re.search(r'<span class="score"><strong>([^<]+)</strong>', cell.group(1))
        out[run.strip()] = (
            score.group(1) if score else re.sub(r"<[^>]+>", "", cell.group(1)).strip()
        )
    return out


def test_the_page_shows_the_official_figures_in_trec_eval_mode_and_says_so(
    scored: Any, researcher: Any, as_committed: Any, api_client_for: Any
) -> None:
    evaluate_in_trec_eval_mode(scored, as_committed, "full", "partial")
    client = Client()
    client.force_login(researcher)
    base = f"/campaigns/{scored.pk}/leaderboard/?measures=P@10"
    honest = body_text(client.get(base))
    assert p10_cells(honest) == {"full": "0.400", "partial": "0.267"}
    assert 'id="board-mode"' in honest and "honest mode" in honest
    official = client.get(f"{base}&mode=trec_eval")
    assert official.status_code == 200
    text = body_text(official)
    assert p10_cells(text) == {"full": "0.400", "partial": "0.400"}
    mode_line = re.search(r'id="board-mode"[^>]*>(.*?)</p>', text, re.S)
    assert mode_line and "trec_eval mode" in mode_line.group(1)
    # the same figures as the API's leaderboard in that mode
    body = (
        api_client_for(researcher)
        .get(f"/api/v1/campaigns/{scored.pk}/leaderboard/?mode=trec_eval&measures=P@10")
        .json()
    )
    assert body["mode"] == "trec_eval"
    assert {r["run"]: f"{r['measures']['P@10']['value']:.3f}" for r in body["runs"]} == (
        p10_cells(text)
    )
    # the view keeps the mode: every sort link, the CSV; the switch goes back to honest mode
    sort_links = re.findall(r'<th[^>]*><a href="([^"]+)"', text)
    assert sort_links and all("mode=trec_eval" in h for h in sort_links), sort_links
    rows = list(csv.reader(io.StringIO(body_text(client.get(f"{base}&mode=trec_eval&format=csv")))))
    assert rows[0][3] == "mode" and rows[1][3] == "trec_eval"
    assert "mode=trec_eval" in switch(honest) and "mode=" not in switch(text)


def switch(page: str) -> str:
    found = re.search(r'id="mode-switch" href="([^"]+)"', page)
    assert found, "no mode switch"
    return found.group(1)


def test_runs_without_a_trec_eval_evaluation_are_said_to_be_not_evaluated_in_that_mode(
    scored: Any, researcher: Any, as_committed: Any
) -> None:
    evaluate_in_trec_eval_mode(scored, as_committed, "full")
    client = Client()
    client.force_login(researcher)
    text = body_text(
        client.get(f"/campaigns/{scored.pk}/leaderboard/?measures=P@10&mode=trec_eval")
    )
    cells = p10_cells(text)
    assert cells["full"] == "0.400" and cells["partial"] == "not evaluated"
    assert "1 of 2 runs" in text and "trec_eval mode" in text


def test_a_bad_mode_is_a_400_naming_the_parameter_on_the_page_as_in_the_api(
    scored: Any, researcher: Any, api_client_for: Any
) -> None:
    r = api_client_for(researcher).get(f"/api/v1/campaigns/{scored.pk}/leaderboard/?mode=magic")
    assert r.status_code == 400 and r.json()["problems"][0]["location"] == "mode"
    client = Client()
    client.force_login(researcher)
    page = client.get(f"/campaigns/{scored.pk}/leaderboard/?mode=magic")
    assert page.status_code == 400
    text = body_text(page)
    assert "mode:" in text and "magic" in text and 'id="leaderboard"' in text


def test_the_compute_button_asks_trec_eval_mode_for_the_researchers_own_runs_and_shows_them(
    scored: Any, researcher: Any, other_researcher: Any, as_committed: Any
) -> None:
    url = f"/campaigns/{scored.pk}/leaderboard/?measures=P@10&mode=trec_eval"
    stranger = Client()
    stranger.force_login(other_researcher)
    assert 'id="compute-mode"' not in body_text(stranger.get(url))  # none of theirs to compute
    with as_committed():
        asked = stranger.post(
            f"/campaigns/{scored.pk}/leaderboard/evaluate/", {"qrels": "1", "mode": "trec_eval"}
        )
    assert asked.status_code == 302
    assert not scored.runs.filter(evaluations__mode=EvalMode.TREC_EVAL).exists()
    client = Client()
    client.force_login(researcher)
    before = body_text(client.get(url))
    assert "Compute trec_eval mode for 2 runs of yours" in before
    assert p10_cells(before) == {"full": "not evaluated", "partial": "not evaluated"}
    with as_committed():
        asked = client.post(
            f"/campaigns/{scored.pk}/leaderboard/evaluate/", {"qrels": "1", "mode": "trec_eval"}
        )
    assert asked.status_code == 302 and "mode=trec_eval" in asked["Location"]
    after = body_text(client.get(asked["Location"] + "&measures=P@10"))
    # trec_eval averages over the queries each run answers: partial's 2 topics, 0.4 each
    assert p10_cells(after) == {"full": "0.400", "partial": "0.400"}
    assert 'id="compute-mode"' not in after and "mode asked for 2 runs of yours" in after
