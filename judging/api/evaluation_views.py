"""Evaluations, leaderboards and significance tables (researchers and admins)."""

from __future__ import annotations

import csv
import io
from typing import Any

from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from judging.api.permissions import IsResearcher
from judging.assessments.models import QrelsVersion
from judging.campaigns.models import Campaign, Run
from judging.core.errors import InvalidInput
from judging.evaluation.models import EvalMode, Evaluation
from judging.evaluation.services import (
    evaluate_runs,
    leaderboard,
    run_label,
    significance,
)
from judging.evaluation.services import qrels_version as find_qrels_version
from metrics.problems import Problem

QRELS_PARAM = OpenApiParameter("qrels", int, description="qrels version number (default: latest)")


def qrels_version(campaign: Campaign, number: str | None) -> QrelsVersion:
    version = find_qrels_version(campaign, number)
    if version is None and number:
        raise Http404(f"campaign {campaign.pk} has no qrels version {number!r}")
    if version is None:
        raise InvalidInput(
            "the campaign has no qrels version yet",
            [Problem.at("qrels", "import or publish qrels first")],
        )
    return version


def _mode(request: Request) -> str:
    mode = request.query_params.get("mode", EvalMode.HONEST)
    if mode not in EvalMode.values:
        raise InvalidInput(
            "unknown mode",
            [Problem.at("mode", f"mode {mode!r} is not one of {', '.join(EvalMode.values)}")],
        )
    return mode


class RunEvaluationsView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        parameters=[
            QRELS_PARAM,
            OpenApiParameter("mode", str, description="honest (default) or trec_eval"),
        ],
        responses={200: dict},
        description="The run's stored evaluations, each naming its qrels version. With "
        "?qrels=N&mode=trec_eval the trec_eval-compatible evaluation is computed "
        "on request (once).",
    )
    def get(self, request: Request, pk: int) -> Response:
        run = get_object_or_404(Run.objects.visible_to(request.user), pk=pk)
        if "qrels" in request.query_params or "mode" in request.query_params:
            version = qrels_version(run.campaign, request.query_params.get("qrels"))
            evaluate_runs(version=version, runs=[run], mode=_mode(request))
        rows = (
            Evaluation.objects.filter(run=run)
            .select_related("qrels")
            .order_by("qrels__number", "mode")
        )
        return Response(
            {
                "run": run.tag,
                "evaluations": [
                    {
                        "qrels_version": e.qrels.number,
                        "qrels_hash": e.qrels.content_hash,
                        "mode": e.mode,
                        "state": e.state,
                        "error": e.error,
                        "measures": e.measures,
                        "computed_at": e.computed_at,
                        "result": e.result,
                        "slices": e.slices,
                        "recall_curve": e.curve,
                    }
                    for e in rows
                ],
            }
        )


def leaderboard_csv(board: dict[str, Any]) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    header = ["qrels_version", "mode", "run", "pooled", "n_queries"]
    for m in board["measures"]:
        header += [m, f"{m} ci_low", f"{m} ci_high", f"{m} judged", f"{m} ceiling"]
    writer.writerow(header)
    for row in board["runs"]:
        line = [
            board["qrels_version"],
            board["mode"],
            row["run"],
            row["pooled"],
            row.get("n_queries", ""),
        ]
        for m in board["measures"]:
            e = (row.get("measures") or {}).get(m, {})
            line += [
                e.get("value", ""),
                e.get("ci_low", ""),
                e.get("ci_high", ""),
                (e.get("judged") or {}).get("value", ""),
                (e.get("ceiling") or {}).get("value", ""),
            ]
        writer.writerow(line)
    return out.getvalue()


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
            campaign=campaign, version=version, user=request.user, mode=_mode(request)
        )
        if request.query_params.get("format") == "csv":
            response = HttpResponse(leaderboard_csv(board), content_type="text/csv")
            response["Content-Disposition"] = (
                f'attachment; filename="leaderboard-qrels-v{version.number}.csv"'
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


class BiasReportView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        parameters=[
            QRELS_PARAM,
            OpenApiParameter("measure", str, description="default AP"),
            OpenApiParameter("depth", int, description="default: the pool depth"),
            OpenApiParameter("kind", str, description="loo_run (default) | loo_group"),
        ],
        responses={200: dict, 202: dict},
        description="Pool-bias report: leave-one-out (Zobel 1998), estimated penalty of "
        "non-pooled runs (Webber & Park 2009), Judged@10 coverage, pooling "
        "efficiency and before/after the previous qrels version. 202 while it is "
        "being computed (by a task); ask again.",
    )
    def get(self, request: Request, pk: int) -> Response:
        from judging.evaluation.bias import bias_report_request

        campaign = get_object_or_404(Campaign.objects.visible_to(request.user), pk=pk)
        version = qrels_version(campaign, request.query_params.get("qrels"))
        try:
            depth = int(request.query_params.get("depth") or campaign.pool_depth)
        except ValueError:
            raise InvalidInput(
                "depth is not a number",
                [Problem.at("depth", "depth must be a whole number")],
            ) from None
        report = bias_report_request(
            campaign=campaign,
            qrels=version,
            depth=depth,
            measure=request.query_params.get("measure") or "AP",
            kind=request.query_params.get("kind") or "loo_run",
        )
        assert report is not None
        report.refresh_from_db()
        body = {
            "qrels_version": version.number,
            "measure": report.measure,
            "depth": report.depth,
            "kind": report.kind,
            "state": report.state,
            "error": report.error,
            "computed_at": report.computed_at,
        }
        if report.state != "done":
            return Response(body, status=202)
        result = dict(report.result)
        labels = {r.tag: run_label(r, request.user) for r in campaign.runs.all()}
        result = _relabel(result, labels)
        return Response({**body, "result": result})


def _relabel(value: Any, labels: dict[str, str]) -> Any:
    """Replace run tags by what the user may see of them, wherever they are keys or values."""
    if isinstance(value, dict):
        return {
            labels.get(k, k) if isinstance(k, str) else k: _relabel(v, labels)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_relabel(v, labels) for v in value]
    if isinstance(value, str):
        return labels.get(value, value)
    return value
