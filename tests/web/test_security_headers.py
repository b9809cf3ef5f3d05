"""Security headers on every page, under the production settings (issue 15 item 4).

Before: no Content-Security-Policy anywhere except the MTurk page. The production
check runs in a subprocess through config.wsgi.application, as gunicorn loads it;
the in-process tests check that the policy is on every kind of page.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client

ROOT = Path(__file__).resolve().parents[2]
TEST_ONLY_ENV = {"DATABASE_URL", "REDIS_URL", "DJANGO_SECRET_KEY", "DJANGO_ALLOW_ASYNC_UNSAFE", "DJANGO_SETTINGS_MODULE"}

SCRIPT = r"""
import json
from wsgiref.util import setup_testing_defaults

import django
django.setup()
from django.core.management import call_command
call_command("collectstatic", "--noinput", verbosity=0)  # pages name hashed static files (manifest)
from config.wsgi import application


def get(path, https=True):
    environ = {"PATH_INFO": path, "HTTP_HOST": "recall.example.org", "SERVER_NAME": "recall.example.org"}
    if https:
        environ.update({"wsgi.url_scheme": "https", "HTTP_X_FORWARDED_PROTO": "https", "SERVER_PORT": "443"})
    setup_testing_defaults(environ)
    seen = {}

    def start_response(status, response_headers, exc_info=None):
        seen["status"] = int(status.split()[0])
        seen["headers"] = [[k, v] for k, v in response_headers]

    b"".join(application(environ, start_response))
    return seen


print(json.dumps({"login": get("/accounts/login/"), "plain_http": get("/accounts/login/", https=False)}))
"""


def _policy(header: str) -> dict[str, str]:
    directives = [part.strip() for part in header.split(";") if part.strip()]
    return {d.split(" ", 1)[0]: (d.split(" ", 1) + [""])[1] for d in directives}


@pytest.mark.slow
def test_production_pages_carry_the_security_headers(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in TEST_ONLY_ENV}
    env.update({
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DJANGO_SECRET_KEY": "h" * 30 + "-headers-test-key-0123456789abcdef",
        "DJANGO_ALLOWED_HOSTS": "recall.example.org",
        "APP_VAR_DIR": str(tmp_path),
    })
    result = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout.strip().splitlines()[-1])

    login = found["login"]
    assert login["status"] == 200
    headers = {k.lower(): v for k, v in login["headers"]}
    cookies = [v.strip() for k, v in login["headers"] if k.lower() == "set-cookie"]
    assert headers["strict-transport-security"] == "max-age=31536000; includeSubDomains; preload"
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["x-frame-options"] == "DENY"
    assert headers["referrer-policy"] == "same-origin"
    assert headers["cross-origin-opener-policy"] == "same-origin"
    policy = _policy(headers["content-security-policy"])
    assert policy["default-src"] == "'self'"
    assert policy["script-src"] == "'self'"  # no inline script, no eval, no other site
    assert policy["object-src"] == "'none'" and policy["base-uri"] == "'self'"
    assert policy["frame-ancestors"] == "'none'" and policy["form-action"] == "'self'"
    csrf = [c for c in cookies if c.startswith("csrftoken=")]
    assert csrf and all("Secure" in c and "SameSite=Lax" in c for c in csrf)

    # Plain HTTP is sent to HTTPS before any page is served.
    plain = found["plain_http"]
    assert plain["status"] == 301
    assert {k.lower(): v for k, v in plain["headers"]}["location"] == "https://recall.example.org/accounts/login/"


@pytest.mark.django_db
def test_every_kind_of_page_carries_the_policy(client: Client):
    from tests.factories import user_with_role

    pages = ["/accounts/login/", "/no-such-page/"]
    for path in pages:
        response = client.get(path)
        assert "content-security-policy" in {k.lower() for k in response.headers}, path
        assert _policy(response["Content-Security-Policy"])["frame-ancestors"] == "'none'", path
    user_with_role("ana", "analyst")
    assert client.login(username="ana", password="pw-for-tests-1")
    for path in ["/analyst/", "/reports/"]:
        response = client.get(path, follow=True)
        assert response.status_code == 200, path
        policy = _policy(response["Content-Security-Policy"])
        assert policy["script-src"] == "'self'" and "'unsafe-inline'" not in policy["script-src"], path
