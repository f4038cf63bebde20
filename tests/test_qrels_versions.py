"""Qrels versions: consensus snapshots, content hashing, immutability, TREC export (API and
``export_qrels``), diffs between versions, and a lossless export/import round trip."""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from judging.assessments.models import Judgment, QrelsEntry, QrelsVersion
from judging.campaigns.models import Campaign
from judging.workflows.qrels import qrels_imported

pytestmark = pytest.mark.django_db

# (qid, docid) -> the grades of the annotators who judged it (scale 0-2), and the consensus
# worked out by hand: one annotator -> their grade; several -> the lower median, sorted[(n-1)//2].
JUDGED: dict[tuple[str, str], list[int]] = {
    ("401", "doc-a"): [2],  # single annotator
    ("401", "doc-b"): [0, 2],  # even split: the lower median, 0
    ("401", "doc-c"): [0, 1, 2],  # median 1
    ("401", "doc-d"): [0, 2],  # adjudicated to 2 below
    ("402", "doc-e"): [2, 2, 0],  # median 2
    ("402", "doc-f"): [0, 1, 2, 2],  # lower median of four: 1
    ("403", "doc-g"): [1],
}
ADJUDICATED = {("401", "doc-d"): 2}
CONSENSUS = {
    ("401", "doc-a"): 2,
    ("401", "doc-b"): 0,
    ("401", "doc-c"): 1,
    ("401", "doc-d"): 2,
    ("402", "doc-e"): 2,
    ("402", "doc-f"): 1,
    ("403", "doc-g"): 1,
}
EXPORT = (
    "401 0 doc-a 2\n"
    "401 0 doc-b 0\n"
    "401 0 doc-c 1\n"
    "401 0 doc-d 2\n"
    "402 0 doc-e 2\n"
    "402 0 doc-f 1\n"
    "403 0 doc-g 1\n"
)


@pytest.fixture
def annotators(make_user: Callable[..., Any]) -> list[Any]:
    return [make_user(f"judge-{n}", "annotator") for n in range(4)]


def set_grade(campaign: Campaign, annotator: Any, qid: str, docid: str, grade: int) -> None:
    """An annotator's current judgment (as the judging queue leaves it)."""
    Judgment.objects.update_or_create(
        topic=campaign.topics.get(qid=qid),
        docid=docid,
        annotator=annotator,
        defaults={"campaign": campaign, "grade": grade},
    )


@pytest.fixture
def judged(campaign: Campaign, annotators: list[Any], admin_user: Any, api_client_for: Any) -> Any:
    for (qid, docid), grades in JUDGED.items():
        for annotator, grade in zip(annotators, grades, strict=False):
            set_grade(campaign, annotator, qid, docid, grade)
    admin = api_client_for(admin_user)
    for (qid, docid), grade in ADJUDICATED.items():
        r = admin.post(
            f"/api/v1/campaigns/{campaign.pk}/adjudications/",
            {"topic": qid, "docid": docid, "grade": grade},
            format="json",
        )
        assert r.status_code == 201, r.content
    return campaign


def publish(client: Any, campaign: Campaign, note: str = "") -> Any:
    return client.post(
        f"/api/v1/campaigns/{campaign.pk}/qrels/publish/", {"note": note}, format="json"
    )


def entries(version_id: int) -> dict[tuple[str, str], int]:
    return {
        (q, d): g
        for q, d, g in QrelsEntry.objects.filter(version_id=version_id).values_list(
            "topic__qid", "docid", "grade"
        )
    }


def export_text(client: Any, version_id: int, slash: str = "/") -> str:
    r = client.get(f"/api/v1/qrels/{version_id}/export{slash}")
    assert r.status_code == 200, r
    return b"".join(r.streaming_content).decode()


def test_publishing_snapshots_the_consensus_grade_of_each_item(
    judged: Campaign, admin_user: Any, api_client_for: Any
) -> None:
    r = publish(api_client_for(admin_user), judged, note="round 1")
    assert r.status_code == 201
    body = r.json()
    assert body["number"] == 1 and body["source"] == "published" and body["note"] == "round 1"
    assert entries(body["id"]) == CONSENSUS
    assert body["num_judgments"] == 7
    assert body["num_relevant"] == 6  # grade >= 1 (the campaign's threshold)


def test_the_content_hash_is_the_sha256_of_the_trec_export(
    judged: Campaign, admin_user: Any, api_client_for: Any
) -> None:
    admin = api_client_for(admin_user)
    version = publish(admin, judged).json()
    expected = hashlib.sha256(EXPORT.encode()).hexdigest()
    assert version["content_hash"] == expected
    r = admin.get(f"/api/v1/qrels/{version['id']}/export/")
    assert r["X-Content-SHA256"] == expected
    assert b"".join(r.streaming_content).decode() == EXPORT


def test_publishing_again_without_a_change_returns_the_same_version(
    judged: Campaign, admin_user: Any, api_client_for: Any
) -> None:
    admin = api_client_for(admin_user)
    first = publish(admin, judged).json()
    again = publish(admin, judged)
    assert again.status_code == 200
    assert again.json()["id"] == first["id"] and again.json()["number"] == 1
    assert QrelsVersion.objects.filter(campaign=judged).count() == 1


def test_a_published_version_never_changes(
    judged: Campaign, annotators: list[Any], admin_user: Any, api_client_for: Any
) -> None:
    admin = api_client_for(admin_user)
    v1 = publish(admin, judged).json()
    # a third annotator grades doc-b 2: [0, 2, 2] -> median 2
    set_grade(judged, annotators[2], "401", "doc-b", 2)
    assert entries(v1["id"]) == CONSENSUS
    v2 = publish(admin, judged)
    assert v2.status_code == 201 and v2.json()["number"] == 2
    assert entries(v2.json()["id"]) == {**CONSENSUS, ("401", "doc-b"): 2}
    # v1 still exports and hashes as before
    assert export_text(admin, v1["id"]) == EXPORT
    assert QrelsVersion.objects.get(pk=v1["id"]).content_hash == v1["content_hash"]
    # and the API refuses to change or delete a version (409: it is stored, hence immutable)
    url = f"/api/v1/qrels/{v1['id']}/"
    assert admin.patch(url, {"note": "edited"}, format="json").status_code == 409
    assert admin.put(url, {"note": "edited"}, format="json").status_code == 409
    assert admin.delete(url).status_code == 409


def test_the_export_is_served_with_and_without_a_trailing_slash(
    judged: Campaign, admin_user: Any, researcher: Any, annotator: Any, api_client_for: Any
) -> None:
    version = publish(api_client_for(admin_user), judged).json()
    client = api_client_for(researcher)
    assert export_text(client, version["id"], "/") == EXPORT
    assert export_text(client, version["id"], "") == EXPORT
    # qrels are results: annotators do not read them
    assert api_client_for(annotator).get(f"/api/v1/qrels/{version['id']}/export").status_code == 403


def test_export_qrels_writes_the_latest_version_or_the_one_asked_for(
    judged: Campaign, annotators: list[Any], admin_user: Any, api_client_for: Any, tmp_path: Path
) -> None:
    admin = api_client_for(admin_user)
    publish(admin, judged)
    set_grade(judged, annotators[0], "403", "doc-h", 0)
    v2 = publish(admin, judged).json()
    latest = export_text(admin, v2["id"])
    assert latest == EXPORT + "403 0 doc-h 0\n"

    out = io.StringIO()
    call_command("export_qrels", "--campaign", judged.name, stdout=out)
    assert out.getvalue() == latest
    path = tmp_path / "v1.qrels"
    call_command(
        "export_qrels", "--campaign", str(judged.pk), "--version", "1", "-o", str(path),
        stderr=io.StringIO(),
    )  # fmt: skip
    assert path.read_text() == EXPORT
    with pytest.raises(CommandError, match="no qrels version 9"):
        call_command("export_qrels", "--campaign", judged.name, "--version", "9")
    with pytest.raises(CommandError, match="no campaign"):
        call_command("export_qrels", "--campaign", "nope")


def test_export_qrels_says_so_when_nothing_was_published(campaign: Campaign) -> None:
    with pytest.raises(CommandError, match="no qrels version yet"):
        call_command("export_qrels", "--campaign", campaign.name)


def test_the_diff_lists_added_removed_and_changed_judgments(
    judged: Campaign, admin_user: Any, researcher: Any, annotator: Any, api_client_for: Any
) -> None:
    publish(api_client_for(admin_user), judged)
    # v2: doc-a dropped, doc-b regraded 0 -> 1, doc-h new; the rest as in v1
    v2_text = EXPORT.replace("401 0 doc-a 2\n", "").replace("doc-b 0", "doc-b 1")
    v2 = qrels_imported(campaign=judged, data=(v2_text + "403 0 doc-h 2\n").encode())
    client = api_client_for(researcher)
    r = client.get(f"/api/v1/qrels/{v2.pk}/diff/?against=1")
    assert r.status_code == 200
    assert r.json() == {
        "version": 2,
        "against": 1,
        "added": [{"topic": "403", "docid": "doc-h", "grade": 2}],
        "removed": [{"topic": "401", "docid": "doc-a", "grade": 2}],
        "changed": [{"topic": "401", "docid": "doc-b", "old": 0, "new": 1}],
        "summary": {"added": 1, "removed": 1, "changed": 1},
    }
    assert client.get(f"/api/v1/qrels/{v2.pk}/diff/?against=x").status_code == 400
    assert client.get(f"/api/v1/qrels/{v2.pk}/diff/?against=9").status_code == 404
    assert api_client_for(annotator).get(f"/api/v1/qrels/{v2.pk}/diff/?against=1").status_code == (
        403
    )


def test_exporting_then_importing_gives_identical_content(
    judged: Campaign, admin_user: Any, api_client_for: Any, tmp_path: Path
) -> None:
    admin = api_client_for(admin_user)
    v1 = publish(admin, judged).json()
    path = tmp_path / "exported.qrels"
    call_command("export_qrels", "--campaign", judged.name, "-o", str(path), stderr=io.StringIO())
    call_command("import_qrels", "--campaign", judged.name, str(path), stdout=io.StringIO())
    by_command = QrelsVersion.objects.get(campaign=judged, number=2)
    assert by_command.source == "imported"
    assert by_command.content_hash == v1["content_hash"]
    assert entries(by_command.pk) == entries(v1["id"])
    upload = SimpleUploadedFile("v1.qrels", export_text(admin, v1["id"]).encode())
    r = admin.post(f"/api/v1/campaigns/{judged.pk}/qrels/", {"file": upload}, format="multipart")
    assert r.status_code == 201, r.content
    assert r.json()["number"] == 3 and r.json()["content_hash"] == v1["content_hash"]
    assert entries(r.json()["id"]) == CONSENSUS


def test_an_unsorted_file_with_negative_grades_round_trips_losslessly(
    campaign: Campaign, admin_user: Any, api_client_for: Any
) -> None:
    # negative grades mean "pooled, not sampled" (a sampled version of one stratum, "1"); the
    # docids sort as text, not numbers
    original = "403 0 doc10 1\n401 0 doc9 -1\n401 0 doc10 2\n402 0 x 0\n"
    canonical = "401 0 doc10 2\n401 0 doc9 -1\n402 0 x 0\n403 0 doc10 1\n"
    stored = "401 0 doc10 1 2\n401 0 doc9 1 -1\n402 0 x 1 0\n403 0 doc10 1 1\n"
    v1 = qrels_imported(campaign=campaign, data=original.encode())
    assert v1.content_hash == hashlib.sha256(stored.encode()).hexdigest()
    admin = api_client_for(admin_user)
    assert export_text(admin, v1.pk) == stored
    exported = export_text(admin, v1.pk, "/?format=trec")
    assert exported == canonical
    v2 = qrels_imported(campaign=campaign, data=exported.encode())
    assert v2.content_hash == v1.content_hash
    assert qrels_imported(campaign=campaign, data=stored.encode()).content_hash == v1.content_hash
    assert (
        entries(v2.pk)
        == entries(v1.pk)
        == {
            ("401", "doc10"): 2,
            ("401", "doc9"): -1,
            ("402", "x"): 0,
            ("403", "doc10"): 1,
        }
    )


def test_disagreements_list_the_items_graded_differently_with_their_adjudication(
    judged: Campaign, annotators: list[Any], admin_user: Any, api_client_for: Any
) -> None:
    body = api_client_for(admin_user).get(f"/api/v1/campaigns/{judged.pk}/disagreements/").json()
    split = {k: gs for k, gs in JUDGED.items() if len(set(gs)) > 1}
    assert body["count"] == len(split) == 5
    got = {(r["topic"], r["docid"]): r for r in body["results"]}
    assert set(got) == set(split)
    for key, grades in split.items():
        names = [a.username for a in annotators]
        assert got[key]["grades"] == dict(zip(names, grades, strict=False))
        assert got[key]["spread"] == max(grades) - min(grades)
        assert got[key]["adjudicated"] == ADJUDICATED.get(key)
