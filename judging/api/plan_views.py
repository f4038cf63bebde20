"""The budget plan of a campaign's judging (admins): per topic, relevant found and left, the
stopping suggestion, the time left, and the open items; and the design forecast at a budget."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from judging.api.permissions import IsAdmin
from judging.api.result_schemas import ref
from judging.api.serializers import ErrorSerializer
from judging.assessments.answers import PlanAnswer
from judging.assessments.planning import budget_plan
from judging.assessments.selectors import qrels_version
from judging.campaigns.models import Campaign
from judging.core.errors import InvalidInput
from judging.core.params import query_int
from judging.evaluation.answers import DesignForecastAnswer
from judging.evaluation.design_plan import design_forecast
from metrics.problems import Problem


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


class DesignForecastView(APIView):
    permission_classes = [IsAdmin]

    @extend_schema(
        responses={200: ref(DesignForecastAnswer), 400: ErrorSerializer},
        parameters=[
            OpenApiParameter("budget", int, required=True, description="judgments to spend"),
            OpenApiParameter(
                "reps",
                int,
                description="simulated draws per design (default and most: "
                "POOLJUDGE_DESIGN_PLAN_REPS)",
            ),
            OpenApiParameter("qrels", int, description="qrels version (default: the latest)"),
        ],
        description="The budget planner's design forecast (admins): at `budget` judgments, "
        "depth-k pooling vs a stratified sample (xinfAP) vs statAP's sample vs the hybrid "
        "(PPI) estimate, each simulated on the campaign's pooled runs and its pilot topics "
        "(those whose pool is judged in full): mean Kendall tau-b and tau_AP of the MAP "
        "ranking against the pilot's full judgments, RMSE of MAP, interval width and coverage "
        "where the design has an interval; the recommended design and what it rests on; the "
        "topics a target interval width takes (Sakai's topic set size design). Computed on "
        "request (bounded by POOLJUDGE_DESIGN_PLAN_MAX_WORK).",
    )
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign = get_object_or_404(Campaign.objects.visible_to(request.user), pk=campaign_id)
        budget = query_int(request.query_params, "budget", minimum=1)
        if budget is None:
            raise InvalidInput("budget is required", [Problem.at("budget", "budget is required")])
        reps = query_int(request.query_params, "reps", minimum=1)
        number = query_int(request.query_params, "qrels", minimum=1)
        version = qrels_version(campaign, number) if number is not None else None
        if number is not None and version is None:
            raise InvalidInput(
                f"no qrels version {number}", [Problem.at("qrels", f"no qrels version {number}")]
            )
        return Response(
            design_forecast(campaign=campaign, budget=budget, reps=reps, version=version)
        )
