from django.contrib.auth import views as auth_views
from django.urls import path

from judging.web import (
    account_pages,
    adjudicate_pages,
    admin_pages,
    annotate,
    answer_audit_pages,
    autojudge_pages,
    bias_pages,
    collection_pages,
    incompleteness_pages,
    judge_pages,
    meta_pages,
    my_work,
    nugget_pages,
    quality_pages,
    results,
    significance_pages,
    submit_pages,
    suggestion_pages,
    text_pages,
    topup_pages,
    versus_pages,
    views,
)
from judging.web.login import LoginForm, answer_429_when_locked

urlpatterns = [
    path("", views.home, name="home"),
    path("favicon.ico", views.favicon, name="favicon"),
    path(
        "login/",
        answer_429_when_locked(auth_views.LoginView.as_view(authentication_form=LoginForm)),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    # accounts: the admin's users page, and the set-password link's page (public)
    path(
        "accounts/set-password/<str:uid>/<str:token>/",
        account_pages.set_password,
        name="set-password",
    ),
    path("manage/users/", account_pages.users_page, name="manage-users"),
    path("manage/users/<int:user_id>/roles/", account_pages.user_roles, name="manage-user-roles"),
    path(
        "manage/users/<int:user_id>/active/", account_pages.user_active, name="manage-user-active"
    ),
    path("manage/users/<int:user_id>/link/", account_pages.user_link, name="manage-user-link"),
    path("annotate/", my_work.my_work, name="annotate-home"),
    path("annotate/<int:campaign_id>/", annotate.judge, name="annotate-judge"),
    path("annotate/<int:campaign_id>/next/", annotate.next_item, name="annotate-next"),
    path("annotate/<int:campaign_id>/done/", annotate.done, name="annotate-done"),
    path("annotate/<int:campaign_id>/submit/", annotate.submit, name="annotate-submit"),
    path("annotate/<int:campaign_id>/skip/", annotate.skip, name="annotate-skip"),
    path("annotate/<int:campaign_id>/undo/", annotate.undo, name="annotate-undo"),
    path("annotate/<int:campaign_id>/renew/", annotate.renew, name="annotate-renew"),
    path("annotate/<int:campaign_id>/ahead/", annotate.ahead, name="annotate-ahead"),
    path(
        "annotate/<int:campaign_id>/judged/<int:judgment_id>/",
        annotate.judged,
        name="annotate-judged",
    ),
    path("campaigns/<int:campaign_id>/leaderboard/", results.leaderboard_page, name="leaderboard"),
    path(
        "campaigns/<int:campaign_id>/leaderboard/evaluate/",
        results.leaderboard_evaluate,
        name="leaderboard-evaluate",
    ),
    path(
        "campaigns/<int:campaign_id>/leaderboard/export/",
        results.leaderboard_export_page,
        name="leaderboard-export",
    ),
    path("campaigns/<int:campaign_id>/per-query/", results.per_query_page, name="per-query"),
    path(
        "campaigns/<int:campaign_id>/incompleteness/",
        incompleteness_pages.incompleteness_page,
        name="incompleteness",
    ),
    path(
        "campaigns/<int:campaign_id>/incompleteness/judge-more/",
        incompleteness_pages.judge_more,
        name="incompleteness-judge-more",
    ),
    path("campaigns/<int:campaign_id>/compare/", significance_pages.compare_page, name="compare"),
    path("campaigns/<int:campaign_id>/bias/", bias_pages.bias_page, name="bias"),
    path("campaigns/<int:campaign_id>/versus/", versus_pages.versus_page, name="versus"),
    path(
        "campaigns/<int:campaign_id>/versus/<path:qid>/",
        versus_pages.versus_topic_page,
        name="versus-topic",
    ),
    path("campaigns/<int:campaign_id>/bias/compute/", bias_pages.bias_compute, name="bias-compute"),
    path(
        "campaigns/<int:campaign_id>/bias/<str:chart>.svg", bias_pages.bias_chart, name="bias-chart"
    ),
    path("campaigns/<int:campaign_id>/submit/", submit_pages.submit_run, name="submit-run"),
    path("runs/<int:run_id>/", results.run_page, name="run-page"),
    path("runs/<int:run_id>/pooled/", results.run_pooled, name="run-pooled"),
    path("runs/<int:run_id>/topup/", topup_pages.run_topup, name="run-topup"),
    path("runs/<int:run_id>/penalty/", topup_pages.run_penalty_ask, name="run-penalty"),
    path(
        "runs/<int:run_id>/topup/publish/",
        topup_pages.run_topup_publish,
        name="run-topup-publish",
    ),
    path("runs/<int:run_id>/recall.svg", results.run_recall_svg, name="run-recall-svg"),
    path("runs/<int:run_id>/evaluate/", results.run_evaluate, name="run-evaluate"),
    path("manage/import/", collection_pages.import_collection, name="manage-import"),
    path("manage/<int:campaign_id>/", admin_pages.progress, name="manage-progress"),
    path(
        "manage/<int:campaign_id>/agreement/", admin_pages.agreement_page, name="manage-agreement"
    ),
    path(
        "manage/<int:campaign_id>/adjudicate/",
        adjudicate_pages.adjudicate,
        name="manage-adjudicate",
    ),
    path("manage/<int:campaign_id>/publish/", admin_pages.publish, name="manage-publish"),
    path("manage/<int:campaign_id>/quality/", quality_pages.quality_page, name="manage-quality"),
    path(
        "manage/<int:campaign_id>/quality/settings/",
        quality_pages.qc_settings,
        name="manage-qc-settings",
    ),
    path("manage/<int:campaign_id>/quality/gold/", quality_pages.gold_add, name="manage-gold-add"),
    path("manage/<int:campaign_id>/quality/exclude/", quality_pages.exclude, name="manage-exclude"),
    path(
        "manage/<int:campaign_id>/quality/exclusions/<int:exclusion_id>/lift/",
        quality_pages.lift,
        name="manage-exclusion-lift",
    ),
    path(
        "manage/<int:campaign_id>/pools/<int:number>/missing-text/",
        text_pages.missing_text,
        name="manage-missing-text",
    ),
    path(
        "manage/<int:campaign_id>/pools/<int:number>/missing-text.txt",
        text_pages.missing_text_download,
        name="manage-missing-text-download",
    ),
    path(
        "manage/<int:campaign_id>/pools/<int:number>/missing-text/import/",
        text_pages.missing_text_import,
        name="manage-missing-text-import",
    ),
    # automatic judges: audits, human samples and the hybrid leaderboard (autojudge_pages)
    path(
        "campaigns/<int:campaign_id>/judges/<int:judge_id>/audit/",
        autojudge_pages.audit_page,
        name="autojudge-audit",
    ),
    path(
        "campaigns/<int:campaign_id>/judges/<int:judge_id>/answer-audit/",
        answer_audit_pages.answer_audit_page,
        name="autojudge-answer-audit",
    ),
    path(
        "campaigns/<int:campaign_id>/judges/<int:judge_id>/audit/compute/",
        autojudge_pages.audit_compute,
        name="autojudge-audit-compute",
    ),
    path(
        "campaigns/<int:campaign_id>/judges/meta-evaluation/",
        meta_pages.meta_page,
        name="meta-evaluation",
    ),
    path(
        "campaigns/<int:campaign_id>/judges/meta-evaluation/compute/",
        meta_pages.meta_compute,
        name="meta-evaluation-compute",
    ),
    path(
        "campaigns/<int:campaign_id>/samples/",
        autojudge_pages.samples_page,
        name="autojudge-samples",
    ),
    path(
        "campaigns/<int:campaign_id>/samples/create/",
        autojudge_pages.samples_create,
        name="autojudge-samples-create",
    ),
    path(
        "campaigns/<int:campaign_id>/samples/<int:sample_id>/",
        autojudge_pages.sample_page,
        name="autojudge-sample",
    ),
    path(
        "campaigns/<int:campaign_id>/samples/<int:sample_id>/advance/",
        autojudge_pages.sample_advance_view,
        name="autojudge-sample-advance",
    ),
    # --- automatic judges ---------------------------------------------------------------
    path("campaigns/<int:campaign_id>/judges/", judge_pages.judges_page, name="judge-list"),
    path(
        "campaigns/<int:campaign_id>/judges/submit/",
        judge_pages.judge_submit_page,
        name="judge-submit",
    ),
    path(
        "campaigns/<int:campaign_id>/judges/import/",
        judge_pages.judge_import,
        name="judge-import",
    ),
    path(
        "campaigns/<int:campaign_id>/judges/<int:judge_id>/",
        judge_pages.judge_page,
        name="judge-detail",
    ),
    path(
        "campaigns/<int:campaign_id>/judges/<int:judge_id>/run/",
        judge_pages.judge_run,
        name="judge-run",
    ),
    path(
        "campaigns/<int:campaign_id>/judges/<int:judge_id>/calibrate/",
        judge_pages.judge_calibrate,
        name="judge-calibrate",
    ),
    path(
        "campaigns/<int:campaign_id>/judges/<int:judge_id>/qrels/",
        judge_pages.judge_qrels,
        name="judge-qrels",
    ),
    # suggestions for assessors and their anchoring report (issue 17, point 5)
    path(
        "campaigns/<int:campaign_id>/suggestions/",
        suggestion_pages.suggestions_page,
        name="suggestions",
    ),
    # nugget banks, versioned; a topic's editing screen (issue 34, point 3)
    path("campaigns/<int:campaign_id>/nuggets/", nugget_pages.banks_page, name="nugget-banks"),
    path(
        "campaigns/<int:campaign_id>/nuggets/<int:number>/",
        nugget_pages.bank_page,
        name="nugget-bank",
    ),
    path(
        "campaigns/<int:campaign_id>/nuggets/<int:number>/publish/",
        nugget_pages.bank_publish_page,
        name="nugget-bank-publish",
    ),
    path(
        "campaigns/<int:campaign_id>/nuggets/<int:number>/topics/<path:qid>/",
        nugget_pages.topic_page,
        name="nugget-topic",
    ),
]
