"""The audit of a judge version against people (issue 17, point 3), computed by a job
(``core.jobs``, kind ``judge_audit``) and stored (``JudgeAudit``): how far its labels and the
rankings they give can be trusted.

- label agreement on the pool documents both graded (``metrics.judges.audit.label_agreement``);
- the ranking of every campaign run under the judge's labels vs the human grades, both over the
  same pool (Kendall tau-b, tau_AP, tau among the human top 10), per measure;
- the score gap per run family (the models runs declare; circular: the judge's own model);
- two robustness probes run on the real pool (query-word stuffing and an injected instruction
  appended to documents people judged non-relevant), with the share of labels they flip;
  only for judges that can be asked again (an imported judge cannot: the audit says so);
- the anchoring control, when the campaign shows suggestions from this judge.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.utils import timezone

from judging.assessments.models import QrelsKind, QrelsVersion
from judging.autojudge.answers import AUDIT_RESULT_VERSION
from judging.autojudge.models import Judge, JudgeAudit, JudgeKind
from judging.autojudge.services import human_grades, invalid, labels, pool_pairs
from judging.core import jobs
from judging.core.models import Job
from judging.core.roles import Account
from judging.pools.models import PoolVersion

AUDIT_MEASURES = ("AP", "nDCG@10", "P@10")


def audit_task_key(audit_id: int) -> str:
    return f"judge-audit:{audit_id}"


def audit_request(
    *,
    judge: Judge,
    human: QrelsVersion,
    pool: PoolVersion,
    requested_by: Account | None = None,
    again: bool = False,
) -> JudgeAudit:
    """The stored audit of ``judge`` against ``human`` over ``pool``, computing it (its job,
    after commit) when there is none, the last attempt failed, or ``again`` is asked."""
    if human.kind != QrelsKind.HUMAN:
        raise invalid("human", f"qrels v{human.number} is {human.kind}, not human")
    if not (judge.campaign_id == human.campaign_id == pool.campaign_id):
        raise invalid("pool", "judge, pool and qrels belong to different campaigns")
    return jobs.row_requested(
        JudgeAudit,
        {"judge": judge, "human": human, "pool": pool},
        "judge_audit",
        audit_task_key,
        again_done=again,
        requested_by=requested_by,
    )


def audit_compute(job: Job) -> dict[str, Any] | None:
    """The computation of a ``judge_audit`` job: its audit's result."""
    audit = (
        JudgeAudit.objects.select_related("judge", "judge__campaign", "human", "pool")
        .filter(job=job)
        .first()
    )
    if audit is None:
        return None
    return compute_audit(audit.judge, audit.human, audit.pool)


def audit_store(job: Job, result: dict[str, Any] | None) -> None:
    if result is not None:
        JudgeAudit.objects.filter(job=job).update(result=result)


def _scores(
    runs: dict[str, Any], qrels: dict[str, dict[str, int]], measures: list[str], level: int
) -> dict[str, dict[str, float]]:
    """measure -> run tag -> mean (honest mode, no intervals: a ranking needs only means)."""
    from metrics.evaluation.evaluator import Evaluator

    evaluator = Evaluator(qrels, measures, relevance_level=level, ci=None)
    out: dict[str, dict[str, float]] = {m: {} for m in measures}
    for tag, run in runs.items():
        result = evaluator.evaluate(run)
        for m in measures:
            agg = result.aggregates.get(m)
            if agg is not None and agg.value == agg.value:
                out[m][tag] = float(agg.value)
    return out


def compute_audit(judge: Judge, human: QrelsVersion, pool: PoolVersion) -> dict[str, Any]:
    from judging.evaluation.bias import campaign_runs
    from metrics.judges.audit import label_agreement, ranking_agreement
    from metrics.judges.families import family_gaps

    campaign = judge.campaign
    scale = campaign.grade_values()
    threshold = campaign.relevance_threshold
    pairs = pool_pairs(pool)
    in_pool = set(pairs)
    people = {k: g for k, g in human_grades(human).items() if k in in_pool}
    auto = {k: g for k, g in labels(judge).items() if k in in_pool}
    agreement = label_agreement(people, auto, scale, threshold=threshold)

    def as_qrels(grades: dict[tuple[str, str], int]) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for (q, d), g in grades.items():
            out.setdefault(q, {})[d] = g
        return out

    runs_models, runs = campaign_runs(campaign)
    measures = list(AUDIT_MEASURES)
    human_scores = _scores(runs, as_qrels(people), measures, threshold)
    auto_scores = _scores(runs, as_qrels(auto), measures, threshold)
    families = {r.tag: list(r.model_names) for r in runs_models}
    rankings = {}
    gaps = {}
    for m in measures:
        rankings[m] = ranking_agreement(human_scores[m], auto_scores[m]).to_dict()
        gaps[m] = [
            g.to_dict() for g in family_gaps(human_scores[m], auto_scores[m], families, judge.model)
        ]
    return {
        "version": AUDIT_RESULT_VERSION,  # of the stored format (``autojudge.answers``)
        "judge": judge.describe(),
        "human_qrels": {"number": human.number, "hash": human.content_hash},
        "pool": pool.number,
        "pool_documents": len(pairs),
        "human_graded": len(people),
        "auto_graded": len(auto),
        "agreement": agreement.to_dict(),
        "measures": measures,
        "scores": {"human": human_scores, "automatic": auto_scores},
        "rankings": rankings,
        "family_gaps": gaps,
        "probes": run_probes(judge, people, threshold),
        "anchoring": _anchoring(judge),
        "computed_at": timezone.now().isoformat(),
    }


def _anchoring(judge: Judge) -> dict[str, Any] | None:
    """Agreement of the assessors with this judge's labels when its suggestions were shown and
    when they stayed hidden (``suggestions.anchoring_report``); None when no judgment of the
    campaign was recorded with a suggestion."""
    from judging.assessments.models import Judgment, UnitKind
    from judging.autojudge.suggestions import anchoring_report

    recorded = Judgment.objects.filter(
        campaign_id=judge.campaign_id, kind=UnitKind.DOCUMENT
    ).exclude(suggestion_arm="")
    if not recorded.exists():
        return None
    return anchoring_report(judge.campaign, judge)


def run_probes(judge: Judge, people: dict[tuple[str, str], int], threshold: int) -> dict[str, Any]:
    """Query-word stuffing and an injected instruction on a seeded sample of pool documents
    people judged non-relevant: the judge grades each altered text, and the share of its labels
    that cross the relevance threshold is the probe's result."""
    from judging.autojudge import services
    from judging.autojudge.texts import document_texts, topic_texts
    from metrics.judges.probes import inject_instruction, probe_items, stuff_query_words
    from metrics.judges.robustness import probe_result

    if judge.kind == JudgeKind.IMPORTED:
        return {"available": False, "reason": "an imported judge cannot be asked again"}
    texts = document_texts(judge, {d for _, d in people})
    with_text = {k: g for k, g in people.items() if texts.get(k[1], "").strip()}
    items = probe_items(
        with_text, settings.POOLJUDGE_AUTOJUDGE.autojudge_probe_items, seed=0, threshold=threshold
    )
    if not items:
        return {"available": False, "reason": "no non-relevant pool document with text"}
    try:
        labeller: Any = services.labeller_for(judge)
    except Exception as exc:  # e.g. the extra is not installed, or no thresholds
        return {"available": False, "reason": services.safe_message(exc)}
    queries = topic_texts(judge, {q for q, _ in items})
    originals = [(k, queries[k[0]], texts[k[1]]) for k in items]
    variants = {
        "stuffing": [(k, q, stuff_query_words(p, q)) for k, q, p in originals],
        "injection": [(k, q, inject_instruction(p)) for k, q, p in originals],
    }
    before = {(x.qid, x.docid): x.grade for x in labeller.label_texts(originals)}
    out: dict[str, Any] = {"available": True, "items": len(items)}
    for name, altered in variants.items():
        after = {(x.qid, x.docid): x.grade for x in labeller.label_texts(altered)}
        b = {k: g for k, g in before.items() if g is not None and after.get(k) is not None}
        a = {k: after[k] for k in b}
        out[name] = probe_result(name, b, a, threshold).to_dict()
    return out
