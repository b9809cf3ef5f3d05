"""A database connection dropped mid-request answers 503 with Retry-After, never 500; a GET is retried once
(issue 25 item 2: 4 requests in flight per fault run answered 500). core/middleware_database.py.

The first tests raise the driver's errors from a view (any database); the last ones terminate the request's
own PostgreSQL backend (`pg_terminate_backend`) in the middle of the request, so the error is the real
driver's (run with DATABASE_URL at PostgreSQL)."""
from __future__ import annotations

import time

import psycopg
import pytest
from django.db import InterfaceError, OperationalError, connection
from django.middleware.common import CommonMiddleware
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Topic
from api.services import api_token_create
from api.views.account import MeView
from api.views.topics import TopicList
from core.middleware_database import RETRY_AFTER_SECONDS
from tests.factories import require_postgres, user_with_role


@pytest.fixture
def analyst(db):
    """An analyst's API client (a token: no CSRF)."""
    user = user_with_role("drop-api-analyst", "analyst")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {api_token_create(user=user, name='drop').plaintext}")
    client.user = user
    return client


def _failing(real, failures: list[BaseException]):
    """`real`, raising the next of `failures` on each of its first calls."""
    calls = {"n": 0}

    def wrapper(*args, **kwargs):
        calls["n"] += 1
        if failures:
            raise failures.pop(0)
        return real(*args, **kwargs)

    wrapper.calls = calls  # type: ignore[attr-defined]
    return wrapper


def _problem_503(response) -> dict:
    assert response.status_code == 503, (response.status_code, response.content[:300])
    assert response["Retry-After"] == str(RETRY_AFTER_SECONDS)
    assert response["Content-Type"].startswith("application/problem+json")
    body = response.json()
    assert body["status"] == 503 and body["type"].endswith("/database-unavailable")
    return body


@pytest.mark.django_db
@pytest.mark.parametrize("error", [OperationalError("server closed the connection unexpectedly"),
                                   InterfaceError("connection already closed")])
def test_a_get_whose_connection_drops_once_is_retried_and_answers(analyst, monkeypatch, error):
    get = _failing(MeView.get, [error])
    monkeypatch.setattr(MeView, "get", get)
    response = analyst.get("/api/v1/me/")
    assert response.status_code == 200 and get.calls["n"] == 2


@pytest.mark.django_db
def test_a_get_that_fails_again_on_the_retry_is_a_503_problem(analyst, monkeypatch):
    get = _failing(MeView.get, [OperationalError("down"), OperationalError("still down")])
    monkeypatch.setattr(MeView, "get", get)
    _problem_503(analyst.get("/api/v1/me/"))
    assert get.calls["n"] == 2


@pytest.mark.django_db
def test_a_post_is_never_repeated_it_answers_503_with_retry_after(analyst, monkeypatch):
    post = _failing(TopicList.post, [OperationalError("server closed the connection unexpectedly")])
    monkeypatch.setattr(TopicList, "post", post)
    body = _problem_503(analyst.post("/api/v1/topics/", {"name": "x"}, format="json"))
    assert "Try again" in body["detail"] and post.calls["n"] == 1


@pytest.mark.django_db
def test_a_page_answers_a_503_page_not_a_500(monkeypatch):
    from annotation.views import corpora

    client = Client()
    client.force_login(user_with_role("drop-analyst", "analyst"))
    paginator = _failing(corpora.Paginator, [OperationalError("a"), OperationalError("b")])
    monkeypatch.setattr(corpora, "Paginator", paginator)
    response = client.get(reverse("analyst:corpora"))
    assert response.status_code == 503 and response["Retry-After"] == str(RETRY_AFTER_SECONDS)
    assert "Service unavailable" in response.content.decode() and paginator.calls["n"] == 2


@pytest.mark.django_db
def test_a_drop_in_a_middleware_before_the_view_is_a_503_too(analyst, monkeypatch):
    """Not through the view's process_exception: Django's 500 handler ran; the outermost middleware replaces it."""
    analyst.raise_request_exception = False
    real = CommonMiddleware.process_request
    monkeypatch.setattr(CommonMiddleware, "process_request",
                        _failing(real, [OperationalError("a"), OperationalError("b")]))
    _problem_503(analyst.post("/api/v1/topics/", {"name": "x"}, format="json"))
    monkeypatch.setattr(CommonMiddleware, "process_request", _failing(real, [OperationalError("a")]))
    assert analyst.get("/api/v1/me/").status_code == 200  # retried once


# --------------------------------------------------------------------------- the real driver (PostgreSQL)


def _terminate_own_backend_at(marker: str):
    """An execute wrapper: at the first query containing `marker`, terminate this connection's backend from
    another connection (and wait until it is gone), then run the query: the driver raises its own error."""
    state = {"killed": 0}

    def wrapper(execute, sql, params, many, context):
        if not state["killed"] and marker in sql:
            state["killed"] += 1
            pid = context["connection"].connection.info.backend_pid
            settings = connection.settings_dict
            with psycopg.connect(host=settings["HOST"], port=settings["PORT"] or 5432, user=settings["USER"],
                                 dbname=settings["NAME"], autocommit=True) as killer:
                killer.execute("SELECT pg_terminate_backend(%s)", [pid])
                for _ in range(200):
                    if not killer.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [pid]).fetchone():
                        break
                    time.sleep(0.01)
        return execute(sql, params, many, context)

    return wrapper, state


@pytest.mark.django_db(transaction=True)
def test_postgres_a_get_whose_backend_is_terminated_mid_request_is_retried(analyst):
    require_postgres()
    wrapper, state = _terminate_own_backend_at('FROM "api_')
    with connection.execute_wrapper(wrapper):
        response = analyst.get("/api/v1/me/")
    assert state["killed"] == 1
    assert response.status_code == 200, response.content[:300]


@pytest.mark.django_db(transaction=True)
def test_postgres_a_post_whose_backend_is_terminated_mid_request_is_a_503_and_nothing_is_stored(analyst):
    require_postgres()
    wrapper, state = _terminate_own_backend_at('FROM "api_')
    with connection.execute_wrapper(wrapper):
        response = analyst.post("/api/v1/topics/", {"name": "x"}, format="json")
    assert state["killed"] == 1
    _problem_503(response)
    assert not Topic.objects.exists()  # and the connection works again afterwards
