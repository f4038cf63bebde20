"""Limits on what a record file may hold, and the one check of an identifier.

A :class:`Limits` bounds a line's length and the UTF-8 length of its identifiers (qid, docid,
tag), and for topic and document files (read on the Django side) the characters of a title, a
URL and a document's text; ``None`` is no limit. The readers (``read_run``, ``read_qrels``)
report every line that breaks one, naming the line and the field (a line with its length), and
keep reading in time linear in the file's size however long a line is, without gathering an
over-long line.

A line is at most :data:`DEFAULT_LINE_BYTES` (64 KiB, the service's default) unless a caller
says otherwise (``Limits(line_bytes=None)``, or :data:`NO_LIMITS`): a TREC line is a few dozen
bytes, and a line of megabytes is a broken or hostile file whose reading would store every
docid as wide as the widest. Ids are unbounded by default. The Django side builds its limits
from its settings; ``metrics``' command-line tools take ``--max-line-length N`` (0: none).

Whatever the limits, an identifier may not contain a control character (C0 but the white space
that separates fields, DEL, C1): no TREC id has one, databases refuse NUL, and they break every
text format an id is written to.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "DEFAULT_LIMITS",
    "DEFAULT_LINE_BYTES",
    "NO_LIMITS",
    "Limits",
    "control_character",
    "id_problem",
    "line_problem",
    "show",
]

DEFAULT_LINE_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class Limits:
    """Largest line and identifiers, in bytes (``None``: unbounded); a line is at most
    :data:`DEFAULT_LINE_BYTES` unless ``line_bytes`` says otherwise. A topic title's, a document
    URL's and a document text's characters are unbounded unless given (the TREC readers have
    none of them)."""

    line_bytes: int | None = DEFAULT_LINE_BYTES
    qid_bytes: int | None = None
    docid_bytes: int | None = None
    tag_bytes: int | None = None
    title_chars: int | None = None
    url_chars: int | None = None
    text_chars: int | None = None

    @property
    def document_bytes(self) -> int | None:
        """The most of one document a reader holds (a line, or a record's lines): room for
        ``text_chars`` characters each written as the longest JSON escape (a surrogate pair,
        ``\\ud83d\\ude00``: 12 bytes), and 1 MiB for the rest of it. A document longer than
        this is too long whatever its markup: the rest of it is dropped as it is read."""
        return None if self.text_chars is None else 12 * self.text_chars + 1024**2

    def widest_id(self) -> int | None:
        """The longest identifier any field may hold (None: unbounded)."""
        limits = (self.qid_bytes, self.docid_bytes, self.tag_bytes)
        return None if None in limits else max(x for x in limits if x is not None)


DEFAULT_LIMITS = Limits()
NO_LIMITS = Limits(line_bytes=None)

# C0 controls but \t \n \v \f \r (field separators), DEL, and C1 controls in UTF-8 (U+0080-009F)
CONTROL_BYTES = re.compile(rb"[\x00-\x08\x0e-\x1f\x7f]|\xc2[\x80-\x9f]")
CONTROL_TEXT = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def show(token: bytes) -> str:
    """A token for a message: quoted, at most 40 characters, undecodable bytes escaped."""
    text = token.decode("utf-8", "backslashreplace")
    return repr(text if len(text) <= 40 else text[:37] + "...")


def line_problem(length: int, limit: int) -> str:
    """What is wrong with a line of ``length`` bytes (its line end not counted) over ``limit``."""
    return f"the line is {length:,} bytes long; the limit is {limit:,}"


def control_character(value: str) -> str | None:
    """``U+XXXX at character N`` of the first control character in ``value`` (any C0 control,
    DEL or C1), or None."""
    found = CONTROL_TEXT.search(value)
    if found is None:
        return None
    return f"U+{ord(found.group()):04X} at character {found.start() + 1}"


def id_problem(kind: str, value: bytes | str, limit: int | None) -> str | None:
    """Why ``value`` cannot be a ``kind`` (qid, docid, tag): too many UTF-8 bytes, or a control
    character; None when it can. White space is the caller's (it separates a file's fields)."""
    raw = value.encode("utf-8", "surrogatepass") if isinstance(value, str) else value
    if limit is not None and len(raw) > limit:
        return f"{kind} {show(raw)} is {len(raw):,} bytes long (UTF-8); the limit is {limit:,}"
    text = raw.decode("utf-8", "replace")
    where = control_character(text)
    if where is not None:
        return f"{kind} {show(raw)} contains a control character ({where})"
    return None
