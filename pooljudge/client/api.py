"""The client: one method per thing a script does with the service, each one request (or a
few, for the waits), typed in and out."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import requests

from pooljudge import __version__
from pooljudge.client import exports, payloads, waits
from pooljudge.client.errors import AuthenticationError, NotFound, PooljudgeError
from pooljudge.client.http import Params, Transport
from pooljudge.client.types import (
    Campaign,
    CheckResult,
    Chunking,
    Evaluation,
    GoldenSet,
    ImportSummary,
    Leaderboard,
    Lease,
    Me,
    Passage,
    PoolVersion,
    QrelsVersion,
    Run,
)

__all__ = ["Client"]

TEXT_PAGE_SIZE = 50  # the service's default POOLJUDGE_MAX_TEXT_PAGE_SIZE

CampaignRef = Campaign | int | str  # the campaign, its id, or its name
RunRef = Run | int
QrelsRef = QrelsVersion | int  # the version, or its id (not its number in the campaign)
PathLike = str | os.PathLike[str]
RunInput = PathLike | Mapping[str, Mapping[str, float]] | payloads.DataFrameLike
TopicsInput = (
    PathLike | Mapping[str, str] | Mapping[str, Mapping[str, Any]] | Iterable[Mapping[str, Any]]
)
DocumentsInput = TopicsInput
QrelsInput = PathLike | Mapping[str, Mapping[str, int]]

_REQUESTS = getattr(requests, "__version__", "?")


def _id(ref: Campaign | Run | QrelsVersion | Chunking | int) -> int:
    return ref if isinstance(ref, int) else ref.id


def _number(value: float | str) -> str:
    return value if isinstance(value, str) else repr(float(value))


class Client:
    """A Pooljudge service at ``base_url`` (``http://host:8000``), as the user whose API token
    is ``token``; :meth:`login` gets one from a username and password.

    Every method raises :class:`~pooljudge.client.errors.PooljudgeError` (a subclass for
    400, 401, 403, 404, 409, 429) when the service refuses, with its problems and the URL.
    ``session`` is a ``requests.Session`` of yours (proxies, certificates, retries), left
    unchanged; ``page_size`` is how many items each page of a list asks for.
    """

    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        *,
        timeout: float = 30.0,
        session: requests.Session | None = None,
        page_size: int = 100,
    ) -> None:
        self._http = Transport(
            base_url,
            token,
            timeout=timeout,
            session=session,
            user_agent=f"pooljudge-client/{__version__} python-requests/{_REQUESTS}",
        )
        self.page_size = page_size
        self.token_expires_at: str | None = None  # known when the client logged in

    @classmethod
    def login(
        cls,
        base_url: str,
        username: str,
        password: str,
        *,
        timeout: float = 30.0,
        session: requests.Session | None = None,
    ) -> Client:
        """A client holding the user's API token (``POST /api/v1/auth/token/``: the same token
        until it expires, then a new one). A wrong password is an ``AuthenticationError`` (the
        service answers 400, not 401); too many attempts are ``RateLimited``."""
        client = cls(base_url, timeout=timeout, session=session)
        try:
            answer = client._http.request(
                "POST", "auth/token/", json={"username": username, "password": password}
            ).json()
        except PooljudgeError as exc:
            client.close()
            raise cls._login_refused(exc) from None
        client._http.token = str(answer["token"])
        client.token_expires_at = answer.get("expires_at")
        return client

    @staticmethod
    def _login_refused(exc: PooljudgeError) -> PooljudgeError:
        """DRF answers a wrong username or password with a 400 (a validation error), not a
        401: the client raises it as the authentication failure it is."""
        if exc.status != 400:
            return exc
        return AuthenticationError(
            exc.detail,
            status=exc.status,
            code=exc.code,
            method=exc.method,
            url=exc.url,
            problems=exc.problems,
            body=exc.body,
        )

    @property
    def token(self) -> str | None:
        return self._http.token

    @property
    def api_root(self) -> str:
        """The API's address: ``http://host:8000/api/v1/``."""
        return self._http.root

    def logout(self) -> None:
        """Revoke the token (every client using it gets 401 afterwards) and forget it."""
        self._http.request("DELETE", "auth/token/")
        self._http.token = None

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def me(self) -> Me:
        """Who the token belongs to, and their roles (admin, researcher, annotator)."""
        return Me.from_api(self._http.get_json("me/"))

    # --- campaigns ----------------------------------------------------------------------

    def create_campaign(self, name: str, **options: Any) -> Campaign:
        """A new campaign (admins). ``options`` are the API's fields: ``description``,
        ``guidelines``, ``scale`` (``{0: "Not relevant", 1: "Relevant"}`` or the API's list of
        ``{"grade", "label"}``), ``relevance_threshold``, ``unknown_topic_policy`` (reject,
        ignore), ``run_pooling`` (auto, open, closed), ``score_precision`` (double, single),
        ``highlight_terms``."""
        scale = options.get("scale")
        if isinstance(scale, Mapping):
            options["scale"] = [{"grade": int(g), "label": str(lb)} for g, lb in scale.items()]
        body = {"name": name, **options}
        return Campaign.from_api(self._http.request("POST", "campaigns/", json=body).json())

    def campaigns(self) -> list[Campaign]:
        """Every campaign you may see (all pages)."""
        pages = self._http.pages("campaigns/", page_size=self.page_size)
        return [Campaign.from_api(raw) for raw in pages]

    def campaign(self, id_or_name: int | str) -> Campaign:
        """The campaign with this id (an int) or name (a str)."""
        if isinstance(id_or_name, int):
            return Campaign.from_api(self._http.get_json(f"campaigns/{id_or_name}/"))
        seen = self.campaigns()
        for found in seen:
            if found.name == id_or_name:
                return found
        raise NotFound(
            f"no campaign named {id_or_name!r} among the {len(seen)} you may see",
            status=404,
            code="not_found",
            method="GET",
            url=self._http.url("campaigns/"),
        )

    def _campaign_id(self, campaign: CampaignRef) -> int:
        return self.campaign(campaign).id if isinstance(campaign, str) else _id(campaign)

    # --- topics, documents, qrels -------------------------------------------------------

    def _upload(
        self, path: str, upload: payloads.Upload, fields: Mapping[str, Any]
    ) -> requests.Response:
        return self._http.request("POST", path, files={"file": upload}, data=fields)

    def upload_topics(
        self, campaign: CampaignRef, topics: TopicsInput, *, format: str | None = None
    ) -> ImportSummary:
        """Import topics (admins): a file (TREC ``<top>``, JSONL, SMART; plain or gzip; its
        ``format`` detected unless named), ``{qid: title}``, ``{qid: {"title",
        "description", "narrative", "tags"}}`` or a list of such records with their ``qid``."""
        if isinstance(topics, str | os.PathLike):
            upload, fields = payloads.file_upload(topics), {"format": format}
        else:
            upload = payloads.packed("topics.jsonl", payloads.topics_jsonl(topics))
            fields = {"format": "jsonl"}
        answer = self._upload(f"campaigns/{self._campaign_id(campaign)}/topics/", upload, fields)
        return ImportSummary.from_api(answer.json())

    def upload_documents(
        self, campaign: CampaignRef, documents: DocumentsInput, *, format: str | None = None
    ) -> ImportSummary:
        """Import documents (admins): a file (JSONL, TREC ``<DOC>``, TSV, SMART; plain or
        gzip), ``{docid: text}``, ``{docid: {"title", "text", "url", ...}}`` (other string
        keys are kept as metadata) or a list of such records with their ``docid``."""
        if isinstance(documents, str | os.PathLike):
            upload, fields = payloads.file_upload(documents), {"format": format}
        else:
            body = payloads.documents_jsonl(documents)
            upload, fields = payloads.packed("documents.jsonl", body), {"format": "jsonl"}
        path = f"campaigns/{self._campaign_id(campaign)}/documents/"
        return ImportSummary.from_api(self._upload(path, upload, fields).json())

    def upload_qrels(
        self, campaign: CampaignRef, qrels: QrelsInput, *, note: str = ""
    ) -> QrelsVersion:
        """Import judgments as the campaign's next qrels version (admins): a file (TREC qrels,
        BEIR's qrels TSV, sample_eval's five columns) or ``{qid: {docid: grade}}``. Every run
        is then evaluated against it."""
        if isinstance(qrels, str | os.PathLike):
            upload = payloads.file_upload(qrels)
        else:
            upload = payloads.packed("qrels.tsv", payloads.qrels_tsv(qrels))
        path = f"campaigns/{self._campaign_id(campaign)}/qrels/"
        return QrelsVersion.from_api(self._upload(path, upload, {"note": note}).json())

    def qrels_versions(self, campaign: CampaignRef) -> list[QrelsVersion]:
        """The campaign's qrels versions (researchers and admins)."""
        path = f"campaigns/{self._campaign_id(campaign)}/qrels/"
        return [QrelsVersion.from_api(r) for r in self._http.pages(path, page_size=self.page_size)]

    # --- passages: chunkings, and qrels carried between them ------------------------------

    def create_chunking(
        self,
        campaign: CampaignRef,
        name: str,
        *,
        chunker: str | None = None,
        passages: PathLike | None = None,
    ) -> Chunking:
        """Cut the campaign's documents into passages (admins): with ``chunker`` (e.g.
        ``"fixed(size=500,overlap=100)"``, ``"paragraph"``, ``"sentence_window(window=3)"``;
        passage ids ``docid#<name>-<i>``), or from the team's own ``passages`` file (docid,
        passage_id, start, end per line: JSON lines or tab-separated)."""
        path = f"campaigns/{self._campaign_id(campaign)}/chunkings/"
        if (chunker is None) == (passages is None):
            raise ValueError("give a chunker or a passages file, not both and not neither")
        if chunker is not None:
            answer = self._http.request("POST", path, json={"name": name, "chunker": chunker})
        else:
            assert passages is not None
            answer = self._upload(path, payloads.file_upload(passages), {"name": name})
        return Chunking.from_api(answer.json())

    def chunkings(self, campaign: CampaignRef) -> list[Chunking]:
        """The campaign's chunkings (researchers and admins)."""
        path = f"campaigns/{self._campaign_id(campaign)}/chunkings/"
        return [Chunking.from_api(r) for r in self._http.get_json(path)]

    def passages(self, chunking: Chunking | int, *, docid: str | None = None) -> list[Passage]:
        """A chunking's passages (or one document's) with their offsets and text: what to index
        and rank by ``passage_id``."""
        path = f"chunkings/{_id(chunking)}/passages/"
        # pages with text are at most POOLJUDGE_MAX_TEXT_PAGE_SIZE (50 by default)
        size = min(self.page_size, TEXT_PAGE_SIZE)
        pages = self._http.pages(path, page_size=size, params={"docid": docid})
        return [Passage.from_api(r) for r in pages]

    def carry_qrels(
        self, qrels: QrelsRef, chunking: Chunking | str, *, min_share: float = 0.5
    ) -> QrelsVersion:
        """The campaign's next qrels version: ``qrels``' judgments carried by their text spans
        to ``chunking``'s passages (admins); its ``derivation`` states the rule and the
        coverage (relevant, non-relevant, unknown; the topics that lost their judgments)."""
        name = chunking.name if isinstance(chunking, Chunking) else chunking
        body = {"chunking": name, "min_share": min_share}
        answer = self._http.request("POST", f"qrels/{_id(qrels)}/carry/", json=body)
        return QrelsVersion.from_api(answer.json())

    def document_qrels(self, qrels: QrelsRef) -> QrelsVersion:
        """The campaign's next qrels version: ``qrels`` at document level (a document's grade is
        the highest of its judged passages'; admins)."""
        answer = self._http.request("POST", f"qrels/{_id(qrels)}/documents/")
        return QrelsVersion.from_api(answer.json())

    # --- pools, judging, publishing ------------------------------------------------------

    def request_pool(
        self,
        campaign: CampaignRef,
        *,
        strategy: str | None = None,
        depth: int | None = None,
        runs: Sequence[str] | None = None,
        timeout: float = 300,
        poll: float = 1,
    ) -> PoolVersion:
        """Build the campaign's next pool version (admins; the campaign's strategy, depth and
        pooled runs unless given) and wait until it is built; its unjudged items are then in
        the assessors' queue. Raises ``PooljudgeError`` when the build fails."""
        body = {"strategy": strategy, "depth": depth, "runs": list(runs) if runs else None}
        path = f"campaigns/{self._campaign_id(campaign)}/pools/"
        answer = self._http.request(
            "POST", path, json={k: v for k, v in body.items() if v is not None}
        )
        pool = PoolVersion.from_api(answer.json())
        done = waits.until(
            lambda: PoolVersion.from_api(self._http.get_json(f"pools/{pool.id}/")),
            lambda p: p.state in ("built", "failed"),
            timeout=timeout,
            poll=poll,
            what=f"pool version {pool.id} to be built",
        )
        if done.state == "failed":
            raise PooljudgeError(
                f"pool version {pool.id} failed: {done.raw.get('error', '')}", code="pool_failed"
            )
        return done

    def next_item(self, campaign: CampaignRef) -> Lease | None:
        """Lease the next item to judge (annotators), or ``None`` when nothing is left."""
        path = f"campaigns/{self._campaign_id(campaign)}/leases/"
        answer = self._http.request("POST", path)
        return None if answer.status_code == 204 else Lease.from_api(answer.json())

    def judge(
        self, lease: Lease | int, grade: int, *, answers: Sequence[tuple[int, int]] = ()
    ) -> Mapping[str, Any]:
        """Record the grade of a leased item, with the answer spans marked in its document's
        text (``(start, end)`` character offsets); the recorded judgment."""
        lease_id = lease if isinstance(lease, int) else lease.id
        body: dict[str, Any] = {"grade": grade}
        if answers:
            body["answers"] = [[int(a), int(b)] for a, b in answers]
        answer = self._http.request("POST", f"leases/{lease_id}/judgment/", json=body)
        recorded: Mapping[str, Any] = answer.json()
        return recorded

    def publish_qrels(
        self, campaign: CampaignRef, *, note: str = "", onto: QrelsRef | None = None
    ) -> QrelsVersion:
        """Publish the judgments as the campaign's next qrels version (admins); every run is
        then evaluated against it. ``onto`` a version carried to a chunking: only the judgments
        of that chunking's passages, over its carried labels (its minor version)."""
        path = f"campaigns/{self._campaign_id(campaign)}/qrels/publish/"
        if onto is not None:
            path = f"qrels/{_id(onto)}/publish/"
        answer = self._http.request("POST", path, json={"note": note} if note else None)
        return QrelsVersion.from_api(answer.json())

    def incompleteness(
        self,
        campaign: CampaignRef,
        *,
        k: int = 10,
        qrels_version: int | None = None,
        group: str | None = None,
    ) -> Mapping[str, Any]:
        """Per question, against a qrels version: each run's unjudged items in its top ``k``,
        the relevant items no run retrieved within ``k``, the questions with no relevant item
        (``questions``, and the totals beside)."""
        path = f"campaigns/{self._campaign_id(campaign)}/incompleteness/"
        answer: Mapping[str, Any] = self._http.get_json(
            path, {"k": k, "qrels": qrels_version, "group": group}
        )
        return answer

    # --- runs ---------------------------------------------------------------------------

    def submit_run(
        self,
        campaign: CampaignRef,
        run: RunInput,
        *,
        tag: str | None = None,
        group: str | None = None,
        description: str | None = None,
        model_names: Sequence[str] = (),
        pooled: bool | None = None,
        priority: int | None = None,
    ) -> Run:
        """Submit a run: a TREC or JSON run file (``tag`` defaults to its tag column), a
        mapping ``{qid: {docid: score}}`` or a DataFrame with columns ``qid`` (or
        ``query_id``), ``docno`` (or ``doc_id``, ``docid``) and ``score`` (or only ``rank``);
        a run from Python data needs its ``tag``. ``pooled`` is for admins. The whole run is
        validated first: an ``InvalidInput`` lists every problem, and nothing is stored."""
        fields: dict[str, Any] = {
            "tag": tag,
            "group": group,
            "description": description,
            "pooled": pooled,
            "priority": priority,
        }
        fields = {k: v for k, v in fields.items() if v is not None}
        path = f"campaigns/{self._campaign_id(campaign)}/runs/"
        if isinstance(run, str | os.PathLike):
            form = {**fields, "model_names": list(model_names)}
            if "pooled" in form:
                form["pooled"] = "true" if pooled else "false"
            return Run.from_api(self._upload(path, payloads.file_upload(run), form).json())
        if not tag:
            raise ValueError("name the run: a run from Python data needs tag=...")
        results = payloads.run_results(run)
        body = {**fields, "model_names": list(model_names), "results": results}
        return Run.from_api(self._http.request("POST", path, json=body).json())

    def run(self, run: RunRef) -> Run:
        """The run with its evaluation status and the warnings it was stored with."""
        return Run.from_api(self._http.get_json(f"runs/{_id(run)}/"))

    def runs(self, campaign: CampaignRef | None = None) -> list[Run]:
        """The runs you may see (admins: all; researchers: their own), of one campaign or all."""
        path = "runs/" if campaign is None else f"campaigns/{self._campaign_id(campaign)}/runs/"
        return [Run.from_api(raw) for raw in self._http.pages(path, page_size=self.page_size)]

    # --- evaluation ---------------------------------------------------------------------

    def answers(self, run: RunRef) -> list[Mapping[str, Any]]:
        """An answer run's answers by topic: each sentence with the segment ids it cites, the
        ranked references, the stated response length and the words counted (empty for a run of
        rankings only). Submit one with ``submit_run`` and the file's path."""
        found: list[Mapping[str, Any]] = self._http.get_json(f"runs/{_id(run)}/answers/")
        return found

    def evaluations(self, run: RunRef) -> list[Evaluation]:
        """Every stored evaluation of the run (each qrels version and mode asked for)."""
        answer = self._http.get_json(f"runs/{_id(run)}/evaluations/")
        label = str(answer.get("run", ""))
        return [Evaluation.from_api(e, run=label) for e in answer.get("evaluations", ())]

    def wait_for_evaluation(
        self,
        run: RunRef,
        *,
        qrels_version: int | None = None,
        mode: str = "honest",
        timeout: float = 300.0,
        poll: float = 1.0,
    ) -> Evaluation:
        """The run's evaluation against qrels version number ``qrels_version`` (default: the
        latest) in ``mode`` (honest, trec_eval), once stored: asked for if it never was, then
        polled every ``poll`` seconds. Raises ``EvaluationFailed`` with the service's error
        when it failed, ``PooljudgeTimeout`` after ``timeout`` seconds."""
        return waits.wait_for_evaluation(
            self._http,
            _id(run),
            qrels_version=qrels_version,
            mode=mode,
            timeout=timeout,
            poll=poll,
        )

    def leaderboard(
        self,
        campaign: CampaignRef,
        *,
        qrels_version: int | None = None,
        mode: str | None = None,
        measures: Sequence[str] | None = None,
        sort: str | None = None,
        order: str | None = None,
        pooled: str | None = None,
        group: str | None = None,
        slice: str | None = None,
    ) -> Leaderboard:
        """Every run's aggregates under one qrels version (default: the latest), sorted and
        filtered as the API's parameters say (``pooled``: all, yes, no; ``slice``: a topic
        tag). Other researchers' runs are anonymised."""
        params: Params = {
            "qrels": qrels_version,
            "mode": mode,
            "measures": ",".join(measures) if measures else None,
            "sort": sort,
            "order": order,
            "pooled": pooled,
            "group": group,
            "slice": slice,
        }
        path = f"campaigns/{self._campaign_id(campaign)}/leaderboard/"
        return Leaderboard.from_api(self._http.get_json(path, params))

    def check(
        self,
        run: RunRef,
        *,
        baseline: RunRef | str,
        max_drop: float | str,
        measures: Sequence[str] = (),
        qrels_version: int | None = None,
        test: str | None = None,
        alpha: float | None = None,
        correction: str | None = None,
        judged_tolerance: float | None = None,
        min_judged: float | None = None,
        timeout: float = 300.0,
        poll: float = 1.0,
    ) -> CheckResult:
        """The regression check of ``run`` against ``baseline`` (a run, its id, or its name as
        you see it): fails when a measure drops by more than ``max_drop`` (``0.01``, or
        ``"2%"`` of the baseline's score) and the paired test finds the drop significant.
        ``measures``: the campaign's (default: all but counts and Judged). Waits while an
        evaluation is being computed and asks for one never computed; a failed one is a
        ``Conflict``."""
        reference = baseline if isinstance(baseline, str) else str(_id(baseline))
        params: Params = {
            "baseline": reference,
            "max_drop": _number(max_drop),
            "measure": list(measures) or None,
            "qrels": qrels_version,
            "test": test,
            "alpha": alpha,
            "correction": correction,
            "judged_tolerance": judged_tolerance,
            "min_judged": min_judged,
        }
        return waits.wait_for_check(self._http, _id(run), params, timeout=timeout, poll=poll)

    # --- exports ------------------------------------------------------------------------

    def export_qrels(
        self, qrels: QrelsRef, path: PathLike | None = None, *, format: str | None = None
    ) -> str:
        """A qrels version as text (TREC qrels; a sampled version in sample_eval's columns,
        or ``format`` trec or prels), written to ``path`` too when given. The default form is
        checked against the sha256 the service names for it (``IntegrityError``)."""
        content = exports.export_qrels(self._http, _id(qrels), format)
        if path is not None:
            Path(path).write_bytes(content)
        return content.decode("utf-8")

    def export_golden_set(self, qrels: QrelsRef, path: PathLike) -> GoldenSet:
        """The campaign's golden set under ``qrels`` in BEIR's layout, unpacked into the
        folder ``path``: ``corpus.jsonl``, ``queries.jsonl``, ``qrels/test.tsv`` and
        ``pooljudge.json`` (the qrels version and its sha256), each file checked against the
        sha256 ``pooljudge.json`` names for it. A sampled version has no BEIR form (400)."""
        return exports.export_golden_set(self._http, _id(qrels), Path(path))

    # --- answers: nugget banks, answer items, automatic judges, samples, the board ---------

    def create_nugget_bank(
        self, campaign: CampaignRef, nuggets: PathLike | bytes, *, note: str = ""
    ) -> Mapping[str, Any]:
        """Draft the campaign's next nugget bank version from a nugget file (admins): its path,
        or its content (nuggetizer's JSON lines, or ``qid<TAB>importance<TAB>text`` lines).
        Validated whole: an ``InvalidInput`` lists every problem with its line."""
        upload = (
            payloads.packed("nuggets.jsonl", nuggets)
            if isinstance(nuggets, bytes)
            else payloads.file_upload(nuggets)
        )
        path = f"campaigns/{self._campaign_id(campaign)}/nugget-banks/"
        drafted: Mapping[str, Any] = self._upload(
            path, upload, {"source": "imported", "note": note}
        ).json()
        return drafted

    def publish_nugget_bank(self, campaign: CampaignRef, number: int) -> Mapping[str, Any]:
        """Publish (freeze) draft nugget bank version ``number`` (admins); a published one is
        a ``Conflict``."""
        path = f"campaigns/{self._campaign_id(campaign)}/nugget-banks/{int(number)}/publish/"
        published: Mapping[str, Any] = self._http.request("POST", path).json()
        return published

    def queue_answer_items(
        self, campaign: CampaignRef, kind: str, *, bank: int | None = None
    ) -> Mapping[str, Any]:
        """Queue every item of ``kind`` (``nugget_assignment`` with a published ``bank``
        version, ``citation_support``, ``nugget_creation`` with a draft) that the campaign's
        answer runs need judged (admins): the items found and the slots queued now."""
        body: dict[str, Any] = {"kind": kind}
        if bank is not None:
            body["bank"] = int(bank)
        path = f"campaigns/{self._campaign_id(campaign)}/answer-items/"
        queued: Mapping[str, Any] = self._http.request("POST", path, json=body).json()
        return queued

    def create_judge(
        self, campaign: CampaignRef, *, kind: str, name: str, model: str, **options: Any
    ) -> Mapping[str, Any]:
        """Create the next version of an automatic judge (admins): ``kind`` ``embedding`` or
        ``openai-compatible`` (with ``endpoint``, a configured endpoint's name), and the
        options the API takes (``t_partial``, ``t_support``, ``prompt``, ...)."""
        body = {"kind": kind, "name": name, "model": model, **options}
        path = f"campaigns/{self._campaign_id(campaign)}/judges/"
        created: Mapping[str, Any] = self._http.request("POST", path, json=body).json()
        return created

    def run_judge(
        self,
        judge: int,
        *,
        kind: str = "document",
        bank: int | None = None,
        pool: int | None = None,
        timeout: float = 600,
        poll: float = 1,
    ) -> Mapping[str, Any]:
        """Run judge version ``judge`` (its id; admins) over a pool's documents (``kind``
        ``document``, ``pool`` its number, default the latest) or every item of ``kind`` of
        the campaign's answer runs (``nugget_assignment`` with a published ``bank`` version,
        or ``citation_support``), and wait until it is done: its counts. A failed run raises
        ``PooljudgeError`` with the service's error."""
        body: dict[str, Any] = {"kind": kind}
        if bank is not None:
            body["bank"] = int(bank)
        if pool is not None:
            body["pool"] = int(pool)
        started = self._http.request("POST", f"judges/{int(judge)}/runs/", json=body).json()
        path = f"judge-runs/{int(started['id'])}/"
        done: Mapping[str, Any] = waits.until(
            lambda: self._http.get_json(path),
            lambda r: not r.get("live", False),
            timeout=timeout,
            poll=poll,
            what=f"judge run {started['id']}",
        )
        if done.get("state") == "failed":
            raise PooljudgeError(
                f"judge run {started['id']} failed: {done.get('error', '')}", code="run_failed"
            )
        return done

    def create_answer_sample(
        self,
        judge: int,
        *,
        kind: str,
        budget: int,
        bank: int | None = None,
        design: str = "uniform",
        seed: int = 0,
        allocation: str = "proportional",
    ) -> Mapping[str, Any]:
        """Draw a human sample of ``budget`` answer items of ``kind`` for judge version
        ``judge`` (admins; it must have labelled every item), by ``design`` (uniform,
        stratified, active); its items are queued ahead of their topics' others. Its report
        (``answer_sample``) gives the corrected scores once every sampled item is judged."""
        body: dict[str, Any] = {
            "kind": kind,
            "budget": int(budget),
            "design": design,
            "seed": int(seed),
            "allocation": allocation,
        }
        if bank is not None:
            body["bank"] = int(bank)
        path = f"judges/{int(judge)}/answer-samples/"
        drawn: Mapping[str, Any] = self._http.request("POST", path, json=body).json()
        return drawn

    def answer_sample(self, sample: int) -> Mapping[str, Any]:
        """A human sample's progress and, once it is judged, every answer run's scores
        corrected by it (``runs``: per measure ``ppi``, ``auto_only``, ``human_only``)."""
        report: Mapping[str, Any] = self._http.get_json(f"answer-samples/{int(sample)}/")
        return report

    def answer_board(
        self, campaign: CampaignRef, *, bank: int | None = None, qrels_version: int | None = None
    ) -> Mapping[str, Any]:
        """Every answer run's nugget recall under published bank version ``bank`` (default:
        the latest), citation support and length, with 95% intervals, beside its first
        campaign measure under qrels version ``qrels_version`` (default: the latest)."""
        path = f"campaigns/{self._campaign_id(campaign)}/answer-board/"
        board: Mapping[str, Any] = self._http.get_json(path, {"bank": bank, "qrels": qrels_version})
        return board

    # --- a judges' track: submissions, juries, the meta-evaluation ----------------------------

    def submit_judge(
        self,
        campaign: CampaignRef,
        labels: PathLike | bytes,
        *,
        name: str,
        model: str,
        saw_human_qrels: bool,
        format: str = "trec",
        pool: int | None = None,
        **declared: Any,
    ) -> Mapping[str, Any]:
        """Submit a judge's labels of a pool version (researchers, as a participant of a
        judges' track): a TREC qrels file (``format="trec"``) or UMBRELA's JSONL output
        (``"umbrela"``), its path or content, read whole (every label must be for a pair of
        the pool version). Declare whether it ``saw_human_qrels`` and, as ``declared``, what
        else the API takes: ``family``, ``open_weights``, ``prompt``, ``description``, and its
        cost (``calls``, ``prompt_tokens``, ``completion_tokens``, ``cost``, ``seconds``).
        Answers ``{"judge": ..., "run": None}``; other participants never read it."""
        upload = (
            payloads.packed("labels.txt", labels)
            if isinstance(labels, bytes)
            else payloads.file_upload(labels)
        )
        fields: dict[str, Any] = {
            "name": name,
            "model": model,
            "saw_human_qrels": "true" if saw_human_qrels else "false",
            "format": format,
        }
        if pool is not None:
            fields["pool"] = int(pool)
        for key, value in declared.items():
            fields[key] = ("true" if value else "false") if isinstance(value, bool) else value
        path = f"campaigns/{self._campaign_id(campaign)}/judge-submissions/"
        submitted: Mapping[str, Any] = self._upload(path, upload, fields).json()
        return submitted

    def create_jury(
        self,
        campaign: CampaignRef,
        *,
        name: str,
        members: list[int],
        method: str = "majority",
        human: int | None = None,
        pool: int | None = None,
    ) -> Mapping[str, Any]:
        """Combine judge versions ``members`` (their ids) into a jury (admins): ``method``
        majority, mean, dawid-skene or defer (``human``: the qrels version of people whose
        grades settle disagreements). Its run over the pool is queued: ``{"judge", "run"}``."""
        body: dict[str, Any] = {"name": name, "members": [int(m) for m in members]}
        body["method"] = method
        if human is not None:
            body["human"] = int(human)
        if pool is not None:
            body["pool"] = int(pool)
        path = f"campaigns/{self._campaign_id(campaign)}/juries/"
        created: Mapping[str, Any] = self._http.request("POST", path, json=body).json()
        return created

    def meta_evaluation(
        self,
        campaign: CampaignRef,
        *,
        qrels_version: int | None = None,
        pool: int | None = None,
        measure: str = "nDCG@10",
        sort: str = "tau_b",
        timeout: float = 600,
        poll: float = 1,
    ) -> Mapping[str, Any]:
        """Every judge of the campaign against people's qrels (default: the latest of people)
        over ``pool`` (default: the latest built), the runs ranked by ``measure``: asked for
        when there is none, then waited for. Rows sorted by ``sort``; each figure has its
        interval, or ``undefined`` saying why."""
        path = f"campaigns/{self._campaign_id(campaign)}/meta-evaluation/"
        body: dict[str, Any] = {"measure": measure}
        if qrels_version is not None:
            body["qrels"] = int(qrels_version)
        if pool is not None:
            body["pool"] = int(pool)
        asked = self._http.request("POST", path, json=body).json()
        query = {"qrels": asked["human_qrels"], "pool": asked["pool"], "measure": measure}
        done: Mapping[str, Any] = waits.until(
            lambda: self._http.get_json(path, {**query, "sort": sort}),
            lambda r: r.get("state") in ("done", "failed"),
            timeout=timeout,
            poll=poll,
            what="the meta-evaluation",
        )
        if done.get("state") == "failed":
            raise PooljudgeError(f"the meta-evaluation failed: {done.get('error', '')}")
        return done
