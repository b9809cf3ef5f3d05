"""Issue 12 item 11: styled 400/403/404/500 pages with a way back (home, and the referer when it is same-site)."""
from __future__ import annotations

import pytest
from django.core.exceptions import BadRequest
from django.test import Client, RequestFactory
from django.urls import path, reverse

from config import urls as project_urls
from tests.factories import user_with_role


def _boom(request):
    raise RuntimeError("a bug")


def _bad(request):
    raise BadRequest("nonsense")


# This module doubles as a URLconf (pytest.mark.urls): the project's pages plus two that fail on purpose.
urlpatterns = [*project_urls.urlpatterns, path("boom/", _boom), path("bad/", _bad)]
handler400 = project_urls.handler400
handler403 = project_urls.handler403
handler404 = project_urls.handler404
handler500 = project_urls.handler500


@pytest.fixture
def manager(db):
    client = Client()
    client.force_login(user_with_role("mgr", "manager"))
    return client


def test_403_from_role_required_is_styled_with_a_way_back(manager, settings):
    settings.DEBUG = False
    response = manager.get(reverse("analyst:topics"), HTTP_REFERER="http://testserver/reports/")
    html = response.content.decode()
    assert response.status_code == 403
    assert "Not allowed" in html and 'class="topbar"' in html  # extends base.html
    assert 'id="error-back" href="http://testserver/reports/"' in html and 'id="error-home" href="/"' in html


def test_403_under_debug_is_styled_too(manager, settings):
    settings.DEBUG = True
    response = manager.get(reverse("analyst:topics"))
    assert response.status_code == 403 and b'id="error-page"' in response.content


def test_404_is_styled_and_a_foreign_referer_is_not_offered(manager, settings):
    settings.DEBUG = False
    response = manager.get("/no/such/page/", HTTP_REFERER="https://evil.example/phish")
    html = response.content.decode()
    assert response.status_code == 404 and "Page not found" in html and 'class="topbar"' in html
    assert "evil.example" not in html and 'id="error-back"' not in html and 'id="error-home" href="/"' in html


def test_404_for_a_missing_object_is_styled(manager, settings):
    settings.DEBUG = False
    response = manager.get(reverse("reports:topic", args=[987654]))
    assert response.status_code == 404 and b'id="error-page"' in response.content


def test_javascript_referer_is_not_a_way_back(db, settings):
    settings.DEBUG = False
    response = Client().get("/no/such/page/", HTTP_REFERER="javascript:alert(1)")
    assert response.status_code == 404 and b"javascript:" not in response.content


@pytest.mark.urls("tests.web.test_error_pages")
def test_500_is_a_standalone_page_with_a_way_back(db, settings):
    settings.DEBUG = False
    client = Client(raise_request_exception=False)
    response = client.get("/boom/", HTTP_REFERER="http://testserver/reports/")
    html = response.content.decode()
    assert response.status_code == 500 and "Something went wrong" in html
    assert 'id="error-back" href="http://testserver/reports/"' in html and 'id="error-home" href="/"' in html
    assert "RuntimeError" not in html and "a bug" not in html


@pytest.mark.urls("tests.web.test_error_pages")
def test_400_is_styled(db, settings):
    settings.DEBUG = False
    response = Client().get("/bad/")
    assert response.status_code == 400 and b"Bad request" in response.content and b'id="error-home"' in response.content


def test_500_handler_needs_no_database_or_context():
    # Called directly with a bare request (no session, no user): it must still render.
    response = project_urls.server_error(RequestFactory().get("/"))
    assert response.status_code == 500 and b'id="error-home"' in response.content


HANDLERS_PROBE = """
import django
django.setup()
from django.urls import get_resolver
print(*[get_resolver().resolve_error_handler(code).__name__ for code in (400, 403, 404, 500)])
"""


@pytest.mark.parametrize("module", ["config.settings.local", "config.settings.production"])
def test_handlers_are_wired_under_local_and_production_settings(module):
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {**os.environ, "DJANGO_SETTINGS_MODULE": module, "DJANGO_SECRET_KEY": "k" * 64}
    out = subprocess.run([sys.executable, "-c", HANDLERS_PROBE], env=env, capture_output=True, text=True, timeout=60,
                         cwd=Path(__file__).resolve().parents[2], check=True).stdout
    assert out.strip().splitlines()[-1] == "bad_request permission_denied page_not_found server_error"
