from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AnonymousUser
from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.settings import api_settings

from judging.assessments.models import QrelsDerivation, QrelsVersion
from judging.campaigns import run_warnings
from judging.campaigns.models import (
    HIGHLIGHT_TERM_MAX_CHARS,
    HIGHLIGHT_TERMS_MAX,
    SCALE_LABEL_MAX_LENGTH,
    SCALE_MAX_GRADE,
    SCALE_MIN_GRADE,
    Campaign,
    Document,
    Run,
    RunPooling,
    ScorePrecision,
    Topic,
    UnknownTopicPolicy,
    default_scale,
    has_control_characters,
    highlight_terms_problems,
    scale_problems,
)
from judging.campaigns.selectors import visible_run_tags
from judging.core.roles import is_admin, is_researcher
from judging.evaluation.selectors import (
    latest_qrels_version,
    qrels_evaluation_status,
    run_evaluation_status,
)
from judging.pools.models import SEGMENTS_HELP, PoolSegments
from judging.pools.selectors import pool_status


class ScaleItemSerializer(serializers.Serializer[Any]):
    grade = serializers.IntegerField(min_value=SCALE_MIN_GRADE, max_value=SCALE_MAX_GRADE)
    label = serializers.CharField(max_length=SCALE_LABEL_MAX_LENGTH)  # type: ignore[assignment]


@extend_schema_field(ScaleItemSerializer(many=True))
class ScaleField(serializers.JSONField):
    """The relevance scale, checked whole by ``campaigns.models.scale_problems`` in the
    serializer's ``validate()`` (with the threshold); read back as stored, so that a malformed
    stored scale cannot make the campaign list fail for everyone."""


@extend_schema_field(
    {
        "type": "array",
        "items": {"type": "string", "minLength": 1, "maxLength": HIGHLIGHT_TERM_MAX_CHARS},
        "maxItems": HIGHLIGHT_TERMS_MAX,
    }
)
class HighlightTermsField(serializers.JSONField):
    """A campaign's extra highlight terms, checked by ``campaigns.models.highlight_terms_problems``
    (every problem with its location, ``highlight_terms[3]``)."""

    def to_internal_value(self, data: Any) -> Any:
        value = super().to_internal_value(data)
        problems = highlight_terms_problems(value)
        if problems:
            # by index, as a ListField answers: the error handler names "highlight_terms[3]"
            errors: dict[Any, list[str]] = {}
            for at, problem in problems:
                index = at.partition("[")[2].rstrip("]")
                key = int(index) if index else api_settings.NON_FIELD_ERRORS_KEY
                errors.setdefault(key, []).append(problem)
            raise serializers.ValidationError(errors)
        return value


def _check_scale(scale: Any, threshold: Any) -> None:
    problems = scale_problems(scale, threshold)
    if problems:
        errors: dict[str, list[str]] = {}
        for location, message in problems:
            errors.setdefault(location, []).append(message)
        raise serializers.ValidationError(errors)


def _check_name(name: str) -> str:
    if has_control_characters(name):
        raise serializers.ValidationError("must not contain control characters (tab, newline, ...)")
    return name


# What annotators read of a campaign: an allow-list, so that a field added later for
# researchers or admins (run settings, quality control, ...) stays hidden from them by default.
# They are blind to systems (how many runs there are, how they are pooled) and read the
# guidelines, never the researcher-facing description.
ANNOTATOR_CAMPAIGN_FIELDS = frozenset(
    {
        "id",
        "name",
        "guidelines",
        "scale",
        "relevance_threshold",
        "created_at",
        "num_topics",
        "num_documents",
    }
)


def measures_field() -> serializers.ListField:
    return serializers.ListField(
        child=serializers.CharField(max_length=100),
        required=False,
        help_text="The measures computed for every run (e.g. R@5, RR@10, nDCG@5); default: "
        "R@50, nDCG@5, RR@10, AP, P@10, Bpref, Judged@10.",
    )


def pool_depth_field() -> serializers.IntegerField:
    return serializers.IntegerField(
        required=False, min_value=1, help_text="The depth of the next pool (default 100)."
    )


class CampaignSerializer(serializers.ModelSerializer[Campaign]):
    """A campaign as the requesting user may read it (pass the request in the context): to
    anyone who is not a researcher or an admin, only ``ANNOTATOR_CAMPAIGN_FIELDS``."""

    scale = ScaleField(required=False)
    guidelines = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=100_000,
        help_text="Guidelines for assessors: what annotators read about the campaign.",
    )
    num_topics = serializers.IntegerField(read_only=True)
    num_documents = serializers.IntegerField(read_only=True)
    num_runs = serializers.IntegerField(
        read_only=True, allow_null=True, help_text="Researchers and admins only."
    )
    highlight_terms = HighlightTermsField(
        required=False,
        help_text="Extra words or phrases highlighted in every document (at most 200, each at "
        "most 100 characters).",
    )
    measures = measures_field()
    pool_depth = pool_depth_field()

    class Meta:
        model = Campaign
        fields = [
            "id",
            "name",
            "description",
            "guidelines",
            "scale",
            "relevance_threshold",
            "unknown_topic_policy",
            "run_pooling",
            "score_precision",
            "created_at",
            "num_topics",
            "num_documents",
            "num_runs",
            "highlight_terms",
            "show_assessor_names",
            "measures",
            "pool_depth",
        ]
        read_only_fields = ["id", "created_at", "score_precision"]

    def validate_name(self, name: str) -> str:
        return _check_name(name)

    def to_representation(self, instance: Campaign) -> dict[str, Any]:
        data: dict[str, Any] = super().to_representation(instance)
        request = self.context.get("request")
        if request is None or not is_researcher(request.user):
            return {k: v for k, v in data.items() if k in ANNOTATOR_CAMPAIGN_FIELDS}
        return data

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if "scale" in attrs or "relevance_threshold" in attrs:
            current = self.instance
            _check_scale(
                attrs.get("scale", current.scale if current else default_scale()),
                attrs.get("relevance_threshold", current.relevance_threshold if current else 1),
            )
        return attrs


class CampaignSchema(OpenApiSerializerExtension):  # type: ignore[no-untyped-call]
    """The schema of ``CampaignSerializer``: only ``ANNOTATOR_CAMPAIGN_FIELDS`` are required
    (an annotator's answer has no others), everything else as drf-spectacular maps it."""

    target_class = CampaignSerializer

    def map_serializer(self, auto_schema: Any, direction: Any) -> Any:
        schema = auto_schema._map_serializer(self.target, direction, bypass_extensions=True)
        if direction != "response":
            return schema
        required = [f for f in schema.get("required", []) if f in ANNOTATOR_CAMPAIGN_FIELDS]
        if required:
            schema["required"] = required
        else:
            schema.pop("required", None)
        return schema


class CampaignCreateSerializer(serializers.Serializer[Any]):
    name = serializers.CharField(max_length=200)
    description = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        help_text="For researchers: never shown to annotators.",
    )
    guidelines = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=100_000,
        help_text="Guidelines for assessors: what annotators read about the campaign.",
    )
    scale = ScaleField(required=False)
    relevance_threshold = serializers.IntegerField(default=1)
    unknown_topic_policy = serializers.ChoiceField(
        choices=UnknownTopicPolicy.choices, default=UnknownTopicPolicy.REJECT
    )
    run_pooling = serializers.ChoiceField(choices=RunPooling.choices, default=RunPooling.AUTO)
    score_precision = serializers.ChoiceField(
        choices=ScorePrecision.choices,
        default=ScorePrecision.DOUBLE,
        help_text="Compare run scores as doubles (trec_eval 10) or in single precision, as "
        "trec_eval 9 and pytrec_eval read them; chosen once, when the campaign is created.",
    )
    highlight_terms = HighlightTermsField(
        required=False,
        help_text="Extra words or phrases highlighted in every document (at most 200, each at "
        "most 100 characters).",
    )
    measures = measures_field()
    pool_depth = pool_depth_field()

    def validate_name(self, name: str) -> str:
        return _check_name(name)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        _check_scale(attrs.get("scale", default_scale()), attrs["relevance_threshold"])
        return attrs


class TopicSerializer(serializers.ModelSerializer[Topic]):
    id_only = serializers.BooleanField(
        read_only=True,
        help_text="Created from the topic ids of qrels or runs, with no title yet.",
    )

    class Meta:
        model = Topic
        fields = ["id", "qid", "title", "id_only", "description", "narrative", "tags"]


class DocumentSerializer(serializers.ModelSerializer[Document]):
    """A document of the campaign (in a list, its text only with include=text)."""

    # with_text=False (a list's default) leaves the text out

    text = serializers.CharField(
        required=False,
        help_text="The document's text; in a list only with include=text (pages of at most "
        "POOLJUDGE_MAX_TEXT_PAGE_SIZE).",
    )

    class Meta:
        model = Document
        fields = ["id", "docid", "title", "text", "url", "metadata"]

    def __init__(self, *args: Any, with_text: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not with_text:
            self.fields.pop("text")


class FileUploadSerializer(serializers.Serializer[Any]):
    file = serializers.FileField(help_text="The file (plain or gzip).")
    format = serializers.CharField(
        required=False,
        allow_blank=True,
        help_text="Format name; detected from the content if omitted.",
    )


TASK_STATES = ["pending", "queued", "running", "stale", "done", "failed"]


class TaskStatusSerializer(serializers.Serializer[Any]):
    """Where work that follows a change stands. ``pending``: recorded, not yet sent to a worker
    (the broker is unreachable; it is sent when it is back); ``queued``; ``running``; ``stale``:
    its worker was lost (since ``since``) and the work is sent again; ``done``; ``failed``."""

    status = serializers.CharField(
        allow_null=True, help_text=f"One of {', '.join(TASK_STATES)}; null: nothing was asked."
    )
    detail = serializers.CharField()
    since = serializers.DateTimeField(allow_null=True, required=False)


class RunEvaluationStatusSerializer(TaskStatusSerializer):
    qrels_version = serializers.IntegerField(
        allow_null=True, help_text="The latest qrels version, the one the status is about."
    )


class RunWarningSerializer(serializers.Serializer[Any]):
    kind = serializers.ChoiceField(
        choices=run_warnings.KINDS,
        help_text="read: accepted as trec_eval reads it (a NaN or infinite score, fields after "
        "the sixth); same_content: the same documents and scores for every topic as another "
        "run of yours (any run of the campaign, for an admin), stored under another tag; "
        "unknown_docids: docids not among the campaign's documents (when it has some).",
    )
    message = serializers.CharField(
        help_text="What it is about, e.g. a NaN score, or the run with the same content."
    )
    count = serializers.IntegerField(help_text="On how many entries (lines of a file).")
    lines = serializers.ListField(
        child=serializers.IntegerField(),
        help_text="The first of those lines (at most ten), where they are known.",
    )
    text = serializers.CharField(
        help_text="The warning in one sentence, as the run's page says it."
    )


class RunSerializer(serializers.ModelSerializer[Run]):
    """A run; ``tag`` as the requesting user knows it (pass the request in the context): the
    name its submitter gave it, for admins its tag in the campaign (the same unless another
    researcher's run had that name: then it carries a suffix, ``name~2``)."""

    owner = serializers.CharField(source="owner.username", read_only=True)
    tag = serializers.SerializerMethodField()
    campaign: serializers.PrimaryKeyRelatedField[Campaign] = serializers.PrimaryKeyRelatedField(
        read_only=True
    )
    num_topics = serializers.SerializerMethodField()
    evaluation = serializers.SerializerMethodField(
        help_text="Its evaluation against the latest qrels version: stored, or its task's state."
    )
    warnings = serializers.SerializerMethodField(
        help_text="What the run was stored with although it deserves a look: what the file held "
        "that trec_eval accepts and we accept too, said (NaN scores, ranked after every other "
        "document of their topic, among themselves by docid descending; infinite scores; "
        "fields after the sixth, ignored), each kind with its count and first lines (none for "
        "JSON); the same content as another run; docids not among the campaign's documents. "
        "Empty for a clean run."
    )

    class Meta:
        model = Run
        fields = [
            "id",
            "campaign",
            "tag",
            "owner",
            "group",
            "description",
            "model_names",
            "pooled",
            "priority",
            "submitted_at",
            "checksum",
            "num_entries",
            "num_topics",
            "topic_counts",
            "dropped_lines",
            "warnings",
            "evaluation",
        ]
        read_only_fields = fields

    @extend_schema_field(RunWarningSerializer(many=True))
    def get_warnings(self, run: Run) -> list[dict[str, Any]]:
        return [{**w.as_dict(), "text": str(w)} for w in run.all_warnings]

    def get_num_topics(self, run: Run) -> int:
        return len(run.topic_counts)

    def get_tag(self, run: Run) -> str:
        request = self.context.get("request")
        return run.tag if request is not None and is_admin(request.user) else run.name

    @extend_schema_field(RunEvaluationStatusSerializer)
    def get_evaluation(self, run: Run) -> dict[str, Any]:
        latest = self.context.setdefault("latest_qrels", {})  # one read per campaign per list
        if run.campaign_id not in latest:
            latest[run.campaign_id] = latest_qrels_version(run.campaign_id)
        status = run_evaluation_status(run, latest[run.campaign_id])
        return RunEvaluationStatusSerializer(status).data


class RunSubmittedSerializer(RunSerializer):
    """The stored run as the submission answers it (its ``warnings`` say what it was stored
    with although it deserves a look)."""


class RunUpdateSerializer(serializers.ModelSerializer[Run]):
    class Meta:
        model = Run
        fields = ["group", "description", "model_names", "pooled", "priority"]


class RunSubmitSerializer(serializers.Serializer[Any]):
    file = serializers.FileField(required=False, help_text="TREC run file, plain or gzip.")
    results = serializers.JSONField(
        required=False, help_text='JSON run: {"qid": {"docid": score, ...}, ...}'
    )
    tag = serializers.CharField(
        required=False, max_length=100, help_text="Run tag; defaults to the file's tag column."
    )
    group = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)
    description = serializers.CharField(required=False, allow_blank=True, default="")
    model_names = serializers.ListField(
        child=serializers.CharField(max_length=200),
        required=False,
        default=list,
        max_length=20,
        help_text="The models the run is built on (e.g. gpt-4o): a judge's audit flags runs "
        "built on the judge's own model.",
    )
    pooled = serializers.BooleanField(
        required=False,
        allow_null=True,
        default=None,
        help_text="Admins only; defaults to the campaign's setting.",
    )
    priority = serializers.IntegerField(required=False, default=1, min_value=1, max_value=1000)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("file" in attrs) == ("results" in attrs):
            raise serializers.ValidationError("send exactly one of 'file' or 'results'")
        return attrs


class QrelsJudgeSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    name = serializers.CharField()
    version = serializers.IntegerField()
    kind = serializers.CharField()
    model = serializers.CharField()


class StratumSerializer(serializers.Serializer[Any]):
    pooled = serializers.IntegerField()
    judged = serializers.IntegerField()
    rate = serializers.FloatField(allow_null=True)


class QrelsDesignSerializer(serializers.Serializer[Any]):
    pool = serializers.IntegerField(
        allow_null=True,
        help_text="The sampled pool version it was published from (null: imported).",
    )
    strategy = serializers.CharField()
    strata = serializers.DictField(
        child=StratumSerializer(), help_text="Per stratum ('0': judged before or outside the draw)."
    )
    awaiting = serializers.IntegerField(help_text="Drawn documents not judged yet (read as -1).")
    judged_outside_sample = serializers.IntegerField(
        help_text="Documents judged although not drawn (kept -1: the design stays valid)."
    )


class AnswerSentenceSerializer(serializers.Serializer[Any]):
    text = serializers.CharField()
    citations = serializers.ListField(
        child=serializers.CharField(), help_text="The segment ids the sentence cites."
    )


class RunAnswerSerializer(serializers.Serializer[Any]):
    topic = serializers.CharField()
    references = serializers.ListField(
        child=serializers.CharField(), help_text="The ranked segment ids, as submitted."
    )
    response_length = serializers.IntegerField(
        allow_null=True, help_text="As the file stated it (null: not stated)."
    )
    words = serializers.IntegerField(help_text="Counted as TREC RAG's checkers count them.")
    sentences = AnswerSentenceSerializer(many=True)


class CoverageCountsSerializer(serializers.Serializer[Any]):
    documents = serializers.IntegerField(help_text="judged documents with passages considered")
    chunks = serializers.IntegerField(help_text="new passages considered")
    relevant = serializers.IntegerField(help_text="carried relevant")
    non_relevant = serializers.IntegerField(help_text="carried non-relevant")
    unknown = serializers.IntegerField(help_text="left unjudged")
    relevant_spans = serializers.IntegerField(help_text="spans judged relevant")
    lost_spans = serializers.IntegerField(help_text="relevant spans no new passage kept")


class QrelsDerivationSerializer(serializers.Serializer[Any]):
    base = serializers.IntegerField(help_text="The number of the version it was derived from.")
    chunking = serializers.CharField(
        allow_null=True, help_text="The chunking carried to; null: taken to documents."
    )
    rule = serializers.CharField(help_text="The rule, in words.")
    overall = CoverageCountsSerializer(allow_null=True, help_text="A carry-over's coverage.")
    topics = serializers.DictField(child=CoverageCountsSerializer(), help_text="Per topic.")
    lost_topics = serializers.ListField(
        child=serializers.CharField(),
        help_text="Topics whose relevant spans all found no relevant new passage.",
    )
    counts = serializers.DictField(
        child=serializers.IntegerField(), help_text="Rows read and written (document level)."
    )


# what a list of versions selects with them, so that each one's derivation costs no query
DERIVATION = ("derivation__base", "derivation__chunking")


def derivation_answer(version: QrelsVersion) -> dict[str, Any] | None:
    """A derived version's derivation as ``QrelsDerivationSerializer`` declares it."""
    try:  # read with the version where its query selected it (``DERIVATION``)
        derivation = version.derivation
    except QrelsDerivation.DoesNotExist:
        return None
    report = derivation.report
    return {
        "base": derivation.base.number,
        "chunking": derivation.chunking.name if derivation.chunking else None,
        "rule": derivation.rule,
        "overall": report.get("overall"),
        "topics": report.get("topics", {}),
        "lost_topics": report.get("lost_topics", []),
        "counts": {
            k: v
            for k, v in report.items()
            if isinstance(v, int) and k not in ("version", "unjudged_documents")
        },
    }


class QrelsVersionSerializer(serializers.ModelSerializer[QrelsVersion]):
    evaluation = serializers.SerializerMethodField(
        help_text="The task that evaluates every run against this version."
    )
    sampled = serializers.SerializerMethodField(
        help_text="A sampled version's design (its export is sample_eval.pl's five columns, -1: "
        "pooled, not sampled; ?format=prels or trec for the other forms); null: complete "
        "judgments."
    )
    kind_label = serializers.CharField(
        read_only=True, help_text="What the grades rest on: human, automatic (judge) or hybrid."
    )
    derivation = serializers.SerializerMethodField(
        help_text="How a derived version was made: carried to another chunking by the judged "
        "spans (its rule and coverage), or taken to documents; null otherwise."
    )
    judges = QrelsJudgeSerializer(
        many=True,
        read_only=True,
        help_text="The automatic judge versions whose labels are in it (empty: human).",
    )

    class Meta:
        model = QrelsVersion
        fields = [
            "id",
            "campaign",
            "number",
            "source",
            "kind",
            "kind_label",
            "judges",
            "content_hash",
            "note",
            "num_judgments",
            "num_relevant",
            "created_at",
            "extends",
            "minor",
            "minor_label",
            "purpose",
            "sampled",
            "derivation",
            "evaluation",
        ]
        read_only_fields = fields

    @extend_schema_field(QrelsDerivationSerializer(allow_null=True))
    def get_derivation(self, version: QrelsVersion) -> dict[str, Any] | None:
        return derivation_answer(version)

    @extend_schema_field(QrelsDesignSerializer(allow_null=True))
    def get_sampled(self, version: QrelsVersion) -> dict[str, Any] | None:
        return QrelsDesignSerializer(version.design).data if version.design else None

    @extend_schema_field(TaskStatusSerializer)
    def get_evaluation(self, version: QrelsVersion) -> dict[str, Any]:
        return TaskStatusSerializer(qrels_evaluation_status(version)).data


class ProblemSerializer(serializers.Serializer[Any]):
    message = serializers.CharField()
    line = serializers.IntegerField(required=False)
    location = serializers.CharField(required=False)


class ErrorSerializer(serializers.Serializer[Any]):
    """The one shape of every 4xx answer; the problem fields only where there are problems."""

    error = serializers.CharField()
    detail = serializers.CharField()
    problems = ProblemSerializer(many=True, required=False)
    problem_count = serializers.IntegerField(required=False)
    problems_shown = serializers.IntegerField(required=False)
    source = serializers.CharField(required=False)  # type: ignore[assignment]


class ImportSummarySerializer(serializers.Serializer[Any]):
    created = serializers.IntegerField()
    updated = serializers.IntegerField()
    unchanged = serializers.IntegerField()
    notes = serializers.ListField(child=serializers.CharField())


class MeSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    username = serializers.CharField()
    roles = serializers.ListField(child=serializers.CharField())


class PoolRequestSerializer(serializers.Serializer[Any]):
    strategy = serializers.CharField(
        required=False,
        help_text="docid, depth, rank, rrf, borda, mtf, maxmean, thompson, hedge, "
        "stratified; default: the campaign's",
    )
    depth = serializers.IntegerField(required=False, min_value=1, max_value=100_000)
    budget = serializers.IntegerField(
        required=False, min_value=1, max_value=2_147_483_647, allow_null=True
    )  # stored as a 32-bit integer: larger is a 400, not an overflow in the database
    runs = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="Run tags (or ids) to pool; default: the campaign's pooled runs",
    )
    params = serializers.DictField(
        required=False,
        help_text='Strategy parameters, e.g. {"per_group": 1} for depth, {"beta": 0.1} for hedge',
    )
    segments = serializers.ChoiceField(
        choices=PoolSegments.choices,
        required=False,
        help_text=f"{SEGMENTS_HELP} Default: ranked. received and cited need an answer run "
        "among the contributing runs and a strategy that does not sample.",
    )


class PoolStatusSerializer(serializers.Serializer[Any]):
    status = serializers.CharField(
        help_text="One of pending (not yet sent to a worker: the broker is unreachable), queued, "
        "building, stale (its worker stopped beating, lost since 'since'; the build is taken "
        "over), built, failed",
    )
    detail = serializers.CharField()
    since = serializers.DateTimeField(allow_null=True)


class PoolVersionSerializer(serializers.ModelSerializer[Any]):
    """A pool version; ``run_tags`` as the requesting user may see them (pass the request in the
    context): admins every tag, researchers their own and the others anonymised."""

    percent = serializers.FloatField(read_only=True)
    build = serializers.SerializerMethodField(help_text="What the build is doing, honestly.")
    base = serializers.SerializerMethodField()
    run_tags = serializers.SerializerMethodField(
        help_text="Tags of the contributing runs; other researchers' runs anonymised."
    )

    class Meta:
        from judging.pools.models import PoolVersion

        model = PoolVersion
        fields = [
            "id",
            "campaign",
            "number",
            "state",
            "strategy",
            "params",
            "depth",
            "budget",
            "segments",
            "adaptive",
            "run_tags",
            "base",
            "created_at",
            "started_at",
            "heartbeat_at",
            "finished_at",
            "build",
            "attempts",
            "error",
            "total_topics",
            "processed_topics",
            "processed_documents",
            "percent",
            "num_documents",
            "num_added",
            "num_to_judge",
            "num_missing_text",
        ]
        read_only_fields = fields

    def get_base(self, version: Any) -> int | None:
        return version.base.number if version.base_id else None

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_run_tags(self, version: Any) -> list[str]:
        request = self.context.get("request")
        user = getattr(request, "user", None) or AnonymousUser()
        return visible_run_tags(version.campaign_id, list(version.run_tags), user)

    @extend_schema_field(PoolStatusSerializer)
    def get_build(self, version: Any) -> dict[str, Any]:
        return PoolStatusSerializer(pool_status(version)).data


class PoolDocumentSerializer(serializers.Serializer[Any]):
    topic = serializers.CharField(source="topic__qid")
    docid = serializers.CharField()
    position = serializers.IntegerField()
    added = serializers.BooleanField()
    to_judge = serializers.BooleanField()
    has_text = serializers.BooleanField()
    inclusion = serializers.FloatField(allow_null=True)
    stratum = serializers.CharField(
        help_text="A sampled pool's stratum ('0': judged before the draw); empty otherwise."
    )
    sampled = serializers.BooleanField(
        help_text="Drawn for judging; false: in the pool, not sampled (never queued)."
    )


class MissingTextDocumentSerializer(serializers.Serializer[Any]):
    docid = serializers.CharField()
    topics = serializers.ListField(
        child=serializers.CharField(), help_text="Topics it is pooled for in the version."
    )
    count = serializers.IntegerField(help_text="How many topics.")


class DocumentUploadSerializer(FileUploadSerializer):
    only_missing = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Store only the pooled documents without text; several 'file' parts may be sent.",
    )


class MissingTextImportSerializer(serializers.Serializer[Any]):
    wanted = serializers.IntegerField(help_text="Pooled documents without text before.")
    stored = serializers.IntegerField(help_text="Of those, found in the files and stored.")
    empty = serializers.IntegerField(help_text="Stored with neither title nor text.")
    empty_docids = serializers.ListField(child=serializers.CharField())
    still_missing = serializers.IntegerField(help_text="Wanted, not in the files.")
    still_missing_docids = serializers.ListField(
        child=serializers.CharField(), help_text="The first of them."
    )
    read = serializers.IntegerField(help_text="Records read in the files.")
    ignored = serializers.IntegerField(help_text="Records not stored (nobody waits for them).")
    files = serializers.ListField(child=serializers.CharField())


class NoteSerializer(serializers.Serializer[Any]):
    """The optional note of a publish or an import (``{"note": "..."}``)."""

    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=10_000)


def note_of(data: Any) -> str:
    """The validated note of a request body (a 400 for a note that is not text)."""
    ser = NoteSerializer(data=data)
    ser.is_valid(raise_exception=True)
    return str(ser.validated_data["note"])


class CollectionImportSerializer(serializers.Serializer[Any]):
    """A TREC collection in one multipart request (``POST /api/v1/collections/``)."""

    name = serializers.CharField(max_length=200, help_text="The new campaign's name.")
    description = serializers.CharField(required=False, allow_blank=True, default="")
    measures = serializers.ListField(
        child=serializers.CharField(max_length=100),
        required=False,
        help_text="The campaign's measures (repeat the field); default: the usual set.",
    )
    relevance_threshold = serializers.IntegerField(required=False, default=1)
    score_precision = serializers.ChoiceField(
        choices=ScorePrecision.choices,
        default=ScorePrecision.DOUBLE,
        help_text="Compare run scores as doubles (trec_eval 10) or in single precision, as "
        "trec_eval 9 and pytrec_eval read them (to reproduce figures published with those).",
    )
    pooled_runs = serializers.ChoiceField(
        choices=["all", "none", "infer"],
        default="infer",
        help_text="Which runs are pooled: all, none, or inferred from the qrels.",
    )
    infer_topics = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        help_text="Topics the pooling is inferred on, e.g. '601-650' (default: every qrels topic).",
    )
    pooled = serializers.ListField(
        child=serializers.CharField(max_length=255),
        required=False,
        help_text="Exactly these run tags are pooled (wins over pooled_runs).",
    )
    dry_run = serializers.BooleanField(
        required=False, default=False, help_text="Validate and answer the plan; store nothing."
    )
    topics = serializers.FileField(
        required=False, help_text="Topics file; without it topics are created from the ids."
    )
    documents = serializers.ListField(
        child=serializers.FileField(), required=False, help_text="Documents files (repeat)."
    )
    qrels = serializers.FileField(required=False, help_text="TREC qrels file.")
    runs = serializers.ListField(
        child=serializers.FileField(), required=False, help_text="TREC run files (repeat)."
    )
    groups = serializers.FileField(required=False, help_text="runs.tsv: run<TAB>group lines.")


class CollectionImportResultSerializer(serializers.Serializer[Any]):
    campaign = CampaignSerializer(allow_null=True, help_text="The stored campaign (null: dry run).")
    summary = serializers.DictField(
        help_text="What was stored (or would be): topics, documents, judgments, runs with "
        "their pooled flag and group, and the inferred pooling table."
    )
