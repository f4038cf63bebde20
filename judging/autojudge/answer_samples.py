"""Human samples of answer items, and every answer run's nugget and support scores estimated from
an automatic assigner's labels corrected by people's labels of the sample (issue 34, point 5):
prediction-powered inference with ``metrics.answers.estimates``.

A sample is drawn for one judge version over every item of one kind of a campaign's answer runs
(``nugget_assignment`` under one published bank version, or ``citation_support``: each
sentence's first citation), by a design: ``uniform``, ``stratified`` by the judge's label
(proportional allocation, or Neyman's, which needs a pilot) or ``active``. As in the coverage
benchmark (``benchmarks/nugget_ppi.py``) every design judges a uniform pilot slice first (20% of
the budget, inclusion probability 1): it calibrates the predictor per (label, run). Designs that
need the pilot's labels to go on are drawn in two phases: the pilot is queued first, and
``answer_sample_advance`` draws the rest once people have judged all of it. Sampled items join
the one judging queue ahead of their topics' other items (``assessments.units``).

The estimate is given once every sampled item has a human label (the design's guarantee covers
the whole sample); until then the report says how many are left. Items several runs share are
judged once and serve every run that holds them.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from judging.assessments import units
from judging.assessments.models import Nugget, NuggetBank, NuggetBankState, UnitKind
from judging.autojudge.answer_labels import answer_auto_labels
from judging.autojudge.models import HumanSample, Judge, SampleDesign, SampleItem
from judging.autojudge.services import invalid
from judging.campaigns.models import RunAnswer
from judging.core.errors import Conflict
from judging.core.roles import Account
from judging.evaluation.answer_board import consensus_labels, topic_answer
from metrics.answers import Nugget as BankNugget
from metrics.answers.items import AnswerItem, AnswerItems, nugget_items, support_items
from metrics.results import RunLabel

PILOT_SHARE = 0.2
# the nugget measures whose corrected intervals benchmarks/nugget_ppi.py validates (the weighted
# pair is estimable too, but its coverage is not measured, so it is not shown corrected)
VALIDATED_NUGGET_MEASURES = ("strict_vital_score", "strict_all_score", "vital_score", "all_score")
KINDS = (UnitKind.NUGGET_ASSIGNMENT, UnitKind.CITATION_SUPPORT)


def _bank(judge: Judge, kind: str, number: int | None) -> NuggetBank | None:
    if kind == UnitKind.CITATION_SUPPORT:
        return None
    if number is None:
        raise invalid("bank", "a sample of nugget assignments names a bank version")
    bank = NuggetBank.objects.filter(campaign=judge.campaign, number=number).first()
    if bank is None or bank.state != NuggetBankState.PUBLISHED:
        raise invalid("bank", f"no published nugget bank v{number} in this campaign")
    return bank


def _items(judge: Judge, kind: str, bank: NuggetBank | None) -> tuple[AnswerItems, list[str]]:
    """The items of ``kind`` of the campaign's answer runs (``metrics.answers.items``) and each
    item's key in the judging queue, in item order."""
    campaign = judge.campaign
    qids = dict(campaign.topics.values_list("pk", "qid"))
    runs: dict[str, list[Any]] = defaultdict(list)
    for answer in (
        RunAnswer.objects.filter(run__campaign=campaign)
        .select_related("run")
        .order_by("run__tag", "topic_id")
    ):
        runs[answer.run.tag].append(topic_answer(answer, qids[answer.topic_id]))
    if not runs:
        raise Conflict("the campaign has no answer runs")
    try:
        if bank is not None:
            banks: dict[str, list[BankNugget]] = defaultdict(list)
            for n in Nugget.objects.filter(bank=bank).order_by("topic_id", "position", "pk"):
                banks[qids[n.topic_id]].append(BankNugget(n.key, n.text, n.importance))  # type: ignore[arg-type]
            items = nugget_items(banks, runs, measures=VALIDATED_NUGGET_MEASURES)
        else:
            items = support_items(runs)
    except ValueError as exc:
        raise Conflict(str(exc)) from None
    return items, [_key(bank, it) for it in items.items]


def _key(bank: NuggetBank | None, item: AnswerItem) -> str:
    if bank is not None:
        return units.assignment_key(bank, item.target, item.text)
    return units.support_key(item.text, item.target)


def _auto(judge: Judge, kind: str) -> dict[tuple[str, str], tuple[int, float | None]]:
    """(qid, key) -> the judge's label and raw score of every item of ``kind`` it graded."""
    qids = dict(judge.campaign.topics.values_list("pk", "qid"))
    return {(qids[t], k): found for (t, k), found in answer_auto_labels(judge, kind).items()}


def _auto_grades(judge: Judge, kind: str, items: AnswerItems, keys: list[str]) -> list[int]:
    graded = _auto(judge, kind)
    missing = sum((it.topic_id, k) not in graded for it, k in zip(items.items, keys, strict=True))
    if missing:
        raise Conflict(
            f"judge {judge.name} v{judge.version} has not labelled {missing} of the {len(keys)} "
            f"{kind} items: run it over them first"
        )
    return [graded[(it.topic_id, k)][0] for it, k in zip(items.items, keys, strict=True)]


def answer_sample_create(
    *,
    judge: Judge,
    kind: str,
    bank: int | None = None,
    design: str = "uniform",
    budget: int,
    seed: int = 0,
    allocation: str = "proportional",
    created_by: Account | None = None,
) -> HumanSample:
    """Draw a human sample of ``kind`` items (or its pilot slice, for a design that needs the
    pilot's labels) and queue it first in its topics."""
    from metrics.sampling.designs import Design, pilot, sample

    if kind not in KINDS:
        raise invalid("kind", f"must be one of {', '.join(KINDS)}")
    if design not in SampleDesign.values:
        raise invalid("design", f"must be one of {', '.join(SampleDesign.values)}")
    found = _bank(judge, kind, bank)
    items, keys = _items(judge, kind, found)
    auto = _auto_grades(judge, kind, items, keys)
    try:
        d = Design(kind=design, budget=int(budget), seed=int(seed), allocation=allocation)  # type: ignore[arg-type]
        if d.budget > len(auto):
            raise ValueError(f"the budget ({d.budget}) exceeds the {len(auto)} items")
    except ValueError as exc:
        raise invalid("budget" if "budget" in str(exc) else "design", str(exc)) from None
    info: dict[str, Any] = {"allocation": allocation, "n_items": len(auto)}
    with transaction.atomic():
        hs = HumanSample.objects.create(
            judge=judge,
            kind=kind,
            bank=found,
            design=design,
            budget=d.budget,
            seed=d.seed,
            design_info=info,
            created_by=created_by,
        )
        if d.needs_pilot:
            first = [int(i) for i in pilot(auto, d, pilot_share=PILOT_SHARE)]
            _queue(hs, items, keys, first, {i: 1.0 for i in first}, {i: -1 for i in first})
            info["phase"] = "pilot"
        else:
            drawn = sample(auto, d, pilot_share=PILOT_SHARE)
            _store_full(hs, items, keys, drawn)
            info = {**HumanSample.objects.get(pk=hs.pk).design_info, "phase": "full"}
        HumanSample.objects.filter(pk=hs.pk).update(design_info=info)
        hs.refresh_from_db()
    return hs


def _queue(
    hs: HumanSample,
    items: AnswerItems,
    keys: list[str],
    indices: list[int],
    pi: dict[int, float],
    strata: dict[int, int],
) -> None:
    """Store the drawn items and queue them first in their topics (their payloads are those
    the queue builds for the campaign's answers)."""
    campaign = hs.judge.campaign
    topic_ids = dict(campaign.topics.values_list("qid", "id"))
    start = hs.items.count()
    SampleItem.objects.bulk_create(
        [
            SampleItem(
                sample=hs,
                topic_id=topic_ids[items.items[i].topic_id],
                kind=hs.kind,
                docid=keys[i],
                order=start + n + 1,
                pi=float(pi[i]),
                stratum=str(strata[i]),
            )
            for n, i in enumerate(indices)
        ],
        batch_size=2000,
        ignore_conflicts=True,
    )
    answers = RunAnswer.objects.filter(run__campaign=campaign)
    built = (
        units.assignment_units(hs.bank, answers)
        if hs.bank is not None
        else units.support_units(answers)
    )
    wanted = {(topic_ids[items.items[i].topic_id], keys[i]) for i in indices}
    units.units_enqueue(
        campaign=campaign,
        kind=hs.kind,
        units=[u for u in built if (u.topic_id, u.key) in wanted],
        first=True,
    )


def _store_full(hs: HumanSample, items: AnswerItems, keys: list[str], drawn: Any) -> None:
    """Every item's pi and stratum (the estimate needs all) and the sampled items not stored
    yet (the pilot's are)."""
    pi_map: dict[str, dict[str, float]] = defaultdict(dict)
    strata_map: dict[str, dict[str, int]] = defaultdict(dict)
    for i, item in enumerate(items.items):
        pi_map[item.topic_id][keys[i]] = float(drawn.pi[i])
        strata_map[item.topic_id][keys[i]] = int(drawn.strata[i])
    stored = set(hs.items.values_list("docid", flat=True))
    todo = [int(i) for i in drawn.indices if keys[int(i)] not in stored]
    _queue(
        hs,
        items,
        keys,
        todo,
        {i: float(drawn.pi[i]) for i in todo},
        {i: int(drawn.strata[i]) for i in todo},
    )
    info = dict(HumanSample.objects.get(pk=hs.pk).design_info)
    info["strata"] = strata_map
    info["n_sampled"] = len(drawn.indices)
    HumanSample.objects.filter(pk=hs.pk).update(pi=dict(pi_map), design_info=info)


def _people(hs: HumanSample) -> dict[tuple[str, str], int]:
    """(qid, key) -> the consensus label of each sampled item people have judged."""
    labels = consensus_labels(hs.judge.campaign, hs.kind)
    return {
        (q, k): labels[(t, k)]
        for t, q, k in hs.items.values_list("topic_id", "topic__qid", "docid")
        if (t, k) in labels
    }


@dataclass(frozen=True)
class AnswerSampleProgress:
    """How many of a sample's answer items are queued and judged by people."""

    phase: str | None
    queued: int
    judged: int
    complete: bool


def answer_sample_progress(hs: HumanSample) -> AnswerSampleProgress:
    people = _people(hs)
    total = hs.items.count()
    return AnswerSampleProgress(
        hs.design_info.get("phase"), total, len(people), total > 0 and len(people) == total
    )


def answer_sample_advance(hs: HumanSample) -> HumanSample:
    """Draw the rest of a two-phase sample once people have judged its whole pilot slice."""
    from metrics.sampling.designs import Design, pilot, sample

    if hs.design_info.get("phase") != "pilot":
        raise Conflict("the sample is already drawn in full")
    progress = answer_sample_progress(hs)
    if not progress.complete:
        left = progress.queued - progress.judged
        raise Conflict(f"{left} of the pilot's {progress.queued} items are not judged yet")
    items, keys = _items(hs.judge, hs.kind, hs.bank)
    auto = _auto_grades(hs.judge, hs.kind, items, keys)
    d = Design(
        kind=hs.design,  # type: ignore[arg-type]
        budget=hs.budget,
        seed=hs.seed,
        allocation=hs.design_info.get("allocation", "proportional"),
    )
    first = [int(i) for i in pilot(auto, d, pilot_share=PILOT_SHARE)]
    people = _people(hs)
    first_labels = [people[(items.items[i].topic_id, keys[i])] for i in first]
    influence = weights = None
    if hs.design == SampleDesign.ACTIVE:
        influence, weights = items.structure().active_weights(
            auto, pilot=first, pilot_grades=first_labels, groups=items.groups
        )
    drawn = sample(
        auto,
        d,
        influence=influence,
        pilot_share=PILOT_SHARE,
        pilot_grades=first_labels,
        variance_weights=weights,
    )
    with transaction.atomic():
        _store_full(hs, items, keys, drawn)
        info = {**HumanSample.objects.get(pk=hs.pk).design_info, "phase": "full"}
        HumanSample.objects.filter(pk=hs.pk).update(design_info=info)
    hs.refresh_from_db()
    return hs


@dataclass(frozen=True)
class Cell:
    """An estimate and its interval. A score lies in [0, 1]: the interval is clipped to it, and
    so is the point estimate (the difference estimator is unbiased but can step outside when a
    small sample corrects a judge that erred on it); ``unclipped`` keeps the estimator's own
    value then (None when it was inside)."""

    value: float | None
    low: float | None
    high: float | None
    se: float | None
    unclipped: float | None = None


@dataclass(frozen=True)
class Corrected:
    """One run's measure: the corrected estimate (``ppi``), the judge's labels alone
    (``auto_only``, no interval: it is biased by the judge's errors) and the human sample's
    own estimate (``human_only``)."""

    ppi: Cell | None
    auto_only: float | None
    human_only: Cell | None


@dataclass(frozen=True)
class CorrectedRow:
    run: RunLabel
    measures: dict[str, Corrected]


@dataclass(frozen=True)
class AnswerSampleReport:
    """A human sample of answer items and, once every sampled item is judged (``ready``), every
    answer run's scores corrected by it."""

    sample: int
    kind: str
    bank: int | None
    design: str
    budget: int
    judge: str
    progress: AnswerSampleProgress
    ready: bool
    level: float | None = None
    n_items: int | None = None
    n_sampled: int | None = None
    calibration: str | None = None
    measures: list[str] = field(default_factory=list)
    runs: list[CorrectedRow] = field(default_factory=list)


def _cell(x: dict[str, float | None] | None) -> Cell | None:
    if x is None:
        return None
    value = x["value"]
    if value is None or 0.0 <= value <= 1.0:
        return Cell(value, x["low"], x["high"], x["se"])
    return Cell(min(max(value, 0.0), 1.0), x["low"], x["high"], x["se"], unclipped=value)


def answer_estimate(hs: HumanSample, *, level: float = 0.95) -> AnswerSampleReport:
    """Every answer run's scores estimated from the judge's labels of every item corrected by
    the sample's human labels, with the judge-only value and the human sample's own estimate
    beside each (run names as ``RunLabel``: the caller renders them for its reader); while the
    sample is not complete, only its progress (``ready`` False). Nothing is written."""
    from metrics.answers.estimates import estimate_answers

    progress = answer_sample_progress(hs)
    head: dict[str, Any] = {
        "sample": hs.pk,
        "kind": hs.kind,
        "bank": hs.bank.number if hs.bank is not None else None,
        "design": hs.design,
        "budget": hs.budget,
        "judge": f"{hs.judge.name} v{hs.judge.version}",
        "progress": progress,
    }
    if hs.design_info.get("phase") != "full" or not progress.complete:
        return AnswerSampleReport(**head, ready=False)
    items, keys = _items(hs.judge, hs.kind, hs.bank)
    graded = _auto(hs.judge, hs.kind)
    people = _people(hs)
    pis = hs.pi
    strata_map = hs.design_info.get("strata") or {}
    auto: dict[AnswerItem, int] = {}
    human: dict[AnswerItem, int] = {}
    pi: dict[AnswerItem, float] = {}
    strata: dict[AnswerItem, int] = {}
    scores: dict[AnswerItem, float] | None = {}
    for item, key in zip(items.items, keys, strict=True):
        q = item.topic_id
        grade, score = graded.get((q, key), (0, None))
        auto[item] = grade
        pi[item] = float(pis.get(q, {}).get(key, 0.0))
        strata[item] = int(strata_map.get(q, {}).get(key, 0))
        if (q, key) in people:
            human[item] = people[(q, key)]
        if scores is not None:
            scores = None if score is None else {**scores, item: float(score)}
    report = estimate_answers(
        items,
        auto,
        human,
        pi,
        design=hs.design,
        strata=strata if hs.design == SampleDesign.STRATIFIED else None,
        scores=scores,
        level=level,
    )
    rows = report.to_dict()
    return AnswerSampleReport(
        **head,
        ready=True,
        level=level,
        n_items=rows["n_items"],
        n_sampled=rows["n_sampled"],
        calibration=rows["calibration"],
        measures=list(items.measures),
        runs=[
            CorrectedRow(
                RunLabel(tag),
                {
                    m: Corrected(_cell(c["ppi"]), c["auto_only"], _cell(c["human_only"]))
                    for m, c in measures.items()
                },
            )
            for tag, measures in rows["runs"].items()
        ],
    )


def latest_answer_reports(campaign: Any, user: Any) -> list[dict[str, Any]]:
    """The latest answer sample of each kind among the judges ``user`` may see, each as its
    report rendered for ``user`` (other researchers' runs anonymised): what the leaderboard's
    Answers section shows beside the scores from people's judgments."""
    from judging.evaluation.selectors import report_viewer
    from metrics.results import render

    visible = Judge.objects.visible_to(user).filter(campaign=campaign)
    out: list[dict[str, Any]] = []
    viewer = None
    for kind in KINDS:
        hs = (
            HumanSample.objects.filter(judge__in=visible, kind=kind)
            .select_related("judge__campaign", "bank")
            .order_by("-created_at", "-pk")
            .first()
        )
        if hs is not None:
            viewer = viewer or report_viewer(campaign, user)
            out.append(render(answer_estimate(hs), viewer))
    return out
