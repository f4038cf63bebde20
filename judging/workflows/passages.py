"""A chunking is made (derived by a chunker or imported), and a qrels version is carried to it
or taken to document level.

A version derived from another (carried, taken to documents, or a carried version with its
holes judged) is evaluated against at once, like any version; the pooling-bias and
reusability reports are not asked for: they leave each pooled run's group out of the pool its
judgments came from, and a derived version's labels did not come from a pool of these runs. They
are still computed when asked for (the bias page's button, the API)."""

from __future__ import annotations

from django.db import transaction

from judging.assessments.carryover import qrels_carry, qrels_publish_onto, qrels_to_documents
from judging.assessments.models import QrelsVersion
from judging.campaigns.models import Campaign, Chunking
from judging.campaigns.passages import chunking_derive, passages_import
from judging.core import uploads
from judging.core.errors import InvalidInput
from judging.core.roles import Account
from judging.evaluation.services import evaluations_after_qrels
from judging.workflows.documents import texts_arrived
from metrics.problems import Problem


def chunking_made(
    *,
    campaign: Campaign,
    name: str,
    spec: str | None = None,
    data: uploads.Source | None = None,
    source: str | None = None,
    created_by: Account | None = None,
) -> Chunking:
    """Store a chunking, derived by the chunker ``spec`` or imported from ``data`` (one of the
    two), then open the judging slots of pooled passages that were waiting for their text."""
    if (spec is None) == (data is None):
        raise InvalidInput(
            "a chunking is derived by a chunker or imported from a file",
            [Problem.at("spec", "give a chunker (e.g. fixed(size=500,overlap=100)) or a file")],
        )
    with transaction.atomic():
        if spec is not None:
            chunking = chunking_derive(
                campaign=campaign, name=name, spec=spec, created_by=created_by
            )
        else:
            assert data is not None
            chunking = passages_import(
                campaign=campaign, name=name, data=data, source=source, created_by=created_by
            )
        texts_arrived(campaign)
    return chunking


def qrels_carried(
    *,
    version: QrelsVersion,
    chunking: Chunking,
    min_share: float = 0.5,
    created_by: Account | None = None,
) -> QrelsVersion:
    """``version`` carried to ``chunking`` as the next version, then evaluated against."""
    with transaction.atomic():
        derived = qrels_carry(
            version=version, chunking=chunking, min_share=min_share, created_by=created_by
        )
        evaluations_after_qrels(derived)
    return derived


def qrels_documented(*, version: QrelsVersion, created_by: Account | None = None) -> QrelsVersion:
    """``version``'s passages taken to their documents as the next version, then evaluated."""
    with transaction.atomic():
        derived = qrels_to_documents(version=version, created_by=created_by)
        evaluations_after_qrels(derived)
    return derived


def qrels_published_onto(
    *, base: QrelsVersion, note: str = "", created_by: Account | None = None
) -> QrelsVersion:
    """The judgments of a carried version's passages published onto it (``assessments.
    carryover.qrels_publish_onto``), then evaluated against."""
    with transaction.atomic():
        version = qrels_publish_onto(base=base, note=note, created_by=created_by)
        evaluations_after_qrels(version)
    return version
