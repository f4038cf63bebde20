"""Pooled documents without text: listed per pool version, imported alone from a collection
file (the rest of the file ignored), served once they arrive; the queue says how many wait."""

from __future__ import annotations

import gzip
import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client

from judging.assessments import queue
from judging.assessments.models import JudgingSlot
from judging.campaigns.models import Document
from judging.pools.models import PoolDocument, PoolVersion
from judging.pools.selectors import missing_text_counts, missing_text_documents, missing_text_topics
from judging.workflows.documents import missing_documents_imported
from judging.workflows.pools import pool_requested
from judging.workflows.runs import run_submitted

pytestmark = pytest.mark.django_db

WAITING = "Pooljudge-Waiting-For-Text"

# One pooled run: "both" is pooled for topics 401 and 402; "t1" and "t2" have texts.
RUN = {"401": ["both", "m1", "t1"], "402": ["both", "m2", "t2"]}
# A later run, pooled into version 2: "m3" is new and has no text either.
NOVEL = {"401": ["m3", "t1"]}


def _results(ranked: dict[str, list[str]]) -> dict[str, dict[str, float]]:
    return {q: {d: float(10 - i) for i, d in enumerate(ds)} for q, ds in ranked.items()}


def _jsonl(*docids: str) -> bytes:
    return b"".join(
        json.dumps({"docid": d, "title": f"title {d}", "text": f"text of {d}"}).encode() + b"\n"
        for d in docids
    )


@pytest.fixture
def waiting(campaign: Any, researcher: Any, as_committed: Any) -> Any:
    """Pool v1 of RUN: texts only for t1 and t2, so both, m1 and m2 wait."""
    run_submitted(campaign=campaign, owner=researcher, tag="sysA", results=_results(RUN))
    Document.objects.create(campaign=campaign, docid="t1", text="text one")
    Document.objects.create(campaign=campaign, docid="t2", text="text two")
    with as_committed():
        pool_requested(campaign=campaign, strategy="depth", depth=3)
    return campaign


def _version(campaign: Any, number: int) -> PoolVersion:
    return PoolVersion.objects.get(campaign=campaign, number=number)


def _rows(version: PoolVersion) -> list[dict[str, Any]]:
    return missing_text_topics(version, list(missing_text_documents(version)))


def _admin_client(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


# --- listed per version ---------------------------------------------------------------------


def test_documents_without_text_are_listed_per_version_with_their_topics(
    waiting: Any, researcher: Any, as_committed: Any
) -> None:
    v1 = _version(waiting, 1)
    assert _rows(v1) == [
        {"docid": "both", "topics": ["401", "402"], "count": 2},
        {"docid": "m1", "topics": ["401"], "count": 1},
        {"docid": "m2", "topics": ["402"], "count": 1},
    ]
    run_submitted(
        campaign=waiting, owner=researcher, tag="novel", results=_results(NOVEL), pooled=True
    )
    with as_committed():
        pool_requested(campaign=waiting, strategy="depth", depth=3)
    v2 = _version(waiting, 2)
    assert [r["docid"] for r in _rows(v2)] == ["both", "m1", "m2", "m3"]
    counts = {c["number"]: c for c in missing_text_counts(waiting)}
    assert [c["number"] for c in missing_text_counts(waiting)] == [2, 1]  # newest first
    assert (counts[1]["documents"], counts[1]["pairs"]) == (3, 4)
    assert (counts[2]["documents"], counts[2]["pairs"]) == (4, 5)
    assert counts[1]["at_build"] == 4 and counts[2]["at_build"] == 5


# --- importing just the missing ones ----------------------------------------------------------


def test_an_import_stores_only_the_missing_documents_and_they_are_served(
    waiting: Any, annotator: Any
) -> None:
    # the annotator judges what has text; then nothing is left for now
    for _ in range(2):
        lease = queue.lease_next(campaign=waiting, annotator=annotator)
        assert lease is not None and lease.slot.docid in {"t1", "t2"}
        queue.judgment_record(lease_id=lease.pk, annotator=annotator, grade=1)
    assert queue.lease_next(campaign=waiting, annotator=annotator) is None

    data = _jsonl("zz-not-pooled", "m1", "t1", "both", "m2", "aa-not-pooled")
    summary = missing_documents_imported(campaign=waiting, sources=[(data, "coll.jsonl")])

    assert (summary.wanted, summary.stored, summary.still_missing) == (3, 3, 0)
    assert (summary.read, summary.ignored) == (6, 3)
    docs = dict(Document.objects.filter(campaign=waiting).values_list("docid", "text"))
    # t1 kept its own text (not replaced by the file's); documents nobody pooled: not stored
    assert docs == {
        "t1": "text one",
        "t2": "text two",
        "both": "text of both",
        "m1": "text of m1",
        "m2": "text of m2",
    }
    assert not PoolDocument.objects.filter(version__campaign=waiting, has_text=False).exists()
    assert not JudgingSlot.objects.filter(campaign=waiting, has_text=False).exists()
    served = set()
    while (lease := queue.lease_next(campaign=waiting, annotator=annotator)) is not None:
        served.add((lease.slot.topic.qid, lease.slot.docid))
        queue.judgment_record(lease_id=lease.pk, annotator=annotator, grade=0)
    assert served == {("401", "both"), ("402", "both"), ("401", "m1"), ("402", "m2")}


def test_documents_the_file_lacks_stay_listed_and_are_counted(waiting: Any) -> None:
    summary = missing_documents_imported(
        campaign=waiting, sources=[(_jsonl("m1", "other"), "part.jsonl")]
    )
    assert (summary.wanted, summary.stored, summary.still_missing) == (3, 1, 2)
    assert summary.missing_docids == ["both", "m2"]
    assert "1 of 3 documents without text found and stored; 2 still missing" in summary.sentence()
    assert [r["docid"] for r in _rows(_version(waiting, 1))] == ["both", "m2"]


def test_with_nothing_waiting_the_files_are_not_read(campaign: Any) -> None:
    summary = missing_documents_imported(campaign=campaign, sources=[(b"{not json\n", "x")])
    assert (summary.wanted, summary.read, summary.stored) == (0, 0, 0)
    assert summary.sentence().startswith("no pooled document is waiting for its text")
    assert not Document.objects.filter(campaign=campaign).exists()


def test_a_bad_record_anywhere_in_the_file_stores_nothing(waiting: Any) -> None:
    from judging.core.errors import InvalidInput

    data = _jsonl("m1") + b'{"docid": "x y", "text": "bad id"}\n' + _jsonl("m2")
    with pytest.raises(InvalidInput) as caught:
        missing_documents_imported(campaign=waiting, sources=[(data, "bad.jsonl")])
    assert [p.line for p in caught.value.problems] == [2]
    assert not Document.objects.filter(docid__in=["m1", "m2"]).exists()
    assert JudgingSlot.objects.filter(campaign=waiting, has_text=False).count() == 4


def test_a_wanted_document_in_two_files_is_refused(waiting: Any) -> None:
    from judging.core.errors import InvalidInput

    with pytest.raises(InvalidInput) as caught:
        missing_documents_imported(
            campaign=waiting, sources=[(_jsonl("m1"), "a.jsonl"), (_jsonl("m2", "m1"), "b.jsonl")]
        )
    assert "docid m1 is also in a.jsonl" in caught.value.problems[0].message
    assert caught.value.problems[0].location == "b.jsonl"
    assert not Document.objects.filter(docid__in=["m1", "m2"]).exists()


# --- the queue says how many wait -------------------------------------------------------------


def test_the_queue_says_how_many_documents_wait_for_text(
    waiting: Any, annotator: Any, admin_user: Any, api_client_for: Any
) -> None:
    api = api_client_for(annotator)
    for _ in range(2):
        lease = api.post(f"/api/v1/campaigns/{waiting.pk}/leases/").json()
        api.post(f"/api/v1/leases/{lease['id']}/judgment/", {"grade": 1}, format="json")
    empty = api.post(f"/api/v1/campaigns/{waiting.pk}/leases/")
    assert empty.status_code == 204 and empty[WAITING] == "4"  # both x2, m1, m2

    page = Client()
    page.force_login(annotator)
    html = page.get(f"/annotate/{waiting.pk}/done/").content.decode()
    assert "<strong>4</strong> more documents are waiting for their text" in html
    for leak in ("sysA", "rank", "score", "system"):
        assert leak not in html

    progress = api_client_for(admin_user).get(f"/api/v1/campaigns/{waiting.pk}/judging-progress/")
    body = progress.json()
    assert (body["waiting_text"], body["documents_waiting_text"]) == (4, 3)
    admin_html = _admin_client(admin_user).get(f"/manage/{waiting.pk}/").content.decode()
    assert 'id="waiting-text">4<' in admin_html
    assert f"/manage/{waiting.pk}/pools/1/missing-text/" in admin_html

    missing_documents_imported(campaign=waiting, sources=[(_jsonl("both", "m1", "m2"), "c")])
    lease = api.post(f"/api/v1/campaigns/{waiting.pk}/leases/")
    assert lease.status_code == 201 and lease.json()["document"]["text"] == "text of both"
    assert (
        api_client_for(admin_user)
        .get(f"/api/v1/campaigns/{waiting.pk}/judging-progress/")
        .json()["waiting_text"]
        == 0
    )


def test_the_done_page_says_nothing_of_text_when_none_waits(campaign: Any, annotator: Any) -> None:
    page = Client()
    page.force_login(annotator)
    html = page.get(f"/annotate/{campaign.pk}/done/").content.decode()
    assert "waiting for" not in html and "is judged" in html


# --- the admin's page -------------------------------------------------------------------------


def test_the_admin_page_lists_them_and_imports_only_them_from_an_upload(
    waiting: Any, admin_user: Any
) -> None:
    client = _admin_client(admin_user)
    url = f"/manage/{waiting.pk}/pools/1/missing-text/"
    html = client.get(url).content.decode()
    assert 'id="missing-documents">3<' in html
    assert '<code>both</code></td><td class="num">2</td><td>401, 402</td>' in html

    txt = client.get(f"/manage/{waiting.pk}/pools/1/missing-text.txt")
    assert txt["Content-Type"].startswith("text/plain")
    assert b"".join(txt.streaming_content) == b"both\nm1\nm2\n"  # type: ignore[attr-defined]

    upload = SimpleUploadedFile("coll.jsonl", _jsonl("m2", "elsewhere", "m1"))
    answer = client.post(url + "import/", {"file": upload, "format": "jsonl"}, follow=True)
    html = answer.content.decode()
    assert "2 of 3 documents without text found and stored; 1 still missing" in html
    assert "1 of the 3 documents read ignored (not waited for)" in html
    assert set(Document.objects.filter(campaign=waiting).values_list("docid", flat=True)) == {
        "t1",
        "t2",
        "m1",
        "m2",
    }
    assert 'id="missing-documents">1<' in html


def test_a_refused_upload_on_the_page_names_the_line_and_stores_nothing(
    waiting: Any, admin_user: Any
) -> None:
    client = _admin_client(admin_user)
    bad = SimpleUploadedFile("bad.jsonl", _jsonl("m1") + b"not json\n")
    html = client.post(
        f"/manage/{waiting.pk}/pools/1/missing-text/import/", {"file": bad}, follow=True
    ).content.decode()
    assert "Nothing was stored" in html and "line 2" in html
    assert not Document.objects.filter(campaign=waiting, docid="m1").exists()


def test_the_missing_text_pages_are_for_admins_only(
    waiting: Any, annotator: Any, researcher: Any
) -> None:
    base = f"/manage/{waiting.pk}/pools/1/missing-text"
    for user in (None, annotator, researcher):
        client = Client()
        if user is not None:
            client.force_login(user)
        # signed out: to the login; signed in without the role: the site's own 403 page
        for path in (base + "/", base + ".txt"):
            answer = client.get(path)
            if user is None:
                assert answer.status_code == 302 and "/login/" in answer["Location"]
            else:
                assert answer.status_code == 403
        upload = SimpleUploadedFile("c.jsonl", _jsonl("m1"))
        refused = client.post(base + "/import/", {"file": upload}).status_code
        assert refused == (302 if user is None else 403)
    assert not Document.objects.filter(campaign=waiting, docid="m1").exists()


def test_an_unknown_pool_version_is_a_404(waiting: Any, admin_user: Any) -> None:
    assert (
        _admin_client(admin_user).get(f"/manage/{waiting.pk}/pools/9/missing-text/").status_code
        == 404
    )


# --- the API ----------------------------------------------------------------------------------


def test_the_api_lists_them_per_document_in_pages_and_as_a_file(
    waiting: Any, admin_user: Any, api_client_for: Any
) -> None:
    api = api_client_for(admin_user)
    pool = _version(waiting, 1).pk
    first = api.get(f"/api/v1/pools/{pool}/missing-text/?limit=2").json()
    assert first["count"] == 3 and first["next"]
    assert first["results"] == [
        {"docid": "both", "topics": ["401", "402"], "count": 2},
        {"docid": "m1", "topics": ["401"], "count": 1},
    ]
    assert api.get(first["next"]).json()["results"] == [
        {"docid": "m2", "topics": ["402"], "count": 1}
    ]
    txt = api.get(f"/api/v1/pools/{pool}/missing-text/?format=txt")
    assert b"".join(txt.streaming_content) == b"both\nm1\nm2\n"
    bad = api.get(f"/api/v1/pools/{pool}/missing-text/?format=xml")
    assert bad.status_code == 400 and "format" in bad.json()["detail"]


def test_the_api_denies_the_list_and_the_import_to_non_admins(
    waiting: Any, annotator: Any, researcher: Any, api_client_for: Any
) -> None:
    pool = _version(waiting, 1).pk
    for user, status in ((None, 401), (annotator, 403), (researcher, 403)):
        api = api_client_for(user)
        assert api.get(f"/api/v1/pools/{pool}/missing-text/").status_code == status
        upload = SimpleUploadedFile("c.jsonl", _jsonl("m1"))
        answer = api.post(
            f"/api/v1/campaigns/{waiting.pk}/documents/?only_missing=1",
            {"file": upload},
            format="multipart",
        )
        assert answer.status_code == status
    assert not Document.objects.filter(campaign=waiting, docid="m1").exists()


def test_the_api_imports_only_the_missing_documents_of_several_files(
    waiting: Any, admin_user: Any, api_client_for: Any
) -> None:
    api = api_client_for(admin_user)
    url = f"/api/v1/campaigns/{waiting.pk}/documents/"
    files = [
        SimpleUploadedFile("a.jsonl", _jsonl("m1", "x1")),
        SimpleUploadedFile("b.jsonl.gz", gzip.compress(_jsonl("x2", "both"))),
    ]
    answer = api.post(url, {"file": files, "only_missing": "1"}, format="multipart")
    assert answer.status_code == 201, answer.json()
    assert answer.json() == {
        "wanted": 3,
        "stored": 2,
        "empty": 0,
        "empty_docids": [],
        "still_missing": 1,
        "still_missing_docids": ["m2"],
        "read": 4,
        "ignored": 2,
        "files": ["a.jsonl", "b.jsonl.gz"],
    }
    assert not Document.objects.filter(docid__in=["x1", "x2"]).exists()
    again = api.post(
        url + "?only_missing=true",
        {"file": SimpleUploadedFile("a.jsonl", _jsonl("m1", "x1"))},
        format="multipart",
    )
    assert again.status_code == 200 and again.json()["stored"] == 0
    bad = api.post(
        url + "?only_missing=1",
        {"file": SimpleUploadedFile("c.jsonl", _jsonl("m2") + b"{oops\n")},
        format="multipart",
    )
    assert bad.status_code == 400
    assert bad.json()["problems"][0]["line"] == 2
    assert not Document.objects.filter(docid="m2").exists()


def test_the_openapi_schema_describes_the_endpoints(admin_user: Any, api_client_for: Any) -> None:
    schema = api_client_for(admin_user).get("/api/v1/schema/?format=json")
    text = schema.content.decode()
    assert "only_missing" in text and "MissingTextDocument" in text and WAITING in text


# --- the command ------------------------------------------------------------------------------


def test_the_command_imports_only_the_missing_documents(waiting: Any, tmp_path: Path) -> None:
    a = tmp_path / "a.jsonl"
    a.write_bytes(_jsonl("m1", "unpooled"))
    b = tmp_path / "b.jsonl.gz"
    b.write_bytes(gzip.compress(_jsonl("m2")))
    out = StringIO()
    call_command(
        "import_documents", str(a), str(b), campaign=waiting.name, only_missing=True, stdout=out
    )
    assert "2 of 3 documents without text found and stored; 1 still missing" in out.getvalue()
    assert "still without text: both" in out.getvalue()
    assert not Document.objects.filter(campaign=waiting, docid="unpooled").exists()
    with pytest.raises(CommandError, match="no built pool version 7"):
        call_command(
            "import_documents", str(a), campaign=waiting.name, only_missing=True, pool_version=7
        )
    with pytest.raises(CommandError, match="line 1"):
        bad = tmp_path / "bad.jsonl"
        bad.write_bytes(b"{nope\n")
        call_command("import_documents", str(bad), campaign=waiting.name, only_missing=True)


# --- a real collection: Cranfield (SMART, CRLF, documents 471 and 995 empty) ------------------


def test_cranfield_missing_texts_come_from_the_real_file_and_empty_ones_are_said(
    campaign: Any,
    researcher: Any,
    annotator: Any,
    shared_data: Path,
    as_committed: Any,
) -> None:
    cran = shared_data / "cranfield" / "cran.all.1400"
    # 471 and 995 are empty in the file; 1 and 1400 are ordinary; 99999 is not in Cranfield
    run_submitted(
        campaign=campaign,
        owner=researcher,
        tag="cran-run",
        results=_results({"401": ["1", "471", "995", "1400", "99999"]}),
    )
    with as_committed():
        pool_requested(campaign=campaign, strategy="depth", depth=5)
    summary = missing_documents_imported(campaign=campaign, sources=[(cran, "cran.all.1400")])

    assert (summary.wanted, summary.stored, summary.still_missing) == (5, 4, 1)
    assert summary.missing_docids == ["99999"]
    assert (summary.read, summary.ignored) == (1400, 1396)
    assert summary.empty == ["471", "995"] and summary.empty_count == 2
    assert "2 stored empty (no title or text in the file: 471, 995)" in summary.sentence()
    assert Document.objects.filter(campaign=campaign).count() == 4
    first = Document.objects.get(campaign=campaign, docid="1")
    assert first.title.startswith("experimental investigation of the aerodynamics of a")
    assert "\r" not in first.text and first.text
    # the empty ones are served, and the judging page says they have no text
    page = Client()
    page.force_login(annotator)
    seen = []
    while (lease := queue.lease_next(campaign=campaign, annotator=annotator)) is not None:
        seen.append(lease.slot.docid)
        if lease.slot.docid == "471":
            html = page.get(f"/annotate/{campaign.pk}/").content.decode()
            assert "(This document has no text.)" in html
        queue.judgment_record(lease_id=lease.pk, annotator=annotator, grade=0)
    assert sorted(seen) == ["1", "1400", "471", "995"]
    assert queue.lease_next(campaign=campaign, annotator=annotator) is None
    assert [r["docid"] for r in _rows(_version(campaign, 1))] == ["99999"]


def test_cranfield_gzipped_through_the_api_streams_and_keeps_only_the_wanted(
    campaign: Any,
    researcher: Any,
    admin_user: Any,
    api_client_for: Any,
    shared_data: Path,
    as_committed: Any,
) -> None:
    raw = (shared_data / "cranfield" / "cran.all.1400").read_bytes()
    run_submitted(
        campaign=campaign,
        owner=researcher,
        tag="cran-run",
        results=_results({"402": ["12", "184", "700"]}),
    )
    with as_committed():
        pool_requested(campaign=campaign, strategy="depth", depth=3)
    answer = api_client_for(admin_user).post(
        f"/api/v1/campaigns/{campaign.pk}/documents/",
        {"file": SimpleUploadedFile("cran.all.1400.gz", gzip.compress(raw)), "only_missing": "1"},
        format="multipart",
    )
    assert answer.status_code == 201, answer.json()
    body = answer.json()
    assert (body["stored"], body["still_missing"], body["read"]) == (3, 0, 1400)
    assert sorted(Document.objects.filter(campaign=campaign).values_list("docid", flat=True)) == [
        "12",
        "184",
        "700",
    ]
