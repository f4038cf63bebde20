"""Where a qrels version is incomplete, per question (``evaluation.incompleteness``)."""

from __future__ import annotations

import dataclasses

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from judging.api.permissions import IsResearcher
from judging.api.result_schemas import ref
from judging.assessments.selectors import qrels_version
from judging.campaigns.models import Campaign
from judging.core.errors import NotFound
from judging.core.params import query_int, query_text
from judging.evaluation.incompleteness import MAX_K, IncompletenessAnswer, incompleteness


class IncompletenessView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        parameters=[
            OpenApiParameter("k", int, description=f"the cut-off, 1-{MAX_K} (default 10)"),
            OpenApiParameter("qrels", int, description="the qrels version's number (latest)"),
            OpenApiParameter("group", str, description="only the runs of this group"),
        ],
        responses={200: ref(IncompletenessAnswer), 404: OpenApiResponse(description="no such")},
        description="Per question: each run's unjudged items in its top k and the union's, the "
        "relevant items no run retrieved within k (invisible to every setup), and the questions "
        "with no relevant item (left out of the measures), against one qrels version.",
    )
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign = get_object_or_404(Campaign.objects.visible_to(request.user), pk=campaign_id)
        k = query_int(request.query_params, "k", minimum=1, maximum=MAX_K, what="a cut-off")
        number = query_int(request.query_params, "qrels", minimum=1, what="a version number")
        version = qrels_version(campaign, number)
        if version is None:
            raise NotFound("no such qrels version" if number else "no qrels version yet")
        answer = incompleteness(
            campaign=campaign,
            version=version,
            k=k or 10,
            user=request.user,
            group=query_text(request.query_params, "group") or "",
        )
        return Response(dataclasses.asdict(answer))
