"""Documents are imported."""

from __future__ import annotations

from django.db import transaction

from judging.assessments.queue import slots_text_loaded
from judging.campaigns.models import Campaign
from judging.campaigns.services import ImportSummary, documents_import
from judging.core import uploads
from judging.pools.services import pool_documents_text_arrived


def documents_imported(
    *,
    campaign: Campaign,
    data: uploads.Source,
    fmt: str | None = None,
    source: str | None = None,
) -> ImportSummary:
    """Store the documents (validated whole first), then let pooled documents whose text just
    arrived be served to annotators: their pool rows and judging slots are marked as having text.
    """
    with transaction.atomic():
        summary = documents_import(campaign=campaign, data=data, fmt=fmt, source=source)
        arrived = pool_documents_text_arrived(campaign=campaign)
        if arrived:
            slots_text_loaded(campaign=campaign, docids=arrived)
    return summary
