"""The per-query comparison of two runs (researchers and admins): the topic list and one topic's
two rankings side by side (``judging.evaluation.versus``). GET only; nothing is computed but the
paired test on stored per-topic values."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from judging.api.evaluation_views import QRELS_PARAM, qrels_version
from judging.api.permissions import IsResearcher
from judging.api.result_schemas import ref
from judging.api.serializers import ErrorSerializer
from judging.campaigns.models import Campaign
from judging.core.params import query_int, query_text
from judging.evaluation.answers import VersusAnswer, VersusTopicAnswer
from judging.evaluation.versus import SORTS, TESTS, parse_tie, run_versus, topic_versus

RUN_PARAMS = [
    OpenApiParameter(
        "a",
        str,
        description="run A's label as you see it (default: the best run by the "
        "campaign's first measure)",
    ),
    OpenApiParameter("b", str, description="run B's label (default: the next best run)"),
]
SORT_PARAM = OpenApiParameter(
    "sort", str, description=f"topic order: {', '.join(SORTS)} (default diff: A - B, largest first)"
)
ERRORS = {
    400: OpenApiResponse(ErrorSerializer, description="a bad parameter, named in problems"),
    404: OpenApiResponse(description="no such campaign or qrels version"),
}


def _campaign(request: Request, pk: int) -> Campaign:
    return get_object_or_404(Campaign.objects.visible_to(request.user), pk=pk)


class VersusView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        operation_id="campaign_versus",
        parameters=[
            *RUN_PARAMS,
            OpenApiParameter("measure", str, description="one of the campaign's (default: first)"),
            QRELS_PARAM,
            SORT_PARAM,
            OpenApiParameter("test", str, description=f"paired test: {', '.join(TESTS)}"),
            OpenApiParameter(
                "tie", float, description="tie tolerance on |A - B|, 0 to 1 (default 0: exact)"
            ),
        ],
        responses={200: ref(VersusAnswer), **ERRORS},
        description="Two runs topic by topic on one measure under one qrels version (stored "
        "honest per-topic values): each topic's scores and A - B, sorted; wins, ties and "
        "losses of A; both macro means; a paired test over the same topics. A topic one run "
        "has no value for is scored 0 for it and listed in missing. Other researchers' runs "
        "appear under their anonymous labels.",
    )
    def get(self, request: Request, pk: int) -> Response:
        campaign = _campaign(request, pk)
        params = request.query_params
        version = qrels_version(campaign, params.get("qrels"))
        return Response(
            run_versus(
                campaign=campaign,
                version=version,
                a=query_text(params, "a") or "",
                b=query_text(params, "b") or "",
                measure=query_text(params, "measure", max_length=100) or "",
                user=request.user,
                sort=query_text(params, "sort", max_length=20) or "diff",
                test=query_text(params, "test", max_length=20) or "t",
                tie=parse_tie(query_text(params, "tie", max_length=40)),
            )
        )


class VersusTopicView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        operation_id="campaign_versus_topic",
        parameters=[
            *RUN_PARAMS,
            OpenApiParameter(
                "measure", str, description="the measure of the scores (default: first)"
            ),
            QRELS_PARAM,
            OpenApiParameter(
                "depth",
                int,
                description="rankings to this depth (default POOLJUDGE_VERSUS_DEPTH, at most "
                "POOLJUDGE_VERSUS_MAX_DEPTH)",
            ),
            SORT_PARAM,
        ],
        responses={200: ref(VersusTopicAnswer), **ERRORS},
        description="One topic's two rankings side by side: each document's grade in the qrels "
        "version (null: unjudged), whether it is relevant, and its rank in the other run's "
        "whole ranking (null: only this run retrieved it). The ranking of another "
        "researcher's run is not shown (its column has no rows, and the other column no "
        "ranks in it); prev/next are the neighbouring topics in the list's sort order.",
    )
    def get(self, request: Request, pk: int, qid: str) -> Response:
        campaign = _campaign(request, pk)
        params = request.query_params
        version = qrels_version(campaign, params.get("qrels"))
        return Response(
            topic_versus(
                campaign=campaign,
                version=version,
                a=query_text(params, "a") or "",
                b=query_text(params, "b") or "",
                qid=qid,
                depth=query_int(params, "depth", minimum=1, maximum=10**6),
                user=request.user,
                measure=query_text(params, "measure", max_length=100) or "",
                sort=query_text(params, "sort", max_length=20) or "diff",
            )
        )
