"""Documents are imported."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from judging.assessments.queue import slots_text_loaded
from judging.campaigns.models import Campaign, Document
from judging.campaigns.services import (
    ImportSummary,
    documents_import,
    documents_read_wanted,
    documents_store_new,
)
from judging.core import uploads
from judging.pools.models import PoolVersion
from judging.pools.selectors import missing_text_docids
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
        texts_arrived(campaign)
    return summary


def texts_arrived(campaign: Campaign) -> None:
    """Pooled items whose text just arrived (a document, a chunking's passages) are served."""
    arrived = pool_documents_text_arrived(campaign=campaign)
    if arrived:
        slots_text_loaded(campaign=campaign, docids=arrived)


# How many docids a summary names (the empty ones, the ones still missing); the counts are whole.
SHOWN_DOCIDS = 20


@dataclass
class MissingTextSummary:
    """An import of only the pooled documents that have no text: ``wanted`` documents had none,
    ``stored`` of them were found in the files (``empty``: stored, but their record has neither
    title nor text), ``still_missing`` were not in the files; ``read`` records were read and
    ``ignored`` of them (documents nobody waits for) were not stored."""

    wanted: int
    stored: int
    still_missing: int
    read: int
    ignored: int
    files: list[str]
    empty: list[str] = field(default_factory=list)
    empty_count: int = 0
    missing_docids: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "wanted": self.wanted,
            "stored": self.stored,
            "empty": self.empty_count,
            "empty_docids": self.empty,
            "still_missing": self.still_missing,
            "still_missing_docids": self.missing_docids,
            "read": self.read,
            "ignored": self.ignored,
            "files": self.files,
        }

    def sentence(self) -> str:
        """The summary in words, for the command and the page."""
        if not self.wanted:
            return "no pooled document is waiting for its text: the files were not read."
        text = (
            f"{self.stored} of {_n(self.wanted, 'document')} without text found and stored; "
            f"{self.still_missing} still missing; {self.ignored} of the "
            f"{_n(self.read, 'document')} read ignored (not waited for)"
        )
        if self.empty_count:
            text += (
                f"; {self.empty_count} stored empty (no title or text in the file: "
                f"{', '.join(self.empty[:SHOWN_DOCIDS])})"
            )
        return text + "."


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def missing_documents_imported(
    *,
    campaign: Campaign,
    sources: Sequence[tuple[uploads.Source, str]],
    fmt: str | None = None,
    version: PoolVersion | None = None,
) -> MissingTextSummary:
    """Import from collection files only the pooled documents that have no text (those of pool
    ``version``, or of any of the campaign's versions), then serve them: their pool rows and
    judging slots are marked as having text. Every other record of the files is ignored; the
    files are streamed, so memory follows the missing documents, not the collection.

    A document whose record has neither title nor text (Cranfield's 471 and 995) is stored as
    the collection gives it, and then served like any other: the judging page says it has no
    text, the annotator judges that. Keeping it waiting would wait for a text that does not
    exist; the summary names it so that the admin knows. When no document waits, the files
    are not read (nor checked).
    """
    wanted = set(missing_text_docids(campaign, version=version))
    # stored but not yet marked (imported while the pool was building): not wanted again
    ids = list(wanted)
    for i in range(0, len(ids), 5000):
        wanted.difference_update(
            Document.objects.filter(campaign=campaign, docid__in=ids[i : i + 5000]).values_list(
                "docid", flat=True
            )
        )
    if not wanted:  # nothing to look for: a collection is not read for nothing
        return MissingTextSummary(
            wanted=0,
            stored=0,
            still_missing=0,
            read=0,
            ignored=0,
            files=[name for _, name in sources],
        )
    found = documents_read_wanted(sources=sources, wanted=wanted, fmt=fmt)
    with transaction.atomic():
        stored = documents_store_new(campaign=campaign, records=found.records.values())
        texts_arrived(campaign)
    empty = [d.docid for d in stored if not d.title.strip() and not d.text.strip()]
    missing = sorted(wanted - set(found.records))
    return MissingTextSummary(
        wanted=len(wanted),
        stored=len(stored),
        still_missing=len(missing),
        read=found.read,
        ignored=found.read - len(stored),
        files=found.files,
        empty=empty[:SHOWN_DOCIDS],
        empty_count=len(empty),
        missing_docids=missing[:SHOWN_DOCIDS],
    )
