"""Reading preference judgments: trec_eval's ``-R prefs`` and ``-R qrels_prefs`` files.

The two formats (trec_eval 10.0, ``get_prefs.c`` and ``get_qrels_prefs.c``)::

    prefs:        qid  jg  jsg  docno  rel_level
    qrels_prefs:  qid  jg  docno  rel_level        (a qrels file: every line in sub-group "0")

``jg`` names a *judgment group* (one user's judgments of the topic at one time), ``jsg`` a
*judgment sub-group* within it, ``rel_level`` a real number. Within a sub-group a document is
preferred to every document with a lower rel_level; 0 means non-relevant, above 0 relevant
(:mod:`metrics.prefs.groups` builds the preferences).

Lines are read as the qrels reader reads them (:mod:`metrics.io.trec`): they end at ``\\n``
(a ``\\r`` before it goes with the white space), fields are separated by any white space, a line
that is blank or whose first field starts with ``#`` is skipped, a leading UTF-8 BOM is dropped,
gzip is recognised. Each problem is reported with its line: a wrong number of fields, a
rel_level that is not a finite number, an id (qid, judgment group, sub-group, docno) with a
control character or over the limit, a docno listed twice in one sub-group, a file without data.

Where trec_eval reads differently: it takes rel_level with ``atof`` (``high`` is 0, ``nan`` NaN);
it skips one ``#`` line and parses a second one in a row as data; a docno listed twice in one
sub-group is counted twice in a group of one sub-group. Each of these is an error here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from metrics.io._pieces import read_pieces
from metrics.io.limits import CONTROL_BYTES, DEFAULT_LIMITS, Limits, id_problem, show
from metrics.io.trec import Source, _open_source
from metrics.problems import Problems

__all__ = ["Format", "PrefsRows", "read_bytes", "read_rows", "split_lines"]

Format = Literal["prefs", "qrels_prefs"]
Bytes = npt.NDArray[np.bytes_]
I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]

_LAYOUT: dict[str, tuple[str, ...]] = {
    "prefs": ("qid", "jg", "jsg", "docno", "rel_level"),
    "qrels_prefs": ("qid", "jg", "docno", "rel_level"),
}
_KIND = {"qid": "qid", "jg": "judgment group", "jsg": "judgment sub-group", "docno": "docno"}
QRELS_SUB_GROUP = b"0"  # get_qrels_prefs.c: every qrels line is in sub-group "0"


@dataclass(frozen=True)
class PrefsRows:
    """The good lines of a preferences file, in file order (columns; ids as UTF-8 bytes)."""

    source: str
    qids: Bytes
    jgs: Bytes
    jsgs: Bytes
    docnos: Bytes
    levels: F64
    lines: I64  # 1-based line number of each row


def _level(token: bytes) -> float | str:
    """The rel_level, or why the token is not one."""
    try:
        value = float(token)
    except ValueError:
        return f"rel_level {show(token)} is not a number"
    if not math.isfinite(value):
        return f"rel_level {show(token)} is not a finite number"
    return value


def read_bytes(src: Source, source: str | None, limits: Limits) -> tuple[str, bytes]:
    """The name of ``src`` and its bytes (gzip undone, a BOM dropped, over-long lines cut)."""
    stream, name, closer = _open_source(src, source)
    try:
        data = b"".join(read_pieces(stream, name, limits.line_bytes))
    finally:
        if closer is not None:
            closer.close()
    return name, data


def split_lines(data: bytes) -> list[bytes]:
    """The lines of ``data``, without their ``\\n`` (a last one without is a line too)."""
    return (data[:-1] if data.endswith(b"\n") else data).split(b"\n")


def read_rows(
    src: Source,
    *,
    format: Format = "prefs",
    source: str | None = None,
    max_problems: int = 100,
    limits: Limits = DEFAULT_LIMITS,
) -> tuple[PrefsRows, Problems]:
    """Read ``src`` (module docstring); the good rows and the problems found.

    The whole file is checked at once (UTF-8, control characters, field counts, numbers,
    duplicates); it is read line by line, to name each problem's line, only when that finds one.
    """
    if format not in _LAYOUT:
        raise ValueError(f"format must be 'prefs' or 'qrels_prefs', got {format!r}")
    layout = _LAYOUT[format]
    name, data = read_bytes(src, source, limits)
    problems = Problems(max(1, max_problems))
    rows = _whole(name, data, layout) if _only_lines_within(limits, data) else None
    if rows is None:
        rows = _by_line(name, split_lines(data), layout, limits, problems)
    return rows, problems


def _only_lines_within(limits: Limits, data: bytes) -> bool:
    """Whether ``limits`` bound nothing but the line length and every line of ``data`` is within
    it (a CR before a line end counted: such a line only takes the slower path, which says
    the same): then the whole file is parsed at once, as without limits."""
    if (limits.qid_bytes, limits.docid_bytes, limits.tag_bytes) != (None, None, None):
        return False
    return limits.line_bytes is None or max(map(len, data.split(b"\n"))) <= limits.line_bytes


def _column(values: Sequence[bytes]) -> Bytes:
    return np.array(values, dtype=np.bytes_) if len(values) else np.empty(0, dtype="S1")


# the bytes ``bytes.split()`` separates fields at
_SPACE = np.zeros(256, dtype=bool)
_SPACE[list(b" \t\n\r\x0b\x0c")] = True


def _whole(name: str, data: bytes, layout: tuple[str, ...]) -> PrefsRows | None:
    """The rows when nothing is wrong with the file, else None (vectorised: the fields of every
    line are found from one ``split`` of the file and the byte classes around them)."""
    tokens = data.split()
    if not tokens:
        return None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if CONTROL_BYTES.search(data):
        return None
    buf = np.frombuffer(data, dtype=np.uint8)
    space = _SPACE[buf]
    starts = ~space
    starts[1:] &= space[:-1]  # the first byte of each field
    at = np.flatnonzero(starts)
    line = np.searchsorted(np.flatnonzero(buf == 10), at)  # 0-based line of each field
    first = np.flatnonzero(np.concatenate(([True], line[1:] != line[:-1])))
    counts = np.diff(np.append(first, line.size))
    lines = line[first]
    comment = buf[at[first]] == ord("#")
    if comment.all() or np.any(counts[~comment] != len(layout)):
        return None
    table = _column(tokens)[np.repeat(~comment, counts)].reshape(-1, len(layout))
    cols = {key: table[:, i] for i, key in enumerate(layout)}
    try:
        levels = np.array([float(v) for v in cols["rel_level"].tolist()], dtype=np.float64)
    except ValueError:
        return None
    if not np.all(np.isfinite(levels)):
        return None
    n = levels.size
    rows = PrefsRows(
        name,
        cols["qid"],
        cols["jg"],
        cols.get("jsg", np.full(n, QRELS_SUB_GROUP, dtype=np.bytes_)),
        cols["docno"],
        levels,
        (lines[~comment] + 1).astype(np.int64),
    )
    keys = (rows.docnos, rows.jsgs, rows.jgs, rows.qids)
    order = np.lexsort(keys)
    same = np.ones(max(0, n - 1), dtype=bool)
    for k in keys:
        same &= k[order[1:]] == k[order[:-1]]
    return None if same.any() else rows


def _by_line(
    name: str, lines: list[bytes], layout: tuple[str, ...], limits: Limits, problems: Problems
) -> PrefsRows:
    """The good rows, each problem added to ``problems`` with its line."""
    at = {key: i for i, key in enumerate(layout)}
    cols: dict[str, list[bytes]] = {k: [] for k in ("qid", "jg", "jsg", "docno")}
    levels: list[float] = []
    numbers: list[int] = []
    first_seen: dict[tuple[bytes, bytes, bytes, bytes], int] = {}
    data_lines = 0
    for number, line in enumerate(lines, start=1):
        fields = line.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        data_lines += 1
        if limits.line_bytes is not None and len(line.rstrip(b"\r")) > limits.line_bytes:
            problems.add(number, f"the line is longer than {limits.line_bytes:,} bytes (the limit)")
            continue
        if len(fields) != len(layout):
            problems.add(
                number,
                f"expected {len(layout)} fields ({' '.join(layout)}), got {len(fields)}",
            )
            continue
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.add(number, f"not valid UTF-8 (byte {exc.start + 1})")
            continue
        bad = next(
            (
                why
                for key in ("qid", "jg", "jsg", "docno")
                if key in at
                and (why := id_problem(_KIND[key], fields[at[key]], _limit(key, limits)))
            ),
            None,
        )
        level = _level(fields[at["rel_level"]])
        if bad is not None or isinstance(level, str):
            problems.add(number, bad if bad is not None else str(level))
            continue
        row = {k: fields[at[k]] if k in at else QRELS_SUB_GROUP for k in cols}
        key = (row["qid"], row["jg"], row["jsg"], row["docno"])
        first = first_seen.setdefault(key, number)
        if first != number:
            problems.add(
                number,
                f"docno {show(row['docno'])} is listed twice in judgment sub-group "
                f"{show(row['jsg'])} of judgment group {show(row['jg'])}, topic "
                f"{show(row['qid'])} (first on line {first})",
            )
            continue
        for k, v in row.items():
            cols[k].append(v)
        levels.append(level)
        numbers.append(number)
    if data_lines == 0:
        problems.add(0, "no data lines (empty file)")
    return PrefsRows(
        source=name,
        qids=_column(cols["qid"]),
        jgs=_column(cols["jg"]),
        jsgs=_column(cols["jsg"]),
        docnos=_column(cols["docno"]),
        levels=np.array(levels, dtype=np.float64),
        lines=np.array(numbers, dtype=np.int64),
    )


def _limit(key: str, limits: Limits) -> int | None:
    return limits.docid_bytes if key == "docno" else limits.qid_bytes
