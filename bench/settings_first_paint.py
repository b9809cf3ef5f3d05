"""Settings of bench_first_paint.py: config.settings.local with production's static files and DEBUG off.

Production's settings cannot serve plain http on loopback (secure-only cookies, https redirect, HSTS); the rest
that matters to a first paint is copied here: DEBUG off and collectstatic's hashed, compressed files served by
WhiteNoise with a far-future Cache-Control (docs/deploy.md).
"""
from config.settings.local import *  # noqa: F403

DEBUG = False
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
