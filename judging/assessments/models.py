"""Relevance judgments as published, immutable qrels versions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from django.db import models

from judging.campaigns.models import Campaign, Topic

if TYPE_CHECKING:
    from judging.core.roles import UserLike


class QrelsSource(models.TextChoices):
    IMPORTED = "imported", "Imported from a file"
    PUBLISHED = "published", "Published from judgments"
    JUDGE = "judge", "Built from an automatic judge's labels"
    DERIVED = "derived", "Derived from another version (to another chunking, or to documents)"


class QrelsKind(models.TextChoices):
    """Who made the grades of a qrels version: people, an automatic judge, or both. Automatic
    labels never enter a version silently: a version's kind is fixed when it is stored, every
    row of an automatic or hybrid version names the judge version its grade came from
    (``QrelsEntry.judge_id``), and a campaign's default qrels ("the latest") is its latest
    human version."""

    HUMAN = "human", "human"
    AUTOMATIC = "automatic", "automatic"
    HYBRID = "hybrid", "hybrid"


class UnitKind(models.TextChoices):
    """What a judging item is. One queue, one lease, one judgment history serve every kind:
    an item is ``(topic, kind, key)``, the key held in the ``docid`` column (a document or
    passage id for a document; the key of a ``JudgingUnit`` for the others)."""

    DOCUMENT = "document", "document relevance"
    NUGGET_CREATION = "nugget_creation", "nugget creation"
    NUGGET_ASSIGNMENT = "nugget_assignment", "nugget assignment"
    CITATION_SUPPORT = "citation_support", "citation support"


class QrelsVersionQuerySet(models.QuerySet["QrelsVersion"]):
    def visible_to(self, user: UserLike) -> QrelsVersionQuerySet:
        """Qrels are results: admins and researchers read them, annotators do not."""
        from judging.core.roles import is_admin, is_researcher

        if is_admin(user) or is_researcher(user):
            return self.all()
        return self.none()

    def latest_first(self) -> QrelsVersionQuerySet:
        return self.order_by("-number")

    def human(self) -> QrelsVersionQuerySet:
        """Versions made of human judgments only: what "the latest qrels" means by default."""
        return self.filter(kind=QrelsKind.HUMAN)


class QrelsVersion(models.Model):
    """An immutable snapshot of judgments. ``number`` counts up per campaign from 1."""

    # PROTECT here and below: nothing deletes a stored version or the judgments under it as a
    # side effect (a topic or campaign deleted in the admin); triggers refuse the rest (see
    # judging/assessments/immutability.py).
    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="qrels_versions")
    number = models.PositiveIntegerField()
    source = models.CharField(max_length=20, choices=QrelsSource.choices)
    kind = models.CharField(
        max_length=10,
        choices=QrelsKind.choices,
        default=QrelsKind.HUMAN,
        help_text="Human judgments, an automatic judge's labels, or both (hybrid).",
    )
    judges = models.JSONField(
        default=list,
        blank=True,
        help_text="The automatic judge versions whose labels are in it: "
        '[{"id", "name", "version", "kind", "model"}] (empty for a human version).',
    )
    content_hash = models.CharField(
        max_length=64, help_text="SHA-256 of the canonical TREC export (sorted lines)."
    )
    note = models.TextField(blank=True)
    design = models.JSONField(
        default=dict,
        blank=True,
        help_text="A sampled version's design: {'pool': id, 'strategy', 'params', 'strata': "
        "{stratum: {'pooled', 'sampled', 'rate'}}} (empty: complete judgments).",
    )
    num_judgments = models.PositiveIntegerField(default=0)
    num_relevant = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # True from the moment its rows are written (in the transaction that stores it, which
    # creates it unsealed): no row can be added to a sealed version, and it never unseals
    # (triggers, judging/assessments/immutability.py). True by default, so that a version made
    # any other way takes no rows at all.
    sealed = models.BooleanField(
        default=True, help_text="All its rows are written; no row can be added."
    )
    # a minor version: its base's rows and a few more, added for one stated purpose (a top-up)
    extends = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The version this minor version adds rows to (none: a major version).",
    )
    minor = models.PositiveSmallIntegerField(
        default=0, help_text="1, 2, ... for the minor versions of the version it extends."
    )
    purpose = models.CharField(
        max_length=200, blank=True, help_text="What a minor version's added rows are for."
    )

    objects = QrelsVersionQuerySet.as_manager()

    class Meta:
        ordering = ["campaign", "number"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "number"], name="qrels_number_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.campaign} qrels v{self.number}"

    @property
    def kind_label(self) -> str:
        """What the grades rest on, as pages and exports say it: ``human``, ``automatic
        (umbrela v2)`` or ``hybrid (human + umbrela v2)``."""
        names = ", ".join(f"{j.get('name')} v{j.get('version')}" for j in self.judges or [])
        if self.kind == QrelsKind.AUTOMATIC:
            return f"automatic ({names})" if names else "automatic"
        if self.kind == QrelsKind.HYBRID:
            return f"hybrid (human + {names})" if names else "hybrid"
        return "human"

    @property
    def minor_label(self) -> str:
        """``1.1`` for the first minor version of v1 ('' for a major version)."""
        if self.extends_id is None:
            return ""
        base = self.extends.number if self.extends else "?"
        return f"{base}.{self.minor}"

    @property
    def count_label(self) -> str:
        """``452 judgments``; a sampled version, whose rows include the pooled documents not
        sampled (-1): ``sampled: 187 of 452 pooled judged``."""
        if not self.design:
            return f"{self.num_judgments} judgments"
        strata = self.design.get("strata", {}).values()
        judged = sum(int(c.get("judged", 0)) for c in strata)
        return f"sampled: {judged} of {self.num_judgments} pooled judged"

    @property
    def label(self) -> str:
        """``v3 · human``: the version and the kind of qrels a number rests on (``v4 (1.1) ·
        human`` for a minor version)."""
        minor = f" ({self.minor_label})" if self.minor_label else ""
        return f"v{self.number}{minor} · {self.kind_label}"


class QrelsDerivation(models.Model):
    """How a derived qrels version was made from another: its judgments carried by their text
    spans to the passages of another chunking, or its passages' grades taken to their documents
    (max grade). ``report`` is the coverage (``metrics.passages.CoverageReport.as_dict``, or the
    counts of a document-level derivation); ``rule`` says the rule in words."""

    version = models.OneToOneField(
        QrelsVersion, on_delete=models.PROTECT, related_name="derivation"
    )
    base = models.ForeignKey(QrelsVersion, on_delete=models.PROTECT, related_name="derived")
    chunking = models.ForeignKey(
        "campaigns.Chunking",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The chunking carried to; None: to documents.",
    )
    rule = models.TextField()
    report = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"v{self.version_id} from v{self.base_id}"


class QrelsEntry(models.Model):
    """One row of a stored qrels version: written once with its version, never changed."""

    version = models.ForeignKey(QrelsVersion, on_delete=models.PROTECT, related_name="entries")
    topic = models.ForeignKey(Topic, on_delete=models.PROTECT, related_name="+")
    docid = models.CharField(max_length=1024)  # POOLJUDGE_MAX_DOCID_BYTES is at most this
    grade = models.IntegerField(help_text="-1 in a sampled version: pooled, not sampled.")
    stratum = models.CharField(
        max_length=8,
        blank=True,
        default="",
        db_default="",
        help_text="A sampled version's stratum.",
    )
    judge_id = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="The automatic judge version this grade came from; empty: a human grade.",
    )

    class Meta:
        verbose_name_plural = "qrels entries"
        constraints = [
            models.UniqueConstraint(
                fields=["version", "topic", "docid"], name="qrels_entry_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.topic_id} {self.docid} {self.grade}"


class TopicAssignment(models.Model):
    """Topic-centric assignment: an annotator keeps judging the topics handed to them.

    The primary assessor of a topic judges its first slot of every item; secondary assessors (for
    overlap) take the second slots of the overlap items of topics they are not primary on.
    """

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="+")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="topic_assignments"
    )
    primary = models.BooleanField(default=True)
    assigned_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["topic", "annotator"], name="assignment_unique"),
            models.UniqueConstraint(
                fields=["topic"], condition=models.Q(primary=True), name="assignment_one_primary"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.topic} -> {self.annotator} ({'primary' if self.primary else 'secondary'})"


class JudgingSlot(models.Model):
    """One judgment wanted for a (topic, document): slot 1 for every queued item, slot 2 for the
    overlap items. A slot is leased to one annotator at a time and judged once."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="+")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="+")
    docid = models.CharField(max_length=1024)  # POOLJUDGE_MAX_DOCID_BYTES is at most this
    kind = models.CharField(
        max_length=20,
        choices=UnitKind.choices,
        default=UnitKind.DOCUMENT,
        help_text="What is judged; ``docid`` is the item's key in its kind (assessments.units).",
    )
    slot = models.PositiveSmallIntegerField(default=1)
    position = models.PositiveIntegerField(help_text="Serving order within the topic.")
    pool_version = models.ForeignKey(
        "pools.PoolVersion",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        help_text="The version that queued it (empty: a top-up of a run queued it, ``TopUp``).",
    )
    has_text = models.BooleanField(default=True)
    lease = models.ForeignKey(
        "Lease",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The current (or last) lease.",
    )
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    judged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    judged_at = models.DateTimeField(null=True, blank=True)
    gold = models.ForeignKey(
        "GoldItem",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="slots",
        help_text="A gold item served to one assessor (slot 0); empty for pooled items.",
    )
    gold_for = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["topic", "kind", "docid", "slot"],
                condition=models.Q(gold_for__isnull=True),
                name="slot_unique",
            ),
            models.UniqueConstraint(
                fields=["gold", "gold_for"],
                condition=models.Q(gold_for__isnull=False),
                name="gold_slot_unique",
            ),
        ]
        indexes = [
            models.Index(
                fields=["campaign", "topic", "position"],
                name="slot_serve_idx",
                condition=models.Q(judged_at__isnull=True),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.topic_id}/{self.docid}#{self.slot}"


class LeaseState(models.TextChoices):
    ACTIVE = "active", "Active"
    RELEASED = "released", "Released (skipped)"
    JUDGED = "judged", "Judged"
    EXPIRED = "expired", "Expired"


class Lease(models.Model):
    slot = models.ForeignKey(JudgingSlot, on_delete=models.CASCADE, related_name="leases")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="leases"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)
    state = models.CharField(max_length=10, choices=LeaseState.choices, default=LeaseState.ACTIVE)

    class Meta:
        indexes = [models.Index(fields=["annotator", "state"])]

    def __str__(self) -> str:
        return f"lease {self.pk} of {self.slot} to {self.annotator_id} ({self.state})"


class Judgment(models.Model):
    """An annotator's current grade for a (topic, document); changes are kept in history."""

    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="judgments")
    topic = models.ForeignKey(Topic, on_delete=models.PROTECT, related_name="judgments")
    docid = models.CharField(max_length=1024)  # POOLJUDGE_MAX_DOCID_BYTES is at most this
    kind = models.CharField(
        max_length=20,
        choices=UnitKind.choices,
        default=UnitKind.DOCUMENT,
        help_text="What is judged; ``docid`` is the item's key in its kind (assessments.units).",
    )
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="judgments"
    )
    grade = models.IntegerField()
    slot = models.ForeignKey(
        JudgingSlot, null=True, blank=True, on_delete=models.SET_NULL, related_name="judgments"
    )
    active_seconds = models.FloatField(default=0.0, help_text="Time spent, idle time excluded.")
    gold = models.ForeignKey(
        "GoldItem",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="judgments",
        help_text="Set for a judgment of a gold item: quality control only, never in qrels, "
        "agreement or pooling.",
    )
    suggestion_arm = models.CharField(
        max_length=10,
        blank=True,
        choices=[("", "no suggestion"), ("shown", "shown"), ("hidden", "hidden until committed")],
        help_text="Whether an automatic grade was shown to the assessor before they judged "
        "(the anchoring control, judging/autojudge/suggestions.py).",
    )
    suggested_grade = models.IntegerField(
        null=True, blank=True, help_text="The automatic grade of the suggestion (either arm)."
    )
    spans = models.JSONField(
        null=True,
        blank=True,
        help_text="Where in its document's text the judgment applies (assessments.spans): "
        '{"passage": [start, end]} for a passage, "answers": [[start, end], ...] for the '
        "spans the assessor marked as answering; None for a whole document with no span.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["topic", "kind", "docid", "annotator"], name="judgment_unique"
            ),
        ]
        indexes = [models.Index(fields=["annotator", "-updated_at"])]

    def __str__(self) -> str:
        return f"{self.topic_id}/{self.docid} by {self.annotator_id}: {self.grade}"


class JudgmentChange(models.Model):
    """History: who changed which judgment, when, from what to what (old None = first grade)."""

    judgment = models.ForeignKey(
        Judgment, null=True, on_delete=models.SET_NULL, related_name="history"
    )
    topic = models.ForeignKey(Topic, on_delete=models.PROTECT, related_name="+")
    docid = models.CharField(max_length=1024)  # POOLJUDGE_MAX_DOCID_BYTES is at most this
    kind = models.CharField(
        max_length=20,
        choices=UnitKind.choices,
        default=UnitKind.DOCUMENT,
        help_text="What is judged; ``docid`` is the item's key in its kind (assessments.units).",
    )
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    old_grade = models.IntegerField(null=True, blank=True)
    new_grade = models.IntegerField(null=True, blank=True, help_text="None: undone.")
    spans = models.JSONField(null=True, blank=True, help_text="The judgment's spans after it.")
    undoes = models.OneToOneField(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="undone_by",
        help_text="The change this one reverts (an annotator's undo).",
    )
    changed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["changed_at", "pk"]

    def __str__(self) -> str:
        return f"{self.topic_id}/{self.docid}: {self.old_grade} -> {self.new_grade}"


class Adjudication(models.Model):
    """An admin's final grade for an item its annotators disagreed on."""

    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="+")
    topic = models.ForeignKey(Topic, on_delete=models.PROTECT, related_name="+")
    docid = models.CharField(max_length=1024)  # POOLJUDGE_MAX_DOCID_BYTES is at most this
    kind = models.CharField(
        max_length=20,
        choices=UnitKind.choices,
        default=UnitKind.DOCUMENT,
        help_text="What is judged; ``docid`` is the item's key in its kind (assessments.units).",
    )
    grade = models.IntegerField()
    note = models.TextField(blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    decided_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["topic", "kind", "docid"], name="adjudication_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.topic_id}/{self.docid}: {self.grade}"


class AdjudicationChange(models.Model):
    """History of adjudications: every final grade an admin set, with the reason given."""

    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="+")
    topic = models.ForeignKey(Topic, on_delete=models.PROTECT, related_name="+")
    docid = models.CharField(max_length=1024)  # POOLJUDGE_MAX_DOCID_BYTES is at most this
    kind = models.CharField(
        max_length=20,
        choices=UnitKind.choices,
        default=UnitKind.DOCUMENT,
        help_text="What is judged; ``docid`` is the item's key in its kind (assessments.units).",
    )
    old_grade = models.IntegerField(null=True, blank=True)
    new_grade = models.IntegerField()
    note = models.TextField(blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    decided_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["decided_at", "pk"]

    def __str__(self) -> str:
        return f"{self.topic_id}/{self.docid}: {self.old_grade} -> {self.new_grade}"


class GoldSource(models.TextChoices):
    IMPORTED = "imported", "Imported by an admin"
    QRELS = "qrels", "Taken from a published qrels version"
    AGREED = "agreed", "Agreed by two or more assessors, or adjudicated"


class GoldItem(models.Model):
    """A document of known grade for a topic, mixed into assessors' queues for quality control."""

    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="gold_items")
    topic = models.ForeignKey(Topic, on_delete=models.PROTECT, related_name="gold_items")
    docid = models.CharField(max_length=1024)  # POOLJUDGE_MAX_DOCID_BYTES is at most this
    kind = models.CharField(
        max_length=20,
        choices=UnitKind.choices,
        default=UnitKind.DOCUMENT,
        help_text="What is judged; ``docid`` is the item's key in its kind (assessments.units).",
    )
    grade = models.IntegerField()
    source = models.CharField(max_length=10, choices=GoldSource.choices)
    qrels_version = models.ForeignKey(
        QrelsVersion, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    active = models.BooleanField(default=True, help_text="Served to assessors.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["topic", "kind", "docid"], name="gold_item_unique"),
        ]

    def __str__(self) -> str:
        return f"gold {self.topic_id}/{self.docid}: {self.grade}"


class AnnotatorExclusion(models.Model):
    """An admin's decision that an assessor's judgments stay stored but are left out of the
    qrels versions published while it holds (lifted_at empty)."""

    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="+")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    reason = models.TextField()
    excluded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    excluded_at = models.DateTimeField(auto_now_add=True)
    lifted_at = models.DateTimeField(null=True, blank=True)
    lifted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    lift_reason = models.TextField(blank=True)

    class Meta:
        ordering = ["excluded_at", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "annotator"],
                condition=models.Q(lifted_at__isnull=True),
                name="one_active_exclusion",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.annotator_id} excluded from {self.campaign_id}"


class TopUp(models.Model):
    """A sample of a run's unjudged top-k documents queued for the campaign's assessors, to
    measure the run's penalty for not having helped build the pool (``assessments.topups``;
    ``metrics.bias.topup``): the design, the budget, the qrels version whose hole was sampled,
    and per document of the hole its inclusion probability (``TopUpItem``)."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="topups")
    run = models.ForeignKey("campaigns.Run", on_delete=models.CASCADE, related_name="topups")
    qrels = models.ForeignKey(
        QrelsVersion,
        on_delete=models.CASCADE,
        related_name="+",
        help_text="The version against which the run's hole was taken.",
    )
    measure = models.CharField(max_length=40, help_text="The measure it is read for (P@10).")
    k = models.PositiveIntegerField(help_text="The top k sampled from.")
    design = models.CharField(max_length=20)
    budget = models.PositiveIntegerField(help_text="Documents drawn (per topic for per_topic).")
    seed = models.BigIntegerField()
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"top-up of {self.run} ({self.budget} documents)"


class TopUpItem(models.Model):
    """One unjudged document of the run's top k when the top-up was drawn: its rank, stratum,
    inclusion probability and whether it was drawn (queued for judging)."""

    topup = models.ForeignKey(TopUp, on_delete=models.CASCADE, related_name="items")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="+")
    docid = models.CharField(max_length=1024)
    rank = models.PositiveIntegerField()
    stratum = models.CharField(max_length=40)
    pi = models.FloatField(help_text="Its inclusion probability under the design.")
    sampled = models.BooleanField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["topup", "topic", "docid"], name="topup_item_unique")
        ]

    def __str__(self) -> str:
        return f"{self.docid} (rank {self.rank}{', drawn' if self.sampled else ''})"


class JudgingUnit(models.Model):
    """What an item of a kind other than a document shows its assessor, keyed like the item:
    ``(topic, kind, key)``. Built when the item is queued (``assessments.units``) and never
    changed: the key is derived from the payload's content, so two runs' identical answers (or
    sentences) are one item, judged once. Nothing here names a run."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="+")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=20, choices=UnitKind.choices)
    key = models.CharField(max_length=1024)
    payload = models.JSONField(help_text="What the screen shows (assessments.units).")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["topic", "kind", "key"], name="judging_unit_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.topic_id}/{self.kind}/{self.key}"


class NuggetImportance(models.TextChoices):
    VITAL = "vital", "vital"
    OKAY = "okay", "okay"


class NuggetBankState(models.TextChoices):
    DRAFT = "draft", "draft (being edited)"
    PUBLISHED = "published", "published (frozen)"


class NuggetBank(models.Model):
    """One version of a campaign's nugget banks (a bank per topic), numbered like qrels
    versions: drafted (by an automatic judge, by sentence extraction, imported, or copied
    from an earlier version), edited by assessors while a draft, frozen when published.
    Assignments and scores name the version they used."""

    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="nugget_banks")
    number = models.PositiveIntegerField()
    state = models.CharField(
        max_length=10, choices=NuggetBankState.choices, default=NuggetBankState.DRAFT
    )
    source = models.CharField(
        max_length=20, help_text="How the draft began: judge, extracted, imported, copied."
    )
    based_on = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    qrels = models.ForeignKey(
        QrelsVersion,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The qrels version whose relevant segments it was drafted from.",
    )
    note = models.TextField(blank=True)
    content_hash = models.CharField(max_length=64, blank=True, help_text="Set when published.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    published_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["campaign", "number"], name="nugget_bank_number"),
        ]

    def __str__(self) -> str:
        return f"nugget bank v{self.number} of {self.campaign_id} ({self.state})"


class Nugget(models.Model):
    """One nugget of a topic's bank in one bank version. ``key`` follows a nugget through
    versions (copied with it; a split or merge makes new keys and records where they came
    from in the edit history)."""

    bank = models.ForeignKey(NuggetBank, on_delete=models.CASCADE, related_name="nuggets")
    topic = models.ForeignKey(Topic, on_delete=models.PROTECT, related_name="+")
    key = models.CharField(max_length=40)
    position = models.PositiveIntegerField()
    text = models.TextField()
    importance = models.CharField(max_length=5, choices=NuggetImportance.choices)
    sources = models.JSONField(
        default=list, blank=True, help_text="The segment ids it was drafted from."
    )

    class Meta:
        ordering = ["topic_id", "position", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["bank", "topic", "key"], name="nugget_key_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.key} ({self.importance}): {self.text[:40]}"


class NuggetEdit(models.Model):
    """History of a draft bank's edits, one row per operation (add, reword, importance,
    delete, merge, split, move): the nuggets it touched before and after, who and when."""

    bank = models.ForeignKey(NuggetBank, on_delete=models.CASCADE, related_name="edits")
    topic = models.ForeignKey(Topic, on_delete=models.PROTECT, related_name="+")
    op = models.CharField(max_length=12)
    before = models.JSONField(default=list)
    after = models.JSONField(default=list)
    editor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    edited_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["edited_at", "pk"]

    def __str__(self) -> str:
        return f"{self.op} in {self.bank_id}/{self.topic_id}"
