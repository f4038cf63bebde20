"""Pooljudge settings: everything from the environment, safe local defaults.

Unset, the service runs on a SQLite file with Celery tasks executed inline (eager), which is what
``make demo`` uses. Set ``DATABASE_URL`` and ``CELERY_BROKER_URL`` for PostgreSQL and Redis.
Malformed values raise ``ImproperlyConfigured`` at start-up (see ``judging/env.py``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import django_stubs_ext
from django.core.exceptions import ImproperlyConfigured

from judging.core.secret_key import HOW_TO_GENERATE, secret_key_problem
from judging.env import (
    cache_config,
    database_config,
    env_bool,
    env_bytes,
    env_int,
    env_list,
    env_str,
    env_url,
)

# Lets the admin and querysets be subscripted at run time (ModelAdmin[Run]) for typing.
django_stubs_ext.monkeypatch()

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("POOLJUDGE_VAR_DIR") or BASE_DIR / "var")
TESTING = "pytest" in sys.modules or env_bool("POOLJUDGE_TESTING", False)

DEBUG = env_bool("DJANGO_DEBUG", True)

_DEV_SECRET = "django-insecure-local-only-pooljudge-demo-key-never-use-in-production"
SECRET_KEY = env_str("DJANGO_SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("DJANGO_SECRET_KEY must be set when DJANGO_DEBUG is off")
    SECRET_KEY = _DEV_SECRET
elif not DEBUG and (_SECRET_PROBLEM := secret_key_problem(SECRET_KEY)):
    # The placeholder of .env.example (or any known or weak key) never runs in production;
    # `check --deploy` names it too (pooljudge.E001), for a deployment prepared with DEBUG on.
    raise ImproperlyConfigured(
        f"DJANGO_SECRET_KEY is unfit for production: {_SECRET_PROBLEM}. "
        f"Generate one with: {HOW_TO_GENERATE}"
    )

ALLOWED_HOSTS = env_list(
    "DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"] if DEBUG else []
)
if not DEBUG and not ALLOWED_HOSTS:
    raise ImproperlyConfigured("DJANGO_ALLOWED_HOSTS must list the host names when DEBUG is off")
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "judging.core",
    "judging.campaigns",
    "judging.assessments",
    "judging.pools",
    "judging.evaluation",
    "judging.autojudge",
    "judging.workflows",
    "judging.api",
    "judging.web",
    "judging.demo",
    "judging.cli",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "judging.core.csp.ContentSecurityPolicyMiddleware",
]

if not DEBUG:
    # gunicorn serves the collected static files itself (runserver does it in DEBUG).
    MIDDLEWARE.insert(1, "whitenoise.middleware.WhiteNoiseMiddleware")

ROOT_URLCONF = "judging.urls"
WSGI_APPLICATION = "judging.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "judging.web.context.roles",
            ],
        },
    },
]

DATABASE_URL = env_str("DATABASE_URL") or f"sqlite:///{VAR_DIR / 'pooljudge.sqlite3'}"
DATABASES = {"default": database_config(DATABASE_URL, base_dir=BASE_DIR)}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # A file (not :memory:) so that a Celery worker started by a test can see the test database.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test.sqlite3")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
if TESTING:
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

LANGUAGE_CODE = "en-us"
TIME_ZONE = env_str("DJANGO_TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(env_str("DJANGO_STATIC_ROOT") or BASE_DIR / "staticfiles")
STATICFILES_DIRS = [BASE_DIR / "judging" / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG or TESTING
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# --- Uploads -------------------------------------------------------------------------------
# Largest run/qrels/topic file accepted as received; larger answers 413.
POOLJUDGE_MAX_UPLOAD_BYTES = env_bytes("POOLJUDGE_MAX_UPLOAD_BYTES", 256 * 1024**2)
# Largest output of a gzip file, counted as it is decompressed (413 above, so a gzip bomb stops
# early). Unset or 0: the same as the file's limit as received.
POOLJUDGE_MAX_DECOMPRESSED_BYTES = env_bytes("POOLJUDGE_MAX_DECOMPRESSED_BYTES", 0) or None
# Largest document collection accepted through the API (management commands have no limit).
POOLJUDGE_MAX_DOCUMENT_UPLOAD_BYTES = env_bytes("POOLJUDGE_MAX_DOCUMENT_UPLOAD_BYTES", 1024**3)
# A whole collection in one request (API and the import page): all its files together; each
# file also keeps its own limit above.
POOLJUDGE_MAX_COLLECTION_UPLOAD_BYTES = env_bytes(
    "POOLJUDGE_MAX_COLLECTION_UPLOAD_BYTES", 2 * 1024**3
)
# Where the import page keeps a collection's files between its plan and its apply, and how long
# a plan not applied is kept (removed at the page's next submit after that).
POOLJUDGE_STAGING_DIR = Path(env_str("POOLJUDGE_STAGING_DIR") or VAR_DIR / "staging")
POOLJUDGE_STAGING_SECONDS = env_int("POOLJUDGE_STAGING_SECONDS", 24 * 3600, minimum=60)
# Most topic ids the pooling of an imported collection may be inferred on (--infer-topics,
# infer_topics: ranges written out); more is a 400 naming the field.
POOLJUDGE_MAX_INFER_TOPICS = env_int("POOLJUDGE_MAX_INFER_TOPICS", 100_000, minimum=1)
# Files in one request (Django's own limit, 100 by default): a TREC collection has more runs.
DATA_UPLOAD_MAX_NUMBER_FILES = env_int("DJANGO_DATA_UPLOAD_MAX_NUMBER_FILES", 1000)
DATA_UPLOAD_MAX_MEMORY_SIZE = env_bytes("DJANGO_DATA_UPLOAD_MAX_MEMORY_SIZE", 64 * 1024**2)
FILE_UPLOAD_MAX_MEMORY_SIZE = env_bytes("DJANGO_FILE_UPLOAD_MAX_MEMORY_SIZE", 8 * 1024**2)
POOLJUDGE_MAX_PROBLEMS = env_int("POOLJUDGE_MAX_PROBLEMS", 100, minimum=1)
# Longest line of a run, qrels or topics file (400 naming the line above; a documents file's
# lines are bounded by POOLJUDGE_MAX_DOCUMENT_CHARS below).
POOLJUDGE_MAX_LINE_BYTES = env_bytes("POOLJUDGE_MAX_LINE_BYTES", 64 * 1024) or 64 * 1024
# Longest qid, docid and run tag in UTF-8 bytes, at submission and every import (400 naming the
# line and the field). At most what the database columns hold: 255 characters for qids and tags,
# 1024 for docids (the default docid limit is 256 bytes).
POOLJUDGE_MAX_QID_BYTES = env_int("POOLJUDGE_MAX_QID_BYTES", 255, minimum=1, maximum=255)
POOLJUDGE_MAX_DOCID_BYTES = env_int("POOLJUDGE_MAX_DOCID_BYTES", 256, minimum=1, maximum=1024)
POOLJUDGE_MAX_TAG_BYTES = env_int("POOLJUDGE_MAX_TAG_BYTES", 255, minimum=1, maximum=255)
# Longest text of one stored document, in characters, at every import (API, pages, commands):
# a longer document is a problem naming its docid and size, and nothing of the file is stored.
# A million characters is a book of some 500 pages, far more than an assessor reads to judge
# one document, and bounds what one document costs the database, a worker and a page of text.
POOLJUDGE_MAX_DOCUMENT_CHARS = env_int("POOLJUDGE_MAX_DOCUMENT_CHARS", 1_000_000, minimum=1)

# --- Tasks that are never lost (the outbox, its sweep, heartbeats) -------------------------
# A running task or pool build records that it is alive this often (a thread in the worker).
POOLJUDGE_HEARTBEAT_SECONDS = env_int("POOLJUDGE_HEARTBEAT_SECONDS", 10, minimum=1)
# A started task or pool build with no heartbeat for this long has lost its worker: the API says
# "stale" and the sweep sends it again (the new delivery takes the build over).
POOLJUDGE_STALE_SECONDS = env_int("POOLJUDGE_STALE_SECONDS", 60, minimum=1)
# How often every worker sweeps the outbox (sends what was never sent or was lost). Stale + sweep
# is the worst-case takeover time of a dead build: 60 + 30 s by default, under two minutes.
POOLJUDGE_SWEEP_SECONDS = env_int("POOLJUDGE_SWEEP_SECONDS", 30, minimum=1)
# A task sent but not started after this long is sent again (the broker may have lost it); the
# wait doubles with each send, up to an hour, so a long queue does not fill with copies.
POOLJUDGE_RESEND_SECONDS = env_int("POOLJUDGE_RESEND_SECONDS", 300, minimum=1)
# Sending gives up after this long when the broker does not answer (the row stays pending and
# the request still succeeds).
POOLJUDGE_SEND_TIMEOUT_SECONDS = env_int("POOLJUDGE_SEND_TIMEOUT_SECONDS", 2, minimum=1)
# Finished outbox rows are deleted by the sweep after this many days.
POOLJUDGE_OUTBOX_KEEP_DAYS = env_int("POOLJUDGE_OUTBOX_KEEP_DAYS", 7, minimum=1)
# Workers run the sweep on a timer (0: run ``manage.py sweep`` as its own process instead).
POOLJUDGE_SWEEP_IN_WORKER = env_bool("POOLJUDGE_SWEEP_IN_WORKER", True)

# --- Request parameters --------------------------------------------------------------------
# Largest page of an API list (?limit=); a larger limit is a 400.
POOLJUDGE_MAX_PAGE_SIZE = env_int("POOLJUDGE_MAX_PAGE_SIZE", 1000, minimum=1)
# Largest page of documents listed with their text (?include=text), and its default size: up
# to this many times POOLJUDGE_MAX_DOCUMENT_CHARS in one answer, streamed.
POOLJUDGE_MAX_TEXT_PAGE_SIZE = env_int("POOLJUDGE_MAX_TEXT_PAGE_SIZE", 50, minimum=1)
# Deepest bias report that may be asked for (?depth=), and the largest cut-off of its measure
# (P@k); the campaign's own pool depth is always allowed.
POOLJUDGE_BIAS_MAX_DEPTH = env_int("POOLJUDGE_BIAS_MAX_DEPTH", 1000, minimum=1)
POOLJUDGE_BIAS_MAX_CUTOFF = env_int("POOLJUDGE_BIAS_MAX_CUTOFF", 1000, minimum=1)
# New bias reports one user may ask for per hour (API POST and the page's Compute button); the
# next is a 429 with Retry-After. Reading, and reports already stored, are not counted.
POOLJUDGE_BIAS_REPORTS_PER_HOUR = env_int("POOLJUDGE_BIAS_REPORTS_PER_HOUR", 20, minimum=1)
# Most topics a bias report's topic subset (?topics=601-650,tag:hard) may name: a larger
# subset (or a range wider than this) is a 400 naming `topics`.
POOLJUDGE_BIAS_MAX_TOPICS = env_int("POOLJUDGE_BIAS_MAX_TOPICS", 1000, minimum=1)

# Runs evaluated per task when a qrels version is published or imported (its qrels are read and
# prepared once per task): the campaign's runs are spread over that many tasks, one per worker.
POOLJUDGE_EVAL_RUNS_PER_TASK = env_int("POOLJUDGE_EVAL_RUNS_PER_TASK", 10, minimum=1)
# Open items (unjudged slots, overlap slots needing another assessor, items waiting for text)
# listed one by one in a publish answer and on the progress page; the counts are always whole.
POOLJUDGE_OPEN_ITEMS_LISTED = env_int("POOLJUDGE_OPEN_ITEMS_LISTED", 100, minimum=0)

# --- REST API ------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "judging.api.authentication.ExpiringTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "judging.api.pagination.BoundedLimitOffsetPagination",
    "PAGE_SIZE": 100,
    "EXCEPTION_HANDLER": "judging.api.errors.exception_handler",
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
    # ?format=csv is ours (downloads), not DRF's renderer override
    "URL_FORMAT_OVERRIDE": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Pooljudge API",
    "DESCRIPTION": "Pooled relevance judging: campaigns, runs, pools, judgments and evaluation.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": "/api/v1",
    # Swagger UI served from our own static files: no CDN, works offline.
    "SWAGGER_UI_DIST": "SIDECAR",
    "PREPROCESSING_HOOKS": ["judging.api.schema.drop_alias_paths"],
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "judging.api.schema.document_errors",  # every error answer, in the one shape
    ],
    "REDOC_DIST": "SIDECAR",
    # several fields are named "kind" (a qrels version's, a judge's, the qrels a judge builds):
    # each set of choices gets its own name
    "ENUM_NAME_OVERRIDES": {
        "QrelsKindEnum": "judging.assessments.models.QrelsKind",
        "JudgeKindEnum": "judging.autojudge.models.JudgeKind",
        "JudgeQrelsKindEnum": [("automatic", "automatic"), ("hybrid", "hybrid")],
        # a judge run's and a calibration's state: one set of choices, one name
        "TaskStateEnum": "judging.autojudge.models.AuditState",
    },
}

# --- Celery --------------------------------------------------------------------------------
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL")
CELERY_BROKER_CONFIGURED = bool(CELERY_BROKER_URL)
if CELERY_BROKER_URL and not CELERY_BROKER_URL.startswith(("redis://", "rediss://", "memory://")):
    raise ImproperlyConfigured(
        f"CELERY_BROKER_URL={CELERY_BROKER_URL!r}: expected a redis:// or rediss:// URL"
    )
# Without a broker, tasks run inline: the embedded default needs no Redis.
# Tests run tasks inline too, except the ones that start a real worker (they switch it off).
CELERY_TASK_ALWAYS_EAGER = env_bool(
    "CELERY_TASK_ALWAYS_EAGER", not CELERY_BROKER_CONFIGURED or TESTING
)
if not CELERY_BROKER_CONFIGURED:
    CELERY_BROKER_URL = "memory://"  # never used for sending: tasks run inline
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_IGNORE_RESULT = True  # state users see lives in our tables, not a result backend
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_TASK_DEFAULT_QUEUE", "pooljudge")
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 3600),
    # A send must not hang a request: connect quickly or give up (the outbox sends it later).
    "socket_connect_timeout": POOLJUDGE_SEND_TIMEOUT_SECONDS,
    "socket_timeout": POOLJUDGE_SEND_TIMEOUT_SECONDS * 5,
}
CELERY_BROKER_CONNECTION_TIMEOUT = POOLJUDGE_SEND_TIMEOUT_SECONDS
# One quick retry when publishing, not Celery's default of three: the outbox is the retry.
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.2,
}
# A worker that lost Redis tries to reconnect forever (not 100 times), every few seconds at most.
CELERY_BROKER_CONNECTION_MAX_RETRIES = None

# --- Security (production) -----------------------------------------------------------------
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", not DEBUG)
SESSION_COOKIE_SECURE = env_bool("DJANGO_SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = env_bool("DJANGO_CSRF_COOKIE_SECURE", not DEBUG)
SECURE_HSTS_SECONDS = env_int("DJANGO_SECURE_HSTS_SECONDS", 0 if DEBUG else 31536000, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", not DEBUG)
SECURE_HSTS_PRELOAD = env_bool("DJANGO_SECURE_HSTS_PRELOAD", not DEBUG)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SILENCED_SYSTEM_CHECKS = env_list("DJANGO_SILENCED_SYSTEM_CHECKS", [])

# Every page and answer: scripts, styles, images, fonts and connections from our origin only, no
# inline script (the pages have none), no plugins, no framing, forms posting to us only.
POOLJUDGE_CONTENT_SECURITY_POLICY = env_str(
    "POOLJUDGE_CONTENT_SECURITY_POLICY",
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "font-src 'self'; connect-src 'self'; object-src 'none'; frame-ancestors 'none'; "
    "base-uri 'self'; form-action 'self'",
)

# Sign-in throttling (login page, admin login, token endpoint; judging/core/login_throttle.py):
# failures per (username, address) and per address within a window lock that pair or address
# until the window ends; failures per username lock it for a time that doubles with each lock.
# An address that signed in to the account before is held by its own (pair) failures only.
POOLJUDGE_LOGIN_MAX_FAILURES_PER_USER_AND_IP = env_int(
    "POOLJUDGE_LOGIN_MAX_FAILURES_PER_USER_AND_IP", 10, minimum=1
)
POOLJUDGE_LOGIN_MAX_FAILURES_PER_IP = env_int("POOLJUDGE_LOGIN_MAX_FAILURES_PER_IP", 50, minimum=1)
POOLJUDGE_LOGIN_MAX_FAILURES_PER_USER = env_int(
    "POOLJUDGE_LOGIN_MAX_FAILURES_PER_USER", 10, minimum=1
)
POOLJUDGE_LOGIN_WINDOW_SECONDS = env_int("POOLJUDGE_LOGIN_WINDOW_SECONDS", 900, minimum=1)
POOLJUDGE_LOGIN_LOCK_SECONDS = env_int("POOLJUDGE_LOGIN_LOCK_SECONDS", 60, minimum=1)
POOLJUDGE_LOGIN_MAX_LOCK_SECONDS = env_int("POOLJUDGE_LOGIN_MAX_LOCK_SECONDS", 3600, minimum=1)
POOLJUDGE_LOGIN_KNOWN_ADDRESS_SECONDS = env_int(
    "POOLJUDGE_LOGIN_KNOWN_ADDRESS_SECONDS", 90 * 86400, minimum=60
)
# how long a human sample's corrected estimates stay in the shared cache; the key holds everything
# they rest on (the people's grades, the judge's labels, the runs, the level), so a change to any
# of them is a new computation whatever this says
POOLJUDGE_ESTIMATE_CACHE_SECONDS = env_int("POOLJUDGE_ESTIMATE_CACHE_SECONDS", 3600, minimum=0)
# Reverse proxies in front of the web server that append to X-Forwarded-For (0: none, the client
# is REMOTE_ADDR). Set it to the number of proxies that you run, never more: a client can write
# any X-Forwarded-For it likes.
POOLJUDGE_TRUSTED_PROXY_HOPS = env_int("POOLJUDGE_TRUSTED_PROXY_HOPS", 0, minimum=0)
# API tokens expire this long after they were issued (401 then; POST /api/v1/auth/token/ issues a
# new one; DELETE revokes one's own, admins revoke any in the admin).
POOLJUDGE_TOKEN_TTL_SECONDS = env_int("POOLJUDGE_TOKEN_TTL_SECONDS", 30 * 86400, minimum=60)
# A set-password link (an invitation, or a new password for an existing account) stays valid this
# long, and for one use (judging/core/password_links.py).
POOLJUDGE_PASSWORD_LINK_SECONDS = env_int("POOLJUDGE_PASSWORD_LINK_SECONDS", 7 * 86400, minimum=60)
# The service's address as its users reach it: the start of the links that `manage.py create_user
# --invite` prints (the pages build theirs from the request).
POOLJUDGE_SITE_URL = env_url("POOLJUDGE_SITE_URL", "http://127.0.0.1:8000")
# Items the judging page leases ahead of the one being read, so that a grade key shows the next
# document at once (0: one lease at a time, each judgment fetches the next).
POOLJUDGE_PREFETCH = env_int("POOLJUDGE_PREFETCH", 1, minimum=0, maximum=5)

# The cache holds the sign-in counters, so every web worker must share it: Redis (by default the
# broker's, when one is configured) or the database cache ("db"); one process's memory for the
# embedded default and the tests. Nothing needs it to judge: while it cannot be reached
# (judging/core/cache.py) a process keeps what it caches in its own memory, trying the shared
# cache again after POOLJUDGE_CACHE_RETRY_SECONDS; Redis is given up on after
# POOLJUDGE_CACHE_TIMEOUT_SECONDS of connecting or waiting for an answer.
POOLJUDGE_CACHE_TIMEOUT_SECONDS = env_int("POOLJUDGE_CACHE_TIMEOUT_SECONDS", 1, minimum=1)
POOLJUDGE_CACHE_RETRY_SECONDS = env_int("POOLJUDGE_CACHE_RETRY_SECONDS", 10, minimum=1)
CACHES = {
    "default": cache_config(
        env_str("POOLJUDGE_CACHE_URL")
        or (
            CELERY_BROKER_URL if CELERY_BROKER_URL.startswith("redis") and not TESTING else "locmem"
        ),
        timeout=POOLJUDGE_CACHE_TIMEOUT_SECONDS,
    )
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "filters": {
        "client_errors": {"()": "judging.core.log_filters.ClientErrorsWithoutTraceback"},
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("DJANGO_LOG_LEVEL", "INFO")},
    "loggers": {
        # Django's default console handler on "django" (DEBUG only) printed every line a second
        # time beside the root's: the root's console is the one
        "django": {"handlers": []},
        # a refusal (403) or a 404 is one warning line, without the exception's traceback
        "django.request": {"filters": ["client_errors"]},
        "django.db.backends": {"level": "WARNING"},
        # With tasks inline, Celery still opens an in-memory connection, and kombu complains
        # that it has no host name: noise, not a problem.
        "kombu.connection": {"level": "WARNING" if CELERY_BROKER_CONFIGURED else "ERROR"},
    },
}

VAR_DIR.mkdir(parents=True, exist_ok=True)

# versus: the per-query comparison of two runs (judging/evaluation/versus.py): both rankings of a
# topic side by side to this depth by default, and at most this deep when asked (?depth=).
POOLJUDGE_VERSUS_DEPTH = env_int("POOLJUDGE_VERSUS_DEPTH", 20, minimum=1, maximum=1000)
POOLJUDGE_VERSUS_MAX_DEPTH = env_int("POOLJUDGE_VERSUS_MAX_DEPTH", 100, minimum=1, maximum=1000)
# signif: the significance matrix (all pairs of runs). A matrix of m runs has m(m-1)/2 pairs:
# the resampling tests (randomization, bootstrap; 10,000 resamples a pair) are limited to
# POOLJUDGE_SIGNIFICANCE_MAX_RUNS runs (40: 780 pairs), the paired t-test, Tukey's HSD and the
# comparison against one baseline (m - 1 tests) to POOLJUDGE_SIGNIFICANCE_MAX_RUNS_FAST (150:
# 11,175 pairs). Without a choice of runs the matrix shows the best runs by the measure, up to
# the limit, and says so.
POOLJUDGE_SIGNIFICANCE_MAX_RUNS = env_int("POOLJUDGE_SIGNIFICANCE_MAX_RUNS", 40, minimum=2)
POOLJUDGE_SIGNIFICANCE_MAX_RUNS_FAST = env_int(
    "POOLJUDGE_SIGNIFICANCE_MAX_RUNS_FAST", 150, minimum=2
)
# charts: the stored Recall@k curve of an evaluation reaches the run's longest ranking, at most
# this deep (k = 1..100 stored one by one, then log-spaced; judging/evaluation/services.py).
POOLJUDGE_CURVE_MAX_DEPTH = env_int("POOLJUDGE_CURVE_MAX_DEPTH", 1000, minimum=1, maximum=100_000)
# board: the leaderboard's exports (issue 16 points 1 and 5). Runs in one per-query export, and
# paired tests against a baseline in one leaderboard export (one per run and measure, with a
# bootstrap CI of the difference each, computed while the request waits: tens of ms each).
POOLJUDGE_EXPORT_MAX_RUNS = env_int("POOLJUDGE_EXPORT_MAX_RUNS", 500, minimum=1)
POOLJUDGE_EXPORT_MAX_COMPARISONS = env_int("POOLJUDGE_EXPORT_MAX_COMPARISONS", 300, minimum=1)
# autojudge: automatic judges (judging/autojudge, issue 17). Chat endpoints are named here, never
# stored: a judge keeps only the endpoint's name, so URLs and keys stay out of the database, the
# pages, the API and the logs. POOLJUDGE_LLM_ENDPOINTS is JSON
# {"name": {"base_url": "http://host:8000/v1", "api_key_env": "VAR_WITH_THE_KEY"}} (or "api_key"
# inline); POOLJUDGE_LLM_BASE_URL / POOLJUDGE_LLM_API_KEY define the endpoint named "default".
POOLJUDGE_LLM_ENDPOINTS: dict[str, dict[str, str]] = {}
if env_str("POOLJUDGE_LLM_ENDPOINTS"):
    import json as _json

    POOLJUDGE_LLM_ENDPOINTS = _json.loads(env_str("POOLJUDGE_LLM_ENDPOINTS"))
if env_str("POOLJUDGE_LLM_BASE_URL"):
    POOLJUDGE_LLM_ENDPOINTS.setdefault(
        "default",
        {
            "base_url": env_str("POOLJUDGE_LLM_BASE_URL"),
            "api_key": env_str("POOLJUDGE_LLM_API_KEY"),
        },
    )
# Per endpoint call: seconds before a request times out, retries after a 429/5xx/timeout (with
# exponential backoff, Retry-After honoured), and requests per minute (0: no limit).
POOLJUDGE_LLM_TIMEOUT_SECONDS = env_int("POOLJUDGE_LLM_TIMEOUT_SECONDS", 60, minimum=1)
POOLJUDGE_LLM_MAX_RETRIES = env_int("POOLJUDGE_LLM_MAX_RETRIES", 4, minimum=0, maximum=20)
POOLJUDGE_LLM_REQUESTS_PER_MINUTE = env_int("POOLJUDGE_LLM_REQUESTS_PER_MINUTE", 60, minimum=0)
# Labels a judge run writes per transaction (progress is saved after each batch).
POOLJUDGE_AUTOJUDGE_BATCH = env_int("POOLJUDGE_AUTOJUDGE_BATCH", 50, minimum=1)
# Non-relevant pool documents each robustness probe of a judge audit alters and asks again.
POOLJUDGE_AUTOJUDGE_PROBE_ITEMS = env_int("POOLJUDGE_AUTOJUDGE_PROBE_ITEMS", 30, minimum=1)
# Rows in one imported label file.
POOLJUDGE_AUTOJUDGE_MAX_LABELS = env_int("POOLJUDGE_AUTOJUDGE_MAX_LABELS", 2_000_000, minimum=1)
