"""The one way in for uploaded files: size limits, gzip, UTF-8, and reader errors.

Every run, qrels, topics and documents file goes through :func:`read`, however it arrives: an
API upload (``UploadedFile``), bytes from a caller, or a path from a management command.

1. The size as received is checked against the caller's limit before anything is read (413).
2. Gzip, recognised by its magic bytes, is undone here and only here, incrementally and
   including files made of several concatenated members. The output is counted as it grows and
   refused (413) once it passes the decompressed limit (``POOLJUDGE_MAX_DECOMPRESSED_BYTES``,
   by default the same as the limit as received), so a gzip bomb stops after that many bytes
   instead of being inflated whole into memory.
3. A UTF-8 byte order mark at the start of the content (plain or gzip) is dropped here.
   The readers then get plain bytes: ``metrics.io.read_run``/``read_qrels`` for runs and qrels,
   ``judging.campaigns.formats`` for topics and documents, with :func:`record_limits` (the
   longest line, qid, docid and tag of the settings). Bad UTF-8 is a problem on its line:
   formats decode with :func:`decode_lines`; ``metrics.io`` checks UTF-8 on its own vectorised
   path with the same message (checking twice would double the reading cost of a run).
4. What a reader raises (``metrics.problems.InvalidInput``) becomes the service-level
   ``judging.core.errors.InvalidInput`` (400) in one place, :func:`reading`.

``metrics`` keeps its own gzip support for its command-line tools; here it never sees gzip.
"""

from __future__ import annotations

import itertools
import os
import zlib
from collections.abc import Generator, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile

from judging.core.errors import InvalidInput, TooLarge
from metrics.io.limits import Limits, line_problem
from metrics.problems import InvalidInput as ReaderError
from metrics.problems import Problem, Problems

__all__ = [
    "GZIP_MAGIC",
    "Source",
    "Upload",
    "check_request_size",
    "decode_lines",
    "decompressed_limit",
    "gunzip",
    "gunzip_head",
    "invalid_input",
    "read",
    "reading",
    "record_limits",
]

Source = UploadedFile | bytes | os.PathLike[str]

GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 20
_BOM = "\ufeff"
_BOM_BYTES = _BOM.encode()
# Room for the multipart envelope and the other form fields around the file.
_ENVELOPE = 64 * 1024


@dataclass(frozen=True, slots=True)
class Upload:
    """A file's content with gzip undone, and the name its problems are reported under."""

    data: bytes
    name: str


def check_request_size(content_length: str | None, *, limit: int, what: str) -> None:
    """Refuse a request body over ``limit`` (413) from its Content-Length, before parsing it."""
    try:
        length = int(content_length or 0)
    except ValueError:
        length = 0
    if length > limit + _ENVELOPE:
        raise TooLarge(f"{what} is {length:,} bytes; the limit is {limit:,} bytes")


def record_limits() -> Limits:
    """The longest line, qid, docid and run tag of the settings (the database's columns)."""
    return Limits(
        line_bytes=settings.POOLJUDGE_UPLOADS.max_line_bytes,
        qid_bytes=settings.POOLJUDGE_UPLOADS.max_qid_bytes,
        docid_bytes=settings.POOLJUDGE_UPLOADS.max_docid_bytes,
        tag_bytes=settings.POOLJUDGE_UPLOADS.max_tag_bytes,
    )


def decompressed_limit(limit: int | None) -> int | None:
    """Largest output of a gzip file whose size as received is limited to ``limit``."""
    if limit is None:
        return None
    return settings.POOLJUDGE_UPLOADS.max_decompressed_bytes or limit


def read(src: Source, *, what: str, limit: int | None, source: str | None = None) -> Upload:
    """The plain content of ``src`` (gzip undone), checked against ``limit`` (``None``: none).

    ``what`` names the file in messages ("the run file"); ``source`` names it in problem
    reports (default: the upload's or path's name). A leading UTF-8 BOM is dropped. Raises
    ``TooLarge`` (413) or ``InvalidInput`` (400: corrupt gzip).
    """
    name = source_name(src, source)
    received = _size(src)
    if limit is not None and received is not None and received > limit:
        raise TooLarge(f"{what} is {received:,} bytes; the limit is {limit:,} bytes")
    chunks = _chunks(src)
    try:
        first = next(chunks, b"")
        if first[:2] != GZIP_MAGIC:
            data = first if isinstance(src, bytes) else b"".join(itertools.chain([first], chunks))
            if limit is not None and len(data) > limit:
                raise TooLarge(f"{what} is {len(data):,} bytes; the limit is {limit:,} bytes")
            return Upload(_without_bom(data), name)
        with reading(what):
            pieces = gunzip(
                itertools.chain([first], chunks),
                source=name,
                limit=decompressed_limit(limit),
                what=what,
            )
            return Upload(_without_bom(b"".join(pieces)), name)
    finally:
        if isinstance(chunks, Generator):
            chunks.close()


def _without_bom(data: bytes) -> bytes:
    return data[len(_BOM_BYTES) :] if data.startswith(_BOM_BYTES) else data


def source_name(src: Source, source: str | None = None) -> str:
    """The name problem reports give ``src``: ``source`` if given, else the upload's or the
    path's name."""
    if source:
        return source
    if isinstance(src, UploadedFile):
        return src.name or "upload"
    if isinstance(src, os.PathLike):
        return os.fspath(src)
    return "input"


def _size(src: Source) -> int | None:
    if isinstance(src, UploadedFile):
        return src.size
    if isinstance(src, os.PathLike):
        return os.stat(src).st_size
    return len(src)


def _chunks(src: Source) -> Iterator[bytes]:
    if isinstance(src, bytes):
        return iter([src])
    if isinstance(src, UploadedFile):
        return iter(src.chunks(_CHUNK))
    return _path_chunks(src)


def _path_chunks(path: os.PathLike[str]) -> Generator[bytes, None, None]:
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            yield chunk


# --------------------------------------------------------------------------- gzip


def gunzip(
    chunks: Iterable[bytes],
    *,
    source: str,
    limit: int | None = None,
    what: str = "the file",
    problems: Problems | None = None,
) -> Iterator[bytes]:
    """Decompress gzip data, including files made of several concatenated members.

    Output comes in pieces of at most 1 MB however well the input compresses; past ``limit``
    output bytes it raises ``TooLarge``. Corrupt or truncated data is one whole-file problem,
    added to ``problems`` (with those already found) and raised as a reader error.
    """
    decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
    started = False
    produced = 0
    try:
        for chunk in chunks:
            while chunk:
                started = True
                out = decoder.decompress(chunk, _CHUNK)
                if out:
                    produced += len(out)
                    if limit is not None and produced > limit:
                        raise _bomb(what, limit)
                    yield out
                if decoder.eof:
                    chunk = decoder.unused_data
                    decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
                    started = False
                else:
                    chunk = decoder.unconsumed_tail
        tail = decoder.flush()
    except zlib.error as exc:
        (problems or Problems()).fatal(source, 0, f"corrupt gzip data ({exc})")
    if tail:
        produced += len(tail)
        if limit is not None and produced > limit:
            raise _bomb(what, limit)
        yield tail
    if started and not decoder.eof:
        (problems or Problems()).fatal(source, 0, "gzip data is truncated")


def _bomb(what: str, limit: int) -> TooLarge:
    return TooLarge(f"{what} decompresses to more than {limit:,} bytes (the limit)")


def gunzip_head(head: bytes, *, source: str) -> bytes:
    """As much of the start of gzip data as ``head`` holds (to sniff a file's format)."""
    try:
        return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head)
    except zlib.error as exc:
        raise ReaderError(source, [Problem(0, f"corrupt gzip data ({exc})")]) from None


# --------------------------------------------------------------------------- text


def _split_lines(chunks: Iterable[bytes], max_line: int | None) -> Iterator[tuple[bytes, int]]:
    """The lines of ``chunks``, each with its length (a CR before its line end not counted); a
    line over ``max_line`` bytes keeps its first ``max_line + 1`` (the rest is only counted as
    it is read), so memory stays bounded and time linear."""
    cap = None if max_line is None else max_line + 1
    pending: list[bytes] = []  # the start of a line whose end has not come yet
    size = 0  # bytes in pending
    dropped = 0  # bytes of the line dropped so far
    last = b""  # the line's last byte so far
    for chunk in chunks:
        pieces = chunk.split(b"\n")
        rest = pieces.pop()
        if pieces:
            head = pieces[0]
            line = b"".join([*pending, head]) if pending else head
            end = head[-1:] or last
            yield line[:cap], size + dropped + len(head) - (end == b"\r")
            yield from ((p, len(p) - p.endswith(b"\r")) for p in pieces[1:])
            pending, size, dropped, last = [], 0, 0, b""
        if not rest:
            continue
        last = rest[-1:]
        if cap is not None and size >= cap:
            dropped += len(rest)  # the rest of an over-long line
            continue
        pending.append(rest)
        size += len(rest)
        if cap is not None and size > cap:
            pending, size, dropped = [b"".join(pending)[:cap]], cap, dropped + size - cap
    if pending:
        yield b"".join(pending), size + dropped - (last == b"\r")


def decode_lines(
    chunks: Iterable[bytes],
    problems: Problems,
    *,
    max_line: int | None = None,
    why: str = "",
) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` pairs without line endings (CRLF too, a first-line BOM dropped).

    Bad UTF-8 is a problem on its line, named by byte and column; the line is still handed on
    (with replacement characters) so that the rest of it is checked too. A line longer than
    ``max_line`` bytes is a problem on its line, naming its length (``why``, if given, says where
    the limit comes from), and handed on empty.
    """
    for number, (raw, length) in enumerate(_split_lines(chunks, max_line), start=1):
        if max_line is not None and length > max_line:
            because = f" ({why})" if why else ""
            problems.add(number, line_problem(length, max_line) + because)
            yield number, ""
            continue
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.add(
                number,
                f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})",
            )
            line = raw.decode("utf-8", "replace")
        if number == 1 and line.startswith(_BOM):
            line = line[1:]
        yield number, line


# --------------------------------------------------------------------------- reader errors


def invalid_input(exc: ReaderError, what: str) -> InvalidInput:
    """The service-level error (400) for what a reader found wrong with ``what``."""
    return InvalidInput(
        f"{what} has {exc.total} problem(s); nothing was stored",
        exc.problems,
        total=exc.total,
        source=exc.source,
    )


@contextmanager
def reading(what: str) -> Iterator[None]:
    """Turn a reader's ``metrics.problems.InvalidInput`` raised inside into ``InvalidInput``."""
    try:
        yield
    except ReaderError as exc:
        raise invalid_input(exc, what) from None
