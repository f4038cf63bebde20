"""The judges' meta-evaluation as the reader sees it (a selector shared by the API and the
page): the stored result read into ``autojudge.meta_answers``' types, another participant's
judge anonymised, runs shown as the reader may see them, sorted by one figure; and its exports
for a paper (CSV, Markdown, LaTeX), each naming the qrels version and its hash."""

from __future__ import annotations

import math
from typing import Any

from judging.autojudge.meta_answers import read_meta_result
from judging.autojudge.models import MetaEvaluation
from judging.campaigns.models import Campaign
from judging.core import csvfiles
from judging.core.roles import UserLike, is_admin
from judging.evaluation.exports import latex_escape, markdown_escape
from judging.evaluation.selectors import report_viewer
from metrics.results import render

# sort key -> (where in a row, the figure, highest first?)
SORTS: dict[str, tuple[str, str, bool]] = {
    "tau_b": ("ranking", "kendall_tau_b", True),
    "tau_ap": ("ranking", "tau_ap", True),
    "tau_top": ("ranking", "tau_top_k", True),
    "spearman": ("ranking", "spearman", True),
    "sig_kept": ("ranking", "significant_kept", True),
    "kappa": ("labels", "kappa", True),
    "binary_kappa": ("labels", "binary_kappa", True),
    "kappa_linear": ("labels", "kappa_linear", True),
    "kappa_quadratic": ("labels", "kappa_quadratic", True),
    "alpha": ("labels", "krippendorff_alpha", True),
    "per_cost": ("", "agreement_per_cost", True),
    "cost": ("ledger", "cost_per_1k", False),
}
DEFAULT_SORT = "tau_b"
FORMATS = ("csv", "markdown", "latex")
CONTENT_TYPES = {
    "csv": csvfiles.CONTENT_TYPE,
    "latex": "text/x-tex; charset=utf-8",
    "markdown": "text/markdown; charset=utf-8",
}
EXTENSIONS = {"csv": "csv", "latex": "tex", "markdown": "md"}
# the columns of the table and the exports: (heading, sort key)
COLUMNS = (
    ("kappa", "kappa"),
    ("weighted kappa (linear)", "kappa_linear"),
    ("Krippendorff's alpha", "alpha"),
    ("tau-b", "tau_b"),
    ("tau_AP", "tau_ap"),
    ("tau top 10", "tau_top"),
    ("Spearman", "spearman"),
    ("significant pairs kept", "sig_kept"),
)


def meta_for(
    campaign: Campaign, *, qrels: int | None, pool: int | None, measure: str | None
) -> MetaEvaluation | None:
    """The campaign's newest meta-evaluation matching what is given (None: any)."""
    found = MetaEvaluation.objects.filter(campaign=campaign).select_related("job", "human", "pool")
    if qrels is not None:
        found = found.filter(human__number=qrels)
    if pool is not None:
        found = found.filter(pool__number=pool)
    if measure:
        found = found.filter(measure=measure)
    return found.order_by("-created_at", "-pk").first()


def figure(row: dict[str, Any], key: str) -> Any:
    where, name, _ = SORTS[key]
    if key == "cost":
        return row["ledger"]["cost_per_1k"]
    return row[where][name] if where else row[name]


def _sort_value(row: dict[str, Any], key: str) -> tuple[int, float]:
    """Defined values first, best first; undefined ones last."""
    found = figure(row, key)
    value = found.get("value") if isinstance(found, dict) else found
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return (1, 0.0)
    return (0, -float(value) if SORTS[key][2] else float(value))


def _anonymised(blob: dict[str, Any], user: UserLike) -> dict[str, Any]:
    """Another participant's judge as "anonymous judge #n" (n counting them in the stored
    order), its id, model, family and owner hidden."""
    if is_admin(user):
        return blob
    rows = []
    hidden = 0
    for row in blob.get("judges", []):
        judge = row["judge"]
        if judge.get("owner") is not None and judge["owner"] != user.pk:
            hidden += 1
            judge = dict(judge, id=None, name=f"anonymous judge #{hidden}", model="", family="")
            judge["owner"] = None
            row = dict(row, judge=judge)
        rows.append(row)
    return dict(blob, judges=rows)


def meta_view(meta: MetaEvaluation, user: UserLike, *, sort: str = DEFAULT_SORT) -> dict[str, Any]:
    """The meta-evaluation as ``user`` may see it, its rows sorted by ``sort``."""
    out: dict[str, Any] = {
        "id": meta.pk,
        "human_qrels": meta.human.number,
        "pool": meta.pool.number,
        "measure": meta.measure,
        "state": meta.state,
        "error": meta.job.error,
        "sort": sort,
        "result": None,
    }
    if meta.state != "done" or not meta.result:
        return out
    typed = read_meta_result(_anonymised(meta.result, user))
    result: dict[str, Any] = render(typed, report_viewer(meta.campaign, user))
    result["judges"] = sorted(result["judges"], key=lambda r: _sort_value(r, sort))
    out["result"] = result
    return out


# ---- exports -------------------------------------------------------------------------------


Cell = tuple[str, str | None]  # a cell's text, and the note it refers to


def _cell(figure: dict[str, Any] | None) -> Cell:
    """A figure as text (value [low, high]) and, when it is undefined or has no interval, the
    note saying why."""
    if figure is None:
        return "", None
    if figure.get("value") is None:
        return "undefined", f"undefined: {figure.get('undefined') or 'not computed'}"
    text = f"{figure['value']:.3f}"
    if figure.get("low") is not None and figure.get("high") is not None:
        return f"{text} [{figure['low']:.3f}, {figure['high']:.3f}]", None
    why = figure.get("no_interval")
    return text, f"no interval: {why}" if why else None


def _name(row: dict[str, Any]) -> str:
    judge = row["judge"]
    name = f"{judge['name']} v{judge['version']}" if judge["id"] is not None else judge["name"]
    return name + (" *" if judge.get("saw_human_qrels") else "")


def export_rows(view: dict[str, Any]) -> tuple[list[str], list[list[Cell]]]:
    """The table's heading and rows (cells with their notes), as the reader sees them."""
    heading = ["judge", "kind", "labelled"] + [h for h, _ in COLUMNS] + ["cost per 1k labels"]
    rows = []
    for row in view["result"]["judges"]:
        cost = row["ledger"]["cost_per_1k"]
        spent = "" if cost is None else f"{cost:.4g} ({row['ledger']['source']})"
        rows.append(
            [(_name(row), None), (row["judge"]["kind"], None), (str(row["labelled"]), None)]
            + [_cell(figure(row, key)) for _, key in COLUMNS]
            + [(spent, None if cost is not None else "no cost recorded or declared")]
        )
    return heading, rows


def _header(view: dict[str, Any]) -> str:
    r = view["result"]
    return (
        f"Judges against people's qrels v{r['human_qrels']['number']} "
        f"(sha256 {r['human_qrels']['hash'][:12]}) over pool v{r['pool']}; runs ranked by "
        f"{r['measure']}; 95% percentile bootstrap intervals over topics, {r['resamples']} "
        "resamples; * saw some of people's judgments."
    )


def _noted(rows: list[list[Cell]]) -> tuple[list[list[tuple[str, int | None]]], list[str]]:
    """Each cell's text and the number of its note, the notes numbered once each."""
    notes: list[str] = []
    out = []
    for row in rows:
        cells: list[tuple[str, int | None]] = []
        for text, note in row:
            if note is not None and note not in notes:
                notes.append(note)
            cells.append((text, notes.index(note) + 1 if note is not None else None))
        out.append(cells)
    return out, notes


def export(view: dict[str, Any], fmt: str) -> tuple[str, str, str]:
    """(text, content type, file name) of the table in ``fmt``: CSV (each note beside its
    value), Markdown or LaTeX (notes numbered under the table)."""
    heading, rows = export_rows(view)
    r = view["result"]
    name = f"meta-evaluation-qrels-v{r['human_qrels']['number']}-pool-v{r['pool']}"
    if fmt == "csv":
        plain = [[f"{t} ({n})" if n else t for t, n in row] for row in rows]
        return (
            f"# {_header(view)}\n" + csvfiles.text([heading, *plain]),
            CONTENT_TYPES[fmt],
            f"{name}.csv",
        )
    cells, notes = _noted(rows)
    if fmt == "markdown":
        lines = [
            _header(view),
            "",
            "| " + " | ".join(markdown_escape(h) for h in heading) + " |",
            "|" + "---|" * len(heading),
        ]
        lines += [
            "| " + " | ".join(markdown_escape(t) + (f" [{n}]" if n else "") for t, n in row) + " |"
            for row in cells
        ]
        lines += ["", *[f"[{i}] {markdown_escape(n)}  " for i, n in enumerate(notes, 1)]]
        text = "\n".join(lines) + "\n"
    else:
        body = [
            " & ".join(
                ("--" if t == "undefined" else latex_escape(t))
                + (rf"\textsuperscript{{{n}}}" if n else "")
                for t, n in row
            )
            + r" \\"
            for row in cells
        ]
        text = "\n".join(
            [
                "% " + _header(view),
                r"\begin{tabular}{l" + "r" * (len(heading) - 1) + "}",
                r"\toprule",
                " & ".join(latex_escape(h) for h in heading) + r" \\",
                r"\midrule",
                *body,
                r"\bottomrule",
                r"\end{tabular}",
                *[rf"\par{{\footnotesize {i}: {latex_escape(n)}}}" for i, n in enumerate(notes, 1)],
            ]
        )
        text += "\n"
    return text, CONTENT_TYPES[fmt], f"{name}.{EXTENSIONS[fmt]}"
