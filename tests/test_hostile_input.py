"""Hostile files and records: every one a 400 naming the line (and the field), fast, with nothing
stored; the limits are settings; the real collections still import under them (issue 11)."""

from __future__ import annotations

import gzip
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError

from judging.assessments.models import QrelsEntry, QrelsVersion
from judging.campaigns.models import Campaign, Document, RankedList, Run, Topic
from judging.campaigns.services import run_submit
from judging.core.errors import InvalidInput as DomainInvalidInput
from judging.pools.models import PoolDocument, PoolState
from judging.workflows.pools import pool_requested
from metrics.io import Limits, read_qrels, read_run
from metrics.io.limits import id_problem
from tests.knobs import override_knobs

pytestmark = pytest.mark.django_db

Counts = dict[str, int]


def counts() -> Counts:
    """Rows of everything an upload or import could have stored."""
    models: list[Any] = [Run, RankedList, Topic, Document, QrelsVersion, QrelsEntry]
    return {m.__name__: m.objects.count() for m in models}


def run_lines(n: int = 2300, tag: str = "tag") -> list[str]:
    return [f"401 Q0 d{i} {i + 1} {100 - i * 0.01:.4f} {tag}" for i in range(n)]


def as_file(lines: list[str]) -> bytes:
    return ("\n".join(lines) + "\n").encode()


def post_run(client: Any, campaign: Campaign, data: bytes, **fields: Any) -> Any:
    body = {"file": SimpleUploadedFile("run.txt", data), **fields}
    return client.post(f"/api/v1/campaigns/{campaign.pk}/runs/", body, format="multipart")


def post_json_run(client: Any, campaign: Campaign, results: Any, tag: str = "j") -> Any:
    return client.post(
        f"/api/v1/campaigns/{campaign.pk}/runs/", {"tag": tag, "results": results}, format="json"
    )


def problems(response: Any) -> list[dict[str, Any]]:
    assert response.status_code == 400, response.content[:500]
    body = response.json()
    assert set(body) >= {"error", "detail"}
    return list(body["problems"])


@pytest.fixture
def client(api_client_for: Callable[[Any], Any], researcher: Any) -> Any:
    return api_client_for(researcher)


@pytest.fixture
def admin(api_client_for: Callable[[Any], Any], admin_user: Any) -> Any:
    return api_client_for(admin_user)


# --------------------------------------------------------------------------- 1: no worker pinned


def test_a_92_kb_run_with_a_50000_character_docid_is_refused_at_once_naming_the_line(
    client: Any, campaign: Campaign
) -> None:
    lines = run_lines(1500)
    lines[3] = f"401 Q0 {'x' * 50_000} 4 1.0 tag"
    data = as_file(lines)
    assert 90_000 < len(data) < 95_000
    before = counts()

    started = time.process_time()
    found = problems(post_run(client, campaign, data))
    elapsed = time.process_time() - started

    assert elapsed < 2.0  # was 189 s of CPU and 2.5 GB (a mask table of 6,250 x 50,001 words)
    assert found == [
        {
            "line": 4,
            "message": f"docid {'x' * 37 + '...'!r} is 50,000 bytes long (UTF-8); the limit is 256",
        }
    ]
    assert counts() == before


def test_a_1_mb_line_is_a_400_naming_the_line_not_a_memory_error(
    client: Any, campaign: Campaign
) -> None:
    lines = run_lines()
    lines[3] = f"401 Q0 d3 4 1.0 {'y' * (1 << 20)}"
    before = counts()

    started = time.process_time()
    found = problems(post_run(client, campaign, as_file(lines)))

    assert time.process_time() - started < 2.0
    length = len(lines[3])
    message = f"the line is {length:,} bytes long; the limit is 65,536"
    assert found == [{"line": 4, "message": message}]
    assert counts() == before


@override_knobs(max_line_bytes=100)
def test_the_line_limit_is_a_setting(client: Any, campaign: Campaign) -> None:
    lines = run_lines(5)
    lines[1] = "401 Q0 d1 2 99.99 " + "t" * 90
    found = problems(post_run(client, campaign, as_file(lines)))
    assert found[0] == {"line": 2, "message": "the line is 108 bytes long; the limit is 100"}


def test_the_reader_stays_linear_in_a_long_token_without_limits() -> None:
    # metrics' own tools read without limits: one wide docid must not cost rows x width^2
    lines = run_lines(1500)
    lines[3] = f"401 Q0 {'x' * 50_000} 4 1.0 tag"
    started = time.process_time()
    run = read_run(as_file(lines))
    assert time.process_time() - started < 3.0
    assert len(run) == 1500


def test_a_long_line_without_a_line_end_is_cut_while_read(tmp_path: Path) -> None:
    path = tmp_path / "r.gz"
    path.write_bytes(gzip.compress(b"401 Q0 d1 1 1.0 t\n401 Q0 " + b"z" * (8 << 20)))
    with pytest.raises(
        ValueError, match="line 2: the line is 8,388,615 bytes long; the limit is 1,000"
    ):
        read_run(path, limits=Limits(line_bytes=1000))


# --------------------------------------------------------------------------- 2: id limits


def test_a_300_character_docid_is_refused_at_submission_naming_the_line_and_field(
    client: Any, campaign: Campaign
) -> None:
    lines = run_lines(10)
    lines[6] = f"401 Q0 {'é' * 150} 7 1.0 tag"  # 150 characters, 300 bytes
    before = counts()
    found = problems(post_run(client, campaign, as_file(lines)))
    assert found[0]["line"] == 7
    assert (
        "docid" in found[0]["message"]
        and "300 bytes long (UTF-8); the limit is 256" in (found[0]["message"])
    )
    assert counts() == before


def test_the_default_docid_limit_is_256_bytes_and_such_a_docid_is_stored_whole(
    client: Any, campaign: Campaign
) -> None:
    """256 bytes pass (also as 128 two-byte characters), 257 are a 400 naming the line."""
    lines = run_lines(10)
    lines[2] = f"401 Q0 {'d' * 256} 3 1.0 tag"
    lines[3] = f"401 Q0 {'é' * 128} 4 1.0 tag"
    response = post_run(client, campaign, as_file(lines))
    assert response.status_code == 201, response.content[:300]
    run = Run.objects.get(pk=response.json()["id"])
    assert run.num_entries == 10
    lines[2] = f"401 Q0 {'d' * 257} 3 1.0 tag"
    found = problems(post_run(client, campaign, as_file(lines), tag="other"))
    assert (
        found[0]["line"] == 3 and "257 bytes long (UTF-8); the limit is 256" in found[0]["message"]
    )


def test_a_long_docid_or_qid_is_refused_in_a_json_run(client: Any, campaign: Campaign) -> None:
    before = counts()
    found = problems(post_json_run(client, campaign, {"401": {"d" * 257: 1.0, "ok": 2.0}}))
    assert found[0]["location"].startswith("results.401.ddd")
    assert "docid" in found[0]["message"] and "257 bytes long" in found[0]["message"]
    found = problems(post_json_run(client, campaign, {"4" * 300: {"a": 1.0}}))
    assert "qid" in found[0]["message"] and "300 bytes long" in found[0]["message"]
    assert counts() == before


@override_knobs(max_docid_bytes=8, max_qid_bytes=3)
def test_the_id_limits_are_settings(client: Any, campaign: Campaign) -> None:
    found = problems(post_run(client, campaign, b"401 Q0 abcdefghi 1 1.0 t\n4011 Q0 a 1 1 t\n"))
    assert [p["line"] for p in found] == [1, 2]
    assert "docid 'abcdefghi' is 9 bytes long (UTF-8); the limit is 8" in found[0]["message"]
    assert "qid '4011' is 4 bytes long (UTF-8); the limit is 3" in found[1]["message"]


def test_every_model_column_holds_the_largest_allowed_id() -> None:
    from django.apps import apps

    for model in apps.get_models():
        for field in model._meta.get_fields():
            length = getattr(field, "max_length", None)
            if field.name in ("docid", "qid", "tag") and length is not None:
                # the settings' maxima: POOLJUDGE_MAX_DOCID_BYTES <= 1024, qid and tag <= 255
                assert length >= (1024 if field.name == "docid" else 255), (
                    f"{model.__name__}.{field.name}"
                )


def test_the_id_limits_cannot_exceed_the_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    from django.core.exceptions import ImproperlyConfigured

    from judging.core.conf import Uploads

    monkeypatch.setenv("POOLJUDGE_MAX_DOCID_BYTES", "2000")
    with pytest.raises(ImproperlyConfigured, match="must be at most 1024"):
        Uploads.from_env()


def test_a_pool_build_succeeds_after_a_long_docid_was_refused(
    client: Any, campaign: Campaign, as_committed: Any
) -> None:
    """On PostgreSQL a 300-character docid that got in made every COPY of pools fail (run this
    file with DATABASE_URL=postgres://...; SQLite does not enforce the column length)."""
    bad = as_file([f"401 Q0 {'x' * 300} 1 2.0 long", "401 Q0 d1 2 1.0 long"])
    assert post_run(client, campaign, bad).status_code == 400
    good = as_file(["401 Q0 d1 1 2.0 good", "402 Q0 d2 1 1.0 good"])
    assert post_run(client, campaign, good).status_code == 201
    with as_committed():
        version, _ = pool_requested(campaign=campaign, depth=10)
    version.refresh_from_db()
    assert version.state == PoolState.BUILT
    assert sorted(PoolDocument.objects.filter(version=version).values_list("docid", flat=True)) == [
        "d1",
        "d2",
    ]


# --------------------------------------------------------------------------- 3: 400s, not 500s


def test_a_json_score_of_400_digits_is_infinite_as_in_a_file(
    client: Any, campaign: Campaign
) -> None:
    # out of a double's range: +infinity, as the file path (strtod) reads it; and said
    response = post_json_run(client, campaign, {"401": {"a": int("9" * 400), "b": 1}})
    assert response.status_code == 201, response.content[:300]
    assert [(w["count"], w["lines"]) for w in response.json()["warnings"]] == [(1, [])]
    assert "infinite" in response.json()["warnings"][0]["message"]


def test_a_5000_digit_rank_in_a_file_is_a_400_and_a_400_digit_score_is_infinite(
    client: Any, campaign: Campaign
) -> None:
    # the score is out of a double's range: +infinity, as strtod reads it (issue 13); the rank
    # is no integer trec_eval could hold
    data = as_file([f"401 Q0 a 1 {'9' * 400} t", f"401 Q0 b {'9' * 5000} 1.0 t"])
    found = problems(post_run(client, campaign, data))
    assert [(p["line"], p["message"][:5]) for p in found] == [(2, "rank ")]
    response = post_run(client, campaign, as_file([f"401 Q0 a 1 {'9' * 400} t"]))
    assert response.status_code == 201, response.content[:300]
    assert [(w["count"], w["lines"]) for w in response.json()["warnings"]] == [(1, [1])]


def test_a_nul_byte_in_a_docid_is_a_400_naming_it(client: Any, campaign: Campaign) -> None:
    before = counts()
    found = problems(post_run(client, campaign, b"401 Q0 d1 1 2.0 t\n401 Q0 d\x002 2 1.0 t\n"))
    assert found == [
        {
            "line": 2,
            "message": "docid 'd\\x002' contains a control character (U+0000 at character 2)",
        }
    ]
    found = problems(post_json_run(client, campaign, {"401": {"d\x00": 1.0}}))
    assert "control character (U+0000" in found[0]["message"]
    assert counts() == before


@pytest.mark.parametrize(
    ("tag", "where"),
    [("bad\x07tag", "U+0007 at character 4"), ("t\x7f", "U+007F"), ("t\u009bx", "U+009B")],
)
def test_control_characters_in_a_run_tag_are_refused_naming_the_tag(
    client: Any, campaign: Campaign, tag: str, where: str
) -> None:
    before = counts()
    given = problems(post_run(client, campaign, b"401 Q0 d1 1 2.0 t\n", tag=tag))
    assert given[0]["location"] == "tag" and where in given[0]["message"]
    in_file = problems(post_run(client, campaign, f"401 Q0 d1 1 2.0 {tag}\n".encode()))
    assert in_file[0]["line"] == 1 and f"tag {tag!r}"[:9] in in_file[0]["message"]
    assert where in in_file[0]["message"]
    assert counts() == before


def test_a_nul_or_an_over_long_group_or_description_of_a_run_is_a_400(
    client: Any, campaign: Campaign, researcher: Any
) -> None:
    before = counts()
    run = b"401 Q0 d1 1 2.0 t\n"
    found = problems(post_run(client, campaign, run, group="g" * 201, description="a\x00"))
    assert [p["location"] for p in found] == ["group", "description"]  # (the serializer's)
    # the service checks too, for the commands (import_run --group)
    with pytest.raises(DomainInvalidInput) as info:
        run_submit(
            campaign=campaign,
            owner=researcher,
            data=run,
            group="g" * 201,
            description="a\x00",
            pooled=True,
        )
    assert [str(p) for p in info.value.problems] == [
        "group: at most 200 characters (got 201)",
        "description: contains a NUL character",
    ]
    assert counts() == before


def test_a_nul_in_a_topic_title_or_a_document_text_is_a_400(admin: Any, campaign: Campaign) -> None:
    before = counts()
    topics = b'{"qid": "9", "title": "ok"}\n{"qid": "10", "title": "a\\u0000b"}\n'
    response = admin.post(
        f"/api/v1/campaigns/{campaign.pk}/topics/",
        {"file": SimpleUploadedFile("t.jsonl", topics)},
        format="multipart",
    )
    assert problems(response) == [
        {"line": 2, "message": "the title contains a NUL character (at character 2)"}
    ]
    docs = b'{"docid": "d1", "text": "fine"}\n{"docid": "d2", "text": "x\\u0000"}\n'
    response = admin.post(
        f"/api/v1/campaigns/{campaign.pk}/documents/",
        {"file": SimpleUploadedFile("d.jsonl", docs)},
        format="multipart",
    )
    assert problems(response) == [
        {"line": 2, "message": "the text contains a NUL character (at character 2)"}
    ]
    assert counts() == before


def test_over_long_title_qid_docid_and_url_on_import_are_400s_naming_the_line(
    admin: Any, campaign: Campaign
) -> None:
    before = counts()
    topics = "\n".join(
        json.dumps(row)
        for row in [
            {"qid": "9", "title": "fine"},
            {"qid": "10", "title": "t" * 1001},
            {"qid": "q" * 256, "title": "long id"},
        ]
    ).encode()
    response = admin.post(
        f"/api/v1/campaigns/{campaign.pk}/topics/",
        {"file": SimpleUploadedFile("t.jsonl", topics)},
        format="multipart",
    )
    found = problems(response)
    assert [p["line"] for p in found] == [2, 3]
    assert found[0]["message"] == "the title is 1,001 characters long; the limit is 1,000"
    assert "qid 'qqq" in found[1]["message"] and "256 bytes long" in found[1]["message"]
    docs = "\n".join(
        json.dumps(row)
        for row in [
            {"docid": "d" * 257, "text": "x"},
            {"docid": "d2", "text": "x", "url": "http://e.org/" + "u" * 2000},
        ]
    ).encode()
    response = admin.post(
        f"/api/v1/campaigns/{campaign.pk}/documents/",
        {"file": SimpleUploadedFile("d.jsonl", docs)},
        format="multipart",
    )
    found = problems(response)
    assert [p["line"] for p in found] == [1, 2]
    assert "docid 'ddd" in found[0]["message"]
    assert found[1]["message"] == "the url is 2,013 characters long; the limit is 2,000"
    assert counts() == before


def test_an_over_long_topics_line_is_refused_naming_it(admin: Any, campaign: Campaign) -> None:
    topics = b"<top>\n<num> 9\n<title> " + b"w " * 40_000 + b"\n</top>\n"
    response = admin.post(
        f"/api/v1/campaigns/{campaign.pk}/topics/",
        {"file": SimpleUploadedFile("t.trec", topics)},
        format="multipart",
    )
    message = "the line is 80,008 bytes long; the limit is 65,536"  # '<title> ' + 80,000
    assert {"line": 3, "message": message} in problems(response)


def test_a_qrels_grade_of_3_billion_is_a_400_and_a_clean_command_error(
    admin: Any, campaign: Campaign, tmp_path: Path
) -> None:
    before = counts()
    qrels = b"401 0 d1 1\n401 0 d2 3000000000\n"
    response = admin.post(
        f"/api/v1/campaigns/{campaign.pk}/qrels/",
        {"file": SimpleUploadedFile("q.txt", qrels)},
        format="multipart",
    )
    found = problems(response)
    assert found[0]["line"] == 2 and "grade 3000000000 is not on the scale" in found[0]["message"]
    path = tmp_path / "q.txt"
    path.write_bytes(qrels)
    with pytest.raises(CommandError, match=r"line 2: grade 3000000000 is not on the scale"):
        call_command("import_qrels", str(path), campaign=str(campaign.pk))
    path.write_bytes(b"401 0 d1 1\n401 0 d2 -3000000000\n")
    with pytest.raises(CommandError, match=r"grade -3000000000 is out of range"):
        call_command("import_qrels", str(path), campaign=str(campaign.pk))
    assert counts() == before


# --------------------------------------------------------------------------- 4: the scale


def test_qrels_grades_outside_the_campaigns_scale_are_refused_naming_line_and_grades(
    admin: Any, campaign: Campaign
) -> None:
    before = counts()
    qrels = b"401 0 d1 2\n401 0 d2 3\n402 0 d3 -1\n402 0 d4 7\n"
    response = admin.post(
        f"/api/v1/campaigns/{campaign.pk}/qrels/",
        {"file": SimpleUploadedFile("q.txt", qrels)},
        format="multipart",
    )
    allowed = "(allowed: 0, 1, 2, or a negative grade for pooled but unjudged)"
    assert problems(response) == [
        {"line": 2, "message": f"grade 3 is not on the scale {allowed}"},
        {"line": 4, "message": f"grade 7 is not on the scale {allowed}"},
    ]
    assert counts() == before


# --------------------------------------------------------------------------- 5: BOM


@pytest.mark.parametrize("packed", [False, True], ids=["plain", "gzip"])
def test_a_bom_at_the_start_of_a_run_or_qrels_file_is_dropped(
    client: Any, admin: Any, campaign: Campaign, packed: bool
) -> None:
    def body(data: bytes) -> bytes:
        data = b"\xef\xbb\xbf" + data
        return gzip.compress(data) if packed else data

    response = post_run(client, campaign, body(b"401 Q0 d1 1 2.0 bom\n402 Q0 d2 1 1.0 bom\n"))
    assert response.status_code == 201, response.json()
    assert response.json()["topic_counts"] == {"401": 1, "402": 1}
    response = admin.post(
        f"/api/v1/campaigns/{campaign.pk}/qrels/",
        {"file": SimpleUploadedFile("q.txt", body(b"401 0 d1 1\n"))},
        format="multipart",
    )
    assert response.status_code == 201, response.json()
    assert list(QrelsEntry.objects.values_list("topic__qid", flat=True)) == ["401"]


def test_a_bom_is_dropped_by_the_metrics_reader_too() -> None:
    assert read_run(b"\xef\xbb\xbf401 Q0 d1 1 2.0 t\n").qids == ("401",)
    assert read_qrels(gzip.compress(b"\xef\xbb\xbf401 0 d1 1\n")).qids == ("401",)


# --------------------------------------------------------------------------- 6: batch import


def _batch(tmp_path: Path, bad: bool) -> list[str]:
    files = {
        "input.one": "401 Q0 d1 1 2.0 one\n",
        "input.two": "401 Q0 d1 1 x two\n" if bad else "401 Q0 d1 1 2.0 two\n",
        "input.three": "402 Q0 d2 1 1.0 three\n",
        "input.four": f"401 Q0 {'z' * 300} 1 1.0 four\n" if bad else "403 Q0 d3 1 1.0 four\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return [str(tmp_path / name) for name in files]


def test_a_batch_import_with_bad_files_stores_nothing_and_reports_every_bad_file(
    tmp_path: Path, campaign: Campaign, researcher: Any
) -> None:
    before = counts()
    paths = _batch(tmp_path, bad=True)
    with pytest.raises(CommandError) as info:
        call_command("import_run", *paths, campaign=str(campaign.pk), owner=researcher.username)
    message = str(info.value)
    assert "2 of 4 file(s) are not valid; nothing was stored" in message
    assert f"{paths[1]}: " in message and "line 1: score 'x' is not a number" in message
    assert f"{paths[3]}: " in message and "300 bytes long" in message
    assert counts() == before


def test_a_batch_import_run_again_skips_the_runs_it_stored(
    tmp_path: Path, campaign: Campaign, researcher: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = _batch(tmp_path, bad=False)
    call_command("import_run", *paths, campaign=str(campaign.pk), owner=researcher.username)
    stored = counts()
    assert stored["Run"] == 4
    capsys.readouterr()

    call_command("import_run", *paths, campaign=str(campaign.pk), owner=researcher.username)

    out = capsys.readouterr().out
    assert out.count("already stored identically, skipped") == 4
    assert counts() == stored
    # a different file under a tag already used is still a conflict, and stores nothing
    (tmp_path / "input.one").write_text("401 Q0 d9 1 2.0 one\n")
    with pytest.raises(CommandError, match="you already have a run tagged 'one'"):
        call_command("import_run", *paths, campaign=str(campaign.pk), owner=researcher.username)
    assert counts() == stored


# --------------------------------------------------------------------------- the real data


def test_the_real_collections_read_under_the_default_limits(shared_data: Path) -> None:
    limits = Limits(line_bytes=64 * 1024, qid_bytes=255, docid_bytes=255, tag_bytes=255)
    for name in ("robust03", "trec2011-medical"):
        root = shared_data / name
        qrels = read_qrels(root / "qrels.txt", limits=limits, scale=[0, 1, 2])
        assert len(qrels.qids) > 30
        for path in sorted((root / "runs").glob("input.*.gz")):
            assert len(read_run(path, limits=limits)) > 0, path  # (NaN scores too, unmodified)


def test_real_runs_qrels_topics_and_documents_import_with_the_limits(
    shared_data: Path, admin_user: Any, researcher: Any
) -> None:
    root = shared_data / "robust03"
    call_command("create_campaign", "robust-limits")
    c = Campaign.objects.get(name="robust-limits")
    qids = sorted({line.split()[0] for line in (root / "qrels.txt").open()})
    Topic.objects.bulk_create(Topic(campaign=c, qid=q, title=f"topic {q}") for q in qids)
    runs = sorted((root / "runs").glob("input.*.gz"))[:4]
    call_command("import_run", *map(str, runs), campaign=str(c.pk), owner=researcher.username)
    call_command("import_qrels", str(root / "qrels.txt"), campaign=str(c.pk))
    assert Run.objects.filter(campaign=c).count() == 4
    assert QrelsEntry.objects.filter(version__campaign=c).count() == 128_796
    cran = shared_data / "cranfield"
    call_command("create_campaign", "cran-limits")
    call_command("import_documents", str(cran / "cran.all.1400"), campaign="cran-limits")
    call_command("import_topics", str(cran / "cran.qry"), campaign="cran-limits")
    assert Document.objects.filter(campaign__name="cran-limits").count() == 1400
    assert Topic.objects.filter(campaign__name="cran-limits").count() == 225


def test_id_problem_counts_bytes_not_characters() -> None:
    assert id_problem("docid", "é" * 127, 255) is None
    assert id_problem("docid", "é" * 128, 255) == (
        f"docid {'é' * 37 + '...'!r} is 256 bytes long (UTF-8); the limit is 255"
    )


@pytest.mark.parametrize("junk", [b"<URL> x\n", b"<TITLE x\n", b"<!-- x\n", b"<TEXT x\n"])
def test_a_trec_document_full_of_unclosed_tags_is_read_in_linear_time(junk: bytes) -> None:
    from judging.campaigns.formats import parse_documents

    body = b"<DOC>\n<DOCNO> d1 </DOCNO>\n" + junk * 100_000 + b"</DOC>\n"  # 0.8 MB
    started = time.process_time()
    (document,) = parse_documents(body, fmt="trec")
    assert time.process_time() - started < 3.0  # "<URL>" lines: 64 KB took 4.5 s, 1 MB ~20 min
    assert document.docid == "d1"
