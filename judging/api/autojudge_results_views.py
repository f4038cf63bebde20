"""Judge audits and human samples with their corrected estimates, over the API.

- ``POST /api/v1/judges/<id>/audits/`` (admins): ask for the audit against a human qrels version
  over a pool version; ``GET /api/v1/audits/<id>/`` (researchers, admins) reads it.
- ``POST /api/v1/judges/<id>/samples/`` (admins): draw a human sample (queued to the
  assessors); ``GET /api/v1/samples/<id>/`` reads its progress and, once every sampled document
  is graded, every run's corrected estimates with 95% intervals;
  ``POST /api/v1/samples/<id>/advance/`` draws the rest of a two-phase design after its pilot.
"""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from judging.api.permissions import IsAdmin, IsResearcher
from judging.api.result_schemas import ref
from judging.api.serializers import ErrorSerializer
from judging.api.stored import stored_response
from judging.autojudge.answers import AuditAnswer, SampleAnswer
from judging.autojudge.audit import audit_request
from judging.autojudge.estimates import sample_advance, sample_create
from judging.autojudge.models import HumanSample, Judge, JudgeAudit, SampleDesign
from judging.autojudge.reports import audit_view, sample_view
from judging.autojudge.selectors import pool_by_number, qrels_by_number
from judging.core.roles import account


class AuditRequestSerializer(serializers.Serializer[Any]):
    human = serializers.IntegerField(help_text="The human qrels version's number.")
    pool = serializers.IntegerField(help_text="The pool version's number.")
    again = serializers.BooleanField(default=False, help_text="Compute again even if stored.")


class SampleRequestSerializer(serializers.Serializer[Any]):
    pool = serializers.IntegerField(help_text="The pool version's number.")
    design = serializers.ChoiceField(choices=SampleDesign.choices)
    budget = serializers.IntegerField(min_value=2, help_text="Documents people grade.")
    seed = serializers.IntegerField(min_value=0, default=0)
    allocation = serializers.ChoiceField(
        choices=["neyman", "proportional"], default="neyman", help_text="stratified only"
    )


def _judge(request: Request, pk: int) -> Judge:
    judge: Judge = get_object_or_404(Judge.objects.visible_to(request.user), pk=pk)
    return judge


class JudgeAuditsView(APIView):
    permission_classes = [IsAdmin]

    @extend_schema(
        operation_id="judge_audit_request",
        request=AuditRequestSerializer,
        responses={
            202: OpenApiResponse(
                ref(AuditAnswer), description="the audit (state queued, running or done)"
            ),
            400: ErrorSerializer,
        },
        description="Ask for the audit of a judge version against a human qrels version over a "
        "pool version: label agreement (weighted kappa, confusion, base rates, exact and "
        "within-one), the runs ranked under its labels vs people's (tau-b, tau_AP, tau among "
        "the top 10), score gaps per model family with the circularity flag, and the stuffing "
        "and injection probes. Computed by a task; read it with GET /api/v1/audits/<id>/.",
    )
    def post(self, request: Request, pk: int) -> Response:
        judge = _judge(request, pk)
        ser = AuditRequestSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        human = qrels_by_number(judge.campaign, ser.validated_data["human"], "human")
        pool = pool_by_number(judge.campaign, ser.validated_data["pool"], "pool")
        audit = audit_request(
            judge=judge,
            human=human,
            pool=pool,
            requested_by=account(request.user),
            again=ser.validated_data["again"],
        )
        return Response(audit_view(audit, request.user), status=status.HTTP_202_ACCEPTED)


class AuditView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        operation_id="judge_audit",
        responses={
            200: OpenApiResponse(ref(AuditAnswer), description="state, error and the result")
        },
    )
    def get(self, request: Request, pk: int) -> Response:
        audit = (
            JudgeAudit.objects.select_related("judge", "human", "pool", "job")
            .filter(pk=pk, judge__in=Judge.objects.visible_to(request.user))
            .first()
        )
        body = audit_view(audit, request.user) if audit is not None else None
        return stored_response(body, missing="No JudgeAudit matches the given query.")


def _sample_summary(hs: HumanSample) -> dict[str, Any]:
    return {
        "id": hs.pk,
        "judge": hs.judge.describe(),
        "pool": hs.pool.number if hs.pool is not None else None,
        "design": hs.design,
        "budget": hs.budget,
        "seed": hs.seed,
        "phase": hs.design_info.get("phase"),
        "queued": hs.items.count(),
    }


class JudgeSamplesView(APIView):
    permission_classes = [IsAdmin]

    @extend_schema(
        operation_id="judge_sample_create",
        request=SampleRequestSerializer,
        responses={
            201: OpenApiResponse(ref(SampleAnswer), description="the sample"),
            400: ErrorSerializer,
        },
        description="Draw a human sample of a pool version for a judge version (uniform, "
        "stratified by the judge's grade, or active) and queue it to the assessors ahead of the "
        "rest of their topics. Neyman allocation and the active design queue a pilot slice "
        "first: POST /api/v1/samples/<id>/advance/ once it is graded.",
    )
    def post(self, request: Request, pk: int) -> Response:
        judge = _judge(request, pk)
        ser = SampleRequestSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        data = ser.validated_data
        pool = pool_by_number(judge.campaign, data["pool"], "pool")
        hs = sample_create(
            judge=judge,
            pool=pool,
            design=data["design"],
            budget=data["budget"],
            seed=data["seed"],
            allocation=data["allocation"],
            created_by=account(request.user),
        )
        return Response(_sample_summary(hs), status=status.HTTP_201_CREATED)


def _sample(request: Request, pk: int) -> HumanSample:
    hs: HumanSample = get_object_or_404(
        HumanSample.objects.select_related("judge", "judge__campaign", "pool"),
        pk=pk,
        judge__in=Judge.objects.visible_to(request.user),
    )
    return hs


class SampleView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        operation_id="judge_sample",
        responses={
            200: OpenApiResponse(
                ref(SampleAnswer),
                description="progress; when ready, per run and measure the corrected estimate "
                "(value, low, high, se), the judge-only value and the people-only estimate",
            )
        },
    )
    def get(self, request: Request, pk: int) -> Response:
        hs = _sample(request, pk)
        return Response({**_sample_summary(hs), "estimate": sample_view(hs, request.user)})


class SampleAdvanceView(APIView):
    permission_classes = [IsAdmin]

    @extend_schema(
        operation_id="judge_sample_advance",
        request=None,
        responses={
            200: OpenApiResponse(ref(SampleAnswer), description="the sample"),
            409: ErrorSerializer,
        },
        description="Draw the rest of a two-phase sample once its pilot slice is graded.",
    )
    def post(self, request: Request, pk: int) -> Response:
        hs = sample_advance(_sample(request, pk))
        return Response(_sample_summary(hs))
