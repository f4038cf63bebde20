"""Exports for a paper: the leaderboard as CSV, LaTeX (booktabs) and Markdown, and per-query
values as CSV and trec_eval ``-q`` format. Pure formatting of what the selectors read (a board
dict from ``selectors.leaderboard``, comparisons from ``metrics.stats.paired.compare_to_baseline``):
nothing here touches the database. Every export names its qrels version and content hash."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from judging.core import csvfiles
from judging.core.errors import InvalidInput
from metrics.measures.names import parse_measure
from metrics.measures.sampled_registry import parse_sampled
from metrics.problems import Problem
from metrics.stats.multiple import CORRECTIONS
from metrics.stats.paired import BaselineComparison

FORMATS = ("csv", "latex", "markdown")
PER_QUERY_FORMATS = ("csv", "trec")
TESTS = ("t", "randomization", "bootstrap")
TEST_NAMES = {
    "t": "paired t-test",
    "randomization": "paired randomization test",
    "bootstrap": "paired bootstrap test",
}
CORRECTION_NAMES = {
    "holm": "Holm correction",
    "bonferroni": "Bonferroni correction",
    "bh": "Benjamini-Hochberg correction",
    "none": "no correction",
}
ALPHA = 0.05
CONTENT_TYPES = {
    "csv": csvfiles.CONTENT_TYPE,
    "latex": "text/x-tex; charset=utf-8",
    "markdown": "text/markdown; charset=utf-8",
    "trec": "text/plain; charset=utf-8",
}
EXTENSIONS = {"csv": "csv", "latex": "tex", "markdown": "md", "trec": "txt"}
# Comparisons: measure (as the board names it) -> run label -> its comparison with the baseline
Comparisons = Mapping[str, Mapping[str, BaselineComparison]]


@dataclass(frozen=True)
class ExportOptions:
    """``format``: csv, latex or markdown; ``cis``: print the confidence intervals; ``baseline``:
    a run label as the user sees it (empty: no significance); ``test`` and ``correction`` as
    ``metrics.stats.paired.compare_to_baseline`` takes them."""

    format: str = "csv"
    cis: bool = True
    baseline: str = ""
    test: str = "t"
    correction: str = "holm"
    alpha: float = ALPHA


def _bad(name: str, what: str) -> InvalidInput:
    return InvalidInput(f"{name}: {what}", [Problem.at(name, what)])


def _param(params: Mapping[str, Any], name: str, default: str = "") -> str:
    value = params.get(name)
    text = str(value).strip() if value is not None else ""
    if len(text) > 200:
        raise _bad(name, "at most 200 characters")
    return text or default


def export_options(params: Mapping[str, Any], *, formats: Sequence[str] = FORMATS) -> ExportOptions:
    """The export the query-string ``params`` ask for; a 400 naming a bad parameter."""
    fmt = _param(params, "format", formats[0]).lower()
    if fmt not in formats:
        raise _bad("format", f"{fmt[:40]!r} is not one of {', '.join(formats)}")
    test = _param(params, "test", "t").lower()
    if test not in TESTS:
        raise _bad("test", f"{test[:40]!r} is not one of {', '.join(TESTS)}")
    correction = _param(params, "correction", "holm").lower()
    if correction not in CORRECTIONS:
        raise _bad("correction", f"{correction[:40]!r} is not one of {', '.join(CORRECTIONS)}")
    cis = _param(params, "cis", "1").lower()
    if cis not in ("0", "1", "yes", "no", "true", "false", "on", "off"):
        raise _bad("cis", f"{cis[:40]!r} is not 1 or 0")
    return ExportOptions(
        format=fmt,
        cis=cis in ("1", "yes", "true", "on"),
        baseline=_param(params, "baseline"),
        test=test,
        correction=correction,
    )


def filename(board: Mapping[str, Any], kind: str, fmt: str) -> str:
    """``leaderboard-campaign-3-qrels-v2.tex``: the qrels version is in every file's name."""
    return f"{kind}-campaign-{board['campaign']}-qrels-v{board['qrels_version']}.{EXTENSIONS[fmt]}"


def _entry(row: Mapping[str, Any], m: str) -> Mapping[str, Any]:
    return (row.get("measures") or {}).get(m) or {}


def _num(value: Any, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    return f"{float(value):.{digits}f}"


def _raw(value: Any) -> Any:
    return "" if value is None else value


def is_coverage(measure: str) -> bool:
    """Whether the measure describes the judgments (Judged@k, ceiling@k, ...), not how good a
    ranking is: it is never tested against a baseline, marked, or set in bold as the best."""
    try:
        return parse_measure(measure).is_coverage
    except ValueError:  # an inferred measure of a sampled version (inum_rel is coverage)
        found = parse_sampled(measure)
        return bool(found and found[0].coverage)


def _coverage_note(board: Mapping[str, Any]) -> str:
    names = [m for m in board["measures"] if is_coverage(m)]
    if not names:
        return ""
    said = ", ".join(names)
    verb = "is a coverage figure" if len(names) == 1 else "are coverage figures"
    return f"{said} {verb}, not effectiveness: not tested against the baseline"


def _significance_note(
    board: Mapping[str, Any],
    options: ExportOptions,
    comparisons: Comparisons,
    *,
    marker: str,
    escape: Any = str,
    le: str = "<=",
) -> str:
    """The note under a table with a baseline: what ``marker`` means (test, topics, correction,
    alpha), and which coverage figures shown are not tested."""
    coverage = _coverage_note(board)
    if all(is_coverage(m) for m in board["measures"]):
        return str(
            escape(
                f"No measure shown is tested against the baseline {options.baseline}: {coverage}"
            )
        )
    m = max((len(v) for v in comparisons.values()), default=0)
    n = sorted({c.n for v in comparisons.values() for c in v.values()})
    topics = f" over {n[0]} topics" if len(n) == 1 else ""
    words = escape(
        f"significantly different from the baseline {options.baseline} "
        f"({TEST_NAMES[options.test]}{topics}, {CORRECTION_NAMES[options.correction]} over the "
        f"{m} comparisons per measure, adjusted p "
    )
    tail = escape(f"; {coverage}") if coverage else ""
    return f"{marker} {words}{le} {options.alpha:g}){tail}"


def _header_note(board: Mapping[str, Any], hash_chars: int | None = None) -> str:
    slice_ = board.get("slice")
    over = (
        f"over the {slice_['n_topics']} topics tagged {slice_['tag']}"
        if slice_
        else "over the topics with at least one relevant document"
        if board["mode"] == "honest"
        else "over the topics the run answers, trec_eval's averaging"
    )
    return (
        f"qrels version {board['qrels_version']} ({board.get('qrels_kind', 'human')}; "
        f"hash {board['qrels_hash'][:hash_chars]}), "
        f"{board['mode']} mode, macro-averaged {over}"
    )


def leaderboard_rows(
    board: Mapping[str, Any],
    options: ExportOptions | None = None,
    comparisons: Comparisons | None = None,
) -> list[list[Any]]:
    """The leaderboard as CSV rows, header first: the qrels version, its kind (human, automatic
    or hybrid, with the judge) and hash on every line, per
    measure its value, CI, Judged@k and ceiling, and with a baseline its difference, adjusted p
    and whether it is significant."""
    options = options or ExportOptions()
    comparisons = comparisons or {}
    header = ["qrels_version", "qrels_kind", "qrels_hash", "mode", "run", "pooled", "n_queries"]
    sig = bool(options.baseline)
    tested = {m: sig and not is_coverage(m) for m in board["measures"]}
    for m in board["measures"]:
        header += [m]
        if options.cis:
            header += [f"{m} ci_low", f"{m} ci_high"]
        header += [f"{m} judged", f"{m} ceiling"]
        if tested[m]:
            header += [f"{m} diff", f"{m} p_adjusted", f"{m} significant"]
    if sig:
        header += ["baseline", "test", "correction"]
    rows: list[list[Any]] = [header]
    for row in board["runs"]:
        line = [
            board["qrels_version"],
            board.get("qrels_kind", "human"),
            board["qrels_hash"],
            board["mode"],
            row["run"],
            row["pooled"],
            _raw(row.get("n_queries")),
        ]
        for m in board["measures"]:
            e = _entry(row, m)
            line += [_raw(e.get("value"))]
            if options.cis:
                line += [_raw(e.get("ci_low")), _raw(e.get("ci_high"))]
            line += [
                _raw((e.get("judged") or {}).get("value")),
                _raw((e.get("ceiling") or {}).get("value")),
            ]
            if tested[m]:
                c = (comparisons.get(m) or {}).get(row["run"])
                line += (
                    [c.diff, c.p_adjusted, c.significant]
                    if c is not None
                    else ["", "", "baseline" if row["run"] == options.baseline else ""]
                )
        if sig:
            line += [options.baseline, options.test, options.correction]
        rows.append(line)
    return rows


def leaderboard_csv(
    board: Mapping[str, Any],
    options: ExportOptions | None = None,
    comparisons: Comparisons | None = None,
) -> str:
    return csvfiles.text(leaderboard_rows(board, options, comparisons))


_LATEX_SPECIAL = re.compile(r"[\\&%$#_{}~^|<>]")
_LATEX_REPLACE = {
    "\\": r"\textbackslash{}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "|": r"\textbar{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
}


def latex_escape(text: str) -> str:
    """``text`` safe in LaTeX running text: ``run_a&b`` -> ``run\\_a\\&b``."""
    return _LATEX_SPECIAL.sub(lambda m: _LATEX_REPLACE.get(m.group(0), "\\" + m.group(0)), text)


_MD_SPECIAL = re.compile(r"([\\|*_`\[\]<>])")


def markdown_escape(text: str) -> str:
    return _MD_SPECIAL.sub(r"\\\1", text)


def _best(board: Mapping[str, Any]) -> dict[str, float]:
    """The best (highest) value of each effectiveness measure among the rows shown, as printed
    (3 decimals), so every row printing that value is bold; coverage figures have none."""
    best: dict[str, float] = {}
    for m in board["measures"]:
        if is_coverage(m):
            continue  # more judged is not better
        values = [
            round(float(v), 3)
            for r in board["runs"]
            if isinstance(v := _entry(r, m).get("value"), int | float) and math.isfinite(v)
        ]
        if values:
            best[m] = max(values)
    return best


def _cells(
    board: Mapping[str, Any],
    options: ExportOptions,
    comparisons: Comparisons,
    *,
    bold: Any,
    small: Any,
    marker: str,
    escape: Any,
) -> tuple[list[str], list[list[str]]]:
    best = _best(board)
    header = ["Run"] + [escape(m) for m in board["measures"]]
    body = []
    for row in board["runs"]:
        name = escape(row["run"])
        if options.baseline and row["run"] == options.baseline:
            name += " (baseline)"
        cells = [name]
        for m in board["measures"]:
            e = _entry(row, m)
            value = e.get("value")
            if value is None:
                cells.append("--")
                continue
            text = _num(value)
            if m in best and round(float(value), 3) == best[m]:
                text = bold(text)
            c = (comparisons.get(m) or {}).get(row["run"])
            if c is not None and c.p_adjusted <= options.alpha and not is_coverage(m):
                text += marker
            if options.cis and e.get("ci_low") is not None and e.get("ci_high") is not None:
                text += " " + small(f"[{_num(e['ci_low'])}, {_num(e['ci_high'])}]")
            cells.append(text)
        body.append(cells)
    return header, body


def leaderboard_latex(
    board: Mapping[str, Any],
    options: ExportOptions | None = None,
    comparisons: Comparisons | None = None,
) -> str:
    """A booktabs table (``\\toprule``, ``\\midrule``, ``\\bottomrule``) in a ``table``
    float, names escaped, the best value per measure in bold, ``\\textsuperscript{\\dag}`` on a
    run significantly different from the baseline, with a note naming the test, correction and
    alpha, a ``% qrels version N, hash ...`` comment and a caption with version, mode, averaging."""
    options = options or ExportOptions(format="latex")
    comparisons = comparisons or {}
    header, body = _cells(
        board,
        options,
        comparisons,
        bold=lambda t: rf"\textbf{{{t}}}",
        small=lambda t: rf"{{\scriptsize {t}}}",
        marker=r"\textsuperscript{\dag}",
        escape=latex_escape,
    )
    lines = [
        f"% qrels version {board['qrels_version']} ({board.get('qrels_kind', 'human')}), "
        f"hash {board['qrels_hash']}",
        f"% mode {board['mode']}; {latex_comment(board.get('view', ''))}",
        "% needs \\usepackage{booktabs}",
        r"\begin{table}",
        r"\centering",
        rf"\caption{{{latex_escape(_header_note(board, hash_chars=12))}"
        + (", 95\\% bootstrap confidence intervals" if options.cis else "")
        + ".}",
        r"\begin{tabular}{l" + "r" * len(board["measures"]) + "}",
        r"\toprule",
        " & ".join(header) + r" \\",
        r"\midrule",
    ]
    lines += [" & ".join(cells) + r" \\" for cells in body]
    lines.append(r"\bottomrule")
    lines.append(r"\end{tabular}")
    if options.baseline:
        lines.append(
            r"\par\smallskip{\footnotesize "
            + _significance_note(
                board,
                options,
                comparisons,
                marker=r"\textsuperscript{\dag}",
                escape=latex_escape,
                le="$\\leq$",
            )
            + ".}"
        )
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def latex_comment(text: str) -> str:
    return " ".join(str(text).split())


def leaderboard_markdown(
    board: Mapping[str, Any],
    options: ExportOptions | None = None,
    comparisons: Comparisons | None = None,
) -> str:
    """A pipe table (best value per measure in bold, † on a significant difference from the
    baseline) with note lines below: qrels version and hash, mode, averaging, the test."""
    options = options or ExportOptions(format="markdown")
    comparisons = comparisons or {}
    header, body = _cells(
        board,
        options,
        comparisons,
        bold=lambda t: f"**{t}**",
        small=lambda t: t,
        marker=" †",
        escape=markdown_escape,
    )
    lines = [
        "| " + " | ".join(header) + " |",
        "|:---|" + "---:|" * len(board["measures"]),
    ]
    lines += ["| " + " | ".join(cells) + " |" for cells in body]
    lines.append("")
    note = _header_note(board)
    if options.cis:
        note += ", 95% bootstrap confidence intervals in brackets"
    bold = "the best value per measure" + (
        " (coverage figures have none)" if any(is_coverage(m) for m in board["measures"]) else ""
    )
    lines.append(f"Scores against {markdown_escape(note)}; **bold**: {bold}.")
    if options.baseline:
        lines.append("")
        note = _significance_note(
            board, options, comparisons, marker="†", escape=markdown_escape, le="≤"
        )
        lines.append(f"{note}.")
    if board.get("view"):
        lines.append("")
        lines.append(f"View: {markdown_escape(board['view'])}.")
    return "\n".join(lines) + "\n"


def leaderboard_export(
    board: Mapping[str, Any],
    options: ExportOptions,
    comparisons: Comparisons | None = None,
) -> str:
    if options.format == "latex":
        return leaderboard_latex(board, options, comparisons)
    if options.format == "markdown":
        return leaderboard_markdown(board, options, comparisons)
    return leaderboard_csv(board, options, comparisons)


# Per-query values: run label -> measure (as the campaign names it) -> qid -> value
PerQuery = Mapping[str, Mapping[str, Mapping[str, float]]]


def _qid_key(q: str) -> tuple[int, str]:
    return (len(q), q)


def per_query_rows(
    version: int, content_hash: str, values: PerQuery, kind: str = "human"
) -> Iterator[list[Any]]:
    """CSV rows ``qrels_version, qrels_kind, qrels_hash, run, qid, measure, value`` (full
    precision), header first, runs in the given order, queries in natural order; one at a time
    (a campaign's every run x topic x measure is a large file)."""
    yield ["qrels_version", "qrels_kind", "qrels_hash", "run", "qid", "measure", "value"]
    for run, measures in values.items():
        qids = sorted({q for v in measures.values() for q in v}, key=_qid_key)
        for q in qids:
            for m, v in measures.items():
                if q in v:
                    yield [version, kind, content_hash, run, q, m, float(v[q])]


def trec_name(measure: str) -> str:
    """The measure's trec_eval name where it has one (``nDCG@10`` -> ``ndcg_cut_10``)."""
    try:
        parsed = parse_measure(measure)
    except ValueError:
        return measure
    return parsed.trec_name or parsed.name


def _is_count(measure: str) -> bool:
    try:
        return parse_measure(measure).is_count
    except ValueError:
        return False


def _trec_value(value: float, count: bool) -> str:
    if value != value:
        return "nan"
    return str(round(value)) if count else f"{value:.4f}"


def per_query_trec(
    version: int, content_hash: str, values: PerQuery, kind: str = "human"
) -> Iterator[str]:
    """trec_eval ``-q`` lines, without their line ends (``measure<TAB>qid<TAB>value``, the
    measure padded to 22 as ``metrics/cli/evaluate.py`` prints it, 4 decimals), one block per run:
    ``runid  all  TAG``, then ``qrels_version  all  N``, ``qrels_kind  all  KIND`` and
    ``qrels_hash  all  HASH``, then each query's values; one at a time, as the CSV's rows."""
    measures = {m for v in values.values() for m in v}
    names = {m: trec_name(m) for m in measures}  # parsed once per measure, not once a line
    counts = {m: _is_count(m) for m in measures}
    for run, by_measure in values.items():
        yield f"{'runid':<22}\tall\t{run}"
        yield f"{'qrels_version':<22}\tall\t{version}"
        yield f"{'qrels_kind':<22}\tall\t{kind}"
        yield f"{'qrels_hash':<22}\tall\t{content_hash}"
        qids = sorted({q for v in by_measure.values() for q in v}, key=lambda q: q.encode())
        for q in qids:
            for m, v in by_measure.items():
                if q in v:
                    yield f"{names[m]:<22}\t{q}\t{_trec_value(float(v[q]), counts[m])}"


def read_trec_q(lines: Iterable[str]) -> dict[str, dict[str, dict[str, float]]]:
    """Parse :func:`per_query_trec`'s output back: run -> trec name -> qid -> value."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    run = ""
    for line in lines:
        if not line.strip():
            continue
        name, qid, value = (p.strip() for p in line.rstrip("\n").split("\t"))
        if name == "runid":
            run = value
            out.setdefault(run, {})
        elif qid != "all":
            out[run].setdefault(name, {})[qid] = float(value)
    return out
