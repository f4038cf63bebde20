"""Reads of judge audits and of estimates from human samples, as a user may see them (pages and
API share these): run tags become what the user may see of them (their own runs by name, other
researchers' anonymised, ``campaigns.selectors.run_labels``). Nothing here writes."""

from __future__ import annotations

from typing import Any

from judging.autojudge.estimates import estimate, sample_progress
from judging.autojudge.models import HumanSample, JudgeAudit
from judging.campaigns.models import Campaign
from judging.campaigns.selectors import run_labels
from judging.core.roles import UserLike


def _relabel_keys(mapping: dict[str, Any], labels: dict[str, str]) -> dict[str, Any]:
    return {labels.get(k, k): v for k, v in mapping.items()}


def audit_view(audit: JudgeAudit, user: UserLike) -> dict[str, Any]:
    """The stored audit with run tags as ``user`` may see them."""
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
    labels = run_labels(audit.judge.campaign, user)
    result = dict(audit.result)
    scores = result.get("scores", {})
    result["scores"] = {
        kind: {m: _relabel_keys(v, labels) for m, v in by_m.items()}
        for kind, by_m in scores.items()
    }
    gaps = {}
    for m, families in result.get("family_gaps", {}).items():
        gaps[m] = [{**g, "runs": [labels.get(r, r) for r in g.get("runs", [])]} for g in families]
    result["family_gaps"] = gaps
    rankings = {}
    for m, r in result.get("rankings", {}).items():
        rankings[m] = {
            **r,
            "top_runs": [labels.get(t, t) for t in r.get("top_runs", [])],
            "rank_changes": [
                {**c, "run": labels.get(c["run"], c["run"])} for c in r.get("rank_changes", [])
            ],
        }
    result["rankings"] = rankings
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
    estimate of every run, with run tags as ``user`` may see them."""
    report = estimate(hs, level=level)
    if report.get("ready"):
        labels = run_labels(hs.judge.campaign, user)
        report["runs"] = _relabel_keys(report["runs"], labels)
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
