"""Pool versions: which documents of which runs are judged, built by a Celery task.

A pool version is requested (``queued``), built by a worker (``building``) and becomes visible and
immutable only when its documents and its number are committed together (``built``). A worker
killed mid-build leaves no document behind; the build can be run again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from django.db import models
from django.db.models import Q

from judging.campaigns.models import Campaign, Run, Topic

if TYPE_CHECKING:
    from judging.core.roles import UserLike


class PoolState(models.TextChoices):
    QUEUED = "queued", "Queued"
    BUILDING = "building", "Building"
    BUILT = "built", "Built"
    FAILED = "failed", "Failed"


PENDING = (PoolState.QUEUED, PoolState.BUILDING)


class PoolSegments(models.TextChoices):
    """What an answer run contributes for a topic it answered (``metrics.pooling.answers``)."""

    RANKED = "ranked", "Ranked lists"
    RECEIVED = "received", "What the generator received"
    CITED = "cited", "What the answers cite"


SEGMENTS_HELP = (
    "What an answer run contributes for a topic it answered. ranked: its ranked list (its "
    "references) cut to the depth, as any run. received: every reference of its answer, "
    "whatever the depth (what the generator received). cited: only the references some sentence "
    "of its answer cites, in reference order, whatever the depth (what the reader saw). Runs "
    "without an answer for the topic contribute their ranked list cut to the depth; the "
    "strategy and the budget apply as usual."
)


class PoolVersionQuerySet(models.QuerySet["PoolVersion"]):
    def visible_to(self, user: UserLike) -> PoolVersionQuerySet:
        """Pools name runs: admins and researchers may read them, annotators may not."""
        from judging.core.roles import is_admin, is_researcher

        if is_admin(user) or is_researcher(user):
            return self.all()
        return self.none()

    def built(self) -> PoolVersionQuerySet:
        return self.filter(state=PoolState.BUILT)


class PoolVersion(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="pools")
    number = models.PositiveIntegerField(
        null=True, blank=True, help_text="Version number, given when the build completes."
    )
    state = models.CharField(max_length=10, choices=PoolState.choices, default=PoolState.QUEUED)
    strategy = models.CharField(max_length=20)
    params = models.JSONField(default=dict, blank=True, help_text="Strategy parameters.")
    depth = models.PositiveIntegerField(
        help_text="Ranks 1..depth of every contributing run (an answer run's answered topics "
        "under segments received or cited: its answer's whole list)."
    )
    segments = models.CharField(
        max_length=10,
        choices=PoolSegments.choices,
        default=PoolSegments.RANKED,
        db_default=PoolSegments.RANKED,
        help_text=SEGMENTS_HELP,
    )
    budget = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Documents per topic (static) or judgments per topic "
        "(adaptive); empty: no limit.",
    )
    adaptive = models.BooleanField(default=False)
    runs = models.ManyToManyField(
        Run, related_name="pools", blank=True, help_text="Runs asked to contribute."
    )
    run_tags = models.JSONField(default=list, help_text="Tags of the contributing runs.")
    base = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The version this one extends.",
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    # Progress while building
    total_topics = models.PositiveIntegerField(default=0)
    processed_topics = models.PositiveIntegerField(default=0)
    processed_documents = models.PositiveIntegerField(default=0)
    # Figures of the built version
    num_documents = models.PositiveIntegerField(default=0)
    num_added = models.PositiveIntegerField(default=0, help_text="Not in the base version.")
    num_to_judge = models.PositiveIntegerField(default=0, help_text="Never judged before.")
    num_missing_text = models.PositiveIntegerField(default=0)

    objects = PoolVersionQuerySet.as_manager()

    class Meta:
        ordering = ["campaign", "-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "number"],
                name="pool_number_unique",
                condition=Q(number__isnull=False),
            ),
            # At most one build queued or running per campaign: two triggers, one build.
            models.UniqueConstraint(
                fields=["campaign"],
                name="pool_one_pending",
                condition=Q(state__in=["queued", "building"]),
            ),
        ]

    def __str__(self) -> str:
        label = f"v{self.number}" if self.number else f"build #{self.pk}"
        return f"{self.campaign} pool {label} ({self.state})"

    @property
    def percent(self) -> float:
        if self.state == PoolState.BUILT:
            return 100.0
        if not self.total_topics:
            return 0.0
        return round(100.0 * self.processed_topics / self.total_topics, 1)


class PoolDocument(models.Model):
    """A (topic, document) of a built pool version, in judging order within the topic.

    A sampled pool (the ``stratified`` strategy) stores every pooled document: the drawn ones
    first, then those not sampled (``sampled`` False, never queued), each with its stratum and
    inclusion probability, so the three states (not pooled, sampled, pooled but not sampled)
    stay apart down to the qrels."""

    version = models.ForeignKey(PoolVersion, on_delete=models.CASCADE, related_name="documents")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="+")
    docid = models.CharField(max_length=1024)  # POOLJUDGE_MAX_DOCID_BYTES is at most this
    position = models.PositiveIntegerField(help_text="Judging order within the topic (1-based).")
    added = models.BooleanField(help_text="Not in the base version (the diff).")
    to_judge = models.BooleanField(help_text="Never judged before: enters the judging queue.")
    has_text = models.BooleanField(help_text="The document's text is loaded.")
    inclusion = models.FloatField(
        null=True, blank=True, help_text="Inclusion probability (sampling strategies)."
    )
    stratum = models.CharField(
        max_length=8,
        blank=True,
        default="",
        db_default="",
        help_text="A sampled pool's stratum ('0': judged before the draw); empty otherwise.",
    )
    sampled = models.BooleanField(
        default=True,
        db_default=True,
        help_text="Drawn for judging; False: in the pool, not sampled (its grade stays unknown).",
    )

    class Meta:
        ordering = ["version", "topic", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["version", "topic", "docid"], name="pooldocument_unique"
            ),
        ]
        indexes = [models.Index(fields=["version", "topic", "position"])]

    def __str__(self) -> str:
        return f"{self.topic_id} {self.docid}"
