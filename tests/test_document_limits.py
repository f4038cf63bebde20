"""Stored documents are bounded and listed without their text (issue 29, point 21): a 0.2 MB
gzip became one 200 MB document (the worker peaked at 1.3 GB) and every 1,000-row document list
returned 210 MB.

- A document whose text is over ``POOLJUDGE_MAX_DOCUMENT_CHARS`` is refused, naming its docid
  and size, in every format; as every problem of an import, nothing of the file is stored. The
  reader drops what it reads beyond a bound on the document, so memory does not grow with it.
- ``GET /api/v1/campaigns/{id}/documents/`` lists documents without their text; ``include=text``
  lists them with it, in pages of at most ``POOLJUDGE_MAX_TEXT_PAGE_SIZE``, streamed.
"""

from __future__ import annotations

import gzip
import json
import tracemalloc
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from judging.campaigns.models import Document
from judging.campaigns.services import documents_check, documents_import
from judging.core.errors import InvalidInput
from tests.knobs import override_knobs

pytestmark = pytest.mark.django_db

LIMIT = 1000


def jsonl(*docs: tuple[str, str]) -> bytes:
    return "".join(
        json.dumps({"docid": d, "title": f"t {d}", "text": t}) + "\n" for d, t in docs
    ).encode()


def trec(*docs: tuple[str, str]) -> bytes:
    return "".join(
        f"<DOC>\n<DOCNO> {d} </DOCNO>\n<TEXT>\n{t}\n</TEXT>\n</DOC>\n" for d, t in docs
    ).encode()


def tsv(*docs: tuple[str, str]) -> bytes:
    return ("docid\ttext\n" + "".join(f"{d}\t{t}\n" for d, t in docs)).encode()


def smart(*docs: tuple[str, str]) -> bytes:
    return "".join(f".I {d}\n.T\ntitle {d}\n.W\n{t}\n" for d, t in docs).encode()


FORMATS = {"jsonl": jsonl, "trec": trec, "tsv": tsv, "smart": smart}


@override_knobs(max_document_chars=LIMIT)
@pytest.mark.parametrize("fmt", list(FORMATS))
def test_a_document_over_the_limit_is_refused_naming_its_docid_and_size(
    campaign: Any, fmt: str
) -> None:
    data = FORMATS[fmt](("7", "fits " * 100), ("8", "x" * (LIMIT + 1)), ("9", "y" * LIMIT))
    with pytest.raises(InvalidInput) as refused:
        documents_import(campaign=campaign, data=data, fmt=fmt)
    problems = [str(p) for p in refused.value.problems]
    assert len(problems) == 1, problems
    assert "'8'" in problems[0] and f"{LIMIT + 1:,} characters" in problems[0], problems
    assert f"{LIMIT:,}" in problems[0] and "POOLJUDGE_MAX_DOCUMENT_CHARS" in problems[0]
    assert not Document.objects.filter(campaign=campaign).exists()  # nothing of the file


@override_knobs(max_document_chars=LIMIT)
def test_a_document_at_the_limit_is_stored(campaign: Any) -> None:
    summary = documents_import(campaign=campaign, data=jsonl(("1", "é" * LIMIT)), fmt="jsonl")
    assert summary.created == 1
    assert len(Document.objects.get(campaign=campaign, docid="1").text) == LIMIT


@override_knobs(max_document_chars=LIMIT)
def test_the_upload_answers_400_naming_the_document(
    campaign: Any, api_client_for: Any, admin_user: Any
) -> None:
    upload = SimpleUploadedFile("docs.jsonl.gz", gzip.compress(jsonl(("big", "z" * 50_000))))
    r = api_client_for(admin_user).post(
        f"/api/v1/campaigns/{campaign.pk}/documents/", {"file": upload}, format="multipart"
    )
    assert r.status_code == 400
    problem = r.json()["problems"][0]
    assert problem["line"] == 1 and "'big'" in problem["message"]
    assert "50,000 characters" in problem["message"]


@override_knobs(max_document_chars=LIMIT)
@pytest.mark.parametrize("fmt", ["jsonl", "trec", "smart"])
def test_the_reader_drops_an_enormous_document_as_it_reads_it(fmt: str) -> None:
    """A 16 MB document (a few KB of gzip) is refused without ever being held: the reader keeps
    at most a bounded head of it (12 bytes per allowed character and 1 MiB)."""
    size = 16 * 1024**2
    line = "w " * 40 + "\n"  # TREC and SMART documents come in lines
    text = (line * (size // len(line))) if fmt != "jsonl" else "w" * size
    data = gzip.compress(FORMATS[fmt](("huge", text), ("small", "fine")))
    del text
    tracemalloc.start()
    try:
        with pytest.raises(InvalidInput) as refused:
            documents_check(data=data, fmt=fmt)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * 1024**2, f"peak {peak:,} bytes"
    problems = [str(p) for p in refused.value.problems]
    assert len(problems) == 1 and f"{LIMIT:,} characters" in problems[0], problems
    if fmt != "jsonl":  # a JSON line's docid is inside the dropped line
        assert "'huge'" in problems[0], problems


# --- the list ---------------------------------------------------------------------------------


@pytest.fixture
def stored(campaign: Any) -> Any:
    Document.objects.bulk_create(
        Document(campaign=campaign, docid=f"D{i:02}", title=f"title {i}", text=f"text {i} " * 50)
        for i in range(30)
    )
    return campaign


def documents_url(campaign: Any, query: str = "") -> str:
    return f"/api/v1/campaigns/{campaign.pk}/documents/{query}"


def test_the_list_has_no_text_by_default(stored: Any, api_client_for: Any, researcher: Any) -> None:
    r = api_client_for(researcher).get(documents_url(stored, "?limit=1000"))
    assert r.status_code == 200
    body = r.json()
    assert body["count"] == 30 and len(body["results"]) == 30
    assert all("text" not in d for d in body["results"])
    assert body["results"][0]["docid"] == "D00" and body["results"][0]["title"] == "title 0"
    assert b"text 0" not in r.content


@override_knobs(max_text_page_size=10)
def test_include_text_streams_pages_of_their_own_size(
    stored: Any, api_client_for: Any, researcher: Any
) -> None:
    client = api_client_for(researcher)
    r = client.get(documents_url(stored, "?include=text"))
    assert r.status_code == 200 and r.streaming
    assert r["Content-Type"].startswith("application/json")
    body = json.loads(r.getvalue())
    assert body["count"] == 30 and len(body["results"]) == 10  # the text pages' size
    assert body["results"][0] == {
        "id": Document.objects.get(campaign=stored, docid="D00").pk,
        "docid": "D00",
        "title": "title 0",
        "text": "text 0 " * 50,
        "url": "",
        "metadata": {},
    }
    assert (
        body["previous"] is None and "offset=10" in body["next"] and "include=text" in body["next"]
    )
    last = json.loads(client.get(documents_url(stored, "?include=text&offset=25")).getvalue())
    assert [d["docid"] for d in last["results"]] == [f"D{i}" for i in range(25, 30)]
    assert last["next"] is None and "offset=15" in last["previous"]
    one = json.loads(client.get(documents_url(stored, "?include=text&docid=D07")).getvalue())
    assert one["count"] == 1 and one["results"][0]["text"] == "text 7 " * 50
    too_many = client.get(documents_url(stored, "?include=text&limit=11"))
    assert too_many.status_code == 400 and too_many.json()["problems"][0]["location"] == "limit"


@pytest.mark.parametrize("query", ["?include=body", "?include=", "?include=text&include=url"])
def test_a_bad_include_is_a_400_naming_it(
    stored: Any, api_client_for: Any, researcher: Any, query: str
) -> None:
    r = api_client_for(researcher).get(documents_url(stored, query))
    assert r.status_code == 400 and r.json()["problems"][0]["location"] == "include"


def test_annotators_and_strangers_get_no_text(
    stored: Any, api_client_for: Any, annotator: Any
) -> None:
    assert api_client_for(annotator).get(documents_url(stored, "?include=text")).status_code == 403
    assert api_client_for(None).get(documents_url(stored, "?include=text")).status_code == 401
