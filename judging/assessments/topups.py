"""Top-ups: measuring a run's penalty with a few judgments (issue 31, point 4).

A run that did not help build the pool has unjudged documents in its top k (its *hole*).
``topup_request`` draws a sample of them (``metrics.bias.topup``: uniform, with its inclusion
probabilities stored per document of the hole, ``TopUpItem``) and queues the drawn documents
first in their topics (``queue.slots_topup``: the topic's assessor meets them before the rest of
its queue; no pool version is made, a top-up is not a pool). ``topup_status`` reads the
judgments as they arrive and estimates the run's score with its hole judged, with a 95%
interval, and the time the rest will take at the assessors' measured pace. Publishing a qrels
version afterwards brings the judged documents into it like any other judgment (its note names
the top-up).

The designs: uniform over the hole, stratified by rank band (every band judged; the estimate
collapses the bands, weighted by their unjudged documents) and per topic (a budget of documents
per topic). On Robust 2003 and TREC 2011 Medical their 95% intervals held in 94-96% of replays
(``benchmarks/penalty_intervals.py``). With an automatic judge: ``autojudge.topups``.
"""

from __future__ import annotations

import math
import secrets
from statistics import median
from typing import Any

import numpy as np
from django.conf import settings
from django.db import transaction

from judging.assessments.models import (
    Judgment,
    QrelsSource,
    QrelsVersion,
    TopUp,
    TopUpItem,
    UnitKind,
)
from judging.assessments.queue import slots_topup
from judging.assessments.selectors import judged_documents
from judging.assessments.services import current_human_grades, qrels_rows, qrels_store
from judging.campaigns.models import Campaign, Document, RankedList, Run
from judging.core.errors import Conflict, InvalidInput
from judging.core.roles import Account
from metrics.bias.topup import Hole, Sample, draw, estimate, stratum_of
from metrics.problems import Problem

# the designs a top-up may use (``metrics.bias.topup.DESIGNS``; see the module docstring)
OFFERED_DESIGNS = ("uniform", "rank", "per_topic")


def _rankings(run: Run) -> dict[str, list[str]]:
    return {
        qid: docids.split("\n") if docids else []
        for qid, docids in RankedList.objects.filter(run=run).values_list("topic__qid", "docids")
    }


def _hole(run: Run, k: int) -> Hole:
    """The run's unjudged documents in its top ``k``, over the topics with any judgment
    (judged: in any qrels version, or by an annotator and not yet published)."""
    judged = judged_documents(run.campaign)
    ranked = {q: docs[:k] for q, docs in _rankings(run).items() if q in judged}
    return Hole(k, ranked, {q: dict.fromkeys(judged[q], 0) for q in ranked})


def _check(budget: Any, design: str, k: int, topics: int) -> int:
    problems = []
    cap = settings.POOLJUDGE_JUDGING.topup_max_documents
    if not isinstance(budget, int) or isinstance(budget, bool) or not 1 <= budget <= cap:
        problems.append(Problem.at("budget", f"a whole number of documents from 1 to {cap}"))
    elif design == "per_topic" and budget * topics > cap:
        problems.append(
            Problem.at(
                "budget",
                f"{budget} per topic over {topics} topics is {budget * topics} documents, more "
                f"than {cap}",
            )
        )
    if design not in OFFERED_DESIGNS:
        problems.append(
            Problem.at(
                "design",
                f"unknown design {design!r}; offered: {', '.join(OFFERED_DESIGNS)}",
            )
        )
    if k < 1:
        problems.append(Problem.at("k", "the top k must be at least 1"))
    if problems:
        raise InvalidInput("the top-up is not valid", problems)
    return int(budget)


def topup_request(
    *,
    run: Run,
    measure: str,
    k: int,
    budget: int,
    design: str = "uniform",
    requested_by: Account | None = None,
    seed: int | None = None,
) -> TopUp:
    """Draw ``budget`` of the run's unjudged top-``k`` documents and queue them first; the
    top-up (one at a time per run: a second while one has documents left to judge is a 409)."""
    campaign = run.campaign
    hole = _hole(run, k)
    ranked = hole.ranked
    budget = _check(budget, design, k, len(ranked))
    version = QrelsVersion.objects.filter(campaign=campaign).human().latest_first().first()
    if version is None:
        raise InvalidInput(
            "no qrels version yet", [Problem.at("qrels", "import or publish qrels first")]
        )
    if not hole.unjudged:
        raise InvalidInput(
            "nothing to top up",
            [Problem.at("run", f"every document in the run's top {k} is judged already")],
        )
    seed = secrets.randbits(48) if seed is None else seed
    sample = draw(hole, design, budget, np.random.default_rng(seed))
    drawn = {
        (q, d): pi for (q, _, d), pi in zip(sample.documents, sample.probabilities, strict=True)
    }
    pi_of = dict(zip(sample.strata, sample.probabilities, strict=True))  # one per stratum
    topics = dict(campaign.topics.filter(qid__in=list(ranked)).values_list("qid", "pk"))
    with_text = set(
        Document.objects.filter(campaign=campaign, docid__in=[d for _, _, d in hole.unjudged])
        .exclude(text="")
        .values_list("docid", flat=True)
    )
    with transaction.atomic():
        grades = current_human_grades(campaign)
        if any(
            not topup_status(t, estimates=False, grades=grades)["done"] for t in run.topups.all()
        ):
            raise Conflict(f"a top-up of run {run.pk} still has documents to judge")
        topup = TopUp.objects.create(
            campaign=campaign,
            run=run,
            qrels=version,
            measure=measure,
            k=k,
            design=design,
            budget=budget,
            seed=seed,
            requested_by=requested_by,
        )
        TopUpItem.objects.bulk_create(
            [
                TopUpItem(
                    topup=topup,
                    topic_id=topics[q],
                    docid=d,
                    rank=rank,
                    stratum=stratum_of(design, q, rank, k),
                    pi=drawn.get((q, d), pi_of.get(stratum_of(design, q, rank, k), 0.0)),
                    sampled=(q, d) in drawn,
                )
                for q, rank, d in hole.unjudged
            ]
        )
        slots_topup(
            campaign=campaign,
            items=[(topics[q], d, d in with_text) for q, d in drawn],
        )
    return topup


DEFAULT_BUDGET = 20


def topup_offer(
    run: Run, k: int, grades: dict[tuple[str, str], int] | None = None
) -> dict[str, Any]:
    """What a top-up of the run's top ``k`` would judge: its unjudged documents (over the
    topics with judgments), the bounds of its P@k they leave (as the pool scores it, and with
    them all relevant), the default budget and what it would cost at the assessors' measured
    pace (``grades``: ``current_human_grades``, when the caller has them)."""
    hole = _hole(run, k)
    ranked = hole.ranked
    unjudged = len(hole.unjudged)
    budget = min(DEFAULT_BUDGET, unjudged)
    # P@k as the pool scores it (the hole non-relevant) and with the hole relevant: its bounds
    grades = current_human_grades(run.campaign) if grades is None else grades
    level = run.campaign.relevance_threshold
    relevant = sum(1 for q, docs in ranked.items() for d in docs if grades.get((q, d), -1) >= level)
    cells = k * len(ranked)
    bounds = [relevant / cells, (relevant + unjudged) / cells] if cells else None
    with_hole = len({q for q, _, _ in hole.unjudged})
    pace = campaign_pace(run.campaign_id)
    return {
        "k": k,
        "unjudged": unjudged,
        "documents": sum(len(docs) for docs in ranked.values()),
        "topics": len(ranked),
        "p_at_k_bounds": bounds,
        "budget": budget,
        "max_budget": settings.POOLJUDGE_JUDGING.topup_max_documents,
        "cost": cost_words(budget, pace) if budget else "",
        "topics_with_hole": with_hole,
        "per_topic_cost": cost_words(with_hole, pace) if with_hole else "",
        "designs": list(OFFERED_DESIGNS),
    }


def readable(measure: str, k: int) -> bool:
    """Whether a top-up of the top ``k`` estimates ``measure``: P@j, R@j, ceiling@j and nDCG@j
    for j <= k, AP."""
    family, _, cut = measure.partition("@")
    if not cut:
        return family == "AP"
    return family in ("P", "R", "ceiling", "nDCG") and cut.isdigit() and 0 < int(cut) <= k


def topup_publish(*, topup: TopUp, created_by: Account | None = None) -> QrelsVersion:
    """The campaign's next qrels version, a minor version of the top-up's (``1.1`` for the first
    of v1): that version's rows and the top-up's judged documents, nothing else, so that the two
    differ by what the top-up measured (other judgments made since wait for the next publish:
    none is lost). Its purpose and note name the top-up."""
    campaign = topup.campaign
    grades = current_human_grades(campaign)
    judged = [
        (i.topic.qid, i.docid, grades[(i.topic.qid, i.docid)])
        for i in topup.items.filter(sampled=True).select_related("topic")
        if (i.topic.qid, i.docid) in grades
    ]
    if not judged:
        raise InvalidInput(
            "nothing to publish", [Problem.at("topup", "none of its documents is judged yet")]
        )
    base = {(q, d): g for q, d, g in qrels_rows(topup.qrels)}
    added = [(q, d, g) for q, d, g in judged if (q, d) not in base]
    rows = [(q, d, g) for (q, d), g in base.items()] + added
    note = (
        f"top-up of run {topup.run.tag}: qrels version {topup.qrels.number} and {len(added)} "
        f"of its unjudged top-{topup.k} documents judged ({len(judged)} of {topup.budget} "
        "drawn); other judgments made since wait for the next publish"
    )
    with transaction.atomic():
        Campaign.objects.select_for_update().filter(pk=campaign.pk).first()
        return qrels_store(
            campaign=campaign,
            rows=rows,
            source=QrelsSource.PUBLISHED,
            note=note,
            created_by=created_by,
            extends=topup.qrels,
            purpose=f"top-up of run {topup.run.tag}",
        )


def campaign_pace(campaign_id: int) -> float | None:
    """The median active seconds of the campaign's timed judgments (None before any)."""
    seconds = list(
        Judgment.objects.filter(
            campaign_id=campaign_id,
            kind=UnitKind.DOCUMENT,
            gold__isnull=True,
            active_seconds__gt=0,
        )
        .order_by()
        .values_list("active_seconds", flat=True)[:10_000]
    )
    return median(seconds) if seconds else None


def cost_words(documents: int, pace: float | None) -> str:
    """ "about N minutes" for ``documents`` judgments at ``pace`` seconds each."""
    if pace is None:
        return "no measured pace yet (no timed judgment in this campaign)"
    minutes = max(1, math.ceil(documents * pace / 60))
    return f"about {minutes} minute{'s' if minutes != 1 else ''} at {pace:.0f} s a judgment"


def topup_status(
    topup: TopUp,
    *,
    estimates: bool = True,
    grades: dict[tuple[str, str], int] | None = None,
    auto: dict[tuple[str, str], int] | None = None,
) -> dict[str, Any]:
    """Where a top-up stands: n of m judged, the time the rest will take, and (``estimates``)
    the run's score with its hole judged, with a 95% interval, from the judgments so far
    (``grades``: ``current_human_grades``, when the caller has them). ``auto``: an automatic
    judge's grades of the hole's documents; the estimates are then the judge's, corrected by
    the judged sample (``autojudge.topups``)."""
    items = list(topup.items.select_related("topic").order_by("topic__qid", "rank"))
    grades = current_human_grades(topup.campaign) if grades is None else grades
    sampled = [i for i in items if i.sampled]
    labels = {
        (i.topic.qid, i.docid): grades[(i.topic.qid, i.docid)]
        for i in sampled
        if (i.topic.qid, i.docid) in grades
    }
    left = len(sampled) - len(labels)
    pace = campaign_pace(topup.campaign_id)
    out: dict[str, Any] = {
        "id": topup.pk,
        "measure": topup.measure,
        "k": topup.k,
        "design": topup.design,
        "budget": topup.budget,
        "qrels_version": topup.qrels.number,
        "hole": len(items),
        "sampled": len(sampled),
        "judged": len(labels),
        "done": left == 0,
        "time_left": cost_words(left, pace) if left else "",
        "created_at": topup.created_at,
    }
    if not estimates:
        return out
    out["estimates"] = _estimates(topup, items, grades, labels, auto)
    return out


def _estimates(
    topup: TopUp,
    items: list[TopUpItem],
    grades: dict[tuple[str, str], int],
    labels: dict[tuple[str, str], int],
    auto: dict[tuple[str, str], int] | None = None,
) -> dict[str, dict[str, float]]:
    """The run's score with its hole judged, per measure (its own, P@k, R@k with its ceiling,
    nDCG@k and AP), with its interval."""
    judged_topics = {q for q, _ in grades} | {i.topic.qid for i in items}
    ranked = {q: docs for q, docs in _rankings(topup.run).items() if q in judged_topics}
    hole_docs = {(i.topic.qid, i.docid) for i in items}
    known: dict[str, dict[str, int]] = {q: {} for q in ranked}
    for (q, d), g in grades.items():
        if q in known and (q, d) not in hole_docs:
            known[q][d] = g
    level = topup.campaign.relevance_threshold
    hole = Hole(topup.k, ranked, known, level)
    sampled = [i for i in items if i.sampled]
    population: dict[str, int] = {}
    for q, rank, _ in hole.unjudged:
        h = stratum_of(topup.design, q, rank, topup.k)
        population[h] = population.get(h, 0) + 1
    sample = Sample(
        topup.design,
        topup.budget,
        tuple((i.topic.qid, i.rank, i.docid) for i in sampled),
        tuple(i.stratum for i in sampled),
        tuple(i.pi for i in sampled),
        population,
    )
    k = topup.k
    own = (topup.measure, f"P@{k}", f"R@{k}", f"ceiling@{k}", f"nDCG@{k}", "AP")
    measures = [m for m in own if readable(m, k)]
    measures = [*dict.fromkeys(measures), f"Unique@{k}"]
    rng = np.random.default_rng(topup.seed)
    got = estimate(hole, sample, labels, measures, rng=rng, auto=auto)
    return {
        m: {"estimate": e.estimate, "low": e.low, "high": e.high, "level": e.level}
        for m, e in got.items()
    }
