"""Chunkings, passages and carried qrels through the API (issue 33, points 1-2)."""

from __future__ import annotations

import json
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile

from judging.campaigns.models import Campaign
from judging.campaigns.services import documents_import

TEXT = "First part is here.\n\nSecond part answers it."
DOCS = json.dumps({"docid": "d1", "title": "T", "text": TEXT}).encode()


def test_chunkings_passages_and_carried_qrels(
    api_client_for: Any, admin_user: Any, researcher: Any, campaign: Campaign
) -> None:
    documents_import(campaign=campaign, data=DOCS)
    admin = api_client_for(admin_user)
    url = f"/api/v1/campaigns/{campaign.pk}/chunkings/"
    made = admin.post(url, {"name": "para", "chunker": "paragraph"}, format="json")
    assert made.status_code == 201, made.json()
    assert made.json()["spec"] == "paragraph(min_chars=0)" and made.json()["num_passages"] == 2
    own = b"docid\tpassage_id\tstart\tend\nd1\twhole\t0\t%d\n" % len(TEXT)
    upload = SimpleUploadedFile("passages.tsv", own)
    team = admin.post(url, {"name": "team", "file": upload}, format="multipart")
    assert team.status_code == 201, team.json()
    bad = admin.post(url, {"name": "x", "chunker": "fixed(size=0)"}, format="json")
    assert bad.status_code == 400 and "size" in bad.json()["problems"][0]["message"]
    taken = admin.post(url, {"name": "para", "chunker": "fixed"}, format="json")
    assert taken.status_code == 409
    reader = api_client_for(researcher)
    listed = reader.get(url).json()
    assert [c["name"] for c in listed] == ["para", "team"]
    passages = reader.get(f"/api/v1/chunkings/{listed[0]['id']}/passages/").json()
    assert [(p["passage_id"], p["text"]) for p in passages["results"]] == [
        ("d1#para-0", "First part is here."),
        ("d1#para-1", "Second part answers it."),
    ]
    assert reader.post(url, {"name": "y", "chunker": "paragraph"}, format="json").status_code == 403
    # the team's whole-document passage judged relevant, carried to the paragraphs
    qrels = SimpleUploadedFile("qrels.txt", b"401 0 d1#whole 2\n")
    imported = admin.post(
        f"/api/v1/campaigns/{campaign.pk}/qrels/", {"file": qrels}, format="multipart"
    )
    assert imported.status_code == 201, imported.json()
    version = imported.json()["id"]
    carried = admin.post(
        f"/api/v1/qrels/{version}/carry/", {"chunking": "para", "min_share": 0.4}, format="json"
    )
    assert carried.status_code == 201, carried.json()
    derivation = carried.json()["derivation"]
    assert derivation["base"] == 1 and derivation["chunking"] == "para"
    assert "at least 40%" in derivation["rule"]
    # 19 and 23 of the 44 characters: each over 40%
    assert derivation["overall"]["relevant"] == 2 and derivation["lost_topics"] == []
    unknown = admin.post(f"/api/v1/qrels/{version}/carry/", {"chunking": "nope"}, format="json")
    assert unknown.status_code == 400 and "nope" in unknown.json()["problems"][0]["message"]
    assert reader.post(f"/api/v1/qrels/{version}/carry/", {"chunking": "para"}).status_code == 403
    documents = admin.post(f"/api/v1/qrels/{version}/documents/")
    assert documents.status_code == 201, documents.json()
    assert documents.json()["derivation"]["chunking"] is None
    assert documents.json()["num_judgments"] == 1
    # the progress page states each derived version's rule and coverage
    from django.test import Client

    page = Client()
    page.force_login(admin_user)
    html = page.get(f"/manage/{campaign.pk}/").content.decode()
    assert "carried to chunking <b>para</b>: 2 relevant, 0 non-relevant, 0 left unjudged" in html
    assert "0 topics lost their relevant judgments" in html
    assert "v1 at document level." in html and "at least 40%" in html
