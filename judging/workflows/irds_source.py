"""ir_datasets as a collection source: topics, qrels and, lazily, document text from its cache.

``collection_from_ir_datasets("cranfield")`` reads a dataset that the optional ``ir_datasets``
package (``pip install -e ".[irds]"``) already holds in its local cache (``$IR_DATASETS_HOME``,
by default ``~/.ir_datasets``; ir_datasets reads it once, when it is first imported). Topics and
qrels are read at once, so that a missing or damaged cache is reported before anything is
stored; document text is read only for the docids asked for (the pooled ones, when a pool is
built), through ir_datasets' docstore, which it builds from the cached documents on first use.

Nothing is ever downloaded: this module replaces the ``stream`` of every ir_datasets downloader
that reaches the network (every ``BaseDownload`` but ``LocalDownload``) and its lazy
``requests`` import with a refusal, once per process, and reports a dataset whose files are not
cached as :class:`IrdsNotCached`, naming what ir_datasets would have fetched. ir_datasets has no
setting of its own for this: its ``Download.path`` (``ir_datasets/util/download.py``) falls back
to the network whenever the file is absent.

A cache can be prepared by hand: ir_datasets' ``Cache`` (``ir_datasets/util/fileio.py``) only
checks that its extracted file exists, and the md5 it knows is checked only while an archive is
downloaded. For Cranfield the three files of the collection go to
``$IR_DATASETS_HOME/cranfield/docs.txt`` (``cran.all.1400``), ``queries.txt`` (``cran.qry``) and
``qrels.txt`` (``cranqrel``), which is how ``tests/test_irds_source.py`` builds its cache.

What comes out is what the existing, validating services take: :meth:`IrdsCollection.topics_jsonl`
for ``topics_import(fmt="jsonl")``, :attr:`IrdsCollection.qrels` (TREC qrels, grades as the
dataset gives them: Cranfield's -1, "judged, of no interest", stays -1, which Pooljudge's qrels
read as pooled but unjudged, as when cranqrel is imported as a file) for ``qrels_import`` and
:meth:`IrdsCollection.documents_jsonl` for ``documents_import(fmt="jsonl")``.
"""

from __future__ import annotations

import fcntl
import importlib
import json
import os
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from judging.campaigns.formats import TopicRecord
from judging.core.errors import DomainError, InvalidInput
from metrics.problems import Problems

__all__ = [
    "IrdsCollection",
    "IrdsError",
    "IrdsNotCached",
    "IrdsNotInstalled",
    "IrdsUnknownDataset",
    "collection_from_ir_datasets",
]

INSTALL_HINT = 'install it with: pip install -e ".[irds]"'


class IrdsError(DomainError):
    """A dataset that ir_datasets cannot give (400): the message names the dataset and why."""

    code = "ir_datasets_unavailable"


class IrdsNotInstalled(IrdsError):
    code = "ir_datasets_not_installed"


class IrdsUnknownDataset(IrdsError):
    code = "ir_datasets_unknown_dataset"


class IrdsNotCached(IrdsError):
    """The dataset's files are not in the local cache; ``sources`` are what ir_datasets would
    have downloaded (and Pooljudge refused to)."""

    code = "ir_datasets_not_cached"

    def __init__(self, message: str, sources: list[str]) -> None:
        super().__init__(message)
        self.sources = sources


class _DownloadRefused(Exception):
    def __init__(self, target: str) -> None:
        super().__init__(f"Pooljudge does not download ({target})")
        self.target = target


_GUARD_LOCK = threading.Lock()
_GUARD_FLAG = "_pooljudge_downloads_refused"


def _refusing_stream(self: Any, *args: Any, **kwargs: Any) -> Any:
    raise _DownloadRefused(str(getattr(self, "url", None) or getattr(self, "uri", None) or self))


def _refusing_requests() -> Any:
    raise _DownloadRefused("an HTTP request")


def _subclasses(cls: type) -> Iterator[type]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def _refuse_downloads(irds: Any) -> None:
    """Make every network download of this process's ir_datasets fail at once (idempotent).

    ir_datasets registers all its datasets (and so defines every downloader class) when it is
    imported, so the classes found here are all there are.
    """
    with _GUARD_LOCK:
        if getattr(irds, _GUARD_FLAG, False):
            return
        download = irds.util.download
        for cls in _subclasses(download.BaseDownload):
            if not issubclass(cls, download.LocalDownload) and "stream" in cls.__dict__:
                cls.stream = _refusing_stream  # type: ignore[attr-defined]
        irds.lazy_libs.requests = _refusing_requests
        setattr(irds, _GUARD_FLAG, True)


def _ir_datasets() -> Any:
    try:
        irds = importlib.import_module("ir_datasets")
    except ImportError as exc:
        raise IrdsNotInstalled(
            f"the ir_datasets package is not installed ({exc}); {INSTALL_HINT}"
        ) from None
    _refuse_downloads(irds)
    return irds


def _home(irds: Any) -> str:
    return str(irds.util.home_path())


def _refusals(exc: BaseException) -> tuple[list[str], list[str]]:
    """The refused download targets inside ``exc`` (ir_datasets collects one error per mirror
    into a ``RuntimeError``'s args) and the other errors found beside them."""
    refused: list[str] = []
    others: list[str] = []
    seen: set[int] = set()

    def walk(item: object) -> None:
        if id(item) in seen:
            return
        seen.add(id(item))
        if isinstance(item, _DownloadRefused):
            refused.append(item.target)
        elif isinstance(item, tuple | list):
            for part in item:
                walk(part)
        elif isinstance(item, BaseException):
            nested = [a for a in item.args if isinstance(a, BaseException | tuple | list)]
            if not nested:
                others.append(f"{type(item).__name__}: {item}")
            for part in (*nested, item.__cause__, item.__context__):
                if part is not None:
                    walk(part)

    walk(exc)
    return refused, others


@contextmanager
def _reading(irds: Any, dataset_id: str, what: str) -> Iterator[None]:
    """Turn what ir_datasets raises while reading ``what`` into an answer for the user."""
    try:
        yield
    except DomainError:
        raise
    except Exception as exc:
        refused, others = _refusals(exc)
        if refused:
            also = f" (also: {'; '.join(others)})" if others else ""
            raise IrdsNotCached(
                f"ir_datasets dataset {dataset_id!r}: its {what} are not in the local cache "
                f"{_home(irds)} (IR_DATASETS_HOME, read when ir_datasets is first imported); "
                f"Pooljudge never downloads, and ir_datasets would have fetched "
                f"{', '.join(refused)}{also}. Fill the cache where downloads are allowed "
                f"(ir_datasets export {dataset_id} {what}) and copy it here, or place the "
                f"dataset's extracted files there.",
                refused,
            ) from exc
        raise IrdsError(
            f"ir_datasets dataset {dataset_id!r}: its {what} could not be read from the cache "
            f"{_home(irds)}: {type(exc).__name__}: {exc}"
        ) from exc


def _collapse(text: object) -> str:
    return " ".join(str(text or "").split())


def _field(record: Any, *names: str) -> str | None:
    for name in names:
        if name in getattr(record, "_fields", ()):
            return str(getattr(record, name) or "")
    return None


def _topic(query: Any) -> tuple[str, str, str, str]:
    """``(qid, title, description, narrative)`` of one ir_datasets query: ``title`` is its
    title if it has one, else its text (Cranfield's and MS MARCO's queries have only text)."""
    title = _field(query, "title", "text", "query")
    if title is None:
        title = query.default_text() if hasattr(query, "default_text") else ""
    return (
        str(query.query_id).strip(),
        _collapse(title),
        _collapse(_field(query, "description")),
        _collapse(_field(query, "narrative")),
    )


def _id_problem(kind: str, ident: str) -> str | None:
    if not ident:
        return f"empty {kind}"
    if len(ident.split()) != 1 or ident.split()[0] != ident:
        return f"{kind} {ident!r} contains whitespace (TREC files are whitespace separated)"
    return None


def _read_topics(queries: Iterable[Any], source: str, max_problems: int) -> tuple[TopicRecord, ...]:
    problems = Problems(max_problems)
    topics: list[TopicRecord] = []
    seen: set[str] = set()
    for number, query in enumerate(queries, start=1):
        qid, title, description, narrative = _topic(query)
        where = f"queries[{number}]"
        problem = _id_problem("qid", qid)
        if problem is None and qid in seen:
            problem = f"qid {qid!r} repeated"
        if problem is not None:
            problems.add_at(where, problem)
            continue
        seen.add(qid)
        topics.append(TopicRecord(qid, title, description, narrative))
    if not topics and not problems:
        problems.add_at("queries", "no queries")
    _raise_if_any(problems, source, "the dataset's queries")
    return tuple(topics)


def _read_qrels(qrels: Iterable[Any], source: str, max_problems: int) -> tuple[bytes, int]:
    problems = Problems(max_problems)
    lines: list[str] = []
    for number, qrel in enumerate(qrels, start=1):
        qid, docid = str(qrel.query_id).strip(), str(qrel.doc_id).strip()
        iteration = str(getattr(qrel, "iteration", "0") or "0").strip()
        where = f"qrels[{number}]"
        problem = _id_problem("qid", qid) or _id_problem("docid", docid)
        if problem is None and not isinstance(qrel.relevance, int):
            problem = f"grade {qrel.relevance!r} is not an integer"
        if _id_problem("iteration", iteration):
            iteration = "0"  # trec_eval ignores the column; keep the line whitespace-separated
        if problem is not None:
            problems.add_at(where, problem)
            continue
        lines.append(f"{qid} {iteration} {docid} {qrel.relevance}\n")
    _raise_if_any(problems, source, "the dataset's qrels")
    return "".join(lines).encode(), len(lines)


def _raise_if_any(problems: Problems, source: str, what: str) -> None:
    if problems:
        raise InvalidInput(
            f"{what} have {problems.total} problem(s); nothing was stored",
            problems.sorted(),
            total=problems.total,
            source=source,
        )


def _built_docstore(dataset: Any) -> Any:
    """The dataset's docstore, built once even when several processes ask at the same time.

    ir_datasets' ``PickleLz4FullStore.build`` checks ``built()`` before it takes its file lock,
    so two workers that build one store at once both append every document (a Cranfield store
    of 2,800 records). Here the first build happens under an exclusive lock on a file beside the
    store, and whoever waited finds it built. Stores of other kinds are left to ir_datasets.
    """
    store = dataset.docs_store()
    path = getattr(store, "path", None)
    builds = callable(getattr(store, "build", None)) and callable(getattr(store, "built", None))
    if not builds or not isinstance(path, str | os.PathLike) or store.built():
        return store
    os.makedirs(os.path.dirname(os.fspath(path)) or ".", exist_ok=True)
    with open(f"{os.fspath(path)}.pooljudge-build.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not store.built():
                store.build()
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return store


@dataclass
class IrdsCollection:
    """One ir_datasets dataset: its topics and qrels, read; its documents' text, on demand."""

    dataset_id: str
    topics: tuple[TopicRecord, ...]
    qrels: bytes | None  # TREC qrels (qid iteration docid grade), or None: the dataset has none
    qrels_count: int
    # what the dataset says each grade means ({} when it says nothing); Cranfield's run from -1
    # ("of no interest") up, and ir_datasets describes 4 as the complete answer, where
    # cranqrel.readme (Cleverdon) calls 1 that: the grades are the file's, only the words differ
    grade_labels: dict[int, str]
    has_docs: bool
    _dataset: Any = field(repr=False, compare=False)
    _irds: Any = field(repr=False, compare=False)
    _store: Any = field(default=None, repr=False, compare=False)

    @property
    def source(self) -> str:
        """How files and problems name this dataset (``ir_datasets:cranfield``)."""
        return f"ir_datasets:{self.dataset_id}"

    def topics_jsonl(self) -> bytes:
        """The topics as JSON lines, the input of ``topics_import(fmt="jsonl")``."""
        return "".join(
            json.dumps(
                {
                    "qid": t.qid,
                    "title": t.title,
                    "description": t.description,
                    "narrative": t.narrative,
                },
                ensure_ascii=False,
            )
            + "\n"
            for t in self.topics
        ).encode()

    def texts(self, docids: Iterable[str]) -> dict[str, tuple[str, str]]:
        """``{docid: (title, text)}`` for those of ``docids`` the dataset has (the others are
        left out), read through ir_datasets' docstore; the first call builds the docstore from
        the cached documents (ir_datasets keeps it beside them). Titles have their whitespace
        collapsed; text is as the dataset gives it (a dataset without titles gives "")."""
        wanted = list(dict.fromkeys(str(d) for d in docids))
        if not self.has_docs:
            raise IrdsError(f"ir_datasets dataset {self.dataset_id!r} has no documents")
        if not wanted:
            return {}
        with _reading(self._irds, self.dataset_id, "docs"):
            if self._store is None:
                self._store = _built_docstore(self._dataset)
            found = self._store.get_many(wanted)
        out: dict[str, tuple[str, str]] = {}
        for docid, doc in found.items():
            text = _field(doc, "text", "body", "abstract")
            if text is None:
                text = doc.default_text() if hasattr(doc, "default_text") else ""
            out[str(docid)] = (_collapse(_field(doc, "title")), text.replace("\r\n", "\n"))
        return out

    def documents_jsonl(self, docids: Iterable[str]) -> bytes:
        """Those documents as JSON lines, the input of ``documents_import(fmt="jsonl")``."""
        return "".join(
            json.dumps({"docid": d, "title": title, "text": text}, ensure_ascii=False) + "\n"
            for d, (title, text) in self.texts(docids).items()
        ).encode()


def collection_from_ir_datasets(
    dataset_id: str, *, max_problems: int | None = None
) -> IrdsCollection:
    """Read ``dataset_id``'s topics and qrels from ir_datasets' local cache, never the network.

    Raises :class:`IrdsNotInstalled`, :class:`IrdsUnknownDataset`, :class:`IrdsNotCached` (the
    files are not cached: ir_datasets would download them), :class:`IrdsError` (a dataset
    without queries, or a cache ir_datasets cannot read) or ``InvalidInput`` (ids that TREC
    files cannot hold, a qid given twice), each a 400 naming the dataset.
    """
    irds = _ir_datasets()
    dataset_id = dataset_id.strip()
    limit = max_problems or settings.POOLJUDGE_UPLOADS.max_problems
    source = f"ir_datasets:{dataset_id}"
    try:
        dataset = irds.load(dataset_id)
    except KeyError:
        raise IrdsUnknownDataset(
            f"ir_datasets has no dataset {dataset_id!r} (its ids look like 'cranfield' or "
            f"'msmarco-passage/trec-dl-2019'; 'ir_datasets list' shows them)"
        ) from None
    if not dataset.has_queries():
        raise IrdsError(f"ir_datasets dataset {dataset_id!r} has no queries")
    with _reading(irds, dataset_id, "queries"):
        topics = _read_topics(dataset.queries_iter(), source, limit)
    qrels: bytes | None = None
    count = 0
    labels: dict[int, str] = {}
    if dataset.has_qrels():
        with _reading(irds, dataset_id, "qrels"):
            qrels, count = _read_qrels(dataset.qrels_iter(), source, limit)
            labels = {int(g): str(text) for g, text in (dataset.qrels_defs() or {}).items()}
    return IrdsCollection(
        dataset_id=dataset_id,
        topics=topics,
        qrels=qrels,
        qrels_count=count,
        grade_labels=labels,
        has_docs=bool(dataset.has_docs()),
        _dataset=dataset,
        _irds=irds,
    )
