"""Test runs: SQLite unless DATABASE_URL is set; eager tasks unless a test starts a worker."""
from .base import *  # noqa: F403
from .base import VAR_DIR

SECRET_KEY = "test-key-not-secret"
DEBUG = False
ALLOWED_HOSTS = ["*"]
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
VAR_DIR.mkdir(parents=True, exist_ok=True)
MEDIA_ROOT = VAR_DIR / "test-media"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

# No collectstatic in tests: WhiteNoise finds files where the finders do, as in development.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = True

# Django's test client signs in without a request, which django-axes refuses; the
# throttling tests (tests/web/test_security_login.py) turn it on.
AXES_ENABLED = False

# Tests run tasks in-process; the tests that exercise a real worker start one
# against REDIS_URL themselves (tests/test_celery_worker.py).
CELERY_TASK_ALWAYS_EAGER = True

# Live-server threads must not keep connections open, or PostgreSQL refuses to drop the test database.
DATABASES["default"]["CONN_MAX_AGE"] = 0  # noqa: F405

# The per-process memory cache and database sessions even when REDIS_URL is set for the worker tests
# (a Redis cache's clear() would flush the broker's database); tests/config/test_request_overhead.py
# turns the shared-cache configuration on where it measures it.
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
SESSION_ENGINE = "django.contrib.sessions.backends.db"
AUTH_PERMISSION_CACHE_SECONDS = 0
