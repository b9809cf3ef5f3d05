"""core.web maps an ApplicationError in one place: a POST goes back to where it came from with the message;
without a usable referer, and for GETs, an error page with a way back that needs no script (the CSP forbids
javascript: links)."""
from __future__ import annotations

import pytest
from django.http import HttpResponse
from django.test import RequestFactory

from core.errors import ApplicationError
from core.web import ApplicationErrorMiddleware

pytestmark = pytest.mark.django_db


def _middleware() -> ApplicationErrorMiddleware:
    return ApplicationErrorMiddleware(lambda request: HttpResponse())


def _with_messages(request):
    from django.contrib.messages.storage.fallback import FallbackStorage

    request.session = {}
    request._messages = FallbackStorage(request)
    return request


def test_a_post_with_a_referer_goes_back_with_the_message():
    request = _with_messages(RequestFactory().post("/analyst/topics/1/launch/", HTTP_REFERER="http://testserver/analyst/topics/1/"))
    response = _middleware().process_exception(request, ApplicationError("The budget is too small."))
    assert response.status_code == 302 and response["Location"] == "http://testserver/analyst/topics/1/"


def test_a_post_without_a_referer_renders_the_page_instead_of_redirecting_to_a_post_only_url():
    request = _with_messages(RequestFactory().post("/analyst/topics/1/launch/"))
    response = _middleware().process_exception(request, ApplicationError("The budget is too small."))
    assert response.status_code == 400
    body = response.content.decode()
    assert "The budget is too small." in body and "javascript:" not in body and 'href="/"' in body


def test_a_get_page_links_back_to_a_same_site_referer_only():
    ok = RequestFactory().get("/reports/topics/1/", HTTP_REFERER="http://testserver/reports/")
    body = _middleware().process_exception(_with_messages(ok), ApplicationError("No report yet.")).content.decode()
    assert 'href="http://testserver/reports/"' in body
    evil = RequestFactory().get("/reports/topics/1/", HTTP_REFERER="https://evil.example/")
    body = _middleware().process_exception(_with_messages(evil), ApplicationError("No report yet.")).content.decode()
    assert "evil.example" not in body
