"""``GET /api/v1/campaigns/<id>/significance/``: paired tests between runs (researchers and
admins), as the pair list (the answer's earlier shape, the default), the runs x runs matrix, or
every run against one baseline; JSON or CSV. Reading computes the tests from the stored
per-query values and writes nothing."""

from __future__ import annotations

import math
from typing import Any

from django.http.response import HttpResponseBase
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
from judging.core import csvfiles
from judging.core.errors import InvalidInput
from judging.evaluation.answers import SignificanceAnswer
from judging.evaluation.significance import (
    VIEWS,
    baseline_comparison,
    baseline_rows,
    legacy_comparisons,
    pairs_rows,
    parse_runs,
    parse_top,
    significance_matrix,
)
from metrics.problems import Problem


def _finite(value: Any) -> Any:
    """JSON has no NaN or infinity: a non-finite number (an effect d_z with no variation) is
    written as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def _choice(value: str, name: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise InvalidInput(
            f"{name}: {value[:40]!r} is not one of {', '.join(allowed)}",
            [Problem.at(name, f"{value[:40]!r} is not one of {', '.join(allowed)}")],
        )
    return value


class SignificanceView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        operation_id="campaign_significance",
        parameters=[
            QRELS_PARAM,
            OpenApiParameter("measure", str, description="one of the campaign's (default: first)"),
            OpenApiParameter(
                "test",
                str,
                description="t (default) | randomization | bootstrap (paired, per pair) | tukey "
                "(Tukey's HSD: two-way ANOVA system x topic, its own multiple comparison "
                "procedure; not with view=baseline)",
            ),
            OpenApiParameter(
                "correction",
                str,
                description="holm (default) | bonferroni | bh (Benjamini-Hochberg) | none, over "
                "all the pairs (or over the comparisons with the baseline); ignored for tukey",
            ),
            OpenApiParameter(
                "view",
                str,
                description="pairs (default: the pair list, `comparisons`) | matrix (runs x "
                "runs `cells`) | baseline (every run against `baseline`); baseline= given "
                "without view means view=baseline",
            ),
            OpenApiParameter("baseline", str, description="the baseline run, as it is labelled"),
            OpenApiParameter(
                "runs",
                str,
                many=True,
                description="the runs to compare (repeated or comma-separated labels, as the "
                "leaderboard names them); default: the best by the measure, up to "
                "POOLJUDGE_SIGNIFICANCE_MAX_RUNS (randomization, bootstrap) or "
                "POOLJUDGE_SIGNIFICANCE_MAX_RUNS_FAST (t, tukey, the baseline view)",
            ),
            OpenApiParameter("top", int, description="compare the best N runs by the measure"),
            OpenApiParameter("format", str, description="json (default) | csv"),
        ],
        responses={
            200: OpenApiResponse(
                ref(SignificanceAnswer),
                description="qrels_version, qrels_hash, measure, averaging, test, test_name, "
                "correction, correction_name, alpha, n_queries, selection (which runs and "
                "why), runs (labels and means, best first) and, by view: comparisons (pairs: "
                "run_a, run_b, means, diff, effect, p_value, p_adjusted, p_holm under Holm, "
                "significant), cells (matrix: [row][col], null on the diagonal), rows "
                "(baseline: mean, diff, ci_low, ci_high, effect, p_value, p_adjusted, wins, "
                "ties, losses, significant). Non-finite effects are null.",
            ),
            400: OpenApiResponse(ErrorSerializer, description="a bad parameter, named"),
        },
        description="Paired significance tests between the campaign's evaluated runs on one "
        "measure, over the topics every compared run scored; other researchers' runs "
        "anonymised. The test and the correction are named in every answer.",
    )
    def get(self, request: Request, pk: int) -> HttpResponseBase:
        campaign = get_object_or_404(Campaign.objects.visible_to(request.user), pk=pk)
        params = request.query_params
        version = qrels_version(campaign, params.get("qrels"))
        baseline = (params.get("baseline") or "").strip()
        view = _choice(params.get("view") or ("baseline" if baseline else "pairs"), "view", VIEWS)
        fmt = _choice(params.get("format") or "json", "format", ("json", "csv"))
        if view == "baseline" and not baseline:
            raise InvalidInput(
                "baseline: view=baseline needs a baseline run",
                [Problem.at("baseline", "view=baseline needs baseline=<run label>")],
            )
        args: dict[str, Any] = {
            "campaign": campaign,
            "version": version,
            "measure": params.get("measure", ""),
            "test": params.get("test") or "t",
            "correction": params.get("correction") or "holm",
            "user": request.user,
            "runs": parse_runs(params.getlist("runs")),
            "top": parse_top(params.get("top")),
        }
        if view == "baseline":
            table = baseline_comparison(**args, baseline=baseline)
            if fmt == "csv":
                return csvfiles.download(
                    baseline_rows(table), f"significance-baseline-v{version.number}.csv"
                )
            return Response(_finite(table))
        matrix = significance_matrix(**args)
        if fmt == "csv":
            return csvfiles.download(
                pairs_rows(matrix), f"significance-pairs-qrels-v{version.number}.csv"
            )
        body = {k: v for k, v in matrix.items() if k not in ("cells", "pairs")}
        if view == "matrix":
            body["cells"] = matrix["cells"]
        else:
            body["comparisons"] = legacy_comparisons(matrix)
        return Response(_finite(body))
