"""The answer runs' scores from people's judgments (``evaluation.answer_board``)."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from judging.api.permissions import IsResearcher
from judging.api.result_schemas import ref
from judging.api.serializers import ErrorSerializer
from judging.assessments.selectors import qrels_version
from judging.campaigns.models import Campaign
from judging.core.errors import NotFound
from judging.core.params import MAX_ID, parse_int
from judging.evaluation.answer_board import AnswerBoard, answer_board_for


class AnswerBoardView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "bank", int, description="Nugget bank version (default: the latest published)"
            ),
            OpenApiParameter(
                "qrels",
                str,
                description="Qrels version of the retrieval measure shown beside (default: "
                "the latest human one)",
            ),
        ],
        responses={200: ref(AnswerBoard), 400: ErrorSerializer, 404: ErrorSerializer},
        description="Every answer run's macro nugget recall (All, Vital, strict and partial "
        "forms, weighted) under one published nugget bank version, citation support "
        "(weighted precision and recall of each sentence's first citation) and length, each "
        "with a 95% bootstrap interval over topics, beside the run's first campaign measure "
        "under a named qrels version. Labels are the consensus of people's judgments; a pair "
        "not judged yet counts as not supported, and upper gives the score were every "
        "unjudged pair supported. Other researchers' runs are anonymised.",
    )
    def get(self, request: Request, pk: int) -> Response:
        campaign = get_object_or_404(Campaign.objects.visible_to(request.user), pk=pk)
        raw = request.query_params.get("bank")
        bank = parse_int(raw, "bank", minimum=1, maximum=MAX_ID) if raw else None
        number = request.query_params.get("qrels")
        version = qrels_version(campaign, number)
        if version is None and number:
            raise NotFound(f"campaign {campaign.pk} has no qrels version {number!r}")
        board = answer_board_for(campaign=campaign, user=request.user, version=version, bank=bank)
        if board is None:
            raise NotFound(f"campaign {campaign.pk} has no answer run")
        return Response(board)
