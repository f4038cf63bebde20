"""The Python client talking to this process's own service, without a server: a ``requests``
transport that hands each request to Django's WSGI handler. ``load_demo --rag`` plays the
retrieval team's story through the client this way, so the demo is made by the very calls a team
makes (tokens, permissions, validation, the one error shape), not by a shortcut around them."""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

import requests
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from requests.adapters import BaseAdapter
from requests.structures import CaseInsensitiveDict
from rest_framework.authtoken.models import Token

from judging.core.roles import Account
from pooljudge.client import Client

__all__ = ["BASE_URL", "client_for"]

BASE_URL = "http://pooljudge.in-process"


class WsgiAdapter(BaseAdapter):
    """Sends a prepared request to the WSGI application and reads its answer back."""

    def __init__(self) -> None:
        super().__init__()
        self.app = WSGIHandler()

    def send(  # type: ignore[override]  # the transport options mean nothing in-process
        self, request: requests.PreparedRequest, **kwargs: Any
    ) -> requests.Response:
        url = urlsplit(request.url or "")
        body = request.body or b""
        data = body.encode() if isinstance(body, str) else body
        if not isinstance(data, bytes):  # requests prepares bodies as str or bytes
            raise TypeError("a streamed request body cannot be sent in-process")
        environ: dict[str, Any] = {
            "REQUEST_METHOD": request.method or "GET",
            "SCRIPT_NAME": "",
            "PATH_INFO": url.path,
            "QUERY_STRING": url.query,
            "SERVER_NAME": "localhost",
            "SERVER_PORT": "80",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "wsgi.version": (1, 0),
            "wsgi.url_scheme": "http",
            "wsgi.input": io.BytesIO(data),
            "wsgi.errors": io.StringIO(),
            "wsgi.multithread": False,
            "wsgi.multiprocess": False,
            "wsgi.run_once": False,
            "CONTENT_LENGTH": str(len(data)),
        }
        for name, value in request.headers.items():
            key = name.upper().replace("-", "_")
            if key == "CONTENT_TYPE":
                environ["CONTENT_TYPE"] = value
            elif key != "CONTENT_LENGTH":
                environ[f"HTTP_{key}"] = value
        answered: dict[str, Any] = {}

        def start_response(
            status: str, headers: list[tuple[str, str]], *_: Any
        ) -> Callable[[bytes], object]:
            answered["status"], answered["headers"] = status, headers
            return lambda _: None

        # the caller's connection serves the request: not closed after it, as a server's
        # would be (the caller may hold a transaction; django.test's client does the same)
        request_started.disconnect(close_old_connections)
        request_finished.disconnect(close_old_connections)
        try:
            chunks = self.app(environ, start_response)
            try:
                content = b"".join(chunks)
            finally:
                close = getattr(chunks, "close", None)
                if close is not None:
                    close()
        finally:
            request_started.connect(close_old_connections)
            request_finished.connect(close_old_connections)
        response = requests.Response()
        response.status_code = int(answered["status"].split(" ", 1)[0])
        response.headers = CaseInsensitiveDict(_joined(answered["headers"]))
        response._content = content
        response.url = request.url or ""
        response.request = request
        response.encoding = "utf-8"
        return response

    def close(self) -> None:
        pass


def _joined(headers: list[tuple[str, str]]) -> Mapping[str, str]:
    out: dict[str, str] = {}
    for name, value in headers:
        out[name] = f"{out[name]}, {value}" if name in out else value
    return out


def client_for(user: Account) -> Client:
    """A client acting as ``user`` (its API token) on this process's service."""
    session = requests.Session()
    session.mount(BASE_URL, WsgiAdapter())
    token, _ = Token.objects.get_or_create(user=user)
    return Client(BASE_URL, token.key, session=session)
