"""REST API views: parse the request, call one service, render. Scoping lives in selectors."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db.models import QuerySet
from django.http import FileResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
)
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from judging.api import serializers as s
from judging.api.pagination import BoundedLimitOffsetPagination
from judging.api.permissions import IsAdmin, IsMember, IsResearcher, ReadMemberWriteAdmin
from judging.api.result_schemas import ref as schema_ref
from judging.assessments import services as qrels_services
from judging.assessments.beir_export import beir_zip
from judging.assessments.models import QrelsKind, QrelsVersion
from judging.campaigns import services
from judging.campaigns.answers import run_answers
from judging.campaigns.models import Campaign, Run
from judging.campaigns.selectors import campaign_documents, campaign_list, run_label
from judging.core import uploads
from judging.core.downloads import content_disposition, lines_download
from judging.core.errors import Conflict, InvalidInput, NotAllowed
from judging.core.params import MAX_ID, path_id, query_bool, query_int, query_text
from judging.core.roles import account, roles_of
from judging.pools import selectors as pool_selectors
from judging.pools import services as pool_services
from judging.pools.answers import PoolDiffAnswer
from judging.pools.models import PoolDocument, PoolState, PoolVersion
from judging.workflows.documents import documents_imported, missing_documents_imported
from judging.workflows.pools import pool_requested
from judging.workflows.qrels import qrels_imported
from judging.workflows.runs import run_submitted
from metrics.problems import Problem

# Every 4xx answer has the shape of ErrorSerializer (judging.api.errors).


def request_fields(request: Request) -> Mapping[str, Any]:
    """The request body as named fields (a JSON object or a form); any other JSON (``true``,
    ``[]``, ``"x"``) is a 400, not an AttributeError."""
    data = request.data
    if not isinstance(data, Mapping):
        raise InvalidInput(
            f"the request body must be a JSON object or a form, not {type(data).__name__}",
            [Problem.at("body", "expected an object of named fields")],
        )
    return data


def _uploaded_file(request: Request, what: str, *, limit: int) -> UploadedFile:
    """The multipart field 'file', refused early when the request says it is over ``limit``."""
    uploads.check_request_size(request.META.get("CONTENT_LENGTH"), limit=limit, what=what)
    upload = request_fields(request).get("file")
    if not isinstance(upload, UploadedFile):
        raise InvalidInput(
            f"send {what} as multipart field 'file'",
            [Problem.at("file", "missing file")],
        )
    return upload


def _include_text(params: Any) -> bool:
    """``include=text`` (once): list documents with their text; anything else is a 400."""
    values = params.getlist("include")
    if not values:
        return False
    if values == ["text"]:
        return True
    shown = ", ".join(repr(v[:40]) for v in values[:5])
    raise InvalidInput(
        f"include: {shown} is not 'text'",
        [Problem.at("include", f"{shown}: the one thing a list can include is 'text'")],
    )


def _docids(params: Any) -> list[str]:
    """``docid`` (repeated): at most a page of them, each a non-empty docid."""
    docids = [d for d in params.getlist("docid") if d != ""]
    if len(docids) > settings.POOLJUDGE_API.max_page_size:
        raise InvalidInput(
            f"docid: at most {settings.POOLJUDGE_API.max_page_size:,} documents, "
            f"not {len(docids):,}",
            [Problem.at("docid", f"{len(docids):,} given")],
        )
    for docid in docids:
        query_text({"docid": docid}, "docid", max_length=settings.POOLJUDGE_UPLOADS.max_docid_bytes)
    return docids


class MeView(APIView):
    """Who is asking, and with which roles."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses=s.MeSerializer)
    def get(self, request: Request) -> Response:
        user = request.user
        return Response({"id": user.pk, "username": user.get_username(), "roles": roles_of(user)})


class IntegerIdMixin:
    """Detail routes take a numeric id: ``/leases/abc/`` is a 400 naming ``id`` (not a 500 from
    ``int()``, nor a 404 that looks like a missing object)."""

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)  # type: ignore[misc]
        if "pk" in kwargs:
            path_id(kwargs["pk"])


class CampaignViewSet(
    IntegerIdMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet[Campaign],
):
    """Campaigns. Annotators read a campaign without its description, run count and run
    settings (only ``ANNOTATOR_CAMPAIGN_FIELDS``): its ``guidelines`` are what they read."""

    serializer_class = s.CampaignSerializer
    permission_classes = [ReadMemberWriteAdmin]
    parser_classes = [JSONParser, MultiPartParser, FormParser]

    def get_queryset(self) -> QuerySet[Campaign]:
        return campaign_list(user=self.request.user)

    @extend_schema(request=s.CampaignCreateSerializer, responses={201: s.CampaignSerializer})
    def create(self, request: Request) -> Response:
        ser = s.CampaignCreateSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        campaign = services.campaign_create(created_by=account(request.user), **ser.validated_data)
        out = self.get_queryset().get(pk=campaign.pk)
        return Response(
            s.CampaignSerializer(out, context={"request": request}).data,
            status=status.HTTP_201_CREATED,
        )

    @extend_schema(
        responses={200: s.CampaignSerializer},
        description="Change the campaign (admins). Validated whole: on any problem (a scale "
        "without the relevance threshold among its grades, ...) the answer is 400 with every "
        "problem and nothing is stored.",
    )
    def update(self, request: Request, pk: str | None = None, partial: bool = False) -> Response:
        campaign = self.get_object()
        ser = s.CampaignSerializer(campaign, data=request.data, partial=partial)
        ser.is_valid(raise_exception=True)
        services.campaign_update(campaign=campaign, data=ser.validated_data)
        out = self.get_queryset().get(pk=campaign.pk)
        return Response(s.CampaignSerializer(out, context={"request": request}).data)

    @extend_schema(
        responses={200: s.CampaignSerializer},
        description="Change some of the campaign's settings (admins), validated as PUT is.",
    )
    def partial_update(self, request: Request, pk: str | None = None) -> Response:
        return self.update(request, pk, partial=True)

    # --- topics ---------------------------------------------------------------------------
    @extend_schema(responses=s.TopicSerializer(many=True))
    @action(detail=True, methods=["get"], url_path="topics", permission_classes=[IsMember])
    def topics(self, request: Request, pk: str | None = None) -> Response:
        campaign = self.get_object()
        page = self.paginate_queryset(campaign.topics.all())  # type: ignore[arg-type]
        return self.get_paginated_response(s.TopicSerializer(page, many=True).data)

    @extend_schema(
        request={"multipart/form-data": s.FileUploadSerializer},
        responses={201: s.ImportSummarySerializer},
        description="Import topics (TREC <top>, JSONL or SMART .I/.W). Admins only.",
    )
    @topics.mapping.post
    def import_topics(self, request: Request, pk: str | None = None) -> Response:
        campaign = self._admin_campaign(request)
        upload = _uploaded_file(
            request, "the topics file", limit=settings.POOLJUDGE_UPLOADS.max_upload_bytes
        )
        summary = services.topics_import(campaign=campaign, data=upload, fmt=_format(request))
        return Response(summary.as_dict(), status=status.HTTP_201_CREATED)

    # --- documents ------------------------------------------------------------------------
    @extend_schema(
        parameters=[
            OpenApiParameter(
                "include",
                str,
                enum=["text"],
                description="text: each document with its text, in pages of at most "
                "POOLJUDGE_MAX_TEXT_PAGE_SIZE (also the default limit), streamed",
            ),
            OpenApiParameter(
                "docid", str, many=True, description="only these documents (repeat the parameter)"
            ),
        ],
        responses=s.DocumentSerializer(many=True),
        description="Documents of the campaign in docid order, without their text unless "
        "include=text. Admins and researchers only.",
    )
    @action(detail=True, methods=["get"], url_path="documents", permission_classes=[IsMember])
    def documents(self, request: Request, pk: str | None = None) -> HttpResponseBase:
        campaign = self.get_object()
        if not IsResearcher().has_permission(request, self):
            raise NotAllowed("only researchers and admins may list documents")
        text = _include_text(request.query_params)
        docs = campaign_documents(
            campaign=campaign, docids=_docids(request.query_params), text=text
        )
        if text:
            paginator = cast(BoundedLimitOffsetPagination, self.paginator)
            return paginator.streamed_page(
                docs,
                request,
                item=lambda doc: s.DocumentSerializer(doc).data,
                max_limit=settings.POOLJUDGE_API.max_text_page_size,
            )
        page = self.paginate_queryset(docs)  # type: ignore[arg-type]
        return self.get_paginated_response(
            s.DocumentSerializer(page, many=True, with_text=False).data
        )

    @extend_schema(
        request={"multipart/form-data": s.DocumentUploadSerializer},
        parameters=[
            OpenApiParameter(
                "only_missing",
                bool,
                description="store only the pooled documents without text (as the form field)",
            )
        ],
        responses={
            (201, "application/json"): OpenApiResponse(
                PolymorphicProxySerializer(
                    component_name="DocumentImportResult",
                    serializers=[s.ImportSummarySerializer, s.MissingTextImportSerializer],
                    resource_type_field_name=None,
                ),
                description="stored: an import summary, or with only_missing what was found",
            ),
            200: OpenApiResponse(
                s.MissingTextImportSerializer,
                description="only_missing, and none of the files' documents was wanted",
            ),
        },
        description="Import documents (JSONL, TREC <DOC>, TSV, SMART; plain or gzip). Admins "
        "only. With only_missing=1 (query or form field) only the pooled documents that have "
        "no text are stored, from one or more 'file' parts (a whole collection may be sent: it "
        "is streamed, and every other document is ignored); the answer says how many were "
        "found and how many still wait. Every file is validated first: on any problem nothing "
        "is stored.",
    )
    @documents.mapping.post
    def import_documents(self, request: Request, pk: str | None = None) -> Response:
        campaign = self._admin_campaign(request)
        upload = _uploaded_file(
            request,
            "the documents file",
            limit=settings.POOLJUDGE_UPLOADS.max_document_upload_bytes,
        )
        if _only_missing(request):
            files = request.FILES.getlist("file") or [upload]
            summary = missing_documents_imported(
                campaign=campaign,
                sources=[(f, f.name or "upload") for f in files],
                fmt=_format(request),
            )
            return Response(
                summary.as_dict(),
                status=status.HTTP_201_CREATED if summary.stored else status.HTTP_200_OK,
            )
        done = documents_imported(campaign=campaign, data=upload, fmt=_format(request))
        return Response(done.as_dict(), status=status.HTTP_201_CREATED)

    # --- qrels ----------------------------------------------------------------------------
    @extend_schema(responses=s.QrelsVersionSerializer(many=True))
    @action(detail=True, methods=["get"], url_path="qrels", permission_classes=[IsMember])
    def qrels(self, request: Request, pk: str | None = None) -> Response:
        campaign = self.get_object()
        if not IsResearcher().has_permission(request, self):
            raise NotAllowed("only researchers and admins may read qrels")
        versions = (
            QrelsVersion.objects.visible_to(request.user)
            .filter(campaign=campaign)
            .select_related(*s.DERIVATION)
        )
        page = self.paginate_queryset(versions)  # type: ignore[arg-type]
        return self.get_paginated_response(s.QrelsVersionSerializer(page, many=True).data)

    @extend_schema(
        request={"multipart/form-data": s.FileUploadSerializer},
        responses={201: s.QrelsVersionSerializer},
        description="Import a TREC qrels file as the next qrels version. Admins only.",
    )
    @qrels.mapping.post
    def import_qrels(self, request: Request, pk: str | None = None) -> Response:
        campaign = self._admin_campaign(request)
        upload = _uploaded_file(
            request, "the qrels file", limit=settings.POOLJUDGE_UPLOADS.max_upload_bytes
        )
        version = qrels_imported(
            campaign=campaign,
            data=upload,
            source=upload.name or "upload",
            note=s.note_of(request_fields(request)),
            created_by=account(request.user),
        )
        return Response(s.QrelsVersionSerializer(version).data, status=status.HTTP_201_CREATED)

    # --- runs -----------------------------------------------------------------------------
    @extend_schema(
        responses=s.RunSerializer(many=True),
        description="Runs of the campaign you may see (admins: all; researchers: their own).",
    )
    @action(detail=True, methods=["get"], url_path="runs", permission_classes=[IsMember])
    def runs(self, request: Request, pk: str | None = None) -> Response:
        campaign = self.get_object()
        if not IsResearcher().has_permission(request, self):
            raise NotAllowed("only researchers and admins may list runs")
        runs = (
            Run.objects.visible_to(request.user).filter(campaign=campaign).select_related("owner")
        )
        page = self.paginate_queryset(runs)  # type: ignore[arg-type]
        return self.get_paginated_response(
            s.RunSerializer(page, many=True, context={"request": request}).data
        )

    @extend_schema(
        request={
            "multipart/form-data": s.RunSubmitSerializer,
            "application/json": s.RunSubmitSerializer,
        },
        responses={
            201: s.RunSubmittedSerializer,
            409: OpenApiResponse(s.ErrorSerializer, description="tag already used"),
            413: OpenApiResponse(s.ErrorSerializer, description="file too large"),
        },
        description="Submit a run: a TREC run file (multipart field 'file', plain or gzip) or "
        "JSON {'tag': ..., 'results': {qid: {docid: score}}}. The whole run is "
        "validated first; on any problem nothing is stored, and every problem is listed at "
        "once (topics the campaign does not have with the file's other problems). A file is "
        "read as trec_eval reads it: NaN scores (ranked last), infinite scores and fields "
        "after the sixth are accepted, and listed in 'warnings' with their lines; in JSON, "
        "NaN and the infinities are the strings 'NaN', 'Infinity', '-Infinity' (counted in "
        "'warnings'). Also stored with a warning: the same content as another run of yours "
        "(kind same_content) and docids not among the campaign's documents (unknown_docids).",
    )
    @runs.mapping.post
    def submit_run(self, request: Request, pk: str | None = None) -> Response:
        campaign = self.get_object()
        if not IsResearcher().has_permission(request, self):
            raise NotAllowed("only researchers and admins may submit runs")
        uploads.check_request_size(
            request.META.get("CONTENT_LENGTH"),
            limit=settings.POOLJUDGE_UPLOADS.max_upload_bytes,
            what="the run",
        )
        ser = s.RunSubmitSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        args: dict[str, Any] = dict(ser.validated_data)
        run = run_submitted(
            campaign=campaign,
            owner=account(request.user),
            by=request.user,
            data=args.pop("file", None),
            **args,
        )
        return Response(
            s.RunSubmittedSerializer(run, context={"request": request}).data,
            status=status.HTTP_201_CREATED,
        )

    # --- pools ----------------------------------------------------------------------------
    @extend_schema(
        responses=s.PoolVersionSerializer(many=True),
        description="Pool versions and pending builds of the campaign.",
    )
    @action(detail=True, methods=["get"], url_path="pools", permission_classes=[IsMember])
    def pools(self, request: Request, pk: str | None = None) -> Response:
        campaign = self.get_object()
        versions = PoolVersion.objects.visible_to(request.user).filter(campaign=campaign)
        if not IsResearcher().has_permission(request, self):
            raise NotAllowed("only researchers and admins may read pools")
        page = self.paginate_queryset(versions)  # type: ignore[arg-type]
        return self.get_paginated_response(
            s.PoolVersionSerializer(page, many=True, context={"request": request}).data
        )

    @extend_schema(
        request=s.PoolRequestSerializer,
        responses={202: s.PoolVersionSerializer, 200: s.PoolVersionSerializer},
        description="Build the next pool version (admins only). Returns 202 with the queued "
        "build, or 200 with the build already queued or running (two triggers, one "
        "build). Follow progress at GET /api/v1/pools/{id}/.",
    )
    @pools.mapping.post
    def request_pool(self, request: Request, pk: str | None = None) -> Response:
        campaign = self.get_object()
        if not IsAdmin().has_permission(request, self):
            raise NotAllowed("only admins may build pools")
        ser = s.PoolRequestSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        args = dict(ser.validated_data)
        runs = None
        if "runs" in args:
            runs = _runs_by_ref(campaign, args.pop("runs"))
        version, created = pool_requested(
            campaign=campaign, runs=runs, requested_by=account(request.user), **args
        )
        version.refresh_from_db()
        return Response(
            s.PoolVersionSerializer(version, context={"request": request}).data,
            status=status.HTTP_202_ACCEPTED if created else status.HTTP_200_OK,
        )

    def _admin_campaign(self, request: Request) -> Campaign:
        campaign = self.get_object()
        if not IsAdmin().has_permission(request, self):
            raise NotAllowed("only admins may import into a campaign")
        return campaign


class RunViewSet(
    IntegerIdMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet[Run],
):
    """Runs you may see: admins all, researchers their own, annotators none."""

    permission_classes = [IsResearcher]
    http_method_names = ["get", "patch", "delete", "head", "options"]

    def get_queryset(self) -> QuerySet[Run]:
        return Run.objects.visible_to(self.request.user).select_related("owner")

    def get_serializer_class(self) -> Any:
        return s.RunUpdateSerializer if self.action == "partial_update" else s.RunSerializer

    @extend_schema(
        request=s.RunUpdateSerializer,
        responses={200: s.RunSerializer},
        description="Change the run's group, description or priority; only admins change "
        "whether it is pooled.",
    )
    def partial_update(self, request: Request, pk: str | None = None) -> Response:
        run = self.get_object()
        ser = s.RunUpdateSerializer(data=request.data, partial=True)
        ser.is_valid(raise_exception=True)
        run = services.run_update(run=run, by=request.user, data=ser.validated_data)
        return Response(s.RunSerializer(run, context={"request": request}).data)

    def perform_destroy(self, instance: Run) -> None:
        services.run_delete(run=instance)

    @extend_schema(
        responses={(200, "text/plain"): str},
        description="The stored run in TREC format, in trec_eval order.",
    )
    @action(detail=True, methods=["get"])
    def download(self, request: Request, pk: str | None = None) -> StreamingHttpResponse:
        run = self.get_object()
        tag = run_label(run, request.user)
        response = StreamingHttpResponse(
            services.run_as_trec(run, tag=tag), content_type="text/plain"
        )
        response["Content-Disposition"] = content_disposition(f"{tag}.run")
        return response

    @extend_schema(
        responses={200: s.RunAnswerSerializer(many=True)},
        description="An answer run's answers (TREC RAG's format), by topic: each sentence "
        "with the segment ids it cites, the ranked references (the run's ranked list), the "
        "stated response length and the words counted as TREC's checkers count them. Empty for "
        "a run of rankings only. Its owner and admins.",
    )
    @action(detail=True, methods=["get"], pagination_class=None)
    def answers(self, request: Request, pk: str | None = None) -> Response:
        return Response(run_answers(self.get_object()))


class QrelsVersionViewSet(
    IntegerIdMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet[QrelsVersion],
):
    """Qrels versions (read-only: a version never changes once stored)."""

    serializer_class = s.QrelsVersionSerializer
    permission_classes = [IsResearcher]
    http_method_names = ["get", "put", "patch", "delete", "head", "options"]

    def get_queryset(self) -> QuerySet[QrelsVersion]:
        return QrelsVersion.objects.visible_to(self.request.user).select_related(*s.DERIVATION)

    def _immutable(self) -> Conflict:
        version = self.get_object()
        return Conflict(
            f"qrels version {version.number} is stored and never changes or goes away; "
            "publish or import a new version instead"
        )

    @extend_schema(
        request=None,
        responses={409: OpenApiResponse(s.ErrorSerializer, description="versions are immutable")},
        description="Refused: a stored qrels version never changes.",
    )
    def update(self, request: Request, pk: str | None = None) -> Response:
        raise self._immutable()

    @extend_schema(
        request=None,
        responses={409: OpenApiResponse(s.ErrorSerializer, description="versions are immutable")},
        description="Refused: a stored qrels version never changes.",
    )
    def partial_update(self, request: Request, pk: str | None = None) -> Response:
        raise self._immutable()

    @extend_schema(
        responses={409: OpenApiResponse(s.ErrorSerializer, description="versions are immutable")},
        description="Refused: a stored qrels version is never deleted.",
    )
    def destroy(self, request: Request, pk: str | None = None) -> Response:
        raise self._immutable()

    @extend_schema(
        responses={
            (200, "text/plain"): str,
            (200, "application/zip"): OpenApiTypes.BINARY,
            409: OpenApiResponse(
                s.ErrorSerializer,
                description="integrity_check_failed: the rows do not hash to the stored hash",
            ),
        },
        parameters=[
            OpenApiParameter(
                "format",
                str,
                description="A sampled version: sample_eval (default: sample_eval.pl's five "
                "columns), trec (trec_eval's -1 form; one stratum only) or prels (Million Query, "
                "each document's inclusion probability). A complete version: trec, or beir: the "
                "campaign's golden set as a zip in BEIR's layout (corpus.jsonl, queries.jsonl, "
                "qrels/test.tsv and pooljudge.json naming this version and its hash), the same "
                "bytes at every export.",
            )
        ],
        description="The version in TREC qrels format (qid 0 docid grade), with its sha256 in "
        "X-Content-SHA256 and what its grades rest on in X-Qrels-Kind (human, automatic (judge) "
        "or hybrid (human + judge); an automatic or hybrid file's name says so too). The rows "
        "are hashed again first: a version whose rows no longer "
        "match its stored hash is refused (409 integrity_check_failed, logged), never served.",
    )
    @action(detail=True, methods=["get"])
    def export(self, request: Request, pk: str | None = None) -> HttpResponseBase:
        version = self.get_object()
        fmt = request.query_params.get("format") or None
        if fmt == "beir":
            zipped = FileResponse(beir_zip(version), content_type="application/zip")
            zipped["Content-Disposition"] = content_disposition(
                f"{version.campaign.name}-qrels-v{version.number}-beir.zip"
            )
            zipped["X-Qrels-SHA256"] = version.content_hash  # the version's, not the zip's
            return zipped
        response = StreamingHttpResponse(
            qrels_services.qrels_export_lines(version, fmt),  # checked against its hash first
            content_type="text/plain",
        )
        kind = "" if version.kind == QrelsKind.HUMAN else f"-{version.kind}"
        form = f"-{fmt}" if fmt and fmt != "trec" and version.design else ""
        response["Content-Disposition"] = content_disposition(
            f"{version.campaign.name}-qrels-v{version.number}{kind}{form}.txt"
        )
        response["X-Content-SHA256"] = version.content_hash
        response["X-Qrels-Kind"] = version.kind_label
        return response


def _format(request: Request) -> str | None:
    fmt = request_fields(request).get("format")
    if fmt is not None and not isinstance(fmt, str):
        raise InvalidInput("format must be a name", [Problem.at("format", "must be a name")])
    return fmt or None


def _only_missing(request: Request) -> bool:
    """``only_missing`` as a query parameter or a form field (1/0, true/false, yes/no)."""
    if "only_missing" in request.query_params:
        return query_bool(request.query_params, "only_missing")
    return query_bool(request_fields(request), "only_missing")


def _runs_by_ref(campaign: Campaign, refs: list[str]) -> list[Run]:
    runs = {r.tag: r for r in campaign.runs.all()}
    by_id = {str(r.pk): r for r in runs.values()}
    chosen, problems = [], []
    for ref in refs:
        run = runs.get(ref) or by_id.get(ref)
        if run is None:
            problems.append(Problem.at("runs", f"no run {ref!r} in this campaign"))
        else:
            chosen.append(run)
    if problems:
        raise InvalidInput("the pool request names unknown runs", problems)
    return chosen


class PoolVersionViewSet(
    IntegerIdMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet[PoolVersion],
):
    """Pool versions and builds; progress while building. Admins and researchers."""

    serializer_class = s.PoolVersionSerializer
    permission_classes = [IsResearcher]

    def get_queryset(self) -> QuerySet[PoolVersion]:
        return PoolVersion.objects.visible_to(self.request.user).select_related("base")

    @extend_schema(
        responses=s.PoolDocumentSerializer(many=True),
        parameters=[OpenApiParameter("topic", str, description="only this topic")],
        description="The pooled documents in judging order (built versions only).",
    )
    @action(detail=True, methods=["get"])
    def documents(self, request: Request, pk: str | None = None) -> Response:
        version = self.get_object()
        docs = PoolDocument.objects.filter(version=version).order_by("topic__qid", "position")
        topic = query_text(request.query_params, "topic")
        if topic is not None:
            docs = docs.filter(topic__qid=topic)
        rows = docs.values(
            "topic__qid",
            "docid",
            "position",
            "added",
            "to_judge",
            "has_text",
            "inclusion",
            "stratum",
            "sampled",
        )
        page = self.paginate_queryset(rows)  # type: ignore[arg-type]
        return self.get_paginated_response(s.PoolDocumentSerializer(page, many=True).data)

    @extend_schema(
        responses={
            200: s.MissingTextDocumentSerializer(many=True),
            (200, "text/plain"): str,
        },
        parameters=[
            OpenApiParameter(
                "format",
                str,
                description="json (default: a page of documents) or txt (every docid, one a "
                "line, as a file)",
            )
        ],
        description="The version's pooled documents whose text is not loaded (admins), one "
        "row per document in docid order with the topics it is pooled for: they wait, and the "
        "judging queue serves the others, until their text is imported (POST "
        "/api/v1/campaigns/{id}/documents/?only_missing=1 with a collection file).",
    )
    @action(detail=True, methods=["get"], url_path="missing-text", permission_classes=[IsAdmin])
    def missing_text(self, request: Request, pk: str | None = None) -> Response | HttpResponseBase:
        version = self.get_object()
        fmt = request.query_params.get("format") or "json"
        if fmt not in ("json", "txt"):
            raise InvalidInput(
                f"format: {fmt!r} is not one of json, txt",
                [Problem.at("format", f"{fmt!r} is not one of json, txt")],
            )
        if fmt == "txt":
            return lines_download(
                pool_selectors.missing_text_docids(version.campaign, version=version),
                pool_selectors.missing_text_filename(version),
            )
        page = self.paginate_queryset(pool_selectors.missing_text_documents(version))  # type: ignore[arg-type]
        rows = pool_selectors.missing_text_topics(version, list(page or []))
        return self.get_paginated_response(s.MissingTextDocumentSerializer(rows, many=True).data)

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "against", int, description="version number; default: this version's base"
            )
        ],
        responses={200: schema_ref(PoolDiffAnswer)},
        description="Documents added and removed per topic against another version.",
    )
    @action(detail=True, methods=["get"])
    def diff(self, request: Request, pk: str | None = None) -> Response:
        version = self.get_object()
        if version.state != PoolState.BUILT:
            raise Conflict(f"pool build {version.pk} is {version.state}, not built")
        against = version.base
        number = query_int(
            request.query_params, "against", minimum=1, maximum=MAX_ID, what="a version number"
        )
        if number is not None:
            against = get_object_or_404(
                PoolVersion.objects.built(), campaign=version.campaign, number=number
            )
        return Response(pool_services.pool_diff(version=version, against=against))

    @extend_schema(request=None, responses={200: s.PoolVersionSerializer})
    @action(detail=True, methods=["post"], permission_classes=[IsAdmin])
    def cancel(self, request: Request, pk: str | None = None) -> Response:
        version = self.get_object()
        pool_services.pool_cancel(version=version)
        version.refresh_from_db()
        return Response(s.PoolVersionSerializer(version, context={"request": request}).data)
