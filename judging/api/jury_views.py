"""API of juries (issue 35, point 3): an admin combines several judges of a campaign into a jury
(``autojudge.juries``), a judge of its own whose run over a pool version is queued at once.
Researchers read juries as any organisers' judge (``api-judges``); annotators get 403."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from judging.api import autojudge_serializers as s
from judging.api.permissions import IsAdmin
from judging.api.serializers import ErrorSerializer
from judging.autojudge import juries, selectors
from judging.campaigns.models import Campaign
from judging.core.roles import account


class JuriesView(APIView):
    permission_classes = [IsAdmin]

    @extend_schema(
        request=s.JuryCreateSerializer,
        responses={
            201: s.JuryCreatedSerializer,
            400: OpenApiResponse(ErrorSerializer, description="a bad field, named"),
            409: OpenApiResponse(ErrorSerializer, description="the pool is not built"),
        },
        description="Make a jury of the campaign's judges (admins) and queue its run over a "
        "pool version (default: the latest built). method: majority (ties to the lower "
        "grade), mean (rounded to the scale), dawid-skene (each judge's confusion estimated "
        "over the whole pool), or defer (the members' grade where they agree, people's grade "
        "from the human qrels version 'human' where they disagree; items people have not "
        "judged are deferred, without a grade, and queued first for people). The same name, "
        "members, method and human again is the same jury version, run again; a change makes "
        "the name's next version. A pair no member has graded gets no label. Poll the run at "
        "GET /api/v1/judge-runs/{id}/; the jury is then a judge like any other.",
    )
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign: Campaign = get_object_or_404(
            Campaign.objects.visible_to(request.user), pk=campaign_id
        )
        ser = s.JuryCreateSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        v = ser.validated_data
        pool = selectors.pool_by_number(campaign, v.get("pool"))
        human = v.get("human")
        jury, run = juries.jury_request(
            campaign=campaign,
            name=v["name"],
            members=juries.members_by_id(v["members"]),
            method=v["method"],
            human=selectors.qrels_by_number(campaign, human) if human is not None else None,
            pool=pool,
            requested_by=account(request.user),
        )
        jury.refresh_from_db()
        body = {"judge": selectors.judge_summary(jury), "run": run.pk}
        return Response(s.JuryCreatedSerializer(body).data, status=status.HTTP_201_CREATED)
