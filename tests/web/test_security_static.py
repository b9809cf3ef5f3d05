"""Static files under the production settings: collected, hashed, compressed and served by the WSGI app.

Issue 15 item 2: with DEBUG off, /static/... answered 404 (nothing served static files).
The test runs in a subprocess with the production settings, as gunicorn would load
them: collectstatic into a temporary STATIC_ROOT, then requests through
config.wsgi.application (WhiteNoise), never through Django's debug static view.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TEST_ONLY_ENV = {"DATABASE_URL", "REDIS_URL", "DJANGO_SECRET_KEY", "DJANGO_ALLOW_ASYNC_UNSAFE", "DJANGO_SETTINGS_MODULE"}

SCRIPT = r"""
import gzip, io, json, sys
from wsgiref.util import setup_testing_defaults

import django
django.setup()
from django.core.management import call_command
call_command("collectstatic", "--noinput", verbosity=0)

from django.conf import settings
from django.contrib.staticfiles.storage import staticfiles_storage
from config.wsgi import application


def get(path, **headers):
    environ = {"PATH_INFO": path, "HTTP_HOST": "recall.example.org", "wsgi.url_scheme": "https",
               "HTTP_X_FORWARDED_PROTO": "https", "SERVER_PORT": "443"}
    environ.update({"HTTP_" + k.upper().replace("-", "_"): v for k, v in headers.items()})
    setup_testing_defaults(environ)
    seen = {}

    def start_response(status, response_headers, exc_info=None):
        seen["status"] = int(status.split()[0])
        seen["headers"] = dict(response_headers)

    body = b"".join(application(environ, start_response))
    return seen["status"], seen["headers"], body


url = staticfiles_storage.url("css/app.css")
status, headers, body = get(url)
gz_status, gz_headers, gz_body = get(url, **{"Accept-Encoding": "gzip"})
missing, _, _ = get("/static/css/no-such-file.css")
unhashed, _, _ = get("/static/css/app.css")
print(json.dumps({
    "storage": settings.STORAGES["staticfiles"]["BACKEND"],
    "middleware_1": settings.MIDDLEWARE[1],
    "url": url,
    "status": status,
    "content_type": headers.get("Content-Type"),
    "cache_control": headers.get("Cache-Control"),
    "body": body.decode(),
    "gz_status": gz_status,
    "gz_encoding": gz_headers.get("Content-Encoding"),
    "gz_body": gzip.decompress(gz_body).decode() if gz_headers.get("Content-Encoding") == "gzip" else None,
    "missing": missing,
    "unhashed": unhashed,
}))
"""


@pytest.mark.slow
def test_production_serves_collected_hashed_and_compressed_static_files(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in TEST_ONLY_ENV}
    env.update({
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DJANGO_SECRET_KEY": "t" * 30 + "-static-files-test-key-0123456789",
        "DJANGO_ALLOWED_HOSTS": "recall.example.org",
        "APP_VAR_DIR": str(tmp_path),
    })
    result = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=180)
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout.strip().splitlines()[-1])

    assert found["storage"] == "whitenoise.storage.CompressedManifestStaticFilesStorage"
    assert found["middleware_1"] == "whitenoise.middleware.WhiteNoiseMiddleware"  # right after SecurityMiddleware
    # A hashed name: the file can be cached for ever, a new release gets a new name.
    assert found["url"].startswith("/static/css/app.") and found["url"] != "/static/css/app.css"
    assert (tmp_path / "staticfiles" / found["url"].removeprefix("/static/")).is_file()
    assert found["status"] == 200
    assert found["content_type"].startswith("text/css")
    assert found["body"] == (ROOT / "static" / "css" / "app.css").read_text()
    assert "immutable" in found["cache_control"] and "max-age=315360000" in found["cache_control"]
    assert (found["gz_status"], found["gz_encoding"]) == (200, "gzip")
    assert found["gz_body"] == found["body"]
    assert found["missing"] == 404
    assert found["unhashed"] == 200  # the original name still works (old pages, bookmarks)
