"""Stored evaluations (per run and qrels version), pool-bias reports and reusability reports.

Every stored number carries the qrels version it was computed against. Results are computed by
jobs (``judging.core.jobs``; this app's entries: ``evaluation.jobs``) and never recomputed when
a row for the same inputs exists. Each row links to its job, which holds where the computation
stands (pending, queued, running, stale, done, failed), its error, when and how long.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from django.conf import settings
from django.db import models

from judging.assessments.models import QrelsVersion
from judging.campaigns.models import TOPIC_SPEC_MAX_LENGTH, Campaign, Run
from judging.core.models import Job


def measures_key(names: Iterable[str]) -> str:
    """The stored key of a set of measures: the names sorted, comma-separated."""
    return ",".join(sorted(names))


class JobResult(models.Model):
    """What every stored result has: its job (the lifecycle: state, error, when and how long),
    read through these properties as before; ``state`` is the job's outcome (pending, done or
    failed: ``Job.outcome``)."""

    job = models.OneToOneField(Job, on_delete=models.CASCADE, related_name="%(class)s")

    class Meta:
        abstract = True

    @property
    def state(self) -> str:
        return self.job.outcome

    @property
    def error(self) -> str:
        return self.job.error

    @property
    def computed_at(self) -> datetime | None:
        return self.job.computed_at

    @property
    def seconds(self) -> float | None:
        return self.job.seconds


class EvalMode(models.TextChoices):
    HONEST = "honest", "Honest default"
    TREC_EVAL = "trec_eval", "trec_eval-compatible"


class Evaluation(JobResult):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="evaluations")
    qrels = models.ForeignKey(QrelsVersion, on_delete=models.CASCADE, related_name="evaluations")
    mode = models.CharField(max_length=10, choices=EvalMode.choices, default=EvalMode.HONEST)
    measures = models.JSONField(help_text="Measure names, in display order.")
    measures_key = models.CharField(max_length=500, help_text="Sorted measure names.")
    result = models.JSONField(
        default=dict, blank=True, help_text="Aggregates, CIs, treatments, per-query values."
    )
    summary = models.JSONField(
        default=dict,
        blank=True,
        help_text="What a leaderboard shows of the result (measures, n_queries, "
        "excluded_summary), kept apart so that a board of many runs does not read every "
        "topic's values.",
    )
    slices = models.JSONField(default=dict, blank=True, help_text="Aggregates per topic tag.")
    curve = models.JSONField(default=dict, blank=True, help_text="Recall@k curve and ceiling.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["run", "qrels", "mode", "measures_key"], name="evaluation_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.run} on qrels v{self.qrels.number} ({self.mode})"


# The longest normalised topic spec stored in a report's key (bytes, as UTF-8).
TOPICS_MAX_LENGTH = TOPIC_SPEC_MAX_LENGTH


class BiasKind(models.TextChoices):
    LOO_RUN = "loo_run", "Leave one run out"
    LOO_GROUP = "loo_group", "Leave one group out"


class StoredReport(JobResult):
    """What every stored report has: its job and its result (stored by its job's entry)."""

    result = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        abstract = True


class BiasReport(StoredReport):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="bias_reports")
    qrels = models.ForeignKey(QrelsVersion, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=10, choices=BiasKind.choices, default=BiasKind.LOO_RUN)
    measure = models.CharField(max_length=40)
    depth = models.PositiveIntegerField()
    topics = models.CharField(
        max_length=TOPICS_MAX_LENGTH,
        blank=True,
        default="",
        help_text="The topics analysed, as a normalised topic spec ('1-5,9'); empty: all.",
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Who asked for the report (empty: computed after a publish or by a command); "
        "new reports per user and hour are limited.",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "qrels", "kind", "measure", "depth", "topics"],
                name="biasreport_unique_topics",
            ),
        ]
        indexes = [
            models.Index(fields=["requested_by", "created_at"], name="biasreport_requester_time"),
        ]

    def __str__(self) -> str:
        return (
            f"{self.campaign} {self.kind} {self.measure}@{self.depth} (qrels v{self.qrels.number})"
        )


class Reusability(StoredReport):
    """How reusable the pool behind one qrels version is for a system that did not build it
    (``metrics.bias.reusability``): computed by a task when the version is imported or published, or
    on request for a version stored before reports existed."""

    qrels = models.OneToOneField(QrelsVersion, on_delete=models.CASCADE, related_name="reusability")
    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="reusability_reports"
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Who asked for the report (empty: computed after a publish or by a command); "
        "it counts against the same hourly allowance as bias reports.",
    )

    class Meta:
        verbose_name = "reusability report"
        indexes = [
            models.Index(fields=["requested_by", "created_at"], name="reusability_requester_time"),
        ]

    def __str__(self) -> str:
        return f"{self.campaign} reusability (qrels v{self.qrels.number})"


class BiasPart(StoredReport):
    """One analysis of a bias report (``evaluation.bias``: leave-one-out, the estimators,
    coverage, one pooling strategy's efficiency, before/after), computed by a job of its own, a
    part of the report's job (``core.jobs``): the parts of a report run on as many workers as
    there are, and the report is assembled from the stored parts when the last one is stored. A
    part that failed keeps its error in its job."""

    report = models.ForeignKey(BiasReport, on_delete=models.CASCADE, related_name="parts")
    name = models.CharField(max_length=40)
    runs = models.JSONField(
        default=list,
        blank=True,
        help_text="Ids of the runs analysed: the campaign's when the report's parts were first "
        "recorded, so that every part (and one computed again) sees the same runs.",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["report", "name"], name="biaspart_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.report} part {self.name}"


class RunPenalty(StoredReport):
    """The penalty estimators' figures for one run against a qrels version whose bias report was
    computed without it (it arrived later): the campaign's validation on that version, with this
    run among the runs not pooled (``evaluation.late``)."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="penalties")
    qrels = models.ForeignKey(QrelsVersion, on_delete=models.CASCADE, related_name="+")
    measure = models.CharField(max_length=40)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "qrels", "measure"], name="run_penalty_unique")
        ]

    def __str__(self) -> str:
        return f"penalty of {self.run} on qrels v{self.qrels.number} ({self.measure})"
