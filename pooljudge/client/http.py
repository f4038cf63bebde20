"""The HTTP side of the client: one ``requests`` session, the token header, every non-2xx
answer raised as a :class:`~pooljudge.client.errors.PooljudgeError`, and list pages followed.

Lists are paged with ``limit`` and ``offset`` (DRF's ``LimitOffsetPagination``, at most
``POOLJUDGE_MAX_PAGE_SIZE`` a page); :meth:`Transport.pages` asks for the next offset itself
rather than following ``next``, an absolute URL that names the scheme and host the service
believes it has (behind a proxy, not always the one the client reached).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import requests

from pooljudge.client.errors import PooljudgeError, error_from_response

__all__ = ["API_PREFIX", "Transport", "api_root"]

API_PREFIX = "/api/v1/"
Params = Mapping[str, str | int | float | list[str] | None]


def api_root(base_url: str) -> str:
    """``http://host:8000``, ``http://host:8000/`` or ``http://host:8000/api/v1/`` ->
    ``http://host:8000/api/v1/``."""
    root = base_url.strip().rstrip("/")
    if not root.startswith(("http://", "https://")):
        raise ValueError(f"base_url must start with http:// or https://, not {base_url!r}")
    root = root.removesuffix(API_PREFIX.rstrip("/"))
    return root + API_PREFIX


class Transport:
    def __init__(
        self,
        base_url: str,
        token: str | None,
        *,
        timeout: float,
        session: requests.Session | None,
        user_agent: str,
    ) -> None:
        self.root = api_root(base_url)
        self.timeout = timeout
        self._own_session = session is None
        self.session = session or requests.Session()
        self.token = token
        self.user_agent = user_agent

    def headers(self, accept: str = "application/json") -> dict[str, str]:
        """Sent with every request (set per request: a session passed in is not changed)."""
        out = {"User-Agent": self.user_agent, "Accept": accept}
        if self.token:
            out["Authorization"] = f"Token {self.token}"
        return out

    def url(self, path: str) -> str:
        return self.root + path.lstrip("/")

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Params | None = None,
        json: Any = None,
        data: Mapping[str, Any] | None = None,
        files: Mapping[str, tuple[str, bytes]] | None = None,
        stream: bool = False,
        accept: str = "application/json",
    ) -> requests.Response:
        """The answer to one request; any non-2xx answer (or none at all) raised."""
        query = {k: v for k, v in (params or {}).items() if v is not None}
        try:
            response = self.session.request(
                method,
                self.url(path),
                params=query,
                headers=self.headers(accept),
                json=json,
                data=data,
                files=files,
                timeout=self.timeout,
                stream=stream,
            )
        except requests.RequestException as exc:
            raise PooljudgeError(
                f"no answer: {exc}", code="connection_error", method=method, url=self.url(path)
            ) from exc
        if not 200 <= response.status_code < 300:
            error = error_from_response(response)
            response.close()
            raise error
        return response

    def get_json(self, path: str, params: Params | None = None) -> Any:
        return self.request("GET", path, params=params).json()

    def pages(self, path: str, *, page_size: int, params: Params | None = None) -> Iterator[Any]:
        """Every item of a paged list, asking page after page."""
        offset = 0
        while True:
            page = self.get_json(path, {**(params or {}), "limit": page_size, "offset": offset})
            results = page.get("results") or []
            yield from results
            offset += len(results)
            if not results or offset >= int(page.get("count", 0)):
                return

    def close(self) -> None:
        """Close the session if the client made it (one passed in is its owner's to close)."""
        if self._own_session:
            self.session.close()
