"""The meta-evaluation of a campaign's judges (issue 35, point 2), computed by a job (kind
``meta_evaluation``) and stored (``MetaEvaluation``): for every judge with labels on a pool
version, against one human qrels version over the same pool,

- label agreement with people (``metrics.judges.meta_labels.label_meta``): Cohen's kappa,
  binary kappa, linear and quadratic weighted kappa, ordinal Krippendorff's alpha, the
  confusion overall and per topic, each figure with a bootstrap interval over topics;
- system-ranking agreement (``metrics.judges.meta.ranking_meta``): the campaign's runs scored
  by one measure under people's grades and under the judge's, both restricted to the pool:
  Kendall tau-b, tau_AP, tau-b among people's top 10, Spearman, and the share of people's
  significant run pairs the judge keeps in order, each with a bootstrap interval over topics;
- its cost (:func:`ledger`): calls, tokens, cost, seconds, per 1,000 labels; declared by an
  imported judge, counted for the others, summed over its members for a jury (plus the
  judgments of people it deferred to).

A correlation or kappa that cannot be computed is stored as undefined with its reason, never 0.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db.models import Count, Q, Sum
from django.utils import timezone

from judging.assessments.models import QrelsKind, QrelsVersion
from judging.autojudge.meta_answers import META_RESULT_VERSION
from judging.autojudge.models import (
    AutoLabel,
    Judge,
    JudgeKind,
    JudgeRun,
    LabelStatus,
    MetaEvaluation,
)
from judging.autojudge.services import human_grades, invalid, labels, pool_pairs
from judging.campaigns.models import Campaign
from judging.core import jobs
from judging.core.models import Job
from judging.core.roles import Account
from judging.pools.models import PoolVersion

DEFAULT_MEASURE = "nDCG@10"
TOP_K = 10


def meta_task_key(meta_id: int) -> str:
    return f"meta-evaluation:{meta_id}"


def meta_request(
    *,
    campaign: Campaign,
    human: QrelsVersion,
    pool: PoolVersion,
    measure: str = DEFAULT_MEASURE,
    requested_by: Account | None = None,
    again: bool = False,
) -> MetaEvaluation:
    """The stored meta-evaluation against ``human`` over ``pool`` by ``measure``, computing it
    (its job, after commit) when there is none, the last attempt failed, or ``again``."""
    from metrics.measures.names import parse_measure

    if human.kind != QrelsKind.HUMAN:
        raise invalid("qrels", f"qrels v{human.number} is {human.kind}, not people's")
    if not (campaign.pk == human.campaign_id == pool.campaign_id):
        raise invalid("pool", "the pool and the qrels belong to different campaigns")
    try:
        parse_measure(measure)
    except ValueError as exc:
        raise invalid("measure", str(exc)) from None
    meta = jobs.row_requested(
        MetaEvaluation,
        {"campaign": campaign, "human": human, "pool": pool, "measure": measure},
        "meta_evaluation",
        meta_task_key,
        again_done=again,
        requested_by=requested_by,
    )
    return MetaEvaluation.objects.select_related("job", "human", "pool").get(pk=meta.pk)


def meta_compute(job: Job) -> dict[str, Any] | None:
    meta = (
        MetaEvaluation.objects.select_related("campaign", "human", "pool").filter(job=job).first()
    )
    if meta is None:
        return None
    return compute_meta(meta.campaign, meta.human, meta.pool, meta.measure)


def meta_store(job: Job, result: dict[str, Any] | None) -> None:
    if result is not None:
        MetaEvaluation.objects.filter(job=job).update(result=result)


def _per_topic(
    runs: dict[str, Any], grades: dict[tuple[str, str], int], measure: str, level: int
) -> dict[str, dict[str, float]]:
    """run tag -> topic -> ``measure`` under ``grades``, on every topic the grades hold: a run
    without a ranking for a topic, and every run on a topic with no relevant document under
    these grades, scores 0 there (as trec_eval -c scores them), so a judge that finds nothing
    relevant ties the runs rather than dropping the topic."""
    from metrics.evaluation.evaluator import Evaluator

    qrels: dict[str, dict[str, int]] = {}
    for (q, d), g in grades.items():
        qrels.setdefault(q, {})[d] = g
    if not qrels:
        return {}
    evaluator = Evaluator(qrels, [measure], relevance_level=level, ci=None, complete=True)
    out: dict[str, dict[str, float]] = {}
    for tag, run in runs.items():
        values = evaluator.evaluate(run).per_query.get(measure, {})
        found = {q: float(v) for q, v in values.items() if v == v}  # NaN: not scored
        out[tag] = {q: found.get(q, 0.0) for q in qrels}
    return out


def ledger(judge: Judge, labelled: int, deferred_judged: int = 0) -> dict[str, Any]:
    """What the judge cost: ``calls``, ``prompt_tokens``, ``completion_tokens``, ``cost`` (in its
    prices' currency) and ``seconds`` (its runs' computing time); ``source`` says whether they
    were counted by the service, declared by the participant, or summed over a jury's members
    (``people``: the judgments of people a deferring jury used). ``cost_per_1k`` and
    ``seconds_per_label`` are per graded label (None without labels, or for an imported judge
    that declared nothing: unknown, not free)."""
    keys = ("calls", "prompt_tokens", "completion_tokens", "cost", "seconds")
    out: dict[str, Any] = dict.fromkeys(keys, 0.0)
    people = 0
    if judge.kind == JudgeKind.IMPORTED:
        declared = judge.params.get("declared") or {}
        source = "declared" if declared else "not declared"
        for k in keys:
            out[k] = float(declared.get(k, 0.0))
    elif judge.kind == JudgeKind.JURY:
        source = "members"
        members = Judge.objects.filter(pk__in=judge.params.get("members", []))
        for member in members:
            part = ledger(member, 0)
            for k in keys:
                out[k] += part[k]
        people = deferred_judged
    else:
        source = "counted"
        runs = JudgeRun.objects.filter(judge=judge).aggregate(
            done=Sum("done"),
            cached=Sum("cached"),
            prompt=Sum("prompt_tokens"),
            completion=Sum("completion_tokens"),
            cost=Sum("cost"),
            seconds=Sum("job__seconds"),
        )
        out["calls"] = float((runs["done"] or 0) - (runs["cached"] or 0))
        out["prompt_tokens"] = float(runs["prompt"] or 0)
        out["completion_tokens"] = float(runs["completion"] or 0)
        out["cost"] = float(runs["cost"] or 0.0)
        out["seconds"] = float(runs["seconds"] or 0.0)
    out["source"] = source
    out["people"] = people
    out["labels"] = labelled
    known = labelled and source != "not declared"
    out["cost_per_1k"] = out["cost"] / labelled * 1000 if known else None
    out["seconds_per_label"] = out["seconds"] / labelled if known else None
    return out


# The fewest topics from which each figure's percentile bootstrap interval holds its 95% (about
# 90% or more) in benchmarks/meta_intervals.py (its README section "Meta-evaluation intervals"):
# None, not up to 50 topics; below, the figure is shown without its interval, saying why.
VALIDATED_FROM: dict[str, int | None] = {
    "kappa": 10,
    "binary_kappa": 10,
    "kappa_linear": 10,
    "kappa_quadratic": 10,
    "krippendorff_alpha": 10,
    "kendall_tau_b": 25,
    "tau_top_k": 10,  # conservative: 99-100% at every size
    "tau_ap": None,  # 79% at 25-50 topics, every miss below: biased low
    "spearman": None,  # 86-89% at 25-50 topics, every miss below
    "significant_kept": None,  # no population value to validate against
}


def validated(figures: dict[str, Any], n_topics: int) -> dict[str, Any]:
    """``figures`` (a ``to_dict`` of label or ranking agreement) with the interval of every
    figure not validated at ``n_topics`` topics taken out, and why."""
    out = dict(figures)
    for name, least in VALIDATED_FROM.items():
        figure = out.get(name)
        if not isinstance(figure, dict) or figure.get("low") is None:
            continue
        if least is None:
            why = (
                "its bootstrap interval is not validated: it under-covers up to 50 topics "
                "(benchmarks/meta_intervals.py)"
                if name != "significant_kept"
                else "its bootstrap interval is not validated (no population value to check "
                "it against: benchmarks/meta_intervals.py)"
            )
        elif n_topics < least:
            why = (
                f"{n_topics} topic{'' if n_topics == 1 else 's'}: its bootstrap interval is "
                f"validated from {least} "
                "(benchmarks/meta_intervals.py)"
            )
        else:
            continue
        out[name] = dict(figure, low=None, high=None, no_interval=why)
    return out


def per_cost(kappa: Any, cost_per_1k: float | None) -> dict[str, Any]:
    """Linear weighted kappa per unit of cost per 1,000 labels, undefined (with its reason) for
    a judge without a recorded cost or an undefined kappa."""
    from metrics.judges.meta import Undefined, value_dict

    if isinstance(kappa, Undefined):
        return value_dict(Undefined(f"its kappa is {kappa}"))
    if not cost_per_1k:
        return value_dict(Undefined("no cost recorded or declared"))
    return value_dict(float(kappa) / cost_per_1k)


def _jury_counts(judge: Judge) -> dict[str, Any] | None:
    if judge.kind != JudgeKind.JURY:
        return None
    counts = AutoLabel.objects.filter(judge=judge, kind="document").aggregate(
        graded=Count("id", filter=Q(grade__isnull=False)),
        deferred=Count("id", filter=Q(status=LabelStatus.DEFERRED)),
    )
    return {
        "method": judge.params.get("method", ""),
        "members": list(judge.params.get("members", [])),
        "deferred_judged": int(judge.params.get("deferred_judged", 0)),
        "pending": int(counts["deferred"] or 0),
    }


def compute_meta(
    campaign: Campaign, human: QrelsVersion, pool: PoolVersion, measure: str
) -> dict[str, Any]:
    from judging.evaluation.bias import campaign_runs
    from metrics.judges.meta import ranking_meta
    from metrics.judges.meta_labels import label_meta

    resamples = settings.POOLJUDGE_AUTOJUDGE.autojudge_meta_resamples
    scale = campaign.grade_values()
    threshold = campaign.relevance_threshold
    pairs = pool_pairs(pool)
    in_pool = set(pairs)
    people = {k: g for k, g in human_grades(human).items() if k in in_pool}
    _, runs = campaign_runs(campaign)
    people_scores = _per_topic(runs, people, measure, threshold)
    rows = []
    judges = Judge.objects.filter(campaign=campaign).order_by("name", "version")
    for judge in judges:
        auto = {k: g for k, g in labels(judge).items() if k in in_pool}
        if not auto:
            continue
        label = label_meta(people, auto, scale, threshold=threshold, resamples=resamples)
        judge_scores = _per_topic(runs, auto, measure, threshold)
        ranking = ranking_meta(people_scores, judge_scores, top_k=TOP_K, resamples=resamples)
        jury = _jury_counts(judge)
        notes = []
        if judge.saw_human_qrels:
            notes.append("it saw some of people's judgments: its agreement is not independent")
        if jury and jury["method"] == "defer":
            notes.append(
                f"{jury['deferred_judged']} of its labels are people's own (items its members "
                "disagreed on): its agreement with people is partly theirs"
            )
        spent = ledger(judge, len(auto), jury["deferred_judged"] if jury else 0)
        rows.append(
            {
                "judge": {
                    "id": judge.pk,
                    "name": judge.name,
                    "version": judge.version,
                    "kind": judge.kind,
                    "model": judge.model,
                    "owner": judge.owner_id,
                    "family": judge.family,
                    "open_weights": judge.open_weights,
                    "saw_human_qrels": judge.saw_human_qrels,
                },
                "jury": jury,
                "labelled": len(auto),
                "labels": validated(label.to_dict(), label.n_topics),
                "ranking": validated(ranking.to_dict(), ranking.n_topics),
                "ledger": spent,
                "agreement_per_cost": per_cost(label.kappa_linear.value, spent["cost_per_1k"]),
                "notes": notes,
            }
        )
    return {
        "version": META_RESULT_VERSION,
        "human_qrels": {"number": human.number, "hash": human.content_hash},
        "pool": pool.number,
        "measure": measure,
        "threshold": threshold,
        "resamples": resamples,
        "pool_documents": len(pairs),
        "human_graded": len(people),
        "runs": len(runs),
        "judges": rows,
        "computed_at": timezone.now().isoformat(),
    }
