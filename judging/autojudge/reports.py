"""Reads of judge audits and of estimates from human samples, as a user may see them (pages and
API share these): read into the types of ``autojudge.answers`` and rendered for the user, whose
``ReportViewer`` shows the runs they name as the user may see them (their own by name, other
researchers' anonymised). Nothing here writes."""

from __future__ import annotations

from typing import Any

from judging.autojudge.answers import HybridEstimate, read_audit_result
from judging.autojudge.estimates import estimate, sample_progress
from judging.autojudge.models import HumanSample, JudgeAudit
from judging.campaigns.models import Campaign
from judging.core.roles import UserLike
from judging.evaluation.selectors import report_viewer
from metrics.results import parse, render


def audit_view(audit: JudgeAudit, user: UserLike) -> dict[str, Any]:
    """The stored audit as ``user`` may see it: its result read as an ``AuditResult`` and rendered
    for the user (the runs it names shown or anonymised by their ``RunLabel`` type)."""
    out: dict[str, Any] = {
        "id": audit.pk,
        "judge": audit.judge.describe(),
        "human_qrels": audit.human.number,
        "pool": audit.pool.number,
        "state": audit.state,
        "error": audit.error,
        "result": None,
    }
    if audit.state != "done":
        return out
    typed = read_audit_result(audit.result)
    result: dict[str, Any] = render(typed, report_viewer(audit.judge.campaign, user))
    for key in ("scores", "family_gaps", "rankings"):  # a result without them shows them empty
        result.setdefault(key, {})
    agreement = result.get("agreement", {})
    scale = agreement.get("scale", [])
    result["confusion_rows"] = [
        {"grade": g, "cells": row, "human_rate": agreement["human_base_rate"].get(str(g))}
        for g, row in zip(scale, agreement.get("confusion", []), strict=False)
    ]
    result["auto_rates"] = [agreement.get("auto_base_rate", {}).get(str(g)) for g in scale]
    out["result"] = result
    return out


def sample_view(hs: HumanSample, user: UserLike, *, level: float = 0.95) -> dict[str, Any]:
    """A sample's design, progress and (when every sampled document is graded) the corrected
    estimate of every run, read as a ``HybridEstimate`` and rendered for ``user``."""
    report = estimate(hs, level=level)
    if report.get("ready"):
        typed = parse(HybridEstimate, report)
        report = render(typed, report_viewer(hs.judge.campaign, user))
        report["rows"] = board_rows(report)
    return report


def board_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The hybrid leaderboard: one row per run, sorted by the first measure's corrected
    estimate, each measure with its interval, the automatic-only value, the human-sample-alone
    interval and how much narrower the corrected interval is."""
    measures = report["measures"]
    rows = []
    for run, by_m in report["runs"].items():
        cells = []
        for m in measures:
            cell = by_m[m]
            ppi, alone = cell["ppi"], cell.get("human_only")
            width = _width(ppi)
            alone_width = _width(alone) if alone else None
            cells.append(
                {
                    "measure": m,
                    "ppi": ppi,
                    "ppi_interval": [ppi.get("low"), ppi.get("high")],
                    "auto_only": cell.get("auto_only"),
                    "human_only": alone,
                    "alone_interval": [alone.get("low"), alone.get("high")] if alone else None,
                    "degenerate": width is not None and width < 1e-9 and (ppi.get("se") or 0) == 0,
                    "narrower": (
                        1 - width / alone_width
                        if width is not None and alone_width is not None and alone_width > 0
                        else None
                    ),
                }
            )
        rows.append({"run": run, "cells": cells})
    first = measures[0]
    rows.sort(key=lambda r: -(report["runs"][r["run"]][first]["ppi"]["value"] or 0.0))
    return rows


def _width(e: dict[str, Any] | None) -> float | None:
    if not e or e.get("low") is None or e.get("high") is None:
        return None
    return float(e["high"]) - float(e["low"])


def samples_of(campaign: Campaign) -> list[dict[str, Any]]:
    """Every human sample of the campaign with its progress (newest first)."""
    out = []
    for hs in HumanSample.objects.filter(judge__campaign=campaign).select_related("judge", "pool"):
        out.append({"sample": hs, "progress": sample_progress(hs)})
    return out
