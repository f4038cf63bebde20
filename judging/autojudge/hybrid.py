"""Where automatic judging moves a run's score (issue 17, point 6): every run scored against the
human qrels a hybrid version was built from and against the hybrid version itself, both from
the stored evaluations. A pooled run's documents were judged by people, so it barely moves; a
novel run's unjudged documents now carry the judge's grades, and its score moves by what the
judge says about them: the table puts that movement beside Judged@k under people's qrels."""

from __future__ import annotations

from typing import Any

from judging.assessments.models import QrelsKind, QrelsVersion
from judging.campaigns.selectors import run_label
from judging.core.models import JobState
from judging.core.roles import UserLike
from judging.evaluation.models import EvalMode, Evaluation


def _summaries(version: QrelsVersion) -> dict[int, dict[str, Any]]:
    rows = Evaluation.objects.filter(
        qrels=version, mode=EvalMode.HONEST, job__state=JobState.DONE
    ).values_list("run_id", "summary")
    return {run_id: summary or {} for run_id, summary in rows}


def hybrid_shift(*, hybrid: QrelsVersion, user: UserLike, measure: str) -> dict[str, Any] | None:
    """Per run: its ``measure`` under the human base version and under ``hybrid``, the
    difference, and Judged@k under both; novel (not pooled) runs first, then by the size of the
    move. None unless ``hybrid`` is a hybrid version whose human base is stored."""
    if hybrid.kind != QrelsKind.HYBRID:
        return None
    base_number = next((j["human_qrels"] for j in hybrid.judges if "human_qrels" in j), None)
    if base_number is None:
        return None
    base = QrelsVersion.objects.filter(
        campaign_id=hybrid.campaign_id, number=int(base_number)
    ).first()
    if base is None:
        return None
    before, after = _summaries(base), _summaries(hybrid)
    from judging.campaigns.models import Run

    rows = []
    for run in Run.objects.filter(campaign_id=hybrid.campaign_id, pk__in=set(before) & set(after)):
        b = before[run.pk].get("measures", {}).get(measure) or {}
        a = after[run.pk].get("measures", {}).get(measure) or {}
        if b.get("value") is None or a.get("value") is None:
            continue
        rows.append(
            {
                "run": run_label(run, user),
                "pooled": run.pooled,
                "human": b["value"],
                "hybrid": a["value"],
                "delta": a["value"] - b["value"],
                "judged_human": (b.get("judged") or {}).get("value"),
                "judged_hybrid": (a.get("judged") or {}).get("value"),
            }
        )
    rows.sort(key=lambda r: (r["pooled"], -abs(r["delta"]), r["run"]))
    novel = [r for r in rows if not r["pooled"]]
    pooled = [r for r in rows if r["pooled"]]

    def mean(xs: list[float]) -> float | None:
        return sum(xs) / len(xs) if xs else None

    return {
        "measure": measure,
        "human_qrels": base.number,
        "hybrid_qrels": hybrid.number,
        "judge": hybrid.kind_label,
        "runs": rows,
        "mean_delta_novel": mean([r["delta"] for r in novel]),
        "mean_delta_pooled": mean([r["delta"] for r in pooled]),
    }
