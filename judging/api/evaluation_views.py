"""Evaluations, leaderboards, significance tables, bias and reusability reports (researchers and
admins).

GET only reads what is stored; a POST asks for an evaluation or a report to be computed."""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from judging.api.permissions import IsResearcher
from judging.api.result_schemas import ref
from judging.api.serializers import ErrorSerializer
from judging.api.stored import stored_response
from judging.assessments.models import QrelsVersion
from judging.assessments.selectors import qrels_version as find_qrels_version
from judging.autojudge.selectors import judge_for
from judging.campaigns.models import Campaign, Run
from judging.campaigns.selectors import run_label
from judging.core import csvfiles
from judging.core.downloads import content_disposition, lines_download
from judging.core.errors import InvalidInput
from judging.core.models import JobState
from judging.core.params import MAX_ID, parse_int
from judging.core.roles import account
from judging.evaluation import exports
from judging.evaluation.answers import (
    EvaluationAnswer,
    LeaderboardAnswer,
    RunEvaluationsAnswer,
    RunPenaltyAnswer,
    RunTopUpsAnswer,
    TopUpAnswer,
)
from judging.evaluation.bias import BIAS_MEASURE_MAX_LENGTH, bias_report_request
from judging.evaluation.board import board_query
from judging.evaluation.exports import export_options
from judging.evaluation.models import TOPICS_MAX_LENGTH, BiasKind, EvalMode
from judging.evaluation.penalty import run_penalty, run_penalty_estimate
from judging.evaluation.results import BiasReportAnswer, ReusabilityAnswer
from judging.evaluation.reusability import reusability_request
from judging.evaluation.selectors import (
    baseline_comparisons,
    bias_report,
    board_measures,
    evaluation_as_dict,
    leaderboard,
    per_query_export_values,
    reusability_report,
    run_evaluation,
    run_evaluations,
)
from judging.evaluation.services import check_mode, evaluation_request
from judging.workflows.topups import (
    run_topups_corrected,
    topup_corrected,
    topup_published,
    topup_requested,
)
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


def visible_run(request: Request, pk: int) -> Run:
    """The run ``pk`` if the caller may see it (its owner, an admin), else a 404."""
    return get_object_or_404(Run.objects.visible_to(request.user).select_related("campaign"), pk=pk)


class RunEvaluationsView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        parameters=[
            QRELS_PARAM,
            OpenApiParameter("mode", str, description="honest (default) or trec_eval"),
        ],
        responses={
            200: ref(RunEvaluationsAnswer),
            202: OpenApiResponse(
                ref(EvaluationAnswer), description="being computed: {state, qrels_version, mode}"
            ),
            404: OpenApiResponse(description="no such run, or the evaluation was never computed"),
        },
        description="The run's stored evaluations, each naming its qrels version. With "
        "?qrels=N and/or ?mode=M only that evaluation: 202 while it is being computed, 404 "
        "when it was never computed (POST to this URL computes it). Reading never computes.",
    )
    def get(self, request: Request, pk: int) -> Response:
        run = visible_run(request, pk)
        params = request.query_params
        if "qrels" not in params and "mode" not in params:
            rows = list(run_evaluations(run))
        else:
            version = qrels_version(run.campaign, params.get("qrels"))
            mode = check_mode(params.get("mode") or EvalMode.HONEST)
            evaluation = run_evaluation(run, version, mode)
            return stored_response(
                None if evaluation is None else evaluation_as_dict(evaluation, request.user),
                missing=f"the {mode} evaluation of run {run.pk} against qrels version "
                f"{version.number} is not computed yet; POST /api/v1/runs/{run.pk}/"
                f'evaluations/ with {{"qrels": {version.number}, "mode": "{mode}"}} to '
                "compute it",
                pending=_pending,
                ready=lambda body: {"run": run_label(run, request.user), "evaluations": [body]},
            )
        return Response(
            {
                "run": run_label(run, request.user),
                "evaluations": [evaluation_as_dict(e, request.user) for e in rows],
            }
        )

    @extend_schema(
        request=EvaluationRequestSerializer,
        responses={202: ref(EvaluationAnswer)},
        description="Compute the run's evaluation against a qrels version (default: the "
        "latest) in a mode (honest or trec_eval), by a task. Answers 202 with its state; "
        "an evaluation already stored is not computed again, a failed one is retried. "
        "Honest evaluations are also computed by themselves when a run or a qrels version "
        "arrives.",
    )
    def post(self, request: Request, pk: int) -> Response:
        run = visible_run(request, pk)
        ser = EvaluationRequestSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        version = qrels_version(run.campaign, ser.validated_data.get("qrels"))
        evaluation = evaluation_request(run=run, version=version, mode=ser.validated_data["mode"])
        evaluation.refresh_from_db()
        body = evaluation_as_dict(evaluation, request.user)
        if body["state"] == JobState.PENDING:
            body = _pending(body)
        return Response(
            {"run": run_label(run, request.user), **body}, status=status.HTTP_202_ACCEPTED
        )


def _pending(evaluation: dict[str, Any]) -> dict[str, Any]:
    """What a pending evaluation answers (``evaluation_as_dict``'s state and key)."""
    return {k: evaluation[k] for k in ("state", "qrels_version", "mode")}


BOARD_PARAMS = [
    QRELS_PARAM,
    OpenApiParameter("mode", str, description="honest (default) or trec_eval"),
    OpenApiParameter(
        "sort",
        str,
        description="run, pooled, group, a campaign measure (either naming style: nDCG@10 or "
        "ndcg_cut_10), <measure>:judged (its Judged@k) or <measure>:ci (its CI width); "
        "default: the first measure shown",
    ),
    OpenApiParameter(
        "order", str, description="asc or desc (default: desc for measures, asc for run)"
    ),
    OpenApiParameter("pooled", str, description="all (default), yes or no"),
    OpenApiParameter("group", str, description="only the runs of this group (yours only)"),
    OpenApiParameter("slice", str, description="a topic tag: scores over the topics carrying it"),
    OpenApiParameter(
        "measures", str, description="comma-separated measures to show, in that order"
    ),
]
EXPORT_PARAMS = [
    OpenApiParameter("format", str, description="csv (default), latex or markdown"),
    OpenApiParameter("cis", str, description="1 (default): print CIs; 0: leave them out"),
    OpenApiParameter(
        "baseline", str, description="a run label as the leaderboard shows it: significance"
    ),
    OpenApiParameter("test", str, description="t (default), randomization or bootstrap"),
    OpenApiParameter("correction", str, description="holm (default), bonferroni, bh or none"),
]


def board_for(request: Request, pk: int) -> tuple[Campaign, QrelsVersion, dict[str, Any]]:
    """The campaign, qrels version and leaderboard the query string asks for (400s naming a
    bad parameter)."""
    campaign = get_object_or_404(Campaign.objects.visible_to(request.user), pk=pk)
    version = qrels_version(campaign, request.query_params.get("qrels"))
    query = board_query(request.query_params, board_measures(campaign, version))  # its mode too
    board = leaderboard(campaign=campaign, version=version, user=request.user, query=query)
    return campaign, version, board


def download(text: str, fmt: str, name: str) -> HttpResponse:
    response = HttpResponse(text, content_type=exports.CONTENT_TYPES[fmt])
    response["Content-Disposition"] = content_disposition(name)
    return response


class LeaderboardView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        parameters=[
            *BOARD_PARAMS,
            OpenApiParameter("format", str, description="json (default) or csv"),
        ],
        responses={200: ref(LeaderboardAnswer), 400: ErrorSerializer},
        description="Every run's aggregates (with CIs, Judged@k, ceilings) under one qrels "
        "version, sorted and filtered as asked (the answer says how: sorted_by, order, "
        "filters, view, shown of total). Runs without a value sort last in both orders, ties "
        "by label. Other researchers' runs are anonymised (and have no group). Each evaluated "
        "run's pool_standing says whether it is scored against a pool it did not help build "
        "(outside: not pooled, or unjudged documents within the campaign's pool depth; why).",
    )
    def get(self, request: Request, pk: int) -> HttpResponseBase:
        fmt = request.query_params.get("format") or "json"
        if fmt not in ("json", "csv"):
            raise InvalidInput(
                f"format: {fmt!r} is not one of json, csv",
                [Problem.at("format", f"{fmt!r} is not one of json, csv")],
            )
        _, version, board = board_for(request, pk)
        if fmt == "csv":
            return csvfiles.download(
                exports.leaderboard_rows(board), f"leaderboard-qrels-v{version.number}.csv"
            )
        return Response(board)


class LeaderboardExportView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        parameters=[*BOARD_PARAMS, *EXPORT_PARAMS],
        responses={
            (200, "text/csv"): OpenApiResponse(str, description="CSV"),
            (200, "text/x-tex"): OpenApiResponse(str, description="LaTeX, booktabs"),
            (200, "text/markdown"): OpenApiResponse(str, description="Markdown pipe table"),
            400: ErrorSerializer,
        },
        description="The leaderboard (same sort and filters) for a paper: CSV, LaTeX (booktabs, "
        "best value per measure in bold) or Markdown, with the qrels version and hash in the "
        "file; with a baseline, each run is tested against it per measure on the stored "
        "per-query values (the test and correction named in the file, \\dag / † on adjusted "
        "p <= 0.05).",
    )
    def get(self, request: Request, pk: int) -> HttpResponseBase:
        options = export_options(request.query_params)
        campaign, version, board = board_for(request, pk)
        comparisons = baseline_comparisons(
            campaign=campaign, version=version, user=request.user, board=board, options=options
        )
        name = exports.filename(board, "leaderboard", options.format)
        if options.format == "csv":
            return csvfiles.download(exports.leaderboard_rows(board, options, comparisons), name)
        return download(
            exports.leaderboard_export(board, options, comparisons), options.format, name
        )


class PerQueryView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        parameters=[
            *BOARD_PARAMS,
            OpenApiParameter("format", str, description="csv (default) or trec (trec_eval -q)"),
            OpenApiParameter(
                "run", str, many=True, description="run labels (repeat; default: every run shown)"
            ),
        ],
        responses={
            (200, "text/csv"): OpenApiResponse(str, description="CSV"),
            (200, "text/plain"): OpenApiResponse(str, description="trec_eval -q lines"),
            400: ErrorSerializer,
        },
        description="Stored per-query values (honest mode) of the runs the leaderboard shows "
        "(filters as the leaderboard's), on its measures: CSV (qrels_version, qrels_hash, run, "
        "qid, measure, value) or trec_eval -q format (each run's block starts with runid, "
        "qrels_version and qrels_hash lines).",
    )
    def get(self, request: Request, pk: int) -> HttpResponseBase:
        options = export_options(request.query_params, formats=exports.PER_QUERY_FORMATS)
        campaign, version, board = board_for(request, pk)
        values = per_query_export_values(
            campaign=campaign,
            version=version,
            user=request.user,
            board=board,
            runs=[r for r in request.query_params.getlist("run") if r],
        )
        name = exports.filename(board, "per-query", options.format)
        shape = (version.number, version.content_hash, values, version.kind_label)
        if options.format == "trec":
            return lines_download(exports.per_query_trec(*shape), name)
        return csvfiles.download(exports.per_query_rows(*shape), name)


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
        required=False,
        default="AP",
        max_length=BIAS_MEASURE_MAX_LENGTH,
        help_text="any one measure (AP, P@10, nDCG@10, R@100, Bpref, ...); a cut-off at most "
        "POOLJUDGE_BIAS_MAX_CUTOFF",
    )
    depth = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_ID,
        help_text="default: the campaign's pool depth; at most POOLJUDGE_BIAS_MAX_DEPTH (or the "
        "pool depth when larger)",
    )
    kind = serializers.ChoiceField(choices=BiasKind.choices, default=BiasKind.LOO_RUN)
    topics = serializers.CharField(
        required=False,
        default="",
        allow_blank=True,
        trim_whitespace=True,
        max_length=TOPICS_MAX_LENGTH,
        help_text="the topics to analyse (default: the campaign's pooled topics, every topic "
        "unless a collection import inferred its pooling on a subset; all: every topic): "
        "comma-separated ids, numeric ranges and tag:NAME, as in 601-650,tag:hard; at most "
        "POOLJUDGE_BIAS_MAX_TOPICS topics",
    )


BIAS_FIELDS = frozenset(BiasRequestSerializer().fields)


BIAS_DESCRIPTION = (
    "Pool-bias report on a subset of topics (default: the campaign's pooled topics) and one "
    "measure, at a depth (default: the campaign's pool depth): leave-one-out "
    "(Zobel 1998), estimated penalty of non-pooled runs (Webber & Park 2009; Lipani et al. "
    "2015, 2016; condensed and upper bounds) with each estimator's error measured on the "
    "campaign's pooled runs, Judged@10 coverage, pooling efficiency and before/after the "
    "previous qrels version on the topics both versions can score. Other researchers' runs and "
    "groups are anonymised."
)


class BiasReportView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        parameters=[
            QRELS_PARAM,
            OpenApiParameter("measure", str, description="default AP"),
            OpenApiParameter("depth", int, description="default: the pool depth"),
            OpenApiParameter("kind", str, description="loo_run (default) | loo_group"),
            OpenApiParameter(
                "topics",
                str,
                description="topics to analyse (default: the campaign's pooled topics; all: "
                "every topic): ids, ranges (601-650), tag:NAME",
            ),
        ],
        responses={
            200: ref(BiasReportAnswer),
            202: OpenApiResponse(
                ref(BiasReportAnswer), description="being computed: its parameters and state"
            ),
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
            topics=args["topics"],
        )
        return stored_response(
            report,
            missing=f"the bias report for these parameters (qrels version {version.number}) is "
            f"not computed yet; POST /api/v1/campaigns/{campaign.pk}/bias/ with them to "
            "compute it",
        )

    @extend_schema(
        request=BiasRequestSerializer,
        responses={
            202: ref(BiasReportAnswer),
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
            topics=args["topics"],
            requested_by=account(request.user),
        )
        report = bias_report(
            campaign=campaign,
            version=version,
            user=request.user,
            measure=args["measure"],
            depth=args.get("depth"),
            kind=args["kind"],
            topics=args["topics"],
        )
        return Response(report, status=status.HTTP_202_ACCEPTED)


REUSABILITY_DESCRIPTION = (
    "Reusability of the pool behind a qrels version for a system that did not build it: "
    "relevant documents found by one group or one run only (Voorhees 2018), unique relevant "
    "per group, leave-one-group-out drops with tau and tau_AP, Judged@10 and Judged@100 of "
    "pooled and other runs, relevant documents found per judgment by depth, and a verdict "
    "with its basis. Other researchers' runs and groups are anonymised."
)


class ReusabilityView(APIView):
    permission_classes = [IsResearcher]

    def _version(self, request: Request, pk: int) -> QrelsVersion:
        return get_object_or_404(
            QrelsVersion.objects.visible_to(request.user).select_related("campaign"), pk=pk
        )

    @extend_schema(
        responses={
            200: OpenApiResponse(
                ref(ReusabilityAnswer), description="computed (or failed: state and error)"
            ),
            202: OpenApiResponse(ref(ReusabilityAnswer), description="being computed: its state"),
            404: OpenApiResponse(description="no such qrels version, or never computed"),
        },
        description=f"{REUSABILITY_DESCRIPTION} Computed when a qrels version is imported or "
        "published; reading never computes: 202 while it is being computed, 404 for a version "
        "stored before reports existed (POST to this URL computes it).",
    )
    def get(self, request: Request, pk: int) -> Response:
        version = self._version(request, pk)
        report = reusability_report(version, request.user)
        return stored_response(
            report,
            missing=f"the reusability report of qrels version {version.number} (id "
            f"{version.pk}) is not computed yet; POST /api/v1/qrels/{version.pk}/reusability/ "
            "to compute it",
        )

    @extend_schema(
        request=None,
        responses={
            202: OpenApiResponse(
                ref(ReusabilityAnswer), description="its state (done when it was stored)"
            ),
            429: OpenApiResponse(
                ErrorSerializer,
                description="too many new reports asked for this hour "
                "(POOLJUDGE_BIAS_REPORTS_PER_HOUR, bias and reusability reports together); "
                "Retry-After says when to try again",
            ),
        },
        description=f"{REUSABILITY_DESCRIPTION} Computes the report of this version by a task "
        "and answers 202 with its state (a stored report is not computed again, a failed one "
        "is retried); then GET.",
    )
    def post(self, request: Request, pk: int) -> Response:
        version = self._version(request, pk)
        reusability_request(version=version, requested_by=account(request.user))
        return Response(reusability_report(version, request.user), status=status.HTTP_202_ACCEPTED)


class RunPenaltyView(APIView):
    """A run against a pool it did not help build (``evaluation.penalty``)."""

    permission_classes = [IsResearcher]

    @extend_schema(
        responses={
            200: ref(RunPenaltyAnswer),
            404: OpenApiResponse(description="no such run (or not yours)"),
        },
        description="The run's penalty for not having helped build the pool, from the "
        "campaign's default bias report on its latest qrels version (the headline measure): "
        "what is known for sure (its score, the unjudged documents in its top k, its bounds) "
        "and the estimate of its score had it been pooled, with a 95% interval for that "
        "score. `status` says when there is none (pooled, no report yet, the run arrived "
        "after the report). Reading never computes.",
    )
    def get(self, request: Request, pk: int) -> Response:
        run = visible_run(request, pk)
        return Response({"run": run_label(run, request.user), **run_penalty(run, request.user)})

    @extend_schema(
        request=None,
        responses={
            202: ref(RunPenaltyAnswer),
            200: ref(RunPenaltyAnswer),
            400: ErrorSerializer,
            429: ErrorSerializer,
        },
        description="Estimate the penalty of a run the bias report was computed without (it "
        "arrived later): the campaign's estimators validated on the latest qrels version, with "
        "the run among those not pooled (a job: 202 until done; counts towards the reports "
        "per hour). A run the report covers, or a pooled one, is answered as GET answers.",
    )
    def post(self, request: Request, pk: int) -> Response:
        run = visible_run(request, pk)
        body = run_penalty_estimate(run, account(request.user))
        code = status.HTTP_202_ACCEPTED if body["status"] == "pending" else status.HTTP_200_OK
        return Response({"run": run_label(run, request.user), **body}, status=code)


class TopUpRequestSerializer(serializers.Serializer[Any]):
    budget = serializers.IntegerField(
        help_text="documents to judge (1 to POOLJUDGE_TOPUP_MAX_DOCUMENTS)"
    )
    design = serializers.CharField(
        required=False,
        default="uniform",
        help_text="uniform (budget: documents in all), rank (spread over rank bands) or "
        "per_topic (budget: per topic)",
    )
    judge = serializers.IntegerField(
        required=False,
        allow_null=True,
        default=None,
        help_text="an automatic judge version of the campaign to grade the run's whole hole, "
        "corrected by the judged sample (uniform design only)",
    )


class RunTopUpView(APIView):
    """A run's top-ups (``assessments.topups``): judging a sample of its unjudged top k to
    measure its penalty."""

    permission_classes = [IsResearcher]

    @extend_schema(
        responses={200: ref(RunTopUpsAnswer), 404: OpenApiResponse(description="no such run")},
        description="What a top-up of the run would judge (its unjudged top-k documents and "
        "the cost at the assessors' measured pace) and its top-ups: n of m judged and the "
        "run's score with its unjudged top k judged, with a 95% interval, from the judgments "
        "so far.",
    )
    def get(self, request: Request, pk: int) -> Response:
        run = visible_run(request, pk)
        return Response({"run": run_label(run, request.user), **run_topups_corrected(run)})

    @extend_schema(
        request=TopUpRequestSerializer,
        responses={
            201: ref(TopUpAnswer),
            400: ErrorSerializer,
            403: ErrorSerializer,
            409: OpenApiResponse(ErrorSerializer, description="a top-up of it is in progress"),
        },
        description="Draw `budget` of the run's unjudged top-k documents (by `design`; their "
        "inclusion probabilities stored) and queue them first in their topics for the "
        "campaign's assessors; with `judge`, that automatic judge version grades every one of "
        "them, corrected by the judged sample. Admins only: it spends the assessors' time.",
    )
    def post(self, request: Request, pk: int) -> Response:
        run = visible_run(request, pk)
        data = TopUpRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        judge_id = data.validated_data["judge"]
        topup = topup_requested(
            run=run,
            budget=data.validated_data["budget"],
            design=data.validated_data["design"],
            requested_by=account(request.user),
            judge=judge_for(request.user, judge_id) if judge_id is not None else None,
        )
        return Response(topup_corrected(topup), status=status.HTTP_201_CREATED)


class RunTopUpPublishView(APIView):
    """Publish the run's latest top-up as the next qrels version (admins)."""

    permission_classes = [IsResearcher]

    @extend_schema(
        request=None,
        responses={
            201: OpenApiResponse(description="{qrels_version, note}: the version published"),
            400: ErrorSerializer,
            403: ErrorSerializer,
        },
        description="The campaign's next qrels version: the top-up's qrels version and the "
        "top-up's judged documents, nothing else (other judgments wait for the next publish), "
        "its note naming the top-up; evaluated and analysed like any new version.",
    )
    def post(self, request: Request, pk: int) -> Response:
        run = visible_run(request, pk)
        version = topup_published(run=run, created_by=account(request.user))
        return Response(
            {"qrels_version": version.number, "note": version.note},
            status=status.HTTP_201_CREATED,
        )
