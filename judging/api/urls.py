from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.routers import DefaultRouter

from judging.api import answer_board_views as abv
from judging.api import answer_sample_views as asv
from judging.api import autojudge_results_views as ar
from judging.api import autojudge_views as aj
from judging.api import collection_views as cv
from judging.api import evaluation_views as ev
from judging.api import judging_views as jv
from judging.api import jury_views, meta_views, plan_views, significance_views, unit_views, views
from judging.api import nugget_views as nv
from judging.api import passage_views as pv
from judging.api import quality_views as qv
from judging.api import suggestion_views as sv
from judging.api import versus_views as vv
from judging.api.auth_views import TokenView
from judging.api.check_views import RunCheckView
from judging.api.incompleteness_views import IncompletenessView

router = DefaultRouter()
# No `.json` twins of the routes: the actions take no `format` argument (a 500 on each), and
# ?format= is ours (downloads), not a renderer override.
router.include_format_suffixes = False
router.register("campaigns", views.CampaignViewSet, basename="campaign")
router.register("runs", views.RunViewSet, basename="run")
router.register("qrels", views.QrelsVersionViewSet, basename="qrels")
router.register("pools", views.PoolVersionViewSet, basename="pool")
router.register("leases", jv.LeaseViewSet, basename="lease")
router.register("judgments", jv.JudgmentViewSet, basename="judgment")

urlpatterns = [
    path("auth/token/", TokenView.as_view(), name="api-token"),
    path("me/", views.MeView.as_view(), name="api-me"),
    path("collections/", cv.CollectionImportView.as_view(), name="api-collections"),
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # the split view: Swagger UI's initialiser is a script file, not inline (CSP); a page:
    # OPTIONS has no template to render (a 500), so it answers 405 as POST does
    path(
        "docs/",
        SpectacularSwaggerSplitView.as_view(
            url_name="api-schema", http_method_names=["get", "head"]
        ),
        name="api-docs",
    ),
    path("campaigns/<int:campaign_id>/leases/", jv.CampaignLeaseView.as_view(), name="api-leases"),
    path("campaigns/<int:campaign_id>/undo/", jv.UndoView.as_view(), name="api-undo"),
    path(
        "campaigns/<int:campaign_id>/judging-progress/",
        jv.ProgressView.as_view(),
        name="api-judging-progress",
    ),
    path(
        "campaigns/<int:campaign_id>/agreement/", jv.AgreementView.as_view(), name="api-agreement"
    ),
    path(
        "campaigns/<int:campaign_id>/disagreements/",
        jv.DisagreementView.as_view(),
        name="api-disagreements",
    ),
    path(
        "campaigns/<int:campaign_id>/adjudications/",
        jv.AdjudicationView.as_view(),
        name="api-adjudications",
    ),
    path(
        "campaigns/<int:campaign_id>/qrels/publish/",
        jv.PublishView.as_view(),
        name="api-qrels-publish",
    ),
    path("campaigns/<int:campaign_id>/plan/", plan_views.PlanView.as_view(), name="api-plan"),
    path(
        "campaigns/<int:campaign_id>/plan/designs/",
        plan_views.DesignForecastView.as_view(),
        name="api-plan-designs",
    ),
    path("campaigns/<int:campaign_id>/quality/", qv.QualityView.as_view(), name="api-quality"),
    path("campaigns/<int:campaign_id>/gold/", qv.GoldView.as_view(), name="api-gold"),
    path(
        "campaigns/<int:campaign_id>/exclusions/",
        qv.ExclusionView.as_view(),
        name="api-exclusions",
    ),
    path(
        "campaigns/<int:campaign_id>/exclusions/<int:pk>/lift/",
        qv.ExclusionLiftView.as_view(),
        name="api-exclusion-lift",
    ),
    path("qrels/<int:pk>/diff/", jv.QrelsDiffView.as_view(), name="api-qrels-diff"),
    path("qrels/<int:pk>/carry/", pv.QrelsCarryView.as_view(), name="api-qrels-carry"),
    path("qrels/<int:pk>/publish/", pv.QrelsPublishOntoView.as_view(), name="api-qrels-onto"),
    path(
        "campaigns/<int:campaign_id>/incompleteness/",
        IncompletenessView.as_view(),
        name="api-incompleteness",
    ),
    path("qrels/<int:pk>/documents/", pv.QrelsDocumentsView.as_view(), name="api-qrels-documents"),
    path(
        "campaigns/<int:pk>/answer-board/", abv.AnswerBoardView.as_view(), name="api-answer-board"
    ),
    path(
        "judges/<int:pk>/answer-samples/",
        asv.JudgeAnswerSamplesView.as_view(),
        name="api-judge-answer-samples",
    ),
    path(
        "judges/<int:pk>/answer-audit/",
        asv.JudgeAnswerAuditView.as_view(),
        name="api-judge-answer-audit",
    ),
    path("answer-samples/<int:pk>/", asv.AnswerSampleView.as_view(), name="api-answer-sample"),
    path(
        "answer-samples/<int:pk>/advance/",
        asv.AnswerSampleAdvanceView.as_view(),
        name="api-answer-sample-advance",
    ),
    path(
        "campaigns/<int:campaign_id>/answer-items/",
        unit_views.AnswerItemsView.as_view(),
        name="api-answer-items",
    ),
    path(
        "campaigns/<int:campaign_id>/chunkings/",
        pv.ChunkingsView.as_view(),
        name="api-chunkings",
    ),
    path(
        "chunkings/<int:pk>/passages/",
        pv.ChunkingPassagesView.as_view(),
        name="api-chunking-passages",
    ),
    # the export without a trailing slash too, as scripts write it
    path(
        "qrels/<int:pk>/export",
        views.QrelsVersionViewSet.as_view({"get": "export"}),
        name="api-qrels-export",
    ),
    path("runs/<int:pk>/evaluations/", ev.RunEvaluationsView.as_view(), name="api-run-evaluations"),
    path("runs/<int:pk>/penalty/", ev.RunPenaltyView.as_view(), name="api-run-penalty"),
    path("runs/<int:pk>/topup/", ev.RunTopUpView.as_view(), name="api-run-topup"),
    path(
        "runs/<int:pk>/topup/publish/",
        ev.RunTopUpPublishView.as_view(),
        name="api-run-topup-publish",
    ),
    path("runs/<int:pk>/check/", RunCheckView.as_view(), name="api-run-check"),
    path("campaigns/<int:pk>/leaderboard/", ev.LeaderboardView.as_view(), name="api-leaderboard"),
    path(
        "campaigns/<int:pk>/leaderboard/export/",
        ev.LeaderboardExportView.as_view(),
        name="api-leaderboard-export",
    ),
    path("campaigns/<int:pk>/per-query/", ev.PerQueryView.as_view(), name="api-per-query"),
    path(
        "campaigns/<int:pk>/significance/",
        significance_views.SignificanceView.as_view(),
        name="api-significance",
    ),
    path("campaigns/<int:pk>/bias/", ev.BiasReportView.as_view(), name="api-bias"),
    path("campaigns/<int:pk>/versus/", vv.VersusView.as_view(), name="api-versus"),
    path(
        "campaigns/<int:pk>/versus/<path:qid>/",
        vv.VersusTopicView.as_view(),
        name="api-versus-topic",
    ),
    path(
        "qrels/<int:pk>/reusability/",
        ev.ReusabilityView.as_view(),
        name="api-qrels-reusability",
    ),
    # automatic judges: audits and human samples (autojudge_results_views)
    path("judges/<int:pk>/audits/", ar.JudgeAuditsView.as_view(), name="api-judge-audits"),
    path("audits/<int:pk>/", ar.AuditView.as_view(), name="api-audit"),
    path("judges/<int:pk>/samples/", ar.JudgeSamplesView.as_view(), name="api-judge-samples"),
    path("samples/<int:pk>/", ar.SampleView.as_view(), name="api-sample"),
    path("samples/<int:pk>/advance/", ar.SampleAdvanceView.as_view(), name="api-sample-advance"),
    # --- automatic judges -----------------------------------------------------------------
    path("campaigns/<int:campaign_id>/judges/", aj.JudgesView.as_view(), name="api-judges"),
    path("campaigns/<int:campaign_id>/juries/", jury_views.JuriesView.as_view(), name="api-juries"),
    path(
        "campaigns/<int:campaign_id>/meta-evaluation/",
        meta_views.MetaEvaluationView.as_view(),
        name="api-meta-evaluation",
    ),
    path(
        "campaigns/<int:campaign_id>/judge-submissions/",
        aj.JudgeSubmissionsView.as_view(),
        name="api-judge-submissions",
    ),
    path("judges/<int:pk>/", aj.JudgeDetailView.as_view(), name="api-judge-detail"),
    path("judges/<int:pk>/runs/", aj.JudgeRunsView.as_view(), name="api-judge-runs"),
    path("judges/<int:pk>/labels/", aj.JudgeLabelsView.as_view(), name="api-judge-labels"),
    path("judges/<int:pk>/calibrate/", aj.JudgeCalibrateView.as_view(), name="api-judge-calibrate"),
    path("judges/<int:pk>/qrels/", aj.JudgeQrelsView.as_view(), name="api-judge-qrels"),
    path("judge-runs/<int:pk>/", aj.JudgeRunView.as_view(), name="api-judge-run"),
    path("calibrations/<int:pk>/", aj.CalibrationView.as_view(), name="api-calibration"),
    path("", include(router.urls)),
    # suggestions for assessors and their anchoring report (issue 17, point 5)
    path(
        "campaigns/<int:campaign_id>/suggestions/",
        sv.SuggestionsView.as_view(),
        name="api-suggestions",
    ),
    # nugget banks, versioned; drafts edited by assessors (issue 34, point 3)
    path(
        "campaigns/<int:campaign_id>/nugget-banks/",
        nv.NuggetBanksView.as_view(),
        name="api-nugget-banks",
    ),
    path(
        "campaigns/<int:campaign_id>/nugget-banks/<int:number>/",
        nv.NuggetBankView.as_view(),
        name="api-nugget-bank",
    ),
    path(
        "campaigns/<int:campaign_id>/nugget-banks/<int:number>/edits/",
        nv.NuggetEditsView.as_view(),
        name="api-nugget-edits",
    ),
    path(
        "campaigns/<int:campaign_id>/nugget-banks/<int:number>/publish/",
        nv.NuggetBankPublishView.as_view(),
        name="api-nugget-bank-publish",
    ),
]
