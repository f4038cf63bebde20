"""Serializers of the automatic judges' API: what a request may hold (checked here, field by
field, so a bad value is a 400 naming it) and what an answer holds (the selectors' dicts, passed
through these so the answers match the schema). No endpoint URL or key is in any of them."""

from __future__ import annotations

import math
from typing import Any

from rest_framework import serializers

from judging.autojudge.answer_labels import ANSWER_KINDS
from judging.autojudge.models import CREATED_KINDS, JudgeKind, JuryMethod
from judging.autojudge.prompts import MAX_PROMPT_CHARS
from judging.autojudge.services import LABEL_FORMATS
from judging.core.params import MAX_ID

MAX_GRADE = 1_000_000


def optional_number(help_text: str) -> serializers.IntegerField:
    """A version's number or an id that may be left out (then the default its help says)."""
    return serializers.IntegerField(
        required=False, min_value=1, max_value=MAX_ID, help_text=help_text
    )


MAX_PRICE = 1e6


class FiniteFloatField(serializers.FloatField):
    """A float that is a real number (``"nan"`` and ``"inf"`` parse as floats: refused)."""

    def to_internal_value(self, data: Any) -> float:
        value = float(super().to_internal_value(data))
        if not math.isfinite(value):
            raise serializers.ValidationError("must be a finite number")
        return value


# ---- requests -----------------------------------------------------------------------------


class JudgeCreateSerializer(serializers.Serializer[Any]):
    kind = serializers.ChoiceField(choices=CREATED_KINDS)
    name = serializers.CharField(
        max_length=100, help_text="lower-case letters, digits, '-' and '_'; versions share it"
    )
    model = serializers.CharField(
        max_length=200, help_text="the model that grades (imported: the one its file declares)"
    )
    prompt = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=MAX_PROMPT_CHARS,
        trim_whitespace=False,
        help_text="openai-compatible: the template with {query} and {passage} (default: UMBRELA's)",
    )
    description = serializers.CharField(required=False, allow_blank=True, max_length=5000)
    endpoint = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=100,
        help_text="openai-compatible: the NAME of an endpoint configured in settings "
        "(POOLJUDGE_LLM_ENDPOINTS); never a URL or a key",
    )
    mapping = serializers.DictField(
        child=serializers.IntegerField(min_value=-MAX_GRADE, max_value=MAX_GRADE),
        required=False,
        help_text="the judge's raw grade (UMBRELA's 0-3) -> the campaign's grade",
    )
    price_prompt_per_1k = FiniteFloatField(required=False, min_value=0, max_value=MAX_PRICE)
    price_completion_per_1k = FiniteFloatField(required=False, min_value=0, max_value=MAX_PRICE)
    max_chars = serializers.IntegerField(
        required=False, min_value=100, max_value=100_000, help_text="embedding: text cut"
    )
    t_partial = FiniteFloatField(
        required=False,
        min_value=-1,
        max_value=1,
        help_text="embedding, answer items: the cosine from which a nugget or citation is "
        "partially supported (default 0.5)",
    )
    t_support = FiniteFloatField(
        required=False,
        min_value=-1,
        max_value=1,
        help_text="embedding, answer items: the cosine from which it is supported (default 0.75)",
    )


class JudgeRunRequestSerializer(serializers.Serializer[Any]):
    pool = optional_number("the pool version's number (default: the latest built)")
    kind = serializers.ChoiceField(
        choices=["document", *ANSWER_KINDS],
        default="document",
        help_text="document: a pool's documents; nugget_assignment or citation_support: every "
        "item of that kind of the campaign's answer runs (instead of a pool)",
    )
    bank = optional_number("nugget_assignment: the published nugget bank version's number")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs["kind"] != "document" and attrs.get("pool") is not None:
            raise serializers.ValidationError({"pool": "a run over answer items has no pool"})
        if attrs["kind"] != "nugget_assignment" and attrs.get("bank") is not None:
            raise serializers.ValidationError({"bank": "only nugget_assignment names a bank"})
        return attrs


class JudgeLabelsImportSerializer(serializers.Serializer[Any]):
    file = serializers.FileField(help_text="the label file (plain or gzip)")
    format = serializers.ChoiceField(
        choices=list(LABEL_FORMATS),
        default="trec",
        help_text="trec: qrels lines on the campaign's scale; umbrela: UMBRELA's JSONL output",
    )
    requests = serializers.FileField(
        required=False, help_text="umbrela: the request file it judged (ties records to ids)"
    )


class JudgeCalibrateSerializer(serializers.Serializer[Any]):
    human = serializers.IntegerField(
        min_value=1, max_value=MAX_ID, help_text="the human qrels version's number"
    )
    pool = optional_number("the pool version's number (default: the latest built)")
    sample = serializers.IntegerField(
        required=False,
        min_value=2,
        max_value=10_000_000,
        help_text="calibrate on a seeded sample of this many judged documents (default: all)",
    )
    seed = serializers.IntegerField(required=False, min_value=0, max_value=2**31 - 1, default=0)


class CalibrationSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    judge = serializers.IntegerField(help_text="the judge version calibrated")
    judge_label = serializers.CharField()
    human = serializers.IntegerField(help_text="the human qrels version's number")
    pool = serializers.IntegerField(help_text="the pool version's number")
    sample = serializers.IntegerField(
        allow_null=True, help_text="the seeded sample's size (null: every judged document)"
    )
    seed = serializers.IntegerField()
    state = serializers.ChoiceField(choices=["queued", "running", "done", "failed"])
    live = serializers.BooleanField(help_text="queued or running: poll again")
    calibrated = serializers.IntegerField(
        allow_null=True, help_text="done: the id of the judge version it made, with thresholds"
    )
    calibrated_label = serializers.CharField(allow_null=True)
    error = serializers.CharField(allow_blank=True, help_text="why it failed (never a key)")
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)


class JudgeQrelsRequestSerializer(serializers.Serializer[Any]):
    kind = serializers.ChoiceField(choices=["automatic", "hybrid"])
    pool = optional_number("the pool version's number (default: the latest built)")
    human = optional_number("hybrid: the human qrels version whose grades are kept")
    note = serializers.CharField(required=False, allow_blank=True, max_length=1000)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs["kind"] == "hybrid" and attrs.get("human") is None:
            raise serializers.ValidationError({"human": "a hybrid version needs the human one"})
        return attrs


# ---- answers ------------------------------------------------------------------------------


class JudgeSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    campaign = serializers.IntegerField()
    name = serializers.CharField()
    version = serializers.IntegerField()
    label = serializers.CharField(help_text="name and version: umbrela v2")  # type: ignore[assignment]
    kind = serializers.ChoiceField(choices=JudgeKind.choices)
    kind_label = serializers.CharField()
    model = serializers.CharField()
    endpoint = serializers.CharField(
        allow_null=True, help_text="the configured endpoint's name (never its URL or key)"
    )
    description = serializers.CharField(allow_blank=True)
    locked = serializers.BooleanField(
        help_text="it has labelled something: what it says never changes (a change is a new "
        "version)"
    )
    locked_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()
    labels = serializers.IntegerField(help_text="pairs it graded")
    runs = serializers.IntegerField(help_text="runs over pool versions")
    prompt_tokens = serializers.IntegerField()
    completion_tokens = serializers.IntegerField()
    cost = serializers.FloatField(help_text="spent by its runs, in its prices' currency")
    owner = serializers.CharField(
        allow_null=True, help_text="the participant who submitted it; null: the organisers'"
    )
    pool = serializers.IntegerField(
        allow_null=True, help_text="the pool version a submission labels"
    )
    family = serializers.CharField(allow_blank=True, help_text="the declared model family")
    open_weights = serializers.BooleanField(allow_null=True, help_text="declared")
    saw_human_qrels = serializers.BooleanField(
        allow_null=True,
        help_text="declared: it saw some of people's judgments (its agreement is not independent)",
    )


class JudgeSubmissionSerializer(serializers.Serializer[Any]):
    name = serializers.CharField(
        max_length=100, help_text="lower-case letters, digits, '-' and '_'; yours in the campaign"
    )
    kind = serializers.ChoiceField(
        choices=[JudgeKind.IMPORTED, JudgeKind.OPENAI],
        default=JudgeKind.IMPORTED,
        help_text="imported: its labels in 'file'; openai-compatible: the service calls 'endpoint'",
    )
    model = serializers.CharField(max_length=200, help_text="the model that grades")
    saw_human_qrels = serializers.BooleanField(
        help_text="whether it saw any of people's judgments (few-shot, calibration, training)"
    )
    pool = optional_number("the pool version it labels (default: the latest built)")
    family = serializers.CharField(
        required=False, allow_blank=True, max_length=100, help_text="the model family"
    )
    open_weights = serializers.BooleanField(
        required=False, allow_null=True, default=None, help_text="whether its weights are open"
    )
    prompt = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=MAX_PROMPT_CHARS,
        trim_whitespace=False,
        help_text="the prompt it used (imported: declared; openai-compatible: the template with "
        "{query} and {passage}, default UMBRELA's)",
    )
    description = serializers.CharField(required=False, allow_blank=True, max_length=5000)
    file = serializers.FileField(required=False, help_text="imported: the label file")
    format = serializers.ChoiceField(
        choices=list(LABEL_FORMATS),
        default="trec",
        help_text="trec: qrels lines on the campaign's scale; umbrela: UMBRELA's JSONL output",
    )
    requests = serializers.FileField(
        required=False, help_text="umbrela: the request file it judged (ties records to ids)"
    )
    endpoint = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=100,
        help_text="openai-compatible: the NAME of an endpoint the organisers opened to you",
    )
    calls = FiniteFloatField(required=False, min_value=0, help_text="imported: declared calls")
    prompt_tokens = FiniteFloatField(required=False, min_value=0, help_text="declared")
    completion_tokens = FiniteFloatField(required=False, min_value=0, help_text="declared")
    cost = FiniteFloatField(
        required=False, min_value=0, help_text="declared, in the track's currency"
    )
    seconds = FiniteFloatField(required=False, min_value=0, help_text="declared wall seconds")


class JudgeSubmittedSerializer(serializers.Serializer[Any]):
    judge = JudgeSerializer()
    run = serializers.IntegerField(
        allow_null=True, help_text="openai-compatible: its run over the pool (poll judge-runs)"
    )


class JudgeSubmissionsSerializer(serializers.Serializer[Any]):
    count = serializers.IntegerField()
    results = JudgeSerializer(many=True)
    endpoints = serializers.ListField(
        child=serializers.CharField(), help_text="the endpoints you may name"
    )


class JudgeRunSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    judge = serializers.IntegerField()
    judge_label = serializers.CharField()
    pool = serializers.IntegerField(
        allow_null=True,
        help_text="the pool version's number (null: a top-up's documents, or answer items)",
    )
    kind = serializers.ChoiceField(
        choices=["document", *ANSWER_KINDS],
        help_text="what it labels: documents, or the answer runs' items of this kind",
    )
    bank = serializers.IntegerField(
        allow_null=True, help_text="nugget_assignment: the nugget bank version's number"
    )
    over = serializers.CharField(
        help_text="what it labels: pool v2, the top-up of run X, the answers' citations"
    )
    state = serializers.ChoiceField(choices=["queued", "running", "done", "failed"])
    live = serializers.BooleanField(help_text="queued or running: poll again")
    total = serializers.IntegerField(help_text="documents to label")
    done = serializers.IntegerField(help_text="labelled so far (any status, cached included)")
    cached = serializers.IntegerField(help_text="already labelled by this version before")
    progress = serializers.FloatField(help_text="done / total, 0-1")
    ok = serializers.IntegerField()
    refused = serializers.IntegerField()
    malformed = serializers.IntegerField()
    errors = serializers.IntegerField()  # type: ignore[assignment]
    prompt_tokens = serializers.IntegerField()
    completion_tokens = serializers.IntegerField()
    cost = serializers.FloatField()
    error = serializers.CharField(allow_blank=True, help_text="why it stopped (never a key)")
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)


class JudgeVersionSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    version = serializers.IntegerField()
    model = serializers.CharField()
    locked = serializers.BooleanField()
    created_at = serializers.DateTimeField()
    current = serializers.BooleanField(help_text="the version this answer is about")


class JudgeGradeSerializer(serializers.Serializer[Any]):
    grade = serializers.IntegerField()
    label = serializers.CharField()  # type: ignore[assignment]
    count = serializers.IntegerField()
    share = serializers.FloatField(allow_null=True)


class JudgeStatusesSerializer(serializers.Serializer[Any]):
    ok = serializers.IntegerField()
    refused = serializers.IntegerField()
    malformed = serializers.IntegerField()
    error = serializers.IntegerField()
    deferred = serializers.IntegerField(help_text="a jury's items deferred to people, not judged")


class JudgeQrelsSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    number = serializers.IntegerField()
    kind = serializers.CharField()
    kind_label = serializers.CharField()
    num_judgments = serializers.IntegerField()
    created_at = serializers.DateTimeField()


class JudgeDetailSerializer(JudgeSerializer):
    prompt = serializers.CharField(allow_blank=True)
    params = serializers.DictField(
        help_text="mapping, prices, thresholds, calibration, the endpoint's name"
    )
    versions = JudgeVersionSerializer(many=True)
    statuses = JudgeStatusesSerializer(help_text="labels stored, by status")
    grades = JudgeGradeSerializer(many=True, help_text="graded labels per grade of the scale")
    judge_runs = JudgeRunSerializer(many=True)
    qrels = JudgeQrelsSerializer(many=True, help_text="qrels versions built from its labels")
    live = serializers.BooleanField(help_text="a run is queued or running")


class JudgeListSerializer(serializers.Serializer[Any]):
    count = serializers.IntegerField()
    results = JudgeSerializer(many=True)
    endpoints = serializers.ListField(
        child=serializers.CharField(), help_text="names of the configured chat endpoints"
    )


class JudgeLabelsImportedSerializer(serializers.Serializer[Any]):
    stored = serializers.IntegerField(help_text="labels stored (pairs already graded are kept)")
    judge = JudgeSerializer()


# ---- juries (api.jury_views) --------------------------------------------------------------


class JuryCreateSerializer(serializers.Serializer[Any]):
    name = serializers.CharField(
        max_length=100, help_text="lower-case letters, digits, '-' and '_'; versions share it"
    )
    members = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=MAX_ID),
        max_length=100,
        help_text="the ids of the judges it combines: two or more of the campaign, none a jury",
    )
    method = serializers.ChoiceField(choices=JuryMethod.choices)
    human = optional_number("defer only: the human qrels version whose grades settle disagreements")
    pool = optional_number("the pool version it runs over (default: the latest built)")


class JuryCreatedSerializer(serializers.Serializer[Any]):
    judge = JudgeSerializer()
    run = serializers.IntegerField(help_text="its run over the pool (poll judge-runs)")
