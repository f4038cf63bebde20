"""The authorization matrix: for every named URL pattern and method, the status each role gets.

Roles (columns, in this order): anonymous, annotator (assigned to the campaign's topics, holds
the lease and the judgments the URLs name), other annotator (no assignment, lease or judgment),
researcher (owns the run the URLs name), other researcher (owns another run), admin (staff).

The rules these rows encode (DESIGN.md, "Who uses it" and "Bad input and failure"):

- the API answers 401 to anonymous callers; pages redirect them to the login page (302); the
  admin site and the staff pages redirect everybody who is not staff to the admin's login (302);
- annotators judge and see their own leases and judgments only (another's: 404), never runs,
  pools, qrels or results (403);
- researchers read results of every run anonymised but only their own runs (another's: 404),
  submit runs and ask for evaluations and bias reports; they never judge (403);
- admins set up and run campaigns (imports, pools, adjudication, publishing) and see everything;
  an admin does not judge unless also an annotator (403).

A URL pattern of the URL conf without a row here fails the matrix test: a new endpoint or page
gets its row, and so a decision about who may use it, when it is added.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ROLES = ("anonymous", "annotator", "other_annotator", "researcher", "other_researcher", "admin")


def s(*statuses: int) -> dict[str, int]:
    """One row: a status for each of ROLES, in order."""
    assert len(statuses) == len(ROLES), statuses
    return dict(zip(ROLES, statuses, strict=True))


@dataclass(frozen=True)
class Route:
    """How to fill a pattern's arguments: argument name -> the dataset object whose pk it takes
    (``campaign``, ``run``, ``pool``, ``qrels``, ``lease``, ``judgment``), or ``=literal``; and
    the query strings to ask it with (each one a request of every row of the pattern)."""

    kwargs: dict[str, str] = field(default_factory=dict)
    queries: tuple[str, ...] = ("",)


CAMPAIGN = Route({"campaign_id": "campaign"})
CAMPAIGN_PK = Route({"pk": "campaign"})
RUN_PK = Route({"pk": "run"})
RUN_ID = Route({"run_id": "run"})
POOL_PK = Route({"pk": "pool"})
QRELS_PK = Route({"pk": "qrels"})
LEASE_PK = Route({"pk": "lease"})
JUDGMENT_PK = Route({"pk": "judgment"})

ROUTES: dict[str, Route] = {
    "api-leases": CAMPAIGN,
    "api-undo": CAMPAIGN,
    "api-judging-progress": CAMPAIGN,
    "api-agreement": CAMPAIGN,
    "api-disagreements": CAMPAIGN,
    "api-adjudications": CAMPAIGN,
    "api-qrels-publish": CAMPAIGN,
    "api-plan": CAMPAIGN,
    "api-plan-designs": Route({"campaign_id": "campaign"}, ("?budget=10&reps=2",)),
    "api-qrels-diff": Route({"pk": "qrels"}, ("?against=1",)),
    "api-qrels-export": QRELS_PK,
    "api-qrels-carry": QRELS_PK,
    "api-qrels-onto": QRELS_PK,
    "api-qrels-documents": QRELS_PK,
    "api-chunkings": CAMPAIGN,
    "api-answer-items": CAMPAIGN,
    "api-answer-board": CAMPAIGN_PK,
    "api-judge-answer-samples": Route({"pk": "judge"}),
    "api-answer-sample": Route({"pk": "sample"}),
    "api-judge-answer-audit": Route({"pk": "judge"}, ("?kind=citation_support",)),
    "api-answer-sample-advance": Route({"pk": "sample"}),
    "api-incompleteness": CAMPAIGN,
    "incompleteness": CAMPAIGN,
    "incompleteness-judge-more": CAMPAIGN,
    "api-chunking-passages": Route({"pk": "chunking"}),
    "api-run-evaluations": RUN_PK,
    "api-run-penalty": RUN_PK,
    "api-run-topup": RUN_PK,
    "api-run-topup-publish": RUN_PK,
    "api-run-check": RUN_PK,
    "api-leaderboard": Route({"pk": "campaign"}, ("", "?format=csv")),
    "api-leaderboard-export": Route({"pk": "campaign"}, ("", "?format=latex", "?format=markdown")),
    "api-per-query": Route({"pk": "campaign"}, ("", "?format=trec")),
    "api-significance": CAMPAIGN_PK,
    "api-bias": Route({"pk": "campaign"}, ("", "?kind=loo_group", "?topics=401&measure=P@2")),
    "api-qrels-reusability": QRELS_PK,
    "api-versus": Route({"pk": "campaign"}, ("", "?measure=P@10&sort=qid")),
    "api-versus-topic": Route({"pk": "campaign", "qid": "=401"}, ("", "?depth=2")),
    "campaign-detail": CAMPAIGN_PK,
    "campaign-documents": Route({"pk": "campaign"}, ("", "?include=text")),
    "campaign-pools": CAMPAIGN_PK,
    "campaign-qrels": CAMPAIGN_PK,
    "campaign-runs": CAMPAIGN_PK,
    "campaign-topics": CAMPAIGN_PK,
    "run-detail": RUN_PK,
    "run-download": RUN_PK,
    "run-answers": RUN_PK,
    "qrels-detail": QRELS_PK,
    "qrels-export": QRELS_PK,
    "pool-detail": POOL_PK,
    "pool-cancel": POOL_PK,
    "pool-diff": POOL_PK,
    "pool-documents": POOL_PK,
    "pool-missing-text": Route({"pk": "pool"}, queries=("", "?format=txt")),
    "lease-detail": LEASE_PK,
    "lease-judgment": LEASE_PK,
    "lease-renew": LEASE_PK,
    "judgment-detail": JUDGMENT_PK,
    "annotate-judge": CAMPAIGN,
    "annotate-next": CAMPAIGN,
    "annotate-done": CAMPAIGN,
    "annotate-submit": CAMPAIGN,
    "annotate-skip": CAMPAIGN,
    "annotate-undo": CAMPAIGN,
    "annotate-renew": CAMPAIGN,
    "annotate-ahead": CAMPAIGN,
    "annotate-judged": Route({"campaign_id": "campaign", "judgment_id": "judgment"}),
    "leaderboard": Route({"campaign_id": "campaign"}, ("", "?format=csv")),
    "leaderboard-evaluate": Route({"campaign_id": "campaign"}),
    "leaderboard-export": Route(
        {"campaign_id": "campaign"}, ("", "?format=latex", "?format=markdown")
    ),
    "per-query": Route({"campaign_id": "campaign"}, ("", "?format=trec")),
    "compare": CAMPAIGN,
    "bias": Route({"campaign_id": "campaign"}, ("", "?kind=loo_group")),
    "bias-compute": CAMPAIGN,
    "versus": Route({"campaign_id": "campaign"}, ("", "?sort=-diff")),
    "versus-topic": Route({"campaign_id": "campaign", "qid": "=401"}, ("", "?depth=2")),
    "bias-chart": Route({"campaign_id": "campaign", "chart": "=scatter"}),
    "submit-run": CAMPAIGN,
    "run-page": RUN_ID,
    "run-pooled": RUN_ID,
    "run-topup": RUN_ID,
    "run-penalty": RUN_ID,
    "run-topup-publish": RUN_ID,
    "run-recall-svg": RUN_ID,
    "run-evaluate": RUN_ID,
    "manage-progress": CAMPAIGN,
    "manage-agreement": CAMPAIGN,
    "manage-adjudicate": CAMPAIGN,
    "manage-publish": CAMPAIGN,
    "manage-quality": CAMPAIGN,
    "manage-gold-add": CAMPAIGN,
    "manage-qc-settings": CAMPAIGN,
    "manage-exclude": CAMPAIGN,
    "manage-exclusion-lift": Route({"campaign_id": "campaign", "exclusion_id": "=999999"}),
    "api-quality": CAMPAIGN,
    "api-gold": CAMPAIGN,
    "api-exclusions": CAMPAIGN,
    "api-exclusion-lift": Route({"campaign_id": "campaign", "pk": "=999999"}),
    "manage-missing-text": Route({"campaign_id": "campaign", "number": "=1"}),
    "manage-missing-text-download": Route({"campaign_id": "campaign", "number": "=1"}),
    "manage-missing-text-import": Route({"campaign_id": "campaign", "number": "=1"}),
    # --- automatic judges
    "api-judges": CAMPAIGN,
    "api-juries": CAMPAIGN,
    "api-judge-submissions": CAMPAIGN,
    "api-meta-evaluation": CAMPAIGN,
    "meta-evaluation": CAMPAIGN,
    "judge-submit": CAMPAIGN,
    "meta-evaluation-compute": CAMPAIGN,
    "api-judge-detail": Route({"pk": "judge"}),
    "api-judge-runs": Route({"pk": "embedding_judge"}),
    "api-judge-labels": Route({"pk": "judge"}),
    "api-judge-calibrate": Route({"pk": "judge"}),
    "api-judge-qrels": Route({"pk": "judge"}),
    "api-judge-run": Route({"pk": "judge_run"}),
    "api-calibration": Route({"pk": "calibration"}),
    "judge-list": CAMPAIGN,
    "judge-import": CAMPAIGN,
    "judge-detail": Route({"campaign_id": "campaign", "judge_id": "judge"}),
    "judge-run": Route({"campaign_id": "campaign", "judge_id": "embedding_judge"}),
    "judge-calibrate": Route({"campaign_id": "campaign", "judge_id": "judge"}),
    "judge-qrels": Route({"campaign_id": "campaign", "judge_id": "judge"}),
    "api-judge-audits": Route({"pk": "judge"}),
    "api-audit": Route({"pk": "audit"}),
    "api-judge-samples": Route({"pk": "judge"}),
    "api-sample": Route({"pk": "sample"}),
    "api-sample-advance": Route({"pk": "sample"}),
    "autojudge-audit": Route({"campaign_id": "campaign", "judge_id": "judge"}),
    "autojudge-answer-audit": Route({"campaign_id": "campaign", "judge_id": "judge"}),
    "autojudge-audit-compute": Route({"campaign_id": "campaign", "judge_id": "judge"}),
    "autojudge-samples": CAMPAIGN,
    "autojudge-samples-create": CAMPAIGN,
    "autojudge-sample": Route({"campaign_id": "campaign", "sample_id": "sample"}),
    "autojudge-sample-advance": Route({"campaign_id": "campaign", "sample_id": "sample"}),
    # accounts: the admin's users page acts on the other annotator; a made-up link
    "manage-user-roles": Route({"user_id": "account"}),
    "manage-user-active": Route({"user_id": "account"}),
    "manage-user-link": Route({"user_id": "account"}),
    "set-password": Route({"uid": "=MQ", "token": "=cxyz12-0123456789abcdef0123"}),
    # suggestions for assessors (issue 17, point 5)
    "suggestions": CAMPAIGN,
    "api-suggestions": CAMPAIGN,
    # nugget banks (issue 34, point 3): the dataset's v2 is a draft, v1 published
    "api-nugget-banks": CAMPAIGN,
    "api-nugget-bank": Route({"campaign_id": "campaign", "number": "=2"}),
    "api-nugget-edits": Route({"campaign_id": "campaign", "number": "=2"}, ("?topic=401",)),
    "api-nugget-bank-publish": Route({"campaign_id": "campaign", "number": "=2"}),
    "nugget-banks": CAMPAIGN,
    "nugget-bank": Route({"campaign_id": "campaign", "number": "=2"}),
    "nugget-bank-publish": Route({"campaign_id": "campaign", "number": "=2"}),
    "nugget-topic": Route({"campaign_id": "campaign", "number": "=2", "qid": "=401"}),
}

# --- the matrix -----------------------------------------------------------------------------
# (url name, method) -> statuses, columns:
#   anonymous  annotator  other_annotator  researcher  other_researcher  admin
# HEAD is asked wherever GET is and expects GET's row, OPTIONS on every API pattern (anonymous:
# 401, or 200 where the pattern is public; the others 200 or 403, never anything else), unless
# the table has a row for them.
MATRIX: dict[tuple[str, str], dict[str, int]] = {
    # --- API: who is asking, the schema -------------------------------------------------
    # a token for the credentials sent (anonymous sends wrong ones)
    ("api-token", "POST"): s(400, 200, 200, 200, 200, 200),
    # revoking one's own token: nobody else's
    ("api-token", "DELETE"): s(401, 204, 204, 204, 204, 204),
    ("api-me", "GET"): s(401, 200, 200, 200, 200, 200),
    # importing a whole collection: admins only (POST; nothing to read)
    ("api-collections", "POST"): s(401, 403, 403, 403, 403, 201),
    ("api-root", "GET"): s(401, 200, 200, 200, 200, 200),
    ("api-schema", "GET"): s(200, 200, 200, 200, 200, 200),  # public, as the docs page
    ("api-docs", "GET"): s(200, 200, 200, 200, 200, 200),
    ("api-docs", "OPTIONS"): s(405, 405, 405, 405, 405, 405),  # a page: no metadata to show
    # --- API: campaigns -----------------------------------------------------------------
    ("campaign-list", "GET"): s(401, 200, 200, 200, 200, 200),
    ("campaign-list", "POST"): s(401, 403, 403, 403, 403, 201),
    ("campaign-detail", "GET"): s(401, 200, 200, 200, 200, 200),
    ("campaign-detail", "PUT"): s(401, 403, 403, 403, 403, 200),
    ("campaign-detail", "PATCH"): s(401, 403, 403, 403, 403, 200),
    ("campaign-topics", "GET"): s(401, 200, 200, 200, 200, 200),  # annotators judge them
    ("campaign-topics", "POST"): s(401, 403, 403, 403, 403, 201),
    ("campaign-documents", "GET"): s(401, 403, 403, 200, 200, 200),
    ("campaign-documents", "POST"): s(401, 403, 403, 403, 403, 201),
    ("campaign-qrels", "GET"): s(401, 403, 403, 200, 200, 200),  # as GET /qrels/
    ("campaign-qrels", "POST"): s(401, 403, 403, 403, 403, 201),
    ("campaign-runs", "GET"): s(401, 403, 403, 200, 200, 200),  # each researcher: their own
    ("campaign-runs", "POST"): s(401, 403, 403, 201, 201, 201),
    ("campaign-pools", "GET"): s(401, 403, 403, 200, 200, 200),
    ("campaign-pools", "POST"): s(401, 403, 403, 403, 403, 202),
    # --- API: runs (the researcher's own; the other researcher's: 404) --------------------
    ("run-list", "GET"): s(401, 403, 403, 200, 200, 200),
    ("run-detail", "GET"): s(401, 403, 403, 200, 404, 200),
    ("run-detail", "PATCH"): s(401, 403, 403, 200, 404, 200),
    ("run-detail", "DELETE"): s(401, 403, 403, 204, 404, 204),
    ("run-download", "GET"): s(401, 403, 403, 200, 404, 200),
    ("run-answers", "GET"): s(401, 403, 403, 200, 404, 200),
    ("api-run-evaluations", "GET"): s(401, 403, 403, 200, 404, 200),
    ("api-run-evaluations", "POST"): s(401, 403, 403, 202, 404, 202),
    ("api-run-penalty", "GET"): s(401, 403, 403, 200, 404, 200),
    ("api-run-penalty", "POST"): s(401, 403, 403, 200, 404, 200),
    ("api-run-topup", "GET"): s(401, 403, 403, 200, 404, 200),
    # an admin queues a top-up (it spends the assessors' time); its owner may not. The dataset's
    # run has its top 50 judged: the admin's request is checked, and answered "nothing to top up"
    ("api-run-topup", "POST"): s(401, 403, 403, 403, 404, 400),
    # publishing a top-up makes a qrels version: admins (the dataset's run has none: 400)
    ("api-run-topup-publish", "POST"): s(401, 403, 403, 403, 404, 400),
    # no baseline named: 400 to whoever may see the run
    ("api-run-check", "GET"): s(401, 403, 403, 400, 404, 400),
    # --- API: results (every researcher, other runs anonymised) ---------------------------
    ("api-leaderboard", "GET"): s(401, 403, 403, 200, 200, 200),
    ("api-leaderboard-export", "GET"): s(401, 403, 403, 200, 200, 200),
    ("api-per-query", "GET"): s(401, 403, 403, 200, 200, 200),
    ("api-significance", "GET"): s(401, 403, 403, 200, 200, 200),
    ("api-bias", "GET"): s(401, 403, 403, 200, 200, 200),
    # two runs topic by topic; another researcher's run by its label, never its ranking
    ("api-versus", "GET"): s(401, 403, 403, 200, 200, 200),
    ("api-versus-topic", "GET"): s(401, 403, 403, 200, 200, 200),
    ("api-bias", "POST"): s(401, 403, 403, 202, 202, 202),
    # --- API: qrels versions (results: researchers and admins) ----------------------------
    ("qrels-list", "GET"): s(401, 403, 403, 200, 200, 200),
    ("qrels-detail", "GET"): s(401, 403, 403, 200, 200, 200),
    # a stored version never changes: the refusal says why (409), after the role checks
    ("qrels-detail", "PUT"): s(401, 403, 403, 409, 409, 409),
    ("qrels-detail", "PATCH"): s(401, 403, 403, 409, 409, 409),
    ("qrels-detail", "DELETE"): s(401, 403, 403, 409, 409, 409),
    ("qrels-export", "GET"): s(401, 403, 403, 200, 200, 200),
    ("api-qrels-export", "GET"): s(401, 403, 403, 200, 200, 200),
    ("api-qrels-diff", "GET"): s(401, 403, 403, 200, 200, 200),
    # carrying qrels to a chunking and chunking the documents change the campaign: admins
    # (the empty body is a 400 for them); everyone with results reads chunkings and passages
    ("api-qrels-carry", "POST"): s(401, 403, 403, 403, 403, 400),
    ("api-qrels-onto", "POST"): s(401, 403, 403, 403, 403, 400),
    ("api-qrels-documents", "POST"): s(401, 403, 403, 403, 403, 400),
    # queuing answer runs' items for judging: admins (an empty body is a 400)
    ("api-answer-items", "POST"): s(401, 403, 403, 403, 403, 400),
    # answer runs' scores: results (researchers, admins); 404 while the campaign has none
    ("api-answer-board", "GET"): s(401, 403, 403, 404, 404, 404),
    # human samples of answer items: admins draw and advance them, researchers read; the
    # dataset's sample is of pool documents, which these endpoints do not serve (404)
    ("api-judge-answer-samples", "POST"): s(401, 403, 403, 403, 403, 400),
    ("api-answer-sample", "GET"): s(401, 403, 403, 404, 404, 404),
    # the audit of a judge's answer labels names every run: admins (the dataset has no answer
    # run: a conflict says so)
    ("api-judge-answer-audit", "GET"): s(401, 403, 403, 403, 403, 409),
    ("api-answer-sample-advance", "POST"): s(401, 403, 403, 403, 403, 404),
    ("api-chunkings", "GET"): s(401, 403, 403, 200, 200, 200),
    ("api-chunkings", "POST"): s(401, 403, 403, 403, 403, 400),
    ("api-chunking-passages", "GET"): s(401, 403, 403, 200, 200, 200),
    # where the judgments are incomplete: results (researchers, admins); judging more pools,
    # which only admins do (a pool being built already answers with the page again)
    ("api-incompleteness", "GET"): s(401, 403, 403, 200, 200, 200),
    ("incompleteness", "GET"): s(302, 403, 403, 200, 200, 200),
    ("incompleteness-judge-more", "POST"): s(302, 403, 403, 403, 403, 302),
    # its reusability report (computed on publish) / compute it (stored: 202 with its state)
    ("api-qrels-reusability", "GET"): s(401, 403, 403, 200, 200, 200),
    ("api-qrels-reusability", "POST"): s(401, 403, 403, 202, 202, 202),
    # --- API: pools (researchers read them; admins build and cancel) ----------------------
    ("pool-list", "GET"): s(401, 403, 403, 200, 200, 200),
    ("pool-detail", "GET"): s(401, 403, 403, 200, 200, 200),
    ("pool-documents", "GET"): s(401, 403, 403, 200, 200, 200),
    ("pool-diff", "GET"): s(401, 403, 403, 200, 200, 200),
    ("pool-missing-text", "GET"): s(401, 403, 403, 403, 403, 200),
    # the pool is built: the admin passes the check and is told it cannot be cancelled
    ("pool-cancel", "POST"): s(401, 403, 403, 403, 403, 409),
    # --- API: judging (annotators; another annotator's lease or judgment: 404) ------------
    ("api-leases", "POST"): s(401, 201, 204, 403, 403, 403),  # nothing left for the other one
    ("api-undo", "POST"): s(401, 201, 204, 403, 403, 403),
    ("lease-detail", "GET"): s(401, 200, 404, 403, 403, 403),
    ("lease-detail", "DELETE"): s(401, 204, 404, 403, 403, 403),
    ("lease-renew", "POST"): s(401, 200, 404, 403, 403, 403),
    ("lease-judgment", "POST"): s(401, 201, 404, 403, 403, 403),
    ("judgment-list", "GET"): s(401, 200, 200, 403, 403, 403),  # each annotator: their own
    ("judgment-detail", "GET"): s(401, 200, 404, 403, 403, 403),
    ("judgment-detail", "PATCH"): s(401, 200, 404, 403, 403, 403),
    # --- API: running the judging (admins) ------------------------------------------------
    ("api-judging-progress", "GET"): s(401, 403, 403, 403, 403, 200),
    ("api-agreement", "GET"): s(401, 403, 403, 403, 403, 200),
    ("api-disagreements", "GET"): s(401, 403, 403, 403, 403, 200),
    ("api-adjudications", "GET"): s(401, 403, 403, 403, 403, 200),
    ("api-adjudications", "POST"): s(401, 403, 403, 403, 403, 201),
    ("api-qrels-publish", "POST"): s(401, 403, 403, 403, 403, 200),  # nothing new: 200
    ("api-plan", "GET"): s(401, 403, 403, 403, 403, 200),
    # the dataset has one fully judged topic, the forecast needs two: 400 naming the pilot
    ("api-plan-designs", "GET"): s(401, 403, 403, 403, 403, 400),
    # --- API: quality control (admins) ----------------------------------------------------
    ("api-quality", "GET"): s(401, 403, 403, 403, 403, 200),
    ("api-quality", "PATCH"): s(401, 403, 403, 403, 403, 200),
    ("api-gold", "GET"): s(401, 403, 403, 403, 403, 200),
    ("api-gold", "POST"): s(401, 403, 403, 403, 403, 201),
    ("api-exclusions", "GET"): s(401, 403, 403, 403, 403, 200),
    ("api-exclusions", "POST"): s(401, 403, 403, 403, 403, 201),
    ("api-exclusion-lift", "POST"): s(401, 403, 403, 403, 403, 404),  # no such exclusion
    # --- pages: signing in ----------------------------------------------------------------
    ("home", "GET"): s(302, 200, 200, 200, 200, 200),
    ("favicon", "GET"): s(200, 200, 200, 200, 200, 200),  # the site's icon, public
    ("favicon", "POST"): s(405, 405, 405, 405, 405, 405),
    ("login", "GET"): s(200, 200, 200, 200, 200, 200),
    # each role's own credentials: signed in, redirected; anonymous sends wrong ones: the form
    ("login", "POST"): s(200, 302, 302, 302, 302, 302),
    ("logout", "GET"): s(405, 405, 405, 405, 405, 405),  # a GET never signs anybody out
    ("logout", "POST"): s(302, 302, 302, 302, 302, 302),
    # a set-password link, public; this one is made up: refused, saying why, to everybody
    ("set-password", "GET"): s(400, 400, 400, 400, 400, 400),
    ("set-password", "POST"): s(400, 400, 400, 400, 400, 400),
    # --- pages: accounts and roles (admins; anonymous to the login page, the others 403) ---
    ("manage-users", "GET"): s(302, 403, 403, 403, 403, 200),
    ("manage-users", "POST"): s(302, 403, 403, 403, 403, 200),  # created: its link shown
    ("manage-user-roles", "GET"): s(302, 405, 405, 405, 405, 405),
    ("manage-user-roles", "POST"): s(302, 403, 403, 403, 403, 302),
    ("manage-user-active", "GET"): s(302, 405, 405, 405, 405, 405),
    ("manage-user-active", "POST"): s(302, 403, 403, 403, 403, 302),
    ("manage-user-link", "GET"): s(302, 405, 405, 405, 405, 405),
    ("manage-user-link", "POST"): s(302, 403, 403, 403, 403, 200),  # the link shown
    # --- pages: judging (annotators) ------------------------------------------------------
    ("annotate-home", "GET"): s(302, 200, 200, 403, 403, 403),
    ("annotate-judge", "GET"): s(302, 200, 200, 403, 403, 403),
    ("annotate-done", "GET"): s(302, 200, 200, 403, 403, 403),
    ("annotate-next", "GET"): s(302, 405, 405, 405, 405, 405),
    ("annotate-next", "POST"): s(302, 302, 302, 403, 403, 403),
    # the other annotator posts the annotator's lease: refused (flashed), nothing stored
    ("annotate-submit", "GET"): s(302, 405, 405, 405, 405, 405),
    ("annotate-submit", "POST"): s(302, 302, 302, 403, 403, 403),
    ("annotate-skip", "GET"): s(302, 405, 405, 405, 405, 405),
    ("annotate-skip", "POST"): s(302, 302, 302, 403, 403, 403),
    ("annotate-undo", "GET"): s(302, 405, 405, 405, 405, 405),
    ("annotate-undo", "POST"): s(302, 302, 302, 403, 403, 403),
    ("annotate-renew", "GET"): s(302, 405, 405, 405, 405, 405),
    ("annotate-renew", "POST"): s(302, 200, 404, 403, 403, 403),
    # the judging page's call: each annotator is leased ahead in their own queue
    ("annotate-ahead", "GET"): s(302, 405, 405, 405, 405, 405),
    ("annotate-ahead", "POST"): s(302, 200, 200, 403, 403, 403),
    ("annotate-judged", "GET"): s(302, 200, 404, 403, 403, 403),
    ("annotate-judged", "POST"): s(302, 302, 404, 403, 403, 403),
    # --- pages: results (researchers and admins) ------------------------------------------
    ("leaderboard", "GET"): s(302, 403, 403, 200, 200, 200),
    # the board's Compute button (trec_eval mode): each researcher asks for their own runs
    ("leaderboard-evaluate", "GET"): s(302, 405, 405, 405, 405, 405),
    ("leaderboard-evaluate", "POST"): s(302, 403, 403, 302, 302, 302),
    ("leaderboard-export", "GET"): s(302, 403, 403, 200, 200, 200),
    ("per-query", "GET"): s(302, 403, 403, 200, 200, 200),
    ("compare", "GET"): s(302, 403, 403, 200, 200, 200),
    ("bias", "GET"): s(302, 403, 403, 200, 200, 200),
    ("versus", "GET"): s(302, 403, 403, 200, 200, 200),
    ("versus-topic", "GET"): s(302, 403, 403, 200, 200, 200),
    ("bias-chart", "GET"): s(302, 403, 403, 200, 200, 200),
    ("bias-compute", "GET"): s(302, 405, 405, 405, 405, 405),
    ("bias-compute", "POST"): s(302, 403, 403, 302, 302, 302),
    ("submit-run", "GET"): s(302, 403, 403, 200, 200, 200),
    ("submit-run", "POST"): s(302, 403, 403, 302, 302, 302),
    ("run-page", "GET"): s(302, 403, 403, 200, 404, 200),
    # whether a run is pooled: admins only (its owner too is refused)
    ("run-pooled", "GET"): s(302, 405, 405, 405, 405, 405),
    ("run-pooled", "POST"): s(302, 403, 403, 403, 404, 302),
    ("run-topup", "GET"): s(302, 405, 405, 405, 405, 405),
    ("run-topup", "POST"): s(302, 403, 403, 403, 404, 302),
    ("run-penalty", "GET"): s(302, 405, 405, 405, 405, 405),
    ("run-penalty", "POST"): s(302, 403, 403, 302, 404, 302),
    ("run-topup-publish", "GET"): s(302, 405, 405, 405, 405, 405),
    ("run-topup-publish", "POST"): s(302, 403, 403, 403, 404, 302),
    ("run-recall-svg", "GET"): s(302, 403, 403, 200, 404, 200),
    ("run-evaluate", "GET"): s(302, 405, 405, 405, 405, 405),
    ("run-evaluate", "POST"): s(302, 403, 403, 302, 404, 302),
    # --- pages: running the judging (staff; signed out: to the sign-in page, others 403) ---
    ("manage-progress", "GET"): s(302, 403, 403, 403, 403, 200),
    # importing a collection: a page of its own, for admins (the plan first: 200)
    ("manage-import", "GET"): s(302, 403, 403, 403, 403, 200),
    ("manage-import", "POST"): s(302, 403, 403, 403, 403, 200),
    ("manage-agreement", "GET"): s(302, 403, 403, 403, 403, 200),
    ("manage-adjudicate", "GET"): s(302, 403, 403, 403, 403, 302),
    ("manage-adjudicate", "POST"): s(302, 403, 403, 403, 403, 302),
    ("manage-publish", "GET"): s(302, 403, 403, 403, 403, 405),
    ("manage-publish", "POST"): s(302, 403, 403, 403, 403, 302),
    ("manage-missing-text", "GET"): s(302, 403, 403, 403, 403, 200),
    ("manage-missing-text-download", "GET"): s(302, 403, 403, 403, 403, 200),
    ("manage-missing-text-import", "GET"): s(302, 403, 403, 403, 403, 405),
    # the admin, without a file: told so on the page it is sent back to
    ("manage-missing-text-import", "POST"): s(302, 403, 403, 403, 403, 302),
    ("manage-quality", "GET"): s(302, 403, 403, 403, 403, 200),
    ("manage-qc-settings", "GET"): s(302, 403, 403, 403, 403, 405),
    ("manage-qc-settings", "POST"): s(302, 403, 403, 403, 403, 302),
    ("manage-gold-add", "GET"): s(302, 403, 403, 403, 403, 405),
    ("manage-gold-add", "POST"): s(302, 403, 403, 403, 403, 302),
    ("manage-exclude", "GET"): s(302, 403, 403, 403, 403, 405),
    ("manage-exclude", "POST"): s(302, 403, 403, 403, 403, 302),
    ("manage-exclusion-lift", "GET"): s(302, 403, 403, 403, 403, 405),
    ("manage-exclusion-lift", "POST"): s(302, 403, 403, 403, 403, 302),
    # --- automatic judges: researchers read them, admins change them; annotators never ----
    # (the imported judge is the researcher's submission: the other researcher gets 404 on it,
    # its audit and its sample, as on another's run)
    ("api-judges", "GET"): s(401, 403, 403, 200, 200, 200),
    ("api-judges", "POST"): s(401, 403, 403, 403, 403, 201),
    # a jury of the campaign's judges (admins make them; researchers read them as judges)
    ("api-juries", "POST"): s(401, 403, 403, 403, 403, 201),
    # a judges' track: researchers submit judges and list their own (the dataset's imported
    # judge is the researcher's submission: the other researcher never reads it, below)
    ("api-judge-submissions", "GET"): s(401, 403, 403, 200, 200, 200),
    ("api-judge-submissions", "POST"): s(401, 403, 403, 201, 201, 201),
    # the judges' meta-evaluation: researchers and admins read it and ask for it (the dataset
    # has none computed: GET says so); another participant's judge is anonymised in it
    ("api-meta-evaluation", "GET"): s(401, 403, 403, 404, 404, 404),
    ("api-meta-evaluation", "POST"): s(401, 403, 403, 202, 202, 202),
    ("meta-evaluation", "GET"): s(302, 403, 403, 200, 200, 200),
    # a participant's submission from the judges' page: to the judge's page once stored
    ("judge-submit", "GET"): s(302, 405, 405, 405, 405, 405),
    ("judge-submit", "POST"): s(302, 403, 403, 302, 302, 302),
    ("meta-evaluation-compute", "GET"): s(302, 405, 405, 405, 405, 405),
    ("meta-evaluation-compute", "POST"): s(302, 403, 403, 302, 302, 302),
    ("api-judge-detail", "GET"): s(401, 403, 403, 200, 404, 200),
    ("api-judge-runs", "POST"): s(401, 403, 403, 403, 403, 202),
    ("api-judge-run", "GET"): s(401, 403, 403, 200, 200, 200),
    ("api-judge-labels", "POST"): s(401, 403, 403, 403, 403, 201),
    # the admin asks to calibrate an imported judge: refused, saying why
    ("api-judge-calibrate", "POST"): s(401, 403, 403, 403, 403, 409),
    # a calibration (a task's record): read as the judge it calibrates
    ("api-calibration", "GET"): s(401, 403, 403, 200, 200, 200),
    ("api-judge-qrels", "POST"): s(401, 403, 403, 403, 403, 201),
    ("judge-list", "GET"): s(302, 403, 403, 200, 200, 200),
    ("judge-list", "POST"): s(302, 403, 403, 403, 403, 302),  # created: to its page
    ("judge-detail", "GET"): s(302, 403, 403, 200, 404, 200),
    ("judge-import", "GET"): s(302, 405, 405, 405, 405, 405),
    ("judge-import", "POST"): s(302, 403, 403, 403, 403, 302),
    ("judge-run", "GET"): s(302, 405, 405, 405, 405, 405),
    ("judge-run", "POST"): s(302, 403, 403, 403, 403, 302),
    ("judge-calibrate", "GET"): s(302, 405, 405, 405, 405, 405),
    # the imported judge is not calibrated: the refusal is flashed on its page
    ("judge-calibrate", "POST"): s(302, 403, 403, 403, 403, 302),
    ("judge-qrels", "GET"): s(302, 405, 405, 405, 405, 405),
    ("judge-qrels", "POST"): s(302, 403, 403, 403, 403, 302),
    # --- audits and human samples: researchers read, admins ask and draw ----------------
    ("api-judge-audits", "POST"): s(401, 403, 403, 403, 403, 202),
    ("api-audit", "GET"): s(401, 403, 403, 200, 404, 200),
    ("api-judge-samples", "POST"): s(401, 403, 403, 403, 403, 201),
    ("api-sample", "GET"): s(401, 403, 403, 200, 404, 200),
    # the sample is drawn in full already: refused, saying why
    ("api-sample-advance", "POST"): s(401, 403, 403, 403, 403, 409),
    ("autojudge-audit", "GET"): s(302, 403, 403, 200, 404, 200),
    # the audit of a judge's answer labels names every run: admins only (the dataset has no
    # answer run: the page says so)
    ("autojudge-answer-audit", "GET"): s(302, 403, 403, 403, 403, 200),
    ("autojudge-audit-compute", "GET"): s(302, 405, 405, 405, 405, 405),
    ("autojudge-audit-compute", "POST"): s(302, 403, 403, 403, 403, 302),
    ("autojudge-samples", "GET"): s(302, 403, 403, 200, 200, 200),
    ("autojudge-samples-create", "GET"): s(302, 405, 405, 405, 405, 405),
    ("autojudge-samples-create", "POST"): s(302, 403, 403, 403, 403, 302),
    ("autojudge-sample", "GET"): s(302, 403, 403, 200, 200, 200),
    ("autojudge-sample-advance", "GET"): s(302, 405, 405, 405, 405, 405),
    ("autojudge-sample-advance", "POST"): s(302, 403, 403, 403, 403, 302),
    # --- suggestions for assessors: admins set them up, researchers read the report -------
    ("suggestions", "GET"): s(302, 403, 403, 200, 200, 200),
    ("suggestions", "POST"): s(302, 403, 403, 403, 403, 302),
    ("api-suggestions", "GET"): s(401, 403, 403, 200, 200, 200),
    ("api-suggestions", "PUT"): s(401, 403, 403, 403, 403, 200),
    # --- nugget banks: admins draft and publish; annotators and admins edit drafts; researchers
    # read published versions (the dataset's draft is not found for them) -----------------
    ("api-nugget-banks", "GET"): s(401, 200, 200, 200, 200, 200),
    ("api-nugget-banks", "POST"): s(401, 403, 403, 403, 403, 201),
    ("api-nugget-bank", "GET"): s(401, 200, 200, 404, 404, 200),
    ("api-nugget-edits", "GET"): s(401, 200, 200, 404, 404, 200),
    ("api-nugget-edits", "POST"): s(401, 201, 201, 403, 403, 201),
    ("api-nugget-bank-publish", "POST"): s(401, 403, 403, 403, 403, 200),
    ("nugget-banks", "GET"): s(302, 200, 200, 200, 200, 200),
    ("nugget-banks", "POST"): s(302, 403, 403, 403, 403, 302),  # drafted: to its page
    ("nugget-bank", "GET"): s(302, 200, 200, 404, 404, 200),
    ("nugget-bank-publish", "GET"): s(302, 405, 405, 405, 405, 405),
    ("nugget-bank-publish", "POST"): s(302, 403, 403, 403, 403, 302),
    ("nugget-topic", "GET"): s(302, 200, 200, 404, 404, 200),
    ("nugget-topic", "POST"): s(302, 302, 302, 403, 403, 302),  # edited: back to the page
    # --- the admin site: everything but its login and logout is for staff ---------------
    ("admin:index", "GET"): s(302, 302, 302, 302, 302, 200),
    ("admin:app_list", "GET"): s(302, 302, 302, 302, 302, 200),
    ("admin:login", "GET"): s(200, 200, 200, 200, 200, 302),  # staff: on to the index
    ("admin:login", "HEAD"): s(200, 200, 200, 200, 200, 200),  # only a GET redirects staff
    # staff sign out by POST only; the others are sent to the admin's login first
    ("admin:logout", "GET"): s(302, 302, 302, 302, 302, 405),
    ("admin:logout", "POST"): s(302, 302, 302, 302, 302, 302),
    ("admin:password_change", "GET"): s(302, 302, 302, 302, 302, 200),
    ("admin:password_change_done", "GET"): s(302, 302, 302, 302, 302, 200),
    ("admin:jsi18n", "GET"): s(302, 302, 302, 302, 302, 200),
    # without its parameters the admin is refused too
    ("admin:autocomplete", "GET"): s(302, 302, 302, 302, 302, 403),
    # the password form of a user (the researcher's)
    ("admin:auth_user_password_change", "GET"): s(302, 302, 302, 302, 302, 200),
    # campaigns have no page outside the admin to go to
    ("admin:view_on_site", "GET"): s(302, 302, 302, 302, 302, 404),
}

# The admin's pages of each registered model, by the admin's status (anonymous and non-staff:
# 302 to the admin's login): changelist, add, change, delete (the confirmation page, GET only:
# writes through the admin are checked by the immutability tests), history.
ADMIN_MODEL_PAGES = ("changelist", "add", "change", "delete", "history")
ADMIN_MODELS: dict[str, dict[str, int]] = {
    "auth_group": dict(changelist=200, add=200, change=200, delete=200, history=200),
    "auth_user": dict(changelist=200, add=200, change=200, delete=200, history=200),
    "authtoken_tokenproxy": dict(changelist=200, add=200, change=200, delete=200, history=200),
    # tasks that follow state changes: read-only, the sweep sends them
    "core_outboxtask": dict(changelist=200, add=403, change=200, delete=403, history=200),
    "core_workerheartbeat": dict(changelist=200, add=200, change=200, delete=200, history=200),
    "campaigns_campaign": dict(changelist=200, add=200, change=200, delete=200, history=200),
    "campaigns_topic": dict(changelist=200, add=200, change=200, delete=200, history=200),
    "campaigns_document": dict(changelist=200, add=200, change=200, delete=200, history=200),
    # runs arrive through the API or import_run
    "campaigns_run": dict(changelist=200, add=403, change=200, delete=200, history=200),
    # versions are imported or published; a stored one is shown read-only
    "assessments_qrelsversion": dict(changelist=200, add=403, change=200, delete=403, history=200),
    # judgments and their history are recorded by annotators; the admin shows them read-only
    "assessments_judgment": dict(changelist=200, add=403, change=200, delete=403, history=200),
    "assessments_judgmentchange": dict(
        changelist=200, add=403, change=200, delete=403, history=200
    ),
    "pools_poolversion": dict(changelist=200, add=403, change=200, delete=200, history=200),
    "pools_pooldocument": dict(changelist=200, add=403, change=200, delete=200, history=200),
}
for _model, _pages in ADMIN_MODELS.items():
    assert set(_pages) == set(ADMIN_MODEL_PAGES), _model
    for _page, _status in _pages.items():
        MATRIX[(f"admin:{_model}_{_page}", "GET")] = s(302, 302, 302, 302, 302, _status)

# URL patterns without a name that the matrix cannot address, with the reason.
UNNAMED_ALLOWED = {
    "admin/(?P<url>.*)$": "the admin's catch-all: a 404 or a redirect to a slash URL",
    "<path:object_id>/": "the admin's old change URL, redirecting to <id>/change/",
}


def body(name: str, method: str, role: str, d: Any) -> tuple[str, Any] | None:
    """The request body for a row: (kind, data), kind json | form | multipart; None: no body.
    Valid bodies, so that a role that passes the check gets the real answer (201, 200, ...)."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    from tests.authz_dataset import PASSWORD

    user = d.users.get(role)
    key = (name, method)
    if key == ("api-token", "POST"):
        username = user.get_username() if user else "nobody"
        return "json", {"username": username, "password": PASSWORD if user else "wrong"}
    if key == ("login", "POST"):
        username = user.get_username() if user else "nobody"
        return "form", {"username": username, "password": PASSWORD if user else "wrong"}
    if key == ("api-collections", "POST"):
        return "multipart", {
            "name": f"Matrix collection {role}",
            "qrels": SimpleUploadedFile("q.txt", b"901 0 c-1 1\n"),
            "runs": [SimpleUploadedFile("input.m", b"901 Q0 c-1 1 1.0 m\n")],
        }
    if key == ("manage-users", "POST"):
        return "form", {"username": f"matrix-new-{role}", "role": ["annotator"]}
    if key == ("manage-user-roles", "POST"):
        return "form", {"role": ["researcher"]}
    if key == ("manage-user-active", "POST"):
        return "form", {"active": "0"}
    if key == ("set-password", "POST"):
        return "form", {
            "password1": "a-long-and-unusual-passphrase-41",
            "password2": "a-long-and-unusual-passphrase-41",
        }
    if key == ("manage-import", "POST"):
        return "form", {"name": f"Matrix import {role}", "pooled_runs": "none"}
    if key == ("campaign-list", "POST"):
        return "json", {"name": "Matrix campaign 2"}
    if key == ("campaign-detail", "PUT"):
        return "json", {"name": "Matrix campaign renamed", "description": "changed"}
    if key == ("campaign-detail", "PATCH"):
        return "json", {"description": "changed"}
    if key == ("campaign-topics", "POST"):
        topic = b'{"qid": "499", "title": "new topic"}\n'
        return "multipart", {"file": SimpleUploadedFile("t.jsonl", topic), "format": "jsonl"}
    if key == ("campaign-documents", "POST"):
        doc = b'{"docid": "new-doc", "title": "t", "text": "x"}\n'
        return "multipart", {"file": SimpleUploadedFile("d.jsonl", doc), "format": "jsonl"}
    if key == ("campaign-qrels", "POST"):
        return "multipart", {"file": SimpleUploadedFile("q.txt", b"401 0 d401-1 2\n")}
    if key == ("campaign-runs", "POST"):
        return "json", {"tag": f"matrix-new-{role}", "results": {"401": {"d401-1": 1.0}}}
    if key == ("campaign-pools", "POST"):
        return "json", {}
    if key == ("run-detail", "PATCH"):
        return "json", {"description": "changed"}
    if key == ("api-run-topup", "POST"):
        return "json", {"budget": 1}
    if key in {("api-run-evaluations", "POST"), ("api-bias", "POST")}:
        return "json", {"mode": "trec_eval"} if name == "api-run-evaluations" else {"depth": 2}
    if key == ("lease-judgment", "POST"):
        return "json", {"grade": 2}
    if key == ("judgment-detail", "PATCH"):
        return "json", {"grade": 0 if d.judgment.grade else 2}
    if key == ("api-quality", "PATCH"):
        return "json", {"gold_rate": 0.1}
    if key == ("api-gold", "POST"):
        row = {"topic": d.judgment.topic.qid, "docid": d.judgment.docid, "grade": 1}
        return "json", {"rows": [row]}
    if key == ("api-exclusions", "POST"):
        return "json", {"annotator": d.judgment.annotator.get_username(), "reason": "matrix"}
    if key == ("api-exclusion-lift", "POST"):
        return "json", {"reason": "matrix"}
    if key == ("api-adjudications", "POST"):
        return "json", {"topic": d.judgment.topic.qid, "docid": d.judgment.docid, "grade": 0}
    if key in {("annotate-submit", "POST"), ("annotate-skip", "POST")}:
        return "form", {"lease": str(d.lease.pk), "grade": "2"}
    if key == ("annotate-renew", "POST"):
        return "form", {"lease": str(d.lease.pk)}
    if key == ("annotate-judged", "POST"):
        return "form", {"grade": "0" if d.judgment.grade else "2"}
    if key == ("manage-adjudicate", "POST"):
        return "form", {"topic": d.judgment.topic.qid, "docid": d.judgment.docid, "grade": "0"}
    if key == ("submit-run", "POST"):
        return "form", {"paste": f"401 Q0 d401-1 1 1.0 matrix-page-{role}\n"}
    if key == ("suggestions", "POST"):
        return "form", {"off": "1"}
    if key == ("api-suggestions", "PUT"):
        return "json", {"enabled": False}
    if key == ("run-pooled", "POST"):
        return "form", {"pooled": "no"}
    if key == ("bias-compute", "POST"):
        return "form", {"depth": "2"}
    if key == ("api-judge-submissions", "POST"):
        upload = SimpleUploadedFile("labels.txt", b"401 0 d401-1 1\n")
        return "multipart", {
            "name": f"matrix-{role.replace('_', '-')}",
            "model": "m",
            "saw_human_qrels": "false",
            "file": upload,
        }
    if key == ("judge-submit", "POST"):
        upload = SimpleUploadedFile("labels.txt", b"401 0 d401-1 1\n")
        name = f"matrix-page-{role.replace('_', '-')}"
        return "multipart", {"name": name, "model": "m", "saw_human_qrels": "no", "file": upload}
    if key == ("api-meta-evaluation", "POST"):
        return "json", {"measure": "P@2"}
    if key == ("meta-evaluation-compute", "POST"):
        return "form", {"qrels": str(d.qrels.number), "pool": str(d.pool.number)}
    if key == ("api-judges", "POST"):
        return "json", {"kind": "imported", "name": "matrix-new", "model": "m"}
    if key == ("api-juries", "POST"):
        members = [d.judge.pk, d.embedding_judge.pk]
        return "json", {"name": "matrix-jury", "members": members, "method": "majority"}
    if key == ("judge-list", "POST"):
        return "form", {"kind": "imported", "name": "matrix-page", "model": "m"}
    if key == ("api-judge-runs", "POST"):
        return "json", {"pool": d.pool.number}
    if key == ("judge-run", "POST"):
        return "form", {"pool": str(d.pool.number)}
    if key in {("api-judge-labels", "POST"), ("judge-import", "POST")}:
        upload = SimpleUploadedFile("labels.txt", b"402 0 d402-2 1\n")
        return "multipart", {"judge": str(d.judge.pk), "file": upload, "format": "trec"}
    if key == ("api-judge-calibrate", "POST"):
        return "json", {"human": d.qrels.number}
    if key == ("judge-calibrate", "POST"):
        return "form", {"human": str(d.qrels.number)}
    if key == ("api-judge-qrels", "POST"):
        return "json", {"kind": "automatic"}
    if key == ("judge-qrels", "POST"):
        return "form", {"kind": "automatic", "pool": str(d.pool.number)}
    if key == ("api-judge-audits", "POST"):
        return "json", {"human": d.qrels.number, "pool": d.pool.number}
    if key == ("autojudge-audit-compute", "POST"):
        return "form", {"qrels": str(d.qrels.number), "pool": str(d.pool.number)}
    if key == ("api-nugget-banks", "POST"):
        return "json", {"source": "copied", "based_on": 1}
    if key == ("nugget-banks", "POST"):
        return "form", {"source": "copied", "based_on": "1"}
    if key in {("api-nugget-edits", "POST"), ("nugget-topic", "POST")}:
        from judging.assessments.models import NuggetBank
        from judging.assessments.nugget_selectors import bank_topics

        draft = NuggetBank.objects.get(campaign=d.campaign, number=2)
        (shown,) = bank_topics(draft, qid="401")
        add = {"topic": "401", "op": "add", "text": "a new nugget", "importance": "okay"}
        if name.startswith("api-"):
            return "json", add | {"base": shown.last_edit}
        return "form", add | {"base": str(shown.last_edit)}
    if key == ("api-judge-samples", "POST"):
        return "json", {"pool": d.pool.number, "design": "uniform", "budget": 2}
    if key == ("autojudge-samples-create", "POST"):
        return "form", {
            "judge": str(d.judge.pk),
            "pool": str(d.pool.number),
            "design": "uniform",
            "budget": "2",
        }
    return None
