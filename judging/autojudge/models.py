"""Automatic judges, their runs over pool versions, and their labels: kept beside the human
judgments (``assessments``), never in them.

A ``Judge`` row is one judge *version*: kind + model + prompt (or parameters) + version number.
Once it has labelled anything (``locked_at`` set) what it says never changes: a change is a new
version (``autojudge.services.judge_create`` with the same name numbers it). Its labels
(``AutoLabel``) are also its cache, keyed by (judge version, topic, document): a second run over a
pool, or another pool version sharing documents, asks the endpoint only for the new pairs.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import models

from judging.campaigns.models import Campaign, Topic
from judging.core.models import Job, JobState
from judging.pools.models import PoolVersion

if TYPE_CHECKING:
    from judging.core.roles import UserLike


class JudgeKind(models.TextChoices):
    OPENAI = "openai-compatible", "OpenAI-compatible chat endpoint"
    EMBEDDING = "embedding", "Local sentence-embedding similarity"
    IMPORTED = "imported", "Labels imported from a file"
    JURY = "jury", "A jury combining other judges' labels"


# The kinds a judge is created as (a jury is made from its members: ``autojudge.juries``).
CREATED_KINDS = [(k, label) for k, label in JudgeKind.choices if k != JudgeKind.JURY]


class JuryMethod(models.TextChoices):
    MAJORITY = "majority", "Majority grade (ties to the lower grade)"
    MEAN = "mean", "Mean grade, rounded to the scale"
    DAWID_SKENE = "dawid-skene", "Dawid-Skene (each judge's confusion estimated)"
    DEFER = "defer", "Agreed grade; people's grade where the judges disagree"


# What a judge version says: none of these change once it has labelled anything.
IDENTITY_FIELDS = ("campaign_id", "name", "version", "kind", "model", "prompt", "params")


class JudgeQuerySet(models.QuerySet["Judge"]):
    def visible_to(self, user: UserLike) -> JudgeQuerySet:
        """Judges and their labels are results: admins read every judge; researchers read the
        organisers' judges (no owner) and the ones they submitted, never another participant's
        (as with runs); annotators never see a judge (the anchoring arm shows them a grade, not
        a judge)."""
        from django.db.models import Q

        from judging.core.roles import is_admin, is_researcher

        if is_admin(user):
            return self.all()
        if is_researcher(user):
            return self.filter(Q(owner__isnull=True) | Q(owner_id=user.pk))
        return self.none()


class Judge(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="judges")
    name = models.SlugField(max_length=100, help_text="The judge's name; versions share it.")
    version = models.PositiveIntegerField(help_text="Counts up per (campaign, name) from 1.")
    kind = models.CharField(max_length=20, choices=JudgeKind.choices)
    model = models.CharField(
        max_length=200,
        help_text="The model that grades (for an imported judge: the model its file declares).",
    )
    prompt = models.TextField(blank=True, help_text="The prompt template (openai-compatible).")
    params = models.JSONField(
        default=dict,
        blank=True,
        help_text="Kind-specific parameters: the endpoint's name (never its URL or key), the "
        "grade mapping, the embedding thresholds, prices.",
    )
    description = models.TextField(blank=True)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="submitted_judges",
        help_text="The participant who submitted it (a judges' track); none: the organisers'. "
        "Other participants never read it, and see its row anonymised.",
    )
    pool = models.ForeignKey(
        PoolVersion,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The pool version a submission labels.",
    )
    family = models.CharField(
        max_length=100, blank=True, help_text="The declared model family (e.g. llama, gpt)."
    )
    open_weights = models.BooleanField(
        null=True, blank=True, help_text="Whether the model's weights are open (declared)."
    )
    saw_human_qrels = models.BooleanField(
        null=True,
        blank=True,
        help_text="Whether it saw any of people's judgments (few-shot examples, calibration, "
        "training): its agreement with them is then not independent.",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    locked_at = models.DateTimeField(
        null=True, blank=True, help_text="First used: what the version says is fixed from then."
    )

    objects = JudgeQuerySet.as_manager()

    class Meta:
        ordering = ["campaign", "name", "version"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "name", "version"], name="judge_version_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} v{self.version}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        """Refuse to change what a version says once it has labelled anything."""
        if self.pk is not None:
            stored = Judge.objects.filter(pk=self.pk).values(*IDENTITY_FIELDS, "locked_at").first()
            if stored is not None and stored["locked_at"] is not None:
                changed = [f for f in IDENTITY_FIELDS if getattr(self, f) != stored[f]]
                if changed:
                    from judging.core.errors import Conflict

                    raise Conflict(
                        f"judge {self} has labelled documents: its {', '.join(changed)} never "
                        "change; create a new version instead"
                    )
        super().save(*args, **kwargs)

    def describe(self) -> dict[str, Any]:
        """How a qrels version names this judge (``QrelsVersion.judges``)."""
        return {
            "id": self.pk,
            "name": self.name,
            "version": self.version,
            "kind": self.kind,
            "model": self.model,
        }


class JudgeRun(models.Model):
    """One judge version labelling the documents of one pool version, or of a run's top-up (its
    unjudged top-k documents), computed by its job: progress and cost."""

    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="runs")
    pool = models.ForeignKey(
        PoolVersion, null=True, blank=True, on_delete=models.CASCADE, related_name="judge_runs"
    )
    topup = models.ForeignKey(
        "assessments.TopUp",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="judge_runs",
        help_text="The top-up whose unjudged documents it labels (instead of a pool).",
    )
    kind = models.CharField(
        max_length=20,
        default="document",
        help_text="Without pool or top-up, the answer items it labels: nugget_assignment or "
        "citation_support (assessments.UnitKind).",
    )
    bank = models.ForeignKey(
        "assessments.NuggetBank",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        help_text="For nugget assignment: the bank version whose nuggets are assigned.",
    )
    job = models.OneToOneField(Job, on_delete=models.CASCADE, related_name="%(class)s")
    total = models.PositiveIntegerField(default=0, help_text="Pool documents to label.")
    done = models.PositiveIntegerField(default=0, help_text="Labelled (any status) so far.")
    cached = models.PositiveIntegerField(default=0, help_text="Already labelled by this version.")
    ok = models.PositiveIntegerField(default=0)
    refused = models.PositiveIntegerField(default=0)
    malformed = models.PositiveIntegerField(default=0)
    errors = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveBigIntegerField(default=0)
    completion_tokens = models.PositiveBigIntegerField(default=0)
    cost = models.FloatField(default=0.0, help_text="In the currency of the judge's prices.")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.judge} over {self.over}"

    @property
    def over(self) -> str:
        """What it labels: ``pool v2`` or ``the top-up of run X``."""
        if self.pool is not None:
            return f"pool v{self.pool.number}"
        if self.topup is not None:
            return f"the top-up of run {self.topup.run.tag}"
        if self.kind == "nugget_assignment":
            number = self.bank.number if self.bank else "?"
            return f"the answers' nugget assignments (bank v{number})"
        return "the answers' citations" if self.kind == "citation_support" else "nothing"

    # its job (``autojudge.jobs``, kind ``judge_run``) holds the lifecycle (its error stored
    # with endpoints and keys blanked); the counts stay here, saved after each batch
    @property
    def state(self) -> str:
        return TASK_WORDS[JobState(self.job.state)]

    @property
    def error(self) -> str:
        return self.job.error

    @property
    def heartbeat_at(self) -> datetime | None:
        return self.job.heartbeat_at

    @property
    def finished_at(self) -> datetime | None:
        return self.job.computed_at

    @property
    def progress(self) -> float:
        return self.done / self.total if self.total else (1.0 if self.state == "done" else 0.0)


class LabelStatus(models.TextChoices):
    OK = "ok", "graded"
    REFUSED = "refused", "refused"
    MALFORMED = "malformed", "malformed answer"
    ERROR = "error", "endpoint error"
    DEFERRED = "deferred", "deferred to people, not judged yet"


class AutoLabel(models.Model):
    """A judge version's grade for one (topic, document): its cache and its record. A pair that
    failed (error, refusal, malformed answer) has no grade and is asked again by the next run."""

    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="labels")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(
        max_length=20,
        default="document",
        help_text="The kind of item (assessments.UnitKind): document, or an answer run's "
        "nugget_assignment or citation_support; docid holds the item's key.",
    )
    docid = models.CharField(max_length=1024)  # POOLJUDGE_MAX_DOCID_BYTES is at most this
    grade = models.IntegerField(
        null=True, blank=True, help_text="On the campaign's scale (a unit's: 0-2)."
    )
    status = models.CharField(max_length=10, choices=LabelStatus.choices, default=LabelStatus.OK)
    score = models.FloatField(
        null=True, blank=True, help_text="The judge's raw score (UMBRELA's 0-3, a similarity)."
    )
    answer = models.TextField(blank=True, help_text="The model's answer, truncated.")
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    cost = models.FloatField(default=0.0)
    created_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["judge", "topic", "kind", "docid"], name="autolabel_unique"
            ),
        ]
        indexes = [models.Index(fields=["judge", "status"], name="autolabel_status")]

    def __str__(self) -> str:
        return f"{self.judge} {self.topic_id} {self.docid} {self.grade}"


class Suggestions(models.Model):
    """Automatic grades shown to the campaign's assessors, with the anchoring control: for a
    share of the slots (chosen by a hash of the slot, so the arm never depends on the assessor)
    the grade stays hidden until the assessor has committed their own. The arm and the grade are
    recorded with each judgment (``Judgment.suggestion_arm``, ``suggested_grade``), and the audit
    compares human-automatic agreement in both arms."""

    campaign = models.OneToOneField(Campaign, on_delete=models.CASCADE, related_name="suggestions")
    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="+")
    enabled = models.BooleanField(default=True)
    hidden_share = models.FloatField(
        default=0.2, help_text="Share of items whose suggestion stays hidden until committed."
    )
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"suggestions of {self.judge} in {self.campaign}"


# The words a judge audit, run or calibration shows for its job's state (``core.jobs``): they
# said "queued" before a worker took them, and never "pending" or "stale".
TASK_WORDS = {
    JobState.PENDING: "queued",
    JobState.QUEUED: "queued",
    JobState.RUNNING: "running",
    JobState.DONE: "done",
    JobState.FAILED: "failed",
}
# The same words as choices (the API schema's ``TaskStateEnum``).
TASK_STATES = [(w, w) for w in ("queued", "running", "done", "failed")]


class JudgeAudit(models.Model):
    """The audit of one judge version against one human qrels version over one pool version
    (agreement, rankings, family gaps, probes, anchoring), computed by its job."""

    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="audits")
    human = models.ForeignKey(
        "assessments.QrelsVersion", on_delete=models.PROTECT, related_name="+"
    )
    pool = models.ForeignKey(PoolVersion, on_delete=models.CASCADE, related_name="+")
    job = models.OneToOneField(Job, on_delete=models.CASCADE, related_name="%(class)s")
    result = models.JSONField(default=dict, blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.UniqueConstraint(fields=["judge", "human", "pool"], name="audit_unique"),
        ]

    def __str__(self) -> str:
        return f"audit of {self.judge} against qrels v{self.human.number}"

    # its job (``autojudge.jobs``, kind ``judge_audit``) holds the lifecycle, read as before
    @property
    def state(self) -> str:
        return TASK_WORDS[JobState(self.job.state)]

    @property
    def error(self) -> str:
        return self.job.error

    @property
    def finished_at(self) -> datetime | None:
        return self.job.computed_at


class JudgeCalibration(models.Model):
    """One calibration of an embedding judge version (``judge``) on a human qrels version over a
    pool version, computed by its job (scoring every judged document with the model takes tens of
    seconds, too long for a request): its result is the judge's next version, with thresholds
    (``calibrated``), or why it failed (``error``)."""

    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="calibrations")
    human = models.ForeignKey(
        "assessments.QrelsVersion", on_delete=models.PROTECT, related_name="+"
    )
    pool = models.ForeignKey(PoolVersion, on_delete=models.CASCADE, related_name="+")
    sample = models.PositiveIntegerField(
        null=True, blank=True, help_text="A seeded sample of this many judged documents (or all)."
    )
    seed = models.PositiveIntegerField(default=0)
    job = models.OneToOneField(Job, on_delete=models.CASCADE, related_name="%(class)s")
    calibrated = models.ForeignKey(
        Judge,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The version the calibration made (done only).",
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"calibration #{self.pk} of {self.judge}"

    # its job (``autojudge.jobs``, kind ``judge_calibration``) holds the lifecycle; its error
    # is stored with endpoints and keys blanked
    @property
    def state(self) -> str:
        return TASK_WORDS[JobState(self.job.state)]

    @property
    def error(self) -> str:
        return self.job.error

    @property
    def finished_at(self) -> datetime | None:
        return self.job.computed_at


class SampleDesign(models.TextChoices):
    UNIFORM = "uniform", "uniform"
    STRATIFIED = "stratified", "stratified by the judge's grade"
    ACTIVE = "active", "active (most informative first)"


class HumanSample(models.Model):
    """Pool documents chosen by the service for people to judge, with the inclusion probability
    of every pool document, so that metric estimates from a judge's labels can be corrected by
    the human grades (prediction-powered inference, ``metrics.sampling.ppi``)."""

    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="samples")
    pool = models.ForeignKey(
        PoolVersion,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        help_text="The pool sampled (empty: answer items, ``kind``).",
    )
    kind = models.CharField(
        max_length=20,
        default="document",
        help_text="The kind of item (assessments.UnitKind): document, or an answer run's "
        "nugget_assignment or citation_support; docid holds the item's key.",
    )
    bank = models.ForeignKey(
        "assessments.NuggetBank",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        help_text="For nugget assignment: the bank version whose items are sampled.",
    )
    design = models.CharField(max_length=12, choices=SampleDesign.choices)
    budget = models.PositiveIntegerField(help_text="Documents people judge.")
    seed = models.PositiveIntegerField(default=0)
    pi = models.JSONField(
        default=dict, help_text="qid -> docid -> inclusion probability, every pool document."
    )
    design_info = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.design} sample of {self.budget} for {self.judge}"


class SampleItem(models.Model):
    sample = models.ForeignKey(HumanSample, on_delete=models.CASCADE, related_name="items")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(
        max_length=20,
        default="document",
        help_text="The kind of item (assessments.UnitKind): document, or an answer run's "
        "nugget_assignment or citation_support; docid holds the item's key.",
    )

    docid = models.CharField(max_length=1024)  # POOLJUDGE_MAX_DOCID_BYTES is at most this
    order = models.PositiveIntegerField(help_text="Queue order (active: most informative first).")
    pi = models.FloatField(help_text="Inclusion probability.")
    stratum = models.CharField(max_length=50, blank=True)

    class Meta:
        ordering = ["sample", "order"]
        constraints = [
            models.UniqueConstraint(fields=["sample", "topic", "docid"], name="sample_item_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.topic_id} {self.docid} (pi {self.pi:.3f})"


class TopUpCorrection(models.Model):
    """An automatic judge version correcting a top-up: its grade of every unjudged document of
    the run's top k, corrected by the people's grades of the top-up's sample
    (``autojudge.topups``; ``metrics.bias.topup.estimate`` with ``auto``). ``run``: the judge
    labelling the hole (None for an imported judge, whose labels come from a file)."""

    topup = models.OneToOneField(
        "assessments.TopUp", on_delete=models.CASCADE, related_name="correction"
    )
    judge = models.ForeignKey(Judge, on_delete=models.PROTECT, related_name="+")
    run = models.ForeignKey(
        JudgeRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.judge} correcting {self.topup}"


class MetaEvaluation(models.Model):
    """The meta-evaluation of every judge of a campaign against one human qrels version over one
    pool version, ranking the runs by one measure (issue 35, point 2): label agreement and
    system-ranking agreement with intervals over topics, and each judge's cost; computed by its
    job (kind ``meta_evaluation``)."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="+")
    human = models.ForeignKey(
        "assessments.QrelsVersion", on_delete=models.PROTECT, related_name="+"
    )
    pool = models.ForeignKey(PoolVersion, on_delete=models.CASCADE, related_name="+")
    measure = models.CharField(max_length=50, help_text="The measure the runs are ranked by.")
    job = models.OneToOneField(Job, on_delete=models.CASCADE, related_name="%(class)s")
    result = models.JSONField(default=dict, blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["human", "pool", "measure"], name="meta_evaluation_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"meta-evaluation against qrels v{self.human.number} ({self.measure})"

    @property
    def state(self) -> str:
        return TASK_WORDS[JobState(self.job.state)]
