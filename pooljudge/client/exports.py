"""Downloads checked against the hashes the service names: a qrels version's export and the
campaign's golden set (``GET /api/v1/qrels/{id}/export/``)."""

from __future__ import annotations

import hashlib
import tempfile
import zipfile
from pathlib import Path

import requests

from pooljudge.client.archive import unpack_golden_set
from pooljudge.client.errors import IntegrityError
from pooljudge.client.http import Transport
from pooljudge.client.types import GoldenSet

__all__ = ["export_golden_set", "export_qrels"]

_SPOOL_IN_MEMORY = 32 << 20


def _refused(response: requests.Response, detail: str, code: str) -> IntegrityError:
    return IntegrityError(
        detail, status=response.status_code, code=code, method="GET", url=response.url
    )


def export_qrels(http: Transport, qrels_id: int, fmt: str | None) -> bytes:
    """The export's bytes; in its default (hashed) form, checked against X-Content-SHA256."""
    response = http.request(
        "GET", f"qrels/{qrels_id}/export/", params={"format": fmt}, accept="*/*"
    )
    content = response.content
    named = response.headers.get("X-Content-SHA256")
    if fmt is None and named and hashlib.sha256(content).hexdigest() != named:
        raise _refused(
            response,
            f"the export does not hash to the sha256 the service names ({named[:12]}...)",
            "integrity_check_failed",
        )
    return content


def export_golden_set(http: Transport, qrels_id: int, target: Path) -> GoldenSet:
    """The ``format=beir`` zip, spooled to a temporary file, checked and unpacked."""
    response = http.request(
        "GET", f"qrels/{qrels_id}/export/", params={"format": "beir"}, stream=True, accept="*/*"
    )
    with response, tempfile.SpooledTemporaryFile(max_size=_SPOOL_IN_MEMORY) as spool:
        for chunk in response.iter_content(1 << 20):
            spool.write(chunk)
        spool.seek(0)
        try:
            files, metadata = unpack_golden_set(
                spool, target, qrels_sha256=response.headers.get("X-Qrels-SHA256")
            )
        except (ValueError, zipfile.BadZipFile) as exc:
            detail = f"the golden set was not unpacked: {exc}"
            raise _refused(response, detail, "bad_archive") from exc
    return GoldenSet(target, files, metadata)
