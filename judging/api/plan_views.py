"""The budget plan of a campaign's judging (admins): per topic, relevant found and left, the
stopping suggestion, the time left, and the open items."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from judging.api.permissions import IsAdmin
from judging.api.result_schemas import ref
from judging.assessments.answers import PlanAnswer
from judging.assessments.planning import budget_plan
from judging.campaigns.models import Campaign


class PlanView(APIView):
    permission_classes = [IsAdmin]

    @extend_schema(
        responses={200: ref(PlanAnswer)},
        description="The campaign's budget plan (admins): per topic the judgments, relevant "
        "found, relevant among the last `window` items judged, the relevant left (estimate, "
        "with its model), a stopping suggestion below the campaign's stop_rate, the time "
        "left at the measured pace, and the overlap slots nobody can fill with why; the "
        "campaign's totals and its open items (listed up to POOLJUDGE_OPEN_ITEMS_LISTED). "
        "Gold items are left out.",
    )
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign = get_object_or_404(Campaign.objects.visible_to(request.user), pk=campaign_id)
        return Response(budget_plan(campaign))
