"""Production: PostgreSQL, Redis and Celery workers; no default for any secret."""
import os

from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F403
from .base import env_bool, env_int_default

SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "")
if len(SECRET_KEY) < 50:
    raise ImproperlyConfigured("DJANGO_SECRET_KEY must be set to a random string of 50+ characters.")
DEBUG = False

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", True)
# Health probes (Docker's healthcheck, a load balancer) speak plain HTTP to the web process itself, behind the
# TLS proxy: /healthz answers them instead of a redirect to an HTTPS port nobody listens on there.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^metrics$"]  # probes and Prometheus over plain HTTP inside the network (/metrics needs its token)
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_HSTS_SECONDS = env_int_default("DJANGO_SECURE_HSTS_SECONDS", 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_CONTENT_TYPE_NOSNIFF = True
SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
# collectstatic writes hashed and gzip-compressed copies; WhiteNoise serves them
# with a far-future Cache-Control (docs/deploy.md). Run collectstatic on every release.
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
