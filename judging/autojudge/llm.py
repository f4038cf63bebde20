"""A judge behind any OpenAI-compatible chat-completions endpoint (vLLM, llama.cpp server,
Ollama, hosted APIs), asked the UMBRELA prompt for one (topic, document) pair at a time.

No Django here, and only the standard library (``urllib.request``): the Django side builds an
:class:`EndpointConfig` from its settings and calls :class:`ChatJudge`; the tests drive it
against a local server that speaks the protocol (``tests/autojudge/protocol_server.py``).

One request (``POST {base_url}/chat/completions``, ``base_url`` ending in ``/v1`` as OpenAI's
clients expect)::

    {"model": config.model, "temperature": 0, "max_tokens": config.max_tokens,
     "messages": [{"role": "system", "content": "You are a helpful assistant."},
                  {"role": "user", "content": <the template with query and passage>}],
     "seed": config.seed}                                   # seed only when set

with ``Authorization: Bearer <api_key>`` (no header when the key is empty: local servers).
Proxies from the environment (``HTTPS_PROXY``, ``NO_PROXY``) apply, as for any urllib client;
``timeout_seconds`` bounds each socket operation (connecting, each read), not the whole answer.

Outcomes (:class:`Verdict`), one per pair; :meth:`ChatJudge.judge` never raises on endpoint
trouble:

- ``ok``: the answer has a grade 0..3 (:func:`~judging.autojudge.prompts.parse_answer`), mapped
  to the campaign's scale;
- ``refused``: ``finish_reason`` ``content_filter``, a ``refusal`` in the message, or an answer
  without a grade that reads as a refusal. Not retried (a refusal at temperature 0 repeats);
- ``malformed``: a body that is not JSON or has no ``choices``, retried once; or an answer
  without a grade (not retried, for the same reason as a refusal);
- ``error``: the endpoint refused the request. 429, 408, 425 and 5xx, timeouts and connection
  errors are retried up to ``max_retries`` times; 400, 401, 403, 404 and every other 4xx fail
  at once with a plain message (for 401 and 403 without the server's text, which may quote part
  of the key). A redirect is an error too: following it would send the key to another address.

Retries wait ``min(cap, backoff * 2**(k-1))`` before retry k, times a jitter drawn from [0.5, 1)
(so that many workers do not retry in step), and at least the server's ``Retry-After`` (seconds
or an HTTP date), all capped at ``max_backoff_seconds``. Every request, retries included, first
takes a token from :class:`TokenBucket` when ``requests_per_minute`` is set.

Tokens and cost come from each response's ``usage`` (``prompt_tokens``, ``completion_tokens``),
summed over a pair's attempts; cost = prompt / 1000 * price_prompt_per_1k + completion / 1000 *
price_completion_per_1k. A response without ``usage`` counts 0 tokens, and says so:
``Verdict.usage_reported`` is False, ``Usage.without_usage`` counts such responses, and a
warning is logged once per judge.

The key: :class:`EndpointConfig`'s ``repr``/``str`` masks it, the client never logs headers, and
every string it returns or logs (``Verdict.error``, ``Verdict.answer``, log records) has the key
and the values of secret-looking extra headers replaced by ``***``. It is still a plain ``str``
field: ``dataclasses.asdict`` or pickling a config copies it, as any settings object would.
"""

from __future__ import annotations

import http.client
import json
import logging
import random
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import (
    Callable,
    Generator,
    Hashable,
    Iterable,
    Iterator,
    Mapping,
    MutableMapping,
    Sequence,
)
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Literal
from urllib.parse import urlsplit

from judging.autojudge.prompts import (
    UMBRELA,
    UMBRELA_SYSTEM,
    check_mapping,
    check_template,
    default_mapping,
    parse_answer,
    render,
)

__all__ = [
    "ChatJudge",
    "EndpointConfig",
    "Status",
    "TokenBucket",
    "Usage",
    "Verdict",
]

log = logging.getLogger(__name__)

Status = Literal["ok", "refused", "malformed", "error"]
STATUSES: tuple[Status, ...] = ("ok", "refused", "malformed", "error")

ANSWER_CHARS = 2000  # kept of an answer in a Verdict
MESSAGE_CHARS = 200  # kept of a server's error message
MAX_BODY_BYTES = 1 << 20  # a chat answer of 100 tokens is a few KB; refuse to buffer more
MASK = "***"
_SECRET_HEADER_WORDS = ("key", "auth", "token", "secret", "cookie")
_RETRIED_STATUS = {408, 425, 429}


# --------------------------------------------------------------------------------------------
# Configuration and results


@dataclass(frozen=True)
class EndpointConfig:
    """Where the judge's model is served and how to talk to it.

    ``base_url``: http(s) address up to and including the API version (``http://host:8000/v1``);
    ``api_key`` (masked in ``repr``; empty: no ``Authorization`` header); ``model``;
    ``timeout_seconds`` per request; ``max_retries`` after the first attempt;
    ``backoff_seconds`` before the first retry, doubling, capped at ``max_backoff_seconds``;
    ``requests_per_minute`` (None: unlimited); prices per 1,000 tokens; ``max_tokens`` of the
    answer (UMBRELA's 100); ``seed`` sent when set; ``extra_headers`` (e.g. an organisation id;
    their values are masked in ``repr`` too).
    """

    base_url: str
    api_key: str = field(default="", repr=False)
    model: str = ""
    timeout_seconds: float = 30.0
    max_retries: int = 4
    backoff_seconds: float = 1.0
    max_backoff_seconds: float = 60.0
    requests_per_minute: float | None = None
    price_prompt_per_1k: float = 0.0
    price_completion_per_1k: float = 0.0
    max_tokens: int = 100
    seed: int | None = None
    extra_headers: Mapping[str, str] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        parts = urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("base_url must be an http:// or https:// address with a host")
        if parts.username is not None or parts.password is not None:
            raise ValueError("base_url must not carry credentials: give the key as api_key")
        if not self.model:
            raise ValueError("model must name the model to ask")
        if not self.timeout_seconds > 0:
            raise ValueError("timeout_seconds must be positive")
        if self.max_retries < 0:
            raise ValueError("max_retries must be 0 or more")
        if self.backoff_seconds < 0 or self.max_backoff_seconds < 0:
            raise ValueError("backoff_seconds and max_backoff_seconds must be 0 or more")
        if self.requests_per_minute is not None and not self.requests_per_minute > 0:
            raise ValueError("requests_per_minute must be positive (or None: no limit)")
        if self.price_prompt_per_1k < 0 or self.price_completion_per_1k < 0:
            raise ValueError("prices must be 0 or more")
        if self.max_tokens < 1:
            raise ValueError("max_tokens must be at least 1")
        object.__setattr__(self, "extra_headers", dict(self.extra_headers))

    def __repr__(self) -> str:
        key = MASK if self.api_key else "''"
        headers = {name: MASK for name in self.extra_headers}
        return (
            f"EndpointConfig(base_url={self.base_url!r}, api_key={key}, model={self.model!r}, "
            f"timeout_seconds={self.timeout_seconds}, max_retries={self.max_retries}, "
            f"backoff_seconds={self.backoff_seconds}, "
            f"max_backoff_seconds={self.max_backoff_seconds}, "
            f"requests_per_minute={self.requests_per_minute}, "
            f"price_prompt_per_1k={self.price_prompt_per_1k}, "
            f"price_completion_per_1k={self.price_completion_per_1k}, "
            f"max_tokens={self.max_tokens}, seed={self.seed}, extra_headers={headers})"
        )

    __str__ = __repr__

    @property
    def url(self) -> str:
        """The chat-completions address."""
        return self.base_url.rstrip("/") + "/chat/completions"

    def secrets(self) -> tuple[str, ...]:
        """The key and the values of secret-looking extra headers: never shown."""
        found = [self.api_key] if self.api_key else []
        for name, value in self.extra_headers.items():
            if value and any(word in name.lower() for word in _SECRET_HEADER_WORDS):
                found.append(value)
        return tuple(found)


@dataclass(frozen=True)
class Verdict:
    """The outcome for one pair (statuses in the module docstring).

    ``grade`` is on the campaign's scale and ``raw_grade`` UMBRELA's 0..3 (both None unless
    ``ok``); ``answer`` the model's text (at most 2,000 characters); tokens and ``cost`` summed
    over the ``attempts`` (HTTP requests) made for it; ``error`` says what went wrong ("" when
    ok); ``usage_reported`` is False when a response gave no ``usage`` (its tokens counted 0);
    ``http_status`` is the last response's status (None: no response).
    """

    status: Status
    grade: int | None = None
    raw_grade: int | None = None
    answer: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    attempts: int = 0
    error: str = ""
    usage_reported: bool = True
    http_status: int | None = None


@dataclass(frozen=True)
class Usage:
    """A judge's running totals: HTTP ``requests`` (retries included), tokens, ``cost``, the
    pairs judged ``by_status``, responses ``without_usage`` (counted as 0 tokens) and pairs
    skipped because the cache had them (``cached``)."""

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    by_status: Mapping[str, int] = field(default_factory=dict)
    without_usage: int = 0
    cached: int = 0

    @property
    def pairs(self) -> int:
        return sum(self.by_status.values())


# --------------------------------------------------------------------------------------------
# Rate limit


class TokenBucket:
    """A thread-safe token bucket: ``per_minute`` tokens a minute, at most ``burst`` saved up.

    :meth:`acquire` reserves a token under the lock, letting the count go negative, and sleeps
    outside it until the token exists: callers arriving together are spaced 60 / per_minute
    seconds apart in arrival order, and none holds the lock while it sleeps.
    """

    def __init__(
        self,
        per_minute: float,
        *,
        burst: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not per_minute > 0:
            raise ValueError("per_minute must be positive")
        if burst < 1:
            raise ValueError("burst must be at least 1")
        self.rate = per_minute / 60.0
        self.capacity = float(burst)
        self._tokens = float(burst)
        self._clock = clock
        self._sleep = sleep
        self._last = clock()
        self._lock = threading.Lock()

    def acquire(self) -> float:
        """Take one token, sleeping until it is there; returns the seconds slept."""
        with self._lock:
            now = self._clock()
            self._tokens = min(self.capacity, self._tokens + (now - self._last) * self.rate)
            self._last = now
            self._tokens -= 1.0
            delay = 0.0 if self._tokens >= 0 else -self._tokens / self.rate
        if delay > 0:
            self._sleep(delay)
        return delay


# --------------------------------------------------------------------------------------------
# Transport


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Redirects become errors: urllib would resend the Authorization header elsewhere."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


@dataclass
class _Response:
    kind: Literal["ok", "http", "timeout", "connection"]
    status: int | None = None
    body: bytes = b""
    retry_after: str | None = None
    reason: str = ""
    location: str | None = None


def _retry_after_seconds(value: str | None, now: Callable[[], datetime]) -> float | None:
    """Retry-After as seconds: a number, or an HTTP date (RFC 9110 §10.2.3); None if neither."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - now()).total_seconds())


def _server_message(body: bytes) -> str:
    """The server's error message (OpenAI's ``{"error": {"message": ...}}``), or its text."""
    text = body[:4096].decode("utf-8", "replace")
    try:
        data = json.loads(text)
    except ValueError:
        return " ".join(text.split())[:MESSAGE_CHARS]
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict):
            err = err.get("message", err.get("detail", ""))
        return " ".join(str(err).split())[:MESSAGE_CHARS]
    return ""


def _content_text(content: Any) -> str | None:
    """A message's content as text: a string, or the text parts of a list; None if neither."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "".join(parts)
    return None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


# --------------------------------------------------------------------------------------------
# The judge

Key = Hashable


@dataclass
class _Tally:
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    usage_reported: bool = True
    without_usage: int = 0


class ChatJudge:
    """Judges (query, passage) pairs with one endpoint, one template and one grade mapping.

    ``scale``: the campaign's grades; ``mapping``: UMBRELA 0..3 -> a grade of ``scale``
    (default :func:`~judging.autojudge.prompts.default_mapping`); ``template`` with ``{query}``
    and ``{passage}``, sent after ``system_message`` (None: no system message). ``sleep``,
    ``clock``, ``rng`` and ``now`` are injectable for tests. Thread-safe: :meth:`judge_many`
    with ``workers > 1`` calls :meth:`judge` from several threads.
    """

    def __init__(
        self,
        config: EndpointConfig,
        *,
        scale: Sequence[int],
        template: str = UMBRELA,
        system_message: str | None = UMBRELA_SYSTEM,
        mapping: Mapping[int, int] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        check_template(template)
        self.config = config
        self.template = template
        self.system_message = system_message
        self.scale = tuple(int(g) for g in scale)
        self.mapping = (
            default_mapping(self.scale) if mapping is None else check_mapping(mapping, self.scale)
        )
        self._sleep = sleep
        self._now = now
        self._rng = rng or random.Random()
        self._rng_lock = threading.Lock()
        self._bucket = (
            TokenBucket(config.requests_per_minute, clock=clock, sleep=sleep)
            if config.requests_per_minute is not None
            else None
        )
        self._opener = urllib.request.build_opener(_NoRedirect())
        self._secrets = config.secrets()
        self._lock = threading.Lock()
        self._requests = 0
        self._prompt_tokens = 0
        self._completion_tokens = 0
        self._cost = 0.0
        self._by_status: Counter[str] = Counter()
        self._without_usage = 0
        self._cached = 0
        self._warned_usage = False

    def __repr__(self) -> str:
        return f"ChatJudge({self.config!r}, scale={list(self.scale)}, mapping={self.mapping})"

    # ---- what goes out

    def messages(self, query: str, passage: str) -> list[dict[str, str]]:
        """The chat messages for one pair."""
        out = []
        if self.system_message is not None:
            out.append({"role": "system", "content": self.system_message})
        out.append({"role": "user", "content": render(self.template, query=query, passage=passage)})
        return out

    def payload(self, query: str, passage: str) -> dict[str, Any]:
        """The request body for one pair."""
        body: dict[str, Any] = {
            "model": self.config.model,
            "messages": self.messages(query, passage),
            "temperature": 0,
            "max_tokens": self.config.max_tokens,
        }
        if self.config.seed is not None:
            body["seed"] = self.config.seed
        return body

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        headers.update(self.config.extra_headers)
        if self.config.api_key:
            headers["Authorization"] = f"Bearer {self.config.api_key}"
        return headers

    def scrub(self, text: str) -> str:
        """``text`` with the key and other secrets replaced by ``***``."""
        for secret in self._secrets:
            text = text.replace(secret, MASK)
        return text

    # ---- one HTTP request

    def _post(self, body: bytes) -> _Response:
        request = urllib.request.Request(
            self.config.url, data=body, headers=self._headers(), method="POST"
        )
        try:
            with self._opener.open(request, timeout=self.config.timeout_seconds) as response:
                raw = response.read(MAX_BODY_BYTES + 1)
                return _Response("ok", status=response.status, body=raw)
        except urllib.error.HTTPError as e:
            try:
                raw = e.read(MAX_BODY_BYTES)
            except (OSError, http.client.HTTPException):
                raw = b""
            finally:
                e.close()
            headers = e.headers
            return _Response(
                "http",
                status=e.code,
                body=raw,
                retry_after=headers.get("Retry-After") if headers else None,
                location=headers.get("Location") if headers else None,
            )
        except TimeoutError:
            return _Response("timeout", reason="timed out")
        except urllib.error.URLError as e:
            if isinstance(e.reason, TimeoutError):
                return _Response("timeout", reason="timed out")
            return _Response("connection", reason=str(e.reason))
        except (http.client.HTTPException, OSError) as e:
            return _Response("connection", reason=f"{type(e).__name__}: {e}")

    def _delay(self, retry: int, retry_after: str | None) -> float:
        cfg = self.config
        base = min(cfg.max_backoff_seconds, cfg.backoff_seconds * 2.0 ** (retry - 1))
        with self._rng_lock:
            delay = base * (0.5 + 0.5 * self._rng.random())
        asked = _retry_after_seconds(retry_after, self._now)
        if asked is not None:
            delay = max(delay, asked)
        return min(cfg.max_backoff_seconds, delay)

    # ---- one pair

    def judge(self, query: str, passage: str) -> Verdict:
        """Judge one pair. Endpoint trouble of any kind is a Verdict, never an exception."""
        if not isinstance(query, str) or not isinstance(passage, str):
            raise TypeError("query and passage must be str")
        tally = _Tally()
        try:
            verdict = self._judge(query, passage, tally)
        except Exception as e:  # a bug in a server's answer must not stop a whole pool
            log.warning("judging failed unexpectedly: %s", self.scrub(f"{type(e).__name__}: {e}"))
            verdict = self._verdict(
                tally, "error", error=self.scrub(f"unexpected {type(e).__name__}: {e}")
            )
        self._record(verdict, tally)
        return verdict

    def _verdict(self, tally: _Tally, status: Status, **kwargs: Any) -> Verdict:
        cfg = self.config
        cost = (
            tally.prompt_tokens / 1000 * cfg.price_prompt_per_1k
            + tally.completion_tokens / 1000 * cfg.price_completion_per_1k
        )
        answer = self.scrub(str(kwargs.pop("answer", "")))
        if len(answer) > ANSWER_CHARS:
            answer = answer[: ANSWER_CHARS - 1] + "…"
        error = self.scrub(str(kwargs.pop("error", "")))
        return Verdict(
            status=status,
            answer=answer,
            error=error,
            prompt_tokens=tally.prompt_tokens,
            completion_tokens=tally.completion_tokens,
            cost=cost,
            attempts=tally.attempts,
            usage_reported=tally.usage_reported,
            **kwargs,
        )

    def _account(self, data: dict[str, Any], tally: _Tally) -> None:
        usage = data.get("usage")
        prompt = completion = None
        if isinstance(usage, dict):
            prompt = _count(usage.get("prompt_tokens"))
            completion = _count(usage.get("completion_tokens"))
        if prompt is None or completion is None:
            tally.usage_reported = False
            tally.without_usage += 1
            if not self._warned_usage:
                self._warned_usage = True
                log.warning(
                    "%s reports no token usage: its tokens and cost are counted as 0",
                    self.scrub(self.config.url),
                )
        tally.prompt_tokens += prompt or 0
        tally.completion_tokens += completion or 0

    def _judge(self, query: str, passage: str, tally: _Tally) -> Verdict:
        body = json.dumps(self.payload(query, passage)).encode("utf-8")
        cfg = self.config
        malformed = 0
        while True:
            if self._bucket is not None:
                self._bucket.acquire()
            tally.attempts += 1
            response = self._post(body)
            log.debug(
                "POST %s attempt %d: %s %s",
                self.scrub(cfg.url),
                tally.attempts,
                response.kind,
                response.status or self.scrub(response.reason),
            )
            retry_after: str | None = None
            if response.kind == "ok":
                verdict, problem = self._read(response, tally)
                if verdict is not None:
                    return verdict
                malformed += 1
                if malformed >= 2 or tally.attempts > cfg.max_retries:
                    return self._verdict(
                        tally, "malformed", error=problem, http_status=response.status
                    )
                why = problem
            elif response.kind == "http":
                status = response.status or 0
                if not (status in _RETRIED_STATUS or 500 <= status <= 599):
                    return self._verdict(
                        tally, "error", error=self._refusal(response), http_status=status
                    )
                why = self._refusal(response)
                retry_after = response.retry_after
                if tally.attempts > cfg.max_retries:
                    return self._verdict(
                        tally,
                        "error",
                        error=f"{why}; gave up after {tally.attempts} attempts",
                        http_status=status,
                    )
            else:
                why = (
                    f"no answer within {cfg.timeout_seconds:g} s"
                    if response.kind == "timeout"
                    else f"cannot reach the endpoint ({response.reason})"
                )
                if tally.attempts > cfg.max_retries:
                    return self._verdict(
                        tally, "error", error=f"{why}; gave up after {tally.attempts} attempts"
                    )
            delay = self._delay(tally.attempts, retry_after)
            log.debug("retrying in %.2f s: %s", delay, self.scrub(why))
            self._sleep(delay)

    def _refusal(self, response: _Response) -> str:
        """What an HTTP error status means, for a person."""
        status = response.status or 0
        if status == 401:
            return "the endpoint refused the key (401)"
        if status == 403:
            return "the endpoint forbids this key or model (403)"
        if 300 <= status < 400:
            where = f" to {response.location}" if response.location else ""
            return (
                f"the endpoint redirected ({status}){where}; set base_url to the final address "
                "(the key is not sent on)"
            )
        said = _server_message(response.body)
        said = f": {said}" if said else ""
        if status == 404:
            return f"not found (404): check base_url (up to /v1) and the model name{said}"
        if status == 429:
            return f"rate limited by the endpoint (429){said}"
        if 500 <= status <= 599:
            return f"the endpoint failed ({status}){said}"
        return f"the endpoint rejected the request ({status}){said}"

    def _read(self, response: _Response, tally: _Tally) -> tuple[Verdict | None, str]:
        """The verdict of a 2xx answer, or (None, why the body is malformed)."""
        if len(response.body) > MAX_BODY_BYTES:
            return None, f"the answer is larger than {MAX_BODY_BYTES:,} bytes"
        try:
            data = json.loads(response.body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            return None, f"the endpoint's answer is not JSON ({type(e).__name__})"
        if not isinstance(data, dict):
            return None, "the endpoint's answer is not a JSON object"
        self._account(data, tally)
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            said = _server_message(response.body) if "error" in data else ""
            return None, "the answer has no choices" + (f" ({said})" if said else "")
        choice = choices[0]
        message = choice.get("message")
        if not isinstance(message, dict):
            return None, "the answer's first choice has no message"
        text = _content_text(message.get("content"))
        if text is None:
            return None, "the answer's message content is not text"
        finish = choice.get("finish_reason")
        status = response.status
        refusal = message.get("refusal")
        if finish == "content_filter":
            return self._verdict(
                tally,
                "refused",
                answer=text,
                error="the endpoint's content filter stopped the answer",
                http_status=status,
            ), ""
        if isinstance(refusal, str) and refusal.strip():
            return self._verdict(
                tally,
                "refused",
                answer=refusal,
                error="the model declined to grade",
                http_status=status,
            ), ""
        parsed = parse_answer(text)
        if parsed.raw_grade is None and not parsed.refused:
            reasoning = _content_text(message.get("reasoning_content") or message.get("reasoning"))
            if reasoning:  # reasoning models may leave the score in their reasoning
                from_reasoning = parse_answer(reasoning)
                if from_reasoning.raw_grade is not None:
                    parsed = from_reasoning
        if parsed.raw_grade is not None:
            return self._verdict(
                tally,
                "ok",
                grade=self.mapping[parsed.raw_grade],
                raw_grade=parsed.raw_grade,
                answer=text,
                http_status=status,
            ), ""
        if parsed.refused:
            return self._verdict(
                tally, "refused", answer=text, error=parsed.problem, http_status=status
            ), ""
        problem = parsed.problem
        if finish == "length":
            problem += f" (the answer was cut at max_tokens={self.config.max_tokens})"
        return self._verdict(tally, "malformed", answer=text, error=problem, http_status=status), ""

    def _record(self, verdict: Verdict, tally: _Tally) -> None:
        with self._lock:
            self._requests += tally.attempts
            self._prompt_tokens += verdict.prompt_tokens
            self._completion_tokens += verdict.completion_tokens
            self._cost += verdict.cost
            self._by_status[verdict.status] += 1
            self._without_usage += tally.without_usage

    @property
    def totals(self) -> Usage:
        """The running totals of every pair this judge has judged or skipped."""
        with self._lock:
            return Usage(
                requests=self._requests,
                prompt_tokens=self._prompt_tokens,
                completion_tokens=self._completion_tokens,
                cost=self._cost,
                by_status={s: self._by_status[s] for s in STATUSES if self._by_status[s]},
                without_usage=self._without_usage,
                cached=self._cached,
            )

    # ---- many pairs

    def judge_many(
        self,
        pairs: Iterable[tuple[Key, str, str]],
        *,
        cache: MutableMapping[Any, Verdict] | None = None,
        on_result: Callable[[Key, Verdict], None] | None = None,
        workers: int = 1,
    ) -> Generator[tuple[Key, Verdict], None, None]:
        """Judge ``(key, query, passage)`` triples, yielding ``(key, verdict)`` as each ends.

        A key already in ``cache`` (or met earlier in ``pairs``) is skipped, not yielded, and
        counted in ``totals.cached``; every verdict but ``error`` is stored in ``cache`` (an
        endpoint error is judged again next time). ``on_result`` is called with each new
        result before it is yielded. Cache and callback run in the caller's thread; with
        ``workers > 1`` results come in the order they finish, with at most ``2 * workers``
        pairs read ahead. One pair's failure stops nothing else.
        """
        if workers < 1:
            raise ValueError("workers must be at least 1")
        seen: set[Any] = set()

        def fresh() -> Iterator[tuple[Key, str, str]]:
            for key, query, passage in pairs:
                if key in seen or (cache is not None and key in cache):
                    with self._lock:
                        self._cached += 1
                    continue
                seen.add(key)
                yield key, query, passage

        def done(key: Key, verdict: Verdict) -> tuple[Key, Verdict]:
            if cache is not None and verdict.status != "error":
                cache[key] = verdict
            if on_result is not None:
                on_result(key, verdict)
            return key, verdict

        if workers == 1:
            for key, query, passage in fresh():
                yield done(key, self.judge(query, passage))
            return
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="chat-judge") as pool:
            running: dict[Future[Verdict], Key] = {}
            todo = fresh()
            exhausted = False
            while running or not exhausted:
                while not exhausted and len(running) < 2 * workers:
                    nxt = next(todo, None)
                    if nxt is None:
                        exhausted = True
                        break
                    key, query, passage = nxt
                    running[pool.submit(self.judge, query, passage)] = key
                if not running:
                    break
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    key = running.pop(future)
                    yield done(key, future.result())
