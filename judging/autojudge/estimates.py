"""Human samples chosen by the service, and run measures estimated from a judge's labels for the
whole pool corrected by the people's grades of the sample (prediction-powered inference,
``metrics.sampling.ppi``), with 95% intervals (issue 17, point 4).

A sample is drawn over the documents of one pool version, for one judge version, by a design:
``uniform``, ``stratified`` by the judge's grade (Neyman allocation needs a pilot), or ``active``
(most informative first, with known inclusion probabilities so that inference stays valid).
Designs that need a pilot are drawn in two phases: the pilot slice is queued first; once people
have graded all of it, :func:`sample_advance` draws the rest from the pilot's disagreement rates.
Sampled documents are queued to assessors like any pool, ahead of the rest of their topics.

The estimate is computed when every sampled document has a human grade (the design's guarantee
covers the whole sample, not a part of it); until then the report says how many are left.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any, Literal, cast

from django.conf import settings
from django.db import transaction

from judging.assessments.queue import slots_first
from judging.assessments.services import current_human_grades
from judging.autojudge.models import HumanSample, Judge, SampleDesign, SampleItem
from judging.autojudge.services import invalid, label_scores, labels, pool_pairs
from judging.core.cache import cache_get, cache_set
from judging.core.errors import Conflict
from judging.core.roles import Account
from judging.evaluation.services import rankings
from judging.pools.models import PoolVersion

ESTIMATED_MEASURES = ("P@10", "R@10", "nDCG@10", "AP")
DesignKind = Literal["uniform", "stratified", "active"]
Allocation = Literal["neyman", "proportional"]


def _pool_of(hs: HumanSample) -> PoolVersion:
    """The pool a sample of pool documents was drawn from (a sample of answer items has none:
    ``autojudge.answer_samples`` reads those)."""
    if hs.pool is None:
        raise Conflict(f"sample {hs.pk} is of answer items ({hs.kind}), not of a pool")
    return hs.pool


def _pool_map(pool: PoolVersion) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for q, d in pool_pairs(pool):
        out.setdefault(q, []).append(d)
    return out


def _structure(judge: Judge, pool: PoolVersion) -> tuple[Any, dict[str, Any], list[int], int]:
    """The pool's structure over the campaign's runs, the runs' rankings, the judge's grade of
    every pool item in the structure's item order (0 where it gave none), and how many it
    lacked."""
    from metrics.sampling.structure import PoolStructure

    campaign = judge.campaign
    runs = {r.tag: rankings(r) for r in campaign.runs.order_by("tag")}
    if not runs:
        raise Conflict("the campaign has no runs to estimate")
    st = PoolStructure(runs, _pool_map(pool), threshold=campaign.relevance_threshold)
    graded = labels(judge)
    auto = [graded.get(item, 0) for item in st.items]
    missing = sum(1 for item in st.items if item not in graded)
    return st, runs, auto, missing


def sample_create(
    *,
    judge: Judge,
    pool: PoolVersion,
    design: str,
    budget: int,
    seed: int = 0,
    allocation: str = "neyman",
    created_by: Account | None = None,
) -> HumanSample:
    """Draw a human sample (or, for a design that needs one, its pilot slice) and queue it."""
    from metrics.sampling.designs import Design, pilot, sample

    if judge.campaign_id != pool.campaign_id:
        raise invalid("pool", "belongs to another campaign")
    if design not in SampleDesign.values:
        raise invalid("design", f"must be one of {', '.join(SampleDesign.values)}")
    st, _, auto, missing = _structure(judge, pool)
    try:
        d = Design(
            kind=cast(DesignKind, design),
            budget=int(budget),
            seed=int(seed),
            allocation=cast(Allocation, allocation),
        )
        if d.budget > len(auto):
            raise ValueError(f"the budget ({d.budget}) exceeds the pool ({len(auto)} documents)")
    except ValueError as exc:
        raise invalid("budget" if "budget" in str(exc) else "design", str(exc)) from None
    info: dict[str, Any] = {"allocation": allocation, "without_auto_grade": missing}
    with transaction.atomic():
        hs = HumanSample.objects.create(
            judge=judge,
            pool=pool,
            design=design,
            budget=d.budget,
            seed=d.seed,
            design_info=info,
            created_by=created_by,
        )
        if d.needs_pilot:
            first = [int(i) for i in pilot(auto, d)]
            _store_items(hs, st, first, {i: 1.0 for i in first}, {i: -1 for i in first})
            HumanSample.objects.filter(pk=hs.pk).update(design_info={**info, "phase": "pilot"})
        else:
            _store_full(hs, st, sample(auto, d))
            stored = HumanSample.objects.get(pk=hs.pk).design_info
            HumanSample.objects.filter(pk=hs.pk).update(design_info={**stored, "phase": "full"})
        hs.refresh_from_db()
    return hs


def _store_items(
    hs: HumanSample, st: Any, indices: list[int], pi: dict[int, float], strata: dict[int, int]
) -> None:
    topic_ids = dict(hs.judge.campaign.topics.values_list("qid", "id"))
    start = hs.items.count()
    SampleItem.objects.bulk_create(
        [
            SampleItem(
                sample=hs,
                topic_id=topic_ids[st.items[i][0]],
                docid=st.items[i][1],
                order=start + n + 1,
                pi=float(pi[i]),
                stratum=str(strata[i]),
            )
            for n, i in enumerate(indices)
        ],
        batch_size=2000,
        ignore_conflicts=True,
    )
    slots_first(
        version=_pool_of(hs), items=[(topic_ids[st.items[i][0]], st.items[i][1]) for i in indices]
    )


def _store_full(hs: HumanSample, st: Any, drawn: Any) -> None:
    """Store the drawn sample: every pool item's pi and stratum (the estimate needs all), and the
    sampled items not stored yet (the pilot's are)."""
    pi_map: dict[str, dict[str, float]] = {}
    strata_map: dict[str, dict[str, int]] = {}
    for i, (q, d) in enumerate(st.items):
        pi_map.setdefault(q, {})[d] = float(drawn.pi[i])
        strata_map.setdefault(q, {})[d] = int(drawn.strata[i])
    stored = set(hs.items.values_list("topic__qid", "docid"))
    todo = [int(i) for i in drawn.indices if st.items[int(i)] not in stored]
    _store_items(
        hs,
        st,
        todo,
        {i: float(drawn.pi[i]) for i in todo},
        {i: int(drawn.strata[i]) for i in todo},
    )
    HumanSample.objects.filter(pk=hs.pk).update(pi=pi_map)
    info = dict(HumanSample.objects.get(pk=hs.pk).design_info)
    info["strata"] = strata_map
    info["n_sampled"] = len(drawn.indices)
    HumanSample.objects.filter(pk=hs.pk).update(design_info=info)


def sample_human_grades(hs: HumanSample) -> dict[tuple[str, str], int]:
    """The people's current grades of the sampled documents graded so far."""
    grades = current_human_grades(hs.judge.campaign)
    items = hs.items.values_list("topic__qid", "docid")
    return {k: grades[k] for k in items if k in grades and grades[k] >= 0}


def sample_progress(
    hs: HumanSample, graded: dict[tuple[str, str], int] | None = None
) -> dict[str, Any]:
    """How many sampled documents are queued and graded (``graded``: the sample's grades when
    the caller has read them already)."""
    if graded is None:
        graded = sample_human_grades(hs)
    total = hs.items.count()
    return {
        "phase": hs.design_info.get("phase"),
        "queued": total,
        "graded": len(graded),
        "complete": total > 0 and len(graded) == total,
    }


def sample_advance(hs: HumanSample) -> HumanSample:
    """Draw the rest of a two-phase sample once people have graded its whole pilot slice."""
    from metrics.sampling.designs import Design, sample

    if hs.design_info.get("phase") != "pilot":
        raise Conflict("the sample is already drawn in full")
    grades = sample_human_grades(hs)
    progress = sample_progress(hs, grades)
    if not progress["complete"]:
        raise Conflict(
            f"{progress['queued'] - progress['graded']} of the pilot's {progress['queued']} "
            "documents are not graded yet"
        )
    st, _, auto, _ = _structure(hs.judge, _pool_of(hs))
    d = Design(
        kind=cast(DesignKind, hs.design),
        budget=hs.budget,
        seed=hs.seed,
        allocation=cast(Allocation, hs.design_info.get("allocation", "neyman")),
    )
    from metrics.sampling.designs import pilot

    first = [int(i) for i in pilot(auto, d)]
    first_grades = [grades[st.items[i]] for i in first]
    influence = weights = None
    if hs.design == SampleDesign.ACTIVE:
        # taken at the predictions the pilot calibrates (as the estimate will), not at the
        # judge's raw labels; on the scores when every pool document has one. The variance
        # weights keep every measure's predicted variance at or below the uniform design's
        influence, weights = st.active_weights(
            auto,
            pilot=first,
            pilot_grades=first_grades,
            groups=st.popularity(),
            score=_every_score(label_scores(hs.judge), st.items),
        )
    drawn = sample(
        auto,
        d,
        influence=influence,
        pilot_grades=first_grades,
        threshold=hs.judge.campaign.relevance_threshold,
        variance_weights=weights,
    )
    with transaction.atomic():
        _store_full(hs, st, drawn)
        info = dict(HumanSample.objects.get(pk=hs.pk).design_info)
        info["phase"] = "full"
        if hs.design == SampleDesign.ACTIVE:
            info["uniform_mix"] = drawn.mix
        HumanSample.objects.filter(pk=hs.pk).update(design_info=info)
    hs.refresh_from_db()
    return hs


def _every_score(
    scored: dict[tuple[str, str], float], items: Sequence[tuple[str, str]]
) -> list[float] | None:
    """The judge's raw score of each of ``items``, or None unless every one has a score (the
    calibration then keeps to the grades)."""
    out = [scored.get(item) for item in items]
    return None if any(x is None for x in out) else cast(list[float], out)


def estimate(hs: HumanSample, *, level: float = 0.95) -> dict[str, Any]:
    """The corrected estimates of every run's measures, with the automatic-labels-only value and
    the human-sample-alone estimate beside each; or, while the sample is not complete, only its
    progress (``{"ready": False, ...}``). Nothing is written."""
    from metrics.sampling.ppi import estimate_runs

    people = sample_human_grades(hs)
    progress = sample_progress(hs, people)
    out: dict[str, Any] = {
        "sample": hs.pk,
        "design": hs.design,
        "budget": hs.budget,
        "judge": hs.judge.describe(),
        "pool": _pool_of(hs).number,
        "progress": progress,
        "measures": list(ESTIMATED_MEASURES),
        "without_auto_grade": hs.design_info.get("without_auto_grade", 0),
    }
    if hs.design_info.get("phase") != "full" or not progress["complete"]:
        return {**out, "ready": False}
    campaign = hs.judge.campaign
    run_rows = list(campaign.runs.order_by("tag"))
    graded = labels(hs.judge)
    scored = label_scores(hs.judge)
    key = _estimate_key(hs, level, people, graded, [(r.pk, r.tag) for r in run_rows], scored)
    cached = cache_get(key)
    if cached is not None:
        return {**out, **cached}
    runs = {r.tag: rankings(r) for r in run_rows}
    pool_map = _pool_map(_pool_of(hs))
    # the judge's grade of every pool document (0 where it gave none, as the sample was drawn)
    auto_map = {q: {d: graded.get((q, d), 0) for d in ds} for q, ds in pool_map.items()}
    # the judge's raw scores calibrate the predictor when every pool document has one (an
    # embedding judge's similarity says more than the grade cut from it)
    score_map = None
    if _every_score(scored, [(q, d) for q, ds in pool_map.items() for d in ds]) is not None:
        score_map = {q: {d: scored[(q, d)] for d in ds} for q, ds in pool_map.items()}
    human: dict[str, dict[str, int]] = {}
    for (q, d), g in people.items():
        human.setdefault(q, {})[d] = g
    report = estimate_runs(
        runs,
        pool_map,
        auto_map,
        human,
        hs.pi,
        design=hs.design,
        measures=ESTIMATED_MEASURES,
        threshold=hs.judge.campaign.relevance_threshold,
        level=level,
        strata=hs.design_info.get("strata") if hs.design == SampleDesign.STRATIFIED else None,
        scores=score_map,
    )
    result = {"ready": True, **report.to_dict()}
    if settings.POOLJUDGE_AUTOJUDGE.estimate_cache_seconds > 0:
        cache_set(key, result, settings.POOLJUDGE_AUTOJUDGE.estimate_cache_seconds)
    return {**out, **result}


# bump when metrics.sampling.ppi's estimator changes, so that no figure computed by the old one is
# served
_ESTIMATOR_VERSION = "2026-12-03d"


def _estimate_key(
    hs: HumanSample,
    level: float,
    people: dict[tuple[str, str], int],
    graded: dict[tuple[str, str], int],
    runs: list[tuple[int, str]],
    scored: dict[tuple[str, str], float],
) -> str:
    """The cache key of a sample's estimate: a digest of all it rests on (the sample and its
    inclusion probabilities, the people's grades, the judge's labels, the runs (whose rankings
    never change once stored), the relevance threshold and the level)."""
    h = hashlib.sha256()
    threshold = hs.judge.campaign.relevance_threshold
    h.update(
        f"{_ESTIMATOR_VERSION}|{hs.pk}|{hs.judge_id}|{hs.pool_id}|{level!r}|{threshold}".encode()
    )
    h.update(repr(sorted(runs)).encode())
    h.update(repr(sorted(people.items())).encode())
    h.update(repr(sorted(graded.items())).encode())
    h.update(repr(sorted(scored.items())).encode())
    h.update(json.dumps([hs.design, hs.pi, hs.design_info], sort_keys=True).encode())
    return f"pooljudge:estimate:{h.hexdigest()}"
