"""A retrieval team's files as they come (issue 33, point 3): BEIR's ``queries.jsonl``,
``corpus.jsonl`` and ``qrels/test.tsv`` import into a campaign, and a run file may be the JSON
dictionary ``{qid: {docid: score}}`` that pytrec_eval and ranx take."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from judging.assessments.models import QrelsEntry, QrelsVersion
from judging.campaigns.models import Campaign, Document, RankedList, Run, Topic

QUERIES = b'{"_id": "404", "text": "How do solar sails work?", "metadata": {}}\n'
CORPUS = (
    b'{"_id": "D1", "title": "Sails", "text": "Light pushes sails.", "metadata": {}}\n'
    b'{"_id": "D2", "title": "", "text": "Rockets burn fuel.", "metadata": {"year": 1999}}\n'
)
QRELS = b"query-id\tcorpus-id\tscore\n404\tD1\t1\n404\tD2\t0\n401\tD2\t1\n"


def test_beir_files_import_with_the_campaigns_commands(tmp_path: Path, campaign: Campaign) -> None:
    for name, data in (("queries.jsonl", QUERIES), ("corpus.jsonl", CORPUS), ("test.tsv", QRELS)):
        (tmp_path / name).write_bytes(data)
    call_command("import_topics", str(tmp_path / "queries.jsonl"), campaign="Test campaign")
    call_command("import_documents", str(tmp_path / "corpus.jsonl"), campaign="Test campaign")
    call_command("import_qrels", str(tmp_path / "test.tsv"), campaign="Test campaign")
    assert Topic.objects.get(campaign=campaign, qid="404").title == "How do solar sails work?"
    assert Document.objects.get(docid="D1").text == "Light pushes sails."
    version = QrelsVersion.objects.get(campaign=campaign)
    got = {(e.topic.qid, e.docid, e.grade) for e in QrelsEntry.objects.filter(version=version)}
    assert got == {("404", "D1", 1), ("404", "D2", 0), ("401", "D2", 1)}


def test_a_bad_beir_qrels_line_is_named_and_nothing_is_stored(
    api_client_for: Any, admin_user: Any, tmp_path: Path, campaign: Campaign
) -> None:
    from django.core.management.base import CommandError

    bad = tmp_path / "test.tsv"
    bad.write_bytes(b"query-id\tcorpus-id\tscore\n401\tD1\t1\n401\tD2\thigh\n")
    try:
        call_command("import_qrels", str(bad), campaign="Test campaign")
    except CommandError as e:
        assert "line 3" in str(e) and "'high' is not an integer" in str(e)
    else:
        raise AssertionError("a bad grade was accepted")
    assert QrelsVersion.objects.count() == 0 and QrelsEntry.objects.count() == 0


def _submit(client: Any, campaign: Campaign, data: bytes, **fields: Any) -> Any:
    body = {"file": SimpleUploadedFile("run.json", data), **fields}
    return client.post(f"/api/v1/campaigns/{campaign.pk}/runs/", body, format="multipart")


def test_a_json_run_file_is_stored_like_a_trec_one(
    api_client_for: Any, researcher: Any, campaign: Campaign
) -> None:
    data = json.dumps({"401": {"d1": 2.5, "d2": 2.5, "d3": 1.0}, "402": {"d9": 7}}).encode()
    response = _submit(api_client_for(researcher), campaign, data, tag="dense")
    assert response.status_code == 201, response.json()
    assert response.json()["topic_counts"] == {"401": 3, "402": 1}
    # trec_eval order: score descending, ties by docid descending
    ranked = RankedList.objects.get(run__tag="dense", topic__qid="401")
    assert ranked.docid_list() == ["d2", "d1", "d3"]


def test_a_bad_json_run_file_names_each_problem_and_stores_nothing(
    api_client_for: Any, researcher: Any, campaign: Campaign
) -> None:
    data = b'{"401": {"a": "high", "b": 1}, "777": {"c": 1}, "402": {"d 1": 2}}'
    response = _submit(api_client_for(researcher), campaign, data, tag="dense")
    assert response.status_code == 400
    where = {p.get("location"): p["message"] for p in response.json()["problems"]}
    assert "is not a number" in where["run.401.a"]
    assert "white space" in where["run.402.d 1"]
    assert any("'777' is not in campaign" in m for m in where.values())
    assert Run.objects.count() == 0 and RankedList.objects.count() == 0
    response = _submit(api_client_for(researcher), campaign, b'{"401": {"a": 1,}}', tag="x")
    assert response.status_code == 400 and "not JSON" in json.dumps(response.json())
