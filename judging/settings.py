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

from judging.core import conf
from judging.core.secret_key import HOW_TO_GENERATE, secret_key_problem
from judging.env import (
    cache_config,
    database_config,
    env_bool,
    env_bytes,
    env_int,
    env_list,
    env_str,
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

# --- Pooljudge's own settings --------------------------------------------------------------
# Every cap and knob of Pooljudge, in a few groups declared once in judging/core/conf.py with
# their variables, defaults, types and meanings (docs/reference/settings.md is generated from
# them): settings.POOLJUDGE_UPLOADS.max_upload_bytes is POOLJUDGE_MAX_UPLOAD_BYTES, and so on.
POOLJUDGE_UPLOADS = conf.Uploads.from_env(staging_dir=VAR_DIR / "staging")
POOLJUDGE_API = conf.Api.from_env()
POOLJUDGE_TASKS = conf.Tasks.from_env()
POOLJUDGE_JUDGING = conf.Judging.from_env()
POOLJUDGE_EVALUATION = conf.Evaluation.from_env()
POOLJUDGE_AUTOJUDGE = conf.Autojudge.from_env()
POOLJUDGE_SECURITY = conf.Security.from_env()
POOLJUDGE_CACHE = conf.Cache.from_env()

# --- Uploads (Django's own limits) ---------------------------------------------------------
# Files in one request (Django's own limit, 100 by default): a TREC collection has more runs.
DATA_UPLOAD_MAX_NUMBER_FILES = env_int("DJANGO_DATA_UPLOAD_MAX_NUMBER_FILES", 1000)
DATA_UPLOAD_MAX_MEMORY_SIZE = env_bytes("DJANGO_DATA_UPLOAD_MAX_MEMORY_SIZE", 64 * 1024**2)
FILE_UPLOAD_MAX_MEMORY_SIZE = env_bytes("DJANGO_FILE_UPLOAD_MAX_MEMORY_SIZE", 8 * 1024**2)


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
        "judging.api.schema.add_result_components",  # the result types' schemas
    ],
    "REDOC_DIST": "SIDECAR",
    # several fields are named "kind" (a qrels version's, a judge's, the qrels a judge builds):
    # each set of choices gets its own name
    "ENUM_NAME_OVERRIDES": {
        "QrelsKindEnum": "judging.assessments.models.QrelsKind",
        "JudgeKindEnum": "judging.autojudge.models.JudgeKind",
        "JuryMethodEnum": "judging.autojudge.models.JuryMethod",
        "JudgeQrelsKindEnum": [("automatic", "automatic"), ("hybrid", "hybrid")],
        # a judge run's and a calibration's state: one set of choices, one name
        "TaskStateEnum": "judging.autojudge.models.TASK_STATES",
        # the kinds of judging item (assessments.units): those queued for answer runs, those
        # an automatic judge labels, and what a judge run labels (documents or either)
        "AnswerItemKindEnum": [
            ("nugget_creation", "nugget_creation"),
            ("nugget_assignment", "nugget_assignment"),
            ("citation_support", "citation_support"),
        ],
        "AnswerLabelKindEnum": [
            ("nugget_assignment", "nugget_assignment"),
            ("citation_support", "citation_support"),
        ],
        "JudgeRunKindEnum": [
            ("document", "document"),
            ("nugget_assignment", "nugget_assignment"),
            ("citation_support", "citation_support"),
        ],
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
    "socket_connect_timeout": POOLJUDGE_TASKS.send_timeout_seconds,
    "socket_timeout": POOLJUDGE_TASKS.send_timeout_seconds * 5,
}
CELERY_BROKER_CONNECTION_TIMEOUT = POOLJUDGE_TASKS.send_timeout_seconds
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

# The cache holds the sign-in counters, so every web worker must share it: Redis (by default the
# broker's, when one is configured) or the database cache ("db"); one process's memory for the
# embedded default and the tests (POOLJUDGE_CACHE, judging/core/conf.py).
CACHES = {
    "default": cache_config(
        POOLJUDGE_CACHE.cache_url
        or (
            CELERY_BROKER_URL if CELERY_BROKER_URL.startswith("redis") and not TESTING else "locmem"
        ),
        timeout=POOLJUDGE_CACHE.cache_timeout_seconds,
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
