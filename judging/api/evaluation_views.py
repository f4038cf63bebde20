"""Evaluations, leaderboards, significance tables and bias reports (researchers and admins).

GET only reads what is stored; a POST asks for an evaluation or a report to be computed."""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from judging.api.params import MAX_ID, parse_int
from judging.api.permissions import IsResearcher
from judging.api.serializers import ErrorSerializer
from judging.assessments.models import QrelsVersion
from judging.assessments.selectors import qrels_version as find_qrels_version
from judging.campaigns.models import Campaign, Run
from judging.campaigns.selectors import run_label
from judging.core.downloads import content_disposition
from judging.core.errors import InvalidInput, NotFound
from judging.core.roles import account
from judging.evaluation.bias import BIAS_MEASURE_MAX_LENGTH, bias_report_request
from judging.evaluation.models import BiasKind, EvalMode, EvalState, Evaluation
from judging.evaluation.selectors import (
    bias_report,
    evaluation_as_dict,
    leaderboard,
    leaderboard_csv,
    run_evaluation,
    run_evaluations,
    significance,
)
from judging.evaluation.services import check_mode, evaluation_request
from metrics.problems import Problem

QRELS_PARAM = OpenApiParameter("qrels", int, description="qrels version number (default: latest)")


def qrels_version(campaign: Campaign, number: str | int | None) -> QrelsVersion:
    """Version ``number`` of the campaign (a 400 for a number that is not one, a 404 for one the
    campaign does not have), or its latest when no number is given."""
    if number is not None and number != "":
        number = parse_int(number, "qrels", minimum=1, maximum=MAX_ID, what="a version number")
    version = find_qrels_version(campaign, number)
    if version is None and number:
        raise Http404(f"campaign {campaign.pk} has no qrels version {number!r}")
    if version is None:
        raise InvalidInput(
            "the campaign has no qrels version yet",
            [Problem.at("qrels", "import or publish qrels first")],
        )
    return version


class EvaluationRequestSerializer(serializers.Serializer[Any]):
    qrels = serializers.IntegerField(
        required=False, min_value=1, help_text="qrels version number (default: latest)"
    )
    mode = serializers.ChoiceField(choices=EvalMode.choices, default=EvalMode.HONEST)


class RunEvaluationsView(APIView):
    permission_classes = [IsResearcher]

    def _run(self, request: Request, pk: int) -> Run:
        return get_object_or_404(
            Run.objects.visible_to(request.user).select_related("campaign"), pk=pk
        )

    @extend_schema(
        parameters=[
            QRELS_PARAM,
            OpenApiParameter("mode", str, description="honest (default) or trec_eval"),
        ],
        responses={
            200: dict,
            202: OpenApiResponse(dict, description="being computed: {state, qrels_version, mode}"),
            404: OpenApiResponse(description="no such run, or the evaluation was never computed"),
        },
        description="The run's stored evaluations, each naming its qrels version. With "
        "?qrels=N and/or ?mode=M only that evaluation: 202 while it is being computed, 404 "
        "when it was never computed (POST to this URL computes it). Reading never computes.",
    )
    def get(self, request: Request, pk: int) -> Response:
        run = self._run(request, pk)
        params = request.query_params
        if "qrels" not in params and "mode" not in params:
            rows = list(run_evaluations(run))
        else:
            version = qrels_version(run.campaign, params.get("qrels"))
            mode = check_mode(params.get("mode") or EvalMode.HONEST)
            evaluation = run_evaluation(run, version, mode)
            if evaluation is None:
                raise NotFound(
                    f"the {mode} evaluation of run {run.pk} against qrels version "
                    f"{version.number} is not computed yet; POST /api/v1/runs/{run.pk}/"
                    f'evaluations/ with {{"qrels": {version.number}, "mode": "{mode}"}} to '
                    "compute it"
                )
            if evaluation.state == EvalState.PENDING:
                return Response(_pending(evaluation), status=status.HTTP_202_ACCEPTED)
            rows = [evaluation]
        return Response(
            {
                "run": run_label(run, request.user),
                "evaluations": [evaluation_as_dict(e, request.user) for e in rows],
            }
        )

    @extend_schema(
        request=EvaluationRequestSerializer,
        responses={202: dict},
        description="Compute the run's evaluation against a qrels version (default: the "
        "latest) in a mode (honest or trec_eval), by a task. Answers 202 with its state; "
        "an evaluation already stored is not computed again, a failed one is retried. "
        "Honest evaluations are also computed by themselves when a run or a qrels version "
        "arrives.",
    )
    def post(self, request: Request, pk: int) -> Response:
        run = self._run(request, pk)
        ser = EvaluationRequestSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        version = qrels_version(run.campaign, ser.validated_data.get("qrels"))
        evaluation = evaluation_request(run=run, version=version, mode=ser.validated_data["mode"])
        evaluation.refresh_from_db()
        body = (
            _pending(evaluation)
            if evaluation.state == EvalState.PENDING
            else evaluation_as_dict(evaluation, request.user)
        )
        return Response(
            {"run": run_label(run, request.user), **body}, status=status.HTTP_202_ACCEPTED
        )


def _pending(evaluation: Evaluation) -> dict[str, Any]:
    return {
        "state": evaluation.state,
        "qrels_version": evaluation.qrels.number,
        "mode": evaluation.mode,
    }


class LeaderboardView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        parameters=[
            QRELS_PARAM,
            OpenApiParameter("format", str, description="json (default) or csv"),
        ],
        responses={200: dict},
        description="Every run's aggregates (with CIs, Judged@k, ceilings) under one qrels "
        "version. Other researchers' runs are anonymised.",
    )
    def get(self, request: Request, pk: int) -> Response | HttpResponse:
        campaign = get_object_or_404(Campaign.objects.visible_to(request.user), pk=pk)
        version = qrels_version(campaign, request.query_params.get("qrels"))
        board = leaderboard(
            campaign=campaign,
            version=version,
            user=request.user,
            mode=check_mode(request.query_params.get("mode") or EvalMode.HONEST),
        )
        fmt = request.query_params.get("format") or "json"
        if fmt not in ("json", "csv"):
            raise InvalidInput(
                f"format: {fmt!r} is not one of json, csv",
                [Problem.at("format", f"{fmt!r} is not one of json, csv")],
            )
        if fmt == "csv":
            response = HttpResponse(leaderboard_csv(board), content_type="text/csv")
            response["Content-Disposition"] = content_disposition(
                f"leaderboard-qrels-v{version.number}.csv"
            )
            return response
        return Response(board)


class SignificanceView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        parameters=[
            QRELS_PARAM,
            OpenApiParameter("measure", str, description="default: first"),
            OpenApiParameter("test", str, description="t | randomization | bootstrap"),
        ],
        responses={200: dict},
        description="Paired tests between every pair of runs, Holm-corrected.",
    )
    def get(self, request: Request, pk: int) -> Response:
        campaign = get_object_or_404(Campaign.objects.visible_to(request.user), pk=pk)
        version = qrels_version(campaign, request.query_params.get("qrels"))
        return Response(
            significance(
                campaign=campaign,
                version=version,
                user=request.user,
                measure=request.query_params.get("measure", ""),
                test=request.query_params.get("test", "t"),
            )
        )


class BiasRequestSerializer(serializers.Serializer[Any]):
    """The parameters of a bias report, in a POST body or a GET query string. Their bounds are
    the service's (``evaluation.bias.bias_params``): depth and the measure's cut-off at most
    POOLJUDGE_BIAS_MAX_DEPTH / POOLJUDGE_BIAS_MAX_CUTOFF."""

    qrels = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_ID,
        help_text="qrels version number (default: latest)",
    )
    measure = serializers.CharField(
        required=False, default="AP", max_length=BIAS_MEASURE_MAX_LENGTH
    )
    depth = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_ID,
        help_text="default: the campaign's pool depth; at most POOLJUDGE_BIAS_MAX_DEPTH (or the "
        "pool depth when larger)",
    )
    kind = serializers.ChoiceField(choices=BiasKind.choices, default=BiasKind.LOO_RUN)


BIAS_FIELDS = frozenset(BiasRequestSerializer().fields)


BIAS_DESCRIPTION = (
    "Pool-bias report: leave-one-out (Zobel 1998), estimated penalty of non-pooled runs "
    "(Webber & Park 2009), Judged@10 coverage, pooling efficiency and before/after the "
    "previous qrels version. Other researchers' runs are anonymised."
)


class BiasReportView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        parameters=[
            QRELS_PARAM,
            OpenApiParameter("measure", str, description="default AP"),
            OpenApiParameter("depth", int, description="default: the pool depth"),
            OpenApiParameter("kind", str, description="loo_run (default) | loo_group"),
        ],
        responses={
            200: dict,
            202: OpenApiResponse(dict, description="being computed: its parameters and state"),
            404: OpenApiResponse(description="never computed with these parameters"),
        },
        description=f"{BIAS_DESCRIPTION} Reading never computes: 202 while the report is "
        "being computed, 404 when it was never requested (POST to this URL computes it).",
    )
    def get(self, request: Request, pk: int) -> Response:
        campaign = get_object_or_404(Campaign.objects.visible_to(request.user), pk=pk)
        # the query string is checked as the POST body is (empty values: the defaults)
        given = {k: v for k, v in request.query_params.items() if k in BIAS_FIELDS and v != ""}
        ser = BiasRequestSerializer(data=given)
        ser.is_valid(raise_exception=True)
        args = ser.validated_data
        version = qrels_version(campaign, args.get("qrels"))
        report = bias_report(
            campaign=campaign,
            version=version,
            user=request.user,
            measure=args["measure"],
            depth=args.get("depth"),
            kind=args["kind"],
        )
        if report is None:
            raise NotFound(
                f"the bias report for these parameters (qrels version {version.number}) is "
                f"not computed yet; POST /api/v1/campaigns/{campaign.pk}/bias/ with them to "
                "compute it"
            )
        if report["state"] == EvalState.PENDING:
            return Response(report, status=status.HTTP_202_ACCEPTED)
        return Response(report)

    @extend_schema(
        request=BiasRequestSerializer,
        responses={
            202: dict,
            429: OpenApiResponse(
                ErrorSerializer,
                description="too many new reports asked for this hour "
                "(POOLJUDGE_BIAS_REPORTS_PER_HOUR); Retry-After says when to try again",
            ),
        },
        description=f"{BIAS_DESCRIPTION} Computes the report for these parameters by a task "
        "and answers 202 with its state (a stored report is not computed again, a failed one "
        "is retried); then GET with the same parameters.",
    )
    def post(self, request: Request, pk: int) -> Response:
        campaign = get_object_or_404(Campaign.objects.visible_to(request.user), pk=pk)
        ser = BiasRequestSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        args = ser.validated_data
        version = qrels_version(campaign, args.get("qrels"))
        bias_report_request(
            campaign=campaign,
            qrels=version,
            measure=args["measure"],
            depth=args.get("depth"),
            kind=args["kind"],
            requested_by=account(request.user),
        )
        report = bias_report(
            campaign=campaign,
            version=version,
            user=request.user,
            measure=args["measure"],
            depth=args.get("depth"),
            kind=args["kind"],
        )
        return Response(report, status=status.HTTP_202_ACCEPTED)
