"""A whole TREC collection through the API (admins): ``POST /api/v1/collections/``."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from judging.api import serializers as s
from judging.api.permissions import IsAdmin
from judging.campaigns.selectors import campaign_list
from judging.core import uploads
from judging.core.roles import account
from judging.workflows.collections import NamedFile, collection_imported, topic_ranges


def _named(upload: UploadedFile | None, fallback: str) -> NamedFile | None:
    return None if upload is None else NamedFile(upload.name or fallback, upload)


class CollectionImportView(APIView):
    permission_classes = [IsAdmin]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request={"multipart/form-data": s.CollectionImportSerializer},
        parameters=[
            OpenApiParameter("dry_run", bool, description="1: answer the plan, store nothing")
        ],
        responses={
            201: s.CollectionImportResultSerializer,
            200: OpenApiResponse(s.CollectionImportResultSerializer, description="dry run"),
            400: OpenApiResponse(
                s.ErrorSerializer, description="a problem; each names its file and line"
            ),
            413: OpenApiResponse(s.ErrorSerializer, description="too large"),
        },
        description="Import a TREC collection in one request (admins): a new campaign with "
        "its topics (from 'topics', or created from the qrels' and runs' topic ids with no "
        "title), 'documents' files, 'runs' files (tag from input.<tag>[.gz] names or the tag "
        "column; groups from 'groups', a runs.tsv) and 'qrels' (qrels version 1, evaluated "
        "after commit, honest and trec_eval modes). Which runs are pooled: 'pooled_runs' all, "
        "none or infer (from the qrels; the summary has the inferred table), or exactly the "
        "'pooled' tags. Every file is validated before anything is stored; a problem answers "
        "400 with every problem, 'location' the file and 'line' its line, and nothing stored. "
        "The runs belong to the system account 'pooljudge-import'.",
    )
    def post(self, request: Request) -> Response:
        uploads.check_request_size(
            request.META.get("CONTENT_LENGTH"),
            limit=settings.POOLJUDGE_UPLOADS.max_collection_upload_bytes,
            what="the collection",
        )
        ser = s.CollectionImportSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        data: dict[str, Any] = ser.validated_data
        dry_run = data["dry_run"] or request.query_params.get("dry_run") in ("1", "true")
        infer = data["infer_topics"].strip()
        plan = collection_imported(
            name=data["name"],
            description=data["description"],
            measures=data.get("measures"),
            relevance_threshold=data["relevance_threshold"],
            score_precision=data["score_precision"],
            topics=_named(data.get("topics"), "topics"),
            documents=[NamedFile(f.name or "documents", f) for f in data.get("documents", [])],
            qrels=_named(data.get("qrels"), "qrels"),
            runs=[NamedFile(f.name or "run", f) for f in data.get("runs", [])],
            groups=_named(data.get("groups"), "groups"),
            pooled_runs=data["pooled_runs"],
            infer_topics=topic_ranges(infer) if infer else None,
            pooled_tags=data.get("pooled"),
            created_by=account(request.user),
            dry_run=dry_run,
        )
        campaign = None
        if plan.campaign_id is not None:
            stored = campaign_list(user=request.user).get(pk=plan.campaign_id)
            campaign = s.CampaignSerializer(stored, context={"request": request}).data
        return Response(
            {"campaign": campaign, "summary": plan.as_dict()},
            status=status.HTTP_200_OK if dry_run else status.HTTP_201_CREATED,
        )
