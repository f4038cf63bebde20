"""Pool services: request a build (once), build it in a worker, compare versions.

``pool_request`` runs in the web request: it records a queued build (``judging.workflows``
sends it to a worker after commit); a second request while a build is pending gets the same
build back. ``pool_build`` runs in a Celery worker: it computes the pool outside any
transaction, reporting progress in short transactions, and commits the documents, the version
number and the state in one final transaction, so nothing partial is ever visible. It is safe
to run twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import DatabaseError, IntegrityError, transaction
from django.db.models import Max, Q
from django.utils import timezone

from judging.campaigns.models import Campaign, Document, Passage, RankedList, Run, RunAnswer, Topic
from judging.campaigns.passages import text_ids
from judging.core.bulk import insert_rows
from judging.core.errors import Conflict, InvalidInput
from judging.core.outbox import beating
from judging.core.roles import Account
from judging.pools.models import PENDING, PoolDocument, PoolSegments, PoolState, PoolVersion
from metrics.pooling.answers import answer_segments
from metrics.pooling.base import Strategy
from metrics.pooling.runs import topic_sort_key
from metrics.pooling.strategies import STRATEGIES, make_strategy
from metrics.problems import Problem

log = logging.getLogger(__name__)


class BuildBusy(Exception):
    """Another worker is building this version and was alive recently; ``retry_in`` seconds
    from now it is stale if it stops beating."""

    def __init__(self, pool_id: int, retry_in: float) -> None:
        super().__init__(pool_id)
        self.retry_in = retry_in


def _last_seen(version: PoolVersion) -> datetime:
    return version.heartbeat_at or version.started_at or version.created_at


def _stale(version: PoolVersion) -> bool:
    """A pending build nobody has touched for a while: its worker is gone (or never came)."""
    limit = timedelta(seconds=settings.POOLJUDGE_TASKS.stale_seconds)
    return timezone.now() - _last_seen(version) > limit


def pool_build_key(pool_id: int) -> str:
    """The outbox key of a version's build task (``core.outbox``)."""
    return f"build_pool:{pool_id}"


def pool_is_stale(version: PoolVersion) -> bool:
    """A build whose worker stopped beating for POOLJUDGE_STALE_SECONDS (it died)."""
    return version.state == PoolState.BUILDING and _stale(version)


def pool_stale_since(version: PoolVersion) -> datetime | None:
    """When a stale build's worker was last seen alive; None when the build is not stale."""
    return _last_seen(version) if pool_is_stale(version) else None


def _strategy_for(
    name: str, params: dict[str, Any], runs: Sequence[Run]
) -> tuple[Strategy, dict[str, Any]]:
    """Instantiate the strategy; per-group priority takes groups and priorities from the runs."""
    args = dict(params)
    if name == "depth" and args.get("per_group") is not None:
        args["groups"] = {r.tag: r.group or r.tag for r in runs}
        args["priority"] = {r.tag: r.priority for r in runs}
    try:
        return make_strategy(name, **args), args
    except ValueError as exc:
        raise InvalidInput(
            "the pooling strategy is not valid", [Problem.at("params", str(exc))]
        ) from None


def strategy_for_version(version: PoolVersion) -> Strategy:
    """The strategy object a built version was made with (the judging queue asks it)."""
    strategy, _ = _strategy_for(version.strategy, version.params, list(version.runs.all()))
    return strategy


def pool_request(
    *,
    campaign: Campaign,
    strategy: str | None = None,
    depth: int | None = None,
    budget: int | None = None,
    runs: Iterable[Run] | None = None,
    params: dict[str, Any] | None = None,
    segments: str | None = None,
    requested_by: Account | None = None,
) -> tuple[PoolVersion, bool]:
    """Ask for the next pool version of ``campaign``; returns ``(version, created)``.

    Defaults come from the campaign (strategy, depth, budget) and its pooled runs; ``segments``
    (``PoolSegments``, default ``ranked``) says what answer runs contribute. While a build is
    queued or running, asking again returns that build (``created`` False) instead of starting
    a second one. Sending the build to a worker is the caller's (``workflows.pool_requested``).
    """
    strategy = strategy or campaign.pool_strategy
    depth = depth or campaign.pool_depth
    budget = budget if budget is not None else campaign.pool_budget
    segments = segments or PoolSegments.RANKED
    params = dict(params or {})
    problems = []
    if strategy not in STRATEGIES:
        problems.append(
            Problem.at("strategy", f"unknown strategy {strategy!r}; known: {', '.join(STRATEGIES)}")
        )
    if segments not in PoolSegments.values:
        known = ", ".join(PoolSegments.values)
        problems.append(Problem.at("segments", f"unknown segments {segments!r}; known: {known}"))
    if depth < 1:
        problems.append(Problem.at("depth", "depth must be at least 1"))
    if budget is not None and budget < 1:
        problems.append(Problem.at("budget", "budget must be at least 1"))
    chosen = list(runs) if runs is not None else list(campaign.runs.filter(pooled=True))
    foreign = [r.tag for r in chosen if r.campaign_id != campaign.pk]
    if foreign:
        problems.append(Problem.at("runs", f"runs of another campaign: {', '.join(foreign)}"))
    if not chosen:
        problems.append(Problem.at("runs", "no runs to pool (mark runs as pooled or list them)"))
    if problems:
        raise InvalidInput("the pool request is not valid", problems)
    strat, _ = _strategy_for(strategy, params, chosen)
    tags = strat.contributing(r.tag for r in chosen)
    _check_segments(segments, strat, [r for r in chosen if r.tag in set(tags)])

    with transaction.atomic():
        # Serialise requests per campaign: two triggers at once produce one build.
        Campaign.objects.select_for_update().get(pk=campaign.pk)
        pending = PoolVersion.objects.filter(campaign=campaign, state__in=PENDING).first()
        if pending is not None:
            return pending, False
        try:
            with transaction.atomic():
                version = PoolVersion.objects.create(
                    campaign=campaign,
                    strategy=strategy,
                    params=params,
                    depth=depth,
                    budget=budget,
                    segments=segments,
                    adaptive=strat.adaptive,
                    run_tags=tags,
                    requested_by=requested_by,
                )
        except IntegrityError:  # a concurrent request won the race (backstop for SQLite)
            pending = PoolVersion.objects.get(campaign=campaign, state__in=PENDING)
            return pending, False
        version.runs.set([r for r in chosen if r.tag in set(tags)])
    return version, True


def _check_segments(segments: str, strategy: Strategy, runs: Sequence[Run]) -> None:
    """A restriction to what answers received or cite needs an answer run among the
    contributing runs (else there is nothing to restrict), and a pool that is not a sample (a
    sample's inclusion probabilities, by rank over the restricted lists, would not describe the
    runs' ranked lists that infAP and statAP estimate from)."""
    if segments == PoolSegments.RANKED:
        return
    if hasattr(strategy, "universe"):
        raise InvalidInput(
            "the pool request is not valid",
            [
                Problem.at(
                    "segments",
                    f"segments {segments!r} does not apply to the sampling strategy "
                    f"{strategy.name!r}: its estimates need the runs' ranked lists; use ranked",
                )
            ],
        )
    if not RunAnswer.objects.filter(run__in=runs).exists():
        raise InvalidInput(
            "the pool request is not valid",
            [
                Problem.at(
                    "segments",
                    f"segments {segments!r} restricts answer runs to what their answers "
                    "received or cite, but none of the contributing runs is an answer run: "
                    "nothing to restrict; use ranked",
                )
            ],
        )


JudgedDocuments = Callable[[Campaign], dict[str, set[str]]]


def pool_build(
    *,
    pool_id: int,
    judged: JudgedDocuments,
    on_built: Callable[..., object],
) -> PoolVersion | None:
    """Build a requested pool version (the Celery task's body). Safe to run twice.

    ``judged(campaign)`` says which documents were ever judged (qid -> docids): those are pooled
    but not queued again. ``on_built(version=...)`` runs inside the final transaction, so the
    judging queue's slots commit together with the version. Both come from the layer above
    (``workflows.pool_built``): pools do not import the judging queue.

    Returns the version when this call built it, None when there was nothing to do (already
    built or failed, or another worker is building it and is alive).
    """
    with transaction.atomic():
        version = PoolVersion.objects.select_for_update().filter(pk=pool_id).first()
        if version is None or version.state not in PENDING:
            return None
        if version.state == PoolState.BUILDING and not _stale(version):
            # another worker is on it; look again when it would be stale if it died now
            limit = timedelta(seconds=settings.POOLJUDGE_TASKS.stale_seconds)
            wait = (_last_seen(version) + limit - timezone.now()).total_seconds()
            raise BuildBusy(pool_id, retry_in=max(1.0, wait + 1.0))
        version.state = PoolState.BUILDING
        version.attempts += 1
        version.started_at = version.heartbeat_at = timezone.now()
        version.processed_topics = version.processed_documents = 0
        version.error = ""
        version.save()
    attempt = version.attempts

    def beat() -> None:  # alive, whatever the progress: a slow topic is not a dead worker
        PoolVersion.objects.filter(pk=pool_id, attempts=attempt, state=PoolState.BUILDING).update(
            heartbeat_at=timezone.now()
        )

    try:
        with beating(beat):
            return _build(version, attempt, judged, on_built)
    except DatabaseError:
        raise  # transient: the task retries; the version stays pending
    except Exception as exc:
        log.exception("pool build %s failed", pool_id)
        PoolVersion.objects.filter(pk=pool_id, attempts=attempt).update(
            state=PoolState.FAILED,
            error=f"{type(exc).__name__}: {exc}",
            finished_at=timezone.now(),
        )
        return None


def pool_rankings(
    version: PoolVersion, *, topic: Topic | None = None
) -> dict[str, dict[str, list[str]]]:
    """run tag -> qid -> the list the version pools from (every topic, or ``topic`` alone).

    A run's ranked list cut to the version's depth; under ``segments`` ``received`` or
    ``cited``, a topic an answer run answered takes its answer's segments instead
    (``metrics.pooling.answers``), whole: the answer already bounds them (TREC RAG allows 20 or
    100 references), and a depth cut would make ``received`` the ranked list again. The build
    and the judging queue (an adaptive strategy, at lease time) read the same lists."""
    depth = version.depth
    runs: dict[str, dict[str, list[str]]] = {tag: {} for tag in version.run_tags}
    mine: dict[str, Any] = {"run__campaign": version.campaign_id, "run__tag__in": version.run_tags}
    if topic is not None:
        mine["topic"] = topic
    rows = RankedList.objects.filter(**mine).values_list("run__tag", "topic__qid", "docids")
    for tag, qid, docids in rows.iterator(chunk_size=200):
        runs[tag][qid] = docids.split("\n", depth)[:depth]
    if version.segments != PoolSegments.RANKED:
        answers = RunAnswer.objects.filter(**mine).values_list(
            "run__tag", "topic__qid", "references", "sentences"
        )
        for tag, qid, references, sentences in answers.iterator(chunk_size=200):
            cites = (s["citations"] for s in sentences)
            runs[tag][qid] = answer_segments(version.segments, references, cites)
    return runs


def _load_rankings(version: PoolVersion) -> tuple[dict[str, dict[str, list[str]]], list[str]]:
    """``pool_rankings`` of every topic, and the topics to pool (campaign order): those some
    run contributes a document to."""
    runs = pool_rankings(version)
    qids = {qid for by_topic in runs.values() for qid, docids in by_topic.items() if docids}
    return runs, sorted(qids, key=topic_sort_key)


def _progress(version: PoolVersion, attempt: int, **fields: Any) -> bool:
    """Record progress in its own short transaction; False when another attempt took over."""
    return bool(
        PoolVersion.objects.filter(pk=version.pk, attempts=attempt).update(
            heartbeat_at=timezone.now(), **fields
        )
    )


def _build(
    version: PoolVersion,
    attempt: int,
    judged_documents: JudgedDocuments,
    on_built: Callable[..., object],
) -> PoolVersion | None:
    campaign = version.campaign
    runs_models = list(version.runs.all())
    strategy, _ = _strategy_for(version.strategy, version.params, runs_models)
    runs, qids = _load_rankings(version)
    if not _progress(version, attempt, total_topics=len(qids)):
        return None
    topic_ids = dict(campaign.topics.values_list("qid", "id"))
    judged = judged_documents(campaign)
    with_text = text_ids(campaign)  # documents, and passages of a chunking
    base = PoolVersion.objects.built().filter(campaign=campaign).order_by("-number").first()
    before: dict[str, set[str]] = {}
    if base is not None:
        for qid, docid in (
            PoolDocument.objects.filter(version=base)
            .values_list("topic__qid", "docid")
            .iterator(chunk_size=10_000)
        ):
            before.setdefault(qid, set()).add(docid)

    rows: list[tuple[Any, ...]] = []
    processed = 0  # documents so far
    every = max(1, len(qids) // 50)
    for i, qid in enumerate(qids, 1):
        old = before.get(qid, set())
        seen = judged.get(qid, set())
        for position, (docid, pi, stratum, sampled) in enumerate(
            _topic_documents(strategy, version, runs, qid, seen), 1
        ):
            rows.append(
                (
                    topic_ids[qid],
                    docid,
                    position,
                    docid not in old,
                    sampled and docid not in seen,
                    docid in with_text,
                    pi,
                    stratum,
                    sampled,
                )
            )
        processed = len(rows)
        if (i % every == 0 or i == len(qids)) and not _progress(
            version, attempt, processed_topics=i, processed_documents=processed
        ):
            return None

    with transaction.atomic():
        current = PoolVersion.objects.select_for_update().get(pk=version.pk)
        if current.state != PoolState.BUILDING or current.attempts != attempt:
            return None  # another attempt finished or took over
        top = PoolVersion.objects.filter(campaign=campaign).aggregate(n=Max("number"))["n"]
        insert_rows(
            PoolDocument,
            (
                "version_id",
                "topic_id",
                "docid",
                "position",
                "added",
                "to_judge",
                "has_text",
                "inclusion",
                "stratum",
                "sampled",
            ),
            ((version.pk, *row) for row in rows),
        )
        current.number = (top or 0) + 1
        current.base = base
        current.state = PoolState.BUILT
        current.finished_at = current.heartbeat_at = timezone.now()
        current.processed_topics = len(qids)
        current.processed_documents = len(rows)
        current.num_documents = len(rows)
        current.num_added = sum(1 for r in rows if r[3])
        current.num_to_judge = sum(1 for r in rows if r[4])
        current.num_missing_text = sum(1 for r in rows if not r[5] and r[8])  # drawn ones
        current.save()
        on_built(version=current)
    return current


def _topic_documents(
    strategy: Any,
    version: PoolVersion,
    runs: dict[str, dict[str, list[str]]],
    qid: str,
    judged: set[str],
) -> list[tuple[str, float | None, str, bool]]:
    """One topic's pooled documents in judging order: (docid, inclusion, stratum, sampled).

    A sampled pool (a strategy with ``universe``, ``stratified``) lists the drawn documents,
    then those judged before (its certainty stratum), then those not sampled; the others list
    their pool with no stratum, every document to be judged. The lists are cut already
    (``pool_rankings``): the strategy is given the longest as its depth, which cuts nothing."""
    depth = max([version.depth, *(len(r[qid]) for r in runs.values() if qid in r)])
    if hasattr(strategy, "universe"):
        drawn, members = strategy.universe(runs, depth=depth, topic=qid, judged=judged)
        if version.budget is not None and len(drawn) > version.budget:
            raise ValueError(
                f"topic {qid}: the stratified sample has {len(drawn)} documents, more than the "
                f"budget {version.budget}; cutting it would falsify the inclusion "
                "probabilities: lower the sampling rates instead"
            )
        rest = sorted(
            (m.stratum != "0", m.stratum, d) for d, m in members.items() if d not in drawn
        )
        order = [*drawn, *(d for _, _, d in rest)]
        return [(d, members[d].pi, members[d].stratum, members[d].sampled) for d in order]
    pool = strategy.pool(
        runs,
        depth=depth,
        topics=[qid],
        budget=version.budget,
        relevance_level=version.campaign.relevance_threshold,
    )
    probs = pool.inclusion.get(qid, {})
    return [(d, probs.get(d), "", True) for d in pool.topics.get(qid, ())]


def pool_diff(*, version: PoolVersion, against: PoolVersion | None) -> dict[str, Any]:
    """Per topic, the documents added and removed between ``against`` and ``version``."""

    def docs(v: PoolVersion | None) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        if v is not None:
            for qid, docid in PoolDocument.objects.filter(version=v).values_list(
                "topic__qid", "docid"
            ):
                out.setdefault(qid, set()).add(docid)
        return out

    new, old = docs(version), docs(against)
    topics = {}
    for qid in sorted(set(new) | set(old), key=topic_sort_key):
        added = sorted(new.get(qid, set()) - old.get(qid, set()))
        removed = sorted(old.get(qid, set()) - new.get(qid, set()))
        if added or removed:
            topics[qid] = {"added": added, "removed": removed}
    return {
        "version": version.number,
        "against": against.number if against else None,
        "added": sum(len(t["added"]) for t in topics.values()),
        "removed": sum(len(t["removed"]) for t in topics.values()),
        "topics": topics,
    }


def pool_cancel(*, version: PoolVersion) -> None:
    """Give up a pending build (e.g. one whose worker died), so a new one can be requested."""
    if version.state not in PENDING:
        raise Conflict(f"pool build {version.pk} is {version.state}; only pending builds cancel")
    PoolVersion.objects.filter(pk=version.pk, state__in=PENDING).update(
        state=PoolState.FAILED, error="cancelled", finished_at=timezone.now()
    )


def pool_documents_text_arrived(*, campaign: Campaign) -> list[str]:
    """Pooled documents that had no text and now have a document: mark them servable and
    return their docids (the judging queue opens their slots)."""
    arrived = list(
        PoolDocument.objects.filter(version__campaign=campaign, has_text=False)
        .filter(
            Q(docid__in=Document.objects.filter(campaign=campaign).values("docid"))
            | Q(docid__in=Passage.objects.filter(campaign=campaign).values("passage_id"))
        )
        .values_list("docid", flat=True)
        .distinct()
    )
    if arrived:
        PoolDocument.objects.filter(version__campaign=campaign, docid__in=arrived).update(
            has_text=True
        )
    return arrived
