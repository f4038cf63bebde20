"""A qrels version is imported or published."""

from __future__ import annotations

from django.db import transaction

from judging.assessments.models import QrelsVersion
from judging.assessments.services import qrels_import, qrels_publish
from judging.campaigns.models import Campaign
from judging.core import uploads
from judging.core.roles import Account
from judging.evaluation.bias import bias_report_request, headline_measure
from judging.evaluation.reusability import reusability_request
from judging.evaluation.services import evaluations_after_qrels


def after_qrels(version: QrelsVersion) -> None:
    """Every number shown names its qrels version: evaluate every run against the new one and
    compute the campaign's default pool-bias report (AP, and its headline measure when that is
    another: ``evaluation.bias.headline_measure``) and the version's reusability report for
    it (tasks, after commit); a sampled version is evaluated only."""
    evaluations_after_qrels(version)
    if version.design:  # sampled: the bias analyses do not apply (``evaluation.bias``)
        return
    bias_report_request(campaign=version.campaign, qrels=version)
    headline = headline_measure(version.campaign)
    if headline != "AP":  # the page opens on the campaign's headline measure: have it ready
        bias_report_request(campaign=version.campaign, qrels=version, measure=headline)
    reusability_request(version=version)


def qrels_imported(
    *,
    campaign: Campaign,
    data: uploads.Source,
    source: str = "qrels",
    note: str = "",
    created_by: Account | None = None,
) -> QrelsVersion:
    """Store a TREC qrels file as the next version (``assessments.services.qrels_import``, same
    arguments and errors), then evaluate against it."""
    with transaction.atomic():
        version = qrels_import(
            campaign=campaign, data=data, source=source, note=note, created_by=created_by
        )
        after_qrels(version)
    return version


def qrels_published(
    *, campaign: Campaign, note: str = "", created_by: Account | None = None
) -> tuple[QrelsVersion, bool]:
    """Snapshot the judgments as the next version (``assessments.services.qrels_publish``);
    a new version is evaluated, an unchanged one (``created`` False) is not."""
    with transaction.atomic():
        version, created = qrels_publish(campaign=campaign, note=note, created_by=created_by)
        if created:
            after_qrels(version)
    return version, created
