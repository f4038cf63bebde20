from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from judging.assessments.models import QrelsVersion
from judging.campaigns.models import Campaign, Document, Run, Topic, UnknownTopicPolicy
from judging.evaluation.selectors import (
    latest_qrels_version,
    qrels_evaluation_status,
    run_evaluation_status,
)
from judging.pools.selectors import pool_status


class ScaleItemSerializer(serializers.Serializer[Any]):
    grade = serializers.IntegerField()
    label = serializers.CharField(max_length=100)  # type: ignore[assignment]


class CampaignSerializer(serializers.ModelSerializer[Campaign]):
    scale = ScaleItemSerializer(many=True, required=False)
    num_topics = serializers.IntegerField(read_only=True)
    num_documents = serializers.IntegerField(read_only=True)
    num_runs = serializers.IntegerField(read_only=True)

    class Meta:
        model = Campaign
        fields = [
            "id",
            "name",
            "description",
            "scale",
            "relevance_threshold",
            "unknown_topic_policy",
            "default_pooled",
            "created_at",
            "num_topics",
            "num_documents",
            "num_runs",
        ]
        read_only_fields = ["id", "created_at"]


class CampaignCreateSerializer(serializers.Serializer[Any]):
    name = serializers.CharField(max_length=200)
    description = serializers.CharField(required=False, allow_blank=True, default="")
    scale = ScaleItemSerializer(many=True, required=False)
    relevance_threshold = serializers.IntegerField(default=1)
    unknown_topic_policy = serializers.ChoiceField(
        choices=UnknownTopicPolicy.choices, default=UnknownTopicPolicy.REJECT
    )
    default_pooled = serializers.BooleanField(default=True)


class TopicSerializer(serializers.ModelSerializer[Topic]):
    class Meta:
        model = Topic
        fields = ["id", "qid", "title", "description", "narrative", "tags"]


class DocumentSerializer(serializers.ModelSerializer[Document]):
    class Meta:
        model = Document
        fields = ["id", "docid", "title", "text", "url", "metadata"]


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


class RunSerializer(serializers.ModelSerializer[Run]):
    owner = serializers.CharField(source="owner.username", read_only=True)
    campaign: serializers.PrimaryKeyRelatedField[Campaign] = serializers.PrimaryKeyRelatedField(
        read_only=True
    )
    num_topics = serializers.SerializerMethodField()
    evaluation = serializers.SerializerMethodField(
        help_text="Its evaluation against the latest qrels version: stored, or its task's state."
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
            "pooled",
            "priority",
            "submitted_at",
            "checksum",
            "num_entries",
            "num_topics",
            "topic_counts",
            "dropped_lines",
            "evaluation",
        ]
        read_only_fields = fields

    def get_num_topics(self, run: Run) -> int:
        return len(run.topic_counts)

    @extend_schema_field(RunEvaluationStatusSerializer)
    def get_evaluation(self, run: Run) -> dict[str, Any]:
        latest = self.context.setdefault("latest_qrels", {})  # one read per campaign per list
        if run.campaign_id not in latest:
            latest[run.campaign_id] = latest_qrels_version(run.campaign_id)
        status = run_evaluation_status(run, latest[run.campaign_id])
        return RunEvaluationStatusSerializer(status).data


class RunUpdateSerializer(serializers.ModelSerializer[Run]):
    class Meta:
        model = Run
        fields = ["group", "description", "pooled", "priority"]


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


class QrelsVersionSerializer(serializers.ModelSerializer[QrelsVersion]):
    evaluation = serializers.SerializerMethodField(
        help_text="The task that evaluates every run against this version."
    )

    class Meta:
        model = QrelsVersion
        fields = [
            "id",
            "campaign",
            "number",
            "source",
            "content_hash",
            "note",
            "num_judgments",
            "num_relevant",
            "created_at",
            "evaluation",
        ]
        read_only_fields = fields

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
    budget = serializers.IntegerField(required=False, min_value=1, allow_null=True)
    runs = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="Run tags (or ids) to pool; default: the campaign's pooled runs",
    )
    params = serializers.DictField(
        required=False,
        help_text='Strategy parameters, e.g. {"per_group": 1} for depth, {"beta": 0.1} for hedge',
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
    percent = serializers.FloatField(read_only=True)
    build = serializers.SerializerMethodField(help_text="What the build is doing, honestly.")
    base = serializers.SerializerMethodField()

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
