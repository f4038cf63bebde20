"""Reads of pool builds that the API and the admin share."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.db.models import Count, Q, QuerySet

from judging.campaigns.models import Campaign, Run, RunPooling
from judging.core import outbox
from judging.pools.models import PoolDocument, PoolState, PoolVersion
from judging.pools.services import pool_build_key, pool_stale_since


def pool_status(version: PoolVersion) -> dict[str, Any]:
    """What a build is doing, honestly: ``status`` is pending (its task not yet sent to a
    worker, e.g. Redis is down), queued, building, stale (its worker stopped beating: lost
    since ``since``; the sweep takes it over), built or failed; ``detail`` says it in words."""
    since = None
    if version.state == PoolState.BUILT:
        state, detail = "built", "built"
    elif version.state == PoolState.FAILED:
        state, detail = "failed", f"failed: {version.error}" if version.error else "failed"
    elif version.state == PoolState.BUILDING:
        since = pool_stale_since(version)
        if since is not None:
            state, detail = "stale", outbox.describe("stale", since)
        else:
            state, detail = "building", f"building ({version.percent:.0f}%)"
    else:
        task = outbox.task_view(pool_build_key(version.pk))
        if task is not None and task["status"] in ("pending", "stale"):
            state, detail, since = task["status"], task["detail"], task["since"]
        else:
            state, detail = "queued", "queued"
    return {"status": state, "detail": detail, "since": since}


def new_runs_pooled(campaign: Campaign) -> tuple[bool, str]:
    """Whether a run submitted now is pooled when nobody says (``Campaign.run_pooling``), and
    why, in words for the run's page: auto is open until the campaign's first pool version and
    closed from then on."""
    if campaign.run_pooling == RunPooling.OPEN:
        return True, "the campaign's pooling is open"
    if campaign.run_pooling == RunPooling.CLOSED:
        return False, "the campaign's pooling is closed"
    first = PoolVersion.objects.filter(campaign=campaign).order_by("pk").first()
    if first is None:
        return True, "no pool version exists yet, so the campaign's pooling is still open"
    name = f"version {first.number}" if first.number else f"build #{first.pk}"
    return False, f"the campaign's pooling closed with its first pool ({name})"


# --- documents without text -------------------------------------------------------------------


def missing_text_counts(campaign: Campaign) -> list[dict[str, Any]]:
    """Per built pool version of the campaign (newest first): how many of its pooled documents
    still have no text now (``documents``: distinct docids; ``pairs``: (topic, document) rows;
    ``to_judge``: rows queued for judging). Live counts: they fall as texts are imported, unlike
    the version's ``num_missing_text``, which is the figure at build time."""
    versions = PoolVersion.objects.filter(campaign=campaign).built().order_by("-number")
    counts = {
        row["version_id"]: row
        for row in PoolDocument.objects.filter(version__campaign=campaign, has_text=False)
        .values("version_id")
        .annotate(
            documents=Count("docid", distinct=True),
            pairs=Count("pk"),
            to_judge=Count("pk", filter=Q(to_judge=True)),
        )
    }
    out = []
    for v in versions:
        row = counts.get(v.pk, {})
        out.append(
            {
                "version": v,
                "number": v.number,
                "documents": row.get("documents", 0),
                "pairs": row.get("pairs", 0),
                "to_judge": row.get("to_judge", 0),
                "at_build": v.num_missing_text,
            }
        )
    return out


def missing_text_documents(version: PoolVersion) -> QuerySet[PoolDocument, dict[str, Any]]:
    """The pool version's documents without text, one row per docid in docid order: ``docid``
    and ``count`` (how many of the version's topics pool it). Page it, then fill in the topics
    of a page's rows with :func:`missing_text_topics`."""
    return (
        PoolDocument.objects.filter(version=version, has_text=False)
        .values("docid")
        .annotate(count=Count("pk"))
        .order_by("docid")
    )


def missing_text_topics(version: PoolVersion, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` of :func:`missing_text_documents` with ``topics``: the qids each document is
    pooled for in the version, sorted (one query for the page)."""
    docids = [r["docid"] for r in rows]
    topics: dict[str, list[str]] = {d: [] for d in docids}
    for docid, qid in PoolDocument.objects.filter(
        version=version, has_text=False, docid__in=docids
    ).values_list("docid", "topic__qid"):
        topics[docid].append(qid)
    return [
        {"docid": r["docid"], "topics": sorted(topics[r["docid"]]), "count": r["count"]}
        for r in rows
    ]


def missing_text_docids(campaign: Campaign, *, version: PoolVersion | None = None) -> Iterator[str]:
    """Every docid without text, each once in docid order, pooled in ``version`` or (without
    one) in any pool version of the campaign: the download, and the set an import keeps."""
    docs = PoolDocument.objects.filter(has_text=False)
    docs = (
        docs.filter(version=version)
        if version is not None
        else docs.filter(version__campaign=campaign)
    )
    return (
        docs.values_list("docid", flat=True)
        .order_by("docid")
        .distinct()
        .iterator(chunk_size=10_000)
    )


def missing_text_filename(version: PoolVersion) -> str:
    """The name of the download of the version's missing docids."""
    return f"{version.campaign.name}-pool-v{version.number}-missing-text.txt"


def pool_versions_of_run(run: Run) -> list[PoolVersion]:
    """The built pool versions the run contributed to, oldest first."""
    return list(PoolVersion.objects.built().filter(runs=run).order_by("number"))
