"""ir_datasets as a collection source, offline, from a cache built out of ../shared/data/cranfield.

The cache is what ir_datasets extracts from cran.tar.gz, placed by hand: the three files of the
collection, unmodified (symlinks), at ``$IR_DATASETS_HOME/cranfield/{docs,queries,qrels}.txt``.
ir_datasets only checks that these exist (its md5 is of the archive, checked while downloading).

ir_datasets fixes its cache directory when it is imported, so every check that imports it runs in
a child process with ``IR_DATASETS_HOME`` set (this process never imports it and never writes to
the user's cache). The child has no network: it runs in a new network namespace (``unshare -n``)
where the kernel allows it, and in any case with ``socket`` refusing, and recording, every
connection and name look-up, so "nothing was attempted" is checked, not assumed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from django.core.management import call_command

from judging.assessments.models import QrelsVersion
from judging.assessments.services import qrels_import
from judging.campaigns.formats import TopicRecord, parse_documents, parse_topics
from judging.campaigns.models import Campaign, Document, Topic
from judging.campaigns.services import documents_import, topics_import
from judging.core.errors import InvalidInput
from judging.workflows import irds_source
from tests._shared_data import needs_shared_data

REPO = Path(__file__).resolve().parents[1]
HAS_IRDS = importlib.util.find_spec("ir_datasets") is not None
needs_irds = pytest.mark.skipif(
    not HAS_IRDS, reason='ir_datasets is not installed (pip install -e ".[irds]")'
)
pytestmark = [needs_shared_data("cranfield")]

CRAN_FILES = {"docs.txt": "cran.all.1400", "queries.txt": "cran.qry", "qrels.txt": "cranqrel"}
CRAN_URL = "http://ir.dcs.gla.ac.uk/resources/test_collections/cran/cran.tar.gz"

# Runs in the child: network refused at the socket, then one scenario, answers as JSON.
CHILD = r"""
import json, os, socket, sys

attempts = []
_connect = socket.socket.connect

def _refuse_connect(self, address):
    if self.family == getattr(socket, "AF_UNIX", None):
        return _connect(self, address)
    attempts.append("connect " + repr(address))
    raise OSError("the network is off in this test")

def _refuse_lookup(*args, **kwargs):
    attempts.append("getaddrinfo " + repr(args[:2]))
    raise socket.gaierror("the network is off in this test")

socket.socket.connect = _refuse_connect
socket.socket.connect_ex = _refuse_connect
socket.getaddrinfo = _refuse_lookup

from judging.workflows import irds_source as s

dataset_id, docids, out_path = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
out = {}
try:
    c = s.collection_from_ir_datasets(dataset_id)
    out["topics"] = [[t.qid, t.title, t.description, t.narrative] for t in c.topics]
    out["topics_jsonl"] = c.topics_jsonl().decode()
    out["qrels"] = c.qrels.decode() if c.qrels is not None else None
    out["qrels_count"] = c.qrels_count
    out["grade_labels"] = {str(g): text for g, text in c.grade_labels.items()}
    out["has_docs"] = c.has_docs
    out["texts"] = c.texts(docids)
    out["documents_jsonl"] = c.documents_jsonl(docids[:20]).decode()
    out["texts_again"] = c.texts(docids[:3])
except s.IrdsError as e:
    out["error"] = {"class": type(e).__name__, "code": e.code, "message": e.message,
                    "sources": getattr(e, "sources", None), "status": e.status}
import ir_datasets.util.download as d
out["requests_download_refuses"] = d.RequestsDownload.stream is s._refusing_stream
out["attempts"] = attempts
home = os.path.join(os.environ["IR_DATASETS_HOME"], "cranfield")
out["cache_files"] = sorted(os.listdir(home)) if os.path.isdir(home) else []
with open(out_path, "w") as f:
    json.dump(out, f)
"""


# Two of these start together (on a file appearing) to build one docstore at the same time.
RACE_CHILD = r"""
import os, sys, time
from judging.workflows import irds_source as s
c = s.collection_from_ir_datasets("cranfield")
open(sys.argv[2], "w").close()  # ready
while not os.path.exists(sys.argv[1]):
    time.sleep(0.001)
texts = c.texts(["1", "1400"])
assert sorted(texts) == ["1", "1400"], texts
"""

COUNT_CHILD = r"""
import ir_datasets
print(ir_datasets.load("cranfield").docs_store().count())
"""


@cache
def _unshare_works() -> bool:
    """True where ``unshare -n`` can give a child a network namespace of its own (root)."""
    if shutil.which("unshare") is None:
        return False
    try:
        done = subprocess.run(["unshare", "-n", "true"], capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def _cache(root: Path, cran: Path, files: tuple[str, ...]) -> Path:
    home = root / "irds-home"
    (home / "cranfield").mkdir(parents=True)
    for name in files:
        (home / "cranfield" / name).symlink_to(cran / CRAN_FILES[name])
    return home


def _env(home: Path) -> dict[str, str]:
    env = {
        **os.environ,
        "IR_DATASETS_HOME": str(home),
        "PYTHONPATH": str(REPO),
        "DJANGO_SETTINGS_MODULE": "judging.settings",
        "IR_DATASETS_DL_TRIES": "1",
    }
    for proxy in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        env.pop(proxy, None)
    return env


def _offline(command: list[str]) -> list[str]:
    return ["unshare", "-n", *command] if _unshare_works() else command


def _child(home: Path, tmp: Path, dataset_id: str = "cranfield", docids: list[str] | None = None):
    out = tmp / f"out-{dataset_id.replace('/', '_')}.json"
    env = _env(home)
    command = [sys.executable, "-c", CHILD, dataset_id, json.dumps(docids or []), str(out)]
    done = subprocess.run(_offline(command), env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-4000:]
    answer: dict[str, Any] = json.loads(out.read_text())
    return answer


ALL_DOCIDS = [str(i) for i in range(1, 1401)]


@pytest.fixture(scope="module")
def cached(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> dict[str, Any]:
    """The whole Cranfield cache: every document's text asked for, and one docid it lacks."""
    if not HAS_IRDS:
        pytest.skip('ir_datasets is not installed (pip install -e ".[irds]")')
    tmp = tmp_path_factory.mktemp("irds")
    home = _cache(tmp, shared_data / "cranfield", tuple(CRAN_FILES))
    return _child(home, tmp, docids=[*ALL_DOCIDS, "no-such-doc", "1"])


def _cranqrel_as_trec(cran: Path) -> str:
    rows = (line.split() for line in (cran / "cranqrel").read_text().splitlines() if line.strip())
    return "".join(f"{q} 0 {d} {g}\n" for q, d, g in rows)


@needs_irds
def test_a_cache_built_from_the_shared_files_is_accepted_offline(cached: dict[str, Any]) -> None:
    assert "error" not in cached
    assert cached["attempts"] == []  # not one connection or name look-up
    assert cached["requests_download_refuses"] is True
    # ir_datasets built its docstore beside the files (under Pooljudge's lock file), and
    # touched nothing else there
    assert cached["cache_files"] == [
        "docs.pklz4",
        "docs.pklz4.pooljudge-build.lock",
        "docs.txt",
        "qrels.txt",
        "queries.txt",
    ]


@needs_irds
def test_queries_are_numbered_as_the_qrels_number_them(
    cached: dict[str, Any], shared_data: Path
) -> None:
    topics = cached["topics"]
    assert len(topics) == 225
    # cran.qry's .I values skip numbers (001, 002, 004, ...); ir_datasets numbers 1..225 in file
    # order, as cranqrel does and as the project's own SMART reader does
    assert [t[0] for t in topics] == [str(i) for i in range(1, 226)]
    ours = parse_topics(shared_data / "cranfield" / "cran.qry", fmt="smart")
    assert [[t.qid, t.title] for t in ours] == [[t[0], t[1]] for t in topics]
    assert topics[2][1].startswith("what problems of heat conduction in composite slabs")
    assert all(t[2] == "" and t[3] == "" for t in topics)  # Cranfield queries have only text


@needs_irds
def test_qrels_are_cranqrel_as_trec_lines_with_the_grades_as_given(
    cached: dict[str, Any], shared_data: Path
) -> None:
    assert cached["qrels"] == _cranqrel_as_trec(shared_data / "cranfield")
    assert cached["qrels_count"] == 1837
    grades = [int(line.split()[3]) for line in cached["qrels"].splitlines()]
    counts = {g: grades.count(g) for g in sorted(set(grades))}
    assert counts == {-1: 225, 1: 128, 2: 387, 3: 734, 4: 363}  # one -1 per query
    qids_with_minus_one = {ln.split()[0] for ln in cached["qrels"].splitlines() if ln[-2:] == "-1"}
    assert len(qids_with_minus_one) == 225
    assert sorted(cached["grade_labels"], key=int) == ["-1", "1", "2", "3", "4"]


@needs_irds
def test_document_text_comes_from_the_docstore_and_matches_the_file(
    cached: dict[str, Any], shared_data: Path
) -> None:
    texts = cached["texts"]
    assert sorted(texts, key=int) == ALL_DOCIDS  # "no-such-doc" is left out, "1" once
    assert texts["471"] == ["", ""] and texts["995"] == ["", ""]  # the two empty documents
    assert texts["1"][0] == (
        "experimental investigation of the aerodynamics of a wing in a slipstream ."
    )
    assert "\r" not in "".join(t for _, t in texts.values())
    # the project's SMART reader, written independently, reads the same words from the file
    reference = parse_documents(shared_data / "cranfield" / "cran.all.1400", fmt="smart")
    assert len(reference) == 1400
    for doc in reference:
        title, text = texts[doc.docid]
        assert (title, " ".join(text.split())) == (doc.title, " ".join(doc.text.split()))
    assert sorted(cached["texts_again"]) == ["1", "2", "3"]  # the built docstore, read again


@needs_irds
def test_an_empty_cache_is_refused_without_a_download(tmp_path: Path, shared_data: Path) -> None:
    home = _cache(tmp_path, shared_data / "cranfield", ())
    answer = _child(home, tmp_path)
    assert answer["attempts"] == []
    error = answer["error"]
    assert (error["class"], error["code"], error["status"]) == (
        "IrdsNotCached",
        "ir_datasets_not_cached",
        400,
    )
    assert CRAN_URL in error["sources"]
    assert f"not in the local cache {home}" in error["message"]
    assert "its queries" in error["message"] and "never downloads" in error["message"]
    assert answer["cache_files"] == []  # no archive, no half-written .tmp file


@needs_irds
def test_missing_qrels_are_reported_before_anything_is_returned(
    tmp_path: Path, shared_data: Path
) -> None:
    home = _cache(tmp_path, shared_data / "cranfield", ("docs.txt", "queries.txt"))
    answer = _child(home, tmp_path)
    assert answer["attempts"] == []
    assert answer["error"]["class"] == "IrdsNotCached"
    assert "its qrels are not in the local cache" in answer["error"]["message"]
    assert answer["cache_files"] == ["docs.txt", "queries.txt"]


@needs_irds
def test_missing_documents_are_reported_when_their_text_is_asked_for_then_read(
    tmp_path: Path, shared_data: Path
) -> None:
    home = _cache(tmp_path, shared_data / "cranfield", ("queries.txt", "qrels.txt"))
    answer = _child(home, tmp_path, docids=["1"])
    assert answer["attempts"] == []
    # topics and qrels were read (in the child, before texts() raised)
    assert answer["error"]["class"] == "IrdsNotCached"
    assert "its docs are not in the local cache" in answer["error"]["message"]
    # ir_datasets leaves an empty docstore behind; it is rebuilt once the documents are there
    (home / "cranfield" / "docs.txt").symlink_to(shared_data / "cranfield" / "cran.all.1400")
    again = _child(home, tmp_path, docids=["1", "1400"])
    assert "error" not in again and again["attempts"] == []
    assert sorted(again["texts"]) == ["1", "1400"]
    assert again["texts"]["1"][0].startswith("experimental investigation of the aerodynamics")


@needs_irds
def test_an_unknown_dataset_id_is_a_clear_error(tmp_path: Path, shared_data: Path) -> None:
    home = _cache(tmp_path, shared_data / "cranfield", tuple(CRAN_FILES))
    answer = _child(home, tmp_path, dataset_id="no-such/dataset")
    assert answer["attempts"] == []
    assert answer["error"]["class"] == "IrdsUnknownDataset"
    assert "ir_datasets has no dataset 'no-such/dataset'" in answer["error"]["message"]


def test_without_ir_datasets_installed_the_error_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "ir_datasets", None)  # what an absent package raises
    with pytest.raises(irds_source.IrdsNotInstalled) as caught:
        irds_source.collection_from_ir_datasets("cranfield")
    assert caught.value.status == 400
    assert "ir_datasets package is not installed" in caught.value.message
    assert 'pip install -e ".[irds]"' in caught.value.message


@needs_irds
@pytest.mark.django_db
def test_what_it_gives_imports_through_the_validating_services(
    cached: dict[str, Any], admin_user: Any
) -> None:
    scale = [{"grade": g, "label": f"code {g}"} for g in range(5)]
    call_command("create_campaign", "cran-irds", scale=json.dumps(scale))
    campaign = Campaign.objects.get(name="cran-irds")
    topics = topics_import(
        campaign=campaign, data=cached["topics_jsonl"].encode(), fmt="jsonl", source="irds"
    )
    assert topics.created == 225
    assert Topic.objects.get(campaign=campaign, qid="3").title.startswith(
        "what problems of heat conduction"
    )
    version = qrels_import(campaign=campaign, data=cached["qrels"].encode(), source="irds")
    assert QrelsVersion.objects.get(pk=version.pk).num_judgments == 1837
    docs = documents_import(
        campaign=campaign, data=cached["documents_jsonl"].encode(), fmt="jsonl", source="irds"
    )
    assert docs.created == 20
    assert Document.objects.get(campaign=campaign, docid="1").title.startswith(
        "experimental investigation of the aerodynamics"
    )


class _Query(NamedTuple):
    query_id: str
    text: str


class _TrecQuery(NamedTuple):
    query_id: str
    title: str
    description: str
    narrative: str


class _Qrel(NamedTuple):
    query_id: str
    doc_id: str
    relevance: Any
    iteration: str


def test_ids_that_trec_files_cannot_hold_are_all_reported_with_where_they_are() -> None:
    queries = [_Query("1", "a"), _Query("two words", "b"), _Query("1", "c"), _Query("", "d")]
    with pytest.raises(InvalidInput) as caught:
        irds_source._read_topics(queries, "ir_datasets:x", 100)
    assert caught.value.source == "ir_datasets:x" and caught.value.total == 3
    assert [(p.location, p.message) for p in caught.value.problems] == [
        ("queries[2]", "qid 'two words' contains whitespace (TREC files are whitespace separated)"),
        ("queries[3]", "qid '1' repeated"),
        ("queries[4]", "empty qid"),
    ]
    qrels = [_Qrel("1", "d 1", 1, "0"), _Qrel("1", "d2", "2", "0"), _Qrel("1", "d3", 2, "Q0")]
    with pytest.raises(InvalidInput) as caught:
        irds_source._read_qrels(qrels, "ir_datasets:x", 100)
    assert [(p.location, p.message) for p in caught.value.problems] == [
        ("qrels[1]", "docid 'd 1' contains whitespace (TREC files are whitespace separated)"),
        ("qrels[2]", "grade '2' is not an integer"),
    ]


def test_topic_fields_come_from_title_description_narrative_or_else_the_text() -> None:
    trec = _TrecQuery("301", " International\n Organized Crime ", "Identify  orgs.", "A doc...")
    (topic,) = irds_source._read_topics([trec], "s", 100)
    assert topic == TopicRecord(
        "301", "International Organized Crime", "Identify orgs.", "A doc..."
    )
    (plain,) = irds_source._read_topics([_Query(" 7 ", "what is\nlift?")], "s", 100)
    assert plain == TopicRecord("7", "what is lift?")
    data, count = irds_source._read_qrels([_Qrel("7", "d3", -1, "Q0")], "s", 100)
    assert (data, count) == (b"7 Q0 d3 -1\n", 1)
    with pytest.raises(InvalidInput) as caught:
        irds_source._read_topics([], "s", 100)
    assert [(p.location, p.message) for p in caught.value.problems] == [("queries", "no queries")]


@needs_irds
def test_two_workers_building_the_docstore_at_once_build_it_once(
    tmp_path: Path, shared_data: Path
) -> None:
    home = _cache(tmp_path, shared_data / "cranfield", tuple(CRAN_FILES))
    go = tmp_path / "go"
    workers = [
        subprocess.Popen(
            _offline([sys.executable, "-c", RACE_CHILD, str(go), str(tmp_path / f"ready{i}")]),
            env=_env(home),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    # both are past their imports and topics when they wait; then they ask for text together
    deadline = time.monotonic() + 240
    while not all((tmp_path / f"ready{i}").exists() for i in range(2)):
        assert all(w.poll() is None for w in workers), [w.communicate() for w in workers]
        assert time.monotonic() < deadline, "the workers never got ready"
        time.sleep(0.01)
    go.touch()
    for worker in workers:
        _, err = worker.communicate(timeout=300)
        assert worker.returncode == 0, err[-4000:]
    count = subprocess.run(
        _offline([sys.executable, "-c", COUNT_CHILD]),
        env=_env(home),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert count.returncode == 0, count.stderr[-4000:]
    # ir_datasets alone appends every document twice when two builds overlap (2800)
    assert count.stdout.split() == ["1400"]
