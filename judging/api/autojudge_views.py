"""API of the automatic judges: researchers and admins read judges, their runs and their labels'
summaries; admins create judges, run them over pool versions, import label files, calibrate
embedding judges and build automatic and hybrid qrels versions. Annotators get 403.

Views parse the request with a serializer, call one service (or workflow), and render a
selector's dict. No answer names an endpoint's URL or key: only its name."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import transaction
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from judging.api import autojudge_serializers as s
from judging.api.serializers import ErrorSerializer, QrelsVersionSerializer
from judging.api.stored import stored_response
from judging.autojudge import answer_labels, selectors, services
from judging.autojudge.models import Judge
from judging.campaigns.models import Campaign
from judging.core import uploads
from judging.core.roles import account, is_admin, is_researcher
from judging.workflows.autojudge import automatic_qrels_built, hybrid_qrels_built


class ReadResearcherWriteAdmin(BasePermission):
    """Judges are results: researchers and admins read them; only admins change anything."""

    message = "only researchers and admins read automatic judges; only admins change them"

    def has_permission(self, request: Request, view: Any) -> bool:
        if request.method in SAFE_METHODS:
            return is_researcher(request.user)
        return is_admin(request.user)


ERRORS = {
    400: OpenApiResponse(ErrorSerializer, description="a bad field, named in the problems"),
    409: OpenApiResponse(ErrorSerializer, description="refused by the judge's state or kind"),
}


def _campaign(request: Request, campaign_id: int) -> Campaign:
    campaign: Campaign = get_object_or_404(
        Campaign.objects.visible_to(request.user), pk=campaign_id
    )
    return campaign


def _detail(judge: Judge) -> dict[str, Any]:
    return dict(s.JudgeDetailSerializer(selectors.judge_detail(judge)).data)


class JudgesView(APIView):
    permission_classes = [ReadResearcherWriteAdmin]

    @extend_schema(
        responses={200: s.JudgeListSerializer},
        description="The campaign's judge versions (researchers and admins): name, version, "
        "kind, model, the endpoint's name, whether it is locked, graded labels, runs, tokens "
        "and cost; and the names of the configured chat endpoints.",
    )
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign = _campaign(request, campaign_id)
        rows = selectors.judge_list(campaign=campaign, user=request.user)
        body = {"count": len(rows), "results": rows, "endpoints": services.endpoint_names()}
        return Response(s.JudgeListSerializer(body).data)

    @extend_schema(
        request=s.JudgeCreateSerializer,
        responses={
            201: s.JudgeDetailSerializer,
            200: OpenApiResponse(
                s.JudgeDetailSerializer,
                description="the latest version says the same and never labelled: it is reused",
            ),
            **ERRORS,
        },
        description="Create the next version of a judge (admins). kind: openai-compatible "
        "(model, endpoint: a configured endpoint's name, prompt: default UMBRELA's, mapping, "
        "prices per 1k tokens), embedding (model, max_chars; calibrate it before it runs) or "
        "imported (model its file declares; POST its labels). A version that has labelled "
        "anything never changes: the same name with a different model, prompt or parameters "
        "makes the next version.",
    )
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = _campaign(request, campaign_id)
        ser = s.JudgeCreateSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        v = ser.validated_data
        params: dict[str, Any] = {}
        if v.get("endpoint"):
            params["endpoint"] = v["endpoint"]
        if v.get("mapping") is not None:
            params["mapping"] = {str(k): int(g) for k, g in v["mapping"].items()}
        for key in (
            "price_prompt_per_1k",
            "price_completion_per_1k",
            "max_chars",
            "t_partial",
            "t_support",
        ):
            if v.get(key) is not None:
                params[key] = v[key]
        before = set(
            Judge.objects.filter(campaign=campaign, name=v["name"]).values_list("pk", flat=True)
        )
        judge = services.judge_create(
            campaign=campaign,
            name=v["name"],
            kind=v["kind"],
            model=v["model"],
            prompt=v.get("prompt", ""),
            params=params,
            description=v.get("description", ""),
            created_by=account(request.user),
        )
        code = status.HTTP_200_OK if judge.pk in before else status.HTTP_201_CREATED
        return Response(_detail(judge), status=code)


class JudgeDetailView(APIView):
    permission_classes = [ReadResearcherWriteAdmin]

    @extend_schema(
        responses={200: s.JudgeDetailSerializer},
        description="One judge version: what it says (prompt, parameters; an endpoint by "
        "name only), its other versions, its runs with progress, its labels by status, its "
        "grade distribution, tokens and cost, and the qrels versions built from it.",
    )
    def get(self, request: Request, pk: int) -> Response:
        return Response(_detail(selectors.judge_for(request.user, pk)))


class JudgeRunsView(APIView):
    permission_classes = [ReadResearcherWriteAdmin]

    @extend_schema(
        request=s.JudgeRunRequestSerializer,
        responses={202: s.JudgeRunSerializer, **ERRORS},
        description="Run the judge over a pool version (admins; default: the latest built): "
        "a task labels every document the version has not graded yet. With kind "
        "nugget_assignment (and bank, a published nugget bank version's number) or "
        "citation_support instead, it labels every (answer, nugget) or (sentence, first cited "
        "segment) of the campaign's answer runs, 2/1/0. Answers 202 with the run (poll GET "
        "/api/v1/judge-runs/{id}/); a run already queued or running over the same pool, or "
        "the same kind and bank, is returned instead of a second one. An imported judge does "
        "not run, nor does a campaign without answer runs label answers (409); an unknown or "
        "draft bank is a 400 naming bank.",
    )
    def post(self, request: Request, pk: int) -> Response:
        judge = selectors.judge_for(request.user, pk)
        ser = s.JudgeRunRequestSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        v = ser.validated_data
        by = account(request.user)
        if v["kind"] != "document":
            bank = answer_labels.bank_by_number(judge.campaign, v.get("bank"))
            run = answer_labels.answer_run_request(judge=judge, kind=v["kind"], bank=bank, by=by)
        else:
            pool = selectors.pool_by_number(judge.campaign, v.get("pool"))
            run = services.judge_run_request(judge=judge, pool=pool, requested_by=by)
        run.refresh_from_db()
        body = s.JudgeRunSerializer(selectors.judge_run_progress(run)).data
        return Response(body, status=status.HTTP_202_ACCEPTED)


class JudgeRunView(APIView):
    permission_classes = [ReadResearcherWriteAdmin]

    @extend_schema(
        responses={200: s.JudgeRunSerializer},
        description="Where a judge run stands: state, documents done of total, labels by "
        "status (ok, refused, malformed, errors), tokens, cost, and why it stopped.",
    )
    def get(self, request: Request, pk: int) -> Response:
        run = selectors.judge_run_for(request.user, pk)
        body = selectors.judge_run_progress(run) if run is not None else None
        return stored_response(
            body,
            missing="No JudgeRun matches the given query.",
            pending=_run_data,
            ready=_run_data,
        )


def _run_data(body: dict[str, Any]) -> dict[str, Any]:
    return dict(s.JudgeRunSerializer(body).data)


class JudgeLabelsView(APIView):
    permission_classes = [ReadResearcherWriteAdmin]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request={"multipart/form-data": s.JudgeLabelsImportSerializer},
        responses={201: s.JudgeLabelsImportedSerializer, **ERRORS},
        description="Import an imported judge's labels (admins): a TREC qrels-format 'file' "
        "(grades on the campaign's scale) or UMBRELA's JSONL output (format=umbrela, grades 0-3 "
        "mapped by the judge's mapping; 'requests': the request file it judged). Validated "
        "whole: on any problem nothing is stored and each problem names its line.",
    )
    def post(self, request: Request, pk: int) -> Response:
        judge = selectors.judge_for(request.user, pk)
        uploads.check_request_size(
            request.META.get("CONTENT_LENGTH"),
            limit=settings.POOLJUDGE_UPLOADS.max_upload_bytes,
            what="the label file",
        )
        ser = s.JudgeLabelsImportSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        v = ser.validated_data
        upload = v["file"]
        stored = services.labels_import(
            judge=judge,
            data=upload,
            format=v["format"],
            requests=v.get("requests"),
            source=upload.name or "labels",
        )
        judge.refresh_from_db()
        body = {"stored": stored, "judge": selectors.judge_summary(judge)}
        return Response(s.JudgeLabelsImportedSerializer(body).data, status=status.HTTP_201_CREATED)


class JudgeCalibrateView(APIView):
    permission_classes = [ReadResearcherWriteAdmin]

    @extend_schema(
        request=s.JudgeCalibrateSerializer,
        responses={202: s.CalibrationSerializer, **ERRORS},
        description="Calibrate an embedding judge (admins): a task scores the pool documents "
        "the human qrels version grades (all, or a seeded sample) with the model and cuts them "
        "where weighted kappa with the human grades is highest, making the judge's next "
        "version. Answers 202 with the calibration (Location: poll GET "
        "/api/v1/calibrations/{id}/; 'calibrated' is the new version once done, 'error' says "
        "why it failed); the same calibration already queued or running is returned instead of "
        "a second one. 409 for another kind, or when the extra (pip install '.[autojudge]') is "
        "not installed.",
    )
    def post(self, request: Request, pk: int) -> Response:
        judge = selectors.judge_for(request.user, pk)
        ser = s.JudgeCalibrateSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        v = ser.validated_data
        human = selectors.qrels_by_number(judge.campaign, v["human"], "human")
        pool = selectors.pool_by_number(judge.campaign, v.get("pool"))
        calibration = services.calibration_request(
            judge=judge,
            human=human,
            pool=pool,
            sample=v.get("sample"),
            seed=v["seed"],
            requested_by=account(request.user),
        )
        calibration.refresh_from_db()  # inline tasks (no broker) have run by now
        body = s.CalibrationSerializer(selectors.calibration_view(calibration)).data
        where = reverse("api-calibration", kwargs={"pk": calibration.pk})
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": where})


class CalibrationView(APIView):
    permission_classes = [ReadResearcherWriteAdmin]

    @extend_schema(
        responses={200: s.CalibrationSerializer},
        description="Where a calibration stands: what it was asked (judge version, human "
        "qrels and pool versions, sample, seed), its state (queued, running, done, failed), "
        "the judge version it made once done, and why it failed.",
    )
    def get(self, request: Request, pk: int) -> Response:
        calibration = selectors.calibration_for(request.user, pk)
        body = selectors.calibration_view(calibration) if calibration is not None else None
        return stored_response(
            body,
            missing="No JudgeCalibration matches the given query.",
            pending=_calibration_data,
            ready=_calibration_data,
        )


def _calibration_data(body: dict[str, Any]) -> dict[str, Any]:
    return dict(s.CalibrationSerializer(body).data)


class JudgeQrelsView(APIView):
    permission_classes = [ReadResearcherWriteAdmin]

    @extend_schema(
        request=s.JudgeQrelsRequestSerializer,
        responses={201: QrelsVersionSerializer, **ERRORS},
        description="Build a qrels version from the judge's labels (admins): kind automatic "
        "(its grade for every pool document it graded) or hybrid (the human version 'human' as "
        "it is, plus its grade for each pool document no person judged). Every row keeps its "
        "provenance; the version is evaluated like any other and every number computed on it "
        "names its kind.",
    )
    def post(self, request: Request, pk: int) -> Response:
        judge = selectors.judge_for(request.user, pk)
        ser = s.JudgeQrelsRequestSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        v = ser.validated_data
        pool = selectors.pool_by_number(judge.campaign, v.get("pool"))
        who = account(request.user)
        note = v.get("note", "")
        with transaction.atomic():
            if v["kind"] == "automatic":
                version = automatic_qrels_built(judge=judge, pool=pool, note=note, created_by=who)
            else:
                human = selectors.qrels_by_number(judge.campaign, v["human"], "human")
                version = hybrid_qrels_built(
                    judge=judge, pool=pool, human=human, note=note, created_by=who
                )
        return Response(QrelsVersionSerializer(version).data, status=status.HTTP_201_CREATED)


class SubmitResearcher(BasePermission):
    """A judges' track: researchers (participants) and admins submit judges and list theirs."""

    message = "only researchers and admins submit judges"

    def has_permission(self, request: Request, view: Any) -> bool:
        return is_researcher(request.user)


class JudgeSubmissionsView(APIView):
    permission_classes = [SubmitResearcher]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        responses={200: s.JudgeSubmissionsSerializer},
        description="Your judge submissions in the campaign (an admin: every participant's), "
        "and the chat endpoints you may name. Another participant's never appear.",
    )
    def get(self, request: Request, campaign_id: int) -> Response:
        from judging.autojudge.submissions import endpoints_for, submissions_of

        campaign = _campaign(request, campaign_id)
        user = account(request.user)
        rows = [selectors.judge_summary(j) for j in submissions_of(campaign, user)]
        body = {"count": len(rows), "results": rows, "endpoints": endpoints_for(user)}
        return Response(s.JudgeSubmissionsSerializer(body).data)

    @extend_schema(
        request={"multipart/form-data": s.JudgeSubmissionSerializer},
        responses={201: s.JudgeSubmittedSerializer, **ERRORS},
        description="Submit a judge for a pool version (researchers, as a participant of a "
        "judges' track; admins too). kind=imported: its labels in 'file' (TREC qrels on the "
        "campaign's scale, or UMBRELA's JSONL with format=umbrela and its 'requests' file), "
        "read whole: every label must be for a pair of the pool version, and on any problem "
        "nothing is stored, each problem named. kind=openai-compatible: 'endpoint' names a "
        "configured endpoint the organisers opened to you; the service runs it over the pool "
        "('run': poll GET /api/v1/judge-runs/{id}/). Declare what it is (model, family, open "
        "weights, prompt) and whether it saw any of people's judgments; an imported judge may "
        "declare its cost (calls, tokens, cost, seconds). Other participants never read your "
        "judge; the meta-evaluation shows them its row anonymised. The same name again makes "
        "your next version.",
    )
    def post(self, request: Request, campaign_id: int) -> Response:
        from judging.autojudge.submissions import judge_submit

        campaign = _campaign(request, campaign_id)
        uploads.check_request_size(
            request.META.get("CONTENT_LENGTH"),
            limit=settings.POOLJUDGE_UPLOADS.max_upload_bytes,
            what="the label file",
        )
        ser = s.JudgeSubmissionSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        v = ser.validated_data
        upload = v.get("file")
        ledger = {
            k: v[k]
            for k in ("calls", "prompt_tokens", "completion_tokens", "cost", "seconds")
            if v.get(k) is not None
        }
        judge, run = judge_submit(
            campaign=campaign,
            owner=account(request.user),
            name=v["name"],
            kind=v["kind"],
            model=v["model"],
            saw_human_qrels=v["saw_human_qrels"],
            pool=v.get("pool"),
            family=v.get("family", ""),
            open_weights=v.get("open_weights"),
            prompt=v.get("prompt", ""),
            description=v.get("description", ""),
            data=upload,
            format=v["format"],
            requests=v.get("requests"),
            endpoint=v.get("endpoint", ""),
            ledger=ledger,
        )
        judge.refresh_from_db()
        body = {"judge": selectors.judge_summary(judge), "run": run.pk if run else None}
        return Response(s.JudgeSubmittedSerializer(body).data, status=status.HTTP_201_CREATED)
