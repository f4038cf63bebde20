"""A campaign's golden set out in BEIR's layout (issue 33, point 3): ``corpus.jsonl``,
``queries.jsonl``, ``qrels/test.tsv`` and ``pooljudge.json`` naming the qrels version and its
hash, the same bytes at every export and after a round trip through ``import_collection
--beir``."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from judging.assessments.beir_export import beir_zip
from judging.assessments.models import QrelsVersion
from judging.campaigns.models import Campaign, Document, RankedList, Topic
from judging.core.errors import InvalidInput

# written as BEIR's own scripts write them (json.dumps, ids sorted): the export gives these bytes
QUERIES = (
    b'{"_id": "q1", "text": "How do solar sails work?", "tags": ["physics"]}\n'
    b'{"_id": "q2", "text": "Wer erfand den Buchdruck?"}\n'
    b'{"_id": "q3", "text": "A question with no answer in the corpus"}\n'
)
CORPUS = (
    b'{"_id": "d1", "title": "Sails", "text": "Light pushes the sail.\\n\\nSlowly.", '
    b'"url": "https://example.org/sails", "year": "1999"}\n'
    b'{"_id": "d2", "title": "", "text": "Gutenberg, um 1450, in Mainz \\u2014 Buchdruck."}\n'
    b'{"_id": "d3", "title": "Rockets", "text": "Rockets burn fuel."}\n'
)
QRELS = b"query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td3\t0\nq2\td2\t1\n"


def _beir_folder(root: Path) -> Path:
    (root / "qrels").mkdir(parents=True)
    (root / "queries.jsonl").write_bytes(QUERIES)
    (root / "corpus.jsonl").write_bytes(CORPUS)
    (root / "qrels" / "test.tsv").write_bytes(QRELS)
    return root


def _import(name: str, path: Path, *extra: str) -> Campaign:
    call_command("import_collection", campaign=name, beir=str(path), stdout=io.StringIO())
    return Campaign.objects.get(name=name)


def _export(client: Any, version: QrelsVersion) -> bytes:
    response = client.get(f"/api/v1/qrels/{version.pk}/export/?format=beir")
    assert response.status_code == 200, response.content[:300]
    assert response["Content-Type"] == "application/zip"
    assert response["X-Qrels-SHA256"] == version.content_hash
    assert "beir.zip" in response["Content-Disposition"]
    return b"".join(response.streaming_content)


def _files(zipped: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(zipped)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


@pytest.mark.django_db
def test_a_golden_set_exports_as_the_files_it_came_from(
    tmp_path: Path, api_client_for: Any, researcher: Any
) -> None:
    campaign = _import("Golden", _beir_folder(tmp_path / "in"))
    assert Topic.objects.get(campaign=campaign, qid="q1").tags == ["physics"]
    assert Document.objects.get(campaign=campaign, docid="d1").metadata == {"year": "1999"}
    version = QrelsVersion.objects.get(campaign=campaign)
    zipped = _export(api_client_for(researcher), version)
    files = _files(zipped)
    assert list(files) == ["corpus.jsonl", "queries.jsonl", "qrels/test.tsv", "pooljudge.json"]
    assert files["corpus.jsonl"] == CORPUS
    assert files["queries.jsonl"] == QUERIES
    assert files["qrels/test.tsv"] == QRELS
    meta = json.loads(files["pooljudge.json"])
    assert meta["qrels"]["version"] == 1 and meta["qrels"]["judgments"] == 3
    assert meta["qrels"]["sha256"] == version.content_hash
    # the version's hash is over its TREC lines, sorted: anyone can check it from the tsv
    trec = "".join(
        f"{q} 0 {d} {g}\n" for q, d, g in (r.split("\t") for r in QRELS.decode().splitlines()[1:])
    )
    assert hashlib.sha256(trec.encode()).hexdigest() == version.content_hash
    for name in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"):
        assert meta["files_sha256"][name] == hashlib.sha256(files[name]).hexdigest()
    # the same bytes at every export: no date, no order left to the database
    assert _export(api_client_for(researcher), version) == zipped


@pytest.mark.django_db
def test_the_round_trip_through_import_collection_is_byte_stable(
    tmp_path: Path, api_client_for: Any, admin_user: Any
) -> None:
    client = api_client_for(admin_user)
    first = _import("Golden", _beir_folder(tmp_path / "in"))
    zipped = _export(client, QrelsVersion.objects.get(campaign=first))
    (tmp_path / "golden.zip").write_bytes(zipped)
    second = _import("Golden again", tmp_path / "golden.zip")
    again = _export(client, QrelsVersion.objects.get(campaign=second))
    assert again == zipped
    assert Document.objects.filter(campaign=second).count() == 3
    assert Topic.objects.filter(campaign=second).count() == 3


@pytest.mark.django_db
def test_manage_py_exports_a_zip_or_a_folder_beir_tools_read(tmp_path: Path) -> None:
    _import("Golden", _beir_folder(tmp_path / "in"))
    call_command(
        "export_qrels",
        campaign="Golden",
        format="beir",
        output=str(tmp_path / "g.zip"),
        stderr=io.StringIO(),
    )
    out = tmp_path / "unpacked"
    err = io.StringIO()
    call_command("export_qrels", campaign="Golden", format="beir", output=f"{out}/", stderr=err)
    assert "3 judgments" in err.getvalue() and "BEIR" in err.getvalue()
    assert (out / "corpus.jsonl").read_bytes() == CORPUS
    assert (out / "qrels" / "test.tsv").read_bytes() == QRELS
    assert _files((tmp_path / "g.zip").read_bytes())["queries.jsonl"] == QUERIES
    with pytest.raises(CommandError, match="give it with -o"):
        call_command("export_qrels", campaign="Golden", format="beir")


@pytest.mark.django_db
def test_import_collection_takes_beir_files_with_json_runs(tmp_path: Path) -> None:
    folder = _beir_folder(tmp_path / "in")
    run = tmp_path / "dense.json"
    run.write_text(json.dumps({"q1": {"d1": 0.9, "d3": 0.4}, "q2": {"d2": 0.7, "d1": 0.1}}))
    call_command(
        "import_collection",
        campaign="Golden",
        beir=str(folder),
        runs=[str(run)],
        stdout=io.StringIO(),
    )
    ranked = RankedList.objects.get(run__tag="dense", topic__qid="q1")
    assert ranked.docid_list() == ["d1", "d3"]
    with pytest.raises(CommandError, match=r"not a BEIR folder: no qrels/dev\.tsv"):
        call_command(
            "import_collection",
            campaign="Other",
            beir=str(folder),
            beir_split="dev",
            stdout=io.StringIO(),
        )
    with pytest.raises(CommandError, match="not with --topics"):
        call_command(
            "import_collection",
            campaign="Other",
            beir=str(folder),
            topics=str(folder / "queries.jsonl"),
            stdout=io.StringIO(),
        )


@pytest.mark.django_db
def test_a_bad_beir_file_is_named_and_nothing_is_stored(tmp_path: Path) -> None:
    folder = _beir_folder(tmp_path / "in")
    (folder / "corpus.jsonl").write_bytes(CORPUS + b'{"_id": "d4", "title": "no text"}\n')
    with pytest.raises(CommandError) as caught:
        _import("Golden", folder)
    assert "corpus.jsonl" in str(caught.value) and "line 4" in str(caught.value)
    assert not Campaign.objects.filter(name="Golden").exists()


@pytest.mark.django_db
def test_a_sampled_version_and_an_annotator_are_refused(
    tmp_path: Path, api_client_for: Any, admin_user: Any, annotator: Any
) -> None:
    campaign = _import("Golden", _beir_folder(tmp_path / "in"))
    version = QrelsVersion.objects.get(campaign=campaign)
    url = f"/api/v1/qrels/{version.pk}/export/?format=beir"
    assert api_client_for(annotator).get(url).status_code == 403
    assert api_client_for(None).get(url).status_code in (401, 403)
    assert api_client_for(admin_user).get(url).status_code == 200
    version.design = {"strategy": "stratified"}  # a sampled version (stored ones never change)
    with pytest.raises(InvalidInput) as caught:
        beir_zip(version)
    assert "sample_eval" in caught.value.problems[0].message


@pytest.mark.django_db
def test_a_version_of_passages_exports_its_chunkings_passages_as_the_corpus(
    tmp_path: Path, api_client_for: Any, admin_user: Any
) -> None:
    from judging.assessments.services import qrels_import
    from judging.workflows.passages import chunking_made

    campaign = _import("Golden", _beir_folder(tmp_path / "in"))
    chunking_made(campaign=campaign, name="para", spec="paragraph")
    version = qrels_import(campaign=campaign, data=b"q1 0 d1#para-0 2\nq1 0 d1#para-1 0\n")
    files = _files(_export(api_client_for(admin_user), version))
    corpus = [json.loads(line) for line in files["corpus.jsonl"].splitlines()]
    assert corpus[:2] == [
        {"_id": "d1#para-0", "title": "Sails", "text": "Light pushes the sail."},
        {"_id": "d1#para-1", "title": "Sails", "text": "Slowly."},
    ]
    assert len(corpus) == 4  # d1's two paragraphs, d2's and d3's one each
    assert json.loads(files["pooljudge.json"])["corpus"] == {
        "chunking": "para",
        "spec": "paragraph(min_chars=0)",
    }
    mixed = qrels_import(campaign=campaign, data=b"q1 0 d1#para-0 2\nq1 0 d3 0\n")
    refused = api_client_for(admin_user).get(f"/api/v1/qrels/{mixed.pk}/export/?format=beir")
    assert refused.status_code == 400
    assert "one BEIR corpus cannot hold them apart" in refused.json()["problems"][0]["message"]
