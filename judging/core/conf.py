"""Pooljudge's own settings: every cap and knob, declared once, in a few groups.

Each group is a frozen dataclass stored as one Django setting (``settings.POOLJUDGE_UPLOADS``,
``settings.POOLJUDGE_TASKS``...). Each field declares, once, the environment variable that sets it,
its default, its type (how the variable is read, by the helpers of ``judging/env.py``, which fail
loudly on a malformed value) and its meaning. A field is named after its variable: lower case,
without ``POOLJUDGE_`` (``POOLJUDGE_MAX_UPLOAD_BYTES`` is ``settings.POOLJUDGE_UPLOADS
.max_upload_bytes``), so a variable and its reader are found by one grep.

``judging/settings.py`` builds each group from the environment (``Group.from_env()``); tests
replace fields with ``override_settings`` (see ``tests/knobs.py``). The variables Django, Celery
and the deployment read in ``judging/settings.py`` itself are described in ``ENVIRONMENT``.
``python manage.py settings_reference`` writes all of it to ``docs/reference/settings.md``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar, Self

from django.core.exceptions import ImproperlyConfigured

from judging.env import env_bool, env_bytes, env_int, env_str, env_url

KB = 1024
MB = 1024**2
GB = 1024**3
DAY = 86400


@dataclasses.dataclass(frozen=True)
class Knob:
    """How one field is set from the environment and described in the reference."""

    env: str
    help: str
    kind: str  # int | bytes | bool | str | path | url | endpoints
    minimum: int | None = None
    maximum: int | None = None
    shown: str | None = None  # the default as the reference shows it (markdown), when computed
    zero_is_default: bool = False  # a size of 0 means the default (kept from earlier releases)

    def read(self, default: Any) -> Any:
        if self.kind == "int":
            return env_int(self.env, default, minimum=self.minimum, maximum=self.maximum)
        if self.kind == "bytes":
            return env_bytes(self.env, default) or (default if self.zero_is_default else 0)
        if self.kind == "bool":
            return env_bool(self.env, default)
        if self.kind == "str":
            return env_str(self.env, default)
        if self.kind == "path":
            return Path(env_str(self.env) or default)
        if self.kind == "url":
            return env_url(self.env, default)
        if self.kind == "endpoints":
            return _llm_endpoints(self.env, default)
        raise AssertionError(self.kind)


def knob(
    default: Any,
    *,
    env: str,
    help: str,
    kind: str = "int",
    minimum: int | None = None,
    maximum: int | None = None,
    shown: str | None = None,
    zero_is_default: bool = False,
) -> Any:
    """A dataclass field declared with its variable, default, type and meaning."""
    meta = Knob(env, " ".join(help.split()), kind, minimum, maximum, shown, zero_is_default)
    if isinstance(default, dict):
        return dataclasses.field(
            default_factory=lambda: dict(default), metadata={"knob": meta}, hash=False
        )
    return dataclasses.field(default=default, metadata={"knob": meta})


def _llm_endpoints(name: str, default: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    endpoints: dict[str, dict[str, str]] = dict(default)
    if raw := env_str(name):
        try:
            endpoints = json.loads(raw)
        except ValueError as error:
            raise ImproperlyConfigured(f"{name} is not JSON: {error}") from None
        if not isinstance(endpoints, dict):
            raise ImproperlyConfigured(f"{name} must be a JSON object of endpoints by name")
    if env_str("POOLJUDGE_LLM_BASE_URL"):
        endpoints.setdefault(
            "default",
            {
                "base_url": env_str("POOLJUDGE_LLM_BASE_URL"),
                "api_key": env_str("POOLJUDGE_LLM_API_KEY"),
            },
        )
    return endpoints


def declared_default(f: dataclasses.Field[Any]) -> Any:
    """A field's default as declared (a fresh copy of a mutable one)."""
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return f.default


class Group:
    """A group of settings: one Django setting holding a frozen dataclass of knobs."""

    setting: ClassVar[str]  # its Django setting, e.g. "POOLJUDGE_UPLOADS"
    title: ClassVar[str]  # its heading in the reference; the class docstring introduces it

    @classmethod
    def knobs(cls) -> Iterator[tuple[dataclasses.Field[Any], Knob]]:
        for f in dataclasses.fields(cls):  # type: ignore[arg-type]
            yield f, f.metadata["knob"]

    @classmethod
    def from_env(cls, **defaults: Any) -> Self:
        """The group as the environment sets it; ``defaults`` replace declared defaults that are
        computed from other settings (a path under ``POOLJUDGE_VAR_DIR``)."""
        values = {}
        for f, meta in cls.knobs():
            default = defaults[f.name] if f.name in defaults else declared_default(f)
            values[f.name] = meta.read(default)
        return cls(**values)


@dataclasses.dataclass(frozen=True)
class Uploads(Group):
    """What one file, one line, one id and one document may hold, at every import (API, pages,
    management commands unless said otherwise). A file over a size limit is a `413`; a line, id
    or text over its limit a `400` naming the line and the field."""

    setting = "POOLJUDGE_UPLOADS"
    title = "Uploads, files and text"

    max_upload_bytes: int = knob(
        256 * MB,
        env="POOLJUDGE_MAX_UPLOAD_BYTES",
        kind="bytes",
        help="Largest run, qrels or topics file (and label or gold file) as received; larger is a "
        "`413`.",
    )
    max_decompressed_bytes: int = knob(
        0,
        env="POOLJUDGE_MAX_DECOMPRESSED_BYTES",
        kind="bytes",
        shown="`0`: the file's limit as received",
        help="Largest output of a gzip file, counted while it is decompressed (`413` above, so a "
        "gzip bomb stops early); 0: the same as the file's limit as received.",
    )
    max_document_upload_bytes: int = knob(
        GB,
        env="POOLJUDGE_MAX_DOCUMENT_UPLOAD_BYTES",
        kind="bytes",
        help="Largest document collection uploaded through the API or the text page (management "
        "commands have no limit).",
    )
    max_collection_upload_bytes: int = knob(
        2 * GB,
        env="POOLJUDGE_MAX_COLLECTION_UPLOAD_BYTES",
        kind="bytes",
        help="Largest whole-collection request (API `POST /collections/`, the import page), all "
        "its files together; each file keeps its own limit (`413` above).",
    )
    staging_dir: Path = knob(  # noqa: RUF009 (knob is a dataclasses.field)
        Path("var/staging"),
        env="POOLJUDGE_STAGING_DIR",
        kind="path",
        shown="`$POOLJUDGE_VAR_DIR/staging`",
        help="Where the import page keeps a collection's files between its plan and its apply.",
    )
    staging_seconds: int = knob(
        DAY,
        env="POOLJUDGE_STAGING_SECONDS",
        minimum=60,
        help="How long a plan of the import page that is not applied is kept (removed at the "
        "page's next submit after that).",
    )
    max_infer_topics: int = knob(
        100_000,
        env="POOLJUDGE_MAX_INFER_TOPICS",
        minimum=1,
        help="Most topic ids the pooling of an imported collection may be inferred on "
        "(`--infer-topics`, `infer_topics`, ranges written out); more is a `400` naming the "
        "field.",
    )
    max_problems: int = knob(
        100,
        env="POOLJUDGE_MAX_PROBLEMS",
        minimum=1,
        help="Problems listed per rejected file or request (the count is always whole).",
    )
    max_line_bytes: int = knob(
        64 * KB,
        env="POOLJUDGE_MAX_LINE_BYTES",
        kind="bytes",
        zero_is_default=True,
        help="Longest line of a run, qrels or topics file (`400` naming the line; a documents "
        "file's lines are bounded by `POOLJUDGE_MAX_DOCUMENT_CHARS`); 0: the default.",
    )
    max_answer_references: int = knob(
        100,
        env="POOLJUDGE_MAX_ANSWER_REFERENCES",
        minimum=1,
        help="Most references (ranked segments) one topic's answer of an answer run may list "
        "(TREC 2025 RAG's limit; 2024's was 20).",
    )
    max_answer_sentences: int = knob(
        100,
        env="POOLJUDGE_MAX_ANSWER_SENTENCES",
        minimum=1,
        help="Most sentences in one topic's answer of an answer run.",
    )
    max_answer_sentence_chars: int = knob(
        2000,
        env="POOLJUDGE_MAX_ANSWER_SENTENCE_CHARS",
        minimum=1,
        help="Longest sentence of an answer run, in characters.",
    )
    max_qid_bytes: int = knob(
        255,
        env="POOLJUDGE_MAX_QID_BYTES",
        minimum=1,
        maximum=255,
        help="Longest topic id in UTF-8 bytes, at submission (file and JSON) and every import "
        "(`400` naming the line and field); at most 255, the columns' size.",
    )
    max_docid_bytes: int = knob(
        256,
        env="POOLJUDGE_MAX_DOCID_BYTES",
        minimum=1,
        maximum=1024,
        help="Longest docid in UTF-8 bytes, likewise (runs, qrels, documents); at most 1024, what "
        "the docid columns hold.",
    )
    max_tag_bytes: int = knob(
        255,
        env="POOLJUDGE_MAX_TAG_BYTES",
        minimum=1,
        maximum=255,
        help="Longest run tag in UTF-8 bytes, likewise; ids and tags may not hold control "
        "characters.",
    )
    max_document_chars: int = knob(
        1_000_000,
        env="POOLJUDGE_MAX_DOCUMENT_CHARS",
        minimum=1,
        help="Longest text of one document, in characters, at every import (API, pages, "
        "commands): a longer one is a problem naming its docid and size, and nothing of the file "
        "is stored. A million characters is a book of some 500 pages, far more than an assessor "
        "reads to judge a document; it bounds what one document costs the database, the worker "
        "importing it and an API page of texts. The reader holds at most 12 bytes per allowed "
        "character and 1 MiB of one document (the longest JSON escapes) and drops the rest as it "
        "reads.",
    )


@dataclasses.dataclass(frozen=True)
class Api(Group):
    """Pages of the API's lists. A larger `?limit=` is a `400` (never clamped), as is a
    `limit`/`offset` that is not a whole number."""

    setting = "POOLJUDGE_API"
    title = "API lists"

    max_page_size: int = knob(
        1000,
        env="POOLJUDGE_MAX_PAGE_SIZE",
        minimum=1,
        help="Largest `?limit=` of an API list (`limit` from 1, `offset` from 0; without `limit`: "
        "100 per page), and most `docid` values in one document list.",
    )
    max_text_page_size: int = knob(
        50,
        env="POOLJUDGE_MAX_TEXT_PAGE_SIZE",
        minimum=1,
        help="Largest `?limit=` (and the default) of a document list with the texts "
        "(`?include=text`): up to this many times `POOLJUDGE_MAX_DOCUMENT_CHARS` in one answer, "
        "streamed.",
    )


@dataclasses.dataclass(frozen=True)
class Tasks(Group):
    """Tasks that are never lost: each is an outbox row written with the change that needs it;
    a sweep sends what was never sent or was lost, and heartbeats tell a running task from a dead
    one. Stale + sweep is the worst-case takeover time of a dead build (90 s by default)."""

    setting = "POOLJUDGE_TASKS"
    title = "Tasks: the outbox, its sweep, heartbeats"

    heartbeat_seconds: int = knob(
        10,
        env="POOLJUDGE_HEARTBEAT_SECONDS",
        minimum=1,
        help="How often a running task or pool build records that its worker is alive.",
    )
    stale_seconds: int = knob(
        60,
        env="POOLJUDGE_STALE_SECONDS",
        minimum=1,
        help="A started task or build with no heartbeat for this long has lost its worker: shown "
        "as stale, sent again by the sweep (which takes the build over).",
    )
    sweep_seconds: int = knob(
        30,
        env="POOLJUDGE_SWEEP_SECONDS",
        minimum=1,
        help="How often each worker (or `manage.py sweep --forever`) sweeps the outbox.",
    )
    resend_seconds: int = knob(
        300,
        env="POOLJUDGE_RESEND_SECONDS",
        minimum=1,
        help="A task sent but not started after this long is sent again (the broker may have lost "
        "it); the wait doubles with each send, up to an hour, so a long queue does not fill with "
        "copies.",
    )
    send_timeout_seconds: int = knob(
        2,
        env="POOLJUDGE_SEND_TIMEOUT_SECONDS",
        minimum=1,
        help="A request gives up reaching the broker after this long (the task stays pending and "
        "the request succeeds; the sweep sends it later).",
    )
    outbox_keep_days: int = knob(
        7,
        env="POOLJUDGE_OUTBOX_KEEP_DAYS",
        minimum=1,
        help="Finished outbox rows are deleted by the sweep after this many days.",
    )
    sweep_in_worker: bool = knob(
        True,
        env="POOLJUDGE_SWEEP_IN_WORKER",
        kind="bool",
        help="Workers run the sweep on a timer; `0`: run `manage.py sweep --forever` as its own "
        "process instead.",
    )


@dataclasses.dataclass(frozen=True)
class Judging(Group):
    """The judging queue as the annotators and the admins see it."""

    setting = "POOLJUDGE_JUDGING"
    title = "Judging"

    prefetch: int = knob(
        1,
        env="POOLJUDGE_PREFETCH",
        minimum=0,
        maximum=5,
        help="Items the judging page leases ahead of the one being read, so that a grade key "
        "shows the next document at once; `0`: one lease at a time, the page posts a form per "
        "judgment.",
    )
    open_items_listed: int = knob(
        100,
        env="POOLJUDGE_OPEN_ITEMS_LISTED",
        minimum=0,
        help="Open items (unjudged slots, overlap slots needing another assessor, items waiting "
        "for text) listed one by one in a publish answer, the plan and the progress page; the "
        "counts are always whole, and `truncated` says when the list is cut.",
    )
    topup_max_documents: int = knob(
        500,
        env="POOLJUDGE_TOPUP_MAX_DOCUMENTS",
        minimum=1,
        help="The most documents one top-up of a run may queue for the assessors (its budget).",
    )
    max_answer_spans: int = knob(
        20,
        env="POOLJUDGE_MAX_ANSWER_SPANS",
        minimum=1,
        maximum=1000,
        help="The most answer spans an assessor may mark in one judgment (the judging page's "
        "`m` key, `answers` in the API); more is a `400` naming the field.",
    )
    max_nuggets_per_topic: int = knob(
        30,
        env="POOLJUDGE_MAX_NUGGETS_PER_TOPIC",
        minimum=1,
        maximum=1000,
        help="The most nuggets one topic's bank may hold, however they come (a draft, an "
        "imported file, an assessor's add or split); more is a `400` naming the topic (30 is "
        "the TREC 2024 RAG Track's cap, nuggetizer's default).",
    )
    max_nugget_chars: int = knob(
        500,
        env="POOLJUDGE_MAX_NUGGET_CHARS",
        minimum=1,
        maximum=100_000,
        help="The longest text of one nugget, in characters (a nugget is an atomic fact of a "
        "dozen words or so); longer is a `400` naming the nugget.",
    )


@dataclasses.dataclass(frozen=True)
class Evaluation(Group):
    """Evaluations, bias reports and the result pages: what one request may ask for and what
    one task computes. Larger requests are a `400` naming the parameter."""

    setting = "POOLJUDGE_EVALUATION"
    title = "Evaluation, bias reports and results"

    eval_runs_per_task: int = knob(
        10,
        env="POOLJUDGE_EVAL_RUNS_PER_TASK",
        minimum=1,
        help="Runs evaluated per task when a qrels version is published or imported (the qrels "
        "are read and prepared once per task, about 0.1 s at 20,000 judgments); a campaign with "
        "more runs is spread over several tasks, one per free worker.",
    )
    bias_max_depth: int = knob(
        1000,
        env="POOLJUDGE_BIAS_MAX_DEPTH",
        minimum=1,
        help="Deepest bias report that may be asked for (`depth`; the campaign's own pool depth "
        "is always allowed).",
    )
    bias_max_cutoff: int = knob(
        1000,
        env="POOLJUDGE_BIAS_MAX_CUTOFF",
        minimum=1,
        help="Largest cut-off of a bias report's measure (`P@k`, `nDCG@k`).",
    )
    bias_reports_per_hour: int = knob(
        20,
        env="POOLJUDGE_BIAS_REPORTS_PER_HOUR",
        minimum=1,
        help="New bias and reusability reports one user may ask for per hour, together (API "
        "`POST .../bias/` and `POST /qrels/{id}/reusability/`, the page's Compute button); the "
        "next is a `429` with `Retry-After`; reading and reports already stored are not counted.",
    )
    bias_max_topics: int = knob(
        1000,
        env="POOLJUDGE_BIAS_MAX_TOPICS",
        minimum=1,
        help="Most topics a bias report's topic subset (`topics=601-650,tag:hard`) may name; more "
        "(or a range wider than this) is a `400` naming `topics` (the subset written out is also "
        "at most 2000 bytes).",
    )
    curve_max_depth: int = knob(
        1000,
        env="POOLJUDGE_CURVE_MAX_DEPTH",
        minimum=1,
        maximum=100_000,
        help="How deep the Recall@k curve stored with an evaluation goes at most: the run's "
        "longest ranking, capped at this (k = 1..100 stored one by one, then log-spaced).",
    )
    design_plan_reps: int = knob(
        20,
        env="POOLJUDGE_DESIGN_PLAN_REPS",
        minimum=1,
        maximum=500,
        help="Simulated draws per design of the budget planner's design forecast (`GET "
        ".../plan/designs/`; `reps=` may ask for fewer); the answer names how many it used.",
    )
    design_plan_max_work: int = knob(
        5_000_000,
        env="POOLJUDGE_DESIGN_PLAN_MAX_WORK",
        minimum=1,
        help="Largest design forecast computed on request: the pilot's retrieved documents "
        "(runs x topics x run depth, up to 1000) times the draws; about 2 s per million on "
        "one core. Larger is a `400` naming `reps` (ask for fewer draws) or the pilot.",
    )
    versus_depth: int = knob(
        20,
        env="POOLJUDGE_VERSUS_DEPTH",
        minimum=1,
        maximum=1000,
        help="Depth to which the comparison of two runs shows both rankings of a topic side by "
        "side by default.",
    )
    versus_max_depth: int = knob(
        100,
        env="POOLJUDGE_VERSUS_MAX_DEPTH",
        minimum=1,
        maximum=1000,
        help="Deepest `?depth=` the comparison's topic page and `GET .../versus/{qid}/` accept.",
    )
    significance_max_runs: int = knob(
        40,
        env="POOLJUDGE_SIGNIFICANCE_MAX_RUNS",
        minimum=2,
        help="Most runs in a significance matrix with a resampling test (randomization, "
        "bootstrap: 10,000 resamples a pair; 40 runs = 780 pairs); without a choice of runs the "
        "best ones by the measure are shown, and the page says so.",
    )
    significance_max_runs_fast: int = knob(
        150,
        env="POOLJUDGE_SIGNIFICANCE_MAX_RUNS_FAST",
        minimum=2,
        help="The same for the paired t-test, Tukey's HSD and the comparison against one "
        "baseline (150 runs = 11,175 pairs).",
    )
    export_max_runs: int = knob(
        500,
        env="POOLJUDGE_EXPORT_MAX_RUNS",
        minimum=1,
        help="Most runs in one per-query export (more: a `400` naming `run`; filter the view or "
        "pass `run=`).",
    )
    export_max_comparisons: int = knob(
        300,
        env="POOLJUDGE_EXPORT_MAX_COMPARISONS",
        minimum=1,
        help="Most paired tests against a baseline in one leaderboard export (runs other than the "
        "baseline x measures; each computes a 10,000-resample bootstrap CI of the difference "
        "while the request waits); more is a `400` naming `baseline`.",
    )


@dataclasses.dataclass(frozen=True)
class Autojudge(Group):
    """Automatic judges. Chat endpoints are named here, never stored: a judge keeps only the
    endpoint's name, so URLs and keys stay out of the database, the pages, the API and the
    logs."""

    setting = "POOLJUDGE_AUTOJUDGE"
    title = "Automatic judges"

    llm_endpoints: dict[str, dict[str, str]] = knob(  # noqa: RUF009 (a field with a factory)
        {},
        env="POOLJUDGE_LLM_ENDPOINTS",
        kind="endpoints",
        shown="none",
        help='The chat-completions endpoints automatic judges may use, as JSON `{"name": '
        '{"base_url": "http://host:8000/v1", "api_key_env": "VARIABLE"}}` (or `"api_key"` '
        "inline). `POOLJUDGE_LLM_BASE_URL` and `POOLJUDGE_LLM_API_KEY` are a shorthand for one "
        'endpoint named `default`. An endpoint with `"participants": "alice,bob"` may '
        "also be named by those researchers' judge submissions (a judges' track: the URL and "
        "key stay here, never in a submission); without it only admins use it.",
    )
    llm_timeout_seconds: int = knob(
        60,
        env="POOLJUDGE_LLM_TIMEOUT_SECONDS",
        minimum=1,
        help="Seconds before one request to an endpoint times out.",
    )
    llm_max_retries: int = knob(
        4,
        env="POOLJUDGE_LLM_MAX_RETRIES",
        minimum=0,
        maximum=20,
        help="Retries of one request after a 429, a 5xx, a timeout or a lost connection "
        "(exponential backoff; `Retry-After` honoured).",
    )
    llm_requests_per_minute: int = knob(
        60,
        env="POOLJUDGE_LLM_REQUESTS_PER_MINUTE",
        minimum=0,
        help="Requests per minute to one endpoint from one judge run (0: no limit).",
    )
    autojudge_batch: int = knob(
        50,
        env="POOLJUDGE_AUTOJUDGE_BATCH",
        minimum=1,
        help="Labels a judge run stores per transaction; progress, tokens and cost are saved "
        "after each batch.",
    )
    autojudge_probe_items: int = knob(
        30,
        env="POOLJUDGE_AUTOJUDGE_PROBE_ITEMS",
        minimum=1,
        help="Pool documents people judged not relevant that each robustness probe of a judge "
        "audit alters and asks the judge about again.",
    )
    autojudge_meta_resamples: int = knob(
        1000,
        env="POOLJUDGE_AUTOJUDGE_META_RESAMPLES",
        minimum=100,
        maximum=100_000,
        help="Bootstrap resamples of the topics behind every interval of the judges' "
        "meta-evaluation (label and ranking agreement).",
    )
    autojudge_max_labels: int = knob(
        2_000_000,
        env="POOLJUDGE_AUTOJUDGE_MAX_LABELS",
        minimum=1,
        help="Most rows in one imported label file.",
    )
    estimate_cache_seconds: int = knob(
        3600,
        env="POOLJUDGE_ESTIMATE_CACHE_SECONDS",
        minimum=0,
        help="How long a human sample's corrected estimates stay in the shared cache (0: never "
        "cached); the cache key digests everything they rest on (the people's grades, the "
        "judge's labels, the runs, the level), so a changed grade is a new computation at once.",
    )


@dataclasses.dataclass(frozen=True)
class Security(Group):
    """Sign-in throttling (login page, admin login, `POST /api/v1/auth/token/`), tokens,
    set-password links and the answers' headers. Failures per (username, address) and per
    address within a window lock that pair or address until the window ends; failures per
    username lock it for a time that doubles with each lock. An address that signed in to the
    account before is held by its own (pair) failures only."""

    setting = "POOLJUDGE_SECURITY"
    title = "Security: sign-in throttling, tokens, links"

    login_max_failures_per_user_and_ip: int = knob(
        10,
        env="POOLJUDGE_LOGIN_MAX_FAILURES_PER_USER_AND_IP",
        minimum=1,
        help="Failed sign-ins for one username from one client address within the window; then "
        "that username from that address is refused, the right password too (`429` with "
        "`Retry-After`), until the window ends; a success from that address clears it.",
    )
    login_max_failures_per_ip: int = knob(
        50,
        env="POOLJUDGE_LOGIN_MAX_FAILURES_PER_IP",
        minimum=1,
        help="Failed sign-ins from one address, whatever the usernames, within the window; then "
        "the address is refused until the window ends, except for accounts that have signed in "
        "from it before (only failures count: a class behind one address can log in together).",
    )
    login_max_failures_per_user: int = knob(
        10,
        env="POOLJUDGE_LOGIN_MAX_FAILURES_PER_USER",
        minimum=1,
        help="Failed sign-ins for one username from any addresses; then the username is locked "
        "for `POOLJUDGE_LOGIN_LOCK_SECONDS`, except from its known addresses.",
    )
    login_window_seconds: int = knob(
        900,
        env="POOLJUDGE_LOGIN_WINDOW_SECONDS",
        minimum=1,
        help="The window of the counts above, started by the first failure.",
    )
    login_lock_seconds: int = knob(
        60,
        env="POOLJUDGE_LOGIN_LOCK_SECONDS",
        minimum=1,
        help="The username's first lock; each further lock lasts twice the last; the doubling "
        "starts over once the username has gone a window without a failure after its last lock.",
    )
    login_max_lock_seconds: int = knob(
        3600,
        env="POOLJUDGE_LOGIN_MAX_LOCK_SECONDS",
        minimum=1,
        help="The longest lock of a username (guessing from many addresses: at most "
        "`POOLJUDGE_LOGIN_MAX_FAILURES_PER_USER` guesses per this long).",
    )
    login_known_address_seconds: int = knob(
        90 * DAY,
        env="POOLJUDGE_LOGIN_KNOWN_ADDRESS_SECONDS",
        minimum=60,
        shown="`7776000` (90 days)",
        help="How long an address that signed in to an account stays *known* for it: a known "
        "address is refused only after its own failures for that account, never because of "
        "failures from elsewhere, so nobody can lock the admins out of the addresses they sign "
        "in from.",
    )
    trusted_proxy_hops: int = knob(
        0,
        env="POOLJUDGE_TRUSTED_PROXY_HOPS",
        minimum=0,
        help="Reverse proxies in front of the web server that append to `X-Forwarded-For` (the "
        "client address is then taken from it; 0: none, the client is `REMOTE_ADDR`). Never "
        "more than you run: a client can write any `X-Forwarded-For` it likes.",
    )
    token_ttl_seconds: int = knob(
        30 * DAY,
        env="POOLJUDGE_TOKEN_TTL_SECONDS",
        minimum=60,
        shown="`2592000` (30 days)",
        help="An API token expires this long after it was issued (`401`); `POST "
        "/api/v1/auth/token/` then issues a new one, `DELETE /api/v1/auth/token/` revokes one's "
        "own, admins revoke any; a new password revokes the user's token.",
    )
    password_link_seconds: int = knob(
        7 * DAY,
        env="POOLJUDGE_PASSWORD_LINK_SECONDS",
        minimum=60,
        shown="`604800` (7 days)",
        help="How long a set-password link (an invitation from `create_user --invite` or the "
        "users page, or a new link for an existing account) works; it works once.",
    )
    site_url: str = knob(
        "http://127.0.0.1:8000",
        env="POOLJUDGE_SITE_URL",
        kind="url",
        help="The service's address as its users reach it (`https://pooljudge.example.org`): the "
        "start of the links `manage.py create_user --invite` prints (the pages take theirs from "
        "the request).",
    )
    content_security_policy: str = knob(
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "font-src 'self'; connect-src 'self'; object-src 'none'; frame-ancestors 'none'; "
        "base-uri 'self'; form-action 'self'",
        env="POOLJUDGE_CONTENT_SECURITY_POLICY",
        kind="str",
        help="The `Content-Security-Policy` of every answer: scripts, styles, images, fonts and "
        "connections from our origin only, no inline script, no plugins, no framing, forms "
        "posting to us only. The pages, Swagger UI and the admin run under it.",
    )


@dataclasses.dataclass(frozen=True)
class Cache(Group):
    """The shared cache holds the sign-in counters, so every web worker must share it. Nothing
    needs it to judge: while it cannot be reached (`judging/core/cache.py`) a process keeps what
    it caches in its own memory and judging goes on."""

    setting = "POOLJUDGE_CACHE"
    title = "Cache"

    cache_url: str = knob(
        "",
        env="POOLJUDGE_CACHE_URL",
        kind="str",
        shown="the broker's Redis when `CELERY_BROKER_URL` is set, else `locmem`",
        help="The shared cache: `redis://host:6379/1`, or `db` (the database cache, after "
        "`manage.py createcachetable`); `locmem` (one process) only for the embedded default and "
        "tests; `check --deploy` warns about it (`pooljudge.W001`).",
    )
    cache_timeout_seconds: int = knob(
        1,
        env="POOLJUDGE_CACHE_TIMEOUT_SECONDS",
        minimum=1,
        help="A request gives up on a Redis cache after this long connecting or waiting for an "
        "answer (a cache miss, not an error).",
    )
    cache_retry_seconds: int = knob(
        10,
        env="POOLJUDGE_CACHE_RETRY_SECONDS",
        minimum=1,
        help="After a cache error a process leaves the shared cache alone for this long, caching "
        "in its own memory, then tries it again.",
    )


GROUPS: tuple[type[Group], ...] = (
    Uploads,
    Api,
    Tasks,
    Judging,
    Evaluation,
    Autojudge,
    Security,
    Cache,
)


@dataclasses.dataclass(frozen=True)
class Variable:
    """A variable read by Django, Celery or the deployment rather than by a group above."""

    env: str
    default: str
    help: str


def _var(env: str, default: str, help: str) -> Variable:
    return Variable(env, default, " ".join(help.split()))


# Read in judging/settings.py (or by a tool), in the order a deployment meets them.
ENVIRONMENT: tuple[Variable, ...] = (
    _var("DJANGO_DEBUG", "`1`", "`0` in production."),
    _var(
        "DJANGO_SECRET_KEY",
        "a fixed local key, only with DEBUG on",
        "Required when `DJANGO_DEBUG=0`: 50+ random characters; the placeholder of "
        "`.env.example`, any known placeholder or a weak key is refused at start-up, and "
        "`check --deploy` fails on it (`pooljudge.E001`).",
    ),
    _var(
        "DJANGO_ALLOWED_HOSTS",
        "localhost names with DEBUG",
        "Comma-separated host names; required when DEBUG is off.",
    ),
    _var("DJANGO_CSRF_TRUSTED_ORIGINS", "none", "E.g. `https://pooljudge.example.org`."),
    _var(
        "DATABASE_URL",
        "`sqlite:///var/pooljudge.sqlite3`",
        "`postgres://user:pass@host:5432/name` in production (`sqlite:///path` otherwise).",
    ),
    _var(
        "CELERY_BROKER_URL",
        "unset: tasks run inline",
        "`redis://host:6379/0` (or `rediss://`); any other scheme is refused at start-up.",
    ),
    _var(
        "CELERY_TASK_ALWAYS_EAGER",
        "on without a broker (and in tests)",
        "Run tasks inline in the process that sends them.",
    ),
    _var("CELERY_TASK_DEFAULT_QUEUE", "`pooljudge`", "The Celery queue tasks are sent to."),
    _var(
        "CELERY_VISIBILITY_TIMEOUT",
        "`3600`",
        "Seconds before Redis gives a task a worker took but did not acknowledge to another "
        "worker.",
    ),
    _var(
        "POOLJUDGE_VAR_DIR",
        "`var` in the checkout",
        "Where the SQLite database and the import page's staging area live.",
    ),
    _var(
        "POOLJUDGE_TESTING",
        "`0` (on under pytest)",
        "Test mode: fast password hashing, tasks inline, a per-process cache.",
    ),
    _var("DJANGO_TIME_ZONE", "`UTC`", "Time zone of the dates shown."),
    _var(
        "DJANGO_STATIC_ROOT",
        "`staticfiles` in the checkout",
        "Where `collectstatic` puts the static files (served by whitenoise when DEBUG is off).",
    ),
    _var("DJANGO_LOG_LEVEL", "`INFO`", "Level of the log written to the console."),
    _var(
        "DJANGO_DATA_UPLOAD_MAX_NUMBER_FILES",
        "`1000`",
        "Most files in one request (Django's own default, 100, is fewer than a TREC "
        "collection's runs).",
    ),
    _var(
        "DJANGO_DATA_UPLOAD_MAX_MEMORY_SIZE",
        "`64MB`",
        "Largest request body outside uploaded files (form fields): run lines pasted on the "
        "submit page beyond it are a `413` that says to upload them as a file.",
    ),
    _var(
        "DJANGO_FILE_UPLOAD_MAX_MEMORY_SIZE",
        "`8MB`",
        "An uploaded file larger than this is spooled to a temporary file rather than held in "
        "memory.",
    ),
    _var("DJANGO_SECURE_SSL_REDIRECT", "on when DEBUG is off", "Redirect HTTP to HTTPS."),
    _var("DJANGO_SESSION_COOKIE_SECURE", "on when DEBUG is off", "Session cookie over HTTPS only."),
    _var("DJANGO_CSRF_COOKIE_SECURE", "on when DEBUG is off", "CSRF cookie over HTTPS only."),
    _var(
        "DJANGO_SECURE_HSTS_SECONDS",
        "`31536000` when DEBUG is off, else `0`",
        "`Strict-Transport-Security` max-age.",
    ),
    _var(
        "DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS",
        "on when DEBUG is off",
        "HSTS for the subdomains too.",
    ),
    _var("DJANGO_SECURE_HSTS_PRELOAD", "on when DEBUG is off", "HSTS preload."),
    _var(
        "DJANGO_SILENCED_SYSTEM_CHECKS",
        "none",
        "Comma-separated ids of Django system checks to silence.",
    ),
    _var(
        "POOLJUDGE_LLM_BASE_URL",
        "none",
        "With `POOLJUDGE_LLM_API_KEY`: a shorthand for one chat endpoint named `default` (see "
        "`POOLJUDGE_LLM_ENDPOINTS`).",
    ),
    _var("POOLJUDGE_LLM_API_KEY", "none", "The key of the endpoint `POOLJUDGE_LLM_BASE_URL`."),
    _var(
        "IR_DATASETS_HOME",
        "`~/.ir_datasets`",
        "ir_datasets' own cache, read when it is first imported; Pooljudge reads datasets from "
        "it and never downloads into it.",
    ),
    _var(
        "POOLJUDGE_PORT",
        "`8000`",
        "The host port `docker compose` publishes the web server on.",
    ),
)

_KINDS = {
    "int": "integer",
    "bytes": "size (`1048576`, `200MB`, `1GB`)",
    "bool": "boolean (`1`/`0`, `true`/`false`, `yes`/`no`)",
    "str": "text",
    "path": "path",
    "url": "site address (`https://host[:port][/path]`)",
    "endpoints": "JSON object",
}


def _size(value: int) -> str:
    for unit, factor in (("GB", GB), ("MB", MB), ("KB", KB)):
        if value and value % factor == 0:
            return f"{value // factor}{unit}"
    return str(value)


def _default(f: dataclasses.Field[Any], meta: Knob) -> str:
    if meta.shown is not None:
        return meta.shown
    value = declared_default(f)
    if meta.kind == "bool":
        return "`1`" if value else "`0`"
    if meta.kind == "bytes":
        return f"`{_size(value)}`"
    return f"`{value}`"


def _type(meta: Knob) -> str:
    text = _KINDS[meta.kind]
    if meta.minimum is not None and meta.maximum is not None:
        return f"{text}, {meta.minimum}-{meta.maximum}"
    if meta.minimum is not None:
        return f"{text}, at least {meta.minimum}"
    return text


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


COMMAND = "python manage.py settings_reference"


def reference_markdown(groups: tuple[type[Group], ...] = GROUPS) -> str:
    """The settings reference, ``docs/reference/settings.md``: every group, every variable."""
    lines = [
        "# Settings reference",
        "",
        f"<!-- Generated from judging/core/conf.py by `{COMMAND}`; do not edit. -->",
        "",
        "Everything comes from environment variables; a malformed value stops the service at "
        "start-up with a message naming the variable. Sizes take a unit (`200MB`, `1GB`); "
        "booleans are `1`/`0`, `true`/`false` or `yes`/`no`.",
        "",
        "Pooljudge's own settings are grouped: each group is one Django setting holding a frozen "
        "dataclass (`judging/core/conf.py`), and each variable is read in code as "
        "`settings.<GROUP>.<name>`, its name in lower case without `POOLJUDGE_` "
        "(`POOLJUDGE_MAX_UPLOAD_BYTES` is `settings.POOLJUDGE_UPLOADS.max_upload_bytes`).",
        "",
    ]
    for group in groups:
        lines += [f"## {group.title}", "", f"Group `{group.setting}`.", ""]
        lines += [" ".join((group.__doc__ or "").split()), ""]
        lines += ["| variable | default | type | meaning |", "|---|---|---|---|"]
        for f, meta in group.knobs():
            cells = (f"`{meta.env}`", _default(f, meta), _type(meta), meta.help)
            lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
        lines.append("")
    lines += [
        "## Django, Celery and the deployment",
        "",
        "Read by `judging/settings.py` for Django and Celery, or by the tools around the service.",
        "",
        "| variable | default | meaning |",
        "|---|---|---|",
    ]
    for var in ENVIRONMENT:
        lines.append(f"| `{var.env}` | {_cell(var.default)} | {_cell(var.help)} |")
    lines.append("")
    return "\n".join(lines)


def all_variables() -> list[str]:
    """Every variable the reference describes, groups first."""
    names = [meta.env for group in GROUPS for _, meta in group.knobs()]
    return names + [var.env for var in ENVIRONMENT]


def group_of(name: str) -> type[Group]:
    """The group holding field ``name`` (a variable's name in lower case, without POOLJUDGE_)."""
    for group in GROUPS:
        if name in {f.name for f in dataclasses.fields(group)}:  # type: ignore[arg-type]
            return group
    raise KeyError(f"no settings group has a field {name!r}")
