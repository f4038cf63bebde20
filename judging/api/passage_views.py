"""Chunkings of a campaign's documents, their passages, and qrels carried between chunkings
(``campaigns.passages``, ``assessments.carryover``, ``workflows.passages``)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from judging.api.pagination import BoundedLimitOffsetPagination
from judging.api.permissions import IsResearcher
from judging.api.serializers import (
    ErrorSerializer,
    NoteSerializer,
    QrelsVersionSerializer,
    note_of,
)
from judging.assessments.models import QrelsVersion
from judging.campaigns.models import Campaign, Chunking, Passage
from judging.campaigns.passages import chunker_help
from judging.core.errors import InvalidInput, NotAllowed
from judging.core.roles import account, is_admin
from judging.workflows.passages import (
    chunking_made,
    qrels_carried,
    qrels_documented,
    qrels_published_onto,
)
from metrics.problems import Problem


class ChunkingSerializer(serializers.ModelSerializer[Chunking]):
    class Meta:
        model = Chunking
        fields = ["id", "campaign", "name", "spec", "num_passages", "num_documents", "created_at"]
        read_only_fields = fields


class ChunkingRequestSerializer(serializers.Serializer[Any]):
    name = serializers.CharField(help_text="Unique in the campaign; derived passage ids use it.")
    chunker = serializers.CharField(required=False, help_text=chunker_help())
    file = serializers.FileField(
        required=False,
        help_text="Or the team's own passages: docid, passage_id, start, end per line (JSON "
        "lines or tab-separated); a passage_id not starting with docid# is stored as "
        "docid#passage_id.",
    )


class PassageSerializer(serializers.ModelSerializer[Passage]):
    docid = serializers.CharField(source="document.docid", read_only=True)
    text = serializers.SerializerMethodField()

    class Meta:
        model = Passage
        fields = ["passage_id", "docid", "start", "end", "text"]
        read_only_fields = fields

    def get_text(self, passage: Passage) -> str:
        return passage.document.text[passage.start : passage.end]


class CarryRequestSerializer(serializers.Serializer[Any]):
    chunking = serializers.CharField(help_text="The chunking's name (or id) to carry to.")
    min_share = serializers.FloatField(
        default=0.5,
        help_text="A new passage is relevant at grade g when it holds at least this share of a "
        "span judged g (0 < min_share <= 1).",
    )


def _campaign(request: Request, campaign_id: int) -> Campaign:
    return get_object_or_404(Campaign.objects.visible_to(request.user), pk=campaign_id)


def _admin(request: Request, what: str) -> None:
    if not is_admin(request.user):
        raise NotAllowed(f"only admins may {what}")


class ChunkingsView(APIView):
    """The campaign's chunkings; an admin adds one."""

    permission_classes = [IsResearcher]
    parser_classes = [JSONParser, MultiPartParser, FormParser]

    @extend_schema(responses={200: ChunkingSerializer(many=True)})
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign = _campaign(request, campaign_id)
        return Response(ChunkingSerializer(campaign.chunkings.all(), many=True).data)

    @extend_schema(
        request={
            "application/json": ChunkingRequestSerializer,
            "multipart/form-data": ChunkingRequestSerializer,
        },
        responses={
            201: ChunkingSerializer,
            400: ErrorSerializer,
            403: ErrorSerializer,
            409: OpenApiResponse(ErrorSerializer, description="the name is taken"),
        },
        description="Cut every document into passages with `chunker` (e.g. "
        "`fixed(size=500,overlap=100)`; ids `docid#<name>-<i>`), or store the team's own "
        "passages from `file`. Validated whole: nothing is stored when a problem is found. "
        "Pooled passages waiting for their text are served once it exists. Admins only.",
    )
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = _campaign(request, campaign_id)
        _admin(request, "add a chunking")
        data = ChunkingRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        upload = data.validated_data.get("file")
        chunking = chunking_made(
            campaign=campaign,
            name=data.validated_data["name"],
            spec=data.validated_data.get("chunker"),
            data=upload,
            source=getattr(upload, "name", None),
            created_by=account(request.user),
        )
        return Response(ChunkingSerializer(chunking).data, status=status.HTTP_201_CREATED)


class ChunkingPassagesView(APIView):
    """A chunking's passages with their offsets and text, in pages."""

    permission_classes = [IsResearcher]

    @extend_schema(
        parameters=[OpenApiParameter("docid", str, description="only this document's")],
        responses={200: PassageSerializer(many=True)},
        description="The passages in document and offset order, each with its id (what runs "
        "rank), its document, its offsets in the document's text and its text; pages of at "
        "most POOLJUDGE_MAX_TEXT_PAGE_SIZE.",
    )
    def get(self, request: Request, pk: int) -> Response:
        chunking = get_object_or_404(
            Chunking.objects.filter(campaign__in=Campaign.objects.visible_to(request.user)),
            pk=pk,
        )
        passages = (
            Passage.objects.filter(chunking=chunking)
            .select_related("document")
            .order_by("document__docid", "start", "pk")
        )
        docid = request.query_params.get("docid")
        if docid:
            passages = passages.filter(document__docid=docid)
        paginator = _TextPages()
        page = paginator.paginate_queryset(passages, request, view=self)
        return paginator.get_paginated_response(PassageSerializer(page, many=True).data)


class _TextPages(BoundedLimitOffsetPagination):
    def get_limit(self, request: Request) -> int | None:
        maximum = settings.POOLJUDGE_API.max_text_page_size
        return self._limit(request, maximum, min(self.default_limit or maximum, maximum))


def _version(request: Request, pk: int) -> QrelsVersion:
    return get_object_or_404(QrelsVersion.objects.visible_to(request.user), pk=pk)


class QrelsCarryView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        request=CarryRequestSerializer,
        responses={201: QrelsVersionSerializer, 400: ErrorSerializer, 403: ErrorSerializer},
        description="The campaign's next qrels version: this version's judgments carried by "
        "their text spans (the judged passages' offsets and the answer spans assessors marked) "
        "to the passages of `chunking`, under the rule its `derivation` states, with the "
        "coverage (carried relevant, non-relevant, unknown; topics that lost their relevant "
        "judgments). A complete human version only. Admins only.",
    )
    def post(self, request: Request, pk: int) -> Response:
        version = _version(request, pk)
        _admin(request, "carry qrels to a chunking")
        data = CarryRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        ref = data.validated_data["chunking"]
        chunkings = Chunking.objects.filter(campaign=version.campaign)
        chunking = chunkings.filter(name=ref).first() or (
            chunkings.filter(pk=int(ref)).first()
            if ref.isascii() and ref.isdigit() and len(ref) < 19
            else None
        )
        if chunking is None:
            raise InvalidInput(
                "no such chunking",
                [Problem.at("chunking", f"the campaign has no chunking {ref[:60]!r}")],
            )
        derived = qrels_carried(
            version=version,
            chunking=chunking,
            min_share=data.validated_data["min_share"],
            created_by=account(request.user),
        )
        return Response(QrelsVersionSerializer(derived).data, status=status.HTTP_201_CREATED)


class QrelsDocumentsView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        request=None,
        responses={201: QrelsVersionSerializer, 400: ErrorSerializer, 403: ErrorSerializer},
        description="The campaign's next qrels version: this version at document level (a "
        "document's grade is the highest of its judged passages'), so runs of documents are "
        "scored against passage judgments. Admins only.",
    )
    def post(self, request: Request, pk: int) -> Response:
        version = _version(request, pk)
        _admin(request, "derive document-level qrels")
        derived = qrels_documented(version=version, created_by=account(request.user))
        return Response(QrelsVersionSerializer(derived).data, status=status.HTTP_201_CREATED)


class QrelsPublishOntoView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        request=NoteSerializer,
        responses={201: QrelsVersionSerializer, 400: ErrorSerializer, 403: ErrorSerializer},
        description="The campaign's next qrels version, a minor version of this carried "
        "version: its carried labels overlaid with the judgments made since of its chunking's "
        "passages (the holes the carry-over left, judged). Judgments of other chunkings stay "
        "out. A 400 when the version was not carried to a chunking or nothing was judged "
        "since. Admins only.",
    )
    def post(self, request: Request, pk: int) -> Response:
        version = _version(request, pk)
        _admin(request, "publish qrels")
        derived = qrels_published_onto(
            base=version, note=note_of(request.data), created_by=account(request.user)
        )
        return Response(QrelsVersionSerializer(derived).data, status=status.HTTP_201_CREATED)
