"""Campaigns and what they are made of: topics, documents, submitted runs and their entries."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

if TYPE_CHECKING:
    from judging.core.roles import UserLike


def default_scale() -> list[dict[str, Any]]:
    return [
        {"grade": 0, "label": "Not relevant"},
        {"grade": 1, "label": "Partially relevant"},
        {"grade": 2, "label": "Relevant"},
        {"grade": 3, "label": "Highly relevant"},
    ]


def default_measures() -> list[str]:
    return ["R@50", "nDCG@5", "RR@10", "AP", "P@10", "Bpref", "Judged@10"]


class UnknownTopicPolicy(models.TextChoices):
    REJECT = "reject", "Reject the run (every unknown topic is a problem)"
    IGNORE = "ignore", "Drop lines for unknown topics and say how many"


class CampaignQuerySet(models.QuerySet["Campaign"]):
    def visible_to(self, user: UserLike) -> CampaignQuerySet:
        from judging.core.roles import is_admin, is_annotator, is_researcher

        if is_admin(user) or is_researcher(user) or is_annotator(user):
            return self.all()
        return self.none()

    def with_counts(self, *, runs: bool = True) -> CampaignQuerySet:
        """Annotated with ``num_topics``, ``num_documents`` and ``num_runs`` (None when not
        ``runs``: for those who may not know how many runs exist)."""
        num_runs: Any = (
            models.Count("runs", distinct=True)
            if runs
            else models.Value(None, output_field=models.IntegerField())
        )
        return self.annotate(
            num_topics=models.Count("topics", distinct=True),
            num_documents=models.Count("documents", distinct=True),
            num_runs=num_runs,
        )


class Campaign(models.Model):
    name = models.CharField(max_length=200, unique=True)
    description = models.TextField(blank=True)
    scale = models.JSONField(
        default=default_scale,
        help_text='Grades with labels, e.g. [{"grade": 0, "label": "Not relevant"}, ...]',
    )
    relevance_threshold = models.IntegerField(
        default=1, help_text="A document is relevant when its grade is at least this."
    )
    unknown_topic_policy = models.CharField(
        max_length=10, choices=UnknownTopicPolicy.choices, default=UnknownTopicPolicy.REJECT
    )
    default_pooled = models.BooleanField(
        default=True, help_text="Whether newly submitted runs contribute to the pool."
    )
    measures = models.JSONField(
        default=default_measures,
        help_text="Measures computed for every run: R@50 with its ceiling (candidate "
        "generation), nDCG@5 and RR@10 (ranking), AP, P@10, bpref and Judged@10.",
    )
    pool_strategy = models.CharField(
        max_length=20, default="depth", help_text="Strategy of the admin's one-click re-pool."
    )
    pool_depth = models.PositiveIntegerField(default=100, help_text="Pool depth k.")
    overlap = models.FloatField(
        default=0.0,
        help_text="Fraction (0-1) of pooled items also judged by a second annotator for agreement.",
    )
    lease_seconds = models.PositiveIntegerField(
        default=600,
        help_text="How long an annotator holds an item before it returns to the "
        "queue (renewed while the page is open).",
    )
    consensus_rule = models.CharField(
        max_length=10,
        default="median",
        help_text="Grade of an item judged by several annotators and not adjudicated: median "
        "(lower median on ties), majority, max or min.",
    )
    pool_budget = models.PositiveIntegerField(
        null=True, blank=True, help_text="Documents (or judgments) per topic; empty: no limit."
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = CampaignQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        grades = self.grade_values()
        if not grades:
            raise ValidationError({"scale": "the scale needs at least two grades with labels"})
        from metrics.pooling import STRATEGIES

        if self.pool_strategy not in STRATEGIES:
            raise ValidationError(
                {"pool_strategy": f"unknown strategy; known: {', '.join(STRATEGIES)}"}
            )
        from metrics.names import parse_measures

        try:
            parse_measures(list(self.measures))
        except (ValueError, TypeError) as exc:
            raise ValidationError({"measures": str(exc)}) from None
        if not 0.0 <= self.overlap <= 1.0:
            raise ValidationError({"overlap": "a fraction between 0 and 1"})
        if self.consensus_rule not in ("median", "majority", "max", "min"):
            raise ValidationError({"consensus_rule": "one of median, majority, max, min"})
        if self.relevance_threshold not in grades:
            raise ValidationError(
                {"relevance_threshold": f"{self.relevance_threshold} is not a grade of the scale"}
            )

    def grade_values(self) -> list[int]:
        try:
            values = [int(item["grade"]) for item in self.scale]
            labels = [str(item["label"]) for item in self.scale]
        except (TypeError, KeyError, ValueError):
            return []
        if len(values) < 2 or len(set(values)) != len(values) or not all(labels):
            return []
        return sorted(values)

    def grade_labels(self) -> dict[int, str]:
        return {int(item["grade"]): str(item["label"]) for item in self.scale}


class Topic(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="topics")
    qid = models.CharField(max_length=255)  # POOLJUDGE_MAX_QID_BYTES is at most this
    title = models.CharField(max_length=1000)
    description = models.TextField(blank=True)
    narrative = models.TextField(blank=True)
    tags = models.JSONField(default=list, blank=True, help_text="Labels for slicing results.")

    class Meta:
        ordering = ["campaign", "qid"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "qid"], name="topic_qid_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.qid}: {self.title}"


class Document(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="documents")
    docid = models.CharField(max_length=255)
    title = models.TextField(blank=True)
    text = models.TextField(blank=True)
    url = models.URLField(max_length=2000, blank=True)
    metadata = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["campaign", "docid"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "docid"], name="document_docid_unique"),
        ]

    def __str__(self) -> str:
        return self.docid


class RunQuerySet(models.QuerySet["Run"]):
    def visible_to(self, user: UserLike) -> RunQuerySet:
        """Admins see every run; researchers their own; everyone else (annotators) none."""
        from judging.core.roles import is_admin, is_researcher

        if is_admin(user):
            return self.all()
        if is_researcher(user):
            return self.filter(owner_id=user.pk)
        return self.none()


class Run(models.Model):
    """A submitted run. Its submitter names it (``name``, unique among their own runs of the
    campaign); ``tag`` is its name in the campaign, unique there: the name itself, or the name
    with a suffix (``~2``, ``~3``, ...) when another researcher's run already has that tag. Only
    admins see ``tag``; the submitter sees ``name`` and other researchers an anonymous label
    (``campaigns.selectors.run_label``), so no answer tells a researcher which tags others use.
    """

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="runs")
    tag = models.CharField(max_length=255)  # POOLJUDGE_MAX_TAG_BYTES is at most this
    name = models.CharField(
        max_length=255, help_text="The tag as its submitter gave it (unique among their runs)."
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="runs"
    )
    group = models.CharField(
        max_length=200, blank=True, help_text="Group or organisation (for leave-one-group-out)."
    )
    description = models.TextField(blank=True)
    pooled = models.BooleanField(default=True, help_text="Contributes to the judging pool.")
    priority = models.PositiveSmallIntegerField(
        default=1, help_text="Judging priority within its group (1 = first to be pooled)."
    )
    submitted_at = models.DateTimeField(auto_now_add=True)
    checksum = models.CharField(max_length=64, help_text="SHA-256 of the submitted run content.")
    num_entries = models.PositiveIntegerField(default=0)
    topic_counts = models.JSONField(default=dict, help_text="Entries per topic id.")
    dropped_lines = models.PositiveIntegerField(
        default=0, help_text="Lines dropped for unknown topics (policy 'ignore')."
    )

    objects = RunQuerySet.as_manager()

    class Meta:
        ordering = ["campaign", "tag"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "tag"], name="run_tag_unique"),
            models.UniqueConstraint(
                fields=["campaign", "owner", "name"], name="run_name_unique_per_owner"
            ),
        ]

    def __str__(self) -> str:
        return self.tag


class RankedList(models.Model):
    """One topic's ranking in a run, in trec_eval order (score descending, ties by docid
    descending; the submitted rank column is not trusted), stored column-wise.

    A run has up to a few thousand of these instead of a million entry rows: runs are always read
    whole per topic (pooling takes the top k, evaluation the whole list), and ingesting a
    1,000,000-line run becomes a few thousand writes. ``docids`` holds the docids joined by
    newlines (docids never contain white space); ``scores`` the float64 scores, little-endian.
    Rank r (1-based) is position r - 1 of both.
    """

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="rankings")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="+")
    size = models.PositiveIntegerField()
    docids = models.TextField()
    scores = models.BinaryField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "topic"], name="rankedlist_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.run_id}/{self.topic_id}: {self.size} documents"

    def docid_list(self, depth: int | None = None) -> list[str]:
        ids = self.docids.split("\n") if self.docids else []
        return ids if depth is None else ids[:depth]

    def score_array(self) -> np.ndarray:
        return np.frombuffer(bytes(self.scores), dtype="<f8")
