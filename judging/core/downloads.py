"""The ``Content-Disposition`` of every download, built safely (RFC 6266, RFC 5987).

A file name comes from user data (a run's tag, a campaign's name): quotes, semicolons, control
characters or non-ASCII letters in it must neither break the header nor inject another one. The
header carries an ASCII fallback ``filename="..."`` (letters, digits, ``.``, ``-``, ``_`` only)
for old clients and the exact name, percent-encoded UTF-8, as ``filename*``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from urllib.parse import quote

from django.http import StreamingHttpResponse

from metrics.io.limits import CONTROL_TEXT

_UNSAFE_ASCII = re.compile(r"[^A-Za-z0-9._-]+")


def content_disposition(filename: str, *, attachment: bool = True) -> str:
    """``attachment; filename="fallback"; filename*=UTF-8''exact`` for the given name."""
    name = " ".join(CONTROL_TEXT.sub(" ", filename).split()) or "download"
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    fallback = _UNSAFE_ASCII.sub("_", ascii_name).strip("_") or "download"
    if fallback.startswith("."):  # no hidden files
        fallback = "_" + fallback
    kind = "attachment" if attachment else "inline"
    return f"{kind}; filename=\"{fallback}\"; filename*=UTF-8''{quote(name, safe='')}"


def lines_download(lines: Iterable[str], filename: str) -> StreamingHttpResponse:
    """``lines`` streamed as a UTF-8 text file named ``filename``, one a line."""
    response = StreamingHttpResponse(
        (f"{line}\n" for line in lines), content_type="text/plain; charset=utf-8"
    )
    response["Content-Disposition"] = content_disposition(filename)
    return response
