"""One-step import of a TREC collection (``manage.py import_collection``,
``workflows.collections``): the two shared collections in one command each reproduce their
official trec_eval figures on the leaderboard; bad input stores nothing and names file and line.
"""

from __future__ import annotations

import csv
import gzip
import io
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from judging.assessments.models import QrelsVersion
from judging.campaigns.models import Campaign, Run, Topic
from judging.core.models import OutboxTask
from judging.workflows.collections import IMPORT_ACCOUNT, NamedFile, collection_imported
from tests._shared_data import needs_shared_data
from tests.knobs import override_knobs, set_knobs

pytestmark = [pytest.mark.django_db, pytest.mark.follow_ups]

# Printed to 4 decimals (as tests/metrics/test_real_data.py compares them)
TOLERANCE = 0.5e-4 + 1e-5


def _official(path: Path) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    with path.open() as f:
        for row in csv.DictReader(f, delimiter="\t"):
            out.setdefault(row["run"], {})[row["measure"]] = float(row["value"])
    return out


def _import(*args: str) -> str:
    out = io.StringIO()
    call_command("import_collection", *args, stdout=out)
    return out.getvalue()


def _evaluated(campaign: Campaign) -> None:
    """Run the trec_eval-mode evaluation task the import recorded (sent after commit; a test's
    transaction never commits). The honest evaluations, bias and reusability reports recorded
    with it are qrels_imported's, tested elsewhere, and would triple the test's time."""
    from judging.core.jobs import compute_here
    from judging.evaluation.services import evaluations_after_qrels, qrels_evaluation_key

    version = QrelsVersion.objects.get(campaign=campaign)
    recorded = set(OutboxTask.objects.values_list("key", flat=True))
    assert qrels_evaluation_key(version.pk) in recorded  # honest, as after any qrels import
    assert qrels_evaluation_key(version.pk, "trec_eval") in recorded
    # in this process, all in one part: the parts' tasks would be sent after a commit
    with override_knobs(eval_runs_per_task=10_000):
        compute_here(evaluations_after_qrels(version, "trec_eval"))


def _board(api_client_for: Any, admin_user: Any, campaign: Campaign) -> dict[str, Any]:
    """The leaderboard in trec_eval mode, as its API serves it."""
    _evaluated(campaign)
    answer = api_client_for(admin_user).get(
        f"/api/v1/campaigns/{campaign.pk}/leaderboard/?mode=trec_eval"
    )
    assert answer.status_code == 200, answer.content
    return {row["run"]: row for row in answer.json()["runs"]}


def _check(
    board: dict[str, Any], official: dict[str, dict[str, float]], names: dict[str, str]
) -> dict[tuple[str, str], float]:
    """Every run is evaluated; the figures that differ from the official ones (to 4 decimals),
    with the leaderboard's value."""
    assert set(board) == set(official)
    off = {}
    for run, figures in official.items():
        row = board[run]
        assert row["state"] == "done", (run, row["state"])
        for measure, ours in names.items():
            got = row["measures"][ours]["value"]
            if abs(got - figures[measure]) > TOLERANCE:
                off[run, measure] = got
    return off


@pytest.mark.data
@needs_shared_data("robust03")
def test_robust_2003_in_one_command_shows_the_official_map_of_all_17_runs(
    shared_data: Path, admin_user: Any, api_client_for: Any
) -> None:
    root = shared_data / "robust03"
    runs = sorted(str(p) for p in (root / "runs").glob("input.*.gz"))
    printed = _import(
        "--campaign", "robust03",
        "--qrels", str(root / "qrels.txt"),
        "--runs", *runs,
        "--groups", str(root / "runs.tsv"),
        "--measures", "AP", "Rprec", "P@100",
        "--pooled-runs", "infer",
        "--infer-topics", "601-650",
        "--score-precision", "single",
    )  # fmt: skip
    campaign = Campaign.objects.get(name="robust03")
    assert "inferred pooling: depth 125" in printed and "17 of 17 runs pooled" in printed
    assert campaign.topics.count() == 100
    assert all(t.id_only for t in campaign.topics.all())
    assert campaign.runs.filter(pooled=True).count() == 17
    assert set(campaign.runs.values_list("owner__username", flat=True)) == {IMPORT_ACCOUNT}
    assert campaign.runs.get(tag="InexpC2").group == "uglasgow.ounis"
    board = _board(api_client_for, admin_user, campaign)
    official = _official(root / "official_trec_eval.tsv")
    assert _check(board, official, {"map": "AP", "Rprec": "Rprec"}) == {}


@pytest.mark.data
@needs_shared_data("trec2011-medical")
def test_trec_2011_medical_in_one_command_shows_official_map_and_bpref_of_all_127_runs(
    shared_data: Path, admin_user: Any, api_client_for: Any
) -> None:
    root = shared_data / "trec2011-medical"
    runs = sorted(str(p) for p in (root / "runs").glob("input.*.gz"))
    printed = _import(
        "--campaign", "medical",
        "--qrels", str(root / "qrels.txt"),
        "--runs", *runs,
        "--groups", str(root / "runs.tsv"),
        "--measures", "AP", "Bpref",
        "--score-precision", "single",
    )  # fmt: skip
    assert "inferred pooling: depth 10" in printed and "41 of 127 runs pooled" in printed
    campaign = Campaign.objects.get(name="medical")
    assert campaign.runs.count() == 127
    assert campaign.runs.filter(pooled=True).count() == 41
    nan_run = campaign.runs.get(tag="uogTrDeNsEc")
    assert nan_run.read_warnings, "its NaN scores are read, with a warning"
    board = _board(api_client_for, admin_user, campaign)
    official = _official(root / "official_trec_eval.tsv")
    # every figure, WWOCorrect's too: the official ones came from trec_eval 9, which read scores
    # as C floats, and the campaign compares them so (--score-precision single); WWOCorrect's
    # rounded scores tie and reorder, and as doubles (trec_eval 10) it has map 0.29141 and bpref
    # 0.49400 (tests/metrics/test_real_data.py)
    assert _check(board, official, {"map": "AP", "bpref": "Bpref"}) == {}


# --- hand-made collections ----------------------------------------------------------------


def _run(tag: str, qids: tuple[str, ...] = ("1", "2"), depth: int = 3) -> bytes:
    return "".join(
        f"{q} Q0 d{q}-{i} {i + 1} {10 - i} {tag}\n" for q in qids for i in range(depth)
    ).encode()


QRELS = b"1 0 d1-0 1\n1 0 d1-1 0\n2 0 d2-0 2\n2 0 d2-1 0\n"
TOPICS = (
    b"<top>\n<num> Number: 1\n<title> one\n</top>\n<top>\n<num> Number: 2\n<title> two\n</top>\n"
)


def _files(tmp_path: Path, **contents: bytes) -> dict[str, Path]:
    out = {}
    for name, data in contents.items():
        path = tmp_path / name
        path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
        out[name] = path
    return out


def test_a_bad_line_in_the_third_run_file_stores_nothing_and_names_file_and_line(
    tmp_path: Path, admin_user: Any
) -> None:
    bad = _run("c").replace(b"2 Q0 d2-1 2 9 c\n", b"2 Q0 d2-1 two 9 c\n")
    f = _files(
        tmp_path,
        **{"input.a.gz": _run("a"), "input.b": _run("b"), "input.c.gz": bad},
        qrels=QRELS,
    )
    with pytest.raises(CommandError) as caught:
        _import(
            "--campaign", "c1", "--qrels", str(f["qrels"]),
            "--runs", str(f["input.a.gz"]), str(f["input.b"]), str(f["input.c.gz"]),
        )  # fmt: skip
    message = str(caught.value)
    assert "nothing was stored" in message
    assert f"{f['input.c.gz']}: line 5: " in message, message
    assert "rank" in message
    assert not Campaign.objects.exists() and not Run.objects.exists()
    assert not Topic.objects.exists() and not QrelsVersion.objects.exists()


def test_a_qrels_topic_missing_from_the_topics_file_is_an_error_naming_its_line(
    tmp_path: Path,
) -> None:
    f = _files(tmp_path, topics=TOPICS, qrels=QRELS + b"3 0 d3-0 1\n", **{"input.a": _run("a")})
    with pytest.raises(CommandError) as caught:
        _import(
            "--campaign", "c2", "--topics", str(f["topics"]), "--qrels", str(f["qrels"]),
            "--runs", str(f["input.a"]), "--pooled-runs", "all",
        )  # fmt: skip
    assert f"{f['qrels']}: line 5: topic '3' is not in the topics file" in str(caught.value)
    assert not Campaign.objects.exists()


def test_a_run_topic_missing_from_the_topics_file_and_a_bad_groups_line_are_both_reported(
    tmp_path: Path,
) -> None:
    f = _files(
        tmp_path,
        topics=TOPICS,
        groups=b"run\tgroup\na\tg1\nno-tab-here\n",
        **{"input.a": _run("a", ("1", "2", "9"))},
    )
    with pytest.raises(CommandError) as caught:
        _import(
            "--campaign", "c3", "--topics", str(f["topics"]), "--runs", str(f["input.a"]),
            "--groups", str(f["groups"]), "--pooled-runs", "none",
        )  # fmt: skip
    message = str(caught.value)
    assert "2 file(s) have problems" in message
    assert f"{f['input.a']}: line 7: topic '9' is not in the topics file" in message
    assert f"{f['groups']}: line 3: expected 'run<TAB>group'" in message
    assert not Campaign.objects.exists()


def test_the_dry_run_validates_and_prints_the_plan_but_stores_nothing(tmp_path: Path) -> None:
    f = _files(tmp_path, qrels=QRELS, **{"input.a": _run("a"), "input.b": _run("b", depth=1)})
    printed = _import(
        "--campaign", "dry", "--qrels", str(f["qrels"]),
        "--runs", str(f["input.a"]), str(f["input.b"]), "--dry-run",
    )  # fmt: skip
    assert "would store (dry run: nothing stored)" in printed
    assert "topics: 2 (id only, no title yet)" in printed
    assert "judgments: 4 on 2 topic(s)" in printed
    assert "runs: 2, pooled: 2 (infer)" in printed  # top 2 judged everywhere: depth 2
    assert "inferred pooling: depth 2" in printed
    assert not Campaign.objects.exists() and not Topic.objects.exists()
    assert not OutboxTask.objects.exists()


def test_with_a_topics_file_titles_are_stored_and_the_qrels_are_evaluated_after_commit(
    tmp_path: Path, admin_user: Any, as_committed: Any
) -> None:
    with as_committed():
        plan = collection_imported(
            name="titled",
            measures=["AP", "P@10"],
            topics=NamedFile("topics.txt", TOPICS),
            qrels=NamedFile("qrels.txt", QRELS),
            documents=[NamedFile("docs.jsonl", b'{"docid": "d1-0", "title": "t", "text": "x"}\n')],
            runs=[NamedFile("input.a", _run("a")), NamedFile("b.run", _run("b"))],
            pooled_runs="none",
            owner=admin_user,
            created_by=admin_user,
        )
    campaign = Campaign.objects.get(name="titled")
    assert plan.stored and plan.campaign_id == campaign.pk and plan.qrels_version == 1
    assert campaign.measures == ["AP", "P@10"]
    assert list(campaign.documents.values_list("docid", flat=True)) == ["d1-0"]
    assert list(campaign.topics.order_by("qid").values_list("title", flat=True)) == ["one", "two"]
    assert sorted(campaign.runs.values_list("tag", "pooled")) == [("a", False), ("b", False)]
    assert campaign.runs.get(tag="b").owner == admin_user  # tag from the file's column
    states = set(campaign.runs.values_list("evaluations__mode", "evaluations__job__state"))
    assert states == {("honest", "done"), ("trec_eval", "done")}


def test_chosen_pooled_runs_win_over_the_inference_and_unknown_ones_are_refused() -> None:
    files: dict[str, Any] = {
        "qrels": NamedFile("qrels", QRELS),
        "runs": [NamedFile("input.a", _run("a")), NamedFile("input.b", _run("b"))],
    }
    plan = collection_imported(name="chosen", pooled_tags={"b"}, dry_run=True, **files)
    assert [(r.tag, r.pooled) for r in plan.runs] == [("a", False), ("b", True)]
    from judging.core.errors import InvalidInput

    with pytest.raises(InvalidInput, match="not in the collection"):
        collection_imported(name="chosen", pooled_tags={"zz"}, dry_run=True, **files)


def test_two_files_with_one_tag_and_an_existing_campaign_name_are_refused(
    tmp_path: Path, campaign: Campaign
) -> None:
    from judging.core.errors import InvalidInput

    with pytest.raises(InvalidInput) as caught:
        collection_imported(
            name=campaign.name,
            qrels=NamedFile("qrels", QRELS),
            runs=[NamedFile("input.a", _run("a")), NamedFile("x/input.a", _run("a"))],
        )
    located = {(p.location, p.message.split(":")[0]) for p in caught.value.problems}
    assert ("campaign", "name") in located
    assert any(p.location == "x/input.a" and "also the tag of input.a" in p.message
               for p in caught.value.problems)  # fmt: skip


def test_create_campaign_takes_the_measures() -> None:
    call_command("create_campaign", "measured", "--measures", "AP", "Rprec", stdout=io.StringIO())
    assert Campaign.objects.get(name="measured").measures == ["AP", "Rprec"]
    with pytest.raises(CommandError):
        call_command("create_campaign", "bad", "--measures", "NoSuch@3", stdout=io.StringIO())


def test_pages_say_a_topic_created_from_its_id_has_no_title_yet(campaign: Campaign) -> None:
    from django.template.loader import render_to_string

    bare = Topic.objects.create(campaign=campaign, qid="77", title="")
    assert bare.id_only and str(bare) == "77 (id only, no title yet)"
    shown = render_to_string("annotate/_topic.html", {"topic": bare, "grades": []})
    assert "Topic 77" in shown and "id only, no title yet" in shown
    titled = render_to_string(
        "annotate/_topic.html", {"topic": campaign.topics.get(qid="401"), "grades": []}
    )
    assert "topic 401" in titled and "no title yet" not in titled


# --- the API ------------------------------------------------------------------------------


def _multipart(**extra: Any) -> dict[str, Any]:
    from django.core.files.uploadedfile import SimpleUploadedFile

    body: dict[str, Any] = {
        "name": "api-collection",
        "measures": ["AP", "P@10"],
        "qrels": SimpleUploadedFile("qrels.txt", QRELS),
        "runs": [
            SimpleUploadedFile("input.a.gz", gzip.compress(_run("a"))),
            SimpleUploadedFile("input.b", _run("b", depth=1)),
        ],
        "groups": SimpleUploadedFile("runs.tsv", b"run\tgroup\na\tgroup-a\n"),
    }
    body.update(extra)
    return body


def test_the_api_imports_a_collection_for_admins_and_answers_the_summary(
    admin_user: Any, api_client_for: Any
) -> None:
    answer = api_client_for(admin_user).post(
        "/api/v1/collections/", _multipart(), format="multipart"
    )
    assert answer.status_code == 201, answer.content
    got = answer.json()
    assert got["campaign"]["name"] == "api-collection" and got["campaign"]["num_topics"] == 2
    # the campaign as the admin who imported it sees it, not as an annotator would
    assert got["campaign"]["num_runs"] == 2 and "run_pooling" in got["campaign"]
    summary = got["summary"]
    assert summary["stored"] and summary["topics_from"] == "ids" and summary["judgments"] == 4
    topics = api_client_for(admin_user).get(f"/api/v1/campaigns/{got['campaign']['id']}/topics/")
    assert [(t["qid"], t["title"], t["id_only"]) for t in topics.json()["results"]] == [
        ("1", "", True),
        ("2", "", True),
    ]
    assert summary["pooling"]["depth"] == 2 and summary["runs_pooled"] == 2
    assert [(r["run"], r["group"]) for r in summary["runs"]] == [("a", "group-a"), ("b", "")]
    assert Campaign.objects.get(name="api-collection").measures == ["AP", "P@10"]


def test_the_api_dry_run_answers_the_plan_and_stores_nothing(
    admin_user: Any, api_client_for: Any
) -> None:
    client = api_client_for(admin_user)
    answer = client.post("/api/v1/collections/?dry_run=1", _multipart(), format="multipart")
    assert answer.status_code == 200, answer.content
    assert answer.json()["campaign"] is None and not answer.json()["summary"]["stored"]
    assert answer.json()["summary"]["pooling"]["runs"][0]["run"] == "a"
    assert not Campaign.objects.exists() and not Run.objects.exists()


def test_the_api_names_the_bad_file_and_line_and_stores_nothing(
    admin_user: Any, api_client_for: Any
) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    bad = SimpleUploadedFile("input.c", _run("c") + b"1 Q0 x 1\n")
    body = _multipart()
    body["runs"].append(bad)
    answer = api_client_for(admin_user).post("/api/v1/collections/", body, format="multipart")
    assert answer.status_code == 400, answer.content
    got = answer.json()
    assert "input.c" in got["detail"] and "nothing was stored" in got["detail"]
    assert {k: v for k, v in got["problems"][0].items() if k != "message"} == {
        "location": "input.c",
        "line": 7,
    }
    assert not Campaign.objects.exists() and not Run.objects.exists()


def test_the_api_refuses_non_admins_and_anonymous_callers(
    researcher: Any, annotator: Any, api_client_for: Any
) -> None:
    for user, expected in ((None, 401), (researcher, 403), (annotator, 403)):
        answer = api_client_for(user).post("/api/v1/collections/", _multipart(), format="multipart")
        assert answer.status_code == expected, (user, answer.content)
    assert not Campaign.objects.exists()


# --- the admin's page -------------------------------------------------------------------


@pytest.fixture
def staging(settings: Any, tmp_path: Path) -> Path:
    set_knobs(settings, staging_dir=tmp_path / "staging")
    return tmp_path / "staging"


def _page_files() -> dict[str, Any]:
    from django.core.files.uploadedfile import SimpleUploadedFile

    return {
        "name": "page-collection",
        "measures": "AP P@10",
        "pooled_runs": "infer",
        "qrels": SimpleUploadedFile("qrels.txt", QRELS),
        "runs": [
            SimpleUploadedFile("input.a.gz", gzip.compress(_run("a"))),
            SimpleUploadedFile("input.b", _run("b", depth=1)),
            SimpleUploadedFile("input.c", _run("c", ("1",), depth=1).replace(b"d1-0", b"zz")),
        ],
    }


def test_the_import_page_shows_the_plan_first_then_stores_the_ticked_runs(
    client: Any, admin_user: Any, staging: Path
) -> None:
    client.force_login(admin_user)
    home = client.get("/")
    assert b'href="/manage/import/"' in home.content
    assert client.get("/manage/import/").status_code == 200
    plan = client.post("/manage/import/", _page_files())
    assert plan.status_code == 200, plan.content.decode()[:2000]
    page = plan.content.decode()
    assert "nothing is stored until you apply it" in page
    assert "2 topics (id only, no title yet)" in page
    assert 'value="a" aria-label="pool a" checked' in page  # the inference's choice
    assert 'value="c" aria-label="pool c">' in page  # c's only document is unjudged
    assert not Campaign.objects.exists()
    (token,) = [p.name for p in staging.iterdir()]
    assert f'name="token" value="{token}"' in page

    done = client.post("/manage/import/", {"token": token, "pooled": ["b", "c"]})
    assert done.status_code == 302
    campaign = Campaign.objects.get(name="page-collection")
    assert done["Location"] == f"/campaigns/{campaign.pk}/leaderboard/"
    assert dict(campaign.runs.values_list("tag", "pooled")) == {"a": False, "b": True, "c": True}
    assert campaign.measures == ["AP", "P@10"]
    assert list(staging.iterdir()) == []
    again = client.post("/manage/import/", {"token": token})  # applied once only
    assert again.status_code == 302 and again["Location"] == "/manage/import/"
    assert Campaign.objects.count() == 1


def test_the_import_page_names_file_and_line_stores_nothing_and_drops_the_files(
    client: Any, admin_user: Any, staging: Path
) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    client.force_login(admin_user)
    files = _page_files()
    files["runs"].append(SimpleUploadedFile("input.d", b"1 Q0 x 1 zero d\n"))
    answer = client.post("/manage/import/", files)
    assert answer.status_code == 400
    page = answer.content.decode()
    assert "<code>input.d</code> line 1:" in page and "nothing was stored" in page
    assert not Campaign.objects.exists() and list(staging.iterdir()) == []


def test_plans_not_applied_expire_and_another_admins_plan_cannot_be_applied(
    client: Any, admin_user: Any, make_user: Any, staging: Path, settings: Any
) -> None:
    import os

    client.force_login(admin_user)
    assert client.post("/manage/import/", _page_files()).status_code == 200
    (old,) = list(staging.iterdir())
    other = make_user("other-admin", "admin")
    client.force_login(other)
    assert client.post("/manage/import/", {"token": old.name}).status_code == 403
    past = old.stat().st_mtime - settings.POOLJUDGE_UPLOADS.staging_seconds - 10
    os.utime(old, (past, past))
    assert client.post("/manage/import/", _page_files()).status_code == 200
    assert old not in list(staging.iterdir()) and len(list(staging.iterdir())) == 1


def test_the_import_page_is_for_admins_only(
    client: Any, researcher: Any, annotator: Any, staging: Path
) -> None:
    anonymous = client.get("/manage/import/")
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/login/")
    assert client.post("/manage/import/", _page_files()).status_code == 302
    for user in (researcher, annotator):
        client.force_login(user)
        assert client.get("/manage/import/").status_code == 403
        assert client.post("/manage/import/", _page_files()).status_code == 403
    assert not Campaign.objects.exists() and not staging.exists()


def test_topic_ranges_are_read_and_bounded(settings: Any) -> None:
    from judging.core.errors import InvalidInput
    from judging.workflows.collections import topic_ranges

    assert topic_ranges("601-603, 700,MB01") == ["601", "602", "603", "700", "MB01"]
    set_knobs(settings, max_infer_topics=10)
    for bad in ("5-3", "1-11", " , "):
        with pytest.raises(InvalidInput) as caught:
            topic_ranges(bad)
        assert caught.value.problems[0].location == "infer_topics"


def test_a_collection_over_the_request_limit_is_refused_before_staging(
    client: Any, admin_user: Any, staging: Path, settings: Any
) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    set_knobs(settings, max_collection_upload_bytes=100)  # and 64 KB of multipart envelope
    big = {"qrels": SimpleUploadedFile("qrels.txt", QRELS * 20_000)}
    client.force_login(admin_user)
    answer = client.post("/manage/import/", _page_files() | big)
    assert answer.status_code == 413 and b"the limit is 100 bytes" in answer.content
    assert not staging.exists()
    from rest_framework.test import APIClient

    api = APIClient()
    api.force_authenticate(admin_user)
    big = {"qrels": SimpleUploadedFile("qrels.txt", QRELS * 20_000)}  # the first was read
    answer = api.post("/api/v1/collections/", _multipart(**big), format="multipart")
    assert answer.status_code == 413, answer.content


def test_a_bad_documents_file_is_named_with_its_line_and_nothing_is_stored() -> None:
    from judging.core.errors import InvalidInput

    with pytest.raises(InvalidInput) as caught:
        collection_imported(
            name="docs",
            documents=[NamedFile("docs.jsonl", b'{"docid": "a", "text": "x"}\n{"text": "y"}\n')],
            runs=[NamedFile("input.a", _run("a"))],
            pooled_runs="none",
        )
    assert [(p.location, p.line) for p in caught.value.problems] == [("docs.jsonl", 2)]
    assert not Campaign.objects.exists()
