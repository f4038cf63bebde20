"""Runs as JSON: the ``{qid: {docid: score}}`` dictionary of pytrec_eval and ranx, as a file and
as a mapping already parsed (the service's API body).

A JSON run has no lines, so every problem is named by where it is: ``<qid>.<docid>`` under a
prefix (``results`` in the service's API; the file's name here). Ids follow the TREC readers'
rules (non-empty, no white space, no control character, within :class:`Limits`); a score is a
JSON number, or NaN and the infinities as the strings ``"NaN"``, ``"Infinity"``,
``"-Infinity"`` (any case; JSON has no such numbers; Python's bare ``NaN`` literals are read the
same way), accepted as a TREC file's are and counted as :class:`ReadWarning` s without lines.
A key given twice in one object (which ``json`` would silently keep the last of) is a problem.
The file is read whole (it is a single JSON value), gzip or not, at most ``max_bytes``.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections import Counter
from collections.abc import Mapping
from typing import Any

from metrics.io._tokenizer import INF_SCORE, NAN_SCORE
from metrics.io.limits import DEFAULT_LIMITS, Limits, id_problem
from metrics.io.tables import Run
from metrics.io.trec import Source, read_head
from metrics.problems import InvalidInput, Problem, Problems, ReadWarning

__all__ = ["json_score", "looks_like_json", "read_json_run", "run_entries", "write_json_run"]

_NON_FINITE = {"nan": math.nan, "infinity": math.inf, "inf": math.inf}

# the most of a JSON run file read (it is parsed whole): 1 GiB by default
DEFAULT_MAX_BYTES = 1 << 30


def json_score(score: Any) -> float | None:
    """A JSON score as a float, read as a file's score is: a number (an integer beyond a
    double's range is an infinity, as strtod gives), or NaN and the infinities, which JSON can
    only carry as strings ("NaN", "Infinity", "-Infinity", any case); else None."""
    if isinstance(score, str):
        text = score.strip().lower()
        sign = -1.0 if text.startswith("-") else 1.0
        value = _NON_FINITE.get(text.lstrip("+-"))
        return None if value is None else sign * value
    if isinstance(score, bool) or not isinstance(score, int | float):
        return None
    try:
        return float(score)
    except OverflowError:
        return math.inf if score > 0 else -math.inf


def shown(text: str) -> str:
    """``text`` for a message: at most 40 characters."""
    return text if len(text) <= 40 else text[:37] + "..."


def run_entries(
    results: Any, limits: Limits, problems: Problems, where: str
) -> tuple[dict[str, dict[str, float]], Counter[str]]:
    """The valid entries of ``results`` (``{qid: {docid: score}}``) and the count of NaN and
    infinite scores among them by warning; every problem added to ``problems`` at
    ``where.<qid>.<docid>``. A topic with no entries is left out."""
    clean: dict[str, dict[str, float]] = {}
    odd: Counter[str] = Counter()  # NaN and infinite scores: accepted, as in a file, and said
    if not isinstance(results, Mapping) or not results:
        problems.add_at(where, f"{where!r} must be a non-empty object {{qid: {{docid: score}}}}")
        return clean, odd
    for qid, ranked in results.items():
        if not isinstance(qid, str) or not qid or any(ch.isspace() for ch in qid):
            problems.add_at(where, "a topic id must be non-empty and contain no white space")
            continue
        bad_qid = id_problem("qid", qid, limits.qid_bytes)
        if bad_qid is not None:
            problems.add_at(f"{where}.{shown(qid)}", bad_qid)
            continue
        if not isinstance(ranked, Mapping):
            problems.add_at(f"{where}.{qid}", "must be an object {docid: score}")
            continue
        for docid, score in ranked.items():
            at = f"{where}.{qid}.{shown(docid)}"
            value = json_score(score)
            if not docid or any(ch.isspace() for ch in docid):
                problems.add_at(at, "docid must be non-empty and contain no white space")
            elif (bad := id_problem("docid", docid, limits.docid_bytes)) is not None:
                problems.add_at(at, bad)
            elif value is None:
                problems.add_at(
                    at,
                    f"score {shown(repr(score))} is not a number (a JSON number, or one of "
                    '"NaN", "Infinity", "-Infinity" as a string)',
                )
            else:
                clean.setdefault(qid, {})[docid] = value
                if not math.isfinite(value):
                    odd[NAN_SCORE if math.isnan(value) else INF_SCORE] += 1
    return {q: d for q, d in clean.items() if d}, odd


def with_warnings(run: Run, odd: Counter[str]) -> Run:
    """``run`` with a line-less warning per kind of odd score (JSON has no lines)."""
    if not odd:
        return run
    warnings = tuple(ReadWarning(kind, n, ()) for kind, n in sorted(odd.items()))
    return dataclasses.replace(run, warnings=warnings)


def _pairs(problems: Problems, name: str) -> Any:
    """An ``object_pairs_hook`` that names every key given twice in one object."""

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:  # the first is read; the run is refused anyway
                problems.add_at(f"{name}.{shown(key)}", "given twice in the same object")
                continue
            out[key] = value
        return out

    return hook


def _whole(src: Source, source: str | None, max_bytes: int) -> tuple[bytes, str]:
    data, name = read_head(src, source, max_bytes + 1)
    if len(data) > max_bytes:
        raise InvalidInput(
            name, [Problem(0, f"a JSON run is read whole: over {max_bytes:,} bytes")]
        )
    return bytes(data), name


def looks_like_json(src: Source) -> bool:
    """Whether ``src`` (a path or bytes, gzip or not) starts, after white space and a UTF-8 BOM,
    with ``{``: a JSON run rather than TREC lines."""
    head, _ = read_head(src, None, 4096)
    return head.removeprefix(b"\xef\xbb\xbf").lstrip()[:1] == b"{"


def read_json_run(
    src: Source,
    *,
    source: str | None = None,
    max_problems: int = 100,
    limits: Limits = DEFAULT_LIMITS,
    max_bytes: int = DEFAULT_MAX_BYTES,
    tag: str = "",
) -> Run:
    """Read and validate a JSON run file ``{qid: {docid: score}}`` into a :class:`Run` (ranked
    as trec_eval ranks: score descending, ties by docid descending). Raises
    :class:`InvalidInput` naming every problem by where it is (module docstring)."""
    data, name = _whole(src, source, max_bytes)
    problems = Problems(max_problems)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InvalidInput(name, [Problem(0, f"not UTF-8 (byte {e.start})")]) from None
    try:
        results = json.loads(text, object_pairs_hook=_pairs(problems, "run"))
    except json.JSONDecodeError as e:
        raise InvalidInput(
            name, [Problem(e.lineno, f"not JSON: {e.msg} (column {e.colno})")]
        ) from None
    clean, odd = run_entries(results, limits, problems, "run")
    if problems:
        raise InvalidInput(name, problems.sorted(), total=problems.total)
    if not clean:
        raise InvalidInput(name, [Problem.at("run", "no results")])
    return with_warnings(Run.from_dict(clean, tag=tag), odd)


def write_json_run(run: Run, dst: Any) -> None:
    """Write ``run`` as ``{qid: {docid: score}}`` (queries in the run's order, documents in rank
    order, one query a line, floats as ``repr`` gives them, NaN and the infinities as strings):
    :func:`read_json_run` reads it back to the same run, and writing that again gives the same
    bytes."""

    def number(x: float) -> Any:
        if math.isnan(x):
            return "NaN"
        if math.isinf(x):
            return "Infinity" if x > 0 else "-Infinity"
        return x

    lines = []
    for qid in run.qids:
        scores = run.scores_of(qid)
        ranked = {d: number(scores[d]) for d in run.ranking(qid)}
        lines.append(
            f"{json.dumps(qid, ensure_ascii=False)}: {json.dumps(ranked, ensure_ascii=False)}"
        )
    body = "{\n" + ",\n".join(lines) + "\n}\n"
    data = body.encode("utf-8")
    if hasattr(dst, "write"):
        dst.write(data)
    else:
        with open(dst, "wb") as f:
            f.write(data)
