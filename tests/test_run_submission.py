"""POST /api/v1/campaigns/{id}/runs/: the whole run is validated first; nothing half-stored."""

from __future__ import annotations

import gzip
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from judging.campaigns.models import Document, RankedList, Run, UnknownTopicPolicy
from tests.knobs import override_knobs

pytestmark = pytest.mark.django_db

GOOD = b"""401 Q0 d1 1 2.5 bm25
401 Q0 d2 2 2.5 bm25
401 Q0 d3 3 1.0 bm25
402 Q0 d9 1 7 bm25
"""


def submit(client: Any, campaign: Any, data: bytes, name: str = "run.txt", **fields: Any) -> Any:
    body = {"file": SimpleUploadedFile(name, data), **fields}
    return client.post(f"/api/v1/campaigns/{campaign.pk}/runs/", body, format="multipart")


def assert_nothing_stored() -> None:
    assert Run.objects.count() == 0
    assert RankedList.objects.count() == 0


def test_a_valid_run_file_is_stored_with_per_topic_counts(
    api_client_for: Any, researcher: Any, campaign: Any
) -> None:
    response = submit(api_client_for(researcher), campaign, GOOD)
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["tag"] == "bm25"
    assert body["topic_counts"] == {"401": 3, "402": 1}
    assert body["num_entries"] == 4 and body["num_topics"] == 2
    assert body["owner"] == "rita-researcher"
    # trec_eval order: score descending, ties by docid descending (d2 before d1).
    ranked = RankedList.objects.get(run_id=body["id"], topic__qid="401")
    assert ranked.docid_list() == ["d2", "d1", "d3"]
    assert ranked.score_array().tolist() == [2.5, 2.5, 1.0]


def test_a_gzipped_run_file_is_accepted(
    api_client_for: Any, researcher: Any, campaign: Any
) -> None:
    response = submit(api_client_for(researcher), campaign, gzip.compress(GOOD), "run.txt.gz")
    assert response.status_code == 201
    assert response.json()["topic_counts"] == {"401": 3, "402": 1}


def test_a_json_run_is_accepted(api_client_for: Any, researcher: Any, campaign: Any) -> None:
    response = api_client_for(researcher).post(
        f"/api/v1/campaigns/{campaign.pk}/runs/",
        {"tag": "dense", "results": {"401": {"a": 0.5, "b": 0.9}, "403": {"c": 1}}},
        format="json",
    )
    assert response.status_code == 201, response.json()
    assert response.json()["topic_counts"] == {"401": 2, "403": 1}
    assert RankedList.objects.get(topic__qid="401").docid_list() == ["b", "a"]


def test_every_problem_is_listed_with_its_line_and_nothing_is_stored(
    api_client_for: Any, researcher: Any, campaign: Any
) -> None:
    bad = (
        b"401 Q0 d1 1 2.5 bm25\n"
        b"401 Q0 d2 2 abc bm25\n"  # score not a number
        b"401 Q0 d1 3 1.0 bm25\n"  # duplicate docid in topic 401
        b"402 Q0 d4 1 1.0\n"  # 5 fields
        b"402 Q0 d5 1 1.0 bm25\n"
    )
    response = submit(api_client_for(researcher), campaign, bad)
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "invalid_input"
    assert body["problem_count"] == 3
    problems = {p["line"]: p["message"] for p in body["problems"]}
    assert problems[2] == "score 'abc' is not a number"
    assert "duplicate docid 'd1'" in problems[3] and "line 1" in problems[3]
    assert "expected 6 fields" in problems[4] and "found 5" in problems[4]
    assert_nothing_stored()


def test_an_empty_file_is_refused(api_client_for: Any, researcher: Any, campaign: Any) -> None:
    response = submit(api_client_for(researcher), campaign, b"# just a comment\n\n", tag="x")
    assert response.status_code == 400
    assert "empty" in response.json()["problems"][0]["message"]
    assert_nothing_stored()


def test_bad_encoding_is_refused_with_its_line(
    api_client_for: Any, researcher: Any, campaign: Any
) -> None:
    response = submit(
        api_client_for(researcher), campaign, b"401 Q0 d1 1 1 t\n401 Q0 d\xff 2 0.5 t\n"
    )
    assert response.status_code == 400
    (problem,) = response.json()["problems"]
    assert problem["line"] == 2 and "UTF-8" in problem["message"]
    assert_nothing_stored()


def test_unknown_topics_are_refused_under_the_reject_policy(
    api_client_for: Any, researcher: Any, campaign: Any
) -> None:
    data = GOOD + b"999 Q0 d1 1 1.0 bm25\n999 Q0 d2 2 0.5 bm25\n"
    response = submit(api_client_for(researcher), campaign, data)
    assert response.status_code == 400
    body = response.json()
    (problem,) = body["problems"]
    assert problem["line"] == 5
    assert "topic '999' is not in campaign 'Test campaign'" in problem["message"]
    assert "2 line(s)" in problem["message"]
    assert_nothing_stored()


def test_unknown_topics_are_dropped_and_counted_under_the_ignore_policy(
    api_client_for: Any, researcher: Any, campaign: Any
) -> None:
    campaign.unknown_topic_policy = UnknownTopicPolicy.IGNORE
    campaign.save()
    data = GOOD + b"999 Q0 d1 1 1.0 bm25\n"
    response = submit(api_client_for(researcher), campaign, data)
    assert response.status_code == 201
    assert response.json()["dropped_lines"] == 1
    assert response.json()["topic_counts"] == {"401": 3, "402": 1}


def test_a_tag_of_ones_own_is_a_conflict(
    api_client_for: Any, researcher: Any, campaign: Any
) -> None:
    client = api_client_for(researcher)
    assert submit(client, campaign, GOOD).status_code == 201
    again = submit(client, campaign, GOOD.replace(b"d9", b"d8"))
    assert again.status_code == 409
    assert again.json()["detail"] == (
        "you already have a run tagged 'bm25' in campaign 'Test campaign'"
    )
    assert Run.objects.count() == 1 and RankedList.objects.count() == 2


def test_several_tags_in_one_file_need_an_explicit_tag(
    api_client_for: Any, researcher: Any, campaign: Any
) -> None:
    data = b"401 Q0 d1 1 1.0 a\n401 Q0 d2 2 0.5 b\n"
    refused = submit(api_client_for(researcher), campaign, data)
    assert refused.status_code == 400
    assert "2 distinct tags (a, b)" in refused.json()["problems"][0]["message"]
    assert_nothing_stored()
    named = submit(api_client_for(researcher), campaign, data, tag="merged")
    assert named.status_code == 201 and named.json()["tag"] == "merged"


@override_knobs(max_upload_bytes=1000)
def test_a_file_over_the_size_limit_is_413(
    api_client_for: Any, researcher: Any, campaign: Any
) -> None:
    big = b"".join(b"401 Q0 doc%05d %d %d.0 big\n" % (i, i, 1000 - i) for i in range(200))
    response = submit(api_client_for(researcher), campaign, big)
    assert response.status_code == 413
    assert response.json()["error"] == "too_large"
    assert "the limit is 1,000 bytes" in response.json()["detail"]
    assert_nothing_stored()


@override_knobs(max_upload_bytes=4000)
def test_a_gzip_that_decompresses_over_the_limit_is_413(
    api_client_for: Any, researcher: Any, campaign: Any
) -> None:
    big = b"".join(b"401 Q0 doc%05d 1 1.0 big\n" % (i % 7) for i in range(1000))
    packed = gzip.compress(big)
    assert len(packed) < 4000 < len(big)
    response = submit(api_client_for(researcher), campaign, packed, "big.gz")
    assert response.status_code == 413
    assert "decompresses to more than 4,000 bytes" in response.json()["detail"]
    assert_nothing_stored()


def test_problems_are_capped_at_100_with_the_total(
    api_client_for: Any, researcher: Any, campaign: Any
) -> None:
    bad = b"".join(b"401 Q0 d%d 1 notanumber t\n" % i for i in range(250))
    body = submit(api_client_for(researcher), campaign, bad).json()
    assert body["problem_count"] == 250
    assert body["problems_shown"] == 100 and len(body["problems"]) == 100
    assert [p["line"] for p in body["problems"][:3]] == [1, 2, 3]
    assert_nothing_stored()


def test_json_runs_are_validated_whole(api_client_for: Any, researcher: Any, campaign: Any) -> None:
    response = api_client_for(researcher).post(
        f"/api/v1/campaigns/{campaign.pk}/runs/",
        {"tag": "j", "results": {"401": {"a": "high", "b": 1.0}, "402": [1, 2]}},
        format="json",
    )
    assert response.status_code == 400
    problems = {p["location"]: p["message"] for p in response.json()["problems"]}
    assert problems == {
        "results.401.a": "score 'high' is not a number (a JSON number, or one of "
        '"NaN", "Infinity", "-Infinity" as a string)',
        "results.402": "must be an object {docid: score}",
    }
    assert_nothing_stored()


def test_json_runs_take_nan_and_infinities_as_strings_as_a_file_takes_them(
    api_client_for: Any, researcher: Any, campaign: Any
) -> None:
    """As in a file (issue 13): NaN ranks last, infinities order as numbers, and both are said
    (JSON has no lines: the warnings give counts)."""
    results = {"401": {"a": "NaN", "b": 1.0, "c": "-Infinity", "d": "inf"}}
    response = api_client_for(researcher).post(
        f"/api/v1/campaigns/{campaign.pk}/runs/", {"tag": "j", "results": results}, format="json"
    )
    assert response.status_code == 201, response.content[:300]
    warnings = {w["message"].split(" (")[0]: w["count"] for w in response.json()["warnings"]}
    assert warnings == {"a NaN score": 1, "an infinite score": 2}
    run_id = response.json()["id"]
    stored = api_client_for(researcher).get(f"/api/v1/runs/{run_id}/download/")
    text = b"".join(stored.streaming_content).decode()
    assert [line.split()[2] for line in text.splitlines()] == ["d", "b", "c", "a"]
    # stored: the run's detail and its page say it later too
    detail = api_client_for(researcher).get(f"/api/v1/runs/{run_id}/").json()
    assert [w["count"] for w in detail["warnings"]] == [1, 2]
    browser = Client()
    browser.force_login(researcher)
    page = browser.get(f"/runs/{run_id}/").content.decode()
    assert "1 entry with a NaN score" in page and "2 entries with an infinite score" in page


def test_sending_both_a_file_and_json_is_refused(
    api_client_for: Any, researcher: Any, campaign: Any
) -> None:
    response = submit(api_client_for(researcher), campaign, GOOD, results='{"401": {"a": 1}}')
    assert response.status_code == 400
    assert "exactly one of 'file' or 'results'" in str(response.json())
    assert_nothing_stored()


def test_a_researcher_cannot_choose_pooling(
    api_client_for: Any, researcher: Any, campaign: Any
) -> None:
    response = submit(api_client_for(researcher), campaign, GOOD, pooled="false")
    assert response.status_code == 403
    assert_nothing_stored()


def test_the_stored_run_downloads_in_trec_format(
    api_client_for: Any, researcher: Any, campaign: Any
) -> None:
    client = api_client_for(researcher)
    run_id = submit(client, campaign, GOOD).json()["id"]
    text = b"".join(client.get(f"/api/v1/runs/{run_id}/download/").streaming_content).decode()
    assert text.splitlines() == [
        "401 Q0 d2 1 2.5 bm25",
        "401 Q0 d1 2 2.5 bm25",
        "401 Q0 d3 3 1.0 bm25",
        "402 Q0 d9 1 7.0 bm25",
    ]


def test_a_run_as_trec_eval_reads_it_is_stored_with_its_warnings(
    api_client_for: Any, researcher: Any, campaign: Any
) -> None:
    # NaN scores ranked last (ties by docid descending), infinities as numbers, fields after
    # the sixth ignored: stored, and each kind named with its lines in the answer
    data = (
        b"401 Q0 d1 1 NaN bm25\n"
        b"401 Q0 d2 2 1.5 bm25 reserved for future expansion\n"
        b"401 Q0 d3 3 -inf bm25\n"
        b"401 Q0 d4 4 nan bm25\n"
        b"402 Q0 d9 1 1e309 bm25\n"
    )
    client = api_client_for(researcher)
    response = submit(client, campaign, data)
    assert response.status_code == 201, response.json()
    body = response.json()
    nan = "a NaN score (ranked after every other document of its query)"
    inf = "an infinite score (out of range or inf, ordered as a number)"
    extra = "more than 6 fields (the fields after the sixth are ignored)"
    assert body["warnings"] == [
        {
            "kind": "read",
            "message": nan,
            "count": 2,
            "lines": [1, 4],
            "text": f"2 lines with {nan}: lines 1, 4",
        },
        {
            "kind": "read",
            "message": inf,
            "count": 2,
            "lines": [3, 5],
            "text": f"2 lines with {inf}: lines 3, 5",
        },
        {
            "kind": "read",
            "message": extra,
            "count": 1,
            "lines": [2],
            "text": f"1 line with {extra}: line 2",
        },
    ]
    assert body["topic_counts"] == {"401": 4, "402": 1}
    ranked = RankedList.objects.get(run_id=body["id"], topic__qid="401")
    assert ranked.docid_list() == ["d2", "d3", "d4", "d1"]
    text = b"".join(client.get(f"/api/v1/runs/{body['id']}/download/").streaming_content).decode()
    assert text.splitlines()[:4] == [
        "401 Q0 d2 1 1.5 bm25",
        "401 Q0 d3 2 -inf bm25",
        "401 Q0 d4 3 nan bm25",
        "401 Q0 d1 4 nan bm25",
    ]
    # a clean file: no warnings; what stays an error stays one, with its line
    assert submit(client, campaign, GOOD, tag="clean").json()["warnings"] == []
    bad = submit(client, campaign, b"401 Q0 d1 1 NaN x\n401 Q0 d1 2 nan(2) x\n")
    assert bad.status_code == 400
    assert [(p["line"], p["message"]) for p in bad.json()["problems"]] == [
        (2, "score 'nan(2)' is not a number"),
        (2, "duplicate docid 'd1' for query '401' (first on line 1)"),
    ]


# --- every problem at once, and what is stored with a warning (issue 29, point 15) ----------


def test_an_unknown_topic_is_listed_with_the_files_other_problems(
    api_client_for: Any, researcher: Any, campaign: Any
) -> None:
    data = (
        b"401 Q0 d1 1 2.5 bm25\n"
        b"401 Q0 d2 2 abc bm25\n"  # a score that is not a number
        b"999 Q0 d1 1 1.0 bm25\n"  # a topic the campaign does not have
        b"402 Q0 d9 1 7\n"  # 5 fields
        b"999 Q0 d2 2 0.5 bm25\n"
    )
    response = submit(api_client_for(researcher), campaign, data)
    assert response.status_code == 400
    body = response.json()
    assert body["problems"] == [
        {"line": 2, "message": "score 'abc' is not a number"},
        {
            "line": 3,
            "message": "topic '999' is not in campaign 'Test campaign' "
            "(2 line(s), first at line 3)",
        },
        {"line": 4, "message": "expected 6 fields (qid Q0 docid rank score tag), found 5"},
    ]
    assert (body["problem_count"], body["problems_shown"]) == (3, 3)
    assert body["detail"] == "the run file has 3 problem(s); nothing was stored"
    assert_nothing_stored()


@override_knobs(max_problems=2)
def test_unknown_topics_count_towards_the_cap_in_line_order(
    api_client_for: Any, researcher: Any, campaign: Any
) -> None:
    data = b"998 Q0 d1 1 1.0 t\n401 Q0 d2 2 x t\n401 Q0 d3 3 y t\n999 Q0 d1 1 1.0 t\n"
    body = submit(api_client_for(researcher), campaign, data).json()
    assert [p["line"] for p in body["problems"]] == [1, 2]
    assert "topic '998'" in body["problems"][0]["message"]
    assert (body["problem_count"], body["problems_shown"]) == (4, 2)


def test_under_the_ignore_policy_unknown_topics_are_no_problem_of_a_bad_file(
    api_client_for: Any, researcher: Any, campaign: Any
) -> None:
    campaign.unknown_topic_policy = UnknownTopicPolicy.IGNORE
    campaign.save()
    data = b"401 Q0 d1 1 x bm25\n999 Q0 d1 1 1.0 bm25\n"
    body = submit(api_client_for(researcher), campaign, data).json()
    assert body["problems"] == [{"line": 1, "message": "score 'x' is not a number"}]
    # unless no line names a topic of the campaign: nothing would be stored, said at once too
    refused = submit(api_client_for(researcher), campaign, b"998 Q0 d1 1 x t\n999 Q0 d1 1 1 t\n")
    assert refused.json()["problems"] == [
        {"message": "every line names a topic the campaign does not have (998, 999)"},
        {"line": 1, "message": "score 'x' is not a number"},
    ]


def test_a_json_run_lists_its_unknown_topics_with_its_other_problems(
    api_client_for: Any, researcher: Any, campaign: Any
) -> None:
    response = api_client_for(researcher).post(
        f"/api/v1/campaigns/{campaign.pk}/runs/",
        {"tag": "j", "results": {"401": {"a": "high"}, "999": {"b": 1.0}}},
        format="json",
    )
    assert response.status_code == 400
    problems = {p["location"]: p["message"] for p in response.json()["problems"]}
    assert problems == {
        "results.401.a": "score 'high' is not a number (a JSON number, or one of "
        '"NaN", "Infinity", "-Infinity" as a string)',
        "results.999": "topic '999' is not in campaign 'Test campaign' (1 line(s))",
    }
    assert_nothing_stored()


def _warnings(body: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [w for w in body["warnings"] if w["kind"] == kind]


def test_the_same_content_under_another_tag_is_stored_with_a_warning(
    api_client_for: Any, researcher: Any, campaign: Any
) -> None:
    client = api_client_for(researcher)
    first = submit(client, campaign, GOOD).json()
    assert first["warnings"] == []
    # the same file under another tag, the same lines with another tag column, the same
    # rankings as JSON: each the same content as the first run
    same_file = submit(client, campaign, GOOD, tag="bm25-again").json()
    renamed = submit(client, campaign, GOOD.replace(b" bm25\n", b" bm25-v2\n"), "v2.txt").json()
    as_json = client.post(
        f"/api/v1/campaigns/{campaign.pk}/runs/",
        {
            "tag": "bm25-json",
            "results": {"401": {"d1": 2.5, "d2": 2.5, "d3": 1.0}, "402": {"d9": 7}},
        },
        format="json",
    ).json()
    message = f"same content as run 'bm25' (id {first['id']}): the same documents and scores"
    for body in (same_file, renamed, as_json):
        assert _warnings(body, "same_content") == [
            {"kind": "same_content", "message": message, "count": 4, "lines": [], "text": message}
        ], body
    assert Run.objects.count() == 4  # stored all the same
    # stored with the run: its detail says it later too
    detail = client.get(f"/api/v1/runs/{renamed['id']}/").json()
    assert detail["warnings"] == renamed["warnings"]


def test_other_content_or_another_researchers_run_is_not_the_same_content(
    api_client_for: Any, researcher: Any, other_researcher: Any, campaign: Any
) -> None:
    submit(api_client_for(researcher), campaign, GOOD)
    one_score = submit(api_client_for(researcher), campaign, GOOD.replace(b" 7 ", b" 6 "), tag="b")
    assert one_score.json()["warnings"] == []
    # another researcher's runs are not named to them (nor is it said that one exists)
    theirs = submit(api_client_for(other_researcher), campaign, GOOD)
    assert theirs.status_code == 201 and theirs.json()["warnings"] == []


def test_docids_not_in_the_collection_are_warned_when_the_campaign_has_documents(
    api_client_for: Any, researcher: Any, campaign: Any
) -> None:
    client = api_client_for(researcher)
    no_documents = submit(client, campaign, GOOD).json()
    assert no_documents["warnings"] == []  # a campaign without documents: nothing to compare
    for docid in ("d1", "d3"):
        Document.objects.create(campaign=campaign, docid=docid)
    data = GOOD.replace(b"bm25", b"bm25b") + b"402 Q0 d2 2 1.0 bm25b\n"
    body = submit(client, campaign, data).json()
    message = "a docid not among the campaign's documents (2 docids, e.g. 'd2', 'd9')"
    assert _warnings(body, "unknown_docids") == [
        {
            "kind": "unknown_docids",
            "message": message,
            "count": 3,
            "lines": [],
            "text": f"3 entries with {message}",
        }
    ]
    assert Run.objects.get(pk=body["id"]).num_entries == 5  # stored all the same


def test_warnings_stored_before_they_had_kinds_are_the_readers(
    api_client_for: Any, researcher: Any, campaign: Any
) -> None:
    client = api_client_for(researcher)
    run_id = submit(client, campaign, GOOD).json()["id"]
    nan = "a NaN score (ranked after every other document of its query)"
    Run.objects.filter(pk=run_id).update(warnings=[{"message": nan, "count": 1, "lines": [3]}])
    assert client.get(f"/api/v1/runs/{run_id}/").json()["warnings"] == [
        {
            "kind": "read",
            "message": nan,
            "count": 1,
            "lines": [3],
            "text": f"1 line with {nan}: line 3",
        }
    ]
