"""Campaigns and what they are made of: topics, documents, submitted runs and their entries."""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING, Any

import numpy as np
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from judging.campaigns.run_warnings import READ, RunWarning
from metrics.problems import ReadWarning

if TYPE_CHECKING:
    from judging.core.roles import UserLike


def default_scale() -> list[dict[str, Any]]:
    return [
        {"grade": 0, "label": "Not relevant"},
        {"grade": 1, "label": "Partially relevant"},
        {"grade": 2, "label": "Relevant"},
        {"grade": 3, "label": "Highly relevant"},
    ]


# A relevance scale: at least two grades, each {"grade": whole number, "label": text}, grades
# and labels unique. Grades lie in [SCALE_MIN_GRADE, SCALE_MAX_GRADE] (negative grades mean
# "pooled, not judged" in qrels, and judgments are stored as 32-bit integers).
SCALE_MIN_GRADE = 0
SCALE_MAX_GRADE = 100
SCALE_LABEL_MAX_LENGTH = 100


def has_control_characters(text: str) -> bool:
    """True when ``text`` holds a control character (C0, DEL, C1) or a line/paragraph
    separator: none belongs in a one-line name, and they break file names and headers."""
    return any(unicodedata.category(ch) in ("Cc", "Zl", "Zp") for ch in text)


HIGHLIGHT_TERM_MAX_CHARS = 100
HIGHLIGHT_TERMS_MAX = 200


def highlight_terms_problems(terms: Any) -> list[tuple[str, str]]:
    """Every problem of a campaign's extra highlight terms as ``(location, message)``: a list of
    at most ``HIGHLIGHT_TERMS_MAX`` non-blank strings of at most ``HIGHLIGHT_TERM_MAX_CHARS``
    characters, without control characters. Empty when valid."""
    if not isinstance(terms, list):
        return [("highlight_terms", "must be a list of words or phrases (strings)")]
    problems: list[tuple[str, str]] = []
    if len(terms) > HIGHLIGHT_TERMS_MAX:
        problems.append(
            ("highlight_terms", f"at most {HIGHLIGHT_TERMS_MAX} terms, has {len(terms)}")
        )
    for i, term in enumerate(terms[: HIGHLIGHT_TERMS_MAX + 1]):
        where = f"highlight_terms[{i}]"
        if not isinstance(term, str):
            problems.append((where, f"must be a string, not {type(term).__name__}"))
        elif not term.strip():
            problems.append((where, "must not be blank"))
        elif len(term) > HIGHLIGHT_TERM_MAX_CHARS:
            problems.append(
                (where, f"at most {HIGHLIGHT_TERM_MAX_CHARS} characters, has {len(term)}")
            )
        elif has_control_characters(term):
            problems.append((where, "must not contain control characters (tab, newline, ...)"))
    return problems


def scale_problems(scale: Any, threshold: Any = None) -> list[tuple[str, str]]:
    """Every problem of a relevance scale (and of the threshold, when given) as
    ``(location, message)``: ``("scale[0].grade", "missing")``. Empty when both are valid.

    The one check of a scale: ``Campaign.clean()`` (the admin, the services) and the API's
    serializers use it. A valid threshold is one of the grades above the lowest (a threshold at
    the lowest grade would make every judged document relevant).
    """
    if not isinstance(scale, list):
        return [("scale", 'must be a list of {"grade": ..., "label": ...} objects')]
    problems: list[tuple[str, str]] = []
    if len(scale) < 2:
        problems.append(("scale", f"needs at least two grades, has {len(scale)}"))
    grades: dict[int, int] = {}
    labels: dict[str, int] = {}
    for i, item in enumerate(scale):
        where = f"scale[{i}]"
        if not isinstance(item, dict):
            problems.append((where, 'must be an object {"grade": ..., "label": ...}'))
            continue
        for key in sorted(set(item) - {"grade", "label"}, key=str):
            problems.append((f"{where}.{key}", "unknown field (a grade has a grade and a label)"))
        grade, label = item.get("grade"), item.get("label")
        if "grade" not in item:
            problems.append((f"{where}.grade", "missing"))
        elif isinstance(grade, bool) or not isinstance(grade, int):
            problems.append((f"{where}.grade", f"must be a whole number, not {grade!r}"[:200]))
        elif not SCALE_MIN_GRADE <= grade <= SCALE_MAX_GRADE:
            problems.append(
                (f"{where}.grade", f"must be from {SCALE_MIN_GRADE} to {SCALE_MAX_GRADE}")
            )
        elif grade in grades:
            problems.append((f"{where}.grade", f"{grade} is also scale[{grades[grade]}]"))
        else:
            grades[grade] = i
        if "label" not in item:
            problems.append((f"{where}.label", "missing"))
        elif not isinstance(label, str) or not label.strip():
            problems.append((f"{where}.label", "must be a non-empty text"))
        elif len(label) > SCALE_LABEL_MAX_LENGTH:
            problems.append((f"{where}.label", f"at most {SCALE_LABEL_MAX_LENGTH} characters"))
        elif has_control_characters(label):
            problems.append((f"{where}.label", "must not contain control characters"))
        elif label.strip().casefold() in labels:
            other = labels[label.strip().casefold()]
            problems.append((f"{where}.label", f"{label!r} is also scale[{other}]"))
        else:
            labels[label.strip().casefold()] = i
    if threshold is not None:
        above = sorted(grades)[1:]
        if isinstance(threshold, bool) or not isinstance(threshold, int):
            problems.append(("relevance_threshold", f"must be a whole number, not {threshold!r}"))
        elif not problems and threshold not in above:
            problems.append(
                (
                    "relevance_threshold",
                    f"{threshold} is not one of the grades above the lowest "
                    f"({', '.join(map(str, above))})",
                )
            )
    return problems


def default_measures() -> list[str]:
    return ["R@50", "nDCG@5", "RR@10", "AP", "P@10", "Bpref", "Judged@10"]


class UnknownTopicPolicy(models.TextChoices):
    REJECT = "reject", "Reject the run (every unknown topic is a problem)"
    IGNORE = "ignore", "Drop lines for unknown topics and say how many"


class RunPooling(models.TextChoices):
    """Whether a newly submitted run contributes to the next pool (admins can always change a
    run's ``pooled`` afterwards, or say it at submission)."""

    AUTO = "auto", "Open until the first pool version, then closed"
    OPEN = "open", "Open: new runs are pooled unless an admin says otherwise"
    CLOSED = "closed", "Closed: new runs are not pooled until an admin includes them"


class ScorePrecision(models.TextChoices):
    """How run scores are compared when runs are evaluated. trec_eval 10 reads them as doubles;
    trec_eval 9 and pytrec_eval as C floats (single precision), and scores that differ only
    beyond a float's precision then tie and are ordered by docid: the figures TREC published
    with those versions are reproduced only so."""

    DOUBLE = "double", "Doubles (trec_eval 10)"
    SINGLE = "single", "Single precision (trec_eval 9, pytrec_eval: older published figures)"


# The longest topic spec stored (bytes, as UTF-8), as a campaign's pooled topics or in a bias
# report's key: the key stays well inside PostgreSQL's limit on a unique index's row (about
# 2700 bytes).
TOPIC_SPEC_MAX_LENGTH = 2000


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
    run_pooling = models.CharField(
        max_length=10,
        choices=RunPooling.choices,
        default=RunPooling.AUTO,
        help_text="Whether newly submitted runs contribute to the next pool: open, closed, or "
        "auto (open until the campaign's first pool version, closed after it, so a run that "
        "arrives once judging has begun does not reshape the pool without an admin's say).",
    )
    measures = models.JSONField(
        default=default_measures,
        help_text="Measures computed for every run: R@50 with its ceiling (candidate "
        "generation), nDCG@5 and RR@10 (ranking), AP, P@10, bpref and Judged@10.",
    )
    pool_strategy = models.CharField(
        max_length=20, default="depth", help_text="Strategy of the admin's one-click re-pool."
    )
    pool_depth = models.PositiveIntegerField(
        default=100,
        help_text="Pool depth k: the next pool's, and the depth bias and reusability analyses "
        "default to (an imported collection: the depth inferred from its qrels).",
    )
    pooled_topics = models.CharField(
        max_length=TOPIC_SPEC_MAX_LENGTH,
        blank=True,
        help_text="The topics pooled from the campaign's runs, as a topic spec (e.g. 601-650): "
        "bias and reusability analyses default to them. Empty: every topic. Set by a "
        "collection import that infers its pooling on a subset of topics.",
    )
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
    score_precision = models.CharField(
        max_length=10,
        choices=ScorePrecision.choices,
        default=ScorePrecision.DOUBLE,
        help_text="How run scores are compared when evaluating: as doubles (trec_eval 10), or "
        "rounded to single precision as trec_eval 9 and pytrec_eval read them (to reproduce "
        "figures published with those). Chosen when the campaign is created.",
    )
    document_source = models.CharField(
        max_length=300,
        blank=True,
        help_text="Where the text of pooled documents comes from when a pool is built: "
        "'ir_datasets:<id>' (read from ir_datasets' local cache, only the pooled documents), "
        "or empty (documents are imported from files).",
    )
    guidelines = models.TextField(
        blank=True,
        help_text="Guidelines for assessors: what annotators read about the campaign (the "
        "description is for researchers and is never shown to annotators).",
    )
    highlight_terms = models.JSONField(
        default=list,
        blank=True,
        help_text="Extra terms highlighted in every document of the campaign, beside the "
        "topic's own (a list of words or phrases).",
    )
    gold_rate = models.FloatField(
        default=0.0,
        help_text="Share (0-0.5) of each assessor's items that are gold items (documents of "
        "known grade), mixed into the queue and indistinguishable on the screen.",
    )
    qc_min_accuracy = models.FloatField(
        default=0.6,
        help_text="Quality control: an assessor whose accuracy on gold items falls below this "
        "(after qc_min_gold of them) is flagged on the progress page.",
    )
    qc_min_gold = models.PositiveIntegerField(
        default=10, help_text="Gold judgments an assessor makes before their accuracy is judged."
    )
    stop_rate = models.FloatField(
        default=0.02,
        help_text="Budget plan: stopping is suggested for a topic when the share of relevant "
        "documents among its last 50 judgments falls below this.",
    )
    show_assessor_names = models.BooleanField(
        default=True,
        help_text="Adjudication shows the assessors' names (off: anonymised as A, B, ...).",
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
        # every problem of the name, scale and threshold at once, each with its exact location
        # (params: the services report it, e.g. ``scale[0].grade``; the admin shows the message)
        problems = scale_problems(self.scale, self.relevance_threshold)
        if isinstance(self.name, str) and has_control_characters(self.name):
            problems.append(("name", "must not contain control characters (tab, newline, ...)"))
        problems += highlight_terms_problems(self.highlight_terms)
        if problems:
            errors: dict[str, list[ValidationError]] = {}
            for location, message in problems:
                field = location.split("[", 1)[0].split(".", 1)[0]
                errors.setdefault(field, []).append(
                    ValidationError(
                        "%(location)s: %(problem)s",
                        # not "invalid": the admin form would show its field's generic message
                        code="campaign_rule",
                        params={"location": location, "problem": message},
                    )
                )
            raise ValidationError(errors)
        from metrics.pooling.strategies import STRATEGIES

        if self.pool_strategy not in STRATEGIES:
            raise ValidationError(
                {"pool_strategy": f"unknown strategy; known: {', '.join(STRATEGIES)}"}
            )
        from metrics.measures.names import parse_measures

        try:
            parse_measures(list(self.measures))
        except (ValueError, TypeError) as exc:
            raise ValidationError({"measures": str(exc)}) from None
        if not 0.0 <= self.overlap <= 1.0:
            raise ValidationError({"overlap": "a fraction between 0 and 1"})
        if self.consensus_rule not in ("median", "majority", "max", "min"):
            raise ValidationError({"consensus_rule": "one of median, majority, max, min"})

    def grade_values(self) -> list[int]:
        """The grades, ascending; empty when the stored scale is not valid (then no judgment
        can be recorded until an admin fixes it; see the ``campaigns.W001`` check)."""
        return sorted(self.grade_labels()) if not scale_problems(self.scale) else []

    def grade_labels(self) -> dict[int, str]:
        """grade -> label of the well-formed items; a malformed stored scale never raises here
        (the campaign list, the judging page and the admin stay readable)."""
        if not isinstance(self.scale, list):
            return {}
        return {
            item["grade"]: str(item.get("label", item["grade"]))
            for item in self.scale
            if isinstance(item, dict)
            and isinstance(item.get("grade"), int)
            and not isinstance(item.get("grade"), bool)
        }


class Topic(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="topics")
    qid = models.CharField(max_length=255)  # POOLJUDGE_MAX_QID_BYTES is at most this
    # blank: the topic was created from the ids in qrels or runs (no topics file), and its
    # pages say so until a title is filled in
    title = models.CharField(max_length=1000, blank=True)
    description = models.TextField(blank=True)
    narrative = models.TextField(blank=True)
    tags = models.JSONField(default=list, blank=True, help_text="Labels for slicing results.")

    class Meta:
        ordering = ["campaign", "qid"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "qid"], name="topic_qid_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.qid}: {self.title}" if self.title else f"{self.qid} (id only, no title yet)"

    @property
    def id_only(self) -> bool:
        """Created from the ids in qrels or runs, with no title yet."""
        return not self.title


class Document(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="documents")
    docid = models.CharField(max_length=1024)  # POOLJUDGE_MAX_DOCID_BYTES is at most this
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


class Chunking(models.Model):
    """One way the campaign's documents are cut into passages (chunks): derived by a named
    chunker with its parameters (``spec``, ``metrics.passages`` canonical form, e.g.
    ``fixed(size=500,overlap=100)``), or imported with the team's own passage ids and offsets
    (``spec`` "imported"). Its passages never change: a new cut is a new chunking, and the
    judgments made on one carry over to another by their text spans."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="chunkings")
    name = models.CharField(max_length=64, help_text="Unique in the campaign; ids use it.")
    spec = models.CharField(max_length=200)
    num_passages = models.PositiveIntegerField(default=0)
    num_documents = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign", "created_at", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "name"], name="chunking_name_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.name}: {self.spec}"


class Passage(models.Model):
    """A passage of a document: ``text[start:end]`` of its document, under the id a run ranks
    it by (``passage_id``, ``docid#pid``), unique in the campaign across its chunkings."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="+")
    chunking = models.ForeignKey(Chunking, on_delete=models.CASCADE, related_name="passages")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="passages")
    passage_id = models.CharField(max_length=1024)  # POOLJUDGE_MAX_DOCID_BYTES is at most this
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()

    class Meta:
        ordering = ["chunking", "document", "start"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "passage_id"], name="passage_id_unique"),
            models.CheckConstraint(
                condition=models.Q(end__gt=models.F("start")), name="passage_end"
            ),
        ]
        indexes = [models.Index(fields=["chunking", "document"], name="passage_by_document")]

    def __str__(self) -> str:
        return f"{self.passage_id} [{self.start}, {self.end})"


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
    model_names = models.JSONField(
        default=list,
        blank=True,
        help_text="The models the run is built on, as its submitter declares them (e.g. "
        "'gpt-4o', 'bge-base'): a judge audit flags runs built on the judge's own model.",
    )
    pooled = models.BooleanField(default=True, help_text="Contributes to the judging pool.")
    priority = models.PositiveSmallIntegerField(
        default=1, help_text="Judging priority within its group (1 = first to be pooled)."
    )
    submitted_at = models.DateTimeField(auto_now_add=True)
    checksum = models.CharField(max_length=64, help_text="SHA-256 of the submitted run content.")
    content_checksum = models.CharField(
        max_length=64,
        blank=True,
        default="",
        help_text="SHA-256 of the run as stored (each topic's documents and scores in trec_eval "
        "order, whatever the file's tag column or format): equal for the same content. Empty "
        "for runs stored before it was kept.",
    )
    num_entries = models.PositiveIntegerField(default=0)
    topic_counts = models.JSONField(default=dict, help_text="Entries per topic id.")
    dropped_lines = models.PositiveIntegerField(
        default=0, help_text="Lines dropped for unknown topics (policy 'ignore')."
    )

    warnings = models.JSONField(
        default=list,
        blank=True,
        help_text="What the run was stored with although it deserves a look "
        "(campaigns.run_warnings): what the reader accepted although unusual (NaN or infinite "
        "scores, fields after the sixth), the same content as another run, docids not among "
        "the campaign's documents: [{kind, message, count, lines}], as the submission answered.",
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

    @property
    def all_warnings(self) -> tuple[RunWarning, ...]:
        """Every stored warning, in the order the submission answered them."""
        return tuple(RunWarning.from_dict(w) for w in self.warnings)

    @property
    def read_warnings(self) -> tuple[ReadWarning, ...]:
        """The reader's warnings, as the reader gave them."""
        return tuple(
            ReadWarning(w.message, w.count, w.lines) for w in self.all_warnings if w.kind == READ
        )

    @property
    def submission_warnings(self) -> tuple[RunWarning, ...]:
        """The warnings about the run against the campaign (same content, unknown docids)."""
        return tuple(w for w in self.all_warnings if w.kind != READ)


class RunAnswer(models.Model):
    """One topic's generated answer in an answer run (TREC RAG's format): its sentences, each
    with the references it cites (0-based indices into the topic's ranked references, which are
    the run's ranked list for the topic), the response length the file stated and the words
    counted as TREC's checkers count them."""

    run = models.ForeignKey("Run", on_delete=models.CASCADE, related_name="answers")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="+")
    sentences = models.JSONField(help_text='[{"text": ..., "citations": [0, 2]}, ...]')
    references = models.JSONField(help_text="The ranked segment ids, as submitted.")
    response_length = models.PositiveIntegerField(null=True, blank=True)
    words = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "topic"], name="runanswer_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.run_id}/{self.topic_id}: {len(self.sentences)} sentences"


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
