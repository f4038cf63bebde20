"""The judges' meta-evaluation (issue 35, point 2): every judge of a campaign against one of
people's qrels versions over a pool version, with intervals over topics; researchers and admins
read it (another participant's judge anonymised) and ask for it; exports for a paper."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from judging.api.autojudge_serializers import optional_number
from judging.api.evaluation_views import download
from judging.api.permissions import IsResearcher
from judging.api.result_schemas import ref
from judging.api.serializers import ErrorSerializer
from judging.autojudge import meta_board, selectors
from judging.autojudge.meta_answers import MetaAnswer
from judging.autojudge.meta_eval import DEFAULT_MEASURE, meta_request
from judging.autojudge.services import invalid
from judging.campaigns.models import Campaign
from judging.core.errors import NotFound
from judging.core.params import MAX_ID, query_int, query_text
from judging.core.roles import account


class MetaRequestSerializer(serializers.Serializer[Any]):
    qrels = optional_number("people's qrels version (default: the latest human one)")
    pool = optional_number("the pool version (default: the latest built)")
    measure = serializers.CharField(
        required=False, max_length=50, default=DEFAULT_MEASURE, help_text="ranks the runs"
    )
    again = serializers.BooleanField(required=False, default=False)


def _campaign(request: Request, campaign_id: int) -> Campaign:
    campaign: Campaign = get_object_or_404(
        Campaign.objects.visible_to(request.user), pk=campaign_id
    )
    return campaign


def _sort(request: Request) -> str:
    sort = request.query_params.get("sort") or meta_board.DEFAULT_SORT
    if sort not in meta_board.SORTS:
        raise invalid("sort", f"must be one of {', '.join(meta_board.SORTS)}")
    return sort


class MetaEvaluationView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        parameters=[
            OpenApiParameter("qrels", int, description="people's qrels version (default: any)"),
            OpenApiParameter("pool", int, description="pool version (default: any)"),
            OpenApiParameter("measure", str, description="the runs' measure (default: any)"),
            OpenApiParameter(
                "sort", str, description=f"one of {', '.join(meta_board.SORTS)} (tau_b)"
            ),
            OpenApiParameter("format", str, description="json (default), csv, markdown or latex"),
        ],
        responses={200: ref(MetaAnswer), 400: ErrorSerializer, 404: ErrorSerializer},
        description="The newest meta-evaluation matching the query: for every judge with "
        "labels on the pool (juries too), agreement with people's grades (Cohen's kappa, "
        "binary and weighted kappa, Krippendorff's alpha, confusion overall and per topic) "
        "and of the runs' ranking by the measure (Kendall tau-b, tau_AP, tau among people's "
        "top 10, Spearman, the share of people's significant run pairs kept), each with a 95% "
        "bootstrap interval over topics; a figure that cannot be computed is null with "
        "'undefined' saying why, never 0. Each judge's cost (calls, tokens, cost, seconds; "
        "counted, declared or summed over a jury) and kappa per cost. Another participant's "
        "judge is 'anonymous judge #n'. format=csv, markdown or latex downloads the table.",
    )
    def get(self, request: Request, campaign_id: int) -> Any:
        campaign = _campaign(request, campaign_id)
        sort = _sort(request)
        fmt = request.query_params.get("format") or "json"
        if fmt not in ("json", *meta_board.FORMATS):
            raise invalid("format", "must be json, csv, markdown or latex")
        meta = meta_board.meta_for(
            campaign,
            qrels=query_int(request.query_params, "qrels", minimum=1, maximum=MAX_ID),
            pool=query_int(request.query_params, "pool", minimum=1, maximum=MAX_ID),
            measure=query_text(request.query_params, "measure", max_length=50),
        )
        if meta is None:
            raise NotFound("no meta-evaluation matches: POST to compute one")
        view = meta_board.meta_view(meta, request.user, sort=sort)
        if fmt != "json":
            if view["result"] is None:
                raise NotFound(f"the meta-evaluation is {view['state']}: nothing to export yet")
            text, _, name = meta_board.export(view, fmt)
            return download(text, fmt, name)
        return Response(view)

    @extend_schema(
        request=MetaRequestSerializer,
        responses={
            202: OpenApiResponse(ref(MetaAnswer), description="its state (queued, done)"),
            400: ErrorSerializer,
        },
        description="Ask for the meta-evaluation against people's qrels version 'qrels' over "
        "pool version 'pool', ranking the runs by 'measure' (researchers and admins). The "
        "stored one is answered when there is one (again=true computes it again, reading "
        "judges and labels added since); poll GET for its state.",
    )
    def post(self, request: Request, campaign_id: int) -> Response:
        from judging.assessments.models import QrelsKind, QrelsVersion

        campaign = _campaign(request, campaign_id)
        ser = MetaRequestSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        v = ser.validated_data
        if v.get("qrels") is None:
            human = (
                QrelsVersion.objects.filter(campaign=campaign, kind=QrelsKind.HUMAN)
                .order_by("-number")
                .first()
            )
            if human is None:
                raise invalid("qrels", "the campaign has no qrels version of people yet")
        else:
            human = selectors.qrels_by_number(campaign, v["qrels"], "qrels")
        pool = selectors.pool_by_number(campaign, v.get("pool"))
        meta = meta_request(
            campaign=campaign,
            human=human,
            pool=pool,
            measure=v["measure"],
            requested_by=account(request.user),
            again=v["again"],
        )
        body = meta_board.meta_view(meta, request.user)
        return Response(body, status=status.HTTP_202_ACCEPTED)
