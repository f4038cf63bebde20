"""API for quality control (admins only): the per-assessor report, gold items, exclusions."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from judging.api.permissions import IsAdmin
from judging.api.result_schemas import ref
from judging.api.serializers import ErrorSerializer
from judging.assessments import gold, quality
from judging.assessments.answers import (
    Exclusion,
    ExclusionsAnswer,
    GoldItemsAnswer,
    QualityAnswer,
)
from judging.campaigns.models import Campaign
from judging.core import uploads
from judging.core.params import MAX_ID
from judging.core.roles import account


def _campaign(request: Request, campaign_id: int) -> Campaign:
    return get_object_or_404(Campaign.objects.visible_to(request.user), pk=campaign_id)


class QualitySettingsSerializer(serializers.Serializer[Any]):
    gold_rate = serializers.FloatField(required=False, min_value=0.0, max_value=0.5)
    qc_min_accuracy = serializers.FloatField(required=False, min_value=0.0, max_value=1.0)
    qc_min_gold = serializers.IntegerField(required=False, min_value=1, max_value=100_000)


class QualityView(APIView):
    permission_classes = [IsAdmin]

    @extend_schema(
        responses={200: ref(QualityAnswer)},
        description="Quality control per assessor (admins): accuracy on gold items (exact and "
        "binary at the relevance threshold, count, 95% Wilson intervals, mean absolute error), "
        "agreement with the other assessors on shared items (unweighted Cohen's kappa, exact "
        "agreement), grade distribution, median active seconds per judgment, drift per block of "
        "judgments and per day, exclusions in force, and the alerts.",
    )
    def get(self, request: Request, campaign_id: int) -> Response:
        return Response(quality.quality_report(_campaign(request, campaign_id)))

    @extend_schema(
        request=QualitySettingsSerializer,
        responses={200: QualitySettingsSerializer},
        description="Change the quality-control settings (admins): gold_rate (share of each "
        "assessor's items that are gold, 0-0.5), qc_min_accuracy (0-1) and qc_min_gold.",
    )
    def patch(self, request: Request, campaign_id: int) -> Response:
        campaign = _campaign(request, campaign_id)
        if not isinstance(request.data, dict):
            raise serializers.ValidationError("an object of settings is needed")
        updated = gold.qc_settings_update(campaign=campaign, data=request.data)
        return Response({k: getattr(updated, k) for k in gold.QC_SETTINGS})


class GoldRowSerializer(serializers.Serializer[Any]):
    topic = serializers.CharField()
    docid = serializers.CharField()
    grade = serializers.IntegerField()


class GoldImportSerializer(serializers.Serializer[Any]):
    """One of: a qrels-format ``file``, ``rows``, or ``from_qrels`` with ``per_topic``."""

    file = serializers.FileField(required=False, help_text="TREC qrels-format file (or gzip).")
    rows = GoldRowSerializer(many=True, required=False)
    from_qrels = serializers.IntegerField(
        required=False, min_value=1, max_value=MAX_ID, help_text="a qrels version's number"
    )
    per_topic = serializers.IntegerField(required=False, min_value=1, max_value=1000, default=5)
    seed = serializers.IntegerField(required=False, min_value=0, max_value=2**31, default=0)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        given = [k for k in ("file", "rows", "from_qrels") if attrs.get(k) is not None]
        if len(given) != 1:
            raise serializers.ValidationError("give exactly one of file, rows and from_qrels")
        return attrs


class GoldImportResultSerializer(serializers.Serializer[Any]):
    created = serializers.IntegerField()
    updated = serializers.IntegerField()
    queued_as_pooled = serializers.IntegerField(
        help_text="of them, items waiting in the queue as pooled items: served as gold only "
        "once judged there"
    )
    skipped = serializers.IntegerField()


class GoldView(APIView):
    permission_classes = [IsAdmin]
    parser_classes = [JSONParser, MultiPartParser, FormParser]

    @extend_schema(
        responses={200: ref(GoldItemsAnswer)}, description="The campaign's gold items (admins)."
    )
    def get(self, request: Request, campaign_id: int) -> Response:
        items = quality.gold_items(_campaign(request, campaign_id))
        return Response({"count": len(items), "results": items})

    @extend_schema(
        request={
            "application/json": GoldImportSerializer,
            "multipart/form-data": GoldImportSerializer,
        },
        responses={
            201: GoldImportResultSerializer,
            400: OpenApiResponse(ErrorSerializer, description="every problem, with its line"),
        },
        description="Add gold items (admins): a TREC qrels-format 'file' (qid iteration docid "
        "grade), JSON 'rows' [{topic, docid, grade}], or 'from_qrels' N: 'per_topic' items per "
        "topic sampled from qrels version N, stratified by grade, with 'seed'. Validated whole "
        "(topic of the campaign, grade on its scale, document known); on a problem nothing is "
        "stored and each problem names its file and line (or row).",
    )
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = _campaign(request, campaign_id)
        uploads.check_request_size(
            request.META.get("CONTENT_LENGTH"),
            limit=settings.POOLJUDGE_UPLOADS.max_upload_bytes,
            what="the gold file",
        )
        ser = GoldImportSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        v = ser.validated_data
        who = account(request.user)
        if v.get("file") is not None:
            f = v["file"]
            result = gold.gold_import_file(
                campaign=campaign, data=f, source=f.name or "gold", created_by=who
            )
        elif v.get("rows") is not None:
            result = gold.gold_import(
                campaign=campaign,
                rows=gold.gold_rows_from_data(request.data.get("rows")),
                created_by=who,
            )
        else:
            result = gold.gold_from_qrels(
                campaign=campaign,
                number=v["from_qrels"],
                per_topic=v["per_topic"],
                seed=v["seed"],
                created_by=who,
            )
        return Response(result.to_dict(), status=status.HTTP_201_CREATED)


class ExclusionInSerializer(serializers.Serializer[Any]):
    annotator = serializers.CharField(help_text="the assessor's username")
    reason = serializers.CharField(help_text="why (kept with the decision)")


class LiftInSerializer(serializers.Serializer[Any]):
    reason = serializers.CharField(help_text="why the exclusion ends (kept)")


class ExclusionView(APIView):
    permission_classes = [IsAdmin]

    @extend_schema(
        responses={200: ref(ExclusionsAnswer)},
        description="Every exclusion of the campaign, in force or lifted, with the reasons.",
    )
    def get(self, request: Request, campaign_id: int) -> Response:
        rows = quality.exclusion_history(_campaign(request, campaign_id))
        return Response({"count": len(rows), "results": rows})

    @extend_schema(
        request=ExclusionInSerializer,
        responses={201: ref(Exclusion)},
        description="Exclude an assessor's judgments from the qrels versions published from "
        "now on (admins); the judgments stay stored and the version's note names the "
        "exclusion and its reason. 409 when already excluded.",
    )
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = _campaign(request, campaign_id)
        ser = ExclusionInSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        exclusion = gold.annotator_exclude(
            campaign=campaign,
            username=ser.validated_data["annotator"],
            reason=ser.validated_data["reason"],
            excluded_by=account(request.user),
        )
        row = next(r for r in quality.exclusion_history(campaign) if r["id"] == exclusion.pk)
        return Response(row, status=status.HTTP_201_CREATED)


class ExclusionLiftView(APIView):
    permission_classes = [IsAdmin]

    @extend_schema(
        request=LiftInSerializer,
        responses={200: ref(Exclusion)},
        description="Lift an exclusion (admins): the next version published includes the "
        "assessor again; the exclusion and both reasons are kept.",
    )
    def post(self, request: Request, campaign_id: int, pk: int) -> Response:
        campaign = _campaign(request, campaign_id)
        ser = LiftInSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        gold.exclusion_lift(
            campaign=campaign,
            exclusion_id=pk,
            reason=ser.validated_data["reason"],
            lifted_by=account(request.user),
        )
        row = next(r for r in quality.exclusion_history(campaign) if r["id"] == pk)
        return Response(row)
