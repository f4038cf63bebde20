"""A local server that speaks OpenAI's chat-completions protocol, scripted per request.

``POST /v1/chat/completions`` with a JSON body; ``Authorization: Bearer <key>`` is checked
first (a wrong or missing key is a 401 that consumes no scripted reply). Each authorised
request takes the next :class:`Reply` from the script, or, when the script is empty, asks
``responder(body)`` (default: ``##final score: 2``). Every request is recorded
(:class:`Received`: headers, JSON body, the reply it got), so tests assert the model name,
temperature 0, the prompt and the number of attempts.

Replies (constructors below): :func:`ok`, :func:`status` (429 with ``Retry-After``, 500, 502,
503, ...), :func:`hang` (answers after a delay longer than the client's timeout), :func:`raw`
(malformed JSON), :func:`redirect`, :func:`body` (any JSON, e.g. without ``choices``),
:func:`no_score`, :func:`refusal`, :func:`content_filter`.

Stdlib only: ``ThreadingHTTPServer`` on 127.0.0.1, port 0, served from a daemon thread.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEFAULT_USAGE = {"prompt_tokens": 120, "completion_tokens": 8, "total_tokens": 128}


@dataclass
class Reply:
    """One scripted answer: HTTP ``code``, extra ``headers``, the body (``payload`` as JSON,
    or ``raw_body`` bytes as they are), sent after ``delay`` seconds."""

    code: int = 200
    payload: Any = None
    raw_body: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


def completion(
    content: Any,
    *,
    finish_reason: str = "stop",
    usage: dict[str, int] | None = DEFAULT_USAGE,
    model: str = "scripted-model",
    **message: Any,
) -> dict[str, Any]:
    """A chat-completion object with one choice."""
    out: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, **message},
                "finish_reason": finish_reason,
            }
        ],
    }
    if usage is not None:
        out["usage"] = usage
    return out


def ok(grade: int | str = 2, **kwargs: Any) -> Reply:
    """An answer in UMBRELA's format, ``##final score: <grade>`` (or ``grade`` as the text)."""
    content = f"##final score: {grade}" if isinstance(grade, int) else grade
    return Reply(payload=completion(content, **kwargs))


def status(code: int, *, retry_after: str | None = None, message: str = "") -> Reply:
    """An error status with OpenAI's error body."""
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    text = message or f"scripted {code}"
    return Reply(code=code, payload={"error": {"message": text, "code": code}}, headers=headers)


def hang(seconds: float, then: Reply | None = None) -> Reply:
    """``then`` (default ok) after ``seconds``: longer than the client's timeout, a hang."""
    reply = then or ok()
    return Reply(reply.code, reply.payload, reply.raw_body, dict(reply.headers), delay=seconds)


def redirect(location: str, code: int = 307) -> Reply:
    """A redirect (which the client must not follow: it would resend the key)."""
    return Reply(code=code, payload={}, headers={"Location": location})


def raw(data: bytes, code: int = 200) -> Reply:
    """A body sent as it is (malformed JSON)."""
    return Reply(code=code, raw_body=data)


def body(payload: Any, code: int = 200) -> Reply:
    """Any JSON body (e.g. one without ``choices``)."""
    return Reply(code=code, payload=payload)


def no_score(text: str = "The passage discusses the topic at some length.") -> Reply:
    return Reply(payload=completion(text))


def refusal(text: str = "I can't help with that.") -> Reply:
    return Reply(payload=completion(text))


def content_filter() -> Reply:
    return Reply(payload=completion(None, finish_reason="content_filter"))


@dataclass
class Received:
    """One request as the server saw it."""

    path: str
    headers: dict[str, str]
    body: Any
    code: int

    @property
    def prompt(self) -> str:
        """The user message's text."""
        return next(m["content"] for m in self.body["messages"] if m["role"] == "user")


class ProtocolServer:
    """The scripted server; use as a context manager (``with ProtocolServer() as server``)."""

    def __init__(
        self,
        api_key: str = "sk-test-abcdefghijklmnop0123456789",
        *,
        responder: Callable[[Any], Reply] | None = None,
    ) -> None:
        self.api_key = api_key
        self.responder = responder or (lambda _body: ok(2))
        self.requests: list[Received] = []
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ---- scripting

    def script(self, *replies: Reply) -> None:
        """Queue replies for the next authorised requests, in order."""
        with self._lock:
            self._script.extend(replies)

    def _next(self, body: Any) -> Reply:
        with self._lock:
            if self._script:
                return self._script.popleft()
        return self.responder(body)

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "the server is not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def attempts(self) -> int:
        """Requests received so far."""
        with self._lock:
            return len(self.requests)

    # ---- serving

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def _send(self, reply: Reply) -> None:
                if reply.delay and server._stopping.wait(reply.delay):
                    return  # shutting down: drop the hung request
                data = (
                    reply.raw_body
                    if reply.raw_body is not None
                    else json.dumps(reply.payload).encode()
                )
                try:
                    self.send_response(reply.code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.send_header("Connection", "close")
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)
                self.close_connection = True

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw_body = self.rfile.read(length)
                try:
                    parsed: Any = json.loads(raw_body)
                except ValueError:
                    parsed = None
                headers = {k: v for k, v in self.headers.items()}
                if self.path != "/v1/chat/completions":
                    reply = status(404, message=f"no route {self.path}")
                elif self.headers.get("Authorization") != f"Bearer {server.api_key}":
                    given = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
                    # as hosted APIs do, the message quotes the key it was given
                    reply = status(401, message=f"Incorrect API key provided: {given}")
                elif parsed is None:
                    reply = status(400, message="the body is not JSON")
                else:
                    reply = server._next(parsed)
                with server._lock:
                    server.requests.append(Received(self.path, headers, parsed, reply.code))
                self._send(reply)

        return Handler

    def start(self) -> ProtocolServer:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ProtocolServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextmanager
def running(**kwargs: Any) -> Iterator[ProtocolServer]:
    with ProtocolServer(**kwargs) as server:
        yield server
