"""The Python client (``pooljudge.client``) against a live test server: an admin logs in, builds
a campaign from Python data, submits a run as a dict and one as a DataFrame, reads their
evaluations and the leaderboard, checks one against the other and exports the judgments; and
the errors a script meets, each as its own exception with the service's problems.

The collection is small enough to score by hand. Six topics q1..q6, each with five judged
documents: ``a`` (grade 2), ``b`` (grade 1) and ``c``, ``d``, ``e`` (grade 0). The strong run
ranks a, b first everywhere: AP 1 on every topic. The weak run ranks a and b lower, at ranks
(2,3), (3,4), (4,5), (1,3), (2,4), (3,5): AP per topic (1/r1 + 2/r2) / 2 = 0.583333, 0.416667,
0.325, 0.833333, 0.5, 0.366667, mean 3.025 / 6 = 0.504167. Both retrieve both relevant
documents of every topic in their top 10: P@10 0.2 for each.
"""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from pooljudge.client import (
    AuthenticationError,
    Campaign,
    Client,
    EvaluationFailed,
    InvalidInput,
    NotFound,
    PermissionDenied,
    PooljudgeError,
    PooljudgeTimeout,
    RateLimited,
)
from pooljudge.client.archive import unpack_golden_set
from pooljudge.client.payloads import qrels_tsv, run_results, topics_jsonl

PASSWORD = "pw-for-tests-only"  # tests/conftest.py's make_user
TOPICS = [f"q{i}" for i in range(1, 7)]
GRADES = {"a": 2, "b": 1, "c": 0, "d": 0, "e": 0}
STRONG = {q: {f"{q}-{d}": 5.0 - i for i, d in enumerate("abcde")} for q in TOPICS}
WEAK_ORDER = {
    "q1": "cabde",
    "q2": "cdabe",
    "q3": "cdeab",
    "q4": "acbde",
    "q5": "cadbe",
    "q6": "dcaeb",
}
WEAK_AP = [0.583333, 0.416667, 0.325, 0.833333, 0.5, 0.366667]


@pytest.fixture
def server(live_server: Any) -> str:
    return str(live_server.url)


@pytest.fixture
def admin(server: str, admin_user: Any) -> Iterator[Client]:
    with Client.login(server, admin_user.username, PASSWORD) as client:
        yield client


@pytest.fixture
def collection(admin: Client) -> Campaign:
    """The campaign above, built through the client from Python data."""
    made = admin.create_campaign("Client test", description="built by tests/test_client.py")
    admin.upload_topics(made, {q: f"topic {q}" for q in TOPICS})
    admin.upload_documents(
        made,
        {
            f"{q}-{d}": {"title": f"{q} {d}", "text": f"document {d} of {q}"}
            for q in TOPICS
            for d in GRADES
        },
    )
    admin.upload_qrels(made, {q: {f"{q}-{d}": g for d, g in GRADES.items()} for q in TOPICS})
    return made


def weak_frame() -> Any:
    pandas = pytest.importorskip("pandas")
    rows = [
        {"qid": q, "docno": f"{q}-{d}", "rank": r, "score": 10.0 - r}
        for q, order in WEAK_ORDER.items()
        for r, d in enumerate(order, 1)
    ]
    return pandas.DataFrame(rows)


# --- the story ------------------------------------------------------------------------------


def test_an_admin_builds_a_campaign_from_python_data(admin: Client, collection: Campaign) -> None:
    assert admin.me().roles == ("admin",)
    stored = admin.campaign("Client test")
    assert (stored.id, stored.num_topics, stored.num_documents) == (collection.id, 6, 30)
    assert stored.raw["description"] == "built by tests/test_client.py"
    (version,) = admin.qrels_versions(collection)
    assert (version.number, version.num_judgments, version.num_relevant) == (1, 30, 12)


def test_runs_from_a_dict_and_a_dataframe_are_scored_as_computed_by_hand(
    admin: Client, collection: Campaign
) -> None:
    strong = admin.submit_run(collection, STRONG, tag="strong", description="a, b first")
    weak = admin.submit_run(collection, weak_frame(), tag="weak")
    assert (strong.num_entries, weak.num_entries, weak.num_topics) == (30, 30, 6)

    evaluation = admin.wait_for_evaluation(weak, timeout=30, poll=0.1)
    assert (evaluation.state, evaluation.qrels_version, evaluation.n_queries) == ("done", 1, 6)
    per_topic = evaluation.per_query["AP"]
    assert [per_topic[q] for q in TOPICS] == pytest.approx(WEAK_AP, abs=1e-6)
    assert evaluation.values["AP"] == pytest.approx(3.025 / 6)

    board = admin.leaderboard(collection, measures=["AP", "P@10"])
    assert [row.run for row in board.rows] == ["strong", "weak"]  # sorted by AP, best first
    assert board.qrels_hash == admin.qrels_versions(collection)[0].content_hash
    assert board.row("strong").values == pytest.approx({"AP": 1.0, "P@10": 0.2})
    assert board.row("weak").values == pytest.approx({"AP": 3.025 / 6, "P@10": 0.2})


def test_an_evaluation_never_asked_for_is_asked_for_and_awaited(
    admin: Client, collection: Campaign
) -> None:
    run = admin.submit_run(collection, STRONG, tag="strong")
    evaluation = admin.wait_for_evaluation(run, mode="trec_eval", timeout=30, poll=0.1)
    assert (evaluation.mode, evaluation.state) == ("trec_eval", "done")
    assert evaluation.values["AP"] == pytest.approx(1.0)
    assert {e.mode for e in admin.evaluations(run)} == {"honest", "trec_eval"}


def test_the_regression_check_passes_a_better_run_and_fails_a_worse_one_with_reasons(
    admin: Client, collection: Campaign
) -> None:
    strong = admin.submit_run(collection, STRONG, tag="strong")
    weak = admin.submit_run(collection, weak_frame(), tag="weak")

    better = admin.check(strong, baseline="weak", max_drop=0.01, measures=["AP", "P@10"])
    assert (better.passed, better.verdict, better.reasons) == (True, "pass", ())
    assert (better.run, better.baseline, better.n_queries) == ("strong", "weak", 6)

    worse = admin.check(weak, baseline=strong, max_drop="2%", measures=["AP", "P@10"])
    assert (worse.passed, worse.verdict) == (False, "fail")
    ap = next(m for m in worse.measures if m.measure == "AP")
    assert ap.delta == pytest.approx(3.025 / 6 - 1.0)
    assert ap.p_value is not None and ap.p_value < 0.05
    assert len(worse.reasons) == 1 and worse.reasons[0].startswith("AP: fail (delta -0.4958")
    assert worse.summary.startswith("FAIL")


def test_qrels_export_as_the_uploaded_judgments_with_their_hash(
    admin: Client, collection: Campaign, tmp_path: Path
) -> None:
    (version,) = admin.qrels_versions(collection)
    text = admin.export_qrels(version, tmp_path / "qrels.txt")
    expected = sorted(f"{q} 0 {q}-{d} {g}" for q in TOPICS for d, g in GRADES.items())
    assert text.splitlines() == expected
    assert (tmp_path / "qrels.txt").read_text() == text


def test_the_golden_set_unpacks_in_beirs_layout(
    admin: Client, collection: Campaign, tmp_path: Path
) -> None:
    (version,) = admin.qrels_versions(collection)
    golden = admin.export_golden_set(version, tmp_path / "golden")
    assert set(golden.files) == {
        "corpus.jsonl",
        "queries.jsonl",
        "qrels/test.tsv",
        "pooljudge.json",
    }
    assert (golden.qrels_version, golden.content_hash) == (1, version.content_hash)
    queries = (tmp_path / "golden" / "queries.jsonl").read_text().splitlines()
    assert [json.loads(line)["_id"] for line in queries] == TOPICS
    corpus = (tmp_path / "golden" / "corpus.jsonl").read_text().splitlines()
    assert len(corpus) == 30
    qrels = (tmp_path / "golden" / "qrels" / "test.tsv").read_text().splitlines()
    assert qrels[0] == "query-id\tcorpus-id\tscore" and len(qrels) == 31


def test_passages_are_cut_read_and_their_judgments_carried(
    admin: Client, collection: Campaign, tmp_path: Path
) -> None:
    texts = {
        "kb-1": "Invoices arrive monthly.\n\nRefunds take five days.",
        "kb-2": "Keys rotate yearly.",
    }
    admin.upload_documents(collection, texts)
    para = admin.create_chunking(collection, "para", chunker="paragraph")
    assert para.spec == "paragraph(min_chars=0)" and para.num_passages >= 3  # + the others
    own = tmp_path / "passages.tsv"
    own.write_text("kb-1\twhole\t0\t49\n")
    team = admin.create_chunking(collection, "team", passages=own)
    assert [c.name for c in admin.chunkings(collection)] == ["para", "team"]
    read = admin.passages(para, docid="kb-1")
    assert [(p.passage_id, p.text) for p in read] == [
        ("kb-1#para-0", "Invoices arrive monthly."),
        ("kb-1#para-1", "Refunds take five days."),
    ]
    topic = next(iter(TOPICS))
    version = admin.upload_qrels(collection, {topic: {"kb-1#whole": 2}})
    carried = admin.carry_qrels(version, "para", min_share=0.4)
    derivation = carried.derivation
    assert derivation is not None and derivation.chunking == "para"
    assert derivation.overall["relevant"] == 2 and derivation.lost_topics == ()
    documents = admin.document_qrels(version)
    assert documents.derivation is not None and documents.derivation.chunking is None
    assert team.num_documents == 1
    with pytest.raises(ValueError, match="not both"):
        admin.create_chunking(collection, "x")


def test_lists_are_read_across_pages(server: str, admin: Client) -> None:
    for n in range(3):
        admin.create_campaign(f"paged {n}")
    paged = Client(server, admin.token, page_size=2)
    assert sorted(c.name for c in paged.campaigns()) == ["paged 0", "paged 1", "paged 2"]


def test_the_guides_example_runs_as_printed(
    server: str, make_user: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: Any
) -> None:
    guide = (Path(__file__).parents[1] / "docs" / "guide" / "client.md").read_text()
    example = guide.split("```python\n", 1)[1].split("```", 1)[0]
    make_user("admin", "admin", password="admin-demo")  # the demo's admin
    monkeypatch.setenv("POOLJUDGE_URL", server)
    monkeypatch.chdir(tmp_path)
    exec(compile(example, "docs/guide/client.md", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    assert printed[1:5] == [
        "1.0 {'1': 1.0, '2': 1.0}",
        "dense {'AP': 1.0, 'P@10': 0.1}",
        "bm25 {'AP': 0.41666666666666663, 'P@10': 0.1}",  # (1/3 + 1/2) / 2
        "True drop-not-significant PASS (warning: AP dropped 0.583 (p = 0.090, not significant))",
    ]
    assert printed[5:11] == [
        "AP: drop-not-significant (delta -0.5833, p = 0.0903)",
        "1 0 d1 1",
        "1 0 d3 0",
        "1 0 d4 0",
        "2 0 d2 1",
        "2 0 d3 0",
    ]
    assert printed[-1].startswith(
        "('corpus.jsonl', 'queries.jsonl', 'qrels/test.tsv', 'pooljudge.json') 1 "
    )
    assert (tmp_path / "golden-set" / "qrels" / "test.tsv").exists()


# --- errors ---------------------------------------------------------------------------------


def test_a_wrong_password_is_an_authentication_error(server: str, admin_user: Any) -> None:
    with pytest.raises(AuthenticationError) as refused:
        Client.login(server, admin_user.username, "not-the-password")
    assert "auth/token/" in refused.value.url
    assert "auth/token/" in str(refused.value)


def test_a_revoked_token_is_refused(server: str, admin_user: Any) -> None:
    client = Client.login(server, admin_user.username, PASSWORD)
    token = client.token
    client.logout()
    with pytest.raises(AuthenticationError) as refused:
        Client(server, token).me()
    assert refused.value.status == 401


def test_an_annotator_may_not_create_a_campaign(server: str, annotator: Any) -> None:
    client = Client.login(server, annotator.username, PASSWORD)
    with pytest.raises(PermissionDenied) as refused:
        client.create_campaign("not allowed")
    assert refused.value.status == 403
    assert "POST" in str(refused.value) and "/api/v1/campaigns/" in str(refused.value)


def test_a_bad_run_file_is_refused_with_the_line_of_each_problem(
    admin: Client, collection: Campaign, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 q1-a 1 9.5 bad\nq1 Q0 q1-b 2 abc bad\nq9 Q0 q1-c 3 7.0 bad\n")
    with pytest.raises(InvalidInput) as refused:
        admin.submit_run(collection, bad)
    error = refused.value
    assert error.status == 400 and error.code == "invalid_input"
    assert [p.line for p in error.problems] == [2, 3]
    assert "abc" in error.problems[0].message and "q9" in error.problems[1].message
    assert "line 2: " in str(error)
    assert admin.runs(collection) == []  # nothing stored


def test_a_run_from_python_data_with_an_unknown_topic_names_it(
    admin: Client, collection: Campaign
) -> None:
    with pytest.raises(InvalidInput) as refused:
        admin.submit_run(collection, {"nope": {"q1-a": 1.0}}, tag="unknown")
    assert any("nope" in str(p) for p in refused.value.problems)


def test_what_does_not_exist_is_not_found(admin: Client) -> None:
    with pytest.raises(NotFound) as refused:
        admin.run(999_999)
    assert refused.value.status == 404 and "/api/v1/runs/999999/" in refused.value.url
    with pytest.raises(NotFound):
        admin.campaign("no such campaign")


# --- without a server -----------------------------------------------------------------------


def test_python_data_becomes_the_files_the_service_reads() -> None:
    assert topics_jsonl({"1": "solar sails"}) == b'{"qid": "1", "title": "solar sails"}\n'
    assert qrels_tsv({"2": {"b": 0, "a": 1}}) == b"query-id\tcorpus-id\tscore\n2\ta\t1\n2\tb\t0\n"
    with pytest.raises(ValueError, match="not a whole number"):
        qrels_tsv({"1": {"a": 0.5}})  # type: ignore[dict-item]
    nan, inf = float("nan"), float("inf")
    assert run_results({1: {"a": nan, "b": inf, "c": 2}}) == {  # type: ignore[dict-item]
        "1": {"a": "NaN", "b": "Infinity", "c": 2.0}
    }


def test_a_dataframe_is_read_by_its_column_names() -> None:
    pandas = pytest.importorskip("pandas")
    ranked = pandas.DataFrame({"query_id": [1, 1], "doc_id": ["x", "y"], "rank": [1, 2]})
    assert run_results(ranked) == {"1": {"x": -1.0, "y": -2.0}}  # no score: -rank
    twice = pandas.DataFrame({"qid": ["1", "1"], "docno": ["x", "x"], "score": [1.0, 0.5]})
    with pytest.raises(ValueError, match="row 1: document 'x' twice"):
        run_results(twice)
    with pytest.raises(ValueError, match="no document id column"):
        run_results(pandas.DataFrame({"qid": ["1"], "score": [1.0]}))


def test_a_run_from_python_data_needs_a_tag() -> None:
    with pytest.raises(ValueError, match="tag="):
        Client("http://127.0.0.1:1").submit_run(1, {"q1": {"d": 1.0}})


def test_the_client_imports_neither_pandas_nor_the_service() -> None:
    code = (
        "import sys, pooljudge.client; "
        "print(sorted(m for m in ('pandas', 'django', 'judging', 'metrics') if m in sys.modules))"
    )
    root = Path(__file__).parents[1]
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root
    )
    assert out.stdout.strip() == "[]"


def _zip(entries: dict[str, bytes]) -> io.BytesIO:
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        for name, content in entries.items():
            archive.writestr(name, content)
    data.seek(0)
    return data


def test_a_golden_set_is_unpacked_only_when_every_file_matches_its_hash(tmp_path: Path) -> None:
    tsv = b"query-id\tcorpus-id\tscore\nq1\td1\t1\n"
    meta = {
        "qrels": {"version": 3, "sha256": "abc"},
        "files_sha256": {"qrels/test.tsv": hashlib.sha256(tsv).hexdigest()},
    }
    good = {"qrels/test.tsv": tsv, "pooljudge.json": json.dumps(meta).encode()}
    files, metadata = unpack_golden_set(_zip(good), tmp_path / "ok", qrels_sha256="abc")
    assert (set(files), metadata["qrels"]["version"]) == (set(good), 3)
    assert (tmp_path / "ok" / "qrels" / "test.tsv").read_bytes() == tsv

    tampered = {**good, "qrels/test.tsv": tsv + b"q1\td2\t1\n"}
    with pytest.raises(ValueError, match="does not hash"):
        unpack_golden_set(_zip(tampered), tmp_path / "tampered")
    with pytest.raises(ValueError, match="names qrels sha256"):
        unpack_golden_set(_zip(good), tmp_path / "other", qrels_sha256="def")
    with pytest.raises(ValueError, match="outside its folder"):
        unpack_golden_set(_zip({"../evil.txt": b"x"}), tmp_path / "evil")
    assert not any((tmp_path / d).exists() for d in ("tampered", "other", "evil"))
    assert not (tmp_path / "evil.txt").exists()


class _Answers(requests.adapters.BaseAdapter):
    """A transport answering every request with the same status and body."""

    def __init__(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        super().__init__()
        self.status, self.body, self.headers = status, body, headers

    def send(
        self, request: requests.PreparedRequest, *args: Any, **kwargs: Any
    ) -> requests.Response:
        response = requests.Response()
        response.status_code, response._content = self.status, self.body
        response.headers.update(self.headers)
        response.url, response.request = str(request.url), request
        return response

    def close(self) -> None:
        pass


def _answering(status: int, body: bytes, **headers: str) -> Client:
    session = requests.Session()
    headers = {"Content-Type": "application/json", **headers}
    session.mount("http://", _Answers(status, body, headers))
    return Client("http://pooljudge.test", "token", session=session)


def test_an_answer_not_in_the_error_shape_is_still_an_error_with_its_status() -> None:
    client = _answering(502, b"<html>Bad gateway</html>", **{"Content-Type": "text/html"})
    with pytest.raises(PooljudgeError) as refused:
        client.me()
    assert (refused.value.status, refused.value.code) == (502, "http_error")
    assert "Bad gateway" in str(refused.value) and "http://pooljudge.test/api/v1/me/" in str(
        refused.value
    )


def test_a_wait_that_does_not_end_in_time_raises_a_timeout() -> None:
    client = _answering(202, b'{"state": "pending", "qrels_version": 1, "mode": "honest"}')
    with pytest.raises(PooljudgeTimeout):
        client.wait_for_evaluation(1, timeout=0.05, poll=0.01)
    with pytest.raises(TimeoutError):  # a PooljudgeTimeout is a TimeoutError too
        client.check(1, baseline="base", max_drop=0.01, timeout=0.05, poll=0.01)


def test_too_many_requests_says_how_long_to_wait() -> None:
    body = b'{"error": "throttled", "detail": "Request was throttled."}'
    with pytest.raises(RateLimited) as refused:
        _answering(429, body, **{"Retry-After": "7"}).me()
    assert (refused.value.status, refused.value.retry_after) == (429, 7.0)


class _Script(requests.adapters.BaseAdapter):
    """A transport answering requests in order from a script of (method, path, status, body),
    failing on any request the script does not expect next."""

    def __init__(self, script: list[tuple[str, str, int, Any]]) -> None:
        super().__init__()
        self.script = list(script)

    def send(
        self, request: requests.PreparedRequest, *args: Any, **kwargs: Any
    ) -> requests.Response:
        method, path, status, body = self.script.pop(0)
        url = str(request.url)
        assert (request.method, url.split("/api/v1/")[1].split("?")[0]) == (method, path), url
        response = requests.Response()
        response.status_code, response._content = status, json.dumps(body).encode()
        response.headers["Content-Type"] = "application/json"
        response.url, response.request = url, request
        return response

    def close(self) -> None:
        pass


def _scripted(script: list[tuple[str, str, int, Any]]) -> tuple[Client, _Script]:
    session, adapter = requests.Session(), _Script(script)
    session.mount("http://", adapter)
    return Client("http://pooljudge.test", "token", session=session), adapter


NEVER = {"error": "not_found", "detail": "the honest evaluation of run 7 is not computed yet"}
STORED = {
    "run": "bm25",
    "evaluations": [{"qrels_version": 1, "mode": "honest", "state": "done", "result": {}}],
}


def test_an_evaluation_on_its_way_is_awaited_not_asked_for_again() -> None:
    """Between a run's arrival and its evaluation job's start (a broker, not eager Celery),
    the evaluation has no row yet: 404, while the run says its evaluation is pending."""
    run = {"id": 7, "campaign": 1, "tag": "bm25", "evaluation": {"status": "queued"}}
    client, script = _scripted(
        [
            ("GET", "runs/7/evaluations/", 404, NEVER),
            ("GET", "runs/7/", 200, run),
            ("GET", "runs/7/evaluations/", 202, {"state": "pending"}),
            ("GET", "runs/7/evaluations/", 200, STORED),
        ]
    )
    assert client.wait_for_evaluation(7, poll=0.001).state == "done"
    assert script.script == []


def test_an_evaluation_never_asked_for_is_asked_for_once() -> None:
    run = {"id": 7, "campaign": 1, "tag": "bm25", "evaluation": {"status": None}}
    client, script = _scripted(
        [
            ("GET", "runs/7/evaluations/", 404, NEVER),
            ("GET", "runs/7/", 200, run),
            ("POST", "runs/7/evaluations/", 202, {"state": "pending"}),
            ("GET", "runs/7/evaluations/", 200, STORED),
        ]
    )
    assert client.wait_for_evaluation(7, poll=0.001).run == "bm25"
    assert script.script == []
    failed = {**STORED, "evaluations": [{"state": "failed", "error": "MemoryError"}]}
    client, _ = _scripted([("GET", "runs/7/evaluations/", 200, failed)])
    with pytest.raises(EvaluationFailed, match="MemoryError"):
        client.wait_for_evaluation(7)


def test_a_check_asks_for_the_evaluations_it_misses_then_waits_for_them() -> None:
    missing = {
        "error": "conflict",
        "detail": "an evaluation was never computed",
        "state": "missing",
        "evaluations": [
            {"run_id": 7, "state": "done"},
            {
                "run_id": 8,
                "state": "missing",
                "request": {
                    "method": "POST",
                    "url": "/api/v1/runs/8/evaluations/",
                    "body": {"qrels": 2, "mode": "honest"},
                },
            },
        ],
    }
    done = {"state": "done", "passed": True, "verdict": "pass", "run": "a", "baseline": "b"}
    client, script = _scripted(
        [
            ("GET", "runs/7/check/", 409, missing),
            ("POST", "runs/8/evaluations/", 202, {"state": "pending"}),
            ("GET", "runs/7/check/", 202, {"state": "pending"}),
            ("GET", "runs/7/check/", 200, done),
        ]
    )
    assert client.check(7, baseline=8, max_drop=0.01, poll=0.001).passed
    assert script.script == []


def test_a_campaign_is_created_with_its_measures_and_pool_depth(admin: Client) -> None:
    made = admin.create_campaign("Measured", measures=["R@5", "RR@10", "nDCG@5"], pool_depth=10)
    assert made.raw["measures"] == ["R@5", "RR@10", "nDCG@5"] and made.raw["pool_depth"] == 10
    with pytest.raises(InvalidInput) as refused:
        admin.create_campaign("Mismeasured", measures=["R@5", "Recall at five"])
    assert "Recall at five" in str(refused.value)


def test_the_in_process_transport_answers_as_the_server_does(admin_user: Any) -> None:
    """``load_demo --rag`` plays its story through the client in-process (judging.demo.inprocess):
    the same answers, errors and pages as over HTTP."""
    from judging.demo.inprocess import client_for

    client = client_for(admin_user)
    assert client.me().username == admin_user.username
    made = client.create_campaign("In process", measures=["R@5"])
    assert client.campaign("In process").id == made.id
    with pytest.raises(NotFound):
        client.campaign(10**9)
    with pytest.raises(InvalidInput) as refused:
        client.create_campaign("In process")  # the name is taken
    assert refused.value.status == 400


# --- a judges' track (issue 35): participants submit their judges' labels, the organisers make a
# jury, and a participant reads the meta-evaluation with their own judge by name and the other
# participant's anonymised. A perfect judge's labels equal people's (kappa 1); the other
# participant's judge calls every ``b`` not relevant.


def judge_labels(grades: dict[str, int]) -> bytes:
    return "".join(f"{q} 0 {q}-{d} {g}\n" for q in TOPICS for d, g in grades.items()).encode()


def test_a_judges_track_through_the_client(
    server: str,
    admin: Client,
    collection: Campaign,
    researcher: Any,
    other_researcher: Any,
) -> None:
    admin.submit_run(collection, STRONG, tag="strong")
    weak = {q: {f"{q}-{d}": 5.0 - i for i, d in enumerate(o)} for q, o in WEAK_ORDER.items()}
    admin.submit_run(collection, weak, tag="weak")
    pool = admin.request_pool(collection, depth=5)
    with Client.login(server, researcher.username, PASSWORD) as rita:
        mine = rita.submit_judge(
            collection,
            judge_labels(GRADES),
            name="rita-perfect",
            model="m",
            saw_human_qrels=False,
            family="llama",
            open_weights=True,
            cost=0.3,
            calls=30,
        )
    with Client.login(server, other_researcher.username, PASSWORD) as oscar:
        theirs = oscar.submit_judge(
            collection,
            judge_labels(GRADES | {"b": 0}),
            name="oscar",
            model="m2",
            saw_human_qrels=True,
        )
    jury = admin.create_jury(
        collection,
        name="jury",
        members=[mine["judge"]["id"], theirs["judge"]["id"]],
        method="dawid-skene",
        pool=pool.number,
    )
    assert jury["run"] is not None
    with Client.login(server, researcher.username, PASSWORD) as rita:
        meta = rita.meta_evaluation(collection, measure="AP", sort="kappa")
    assert meta["state"] == "done"
    rows = {r["judge"]["name"]: r for r in meta["result"]["judges"]}
    assert set(rows) == {"rita-perfect", "anonymous judge #1", "jury"}
    assert rows["rita-perfect"]["labels"]["kappa"]["value"] == 1.0
    assert rows["rita-perfect"]["ledger"]["cost_per_1k"] == 10.0  # 0.3 over 30 labels
    hidden = rows["anonymous judge #1"]
    assert hidden["judge"]["saw_human_qrels"] is True and hidden["judge"]["model"] == ""
    assert hidden["labels"]["kappa"]["value"] < 1.0
    assert rows["jury"]["jury"]["method"] == "dawid-skene"
    # the first row has the best kappa; two runs: tau-b is 1 under every judge that ranks them
    assert meta["result"]["judges"][0]["labels"]["kappa"]["value"] == 1.0
