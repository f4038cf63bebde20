"""Answer runs in a campaign (issue 34, point 1): a TREC RAG answer file submitted where any run
file is (API, page, client) is read whole; its ranked references become the run's ranked lists
(pooled, judged and evaluated as any run's) and its answers are kept beside, read back with the
segment ids each sentence cites; a bad file is refused naming every line and nothing is stored."""

from __future__ import annotations

import json
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile

from judging.campaigns.models import Campaign, RankedList, Run, RunAnswer

REFS = ["d1#p0", "d2#p0", "d3#p1"]
LINES: list[dict[str, Any]] = [
    {
        "run_id": "rag-a",
        "topic_id": "401",
        "topic": "How do solar sails work?",
        "references": REFS,
        "response_length": 9,
        "answer": [
            {"text": "Light pushes the sail.", "citations": [0, 2]},
            {"text": "Slowly, over months.", "citations": [1]},
        ],
    },
    {
        "run_id": "rag-a",
        "topic_id": "402",
        "references": ["d9#p3"],
        "answer": [{"text": "Nobody knows.", "citations": []}],
    },
]


def _file(lines: list[Any]) -> SimpleUploadedFile:
    body = "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines)
    return SimpleUploadedFile("answers.jsonl", body.encode())


def _submit(client: Any, campaign: Campaign, lines: list[Any]) -> Any:
    return client.post(
        f"/api/v1/campaigns/{campaign.pk}/runs/", {"file": _file(lines)}, format="multipart"
    )


def test_an_answer_run_is_a_ranked_run_with_its_answers_beside(
    api_client_for: Any, researcher: Any, campaign: Campaign, make_user: Any
) -> None:
    client = api_client_for(researcher)
    made = _submit(client, campaign, LINES)
    assert made.status_code == 201, made.json()
    assert made.json()["topic_counts"] == {"401": 3, "402": 1}
    run = Run.objects.get(campaign=campaign)
    assert run.tag == "rag-a"
    # the references in their submitted order are the ranked list
    assert RankedList.objects.get(run=run, topic__qid="401").docid_list() == REFS
    answers = client.get(f"/api/v1/runs/{run.pk}/answers/").json()
    assert answers[0] == {
        "topic": "401",
        "references": REFS,
        "response_length": 9,
        "words": 7,
        "sentences": [
            {"text": "Light pushes the sail.", "citations": ["d1#p0", "d3#p1"]},
            {"text": "Slowly, over months.", "citations": ["d2#p0"]},
        ],
    }
    kinds = {w["message"] for w in made.json()["warnings"]}
    assert any("word count" in k for k in kinds) and any("cites no reference" in k for k in kinds)
    other = make_user("other-researcher", "researcher")
    assert api_client_for(other).get(f"/api/v1/runs/{run.pk}/answers/").status_code == 404


def test_a_bad_answer_run_names_every_line_and_stores_nothing(
    api_client_for: Any, researcher: Any, campaign: Campaign
) -> None:
    bad = [
        LINES[0],
        {**LINES[1], "answer": [{"text": "x", "citations": [3]}]},  # out of range
        {**LINES[1], "run_id": "rag-b", "topic_id": "403"},  # a second run_id
        "not json",
    ]
    refused = _submit(api_client_for(researcher), campaign, bad)
    assert refused.status_code == 400
    lines = {p.get("line") for p in refused.json()["problems"]}
    assert {2, 3, 4} <= lines
    assert not Run.objects.exists() and not RunAnswer.objects.exists()


def test_an_answer_for_a_topic_the_campaign_lacks_is_named_by_its_line(
    api_client_for: Any, researcher: Any, campaign: Campaign
) -> None:
    lines = [LINES[0], {**LINES[1], "topic_id": "999"}]
    refused = _submit(api_client_for(researcher), campaign, lines)
    assert refused.status_code == 400
    (problem,) = refused.json()["problems"]
    assert problem["line"] == 2 and "999" in problem["message"]
