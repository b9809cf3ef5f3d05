"""Settings shared by every environment; everything variable comes from the environment.

| variable            | effect                                                               |
|---------------------|----------------------------------------------------------------------|
| DJANGO_SECRET_KEY   | secret key (required in production)                                  |
| DJANGO_DEBUG        | "1" turns debug on (local only)                                      |
| DJANGO_ALLOWED_HOSTS| comma-separated host names                                           |
| DATABASE_URL        | e.g. postgres://user@127.0.0.1:5432/db; default SQLite in var/       |
| REDIS_URL           | Celery broker and result backend; unset = tasks run in-process       |
| CELERY_BROKER_URL   | another broker when REDIS_URL is unset (bin/run: filesystem://)       |
| CELERY_WORKER_CONCURRENCY | worker processes of `celery -A config worker` (2)              |
| CACHE_URL           | shared cache (redis://…); defaults to REDIS_URL; unset = per-process |
| AUTH_PERMISSION_CACHE_SECONDS | permission sets kept in the shared cache (300; 0 = off)    |
| SESSION_CACHE_SECONDS | how long a session stays in the shared cache (300)                |
| MTURK_*             | Mechanical Turk, see docs/mturk.md                                   |
| WEBHOOK_*           | allowed hosts, private networks, timeout, attempts: docs/webhooks.md |
| AXES_ENABLED        | "0" turns sign-in throttling off (docs/deploy.md)                    |
| AXES_FAILURE_LIMIT  | failed sign-ins per username and address before a lock (10)          |
| AXES_COOLOFF_MINUTES| how long such a lock lasts (15)                                      |
"""
import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from csp.constants import NONCE, NONE, SELF

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = Path(os.environ.get("APP_VAR_DIR", BASE_DIR / "var"))


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int_default(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value else default


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "")
DEBUG = env_bool("DJANGO_DEBUG", False)
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", "localhost,127.0.0.1")
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS")
# A CSRF failure (an expired session, a stale tab) gets a page with a way back, never the debug page (issue 12).
CSRF_FAILURE_VIEW = "core.web.csrf_failure"

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "axes",
    "core.apps.CoreConfig",
    "annotation",
    "estimation",
    "webhooks",
    # REST API (issue 14): api/ with Django REST framework and its OpenAPI schema.
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "api",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Serves /static/ from the web processes (docs/deploy.md); right after SecurityMiddleware
    # so static responses still get the HTTPS redirect and HSTS, and skip everything below.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "core.web.ApplicationErrorMiddleware",
    # Last, as django-axes requires: turns a locked-out sign-in into its 429 page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

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
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or f"sqlite:///{VAR_DIR / 'db.sqlite3'}",
        conn_max_age=int(os.environ.get("DATABASE_CONN_MAX_AGE", "60")),
        # A persistent connection the database dropped (restart, failover) is checked and replaced at the
        # start of the next request instead of answering it with a 500 (issue 15 item 6).
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets readers (web pages) proceed while an import or a task writes.
    DATABASES["default"].setdefault("OPTIONS", {})
    DATABASES["default"]["OPTIONS"].update(
        {"timeout": 30, "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"}
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# django-axes first: it refuses a locked-out username+address before the password is checked.
# Then ModelBackend with its permission sets kept in the shared cache (core/auth.py, issue 15).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "core.auth.CachedPermissionsBackend",
]
# The signed-in user is loaded with their worker (one query, not two, on every annotator request).
AUTH_USER_SELECT_RELATED = ("worker",)
AXES_ENABLED = env_bool("AXES_ENABLED", True)
AXES_FAILURE_LIMIT = env_int_default("AXES_FAILURE_LIMIT", 10)
AXES_COOLOFF_TIME = timedelta(minutes=env_int_default("AXES_COOLOFF_MINUTES", 15))
# AXES_LOCKOUT_PARAMETERS (username + the client address from the trusted proxy): config/settings/identity.py.
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"

# Content-Security-Policy on every response (django-csp). Scripts only from our static
# files, or inline with the request's nonce (the MTurk hand-back page). Inline styles
# stay allowed: templates and the SVG plots use style="" attributes. The MTurk page
# replaces frame-ancestors and form-action (annotation/views/mturk.py).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF, NONCE],
        "style-src": [SELF, "'unsafe-inline'"],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
MEDIA_ROOT = VAR_DIR / "media"
# Uploaded corpora are streamed to disk, never held whole in memory.
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024

# --- Celery -----------------------------------------------------------------
REDIS_URL = os.environ.get("REDIS_URL", "")
# Another broker than Redis: bin/run sets `filesystem://` (kombu's file-system transport, messages as files under
# var/broker/, no server) when no REDIS_URL is given, and runs a worker and beat beside runserver (docs/deploy.md).
_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "")
CELERY_BROKER_URL = REDIS_URL or _BROKER_URL or "memory://"
CELERY_RESULT_BACKEND = REDIS_URL or None
# No broker configured at all: run tasks in-process (tests, one-off commands); a page then waits for its task.
CELERY_TASK_ALWAYS_EAGER = not (REDIS_URL or _BROKER_URL)
if CELERY_BROKER_URL.startswith("filesystem://"):
    BROKER_DIR = VAR_DIR / "broker"
    for _folder in ("queue", "control", "processed"):
        (BROKER_DIR / _folder).mkdir(parents=True, exist_ok=True)
    # One folder both written and read: every process on this machine shares the queues.
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "queue"), "data_folder_out": str(BROKER_DIR / "queue"),
        "control_folder": str(BROKER_DIR / "control"), "processed_folder": str(BROKER_DIR / "processed"),
        "store_processed": False,
    }
# Worker processes of `celery -A config worker` (no --concurrency in the commands: compose and bin/run set this).
CELERY_WORKER_CONCURRENCY = env_int_default("CELERY_WORKER_CONCURRENCY", 2)
# Beat keeps its last-run times here (a file; under APP_VAR_DIR, writable by the app user in the image).
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_TASK_ACKS_LATE = True  # a worker killed mid-task leaves the message for another
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = 30 * 60
CELERY_TASK_SOFT_TIME_LIMIT = 25 * 60
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BEAT_SCHEDULE = {
    "expire-assignments": {"task": "annotation.tasks.assignments_expire_task", "schedule": 60.0},
    # Every crowd platform's reconcile (annotation/services/crowd/platforms/; MTurk: publish, confirm, pay, expire).
    "reconcile-crowds": {"task": "annotation.tasks.crowd_reconcile_task", "schedule": 300.0},
    "decide-certifications": {
        "task": "estimation.tasks_certification.certifications_decide_ready_task", "schedule": 60.0,
    },
    # Catches up recomputes lost while Redis was down (estimation/services/recompute.py).
    "refresh-stale-snapshots": {"task": "estimation.tasks.snapshots_refresh_stale_task", "schedule": 60.0},
    # Sends webhook deliveries whose retry time has come, and any whose enqueue was lost (webhooks/tasks.py).
    "send-due-webhooks": {"task": "webhooks.tasks.webhook_deliveries_due_task", "schedule": 60.0},
    # Fails corpus uploads whose import task is gone (annotation/services/corpora/corpus_uploads.py).
    "fail-stuck-uploads": {"task": "annotation.tasks_import.corpus_uploads_stuck_task", "schedule": 300.0},
    # Fails classifier builds with no progress for CLASSIFIER_BUILD_STUCK_SECONDS (services/classifier_builds.py).
    "fail-stuck-classifier-builds": {"task": "annotation.tasks_builds.classifier_builds_stuck_task", "schedule": 300.0},
    # Fails router builds waiting or running past ROUTER_BUILD_STUCK_SECONDS (services/router_builds.py).
    "fail-stuck-router-builds": {"task": "annotation.tasks_routers.router_builds_stuck_task", "schedule": 300.0},
    # Fails corpus deletions with no batch deleted for 30 minutes; the admin runs them again (corpora/corpus_delete.py).
    "fail-stuck-corpus-deletions": {"task": "annotation.tasks_corpora.corpus_deletions_stuck_task", "schedule": 300.0},
    # Fails certification sizings with no step done for 15 minutes; recomputing the plan sizes it again.
    "fail-stuck-certification-sizings": {"task": "estimation.tasks_sizing.certification_sizings_stuck_task",
                                         "schedule": 300.0},
}

# --- Cache and sessions (issue 15: the annotator path's per-request overhead) ---------------
# With a shared cache (Redis), sessions are read from it (cached_db: written through to the
# database, so a Redis restart signs nobody out) and permission sets are kept in it (core/auth.py).
# Without one, the per-process memory cache and database sessions: a cache that other processes
# cannot see must never hold a session or a permission (a sign-out or a revoked role elsewhere
# would go unnoticed).
CACHE_URL = os.environ.get("CACHE_URL", REDIS_URL)
if CACHE_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": CACHE_URL,
            "KEY_PREFIX": "recall",
            # Short timeouts: the cache is read inside requests; a dead Redis must not stall them.
            "OPTIONS": {"socket_timeout": 0.5, "socket_connect_timeout": 0.5},
        }
    }
    SESSION_ENGINE = "core.sessions"  # cached_db that survives a failing cache (core/sessions.py)
elif CELERY_BROKER_URL.startswith("filesystem://"):
    # bin/run's web, worker and beat are separate processes on one machine: the recompute flags
    # (estimation/services/recompute.py) must be seen by all of them, so a file cache under var/.
    # Sessions and permissions stay out of it (database sessions, no permission cache), as below.
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
                          "LOCATION": str(VAR_DIR / "cache")}}
SESSION_CACHE_SECONDS = env_int_default("SESSION_CACHE_SECONDS", 300)
AUTH_PERMISSION_CACHE_SECONDS = env_int_default("AUTH_PERMISSION_CACHE_SECONDS", 300) if CACHE_URL else 0

# --- Product settings ---------------------------------------------------------
ASSIGNMENT_TIMEOUT_SECONDS = int(os.environ.get("ASSIGNMENT_TIMEOUT_SECONDS", "1800"))
# The built-in HIT page holds a claimed HIT this long and renews the hold while the annotator is active
# (annotator.js), up to ASSIGNMENT_TIMEOUT_SECONDS in all: an abandoned tab frees its place within minutes.
ASSIGNMENT_HOLD_SECONDS = min(env_int_default("ASSIGNMENT_HOLD_SECONDS", 300), ASSIGNMENT_TIMEOUT_SECONDS)
IMPORT_MAX_FIELD_CHARS = int(os.environ.get("IMPORT_MAX_FIELD_CHARS", str(1_000_000)))
# One line (or CSV record) of a corpus file, in bytes: longer is refused before it is built in memory.
IMPORT_MAX_RECORD_BYTES = int(os.environ.get("IMPORT_MAX_RECORD_BYTES", str(16 * IMPORT_MAX_FIELD_CHARS)))
# A corpus file uploaded in the browser, in bytes (docs/deploy.md); checked while it is streamed to disk.
CORPUS_UPLOAD_MAX_BYTES = int(os.environ.get("CORPUS_UPLOAD_MAX_BYTES", str(1024 ** 3)))
# An upload waiting or importing with no sign of life for this long is marked failed (its task is gone).
CORPUS_UPLOAD_STUCK_SECONDS = int(os.environ.get("CORPUS_UPLOAD_STUCK_SECONDS", str(30 * 60)))
# A classifier build waiting or running with no progress for this long is marked failed (its worker is gone).
CLASSIFIER_BUILD_STUCK_SECONDS = int(os.environ.get("CLASSIFIER_BUILD_STUCK_SECONDS", str(30 * 60)))

# Mechanical Turk: the sandbox unless production is asked for explicitly.
MTURK_ENVIRONMENT = os.environ.get("MTURK_ENVIRONMENT", "sandbox")  # "sandbox" | "production"
MTURK_REGION = os.environ.get("MTURK_REGION", "us-east-1")
MTURK_EXTERNAL_BASE_URL = os.environ.get("MTURK_EXTERNAL_BASE_URL", "")
# HIT parameters (docs/mturk.md). The assignment duration defaults to the app's own
# claim timeout so MTurk never lets a worker keep working on an assignment the app expired.
MTURK_LIFETIME_SECONDS = env_int_default("MTURK_LIFETIME_SECONDS", 7 * 24 * 3600)
MTURK_ASSIGNMENT_DURATION_SECONDS = env_int_default("MTURK_ASSIGNMENT_DURATION_SECONDS", ASSIGNMENT_TIMEOUT_SECONDS)
MTURK_AUTO_APPROVAL_DELAY_SECONDS = env_int_default("MTURK_AUTO_APPROVAL_DELAY_SECONDS", 3 * 24 * 3600)
# Reconcile waits this long after a submission before approving, so gold checks on the
# worker's later HITs can still block them; must stay well below the auto-approval delay.
MTURK_APPROVAL_HOLD_SECONDS = env_int_default("MTURK_APPROVAL_HOLD_SECONDS", 0)
MTURK_FRAME_HEIGHT = env_int_default("MTURK_FRAME_HEIGHT", 800)
# MTurk answers count only once reconcile confirms the assignment with MTurk (docs/mturk.md);
# one MTurk does not know is given up after the assignment's own time has run out, and any
# still unconfirmed this long after its submission (MTurk unreachable) expires, not counted.
MTURK_VERIFY_WINDOW_SECONDS = env_int_default("MTURK_VERIFY_WINDOW_SECONDS", 24 * 3600)
# Qualification requirements; 0 (or an empty locale list) drops the requirement.
MTURK_QUALIFICATION_MIN_APPROVAL_RATE = env_int_default("MTURK_QUALIFICATION_MIN_APPROVAL_RATE", 95)
MTURK_QUALIFICATION_LOCALES = env_list("MTURK_QUALIFICATION_LOCALES", "US")
MTURK_QUALIFICATION_MIN_APPROVED = env_int_default("MTURK_QUALIFICATION_MIN_APPROVED", 100)
# AWS credentials are read by boto3 itself from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY.

# Webhooks (docs/webhooks.md). Deliveries go only to host names matching WEBHOOK_ALLOWED_HOSTS
# (comma-separated; "*.example.com" patterns; empty = no webhook can be registered or sent), and
# never to private, loopback or link-local addresses unless WEBHOOK_ALLOW_PRIVATE_NETWORKS is on.
WEBHOOK_ALLOWED_HOSTS = env_list("WEBHOOK_ALLOWED_HOSTS")
WEBHOOK_ALLOW_PRIVATE_NETWORKS = env_bool("WEBHOOK_ALLOW_PRIVATE_NETWORKS", False)
WEBHOOK_TIMEOUT_SECONDS = float(os.environ.get("WEBHOOK_TIMEOUT_SECONDS", "5"))
# Attempts in all, the first included; retries wait 1 min, 5 min, 30 min, 2 h, 12 h (then 12 h).
WEBHOOK_MAX_ATTEMPTS = env_int_default("WEBHOOK_MAX_ATTEMPTS", 6)

# --- REST API (issue 14, api/, docs/api.md) -----------------------------------------
# Bearer tokens (api.authentication) for scripts, no CSRF; the browser's session with CSRF enforced.
# Errors are RFC 9457 problem details (api.errors); every view declares its role (api.permissions).
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "api.authentication.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": [
        "rest_framework.parsers.JSONParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_PAGINATION_CLASS": "api.pagination.Pagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "api.errors.problem_exception_handler",
    # Token calls per token (api/throttling.py); past the rate a 429 problem. Empty = no limit.
    "DEFAULT_THROTTLE_CLASSES": ["api.throttling.TokenRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {"token": os.environ.get("API_TOKEN_THROTTLE_RATE", "1200/minute")},
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Recall API",
    "DESCRIPTION": "Corpora, classifiers, topics, samples, judgments, reports and certification (docs/api.md).",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SCHEMA_PATH_PREFIX": "/api/v1",
    "COMPONENT_SPLIT_REQUEST": True,
    # Swagger UI from the installed sidecar's static files: the CSP allows no CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Router and classifier builds share their states (pending, running, done, failed): one enum, named.
    "ENUM_NAME_OVERRIDES": {"BuildStatusEnum": "annotation.models.BuildStatus"},
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
}

# Settings of one concern each, in their own module (one owner per file): they read and extend what is above.
from . import hardening as _hardening  # noqa: E402
from . import identity as _identity  # noqa: E402
from . import model_judge as _model_judge  # noqa: E402
from . import observability as _observability  # noqa: E402

_hardening.apply(globals())
_observability.apply(globals())
_identity.apply(globals())
_model_judge.apply(globals())
