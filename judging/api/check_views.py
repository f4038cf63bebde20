"""The regression check of a run against a baseline run (researchers and admins), from stored
evaluations: ``GET /api/v1/runs/<id>/check/?baseline=...&max_drop=...``. Reading never
computes; see :mod:`judging.evaluation.check` for the decisions and :mod:`metrics.evaluation.check`
for the figures."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from judging.api.evaluation_views import QRELS_PARAM, qrels_version
from judging.api.permissions import IsResearcher
from judging.api.result_schemas import ref
from judging.api.serializers import ErrorSerializer
from judging.campaigns.models import Run
from judging.core.models import JobState
from judging.evaluation.answers import CheckAnswer
from judging.evaluation.check import baseline_run, check_params, regression_check


class RunCheckView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "baseline",
                str,
                required=True,
                description="the baseline run: its id, or its name as you see it (your run's "
                "name; admins: its tag), in the same campaign",
            ),
            OpenApiParameter(
                "max_drop",
                str,
                required=True,
                description="largest drop allowed: absolute (0.01) or relative to the "
                "baseline's score (2%)",
            ),
            QRELS_PARAM,
            OpenApiParameter(
                "measure",
                str,
                many=True,
                description="repeatable; the campaign's measures only (default: all of them "
                "but counts and Judged)",
            ),
            OpenApiParameter("test", str, description="t (default) | randomization | bootstrap"),
            OpenApiParameter("alpha", float, description="significance level (default 0.05)"),
            OpenApiParameter(
                "correction",
                str,
                description="across the measures: none (default) | holm | bonferroni | bh",
            ),
            OpenApiParameter(
                "judged_tolerance",
                float,
                description="flag a drop when the run's judged@k is this much below the "
                "baseline's (default 0.05)",
            ),
            OpenApiParameter(
                "min_judged",
                float,
                description="flag a drop when the run's judged@k is below this (default 0.9)",
            ),
        ],
        responses={
            200: OpenApiResponse(
                ref(CheckAnswer),
                description="state done: passed, verdict (pass | drop-not-significant | fail), "
                "summary, and per measure baseline, run, delta, CI, p, judged@k of both, verdict",
            ),
            202: OpenApiResponse(
                ref(CheckAnswer), description="an evaluation is being computed: ask again"
            ),
            404: OpenApiResponse(description="no such run or baseline among yours"),
            409: OpenApiResponse(
                ErrorSerializer,
                description="an evaluation is missing or failed: the error shape (error "
                "'conflict', detail) with state, and in evaluations each run's state and the "
                "POST that computes it",
            ),
        },
        description="Regression check of the run against a baseline run under one qrels "
        "version (default: the latest), from their stored honest evaluations: fails (passed "
        "false) when a measure drops by more than max_drop and the paired test finds the drop "
        "significant (p <= alpha). A drop where the run's judged fraction is at least 0.01 "
        "below the baseline's and either more than judged_tolerance below it or below "
        "min_judged is flagged, never hidden. Reading never computes.",
    )
    def get(self, request: Request, pk: int) -> Response:
        run = get_object_or_404(
            Run.objects.visible_to(request.user).select_related("campaign"), pk=pk
        )
        params = request.query_params
        baseline = baseline_run(run, params.get("baseline", ""), request.user)
        settings = check_params(params)
        version = qrels_version(run.campaign, params.get("qrels"))
        answer = regression_check(
            run=run,
            baseline=baseline,
            version=version,
            measures=params.getlist("measure"),
            user=request.user,
            params=settings,
        )
        if answer["state"] == JobState.PENDING:
            return Response(answer, status=status.HTTP_202_ACCEPTED)
        if answer["state"] != JobState.DONE:
            body = {"error": "conflict", **answer}
            return Response(body, status=status.HTTP_409_CONFLICT)
        return Response(answer)
