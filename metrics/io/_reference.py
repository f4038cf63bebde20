"""A plain reference reader of TREC runs and qrels, for the tests to compare the fast reader with.

Line by line, with ``bytes.split`` and Python's ``int``/``float``: nothing vectorised, nothing
streamed, nothing clever. The rules are the fast reader's (:mod:`metrics.io.trec`), written out:

- lines end at ``\\n``; a line that is blank or whose first field starts with ``#`` is skipped;
- fields are separated by any ASCII whitespace (``bytes.split``), so ``\\r`` of CRLF goes too;
- a line must be valid UTF-8 and have 6 fields (run: ``qid Q0 docid rank score tag``) or 4
  (qrels: ``qid iteration docid grade``); a run line may have more, the fields after the sixth
  are ignored (a warning, kind ``extra``);
- an id (qid, docid, run tag) may not hold a control character (C0, DEL, C1); such a line is
  a problem and its docid is not counted for duplicates;
- a rank or grade is an optional sign and ASCII digits, within int64; a score is a decimal
  number (optional sign, digits with an optional point, optional exponent; beyond a double's
  range it is an infinity) or ``nan``, ``inf``, ``infinity`` in any case with an optional sign;
  a good line with a NaN score is a warning of kind ``nan``, with an infinite one of kind
  ``inf``;
- a docid seen before for the same query, on a line with the right number of fields (even one
  whose numbers are bad), is a problem;
- a file without data lines is a problem (line 0).
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass, field

__all__ = ["Reference", "read_reference"]

_INT = re.compile(rb"[+-]?[0-9]+")
_FLOAT = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NONFINITE = re.compile(rb"[+-]?(?:nan|inf|infinity)", re.IGNORECASE)


@dataclass
class Reference:
    """What a file holds: ``rows`` (qid, docid, score or grade) of the good lines in file
    order, the run's distinct tags in first-seen order, the lines with a problem, and the good
    lines accepted with a warning (``nan``, ``inf``, ``extra``: kind -> lines)."""

    rows: list[tuple[str, str, float | int]] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    bad_lines: list[int] = field(default_factory=list)
    warnings: dict[str, list[int]] = field(default_factory=dict)


def _integer(token: bytes) -> int | None:
    if not _INT.fullmatch(token):
        return None
    value = int(token)
    return value if -(2**63) <= value < 2**63 else None


def _score(token: bytes) -> float | None:
    if not (_FLOAT.fullmatch(token) or _NONFINITE.fullmatch(token)):
        return None
    return float(token)


def read_reference(data: bytes, *, run: bool) -> Reference:
    """Read ``data`` (an uncompressed run, or qrels when ``run`` is False) by the rules above."""
    out = Reference()
    seen: set[tuple[bytes, bytes]] = set()
    data_lines = 0
    for number, line in enumerate(data.split(b"\n"), start=1):
        fields = line.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        data_lines += 1
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            out.bad_lines.append(number)
            continue
        if len(fields) < (6 if run else 4) or (not run and len(fields) > 4):
            out.bad_lines.append(number)
            continue
        ids = [fields[0], fields[2], *([fields[5]] if run else [])]
        if any(unicodedata.category(ch) == "Cc" for tok in ids for ch in tok.decode()):
            out.bad_lines.append(number)
            continue
        key = (fields[0], fields[2])
        duplicate = key in seen
        seen.add(key)
        if run:
            rank, value = _integer(fields[3]), _score(fields[4])
            ok = rank is not None and value is not None
        else:
            value = _integer(fields[3])
            ok = value is not None
        if duplicate or not ok or value is None:
            out.bad_lines.append(number)
            continue
        out.rows.append((fields[0].decode(), fields[2].decode(), value))
        if run and math.isnan(value):
            out.warnings.setdefault("nan", []).append(number)
        elif run and math.isinf(value):
            out.warnings.setdefault("inf", []).append(number)
        if run and len(fields) > 6:
            out.warnings.setdefault("extra", []).append(number)
        if run and fields[5].decode() not in out.tags:
            out.tags.append(fields[5].decode())
    if data_lines == 0:
        out.bad_lines.append(0)
    return out
