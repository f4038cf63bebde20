"""Human samples of answer items and the answer runs' scores they correct
(``autojudge.answer_samples``)."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from judging.api.permissions import IsAdmin, IsResearcher
from judging.api.result_schemas import ref
from judging.api.serializers import ErrorSerializer
from judging.assessments.models import NuggetBank
from judging.autojudge.answer_audit import answer_audit
from judging.autojudge.answer_samples import (
    AnswerSampleReport,
    answer_estimate,
    answer_sample_advance,
    answer_sample_create,
)
from judging.autojudge.answers import AnswerAudit
from judging.autojudge.models import HumanSample, Judge, SampleDesign
from judging.core.errors import InvalidInput
from judging.core.params import MAX_ID, parse_int
from judging.core.roles import UserLike, account
from judging.evaluation.selectors import report_viewer
from metrics.problems import Problem
from metrics.results import render


class AnswerSampleInSerializer(serializers.Serializer[Any]):
    kind = serializers.ChoiceField(choices=["nugget_assignment", "citation_support"])
    bank = serializers.IntegerField(
        required=False,
        allow_null=True,
        default=None,
        min_value=1,
        help_text="The published nugget bank version (nugget_assignment)",
    )
    design = serializers.ChoiceField(choices=SampleDesign.values, default="uniform")
    budget = serializers.IntegerField(min_value=1, help_text="Items people judge")
    seed = serializers.IntegerField(min_value=0, default=0)
    allocation = serializers.ChoiceField(
        choices=["proportional", "neyman"],
        default="proportional",
        help_text="Stratified design: proportional, or Neyman's (drawn after a pilot)",
    )


def _report(hs: HumanSample, user: UserLike) -> dict[str, Any]:
    rendered: dict[str, Any] = render(answer_estimate(hs), report_viewer(hs.judge.campaign, user))
    return rendered


def _sample(request: Request, pk: int) -> HumanSample:
    hs: HumanSample = get_object_or_404(
        HumanSample.objects.select_related("judge__campaign", "bank").exclude(kind="document"),
        pk=pk,
        judge__in=Judge.objects.visible_to(request.user),
    )
    return hs


class JudgeAnswerSamplesView(APIView):
    permission_classes = [IsAdmin]

    @extend_schema(
        request=AnswerSampleInSerializer,
        responses={201: ref(AnswerSampleReport), 400: ErrorSerializer, 409: ErrorSerializer},
        description="Draw a human sample of a campaign's answer items (each answer x nugget of "
        "a published bank, or each sentence's first citation) for a judge version that has "
        "labelled every one, and queue it ahead of its topics' other items. Every design "
        "judges a uniform pilot slice (20% of the budget) first; Neyman allocation and the "
        "active design draw the rest after it: POST .../advance/ once it is judged.",
    )
    def post(self, request: Request, pk: int) -> Response:
        judge = get_object_or_404(Judge.objects.visible_to(request.user), pk=pk)
        body = AnswerSampleInSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        hs = answer_sample_create(
            judge=judge, created_by=account(request.user), **body.validated_data
        )
        return Response(_report(hs, request.user), status=status.HTTP_201_CREATED)


class AnswerSampleView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        responses={200: ref(AnswerSampleReport), 404: ErrorSerializer},
        description="The sample's progress and, once every sampled item is judged, every "
        "answer run's scores corrected by it (prediction-powered inference): per measure the "
        "estimate with its interval, the judge's labels alone and the human sample's own "
        "estimate. Other researchers' runs are anonymised.",
    )
    def get(self, request: Request, pk: int) -> Response:
        return Response(_report(_sample(request, pk), request.user))


class AnswerSampleAdvanceView(APIView):
    permission_classes = [IsAdmin]

    @extend_schema(
        request=None,
        responses={200: ref(AnswerSampleReport), 404: ErrorSerializer, 409: ErrorSerializer},
        description="Draw the rest of a two-phase sample once its pilot slice is judged.",
    )
    def post(self, request: Request, pk: int) -> Response:
        hs = answer_sample_advance(_sample(request, pk))
        return Response(_report(hs, request.user))


class JudgeAnswerAuditView(APIView):
    permission_classes = [IsAdmin]

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "kind", str, required=True, description="nugget_assignment or citation_support"
            ),
            OpenApiParameter("bank", int, description="Nugget bank version (latest published)"),
        ],
        responses={200: ref(AnswerAudit), 400: ErrorSerializer, 404: ErrorSerializer},
        description="The judge's labels of answer items against people's (admins: the "
        "rankings name every run): agreement (exact, weighted and binary kappa, confusion) "
        "overall and per topic; the runs' rankings under its labels and people's per measure "
        "(tau-b, tau_AP, top-10 tau; empty, with rankings_note, until people judged every "
        "item; a tied or too-small ranking is null, never 0); and the anchoring control where "
        "its labels were suggested to the assessors.",
    )
    def get(self, request: Request, pk: int) -> Response:
        judge = get_object_or_404(Judge.objects.visible_to(request.user), pk=pk)
        kind = request.query_params.get("kind") or ""
        if kind not in ("nugget_assignment", "citation_support"):
            raise InvalidInput(
                f"kind must be nugget_assignment or citation_support, not {kind[:40]!r}",
                [Problem.at("kind", "nugget_assignment or citation_support")],
            )
        raw = request.query_params.get("bank")
        bank = parse_int(raw, "bank", minimum=1, maximum=MAX_ID) if raw else None
        if kind == "nugget_assignment" and bank is None:
            latest = (
                NuggetBank.objects.filter(campaign=judge.campaign, state="published")
                .order_by("-number")
                .first()
            )
            bank = latest.number if latest is not None else None
        return Response(answer_audit(judge=judge, kind=kind, bank=bank))
