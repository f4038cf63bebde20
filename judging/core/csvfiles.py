"""Every CSV file the service writes goes through this writer, which keeps spreadsheets from
running stored text as a formula while numbers stay numbers.

A spreadsheet (Excel, LibreOffice Calc, Google Sheets) that opens a CSV reads a cell whose first
character is ``=``, ``+``, ``-``, ``@``, a tab or a carriage return as a formula. A run tagged
``=HYPERLINK("http://evil.example","x")`` becomes a live link in a leaderboard download, and
``=cmd|'/C calc'!A0`` becomes a DDE call. OWASP's rule ("CSV Injection") is followed: such text
gets a leading single quote, which the spreadsheet takes as "this is text" and does not show.
Every text cell is quoted too (``csv.QUOTE_NONNUMERIC``), so a ``;`` inside one cannot start a
new cell in a spreadsheet that splits on semicolons. Numbers (ints and floats, negative ones,
nan and inf too) are the only unquoted cells, written as numbers; booleans are text.

``csv`` is imported here only (tests/test_csv_injection.py checks it), so a new CSV file cannot
skip the rule.
"""

from __future__ import annotations

import csv
import numbers
from collections.abc import Iterable, Iterator
from typing import Any

from django.http import StreamingHttpResponse

from judging.core.downloads import content_disposition

CONTENT_TYPE = "text/csv; charset=utf-8"
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def cell(value: Any) -> Any:
    """``value`` as written: a number as it is, None as empty text, anything else as text with
    a leading ``'`` when a spreadsheet would read it as a formula."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return value
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(FORMULA_START) else text


class _Echo:
    """A file whose ``write`` hands the line back, so ``writerow`` returns it."""

    def write(self, line: str) -> str:
        return line


def lines(rows: Iterable[Iterable[Any]]) -> Iterator[str]:
    """The CSV lines of ``rows`` (each ending in CRLF, RFC 4180), one row at a time."""
    writer = csv.writer(_Echo(), quoting=csv.QUOTE_NONNUMERIC)
    for row in rows:
        yield writer.writerow([cell(v) for v in row])


def text(rows: Iterable[Iterable[Any]]) -> str:
    return "".join(lines(rows))


def download(rows: Iterable[Iterable[Any]], filename: str) -> StreamingHttpResponse:
    """``rows`` as a CSV attachment named ``filename``, streamed as they are written: a large
    export never sits whole in memory."""
    response = StreamingHttpResponse(lines(rows), content_type=CONTENT_TYPE)
    response["Content-Disposition"] = content_disposition(filename)
    return response
