"""A pool version is requested, then built by a worker."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from django.db import transaction

from judging.assessments.queue import slots_enqueue
from judging.assessments.selectors import judged_documents
from judging.campaigns.models import Campaign, Run
from judging.core import outbox
from judging.core.errors import DomainError
from judging.core.roles import Account
from judging.pools.models import PoolVersion
from judging.pools.selectors import missing_text_docids
from judging.pools.services import pool_build, pool_build_key, pool_request
from judging.workflows.documents import missing_documents_imported
from judging.workflows.irds_source import collection_from_ir_datasets

BUILD_TASK = "judging.workflows.tasks.build_pool"
IRDS_PREFIX = "ir_datasets:"

log = logging.getLogger(__name__)


def send_build(pool_id: int) -> None:
    """Record the build's task in the current transaction (the outbox sends it after commit)."""
    outbox.enqueue(BUILD_TASK, pool_id, key=pool_build_key(pool_id))


def pool_requested(
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
    """Ask for the next pool version (``pools.services.pool_request``, same arguments and
    errors) and record its build task with it (sent after commit; with the broker down it stays
    pending and the sweep sends it). A request while a build is pending returns that build; if
    it has no live task (its worker died, or its tasks gave up) a new task takes it over
    (building is idempotent)."""
    with transaction.atomic():
        version, created = pool_request(
            campaign=campaign,
            strategy=strategy,
            depth=depth,
            budget=budget,
            runs=runs,
            params=params,
            segments=segments,
            requested_by=requested_by,
        )
        if created or not outbox.is_live(pool_build_key(version.pk)):
            send_build(version.pk)
    return version, created


def pool_built(*, pool_id: int) -> PoolVersion | None:
    """The worker's side: build the version and queue its never-judged documents for judging.

    Pools sit below the judging queue, so the build is handed what it needs from it: which
    documents were ever judged, and the step that opens slots for the new version's documents,
    which runs in the build's final transaction (a built version always has its slots).
    """
    version = pool_build(pool_id=pool_id, judged=judged_documents, on_built=slots_enqueue)
    if version is not None and version.campaign.document_source.startswith(IRDS_PREFIX):
        pooled_texts_fetched(version=version)
    return version


def pooled_texts_fetched(*, version: PoolVersion) -> int:
    """Read the text of the version's pooled documents that have none from the campaign's
    ir_datasets source (its local cache, through the docstore: only these documents are read)
    and store them, so they are served. Returns how many were stored. A source that cannot be
    read (ir_datasets not installed here, the dataset not in this machine's cache) leaves them
    waiting, listed on the pool's missing-text page, and is logged: the pool itself is built."""
    campaign = version.campaign
    dataset_id = campaign.document_source[len(IRDS_PREFIX) :]
    wanted = list(missing_text_docids(campaign, version=version))
    if not wanted:
        return 0
    try:
        collection = collection_from_ir_datasets(dataset_id)
        data = collection.documents_jsonl(wanted)
        summary = missing_documents_imported(
            campaign=campaign, sources=[(data, collection.source)], fmt="jsonl", version=version
        )
    except DomainError as exc:
        log.warning(
            "pool %s of campaign %r: the text of %d pooled documents could not be read from %s: %s",
            version.pk,
            campaign.name,
            len(wanted),
            campaign.document_source,
            exc.message,
        )
        return 0
    return summary.stored
