"""/healthz (issue 15): no sign-in, no session; 200 when the database (and Redis, if configured) answer,
503 naming the part that does not."""
from __future__ import annotations

import socket

import pytest
from django.db import connection
from django.test import Client, RequestFactory

from core import health

pytestmark = pytest.mark.django_db


def _closed_port() -> int:
    """A loopback port nobody listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(autouse=True)
def _fresh_clients(monkeypatch):
    monkeypatch.setattr(health, "_redis_clients", {})


def test_healthy_without_redis_configured(settings, django_assert_max_num_queries):
    settings.REDIS_URL = ""
    with django_assert_max_num_queries(1):  # the SELECT 1; no session, no user
        response = Client().get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"database": "ok", "redis": "not configured"}
    assert not response.cookies  # no session, no CSRF cookie
    assert "no-cache" in response["Cache-Control"]


def test_redis_on_a_closed_port_gives_503_naming_redis(settings):
    settings.REDIS_URL = f"redis://127.0.0.1:{_closed_port()}/8"
    response = Client().get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["database"] == "ok" and body["redis"].startswith("error: ") and "ConnectionError" in body["redis"]


def test_a_failing_database_gives_503_naming_the_database(monkeypatch, settings):
    settings.REDIS_URL = ""

    def broken_cursor(*args, **kwargs):
        from django.db import OperationalError

        raise OperationalError("the server closed the connection")

    monkeypatch.setattr(connection, "cursor", broken_cursor)
    response = health.healthz(RequestFactory().get("/healthz"))
    assert response.status_code == 503
    assert b'"database": "error: OperationalError"' in response.content


def test_a_real_redis_answers_ok(settings):
    """With the Redis of the test environment (REDIS_URL db 8), when one is running."""
    url = "redis://127.0.0.1:6379/8"
    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=0.5).close()
    except OSError:
        pytest.skip("no Redis on 127.0.0.1:6379")
    settings.REDIS_URL = url
    response = Client().get("/healthz")
    assert response.status_code == 200 and response.json() == {"database": "ok", "redis": "ok"}


def test_post_is_refused_and_never_signs_in(settings):
    settings.REDIS_URL = ""
    assert Client().post("/healthz").status_code == 405
