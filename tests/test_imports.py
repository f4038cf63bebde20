"""Management-command imports of real collections: Cranfield, Robust 2003 runs and qrels."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from judging.assessments.models import QrelsEntry, QrelsVersion
from judging.assessments.services import qrels_export_lines
from judging.campaigns.models import Campaign, Document, RankedList, Run, Topic

pytestmark = pytest.mark.django_db


def test_cranfield_documents_and_queries_import(shared_data: Path, admin_user: Any) -> None:
    cran = shared_data / "cranfield"
    # cranqrel's codes are 1 (complete answer) to 4 (minimum interest): the scale must hold them
    scale = [{"grade": g, "label": f"code {g}"} for g in range(5)]
    call_command("create_campaign", "cranfield", scale=json.dumps(scale))
    call_command("import_documents", str(cran / "cran.all.1400"), campaign="cranfield")
    call_command("import_topics", str(cran / "cran.qry"), campaign="cranfield")
    c = Campaign.objects.get(name="cranfield")
    assert Document.objects.filter(campaign=c).count() == 1400
    assert Document.objects.get(campaign=c, docid="471").text == ""
    assert Document.objects.get(campaign=c, docid="1").title.startswith(
        "experimental investigation of the aerodynamics"
    )
    assert Topic.objects.filter(campaign=c).count() == 225
    # queries are numbered 1..225 in file order (the qrels' numbering), not by their .I values
    assert Topic.objects.get(campaign=c, qid="3").title.startswith(
        "what problems of heat conduction in composite slabs"
    )
    # The Cranfield qrels (qid docid code, -1 = judged not relevant) import as TREC qrels
    lines = (cran / "cranqrel").read_text().split("\n")
    trec = "".join(f"{q} 0 {d} {g}\n" for q, d, g in (ln.split() for ln in lines if ln.strip()))
    qrels = Path(c.name + ".qrels")
    try:
        qrels.write_text(trec)
        call_command("import_qrels", str(qrels), campaign="cranfield")
    finally:
        qrels.unlink()
    v = QrelsVersion.objects.get(campaign=c)
    assert v.number == 1 and v.num_judgments == sum(1 for ln in lines if ln.strip())


def test_importing_documents_twice_updates_instead_of_duplicating(
    shared_data: Path, admin_user: Any
) -> None:
    cran = shared_data / "cranfield" / "cran.all.1400"
    call_command("create_campaign", "c2")
    call_command("import_documents", str(cran), campaign="c2")
    call_command("import_documents", str(cran), campaign="c2")
    assert Document.objects.filter(campaign__name="c2").count() == 1400


@pytest.fixture
def robust_campaign(shared_data: Path, researcher: Any) -> Campaign:
    root = shared_data / "robust03"
    call_command("create_campaign", "robust03")
    c = Campaign.objects.get(name="robust03")
    qids = sorted({line.split()[0] for line in (root / "qrels.txt").open()})
    Topic.objects.bulk_create(Topic(campaign=c, qid=q, title=f"topic {q}") for q in qids)
    return c


def test_robust_runs_and_qrels_import_with_exact_counts(
    shared_data: Path, robust_campaign: Campaign, researcher: Any
) -> None:
    root = shared_data / "robust03"
    paths = sorted((root / "runs").glob("input.*.gz"))[:3]
    call_command(
        "import_run",
        *map(str, paths),
        campaign="robust03",
        owner=researcher.username,
        groups_tsv=str(root / "runs.tsv"),
    )
    for path in paths:
        with gzip.open(path, "rt") as fh:
            lines = [ln for ln in fh if ln.strip()]
        tag = path.name[len("input.") : -3]
        run = Run.objects.get(campaign=robust_campaign, tag=tag)
        assert run.num_entries == len(lines)
        assert sum(r.size for r in RankedList.objects.filter(run=run)) == len(lines)
        per_topic: dict[str, int] = {}
        for ln in lines:
            per_topic[ln.split()[0]] = per_topic.get(ln.split()[0], 0) + 1
        assert run.topic_counts == per_topic
        assert run.group  # from runs.tsv
    call_command("import_qrels", str(root / "qrels.txt"), campaign="robust03")
    version = QrelsVersion.objects.get(campaign=robust_campaign)
    assert version.num_judgments == 128_796
    assert QrelsEntry.objects.filter(version=version).count() == 128_796
    # export gives back the same judgments (lossless), in canonical order
    original = sorted(
        tuple(ln.split()[i] for i in (0, 2, 3)) for ln in (root / "qrels.txt").open() if ln.strip()
    )
    exported = sorted(tuple(ln.split()[i] for i in (0, 2, 3)) for ln in qrels_export_lines(version))
    assert exported == original


def test_a_bad_run_file_reports_its_lines_and_stores_nothing(
    tmp_path: Path, campaign: Campaign, researcher: Any
) -> None:
    bad = tmp_path / "bad.run"
    bad.write_text("401 Q0 d1 1 1.0 t\n401 Q0 d2 2 x t\n")
    with pytest.raises(CommandError, match=r"line 2: score 'x' is not a number"):
        call_command("import_run", str(bad), campaign=str(campaign.pk), owner=researcher.username)
    assert Run.objects.count() == 0


def test_qrels_naming_unknown_topics_are_refused(tmp_path: Path, campaign: Campaign) -> None:
    bad = tmp_path / "q.txt"
    bad.write_text("401 0 d1 1\n777 0 d2 1\n")
    with pytest.raises(CommandError, match="topic '777' is not in campaign"):
        call_command("import_qrels", str(bad), campaign="Test campaign")
    assert QrelsVersion.objects.count() == 0 and QrelsEntry.objects.count() == 0


def test_a_bad_topics_file_lists_its_problems(tmp_path: Path, campaign: Campaign) -> None:
    bad = tmp_path / "t.jsonl"
    bad.write_text('{"qid": "1", "title": "ok"}\n{"qid": "1", "title": "dup"}\n{oops\n')
    with pytest.raises(CommandError) as err:
        call_command("import_topics", str(bad), campaign="Test campaign")
    assert "line 2" in str(err.value) and "line 3" in str(err.value)
    assert campaign.topics.count() == 3


def test_topics_and_documents_import_through_the_api(
    api_client_for: Any, admin_user: Any, campaign: Campaign
) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    client = api_client_for(admin_user)
    topics = SimpleUploadedFile(
        "t.txt",
        b"<top>\n<num> Number: 404\n<title> solar sails\n"
        b"<desc> Description:\nHow do solar sails work?\n</top>\n",
    )
    r = client.post(
        f"/api/v1/campaigns/{campaign.pk}/topics/", {"file": topics}, format="multipart"
    )
    assert r.status_code == 201 and r.json()["created"] == 1
    assert Topic.objects.get(campaign=campaign, qid="404").description == "How do solar sails work?"
    docs = SimpleUploadedFile("d.tsv", b"docid\ttitle\ttext\nD1\tSails\tLight pushes sails.\n")
    r = client.post(
        f"/api/v1/campaigns/{campaign.pk}/documents/", {"file": docs}, format="multipart"
    )
    assert r.status_code == 201 and r.json()["created"] == 1
    bad = SimpleUploadedFile("d.tsv", b"docid\ttext\nD2\tfine\nD2\tagain\n")
    r = client.post(
        f"/api/v1/campaigns/{campaign.pk}/documents/", {"file": bad}, format="multipart"
    )
    assert r.status_code == 400
    assert r.json()["problems"][0]["line"] == 3
    assert not Document.objects.filter(docid="D2").exists()
